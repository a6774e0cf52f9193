//! The power state and how long the disk has been in it, and the idle
//! period: from the metrics when they have it, else bounded by the state
//! file (its decisions and wakes) and the boot.

use super::*;

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

/// A stopped daemon's last textfile has the disks' counters but no
/// controller's gauges (no `lull_in_standby`): the power state is the
/// state file's, as the last run left it. Before, the metrics' presence
/// alone made a disk the last run left asleep read "active for at least
/// 4m37s" (a loop trial, stopped after a spin-down).
#[test]
fn a_stopped_daemon_s_textfile_leaves_the_power_state_to_the_state_file() {
    let (cfg, mut state, now) = one_standby_disk();
    let d = state.disk("sda");
    d.last_decision = "standby done (hdparm -y)".into();
    d.last_decision_unix = now - 277;
    d.standby_unix = Some(now - 277);
    d.last_wake = Some(crate::state::Wake {
        unix: now - 278,
        cause: crate::state::Wake::SPINUP.into(),
        by: Vec::new(),
    });
    // What the daemon writes at its stop: no controllers, no gauges.
    let text = crate::metrics::render(&state, &[], 1, false);
    assert!(!text.contains("lull_in_standby{"), "{text}");
    assert!(text.contains("lull_spinups_total{disk=\"sda\"}"), "{text}");
    let d = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!(d[0].power, "standby");
    assert_eq!((d[0].since_unix, d[0].since_exact), (Some(now - 277), true));
    // Woken since (the state file's standby cleared): active, since the
    // wake.
    let d = state.disk("sda");
    d.standby_unix = None;
    d.last_wake = Some(crate::state::Wake {
        unix: now - 60,
        cause: crate::state::Wake::SPINUP.into(),
        by: Vec::new(),
    });
    let text = crate::metrics::render(&state, &[], 1, false);
    let d = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!(d[0].power, "active");
    assert_eq!(d[0].since_unix, Some(now - 60));
}
