//! Flushes, commands and jobs: their own I/O, their polls and run time, and
//! wake attribution.

use super::*;

#[test]
fn a_flush_orders_its_devices_and_absorbs_its_own_writes() {
    let (mut c, r) = controller("task = \"flush\"\nnetwork = \"timer(3s)\"\n");
    let outs = run(&mut c, &r, 0, 10, busy_then_quiet);
    let flush: Vec<_> = outs
        .iter()
        .filter_map(|(s, o)| match o {
            Output::Order {
                job: None,
                order: Order::Start { devs, .. },
            } => Some((*s, devs.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(flush, vec![(8, vec![(8, 16)])]);
    // The flush's own writes (second 9) are not foreground I/O, nor are
    // those the poll after it finished sees.
    let outs = run(&mut c, &r, 9, 10, |_| 500);
    report(&mut c, 10, Outcome::Flushed(vec![]));
    let later = run(&mut c, &r, 10, 12, |_| 600);
    let stops = outs
        .iter()
        .chain(&later)
        .filter(|(_, o)| matches!(o, Output::Decided(Intent::Stop { .. })))
        .count();
    assert_eq!(stops, 0, "{outs:?} {later:?}");
    assert_eq!(c.state().task_stops, 0);
}

/// A witness whose command (pid `pid`) has read and written what
/// `io(second)` says by each second: the daemon reads it from `/proc`.
struct CommandIo<F: Fn(u64) -> (u64, u64)> {
    pid: u32,
    second: u64,
    io: F,
}

impl<F: Fn(u64) -> (u64, u64)> WakeWitness for CommandIo<F> {
    fn snapshot(&mut self) -> Snapshot {
        Snapshot::default()
    }
    fn attribute(&mut self, _: Snapshot, _: &[(u32, u32)], _: u64) -> crate::wakeup::Attribution {
        crate::wakeup::Attribution::default()
    }
    fn tree_io(&mut self, pid: u32) -> Option<(u64, u64)> {
        (pid == self.pid).then(|| (self.io)(self.second))
    }
}

/// The seconds at which `c`, polled from `from` to `to` with
/// `diskstats(s)` and its command's I/O `io(s)`, ordered its command
/// (or a job's) paused.
fn stops_with_command_io(
    c: &mut DiskController,
    registry: &Registry,
    from: u64,
    to: u64,
    diskstats: impl Fn(u64) -> String,
    io: impl Fn(u64) -> (u64, u64),
) -> Vec<u64> {
    let mut witness = CommandIo {
        pid: 4242,
        second: from,
        io,
    };
    let mut stops = Vec::new();
    for s in from..to {
        witness.second = s;
        let sample = Sample::new(parse(&diskstats(s)).unwrap());
        let mut out = Vec::new();
        let mut cx = Context {
            registry,
            witness: &mut witness,
        };
        c.on_poll(at(s), &sample, false, &mut cx, &mut out);
        if out.iter().any(|o| {
            matches!(
                o,
                Output::Order {
                    order: Order::Stop,
                    ..
                }
            )
        }) {
            stops.push(s);
        }
    }
    stops
}

/// A `command` disk on `timer(3s)`, busy until second 5, whose command
/// (pid 4242) the controller started at second 8.
fn command_started() -> (DiskController, Registry) {
    let (mut c, r) =
        controller("network = \"timer(3s)\"\ntask = \"command\"\ncommand = [\"/bin/true\"]\n");
    let outs = run(&mut c, &r, 0, 9, busy_then_quiet);
    assert!(
        outs.iter().any(|(s, o)| *s == 8
            && matches!(
                o,
                Output::Order {
                    job: None,
                    order: Order::Start { .. }
                }
            )),
        "{outs:#?}"
    );
    report(&mut c, 8, Outcome::CommandStarted(4242, None));
    (c, r)
}

/// A command that fails (a non-zero exit) is a warning and an error of
/// the disk, and after 3 failures in a row it is not started for a
/// minute, doubling, as a failing standby is; one that runs until the
/// foreground returns is not failing. A command failing at once was
/// started at every idle period, and said so at info level, for ever.
#[test]
fn a_command_that_keeps_failing_backs_off() {
    let (mut c, r) =
        controller("network = \"timer(3s)\"\ntask = \"command\"\ncommand = [\"/bin/false\"]\n");
    // Idle periods start at seconds 8, 20, 32, …: 5 s of reads, 7 quiet.
    let ios = |s: u64| 20 * (s / 12 * 5 + (s % 12).min(5));
    let mut started = Vec::new();
    let mut s = 0;
    while s < 120 {
        let outs = run(&mut c, &r, s, s + 1, ios);
        // The disk's task's start orders: the command's here.
        for t in standby_orders(&outs) {
            started.push(t);
            report(&mut c, t, Outcome::CommandStarted(4000 + t as u32, None));
            report(
                &mut c,
                t,
                Outcome::CommandExited(4000 + t as u32, "exit status: 1".into(), false),
            );
        }
        s += 1;
    }
    // Three failures, then none started for a minute (the idle periods
    // at 44 to 80 are skipped) until 32 + 60 = 92; after the fourth, two
    // minutes (past the run's end).
    assert_eq!(started, vec![8, 20, 32, 92]);
    assert_eq!(c.state().errors, started.len() as u64);
    assert!(
        c.state().last_decision.contains("failed"),
        "{}",
        c.state().last_decision
    );
}

/// A maintenance command's own I/O is not the foreground's: a scrub that
/// reads the disk in its idle time is not paused by its own reads (it
/// was, at every poll, and resumed a break-even time later, so it ran
/// whatever the foreground did), nor by the writeback of its own writes
/// within a minute. Reads or writes beyond the command's, a flush, or a
/// write long after it are the foreground's and pause it.
#[test]
fn a_command_s_own_io_does_not_pause_it() {
    let (mut c, r) = command_started();
    // Sectors read and written by the disk by second `s` (512 bytes each),
    // flushes; 100 reads before the command.
    let line = |read: u64, written: u64, flushes: u64| {
        format!(
            "8 16 sdb {} 0 {} 0 {} 0 {} 0 0 0 0 0 0 0 0 {flushes} 0\n",
            100 + read / 8,
            800 + read,
            written / 8,
            written
        )
    };
    const K: u64 = 1024;
    // Seconds 9..20: the command reads 128 KiB a second, charged a poll
    // before the disk completes it from second 12 on; it writes 1 MiB at
    // second 15, which the disk writes back at 45. Nothing else.
    let own = |s: u64| {
        let read = 128 * K * (s.min(20) - 8);
        let written = if s >= 15 { 1024 * K } else { 0 };
        (read, written)
    };
    let disk_read = |s: u64| own(if s >= 12 { s - 1 } else { s }).0 / 512;
    let quiet = |s: u64| line(disk_read(s), if s >= 45 { 2048 } else { 0 }, 0);
    let stops = stops_with_command_io(&mut c, &r, 9, 50, quiet, own);
    assert_eq!(stops, Vec::<u64>::new(), "its own reads and writeback");
    assert_eq!(c.state().task_stops, 0);
    // A foreground read of 4 KiB beside the command's own: paused.
    let fg = |s: u64| line(disk_read(s) + 8 * u64::from(s >= 52), 2048, 0);
    assert_eq!(stops_with_command_io(&mut c, &r, 50, 54, fg, own), vec![52]);

    // Writes the command made more than a minute before are not its
    // writeback any more; nor is a flush, whoever asked for it.
    for (what, disk) in [
        ("a write 70 s after the command's", (0u64, 8u64, 0u64)),
        ("a flush", (0, 0, 1)),
    ] {
        let (mut c, r) = command_started();
        let own = |s: u64| (0, if s >= 10 { 1024 * K } else { 0 });
        let at80 = move |s: u64| {
            let (r, w, f) = if s >= 80 { disk } else { (0, 0, 0) };
            line(r, w, f)
        };
        assert_eq!(
            stops_with_command_io(&mut c, &r, 9, 82, at80, own),
            vec![80],
            "{what}"
        );
    }
    // Without a witness of the command's I/O, its reads pause it at once.
    let (mut c, r) = command_started();
    let reads = drive(&mut c, &r, 9, 11, |s| line(256 * (s - 8), 0, 0));
    assert!(
        reads.iter().any(|(s, o)| *s == 9
            && matches!(
                o,
                Output::Order {
                    job: None,
                    order: Order::Stop
                }
            )),
        "{reads:#?}"
    );
}

/// A witness that records the bytes each wake's attribution was given.
#[derive(Default)]
struct WokeBytes(Vec<u64>);

impl WakeWitness for WokeBytes {
    fn snapshot(&mut self) -> Snapshot {
        Snapshot::default()
    }
    fn attribute(
        &mut self,
        _: Snapshot,
        _: &[(u32, u32)],
        woke: u64,
    ) -> crate::wakeup::Attribution {
        self.0.push(woke);
        crate::wakeup::Attribution::default()
    }
}

/// The uncertain wake suspect is the grower that best fits the bytes the
/// waking poll showed (`wakeup::suspects`): the controller hands those to
/// the witness.
#[test]
fn a_wake_is_attributed_with_the_bytes_that_woke_the_disk() {
    let (mut c, r) = controller("network = \"timer(3s)\"\nmax_spindowns_per_day = 1000\n");
    let outs = run(&mut c, &r, 0, 9, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![8]);
    let mut witness = WokeBytes::default();
    let mut out = Vec::new();
    c.on_outcome(
        at(8),
        Outcome::SpunDown("hdparm -y".into()),
        true,
        &mut witness,
        &mut out,
    );
    assert!(c.in_standby());
    // Quiet until second 12, then 3 more reads of 8 sectors each.
    for s in 9..13 {
        let n = busy_then_quiet(s) + if s >= 12 { 3 } else { 0 };
        let sample =
            Sample::new(parse(&format!("8 16 sdb {n} 0 {} 0 0 0 0 0 0 0 0\n", n * 8)).unwrap());
        let mut cx = Context {
            registry: &r,
            witness: &mut witness,
        };
        c.on_poll(at(s), &sample, false, &mut cx, &mut out);
    }
    assert_eq!(witness.0, vec![3 * 8 * 512]);
    assert!(!c.in_standby());
}

/// A `jobs` disk's running job is told from the foreground the same way.
#[test]
fn a_job_s_own_io_does_not_pause_it() {
    let (mut c, r) = controller(
        "network = \"timer(3s)\"\ntask = \"jobs\"\n[[disk.job]]\nname = \"scrub\"\ncommand = [\"/bin/true\"]\nreserve = \"5m/hour:extra\"\n",
    );
    let outs = run(&mut c, &r, 0, 9, busy_then_quiet);
    assert!(
        outs.iter().any(|(s, o)| *s == 8
            && matches!(
                o,
                Output::Order {
                    job: Some(0),
                    order: Order::Start { .. }
                }
            )),
        "{outs:#?}"
    );
    c.on_job_outcome(
        at(8),
        "scrub".into(),
        Outcome::CommandStarted(4242, None),
        true,
        &mut Vec::new(),
    );
    let line = |read: u64| {
        format!(
            "8 16 sdb {} 0 {} 0 0 0 0 0 0 0 0\n",
            100 + read / 8,
            800 + read
        )
    };
    // 64 KiB a second, all the job's own, then 4 KiB more at second 20.
    let own = |s: u64| (64 * 1024 * (s - 8), 0);
    let disk = |s: u64| line(own(s).0 / 512 + 8 * u64::from(s >= 20));
    assert_eq!(
        stops_with_command_io(&mut c, &r, 9, 22, disk, own),
        vec![20]
    );
}

/// A job whose command exits has done its work for its window: the next
/// job starts at once, the exited one is credited only the time its
/// command ran and is not started again within its window. A trial's
/// `fstrim` job, done in 10 ms, was credited whole idle periods while its
/// scrub never ran.
#[test]
fn a_job_whose_command_exits_hands_the_idle_time_to_the_next() {
    let (mut c, r) = controller(
        "network = \"timer(3s)\"\ntask = \"jobs\"\n\
         [[disk.job]]\nname = \"trim\"\ncommand = [\"/bin/true\"]\nreserve = \"5m/hour:extra\"\n\
         [[disk.job]]\nname = \"scrub\"\ncommand = [\"/bin/true\"]\nreserve = \"5m/hour\"\n",
    );
    let job_orders = |outs: &[(u64, Output)]| -> Vec<(u64, usize, bool)> {
        outs.iter()
            .filter_map(|(s, o)| match o {
                Output::Order {
                    job: Some(j),
                    order,
                } => Some((*s, *j, matches!(order, Order::Start { .. }))),
                _ => None,
            })
            .collect()
    };
    let outs = run(&mut c, &r, 0, 9, busy_then_quiet);
    assert_eq!(job_orders(&outs), vec![(8, 0, true)], "trim first");
    let mut out = Vec::new();
    c.on_job_outcome(
        at(8),
        "trim".into(),
        Outcome::CommandStarted(4242, None),
        true,
        &mut out,
    );
    assert!(out.is_empty());
    c.on_job_outcome(
        at(8),
        "trim".into(),
        Outcome::CommandExited(4242, "exit status: 0".into(), true),
        true,
        &mut out,
    );
    // No pause for the exited command; scrub starts now.
    assert_eq!(
        out.iter()
            .map(|o| match o {
                Output::Order { job, order } => (*job, matches!(order, Order::Start { .. })),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>(),
        vec![(Some(1), true)]
    );
    // Quiet on: scrub keeps the disk; trim is not started again.
    let outs = run(&mut c, &r, 9, 30, |_| busy_then_quiet(8));
    assert!(job_orders(&outs).is_empty(), "{outs:#?}");
    let g = c.gauges(Nanos::from_secs(30));
    assert_eq!(g.jobs[0].idle_s, 0.0, "trim ran no time");
    assert_eq!(g.jobs[1].idle_s, 22.0, "scrub from second 8");
    // A report of an older generation's command schedules nothing.
    let (mut c, r) = controller(
        "network = \"timer(3s)\"\ntask = \"jobs\"\n\
         [[disk.job]]\nname = \"trim\"\ncommand = [\"/bin/true\"]\nreserve = \"5m/hour\"\n\
         [[disk.job]]\nname = \"scrub\"\ncommand = [\"/bin/true\"]\nreserve = \"5m/hour\"\n",
    );
    run(&mut c, &r, 0, 9, busy_then_quiet);
    let mut out = Vec::new();
    c.on_job_outcome(
        at(8),
        "trim".into(),
        Outcome::CommandExited(4242, "exit status: 0".into(), true),
        false,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
}

/// While a command runs the daemon polls every `TASK_POLL`, so the
/// foreground's return pauses it within that; not once it is paused, and
/// never for a standby disk, even asleep.
#[test]
fn a_running_command_asks_for_faster_polls() {
    let (mut c, r) = command_started();
    assert_eq!(c.task_poll(), Some(TASK_POLL));
    // The foreground: paused, back to the disk's poll.
    let busy = drive(&mut c, &r, 9, 10, |_| {
        "8 16 sdb 200 0 1600 0 0 0 0 0 0 0 0\n".to_string()
    });
    assert!(
        busy.iter().any(|(_, o)| matches!(
            o,
            Output::Order {
                job: None,
                order: Order::Stop
            }
        )),
        "{busy:#?}"
    );
    assert_eq!(c.task_poll(), None);
    // A standby disk asleep.
    let (mut c, r) = controller("network = \"timer(3s)\"\nmax_spindowns_per_day = 1000\n");
    run(&mut c, &r, 0, 9, busy_then_quiet);
    report(&mut c, 8, Outcome::SpunDown("hdparm -y".into()));
    assert!(c.in_standby());
    assert_eq!(c.task_poll(), None);
}

/// A command's run time is counted from its start or resume to its pause,
/// exit or stop, and `state_at` includes the run so far: what `lull
/// status` shows as the idle time the command was given.
#[test]
fn a_command_s_run_time_is_counted_while_it_runs() {
    let (mut c, _r) = command_started();
    report(&mut c, 10, Outcome::CommandPaused(4242));
    assert_eq!(c.state_at(Nanos::from_secs(11)).command_s, 2.0);
    report(&mut c, 12, Outcome::CommandResumed(4242));
    assert_eq!(c.state_at(Nanos::from_secs(15)).command_s, 5.0);
    report(
        &mut c,
        16,
        Outcome::CommandExited(4242, "exit status: 0".into(), true),
    );
    assert_eq!(c.state().command_s, 6.0);
    assert_eq!(c.state_at(Nanos::from_secs(30)).command_s, 6.0);
    assert_eq!(c.state().command_exits, 1);
}
