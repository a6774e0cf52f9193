//! `lull status` against a running `lull daemon` on fake disks (the loop
//! device test is `crates/live/tests/status.rs`, through `lulld status`,
//! which runs the same code): JSON with the disks and their counters, and
//! once the daemon is gone, what it left (its endpoint answers nothing,
//! its lock is free).

use std::process::Command;
use std::time::Duration;

const LULL: &str = env!("CARGO_BIN_EXE_lull");

#[path = "../crates/live/tests/support/mod.rs"]
mod support;

use support::{Daemon, Setup, line, wait_for};

#[test]
fn lull_status_reports_a_running_daemon_as_json() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let s = Setup::with_top(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(200ms)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1004.5\"]\n\
         [[disk]]\ndevice = \"fakeb\"\nnetwork = \"timer(1h)\"\ntask = \"flush\"\n",
        &(line("fakea", 0, 5) + &line("fakeb", 1, 5)),
        &format!("[metrics]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let mut cmd = Command::new(LULL);
    cmd.args(["daemon", "--config"]).arg(&s.config);
    let mut d = Daemon::spawn(cmd, s.config.with_extension("log"), &[]);
    let status = || {
        Command::new(LULL)
            .args(["status", "--format", "json", "--config"])
            .arg(&s.config)
            .output()
            .unwrap()
    };
    let mut v = serde_json::Value::Null;
    wait_for(
        "fakea's command in the status",
        Duration::from_secs(20),
        || {
            let o = status();
            v = serde_json::from_slice(&o.stdout).unwrap_or_default();
            v["disks"][0]["task_running"] == true
        },
        || d.log(),
    );
    let disks = v["disks"].as_array().unwrap();
    assert_eq!(disks.len(), 2, "{v}");
    assert_eq!(disks[0]["disk"], "fakea");
    assert_eq!(disks[0]["task"], "command");
    assert_eq!(disks[0]["power"], "active");
    assert!(disks[0]["task_starts"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(disks[1]["disk"], "fakeb");
    assert_eq!(disks[1]["task_running"], false);
    assert_eq!(disks[1]["task_starts"], 0);
    assert!(d.stop().success());
    let o = status();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["daemon_running"], false, "{v}");
    assert!(v["metrics"].is_null(), "{v}");
    assert_eq!(v["disks"][0]["disk"], "fakea", "{v}");
    // `lull status DISK`: that disk alone; a name not there is exit 2,
    // with the disks there are.
    let named = |disks: &[&str]| {
        Command::new(LULL)
            .args(["status", "--format", "json", "--config"])
            .arg(&s.config)
            .args(disks)
            .output()
            .unwrap()
    };
    let o = named(&["/dev/fakeb"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let disks = v["disks"].as_array().unwrap();
    assert_eq!(disks.len(), 1, "{v}");
    assert_eq!(disks[0]["disk"], "fakeb", "{v}");
    let o = named(&["fakea", "fakec"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no disk \"fakec\" in the daemon's status (its disks: fakea, fakeb); did you mean `fakea`?"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn lull_status_reads_a_dry_run_s_own_state_file() {
    // No [metrics] to say the daemon runs dry: its state file, beside the
    // real one that does not exist, says it.
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(200ms)\"\ntask = \"flush\"\n",
        &line("fakea", 0, 5),
    );
    let mut cmd = Command::new(LULL);
    cmd.args(["daemon", "--dry-run", "--config"]).arg(&s.config);
    let mut d = Daemon::spawn(cmd, s.config.with_extension("log"), &[]);
    let dry = s.state.with_file_name("state.dry-run.json");
    wait_for(
        "the dry run's state file",
        Duration::from_secs(20),
        || dry.exists(),
        || d.log(),
    );
    assert!(d.stop().success());
    assert!(!s.state.exists());
    let o = Command::new(LULL)
        .args(["status", "--format", "json", "--config"])
        .arg(&s.config)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["dry_run"], true, "{v}");
    assert_eq!(v["state_file"], dry.to_str().unwrap(), "{v}");
    assert_eq!(v["disks"][0]["disk"], "fakea", "{v}");
}
