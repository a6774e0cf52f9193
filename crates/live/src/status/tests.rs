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

#[test]
fn parses_a_captured_scrape() {
    let s = parse_metrics(CAPTURED).unwrap();
    assert_eq!(s.len(), 15);
    assert_eq!(s[0].name, "lull_spindowns_total");
    assert_eq!(s[0].label("disk"), Some(DISK));
    assert_eq!(s[0].value, 5.0);
    let g = s.iter().find(|s| s.name == "lull_node_gauge").unwrap();
    assert_eq!(g.label("node"), Some("adaptive-timer"));
    assert_eq!(g.label("name"), Some("timeout_s"));
    assert_eq!(g.value, 42.5);
    assert!(
        s.iter()
            .any(|s| s.name == "lull_job_fits_observed" && s.value.is_nan())
    );
    let p = s.iter().find(|s| s.name == "lull_polls_total").unwrap();
    assert!(p.labels.is_empty());
    assert_eq!(p.value, 1234.0);
    assert!(parse_metrics("x{a=\"b} 1").unwrap_err().contains("line 1"));
    assert!(
        parse_metrics("ok 1\nx{a=b} 1")
            .unwrap_err()
            .contains("line 2")
    );
    assert!(parse_metrics("x one").is_err());
}

#[test]
fn the_metrics_renderer_parses_back() {
    let mut st = State::default();
    st.disk("a\\b\nc").spindowns = 7;
    let g = [crate::metrics::DiskGauges {
        key: "a\\b\nc".into(),
        task: "standby",
        running: false,
        in_standby: true,
        power_since_unix: None,
        energy_saved_j: None,
        nodes: vec![("n".into(), "timeout_s".into(), 3.0)],
        jobs: Vec::new(),
        shadow: None,
    }];
    let s = parse_metrics(&crate::metrics::render(&st, &g, 1, true)).unwrap();
    let sd = s.iter().find(|s| s.name == "lull_spindowns_total").unwrap();
    assert_eq!(sd.label("disk"), Some("a\\b\nc"));
    assert_eq!(sd.value, 7.0);
}

/// The idle period and the next decision come from the metrics when
/// they have them (current to the second), else from the state file
/// (up to `state_interval` old): a disk busy now is not "idle for 50s".
#[test]
fn the_idle_period_comes_from_the_metrics_when_they_have_it() {
    let (cfg, mut state, now) = one_standby_disk();
    let d = state.disk("sda");
    // The state file's last write: an idle period 50 s old.
    d.idle_since_unix = Some(now - 50);
    d.next_decision_unix = Some(now + 5);
    let gauges = [standby_gauges("sda", None)];
    // The daemon now: busy (nothing idle, nothing due).
    let mut current = state.clone();
    let c = current.disk("sda");
    (c.idle_since_unix, c.next_decision_unix) = (None, None);
    let text = crate::metrics::render(&current, &gauges, 1, false);
    assert!(
        text.contains("lull_idle_since_timestamp_seconds{disk=\"sda\"} NaN\n"),
        "{text}"
    );
    let busy = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!(busy[0].idle_since_unix, None);
    assert_eq!(busy[0].next_decision_unix, None);
    assert_eq!(
        waiting(&busy[0], now).as_deref(),
        Some("an idle period: the disk is busy")
    );
    // The daemon now: idle for 2 s, deciding in 1 s.
    let c = current.disk("sda");
    (c.idle_since_unix, c.next_decision_unix) = (Some(now - 2), Some(now + 1));
    let text = crate::metrics::render(&current, &gauges, 1, false);
    let mut idle = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!(idle[0].idle_since_unix, Some(now - 2));
    assert_eq!(idle[0].next_decision_unix, Some(now + 1));
    assert_eq!(
        waiting(&idle[0], now).as_deref(),
        Some("idle for 2s; the network decides in 1s unless I/O comes")
    );
    // An empty wear budget is said beside it: the decision will be refused.
    idle[0].wear = Some(WearStatus {
        per_day: 48,
        spent_24h: 8,
        tokens: 0.4,
        capacity: 8.0,
        next_in_s: Some(1638.0),
    });
    assert_eq!(
        waiting(&idle[0], now).as_deref(),
        Some(
            "idle for 2s; the network decides in 1s unless I/O comes; the wear budget allows no spin-down for 27m18s"
        )
    );
    // Metrics of a daemon without them, or none: the state file's.
    let old = parse_metrics("lull_polls_total 3\n").unwrap();
    for samples in [old, Vec::new()] {
        let d = combine(&cfg, &state, &samples, !samples.is_empty(), now);
        assert_eq!(d[0].idle_since_unix, Some(now - 50));
        assert_eq!(d[0].next_decision_unix, Some(now + 5));
    }
}

/// The last decision's words and when the power state began come from
/// the metrics when they have them: the state file holds a decision
/// until its next write (up to `state_interval`), and a decision that is
/// no power change says nothing of when the state began.
#[test]
fn the_last_decision_and_the_power_state_come_from_the_metrics() {
    let (cfg, mut state, now) = one_standby_disk();
    let d = state.disk("sda");
    d.last_decision = "dry run: would spin /dev/sda down".into();
    d.last_decision_unix = now - 40;
    let mut gauges = [standby_gauges("sda", None)];
    let mut current = state.clone();
    let c = current.disk("sda");
    c.last_decision = "skip standby: wear budget \"x\"\nnext".into();
    c.last_decision_unix = now - 1;
    gauges[0].power_since_unix = Some(now - 36);
    let text = crate::metrics::render(&current, &gauges, 1, false);
    let samples = parse_metrics(&text).unwrap();
    let d = combine(&cfg, &state, &samples, true, now);
    assert_eq!(d[0].last_decision, "skip standby: wear budget \"x\"\nnext");
    assert_eq!((d[0].since_unix, d[0].since_exact), (Some(now - 36), true));
    let shown = render_text(&status_of(d, now));
    assert!(shown.contains("  power       active for 36s\n"), "{shown}");
    assert!(
        shown.contains("skip standby: wear budget \"x\" next"),
        "{shown}"
    );
    // A daemon that saw no change yet: the state file's decision bounds
    // it, as before, never exactly (not even "found in standby", which a
    // drive asleep when first asked is).
    gauges[0].power_since_unix = None;
    let text = crate::metrics::render(&current, &gauges, 1, false);
    assert!(
        text.contains("lull_power_state_since_timestamp_seconds{disk=\"sda\"} NaN\n"),
        "{text}"
    );
    let d = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!((d[0].since_unix, d[0].since_exact), (Some(now - 40), false));
    let mut found = state.clone();
    found.disk("sda").last_decision = "found in standby (spun down by something else)".into();
    let d = combine(&cfg, &found, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!((d[0].since_unix, d[0].since_exact), (Some(now - 40), false));
    // Without metrics, the state file's words.
    let d = combine(&cfg, &state, &[], false, now);
    assert_eq!(d[0].last_decision, "dry run: would spin /dev/sda down");
}

/// I/O on a disk lull spun down wakes it without a decision: its time
/// active counts from the wake, not from the last decision (the standby,
/// hours before), which a trial's restarted daemon showed as "active for
/// at least 3h26m" of a drive that had spun up 32 minutes before.
#[test]
fn an_active_disk_s_time_counts_from_its_wake_not_from_the_standby_before_it() {
    let (cfg, mut state, now) = one_standby_disk();
    let d = state.disk("sda");
    d.last_decision = "standby done (hdparm -y)".into();
    d.last_decision_unix = now - 12_373;
    d.last_wake = Some(crate::state::Wake {
        unix: now - 1_928,
        cause: crate::state::Wake::SPINUP.into(),
        by: Vec::new(),
    });
    // A restarted daemon (it did not see the wake: NaN): at least since
    // the wake.
    let text = crate::metrics::render(&state, &[standby_gauges("sda", None)], 1, false);
    assert!(text.contains("lull_power_state_since_timestamp_seconds{disk=\"sda\"} NaN\n"));
    let d = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!(d[0].power, "active");
    assert_eq!(
        (d[0].since_unix, d[0].since_exact),
        (Some(now - 1_928), false)
    );
    let shown = render_text(&status_of(d, now));
    assert!(
        shown.contains("  power       active for at least 32m8s\n"),
        "{shown}"
    );
    // The state file alone: the drive is active (the standby's words
    // are older than the wake), since the wake it recorded.
    let d = combine(&cfg, &state, &[], false, now);
    assert_eq!(d[0].power, "active");
    assert_eq!(
        (d[0].since_unix, d[0].since_exact),
        (Some(now - 1_928), true)
    );
    // A decision after the wake bounds it later, as before.
    let mut later = state.clone();
    later.disk("sda").last_decision = "skip standby: wear budget".into();
    later.disk("sda").last_decision_unix = now - 60;
    let d = combine(&cfg, &later, &[], false, now);
    assert_eq!(d[0].power, "active");
    assert_eq!((d[0].since_unix, d[0].since_exact), (Some(now - 60), false));
    // A wake before the standby's words, or I/O on a disk that was not
    // asleep, ends no standby: the words stand.
    for (at, cause) in [
        (now - 20_000, crate::state::Wake::SPINUP),
        (now - 1_928, crate::state::Wake::IO),
    ] {
        let mut st = state.clone();
        st.disk("sda").last_wake = Some(crate::state::Wake {
            unix: at,
            cause: cause.into(),
            by: Vec::new(),
        });
        let d = combine(&cfg, &st, &[], false, now);
        assert_eq!(d[0].power, "standby", "{cause}");
        assert_eq!(
            (d[0].since_unix, d[0].since_exact),
            (Some(now - 12_373), true)
        );
    }
    // A reboot since a standby the last run left (the daemon forgets it
    // at its start): awake since the boot, not "standby" by the old
    // words, nor active since the wake before it.
    let mut rebooted = state.clone();
    let s = rebooted.disk("sda");
    s.standby_unix = Some(now - 900);
    s.last_decision_unix = now - 900;
    let forgot = rebooted.forget_standby_before(now - 600);
    assert_eq!(forgot, ["sda"]);
    for (samples, exact) in [(Vec::new(), true), (parse_metrics(&text).unwrap(), false)] {
        let d = combine(&cfg, &rebooted, &samples, !samples.is_empty(), now);
        assert_eq!(d[0].power, "active");
        assert_eq!(
            (d[0].since_unix, d[0].since_exact),
            (Some(now - 600), exact)
        );
    }
}

#[test]
fn combines_metrics_state_and_config() {
    let reg = crate::default_registry();
    let cfg = Config::parse(
        Path::new("t.toml"),
        &format!(
            "[[disk]]\ndevice = {DISK:?}\nnetwork = \"timer(10s)\"\ntask = \"standby\"\nmax_spindowns_per_day = 12\n[[disk]]\ndevice = \"sd?\"\nnetwork = \"timer(10s)\"\ntask = \"flush\"\n"
        ),
        &reg,
    )
    .unwrap();
    let now = 1_700_000_000;
    let mut state = State::default();
    let d = state.disk(DISK);
    d.spindowns = 4; // older than the metrics: they win
    d.last_decision = "standby done (sgio)".into();
    d.last_decision_unix = now - 90;
    d.kernel_name = "sda".into();
    d.wear = Some(WearBudget {
        tokens: 0.5,
        at_unix: now,
    });
    // One attempt more than a day ago, two within the day.
    d.spindown_attempts_unix = vec![now - 90_000, now - 3600, now - 90];
    d.last_wake = Some(crate::state::Wake {
        unix: now - 30,
        cause: "spinup".into(),
        by: vec!["smbd".into(), "rsync?".into()],
    });
    // No metric for sdb's wake: the state file's.
    state.disk("sdb").last_wake = Some(crate::state::Wake {
        unix: now - 5,
        cause: "io".into(),
        by: Vec::new(),
    });
    let samples = parse_metrics(CAPTURED).unwrap();
    // A state file behind the metrics: the metric's time and cause,
    // no suspects of another wake.
    let mut behind = state.clone();
    behind.disk(DISK).last_wake.as_mut().unwrap().unix = now - 4000;
    let old = combine(&cfg, &behind, &samples, true, now);
    assert_eq!(old[0].last_wake_unix, Some(now - 30));
    assert_eq!(old[0].last_wake_cause.as_deref(), Some("spinup"));
    assert!(old[0].last_wake_by.is_empty());
    let disks = combine(&cfg, &state, &samples, true, now);
    assert_eq!(disks.len(), 2);
    let a = &disks[0];
    assert_eq!(a.disk, DISK);
    assert_eq!(a.power, "standby");
    assert!(a.since_exact);
    assert_eq!(a.since_unix, Some(now - 90));
    assert_eq!(a.spindowns, 5);
    assert_eq!(a.errors, 1);
    let w = a.wear.as_ref().unwrap();
    assert_eq!((w.per_day, w.capacity, w.spent_24h), (12, 2.0, 2));
    assert_eq!(a.last_wake_unix, Some(now - 30));
    assert_eq!(a.last_wake_by, ["smbd", "rsync?"]);
    // Half a token short at 12 a day: 1 h.
    assert!((w.next_in_s.unwrap() - 3600.0).abs() < 1e-6, "{w:?}");
    assert_eq!(a.nodes[0].value, Some(42.5));
    // "Never" is null in JSON and a word in the text.
    let g = NodeGauge::new("n0", "margin", f64::MAX);
    assert_eq!((g.value, g.never), (None, true));
    let json = serde_json::to_value(&g).unwrap();
    assert!(json["value"].is_null() && json["never"] == true, "{json}");
    assert_eq!(human_gauge("margin", None), "at-once margin never");
    // A periodic source that does not exist is "none", not 0 s or -1.
    assert_eq!(
        human_gauge("periodic_period_s", None),
        "period of the most confident source none"
    );
    assert_eq!(
        human_gauge("periodic_next_in_s", Some(95.0)),
        "time to the next predicted periodic arrival 1m35s"
    );
    assert_eq!(significant(0.12191474762754606, 4), "0.1219");
    assert_eq!(significant(3.0, 4), "3");
    assert_eq!(significant(1234.5678, 4), "1235");
    assert_eq!(a.wakeups["smbd"], 3);
    let b = &disks[1];
    assert_eq!((b.disk.as_str(), b.power.as_str()), ("sdb", "absent"));
    assert_eq!(b.task.as_deref(), Some("flush"));
    assert!(b.wear.is_none());
    assert_eq!(b.last_wake_unix, Some(now - 5));
    assert_eq!(b.last_wake_cause.as_deref(), Some("io"));
    let text = render_text(&status_of(disks, now));
    let (first, second) = text.split_once("\n\n").unwrap();
    assert!(first.lines().next().unwrap().ends_with("(sda)"), "{first}");
    for want in [
        "  power       standby for 1m30s",
        "  spin-downs  5 (wear budget 12/day: 2 used in 24 h, none left now, the next in 1h)",
        "last wake 30s ago (spinup: smbd, rsync?)",
        "  learned     adaptive-timer: timeout 42.5s",
        "woken by smbd 3, unknown 1",
    ] {
        assert!(first.contains(want), "{want:?} in {first}");
    }
    assert!(second.starts_with("sdb\n  power       absent"), "{second}");
    // Only a decision that is the change dates the state exactly.
    assert!(is_change("spun up by something else", false));
    assert!(!is_change("spun up by something else", true));
    assert!(!is_change("standby done (sgio)", false));
    assert!(!is_change("skip standby: wear budget", true));
}

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

/// A `command` disk's evidence: the idle time its command was given.
#[test]
fn a_command_disk_says_how_long_its_command_ran() {
    let mut st = scene();
    let d = &mut st.disks[1];
    d.task = Some("command".into());
    let text = render_text(&st);
    assert!(
        !text.contains("  command     ran"),
        "nothing ran yet: {text}"
    );
    let d = &mut st.disks[1];
    (d.command_s, d.command_exits) = (754.2, 1);
    let text = render_text(&st);
    assert!(
        text.contains("\n  command     ran 12m34s in idle time, 1 run to the end\n"),
        "{text}"
    );
    // A standby disk says nothing of commands.
    st.disks[0].command_s = 5.0;
    assert_eq!(render_text(&st).matches("  command     ran").count(), 1);
}

/// A `jobs` disk's evidence, from the daemon's metrics: what each job got
/// of the idle time, whether it was admitted and fits, and its late
/// windows; in the text and in the JSON.
#[test]
fn a_jobs_disk_says_what_each_job_got() {
    let text = "lull_job_admitted{disk=\"sdc\",job=\"scrub\"} 1\n\
        lull_job_admitted{disk=\"sdc\",job=\"trim\"} 0\n\
        lull_job_admitted{disk=\"sdd\",job=\"other\"} 1\n\
        lull_job_idle_seconds_total{disk=\"sdc\",job=\"scrub\"} 754.2\n\
        lull_job_idle_seconds_total{disk=\"sdc\",job=\"trim\"} 0\n\
        lull_job_deadlines_missed_total{disk=\"sdc\",job=\"scrub\"} 2\n\
        lull_job_fits_observed{disk=\"sdc\",job=\"scrub\"} 0\n\
        lull_job_fits_observed{disk=\"sdc\",job=\"trim\"} NaN\n";
    let samples = parse_metrics(text).unwrap();
    let jobs = jobs_from_metrics(&samples, "sdc");
    assert_eq!(
        jobs,
        vec![
            JobStatus {
                name: "scrub".into(),
                admitted: true,
                idle_s: 754.2,
                deadlines_missed: 2,
                fits_observed: Some(false),
            },
            JobStatus {
                name: "trim".into(),
                admitted: false,
                idle_s: 0.0,
                deadlines_missed: 0,
                fits_observed: None,
            },
        ]
    );
    let mut st = scene();
    st.disks[1].task = Some("jobs".into());
    st.disks[1].jobs = jobs;
    let text = render_text(&st);
    assert!(
        text.contains("\n  jobs        scrub: ran 12m34s in idle time, admitted; would be refused on the idle time observed, late in 2 windows\n              trim: ran 0s in idle time, refused at admission\n"),
        "{text}"
    );
    let json = serde_json::to_value(&st).unwrap();
    assert_eq!(json["disks"][1]["jobs"][0]["idle_s"], 754.2);
    assert!(json["disks"][0].get("jobs").is_none());
}

#[test]
fn the_text_status_of_a_scripted_scene_is_pinned() {
    let text = render_text(&scene());
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/status.txt");
    if std::env::var_os("LULL_BLESS").is_some() {
        std::fs::write(&golden, &text).unwrap();
    }
    let want = std::fs::read_to_string(&golden).expect("tests/data/status.txt");
    assert_eq!(
        text, want,
        "the text status changed; LULL_BLESS=1 to accept"
    );
}

/// `auto`'s score of gauges is wrapped at 100 columns under its node, and
/// the periodic source's details, "none" while none is found, are left
/// to the JSON.
#[test]
fn what_auto_learned_is_wrapped_and_leaves_out_what_does_not_exist() {
    let mut st = scene();
    let text = render_text(&st);
    let learned: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  learned"))
        .skip(1)
        .take_while(|l| l.starts_with("              "))
        .collect();
    assert!(learned.len() >= 3, "{text}");
    assert!(learned[0].starts_with("              n0: chance"), "{text}");
    for l in &learned[1..] {
        assert!(
            l.starts_with("                  ") && !l.starts_with("                   "),
            "{l:?}"
        );
    }
    assert!(learned.iter().all(|l| l.chars().count() <= 100), "{text}");
    assert!(
        text.contains("period of the most confident source 30m"),
        "{text}"
    );
    // No source: its period, confidence and next arrival say nothing.
    for g in &mut st.disks[0].nodes {
        match g.name.as_str() {
            "periodic_sources" => g.value = Some(0.0),
            "periodic_period_s" | "periodic_confidence" | "periodic_next_in_s" => {
                *g = NodeGauge::new("n0", &g.name.clone(), f64::MAX)
            }
            _ => {}
        }
    }
    let text = render_text(&st);
    assert!(text.contains("confident periodic sources 0"), "{text}");
    for gone in [
        "period of the most confident source",
        "its confidence",
        "next predicted periodic arrival",
    ] {
        assert!(!text.contains(gone), "{gone}: {text}");
    }
    assert!(
        text.contains("at-once margin never"),
        "'never' is kept: {text}"
    );
}

#[test]
fn a_drive_that_spins_itself_down_is_shown_with_the_fix() {
    let mut st = scene();
    let d = &mut st.disks[0];
    d.drive_power = Some("APM level 127: the drive may spin itself down".into());
    d.spins_itself_down = true;
    d.standby_fix = Some("`hdparm -B 254 /dev/sdb`".into());
    let text = render_text(&st);
    assert!(
        text.contains("  drive power APM level 127: the drive may spin itself down (`hdparm -B 254 /dev/sdb` leaves spin-down to lull)\n"),
        "{text}"
    );
    // Left alone, lull spins nothing down: no fix to offer.
    st.disks[0].left_alone = Some("a solid-state disk".into());
    let text = render_text(&st);
    assert!(
        text.contains("  drive power APM level 127: the drive may spin itself down\n"),
        "{text}"
    );
    // From the state file's identity.
    let mut state = State::default();
    let ds = DiskState {
        identity: Some(crate::identify::Identity {
            apm: Some(crate::identify::Apm::Level(96)),
            kernel: "sdc".into(),
            ..Default::default()
        }),
        ..DiskState::default()
    };
    state.disks.insert("sdc".into(), ds);
    let cfg = Config::parse(
        std::path::Path::new("lull.toml"),
        "[[disk]]\ndevice = \"sdc\"\n",
        &crate::default_registry(),
    )
    .unwrap();
    let d = combine(&cfg, &state, &[], false, 1_800_000_000);
    assert_eq!(
        d[0].drive_power.as_deref(),
        Some("APM level 96: the drive may spin itself down")
    );
    assert!(d[0].spins_itself_down);
    assert_eq!(
        d[0].standby_fix.as_deref(),
        Some("`hdparm -B 254 /dev/sdc`")
    );
}

#[test]
fn the_shadow_comes_from_the_metrics_when_they_carry_it() {
    // The daemon's live shadow, as its metrics write it, against a state
    // file written before any idle period ended ("no idle period ended
    // yet" for a minute after a start, with metrics).
    let live = scene().disks[0].shadow.clone().unwrap();
    let mut stale = live.clone();
    for w in &mut stale.windows {
        w.idle_periods = 0;
        w.policies.clear();
    }
    let g = [standby_gauges("sdc", Some(live.clone()))];
    let mut state = State::default();
    state.disk("sdc").shadow = Some(stale.clone());
    let text = crate::metrics::render(&state, &g, 1, false);
    let samples = parse_metrics(&text).unwrap();
    let cfg = Config::parse(
        Path::new("t.toml"),
        "[[disk]]\ndevice = \"sdc\"\n",
        &crate::default_registry(),
    )
    .unwrap();
    let d = combine(&cfg, &state, &samples, true, 1_800_005_000);
    assert_eq!(d[0].shadow.as_ref(), Some(&live), "every figure, exactly");
    // A daemon whose metrics lack the window figures: the state file's.
    let older: Vec<Sample> = samples
        .into_iter()
        .filter(|s| s.name != "lull_shadow_observed_seconds")
        .collect();
    let d = combine(&cfg, &state, &older, true, 1_800_005_000);
    assert_eq!(d[0].shadow.as_ref(), Some(&stale));
}

#[test]
fn what_was_learned_comes_from_the_metrics_when_they_carry_it() {
    let snap = |n, since| lull_core::learned::Snapshot {
        format: lull_core::learned::SNAPSHOT_FORMAT,
        network: "auto".into(),
        breakeven_ns: 1,
        idle_periods: n,
        since_unix: since,
        parts: Vec::new(),
    };
    let now = 1_800_000_000;
    let mut live = State::default();
    live.disk("sdc").learned = Some(snap(9, now - 60));
    let samples = parse_metrics(&crate::metrics::render(&live, &[], 1, false)).unwrap();
    let cfg = Config::parse(
        Path::new("t.toml"),
        "[[disk]]\ndevice = \"sdc\"\n",
        &crate::default_registry(),
    )
    .unwrap();
    // The state file, written before the first idle period ended.
    let mut stale = State::default();
    stale.disk("sdc");
    let d = combine(&cfg, &stale, &samples, true, now);
    assert_eq!(
        (d[0].learned_idle_periods, d[0].learned_since_unix),
        (Some(9), Some(now - 60))
    );
    // Without the metrics: the state file's.
    stale.disk("sdc").learned = Some(snap(2, now - 30));
    let d = combine(&cfg, &stale, &[], false, now);
    assert_eq!(
        (d[0].learned_idle_periods, d[0].learned_since_unix),
        (Some(2), Some(now - 30))
    );
}

#[test]
fn a_disk_no_command_reaches_is_shown_left_alone_and_why() {
    let mut st = scene();
    st.disks[0].transport = Some("none".into());
    st.disks[0].transport_why = Some("SG_IO not supported; hdparm -C failed".into());
    // The scene's lull spun the disk down; a disk left alone never was.
    let acted = st.clone();
    for w in &mut st.disks[0].shadow.as_mut().unwrap().windows {
        let base = w.baseline_energy_j;
        let lull = w.policies.iter_mut().find(|p| p.policy == "lull").unwrap();
        (lull.spinups, lull.energy_j, lull.saved_wh) = (0, base, 0.0);
    }
    let text = render_text(&st);
    assert!(
        text.contains("  transport   none: no command reaches the drive (SG_IO not supported; hdparm -C failed); it is left alone (no spin-down, no power checks) until it is replugged\n"),
        "{text}"
    );
    // Its evidence judges nothing lull decided: no ratio, and lull's line
    // says why it is empty (it read "excess vs best fixed 5.57").
    assert!(!text.contains("excess vs best fixed"), "{text}");
    assert!(
        text.contains("lull none (the disk is left alone now)"),
        "{text}"
    );
    assert!(
        text.contains("no ratio: the daemon leaves this disk alone (no command reaches the drive)"),
        "{text}"
    );
    assert!(
        text.contains("hd-idle 10 min "),
        "the references stay: {text}"
    );
    // Left alone now, after lull spun it down in the window (a backend
    // changed to one that cannot reach it): lull's figures and the ratios
    // stand.
    let text = render_text(&acted);
    assert!(!text.contains("lull none"), "{text}");
    assert!(text.contains("excess vs best fixed"), "{text}");
    assert!(text.contains("  transport   none: "), "{text}");
    // A dry run decides as if a command reached it: its ratios stay.
    st.dry_run = Some(true);
    let text = render_text(&st);
    assert!(text.contains("excess vs best fixed"), "{text}");
    // So does a disk that is reached.
    st.dry_run = None;
    st.disks[0].transport = Some("ata16".into());
    assert!(render_text(&st).contains("excess vs best fixed"));
}

#[test]
fn small_savings_keep_their_sign_and_size() {
    assert_eq!(energy(2.914), "2.91 Wh");
    assert_eq!(energy(-0.25), "-0.25 Wh");
    assert_eq!(energy(-0.003_14), "-3.14 mWh");
    assert_eq!(energy(0.042), "42.00 mWh");
    assert_eq!(energy(-1e-9), "0 Wh", "no negative zero");
    assert_eq!(energy(0.0), "0 Wh");
}

/// More attempts in 24 h than spin-downs ever (a standby that found the
/// drive asleep, or failed): the budget's line says what it counts.
#[test]
fn a_budget_spent_on_attempts_that_spun_nothing_down_says_so() {
    let mut st = scene();
    let said = "used in 24 h by attempts, which count when the drive was asleep already";
    assert!(!render_text(&st).contains(said));
    let d = st.disks.iter_mut().find(|d| d.wear.is_some()).unwrap();
    d.spindowns = d.wear.as_ref().unwrap().spent_24h as u64 - 1;
    assert!(render_text(&st).contains(said), "{}", render_text(&st));
}

#[test]
fn a_dry_run_s_budget_is_spent_on_what_it_would_have_done() {
    let mut st = scene();
    assert!(!render_text(&st).contains("would have done"));
    st.dry_run = Some(true);
    let text = render_text(&st);
    assert!(
        text.starts_with("(the daemon runs with --dry-run"),
        "{text}"
    );
    assert!(
        text.contains("4 used in 24 h by spin-downs it would have done, "),
        "{text}"
    );
    // The spin-downs it counts are the ones sent: none, said beside the
    // `saved` lines' would-be spin-ups.
    assert!(
        text.contains(
            " sent (a dry run sends none; lull's `saved` line counts those it would have done)"
        ),
        "{text}"
    );
    // A dry run that has stopped is spoken of in the past.
    st.daemon_running = Some(false);
    let text = render_text(&st);
    assert!(
        text.contains(
            "\n(its last run was a dry run, lulld --dry-run: it decided but did not act)\n"
        ),
        "{text}"
    );
    assert!(!text.contains("the daemon runs with"), "{text}");
}

#[test]
fn a_status_from_the_state_file_alone_says_how_old_it_is() {
    let lag = "(as the daemon last wrote its state file, 40s ago: without [metrics] that is every 1m and at once for spin-downs, spin-ups and commands, so what follows can lag)\n";
    let mut st = scene();
    st.state_written_unix = Some(st.now_unix - 40);
    // With metrics, the power state is current: no word of the lag.
    assert!(!render_text(&st).contains("last wrote"));
    st.metrics = None;
    let text = render_text(&st);
    assert!(text.starts_with(lag), "{text}");
    // Just written: nothing to say.
    st.state_written_unix = Some(st.now_unix - 1);
    assert!(!render_text(&st).contains("last wrote"));
    // A stopped daemon's status says that instead.
    st.state_written_unix = Some(st.now_unix - 40);
    st.daemon_running = Some(false);
    let text = render_text(&st);
    assert!(text.starts_with("(no daemon is running"), "{text}");
    assert!(!text.contains("last wrote"), "{text}");
}

/// `lull status --format json` keeps to the schema in
/// `docs/status.schema.json` (issue 31, item 2): every key documented,
/// no key the schema does not know, each of its type.
#[test]
fn the_json_status_keeps_to_its_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/status.schema.json"),
        )
        .expect("docs/status.schema.json"),
    )
    .expect("the schema is JSON");
    let json = serde_json::to_value(scene()).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &json, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    // A jobs disk's jobs too.
    let mut st = scene();
    st.disks[1].jobs = vec![JobStatus {
        name: "scrub".into(),
        admitted: true,
        idle_s: 1.5,
        deadlines_missed: 0,
        fits_observed: None,
    }];
    let mut errors = Vec::new();
    validate(
        &schema,
        &serde_json::to_value(st).unwrap(),
        "$",
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:#?}");
    // And the check can fail: a key the schema does not know.
    let mut bad = json.clone();
    bad["disks"][0]["surprise"] = serde_json::json!(1);
    bad["now_unix"] = serde_json::json!("soon");
    let mut errors = Vec::new();
    validate(&schema, &bad, "$", &mut errors);
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

/// A JSON Schema subset: `type` (a name or a list), `properties`,
/// `required`, `additionalProperties: false`, `items`.
fn validate(schema: &serde_json::Value, v: &serde_json::Value, at: &str, errors: &mut Vec<String>) {
    use serde_json::Value;
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "number" => v.is_number(),
            "integer" => v.is_u64() || v.is_i64(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            errors.push(format!("{at}: {v} is not {types:?}"));
            return;
        }
    }
    if let (Some(props), Some(obj)) = (
        schema.get("properties").and_then(Value::as_object),
        v.as_object(),
    ) {
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = r.as_str().filter(|k| !obj.contains_key(*k)) {
                errors.push(format!("{at}: `{k}` is missing"));
            }
        }
        for (k, val) in obj {
            match props.get(k) {
                Some(sub) => validate(sub, val, &format!("{at}.{k}"), errors),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{at}: `{k}` is not in the schema"))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            validate(items, x, &format!("{at}[{i}]"), errors);
        }
    }
}

proptest::proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    /// Wrapping loses and adds nothing: the lines, joined back, are the
    /// items joined by the separator; every line fits the width unless it
    /// holds a single item longer than it.
    #[test]
    fn wrapping_keeps_every_item_and_fits_the_width(
        items in proptest::collection::vec("[a-z0-9 %()]{1,30}", 0..20),
        sep in proptest::sample::select(vec![", ", "; ", " "]),
        width in 10usize..100,
    ) {
        let items: Vec<String> = items;
        let lines = wrap_list(&items, sep, width);
        let end = sep.trim_end();
        let joined: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 < lines.len() {
                    l.strip_suffix(end).unwrap_or(l).to_string()
                } else {
                    l.clone()
                }
            })
            .collect();
        proptest::prop_assert_eq!(joined.join(sep), items.join(sep));
        for l in &lines {
            let alone = items.iter().any(|i| l.strip_suffix(end).unwrap_or(l) == i);
            proptest::prop_assert!(l.chars().count() <= width || alone, "{:?} over {}", l, width);
        }
    }
}

/// A window where even the oracle saved nothing (a fresh start, no idle
/// period longer than B yet) gives no ratio: both are 0/0, and their
/// conventional 1 read "excess vs best fixed 1.00, gain vs clairvoyant
/// 1.00" beside savings of 0 Wh everywhere.
#[test]
fn a_window_with_nothing_to_save_gives_no_ratio() {
    let mut st = scene();
    for w in &mut st.disks[0].shadow.as_mut().unwrap().windows {
        let base = w.baseline_energy_j;
        for p in &mut w.policies {
            (p.spinups, p.energy_j, p.saved_wh) = (0, base, 0.0);
        }
        (w.excess_vs_best_fixed, w.gain_vs_clairvoyant) = (Some(1.0), Some(1.0));
    }
    let text = render_text(&st);
    assert!(!text.contains("excess vs best fixed"), "{text}");
    assert!(!text.contains("gain vs clairvoyant"), "{text}");
    assert!(
        text.contains(
            "no ratio: no idle period outlasted the break-even time, so there was nothing to save"
        ),
        "{text}"
    );
    // The scene itself, with savings, shows its ratios.
    assert!(render_text(&scene()).contains("excess vs best fixed"));
}

/// A stopped daemon's disks wait for nothing: their last idle period and
/// next decision, counted on from the last state, read as if a daemon
/// ran (an audit: "the network decides in 24m1s unless I/O comes" after
/// the stop).
#[test]
fn a_stopped_daemon_decides_nothing() {
    let mut st = scene();
    let running = render_text(&st);
    assert!(running.contains("  waiting     "), "{running}");
    st.daemon_running = Some(false);
    let stopped = render_text(&st);
    assert!(
        stopped.contains("  waiting     nothing: no daemon is running, so nothing decides\n"),
        "{stopped}"
    );
    assert!(!stopped.contains("decides in"), "{stopped}");
}

/// The JSON too gives no ratio where there was nothing to save (an
/// audit: `"excess_vs_best_fixed": 1.0` beside the text's "no ratio",
/// which a script could not tell from lull matching the best fixed
/// timeout); where there was, it keeps them.
#[test]
fn the_json_gives_no_ratio_where_there_was_nothing_to_save() {
    let mut st = scene();
    let shadow = st.disks[0].shadow.take().unwrap();
    let kept = super::without_empty_ratios(shadow.clone());
    assert_eq!(kept, shadow);
    let mut empty = shadow;
    for w in &mut empty.windows {
        let base = w.baseline_energy_j;
        for p in &mut w.policies {
            (p.spinups, p.energy_j, p.saved_wh) = (0, base, 0.0);
        }
        (w.excess_vs_best_fixed, w.gain_vs_clairvoyant) = (Some(1.0), Some(1.0));
    }
    for w in &super::without_empty_ratios(empty).windows {
        assert_eq!(
            (w.excess_vs_best_fixed, w.gain_vs_clairvoyant),
            (None, None)
        );
    }
}

/// A window where the clairvoyant timer adds nothing over the best fixed
/// one gives no gain ratio (a share of nothing), and says why: a trial
/// read its absence as a ratio lost.
#[test]
fn a_missing_gain_ratio_says_why() {
    let mut st = scene();
    let windows = &mut st.disks[0].shadow.as_mut().unwrap().windows;
    windows[0].gain_vs_clairvoyant = None;
    let text = render_text(&st).replace("\n              ", " ");
    assert!(
        text.contains(
            "gain vs clairvoyant n/a (the clairvoyant timer adds nothing over the best fixed one)"
        ),
        "{text}"
    );
    // Wrapped under the field, as the ratios with it.
    for l in render_text(&st)
        .lines()
        .filter(|l| l.contains("clairvoyant"))
    {
        assert!(l.chars().count() <= 100, "{l}");
    }
}

/// A window that spans a dry run and the real daemon says how much of it
/// the dry run watched, under the ratios: lull's line adds spin-downs it
/// only would have made (a trial switched from `--dry-run` and read
/// them as the real daemon's). None is said of a window without.
#[test]
fn a_window_with_dry_run_time_says_so() {
    let mut st = scene();
    assert!(!render_text(&st).contains("dry run:"));
    let windows = &mut st.disks[0].shadow.as_mut().unwrap().windows;
    windows[0].dry_run_s = windows[0].observed_s;
    windows[1].dry_run_s = windows[1].observed_s / 2.0;
    let half = secs(windows[1].dry_run_s);
    // Wrapped lines read as one.
    let text = render_text(&st).replace("\n              ", " ");
    assert!(
        text.contains(&format!(
            "{half} of it watched by a dry run: lull's figures count the spin-downs it would have made then"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "all of it watched by a dry run: lull's figures are the spin-downs it would have made"
        ),
        "{text}"
    );
}

/// The note under a window's ratios explains only a ratio it shows, and
/// none when even the oracle saved nothing (a short watch, no idle period
/// longer than B: seen in a guest, where it explained two ratios that
/// read "n/a" and nothing).
#[test]
fn the_small_margin_note_explains_only_ratios_shown() {
    let figures = |policy: &str, energy_j: f64| lull_activity::shadow::PolicyFigures {
        policy: policy.into(),
        timeout_s: None,
        saved_wh: 0.0,
        energy_j,
        spinups: 0,
    };
    let window = |oracle: f64, best: f64, clairvoyant: f64, excess, gain| {
        lull_activity::shadow::WindowReport {
            window: "24h".into(),
            observed_s: 3600.0,
            dry_run_s: 0.0,
            idle_periods: 10,
            baseline_energy_j: 10_000.0,
            policies: vec![
                figures("lull", 9_000.0),
                figures("best-fixed", best),
                figures("clairvoyant-10min", clairvoyant),
                figures("oracle", oracle),
            ],
            excess_vs_best_fixed: excess,
            gain_vs_clairvoyant: gain,
            wear_budget_per_day: None,
        }
    };
    // Both margins small, both ratios shown: both explained.
    let note = small_margin_note(&window(8_000.0, 8_050.0, 8_040.0, Some(19.0), Some(-95.0)))
        .expect("a note");
    assert!(note.contains("trails the oracle by 0.50 %"), "{note}");
    assert!(
        note.contains("beats the best fixed one by 0.10 %"),
        "{note}"
    );
    // A ratio not shown is not explained.
    let note =
        small_margin_note(&window(8_000.0, 8_050.0, 8_040.0, Some(19.0), None)).expect("a note");
    assert!(!note.contains("clairvoyant"), "{note}");
    assert_eq!(
        small_margin_note(&window(8_000.0, 8_000.0, 8_000.0, None, None)),
        None
    );
    // Nothing saved by anyone (the oracle spends what never spinning down
    // does): no note.
    assert_eq!(
        small_margin_note(&window(10_000.0, 10_000.0, 10_000.0, None, None)),
        None
    );
    // Large margins: no note.
    assert_eq!(
        small_margin_note(&window(5_000.0, 7_000.0, 6_000.0, Some(2.0), Some(-1.0))),
        None
    );
}

/// Without metrics, the state file status reads is the running daemon's:
/// a dry run beside hd-idle after a real run (both files stay) was shown
/// as "no daemon is running", from the real run's stale file.
#[test]
fn the_running_daemon_s_state_file_is_read_real_or_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("state.json");
    let dry = dir.path().join("state.dry-run.json");
    let touch = |p: &Path, age_s: u64| {
        std::fs::write(p, "{}").unwrap();
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age_s);
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    };
    // Only a real file: the real one.
    touch(&real, 60);
    assert_eq!(dry_run_by_files(&real, &dry), None);
    // Both, the dry run's written last, nothing running: the dry run's.
    touch(&dry, 10);
    assert_eq!(dry_run_by_files(&real, &dry), Some(true));
    // A real run after it: the real one.
    touch(&real, 0);
    assert_eq!(dry_run_by_files(&real, &dry), None);
    // A dry run running (its lock held), the real file newer: the dry
    // run's.
    let lock = crate::instance::InstanceLock::acquire(&dry).unwrap();
    assert_eq!(dry_run_by_files(&real, &dry), Some(true));
    // And a real daemon running wins over everything.
    let real_lock = crate::instance::InstanceLock::acquire(&real).unwrap();
    assert_eq!(dry_run_by_files(&real, &dry), None);
    drop((lock, real_lock));
    // Only a dry-run file: the dry run's.
    std::fs::remove_file(&real).unwrap();
    assert_eq!(dry_run_by_files(&real, &dry), Some(true));
}

/// A backend the config names is what reaches the drive, whatever probe
/// the state file remembers from `backend = "auto"`: a trial's disks,
/// switched to `backend = "hdparm"` and spun down 16 times, read
/// "transport none … left alone until it is replugged".
#[test]
fn a_configured_backend_is_the_transport_shown_not_a_remembered_probe() {
    let none = crate::transport::TransportMemo {
        transport: crate::transport::Transport::None,
        device: "7:1".into(),
        kernel: "loop1".into(),
        probed_unix: 1_800_000_000,
        why: "SG_IO not supported; hdparm -C failed".into(),
    };
    let mut st = State::default();
    st.disk("loop1").transport = Some(none);
    let shown = |backend: &str| {
        let cfg = Config::parse(
            Path::new("t.toml"),
            &format!("[[disk]]\ndevice = \"loop1\"\nbackend = \"{backend}\"\n"),
            &crate::default_registry(),
        )
        .unwrap();
        let d = combine(&cfg, &st, &[], false, 1_800_000_100);
        (d[0].transport.clone(), d[0].transport_why.clone())
    };
    assert_eq!(
        shown("hdparm"),
        (Some("hdparm (the config's backend)".into()), None)
    );
    assert_eq!(
        shown("ata16"),
        (Some("ata16 (the config's backend)".into()), None)
    );
    // Under `auto` the probe is what the daemon goes by.
    assert_eq!(
        shown("auto"),
        (
            Some("none".into()),
            Some("SG_IO not supported; hdparm -C failed".into())
        )
    );
}

/// Disks are listed in the config's order, then the keys no entry names
/// now; a trial's `/dev/loop2`, `loop0`, `loop1` (sorted by key) read
/// against a config that lists loop0, loop1, /dev/loop2.
#[test]
fn disks_are_listed_in_the_configs_order() {
    let cfg = Config::parse(
        Path::new("t.toml"),
        "[[disk]]\ndevice = \"loop0\"\n[[disk]]\ndevice = \"loop1\"\n[[disk]]\ndevice = \"/dev/loop2\"\n",
        &crate::default_registry(),
    )
    .unwrap();
    let mut st = State::default();
    for key in ["serial:XYZ", "/dev/loop2", "loop1", "loop0"] {
        st.disk(key);
    }
    let d = combine(&cfg, &st, &[], false, 1_800_000_000);
    let order: Vec<&str> = d.iter().map(|d| d.disk.as_str()).collect();
    assert_eq!(order, ["loop0", "loop1", "/dev/loop2", "serial:XYZ"]);
}

/// A trial (nas-26, finding 5): a disk a reload removed from the
/// configuration went on reading "power standby for 48s", "task standby
/// (running)" and `lull_disk_present 1`. The daemon no longer exports it,
/// and its state-file entry reads as not watched since the reload, with
/// its counters kept; one removed while the daemon was stopped, since at
/// least its start; a parked drive's entry says whose it is.
#[test]
fn a_disk_removed_from_the_configuration_reads_as_not_watched() {
    let (cfg, mut state, now) = one_standby_disk();
    let removed = state.disk("loop1");
    removed.present = true;
    removed.standby_unix = Some(now - 248);
    removed.idle_since_unix = Some(now - 250);
    removed.spindowns = 7;
    removed.spinups = 6;
    removed.last_decision = REMOVED_AT_RELOAD.into();
    removed.last_decision_unix = now - 200;
    let earlier = state.disk("loop2");
    earlier.present = true;
    earlier.last_decision = NOT_CONFIGURED_AT_START.into();
    earlier.last_decision_unix = now - 300;
    // No mark: a file edited but not reloaded, or an older daemon.
    state.disk("loop3").last_decision = "standby done".into();
    state.disk("loop3").present = true;
    state.disk("serial:XYZ").spindowns = 2;
    // The daemon's metrics: its watched disk, not the others.
    let exported = |k: &str| k == "sda";
    let text = crate::metrics::render_exported(
        &state,
        &exported,
        &[standby_gauges("sda", None)],
        1,
        false,
    );
    assert!(text.contains("lull_disk_present{disk=\"sda\"} 1"), "{text}");
    for key in ["loop1", "loop2", "loop3", "serial:XYZ"] {
        assert!(!text.contains(&format!("disk=\"{key}\"")), "{key}: {text}");
    }
    for (samples, have) in [(parse_metrics(&text).unwrap(), true), (Vec::new(), false)] {
        let d = combine(&cfg, &state, &samples, have, now);
        let by = |k: &str| d.iter().find(|d| d.disk == k).unwrap();
        assert_eq!(by("sda").power, "active");
        for key in ["loop1", "loop2", "loop3", "serial:XYZ"] {
            let u = by(key);
            assert_eq!(u.power, "unwatched", "{key}");
            assert_eq!(
                (u.idle_since_unix, u.task.as_deref()),
                (None, None),
                "{key}"
            );
        }
        assert_eq!(
            (by("loop1").since_unix, by("loop1").since_exact),
            (Some(now - 200), true)
        );
        assert_eq!(
            (by("loop2").since_unix, by("loop2").since_exact),
            (Some(now - 300), false)
        );
        assert_eq!(by("loop3").since_unix, None);
        assert_eq!(by("loop1").spindowns, 7);
        let shown = render_text(&status_of(d.clone(), now));
        let block = |name: &str| {
            shown
                .split("\n\n")
                .find(|b| b.starts_with(&format!("{name}\n")))
                .unwrap_or_else(|| panic!("{name}: {shown}"))
                .to_string()
        };
        let b1 = block("loop1");
        assert!(
            b1.starts_with(
                "loop1\n  not watched for 3m20s: a reload removed it from the configuration; what follows is the state\n              file's, from when it was watched\n"
            ),
            "{b1}"
        );
        // Nothing live-looking: no power, task, waiting or last line (the
        // mark is said above); the counters stay.
        for field in ["  power ", "  task ", "  waiting ", "  last "] {
            assert!(!b1.contains(field), "{field:?} in {b1}");
        }
        assert!(b1.contains("  spin-downs  7\n  spin-ups    6"), "{b1}");
        let b2 = block("loop2");
        assert!(
            b2.contains(
                "not watched for at least 5m: not in the configuration since the daemon's start"
            ),
            "{b2}"
        );
        let b3 = block("loop3");
        assert!(
            b3.contains(
                "  not watched not in the configuration file (a daemon that has not reloaded"
            ) && b3.contains("  last        standby done"),
            "{b3}"
        );
        assert!(
            block("serial:XYZ").contains("the state of drive XYZ, kept until the drive is back"),
            "{shown}"
        );
    }
    // A daemon that has not reloaded since the file lost the disk still
    // watches it (it exports its task): live, as the daemon says.
    let text = crate::metrics::render(
        &state,
        &[standby_gauges("sda", None), standby_gauges("loop3", None)],
        1,
        false,
    );
    let d = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    let loop3 = d.iter().find(|d| d.disk == "loop3").unwrap();
    assert_eq!(loop3.power, "active");
    assert_eq!(loop3.left_alone, None);
}

/// A trial (nas-26, finding 8): 15 s after a disk vanished, the status
/// read "power absent for at least 1m5s" (the time since its last
/// decision, before the vanish) and "task standby (running)". The
/// daemon's metrics give the vanish's time; without them it is not known,
/// and no standby runs on an absent disk.
#[test]
fn an_absent_disk_is_absent_since_it_vanished() {
    let (cfg, mut state, now) = one_standby_disk();
    let d = state.disk("sda");
    d.present = false;
    d.last_decision = "standby done (hdparm -y)".into();
    d.last_decision_unix = now - 65;
    let mut g = standby_gauges("sda", None);
    g.running = true;
    g.power_since_unix = Some(now - 15);
    let text = crate::metrics::render(&state, &[g], 1, false);
    let d = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!(d[0].power, "absent");
    assert_eq!((d[0].since_unix, d[0].since_exact), (Some(now - 15), true));
    assert_eq!(d[0].task_running, Some(false));
    let shown = render_text(&status_of(d, now));
    assert!(
        shown.contains("  power       absent for 15s\n  task        standby\n"),
        "{shown}"
    );
    assert!(
        shown.contains("  waiting     the disk to come back\n"),
        "{shown}"
    );
    // From an older daemon's state file alone: absent, since when unknown
    // (not "at least" the time since a decision taken before it
    // vanished).
    let d = combine(&cfg, &state, &[], false, now);
    assert_eq!((d[0].since_unix, d[0].since_exact), (None, false));
    let shown = render_text(&status_of(d, now));
    assert!(shown.contains("  power       absent\n"), "{shown}");
    // The state file says when it vanished: exact without metrics too.
    state.disk("sda").vanished_unix = Some(now - 15);
    let d = combine(&cfg, &state, &[], false, now);
    assert_eq!((d[0].since_unix, d[0].since_exact), (Some(now - 15), true));
    let shown = render_text(&status_of(d, now));
    assert!(shown.contains("  power       absent for 15s\n"), "{shown}");
}

/// A trial (nas-26, finding 7): after a stopped `lulld --dry-run`, and
/// before any real run, `lull status` with `metrics.listen` failed ("not
/// reachable … is the daemon running?") where the same file without
/// `listen` showed the dry run's last state. Only the dry run's lock file
/// is there, and free: no daemon runs, and the dry run's file is read.
#[test]
fn a_stopped_dry_run_is_shown_when_metrics_listen_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.path().join("lull.toml");
    let state_file = dir.path().join("state.json");
    std::fs::write(
        &config,
        format!(
            "state_file = {state_file:?}\n[metrics]\nlisten = \"127.0.0.1:{port}\"\n[[disk]]\ndevice = \"loop0\"\n"
        ),
    )
    .unwrap();
    let reg = crate::default_registry();
    // Nothing ran here: an endpoint that does not answer is an error.
    let e = gather(&config, &reg).unwrap_err();
    assert!(e.to_string().contains("is the daemon running?"), "{e}");
    // A dry run ran and stopped: its state file and its free lock.
    let dry = dir.path().join("state.dry-run.json");
    let mut st = State::default();
    st.disk("loop0").last_decision = "dry run: would spin /dev/loop0 down".into();
    st.disk("loop0").present = true;
    st.save(&dry).unwrap();
    std::fs::write(crate::instance::lock_path(&dry), "").unwrap();
    let s = gather(&config, &reg).unwrap();
    assert_eq!(s.state_file, dry);
    assert_eq!((s.dry_run, s.daemon_running), (Some(true), Some(false)));
    assert_eq!(s.metrics, None);
    assert_eq!(
        s.disks[0].last_decision,
        "dry run: would spin /dev/loop0 down"
    );
    let text = render_text(&s);
    assert!(
        text.starts_with("(no daemon is running: nothing holds ")
            && text.contains("state.dry-run.json.lock")
            && text.contains("(its last run was a dry run"),
        "{text}"
    );
    // A dry run that holds its lock runs: its endpoint must answer.
    let held = crate::instance::InstanceLock::acquire(&dry).unwrap();
    let e = gather(&config, &reg).unwrap_err();
    assert!(e.to_string().contains("is the daemon running?"), "{e}");
    drop(held);
}

/// `lull status DISK…` keeps the disks named by their status name, kernel
/// name or `/dev/` path, in the status's order; a name that is not there
/// is an input error (exit 2) that lists the disks there are, and no name
/// keeps them all.
#[test]
fn status_of_named_disks_keeps_those_and_refuses_a_name_not_there() {
    let names = |st: &Status| -> Vec<String> { st.disks.iter().map(|d| d.disk.clone()).collect() };
    let all = names(&scene());
    assert_eq!(all, ["/dev/disk/by-id/ata-WDC_WD40EFRX-X", "nvme0n1"]);
    for (asked, kept) in [
        (vec![], all.clone()),
        (vec!["sdb"], vec![all[0].clone()]),
        (vec!["/dev/sdb"], vec![all[0].clone()]),
        (
            vec!["/dev/disk/by-id/ata-WDC_WD40EFRX-X"],
            vec![all[0].clone()],
        ),
        (vec!["/dev/nvme0n1"], vec![all[1].clone()]),
        // The status's order, whatever the order asked in.
        (vec!["nvme0n1", "sdb"], all.clone()),
    ] {
        let mut st = scene();
        let asked: Vec<String> = asked.into_iter().map(String::from).collect();
        select(&mut st, &asked).unwrap();
        assert_eq!(names(&st), kept, "{asked:?}");
        // What is rendered is what was kept.
        let text = render_text(&st);
        assert_eq!(text.contains("(sdb)"), kept.contains(&all[0]), "{asked:?}");
    }
    let mut st = scene();
    let e = select(&mut st, &["sdb".into(), "sdc".into()]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert_eq!(
        e.to_string(),
        "no disk \"sdc\" in the daemon's status (its disks: /dev/disk/by-id/ata-WDC_WD40EFRX-X (sdb), nvme0n1); did you mean `sdb`?"
    );
    // Nothing removed on an error.
    assert_eq!(names(&st), all);
    let mut none = status_of(Vec::new(), 1_700_000_000);
    let e = select(&mut none, &["sdb".into()]).unwrap_err();
    assert!(e.to_string().ends_with("it reports no disks yet"), "{e}");
}

/// A running daemon's disks hold no power state from before the boot: an
/// active disk whose last decision came two days ago, before a reboot an
/// hour ago, is active for at least the hour; later times, absent and
/// unwatched disks keep theirs.
#[test]
fn no_power_state_is_older_than_the_boot() {
    let now = 1_700_000_000;
    let booted = now - 3_600;
    let disk = |name: &str, power: &str, since: u64, exact: bool| DiskStatus {
        disk: name.into(),
        kernel_name: name.into(),
        power: power.into(),
        since_unix: Some(since),
        since_exact: exact,
        ..scene().disks[1].clone()
    };
    let mut disks = vec![
        disk("sda", "active", now - 172_800, false),
        disk("sdb", "standby", now - 7_200, true),
        disk("sdc", "active", now - 60, true),
        disk("sdd", "absent", now - 7_200, true),
        disk("sde", "unwatched", now - 7_200, true),
    ];
    since_the_boot(&mut disks, booted);
    let got: Vec<(Option<u64>, bool)> = disks
        .iter()
        .map(|d| (d.since_unix, d.since_exact))
        .collect();
    assert_eq!(
        got,
        [
            (Some(booted), false),
            (Some(booted), false),
            (Some(now - 60), true),
            (Some(now - 7_200), true),
            (Some(now - 7_200), true),
        ]
    );
    let text = render_text(&status_of(disks, now));
    assert!(
        text.contains("  power       active for at least 1h\n"),
        "{text}"
    );
}
