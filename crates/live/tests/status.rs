//! `lulld status` (the same code as `lull status`) against a running
//! daemon: on loop devices as root (ignored, saying so, otherwise), on fake
//! disks without root, and its errors when the daemon or config is wrong.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");

mod support;

use support::{Daemon, Setup, line, wait_for};

fn start(config: &Path) -> Daemon {
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(config);
    Daemon::spawn(cmd, config.with_extension("log"), &[])
}

/// `lulld status --config CONFIG ARGS…`.
fn status(config: &Path, args: &[&str]) -> Output {
    Command::new(LULLD)
        .arg("status")
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .unwrap()
}

/// `lulld status --format json` as JSON (`Null` if it failed).
fn status_json(config: &Path) -> serde_json::Value {
    let o = status(config, &["--format", "json"]);
    if !o.status.success() {
        return serde_json::Value::Null;
    }
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The entry of `disk` in a status.
fn disk<'a>(s: &'a serde_json::Value, disk: &str) -> &'a serde_json::Value {
    s["disks"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["disk"] == disk))
        .unwrap_or(&serde_json::Value::Null)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A loop device over a sparse file, detached when dropped.
struct Loop(String);

impl Loop {
    fn new(dir: &Path, name: &str) -> Option<Loop> {
        let img = dir.join(name);
        std::fs::File::create(&img).ok()?.set_len(16 << 20).ok()?;
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && dev.starts_with("/dev/loop")).then_some(Loop(dev))
    }
    fn name(&self) -> &str {
        self.0.trim_start_matches("/dev/")
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn status_shows_the_loop_disks_of_a_running_daemon() {
    if !nix::unistd::geteuid().is_root() {
        lull_testkit::skip("needs root (creates loop devices)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (Some(a), Some(b)) = (Loop::new(dir.path(), "a"), Loop::new(dir.path(), "b")) else {
        lull_testkit::skip("no loop devices (losetup -f failed)");
        return;
    };
    let port = free_port();
    let state = dir.path().join("state.json");
    let config = dir.path().join("lull.toml");
    // `a`: standby, which a loop device cannot do (an error per attempt);
    // `b`: flush under an adaptive timer (its timeout is a node gauge).
    std::fs::write(
        &config,
        format!(
            "state_file = {state:?}\npoll = \"100ms\"\nstate_interval = \"1s\"\n[metrics]\nlisten = \"127.0.0.1:{port}\"\n\n\
             [[disk]]\ndevice = {:?}\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"sgio\"\nmax_spindowns_per_day = 24\n\n\
             [[disk]]\ndevice = {:?}\nnetwork = \"adapt-timer-geom-geom()\"\ntask = \"flush\"\n",
            a.name(),
            b.name()
        ),
    )
    .unwrap();
    let mut d = start(&config);
    let mut s = serde_json::Value::Null;
    wait_for(
        "status to show a's standby error and b's flushes",
        Duration::from_secs(20),
        || {
            s = status_json(&config);
            disk(&s, a.name())["errors"].as_u64().unwrap_or(0) >= 1
                && disk(&s, a.name())["wear"]["per_day"] == 24
                && disk(&s, b.name())["task_starts"].as_u64().unwrap_or(0) >= 1
        },
        || d.log(),
    );
    // The daemon's typed snapshot, not its Prometheus text read back.
    assert_eq!(
        s["metrics"],
        format!("http://127.0.0.1:{port}/snapshot.json"),
        "{s}"
    );
    assert_eq!(s["dry_run"], false);
    let (da, db) = (disk(&s, a.name()), disk(&s, b.name()));
    assert_eq!(s["disks"].as_array().unwrap().len(), 2, "{s}");
    // A loop device never spins down: present and active, no spin-downs,
    // the whole budget left.
    assert_eq!(da["power"], "active", "{s}");
    assert_eq!(da["kernel_name"], a.name());
    assert_eq!(da["task"], "standby");
    assert_eq!(da["spindowns"], 0);
    assert!(
        da["last_decision"]
            .as_str()
            .unwrap()
            .starts_with("error: standby failed"),
        "{s}"
    );
    assert_eq!(da["wear"]["per_day"], 24);
    assert_eq!(da["wear"]["capacity"], 4.0);
    // Each attempt failed and gave its token back (the drive wore
    // nothing): the bucket is full, and no attempt counts in the day's.
    assert_eq!(da["wear"]["tokens"], 4.0, "{s}");
    assert_eq!(da["wear"]["spent_24h"], 0, "{s}");
    // No wake yet: nothing wrote to the disk since the attempt.
    assert!(da["last_wake_unix"].is_null(), "{s}");
    assert_eq!(da["last_wake_by"], serde_json::json!([]), "{s}");
    assert!(da["since_unix"].as_u64().unwrap() <= s["now_unix"].as_u64().unwrap());
    assert_eq!(db["power"], "active");
    assert_eq!(db["task"], "flush");
    assert!(db["wear"].is_null());
    let nodes = db["nodes"].as_array().unwrap();
    assert!(
        nodes
            .iter()
            .any(|n| n["name"] == "timeout_s" && n["value"].as_f64().unwrap() > 0.0),
        "{s}"
    );
    // The text: a block per disk (a header, then fields), and in the
    // standby disk's block its shadow evaluation (issue 27), a field per
    // window.
    let o = status(&config, &[]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let headers: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("  "))
        .collect();
    assert_eq!(headers.len(), 2, "{text}");
    let windows: Vec<&str> = text.lines().filter(|l| l.starts_with("  saved ")).collect();
    assert_eq!(windows.len(), 2, "{text}");
    assert!(
        windows[0].starts_with("  saved 24h ") && windows[1].starts_with("  saved 7d "),
        "{text}"
    );
    for field in [
        "  power ",
        "  task ",
        "  waiting ",
        "  spin-downs ",
        "  last ",
    ] {
        assert!(text.contains(field), "{field:?} in {text}");
    }
    let shadow = &da["shadow"];
    assert_eq!(shadow["windows"].as_array().map(Vec::len), Some(2), "{s}");
    assert_eq!(shadow["drive"], "wd-red-plus", "{s}");
    let policies: Vec<&str> = shadow["windows"][0]["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    for p in ["lull", "hd-idle-10min", "best-fixed", "oracle"] {
        assert!(policies.contains(&p), "{p} in {s}");
    }
    assert!(db["shadow"].is_null(), "a flush disk has no shadow: {s}");
    let block = |name: &str| -> String {
        text.split("\n\n")
            .find(|b| b.starts_with(name))
            .unwrap_or_else(|| panic!("no block for {name}: {text}"))
            .to_string()
    };
    let la = block(a.name());
    assert!(la.contains("  power       active for at least "), "{la}");
    assert!(la.contains("  spin-downs  0 (wear budget 24/day: "), "{la}");
    // A loop device never spins down: each failed attempt gave its token
    // back (the drive wore nothing), so none is used and the bucket is
    // full.
    assert!(
        la.contains("  spin-downs  0 (wear budget 24/day: 0 used in 24 h, 4 of 4 left now)"),
        "{la}"
    );
    assert!(la.contains("  errors "), "{la}");
    let lb = block(b.name());
    assert!(lb.contains(": timeout "), "{lb}");
    // A write after the failed spin-down attempt wakes the disk: the wake
    // is recorded with its time. A loop device is never in standby, so
    // there was no snapshot to attribute it with: cause `io`, no suspects.
    let before_write = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let dd = Command::new("dd")
        .args([
            "if=/dev/zero",
            &format!("of={}", a.0),
            "bs=4k",
            "count=4",
            "oflag=direct",
            "status=none",
        ])
        .status()
        .unwrap();
    assert!(dd.success());
    wait_for(
        "status to show a's wake after the write",
        Duration::from_secs(20),
        || {
            s = status_json(&config);
            disk(&s, a.name())["last_wake_unix"]
                .as_u64()
                .is_some_and(|t| t >= before_write)
        },
        || d.log(),
    );
    let da = disk(&s, a.name());
    assert!(
        da["last_wake_unix"].as_u64().unwrap() <= s["now_unix"].as_u64().unwrap(),
        "{s}"
    );
    assert_eq!(da["last_wake_cause"], "io", "{s}");
    assert!(
        da["last_wake_by"].as_array().is_some_and(Vec::is_empty),
        "{s}"
    );
    let o = status(&config, &[]);
    let text = String::from_utf8(o.stdout).unwrap();
    let la = text
        .split("\n\n")
        .find(|b| b.starts_with(a.name()))
        .unwrap();
    assert!(
        la.contains("  spin-ups    0; last wake ") && la.contains(" ago (io)"),
        "{la}"
    );
    // Stopped, the endpoint answers nothing, but the free lock says no
    // daemon runs: the state file's last state, as without `listen`.
    assert!(d.stop().success());
    let o = status(&config, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with("(no daemon is running: nothing holds "),
        "{text}"
    );
    assert!(text.contains(a.name()), "{text}");
    let st = status_json(&config);
    assert_eq!(st["daemon_running"], false, "{st}");
    assert!(st["metrics"].is_null(), "{st}");
    assert_eq!(disk(&st, a.name())["last_wake_cause"], "io", "{st}");
}

#[test]
fn status_reads_the_textfile_and_state_without_an_endpoint() {
    let s = Setup::with_top(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(200ms)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1003.5\"]\n",
        &line("fakea", 0, 5),
        "[metrics]\ntextfile = \"PROM\"\n",
    );
    let mut d = start(&s.config);
    let mut st = serde_json::Value::Null;
    wait_for(
        "the command to start, in the status",
        Duration::from_secs(20),
        || {
            st = status_json(&s.config);
            disk(&st, "fakea")["task_running"] == true
        },
        || d.log(),
    );
    // The snapshot the daemon writes beside its textfile.
    assert_eq!(st["metrics"], format!("{}.json", s.prom().display()));
    assert!(
        std::fs::read_to_string(s.prom())
            .unwrap()
            .contains("lull_polls_total ")
    );
    let a = disk(&st, "fakea");
    assert_eq!(a["task"], "command");
    assert!(a["task_starts"].as_u64().unwrap() >= 1, "{st}");
    assert!(a["wear"].is_null());
    // The daemon holds its state file's lock: status names it.
    assert_eq!(st["daemon_running"], true, "{st}");
    assert_eq!(st["daemon_pid"], d.child.id(), "{st}");
    let text = String::from_utf8_lossy(&status(&s.config, &[]).stdout).into_owned();
    assert!(!text.contains("no daemon is running"), "{text}");
    assert!(d.stop().success());

    // Stopped, the textfile and state file stay: status says they are
    // what the last run left, not the disk's state now.
    let st = status_json(&s.config);
    assert_eq!(st["daemon_running"], false, "{st}");
    assert!(st["daemon_pid"].is_null(), "{st}");
    let text = String::from_utf8_lossy(&status(&s.config, &[]).stdout).into_owned();
    assert!(
        text.starts_with("(no daemon is running: nothing holds ")
            && text.contains("state.json.lock"),
        "{text}"
    );
    // `lulld status DISK`: that disk's block alone (flags and names in
    // any order); a name not there is exit 2.
    let o = status(&s.config, &["fakea", "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let st: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(st["disks"].as_array().map(Vec::len), Some(1), "{st}");
    assert_eq!(st["disks"][0]["disk"], "fakea", "{st}");
    let o = status(&s.config, &["sdz"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no disk \"sdz\" in the daemon's status (its disks: fakea"),
        "{err}"
    );
}

#[test]
fn status_errors_name_what_is_wrong() {
    // No daemon on the configured endpoint: 1, with the address.
    let port = free_port();
    let s = Setup::with_top(
        "",
        "",
        &format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let o = status(&s.config, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("http://127.0.0.1:{port}/metrics")) && err.contains("metrics.listen"),
        "{err}"
    );
    // No metrics and no state file: 1, with the file.
    let s = Setup::new("", "");
    let o = status(&s.config, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(s.state.to_str().unwrap()), "{err}");
    // A bad config: 2, with its line and key.
    std::fs::write(&s.config, "poll = \"fast\"\n").unwrap();
    let o = status(&s.config, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("poll"));
    // A missing config: 2.
    let o = status(&s.dir.path().join("none.toml"), &[]);
    assert_eq!(o.status.code(), Some(2));
    // A bad format: 2.
    let o = status(&s.config, &["--format", "yaml"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A trial (nas-26, finding 7): after SIGTERM to `lulld --dry-run`, before
/// any real run, `lull status` with `metrics.listen` set failed (exit 1,
/// "not reachable … is the daemon running?"), where the same file without
/// `listen` showed the dry run's last state. No daemon holds a lock: the
/// dry run's state file is read, as without `listen`.
#[test]
fn a_stopped_dry_run_is_shown_with_metrics_listen() {
    let port = free_port();
    let s = Setup::with_top(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\n",
        &line("fakea", 0, 5),
        &format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    s.hdparm_stand_in();
    let dry = s.state.with_file_name("state.dry-run.json");
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(&s.config).arg("--dry-run");
    let mut d = Daemon::spawn(cmd, s.config.with_extension("log"), &[]);
    wait_for(
        "the dry run's would-be spin-down in its state file",
        Duration::from_secs(20),
        || {
            support::state(&dry)["fakea"]["last_decision"]
                .as_str()
                .is_some_and(|t| t.starts_with("dry run: would spin"))
        },
        || d.log(),
    );
    // Running: the endpoint answers.
    let st = status_json(&s.config);
    assert_eq!(st["dry_run"], true, "{st}");
    assert_eq!(
        st["metrics"],
        format!("http://127.0.0.1:{port}/snapshot.json")
    );
    assert!(d.stop().success());
    assert!(!s.state.exists(), "no real run here");
    let o = status(&s.config, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.starts_with("(no daemon is running: nothing holds ")
            && text.contains("state.dry-run.json.lock")
            && text.contains("(its last run was a dry run, lulld --dry-run")
            && text.contains("\nfakea\n"),
        "{text}"
    );
    let st = status_json(&s.config);
    assert_eq!(st["daemon_running"], false, "{st}");
    assert_eq!(st["dry_run"], true, "{st}");
    assert_eq!(st["state_file"], dry.display().to_string(), "{st}");
    assert!(
        disk(&st, "fakea")["last_decision"]
            .as_str()
            .is_some_and(|t| t.starts_with("dry run: would spin")),
        "{st}"
    );
}

/// A trial (nas-26, finding 8): 15 s after a disk vanished, `lull status`
/// read "power absent for at least 1m5s", counted from the last decision,
/// and "task standby (running)". The daemon's metrics now carry when it
/// saw the disk vanish, and nothing runs on an absent disk.
#[test]
fn a_vanished_disk_is_absent_since_the_daemon_saw_it_go() {
    let s = Setup::with_top(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\n",
        &line("fakea", 0, 5),
        "[metrics]\ntextfile = \"PROM\"\n",
    );
    s.hdparm_stand_in();
    let mut d = start(&s.config);
    let mut st = serde_json::Value::Null;
    wait_for(
        "the spin-down, in the status",
        Duration::from_secs(20),
        || {
            st = status_json(&s.config);
            disk(&st, "fakea")["power"] == "standby"
        },
        || d.log(),
    );
    assert_eq!(disk(&st, "fakea")["task_running"], true, "{st}");
    // Let the last decision age, then the disk goes.
    std::thread::sleep(Duration::from_secs(3));
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    support::write(&s.diskstats, &line("fakez", 9, 1));
    wait_for(
        "the vanish, in the status",
        Duration::from_secs(20),
        || {
            st = status_json(&s.config);
            disk(&st, "fakea")["power"] == "absent"
        },
        || d.log(),
    );
    assert!(
        d.log().contains("disk fakea (fakea) vanished"),
        "{}",
        d.log()
    );
    let a = disk(&st, "fakea");
    assert_eq!(a["since_exact"], true, "{st}");
    let since = a["since_unix"].as_u64().unwrap();
    assert!(
        since >= before && since <= st["now_unix"].as_u64().unwrap(),
        "{before} {st}"
    );
    assert_eq!(a["task_running"], false, "{st}");
    let text = String::from_utf8(status(&s.config, &[]).stdout).unwrap();
    assert!(
        text.contains("  power       absent for ") && !text.contains("absent for at least"),
        "{text}"
    );
    assert!(text.contains("  task        standby\n"), "{text}");
    // Back: present again, and the metrics no longer give the vanish.
    support::write(&s.diskstats, &line("fakea", 0, 9));
    wait_for(
        "the disk back, in the status",
        Duration::from_secs(20),
        || {
            st = status_json(&s.config);
            disk(&st, "fakea")["power"] != "absent"
        },
        || d.log(),
    );
    assert!(d.stop().success());
}
