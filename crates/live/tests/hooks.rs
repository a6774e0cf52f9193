//! `lulld`'s event hooks on loop devices (issue 20, item 1): a hook runs
//! on each spin-down attempt and each wake with the event in its
//! environment; a hook that hangs is killed at `hook_timeout` while the
//! daemon keeps deciding on time; after a standby (a stand-in for
//! `hdparm` that reports success, since a loop device never sleeps) a
//! write runs `on_spinup` and `on_wake` with the time spent asleep. Needs
//! root and loop devices; without them those tests are ignored, saying
//! why (build.rs probes for them).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");

mod support;

use support::{Daemon, Traffic, loops, sample, state, wait_for};

const SKIP: &str = "needs root and loop devices";

fn start(config: &Path) -> Daemon {
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(config);
    Daemon::spawn(cmd, config.with_extension("log"), &[])
}

/// A root-owned executable script `dir/name` (mode 0755).
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A recording hook in `dir`: each run writes its LULL_* environment to
/// its own file in `dir/out`, named so that the files sort in the order
/// the hooks ran. Returns that directory and the hook's argv as TOML.
fn recorder(dir: &Path) -> (PathBuf, String) {
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    let hook = script(
        dir,
        "record.sh",
        "f=\"$1/$(date +%s%N).$$\"\nenv | grep '^LULL_' > \"$f.tmp\"\nmv \"$f.tmp\" \"$f.env\"\n",
    );
    let argv = format!("[{:?}, {:?}]", hook, out);
    (out, argv)
}

/// The environments the recording hook wrote to `out`, by event, in the
/// order they ran.
fn runs(out: &Path) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "env"))
        .collect();
    files.sort();
    let mut by = BTreeMap::<String, Vec<BTreeMap<String, String>>>::new();
    for f in files {
        let env: BTreeMap<String, String> = std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        by.entry(env.get("LULL_EVENT").cloned().unwrap_or_default())
            .or_default()
            .push(env);
    }
    by
}

/// Writes `dir/lull.toml`: `top` keys, a metrics textfile, then `disks`;
/// returns the config, state file and textfile paths.
fn config(dir: &Path, top: &str, disks: &str) -> (PathBuf, PathBuf, PathBuf) {
    let cfg = dir.join("lull.toml");
    let st = dir.join("state.json");
    let prom = dir.join("lull.prom");
    let text = format!(
        "state_file = {st:?}\npoll = \"100ms\"\nstate_interval = \"1s\"\n{top}\n[metrics]\ntextfile = {prom:?}\n\n{disks}"
    );
    std::fs::write(&cfg, text).unwrap();
    (cfg, st, prom)
}

fn count(out: &Path, event: &str) -> usize {
    runs(out).get(event).map_or(0, Vec::len)
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn hooks_run_on_each_spindown_attempt_and_each_wake_with_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let disk = &devs[0];
    let (out, argv) = recorder(dir.path());
    let (cfg, st, prom) = config(
        dir.path(),
        &format!("hook_timeout = \"5s\"\non_spindown = {argv}\non_wake = {argv}\n"),
        &format!(
            "[[disk]]\ndevice = {:?}\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"sgio\"\n\
             on_task_start = {argv}\non_task_stop = {argv}\n",
            disk.name()
        ),
    );
    let key = disk.name();
    let io = Traffic::new(&disk.dev);
    io.set(true);
    let mut d = start(&cfg);
    std::thread::sleep(Duration::from_secs(1));
    for cycle in 1..=2usize {
        // Quiet: the standby attempt fails on a loop device; on_spindown
        // runs for it.
        io.set(false);
        wait_for(
            &format!("spin-down attempt {cycle}"),
            Duration::from_secs(20),
            || count(&out, "spindown") >= cycle,
            || d.log(),
        );
        // Busy again: the idle period the task used ends, on_wake runs.
        io.set(true);
        wait_for(
            &format!("wake {cycle}"),
            Duration::from_secs(20),
            || count(&out, "wake") >= cycle && count(&out, "task_stop") >= cycle,
            || d.log(),
        );
    }
    // Stopped while busy: no attempt after the last; the state and the
    // metrics are written at the stop.
    assert!(d.stop().success(), "{}", d.log());
    let r = runs(&out);
    let errors = state(&st)[key]["errors"].as_u64().unwrap();
    // One on_spindown per attempt: every attempt failed.
    assert_eq!(r["spindown"].len() as u64, errors, "{r:?}\n{}", d.log());
    for e in &r["spindown"] {
        assert_eq!(e["LULL_DISK"], key, "{e:?}");
        assert_eq!(e["LULL_DEVICE"], disk.dev, "{e:?}");
        assert_eq!(e["LULL_TASK"], "standby", "{e:?}");
        assert_eq!(e["LULL_RESULT"], "failed", "{e:?}");
        assert!(e["LULL_ERROR"].contains("SG_IO"), "{e:?}");
        let idle: f64 = e["LULL_IDLE_S"].parse().unwrap();
        // Counted from the engine's idle start, as the timer is: at
        // least its 300 ms (to the hook's millisecond).
        assert!(
            idle >= 0.299,
            "timer(300ms): idle {idle} s at the attempt, {e:?}"
        );
        assert!(!e.contains_key("LULL_STANDBY_S"), "never in standby: {e:?}");
    }
    assert!(r["wake"].len() >= 2, "{r:?}");
    for e in &r["wake"] {
        assert_eq!(e["LULL_DISK"], key, "{e:?}");
        let idle: f64 = e["LULL_IDLE_S"].parse().unwrap();
        assert!(idle >= 0.2, "the idle period lasted past the timer: {e:?}");
        // Never spun down: no standby time, nobody to blame.
        assert!(
            !e.contains_key("LULL_STANDBY_S") && !e.contains_key("LULL_WOKEN_BY"),
            "{e:?}"
        );
    }
    for e in &r["task_stop"] {
        let idle: f64 = e["LULL_IDLE_S"].parse().unwrap();
        assert!(idle >= 0.2, "stopped by I/O after the idle period: {e:?}");
    }
    // The disk's own hooks, and the global ones it does not override.
    assert_eq!(r["task_start"].len(), r["spindown"].len(), "{r:?}");
    assert!(r["task_start"][0].contains_key("LULL_UNIX_TIME"));
    assert!(!r.contains_key("spinup"), "{r:?}");
    // Counted in the metrics.
    let t = std::fs::read_to_string(&prom).unwrap();
    for ev in ["spindown", "wake", "task_start", "task_stop"] {
        assert_eq!(
            sample(
                &t,
                &format!("lull_hook_runs_total{{disk=\"{key}\",event=\"{ev}\"}}")
            ),
            Some(r[ev].len() as f64),
            "{t}"
        );
    }
    assert_eq!(
        sample(
            &t,
            &format!("lull_hook_failures_total{{disk=\"{key}\",event=\"spindown\"}}")
        ),
        Some(0.0),
        "{t}"
    );
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn a_hung_hook_is_killed_at_its_timeout_and_decisions_stay_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let disk = &devs[0];
    let pidfile = dir.path().join("hook.pid");
    // Ignores SIGTERM: only SIGKILL ends it.
    let hook = script(
        dir.path(),
        "hang.sh",
        "trap '' TERM\necho $$ > \"$1\"\nwhile :; do sleep 1; done\n",
    );
    let (cfg, st, prom) = config(
        dir.path(),
        "hook_timeout = \"6s\"\n",
        &format!(
            "[[disk]]\ndevice = {:?}\nnetwork = \"timer(2s)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1000\"]\n\
             on_task_start = [{hook:?}, {pidfile:?}]\n",
            disk.dev
        ),
    );
    let key = disk.dev.as_str();
    let io = Traffic::new(&disk.dev);
    io.set(true);
    let mut d = start(&cfg);
    std::thread::sleep(Duration::from_secs(1));
    let starts = || state(&st)[key]["task_starts"].as_u64().unwrap_or(0);

    // First idle period: the command starts, the hook hangs.
    io.set(false);
    let quiet = Instant::now();
    wait_for(
        "the first start",
        Duration::from_secs(15),
        || starts() >= 1,
        || d.log(),
    );
    let took = quiet.elapsed();
    assert!(took >= Duration::from_millis(1500), "{took:?}");
    wait_for(
        "the hook",
        Duration::from_secs(5),
        || std::fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n')),
        || d.log(),
    );
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();

    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| !s.rsplit_once(") ").is_some_and(|r| r.1.starts_with('Z')))
    };
    // Busy, then quiet again while the hook still hangs: the next start is
    // decided about 2 s after the I/O stops, as the first was.
    io.set(true);
    wait_for(
        "the stop",
        Duration::from_secs(10),
        || state(&st)[key]["task_stops"].as_u64().unwrap_or(0) >= 1,
        || d.log(),
    );
    io.set(false);
    let quiet = Instant::now();
    wait_for(
        "the second start",
        Duration::from_secs(15),
        || starts() >= 2,
        || d.log(),
    );
    let took = quiet.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took <= Duration::from_secs(5),
        "second start {took:?} after the I/O stopped\n{}",
        d.log()
    );
    // …while the first hook still hangs.
    assert!(
        alive(pid),
        "the hook ended before the second start\n{}",
        d.log()
    );

    // The first hook is killed (SIGTERM ignored, then SIGKILL) and that is
    // logged and counted.
    wait_for(
        "the hook's timeout",
        Duration::from_secs(20),
        || d.log().contains("hook on_task_start") && d.log().contains("SIGKILL after"),
        || d.log(),
    );
    wait_for(
        "the hook to be gone",
        Duration::from_secs(5),
        || !alive(pid),
        || d.log(),
    );
    let series = format!("lull_hook_failures_total{{disk=\"{key}\",event=\"task_start\"}}");
    wait_for(
        "the failure metric",
        Duration::from_secs(10),
        || {
            let t = std::fs::read_to_string(&prom).unwrap_or_default();
            sample(&t, &series).is_some_and(|n| n >= 1.0)
        },
        || std::fs::read_to_string(&prom).unwrap_or_default(),
    );
    assert!(d.alive());
    // The second start's hook hangs too (it wrote its pid over the
    // first's): the daemon's stop ends it at its timeout, 6 s from its
    // start, rather than leave it behind.
    let second: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ne!(second, pid);
    assert!(alive(second), "{}", d.log());
    assert!(d.stop().success(), "{}", d.log());
    assert!(
        !alive(second),
        "hook {second} outlived the daemon\n{}",
        d.log()
    );
    assert_eq!(
        d.log().matches("timed out after 6s").count(),
        2,
        "{}",
        d.log()
    );
}

/// `lulld --check` on a config of `top` and `disks` in `dir`: its exit
/// code and stderr.
fn check(dir: &Path, top: &str, disks: &str) -> (Option<i32>, String) {
    let (cfg, _, _) = config(dir, top, disks);
    let out = Command::new(LULLD)
        .arg("--config")
        .arg(&cfg)
        .arg("--check")
        .env_remove("LULL_LOG")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A `[[disk]]` table for `sdz` with `keys`.
fn sdz(keys: &str) -> String {
    format!("[[disk]]\ndevice = \"sdz\"\n{keys}")
}

#[test]
fn check_names_a_bad_hook_key() {
    let dir = tempfile::tempdir().unwrap();
    let hook = script(dir.path(), "hook.sh", "exit 0\n");
    let (code, _) = check(
        dir.path(),
        &format!("on_wake = [{hook:?}]\n"),
        &sdz(&format!("on_spindown = [{hook:?}, \"x\"]\n")),
    );
    assert_eq!(code, Some(0));
    let (code, err) = check(dir.path(), "", &sdz(&format!("on_spindwn = [{hook:?}]\n")));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("disk[0].on_spindwn"), "{err}");
    let (code, err) = check(dir.path(), "on_spinup = [\"hook.sh\"]\n", &sdz(""));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("key `on_spinup`") && err.contains("absolute"),
        "{err}"
    );
}

/// Only root refuses a hook that others can change (a user's daemon runs
/// what that user may change anyway).
#[test]
#[cfg_attr(not(has_root), ignore = "needs root")]
fn check_refuses_a_hook_others_can_write() {
    if !support::is_root() {
        lull_testkit::skip("needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let hook = script(dir.path(), "hook.sh", "exit 0\n");
    let (code, err) = check(
        dir.path(),
        "",
        &sdz(&format!("on_task_stop = [{hook:?}]\n")),
    );
    assert_eq!(code, Some(0), "{err}");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, err) = check(
        dir.path(),
        "",
        &sdz(&format!("on_task_stop = [{hook:?}]\n")),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("key `disk[0].on_task_stop`") && err.contains("writable"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn after_a_standby_a_write_runs_on_spinup_and_on_wake_with_the_standby_time() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let disk = &devs[0];
    let (out, argv) = recorder(dir.path());
    // A loop device cannot sleep: a stand-in for hdparm (the config's
    // `hdparm` key) says the standby worked, so the daemon believes the
    // disk asleep until I/O reaches it.
    let fake = script(
        dir.path(),
        "hdparm",
        "case \"$1\" in\n-y) echo \" issuing standby command\" ;;\n-C) echo \" drive state is:  standby\" ;;\nesac\nexit 0\n",
    );
    let (cfg, _st, prom) = config(
        dir.path(),
        &format!(
            "hdparm = {fake:?}\nhook_timeout = \"5s\"\non_spindown = {argv}\non_spinup = {argv}\non_wake = {argv}\n"
        ),
        &format!(
            "[[disk]]\ndevice = {:?}\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\n",
            disk.name()
        ),
    );
    let key = disk.name();
    let io = Traffic::new(&disk.dev);
    io.set(true);
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(&cfg);
    let mut d = Daemon::spawn(cmd, cfg.with_extension("log"), &[]);
    std::thread::sleep(Duration::from_secs(1));
    io.set(false);
    wait_for(
        "a spin-down",
        Duration::from_secs(20),
        || count(&out, "spindown") >= 1,
        || d.log(),
    );
    // Asleep for a while, then a write.
    std::thread::sleep(Duration::from_millis(1500));
    let woke = std::time::SystemTime::now();
    io.set(true);
    wait_for(
        "the spin-up and the wake",
        Duration::from_secs(20),
        || count(&out, "spinup") >= 1 && count(&out, "wake") >= 1,
        || d.log(),
    );
    io.set(false);
    assert!(d.stop().success(), "{}", d.log());
    let r = runs(&out);
    let down = &r["spindown"][0];
    assert_eq!(down["LULL_RESULT"], "ok", "{down:?}\n{}", d.log());
    assert_eq!(down["LULL_DISK"], key, "{down:?}");
    for ev in ["spinup", "wake"] {
        let e = &r[ev][0];
        assert_eq!(e["LULL_DISK"], key, "{ev}: {e:?}");
        let standby: f64 = e["LULL_STANDBY_S"]
            .parse()
            .unwrap_or_else(|_| panic!("{ev}: {e:?}"));
        assert!(
            (1.0..20.0).contains(&standby),
            "{ev}: asleep ~1.5 s before the write, LULL_STANDBY_S {standby}: {e:?}"
        );
        let at: u64 = e["LULL_UNIX_TIME"].parse().unwrap();
        let woke_s = woke
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(
            at + 1 >= woke_s,
            "{ev} at {at}, the write at {woke_s}: {e:?}"
        );
    }
    let t = std::fs::read_to_string(&prom).unwrap();
    assert!(
        sample(
            &t,
            &format!("lull_hook_runs_total{{disk=\"{key}\",event=\"spinup\"}}")
        ) >= Some(1.0),
        "{t}"
    );
}
