//! `lull status`, driven by hand: metrics parsed back, combined with a
//! state file and a config, rendered as text and JSON (against
//! docs/status.schema.json).

use super::*;

/// The gauges of a standby disk `key` at rest, with `shadow`.
fn standby_gauges(
    key: &str,
    shadow: Option<lull_activity::ShadowReport>,
) -> crate::metrics::DiskGauges {
    crate::metrics::DiskGauges {
        key: key.into(),
        task: "standby",
        running: false,
        in_standby: false,
        power_since_unix: None,
        energy_saved_j: None,
        nodes: Vec::new(),
        jobs: Vec::new(),
        shadow,
    }
}

/// A config of one standby disk `sda` (`timer(10s)`), a state file in
/// which it is present, and the time now.
fn one_standby_disk() -> (Config, State, u64) {
    let reg = crate::default_registry();
    let cfg = Config::parse(
        Path::new("t.toml"),
        "[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(10s)\"\ntask = \"standby\"\n",
        &reg,
    )
    .unwrap();
    let mut state = State::default();
    state.disk("sda").present = true;
    (cfg, state, 1_700_000_000)
}

/// A status of `disks` at `now`, read from a state file alone.
fn status_of(disks: Vec<DiskStatus>, now: u64) -> Status {
    Status {
        config: "t.toml".into(),
        metrics: None,
        state_file: "s".into(),
        dry_run: Some(false),
        daemon_running: None,
        daemon_pid: None,
        now_unix: now,
        state_written_unix: Some(now),
        state_interval_s: 60.0,
        disks,
    }
}

/// A scrape of a daemon with one standby disk (captured from
/// `metrics::render`'s output format).
const CAPTURED: &str = r#"# HELP lull_spindowns_total Spin-downs issued by lull.
# TYPE lull_spindowns_total counter
lull_spindowns_total{disk="/dev/disk/by-id/ata-X \"1\""} 5
lull_spindowns_total{disk="sdb"} 0
# TYPE lull_spinups_total counter
lull_spinups_total{disk="/dev/disk/by-id/ata-X \"1\""} 4
lull_errors_total{disk="/dev/disk/by-id/ata-X \"1\""} 1
lull_wakeups_total{disk="/dev/disk/by-id/ata-X \"1\"",comm="smbd"} 3
lull_wakeups_total{disk="/dev/disk/by-id/ata-X \"1\"",comm="unknown"} 1
lull_disk_present{disk="/dev/disk/by-id/ata-X \"1\""} 1
lull_disk_present{disk="sdb"} 0
lull_task_running{disk="/dev/disk/by-id/ata-X \"1\"",task="standby"} 1
lull_in_standby{disk="/dev/disk/by-id/ata-X \"1\""} 1
lull_last_wake_timestamp_seconds{disk="/dev/disk/by-id/ata-X \"1\"",cause="spinup"} 1699999970
lull_node_gauge{disk="/dev/disk/by-id/ata-X \"1\"",node="adaptive-timer",name="timeout_s"} 42.5
lull_job_fits_observed{disk="sdb",job="scrub"} NaN
lull_polls_total 1234
lull_dry_run 0
"#;

const DISK: &str = "/dev/disk/by-id/ata-X \"1\"";

/// The text status of a scripted scene, pinned as a whole (issue 31,
/// item 4): a change of layout shows in review as a change of
/// `tests/data/status.txt` (`LULL_BLESS=1` writes it anew, for a
/// change that is meant).
/// A scripted scene: a standby disk with a shadow, a flush disk.
fn scene() -> Status {
    use lull_activity::{Counts, Poll, PollKind, Record, Session, Shadow};
    use lull_core::time::Nanos;
    let model = lull_tasks::PowerModel::preset("wd-red-plus").unwrap();
    // The user ran hd-idle with -i 300 before (`compare_timeout = "5m"`).
    let mut sh =
        Shadow::new(model.clone(), model.break_even()).with_your_timeout(Nanos::from_secs(300));
    let s = Nanos::from_secs;
    // Held to the disk's wear budget, 24 a day (its `wear` below).
    sh.feed(&Record::Session(Session {
        clock: s(1_800_000_000),
        max_spindowns_per_day: Some(24),
        ..Session::default()
    }));
    let mut t = 1;
    sh.feed(&Record::Poll(Poll {
        t0: s(t),
        t: s(t),
        kind: PollKind::Baseline,
        ..Poll::default()
    }));
    // Gaps of 30 s to 40 min, a standby 5 s into each long one.
    for gap in [30, 600, 90, 2400, 45, 1200, 300] {
        if gap > 200 {
            sh.feed(&Record::Standby(s(t + 5)));
        }
        t += gap;
        sh.feed(&Record::Poll(Poll {
            t0: s(t - 1),
            t: s(t),
            counts: Counts {
                reads: 4,
                sectors: 32,
                io_ms: 8,
                ..Counts::default()
            },
            ..Poll::default()
        }));
    }
    sh.settle();
    Status {
        config: "/etc/lull.toml".into(),
        metrics: Some("http://127.0.0.1:9733/metrics".into()),
        state_file: "/var/lib/lull/state.json".into(),
        dry_run: Some(false),
        daemon_running: Some(true),
        daemon_pid: Some(4242),
        now_unix: 1_800_005_000,
        state_written_unix: Some(1_800_004_990),
        state_interval_s: 60.0,
        disks: vec![
            DiskStatus {
                disk: "/dev/disk/by-id/ata-WDC_WD40EFRX-X".into(),
                kernel_name: "sdb".into(),
                task: Some("standby".into()),
                power: "standby".into(),
                since_unix: Some(1_800_004_000),
                since_exact: true,
                task_running: Some(true),
                last_decision: "standby done (ATA PASS-THROUGH (16) STANDBY IMMEDIATE)".into(),
                idle_since_unix: None,
                next_decision_unix: None,
                spindowns: 4,
                spinups: 3,
                foreign_spinups: 0,
                errors: 0,
                task_starts: 5,
                command_s: 0.0,
                command_exits: 0,
                standby_s: 3456.0,
                wear: Some(WearStatus {
                    per_day: 24,
                    spent_24h: 4,
                    tokens: 3.25,
                    capacity: 4.0,
                    next_in_s: Some(0.0),
                }),
                // What `auto` reports (long-idle's gauges), with a
                // periodic source found: the SMART poll every 30 minutes.
                nodes: [
                    ("p_long", 0.12191474762754606),
                    ("margin", f64::MAX),
                    ("at_once", 31.0),
                    ("at_once_right", 27.0),
                    ("at_start", 0.0),
                    ("serial_correlation", 0.4127),
                    ("by_context", 212.0),
                    ("acting_timeout_s", 110.25),
                    ("fallback_timeout_s", 110.25),
                    ("fallback_leader_timeout_s", 95.1),
                    ("fallback_leader_weight", 0.23),
                    ("fallback_periods", 1234.0),
                    ("periodic_sources", 1.0),
                    ("periodic_period_s", 1800.0),
                    ("periodic_confidence", 0.87),
                    ("periodic_next_in_s", 420.0),
                    ("periodic_hits", 40.0),
                    ("periodic_misses", 3.0),
                ]
                .into_iter()
                .map(|(name, v)| NodeGauge::new("n0", name, v))
                .collect(),
                learned_idle_periods: Some(1234),
                learned_since_unix: Some(1_800_005_000 - 9 * 86_400),
                wakeups: [("smbd".to_string(), 2u64), ("unknown".to_string(), 1)]
                    .into_iter()
                    .collect(),
                last_wake_unix: Some(1_800_003_900),
                last_wake_cause: Some("spinup".into()),
                last_wake_by: vec!["smbd".into()],
                preset: Some("wd-red-plus".into()),
                preset_source: Some("identified".into()),
                breakeven_s: Some(72.413793103),
                left_alone: None,
                drive_power: Some("APM level 254: no standby of its own".into()),
                spins_itself_down: false,
                standby_fix: None,
                transport: Some("ata16".into()),
                transport_why: Some("ATA PASS-THROUGH (16) CHECK POWER MODE answered".into()),
                shadow: Some(sh.report()),
                jobs: Vec::new(),
            },
            DiskStatus {
                disk: "nvme0n1".into(),
                kernel_name: "nvme0n1".into(),
                task: Some("flush".into()),
                power: "active".into(),
                since_unix: Some(1_800_004_990),
                since_exact: false,
                task_running: Some(false),
                last_decision: "flush done (1 file systems)".into(),
                idle_since_unix: Some(1_800_004_960),
                next_decision_unix: Some(1_800_005_035),
                spindowns: 0,
                spinups: 0,
                foreign_spinups: 0,
                errors: 1,
                task_starts: 12,
                command_s: 0.0,
                command_exits: 0,
                standby_s: 0.0,
                wear: None,
                nodes: vec![NodeGauge::new("n0", "timeout_s", 5.0)],
                learned_idle_periods: None,
                learned_since_unix: None,
                wakeups: BTreeMap::new(),
                last_wake_unix: None,
                last_wake_cause: None,
                last_wake_by: Vec::new(),
                preset: None,
                preset_source: None,
                breakeven_s: None,
                left_alone: None,
                drive_power: None,
                spins_itself_down: false,
                standby_fix: None,
                transport: None,
                transport_why: None,
                shadow: None,
                jobs: Vec::new(),
            },
        ],
    }
}

mod power;
mod shadow;
mod snapshot;
mod sources;
mod text;
