//! `adaptive-rate`: a rate threshold that moves toward a goal. See the [module docs](super) for
//! thresholds, hysteresis and residual work.

use lull_core::component::{Context, Prediction, Start, StartDetector};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{ComponentInfo, GaugeInfo, GaugeUnit, ParamInfo, ParamKind, Role};
use lull_core::time::Nanos;

use super::*;

/// `adaptive-rate(n, rate, goal, gain, min, max, hysteresis, horizon)`: an
/// IO/s event window of `n` arrivals whose start threshold adapts to meet
/// an accuracy goal (§3.1.1 rate-based, "adaptive").
///
/// Each prediction it issued is judged at the next arrival: **accurate**
/// when no request arrived before its end (or, for a prediction with no
/// duration, within `horizon` of its start), **violated** otherwise. An
/// accurate prediction multiplies the threshold by `e^{gain·(1−goal)}`
/// (declare more readily), a violated one by `e^{−gain·goal}` (be more
/// careful), so the threshold settles where the share of accurate
/// predictions is `goal`. The threshold stays within `[min, max]`; the end
/// threshold is `threshold × hysteresis`. Declarations may come while
/// requests are outstanding, as for `event-window`.
#[derive(Clone, Debug)]
pub struct AdaptiveRate {
    inner: EventWindow,
    threshold: f64,
    goal: f64,
    gain: f64,
    min: f64,
    max: f64,
    hysteresis: f64,
    horizon: Nanos,
    pending: Option<Prediction>,
}

impl AdaptiveRate {
    /// See the type docs for the parameters.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: usize,
        rate: f64,
        goal: f64,
        gain: f64,
        min: f64,
        max: f64,
        hysteresis: f64,
        horizon: Nanos,
    ) -> Self {
        AdaptiveRate {
            inner: EventWindow::new(n, WindowKind::Ios, rate, rate * hysteresis),
            threshold: rate,
            goal,
            gain,
            min,
            max,
            hysteresis,
            horizon,
            pending: None,
        }
    }
    /// The current start threshold (IO/s).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
    fn judge(&mut self, accurate: bool) {
        let k = if accurate {
            self.gain * (1.0 - self.goal)
        } else {
            -self.gain * self.goal
        };
        self.threshold = (self.threshold * k.exp()).clamp(self.min, self.max);
        self.inner
            .set_thresholds(self.threshold, self.threshold * self.hysteresis);
    }
}

impl StartDetector for AdaptiveRate {
    fn gauges(&self) -> Vec<(String, f64)> {
        vec![("threshold".into(), self.threshold)]
    }
    fn save(&self, _now: Nanos) -> Option<Learned> {
        Some(Learned::new(ADAPTIVE_RATE.name, 1, vec![self.threshold]))
    }
    fn restore(&mut self, l: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        let t = l.expect(ADAPTIVE_RATE.name, 1, 1)?[0];
        if !(t >= self.min && t <= self.max) {
            return Err(LearnedError::new(format!(
                "{}: threshold {t} outside [{}, {}]",
                ADAPTIVE_RATE.name, self.min, self.max
            )));
        }
        self.threshold = t;
        self.inner
            .set_thresholds(self.threshold, self.threshold * self.hysteresis);
        Ok(())
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> {
        if ev.is_arrival() {
            if let Some(p) = self.pending {
                if ev.time >= p.start {
                    self.pending = None;
                    let limit = p.start + p.duration.unwrap_or(self.horizon);
                    self.judge(ev.time >= limit);
                }
            }
        }
        self.inner.on_event(ev, ctx)
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.inner.on_idle_begin(ctx)
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.inner.next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        self.inner.on_deadline(ctx)
    }
    fn on_prediction(&mut self, p: &Prediction) {
        if self.pending.take().is_some() {
            // No arrival came during the previous one.
            self.judge(true);
        }
        self.pending = Some(*p);
    }
}

// ---------------------------------------------------------------- catalogue

/// Catalogue entry of `adaptive-rate`.
pub const ADAPTIVE_RATE: ComponentInfo = ComponentInfo {
    name: "adaptive-rate",
    role: Role::StartDetector,
    summary: "event-window IO/s detector whose threshold adapts toward an accuracy goal (may declare with requests outstanding)",
    source: "§3.1.1 rate-based (adaptive)",
    params: &[
        ParamInfo::optional(
            "n",
            ParamKind::Int,
            "10",
            "requests",
            "window size (1 to 1000000)",
        ),
        ParamInfo::optional(
            "rate",
            ParamKind::Float,
            "1",
            "IO/s",
            "initial start threshold (within [min, max])",
        ),
        ParamInfo::optional(
            "goal",
            ParamKind::Float,
            "0.9",
            "",
            "target share of accurate predictions (0 < goal < 1)",
        ),
        ParamInfo::optional(
            "gain",
            ParamKind::Float,
            "0.2",
            "",
            "log-step of each adjustment (> 0)",
        ),
        ParamInfo::optional(
            "min",
            ParamKind::Float,
            "0.001",
            "IO/s",
            "lowest threshold (> 0)",
        ),
        ParamInfo::optional(
            "max",
            ParamKind::Float,
            "1000",
            "IO/s",
            "highest threshold (>= min)",
        ),
        ParamInfo::optional(
            "hysteresis",
            ParamKind::Float,
            "1",
            "",
            "end threshold = threshold × hysteresis (>= 1)",
        ),
        ParamInfo::optional(
            "horizon",
            ParamKind::Duration,
            "10s",
            "s",
            "how long a prediction with no duration must stay clear to count as accurate (> 0)",
        ),
    ],
    inputs: None,
    offline: false,
    gauges: &[GaugeInfo::new(
        "threshold",
        "rate threshold (IO/s)",
        GaugeUnit::Number,
    )],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duration::Fixed;
    use crate::testutil::{run, s, trace};

    fn fixed1() -> Fixed {
        Fixed::new(s(1.0), false)
    }
    #[test]
    fn adaptive_rate_moves_its_threshold_toward_the_goal() {
        // goal 0.5, gain 2 ln 2: an accurate prediction doubles the
        // threshold, a violated one halves it.
        let gain = 2.0 * std::f64::consts::LN_2;
        let d = AdaptiveRate::new(2, 1.0, 0.5, gain, 0.01, 100.0, 1.0, s(10.0));
        let t = trace(&[(0.0, 0.01), (0.5, 0.51), (2.5, 2.51), (10.0, 10.01)]);
        let (preds, e) = run(d, fixed1(), &t);
        // 2 arrivals from 0: below 1 IO/s after 2 s; [2, 3) is violated at
        // 2.5 -> threshold 0.5, and the window (0.5, 2.5) at 1 IO/s is above
        // the new end threshold: the idle period is over (withdrawn at 2.5);
        // below 0.5 after 4 s from 0.5, i.e. at 4.5 s; [4.5, 5.5) is clear
        // at 10 -> threshold 1; 2 / 7.5 s is below the end threshold:
        // declares again at 10.01.
        let a = s(2.0) + Nanos::NANO;
        let b = s(4.5) + Nanos::NANO;
        let c = s(10.01);
        assert_eq!(
            preds,
            vec![
                (a, a, Some(s(1.0))),
                (s(2.5), s(2.5), Some(Nanos::ZERO)),
                (b, b, Some(s(1.0))),
                (c, c, Some(s(1.0)))
            ]
        );
        assert!((e.detector().start_detector().threshold() - 1.0).abs() < 1e-12);
    }
}
