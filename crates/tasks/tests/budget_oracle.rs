//! The budgeted oracle against every choice on small hand-made days, and
//! the wear budget's daily cap: no day ever holds more spin-downs than
//! the budget.

use lull_core::time::{Nanos, UnixTime};
use lull_tasks::gate::{StandbyGate, WearBudget};
use lull_tasks::{BudgetOracle, PowerModel};
use proptest::prelude::*;

const DAY: u64 = 86_400;

fn model() -> PowerModel {
    // B = 3 s.
    PowerModel::preset("paper-2.5in").unwrap()
}

/// The least energy by trying every set of periods and every day each
/// may be counted on (its start's, or any later midnight within it),
/// keeping at most `n` a day.
fn brute_force(periods: &[(Nanos, Nanos)], span_s: f64, m: &PowerModel, n: u32) -> f64 {
    let save = m.p_active - m.p_sleep;
    let up = m.spinup_energy();
    // Each period's options: (day, saving); None is "not slept".
    let options: Vec<Vec<(u64, f64)>> = periods
        .iter()
        .map(|&(s, e)| {
            let (first, last) = (s.0 / 1_000_000_000 / DAY, (e.0 - 1) / 1_000_000_000 / DAY);
            (first..=last)
                .map(|d| {
                    let from = s.max(Nanos::from_secs(d * DAY));
                    (d, save * (e - from).as_secs_f64() - up)
                })
                .collect()
        })
        .collect();
    let mut best = 0.0f64;
    let mut pick = vec![0usize; periods.len()];
    // Odometer over (options + 1) per period.
    loop {
        let mut per_day = std::collections::HashMap::new();
        let mut saved = 0.0;
        for (i, &k) in pick.iter().enumerate() {
            if k > 0 {
                let (d, v) = options[i][k - 1];
                *per_day.entry(d).or_insert(0u32) += 1;
                saved += v;
            }
        }
        if per_day.values().all(|&c| c <= n) {
            best = best.max(saved);
        }
        let mut i = 0;
        loop {
            if i == pick.len() {
                return m.energy_s(span_s, 0.0, 0) - best;
            }
            pick[i] += 1;
            if pick[i] <= options[i].len() {
                break;
            }
            pick[i] = 0;
            i += 1;
        }
    }
}

fn secs(s: f64) -> Nanos {
    Nanos::from_secs_f64(s)
}

#[test]
fn the_budgeted_oracle_spends_each_day_on_its_longest_periods() {
    let m = model();
    // Day 0: periods of 10, 100, 50 and 2 s (the last below B); day 1:
    // one of 20 s. One a day: day 0 sleeps through the 100 s one.
    let p = [
        (secs(10.0), secs(20.0)),
        (secs(100.0), secs(200.0)),
        (secs(300.0), secs(350.0)),
        (secs(400.0), secs(402.0)),
        (secs(DAY as f64 + 10.0), secs(DAY as f64 + 30.0)),
    ];
    let span = 2.0 * DAY as f64;
    let o = BudgetOracle::from_idle_periods(p, span, &m, 1, None);
    assert_eq!(o.spinups, 2);
    let save = m.p_active - m.p_sleep;
    let want = m.energy_s(span, 0.0, 0)
        - (save * 100.0 - m.spinup_energy())
        - (save * 20.0 - m.spinup_energy());
    assert!((o.energy_j - want).abs() < 1e-9, "{} vs {want}", o.energy_j);
    // Enough tokens: the plain oracle (every period beyond B).
    let all = BudgetOracle::from_idle_periods(p, span, &m, 10, None);
    assert_eq!(all.spinups, 4);
    // None a day: never spins down.
    let none = BudgetOracle::from_idle_periods(p, span, &m, 0, None);
    assert_eq!((none.spinups, none.energy_j), (0, m.energy_s(span, 0.0, 0)));
}

#[test]
fn a_period_across_midnight_is_counted_on_the_day_with_room() {
    let m = model();
    // Day 0 is full with its one long period; one from 23:59:00 to
    // 00:10:00 is slept from midnight on day 1, which has room.
    let p = [
        (secs(1000.0), secs(5000.0)),
        (secs(DAY as f64 - 60.0), secs(DAY as f64 + 600.0)),
    ];
    let span = 2.0 * DAY as f64;
    let o = BudgetOracle::from_idle_periods(p, span, &m, 1, None);
    assert_eq!(o.spinups, 2);
    let b = brute_force(&p, span, &m, 1);
    assert!((o.energy_j - b).abs() < 1e-6, "{} vs {b}", o.energy_j);
}

/// Small days of random periods, some across midnight or spanning days.
fn days() -> impl Strategy<Value = Vec<(Nanos, Nanos)>> {
    prop::collection::vec((1u64..40_000, 1u64..120_000), 1..8).prop_map(|gaps| {
        let mut t = 0u64;
        let mut v = Vec::new();
        for (busy, idle) in gaps {
            t += busy;
            // Idle lengths from 1 s to 33 h, in seconds.
            let len = if idle > 100_000 {
                idle
            } else {
                idle % 5_000 + 1
            };
            v.push((Nanos::from_secs(t), Nanos::from_secs(t + len)));
            t += len;
        }
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_budgeted_oracle_is_the_best_choice(p in days(), n in 0u32..3) {
        let m = model();
        let span = p.last().unwrap().1.as_secs_f64() + 1.0;
        let o = BudgetOracle::from_idle_periods(p.iter().copied(), span, &m, n, None);
        let b = brute_force(&p, span, &m, n);
        prop_assert!((o.energy_j - b).abs() <= 1e-6 * b.abs().max(1.0), "{} vs {}", o.energy_j, b);
    }

    /// The gate's bucket refills and its burst never let a UTC day hold
    /// more spin-downs than the budget, whatever the attempts and the
    /// failures given back.
    #[test]
    fn no_day_ever_exceeds_the_budget(
        per_day in 1u32..60,
        start in 0u64..(3 * DAY),
        steps in prop::collection::vec((1u64..4_000, any::<bool>()), 1..400),
    ) {
        let gate = StandbyGate { break_even: None, max_spindowns_per_day: Some(per_day) };
        let mut bucket: Option<WearBudget> = None;
        let mut per_day_count = std::collections::HashMap::<u64, u32>::new();
        let mut t = 1_700_000_000 + start;
        for (dt, fails) in steps {
            t += dt;
            if let Ok(charge) = gate.admit_charge(&mut bucket, UnixTime::from_secs(t), None) {
                if fails {
                    if let (Some(b), Some(c)) = (bucket.as_mut(), charge) {
                        b.refund(c);
                    }
                } else {
                    *per_day_count.entry(t / DAY).or_default() += 1;
                }
            }
            // The retry instant it names is one the bucket admits.
            if let Some(b) = &bucket {
                let next = b.next_token_unix(per_day, t).unwrap();
                prop_assert!(next >= t);
                prop_assert!(b.clone().take(per_day, next).is_ok());
                if next > t {
                    prop_assert!(b.clone().take(per_day, next - 1).is_err());
                }
            }
        }
        for (day, &c) in &per_day_count {
            prop_assert!(c <= per_day, "day {day}: {c} spin-downs over {per_day}");
        }
    }
}

#[test]
fn a_bucket_alone_no_longer_lets_a_day_take_its_refill_and_its_burst() {
    // 48 a day: a burst of 8, then one every 30 minutes. An attempt every
    // 10 minutes from midnight took 56 in the day before the cap.
    let gate = StandbyGate {
        break_even: None,
        max_spindowns_per_day: Some(48),
    };
    let mut bucket = None;
    let day0 = 1_700_006_400 / DAY * DAY;
    let taken = (0..144)
        .filter(|k| {
            gate.admit(&mut bucket, UnixTime::from_secs(day0 + k * 600), None)
                .is_ok()
        })
        .count();
    assert_eq!(taken, 48);
    // The next day starts afresh.
    assert!(
        gate.admit(&mut bucket, UnixTime::from_secs(day0 + DAY), None)
            .is_ok()
    );
}
