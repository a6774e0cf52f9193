//! `lull daemon` on real block devices: loop devices with `dd` traffic.
//! Needs root and loop devices; without them each test is ignored, saying
//! why (build.rs probes for them).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LULL: &str = env!("CARGO_BIN_EXE_lull");

#[path = "../crates/live/tests/support/mod.rs"]
mod support;

use support::{Daemon, Traffic, loops, sample, state};

/// Starts `lull daemon --config CONFIG`, logging to `CONFIG.log`.
fn start(config: &Path) -> Daemon {
    let mut cmd = Command::new(LULL);
    cmd.args(["daemon", "--config"]).arg(config);
    Daemon::spawn(cmd, config.with_extension("log"), &[])
}

/// Waits until `f` holds (failing with the daemon's log after `timeout`);
/// returns how long it took.
fn wait_for(what: &str, timeout: Duration, f: impl FnMut() -> bool, d: &Daemon) -> Duration {
    let t = Instant::now();
    support::wait_for(what, timeout, f, || d.log());
    t.elapsed()
}

fn proc_state(pid: u64) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

fn config(dir: &Path, disks: &str) -> (PathBuf, PathBuf) {
    let cfg = dir.join("lull.toml");
    let st = dir.join("state.json");
    std::fs::write(
        &cfg,
        format!("state_file = {st:?}\npoll = \"100ms\"\nstate_interval = \"1s\"\n\n{disks}"),
    )
    .unwrap();
    (cfg, st)
}

const SKIP: &str = "needs root and loop devices";

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn the_command_runs_in_idle_time_and_pauses_on_io() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let disk = &devs[0];
    let (cfg, st) = config(
        dir.path(),
        &format!(
            "[[disk]]\ndevice = {:?}\nnetwork = \"timer(2s)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1000\"]\n",
            disk.dev
        ),
    );
    let key = disk.dev.as_str();
    let io = Traffic::new(&disk.dev);
    io.set(true);
    let mut d = start(&cfg);

    // I/O flows for 4 s: no action.
    std::thread::sleep(Duration::from_secs(4));
    assert!(d.alive(), "{}", d.log());
    let s = state(&st);
    assert_eq!(s[key]["task_starts"].as_u64(), Some(0), "{s}\n{}", d.log());
    assert!(!d.log().contains("command started"), "{}", d.log());

    // I/O stops: the command starts about 2 s later.
    io.set(false);
    let took = wait_for(
        "the command to start",
        Duration::from_secs(15),
        || state(&st)[key]["command_pid"].as_u64().is_some(),
        &d,
    );
    assert!(
        took >= Duration::from_millis(1500) && took <= Duration::from_secs(6),
        "started {took:?} after the I/O stopped\n{}",
        d.log()
    );
    let pid = state(&st)[key]["command_pid"].as_u64().unwrap();
    assert_eq!(proc_state(pid), Some('S'));

    // New I/O: paused.
    io.set(true);
    wait_for(
        "SIGSTOP",
        Duration::from_secs(10),
        || proc_state(pid) == Some('T'),
        &d,
    );
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(proc_state(pid), Some('T'), "stays paused while I/O flows");

    // Quiet again: resumed in the next idle period.
    io.set(false);
    let took = wait_for(
        "SIGCONT",
        Duration::from_secs(15),
        || proc_state(pid) == Some('S'),
        &d,
    );
    assert!(
        took >= Duration::from_millis(1500),
        "resumed after {took:?}"
    );

    // SIGTERM: the command is stopped cleanly, the state saved.
    assert!(d.stop().success(), "{}", d.log());
    assert_eq!(proc_state(pid), None, "the command was terminated");
    let s = state(&st);
    let n = |k: &str| s[key][k].as_u64().unwrap_or(u64::MAX);
    assert_eq!(n("task_starts"), 2, "{s}");
    assert_eq!(n("task_stops"), 1, "{s}");
    // Stopped by the daemon: not a run to its end.
    assert_eq!(n("command_exits"), 0, "{s}");
    assert_eq!(s[key]["command_pid"], serde_json::Value::Null, "{s}");
    assert!(n("idle_starts") >= 2, "{s}");
    assert_eq!(n("spindowns"), 0, "{s}");
    assert_eq!(s[key]["kernel_name"], disk.name());
    assert!(
        s[key]["last_decision"]
            .as_str()
            .unwrap()
            .contains("command stopped by the daemon"),
        "{s}"
    );
}

fn standby_error_test(backend: &str, expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 2) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let (a, b) = (&devs[0], &devs[1]);
    let (cfg, st) = config(
        dir.path(),
        &format!(
            "[[disk]]\ndevice = {:?}\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"{backend}\"\n\n\
             [[disk]]\ndevice = {:?}\nnetwork = \"timer(300ms)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1000\"]\n",
            a.name(),
            b.name()
        ),
    );
    let mut d = start(&cfg);
    wait_for(
        "the standby error",
        Duration::from_secs(20),
        || state(&st)[a.name()]["errors"].as_u64().unwrap_or(0) >= 1,
        &d,
    );
    let s = state(&st);
    let why = s[a.name()]["last_decision"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(why.starts_with("error: standby failed"), "{s}");
    assert!(why.contains(&a.dev) && why.contains(expect), "{why}");
    assert_eq!(s[a.name()]["spindowns"].as_u64(), Some(0));
    assert!(
        d.log()
            .contains(&format!("disk {}: standby failed", a.name())),
        "{}",
        d.log()
    );
    // The other disk is served.
    wait_for(
        "the other disk's command",
        Duration::from_secs(20),
        || state(&st)[b.name()]["command_pid"].as_u64().is_some(),
        &d,
    );
    assert!(d.alive());
    assert!(d.stop().success());
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
#[cfg_attr(
    all(has_loop, not(has_hdparm)),
    ignore = "needs hdparm (apt-get install hdparm)"
)]
fn hdparm_standby_on_a_loop_device_is_a_per_disk_error() {
    if ![
        "/usr/sbin/hdparm",
        "/sbin/hdparm",
        "/usr/bin/hdparm",
        "/bin/hdparm",
    ]
    .iter()
    .any(|p| Path::new(p).exists())
    {
        lull_testkit::skip("hdparm is not installed");
        return;
    }
    standby_error_test("hdparm", "hdparm -y");
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn sgio_standby_on_a_loop_device_is_a_per_disk_error() {
    standby_error_test("sgio", "SG_IO");
}

/// Unmounts when dropped (before the loop device is detached).
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
#[cfg_attr(
    all(has_loop, not(has_mkfs_ext4)),
    ignore = "needs mkfs.ext4, mount and umount"
)]
fn flush_syncs_the_mounted_file_system_once_per_idle_period() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let disk = &devs[0];
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
        .arg(&disk.dev)
        .status();
    if !mkfs.is_ok_and(|s| s.success())
        || !Command::new("mount")
            .arg(&disk.dev)
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success())
    {
        lull_testkit::skip("needs mkfs.ext4 and mount");
        return;
    }
    let _mount = Mount(mnt.clone());
    let (cfg, st) = config(
        dir.path(),
        &format!(
            "[[disk]]\ndevice = {:?}\nnetwork = \"timer(500ms)\"\ntask = \"flush\"\n",
            disk.name()
        ),
    );
    let key = disk.name();
    let mut d = start(&cfg);
    // Dirty data in the page cache; no disk I/O until someone syncs.
    std::fs::write(mnt.join("data"), vec![7u8; 1 << 20]).unwrap();
    wait_for(
        "the flush",
        Duration::from_secs(15),
        || {
            state(&st)[key]["last_decision"]
                .as_str()
                .is_some_and(|s| s.starts_with("flush done (1 file system"))
        },
        &d,
    );
    assert!(
        d.log().contains(&format!("flushed {}", mnt.display())),
        "{}",
        d.log()
    );
    // The flush's own writes are not foreground I/O: no second flush while
    // the disk stays quiet.
    std::thread::sleep(Duration::from_secs(3));
    let s = state(&st);
    assert_eq!(s[key]["task_starts"].as_u64(), Some(1), "{s}\n{}", d.log());
    assert_eq!(s[key]["task_stops"].as_u64(), Some(0), "{s}");
    assert!(d.stop().success());
}

/// The size of `path` (0 while it does not exist).
fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The value of the sample `series` in the metrics text `text`.
/// A `[[disk.job]]` table running `script` under `/bin/sh -c`.
fn job_toml(name: &str, script: &str, reserve: &str) -> String {
    format!(
        "[[disk.job]]\nname = {name:?}\ncommand = [\"/bin/sh\", \"-c\", {script:?}]\nreserve = {reserve:?}\n"
    )
}

/// A script that appends a line to `out` ten times a second until killed.
/// It ignores SIGHUP, which the kernel sends a stopped process group
/// orphaned by a killed daemon: it would outlive the daemon.
fn writing_loop(out: &Path) -> String {
    format!(
        "trap '' HUP; while :; do echo x >> {}; sleep 0.1; done",
        out.display()
    )
}

/// The configuration (and state file) of a `jobs` disk `dev` under
/// `timer(1s)` with `jobs` (`job_toml` tables), and its metrics textfile.
fn jobs_disk(dir: &Path, dev: &str, jobs: &[String]) -> (PathBuf, PathBuf, PathBuf) {
    let prom = dir.join("lull.prom");
    let (cfg, st) = config(
        dir,
        &format!(
            "[metrics]\ntextfile = {prom:?}\n[[disk]]\ndevice = {dev:?}\nnetwork = \"timer(1s)\"\ntask = \"jobs\"\n{}",
            jobs.concat()
        ),
    );
    (cfg, st, prom)
}

/// Job `job`'s sample of metric `name` for disk `key` in the textfile.
fn job_metric(prom: &Path, key: &str, name: &str, job: &str) -> Option<f64> {
    let text = std::fs::read_to_string(prom).unwrap_or_default();
    sample(&text, &format!("{name}{{disk=\"{key}\",job=\"{job}\"}}"))
}

// Issue 19: two command jobs with reservations share one disk's idle time;
// a third that does not fit the assumed capacity is refused.
#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn two_reserved_jobs_share_a_loop_disks_idle_time() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let disk = &devs[0];
    let out = |n: &str| dir.path().join(format!("{n}.out"));
    let job = |n: &str, reserve: &str| job_toml(n, &writing_loop(&out(n)), reserve);
    let (cfg, st, prom) = jobs_disk(
        dir.path(),
        &disk.dev,
        &[
            job("a", "3s/hour"),
            job("b", "3s/hour"),
            job("c", "50m/hour"),
        ],
    );
    let key = disk.dev.as_str();
    let metric = |name: &str, job: &str| job_metric(&prom, key, name, job);
    let io = Traffic::new(&disk.dev);
    io.set(true);
    let d = start(&cfg);

    // Admission at start: c (50 min an hour) does not fit beside a and b
    // in the assumed 30 min of idle time an hour.
    wait_for(
        "the admission decisions in the metrics",
        Duration::from_secs(10),
        || metric("lull_job_admitted", "c").is_some(),
        &d,
    );
    assert_eq!(metric("lull_job_admitted", "a"), Some(1.0), "{}", d.log());
    assert_eq!(metric("lull_job_admitted", "b"), Some(1.0), "{}", d.log());
    assert_eq!(metric("lull_job_admitted", "c"), Some(0.0), "{}", d.log());
    assert!(d.log().contains("job c refused"), "{}", d.log());

    // Busy: no job runs.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(size(&out("a")) + size(&out("b")), 0, "{}", d.log());

    // Idle: a (first admitted, same deadline as b) runs first.
    io.set(false);
    wait_for(
        "job a to run",
        Duration::from_secs(15),
        || size(&out("a")) > 0,
        &d,
    );
    assert_eq!(size(&out("b")), 0, "b waits for a: {}", d.log());

    // Busy again before a got its 3 s: a is paused.
    io.set(true);
    wait_for(
        "job a to pause",
        Duration::from_secs(10),
        || d.log().contains("job a: command paused"),
        &d,
    );
    let a_paused = size(&out("a"));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(size(&out("a")), a_paused, "a stays paused while I/O flows");

    // Idle again: b, now the furthest behind, runs, and a gets the rest of
    // its reservation (in either order: by lag).
    io.set(false);
    wait_for(
        "both jobs to run",
        Duration::from_secs(20),
        || size(&out("b")) > 0 && size(&out("a")) > a_paused,
        &d,
    );
    wait_for(
        "the metrics to show both jobs' idle time",
        Duration::from_secs(10),
        || {
            metric("lull_job_idle_seconds_total", "a").is_some_and(|s| s >= 2.5)
                && metric("lull_job_idle_seconds_total", "b").is_some_and(|s| s >= 2.5)
        },
        &d,
    );
    let a = metric("lull_job_idle_seconds_total", "a").unwrap();
    let b = metric("lull_job_idle_seconds_total", "b").unwrap();
    assert!(
        a <= 4.0 && b <= 4.0,
        "no more than the reservation: a {a} s, b {b} s"
    );
    assert_eq!(metric("lull_job_idle_seconds_total", "c"), Some(0.0));
    assert_eq!(metric("lull_job_deadlines_missed_total", "a"), Some(0.0));
    assert_eq!(size(&out("c")), 0, "the refused job never ran");

    // The paused commands are in the state file; after SIGKILL the next
    // daemon stops them before anything else, so they never run twice.
    let pid = |job: &str| state(&st)[key]["job_pids"][job]["pid"].as_u64();
    wait_for(
        "both jobs' pids in the state file",
        Duration::from_secs(10),
        || pid("a").is_some() && pid("b").is_some(),
        &d,
    );
    let (pa, pb) = (pid("a").unwrap(), pid("b").unwrap());
    assert_eq!((proc_state(pa), proc_state(pb)), (Some('T'), Some('T')));
    d.signal("-KILL");
    let mut d = start(&cfg);
    wait_for(
        "the old commands to be stopped",
        Duration::from_secs(20),
        || proc_state(pa).is_none() && proc_state(pb).is_none(),
        &d,
    );
    assert!(
        d.log().contains(&format!(
            "job a: command pid {pa} of a previous run still runs"
        )),
        "{}",
        d.log()
    );

    // SIGTERM stops the new daemon's commands too.
    io.set(false);
    wait_for(
        "a job to run again",
        Duration::from_secs(15),
        || d.log().contains("runs\n"),
        &d,
    );
    assert!(d.stop().success(), "{}", d.log());
    let (sa, sb) = (size(&out("a")), size(&out("b")));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!((size(&out("a")), size(&out("b"))), (sa, sb), "{}", d.log());
    assert!(state(&st)[key]["job_pids"].is_null(), "{}", state(&st));
}

/// A job whose command exits has done its work for its window: the next
/// job starts at once and gets the idle time, and the exited one is
/// credited only the time its command ran and is not started again in
/// its window. An `fstrim` job done in 10 ms was credited whole idle
/// periods while the scrub beside it never ran.
#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn a_job_that_exits_hands_the_idle_time_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip(SKIP);
        return;
    };
    let disk = &devs[0];
    let out = |n: &str| dir.path().join(format!("{n}.out"));
    // trim, the larger reservation, lags most and runs first.
    let trim = format!("echo x >> {}", out("trim").display());
    let (cfg, _st, prom) = jobs_disk(
        dir.path(),
        &disk.dev,
        &[
            job_toml("trim", &trim, "20m/hour:extra"),
            job_toml("scrub", &writing_loop(&out("scrub")), "5m/hour"),
        ],
    );
    let key = disk.dev.as_str();
    let metric = |name: &str, job: &str| job_metric(&prom, key, name, job);
    let io = Traffic::new(&disk.dev);
    io.set(true);
    let mut d = start(&cfg);
    std::thread::sleep(Duration::from_secs(2));
    io.set(false);
    wait_for(
        "scrub to run after trim exited",
        Duration::from_secs(15),
        || size(&out("scrub")) > 0,
        &d,
    );
    assert_eq!(size(&out("trim")), 2, "trim ran once: {}", d.log());
    // Idle on, then a short busy stretch and idle again: trim is done for
    // its hour, scrub keeps the idle time.
    std::thread::sleep(Duration::from_secs(3));
    io.set(true);
    std::thread::sleep(Duration::from_secs(2));
    io.set(false);
    std::thread::sleep(Duration::from_secs(4));
    wait_for(
        "the metrics to show scrub's idle time",
        Duration::from_secs(10),
        || metric("lull_job_idle_seconds_total", "scrub").is_some_and(|s| s >= 4.0),
        &d,
    );
    let log = d.log();
    assert_eq!(size(&out("trim")), 2, "trim is not started again: {log}");
    assert_eq!(log.matches("job trim: command started").count(), 1, "{log}");
    assert!(
        log.contains("job trim: command pid") && log.contains("its work for this window is done"),
        "{log}"
    );
    let trimmed = metric("lull_job_idle_seconds_total", "trim").unwrap();
    assert!(
        trimmed < 1.0,
        "trim credited {trimmed} s for a command that exited at once"
    );
    assert!(d.stop().success());
}
