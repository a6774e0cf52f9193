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

use std::collections::VecDeque;

use lull_core::component::{Context, Prediction, Start, StartDetector};
use lull_core::event::Event;
use lull_core::registry::{
    Built, ComponentInfo, ParamError, ParamInfo, ParamKind, Params, Registry, Role,
};
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
    fn set_thresholds(&mut self, start: f64, end: f64) {
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
};

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
};

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
};

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
};

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
