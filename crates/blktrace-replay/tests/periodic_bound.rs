//! The periodic estimator costs little where there is nothing periodic
//! (issue 29, item 1): on traces whose idle gaps have no periodic
//! structure (random gap lengths, independent or in persistent regimes,
//! from a hundredth of `B` to fifty `B`), neither `periodic()` (the share
//! timeout with the periodic gate and its act-at-once rule) nor `auto`
//! (`long-idle()`, which carries the same gate) spends more energy than
//! `share()` by more than [`CYCLES`] spin-down cycles (`B·(p_active −
//! p_sleep)` each) plus [`SHARE`] of what the oracle saves.
//!
//! `periodic()` differs from `share()` only by the estimator, so its
//! bound is the estimator's cost: a spurious source that gates a start or
//! acts at once. `auto` also differs by its own model (acting at once on
//! what it learned); the bound holds for both.

mod common;

use lull_core::event::Timeline;
use lull_core::request::{Op, Request};
use lull_core::time::Nanos;
use proptest::prelude::*;

/// Spin-down cycles of slack.
const CYCLES: f64 = 4.0;
/// Share of the oracle's saving of slack.
const SHARE: f64 = 0.05;
/// The drive: the paper's 2.5" disk, B = 3 s, p_active − p_sleep = 1.2 W.
const DEVICE: &str = "paper-2.5in";
const B_S: f64 = 3.0;
const DELTA_W: f64 = 1.2;

/// Energy, baseline and oracle energy of `spec` on `tl`.
fn energy(tl: &Timeline, spec: &str) -> (f64, f64, f64) {
    let m = common::spindown_pairs(tl, spec, DEVICE);
    let get = |k| common::measure(&m, k);
    (
        get("energy_j"),
        get("baseline_energy_j"),
        get("oracle_energy_j"),
    )
}

/// A trace from gap lengths in units of B: one 5 ms request after each.
fn trace(gaps: &[f64]) -> Timeline {
    let mut reqs = Vec::with_capacity(gaps.len() + 1);
    let mut t = 0.0;
    for &g in gaps {
        reqs.push(Request::new(
            Nanos::from_secs_f64(t),
            Nanos::from_secs_f64(t + 0.005),
            Op::Read,
            0,
            4096,
        ));
        t += 0.005 + g * B_S;
    }
    reqs.push(Request::new(
        Nanos::from_secs_f64(t),
        Nanos::from_secs_f64(t + 0.005),
        Op::Write,
        8,
        4096,
    ));
    Timeline::from_requests(&reqs)
}

/// Gap lengths (in B) with no period: log-uniform draws, in regimes that
/// persist for a while (short, mixed, long), so the learners have
/// something to learn but nothing recurs on a clock.
fn gaps() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        (0usize..3, prop::collection::vec(0.0f64..1.0, 1..30)),
        5..40,
    )
    .prop_map(|regimes| {
        regimes
            .into_iter()
            .flat_map(|(kind, us)| {
                us.into_iter().map(move |u| {
                    let (lo, hi): (f64, f64) = match kind {
                        0 => (0.01, 0.5),
                        1 => (0.01, 50.0),
                        _ => (2.0, 50.0),
                    };
                    (lo.ln() + u * (hi.ln() - lo.ln())).exp()
                })
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(lull_testkit::cases(24))]

    #[test]
    fn the_periodic_gate_costs_at_most_a_few_cycles_without_periods(gaps in gaps()) {
        let tl = trace(&gaps);
        let (share, baseline, oracle) = energy(&tl, "share()");
        let slack = CYCLES * B_S * DELTA_W + SHARE * (baseline - oracle);
        for spec in ["periodic()", "auto"] {
            let (e, _, _) = energy(&tl, spec);
            prop_assert!(
                e <= share + slack,
                "{spec}: {e:.1} J against share()'s {share:.1} J (slack {slack:.1} J, oracle saves {:.1} J)",
                baseline - oracle
            );
        }
    }
}
