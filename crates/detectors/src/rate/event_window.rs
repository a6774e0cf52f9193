//! `event-window`: the rate over the last `n` events. See the [module docs](super) for
//! thresholds, hysteresis and residual work.

use std::collections::VecDeque;

use lull_core::component::{Context, Start, StartDetector};
use lull_core::event::Event;
use lull_core::registry::{ComponentInfo, ParamInfo, ParamKind, Role};
use lull_core::time::Nanos;

use super::*;

/// What an [`EventWindow`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowKind {
    /// Arrivals per second: `n / age of the oldest of the last n arrivals`.
    Ios,
    /// Kilobytes (1024 bytes) per second over the same arrivals.
    Kbs,
    /// Fraction of the time since the oldest of the last n arrivals during
    /// which a request was outstanding (0 to 1).
    Busy,
}

/// `event-window(n, rate, kind, end)`: keeps the last `n` arrivals and
/// estimates the rate as their number (`ios`, IO/s), their kilobytes
/// (`kbs`, KB/s) or the busy time (`busy`, a fraction) divided by the age of
/// the oldest of them (Table 4 `EventWindow`, §5.4.1). With fewer than `n`
/// arrivals seen it uses those it has.
///
/// Between events the estimate only falls (for `busy`, only while the
/// device is idle), so the detector computes the exact instant it crosses
/// `rate` and asks for a deadline there; the declaration may come while
/// requests are outstanding (`ios`, `kbs`).
#[derive(Clone, Debug)]
pub struct EventWindow {
    n: usize,
    kind: WindowKind,
    hyst: Hysteresis,
    /// (arrival, KB, cumulative busy time at the arrival).
    ring: VecDeque<(Nanos, f64, Nanos)>,
    kb: f64,
    busy_acc: Nanos,
    busy_since: Option<Nanos>,
    crossing: Option<Nanos>,
}

impl EventWindow {
    /// A window of `n` arrivals measuring `kind`, thresholds `start`, `end`.
    pub fn new(n: usize, kind: WindowKind, start: f64, end: f64) -> Self {
        EventWindow {
            n: n.max(1),
            kind,
            hyst: Hysteresis::new(start, end),
            ring: VecDeque::with_capacity(n.max(1)),
            kb: 0.0,
            busy_acc: Nanos::ZERO,
            busy_since: None,
            crossing: None,
        }
    }
    fn busy_at(&self, now: Nanos) -> Nanos {
        self.busy_acc + self.busy_since.map_or(Nanos::ZERO, |s| now - s)
    }
    /// The quantity over the window (IOs, KB, busy seconds).
    fn quantity(&self, now: Nanos) -> f64 {
        match self.kind {
            WindowKind::Ios => self.ring.len() as f64,
            WindowKind::Kbs => self.kb,
            WindowKind::Busy => self
                .ring
                .front()
                .map_or(0.0, |f| (self.busy_at(now) - f.2).as_secs_f64()),
        }
    }
    /// The current estimate (`None` before the first arrival).
    pub fn rate(&self, now: Nanos) -> Option<f64> {
        let oldest = self.ring.front()?.0;
        let age = (now - oldest).as_secs_f64();
        let q = self.quantity(now);
        Some(if age > 0.0 {
            q / age
        } else if q > 0.0 {
            f64::INFINITY
        } else {
            0.0
        })
    }
    pub(super) fn set_thresholds(&mut self, start: f64, end: f64) {
        self.hyst.start = start;
        self.hyst.end = end;
    }
    fn evaluate(&mut self, now: Nanos) -> bool {
        let Some(r) = self.rate(now) else {
            self.crossing = None;
            return false;
        };
        self.hyst.leave_if(r);
        self.crossing = if self.hyst.is_idle()
            || (self.kind == WindowKind::Busy && self.busy_since.is_some())
        {
            None
        } else {
            let oldest = self.ring.front().map_or(now, |f| f.0);
            let q = self.quantity(now);
            // rate(t) = q / (t - oldest) < start  <=>  t > oldest + q/start.
            Some((oldest + Nanos::from_secs_f64(q / self.hyst.start) + Nanos::NANO).max(now))
        };
        if self.crossing.is_some_and(|c| c <= now) {
            self.crossing = None;
            self.hyst.enter_if(true)
        } else {
            false
        }
    }
}

impl StartDetector for EventWindow {
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> {
        if ev.is_arrival() {
            if ctx.outstanding == 1 && self.busy_since.is_none() {
                self.busy_since = Some(ev.time);
            }
            if self.ring.len() == self.n {
                if let Some(f) = self.ring.pop_front() {
                    self.kb -= f.1;
                }
            }
            let kb = f64::from(ev.bytes) / 1024.0;
            self.kb += kb;
            let b = self.busy_at(ev.time);
            self.ring.push_back((ev.time, kb, b));
            self.hyst.on_arrival();
        } else if ctx.outstanding == 0 {
            if let Some(s) = self.busy_since.take() {
                self.busy_acc += ev.time - s;
            }
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
        if self.crossing.is_some_and(|c| c <= ctx.now) {
            self.crossing = None;
            if self.hyst.enter_if(true) {
                return Some(Start::now(ctx.now));
            }
        }
        None
    }
}

// ---------------------------------------------------------------- time window

/// Catalogue entry of `event-window`.
pub const EVENT_WINDOW: ComponentInfo = ComponentInfo {
    name: "event-window",
    role: Role::StartDetector,
    summary: "rate over the last n arrivals (IO/s, KB/s or busy fraction); declares below the start threshold (may declare with requests outstanding)",
    source: "§3.1.1 rate-based (event window), Table 4 EventWindow, §5.4.1",
    params: &[
        ParamInfo::required(
            "n",
            ParamKind::Int,
            "requests",
            "window size (1 to 1000000)",
        ),
        ParamInfo::required(
            "rate",
            ParamKind::Float,
            "IO/s, KB/s or fraction",
            "start threshold (> 0; at most 1 for kind=busy)",
        ),
        ParamInfo::optional(
            "kind",
            ParamKind::Choice(&["ios", "kbs", "busy"]),
            "ios",
            "",
            "what is measured: IO/s, KB/s or the fraction of time busy",
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
    /// The end-of-idle threshold ends the declared interval: under
    /// `predicted-end` the task runs through the arrival at 3.0 s (the rate
    /// over the window, 2 / 2.9 s, stays below `end`) and stops at 3.1 s,
    /// when it rises to 20 IO/s, not at the predicted end (13.01 s).
    #[test]
    fn event_window_ends_the_idle_period_when_the_rate_rises_above_end() {
        use lull_core::actuator::Command;
        use lull_core::engine::LogEntry;
        let t = trace(&[
            (0.0, 0.01),
            (0.1, 0.11),
            (3.0, 3.01),
            (3.1, 3.11),
            (20.0, 20.01),
        ]);
        let ten = Fixed::new(s(10.0), false);
        let (preds, e) = run(EventWindow::new(2, WindowKind::Ios, 1.0, 1.0), ten, &t);
        let start = s(2.0) + Nanos::NANO;
        assert_eq!(preds[0], (start, start, Some(s(10.0))));
        // The arrival at 3.0 leaves the rate low: declared again when the
        // device empties (3.01); the one at 3.1 raises it: withdrawn.
        assert_eq!(preds[1], (s(3.01), s(3.01), Some(s(10.0))));
        assert_eq!(preds[2], (s(3.1), s(3.1), Some(Nanos::ZERO)));
        let commands: Vec<_> = e
            .log()
            .iter()
            .filter_map(|l| match l {
                LogEntry::Command { at, command } => Some((*at, *command)),
                _ => None,
            })
            .collect();
        assert_eq!(commands[0].0, start);
        assert!(matches!(commands[0].1, Command::Start { .. }));
        assert!(
            commands.contains(&(s(3.1), Command::Stop)),
            "stopped when the rate rose: {commands:?}"
        );
    }

    #[test]
    fn event_window_crosses_at_the_exact_instant() {
        let t = trace(&[(0.0, 0.01), (0.1, 0.11), (0.2, 0.21), (10.0, 10.01)]);
        // 3 arrivals, oldest at 0: 3 / age < 1 IO/s once age > 3 s.
        let (preds, _) = run(EventWindow::new(3, WindowKind::Ios, 1.0, 1.0), fixed1(), &t);
        let first = s(3.0) + Nanos::NANO;
        // At 10 s the rate is 3 / 9.9 s: still below `end`, so the
        // detector stays idle and declares again when the device empties.
        assert_eq!(
            preds,
            vec![
                (first, first, Some(s(1.0))),
                (s(10.01), s(10.01), Some(s(1.0)))
            ]
        );
    }

    #[test]
    fn event_window_kbs_and_busy() {
        // 4 KiB requests: 3 of them are 12 KB; below 2 KB/s once age > 6 s.
        let t = trace(&[(0.0, 0.5), (0.1, 0.6), (0.2, 0.7), (20.0, 20.1)]);
        let (preds, _) = run(EventWindow::new(3, WindowKind::Kbs, 2.0, 2.0), fixed1(), &t);
        assert_eq!(preds[0].1, s(6.0) + Nanos::NANO);
        // Busy 0..0.7 s; below 10 % busy once age > 7 s.
        let (preds, _) = run(
            EventWindow::new(3, WindowKind::Busy, 0.1, 0.1),
            fixed1(),
            &t,
        );
        assert_eq!(preds[0].1, s(7.0) + Nanos::NANO);
    }
}
