//! `time-window`: the rate over a sliding window of time. See the [module docs](super) for
//! thresholds, hysteresis and residual work.

use std::collections::VecDeque;

use lull_core::component::{Context, Start, StartDetector};
use lull_core::event::Event;
use lull_core::registry::{ComponentInfo, ParamInfo, ParamKind, Role};
use lull_core::time::Nanos;

use super::*;

/// `time-window(window, rate, end)`: keeps the arrivals of the last
/// `window` and estimates the rate as their number divided by `window`
/// (IO/s), a variation on the event window (§3.1.1). An arrival leaves the
/// window `window` after it came; the detector asks for a deadline at the
/// exact instant enough of them have left for the rate to fall below `rate`
/// (possibly with requests outstanding).
#[derive(Clone, Debug)]
pub struct TimeWindow {
    window: Nanos,
    hyst: Hysteresis,
    times: VecDeque<Nanos>,
    crossing: Option<Nanos>,
}

impl TimeWindow {
    /// A window of length `window`, thresholds `start`, `end` (IO/s).
    pub fn new(window: Nanos, start: f64, end: f64) -> Self {
        TimeWindow {
            window,
            hyst: Hysteresis::new(start, end),
            times: VecDeque::new(),
            crossing: None,
        }
    }
    fn prune(&mut self, now: Nanos) {
        while self.times.front().is_some_and(|&a| a + self.window <= now) {
            self.times.pop_front();
        }
    }
    /// The current estimate in IO/s.
    pub fn rate(&self) -> f64 {
        self.times.len() as f64 / self.window.as_secs_f64()
    }
    fn below(&self, count: usize) -> bool {
        (count as f64) / self.window.as_secs_f64() < self.hyst.start
    }
    fn evaluate(&mut self, now: Nanos) -> bool {
        self.prune(now);
        self.hyst.leave_if(self.rate());
        self.crossing = None;
        if self.hyst.is_idle() {
            return false;
        }
        let c = self.times.len();
        if self.below(c) {
            return self.hyst.enter_if(true);
        }
        // The largest count that is below the threshold: ceil(rate·window)
        // − 1, corrected for rounding.
        let x = (self.hyst.start * self.window.as_secs_f64()).ceil();
        let mut m = if x >= 1.0 {
            (x as usize - 1).min(c - 1)
        } else {
            0
        };
        while m > 0 && !self.below(m) {
            m -= 1;
        }
        while m + 1 < c && self.below(m + 1) {
            m += 1;
        }
        if !self.below(m) {
            // Even an empty window is not below: rate threshold is 0.
            return false;
        }
        self.crossing = Some(self.times[c - m - 1] + self.window);
        false
    }
}

impl StartDetector for TimeWindow {
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> {
        if ev.is_arrival() {
            self.times.push_back(ev.time);
            self.hyst.on_arrival();
        }
        let declared = self.evaluate(ctx.now);
        self.hyst.signal(declared, ctx.now)
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        let declared = self.evaluate(ctx.now) | self.hyst.on_idle_begin();
        self.hyst.signal(declared, ctx.now)
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.crossing
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        let declared = self.evaluate(ctx.now);
        self.hyst.signal(declared, ctx.now)
    }
}

// ---------------------------------------------------------------- adaptive rate

/// Catalogue entry of `time-window`.
pub const TIME_WINDOW: ComponentInfo = ComponentInfo {
    name: "time-window",
    role: Role::StartDetector,
    summary: "IO/s over the arrivals of the last window; declares below the start threshold (may declare with requests outstanding)",
    source: "§3.1.1 rate-based (time window)",
    params: &[
        ParamInfo::required("window", ParamKind::Duration, "s", "window length (> 0)"),
        ParamInfo::required("rate", ParamKind::Float, "IO/s", "start threshold (> 0)"),
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
    fn time_window_crossing_and_hysteresis() {
        let t = trace(&[(0.0, 0.01), (0.5, 0.51), (1.0, 1.01), (5.0, 5.01)]);
        // Below 0.4 IO/s over 2 s means an empty window: the last arrival
        // (1.0) leaves at 3.0. At 5.0 the rate is 0.5 <= end = 1: stay idle.
        let (preds, _) = run(TimeWindow::new(s(2.0), 0.4, 1.0), fixed1(), &t);
        assert_eq!(
            preds,
            vec![
                (s(3.0), s(3.0), Some(s(1.0))),
                (s(5.01), s(5.01), Some(s(1.0)))
            ]
        );
    }
}
