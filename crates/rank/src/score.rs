//! The ranking math of §4.1.1 of the paper (SPEC §4.4), on plain numbers.
//!
//! - **Scaling.** Over the runs of one workload, each measure is mapped to
//!   `[0, 1]` with 0 the best observed value and 1 the worst:
//!   `x' = (x_best − x) / (x_best − x_worst)`. When every run has the same
//!   value the range is zero and every run scales to 0 (nobody is worse).
//!   A non-finite value (NaN, ±∞) counts as the worst, 1.
//! - **Distance.** The two scaled measures of a run are a point; its
//!   Euclidean distance from the origin, `√(x'² + y'²)`, summarizes the
//!   trade-off (0 = best at both, √2 = worst at both).
//! - **Consistency.** Across workloads, a network's distances have a mean
//!   (overall goodness) and a population variance, `Σ(d − mean)² / |W|`
//!   (the paper's `1/|W|` convention).
//! - **Reference rows** (the offline oracle) are scored against the range
//!   of the real networks but do not widen it, and their scaled values are
//!   clamped to `[0, 1]`, so the oracle sits at (or near) the origin without
//!   stretching everybody else's scale. They get no rank.
//! - **Robust scores** ([`Mode::Robust`], the default): each measure is
//!   scaled against references that mean something on its trace and that
//!   no other network can move ([`crate::axes::Form`]): a benefit as the
//!   share of the ideal captured (spindown: of the oracle's savings),
//!   clipped to `[0, 1]`, a run that does worse than no task at all being
//!   flagged "worse than no task" instead of stretching the scale; a cost
//!   as `c / (c + c_oracle)`. A network's score depends only on its own
//!   measures and the trace's references, so adding or removing networks
//!   (pathological or not) never moves anybody else's. [`Mode::Paper`] is
//!   the min–max scaling above.
//! - **Ranks** are competition ranks ("1, 2, 2, 4"): networks whose mean
//!   distances are equal within 1e-12 share a rank; ties are listed in grid
//!   order.

/// How measures are scaled before the distance is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Against the trace's references (no task, the oracle): outliers
    /// cannot move the scale.
    #[default]
    Robust,
    /// Min–max over the trace's networks (the paper's §4.1.1).
    Paper,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "robust" => Ok(Mode::Robust),
            "paper" => Ok(Mode::Paper),
            _ => Err(format!("unknown score `{s}` (known: robust, paper)")),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Robust => "robust",
            Mode::Paper => "paper",
        })
    }
}

/// A benefit `v` (0 = what no task achieves) against its `ideal`: the
/// scaled value `1 − clamp(v / ideal, 0, 1)` (0 = as good as the ideal) and
/// whether `v` is worse than no task. With nothing to gain (`ideal ≤ 0`)
/// every run that loses nothing scores 0.
pub fn share_scaled(v: f64, ideal: f64) -> (f64, bool) {
    const EPS: f64 = 1e-9;
    if !v.is_finite() {
        return (1.0, v.is_nan() || v < 0.0);
    }
    let tol = EPS * ideal.abs().max(1.0);
    let worse = v < -tol;
    if !(ideal.is_finite() && ideal > tol) {
        return (if worse { 1.0 } else { 0.0 }, worse);
    }
    (1.0 - (v / ideal).clamp(0.0, 1.0) + 0.0, worse)
}

/// A cost `c` (0 = free) against a reference cost: `c / (c + reference)`,
/// 0.5 at the reference, approaching 1 as the cost grows without bound.
pub fn cost_scaled(c: f64, reference: f64) -> f64 {
    if c.is_nan() || c == f64::INFINITY {
        return 1.0;
    }
    if c <= 0.0 {
        return 0.0;
    }
    let r = if reference.is_finite() && reference > 0.0 {
        reference
    } else {
        1.0
    };
    c / (c + r)
}

/// Distances and per-workload competition ranks of already scaled points.
pub fn score_scaled(points: &[Point], scaled: &[(f64, f64, bool)]) -> Vec<Scored> {
    let mut out: Vec<Scored> = scaled
        .iter()
        .map(|&(x, y, worse)| Scored {
            x,
            y,
            distance: distance(x, y),
            rank: None,
            worse,
        })
        .collect();
    rank_within(points, &mut out);
    out
}

fn rank_within(points: &[Point], out: &mut [Scored]) {
    let mut workloads: Vec<usize> = points.iter().map(|p| p.workload).collect();
    workloads.sort_unstable();
    workloads.dedup();
    for w in workloads {
        let mut order: Vec<usize> = (0..points.len())
            .filter(|&i| points[i].workload == w && !points[i].reference)
            .collect();
        order.sort_by(|&a, &b| {
            out[a]
                .distance
                .total_cmp(&out[b].distance)
                .then(points[a].policy.cmp(&points[b].policy))
        });
        let sorted: Vec<f64> = order.iter().map(|&i| out[i].distance).collect();
        for (i, r) in order.iter().zip(competition_ranks(&sorted)) {
            out[*i].rank = Some(r);
        }
    }
}

/// Which end of a measure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// Larger values are better (energy saved, efficiency).
    Higher,
    /// Smaller values are better (delayed operations, violations).
    Lower,
}

/// Two values this close are the same for ranking.
pub const TIE_EPSILON: f64 = 1e-12;

/// The best and worst finite values of `values`, or `None` if there are none.
pub fn best_worst(values: impl IntoIterator<Item = f64>, better: Better) -> Option<(f64, f64)> {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in values.into_iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return None;
    }
    Some(match better {
        Better::Higher => (hi, lo),
        Better::Lower => (lo, hi),
    })
}

/// Scales `value` into `[0, 1]` given the best and worst values of its
/// workload (unclamped for values outside that range; non-finite: 1).
pub fn scale_one(value: f64, best: f64, worst: f64) -> f64 {
    if !value.is_finite() {
        return 1.0;
    }
    let range = best - worst;
    if range == 0.0 {
        return 0.0;
    }
    // `+ 0.0` turns a negative zero into zero, so tables never say `-0.0`.
    (best - value) / range + 0.0
}

/// Scales every value of one workload into `[0, 1]`, 0 = best.
pub fn scale(values: &[f64], better: Better) -> Vec<f64> {
    match best_worst(values.iter().copied(), better) {
        Some((best, worst)) => values.iter().map(|&v| scale_one(v, best, worst)).collect(),
        None => vec![1.0; values.len()],
    }
}

/// Euclidean distance of a scaled pair from the origin.
pub fn distance(x: f64, y: f64) -> f64 {
    (x * x + y * y).sqrt()
}

/// Mean and population variance (`1/n`); `(NaN, NaN)` for no values.
pub fn mean_var(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var)
}

/// Competition ranks ("1, 2, 2, 4") of values already sorted ascending.
pub fn competition_ranks(sorted: &[f64]) -> Vec<usize> {
    let mut ranks = Vec::with_capacity(sorted.len());
    for (i, &v) in sorted.iter().enumerate() {
        if i > 0 && ties(sorted[i - 1], v) {
            ranks.push(ranks[i - 1]);
        } else {
            ranks.push(i + 1);
        }
    }
    ranks
}

fn ties(a: f64, b: f64) -> bool {
    (a - b).abs() <= TIE_EPSILON || (a.is_nan() && b.is_nan())
}

/// One run to score: a network on a workload, with its two measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// The network (index into the grid).
    pub policy: usize,
    /// The workload (index into the trace list).
    pub workload: usize,
    /// The first measure (the horizontal axis of the trade-off plot).
    pub x: f64,
    /// The second measure.
    pub y: f64,
    /// A reference row (the oracle): scored, never ranked, never widens
    /// the scale.
    pub reference: bool,
}

/// A point after scaling within its workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored {
    /// Scaled first measure, 0 = best.
    pub x: f64,
    /// Scaled second measure, 0 = best.
    pub y: f64,
    /// Distance from the origin.
    pub distance: f64,
    /// Competition rank of the distance within the workload (`None` for
    /// reference rows).
    pub rank: Option<usize>,
    /// Worse than no task at all on this workload (robust score).
    pub worse: bool,
}

/// Scales and ranks every point within its workload.
pub fn score(points: &[Point], xb: Better, yb: Better) -> Vec<Scored> {
    let mut out = vec![
        Scored {
            x: f64::NAN,
            y: f64::NAN,
            distance: f64::NAN,
            rank: None,
            worse: false,
        };
        points.len()
    ];
    let mut workloads: Vec<usize> = points.iter().map(|p| p.workload).collect();
    workloads.sort_unstable();
    workloads.dedup();
    for w in workloads {
        let idx: Vec<usize> = (0..points.len())
            .filter(|&i| points[i].workload == w)
            .collect();
        let real = || idx.iter().filter(|&&i| !points[i].reference);
        let bx = best_worst(real().map(|&i| points[i].x), xb);
        let by = best_worst(real().map(|&i| points[i].y), yb);
        for &i in &idx {
            let p = &points[i];
            let sx = bx.map_or(1.0, |(b, w)| scale_one(p.x, b, w));
            let sy = by.map_or(1.0, |(b, w)| scale_one(p.y, b, w));
            let (sx, sy) = if p.reference {
                (sx.clamp(0.0, 1.0) + 0.0, sy.clamp(0.0, 1.0) + 0.0)
            } else {
                (sx, sy)
            };
            out[i] = Scored {
                x: sx,
                y: sy,
                distance: distance(sx, sy),
                rank: None,
                worse: false,
            };
        }
    }
    rank_within(points, &mut out);
    out
}

/// A network's consistency across workloads.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The network (index into the grid).
    pub policy: usize,
    /// Whether it is a reference row.
    pub reference: bool,
    /// Its distance on each workload it ran on, by workload index.
    pub distances: Vec<(usize, f64)>,
    /// Mean distance.
    pub mean: f64,
    /// Population variance of the distance.
    pub variance: f64,
    /// Mean scaled first measure.
    pub mean_x: f64,
    /// Mean scaled second measure.
    pub mean_y: f64,
    /// Competition rank by mean distance (`None` for reference rows).
    pub rank: Option<usize>,
    /// Workloads on which it did worse than no task.
    pub worse: usize,
    /// Networks with identical measures on every workload, collapsed into
    /// this row (grid indices).
    pub equivalents: Vec<usize>,
    /// The workloads on which it is on the Pareto frontier of the two
    /// measures.
    pub frontier: Vec<usize>,
    /// On the frontier of the mean scaled measures across workloads.
    pub pareto: bool,
}

/// Summarizes scored points per network and ranks them by mean distance:
/// ranked networks first (best first, ties in policy order), then the
/// reference rows.
pub fn summarize(points: &[Point], scored: &[Scored]) -> Vec<Summary> {
    let mut policies: Vec<usize> = points.iter().map(|p| p.policy).collect();
    policies.sort_unstable();
    policies.dedup();
    let mut out: Vec<Summary> = policies
        .into_iter()
        .map(|policy| {
            let mine: Vec<usize> = (0..points.len())
                .filter(|&i| points[i].policy == policy)
                .collect();
            let mut distances: Vec<(usize, f64)> = mine
                .iter()
                .map(|&i| (points[i].workload, scored[i].distance))
                .collect();
            distances.sort_by_key(|d| d.0);
            let ds: Vec<f64> = distances.iter().map(|d| d.1).collect();
            let (mean, variance) = mean_var(&ds);
            let xs: Vec<f64> = mine.iter().map(|&i| scored[i].x).collect();
            let ys: Vec<f64> = mine.iter().map(|&i| scored[i].y).collect();
            Summary {
                policy,
                reference: mine.iter().any(|&i| points[i].reference),
                distances,
                mean,
                variance,
                mean_x: mean_var(&xs).0,
                mean_y: mean_var(&ys).0,
                rank: None,
                worse: mine.iter().filter(|&&i| scored[i].worse).count(),
                equivalents: Vec::new(),
                frontier: Vec::new(),
                pareto: false,
            }
        })
        .collect();
    rerank(&mut out);
    out
}

/// Sorts summaries (ranked first by mean distance, ties in policy order,
/// then the reference rows in policy order) and assigns competition ranks.
pub fn rerank(out: &mut [Summary]) {
    out.sort_by(|a, b| {
        a.reference
            .cmp(&b.reference)
            .then(if a.reference {
                std::cmp::Ordering::Equal
            } else {
                a.mean.total_cmp(&b.mean)
            })
            .then(a.policy.cmp(&b.policy))
    });
    let ranked = out.iter().filter(|s| !s.reference).count();
    let sorted: Vec<f64> = out[..ranked].iter().map(|s| s.mean).collect();
    for (s, r) in out.iter_mut().zip(competition_ranks(&sorted)) {
        s.rank = Some(r);
    }
}

/// Indices of the points not dominated by another: `a` dominates `b` when
/// it is at least as good on both measures and better on one. Non-finite
/// points are never on the frontier. Quadratic; grids hold hundreds.
pub fn pareto(points: &[(f64, f64)], xb: Better, yb: Better) -> Vec<bool> {
    let better = |a: f64, b: f64, dir: Better| match dir {
        Better::Higher => a > b,
        Better::Lower => a < b,
    };
    let at_least = |a: f64, b: f64, dir: Better| a == b || better(a, b, dir);
    points
        .iter()
        .map(|&(x, y)| {
            x.is_finite()
                && y.is_finite()
                && !points.iter().any(|&(ox, oy)| {
                    ox.is_finite()
                        && oy.is_finite()
                        && at_least(ox, x, xb)
                        && at_least(oy, y, yb)
                        && (better(ox, x, xb) || better(oy, y, yb))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn scaling_maps_best_to_zero_and_worst_to_one() {
        assert_eq!(
            scale(&[10.0, 20.0, 15.0], Better::Higher),
            vec![1.0, 0.0, 0.5]
        );
        assert_eq!(
            scale(&[10.0, 20.0, 15.0], Better::Lower),
            vec![0.0, 1.0, 0.5]
        );
        // Zero range: nobody is worse than anybody.
        assert_eq!(scale(&[3.0, 3.0], Better::Lower), vec![0.0, 0.0]);
        // A NaN counts as worst and does not move the range.
        assert_eq!(
            scale(&[1.0, f64::NAN, 3.0], Better::Lower),
            vec![0.0, 1.0, 1.0]
        );
        assert_eq!(scale(&[f64::NAN], Better::Lower), vec![1.0]);
    }

    #[test]
    fn the_papers_worked_example() {
        // §4.1.1: X from 16.65 to 18.06 ms (higher better), Y from 0.14 to
        // 8455 KB (lower better); (17.4, 90) → (0.46, 0.0106), d = 0.46012.
        // The paper truncates: 0.66 / 1.41 is 0.468.
        let x = scale(&[16.65, 18.06, 17.4], Better::Higher)[2];
        let y = scale(&[0.14, 8455.0, 90.0], Better::Lower)[2];
        assert!((x - 0.66 / 1.41).abs() < 1e-12, "{x}");
        assert!((x - 0.46).abs() < 0.01, "{x}");
        assert!((y - 0.0106).abs() < 0.0001, "{y}");
        assert!((distance(x, y) - 0.46012).abs() < 0.01);
    }

    #[test]
    fn distance_and_moments() {
        assert!(close(distance(3.0, 4.0), 5.0));
        assert!(close(distance(1.0, 1.0), 2f64.sqrt()));
        let (m, v) = mean_var(&[1.0, 2.0, 3.0, 4.0]);
        assert!(close(m, 2.5));
        assert!(close(v, 1.25)); // population variance
        let (m, v) = mean_var(&[0.7]);
        assert!(close(m, 0.7) && v == 0.0);
        assert!(mean_var(&[]).0.is_nan());
    }

    #[test]
    fn competition_ranks_share_ties() {
        assert_eq!(
            competition_ranks(&[0.1, 0.2, 0.2, 0.3, 0.3, 0.3, 0.9]),
            vec![1, 2, 2, 4, 4, 4, 7]
        );
        assert_eq!(competition_ranks(&[0.5, 0.5 + 1e-14]), vec![1, 1]);
        assert!(competition_ranks(&[]).is_empty());
    }

    fn p(policy: usize, workload: usize, x: f64, y: f64) -> Point {
        Point {
            policy,
            workload,
            x,
            y,
            reference: false,
        }
    }

    #[test]
    fn score_and_summarize_by_hand() {
        // x: higher better, y: lower better. Two workloads, three networks
        // and an oracle.
        let points = vec![
            p(0, 0, 10.0, 0.0), // best x, best y → 0
            p(1, 0, 0.0, 4.0),  // worst both → √2
            p(2, 0, 5.0, 2.0),  // (0.5, 0.5) → 0.7071
            p(0, 1, 2.0, 1.0),  // x' = 0.5, y' = 1 → 1.118
            p(1, 1, 4.0, 1.0),  // (0, 1) → 1
            p(2, 1, 0.0, 0.0),  // (1, 0) → 1
            Point {
                reference: true,
                ..p(3, 0, 12.0, 0.0)
            },
            Point {
                reference: true,
                ..p(3, 1, 4.0, 0.5)
            },
        ];
        let s = score(&points, Better::Higher, Better::Lower);
        assert!(close(s[0].distance, 0.0));
        assert!(close(s[1].distance, 2f64.sqrt()));
        assert!(close(s[2].distance, 0.5f64.sqrt()));
        assert!(close(s[3].distance, 1.25f64.sqrt()));
        assert!(close(s[4].distance, 1.0));
        assert!(close(s[5].distance, 1.0));
        // Per-workload ranks: ties share a rank.
        assert_eq!(
            s.iter().map(|s| s.rank).collect::<Vec<_>>(),
            vec![
                Some(1),
                Some(3),
                Some(2),
                Some(3),
                Some(1),
                Some(1),
                None,
                None
            ]
        );
        // The oracle beat the best x on workload 0: clamped to 0, not
        // negative, and it did not stretch the scale.
        assert_eq!((s[6].x, s[6].y), (0.0, 0.0));
        assert!(close(s[7].y, 0.5));

        let sum = summarize(&points, &s);
        let order: Vec<usize> = sum.iter().map(|s| s.policy).collect();
        // Means: net0 (0 + 1.118)/2 = 0.559, net2 (0.707 + 1)/2 = 0.854,
        // net1 (1.414 + 1)/2 = 1.207; the oracle last, unranked.
        assert_eq!(order, vec![0, 2, 1, 3]);
        assert_eq!(
            sum.iter().map(|s| s.rank).collect::<Vec<_>>(),
            vec![Some(1), Some(2), Some(3), None]
        );
        assert!(close(sum[0].mean, 1.25f64.sqrt() / 2.0));
        assert!(close(sum[0].variance, 1.25 / 4.0));
        assert!(close(sum[0].mean_x, 0.25));
        assert!(close(sum[0].mean_y, 0.5));
        assert_eq!(sum[0].distances.len(), 2);
    }

    #[test]
    fn equal_means_tie_in_policy_order() {
        let points = vec![p(5, 0, 1.0, 1.0), p(2, 0, 1.0, 1.0), p(7, 0, 0.0, 2.0)];
        let s = score(&points, Better::Higher, Better::Lower);
        let sum = summarize(&points, &s);
        assert_eq!(
            sum.iter().map(|s| (s.policy, s.rank)).collect::<Vec<_>>(),
            vec![(2, Some(1)), (5, Some(1)), (7, Some(3))]
        );
    }

    #[test]
    fn robust_forms_by_hand() {
        // Share of the ideal captured, clipped; negative = worse than no task.
        assert_eq!(share_scaled(30.0, 40.0), (0.25, false));
        assert_eq!(share_scaled(40.0, 40.0), (0.0, false));
        assert_eq!(share_scaled(50.0, 40.0), (0.0, false));
        assert_eq!(share_scaled(0.0, 40.0), (1.0, false));
        assert_eq!(share_scaled(-3000.0, 40.0), (1.0, true));
        // Nothing to gain: losing nothing is ideal, losing is flagged.
        assert_eq!(share_scaled(0.0, 0.0), (0.0, false));
        assert_eq!(share_scaled(-1.0, 0.0), (1.0, true));
        assert_eq!(share_scaled(f64::NAN, 40.0), (1.0, true));
        // Costs against a reference: 0.5 at the reference, below 1 always.
        assert_eq!(cost_scaled(0.0, 10.0), 0.0);
        assert_eq!(cost_scaled(10.0, 10.0), 0.5);
        assert!(close(cost_scaled(30.0, 10.0), 0.75));
        assert!(cost_scaled(1e12, 10.0) < 1.0);
        assert_eq!(cost_scaled(f64::NAN, 10.0), 1.0);
        // No usable reference: 1 stands in.
        assert_eq!(cost_scaled(1.0, 0.0), 0.5);
    }

    #[test]
    fn robust_scores_do_not_depend_on_the_other_networks() {
        let pts = |n: usize| -> Vec<Point> { (0..n).map(|i| p(i, 0, 0.0, 0.0)).collect() };
        let scaled = vec![(0.2, 0.5, false), (0.0, 0.9, false), (1.0, 0.99, true)];
        let all = score_scaled(&pts(3), &scaled);
        let two = score_scaled(&pts(2), &scaled[..2]);
        assert_eq!(all[0].distance, two[0].distance);
        assert_eq!(all[0].rank, Some(1));
        assert!(all[2].worse && !all[0].worse);
    }

    #[test]
    fn pareto_by_hand() {
        // Higher x and lower y are better.
        let pts = [
            (10.0, 5.0),
            (8.0, 1.0),
            (9.0, 6.0),
            (10.0, 5.0),
            (0.0, 0.0),
            (f64::NAN, 0.0),
        ];
        assert_eq!(
            pareto(&pts, Better::Higher, Better::Lower),
            vec![true, true, false, true, true, false]
        );
    }
}
