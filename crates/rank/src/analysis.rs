//! From rows to an answer: reference rows completed, robust or paper
//! scores, equivalent networks collapsed, Pareto frontiers, and the
//! recommendation under the user's limits.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::axes::{Axes, Form, Ideal};
use crate::grid::BEST_FIXED;
use crate::score::{self, Mode, Point, Scored, Summary};
use crate::sweep::{DELAYED_PER_HOUR, Row, SPINUPS_PER_DAY};

/// The measure key of each network's excess energy over the oracle
/// relative to the best fixed timer's: `(E − E_oracle) / (E_best_fixed −
/// E_oracle)`; 1 = as good as the best fixed timeout in hindsight.
pub const EXCESS: &str = "excess_vs_best_fixed";
/// The share of what the clairvoyant per-10-minute timer adds over the
/// best fixed timeout that a network captures (spindown; from the task).
pub const GAIN: &str = "gain_vs_clairvoyant";

/// Whether `name` is one of the internal measures (SPEC §4.1): a task
/// that reports its own measures is told apart on those, not on these.
fn is_internal(name: &str) -> bool {
    lull_core::measures::InternalMeasures::default()
        .pairs()
        .iter()
        .any(|(k, _)| *k == name)
}

/// Limits a recommendation must keep on every trace (`--max-…` flags).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Spin-ups per day (`--max-spinups-per-day`; the daemon's
    /// `max_spindowns_per_day`: every spin-down ends in a spin-up).
    pub max_spinups_per_day: Option<f64>,
    /// Delayed operations per hour (`--max-delayed-per-hour`).
    pub max_delayed_per_hour: Option<f64>,
    /// Largest write-back queue, bytes (`--max-queue-bytes`).
    pub max_queue_bytes: Option<f64>,
    /// Mean delay cleaning adds to requests, ms (`--max-added-delay-ms`).
    pub max_added_delay_ms: Option<f64>,
}

impl Limits {
    /// `(flag, measure, limit)` of each limit that is set.
    pub fn list(&self) -> Vec<(&'static str, &'static str, f64)> {
        [
            (
                "--max-spinups-per-day",
                SPINUPS_PER_DAY,
                self.max_spinups_per_day,
            ),
            (
                "--max-delayed-per-hour",
                DELAYED_PER_HOUR,
                self.max_delayed_per_hour,
            ),
            ("--max-queue-bytes", "max_queue_bytes", self.max_queue_bytes),
            (
                "--max-added-delay-ms",
                "mean_added_delay_ms",
                self.max_added_delay_ms,
            ),
        ]
        .into_iter()
        .filter_map(|(f, m, v)| v.map(|v| (f, m, v)))
        .collect()
    }

    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.list().is_empty()
    }
}

/// Adds what a whole (or merged) run derives from its rows, once: the best
/// fixed timer in hindsight where the task did not report one (the grid's
/// plain timer with the least energy on the trace, as a reference row at
/// `best_fixed_index`), and every row's [`EXCESS`] when the task did not
/// report it. Rows that already carry them are left alone, so a redraw
/// changes nothing.
pub fn complete(rows: &mut Vec<Row>, best_fixed_index: Option<usize>) {
    let mut traces: Vec<usize> = rows.iter().map(|r| r.trace_index).collect();
    traces.dedup();
    if let Some(index) = best_fixed_index {
        for &t in &traces {
            if rows
                .iter()
                .any(|r| r.trace_index == t && r.network_index == index)
            {
                continue;
            }
            let best = rows
                .iter()
                .filter(|r| {
                    r.trace_index == t
                        && !r.reference
                        && r.start_family == "timer"
                        && r.skeptic.is_none()
                })
                .filter_map(|r| r.measure("energy_j").map(|e| (e, r)))
                .filter(|(e, _)| e.is_finite())
                .min_by(|a, b| {
                    a.0.total_cmp(&b.0)
                        .then(a.1.network_index.cmp(&b.1.network_index))
                });
            if let Some((_, r)) = best {
                let mut row = r.clone();
                row.network_index = index;
                row.reference = true;
                row.spec = BEST_FIXED.into();
                rows.push(row);
            }
        }
        rows.sort_by_key(|r| (r.trace_index, r.network_index));
    }
    // Excess over the oracle relative to the best fixed timer's.
    let bf: BTreeMap<usize, f64> = rows
        .iter()
        .filter(|r| r.spec == BEST_FIXED && r.reference)
        .filter_map(|r| Some((r.trace_index, r.measure("energy_j")?)))
        .collect();
    for r in rows.iter_mut() {
        if r.measure(EXCESS).is_some() {
            continue;
        }
        let (Some(e), Some(o)) = (r.measure("energy_j"), r.measure("oracle_energy_j")) else {
            continue;
        };
        let b = r
            .measure("best_fixed_energy_j")
            .or_else(|| bf.get(&r.trace_index).copied());
        if let Some(b) = b {
            let denom = b - o;
            let v = if denom.abs() > 1e-9 * o.abs().max(1.0) {
                (e - o) / denom
            } else if (e - o).abs() <= 1e-9 * o.abs().max(1.0) {
                1.0
            } else {
                f64::INFINITY
            };
            r.measures.push((EXCESS.into(), v));
        }
    }
}

fn is_oracle(r: &Row) -> bool {
    r.reference && r.start_family == "oracle"
}

/// The median of the positive finite values, if any.
fn median_positive(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite() && *x > 0.0);
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// Robustly scaled `(x', y', worse than no task)` of every row.
fn robust_scaled(rows: &[Row], axes: &Axes) -> Vec<(f64, f64, bool)> {
    let mut refs: BTreeMap<(usize, &str), f64> = BTreeMap::new();
    let mut traces: Vec<usize> = rows.iter().map(|r| r.trace_index).collect();
    traces.dedup();
    for axis in [axes.x, axes.y] {
        for &t in &traces {
            let mine = || rows.iter().filter(|r| r.trace_index == t);
            let oracle = mine()
                .find(|r| is_oracle(r))
                .and_then(|r| r.measure(axis.measure));
            let value = match axis.form {
                Form::Share(Ideal::Oracle) => {
                    oracle.filter(|v| v.is_finite() && *v > 0.0).or_else(|| {
                        mine()
                            .filter(|r| !r.reference)
                            .filter_map(|r| r.measure(axis.measure))
                            .filter(|v| v.is_finite())
                            .reduce(f64::max)
                    })
                }
                Form::Cost => oracle.filter(|v| v.is_finite() && *v > 0.0).or_else(|| {
                    median_positive(
                        mine()
                            .filter(|r| !r.reference)
                            .filter_map(|r| r.measure(axis.measure))
                            .collect(),
                    )
                }),
                _ => None,
            };
            if let Some(v) = value {
                refs.insert((t, axis.measure), v);
            }
        }
    }
    rows.iter()
        .map(|r| {
            let mut worse = false;
            let mut one = |axis: crate::axes::Axis| {
                let v = r.measure(axis.measure).unwrap_or(f64::NAN);
                let reference = refs.get(&(r.trace_index, axis.measure)).copied();
                match axis.form {
                    Form::Share(ideal) => {
                        let ideal = match ideal {
                            Ideal::Measure(m) => r.measure(m).unwrap_or(f64::NAN),
                            Ideal::Const(c) => c,
                            Ideal::Oracle => reference.unwrap_or(f64::NAN),
                        };
                        let (s, w) = score::share_scaled(v, ideal);
                        worse |= w;
                        s
                    }
                    Form::Cost => score::cost_scaled(v, reference.unwrap_or(1.0)),
                }
            };
            let x = one(axes.x);
            let y = one(axes.y);
            (x, y, worse)
        })
        .collect()
}

/// Where a reference row is listed: `auto`, hd-idle's 10 minutes, the
/// best fixed timer, the oracle, then any other.
fn reference_order(r: Option<&Row>) -> usize {
    match r {
        Some(r) if r.spec == "auto" => 0,
        Some(r) if r.spec == crate::grid::HD_IDLE => 1,
        Some(r) if r.spec == BEST_FIXED => 2,
        Some(r) if is_oracle(r) => 3,
        _ => 4,
    }
}

/// Per trace, each measure's name and bits.
type Signature = Vec<(usize, Vec<(String, u64)>)>;

/// A network's identity for collapsing: every measure the task reports
/// (the internal ones too when the task ranks on them), bit for bit, on
/// every trace.
fn signature(rows: &[&Row], axes: &Axes) -> Signature {
    let internal_axes = is_internal(axes.x.measure);
    rows.iter()
        .map(|r| {
            (
                r.trace_index,
                r.measures
                    .iter()
                    .filter(|(k, _)| internal_axes || !is_internal(k))
                    .map(|(k, v)| (k.clone(), v.to_bits()))
                    .collect(),
            )
        })
        .collect()
}

/// Scores rows (sorted by trace, network) on `axes`: per-run scores, and
/// per-network summaries in report order (ranked networks best first, then
/// the reference rows: `auto`, hd-idle's 10 minutes, best fixed timer,
/// oracle). Networks with
/// identical measures on every trace are collapsed into the first (in grid
/// order), which lists the others; Pareto frontiers are marked per trace
/// (raw measures) and across traces (mean scaled measures).
pub fn score_rows(rows: &[Row], axes: &Axes, mode: Mode) -> (Vec<Scored>, Vec<Summary>) {
    let points: Vec<Point> = rows
        .iter()
        .map(|r| Point {
            policy: r.network_index,
            workload: r.trace_index,
            x: r.measure(axes.x.measure).unwrap_or(f64::NAN),
            y: r.measure(axes.y.measure).unwrap_or(f64::NAN),
            reference: r.reference,
        })
        .collect();
    let scored = match mode {
        Mode::Paper => score::score(&points, axes.x.better, axes.y.better),
        Mode::Robust => score::score_scaled(&points, &robust_scaled(rows, axes)),
    };
    let mut summaries = score::summarize(&points, &scored);
    // Pareto per trace, on the raw measures of the ranked networks.
    let mut on_frontier: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut traces: Vec<usize> = rows.iter().map(|r| r.trace_index).collect();
    traces.dedup();
    for &t in &traces {
        let idx: Vec<usize> = (0..points.len())
            .filter(|&i| points[i].workload == t && !points[i].reference)
            .collect();
        let pts: Vec<(f64, f64)> = idx.iter().map(|&i| (points[i].x, points[i].y)).collect();
        for (k, on) in score::pareto(&pts, axes.x.better, axes.y.better)
            .into_iter()
            .enumerate()
        {
            if on {
                on_frontier
                    .entry(points[idx[k]].policy)
                    .or_default()
                    .push(t);
            }
        }
    }
    // Collapse equivalent networks.
    let mut by_sig: BTreeMap<Signature, usize> = BTreeMap::new();
    let mut absorbed: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut policies: Vec<usize> = summaries
        .iter()
        .filter(|s| !s.reference)
        .map(|s| s.policy)
        .collect();
    policies.sort_unstable();
    for p in policies {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.network_index == p).collect();
        let sig = signature(&mine, axes);
        match by_sig.get(&sig) {
            Some(&first) => absorbed.entry(first).or_default().push(p),
            None => {
                by_sig.insert(sig, p);
            }
        }
    }
    let gone: Vec<usize> = absorbed.values().flatten().copied().collect();
    summaries.retain(|s| !gone.contains(&s.policy));
    for s in &mut summaries {
        s.equivalents = absorbed.remove(&s.policy).unwrap_or_default();
        s.frontier = on_frontier.remove(&s.policy).unwrap_or_default();
    }
    // Pareto across traces on the mean scaled measures (lower is better).
    let ranked: Vec<usize> = (0..summaries.len())
        .filter(|&i| !summaries[i].reference)
        .collect();
    let pts: Vec<(f64, f64)> = ranked
        .iter()
        .map(|&i| (summaries[i].mean_x, summaries[i].mean_y))
        .collect();
    for (k, on) in score::pareto(&pts, score::Better::Lower, score::Better::Lower)
        .into_iter()
        .enumerate()
    {
        summaries[ranked[k]].pareto = on;
    }
    score::rerank(&mut summaries);
    let first = |p: usize| rows.iter().find(|r| r.network_index == p);
    summaries.sort_by_key(|s| {
        (
            s.reference,
            if s.reference {
                reference_order(first(s.policy))
            } else {
                0
            },
        )
    });
    (scored, summaries)
}

/// What to recommend under the limits.
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    /// The best-ranked network that keeps every limit on every trace
    /// (with no limits: the best-ranked network).
    Meets(usize),
    /// None keeps the limits; the one that comes closest (smallest worst
    /// ratio of measure to limit) and that ratio.
    Closest(usize, f64),
    /// Nothing was ranked.
    Nothing,
}

impl Choice {
    /// The network chosen, if any (met or closest).
    pub fn network(&self) -> Option<usize> {
        match *self {
            Choice::Meets(p) | Choice::Closest(p, _) => Some(p),
            Choice::Nothing => None,
        }
    }
}

/// The worst ratio of measure to limit of network `policy` over its
/// traces (≤ 1: keeps every limit); limits whose measure the task does
/// not report are ignored.
pub fn limit_ratio(rows: &[Row], policy: usize, limits: &Limits) -> f64 {
    let mut worst: f64 = 0.0;
    for (_, m, limit) in limits.list() {
        for r in rows.iter().filter(|r| r.network_index == policy) {
            let Some(v) = r.measure(m) else { continue };
            let ratio = if limit > 0.0 {
                v / limit
            } else if v > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            worst = worst.max(if ratio.is_nan() { f64::INFINITY } else { ratio });
        }
    }
    worst
}

/// Limits whose measure no row reports (they cannot be checked).
pub fn unchecked_limits(rows: &[Row], limits: &Limits) -> Vec<&'static str> {
    limits
        .list()
        .into_iter()
        .filter(|(_, m, _)| !rows.iter().any(|r| r.measure(m).is_some()))
        .map(|(f, _, _)| f)
        .collect()
}

/// The recommendation: the best-ranked network that keeps the limits on
/// every trace, else the one that comes closest.
pub fn choose(summaries: &[Summary], rows: &[Row], limits: &Limits) -> Choice {
    let ranked: Vec<&Summary> = summaries.iter().filter(|s| !s.reference).collect();
    if ranked.is_empty() {
        return Choice::Nothing;
    }
    if let Some(s) = ranked
        .iter()
        .find(|s| limit_ratio(rows, s.policy, limits) <= 1.0)
    {
        return Choice::Meets(s.policy);
    }
    let (p, r) = ranked
        .iter()
        .map(|s| (s.policy, limit_ratio(rows, s.policy, limits)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((ranked[0].policy, f64::INFINITY));
    Choice::Closest(p, r)
}
