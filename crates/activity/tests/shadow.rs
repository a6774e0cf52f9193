//! The shadow's figures against an independent computation from the
//! requests a replay of the same log sees.

mod common;

use lull_activity::{Log, PollKind, Record, Shadow};
use lull_core::event::Timeline;
use lull_core::time::Nanos;
use lull_tasks::PowerModel;
use lull_tasks::spindown::BestFixed;
use proptest::prelude::*;

use common::{records, steps};

const CLOCK: Nanos = Nanos(1_700_000_000_000_000_000);

/// Figures computed the slow, obvious way: idle periods from the rebuilt
/// requests' timeline; every candidate timeout `c` sleeps `L − c` in
/// every period where the daemon could act on it (`c` at most the period's
/// act length: up to the poll before the one that showed its end, when
/// that poll's I/O overtook the deadlines after it, from the log's polls,
/// `BusyPolls::act_end`); the oracle sleeps through periods longer than B;
/// lull sleeps from its first standby order after the previous period
/// ended (or from the period's start, if ordered while busy) to the
/// period's end.
struct Independent {
    periods: Vec<(Nanos, Nanos)>,
    /// Each period's act length.
    acts: Vec<Nanos>,
    fixed: Vec<(u64, Nanos)>,
    /// The same held to a wear budget of `per_day`: each timeout its own
    /// token bucket, full at its first deadline, a token taken at each
    /// deadline it fires at (none left: it sleeps through nothing).
    budgeted: Vec<(u64, Nanos)>,
    /// Per candidate, per period: whether it fired there under the budget.
    /// Per candidate and period, how long after its start it spun down.
    after: Vec<Vec<Option<Nanos>>>,
    oracle: (u64, Nanos),
    lull: (u64, Nanos),
}

fn independent(
    recs: &[Record],
    model: &PowerModel,
    candidates: &[Nanos],
    per_day: Option<u32>,
) -> Independent {
    let mut log = Log::default();
    log.extend(recs.iter().cloned());
    let rebuilt = log.rebuild();
    let tl = Timeline::from_requests(&rebuilt.requests);
    let periods: Vec<(Nanos, Nanos)> = tl.idle_periods().map(|p| (p.start, p.end)).collect();
    let acts: Vec<Nanos> = periods
        .iter()
        .map(|&(a, b)| rebuilt.busy_polls.act_end(a, b) - a)
        .collect();
    let fixed = candidates
        .iter()
        .map(|&c| {
            periods
                .iter()
                .zip(&acts)
                .filter(|(_, act)| **act >= c)
                .fold((0, Nanos::ZERO), |(n, s), ((a, b), _)| {
                    (n + 1, s + (*b - *a - c))
                })
        })
        .collect();
    // How long after each period's start each candidate spins down under
    // the budget: at its timeout, or, refused then, at the first whole
    // Unix second the bucket has a token again, if the period lasts.
    let after: Vec<Vec<Option<Nanos>>> = candidates
        .iter()
        .map(|&c| {
            let mut bucket: Option<lull_tasks::WearBudget> = None;
            periods
                .iter()
                .zip(&acts)
                .map(|(&(a, _), &act)| {
                    if act < c {
                        return None;
                    }
                    let Some(n) = per_day.filter(|&n| n > 0) else {
                        return Some(c);
                    };
                    // The gate's check: a refusal leaves the bucket
                    // untouched.
                    let unix = (CLOCK + a + c).0 / 1_000_000_000;
                    let b = bucket.get_or_insert_with(|| lull_tasks::WearBudget::full(n, unix));
                    let take = |b: &mut lull_tasks::WearBudget, u: u64| {
                        let mut peek = b.clone();
                        let ok = peek.take(n, u).is_ok();
                        if ok {
                            *b = peek;
                        }
                        ok
                    };
                    if take(b, unix) {
                        return Some(c);
                    }
                    // Second by second from where the refill says.
                    let need = ((1.0 - b.tokens) * 86_400.0 / f64::from(n)) as u64;
                    let mut u = (b.at_unix + need).saturating_sub(2).max(unix + 1);
                    while b.clone().take(n, u).is_err() {
                        u += 1;
                    }
                    let at = Nanos(u * 1_000_000_000 - CLOCK.0);
                    (at - a <= act && take(b, u)).then_some(at - a)
                })
                .collect()
        })
        .collect();
    let budgeted = after
        .iter()
        .map(|f| {
            periods
                .iter()
                .zip(f)
                .filter_map(|(p, f)| f.map(|d| (p, d)))
                .fold((0, Nanos::ZERO), |(n, s), ((a, b), d)| {
                    (n + 1, s + (*b - *a - d))
                })
        })
        .collect();
    let oracle = periods
        .iter()
        .filter(|(a, b)| (*b - *a).as_secs_f64() > model.break_even_s())
        .fold((0, Nanos::ZERO), |(n, s), (a, b)| (n + 1, s + (*b - *a)));
    let mut lull = (0u64, Nanos::ZERO);
    let mut prev_end = Nanos::ZERO;
    for &(a, b) in &periods {
        let first = rebuilt
            .standbys
            .iter()
            .filter(|&&s| (s > prev_end || (prev_end == Nanos::ZERO && s >= prev_end)) && s <= b)
            .min();
        if let Some(&s) = first {
            lull.0 += 1;
            lull.1 += b - s.max(a);
        }
        prev_end = b;
    }
    Independent {
        periods,
        acts,
        fixed,
        budgeted,
        after,
        oracle,
        lull,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    #[test]
    fn shadow_matches_an_independent_computation(
        steps in steps(),
        preset in prop::sample::select(vec!["wd-red-plus", "paper-2.5in", "seagate-ultrathin"]),
        yours_ms in prop::option::of(prop_oneof![Just(600_000u64), 1u64..4_000_000]),
        floor_ms in prop_oneof![Just(0u64), Just(1_000), 1u64..60_000],
        per_day in prop::sample::select(vec![None, Some(0u32), Some(1), Some(6), Some(48)]),
    ) {
        let model = PowerModel::preset(preset).unwrap();
        let b = model.break_even();
        let mut recs = records(CLOCK, &steps);
        // The daemon's wear budget, which the best fixed timeout and the
        // clairvoyant keep as it did (0: none, as it never spun down).
        if let Record::Session(s) = &mut recs[0] {
            s.max_spindowns_per_day = per_day;
        }
        let floor = Nanos::from_millis(floor_ms);
        let mut shadow = Shadow::new(model.clone(), b);
        if let Some(ms) = yours_ms {
            shadow = shadow.with_your_timeout(Nanos::from_millis(ms));
        }
        // The daemon's poll: no fixed timeout below it is judged, no idle
        // period below it counted.
        shadow = shadow.with_floor(floor);
        prop_assert!(shadow.candidates().iter().all(|&c| c >= floor || Some(c) == shadow.your_timeout()));
        prop_assert!(floor == Nanos::ZERO || shadow.candidates().contains(&floor));
        // One list with `lull rank --from-daemon`'s under-budget best
        // fixed timer: the shadow's candidates are `fixed_timeouts` and
        // the user's own timeout.
        let mut shared = lull_activity::shadow::fixed_timeouts(b, floor);
        if let Some(y) = shadow.your_timeout() {
            shared.push(y);
            shared.sort_unstable();
            shared.dedup();
        }
        prop_assert_eq!(shadow.candidates(), &shared[..]);
        for r in &recs {
            shadow.feed(r);
        }
        shadow.settle();
        // The log spans less than a day only sometimes: take the 7-day
        // window, which holds everything when the log is under 6 days.
        let span = recs.iter().filter_map(Record::time).max().unwrap();
        prop_assume!(span < Nanos::from_secs(6 * 86_400));
        let report = shadow.report();
        let w = &report.windows[1];
        let ind = independent(&recs, &model, shadow.candidates(), per_day);
        prop_assert_eq!(w.wear_budget_per_day, per_day.filter(|&n| n > 0));
        prop_assert_eq!(
            w.idle_periods,
            ind.periods.iter().filter(|(a, b)| *b - *a >= floor).count() as u64
        );
        // The time the disk was gone is not watched.
        let gone: Nanos = recs
            .iter()
            .filter_map(|r| match r {
                Record::Poll(p) if p.kind == PollKind::Baseline => {
                    p.held_since.map(|since| p.t - since)
                }
                _ => None,
            })
            .fold(Nanos::ZERO, |a, b| a + b);
        let watched = span - Nanos::from_secs(1) - gone;
        prop_assert!(close(w.observed_s, watched.as_secs_f64()), "{} vs {:?}", w.observed_s, watched);
        let energy = |sleep: Nanos, n: u64| {
            model.energy_s(w.observed_s, sleep.as_secs_f64().min(w.observed_s), n)
        };
        let oracle = w.policy("oracle").unwrap();
        prop_assert_eq!(oracle.spinups, ind.oracle.0);
        prop_assert!(close(oracle.energy_j, energy(ind.oracle.1, ind.oracle.0)));
        let lull = w.policy("lull").unwrap();
        prop_assert_eq!(lull.spinups, ind.lull.0);
        prop_assert!(close(lull.energy_j, energy(ind.lull.1, ind.lull.0)));
        // Under a budget, the budgeted oracle: `BudgetOracle` over the
        // same periods, in Unix time. It bounds lull (held to the same
        // budget, so no day of its spin-downs exceeds it) and is bounded
        // by the oracle.
        let bo = w.policy(lull_activity::shadow::BUDGET_ORACLE);
        prop_assert_eq!(bo.is_some(), per_day.is_some_and(|n| n > 0));
        if let (Some(bo), Some(n)) = (bo, per_day) {
            let exact = lull_tasks::BudgetOracle::from_idle_periods(
                ind.periods.iter().map(|&(a, b)| (a, b)),
                w.observed_s,
                &model,
                n,
                Some(CLOCK),
            );
            prop_assert_eq!(bo.spinups, exact.spinups);
            prop_assert!(close(bo.energy_j, exact.energy_j), "{} vs {}", bo.energy_j, exact.energy_j);
            prop_assert!(bo.energy_j >= oracle.energy_j - 1e-6);
            prop_assert!(bo.spinups <= oracle.spinups);
        }
        for (name, secs) in lull_activity::shadow::REFERENCES {
            let i = shadow.candidates().iter().position(|&c| c == Nanos::from_secs(secs)).unwrap();
            let p = w.policy(name).unwrap();
            prop_assert_eq!(p.spinups, ind.fixed[i].0, "{}", name);
            prop_assert!(close(p.energy_j, energy(ind.fixed[i].1, ind.fixed[i].0)), "{}", name);
        }
        // The user's own timeout, exact like the references (equal to
        // hd-idle's figures when it is hd-idle's 10 minutes).
        let yours = w.policy(lull_activity::shadow::YOUR_TIMEOUT);
        prop_assert_eq!(yours.is_some(), yours_ms.is_some());
        if let (Some(p), Some(ms)) = (yours, yours_ms) {
            let t = Nanos::from_millis(ms);
            prop_assert_eq!(p.timeout_s, Some(t.as_secs_f64()));
            let i = shadow.candidates().iter().position(|&c| c == t).unwrap();
            prop_assert_eq!(p.spinups, ind.fixed[i].0);
            prop_assert!(close(p.energy_j, energy(ind.fixed[i].1, ind.fixed[i].0)));
            if ms == 600_000 {
                let hd = w.policy("hd-idle-10min").unwrap();
                prop_assert_eq!((p.energy_j, p.spinups), (hd.energy_j, hd.spinups));
            }
        }
        // The best of the grid is the least energy of the grid, never below
        // the exact best fixed timeout, and the oracle beats everything.
        let best = w.policy("best-fixed").unwrap();
        // (Of the candidates from the floor on: the user's own timeout
        // below it is reported, not chosen.)
        // Under the budget: the references are the budgeted sums.
        let grid_min = ind
            .budgeted
            .iter()
            .zip(shadow.candidates())
            .filter(|(_, c)| **c >= floor)
            .map(|(&(n, s), _)| energy(s, n))
            .fold(w.baseline_energy_j, f64::min);
        prop_assert!(close(best.energy_j, grid_min));
        // "Never" exactly when the best of the grid spins down never: a
        // grid timeout that never fired is not named as the best.
        prop_assert_eq!(best.timeout_s.is_none(), best.spinups == 0, "{:?}", best);
        let exact = BestFixed::from_act_periods_from(
            ind.periods.iter().zip(&ind.acts).map(|((a, b), act)| (*act, *b - *a)),
            w.observed_s, &model, floor);
        // (A budget can hold a timeout back from a period it would lose
        // in, so under one the grid's best may beat the exact timeout
        // without one.)
        let unbound = ind.budgeted == ind.fixed;
        prop_assert!(!unbound || best.energy_j >= exact.energy_j - 1e-6 * exact.energy_j.abs().max(1.0));
        // ... and, where the budget held no timeout back, above it by at
        // most what the periods in which the exact timeout t* fires lose
        // with the next candidate g ≥ t*: save·(g − t*) each where g fires
        // too, and what t* saved in those where it does not (their act
        // length below g: with long polls a period can be long and its
        // act length short).
        let t_star = Nanos::from_secs_f64(exact.timeout_s);
        if let Some(&g) = shadow.candidates().iter().find(|&&c| c >= t_star && unbound) {
            let save = model.p_active - model.p_sleep;
            let n = ind.acts.iter().filter(|&&act| act >= g).count() as f64;
            let lost: f64 = ind
                .periods
                .iter()
                .zip(&ind.acts)
                .filter(|(_, act)| **act >= t_star && **act < g)
                .map(|((a, b), _)| {
                    (save * (*b - *a - t_star).as_secs_f64() - model.spinup_energy()).max(0.0)
                })
                .sum();
            let bound = save * (g - t_star).as_secs_f64() * n + lost;
            prop_assert!(best.energy_j - exact.energy_j <= bound + 1e-6 * exact.energy_j.abs().max(1.0),
                "grid best {} J, exact {} J at {}s, next candidate {}, bound {} J",
                best.energy_j, exact.energy_j, exact.timeout_s, g, bound);
        }
        // The clairvoyant per-10-minute timer. Without a budget: per
        // window of the periods' ends, the best candidate (or none); never
        // better than the exact per-window clairvoyant, never worse than
        // the best fixed timeout. Under one: one policy held to each day's
        // budget, each window's timeout chosen among the candidates over
        // them all (`BudgetClairvoyant`), never below the exact
        // clairvoyant without it.
        let cv = w.policy("clairvoyant-10min").unwrap();
        let exact_cv = lull_tasks::spindown::WindowClairvoyant::from_act_periods_from(
            ind.periods.iter().zip(&ind.acts).map(|(&(a, b), &act)| (a, a + act, b)),
            w.observed_s, &model, Nanos::from_secs(600), CLOCK, floor);
        let tol = |e: f64| 1e-6 * e.abs().max(1.0);
        if let Some(n) = per_day.filter(|&n| n > 0) {
            let from = shadow.candidates().partition_point(|&c| c < floor);
            let (saved, up) = lull_tasks::BudgetClairvoyant::of_periods(
                ind.periods.iter().zip(&ind.acts).map(|(&(a, b), &act)| (a, a + act, b)),
                &model, Nanos::from_secs(600), Some(CLOCK),
                lull_tasks::budget_clairvoyant::Timeouts::Among(&shadow.candidates()[from..]), n);
            prop_assert_eq!(cv.spinups, up);
            let e = model.energy_s(w.observed_s, 0.0, 0) - saved;
            prop_assert!(close(cv.energy_j, e), "{} vs {}", cv.energy_j, e);
            prop_assert!(cv.energy_j >= exact_cv.energy_j - tol(exact_cv.energy_j));
        } else {
            let save = model.p_active - model.p_sleep;
            let mut windows: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
            for (k, (_, b)) in ind.periods.iter().enumerate() {
                windows.entry((CLOCK + *b).0 / 600_000_000_000).or_default().push(k);
            }
            let (mut cv_sleep, mut cv_up) = (Nanos::ZERO, 0u64);
            for ks in windows.values() {
                let mut best = (0.0, Nanos::ZERO, 0u64);
                for (i, _) in shadow.candidates().iter().enumerate().filter(|(_, c)| **c >= floor) {
                    let fired: Vec<Nanos> = ks
                        .iter()
                        .filter_map(|&k| ind.after[i][k].map(|d| ind.periods[k].1 - ind.periods[k].0 - d))
                        .collect();
                    let slept = fired.iter().fold(Nanos::ZERO, |s, &l| s + l);
                    let saved = save * slept.as_secs_f64() - model.spinup_energy() * fired.len() as f64;
                    if saved > best.0 {
                        best = (saved, slept, fired.len() as u64);
                    }
                }
                cv_sleep += best.1;
                cv_up += best.2;
            }
            prop_assert_eq!(cv.spinups, cv_up);
            prop_assert!(close(cv.energy_j, energy(cv_sleep, cv_up)), "{} vs {}", cv.energy_j, energy(cv_sleep, cv_up));
            prop_assert!(!unbound || cv.energy_j >= exact_cv.energy_j - tol(exact_cv.energy_j));
            prop_assert!(cv.energy_j <= best.energy_j + tol(best.energy_j));
        }
        for p in &w.policies {
            prop_assert!(p.energy_j >= oracle.energy_j - 1e-6 * oracle.energy_j.abs().max(1.0),
                "{} beat the oracle", p.policy);
            prop_assert!(p.energy_j <= w.baseline_energy_j + model.spinup_energy() * p.spinups as f64 + 1e-6);
        }
    }

    /// Restoring from the log gives the shadow the daemon had: feeding the
    /// same records in one go or poll by poll with settles in between is
    /// the same.
    #[test]
    fn settling_early_changes_nothing(steps in steps()) {
        let model = PowerModel::preset("wd-red-plus").unwrap();
        let b = model.break_even();
        let recs = records(CLOCK, &steps);
        let mut a = Shadow::new(model.clone(), b);
        let mut c = Shadow::new(model, b);
        for r in &recs {
            a.feed(r);
            c.feed(r);
            if !matches!(r, Record::Poll(_)) {
                c.settle();
            }
        }
        a.settle();
        c.settle();
        prop_assert_eq!(a.report(), c.report());
    }

    /// The daemon's quiet polls (`Shadow::watched_to`, no record) move
    /// the time watched on, and once the next record comes the shadow is
    /// the one a replay of the log builds.
    #[test]
    fn quiet_polls_change_nothing_the_next_record_books(
        steps in steps(),
        at in prop::collection::vec(0.0f64..1.0, 1..40),
    ) {
        let model = PowerModel::preset("wd-red-plus").unwrap();
        let b = model.break_even();
        let recs = records(CLOCK, &steps);
        let mut a = Shadow::new(model.clone(), b);
        let mut c = Shadow::new(model, b);
        let mut last: Option<Nanos> = None;
        for (i, r) in recs.iter().enumerate() {
            // Quiet polls between the last poll's records and this poll's
            // (and some before the last: those change nothing).
            let next_poll = matches!(r, Record::Poll(_) | Record::Mark(_) | Record::End(_));
            if let (Some(l), Some(t), true) = (last, r.time(), next_poll) {
                for f in at.iter().skip(i % at.len()).take(3) {
                    let q = Nanos(l.0 + ((t.0.saturating_sub(l.0)) as f64 * f) as u64);
                    c.watched_to(q);
                    c.watched_to(Nanos(q.0 / 2));
                    prop_assert!(c.report().windows[1].observed_s >= a.report().windows[1].observed_s);
                }
            }
            a.feed(r);
            c.feed(r);
            last = r.time().or(last);
        }
        a.settle();
        c.settle();
        prop_assert_eq!(a.report(), c.report());
    }
}

/// `r` with every instant `d` earlier (`d` at most its earliest).
fn earlier(r: &Record, d: Nanos) -> Record {
    let mut r = r.clone();
    match &mut r {
        Record::Session(_) => {}
        Record::Poll(p) => {
            p.t0 = p.t0 - d;
            p.t = p.t - d;
            p.held_since = p.held_since.map(|h| h - d);
        }
        Record::Mark(t)
        | Record::Standby(t)
        | Record::StandbyFailed(t)
        | Record::Power { t, .. }
        | Record::Withheld { t, .. }
        | Record::End(t) => *t = *t - d,
        Record::Learned { t, at } => {
            *t = *t - d;
            *at = *at - d;
        }
    }
    r
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    /// A run that continues the one before it on another clock (a
    /// restart that found the disk idle and untouched) changes nothing:
    /// a log cut where the disk is idle (at a quiet poll's mark), its
    /// second half a run of its own with a later time zero, gives the
    /// shadow and the requests of the uncut log, and `Record::shifted`
    /// takes the second half back to the first's timeline.
    #[test]
    fn a_continuing_run_on_another_clock_is_the_same_run(
        steps in steps(),
        cut in 0.0f64..1.0,
        zero in 0.0f64..=1.0,
    ) {
        let model = PowerModel::preset("wd-red-plus").unwrap();
        let recs = records(CLOCK, &steps);
        let marks: Vec<usize> = recs
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Record::Mark(_)))
            .map(|(i, _)| i)
            .collect();
        prop_assume!(!marks.is_empty());
        let i = marks[((marks.len() as f64 * cut) as usize).min(marks.len() - 1)];
        let m = recs[i].time().unwrap();
        // Every record at the mark's instant stays in the first run.
        let k = i + recs[i..].iter().take_while(|r| r.time() == Some(m)).count();
        let d = Nanos((m.0 as f64 * zero) as u64);
        let Record::Session(first) = &recs[0] else { unreachable!() };
        let mut split: Vec<Record> = recs[..k].to_vec();
        split.push(Record::End(m));
        split.push(Record::Session(lull_activity::Session {
            clock: CLOCK + d,
            continues: true,
            ..first.clone()
        }));
        split.push(Record::Mark(m - d));
        split.extend(recs[k..].iter().map(|r| earlier(r, d)));
        for r in &recs[k..] {
            prop_assert_eq!(&earlier(r, d).shifted(d), r);
        }
        let shadow = |recs: &[Record]| {
            let mut s = Shadow::new(model.clone(), model.break_even()).with_floor(Nanos::from_secs(1));
            for r in recs {
                s.feed(r);
            }
            s.settle();
            s.report()
        };
        prop_assert_eq!(shadow(&split), shadow(&recs));
        let rebuild = |recs: &[Record]| {
            let mut log = Log::default();
            log.extend(recs.iter().cloned());
            log.rebuild()
        };
        let (cut_log, whole) = (rebuild(&split), rebuild(&recs));
        prop_assert_eq!(cut_log.runs.len(), 2);
        prop_assert_eq!(cut_log.runs[1].continues, Some(m));
        prop_assert_eq!(cut_log.runs[1].downtime, None);
        prop_assert_eq!(&cut_log.requests, &whole.requests);
        prop_assert_eq!(&cut_log.standbys, &whole.standbys);
    }
}

#[test]
fn old_hours_leave_the_windows() {
    let model = PowerModel::preset("wd-red-plus").unwrap();
    let mut s = Shadow::new(model.clone(), model.break_even());
    // A day of hourly 2-hour gaps, then eight days later one more poll.
    let mut recs = records(CLOCK, &[(3600, 5, false, false); 30]);
    let last = recs.iter().filter_map(Record::time).max().unwrap();
    recs.push(Record::Session(lull_activity::Session {
        clock: CLOCK + last + Nanos::from_secs(8 * 86_400),
        ..lull_activity::Session::default()
    }));
    recs.push(Record::Mark(Nanos::from_secs(10)));
    let mut before = None;
    for r in &recs {
        if matches!(r, Record::Session(x) if x.key.is_empty()) {
            s.settle();
            before = Some(s.report());
        }
        s.feed(r);
    }
    s.settle();
    let before = before.unwrap();
    // Five requests an hour, a gap after each: the week holds the 30
    // hours, the day only the last 24 (or 25: the current hour is partial).
    let (day, week) = (
        before.windows[0].idle_periods,
        before.windows[1].idle_periods,
    );
    assert!(week >= 5 * 29, "{week}");
    assert!(day <= 5 * 25 && day < week, "{day} {week}");
    let after = s.report();
    assert_eq!(after.windows[1].idle_periods, 0);
    assert!(s.footprint() < 128 * 1024, "{}", s.footprint());
}

/// The documented bound: a week of hourly buckets, each with every
/// candidate booked (under the budget, and the named references without
/// it), stays under 112 KB besides one poll's pieces.
#[test]
fn a_full_week_is_bounded() {
    let model = PowerModel::preset("wd-red-plus").unwrap();
    let mut s = Shadow::new(model.clone(), model.break_even());
    // An hour-long gap every hour for two weeks, then a week more.
    let recs = records(CLOCK, &[(3600, 1, false, false); 24 * 21]);
    for r in &recs {
        s.feed(r);
    }
    s.settle();
    let week = s.report().windows[1].idle_periods;
    assert!((160..=170).contains(&week), "{week}");
    let bytes = s.footprint();
    eprintln!("shadow footprint after three weeks: {bytes} bytes");
    assert!(bytes < 112 * 1024 + 1026 * 32, "{bytes}");
}

/// A daemon polling every 2 minutes (`poll` may be up to an hour): the
/// named references below its poll (`hdparm -S 12`'s minute) are still
/// reported, as without a floor, and never chosen as the best fixed
/// timeout. (The shadow once dropped them with the candidates below the
/// floor and could not report at all.)
#[test]
fn references_below_a_long_poll_are_reported_not_chosen() {
    let model = PowerModel::preset("wd-red-plus").unwrap();
    let floor = Nanos::from_secs(120);
    let mut s = Shadow::new(model.clone(), model.break_even()).with_floor(floor);
    let mut plain = Shadow::new(model.clone(), model.break_even());
    // A busy second, then 89 s quiet (the minute fires, nothing from the
    // floor does), 40 times; then hours.
    let mut steps = Vec::new();
    for _ in 0..40 {
        steps.extend([(1, 3, false, false), (89, 0, false, false)]);
    }
    for _ in 0..6 {
        steps.extend([(1, 3, false, false), (3600, 0, false, false)]);
    }
    for r in &records(CLOCK, &steps) {
        s.feed(r);
        plain.feed(r);
    }
    s.settle();
    plain.settle();
    let (w, p) = (&s.report().windows[1], &plain.report().windows[1]);
    for (name, _) in lull_activity::shadow::REFERENCES {
        assert_eq!(w.policy(name), p.policy(name), "{name}");
    }
    let minute = w.policy("hdparm-S12").unwrap();
    assert!(minute.spinups >= 40, "{minute:?}");
    let best = w.policy("best-fixed").unwrap();
    assert!(best.timeout_s.unwrap() >= floor.as_secs_f64(), "{best:?}");
}

/// A dry run, then the real daemon (`lulld --dry-run` tried first): the
/// windows say how much of their watched time the dry run watched, the
/// part of lull's figures that are spin-downs it would have made; a real
/// run alone has none.
#[test]
fn a_dry_run_is_told_apart_in_the_windows() {
    let model = PowerModel::preset("wd-red-plus").unwrap();
    let steps = [(600, 5, false, true); 6];
    let mut dry = records(CLOCK, &steps);
    let Record::Session(s) = &mut dry[0] else {
        panic!("a log starts with its session")
    };
    s.dry_run = true;
    let dry_end = dry.iter().filter_map(Record::time).max().unwrap();
    let real = records(CLOCK + dry_end + Nanos::from_secs(60), &steps);
    let real_end = real.iter().filter_map(Record::time).max().unwrap();
    let mut sh = Shadow::new(model.clone(), model.break_even());
    for r in &real {
        sh.feed(r);
    }
    sh.settle();
    assert_eq!(sh.report().windows[0].dry_run_s, 0.0);
    let mut sh = Shadow::new(model.clone(), model.break_even());
    for r in dry.iter().chain(&real) {
        sh.feed(r);
    }
    sh.settle();
    let w = &sh.report().windows[0];
    // Each run watched from its first record to its last; the minute
    // between them nobody did.
    let first = |recs: &[Record]| recs.iter().filter_map(Record::time).min().unwrap();
    let dry_s = (dry_end - first(&dry)).as_secs_f64();
    let real_s = (real_end - first(&real)).as_secs_f64();
    assert!(
        (w.dry_run_s - dry_s).abs() < 1e-6,
        "{} {dry_s}",
        w.dry_run_s
    );
    assert!(
        (w.observed_s - dry_s - real_s).abs() < 1e-6,
        "{} {dry_s} {real_s}",
        w.observed_s
    );
}
