//! `oracle` replayed for spin-down is the offline optimum: on any trace
//! and drive its energy is the `oracle_energy_j` reference, to the joule,
//! and no network spends less. For spin-down `oracle`'s `min` defaults to
//! the drive's `B` (`use_spindown_oracle`); before, `--net oracle` spun
//! down in every gap and spent twice the oracle energy on the
//! workstation workload.

mod common;

use lull_core::event::Timeline;
use proptest::prelude::*;

/// `energy_j`, `oracle_energy_j` and `spinups` of `spec` on `tl` for the
/// spin-down task on `device`.
fn replay(tl: &Timeline, spec: &str, device: &str) -> (f64, f64, f64) {
    let m = common::spindown_pairs(tl, spec, device);
    let get = |k| common::measure(&m, k);
    (get("energy_j"), get("oracle_energy_j"), get("spinups"))
}

fn trace(gaps: &[f64]) -> Timeline {
    common::gap_trace(gaps)
}

proptest! {
    #![proptest_config(lull_testkit::cases(64))]

    #[test]
    fn the_oracle_network_is_the_oracle_reference(
        gaps in prop::collection::vec(prop_oneof![0.001f64..1.0, 1.0f64..200.0], 1..80),
        device in prop::sample::select(vec!["paper-2.5in", "wd-red-plus", "seagate-ultrathin"]),
    ) {
        let tl = trace(&gaps);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
        for spec in ["oracle", "oracle()"] {
            let (e, o, _) = replay(&tl, spec, device);
            prop_assert!(close(e, o), "{} on {}: {} J, oracle {} J", spec, device, e, o);
        }
        // Every gap, as `min=0s` asks: never better, and worse where a gap
        // shorter than B was slept through.
        let (every, o, _) = replay(&tl, "oracle(min=0s)", device);
        prop_assert!(every >= o - 1e-6 * o.abs().max(1.0));
        for spec in ["timer(1s)", "auto"] {
            let (e, o, _) = replay(&tl, spec, device);
            prop_assert!(e >= o - 1e-6 * o.abs().max(1.0), "{} beat the oracle", spec);
        }
    }
}

/// Short gaps only (none reaches B = 3 s): the oracle never spins down;
/// `oracle(min=0s)` spins down in each gap and pays for it.
#[test]
fn the_oracle_does_not_spin_down_for_a_gap_shorter_than_b() {
    let tl = trace(&[0.5; 20]);
    let (e, o, spinups) = replay(&tl, "oracle", "paper-2.5in");
    assert_eq!(spinups, 0.0);
    assert!((e - o).abs() < 1e-9, "{e} vs {o}");
    let (every, _, spinups) = replay(&tl, "oracle(min=0s)", "paper-2.5in");
    assert_eq!(spinups, 20.0);
    assert!(every > o, "{every} vs {o}");
}
