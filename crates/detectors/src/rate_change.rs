//! `rate-change(rate, period, alpha, end)`: a rate-change-based start
//! detector (§3.1.1 "rate-change-based"): it estimates the first derivative
//! of the arrival rate to predict *in advance* when the rate will fall below
//! the threshold.
//!
//! Every `period` (boundaries at multiples of `period` from time zero) it
//! takes a sample `r = arrivals in the period / period` (IO/s) and updates
//! an exponentially smoothed rate `R ← α r + (1 − α) R` and slope
//! `S ← α (R − R_prev) / period + (1 − α) S` (IO/s per second). At a
//! boundary `b`, outside its idle state:
//!
//! - if `R < rate` it declares at `b`;
//! - else if `S < 0` and the extrapolated crossing `t* = b + (R − rate)/(−S)`
//!   falls before the next boundary, it declares with `Start::at = t*`, a
//!   start in the future (the actuator holds it until then).
//!
//! Hysteresis as for the other rate detectors (see [`crate::rate`]): the
//! idle state lasts until `R > end`, and inside it the detector declares
//! again when the device empties after an arrival, and says when the idle
//! state ends ([`Start::end`]: the network withdraws its prediction).
//! Declarations may come while requests are outstanding (residual work
//! allowed).

use lull_core::component::{Context, Start, StartDetector};
use lull_core::event::Event;
use lull_core::registry::{Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

/// The rate-change detector; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct RateChange {
    period: Nanos,
    alpha: f64,
    start: f64,
    end: f64,
    idle: bool,
    interrupted: bool,
    bucket: u64,
    count: u32,
    started: bool,
    rate: Option<f64>,
    slope: f64,
}

impl RateChange {
    /// Samples every `period`, smoothing `alpha`, thresholds `start`, `end`
    /// (IO/s).
    pub fn new(start: f64, end: f64, period: Nanos, alpha: f64) -> Self {
        RateChange {
            period,
            alpha,
            start,
            end,
            idle: false,
            interrupted: false,
            bucket: 0,
            count: 0,
            started: false,
            rate: None,
            slope: 0.0,
        }
    }
    /// The smoothed rate (IO/s) and slope (IO/s per second).
    pub fn estimate(&self) -> Option<(f64, f64)> {
        self.rate.map(|r| (r, self.slope))
    }

    fn catch_up(&mut self, now: Nanos) -> Option<Start> {
        let target = now.0 / self.period.0;
        if !self.started {
            self.started = true;
            self.bucket = target;
            return None;
        }
        let ps = self.period.as_secs_f64();
        let mut out = None;
        let mut left = false;
        while self.bucket < target {
            let sample = f64::from(std::mem::take(&mut self.count)) / ps;
            self.bucket += 1;
            let b = Nanos(self.bucket.saturating_mul(self.period.0));
            match self.rate {
                None => self.rate = Some(sample),
                Some(prev) => {
                    let r = self.alpha * sample + (1.0 - self.alpha) * prev;
                    self.slope = self.alpha * (r - prev) / ps + (1.0 - self.alpha) * self.slope;
                    self.rate = Some(r);
                }
            }
            let r = self.rate.unwrap_or(0.0);
            if self.idle && r > self.end {
                self.idle = false;
                left = true;
                out = None;
            }
            if !self.idle {
                let at = if r < self.start {
                    Some(b)
                } else if self.slope < 0.0 {
                    let t = b + Nanos::from_secs_f64((r - self.start) / -self.slope);
                    (t < b + self.period).then_some(t)
                } else {
                    None
                };
                if let Some(at) = at {
                    self.idle = true;
                    self.interrupted = false;
                    out = Some(Start::now(at.max(now)));
                }
            }
            if self.idle && r < self.start * 1e-9 && self.slope.abs() < self.start * 1e-9 {
                // Settled at zero: further empty samples change nothing.
                self.rate = Some(0.0);
                self.slope = 0.0;
                self.bucket = target;
            }
        }
        // The end of the idle period, unless a new one was declared since.
        if out.is_none() && left {
            out = Some(Start::end(now));
        }
        out
    }
}

impl StartDetector for RateChange {
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> {
        let s = self.catch_up(ctx.now);
        if ev.is_arrival() {
            self.count += 1;
            if self.idle {
                self.interrupted = true;
            }
        }
        s
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        let s = self.catch_up(ctx.now);
        if s.is_none() && self.idle && self.interrupted {
            self.interrupted = false;
            return Some(Start::now(ctx.now));
        }
        s
    }
    fn next_deadline(&self) -> Option<Nanos> {
        (self.started && (!self.idle || self.count > 0))
            .then(|| Nanos((self.bucket + 1).saturating_mul(self.period.0)))
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        self.catch_up(ctx.now)
    }
}

/// Catalogue entry of `rate-change`.
pub const RATE_CHANGE: ComponentInfo = ComponentInfo {
    name: "rate-change",
    role: Role::StartDetector,
    summary: "smoothed IO/s and its first derivative; predicts when the rate will fall below the threshold (may declare with requests outstanding; starts may lie in the future)",
    source: "§3.1.1 rate-change-based",
    params: &[
        ParamInfo::required("rate", ParamKind::Float, "IO/s", "start threshold (> 0)"),
        ParamInfo::optional(
            "period",
            ParamKind::Duration,
            "1s",
            "s",
            "sampling period (> 0)",
        ),
        ParamInfo::optional(
            "alpha",
            ParamKind::Float,
            "0.5",
            "",
            "smoothing weight of a new sample (0 < alpha <= 1)",
        ),
        ParamInfo::optional(
            "end",
            ParamKind::Float,
            "0",
            "IO/s",
            "end threshold for hysteresis (0 = same as rate; else >= rate)",
        ),
    ],
    inputs: None,
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(RATE_CHANGE, |p| {
        use lull_core::registry::ParamError;
        let start = p.positive_float("rate")?;
        let end = p.float("end")?;
        let end = if end == 0.0 { start } else { end };
        if end < start {
            return Err(ParamError::new(
                "end",
                format!("{end} is below the start threshold rate={start} (use 0 for the same)"),
            ));
        }
        let alpha = p.float("alpha")?;
        if !(alpha > 0.0 && alpha <= 1.0) {
            return Err(ParamError::new(
                "alpha",
                format!("{alpha} is outside (0, 1]"),
            ));
        }
        Ok(Built::Start(Box::new(RateChange::new(
            start,
            end,
            p.positive_duration("period")?,
            alpha,
        ))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duration::Fixed;
    use crate::testutil::{run, s, trace};

    #[test]
    fn predicts_the_crossing_in_advance() {
        // 8, 6, then 3 arrivals in seconds 0, 1, 2; alpha 1: R = sample.
        let mut reqs = Vec::new();
        for (sec, n) in [(0, 8), (1, 6), (2, 3)] {
            for i in 0..n {
                let a = sec as f64 + 0.05 + 0.1 * i as f64;
                reqs.push((a, a + 0.01));
            }
        }
        reqs.push((9.0, 9.01));
        let d = RateChange::new(2.0, 2.0, s(1.0), 1.0);
        let (preds, _) = run(d, Fixed::new(s(1.0), false), &trace(&reqs));
        // At 3 s: R = 3, slope = -3/s: crosses 2 IO/s at 3 + 1/3 s, before
        // the next sample, so it declares then (a start in the future).
        // The arrival at 9 s interrupts; R stays below `end`, so it
        // declares again when the device empties.
        assert_eq!(
            preds,
            vec![
                (s(3.0), s(3.0) + Nanos(333_333_333), Some(s(1.0))),
                (s(9.01), s(9.01), Some(s(1.0)))
            ]
        );
    }
}
