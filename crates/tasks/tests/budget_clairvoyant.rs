//! The per-window clairvoyant held to a wear budget as one policy: against
//! every choice of timeouts on small hand-made days, and between the
//! bounds it must keep.

use lull_core::time::Nanos;
use lull_tasks::budget_clairvoyant::{BudgetClairvoyant, Timeouts, day_of};
use lull_tasks::spindown::WindowClairvoyant;
use lull_tasks::{BudgetOracle, PowerModel};
use proptest::prelude::*;

const DAY: u64 = 86_400;
const DAY_NS: u64 = DAY * 1_000_000_000;
/// Windows of 100 s keep the hand-made days small.
const WINDOW: Nanos = Nanos::from_secs(100);

fn model() -> PowerModel {
    // B = 3 s.
    PowerModel::preset("paper-2.5in").unwrap()
}

fn secs(s: f64) -> Nanos {
    Nanos::from_secs_f64(s)
}

type Period = (Nanos, Nanos, Nanos);
/// Spin-downs per day, and the most saved for them.
type Outcome = (Vec<(u64, u32)>, f64);

/// The most saved by trying, in every window, every timeout that fires in
/// a different set of its periods or on different days (the floor, one
/// nanosecond above each period's latest actable instant, each midnight
/// inside a period, and never), keeping at most `n` spin-downs a UTC day
/// by the instant each timer fires.
fn brute_force(periods: &[Period], m: &PowerModel, floor: Nanos, n: u32) -> f64 {
    brute_force_among(periods, m, n, |w| {
        let mut v: Vec<Nanos> = vec![floor];
        v.extend(w.iter().map(|&(s, a, _)| floor.max(a - s + Nanos::NANO)));
        // And firing at each midnight inside a period.
        for &(s, a, _) in w {
            let mut mid = (s.0 / DAY_NS + 1) * DAY_NS;
            while mid <= a.0 {
                v.push(floor.max(Nanos(mid) - s));
                mid += DAY_NS;
            }
        }
        v
    })
}

/// The most saved by trying, in every window, each timeout `timeouts`
/// gives it (and never), keeping at most `n` spin-downs a UTC day.
fn brute_force_among(
    periods: &[Period],
    m: &PowerModel,
    n: u32,
    timeouts: impl Fn(&[Period]) -> Vec<Nanos>,
) -> f64 {
    let save = m.p_active - m.p_sleep;
    let up = m.spinup_energy();
    let mut windows: Vec<Vec<Period>> = Vec::new();
    let mut last = None;
    for &p in periods {
        let k = p.2.0 / WINDOW.0;
        if last != Some(k) {
            windows.push(Vec::new());
            last = Some(k);
        }
        windows.last_mut().unwrap().push(p);
    }
    // Each window's outcomes: spin-downs per day and the most saved for
    // them (timeouts with the same counts are interchangeable for the
    // budget). Not spinning down is one of them.
    let outcomes: Vec<Vec<Outcome>> = windows
        .iter()
        .map(|w| {
            let mut best: std::collections::BTreeMap<Vec<(u64, u32)>, f64> = Default::default();
            best.insert(Vec::new(), 0.0);
            for t in timeouts(w) {
                let mut per_day = std::collections::BTreeMap::<u64, u32>::new();
                let mut saved = 0.0;
                for &(s, a, e) in w {
                    if a - s >= t {
                        *per_day.entry(day_of(s + t, None)).or_default() += 1;
                        saved += save * (e - (s + t)).as_secs_f64() - up;
                    }
                }
                let v = best
                    .entry(per_day.into_iter().collect())
                    .or_insert(f64::NEG_INFINITY);
                *v = v.max(saved);
            }
            best.into_iter().collect()
        })
        .collect();
    let mut best = 0.0f64;
    let mut pick = vec![0usize; windows.len()];
    loop {
        let mut per_day = std::collections::HashMap::<u64, u32>::new();
        let mut saved = 0.0;
        for (w, &k) in pick.iter().enumerate() {
            let (days, v) = &outcomes[w][k];
            for &(d, c) in days {
                *per_day.entry(d).or_default() += c;
            }
            saved += v;
        }
        if per_day.values().all(|&c| c <= n) {
            best = best.max(saved);
        }
        let mut i = 0;
        loop {
            if i == pick.len() {
                return best;
            }
            pick[i] += 1;
            if pick[i] < outcomes[i].len() {
                break;
            }
            pick[i] = 0;
            i += 1;
        }
    }
}

#[test]
fn the_windows_of_a_day_share_its_budget() {
    let m = model();
    // Window 0: two periods of 50 s; window 1: one of 90 s. One a day:
    // the clairvoyant spends it on the 90 s period, not one in each
    // window as a timer per window would.
    let p = [
        (secs(0.0), secs(50.0), secs(50.0)),
        (secs(50.5), secs(99.0), secs(99.0)),
        (secs(100.0), secs(190.0), secs(190.0)),
    ];
    let (saved, spinups) =
        BudgetClairvoyant::of_periods(p, &m, WINDOW, None, Timeouts::From(Nanos::ZERO), 1);
    let save = m.p_active - m.p_sleep;
    assert_eq!(spinups, 1);
    assert!((saved - (save * 90.0 - m.spinup_energy())).abs() < 1e-9);
    // Two a day: the 90 s period and the longer of the first window's
    // (a timeout that fires in one of them is one above the other's).
    let (_, spinups) =
        BudgetClairvoyant::of_periods(p, &m, WINDOW, None, Timeouts::From(Nanos::ZERO), 2);
    assert_eq!(spinups, 2);
    // A new day brings a new budget: the same periods a day later.
    let later = p.map(|(s, a, e)| {
        let d = Nanos::from_secs(DAY);
        (s + d, a + d, e + d)
    });
    let both = p.iter().chain(later.iter()).copied();
    let (_, spinups) =
        BudgetClairvoyant::of_periods(both, &m, WINDOW, None, Timeouts::From(Nanos::ZERO), 1);
    assert_eq!(spinups, 2);
}

#[test]
fn a_timer_that_fires_before_midnight_counts_on_that_day() {
    let m = model();
    // A period from 10 s before midnight to 80 s after, in the window
    // after midnight: a timeout of 5 s fires on day 0, where the budget
    // of one is already spent.
    let d = DAY as f64;
    let p = [
        (secs(d - 300.0), secs(d - 210.0), secs(d - 210.0)),
        (secs(d - 10.0), secs(d + 80.0), secs(d + 80.0)),
    ];
    let (saved, spinups) =
        BudgetClairvoyant::of_periods(p, &m, WINDOW, None, Timeouts::From(Nanos::ZERO), 1);
    assert_eq!(
        spinups, 2,
        "one on each day: the second fires after midnight"
    );
    let b = brute_force(&p, &m, Nanos::ZERO, 1);
    assert!((saved - b).abs() < 1e-9, "{saved} vs {b}");
    // Its timeout must then be above 10 s: it sleeps 80 s, not 90.
    let save = m.p_active - m.p_sleep;
    let first = save * 90.0 - m.spinup_energy();
    assert!(saved < first + save * 80.0 - m.spinup_energy() + 1e-9);
}

/// Small days: up to 12 periods over up to two days and a few windows,
/// with latest actable instants before some ends.
fn days() -> impl Strategy<Value = Vec<Period>> {
    prop::collection::vec((1u64..400, 1u64..200, 0u64..4, any::<bool>()), 1..12).prop_map(|v| {
        let mut t = DAY - 600;
        v.into_iter()
            .map(|(busy, idle, short, jump)| {
                t += busy + if jump { 300 } else { 0 };
                let (s, e) = (Nanos::from_secs(t), Nanos::from_secs(t + idle));
                let a = e - Nanos::from_secs(short.min(idle));
                t += idle;
                (s, a, e)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    #[test]
    fn the_budgeted_clairvoyant_is_the_best_choice(
        p in days(),
        n in 0u32..4,
        floor in prop_oneof![Just(0u64), 1u64..20],
    ) {
        let m = model();
        let floor = Nanos::from_secs(floor);
        let (saved, _) = BudgetClairvoyant::of_periods(p.iter().copied(), &m, WINDOW, None, Timeouts::From(floor), n);
        let b = brute_force(&p, &m, floor, n);
        prop_assert!((saved - b).abs() <= 1e-6 * b.abs().max(1.0), "{saved} vs {b}");
    }

    /// Among a list of timeouts, the best choice of the list's.
    #[test]
    fn the_budgeted_clairvoyant_among_a_list_is_the_best_choice(
        p in days(),
        n in 0u32..4,
        list in prop::collection::btree_set(0u64..250, 1..8),
    ) {
        let m = model();
        let list: Vec<Nanos> = list.into_iter().map(Nanos::from_secs).collect();
        let (saved, _) = BudgetClairvoyant::of_periods(p.iter().copied(), &m, WINDOW, None, Timeouts::Among(&list), n);
        let b = brute_force_among(&p, &m, n, |_| list.clone());
        prop_assert!((saved - b).abs() <= 1e-6 * b.abs().max(1.0), "{saved} vs {b}");
    }

    /// Between its bounds: never below the oracle held to the same budget
    /// (it is a policy that keeps it), never below the clairvoyant
    /// without one, and equal to that one when the budget is never short.
    #[test]
    fn the_budgeted_clairvoyant_keeps_its_bounds(p in days(), n in 0u32..4) {
        let m = model();
        let span = p.last().unwrap().2.as_secs_f64() + 1.0;
        let base = m.energy_s(span, 0.0, 0);
        let (saved, _) = BudgetClairvoyant::of_periods(p.iter().copied(), &m, WINDOW, None, Timeouts::From(Nanos::ZERO), n);
        let energy = base - saved;
        let oracle = BudgetOracle::from_idle_periods(p.iter().map(|&(s, _, e)| (s, e)), span, &m, n, None);
        let free = WindowClairvoyant::from_act_periods_from(p.iter().copied(), span, &m, WINDOW, Nanos::ZERO, Nanos::ZERO);
        let tol = 1e-9 * base;
        prop_assert!(energy >= oracle.energy_j - tol, "{energy} below the budgeted oracle {}", oracle.energy_j);
        prop_assert!(energy >= free.energy_j - tol, "{energy} below the free clairvoyant {}", free.energy_j);
        let (all, _) = BudgetClairvoyant::of_periods(p.iter().copied(), &m, WINDOW, None, Timeouts::From(Nanos::ZERO), 100);
        prop_assert!(((base - all) - free.energy_j).abs() <= tol, "{} vs {}", base - all, free.energy_j);
    }
}
