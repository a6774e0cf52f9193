//! A network's mean of a measure across its traces: the plain mean,
//! and the ratios to the best fixed timer pooled over the traces. The
//! report and the tables show them.

use lull_tasks::spindown::BestFixed;

use crate::analysis::{EXCESS, GAIN};
use crate::sweep::Row;

/// A network's mean of raw measure `m` across its traces.
///
/// Traces where the measure is undefined (not a number: for example the
/// excess over a best fixed timeout that is already optimal) are left out
/// of the mean.
///
/// The excess over the best fixed timer ([`EXCESS`]) is pooled instead:
/// the network's total excess energy over the oracle divided by the best
/// fixed timer's, over all traces ([`pooled_excess`]). A mean of per-trace
/// ratios would be decided by the trace where the best fixed timer is
/// nearly optimal and the ratio explodes.
pub fn raw_mean(rows: &[Row], policy: usize, m: &str) -> Option<f64> {
    if m == EXCESS
        && let Some(p) = pooled_excess(rows, policy)
    {
        return Some(p);
    }
    if m == GAIN {
        return pooled_gain(rows, policy);
    }
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.network_index == policy)
        .filter_map(|r| r.measure(m))
        .filter(|x| x.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// `Σ (energy − oracle) / Σ (best fixed − oracle)` over the traces of
/// network `policy` (spindown rows carrying `best_fixed_energy_j`); `None`
/// when there are none or the best fixed timer is optimal everywhere.
pub fn pooled_excess(rows: &[Row], policy: usize) -> Option<f64> {
    pooled(
        rows,
        policy,
        ["energy_j", "oracle_energy_j", "best_fixed_energy_j"],
        |[e, o, b]| (e - o, b - o, o),
    )
}

/// `Σ (best fixed − energy) / Σ (best fixed − clairvoyant)` over the
/// traces of network `policy` (spindown rows carrying
/// `window_clairvoyant_energy_j`): pooled like [`pooled_excess`], so a
/// trace where the clairvoyant per-window timer adds almost nothing does
/// not blow the mean up. Where the clairvoyant adds nothing anywhere
/// (within [`BestFixed::OPTIMAL`] of its energy, as `lull replay` judges
/// one trace: a daemon's short log where it equals the best fixed timer
/// up to rounding gave gains of −10¹³), 1 for a network as good as the
/// best fixed timer and `None` for a worse or a better one, as `lull
/// replay` has it;
/// `None` too without such rows.
pub fn pooled_gain(rows: &[Row], policy: usize) -> Option<f64> {
    let (gained, room, tol) = pooled_parts(
        rows,
        policy,
        [
            "energy_j",
            "best_fixed_energy_j",
            "window_clairvoyant_energy_j",
        ],
        |[e, b, c]| (b - e, b - c, c),
    )?;
    // Where the clairvoyant adds nothing, as `lull replay` has it on one
    // trace ([`lull_tasks::spindown::WindowClairvoyant::gain`]): 1 for a
    // network as good as the best fixed timer, not a number for a worse
    // or a better one (a share of nothing).
    if room > tol {
        Some(gained / room)
    } else {
        (gained.abs() <= tol).then_some(1.0)
    }
}

/// `Σ numerator / Σ room` over the rows of network `policy` that carry the
/// three `measures`, `part` giving each row's (numerator, room, the
/// reference energy the room is judged against); `None` when no row does
/// or the room is within [`BestFixed::OPTIMAL`] of the references' energy
/// (rounding, not room).
pub(crate) fn pooled(
    rows: &[Row],
    policy: usize,
    measures: [&str; 3],
    part: impl Fn([f64; 3]) -> (f64, f64, f64),
) -> Option<f64> {
    match pooled_parts(rows, policy, measures, part) {
        Some((sum, room, tol)) if room > tol => Some(sum / room),
        _ => None,
    }
}

/// The sums of [`pooled`]: `(Σ numerator, Σ room, the tolerance of
/// rounding)`; `None` when no row of `policy` carries the measures.
fn pooled_parts(
    rows: &[Row],
    policy: usize,
    measures: [&str; 3],
    part: impl Fn([f64; 3]) -> (f64, f64, f64),
) -> Option<(f64, f64, f64)> {
    let (mut sum, mut room, mut scale) = (0.0, 0.0, 0.0);
    let mut any = false;
    for r in rows.iter().filter(|r| r.network_index == policy) {
        if let (Some(a), Some(b), Some(c)) = (
            r.measure(measures[0]),
            r.measure(measures[1]),
            r.measure(measures[2]),
        ) {
            let (n, d, e) = part([a, b, c]);
            sum += n;
            room += d;
            scale += e.abs();
            any = true;
        }
    }
    any.then(|| (sum, room, BestFixed::OPTIMAL * scale.max(1e-9)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A spindown row of network 0 on trace `t` with these energies (J).
    fn row(t: usize, energy: f64, best: f64, cv: f64) -> Row {
        Row {
            trace_index: t,
            trace: format!("w{t}"),
            network_index: 0,
            spec: "auto".into(),
            reference: true,
            start_family: "auto".into(),
            duration_family: "no-duration".into(),
            skeptic: None,
            params: BTreeMap::new(),
            measures: vec![
                ("energy_j".into(), energy),
                ("best_fixed_energy_j".into(), best),
                ("window_clairvoyant_energy_j".into(), cv),
                ("oracle_energy_j".into(), 0.5 * cv),
            ],
        }
    }

    // Found ranking a daemon's short log: the clairvoyant equal to the best
    // fixed timer up to rounding (a room of 10⁻¹³ J) made the pooled gain
    // −5.9·10¹²; `lull replay` of the same log says it is not a number.
    #[test]
    fn a_gain_over_rounding_is_not_a_number() {
        let rows = [row(0, 367.0, 363.478, 363.478 - 1e-13)];
        assert_eq!(pooled_gain(&rows, 0), None);
        // A room of 0.1 % of the energy is room: the gain is its share.
        let rows = [row(0, 363.0, 363.478, 363.115)];
        let g = pooled_gain(&rows, 0).unwrap();
        assert!((g - 0.478 / 0.363).abs() < 1e-9, "{g}");
        // Pooled over traces, a sliver beside a real room changes little.
        let rows = [
            row(0, 367.0, 363.478, 363.478 - 1e-13),
            row(1, 363.0, 363.478, 363.115),
        ];
        let g = pooled_gain(&rows, 0).unwrap();
        assert!((g - (-3.522 + 0.478) / 0.363).abs() < 1e-6, "{g}");
    }

    /// Where the clairvoyant adds nothing, a network as good as the best
    /// fixed timer captures all of nothing (1), as `lull replay` says of
    /// one trace; a worse or a better one's gain is not a number.
    #[test]
    fn with_nothing_to_capture_the_gain_follows_the_replay() {
        let e = 363.478;
        let rows = [row(0, e, e, e - 1e-13), row(1, 100.0, 100.0, 100.0)];
        assert_eq!(pooled_gain(&rows, 0), Some(1.0));
        let one = lull_tasks::spindown::WindowClairvoyant {
            window_s: 600.0,
            energy_j: e - 1e-13,
            spinups: 0,
        };
        assert_eq!(one.gain(e, e), 1.0);
        let rows = [row(0, e + 1.0, e, e - 1e-13)];
        assert_eq!(pooled_gain(&rows, 0), None);
        assert!(one.gain(e, e + 1.0).is_nan());
        // Better than the best fixed timer (the oracle) is not "all of
        // nothing" either: it read 1, as if it merely matched it.
        let rows = [row(0, e - 1.0, e, e - 1e-13)];
        assert_eq!(pooled_gain(&rows, 0), None);
        assert!(one.gain(e, e - 1.0).is_nan());
    }
}
