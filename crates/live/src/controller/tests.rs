//! The controller's decisions, driven by hand: samples, reports and time
//! in, orders, hooks and state out, with no daemon, clock or device.

use lull_core::time::Nanos;

use super::*;
use crate::config::Config;
use crate::diskstats::parse;
use crate::drive::PowerState;
use crate::task::Intent;

const UNIX0: u64 = 1_800_000_000;

/// The kernel's boot id the tests' daemon runs in.
const BOOT: u128 = 0x1b2e_87f4_a0c3_4d5e_9f61_0a2b_3c4d_5e6f;

/// The one `[[disk]]` of `disk` (TOML) named `sdb`, and its family.
fn sdb(disk: &str, registry: &Registry) -> (DiskConfig, Family) {
    let text = format!("[[disk]]\ndevice = \"sdb\"\n{disk}");
    let cfg = Config::parse(std::path::Path::new("lull.toml"), &text, registry).unwrap();
    let family = Family {
        disk: "sdb".into(),
        partitions: vec![],
        holders: vec![],
    };
    (cfg.disks[0].clone(), family)
}

/// A controller for the one `[[disk]]` of `disk` (TOML) named `sdb`, and
/// its registry.
fn controller(disk: &str) -> (DiskController, Registry) {
    let registry = crate::default_registry();
    let (cfg, family) = sdb(disk, &registry);
    let c = fresh(&registry, &cfg, family, Nanos::ZERO);
    (c, registry)
}

/// A controller for `cfg` named `sdb`, from the state `st`, at time 0.
fn with_state(
    registry: &Registry,
    cfg: &DiskConfig,
    family: Family,
    st: DiskState,
    settings: Settings,
) -> DiskController {
    DiskController::new(
        registry,
        cfg,
        "sdb",
        "sdb",
        family,
        1,
        st,
        settings,
        Nanos::ZERO,
    )
    .unwrap()
}

/// A controller for `cfg` with no state yet, power checks every
/// `power_check` (zero: none), polled every second.
fn fresh(
    registry: &Registry,
    cfg: &DiskConfig,
    family: Family,
    power_check: Nanos,
) -> DiskController {
    let settings = Settings {
        power_check,
        dry_run: false,
        clock: Nanos::ZERO,
        poll: Nanos::from_secs(1),
        boot_id: Some(BOOT),
    };
    with_state(registry, cfg, family, DiskState::default(), settings)
}

fn at(s: u64) -> Now {
    Now {
        mono: Nanos::from_secs(s),
        unix: UNIX0 + s,
    }
}

/// What the actor reports at second `s` (of this controller's
/// generation; no wake witness): the controller's outputs.
fn report(c: &mut DiskController, s: u64, outcome: Outcome) -> Vec<Output> {
    let mut out = Vec::new();
    c.on_outcome(at(s), outcome, true, &mut NoWitness, &mut out);
    out
}

/// Drives `c` second by second from `from` to `to` (exclusive) with
/// `ios(s)` completed operations at second `s`; returns every output with
/// its second.
fn run(
    c: &mut DiskController,
    registry: &Registry,
    from: u64,
    to: u64,
    ios: impl Fn(u64) -> u64,
) -> Vec<(u64, Output)> {
    drive(c, registry, from, to, |s| {
        let n = ios(s);
        format!("8 16 sdb {n} 0 {} 0 0 0 0 0 0 0 0\n", n * 8)
    })
}

/// Polls `c` second by second from `from` to `to` (exclusive) with the
/// diskstats text `diskstats(s)`; returns every output with its second.
fn drive(
    c: &mut DiskController,
    registry: &Registry,
    from: u64,
    to: u64,
    diskstats: impl Fn(u64) -> String,
) -> Vec<(u64, Output)> {
    let mut all = Vec::new();
    for s in from..to {
        let sample = Sample::new(parse(&diskstats(s)).unwrap());
        let mut out = Vec::new();
        let mut cx = Context {
            registry,
            witness: &mut NoWitness,
        };
        c.on_poll(at(s), &sample, false, &mut cx, &mut out);
        all.extend(out.into_iter().map(|o| (s, o)));
    }
    all
}

fn standby_orders(outs: &[(u64, Output)]) -> Vec<u64> {
    outs.iter()
        .filter(|(_, o)| {
            matches!(
                o,
                Output::Order {
                    job: None,
                    order: Order::Start { .. }
                }
            )
        })
        .map(|(s, _)| *s)
        .collect()
}

/// Busy until second 5 (20 operations a second), then quiet.
fn busy_then_quiet(s: u64) -> u64 {
    20 * s.min(5)
}

#[test]
fn a_timer_orders_standby_after_its_timeout_and_counts_it() {
    let (mut c, r) = controller("network = \"timer(10s)\"\nmax_spindowns_per_day = 1000\n");
    let outs = run(&mut c, &r, 0, 30, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![15]);
    let st = c.state();
    // Two idle periods, as the engine sees them: from the first poll (a
    // baseline) to the I/O at second 1, and from second 5 on.
    assert_eq!((st.idle_starts, st.task_starts), (2, 1));
    assert_eq!(st.spindown_attempts_unix, vec![UNIX0 + 15]);
    assert!(
        st.last_decision.starts_with("standby"),
        "{}",
        st.last_decision
    );
    let (changed, urgent) = c.take_changes();
    assert!(changed && urgent, "a spin-down attempt is written at once");
    assert_eq!(c.take_changes(), (false, false));
    // A dry run's outcome too: the state must not go on reading "standby"
    // (`lull status` without metrics showed the disk asleep).
    report(&mut c, 15, Outcome::DryRun("spin /dev/sdb down".into()));
    assert_eq!(c.take_changes(), (true, true));
    assert_eq!(c.state().last_decision, "dry run: would spin /dev/sdb down");
    assert!(!c.in_standby());
    // A skip for a new reason is written at once; the same again waits.
    let skip = |c: &mut DiskController, why: &str| {
        report(c, 16, Outcome::Skipped(why.into()));
        c.take_changes()
    };
    assert_eq!(
        skip(&mut c, "skip standby: no transport reaches the drive"),
        (true, true)
    );
    assert_eq!(
        skip(&mut c, "skip standby: no transport reaches the drive"),
        (true, false)
    );
    assert_eq!(
        skip(&mut c, "skip standby: the disk is absent"),
        (true, true)
    );
}

#[test]
fn the_wear_budget_refuses_a_standby_and_says_when_the_next_comes() {
    // One a day: a bucket of one token, refilled over 24 h.
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1\n");
    let first = run(&mut c, &r, 0, 20, busy_then_quiet);
    assert_eq!(standby_orders(&first), vec![10]);
    // The drive went down; I/O wakes it, then it is idle again.
    report(&mut c, 11, Outcome::SpunDown("test".into()));
    // Idle from 25 on (refused at 30), then I/O again at 40.
    let second = run(&mut c, &r, 20, 45, |s| {
        100 + 20 * s.min(25) + 20 * u64::from(s >= 40)
    });
    assert!(standby_orders(&second).is_empty(), "{second:?}");
    let st = c.state();
    assert_eq!(st.spinups, 1);
    assert_eq!(st.task_starts, 2);
    // The refusal outlives the I/O that ended its idle period: the start
    // stopped nothing (the last decision read "stop standby: disk busy or
    // prediction over", hiding why the disk stayed up).
    assert!(
        st.last_decision
            .starts_with("skip standby: wear budget (1 spin-downs a day"),
        "{}",
        st.last_decision
    );
}

/// A standby that ran is stopped at the I/O that ends its idle period
/// (one that was refused is not: the wear budget's test).
#[test]
fn a_standby_that_ran_is_stopped_by_io() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 10\n");
    run(&mut c, &r, 0, 20, busy_then_quiet);
    report(&mut c, 11, Outcome::SpunDown("test".into()));
    run(&mut c, &r, 20, 22, |s| 100 + 20 * s);
    assert_eq!(
        c.state().last_decision,
        "stop standby: disk busy or prediction over"
    );
}

#[test]
fn repeated_failures_back_off_and_success_resets() {
    let (mut c, r) = controller("network = \"timer(2s)\"\nmax_spindowns_per_day = 1000\n");
    let mut t = 0;
    let mut orders = 0;
    // Three idle periods, each standby failing.
    for _ in 0..3 {
        let outs = run(
            &mut c,
            &r,
            t,
            t + 10,
            |s| if s < t + 3 { 10 * s } else { 10 * (t + 3) } + 1000 * orders,
        );
        let sent = standby_orders(&outs);
        assert_eq!(sent.len(), 1, "{outs:?}");
        orders += 1;
        c.take_changes();
        report(&mut c, sent[0], Outcome::Failed("refused".into()));
        // Written at once: the decision, already written, read "standby".
        assert_eq!(c.take_changes(), (true, true));
        t += 10;
    }
    assert_eq!(c.state().errors, 3);
    // The fourth idle period: refused, next try in a minute.
    let outs = run(
        &mut c,
        &r,
        t,
        t + 10,
        |s| if s < t + 3 { 10 * s } else { 10 * (t + 3) } + 1000 * orders,
    );
    assert!(standby_orders(&outs).is_empty());
    assert!(
        c.state().last_decision.contains("failed 3 times in a row"),
        "{}",
        c.state().last_decision
    );
    // After the back-off, a success resets the count.
    t += 70;
    let outs = run(
        &mut c,
        &r,
        t,
        t + 10,
        |s| if s < t + 3 { 10 * s } else { 10 * (t + 3) } + 5000,
    );
    let sent = standby_orders(&outs);
    assert_eq!(sent.len(), 1);
    report(&mut c, sent[0], Outcome::SpunDown("ok".into()));
    assert!(c.in_standby());
    assert_eq!(c.failures, 0);
}

#[test]
fn a_foreign_spin_up_is_counted_and_hooked_with_the_time_asleep() {
    let (mut c, r) = controller(
        "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\non_spinup = [\"/bin/true\"]\n",
    );
    run(&mut c, &r, 0, 12, busy_then_quiet);
    // No change of power state seen yet: when this one began is unknown.
    assert_eq!(c.gauges(at(11).mono).power_since_unix, None);
    report(&mut c, 11, Outcome::SpunDown("ok".into()));
    let since = |c: &DiskController| c.gauges(at(50).mono).power_since_unix;
    assert_eq!(since(&c), Some(at(11).unix));
    let out = report(&mut c, 41, Outcome::Power(PowerState::Active));
    assert_eq!(since(&c), Some(at(41).unix));
    let st = c.state();
    assert_eq!((st.spinups, st.foreign_spinups), (1, 1));
    assert!((st.standby_s - 30.0).abs() < 1e-9, "{}", st.standby_s);
    assert_eq!(st.last_wake.as_ref().unwrap().cause, Wake::FOREIGN);
    let hooks: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Hook { event, env } => Some((*event, env.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].0, HookEvent::Spinup);
    assert!(
        hooks[0]
            .1
            .contains(&("LULL_STANDBY_S", "30.000".to_string())),
        "{hooks:?}"
    );
    assert!(!c.in_standby());
}

/// A `timer(5s)` controller for a drive whose APM level (127) lets it
/// spin itself down.
fn with_apm_127(r: &Registry, settings: Settings) -> DiskController {
    let (cfg, family) = sdb("network = \"timer(5s)\"\n", r);
    let st = DiskState {
        identity: Some(crate::identify::Identity {
            apm: Some(crate::identify::Apm::Level(127)),
            ..Default::default()
        }),
        ..DiskState::default()
    };
    with_state(r, &cfg, family, st, settings)
}

#[test]
fn a_disk_found_in_standby_names_the_drive_s_own_apm() {
    // Quiet after second 3, then CHECK POWER MODE finds it asleep.
    let found = |c: &mut DiskController, r: &Registry| {
        run(c, r, 0, 3, busy_then_quiet);
        report(c, 3, Outcome::Power(PowerState::Standby));
        assert!(c.in_standby());
        c.state().last_decision.clone()
    };
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    assert_eq!(
        found(&mut c, &r),
        "found in standby (spun down by something else)"
    );
    // Seen busy, then found asleep: asleep since about the check.
    assert_eq!(c.gauges(at(9).mono).power_since_unix, Some(at(3).unix));
    // Found asleep before it was ever seen awake: since when is unknown.
    let (mut fresh, _) = controller("network = \"timer(5s)\"\n");
    report(&mut fresh, 1, Outcome::Power(PowerState::Standby));
    assert!(fresh.in_standby());
    assert_eq!(fresh.gauges(at(9).mono).power_since_unix, None);
    // The same, for a drive whose APM level lets it spin itself down.
    let mut d = with_apm_127(&r, c.settings);
    assert_eq!(
        found(&mut d, &r),
        "found in standby (spun down by something else: the drive's APM level 127 lets it spin itself down)"
    );
}

#[test]
fn a_report_of_an_older_actor_counts_but_changes_no_live_state() {
    let (mut c, _) = controller("network = \"timer(5s)\"\non_spindown = [\"/bin/true\"]\n");
    let mut out = Vec::new();
    c.on_outcome(
        at(3),
        Outcome::SpunDown("ok".into()),
        false,
        &mut NoWitness,
        &mut out,
    );
    assert_eq!(c.state().spindowns, 1);
    assert!(!c.in_standby());
    assert!(out.is_empty(), "no hook for a retired actor: {out:?}");
}

#[test]
fn the_break_even_check_refuses_a_prediction_too_short_for_the_drive() {
    // wd-red-plus: B of about a minute; the network predicts 5 s of idle.
    let (mut c, r) = controller(
        "network = \"timer(2s) + fixed(5s)\"\npreset = \"wd-red-plus\"\nmax_spindowns_per_day = 1000\n",
    );
    // Idle from 5 s, the timer fires at 7 s (the prediction runs to 12 s).
    let outs = run(&mut c, &r, 0, 10, busy_then_quiet);
    assert!(standby_orders(&outs).is_empty());
    assert!(
        c.state().last_decision.contains("below the break-even"),
        "{}",
        c.state().last_decision
    );
    // The engine did decide: the decision is reported, the order is not.
    assert!(
        outs.iter()
            .any(|(_, o)| matches!(o, Output::Decided(Intent::Start { .. })))
    );
}

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

/// The daily summary line: what lull saved against hd-idle's 10 minutes,
/// the user's own timeout when configured, the best fixed timeout and the
/// oracle; nothing before an idle period ended.
#[test]
fn the_daily_summary_names_every_reference() {
    use lull_activity::{Counts, Poll, PollKind, Record, Session, Shadow};
    let model = lull_tasks::PowerModel::preset("wd-red-plus").unwrap();
    let s = Nanos::from_secs;
    let line = |yours: Option<Nanos>| {
        let mut sh = Shadow::new(model.clone(), model.break_even());
        if let Some(t) = yours {
            sh = sh.with_your_timeout(t);
        }
        sh.feed(&Record::Session(Session {
            clock: s(1_700_000_000),
            ..Session::default()
        }));
        sh.feed(&Record::Poll(Poll {
            t0: s(1),
            t: s(1),
            kind: PollKind::Baseline,
            ..Poll::default()
        }));
        sh.settle();
        assert_eq!(super::summary_line(&sh.report()), None);
        sh.feed(&Record::Standby(s(300)));
        sh.feed(&Record::Poll(Poll {
            t0: s(1999),
            t: s(2000),
            counts: Counts {
                reads: 1,
                ..Counts::default()
            },
            ..Poll::default()
        }));
        sh.settle();
        super::summary_line(&sh.report()).unwrap()
    };
    let plain = line(None);
    for part in [
        "last 24 h: lull saved ",
        "with 1 spin-ups",
        "hd-idle's 10 min would have saved ",
        "the best fixed timeout (0s) 1.55 Wh (1)",
        "the oracle ",
    ] {
        assert!(plain.contains(part), "{part} in {plain}");
    }
    assert!(!plain.contains("your timeout"), "{plain}");
    // A 25-minute timeout sleeps the last 498 s of the 1998 s period.
    let yours = line(Some(s(1500)));
    assert!(yours.contains("your timeout (25m) "), "{yours}");
    assert!(yours.contains(" Wh (1), the best fixed"), "{yours}");
}

/// Found by the guest test: a disk unplugged, then back under another
/// kernel name (its by-id link moved: `replugged`) has its counters start
/// afresh, and the absence its engine held open since it vanished ends
/// with the new name's baseline; a fresh tracker left the engine busy for
/// good, so the disk never spun down again.
#[test]
fn a_disk_back_under_another_name_is_idle_again_and_spun_down() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    run(&mut c, &r, 0, 6, busy_then_quiet);
    run_absent(&mut c, &r, 6, 20);
    assert!(!c.state().present);
    let mut out = Vec::new();
    let family = Family {
        disk: "sdc".into(),
        partitions: vec![],
        holders: vec![],
    };
    c.replugged("sdc", family, &mut out);
    // Back as sdc at 20 with counters of its own, quiet: spun down after
    // its timeout from the baseline.
    let back = drive(&mut c, &r, 20, 40, |_| {
        "8 32 sdc 7 0 56 0 0 0 0 0 0 0 0\n".into()
    });
    assert!(c.state().present);
    assert_eq!(standby_orders(&back), vec![25]);
}

/// Polls `c` with `sdb` absent (unplugged): another disk's line only.
fn run_absent(
    c: &mut DiskController,
    registry: &Registry,
    from: u64,
    to: u64,
) -> Vec<(u64, Output)> {
    drive(c, registry, from, to, |_| {
        "8 0 sda 1 0 8 0 0 0 0 0 0 0 0\n".into()
    })
}

#[test]
fn an_unplugged_disk_is_sent_no_standby_and_its_return_is_no_wake() {
    // Found by the guest test (issue 28): unplugged while busy, the timer
    // ran out while it was away and a standby went to a device node that
    // no longer existed; unplugged in standby, its first I/O after coming
    // back ran the on_wake hook of an idle period that had ended.
    let (mut c, r) = controller(
        "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\non_wake = [\"/bin/true\"]\n",
    );
    // Busy until 5, unplugged from 6 to 20: the timer runs out at 10.
    run(&mut c, &r, 0, 6, busy_then_quiet);
    let away = run_absent(&mut c, &r, 6, 20);
    assert_eq!(standby_orders(&away), Vec::<u64>::new());
    // The state file says since when it is gone (the poll that missed it).
    let gone = c.state().vanished_unix.expect("gone since");
    assert_eq!(c.state().last_decision_unix, gone);
    assert!(
        c.state().last_decision.contains("not present"),
        "{}",
        c.state().last_decision
    );
    assert!(c.state().spindown_attempts_unix.is_empty());
    // Back and quiet: spun down after its timeout, as a new disk would be.
    let back = run(&mut c, &r, 20, 40, |_| 100);
    assert_eq!(c.state().vanished_unix, None);
    assert_eq!(standby_orders(&back), vec![25]);
    report(&mut c, 25, Outcome::SpunDown("ok".into()));
    assert!(c.in_standby());
    // Unplugged in standby: the standby time so far counts, then nothing
    // of that idle period is left.
    run_absent(&mut c, &r, 40, 45);
    assert!(!c.in_standby());
    assert!(
        (c.state().standby_s - 15.0).abs() < 1.5,
        "{}",
        c.state().standby_s
    );
    // Its standby ended when it left: a spin-up (a trial saw "spin-downs
    // 2, spin-ups 0" beside a shadow that counted one).
    assert_eq!(c.state().spinups, c.state().spindowns);
    let spinups = c.state().spinups;
    // Back, then I/O: no spin-up counted (lull did not know its state), and
    // no on_wake hook for the idle period that ended when it left.
    let outs = run(&mut c, &r, 45, 48, |s| if s < 47 { 100 } else { 120 });
    assert_eq!(c.state().spinups, spinups);
    let hooks = outs
        .iter()
        .filter(|(_, o)| matches!(o, Output::Hook { .. }))
        .count();
    assert_eq!(hooks, 0, "{outs:?}");
}

#[test]
fn a_first_snapshot_of_what_was_learned_is_dated_when_the_daemon_stops() {
    // Stopped before any idle period ended: the snapshot `finish` keeps is
    // the first, dated by the stop's wall clock (it took the last
    // decision's, 0 here: "learned since 1970").
    // Quiet from the first poll: the idle period that begins there ends
    // only at the stop, where it counts as the shadow counts it (a run's
    // last period ends at its last instant).
    let (mut c, r) = controller("network = \"long-idle()\"\n");
    run(&mut c, &r, 0, 20, |_| 0);
    assert!(c.state().learned.is_none());
    assert_ne!(c.state().last_decision_unix, UNIX0 + 20);
    let mut out = Vec::new();
    c.finish(at(20), &mut out);
    let learned = c.state().learned.clone().expect("learned state kept");
    assert_eq!(learned.since_unix, UNIX0 + 20);
    assert_eq!(learned.idle_periods, 1);
}

#[test]
fn after_an_engine_error_the_detectors_resume_from_what_they_learned() {
    let (mut c, r) = controller("network = \"long-idle()\"\nmax_spindowns_per_day = 1000\n");
    // Busy a second, then quiet for 3 s to 4 min, 40 times.
    let mut starts = Vec::new();
    let mut s = 0;
    for i in 0..40u64 {
        starts.push(s);
        s += 1 + 3 + (i * 37) % 240;
    }
    let ios = |t: u64| 10 * starts.iter().filter(|&&b| b <= t).count() as u64;
    run(&mut c, &r, 0, s, ios);
    let learned = c.state().learned.clone().expect("a snapshot");
    assert!(learned.idle_periods >= 30);
    // A poll from the past (a clock gone wrong): the engine refuses it.
    let n = ios(s) + 10;
    run(&mut c, &r, s - 100, s - 99, |_| n);
    assert_eq!(c.state().errors, 1, "{}", c.state().last_decision);
    // The disk is quiet: the new engine is in an idle period from the
    // error's poll on, its detector armed, as after a start.
    assert!(c.engine.next_deadline().is_some());
    // The new engine holds the last snapshot (kept as that poll's I/O
    // ended the idle period), not a fresh network's state.
    let after = c.state().learned.clone().unwrap();
    assert!(after.idle_periods >= learned.idle_periods);
    assert_eq!(c.engine.save_learned(), after.parts);
    let fresh = controller("network = \"long-idle()\"\n")
        .0
        .engine
        .save_learned();
    assert_ne!(fresh, after.parts);
    // And it goes on deciding.
    run(&mut c, &r, s + 1, s + 400, |t| {
        n + 10 * u64::from(t > s + 200)
    });
    assert_eq!(c.state().errors, 1);
    assert!(c.state().learned.as_ref().unwrap().idle_periods > after.idle_periods);
}

#[test]
fn a_disk_left_alone_is_asked_nothing() {
    // Power checks every 5 s: the same disk gets them unless it is left
    // alone (a non-rotating drive that no preset names).
    let r = crate::default_registry();
    let checks = |left_alone: Option<&str>| {
        let (mut cfg, family) = sdb("task = \"standby\"\nbackend = \"sgio\"\n", &r);
        cfg.left_alone = left_alone.map(String::from);
        let mut c = fresh(&r, &cfg, family, Nanos::from_secs(5));
        let outs = run(&mut c, &r, 0, 600, |t| 10 * (t / 100));
        let orders = |f: fn(&Order) -> bool| {
            outs.iter()
                .filter(|(_, o)| matches!(o, Output::Order { order, .. } if f(order)))
                .count()
        };
        (
            orders(|o| matches!(o, Order::CheckPower { .. })),
            orders(|o| matches!(o, Order::Start { .. })),
        )
    };
    let (power, standby) = checks(None);
    assert!(power >= 100 && standby >= 1, "{power} {standby}");
    assert_eq!(checks(Some("the drive does not rotate")), (0, 0));
}

#[test]
fn a_restart_carries_a_periodic_job_s_wall_clock_phase() {
    // A job writes for a second every 300 s of wall time; `auto`'s model
    // learns it over 3 hours. The daemon stops at 10800 s and starts again
    // at 11000 s (wall): the job's next run, at 11100 s, is 100 s after the
    // restart. Restored as if no time had passed it would be due at once.
    let disk = "network = \"long-idle()\"\nmax_spindowns_per_day = 1000\n";
    let (mut c, r) = controller(disk);
    let jobs = |wall: u64| 10 * (wall / 300 + u64::from(wall % 300 >= 1));
    let stop = 10_800;
    run(&mut c, &r, 0, stop, jobs);
    let next_in = |c: &DiskController| {
        c.gauges(Nanos::ZERO)
            .nodes
            .iter()
            .find(|(_, name, _)| name == "periodic_next_in_s")
            .map(|g| g.2)
            .expect("the gauge")
    };
    let mut out = Vec::new();
    c.finish(at(stop), &mut out);
    let st = c.state().clone();
    let restart = 11_000;
    let (cfg, family) = sdb(disk, &r);
    // The new daemon's clock starts at the restart (wall nanoseconds).
    let settings = Settings {
        clock: Nanos::from_secs(restart),
        ..c.settings
    };
    let mut d =
        DiskController::new(&r, &cfg, "sdb", "sdb", family, 2, st, settings, Nanos::ZERO).unwrap();
    // Quiet from the restart: the idle period that begins within a few
    // polls expects the job about 100 s on (less the window's half width,
    // 300/128 s, and the few seconds to the period's start).
    let base = jobs(restart);
    run(&mut d, &r, 0, 30, |t| {
        base + jobs(restart + t) - jobs(restart)
    });
    let n = next_in(&d);
    assert!((90.0..100.0).contains(&n), "next periodic arrival in {n} s");
}

#[test]
fn what_the_network_learned_survives_a_restart_and_only_into_the_same_network() {
    // Issue 32: `long-idle` (what `auto` is) learns over idle periods; a
    // controller built with the state the last one left continues with it.
    let disk = "network = \"long-idle()\"\nmax_spindowns_per_day = 1000\n";
    let (mut c, r) = controller(disk);
    // Busy a second, then quiet for 3 s to 4 min, 40 times.
    let mut starts = Vec::new();
    let mut s = 0;
    for i in 0..40u64 {
        starts.push(s);
        s += 1 + 3 + (i * 37) % 240;
    }
    run(&mut c, &r, 0, s, |t| {
        10 * starts.iter().filter(|&&b| b <= t).count() as u64
    });
    let mut out = Vec::new();
    c.finish(at(s), &mut out);
    let st = c.state().clone();
    let learned = st.learned.clone().expect("learned state kept");
    assert!(learned.idle_periods >= 30, "{}", learned.idle_periods);
    assert_eq!(learned.network, "long-idle()");
    // Through the state file's JSON and back.
    let json = serde_json::to_string(&st).unwrap();
    let back: DiskState = serde_json::from_str(&json).unwrap();
    assert_eq!(back.learned, st.learned);
    let (cfg, family) = sdb(disk, &r);
    let settings = c.settings;
    let now = Nanos::from_secs(s + 100);
    let build = |st: DiskState, cfg: &DiskConfig| {
        DiskController::new(&r, cfg, "sdb", "sdb", family.clone(), 2, st, settings, now).unwrap()
    };
    // The last run's idle period and next decision are not this one's.
    let mut stale = back.clone();
    (stale.idle_since_unix, stale.next_decision_unix) = (Some(UNIX0 + s - 20), Some(UNIX0 + s + 5));
    let restarted = build(stale, &cfg);
    assert_eq!(restarted.state().idle_since_unix, None);
    assert_eq!(restarted.state().next_decision_unix, None);
    let mut d = build(back.clone(), &cfg);
    // Restored at the engine's time zero; its saved times count from there.
    let restored = d.engine.save_learned();
    let fresh_again = build(back.clone(), &cfg).engine.save_learned();
    assert_eq!(restored, fresh_again);
    assert_eq!(restored.len(), learned.parts.len());
    // It runs on from the first poll (whose events come before the
    // instant it was built) with no engine error.
    let errors = d.state().errors;
    run(&mut d, &r, 0, 30, |t| 10 * u64::from(t > 3));
    assert_eq!(d.state().errors, errors, "{}", d.state().last_decision);
    // Its own idle period (quiet since the I/O at second 4) is kept.
    let since = d.state().idle_since_unix.expect("idle since the last I/O");
    assert!((UNIX0 + 4..=UNIX0 + 6).contains(&since), "{since}");
    // The count goes on from the restored one: one more, the idle period
    // from its first poll to the I/O at second 4.
    assert_eq!(
        d.state().learned.as_ref().map(|l| l.idle_periods),
        Some(learned.idle_periods + 1)
    );
    let fresh = build(DiskState::default(), &cfg);
    assert_ne!(
        fresh.engine.save_learned(),
        learned.parts,
        "it had learned something"
    );
    // Another network, or damaged values: a cold start, no panic.
    let other = Config::parse(
        std::path::Path::new("lull.toml"),
        "[[disk]]\ndevice = \"sdb\"\nnetwork = \"share()\"\n",
        &r,
    )
    .unwrap();
    let e = build(back.clone(), &other.disks[0]);
    assert!(e.state().learned.is_none());
    let mut damaged = back.clone();
    if let Some(l) = damaged.learned.as_mut() {
        for p in l.parts.iter_mut().flatten() {
            p.values.truncate(p.values.len() / 2);
        }
    }
    let f = build(damaged, &cfg);
    assert!(f.state().learned.is_none());
    assert_eq!(
        f.engine.save_learned(),
        fresh.engine.save_learned(),
        "a cold start"
    );
}

// The activity log's sessions name the drive by its serial number's hash,
// so that its evidence is kept apart from another drive's under the key.
#[test]
fn sessions_name_the_drive_by_its_serial_number() {
    let (c, r) = controller("network = \"timer(5s)\"\n");
    assert_eq!(c.session().drive_id, None, "no serial number known");
    let (cfg, family) = sdb("network = \"timer(5s)\"\n", &r);
    let with = |serial: &str| {
        let st = DiskState {
            identity: Some(crate::identify::Identity {
                serial: Some(serial.into()),
                ..Default::default()
            }),
            ..DiskState::default()
        };
        with_state(&r, &cfg, family.clone(), st, c.settings).session()
    };
    let (x, y) = (with("WD-WCC7K0000001"), with("WD-WCC7K0000002"));
    assert_eq!(x.drive_id, Some(lull_activity::drive_id("WD-WCC7K0000001")));
    assert_ne!(x.drive_id, y.drive_id);
    assert_eq!(x.key, y.key);
}

#[test]
fn the_shadow_has_watched_up_to_the_last_poll() {
    // Busy for 5 s, then quiet: quiet polls write no record but a mark a
    // minute, and the time watched still reaches the last poll.
    let (mut c, r) = controller("");
    run(&mut c, &r, 0, 200, |s| 10 * s.min(5));
    let shadow = c.shadow().expect("a standby disk has a shadow");
    for w in &shadow.windows {
        assert_eq!(w.observed_s, 199.0, "{}", w.window);
    }
    // And what a replay of the log books, once the next record comes,
    // is the same: a mark at 260 s.
    run(&mut c, &r, 200, 261, |_| 50);
    let w = &c.shadow().unwrap().windows[1];
    assert_eq!(w.observed_s, 260.0);
}

// Tried on a loop device with the paper drive (B = 3 s, poll 1 s): a poll
// that found two writes, a tenth of a second apart in the kernel's count
// of busy time, was spread into two requests with half a second between
// them; the engine's timer fired in that gap, and the controller sent
// `hdparm -y` at the poll, after the I/O it had just seen (and a second
// at the next poll), spending two of the wear budget's tokens on one
// idle period. A decision about an idle period that the same poll's I/O
// already ended is a decision about the past: it is skipped, as a replay
// of the log skips it.
#[test]
fn a_decision_the_same_poll_s_io_overtook_is_not_sent() {
    let (mut c, r) = controller("network = \"timer(300ms)\"\nmax_spindowns_per_day = 1000\n");
    // Two operations at second 3 with 2 ms of busy time; quiet otherwise.
    let line = |s: u64| {
        let (n, io) = if s >= 3 { (2, 2) } else { (0, 0) };
        format!("8 16 sdb {n} 0 {} 0 0 0 0 0 0 {io} 0\n", n * 8)
    };
    let outs = drive(&mut c, &r, 0, 6, line);
    // The idle period from the baseline on: its timer fired at 0.3 s, sent
    // at the poll of second 1. The poll of second 3 ended the period from
    // second 1 (its timer had already spun the disk down: a wake) and held
    // two in-poll gaps whose timers the same poll overtook; the period
    // from second 3 on fires at 3.3 s, sent at second 4.
    assert_eq!(standby_orders(&outs), vec![1, 4], "{outs:#?}");
    // A command is not resumed and paused at once for such a decision
    // either: it runs from the first period and from the last.
    let (mut c, r) =
        controller("network = \"timer(300ms)\"\ntask = \"command\"\ncommand = [\"/bin/true\"]\n");
    let outs = drive(&mut c, &r, 0, 6, line);
    let orders: Vec<(u64, &Order)> = outs
        .iter()
        .filter_map(|(s, o)| match o {
            Output::Order { job: None, order } => Some((*s, order)),
            _ => None,
        })
        .collect();
    let starts: Vec<u64> = orders
        .iter()
        .filter(|(_, o)| matches!(o, Order::Start { .. }))
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(starts, vec![1, 4], "{orders:#?}");
    assert_eq!(
        orders
            .iter()
            .filter(|(_, o)| matches!(o, Order::Stop))
            .count(),
        1,
        "the first run's pause at second 3 only: {orders:#?}"
    );
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
    c.on_job_outcome("scrub".into(), Outcome::CommandStarted(4242, None));
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
        Outcome::CommandExited(4242, "exit status: 0".into()),
    );
    assert_eq!(c.state().command_s, 6.0);
    assert_eq!(c.state_at(Nanos::from_secs(30)).command_s, 6.0);
    assert_eq!(c.state().command_exits, 1);
}

/// A witness that sees `hd-idle` (pid 652) spinning disk `sdb` down, and
/// counts the questions.
#[derive(Default)]
struct HdIdleBeside(Vec<String>);

impl WakeWitness for HdIdleBeside {
    fn snapshot(&mut self) -> Snapshot {
        Snapshot::default()
    }
    fn attribute(&mut self, _: Snapshot, _: &[(u32, u32)], _: u64) -> crate::wakeup::Attribution {
        crate::wakeup::Attribution::default()
    }
    fn spinners(&mut self, kernel: &str) -> Vec<Spinner> {
        self.0.push(kernel.to_string());
        (kernel == "sdb")
            .then(|| Spinner {
                name: "hd-idle".into(),
                pid: 652,
                warning: "hd-idle (pid 652) spins down sdb (after 6s) too".into(),
            })
            .into_iter()
            .collect()
    }
}

/// An hd-idle started after lull (the start's check could not name it)
/// spins the disk down: the drive found asleep, or already asleep when
/// lull spins it down, names it, and its warning is logged once.
#[test]
fn a_drive_found_asleep_names_the_program_beside_lull_that_spins_it_down() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    run(&mut c, &r, 0, 3, busy_then_quiet);
    let mut w = HdIdleBeside::default();
    let mut out = Vec::new();
    let power = Outcome::Power(PowerState::Standby);
    c.take_changes();
    c.on_outcome(at(3), power.clone(), true, &mut w, &mut out);
    assert!(c.in_standby());
    // Written at once: `lull status` reads the drive asleep now.
    assert!(c.take_changes().1);
    assert_eq!(
        c.state().last_decision,
        "found in standby (spun down by something else: hd-idle (pid 652))"
    );
    assert_eq!(w.0, ["sdb"]);
    assert_eq!(c.spinners_warned, [652]);
    // Busy again; then lull's own standby finds it asleep already.
    run(&mut c, &r, 4, 6, |_| 3);
    c.take_changes();
    c.on_outcome(at(6), Outcome::AlreadyStandby, true, &mut w, &mut out);
    assert!(c.take_changes().1, "written at once");
    assert_eq!(
        c.state().last_decision,
        "standby: the drive was already in standby: hd-idle (pid 652)"
    );
    assert_eq!(c.spinners_warned, [652], "warned of once");
    // With no program beside it, the line is as before (the NoWitness
    // tests above), and a drive that may spin itself down says both.
    let mut d = with_apm_127(&r, c.settings);
    d.on_outcome(at(1), power, true, &mut w, &mut out);
    assert_eq!(
        d.state().last_decision,
        "found in standby (spun down by something else: hd-idle (pid 652); the drive's APM level 127 lets it spin itself down)"
    );
}

/// In a dry run the end of an idle period lull would have slept through
/// is written at once, as a real spin-up is: `lull status` of a dry run
/// beside hd-idle lagged its shadow by up to `state_interval` (seen in
/// the guest: 3 would-be spin-ups of 4).
#[test]
fn a_dry_run_s_would_be_spin_up_is_written_at_once() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n";
    let (real, r) = controller(disk);
    let (cfg, family) = sdb(disk, &r);
    let settings = Settings {
        dry_run: true,
        ..real.settings
    };
    let mut c = with_state(&r, &cfg, family, DiskState::default(), settings);
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    report(&mut c, 10, Outcome::DryRun("spin /dev/sdb down".into()));
    c.take_changes();
    // Still quiet: nothing to write at once.
    run(&mut c, &r, 12, 14, |_| 100);
    assert_eq!(c.take_changes(), (false, false));
    // Busy again: the would-be spin-up goes at once.
    run(&mut c, &r, 14, 15, |_| 103);
    assert_eq!(c.take_changes(), (true, true));
}

/// A spin-down that went through is written at once, as its decision is:
/// the decision's write comes before the drive answers, so `lull status`
/// (from the state file) showed the drive active, with one spin-down
/// fewer, for up to `state_interval` of its standby.
#[test]
fn a_spin_down_done_is_written_at_once() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    assert!(c.take_changes().1, "the decision is written at once");
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    assert!(c.in_standby());
    assert_eq!(c.take_changes(), (true, true));
}

/// The daemon restarted while the drive slept after its own spin-down
/// (an upgrade, `systemctl restart`): its first power check finds the
/// drive asleep, which is the previous run's standby, not one by
/// "something else" (no program is looked for and none is named, though
/// an hd-idle runs), dated from the previous run's spin-down; I/O then
/// counts a spin-up. Awake at the first check instead, the state stops
/// saying standby at once.
#[test]
fn a_restart_while_asleep_takes_up_the_previous_run_s_standby() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n";
    let (mut c, r) = controller(disk);
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    let st = c.state_at(Nanos::from_secs(20));
    assert_eq!(st.standby_unix, Some(UNIX0 + 10));
    // The file the status reads says standby, and since when.
    let json = serde_json::to_string(&st).unwrap();
    let st: DiskState = serde_json::from_str(&json).unwrap();
    assert_eq!(st.standby_unix, Some(UNIX0 + 10));

    let (cfg, family) = sdb(disk, &r);
    let restarted = |st: &DiskState| with_state(&r, &cfg, family.clone(), st.clone(), c.settings);
    let mut d = restarted(&st);
    // Before any check, the metrics say standby since the spin-down.
    let g = d.gauges(Nanos::from_secs(25));
    assert!(g.in_standby);
    assert_eq!(g.power_since_unix, Some(UNIX0 + 10));
    let mut w = HdIdleBeside::default();
    let mut out = Vec::new();
    d.on_outcome(
        at(30),
        Outcome::Power(PowerState::Standby),
        true,
        &mut w,
        &mut out,
    );
    assert!(d.in_standby());
    assert_eq!(
        d.state().last_decision,
        "still in standby, as before the daemon's restart or reload"
    );
    assert!(w.0.is_empty(), "no program looked for: {:?}", w.0);
    assert_eq!(d.state().standby_unix, Some(UNIX0 + 10));
    assert_eq!(d.power_since_unix, Some(UNIX0 + 10));
    assert!(d.take_changes().1);
    // I/O: the drive spun up from the previous run's standby.
    let spinups = d.state().spinups;
    run(&mut d, &r, 31, 34, |s| s * 10);
    assert_eq!(d.state().spinups, spinups + 1);
    assert!(!d.in_standby());
    assert_eq!(d.state().standby_unix, None);

    // Lull's own standby after the restart finds it asleep still: the
    // same, without a program named.
    let mut d = restarted(&st);
    d.on_outcome(at(30), Outcome::AlreadyStandby, true, &mut w, &mut out);
    assert_eq!(
        d.state().last_decision,
        "standby: the drive was still in standby, as before the daemon's restart or reload"
    );
    assert!(w.0.is_empty(), "no program looked for: {:?}", w.0);
    assert!(d.in_standby());

    // Awake at the first check: woken while no daemon watched.
    let mut d = restarted(&st);
    d.take_changes();
    d.on_outcome(
        at(30),
        Outcome::Power(PowerState::Active),
        true,
        &mut w,
        &mut out,
    );
    assert!(!d.in_standby());
    assert_eq!(d.state().standby_unix, None);
    assert!(d.take_changes().1);
    // A drive found asleep later is one something else spun down.
    d.on_outcome(
        at(40),
        Outcome::Power(PowerState::Standby),
        true,
        &mut w,
        &mut out,
    );
    assert_eq!(
        d.state().last_decision,
        "found in standby (spun down by something else: hd-idle (pid 652))"
    );
}

/// Restarted (or reloaded) while the drive sleeps after lull's spin-down,
/// with nothing to ask it (`backend = "hdparm"`): the state file's
/// standby is taken up at the first poll. The network's timeout then
/// sends no second standby (a trial's daemon sent `hdparm -y` again,
/// counted spin-down 16 against 12 spin-ups, and spent a wear token per
/// sleeping disk at each restart), and the I/O that wakes the drive is
/// one spin-up; the idle period after it spins it down again.
#[test]
fn a_restart_while_asleep_without_power_checks_takes_up_the_standby_from_the_state_file() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\nbackend = \"hdparm\"\n";
    let (mut c, r) = controller(disk);
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    c.finish(at(20), &mut Vec::new());
    let st = c.into_state();
    assert_eq!((st.spindowns, st.spinups), (1, 0));

    let (cfg, family) = sdb(disk, &r);
    let settings = Settings {
        power_check: Nanos::from_secs(60),
        dry_run: false,
        clock: Nanos::ZERO,
        poll: Nanos::from_secs(1),
        boot_id: Some(BOOT),
    };
    let mut d = with_state(&r, &cfg, family, st, settings);
    // Quiet for a minute: no standby goes out, the drive stays asleep.
    let outs = run(&mut d, &r, 30, 90, |_| 100);
    assert_eq!(standby_orders(&outs), Vec::<u64>::new());
    assert!(d.in_standby());
    assert_eq!(d.state().spindowns, 1);
    assert_eq!(d.state().spindown_attempts_unix, vec![UNIX0 + 10]);
    assert_eq!(
        d.state().last_decision,
        "skip standby: the drive is in standby already"
    );
    assert_eq!(
        d.gauges(Nanos::from_secs(90)).power_since_unix,
        Some(UNIX0 + 10)
    );
    // I/O: one spin-up, from the previous run's standby.
    run(&mut d, &r, 90, 93, |s| 100 + s);
    assert_eq!((d.state().spindowns, d.state().spinups), (1, 1));
    assert!(!d.in_standby());
    // Quiet again: spun down after the timeout, as before the restart.
    let outs = run(&mut d, &r, 93, 105, |_| 200);
    assert_eq!(standby_orders(&outs), vec![98]);
}

/// A standby the previous run left is not taken up when the disk did I/O
/// while no daemon watched (its diskstats counters moved since): a disk a
/// reload removed, used, then added back showed "in standby since before
/// the reload" and booked a spin-up for a drive that was awake (a NAS
/// trial). It is over, counted as the spin-up it was, and the network's
/// timeout spins the drive down again.
#[test]
fn a_standby_whose_disk_did_io_unwatched_is_not_taken_up() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\nbackend = \"hdparm\"\n";
    for moved in [false, true] {
        let (mut c, r) = controller(disk);
        let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
        assert_eq!(standby_orders(&outs), vec![10]);
        report(&mut c, 10, Outcome::SpunDown("ok".into()));
        // Quiet polls in standby: the counters are kept with it.
        run(&mut c, &r, 12, 15, |_| 100);
        assert_eq!(c.state().standby_io, Some(100));
        c.finish(at(20), &mut Vec::new());
        let st = c.into_state();
        let (cfg, family) = sdb(disk, &r);
        let settings = Settings {
            power_check: Nanos::ZERO,
            dry_run: false,
            clock: Nanos::ZERO,
            poll: Nanos::from_secs(1),
            boot_id: Some(BOOT),
        };
        let mut d = with_state(&r, &cfg, family, st, settings);
        let ios = if moved { 107 } else { 100 };
        let outs = run(&mut d, &r, 30, 45, |_| ios);
        if moved {
            assert!(!d.in_standby());
            assert_eq!((d.state().spindowns, d.state().spinups), (1, 1));
            assert_eq!(d.state().standby_unix, None);
            // Quiet from the first poll: spun down at the timeout.
            assert_eq!(standby_orders(&outs), vec![35]);
        } else {
            assert!(d.in_standby());
            assert_eq!((d.state().spindowns, d.state().spinups), (1, 0));
            assert_eq!(standby_orders(&outs), Vec::<u64>::new());
        }
    }
}

/// A stop (or a reload that replaces the controller) while the drive
/// sleeps keeps the standby so far in the entry it leaves, as the saves
/// before it counted it: the state file's time in standby never goes back.
#[test]
fn a_stop_in_standby_keeps_the_standby_so_far() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    run(&mut c, &r, 0, 12, busy_then_quiet);
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    let saved = c.state_at(Nanos::from_secs(25)).standby_s;
    assert_eq!(saved, 15.0);
    c.finish(at(30), &mut Vec::new());
    assert_eq!(c.state_at(Nanos::from_secs(30)).standby_s, 20.0);
    let st = c.into_state();
    assert_eq!(st.standby_s, 20.0);
    assert_eq!(st.standby_unix, Some(UNIX0 + 10));
}

/// A self-trial: with the real loop's polls (a second apart and a few
/// microseconds late each time, on a wall clock read in whole seconds),
/// `lull status` read "power active for 3s" beside "idle for 4s": an
/// instant a poll ago was taken as −1.000005 s, floored to 2 s ago. The
/// instants are the nearest whole second now.
#[test]
fn instants_a_jittered_poll_ago_are_their_own_second() {
    let (mut c, r) = controller("network = \"timer(60s)\"\ntask = \"standby\"\n");
    for s in 0..20u64 {
        let n = s.min(10);
        let sample =
            Sample::new(parse(&format!("8 16 sdb {n} 0 {} 0 0 0 0 0 0 0 0\n", n * 8)).unwrap());
        let now = Now {
            mono: Nanos::from_secs(s) + Nanos::from_micros(5 * s),
            unix: UNIX0 + s,
        };
        let mut cx = Context {
            registry: &r,
            witness: &mut NoWitness,
        };
        c.on_poll(now, &sample, false, &mut cx, &mut Vec::new());
    }
    let st = c.state();
    assert_eq!(st.idle_since_unix, Some(UNIX0 + 10));
    assert_eq!(st.next_decision_unix, Some(UNIX0 + 70));
}

/// The idle period `lull status` shows begins where the engine's does,
/// at the poll whose requests completed last, not at the first quiet poll
/// a poll later: "idle for 7s; the network decides in 46s" added up to
/// 53 s under `timer(60s)` with a 7 s poll.
#[test]
fn the_idle_period_shown_and_the_next_decision_add_up_to_the_timeout() {
    let (mut c, r) = controller("network = \"timer(60s)\"\ntask = \"standby\"\n");
    // Reads until second 10; quiet after.
    let outs = run(&mut c, &r, 0, 30, |s| s.min(10));
    assert!(standby_orders(&outs).is_empty());
    let st = c.state();
    assert_eq!(st.idle_since_unix, Some(UNIX0 + 10));
    assert_eq!(st.next_decision_unix, Some(UNIX0 + 70));
    // The spin-down comes when the two said.
    let outs = run(&mut c, &r, 30, 80, |_| 10);
    assert_eq!(standby_orders(&outs), [70]);
}

/// The next decision the state shows while the disk is idle is the
/// engine's, second by second, also after a deadline passes and the network sets another: under
/// `auto` a trial's status read "nothing decided until I/O comes" (its
/// decision point, B/32 after idle start, long past) while the timeout it
/// spun the disk down at was pending.
#[test]
fn the_next_decision_shown_follows_the_network_past_a_deadline() {
    // The NAS drive: its decision point (B/32, 2.3 s) comes polls after
    // the idle period's start, where nothing else is written.
    let (mut c, r) = controller("network = \"auto\"\npreset = \"wd-red-plus\"\n");
    // Busy with a gap now and then, so `auto` has periods to learn
    // from, then quiet for long.
    let busy = |s: u64| if s < 120 { s - s / 7 } else { 120 };
    let mut moved = 0;
    let mut last = None;
    for s in 0..1200 {
        run(&mut c, &r, s, s + 1, busy);
        // As the daemon does after every poll.
        c.take_changes();
        // In Unix seconds, rounded down as `note_timing` rounds.
        let want = c
            .next_deadline_of_engine()
            .map(|d| UNIX0 + d.0 / 1_000_000_000);
        // While idle (busy, the status shows the disk busy and no
        // decision, and the busy polls are not written for it).
        if c.idle_since.is_some() {
            assert_eq!(c.state().next_decision_unix, want, "second {s}");
        }
        if want != last {
            moved += 1;
            last = want;
        }
    }
    assert!(moved > 2, "the engine's deadline moved {moved} times");
}

/// The session a controller's outputs logged, if any.
fn session_of(outs: &[(u64, Output)]) -> Option<lull_activity::Session> {
    outs.iter().find_map(|(_, o)| match o {
        Output::Activity(Record::Session(s)) => Some(s.clone()),
        _ => None,
    })
}

/// A clean stop while the disk is idle writes where it stood
/// (`idle_at_stop`), and the next run takes the idle period up only in
/// the same boot, under the same kernel name, with the disk's completed
/// I/O unchanged and nothing in flight; any other start is a baseline.
/// The entry is taken at the start, used or not.
#[test]
fn a_restart_takes_the_idle_period_up_only_when_nothing_touched_the_disk() {
    let r = crate::default_registry();
    let (cfg, family) = sdb(
        "network = \"timer(600s)\"\ntask = \"standby\"\nmax_spindowns_per_day = 1000\n",
        &r,
    );
    // Busy to second 5, then quiet: idle (the timer not fired) at 20.
    let mut a = fresh(&r, &cfg, family.clone(), Nanos::ZERO);
    run(&mut a, &r, 0, 20, |s| s.min(5) * 10);
    let mut out = Vec::new();
    a.finish(at(20), &mut out);
    let st = a.state().clone();
    let mark = st.idle_at_stop.clone().expect("idle at the stop");
    assert_eq!(
        (mark.boot_id.as_str(), mark.io, mark.kernel.as_str()),
        (format!("{BOOT:032x}").as_str(), 50, "sdb")
    );
    // Busy at the stop: nothing to take up.
    let mut busy = fresh(&r, &cfg, family.clone(), Nanos::ZERO);
    run(&mut busy, &r, 0, 20, |s| s * 10);
    busy.finish(at(20), &mut Vec::new());
    assert_eq!(busy.state().idle_at_stop, None);

    let settings = |boot| Settings {
        power_check: Nanos::ZERO,
        dry_run: false,
        clock: Nanos::from_secs(100),
        poll: Nanos::from_secs(1),
        boot_id: boot,
    };
    let diskstats = |ios: u64, in_flight: u64| {
        move |_| format!("8 16 sdb {ios} 0 {} 0 0 0 0 0 {in_flight} 0 0\n", ios * 8)
    };
    // (boot, the disk's I/O at the new run's first poll, in flight): continues?
    for (boot, ios, in_flight, continues) in [
        (Some(BOOT), 50, 0, true),
        (Some(BOOT + 1), 50, 0, false),
        (None, 50, 0, false),
        (Some(BOOT), 51, 0, false),
        (Some(BOOT), 50, 1, false),
    ] {
        let mut b = with_state(&r, &cfg, family.clone(), st.clone(), settings(boot));
        // Taken at the start: no later save keeps it.
        assert_eq!(b.state().idle_at_stop, None);
        let outs = drive(&mut b, &r, 0, 3, diskstats(ios, in_flight));
        let case = format!("{boot:?} {ios} {in_flight}");
        let s = session_of(&outs).expect("a session at the first poll");
        assert_eq!(s.continues, continues, "{case}");
        let baseline = outs.iter().any(|(_, o)| {
            matches!(o, Output::Activity(Record::Poll(p)) if p.kind == lull_activity::PollKind::Baseline)
        });
        assert_eq!(baseline, !continues, "{case}");
        // Idle from its first poll either way (a baseline is a request
        // just completed; a continued run is idle from its takeover).
        assert_eq!(b.state().idle_at_stop, None, "{case}");
    }
    // Under another kernel name (the drive came back as sdc): a baseline.
    let moved = Family {
        disk: "sdc".into(),
        ..family.clone()
    };
    let mut c = DiskController::new(
        &r,
        &cfg,
        "sdb",
        "sdc",
        moved,
        1,
        st.clone(),
        settings(Some(BOOT)),
        Nanos::ZERO,
    )
    .unwrap();
    let outs = drive(&mut c, &r, 0, 3, |_| {
        "8 32 sdc 50 0 400 0 0 0 0 0 0 0 0\n".into()
    });
    assert!(!session_of(&outs).unwrap().continues);
}
