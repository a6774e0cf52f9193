//! Issue 27 end to end: the daemon records each disk's activity next to
//! its state file; the log replays (`lull replay`'s library path) to the
//! daemon's own spin-downs and to the shadow figures it saved, across a
//! `kill -9` and a restart; damage, an unwritable directory and
//! `activity_log = false` behave as documented.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lull_activity::{Log, Record};
use lull_blktrace_replay::replay::{ReplayOptions, Timing};
use lull_core::actuator::Command as Act;
use lull_core::engine::LogEntry;
use lull_core::event::Timeline;
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;

#[path = "../crates/live/tests/support/mod.rs"]
mod support;

use support::{Daemon, Setup, line, state, wait_for, write};

const LULL: &str = env!("CARGO_BIN_EXE_lull");
const A: &str = "lullaa";

fn start(s: &Setup) -> Daemon {
    let mut cmd = Command::new(LULL);
    cmd.args(["daemon", "--config"]).arg(&s.config);
    let n = std::fs::read_dir(s.dir.path()).unwrap().count();
    Daemon::spawn(cmd, s.dir.path().join(format!("lulld-{n}.log")), &[])
}

/// A standby disk on a 1 s timer with an `hdparm` stand-in that succeeds.
fn setup(top: &str) -> Setup {
    setup_with(top, "timer(1s)")
}

/// [`setup`] with another network.
fn setup_with(top: &str, network: &str) -> Setup {
    let disks = format!(
        "[[disk]]\ndevice = \"{A}\"\nnetwork = \"{network}\"\ntask = \"standby\"\nbackend = \"hdparm\"\n\
         max_spindowns_per_day = 1000\npreset = \"paper-2.5in\"\n"
    );
    let s = Setup::with_top(&disks, &line(A, 0, 1), top);
    s.hdparm_stand_in();
    s
}

/// `secs` of I/O, ten diskstats updates a second.
fn busy(s: &Setup, ios: &mut u64, secs: u64) {
    for _ in 0..secs * 10 {
        *ios += 3;
        write(&s.diskstats, &line(A, 0, *ios));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts the daemon and gives it two bursts, each followed by the
/// spin-down after it.
fn start_to_two_standbys(s: &Setup, ios: &mut u64) -> Daemon {
    let d = start(s);
    busy(s, ios, 1);
    wait_standbys(&d, 1);
    busy(s, ios, 1);
    wait_standbys(&d, 2);
    d
}

/// Kills `d` (`kill -9`), starts the daemon again, gives it a burst and
/// the spin-down after it, another burst, and stops it cleanly.
fn kill_and_run_again(s: &Setup, mut d: Daemon, ios: &mut u64) {
    d.signal("-KILL");
    let _ = d.child.wait();
    let mut d = start(s);
    busy(s, ios, 1);
    wait_standbys(&d, 1);
    busy(s, ios, 1);
    assert!(d.stop().success(), "{}", d.log());
}

fn wait_standbys(d: &Daemon, n: usize) {
    wait_for(
        &format!("{n} standbys"),
        Duration::from_secs(20),
        || d.log().matches("in standby (").count() >= n,
        || d.log(),
    );
}

#[test]
fn the_log_replays_to_the_daemons_standbys_and_shadow_across_a_crash() {
    let s = setup("");
    let mut ios = 1;
    let d = start_to_two_standbys(&s, &mut ios);
    // kill -9: at most the last poll's records are lost.
    kill_and_run_again(&s, d, &mut ios);

    let dir = s.dir.path().join("activity").join(A);
    check_log_against_replay(&dir, &s.state, A, 2);

    // A torn last record (a write cut short) loses only that record.
    let last = lull_activity::read::segments(&dir).unwrap().pop().unwrap();
    let bytes = std::fs::read(&last).unwrap();
    let torn = s.dir.path().join("torn.lact");
    std::fs::write(&torn, &bytes[..bytes.len() - 3]).unwrap();
    let t = Log::open(&torn).unwrap();
    assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    assert!(t.warnings[0].contains("torn.lact") && t.warnings[0].contains("offset"));
    assert_eq!(
        t.records().count() + 1,
        Log::open(&last).unwrap().records().count()
    );
}

/// A network that learns (`share()`), killed while it had learned from an
/// idle period its last state write may not hold: the restarted daemon
/// resumes from the state file, the log names that write, and the replay
/// of the log resumes from the same state and spins down where the daemon
/// did on both sides of the crash.
#[test]
fn after_a_crash_the_replay_resumes_from_the_learned_state_the_daemon_resumed_from() {
    let s = setup_with("", "share()");
    let mut ios = 1;
    let d = start_to_two_standbys(&s, &mut ios);
    // Two short idle periods, learned, and a kill at once: the last may
    // not have reached the state file (written at most once a second).
    busy(&s, &mut ios, 1);
    std::thread::sleep(Duration::from_millis(500));
    busy(&s, &mut ios, 1);
    std::thread::sleep(Duration::from_millis(500));
    ios += 3;
    write(&s.diskstats, &line(A, 0, ios));
    std::thread::sleep(Duration::from_millis(150));
    kill_and_run_again(&s, d, &mut ios);

    let dir = s.dir.path().join("activity").join(A);
    let log = Log::open(&dir).unwrap();
    let rebuilt = log.rebuild();
    assert_eq!(rebuilt.runs.len(), 2);
    assert!(!rebuilt.runs[1].clean, "the first run was killed");
    assert!(rebuilt.runs[0].saves_learned);
    assert!(
        !rebuilt.runs[0].saved.is_empty(),
        "the killed run named the learned states it wrote"
    );
    check_log_against_replay(&dir, &s.state, A, 2);
}

#[test]
fn an_unwritable_log_directory_is_reported_once_and_the_daemon_keeps_deciding() {
    let blocker = tempfile::NamedTempFile::new().unwrap();
    let top = format!("activity_dir = {:?}\n", blocker.path().join("sub"));
    let s = setup(&top);
    // `--check` warns of it, and accepts the file.
    let check = Command::new(LULL)
        .args(["daemon", "--check", "--config"])
        .arg(&s.config)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stderr).into_owned()
        + &String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{said}");
    assert!(
        said.contains("activity_dir") && said.contains("without its activity logs"),
        "{said}"
    );
    let mut ios = 1;
    let mut d = start(&s);
    for n in 1..=3 {
        busy(&s, &mut ios, 1);
        wait_standbys(&d, n);
    }
    assert!(d.stop().success(), "{}", d.log());
    let log = d.log();
    assert_eq!(log.matches("cannot start a segment").count(), 1, "{log}");
    assert!(log.contains("the daemon goes on without it"), "{log}");
}

#[test]
fn activity_log_false_records_nothing() {
    let s = setup("activity_log = false\n");
    let mut ios = 1;
    let mut d = start(&s);
    busy(&s, &mut ios, 1);
    wait_standbys(&d, 1);
    assert!(d.stop().success(), "{}", d.log());
    assert!(!s.dir.path().join("activity").exists());
    // The shadow still runs, in memory, for status.
    assert!(state(&s.state)[A]["shadow"]["windows"].is_array());
}

/// The log in `dir` (of disk `key`, `runs` daemon runs, the last stopped
/// cleanly) replays with `lull replay`'s library path to the daemon's
/// standbys, and to the shadow figures saved in `state_file`.
fn check_log_against_replay(dir: &Path, state_file: &Path, key: &str, runs: usize) {
    let log = Log::open(dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    assert_eq!(log.runs.len(), runs, "daemon runs: {:?}", log.runs.len());
    let session = &log.runs[runs - 1].session;
    assert_eq!(
        (session.key.as_str(), session.task.as_str()),
        (key, "standby")
    );
    assert_eq!(session.drive, "paper-2.5in");
    assert_eq!(session.poll, Nanos::from_millis(100));
    assert!(
        matches!(log.runs[runs - 1].records.last(), Some(Record::End(_))),
        "a clean stop ends the log"
    );
    let rebuilt = log.rebuild();
    assert!(rebuilt.standbys.len() >= runs, "{:?}", rebuilt.standbys);
    assert!(rebuilt.failed.is_empty());

    // `lull replay --net <the disk's network>` on the log.
    let registry = lull_live::default_registry();
    let spec = NetworkSpec::parse(&session.network, Some(&registry)).unwrap();
    let opts = ReplayOptions {
        task: "spindown".into(),
        policy: None,
        device: Some(session.drive.clone()),
        timing: Timing::Auto,
        log: true,
        // The daemon's checks (its wear budget, its drive's break-even), as
        // `lull replay` of the log makes them.
        gate: lull_blktrace_replay::activity::daemon_gate(session),
        // Its references judged from its poll on, as the CLI does.
        reference_floor: session.poll,
        // The standbys its polls overtook skipped, as the daemon did.
        busy_polls: Some(std::sync::Arc::new(rebuilt.busy_polls.clone())),
        // And none where it withheld them (here: nowhere).
        daemon_standbys: Some(std::sync::Arc::new(rebuilt.daemon_standbys.clone())),
    };
    let timeline = Timeline::from_requests(&rebuilt.requests).with_clock(Some(rebuilt.clock));
    // With the daemon's restarts, as `lull replay` of the log makes them.
    let (outcome, restarts) = lull_blktrace_replay::replay::replay_spec_runs(
        &timeline,
        &spec,
        &registry,
        &opts,
        &rebuilt.runs,
    )
    .unwrap();
    assert_eq!(restarts as usize, runs - 1);
    let starts: Vec<Nanos> = outcome
        .log
        .iter()
        .filter_map(|e| match e {
            LogEntry::Command {
                at,
                command: Act::Start { .. },
            } if !rebuilt.busy_polls.overtakes(*at) => Some(*at),
            _ => None,
        })
        .collect();
    let horizon = rebuilt.requests.iter().map(|r| r.completion).max().unwrap();
    let within = |v: &[Nanos]| {
        v.iter()
            .copied()
            .filter(|&t| t <= horizon)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        within(&rebuilt.standbys),
        within(&starts),
        "the daemon's spin-downs are the replay's"
    );

    // The shadow the daemon saved at its stop (restored from the log after
    // the crash) is the replay's accounting of the same log.
    let st = state(state_file);
    let w = &st[key]["shadow"]["windows"][1];
    assert_eq!(w["window"], "7d", "{st}");
    let policy = |name: &str| {
        w["policies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["policy"] == name)
            .cloned()
            .unwrap()
    };
    let m = |name: &str| outcome.report.task_measure(name).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
    let (lull, oracle) = (policy("lull"), policy("oracle"));
    assert_eq!(lull["spinups"].as_f64().unwrap(), m("spinups"), "{w}");
    let saved = m("baseline_energy_j") - m("energy_j");
    assert!(
        close(lull["saved_wh"].as_f64().unwrap() * 3600.0, saved),
        "{w} vs {saved} J"
    );
    let oracle_saved = m("baseline_energy_j") - m("oracle_energy_j");
    assert!(
        close(oracle["saved_wh"].as_f64().unwrap() * 3600.0, oracle_saved),
        "{w} vs {oracle_saved} J"
    );
}

/// The same on a loop device: real kernel diskstats, real writes (root;
/// ignored, saying so, otherwise).
#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn on_a_loop_device_the_log_replays_to_the_daemons_standbys_and_shadow() {
    if !support::is_root() {
        lull_testkit::skip("needs root for a loop device");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(lo) = support::Loop::new(dir.path(), "img") else {
        lull_testkit::skip("no free loop device");
        return;
    };
    let hdparm = dir.path().join("hdparm");
    std::fs::write(&hdparm, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&hdparm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let state_file = dir.path().join("state.json");
    let config = dir.path().join("lull.toml");
    std::fs::write(
        &config,
        format!(
            "state_file = {state_file:?}\nhdparm = {hdparm:?}\npoll = \"100ms\"\nstate_interval = \"1s\"\n\
             [[disk]]\ndevice = \"{}\"\nnetwork = \"timer(1s)\"\ntask = \"standby\"\nbackend = \"hdparm\"\n\
             max_spindowns_per_day = 1000\npreset = \"paper-2.5in\"\n",
            lo.name()
        ),
    )
    .unwrap();
    let mut cmd = Command::new(LULL);
    cmd.args(["daemon", "--config"]).arg(&config);
    let mut d = Daemon::spawn(cmd, dir.path().join("lulld.log"), &[]);
    let traffic = support::Traffic::new(&lo.dev);
    for n in 1..=2 {
        traffic.set(true);
        std::thread::sleep(Duration::from_millis(800));
        traffic.set(false);
        wait_standbys(&d, n);
    }
    traffic.set(true);
    std::thread::sleep(Duration::from_millis(300));
    traffic.set(false);
    assert!(d.stop().success(), "{}", d.log());
    check_log_against_replay(
        &dir.path().join("activity").join(lo.name()),
        &state_file,
        lo.name(),
        1,
    );
}
