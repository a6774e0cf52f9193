//! Where status reads from: a scrape parsed back, metrics combined with
//! the state file and the config, which state file, the disks and their
//! order, and the disks asked for by name.

use super::*;

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

/// The captured scrape read into snapshots: one per disk, each metric in
/// its field, and the snapshot kept whole through JSON.
#[test]
fn a_scrape_reads_into_one_snapshot_per_disk() {
    let snaps = snapshots(&parse_metrics(CAPTURED).unwrap());
    assert_eq!(snaps.len(), 2, "{snaps:?}");
    let d = &snaps[0];
    assert_eq!(d.disk, DISK);
    assert_eq!(d.spindowns, Some(5));
    assert_eq!(
        d.nodes,
        vec![NodeValue {
            node: "adaptive-timer".into(),
            name: "timeout_s".into(),
            value: 42.5
        }]
    );
    assert_eq!(d.wakeups, vec![("smbd".into(), 3), ("unknown".into(), 1)]);
    assert_eq!(d.last_wake, Some((1_699_999_970, Some("spinup".into()))));
    assert_eq!(snaps[1].disk, "sdb");
    assert_eq!(snaps[1].present, Some(false));
    assert_eq!(snaps[1].task_running, None);
    assert_eq!(snaps[1].jobs[0].name, "scrub");
    let json = serde_json::to_string(d).unwrap();
    let back: DiskSnapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, d);
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
        day: 0,
        spent: 0,
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
    let text = crate::metrics::render_snapshot(&DaemonSnapshot::build(
        &state,
        &exported,
        &[standby_gauges("sda", None)],
        1,
        false,
    ));
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

/// Wakers an older daemon counted under each kernel worker's instance
/// name (its state file, or the last textfile it left) are shown counted
/// by the worker's work, as the daemon counts them now.
#[test]
fn wakers_are_shown_counted_by_the_worker_s_work() {
    let (cfg, mut state, now) = one_standby_disk();
    let d = state.disk("sda");
    for (comm, n) in [
        ("kworker/u8:4-sda", 22),
        ("kworker/u8:2-sda", 17),
        ("smbd", 5),
    ] {
        d.wakeups.insert(comm.to_string(), n);
    }
    let want = [("kworker (sda)".to_string(), 39), ("smbd".to_string(), 5)];
    let from_state = combine(&cfg, &state, &[], false, now);
    assert_eq!(
        from_state[0]
            .wakeups
            .clone()
            .into_iter()
            .collect::<Vec<_>>(),
        want
    );
    let text = crate::metrics::render(&state, &[], 1, false);
    let from_metrics = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
    assert_eq!(
        from_metrics[0]
            .wakeups
            .clone()
            .into_iter()
            .collect::<Vec<_>>(),
        want
    );
}
