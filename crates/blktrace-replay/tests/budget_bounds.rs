//! Under a wear budget the references bound every network from the right
//! side: no network behind the gate spends less than the oracle held to
//! the budget, which spends no less than the plain oracle, and the best
//! fixed timeout behind the gate and the clairvoyant held to the budget
//! spend no less than the budgeted oracle.
//! No network spins down more often in a day than the budget allows.

mod common;

use lull_core::event::Timeline;
use lull_core::time::Nanos;
use lull_tasks::StandbyGate;
use proptest::prelude::*;

/// The measures of `spec` on `tl` behind a gate of `per_day`.
fn replay(tl: &Timeline, spec: &str, device: &str, per_day: u32) -> Vec<(&'static str, f64)> {
    let gate = StandbyGate {
        break_even: None,
        max_spindowns_per_day: Some(per_day),
    };
    common::spindown_pairs_gated(tl, spec, device, gate)
}

/// Gaps from milliseconds to hours: a day or three of them.
fn gaps() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![
            4 => 0.001f64..2.0,
            4 => 2.0f64..400.0,
            1 => 400.0f64..30_000.0,
        ],
        1..200,
    )
}

proptest! {
    #![proptest_config(lull_testkit::cases(12))]

    #[test]
    fn the_budgeted_references_bound_every_network(
        gaps in gaps(),
        device in prop::sample::select(vec!["paper-2.5in", "wd-red-plus"]),
        per_day in prop::sample::select(vec![1u32, 4, 12, 48]),
    ) {
        let tl = common::gap_trace(&gaps);
        let below = |a: f64, b: f64| a <= b + 1e-6 * a.abs().max(b.abs()).max(1.0);
        for spec in ["auto", "timer(1s)", "timer(2B) + fixed(10s)", "long-idle(pace=false)", "oracle"] {
            let m = replay(&tl, spec, device, per_day);
            let get = |k| common::measure(&m, k);
            let (e, o, bo) = (get("energy_j"), get("oracle_energy_j"), get("budget_oracle_energy_j"));
            let (bf, cv) = (get("best_fixed_energy_j"), get("window_clairvoyant_energy_j"));
            prop_assert!(below(o, bo), "{spec}: oracle {o} above the budgeted oracle {bo}");
            prop_assert!(below(bo, e), "{spec}: {e} J beat the budgeted oracle's {bo} J");
            prop_assert!(below(bo, bf), "budgeted best fixed {bf} J beat the budgeted oracle's {bo} J");
            prop_assert!(below(bo, cv), "budgeted clairvoyant {cv} J beat the budgeted oracle's {bo} J");
            // The days the trace touches, from its time zero (no clock).
            let days = (tl.end().unwrap_or(Nanos::ZERO).as_secs_f64() / 86_400.0).floor() + 1.0;
            let cap = f64::from(per_day) * days;
            prop_assert!(get("spinups") <= cap, "{spec}: {} spin-ups over {cap}", get("spinups"));
            prop_assert!(get("budget_oracle_spinups") <= cap);
        }
    }
}
