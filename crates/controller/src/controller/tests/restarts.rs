//! Restarts and the state file: what was learned, a standby or an idle
//! period taken up, the sessions.

use super::*;

#[test]
fn a_first_snapshot_of_what_was_learned_is_dated_when_the_daemon_stops() {
    // Stopped before any idle period ended: the snapshot `finish` keeps is
    // the first, dated by the stop's wall clock (it took the last
    // decision's, 0 here: "learned since 1970").
    // Quiet from the first poll: the idle period that begins there ends
    // only at the stop, where it counts as the shadow counts it (a run's
    // last period ends at its last instant).
    let (mut c, r) = controller("network = \"long-idle()\"\n");
    run(&mut c, &r, 0, 20, |_| 0);
    assert!(c.state().learned.is_none());
    assert_ne!(c.state().last_decision_unix, UNIX0 + 20);
    let mut out = Vec::new();
    c.finish(at(20), &mut out);
    let learned = c.state().learned.clone().expect("learned state kept");
    assert_eq!(learned.since_unix, UNIX0 + 20);
    assert_eq!(learned.idle_periods, 1);
}

#[test]
fn a_poll_from_the_past_is_taken_late_and_nothing_learned_is_lost() {
    let (mut c, r) = controller("network = \"long-idle()\"\nmax_spindowns_per_day = 1000\n");
    // Busy a second, then quiet for 3 s to 4 min, 40 times.
    let mut starts = Vec::new();
    let mut s = 0;
    for i in 0..40u64 {
        starts.push(s);
        s += 1 + 3 + (i * 37) % 240;
    }
    let ios = |t: u64| 10 * starts.iter().filter(|&&b| b <= t).count() as u64;
    run(&mut c, &r, 0, s, ios);
    let learned = c.state().learned.clone().expect("a snapshot");
    assert!(learned.idle_periods >= 30);
    // A poll from the past (a clock gone wrong): the engine takes its I/O
    // at its own time and counts it late. Before, it refused it, and the
    // controller rebuilt the engine from the last snapshot.
    let n = ios(s) + 10;
    run(&mut c, &r, s - 100, s - 99, |_| n);
    assert_eq!(c.state().errors, 0, "{}", c.state().last_decision);
    let late = c.engine.lateness();
    assert!(late.arrivals + late.completions > 0, "{late:?}");
    // Nothing learned is lost, and it goes on deciding.
    let after = c.state().learned.clone().unwrap();
    assert!(after.idle_periods >= learned.idle_periods);
    run(&mut c, &r, s + 1, s + 400, |t| {
        n + 10 * u64::from(t > s + 200)
    });
    assert_eq!(c.state().errors, 0);
    assert!(c.state().learned.as_ref().unwrap().idle_periods > after.idle_periods);
}

#[test]
fn a_restart_carries_a_periodic_job_s_wall_clock_phase() {
    // A job writes for a second every 300 s of wall time; `auto`'s model
    // learns it over 3 hours. The daemon stops at 10800 s and starts again
    // at 11000 s (wall): the job's next run, at 11100 s, is 100 s after the
    // restart. Restored as if no time had passed it would be due at once.
    let disk = "network = \"long-idle()\"\nmax_spindowns_per_day = 1000\n";
    let (mut c, r) = controller(disk);
    let jobs = |wall: u64| 10 * (wall / 300 + u64::from(wall % 300 >= 1));
    let stop = 10_800;
    run(&mut c, &r, 0, stop, jobs);
    let next_in = |c: &DiskController| {
        c.gauges(Nanos::ZERO)
            .nodes
            .iter()
            .find(|(_, name, _)| name == "periodic_next_in_s")
            .map(|g| g.2)
            .expect("the gauge")
    };
    let mut out = Vec::new();
    c.finish(at(stop), &mut out);
    let st = c.state().clone();
    let restart = 11_000;
    let (cfg, family) = sdb(disk, &r);
    // The new daemon's clock starts at the restart (wall nanoseconds).
    let settings = Settings {
        clock: Nanos::from_secs(restart),
        ..c.settings
    };
    let mut d =
        DiskController::new(&r, &cfg, "sdb", "sdb", family, 2, st, settings, Nanos::ZERO).unwrap();
    // Quiet from the restart: the idle period that begins within a few
    // polls expects the job about 100 s on (less the window's half width,
    // 300/128 s, and the few seconds to the period's start).
    let base = jobs(restart);
    run(&mut d, &r, 0, 30, |t| {
        base + jobs(restart + t) - jobs(restart)
    });
    let n = next_in(&d);
    assert!((90.0..100.0).contains(&n), "next periodic arrival in {n} s");
}

#[test]
fn what_the_network_learned_survives_a_restart_and_only_into_the_same_network() {
    // Issue 32: `long-idle` (what `auto` is) learns over idle periods; a
    // controller built with the state the last one left continues with it.
    let disk = "network = \"long-idle()\"\nmax_spindowns_per_day = 1000\n";
    let (mut c, r) = controller(disk);
    // Busy a second, then quiet for 3 s to 4 min, 40 times.
    let mut starts = Vec::new();
    let mut s = 0;
    for i in 0..40u64 {
        starts.push(s);
        s += 1 + 3 + (i * 37) % 240;
    }
    run(&mut c, &r, 0, s, |t| {
        10 * starts.iter().filter(|&&b| b <= t).count() as u64
    });
    let mut out = Vec::new();
    c.finish(at(s), &mut out);
    let st = c.state().clone();
    let learned = st.learned.clone().expect("learned state kept");
    assert!(learned.idle_periods >= 30, "{}", learned.idle_periods);
    assert_eq!(learned.network, "long-idle()");
    // Through the state file's JSON and back.
    let json = serde_json::to_string(&st).unwrap();
    let back: DiskState = serde_json::from_str(&json).unwrap();
    assert_eq!(back.learned, st.learned);
    let (cfg, family) = sdb(disk, &r);
    let settings = c.settings;
    let now = Nanos::from_secs(s + 100);
    let build = |st: DiskState, cfg: &DiskConfig| {
        DiskController::new(&r, cfg, "sdb", "sdb", family.clone(), 2, st, settings, now).unwrap()
    };
    // The last run's idle period and next decision are not this one's.
    let mut stale = back.clone();
    (stale.idle_since_unix, stale.next_decision_unix) = (Some(UNIX0 + s - 20), Some(UNIX0 + s + 5));
    let restarted = build(stale, &cfg);
    assert_eq!(restarted.state().idle_since_unix, None);
    assert_eq!(restarted.state().next_decision_unix, None);
    let mut d = build(back.clone(), &cfg);
    // Restored at the engine's time zero; its saved times count from there.
    let restored = d.engine.save_learned();
    let fresh_again = build(back.clone(), &cfg).engine.save_learned();
    assert_eq!(restored, fresh_again);
    assert_eq!(restored.len(), learned.parts.len());
    // It runs on from the first poll (whose events come before the
    // instant it was built) with no engine error.
    let errors = d.state().errors;
    run(&mut d, &r, 0, 30, |t| 10 * u64::from(t > 3));
    assert_eq!(d.state().errors, errors, "{}", d.state().last_decision);
    // Its own idle period (quiet since the I/O at second 4) is kept.
    let since = d.state().idle_since_unix.expect("idle since the last I/O");
    assert!((UNIX0 + 4..=UNIX0 + 6).contains(&since), "{since}");
    // The count goes on from the restored one: one more, the idle period
    // from its first poll to the I/O at second 4.
    assert_eq!(
        d.state().learned.as_ref().map(|l| l.idle_periods),
        Some(learned.idle_periods + 1)
    );
    let fresh = build(DiskState::default(), &cfg);
    assert_ne!(
        fresh.engine.save_learned(),
        learned.parts,
        "it had learned something"
    );
    // Another network, or damaged values: a cold start, no panic.
    let other = Config::parse(
        std::path::Path::new("lull.toml"),
        "[[disk]]\ndevice = \"sdb\"\nnetwork = \"share()\"\n",
        &r,
    )
    .unwrap();
    let e = build(back.clone(), &other.disks[0]);
    assert!(e.state().learned.is_none());
    let mut damaged = back.clone();
    if let Some(l) = damaged.learned.as_mut() {
        for p in l.parts.iter_mut().flatten() {
            p.values.truncate(p.values.len() / 2);
        }
    }
    let f = build(damaged, &cfg);
    assert!(f.state().learned.is_none());
    assert_eq!(
        f.engine.save_learned(),
        fresh.engine.save_learned(),
        "a cold start"
    );
}

// The activity log's sessions name the drive by its serial number's hash,
// so that its evidence is kept apart from another drive's under the key.
#[test]
fn sessions_name_the_drive_by_its_serial_number() {
    let (c, r) = controller("network = \"timer(5s)\"\n");
    assert_eq!(c.session().drive_id, None, "no serial number known");
    let (cfg, family) = sdb("network = \"timer(5s)\"\n", &r);
    let with = |serial: &str| {
        let st = DiskState {
            identity: Some(crate::identify::Identity {
                serial: Some(serial.into()),
                ..Default::default()
            }),
            ..DiskState::default()
        };
        with_state(&r, &cfg, family.clone(), st, c.settings).session()
    };
    let (x, y) = (with("WD-WCC7K0000001"), with("WD-WCC7K0000002"));
    assert_eq!(x.drive_id, Some(lull_activity::drive_id("WD-WCC7K0000001")));
    assert_ne!(x.drive_id, y.drive_id);
    assert_eq!(x.key, y.key);
}

#[test]
fn the_shadow_has_watched_up_to_the_last_poll() {
    // Busy for 5 s, then quiet: quiet polls write no record but a mark a
    // minute, and the time watched still reaches the last poll.
    let (mut c, r) = controller("");
    run(&mut c, &r, 0, 200, |s| 10 * s.min(5));
    let shadow = c.shadow().expect("a standby disk has a shadow");
    for w in &shadow.windows {
        assert_eq!(w.observed_s, 199.0, "{}", w.window);
    }
    // And what a replay of the log books, once the next record comes,
    // is the same: a mark at 260 s.
    run(&mut c, &r, 200, 261, |_| 50);
    let w = &c.shadow().unwrap().windows[1];
    assert_eq!(w.observed_s, 260.0);
}

/// The daemon restarted while the drive slept after its own spin-down
/// (an upgrade, `systemctl restart`): its first power check finds the
/// drive asleep, which is the previous run's standby, not one by
/// "something else" (no program is looked for and none is named, though
/// an hd-idle runs), dated from the previous run's spin-down; I/O then
/// counts a spin-up. Awake at the first check instead, the state stops
/// saying standby at once.
#[test]
fn a_restart_while_asleep_takes_up_the_previous_run_s_standby() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n";
    let (mut c, r) = controller(disk);
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    let st = c.state_at(Nanos::from_secs(20));
    assert_eq!(st.standby_unix, Some(UNIX0 + 10));
    // The file the status reads says standby, and since when.
    let json = serde_json::to_string(&st).unwrap();
    let st: DiskState = serde_json::from_str(&json).unwrap();
    assert_eq!(st.standby_unix, Some(UNIX0 + 10));

    let (cfg, family) = sdb(disk, &r);
    let restarted = |st: &DiskState| with_state(&r, &cfg, family.clone(), st.clone(), c.settings);
    let mut d = restarted(&st);
    // Before any check, the metrics say standby since the spin-down.
    let g = d.gauges(Nanos::from_secs(25));
    assert!(g.in_standby);
    assert_eq!(g.power_since_unix, Some(UNIX0 + 10));
    let mut w = HdIdleBeside::default();
    let mut out = Vec::new();
    d.on_outcome(
        at(30),
        Outcome::Power(PowerState::Standby),
        true,
        &mut w,
        &mut out,
    );
    assert!(d.in_standby());
    assert_eq!(
        d.state().last_decision,
        "still in standby, as before the daemon's restart or reload"
    );
    assert!(w.0.is_empty(), "no program looked for: {:?}", w.0);
    assert_eq!(d.state().standby_unix, Some(UNIX0 + 10));
    assert_eq!(d.power.since_unix(), Some(UNIX0 + 10));
    assert!(d.take_changes().1);
    // I/O: the drive spun up from the previous run's standby.
    let spinups = d.state().spinups;
    run(&mut d, &r, 31, 34, |s| s * 10);
    assert_eq!(d.state().spinups, spinups + 1);
    assert!(!d.in_standby());
    assert_eq!(d.state().standby_unix, None);

    // Lull's own standby after the restart finds it asleep still: the
    // same, without a program named.
    let mut d = restarted(&st);
    d.on_outcome(at(30), Outcome::AlreadyStandby, true, &mut w, &mut out);
    assert_eq!(
        d.state().last_decision,
        "standby: the drive was still in standby, as before the daemon's restart or reload"
    );
    assert!(w.0.is_empty(), "no program looked for: {:?}", w.0);
    assert!(d.in_standby());

    // Awake at the first check: woken while no daemon watched.
    let mut d = restarted(&st);
    d.take_changes();
    d.on_outcome(
        at(30),
        Outcome::Power(PowerState::Active),
        true,
        &mut w,
        &mut out,
    );
    assert!(!d.in_standby());
    assert_eq!(d.state().standby_unix, None);
    assert!(d.take_changes().1);
    // A drive found asleep later is one something else spun down.
    d.on_outcome(
        at(40),
        Outcome::Power(PowerState::Standby),
        true,
        &mut w,
        &mut out,
    );
    assert_eq!(
        d.state().last_decision,
        "found in standby (spun down by something else: hd-idle (pid 652))"
    );
}

/// Restarted (or reloaded) while the drive sleeps after lull's spin-down,
/// with nothing to ask it (`backend = "hdparm"`): the state file's
/// standby is taken up at the first poll. The network's timeout then
/// sends no second standby (a trial's daemon sent `hdparm -y` again,
/// counted spin-down 16 against 12 spin-ups, and spent a wear token per
/// sleeping disk at each restart), and the I/O that wakes the drive is
/// one spin-up; the idle period after it spins it down again.
#[test]
fn a_restart_while_asleep_without_power_checks_takes_up_the_standby_from_the_state_file() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\nbackend = \"hdparm\"\n";
    let (mut c, r) = controller(disk);
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    c.finish(at(20), &mut Vec::new());
    let st = c.into_state();
    assert_eq!((st.spindowns, st.spinups), (1, 0));

    let (cfg, family) = sdb(disk, &r);
    let settings = settings(Nanos::from_secs(60));
    // Without the stop's time (an older lull's mark), or a run that does
    // not continue (another boot): this run's standby counts from its
    // takeover, as before.
    for (case, boot_id, stopped_unix) in [
        ("older mark", Some(BOOT), None),
        ("another boot", Some(BOOT + 1), Some(UNIX0 + 20)),
    ] {
        let mut older = st.clone();
        older
            .idle_at_stop
            .as_mut()
            .expect("idle at the stop")
            .stopped_unix = stopped_unix;
        let settings = Settings {
            boot_id,
            ..settings
        };
        let mut e = with_state(&r, &cfg, family.clone(), older, settings);
        run(&mut e, &r, 30, 90, |_| 100);
        run(&mut e, &r, 90, 93, |s| 100 + s);
        assert_eq!(e.state().standby_s, 70.0, "{case}");
    }
    assert_eq!(
        st.idle_at_stop.as_ref().and_then(|m| m.stopped_unix),
        Some(UNIX0 + 20)
    );
    let mut d = with_state(&r, &cfg, family, st, settings);
    // Quiet for a minute: no standby goes out, the drive stays asleep.
    let outs = run(&mut d, &r, 30, 90, |_| 100);
    assert_eq!(standby_orders(&outs), Vec::<u64>::new());
    // The run continues the idle period (the disk untouched): the standby
    // counts through the 10 s no daemon ran (20 to 30), as the evidence
    // has the period asleep throughout.
    assert_eq!(session_of(&outs).map(|s| s.continues), Some(true));
    assert_eq!(d.state().standby_s, 20.0);
    assert!(d.in_standby());
    assert_eq!(d.state().spindowns, 1);
    assert_eq!(d.state().spindown_attempts_unix, vec![UNIX0 + 10]);
    assert_eq!(
        d.state().last_decision,
        "skip standby: the drive is in standby already"
    );
    assert_eq!(
        d.gauges(Nanos::from_secs(90)).power_since_unix,
        Some(UNIX0 + 10)
    );
    // I/O: one spin-up, from the previous run's standby.
    run(&mut d, &r, 90, 93, |s| 100 + s);
    assert_eq!((d.state().spindowns, d.state().spinups), (1, 1));
    // The whole standby, from the spin-down at 10 to the wake at 90.
    assert_eq!(d.state().standby_s, 80.0);
    assert!(!d.in_standby());
    // Quiet again: spun down after the timeout, as before the restart.
    let outs = run(&mut d, &r, 93, 105, |_| 200);
    assert_eq!(standby_orders(&outs), vec![98]);
}

/// A standby the previous run left is not taken up when the disk did I/O
/// while no daemon watched (its diskstats counters moved since): a disk a
/// reload removed, used, then added back showed "in standby since before
/// the reload" and booked a spin-up for a drive that was awake (a NAS
/// trial). It is over, counted as the spin-up it was, and the network's
/// timeout spins the drive down again.
#[test]
fn a_standby_whose_disk_did_io_unwatched_is_not_taken_up() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\nbackend = \"hdparm\"\n";
    for moved in [false, true] {
        let (mut c, r) = controller(disk);
        let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
        assert_eq!(standby_orders(&outs), vec![10]);
        report(&mut c, 10, Outcome::SpunDown("ok".into()));
        // Quiet polls in standby: the counters are kept with it.
        run(&mut c, &r, 12, 15, |_| 100);
        assert_eq!(c.state().standby_io, Some(100));
        c.finish(at(20), &mut Vec::new());
        let st = c.into_state();
        let (cfg, family) = sdb(disk, &r);
        let settings = settings(Nanos::ZERO);
        let mut d = with_state(&r, &cfg, family, st, settings);
        let ios = if moved { 107 } else { 100 };
        let outs = run(&mut d, &r, 30, 45, |_| ios);
        if moved {
            assert!(!d.in_standby());
            assert_eq!((d.state().spindowns, d.state().spinups), (1, 1));
            assert_eq!(d.state().standby_unix, None);
            // Quiet from the first poll: spun down at the timeout.
            assert_eq!(standby_orders(&outs), vec![35]);
        } else {
            assert!(d.in_standby());
            assert_eq!((d.state().spindowns, d.state().spinups), (1, 0));
            assert_eq!(standby_orders(&outs), Vec::<u64>::new());
        }
    }
}

/// Restarted while the drive sleeps after lull's spin-down, with power
/// checks on: the first poll asks the drive at once (before, the first
/// check went out a `power_check` after the start), and I/O that comes
/// before the answer wakes the previous run's standby: one spin-up, a
/// wake from standby, and the standby counted through the downtime and
/// the seconds this run watched. Before, that I/O read as I/O "while the
/// daemon was not watching": the spin-up counted, but no wake, no hook,
/// and none of the standby.
#[test]
fn io_before_the_first_power_check_s_answer_wakes_the_previous_run_s_standby() {
    let disk =
        "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\non_spinup = [\"/bin/true\"]\n";
    let (mut c, r) = controller(disk);
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    run(&mut c, &r, 12, 15, |_| 100);
    c.finish(at(20), &mut Vec::new());
    let st = c.into_state();
    assert_eq!((st.spindowns, st.spinups, st.standby_s), (1, 0, 10.0));
    let (cfg, family) = sdb(disk, &r);
    let settings = settings(Nanos::from_secs(60));
    let checks = |outs: &[(u64, Output)]| -> Vec<u64> {
        outs.iter()
            .filter(|(_, o)| {
                matches!(
                    o,
                    Output::Order {
                        order: Order::CheckPower { .. },
                        ..
                    }
                )
            })
            .map(|(s, _)| *s)
            .collect()
    };
    let hooks = |outs: &[(u64, Output)]| {
        outs.iter()
            .filter(|(_, o)| {
                matches!(
                    o,
                    Output::Hook {
                        event: HookEvent::Spinup,
                        ..
                    }
                )
            })
            .count()
    };

    // Asleep as left: asked at the first poll, and only then until the
    // next `power_check`.
    let mut d = with_state(&r, &cfg, family.clone(), st.clone(), settings);
    let outs = run(&mut d, &r, 30, 33, |_| 100);
    assert_eq!(checks(&outs), vec![30]);
    assert!(
        !d.in_standby(),
        "the state file's standby, not yet taken up"
    );
    assert!(d.gauges(Nanos::from_secs(33)).in_standby);
    // I/O at 33, the answer still out.
    let outs = run(&mut d, &r, 33, 35, |s| 100 + s);
    assert_eq!((d.state().spindowns, d.state().spinups), (1, 1));
    assert!(!d.in_standby());
    assert_eq!(d.state().standby_unix, None);
    assert_eq!(
        d.state().last_wake.as_ref().map(|w| w.cause.as_str()),
        Some(Wake::SPINUP)
    );
    assert_eq!(hooks(&outs), 1, "the spin-up hook runs: {outs:?}");
    // From the spin-down at 10 to the wake at 33: the first run's 10 s,
    // the 10 s no daemon ran, and the 3 s this one watched.
    assert_eq!(d.state().standby_s, 23.0);
    // An answer that comes after the wake changes nothing.
    d.on_outcome(
        at(35),
        Outcome::Power(PowerState::Active),
        true,
        &mut NoWitness,
        &mut Vec::new(),
    );
    assert_eq!((d.state().spindowns, d.state().spinups), (1, 1));
    assert_eq!(d.state().standby_s, 23.0);

    // A disk awake after the previous run is asked a `power_check` after
    // the start, as before.
    let mut awake = st.clone();
    awake.standby_unix = None;
    let mut e = with_state(&r, &cfg, family, awake, settings);
    let outs = run(&mut e, &r, 30, 65, |s| 100 + s);
    assert_eq!(checks(&outs), vec![60]);
}

/// Wakers an older lull counted under each kernel worker's name are
/// counted by the worker's work after a restart: one `kworker (loop0)`,
/// not one entry per worker instance.
#[test]
fn wakers_counted_per_worker_instance_are_merged_at_a_restart() {
    let disk = "network = \"timer(5s)\"\n";
    let r = crate::default_registry();
    let (cfg, family) = sdb(disk, &r);
    let mut st = DiskState::default();
    for (comm, n) in [
        ("kworker/u8:4-loop0", 22),
        ("kworker/u8:2-loop0", 17),
        ("python3?", 5),
    ] {
        st.wakeups.insert(comm.to_string(), n);
    }
    let d = with_state(&r, &cfg, family, st, settings(Nanos::ZERO));
    let tally: Vec<(&str, u64)> = d
        .state()
        .wakeups
        .iter()
        .map(|(c, n)| (c.as_str(), *n))
        .collect();
    assert_eq!(tally, [("kworker (loop0)", 39), ("python3?", 5)]);
}

/// A stop (or a reload that replaces the controller) while the drive
/// sleeps keeps the standby so far in the entry it leaves, as the saves
/// before it counted it: the state file's time in standby never goes back.
#[test]
fn a_stop_in_standby_keeps_the_standby_so_far() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    run(&mut c, &r, 0, 12, busy_then_quiet);
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    let saved = c.state_at(Nanos::from_secs(25)).standby_s;
    assert_eq!(saved, 15.0);
    c.finish(at(30), &mut Vec::new());
    assert_eq!(c.state_at(Nanos::from_secs(30)).standby_s, 20.0);
    let st = c.into_state();
    assert_eq!(st.standby_s, 20.0);
    assert_eq!(st.standby_unix, Some(UNIX0 + 10));
}

/// The session a controller's outputs logged, if any.
fn session_of(outs: &[(u64, Output)]) -> Option<lull_activity::Session> {
    outs.iter().find_map(|(_, o)| match o {
        Output::Activity(Record::Session(s)) => Some(s.clone()),
        _ => None,
    })
}

/// A clean stop while the disk is idle writes where it stood
/// (`idle_at_stop`), and the next run takes the idle period up only in
/// the same boot, under the same kernel name, with the disk's completed
/// I/O unchanged and nothing in flight; any other start is a baseline.
/// The entry is taken at the start, used or not.
#[test]
fn a_restart_takes_the_idle_period_up_only_when_nothing_touched_the_disk() {
    let r = crate::default_registry();
    let (cfg, family) = sdb(
        "network = \"timer(600s)\"\ntask = \"standby\"\nmax_spindowns_per_day = 1000\n",
        &r,
    );
    // Busy to second 5, then quiet: idle (the timer not fired) at 20.
    let mut a = fresh(&r, &cfg, family.clone(), Nanos::ZERO);
    run(&mut a, &r, 0, 20, |s| s.min(5) * 10);
    let mut out = Vec::new();
    a.finish(at(20), &mut out);
    let st = a.state().clone();
    let mark = st.idle_at_stop.clone().expect("idle at the stop");
    assert_eq!(
        (mark.boot_id.as_str(), mark.io, mark.kernel.as_str()),
        (format!("{BOOT:032x}").as_str(), 50, "sdb")
    );
    // Busy at the stop: nothing to take up.
    let mut busy = fresh(&r, &cfg, family.clone(), Nanos::ZERO);
    run(&mut busy, &r, 0, 20, |s| s * 10);
    busy.finish(at(20), &mut Vec::new());
    assert_eq!(busy.state().idle_at_stop, None);

    let settings = |boot| Settings {
        power_check: Nanos::ZERO,
        dry_run: false,
        clock: Nanos::from_secs(100),
        poll: Nanos::from_secs(1),
        max_poll: Nanos::from_secs(1),
        boot_id: boot,
    };
    let diskstats = |ios: u64, in_flight: u64| {
        move |_| format!("8 16 sdb {ios} 0 {} 0 0 0 0 0 {in_flight} 0 0\n", ios * 8)
    };
    // (boot, the disk's I/O at the new run's first poll, in flight): continues?
    for (boot, ios, in_flight, continues) in [
        (Some(BOOT), 50, 0, true),
        (Some(BOOT + 1), 50, 0, false),
        (None, 50, 0, false),
        (Some(BOOT), 51, 0, false),
        (Some(BOOT), 50, 1, false),
    ] {
        let mut b = with_state(&r, &cfg, family.clone(), st.clone(), settings(boot));
        // Taken at the start: no later save keeps it.
        assert_eq!(b.state().idle_at_stop, None);
        let outs = drive(&mut b, &r, 0, 3, diskstats(ios, in_flight));
        let case = format!("{boot:?} {ios} {in_flight}");
        let s = session_of(&outs).expect("a session at the first poll");
        assert_eq!(s.continues, continues, "{case}");
        let baseline = outs.iter().any(|(_, o)| {
            matches!(o, Output::Activity(Record::Poll(p)) if p.kind == lull_activity::PollKind::Baseline)
        });
        assert_eq!(baseline, !continues, "{case}");
        // Idle from its first poll either way (a baseline is a request
        // just completed; a continued run is idle from its takeover).
        assert_eq!(b.state().idle_at_stop, None, "{case}");
    }
    // The run that took the idle period up shows it idle since the first
    // run saw it begin (its last I/O, at second 5), not since the takeover, however long the daemon
    // was down; so does the next run's mark at its own stop.
    let first_idle = st.idle_since_unix.expect("idle at the stop");
    assert_eq!(first_idle, UNIX0 + 5);
    assert_eq!(mark.idle_since_unix, Some(first_idle));
    let mut b = with_state(&r, &cfg, family.clone(), st.clone(), settings(Some(BOOT)));
    let later = |s: u64| Now {
        mono: Nanos::from_secs(s),
        unix: UNIX0 + 600 + s,
    };
    drive_at(&mut b, &r, 0..3, later, diskstats(50, 0));
    assert_eq!(b.state().idle_since_unix, Some(first_idle));
    // Hooks' LULL_IDLE_S counts the same: 600 + 2 − 5 s at the third poll.
    assert_eq!(b.idle_len(later(2)), Some(Nanos::from_secs(597)));
    b.finish(later(3), &mut Vec::new());
    let again = b
        .state()
        .idle_at_stop
        .clone()
        .expect("idle at the second stop");
    assert_eq!(again.idle_since_unix, Some(first_idle));
    // Under another kernel name (the drive came back as sdc): a baseline.
    let moved = Family {
        disk: "sdc".into(),
        ..family.clone()
    };
    let mut c = DiskController::new(
        &r,
        &cfg,
        "sdb",
        "sdc",
        moved,
        1,
        st.clone(),
        settings(Some(BOOT)),
        Nanos::ZERO,
    )
    .unwrap();
    let outs = drive(&mut c, &r, 0, 3, |_| {
        "8 32 sdc 50 0 400 0 0 0 0 0 0 0 0\n".into()
    });
    assert!(!session_of(&outs).unwrap().continues);
}
