//! `preempt-gate(p=100ms, …)` and `preempt-gate-auto(…)`: idletime scheduling
//! with preemption intervals (Eggert, *Background use of idle resource
//! capacity*, chapters 4–5 and §7.2.2; `papers/idletime-scheduling-preemption-intervals.txt`).
//!
//! A *preemption interval* is "a time period following each serviced
//! foreground request during which no background request will be started –
//! the resource will remain idle, even when background requests are
//! queued" (chapter 4). Background work starts only "after the expiration
//! of a full preemption interval in which no new foreground requests
//! arrived", so the cost of preempting background work is paid at most
//! once per *burst* of foreground requests whose gaps are shorter than `p`
//! (Figure 4.10).
//!
//! # The skeptic's view
//!
//! The gate is a filter over one prediction stream. Its input says *when*
//! the device may be used for background work ("a background request is at
//! the head of the queue"); the gate holds that permission back until a
//! preemption interval has passed with no foreground request, then emits
//! the rest of the input's prediction from that instant. It never starts
//! anything itself: it passes (a tail of) what its input predicted.
//!
//! # The I/F/B/P state machine (§5.1, Figure 5.6)
//!
//! States: **I** idle (start state), **F** serving foreground, **B**
//! serving background (the gate has emitted a prediction that is still
//! live), **P** stalling background work during the preemption interval.
//! Events: **f** a foreground request is at the head of the queue (here: a
//! foreground arrival), **b** a background request is at the head of the
//! queue (here: the input has a live prediction while no foreground
//! request is outstanding), **t** the preemption interval expired, **i**
//! the queue is empty (here: the last outstanding foreground request
//! completed, or the emitted prediction ended or was withdrawn).
//!
//! The transitions are those of the variant the paper chose for
//! implementation, the first of Figure 5.5 (strongly work conserving for
//! background work once in B, no extra intervals between background
//! bursts), given by [`transition`]:
//!
//! | from \ on | f | b | t | i |
//! |---|---|---|---|---|
//! | I | F | B | – | I |
//! | F | F | P | – | P |
//! | B | F (a *preemption*) | B | – | I |
//! | P | F | P | I | P |
//!
//! "–": the event cannot occur in that state (t only happens in P); the
//! state is kept. F → P on b does not consume b: the permission stays
//! pending, and I → B follows at the timeout. Every path from F to B goes
//! through P. The gate counts every `(state, event)` pair as the
//! prototype did (`P[f]`, `B[f]`, …; [`PreemptGate::count`]).
//!
//! # Bounds on p (§4.3.1, §7.1)
//!
//! Useful intervals lie between the *service time* (shorter intervals do
//! not form foreground bursts, so each request pays a preemption,
//! Figure 4.12) and the *foreground inter-arrival time* (longer intervals
//! starve background work, Figure 4.11). With `bounds=true` the interval in
//! force is `max(ŝ, min(p, â))`: when the two bounds conflict (high load)
//! the lower one wins, since protecting the foreground is the primary
//! objective ("the first rule has priority and causes idletime
//! starvation", §4.3.1). Both are estimated online with exponential moving
//! averages of gain `gain`, updated at each event:
//!
//! - **service time** `ŝ`: at each completion at `c` of a request that
//!   arrived at `a` (`Event::pair`), the time the device spent on it under
//!   FIFO service, `c − max(a, c_prev)` where `c_prev` is the previous
//!   completion (the request could not start before the device finished
//!   the one ahead of it);
//! - **inter-arrival time** `â`: at each arrival, the time since the
//!   previous arrival (bursts and idle gaps alike: the mean, as §4.3.1
//!   states the bound).
//!
//! Until the first estimate exists the bound on that side is not applied.
//!
//! # Auto-tuning (§7.2.2)
//!
//! `preempt-gate-auto` adapts `p` from preemption counts, as the paper
//! proposes with "a TCP-like windowing mechanism": time is cut into
//! windows of `window`; at the end of each, if the preemptions (`B[f]`
//! events) in it exceed `max-rate` × the foreground arrivals in it, the
//! interval grows multiplicatively (`p ← p·grow`, like a congestion
//! window shrinking on loss); otherwise it shrinks additively
//! (`p ← p − step`, "the preemption interval could shrink slowly over time
//! in the same way"). `p` stays within `[min, max]`, and the bounds above
//! still apply to the interval in force. Windows are closed lazily at the
//! next stimulus; a window with no foreground arrival shrinks `p`.
//!
//! The gate asks the driver for deadlines (the end of the preemption
//! interval, a held prediction's start), unlike the other skeptics of this
//! crate: the moment it lets background work begin is a timeout, and an
//! emitted prediction must start when it is emitted (a future start would
//! be held by the actuator across arrivals).

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{
    Arity, Built, ComponentInfo, GaugeInfo, GaugeUnit, ParamError, ParamInfo, ParamKind, Params,
    Registry, Role,
};
use lull_core::time::Nanos;

/// A state of the idletime scheduler (§5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Idle: no foreground request, no background work, no interval.
    I,
    /// Serving foreground requests.
    F,
    /// Background work may run (a prediction was emitted and is live).
    B,
    /// In a preemption interval: background work is held back.
    P,
}

/// An event of the idletime scheduler (§5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ev {
    /// A foreground request is at the head of the queue.
    F,
    /// A background request is at the head of the queue.
    B,
    /// The preemption interval expired.
    T,
    /// The queue is empty.
    I,
}

impl State {
    fn index(self) -> usize {
        self as usize
    }
}
impl Ev {
    fn index(self) -> usize {
        self as usize
    }
}

/// The transition function of the chosen variant (Figure 5.6); see the
/// module docs for the table.
pub const fn transition(state: State, ev: Ev) -> State {
    match (state, ev) {
        (_, Ev::F) => State::F,
        (State::I, Ev::B) => State::B,
        (State::I, _) => State::I,
        (State::F, Ev::B | Ev::I) => State::P,
        (State::F, Ev::T) => State::F,
        (State::B, Ev::B | Ev::T) => State::B,
        (State::B, Ev::I) => State::I,
        (State::P, Ev::T) => State::I,
        (State::P, Ev::B | Ev::I) => State::P,
    }
}

/// Online estimates of the bounds on `p` (module docs).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    gain: f64,
    service_s: Option<f64>,
    interarrival_s: Option<f64>,
    last_arrival: Option<Nanos>,
    last_completion: Option<Nanos>,
}

impl Bounds {
    /// Estimators with moving-average weight `gain` in (0, 1].
    pub fn new(gain: f64) -> Self {
        Bounds {
            gain,
            service_s: None,
            interarrival_s: None,
            last_arrival: None,
            last_completion: None,
        }
    }
    fn ewma(old: Option<f64>, x: f64, g: f64) -> f64 {
        old.map_or(x, |o| (1.0 - g) * o + g * x)
    }
    /// A foreground arrival at `t`.
    pub fn on_arrival(&mut self, t: Nanos) {
        if let Some(prev) = self.last_arrival {
            let gap = t.saturating_sub(prev).as_secs_f64();
            self.interarrival_s = Some(Self::ewma(self.interarrival_s, gap, self.gain));
        }
        self.last_arrival = Some(t);
    }
    /// A completion at `c` of a request that arrived at `a`.
    pub fn on_completion(&mut self, a: Nanos, c: Nanos) {
        let began = self.last_completion.map_or(a, |p| p.max(a));
        let s = c.saturating_sub(began).as_secs_f64();
        self.service_s = Some(Self::ewma(self.service_s, s, self.gain));
        self.last_completion = Some(c.max(self.last_completion.unwrap_or(c)));
    }
    /// The service-time estimate (lower bound).
    pub fn service(&self) -> Option<Nanos> {
        self.service_s.map(Nanos::from_secs_f64)
    }
    /// The inter-arrival estimate (upper bound).
    pub fn interarrival(&self) -> Option<Nanos> {
        self.interarrival_s.map(Nanos::from_secs_f64)
    }
    /// `p` bounded: `max(ŝ, min(p, â))`.
    pub fn clamp(&self, p: Nanos) -> Nanos {
        let mut q = p;
        if let Some(hi) = self.interarrival() {
            q = q.min(hi);
        }
        if let Some(lo) = self.service() {
            q = q.max(lo);
        }
        q
    }
}

/// The auto-tuner of `preempt-gate-auto` (module docs).
#[derive(Clone, Copy, Debug)]
pub struct AutoTune {
    /// Window length.
    pub window: Nanos,
    /// Preemptions allowed per foreground arrival in a window.
    pub max_rate: f64,
    /// Multiplicative growth on too many preemptions.
    pub grow: f64,
    /// Additive shrink otherwise.
    pub step: Nanos,
    /// Least `p`.
    pub min: Nanos,
    /// Largest `p`.
    pub max: Nanos,
    window_end: Option<Nanos>,
    preemptions: u64,
    arrivals: u64,
}

impl AutoTune {
    /// A tuner; the first window begins at the first stimulus.
    pub fn new(
        window: Nanos,
        max_rate: f64,
        grow: f64,
        step: Nanos,
        min: Nanos,
        max: Nanos,
    ) -> Self {
        AutoTune {
            window,
            max_rate,
            grow,
            step,
            min,
            max,
            window_end: None,
            preemptions: 0,
            arrivals: 0,
        }
    }

    /// Closes every window that ended by `now`, adjusting `p`.
    fn tick(&mut self, now: Nanos, p: &mut Nanos) {
        let end = *self.window_end.get_or_insert(now + self.window);
        if now < end {
            return;
        }
        // The window that just ended, then any empty ones after it.
        let too_many =
            self.preemptions > 0 && self.preemptions as f64 > self.max_rate * self.arrivals as f64;
        *p = if too_many {
            Nanos::from_secs_f64(p.as_secs_f64() * self.grow).min(self.max)
        } else {
            p.saturating_sub(self.step).max(self.min)
        };
        let empty = (now - end).as_nanos() / self.window.as_nanos().max(1);
        for _ in 0..empty.min(1 << 20) {
            *p = p.saturating_sub(self.step).max(self.min);
            if *p == self.min {
                break;
            }
        }
        self.window_end = Some(end + Nanos(self.window.as_nanos().saturating_mul(empty + 1)));
        self.preemptions = 0;
        self.arrivals = 0;
    }
}

/// `preempt-gate(p, bounds, gain)` and, with an [`AutoTune`],
/// `preempt-gate-auto(…)`: background work starts only after a
/// preemption interval `p` with no foreground request (module docs).
#[derive(Clone, Debug)]
pub struct PreemptGate {
    p: Nanos,
    bounded: bool,
    bounds: Bounds,
    auto: Option<AutoTune>,
    state: State,
    counts: [[u64; 4]; 4],
    /// The input's prediction, held until the interval has passed.
    pending: Option<Prediction>,
    /// End of the prediction emitted in state B.
    emitted_end: Option<Nanos>,
    /// When the preemption interval in force expires.
    expiry: Option<Nanos>,
    /// Last foreground arrival or completion.
    last_fg: Option<Nanos>,
}

impl PreemptGate {
    /// A fixed gate with interval `p`; `bounded` applies the online bounds
    /// with estimator gain `gain`.
    pub fn new(p: Nanos, bounded: bool, gain: f64) -> Self {
        PreemptGate {
            p,
            bounded,
            bounds: Bounds::new(gain),
            auto: None,
            state: State::I,
            counts: [[0; 4]; 4],
            pending: None,
            emitted_end: None,
            expiry: None,
            last_fg: None,
        }
    }
    /// An auto-tuned gate starting from interval `p`.
    pub fn auto(p: Nanos, bounded: bool, gain: f64, tune: AutoTune) -> Self {
        PreemptGate {
            auto: Some(tune),
            ..PreemptGate::new(p.clamp(tune.min, tune.max), bounded, gain)
        }
    }
    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }
    /// The (unbounded) interval `p`; the auto-tuner changes it.
    pub fn p(&self) -> Nanos {
        self.p
    }
    /// The interval in force: `p`, bounded when `bounds=true`.
    pub fn effective_p(&self) -> Nanos {
        if self.bounded {
            self.bounds.clamp(self.p)
        } else {
            self.p
        }
    }
    /// The bound estimators.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }
    /// How often `ev` happened in `state` (`count(State::B, Ev::F)` is the
    /// number of preemptions).
    pub fn count(&self, state: State, ev: Ev) -> u64 {
        self.counts[state.index()][ev.index()]
    }
    /// Preemptions so far: foreground arrivals while background work ran.
    pub fn preemptions(&self) -> u64 {
        self.count(State::B, Ev::F)
    }

    fn step(&mut self, ev: Ev) {
        self.counts[self.state.index()][ev.index()] += 1;
        self.state = transition(self.state, ev);
    }

    fn tick(&mut self, now: Nanos) {
        if let Some(a) = &mut self.auto {
            a.tick(now, &mut self.p);
        }
        // B ends when the emitted prediction runs out (event i).
        if self.state == State::B && self.emitted_end.is_some_and(|e| e <= now) {
            self.emitted_end = None;
            self.step(Ev::I);
        }
        // A held prediction that has ended is gone.
        if self.pending.is_some_and(|p| p.end() <= now) {
            self.pending = None;
        }
    }

    /// The interval timed out (if due), then background work starts if
    /// the input allows it now.
    fn advance(&mut self, now: Nanos) -> Option<Prediction> {
        if self.state == State::P && self.expiry.is_some_and(|e| e <= now) {
            self.expiry = None;
            self.step(Ev::T);
        }
        if self.state != State::I {
            return None;
        }
        let p = self.pending.filter(|p| p.start <= now && now < p.end())?;
        self.pending = None;
        self.step(Ev::B);
        self.emitted_end = p.duration.map(|_| p.end());
        Some(Prediction::new(now, p.duration.map(|_| p.end() - now)))
    }
}

impl Skeptic for PreemptGate {
    fn gauges(&self) -> Vec<(String, f64)> {
        vec![("interval_s".into(), self.p().as_secs_f64())]
    }
    fn save(&self, _now: Nanos) -> Option<Learned> {
        // What it learned of the device: the (auto-tuned) interval, the
        // service and interarrival estimates, the transition counts. The
        // tuner's window in progress starts again.
        let opt = |x: Option<f64>| x.unwrap_or(-1.0);
        let mut v = vec![
            self.p.0 as f64,
            opt(self.bounds.service_s),
            opt(self.bounds.interarrival_s),
        ];
        v.extend(self.counts.iter().flatten().map(|&c| c as f64));
        Some(Learned::new("preempt-gate", 1, v))
    }
    fn restore(&mut self, l: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect("preempt-gate", 1, 3 + 16)?;
        if !(v[0] >= 0.0 && v[0] < u64::MAX as f64) || v[3..].iter().any(|&c| c < 0.0) {
            return Err(LearnedError::new(
                "preempt-gate: a negative interval or count",
            ));
        }
        let p = Nanos(v[0] as u64);
        self.p = match self.auto {
            Some(t) => p.clamp(t.min, t.max),
            None => p,
        };
        let est = |x: f64| (x >= 0.0 && x.is_finite()).then_some(x);
        self.bounds.service_s = est(v[1]);
        self.bounds.interarrival_s = est(v[2]);
        for (c, x) in self.counts.iter_mut().flatten().zip(&v[3..]) {
            *c = *x as u64;
        }
        Ok(())
    }
    fn on_input(&mut self, _input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> {
        let now = ctx.now;
        self.tick(now);
        if p.end() <= now {
            // A withdrawal: take back what was emitted.
            self.pending = None;
            if self.state == State::B {
                self.emitted_end = None;
                self.step(Ev::I);
                return Some(Prediction::new(now, Some(Nanos::ZERO)));
            }
            return None;
        }
        match self.state {
            State::B if p.start <= now => {
                // More background work while it runs: pass the renewal on.
                self.step(Ev::B);
                self.emitted_end = p.duration.map(|_| p.end());
                Some(Prediction::new(now, p.duration.map(|_| p.end() - now)))
            }
            State::F => {
                // b cannot reach the head of the queue past foreground
                // requests: hold it until the device empties.
                self.pending = Some(*p);
                None
            }
            State::P => {
                self.pending = Some(*p);
                if p.start <= now {
                    self.step(Ev::B);
                }
                self.advance(now)
            }
            State::I | State::B => {
                self.pending = Some(*p);
                self.advance(now)
            }
        }
    }

    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> {
        let now = ctx.now;
        self.tick(now);
        self.last_fg = Some(now);
        if ev.is_arrival() {
            self.bounds.on_arrival(now);
            if let Some(a) = &mut self.auto {
                a.arrivals += 1;
                if self.state == State::B {
                    a.preemptions += 1;
                }
            }
            // The device is busy again: a held prediction that has begun
            // is over (the liveness rule of this crate).
            if self.pending.is_some_and(|p| p.start <= now) {
                self.pending = None;
            }
            self.emitted_end = None;
            self.expiry = None;
            self.step(Ev::F);
        } else {
            self.bounds.on_completion(ev.pair, now);
            if ctx.outstanding == 0 && self.state == State::F {
                // The foreground queue is empty: the interval begins.
                self.step(Ev::I);
                self.expiry = Some(now + self.effective_p());
            }
        }
        None
    }

    fn next_deadline(&self) -> Option<Nanos> {
        match self.state {
            State::P => self.expiry,
            State::I => self.pending.map(|p| p.start),
            _ => None,
        }
    }

    fn on_deadline(&mut self, ctx: &Context) -> Option<Prediction> {
        self.tick(ctx.now);
        if !ctx.is_idle() {
            return None;
        }
        self.advance(ctx.now)
    }
}

const BOUND_PARAMS: [ParamInfo; 2] = [
    ParamInfo::optional(
        "bounds",
        ParamKind::Bool,
        "true",
        "",
        "keep the interval in force within [estimated service time, estimated inter-arrival time] (§4.3.1)",
    ),
    ParamInfo::optional(
        "gain",
        ParamKind::Float,
        "0.05",
        "",
        "weight of each new sample in the service-time and inter-arrival moving averages, in (0, 1]",
    ),
];

/// Catalogue entry of `preempt-gate`.
pub const PREEMPT_GATE: ComponentInfo = ComponentInfo {
    name: "preempt-gate",
    role: Role::Skeptic,
    summary: "lets background work start only after a preemption interval p with no foreground request (I/F/B/P state machine)",
    source: "§3.2 skeptic; Eggert, idletime scheduling with preemption intervals, ch. 4–5 (Figure 5.6)",
    params: &[
        ParamInfo::optional(
            "p",
            ParamKind::Duration,
            "100ms",
            "s",
            "preemption interval: background work starts only this long after the last foreground request",
        ),
        BOUND_PARAMS[0],
        BOUND_PARAMS[1],
    ],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[GaugeInfo::new("interval_s", "interval", GaugeUnit::Seconds)],
};

/// Catalogue entry of `preempt-gate-auto`.
pub const PREEMPT_GATE_AUTO: ComponentInfo = ComponentInfo {
    name: "preempt-gate-auto",
    role: Role::Skeptic,
    summary: "preempt-gate whose interval grows when background work is preempted too often per window and shrinks otherwise",
    source: "§3.2 skeptic; Eggert, idletime scheduling with preemption intervals, §7.2.2 automatic preemption interval tuning",
    params: &[
        ParamInfo::optional(
            "p",
            ParamKind::Duration,
            "100ms",
            "s",
            "initial preemption interval",
        ),
        ParamInfo::optional(
            "window",
            ParamKind::Duration,
            "10s",
            "s",
            "length of the counting window",
        ),
        ParamInfo::optional(
            "max-rate",
            ParamKind::Float,
            "0.05",
            "preemptions/arrival",
            "preemptions allowed per foreground arrival in a window before p grows (≥ 0)",
        ),
        ParamInfo::optional(
            "grow",
            ParamKind::Float,
            "2",
            "",
            "factor p grows by after a window with too many preemptions (> 1)",
        ),
        ParamInfo::optional(
            "step",
            ParamKind::Duration,
            "10ms",
            "s",
            "amount p shrinks by after any other window",
        ),
        ParamInfo::optional("min", ParamKind::Duration, "1ms", "s", "least interval"),
        ParamInfo::optional("max", ParamKind::Duration, "10s", "s", "largest interval"),
        BOUND_PARAMS[0],
        BOUND_PARAMS[1],
    ],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[GaugeInfo::new("interval_s", "interval", GaugeUnit::Seconds)],
};

fn bound_params(p: &Params) -> Result<(bool, f64), ParamError> {
    Ok((
        p.bool("bounds")?,
        p.float_in("gain", f64::MIN_POSITIVE, 1.0)?,
    ))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(PREEMPT_GATE, |p| {
        let (bounded, gain) = bound_params(p)?;
        Ok(Built::Skeptic(Box::new(PreemptGate::new(
            p.duration("p")?,
            bounded,
            gain,
        ))))
    });
    r.register(PREEMPT_GATE_AUTO, |p| {
        let (bounded, gain) = bound_params(p)?;
        let min = p.duration("min")?;
        let max = p.duration("max")?;
        if min > max {
            return Err(ParamError::new("min", "must not exceed max"));
        }
        let grow = p.float("grow")?;
        if grow <= 1.0 {
            return Err(ParamError::new(
                "grow",
                format!("{grow} must be greater than 1"),
            ));
        }
        let max_rate = p.float("max-rate")?;
        if max_rate < 0.0 {
            return Err(ParamError::new("max-rate", "must be ≥ 0"));
        }
        let tune = AutoTune::new(
            p.positive_duration("window")?,
            max_rate,
            grow,
            p.duration("step")?,
            min,
            max,
        );
        Ok(Built::Skeptic(Box::new(PreemptGate::auto(
            p.duration("p")?,
            bounded,
            gain,
            tune,
        ))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request};

    fn ms(x: u64) -> Nanos {
        Nanos::from_millis(x)
    }
    fn req(a: u64, c: u64) -> Request {
        Request::new(ms(a), ms(c), Op::Read, 0, 4096)
    }
    fn busy(t: u64, n: u32) -> Context {
        Context {
            outstanding: n,
            ..Context::at(ms(t))
        }
    }

    #[test]
    fn the_transition_table_is_figure_5_6() {
        use Ev as E;
        use State::*;
        let table = [
            (I, [F, B, I, I]),
            (F, [F, P, F, P]),
            (B, [F, B, B, I]),
            (P, [F, P, I, P]),
        ];
        for (s, row) in table {
            for (e, want) in [E::F, E::B, E::T, E::I].into_iter().zip(row) {
                assert_eq!(transition(s, e), want, "{s:?} on {e:?}");
            }
        }
    }

    /// A burst of requests 20 ms apart with p = 50 ms: one preemption
    /// interval after the burst, background work only after it expires.
    #[test]
    fn background_waits_a_full_interval_after_the_burst() {
        let mut g = PreemptGate::new(ms(50), false, 0.1);
        let input = Prediction::new(ms(0), None);
        // Idle at start: the input's permission starts work at once (I→B).
        assert_eq!(g.on_input(0, &input, &Context::at(ms(0))), Some(input));
        assert_eq!(g.state(), State::B);
        // R1 arrives at 10 ms: a preemption (B on f).
        let r1 = req(10, 15);
        g.on_event(&Event::arrival(&r1), &busy(10, 1));
        assert_eq!(g.state(), State::F);
        assert_eq!(g.preemptions(), 1);
        g.on_event(&Event::completion(&r1), &busy(15, 0));
        assert_eq!(g.state(), State::P);
        assert_eq!(g.next_deadline(), Some(ms(65)));
        // The input predicts again at once (a timer of 0): held (P on b).
        let again = Prediction::new(ms(15), None);
        assert_eq!(g.on_input(0, &again, &busy(15, 0)), None);
        assert_eq!(g.count(State::P, Ev::B), 1);
        // R2 arrives inside the interval (P on f): no preemption.
        let r2 = req(35, 40);
        g.on_event(&Event::arrival(&r2), &busy(35, 1));
        assert_eq!(g.count(State::P, Ev::F), 1);
        g.on_event(&Event::completion(&r2), &busy(40, 0));
        assert_eq!(g.next_deadline(), Some(ms(90)));
        assert_eq!(
            g.on_input(0, &Prediction::new(ms(40), None), &busy(40, 0)),
            None
        );
        // The interval expires at 90 ms: P→I on t, then I→B on b.
        let out = g.on_deadline(&Context::at(ms(90)));
        assert_eq!(out, Some(Prediction::new(ms(90), None)));
        assert_eq!(g.state(), State::B);
        assert_eq!(g.count(State::P, Ev::T), 1);
        assert_eq!(g.preemptions(), 1);
    }

    #[test]
    fn the_emitted_prediction_is_the_inputs_tail_and_ends_in_i() {
        let mut g = PreemptGate::new(ms(50), false, 0.1);
        let r = req(0, 10);
        g.on_event(&Event::arrival(&r), &busy(0, 1));
        g.on_event(&Event::completion(&r), &busy(10, 0));
        // timer(0) + fixed(1 s) at 10 ms.
        let p = Prediction::new(ms(10), Some(ms(1000)));
        assert_eq!(g.on_input(0, &p, &busy(10, 0)), None);
        let out = g.on_deadline(&Context::at(ms(60))).unwrap();
        assert_eq!(out, Prediction::new(ms(60), Some(ms(950))));
        assert_eq!(out.end(), p.end());
        // The prediction runs out: B→I at the next stimulus.
        g.on_deadline(&Context::at(ms(2000)));
        assert_eq!(g.state(), State::I);
        // A withdrawal while in B is passed on.
        let q = Prediction::new(ms(2000), None);
        assert_eq!(g.on_input(0, &q, &Context::at(ms(2000))), Some(q));
        let w = Prediction::new(ms(2100), Some(Nanos::ZERO));
        assert_eq!(g.on_input(0, &w, &Context::at(ms(2100))), Some(w));
        assert_eq!(g.state(), State::I);
    }

    #[test]
    fn a_prediction_that_ends_inside_the_interval_starts_nothing() {
        let mut g = PreemptGate::new(ms(50), false, 0.1);
        let r = req(0, 10);
        g.on_event(&Event::arrival(&r), &busy(0, 1));
        g.on_event(&Event::completion(&r), &busy(10, 0));
        g.on_input(0, &Prediction::new(ms(10), Some(ms(20))), &busy(10, 0));
        assert_eq!(g.on_deadline(&Context::at(ms(60))), None);
        assert_eq!(g.state(), State::I);
    }

    #[test]
    fn bounds_clamp_p_between_service_and_interarrival() {
        let mut g = PreemptGate::new(ms(500), true, 1.0);
        // Requests every 100 ms, each served in 10 ms.
        for k in 0..5 {
            let r = req(100 * k, 100 * k + 10);
            g.on_event(&Event::arrival(&r), &busy(100 * k, 1));
            g.on_event(&Event::completion(&r), &busy(100 * k + 10, 0));
        }
        assert_eq!(g.bounds().service(), Some(ms(10)));
        assert_eq!(g.bounds().interarrival(), Some(ms(100)));
        assert_eq!(g.effective_p(), ms(100));
        assert_eq!(g.next_deadline(), Some(ms(410 + 100)));
        let mut g = PreemptGate::new(ms(1), true, 1.0);
        let r = req(0, 10);
        g.on_event(&Event::arrival(&r), &busy(0, 1));
        g.on_event(&Event::completion(&r), &busy(10, 0));
        assert_eq!(g.effective_p(), ms(10));
        // Queued requests: service is measured from the previous completion.
        let mut b = Bounds::new(1.0);
        b.on_completion(ms(0), ms(10));
        b.on_completion(ms(0), ms(25));
        assert_eq!(b.service(), Some(ms(15)));
    }

    #[test]
    fn auto_tuning_grows_on_preemptions_and_shrinks_without() {
        let tune = AutoTune::new(ms(1000), 0.0, 2.0, ms(10), ms(1), ms(10_000));
        let mut g = PreemptGate::auto(ms(100), false, 0.1, tune);
        // Window 1 (0–1 s): background runs, then a request preempts it.
        g.on_input(0, &Prediction::new(ms(0), None), &Context::at(ms(0)));
        let r = req(500, 510);
        g.on_event(&Event::arrival(&r), &busy(500, 1));
        g.on_event(&Event::completion(&r), &busy(510, 0));
        assert_eq!(g.preemptions(), 1);
        assert_eq!(g.p(), ms(100));
        // First stimulus of window 2 closes window 1: p doubles.
        g.on_deadline(&Context::at(ms(1000)));
        assert_eq!(g.p(), ms(200));
        // Window 2 has no preemption: at 2 s p shrinks by a step; at 4.5 s
        // the windows ending at 3 s and 4 s each shrink it by another.
        g.on_deadline(&Context::at(ms(2000)));
        assert_eq!(g.p(), ms(190));
        g.on_deadline(&Context::at(ms(4500)));
        assert_eq!(g.p(), ms(170));
    }
}
