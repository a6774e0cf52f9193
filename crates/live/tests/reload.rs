//! `lulld` reloads as a home-NAS trial (nas-26) met them: the log says
//! what changed for each disk (a changed wear budget, that its bucket
//! keeps its level), and a disk the reload removed leaves the metrics and
//! reads as not watched in `lulld status`, across a restart too. Fake
//! disks (a diskstats file the test rewrites); no root needed.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");

mod support;

use support::{Daemon, Setup, line, wait_for, write};

fn start(config: &Path) -> Daemon {
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(config);
    Daemon::spawn(cmd, config.with_extension("log"), &[])
}

/// `lulld status --config CONFIG ARGS…`: its exit code and stdout.
fn status(config: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(LULLD)
        .arg("status")
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// The entry of `disk` in `lulld status --format json`.
fn disk_json(config: &Path, disk: &str) -> serde_json::Value {
    let (code, out) = status(config, &["--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    s["disks"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["disk"] == disk).cloned())
        .unwrap_or(serde_json::Value::Null)
}

/// Waits until fakea's activity log holds `runs` runs, the last one
/// continuing the run before it, and returns the log rebuilt: that run
/// has no downtime before it and takes over idle.
fn continued_run(s: &Setup, d: &Daemon, runs: usize, what: &str) -> lull_activity::Rebuilt {
    let dir = s.dir.path().join("activity/fakea");
    wait_for(
        what,
        Duration::from_secs(20),
        || {
            lull_activity::Log::open(&dir)
                .is_ok_and(|l| l.runs.len() == runs && l.runs[runs - 1].session.continues)
        },
        || d.log(),
    );
    let rebuilt = lull_activity::Log::open(&dir).unwrap().rebuild();
    let last = &rebuilt.runs[runs - 1];
    assert!(
        last.downtime.is_none() && last.continues.is_some(),
        "{last:?}"
    );
    rebuilt
}

const FAKEA: &str = "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\nmax_spindowns_per_day = 24\n";
const FAKEB: &str = "[[disk]]\ndevice = \"fakeb\"\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\n";

#[test]
fn a_reload_says_what_changed_and_a_removed_disk_is_no_longer_shown_as_watched() {
    let s = Setup::with_top(
        &format!("{FAKEA}\n{FAKEB}"),
        &(line("fakea", 0, 5) + &line("fakeb", 1, 5)),
        "[metrics]\ntextfile = \"PROM\"\n",
    );
    s.hdparm_stand_in();
    let prom = || std::fs::read_to_string(s.prom()).unwrap_or_default();
    let mut d = start(&s.config);
    wait_for(
        "both disks spun down",
        Duration::from_secs(20),
        || {
            let st = s.state();
            st["fakea"]["spindowns"].as_u64() >= Some(1)
                && st["fakeb"]["spindowns"].as_u64() >= Some(1)
        },
        || d.log(),
    );
    assert!(
        prom().contains("lull_disk_present{disk=\"fakeb\"} 1"),
        "{}",
        prom()
    );
    // When fakea's idle period began: the runs that take it up across the
    // reload and the restart below go on showing it from there.
    let idle_from = s.state()["fakea"]["idle_since_unix"].as_u64();
    assert!(idle_from.is_some(), "{}", s.state());
    // fakea: another network and a raised budget; fakeb: removed.
    let text = std::fs::read_to_string(&s.config).unwrap();
    let text = text
        .replace(FAKEB, "")
        .replace("timer(300ms)", "timer(400ms)")
        .replace("max_spindowns_per_day = 24", "max_spindowns_per_day = 480");
    write(&s.config, &text);
    d.signal("-HUP");
    wait_for(
        "the reload",
        Duration::from_secs(20),
        || d.log().contains("configuration reloaded"),
        || d.log(),
    );
    let log = d.log();
    assert!(
        log.contains(
            "disk fakea: configuration changed (network timer(300ms) → timer(400ms), max_spindowns_per_day 24 → 480); its controller starts again"
        ),
        "{log}"
    );
    // One spin-down of a bucket of 4: 3 left, refilling at 480 a day.
    assert!(
        log.contains("disk fakea: wear budget 24 → 480 a day; the bucket keeps its level (3 of 80 now), refilling at the new rate, one spin-down every 3m"),
        "{log}"
    );
    assert!(
        log.contains("disk fakeb: removed from the configuration: no longer watched"),
        "{log}"
    );
    assert!(!log.contains("changed or removed"), "{log}");
    // Said once: the new controller's start does not say it again.
    assert!(!log.contains("since the daemon's last run"), "{log}");
    // fakea slept through the reload: its new controller took the disk
    // over without a baseline, and its run continues the old one in the
    // activity log (no unwatched time, no split idle period).
    continued_run(&s, &d, 2, "fakea's continuing run in its activity log");
    // The metrics no longer export it; the state file keeps its entry.
    wait_for(
        "fakeb to leave the metrics",
        Duration::from_secs(10),
        || !prom().contains("disk=\"fakeb\"") && prom().contains("disk=\"fakea\""),
        || format!("{}\n{}", prom(), d.log()),
    );
    assert!(s.state()["fakeb"]["spindowns"].as_u64() >= Some(1));
    // The status: not watched since the reload, nothing live-looking.
    let b = disk_json(&s.config, "fakeb");
    assert_eq!(b["power"], "unwatched", "{b}");
    assert_eq!(b["since_exact"], true, "{b}");
    assert!(b["task"].is_null() && b["wear"].is_null(), "{b}");
    assert!(disk_json(&s.config, "fakea")["power"] != "unwatched");
    let (_, text) = status(&s.config, &[]);
    let block = text
        .split("\n\n")
        .find(|b| b.starts_with("fakeb\n"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        block.starts_with("fakeb\n  not watched for ")
            && block.contains("a reload removed it from the configuration"),
        "{block}"
    );
    for field in ["  power ", "  task ", "  waiting "] {
        assert!(!block.contains(field), "{field:?} in {block}");
    }
    // A restart: still not watched since that reload, from the state file.
    // Two seconds down, so that an idle period shown from the takeover
    // would differ from one shown from its start.
    assert!(d.stop().success());
    std::thread::sleep(Duration::from_secs(2));
    let mut d = start(&s.config);
    wait_for(
        "the restart's first metrics",
        Duration::from_secs(20),
        || prom().contains("lull_task_running{disk=\"fakea\""),
        || d.log(),
    );
    assert!(!prom().contains("disk=\"fakeb\""), "{}", prom());
    // fakea, asleep and untouched through the restart (same boot, same
    // counters): its idle period goes on, as through the reload.
    assert!(
        d.log()
            .contains("disk fakea: idle through the restart (no I/O since the last run stopped): its idle period goes on"),
        "{}",
        d.log()
    );
    let rebuilt = continued_run(&s, &d, 3, "fakea's run continued across the restart");
    // Its counters never moved: one idle period from the first baseline
    // through the reload and the restart, and one spin-down in it.
    assert_eq!(rebuilt.requests.len(), 1, "{:?}", rebuilt.requests);
    assert_eq!(rebuilt.standbys.len(), 1, "{:?}", rebuilt.standbys);
    // Idle since the first run saw it begin, in the state file and in the
    // metrics `lull status` reads.
    wait_for(
        "fakea's idle period shown from its start",
        Duration::from_secs(10),
        || {
            s.state()["fakea"]["idle_since_unix"].as_u64() == idle_from
                && prom().contains(&format!(
                    "lull_idle_since_timestamp_seconds{{disk=\"fakea\"}} {}",
                    idle_from.unwrap()
                ))
        },
        || format!("{}\n{}\n{}", s.state(), prom(), d.log()),
    );
    let b = disk_json(&s.config, "fakeb");
    assert_eq!(
        (b["power"].as_str(), b["since_exact"].as_bool()),
        (Some("unwatched"), Some(true)),
        "{b}"
    );
    assert!(
        !d.log()
            .contains("disk fakeb: in the state file but not in the configuration"),
        "marked once: {}",
        d.log()
    );
    assert!(d.stop().success());
    // Removed while the daemon was stopped: marked at the start.
    let text = std::fs::read_to_string(&s.config).unwrap().replace(
        FAKEA
            .replace("300ms", "400ms")
            .replace("= 24", "= 480")
            .as_str(),
        "",
    );
    write(&s.config, &format!("{text}{FAKEB}"));
    let mut d = start(&s.config);
    wait_for(
        "the start",
        Duration::from_secs(20),
        || {
            d.log()
                .contains("disk fakea: in the state file but not in the configuration")
        },
        || d.log(),
    );
    let a = disk_json(&s.config, "fakea");
    assert_eq!(
        (a["power"].as_str(), a["since_exact"].as_bool()),
        (Some("unwatched"), Some(false)),
        "{a}"
    );
    // fakeb was back with the default budget; unchanged: nothing said.
    assert!(
        !d.log().contains("since the daemon's last run"),
        "{}",
        d.log()
    );
    assert!(d.stop().success());
    // A budget changed while the daemon was stopped is said at the start,
    // as a reload says it (a trial: only reloads said it).
    let text = std::fs::read_to_string(&s.config)
        .unwrap()
        .replace(FAKEB, &format!("{FAKEB}max_spindowns_per_day = 96\n"));
    write(&s.config, &text);
    let mut d = start(&s.config);
    wait_for(
        "the budget line",
        Duration::from_secs(20),
        || {
            d.log().contains("disk fakeb: since the daemon's last run, wear budget 48 → 96 a day; the bucket keeps its level (")
        },
        || d.log(),
    );
    assert!(d.stop().success());
}
