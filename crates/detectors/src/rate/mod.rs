//! Rate-based start detectors (§3.1.1 "rate-based", Table 4 `MovingAverage`,
//! `EventWindow`): `moving-average`, `event-window`, `time-window` and
//! `adaptive-rate`.
//!
//! Each keeps an estimate of the rate at which work arrives and declares an
//! idle period when the estimate falls **below the start threshold**
//! (`rate`). Hysteresis: the detector then stays in its *idle state* until
//! the estimate rises **above the end threshold** (`end`, ≥ `rate`;
//! `end = 0`, the default, means "same as `rate`"). While in the idle state
//! it declares again each time the device empties after a request arrived
//! (that request interrupted the previous prediction but did not raise the
//! rate above `end`), so a quiet disk with sporadic requests gets one
//! prediction per gap. When the estimate rises above `end` the detector
//! says the idle period is over ([`Start::end`]), the paper's "end of idle
//! period" threshold: the network withdraws its prediction with a
//! zero-duration one, which stops a task run under `predicted-end` or
//! `earlier-of` there (`later-of` and `when-busy` ignore withdrawals). So
//! under `predicted-end` a task runs through a few foreground requests for
//! as long as the rate stays low, and no longer than predicted.
//!
//! **Residual work.** A rate detector's idea of idle allows residual
//! foreground work: the first declaration of an idle state happens when the
//! estimate crosses the threshold, which may be while requests are
//! outstanding (the declared interval then begins busy). Re-declarations in
//! the idle state happen when the device empties.

use lull_core::component::Start;
use lull_core::registry::{Built, ParamError, ParamInfo, ParamKind, Params, Registry};
use lull_core::time::Nanos;

/// The start/end thresholds and the idle state of a rate detector.
#[derive(Clone, Debug)]
pub(crate) struct Hysteresis {
    start: f64,
    end: f64,
    idle: bool,
    interrupted: bool,
    /// Left the idle state since the last `signal`.
    left: bool,
}

impl Hysteresis {
    pub(crate) fn new(start: f64, end: f64) -> Self {
        Hysteresis {
            start,
            end,
            idle: false,
            interrupted: false,
            left: false,
        }
    }
    fn is_idle(&self) -> bool {
        self.idle
    }
    /// Enters the idle state if not in it and `below`; true if it entered.
    fn enter_if(&mut self, below: bool) -> bool {
        if !self.idle && below {
            self.idle = true;
            self.interrupted = false;
            true
        } else {
            false
        }
    }
    /// Leaves the idle state when `rate` exceeds the end threshold.
    fn leave_if(&mut self, rate: f64) {
        if self.idle && rate > self.end {
            self.idle = false;
            self.left = true;
        }
    }
    /// What a call says: a declaration if it entered (or re-declared in)
    /// the idle state, else the end of the idle period if it left it
    /// ("different threshold rates for start and end of idle period",
    /// §3.1.1), else nothing.
    pub(crate) fn signal(&mut self, declared: bool, now: Nanos) -> Option<Start> {
        let left = std::mem::take(&mut self.left);
        if declared {
            Some(Start::now(now))
        } else if left {
            Some(Start::end(now))
        } else {
            None
        }
    }
    fn on_arrival(&mut self) {
        if self.idle {
            self.interrupted = true;
        }
    }
    /// The device emptied: true if the detector should declare again.
    fn on_idle_begin(&mut self) -> bool {
        if self.idle && self.interrupted {
            self.interrupted = false;
            true
        } else {
            false
        }
    }
}

/// Reads `rate` (> 0) and `end` (0 = same as `rate`, else ≥ `rate`); with
/// `max`, both must be at most `max`.
fn thresholds(p: &Params, max: Option<f64>) -> Result<(f64, f64), ParamError> {
    let start = p.positive_float("rate")?;
    if let Some(m) = max {
        if start > m {
            return Err(ParamError::new("rate", format!("{start} is above {m}")));
        }
    }
    let end = p.float("end")?;
    let end = if end == 0.0 { start } else { end };
    if end < start {
        return Err(ParamError::new(
            "end",
            format!("{end} is below the start threshold rate={start} (use 0 for the same)"),
        ));
    }
    if let Some(m) = max {
        if end > m {
            return Err(ParamError::new("end", format!("{end} is above {m}")));
        }
    }
    Ok((start, end))
}

const END: ParamInfo = ParamInfo::optional(
    "end",
    ParamKind::Float,
    "0",
    "same unit as rate",
    "end threshold for hysteresis: the idle state lasts until the rate exceeds it (0 = same as rate; else >= rate)",
);

// ---------------------------------------------------------------- moving average

mod adaptive_rate;
mod event_window;
mod moving_average;
mod time_window;

pub use adaptive_rate::{ADAPTIVE_RATE, AdaptiveRate};
pub use event_window::{EVENT_WINDOW, EventWindow, WindowKind};
pub use moving_average::{MOVING_AVERAGE, MovingAverage};
pub use time_window::{TIME_WINDOW, TimeWindow};

fn count(p: &Params, name: &str, max: u64) -> Result<usize, ParamError> {
    Ok(p.int_in(name, 1, max)? as usize)
}

pub(crate) fn register(r: &mut Registry) {
    r.register(MOVING_AVERAGE, |p| {
        let (start, end) = thresholds(p, None)?;
        Ok(Built::Start(Box::new(MovingAverage::new(
            start,
            end,
            p.positive_duration("period")?,
            count(p, "n", 100_000)?,
        ))))
    });
    r.register(EVENT_WINDOW, |p| {
        let kind = match p.choice("kind")? {
            "kbs" => WindowKind::Kbs,
            "busy" => WindowKind::Busy,
            _ => WindowKind::Ios,
        };
        let n = count(p, "n", 1_000_000)?;
        let (start, end) = thresholds(p, (kind == WindowKind::Busy).then_some(1.0))?;
        Ok(Built::Start(Box::new(EventWindow::new(
            n, kind, start, end,
        ))))
    });
    r.register(TIME_WINDOW, |p| {
        let window = p.positive_duration("window")?;
        let (start, end) = thresholds(p, None)?;
        Ok(Built::Start(Box::new(TimeWindow::new(window, start, end))))
    });
    r.register(ADAPTIVE_RATE, |p| {
        let n = count(p, "n", 1_000_000)?;
        let min = p.positive_float("min")?;
        let max = p.float("max")?;
        if max < min {
            return Err(ParamError::new("max", format!("{max} is below min={min}")));
        }
        let rate = p.float_in("rate", min, max)?;
        let goal = p.float("goal")?;
        if !(goal > 0.0 && goal < 1.0) {
            return Err(ParamError::new("goal", format!("{goal} is outside (0, 1)")));
        }
        let gain = p.positive_float("gain")?;
        let hysteresis = p.float("hysteresis")?;
        if hysteresis < 1.0 {
            return Err(ParamError::new(
                "hysteresis",
                format!("{hysteresis} is below 1"),
            ));
        }
        let horizon = p.positive_duration("horizon")?;
        Ok(Built::Start(Box::new(AdaptiveRate::new(
            n, rate, goal, gain, min, max, hysteresis, horizon,
        ))))
    });
}
