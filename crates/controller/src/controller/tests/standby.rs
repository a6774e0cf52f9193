//! Standbys: timers, the wear budget, failures, power checks, the break-
//! even check, what `lull status` shows.

use super::*;

#[test]
fn a_timer_orders_standby_after_its_timeout_and_counts_it() {
    let (mut c, r) = controller("network = \"timer(10s)\"\nmax_spindowns_per_day = 1000\n");
    let outs = run(&mut c, &r, 0, 30, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![15]);
    let st = c.state();
    // Two idle periods, as the engine sees them: from the first poll (a
    // baseline) to the I/O at second 1, and from second 5 on.
    assert_eq!((st.idle_starts, st.task_starts), (2, 1));
    assert_eq!(st.spindown_attempts_unix, vec![UNIX0 + 15]);
    assert!(
        st.last_decision.starts_with("standby"),
        "{}",
        st.last_decision
    );
    let (changed, urgent) = c.take_changes();
    assert!(changed && urgent, "a spin-down attempt is written at once");
    assert_eq!(c.take_changes(), (false, false));
    // A dry run's outcome too: the state must not go on reading "standby"
    // (`lull status` without metrics showed the disk asleep).
    report(&mut c, 15, Outcome::DryRun("spin /dev/sdb down".into()));
    assert_eq!(c.take_changes(), (true, true));
    assert_eq!(c.state().last_decision, "dry run: would spin /dev/sdb down");
    assert!(!c.in_standby());
    // A skip for a new reason is written at once; the same again waits.
    let skip = |c: &mut DiskController, why: &str| {
        report(c, 16, Outcome::Skipped(why.into()));
        c.take_changes()
    };
    assert_eq!(
        skip(&mut c, "skip standby: no transport reaches the drive"),
        (true, true)
    );
    assert_eq!(
        skip(&mut c, "skip standby: no transport reaches the drive"),
        (true, false)
    );
    assert_eq!(
        skip(&mut c, "skip standby: the disk is absent"),
        (true, true)
    );
}

#[test]
fn the_wear_budget_refuses_a_standby_and_says_when_the_next_comes() {
    // One a day: a bucket of one token, refilled over 24 h.
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1\n");
    let first = run(&mut c, &r, 0, 20, busy_then_quiet);
    assert_eq!(standby_orders(&first), vec![10]);
    // The drive went down; I/O wakes it, then it is idle again.
    report(&mut c, 11, Outcome::SpunDown("test".into()));
    // Idle from 25 on (refused at 30), then I/O again at 40.
    let second = run(&mut c, &r, 20, 45, |s| {
        100 + 20 * s.min(25) + 20 * u64::from(s >= 40)
    });
    assert!(standby_orders(&second).is_empty(), "{second:?}");
    let st = c.state();
    assert_eq!(st.spinups, 1);
    assert_eq!(st.task_starts, 2);
    // The refusal outlives the I/O that ended its idle period: the start
    // stopped nothing (the last decision read "stop standby: disk busy or
    // prediction over", hiding why the disk stayed up).
    assert!(
        st.last_decision
            .starts_with("skip standby: wear budget (1 spin-downs a day"),
        "{}",
        st.last_decision
    );
}

/// A standby that ran is stopped at the I/O that ends its idle period
/// (one that was refused is not: the wear budget's test).
#[test]
fn a_standby_that_ran_is_stopped_by_io() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 10\n");
    run(&mut c, &r, 0, 20, busy_then_quiet);
    report(&mut c, 11, Outcome::SpunDown("test".into()));
    run(&mut c, &r, 20, 22, |s| 100 + 20 * s);
    assert_eq!(
        c.state().last_decision,
        "stop standby: disk busy or prediction over"
    );
}

#[test]
fn repeated_failures_back_off_and_success_resets() {
    let (mut c, r) = controller("network = \"timer(2s)\"\nmax_spindowns_per_day = 1000\n");
    let mut t = 0;
    let mut orders = 0;
    // Three idle periods, each standby failing.
    for _ in 0..3 {
        let outs = run(
            &mut c,
            &r,
            t,
            t + 10,
            |s| if s < t + 3 { 10 * s } else { 10 * (t + 3) } + 1000 * orders,
        );
        let sent = standby_orders(&outs);
        assert_eq!(sent.len(), 1, "{outs:?}");
        orders += 1;
        c.take_changes();
        report(&mut c, sent[0], Outcome::Failed("refused".into()));
        // Written at once: the decision, already written, read "standby".
        assert_eq!(c.take_changes(), (true, true));
        t += 10;
    }
    assert_eq!(c.state().errors, 3);
    // The fourth idle period: refused, next try in a minute.
    let outs = run(
        &mut c,
        &r,
        t,
        t + 10,
        |s| if s < t + 3 { 10 * s } else { 10 * (t + 3) } + 1000 * orders,
    );
    assert!(standby_orders(&outs).is_empty());
    assert!(
        c.state().last_decision.contains("failed 3 times in a row"),
        "{}",
        c.state().last_decision
    );
    // After the back-off, a success resets the count.
    t += 70;
    let outs = run(
        &mut c,
        &r,
        t,
        t + 10,
        |s| if s < t + 3 { 10 * s } else { 10 * (t + 3) } + 5000,
    );
    let sent = standby_orders(&outs);
    assert_eq!(sent.len(), 1);
    report(&mut c, sent[0], Outcome::SpunDown("ok".into()));
    assert!(c.in_standby());
    assert_eq!(c.standby.failures(), 0);
}

#[test]
fn a_foreign_spin_up_is_counted_and_hooked_with_the_time_asleep() {
    let (mut c, r) = controller(
        "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\non_spinup = [\"/bin/true\"]\n",
    );
    run(&mut c, &r, 0, 12, busy_then_quiet);
    // No change of power state seen yet: when this one began is unknown.
    assert_eq!(c.gauges(at(11).mono).power_since_unix, None);
    report(&mut c, 11, Outcome::SpunDown("ok".into()));
    let since = |c: &DiskController| c.gauges(at(50).mono).power_since_unix;
    assert_eq!(since(&c), Some(at(11).unix));
    let out = report(&mut c, 41, Outcome::Power(PowerState::Active));
    assert_eq!(since(&c), Some(at(41).unix));
    let st = c.state();
    assert_eq!((st.spinups, st.foreign_spinups), (1, 1));
    assert!((st.standby_s - 30.0).abs() < 1e-9, "{}", st.standby_s);
    assert_eq!(st.last_wake.as_ref().unwrap().cause, Wake::FOREIGN);
    let hooks: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Hook { event, env } => Some((*event, env.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].0, HookEvent::Spinup);
    assert!(
        hooks[0]
            .1
            .contains(&("LULL_STANDBY_S", "30.000".to_string())),
        "{hooks:?}"
    );
    assert!(!c.in_standby());
}

/// A `timer(5s)` controller for a drive whose APM level (127) lets it
/// spin itself down.
fn with_apm_127(r: &Registry, settings: Settings) -> DiskController {
    let (cfg, family) = sdb("network = \"timer(5s)\"\n", r);
    let st = DiskState {
        identity: Some(crate::identify::Identity {
            apm: Some(crate::identify::Apm::Level(127)),
            ..Default::default()
        }),
        ..DiskState::default()
    };
    with_state(r, &cfg, family, st, settings)
}

#[test]
fn a_disk_found_in_standby_names_the_drive_s_own_apm() {
    // Quiet after second 3, then CHECK POWER MODE finds it asleep.
    let found = |c: &mut DiskController, r: &Registry| {
        run(c, r, 0, 3, busy_then_quiet);
        report(c, 3, Outcome::Power(PowerState::Standby));
        assert!(c.in_standby());
        c.state().last_decision.clone()
    };
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    assert_eq!(
        found(&mut c, &r),
        "found in standby (spun down by something else)"
    );
    // Seen busy, then found asleep: asleep since about the check.
    assert_eq!(c.gauges(at(9).mono).power_since_unix, Some(at(3).unix));
    // Found asleep before it was ever seen awake: since when is unknown.
    let (mut fresh, _) = controller("network = \"timer(5s)\"\n");
    report(&mut fresh, 1, Outcome::Power(PowerState::Standby));
    assert!(fresh.in_standby());
    assert_eq!(fresh.gauges(at(9).mono).power_since_unix, None);
    // The same, for a drive whose APM level lets it spin itself down.
    let mut d = with_apm_127(&r, c.settings);
    assert_eq!(
        found(&mut d, &r),
        "found in standby (spun down by something else: the drive's APM level 127 lets it spin itself down)"
    );
}

#[test]
fn a_report_of_an_older_actor_counts_but_changes_no_live_state() {
    let (mut c, _) = controller("network = \"timer(5s)\"\non_spindown = [\"/bin/true\"]\n");
    let mut out = Vec::new();
    c.on_outcome(
        at(3),
        Outcome::SpunDown("ok".into()),
        false,
        &mut NoWitness,
        &mut out,
    );
    assert_eq!(c.state().spindowns, 1);
    assert!(!c.in_standby());
    assert!(out.is_empty(), "no hook for a retired actor: {out:?}");
}

#[test]
fn the_break_even_check_refuses_a_prediction_too_short_for_the_drive() {
    // wd-red-plus: B of about a minute; the network predicts 5 s of idle.
    let (mut c, r) = controller(
        "network = \"timer(2s) + fixed(5s)\"\npreset = \"wd-red-plus\"\nmax_spindowns_per_day = 1000\n",
    );
    // Idle from 5 s, the timer fires at 7 s (the prediction runs to 12 s).
    let outs = run(&mut c, &r, 0, 10, busy_then_quiet);
    assert!(standby_orders(&outs).is_empty());
    assert!(
        c.state().last_decision.contains("below the break-even"),
        "{}",
        c.state().last_decision
    );
    // The engine did decide: the decision is reported, the order is not.
    assert!(
        outs.iter()
            .any(|(_, o)| matches!(o, Output::Decided(Intent::Start { .. })))
    );
}

/// The daily summary line: what lull saved against hd-idle's 10 minutes,
/// the user's own timeout when configured, the best fixed timeout and the
/// oracle; nothing before an idle period ended.
#[test]
fn the_daily_summary_names_every_reference() {
    use lull_activity::{Counts, Poll, PollKind, Record, Session, Shadow};
    let model = lull_tasks::PowerModel::preset("wd-red-plus").unwrap();
    let s = Nanos::from_secs;
    let line = |yours: Option<Nanos>| {
        let mut sh = Shadow::new(model.clone(), model.break_even());
        if let Some(t) = yours {
            sh = sh.with_your_timeout(t);
        }
        sh.feed(&Record::Session(Session {
            clock: s(1_700_000_000),
            ..Session::default()
        }));
        sh.feed(&Record::Poll(Poll {
            t0: s(1),
            t: s(1),
            kind: PollKind::Baseline,
            ..Poll::default()
        }));
        sh.settle();
        assert_eq!(super::summary_line(&sh.report()), None);
        sh.feed(&Record::Standby(s(300)));
        sh.feed(&Record::Poll(Poll {
            t0: s(1999),
            t: s(2000),
            counts: Counts {
                reads: 1,
                ..Counts::default()
            },
            ..Poll::default()
        }));
        sh.settle();
        super::summary_line(&sh.report()).unwrap()
    };
    let plain = line(None);
    for part in [
        "last 24 h: lull saved ",
        "with 1 spin-ups",
        "hd-idle's 10 min would have saved ",
        "the best fixed timeout (0s) 1.55 Wh (1)",
        "the oracle ",
    ] {
        assert!(plain.contains(part), "{part} in {plain}");
    }
    assert!(!plain.contains("your timeout"), "{plain}");
    // A 25-minute timeout sleeps the last 498 s of the 1998 s period.
    let yours = line(Some(s(1500)));
    assert!(yours.contains("your timeout (25m) "), "{yours}");
    assert!(yours.contains(" Wh (1), the best fixed"), "{yours}");
}

// Tried on a loop device with the paper drive (B = 3 s, poll 1 s): a poll
// that found two writes, a tenth of a second apart in the kernel's count
// of busy time, was spread into two requests with half a second between
// them; the engine's timer fired in that gap, and the controller sent
// `hdparm -y` at the poll, after the I/O it had just seen (and a second
// at the next poll), spending two of the wear budget's tokens on one
// idle period. A decision about an idle period that the same poll's I/O
// already ended is a decision about the past: it is skipped, as a replay
// of the log skips it.
#[test]
fn a_decision_the_same_poll_s_io_overtook_is_not_sent() {
    let (mut c, r) = controller("network = \"timer(300ms)\"\nmax_spindowns_per_day = 1000\n");
    // Two operations at second 3 with 2 ms of busy time; quiet otherwise.
    let line = |s: u64| {
        let (n, io) = if s >= 3 { (2, 2) } else { (0, 0) };
        format!("8 16 sdb {n} 0 {} 0 0 0 0 0 0 {io} 0\n", n * 8)
    };
    let outs = drive(&mut c, &r, 0, 6, line);
    // The idle period from the baseline on: its timer fired at 0.3 s, sent
    // at the poll of second 1. The poll of second 3 ended the period from
    // second 1 (its timer had already spun the disk down: a wake) and held
    // two in-poll gaps whose timers the same poll overtook; the period
    // from second 3 on fires at 3.3 s, sent at second 4.
    assert_eq!(standby_orders(&outs), vec![1, 4], "{outs:#?}");
    // A command is not resumed and paused at once for such a decision
    // either: it runs from the first period and from the last.
    let (mut c, r) =
        controller("network = \"timer(300ms)\"\ntask = \"command\"\ncommand = [\"/bin/true\"]\n");
    let outs = drive(&mut c, &r, 0, 6, line);
    let orders: Vec<(u64, &Order)> = outs
        .iter()
        .filter_map(|(s, o)| match o {
            Output::Order { job: None, order } => Some((*s, order)),
            _ => None,
        })
        .collect();
    let starts: Vec<u64> = orders
        .iter()
        .filter(|(_, o)| matches!(o, Order::Start { .. }))
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(starts, vec![1, 4], "{orders:#?}");
    assert_eq!(
        orders
            .iter()
            .filter(|(_, o)| matches!(o, Order::Stop))
            .count(),
        1,
        "the first run's pause at second 3 only: {orders:#?}"
    );
}

/// An hd-idle started after lull (the start's check could not name it)
/// spins the disk down: the drive found asleep, or already asleep when
/// lull spins it down, names it, and its warning is logged once.
#[test]
fn a_drive_found_asleep_names_the_program_beside_lull_that_spins_it_down() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    run(&mut c, &r, 0, 3, busy_then_quiet);
    let mut w = HdIdleBeside::default();
    let mut out = Vec::new();
    let power = Outcome::Power(PowerState::Standby);
    c.take_changes();
    c.on_outcome(at(3), power.clone(), true, &mut w, &mut out);
    assert!(c.in_standby());
    // Written at once: `lull status` reads the drive asleep now.
    assert!(c.take_changes().1);
    assert_eq!(
        c.state().last_decision,
        "found in standby (spun down by something else: hd-idle (pid 652))"
    );
    assert_eq!(w.0, ["sdb"]);
    assert_eq!(c.reporter.spinners_warned, [652]);
    // Busy again; then lull's own standby finds it asleep already.
    run(&mut c, &r, 4, 6, |_| 3);
    c.take_changes();
    c.on_outcome(at(6), Outcome::AlreadyStandby, true, &mut w, &mut out);
    assert!(c.take_changes().1, "written at once");
    assert_eq!(
        c.state().last_decision,
        "standby: the drive was already in standby: hd-idle (pid 652)"
    );
    assert_eq!(c.reporter.spinners_warned, [652], "warned of once");
    // With no program beside it, the line is as before (the NoWitness
    // tests above), and a drive that may spin itself down says both.
    let mut d = with_apm_127(&r, c.settings);
    d.on_outcome(at(1), power, true, &mut w, &mut out);
    assert_eq!(
        d.state().last_decision,
        "found in standby (spun down by something else: hd-idle (pid 652); the drive's APM level 127 lets it spin itself down)"
    );
}

/// In a dry run the end of an idle period lull would have slept through
/// is written at once, as a real spin-up is: `lull status` of a dry run
/// beside hd-idle lagged its shadow by up to `state_interval` (seen in
/// the guest: 3 would-be spin-ups of 4).
#[test]
fn a_dry_run_s_would_be_spin_up_is_written_at_once() {
    let disk = "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n";
    let (real, r) = controller(disk);
    let (cfg, family) = sdb(disk, &r);
    let settings = Settings {
        dry_run: true,
        ..real.settings
    };
    let mut c = with_state(&r, &cfg, family, DiskState::default(), settings);
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    report(&mut c, 10, Outcome::DryRun("spin /dev/sdb down".into()));
    c.take_changes();
    // Still quiet: nothing to write at once.
    run(&mut c, &r, 12, 14, |_| 100);
    assert_eq!(c.take_changes(), (false, false));
    // Busy again: the would-be spin-up goes at once.
    run(&mut c, &r, 14, 15, |_| 103);
    assert_eq!(c.take_changes(), (true, true));
}

/// A spin-down that went through is written at once, as its decision is:
/// the decision's write comes before the drive answers, so `lull status`
/// (from the state file) showed the drive active, with one spin-down
/// fewer, for up to `state_interval` of its standby.
#[test]
fn a_spin_down_done_is_written_at_once() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    let outs = run(&mut c, &r, 0, 12, busy_then_quiet);
    assert_eq!(standby_orders(&outs), vec![10]);
    assert!(c.take_changes().1, "the decision is written at once");
    report(&mut c, 10, Outcome::SpunDown("ok".into()));
    assert!(c.in_standby());
    assert_eq!(c.take_changes(), (true, true));
}

/// A self-trial: with the real loop's polls (a second apart and a few
/// microseconds late each time, on a wall clock read in whole seconds),
/// `lull status` read "power active for 3s" beside "idle for 4s": an
/// instant a poll ago was taken as −1.000005 s, floored to 2 s ago. The
/// instants are the nearest whole second now.
#[test]
fn instants_a_jittered_poll_ago_are_their_own_second() {
    let (mut c, r) = controller("network = \"timer(60s)\"\ntask = \"standby\"\n");
    for s in 0..20u64 {
        let n = s.min(10);
        let sample =
            Sample::new(parse(&format!("8 16 sdb {n} 0 {} 0 0 0 0 0 0 0 0\n", n * 8)).unwrap());
        let now = Now {
            mono: Nanos::from_secs(s) + Nanos::from_micros(5 * s),
            unix: UNIX0 + s,
        };
        let mut cx = Context {
            registry: &r,
            witness: &mut NoWitness,
        };
        c.on_poll(now, &sample, false, &mut cx, &mut Vec::new());
    }
    let st = c.state();
    assert_eq!(st.idle_since_unix, Some(UNIX0 + 10));
    assert_eq!(st.next_decision_unix, Some(UNIX0 + 70));
}

/// The idle period `lull status` shows begins where the engine's does,
/// at the poll whose requests completed last, not at the first quiet poll
/// a poll later: "idle for 7s; the network decides in 46s" added up to
/// 53 s under `timer(60s)` with a 7 s poll.
#[test]
fn the_idle_period_shown_and_the_next_decision_add_up_to_the_timeout() {
    let (mut c, r) = controller("network = \"timer(60s)\"\ntask = \"standby\"\n");
    // Reads until second 10; quiet after.
    let outs = run(&mut c, &r, 0, 30, |s| s.min(10));
    assert!(standby_orders(&outs).is_empty());
    let st = c.state();
    assert_eq!(st.idle_since_unix, Some(UNIX0 + 10));
    assert_eq!(st.next_decision_unix, Some(UNIX0 + 70));
    // The spin-down comes when the two said.
    let outs = run(&mut c, &r, 30, 80, |_| 10);
    assert_eq!(standby_orders(&outs), [70]);
}

/// The next decision the state shows while the disk is idle is the
/// engine's, second by second, also after a deadline passes and the network sets another: under
/// `auto` a trial's status read "nothing decided until I/O comes" (its
/// decision point, B/32 after idle start, long past) while the timeout it
/// spun the disk down at was pending.
#[test]
fn the_next_decision_shown_follows_the_network_past_a_deadline() {
    // The NAS drive: its decision point (B/32, 2.3 s) comes polls after
    // the idle period's start, where nothing else is written.
    let (mut c, r) = controller("network = \"auto\"\npreset = \"wd-red-plus\"\n");
    // Busy with a gap now and then, so `auto` has periods to learn
    // from, then quiet for long.
    let busy = |s: u64| if s < 120 { s - s / 7 } else { 120 };
    let mut moved = 0;
    let mut last = None;
    for s in 0..1200 {
        run(&mut c, &r, s, s + 1, busy);
        // As the daemon does after every poll.
        c.take_changes();
        // In Unix seconds, rounded down as `note_timing` rounds.
        let want = c
            .next_deadline_of_engine()
            .map(|d| UNIX0 + d.0 / 1_000_000_000);
        // While idle (busy, the status shows the disk busy and no
        // decision, and the busy polls are not written for it).
        if c.idle_since.is_some() {
            assert_eq!(c.state().next_decision_unix, want, "second {s}");
        }
        if want != last {
            moved += 1;
            last = want;
        }
    }
    assert!(moved > 2, "the engine's deadline moved {moved} times");
}
