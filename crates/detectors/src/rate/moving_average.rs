//! `moving-average`: an exponentially weighted rate, sampled at fixed boundaries. See the [module docs](super) for
//! thresholds, hysteresis and residual work.

use std::collections::VecDeque;

use lull_core::component::{Context, Start, StartDetector};
use lull_core::event::Event;
use lull_core::registry::{ComponentInfo, ParamInfo, ParamKind, Role};
use lull_core::time::Nanos;

use super::*;

/// `moving-average(rate, period, n, end)`: the arrival rate is sampled every
/// `period` (arrivals counted in each period, periods aligned to multiples
/// of `period` from time zero) and the estimate is the mean of the last `n`
/// samples, in IO/s (Table 4 `MovingAverage`). Decisions are taken at the
/// sample boundaries: the declaration of an idle state happens at the first
/// boundary where the mean is below `rate` (possibly with requests
/// outstanding).
///
/// Samples of quiet periods are caught up lazily, so a long idle period
/// costs no wake-ups once the detector is in its idle state.
#[derive(Clone, Debug)]
pub struct MovingAverage {
    period: Nanos,
    n: usize,
    hyst: Hysteresis,
    ring: VecDeque<u32>,
    sum: u64,
    bucket: u64,
    count: u32,
    started: bool,
    zero_run: usize,
    deadline: Option<Nanos>,
}

impl MovingAverage {
    /// Samples every `period`, averages `n` samples, thresholds `start`
    /// and `end` (IO/s).
    pub fn new(start: f64, end: f64, period: Nanos, n: usize) -> Self {
        MovingAverage {
            period,
            n: n.max(1),
            hyst: Hysteresis::new(start, end),
            ring: VecDeque::with_capacity(n.max(1)),
            sum: 0,
            bucket: 0,
            count: 0,
            started: false,
            zero_run: 0,
            deadline: None,
        }
    }
    /// The current estimate in IO/s (`None` before the first sample).
    pub fn rate(&self) -> Option<f64> {
        (!self.ring.is_empty())
            .then(|| self.sum as f64 / self.ring.len() as f64 / self.period.as_secs_f64())
    }
    fn push(&mut self, v: u32) {
        if self.ring.len() == self.n {
            self.sum -= u64::from(self.ring.pop_front().unwrap_or(0));
        }
        self.ring.push_back(v);
        self.sum += u64::from(v);
    }
    fn catch_up(&mut self, now: Nanos) -> bool {
        let target = now.0 / self.period.0;
        if !self.started {
            self.started = true;
            self.bucket = target;
            return false;
        }
        let mut declared = false;
        while self.bucket < target {
            let v = std::mem::take(&mut self.count);
            self.push(v);
            self.bucket += 1;
            self.zero_run = if v == 0 { self.zero_run + 1 } else { 0 };
            let r = self.rate().unwrap_or(0.0);
            self.hyst.leave_if(r);
            declared |= self.hyst.enter_if(r < self.hyst.start);
            if self.zero_run >= self.n && self.hyst.is_idle() {
                // Every further sample is zero: nothing can change.
                self.bucket = target;
            }
        }
        declared
    }
    fn plan(&mut self) {
        let p = self.period.0;
        self.deadline = if self.hyst.is_idle() {
            (self.count > 0).then(|| Nanos((self.bucket + 1).saturating_mul(p)))
        } else {
            // First future boundary where the mean drops below the start
            // threshold if nothing else arrives.
            let len = self.ring.len();
            let at = |i: usize| -> u64 {
                if i < len {
                    u64::from(self.ring[i])
                } else if i == len {
                    u64::from(self.count)
                } else {
                    0
                }
            };
            let (mut sum, mut cnt) = (self.sum, len);
            let mut k = 1;
            loop {
                sum += at(len + k - 1);
                cnt += 1;
                if cnt > self.n {
                    sum -= at(len + k - 1 - self.n);
                    cnt = self.n;
                }
                let r = sum as f64 / cnt as f64 / self.period.as_secs_f64();
                if r < self.hyst.start || k > self.n + 1 {
                    break;
                }
                k += 1;
            }
            Some(Nanos((self.bucket + k as u64).saturating_mul(p)))
        };
    }
}

impl StartDetector for MovingAverage {
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> {
        let declared = self.catch_up(ctx.now);
        if ev.is_arrival() {
            self.count += 1;
            self.hyst.on_arrival();
        }
        self.plan();
        self.hyst.signal(declared, ctx.now)
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        let declared = self.catch_up(ctx.now) | self.hyst.on_idle_begin();
        self.plan();
        self.hyst.signal(declared, ctx.now)
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.deadline
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        let declared = self.catch_up(ctx.now);
        self.plan();
        self.hyst.signal(declared, ctx.now)
    }
}

// ---------------------------------------------------------------- event window

/// Catalogue entry of `moving-average`.
pub const MOVING_AVERAGE: ComponentInfo = ComponentInfo {
    name: "moving-average",
    role: Role::StartDetector,
    summary: "periodically sampled IO/s, moving average; declares below the start threshold (may declare with requests outstanding)",
    source: "§3.1.1 rate-based (moving average), Table 4 MovingAverage",
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
            "n",
            ParamKind::Int,
            "5",
            "samples",
            "samples averaged (1 to 100000)",
        ),
        END,
    ],
    inputs: None,
    offline: false,
    gauges: &[],
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
    fn moving_average_declares_at_the_first_boundary_below_and_redeclares_in_its_idle_state() {
        // Three arrivals in each of seconds 0 and 1, then quiet until 10.5.
        let mut reqs = Vec::new();
        for sec in 0..2 {
            for i in 1..=3 {
                let a = sec as f64 + 0.1 * i as f64;
                reqs.push((a, a + 0.01));
            }
        }
        reqs.push((10.5, 10.51));
        // Samples 3, 3, 0, 0 (IO/s); mean of 2: 3, 1.5, 0 -> below 1.5 at 4 s.
        let (preds, _) = run(
            MovingAverage::new(1.5, 1.5, s(1.0), 2),
            fixed1(),
            &trace(&reqs),
        );
        assert_eq!(
            preds,
            vec![
                (s(4.0), s(4.0), Some(s(1.0))),
                (s(10.51), s(10.51), Some(s(1.0)))
            ]
        );
    }
}
