//! Moving-average duration predictors (§3.1.2 "moving average" and
//! "filtered moving average", Table 5 `Average`): `average(n, kind)` and
//! `filtered-average(min, n, kind)`.
//!
//! The predictor remembers the lengths of the last `n` actual idle periods
//! (for `filtered-average`, only those of at least `min`, so that many
//! short, useless periods do not bias the estimate of the long ones).
//!
//! Its prediction is conditioned on how long the current idle period has
//! already lasted, `e = now − start of the idle period` (0 when the
//! prediction is made while requests are outstanding): it is the statistic
//! (`kind`: arithmetic `mean`, `geometric` mean or `median`) of the
//! residuals `len − e` of the remembered periods longer than `e`. So
//! `timer(0s) + average(n)` predicts the plain average, and after a timeout
//! the prediction does not overshoot by the time already waited.
//!
//! - `duration(now)`: that statistic; `initial` while nothing is
//!   remembered; zero (no prediction) when no remembered period lasted as
//!   long as `e`.
//! - `continuance(now)`: the same statistic, recomputed for the longer `e`
//!   ("how much longer it will likely continue, given that it has already
//!   lasted", §3.1.3); `None` when no remembered period lasted that long.

use std::collections::VecDeque;

use lull_core::component::DurationPredictor;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{
    Built, ComponentInfo, ParamError, ParamInfo, ParamKind, Params, Registry, Role,
};
use lull_core::time::Nanos;

/// The statistic an [`Average`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AverageKind {
    /// Arithmetic mean.
    Mean,
    /// Geometric mean.
    Geometric,
    /// Median (the mean of the two middle values for an even count).
    Median,
}

/// A moving-average duration predictor; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Average {
    n: usize,
    kind: AverageKind,
    min: Nanos,
    initial: Nanos,
    window: VecDeque<Nanos>,
    idle_start: Option<Nanos>,
    scratch: Vec<u64>,
}

impl Average {
    /// Averages (`kind`) the last `n` idle periods of at least `min`;
    /// predicts `initial` before the first.
    pub fn new(n: usize, kind: AverageKind, min: Nanos, initial: Nanos) -> Self {
        Average {
            n: n.max(1),
            kind,
            min,
            initial,
            window: VecDeque::with_capacity(n.max(1)),
            idle_start: None,
            scratch: Vec::new(),
        }
    }
    /// The remembered idle-period lengths, oldest first.
    pub fn window(&self) -> impl Iterator<Item = Nanos> + '_ {
        self.window.iter().copied()
    }

    /// The statistic of the residuals beyond `e`, if any period lasted
    /// longer than `e`.
    fn residual(&mut self, now: Nanos) -> Option<Nanos> {
        let e = self.idle_start.map_or(Nanos::ZERO, |s| now - s);
        self.scratch.clear();
        self.scratch
            .extend(self.window.iter().filter(|&&l| l > e).map(|&l| (l - e).0));
        let k = self.scratch.len();
        if k == 0 {
            return None;
        }
        let v = match self.kind {
            AverageKind::Mean => {
                let sum: u128 = self.scratch.iter().map(|&x| u128::from(x)).sum();
                (sum / k as u128) as u64
            }
            AverageKind::Geometric => {
                let s: f64 = self.scratch.iter().map(|&x| (x as f64).ln()).sum();
                (s / k as f64).exp().round() as u64
            }
            AverageKind::Median => {
                self.scratch.sort_unstable();
                if k % 2 == 1 {
                    self.scratch[k / 2]
                } else {
                    let (a, b) = (self.scratch[k / 2 - 1], self.scratch[k / 2]);
                    a / 2 + b / 2 + (a % 2 + b % 2) / 2
                }
            }
        };
        Some(Nanos(v))
    }
}

impl DurationPredictor for Average {
    fn wants_events(&self) -> bool {
        false
    }
    fn on_idle_begin(&mut self, now: Nanos) {
        self.idle_start = Some(now);
    }
    fn on_idle_end(&mut self, _now: Nanos, length: Nanos) {
        self.idle_start = None;
        if length >= self.min && length > Nanos::ZERO {
            if self.window.len() == self.n {
                self.window.pop_front();
            }
            self.window.push_back(length);
        }
    }
    fn duration(&mut self, now: Nanos) -> Option<Nanos> {
        if self.window.is_empty() {
            return Some(self.initial);
        }
        Some(self.residual(now).unwrap_or(Nanos::ZERO))
    }
    fn continuance(&mut self, now: Nanos, _elapsed: Nanos) -> Option<Nanos> {
        self.residual(now)
    }
    fn save(&self, _now: Nanos) -> Option<Learned> {
        Some(Learned::new(
            "average",
            1,
            self.window.iter().map(|l| l.0 as f64).collect(),
        ))
    }
    fn restore(&mut self, l: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        let n = l.values.len();
        if n > self.n {
            return Err(LearnedError::new(format!(
                "average: {n} idle lengths for a window of {}",
                self.n
            )));
        }
        let v = l.expect("average", 1, n)?;
        if v.iter().any(|&x| !(x > 0.0 && x < u64::MAX as f64)) {
            return Err(LearnedError::new("average: an idle length out of range"));
        }
        self.window = v.iter().map(|&x| Nanos(x as u64)).collect();
        Ok(())
    }
}

const KIND: ParamInfo = ParamInfo::optional(
    "kind",
    ParamKind::Choice(&["mean", "geometric", "median"]),
    "mean",
    "",
    "the statistic: arithmetic mean, geometric mean or median",
);
const N: ParamInfo = ParamInfo::optional(
    "n",
    ParamKind::Int,
    "10",
    "idle periods",
    "how many recent idle periods are remembered (1 to 100000)",
);
const INITIAL: ParamInfo = ParamInfo::optional(
    "initial",
    ParamKind::Duration,
    "1s",
    "s",
    "prediction before any idle period has been seen",
);

/// Catalogue entry of `average`.
pub const AVERAGE: ComponentInfo = ComponentInfo {
    name: "average",
    role: Role::DurationPredictor,
    summary: "mean, geometric mean or median of the last n idle periods (conditioned on the time already idle)",
    source: "§3.1.2 moving average, Table 5 Average",
    params: &[N, KIND, INITIAL],
    inputs: None,
    offline: false,
    gauges: &[],
};

/// Catalogue entry of `filtered-average`.
pub const FILTERED_AVERAGE: ComponentInfo = ComponentInfo {
    name: "filtered-average",
    role: Role::DurationPredictor,
    summary: "average of the last n idle periods of at least min",
    source: "§3.1.2 filtered moving average",
    params: &[
        ParamInfo::required(
            "min",
            ParamKind::Duration,
            "s",
            "idle periods shorter than this are not remembered (> 0)",
        ),
        N,
        KIND,
        INITIAL,
    ],
    inputs: None,
    offline: false,
    gauges: &[],
};

fn build(p: &Params, filtered: bool) -> Result<Built, ParamError> {
    let min = if filtered {
        p.positive_duration("min")?
    } else {
        Nanos::ZERO
    };
    let kind = match p.choice("kind")? {
        "geometric" => AverageKind::Geometric,
        "median" => AverageKind::Median,
        _ => AverageKind::Mean,
    };
    let n = p.int_in("n", 1, 100_000)? as usize;
    Ok(Built::Duration(Box::new(Average::new(
        n,
        kind,
        min,
        p.duration("initial")?,
    ))))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(AVERAGE, |p| build(p, false));
    r.register(FILTERED_AVERAGE, |p| build(p, true));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    fn fed(kind: AverageKind, min: Nanos, lens: &[u64]) -> Average {
        let mut a = Average::new(3, kind, min, s(1));
        for &l in lens {
            a.on_idle_begin(Nanos::ZERO);
            a.on_idle_end(s(l), s(l));
        }
        a
    }

    #[test]
    fn mean_is_conditioned_on_the_time_already_idle() {
        let mut a = Average::new(3, AverageKind::Mean, Nanos::ZERO, s(1));
        assert_eq!(a.duration(s(0)), Some(s(1)), "initial before any history");
        let mut a = fed(AverageKind::Mean, Nanos::ZERO, &[2, 4, 9]);
        a.on_idle_begin(s(100));
        assert_eq!(a.duration(s(100)), Some(s(5)));
        // 1 s in: residuals 1, 3, 8.
        assert_eq!(a.duration(s(101)), Some(s(4)));
        // 5 s in: only the 9 s period lasted longer; 4 s more.
        assert_eq!(a.continuance(s(105), s(5)), Some(s(4)));
        assert_eq!(a.continuance(s(110), s(10)), None);
        assert_eq!(a.duration(s(110)), Some(Nanos::ZERO));
    }

    #[test]
    fn median_geometric_window_and_filter() {
        let mut a = fed(AverageKind::Median, Nanos::ZERO, &[2, 4, 9]);
        assert_eq!(a.duration(s(0)), Some(s(4)));
        let mut a = fed(AverageKind::Median, Nanos::ZERO, &[2, 4, 9, 10]);
        assert_eq!(a.window().collect::<Vec<_>>(), vec![s(4), s(9), s(10)]);
        assert_eq!(a.duration(s(0)), Some(s(9)));
        let mut a = fed(AverageKind::Median, Nanos::ZERO, &[4, 10]);
        assert_eq!(a.duration(s(0)), Some(s(7)));
        let mut a = fed(AverageKind::Geometric, Nanos::ZERO, &[2, 8]);
        assert_eq!(a.duration(s(0)), Some(s(4)));
        let mut a = fed(AverageKind::Mean, s(3), &[2, 4, 1, 6]);
        assert_eq!(a.window().count(), 2);
        assert_eq!(a.duration(s(0)), Some(s(5)));
    }
}
