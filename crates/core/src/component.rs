//! The component traits of the taxonomy (§3 of *Idleness is not sloth*)
//! and the [`Predictor`] that pairs a start detector with a duration
//! predictor.
//!
//! Every component is an `&mut self` state machine. It is handed `now` in a
//! [`Context`]; it never reads a clock and never sleeps. When it wants to be
//! woken at a later time it says so through `next_deadline`, and the driver
//! (replay or daemon) calls `on_deadline` at that time. The traits are
//! object safe so networks can be built at run time from spec strings.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::saved::{Learned, LearnedError};
use crate::time::Nanos;

/// A prediction: the device will be idle from `start` for `duration`.
///
/// `duration: None` is "no duration": idle until the device is busy again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Prediction {
    /// When the idle period is predicted to begin (never before the moment
    /// the prediction is made).
    pub start: Nanos,
    /// How long it is predicted to last; `None` for "until busy".
    pub duration: Option<Nanos>,
}

impl Prediction {
    /// A prediction from `start` lasting `duration`.
    pub const fn new(start: Nanos, duration: Option<Nanos>) -> Self {
        Prediction { start, duration }
    }
    /// When the prediction runs out (`Nanos::MAX` for "until busy").
    pub fn end(&self) -> Nanos {
        match self.duration {
            Some(d) => self.start + d,
            None => Nanos::MAX,
        }
    }
    /// Whether `t` lies inside `[start, end)`.
    pub fn covers(&self, t: Nanos) -> bool {
        self.start <= t && t < self.end()
    }
}

/// A start detector's decision: an idle period begins at `at`, or (with
/// `end`) the idle period it declared is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    /// When the idle period begins (at or after the call's `now`).
    pub at: Nanos,
    /// A duration the start detector itself knows (the oracle does); used
    /// when the duration predictor makes no prediction.
    pub duration_hint: Option<Nanos>,
    /// The idle period the detector declared has ended at `at` (a rate
    /// detector's estimate rose above its end-of-idle threshold, §3.1.1):
    /// [`Predictor`] withdraws its prediction with a zero-duration one.
    pub end: bool,
}

impl Start {
    /// An idle period begins now.
    pub const fn now(at: Nanos) -> Self {
        Start {
            at,
            duration_hint: None,
            end: false,
        }
    }
    /// The idle period the detector declared is over, now.
    pub const fn end(at: Nanos) -> Self {
        Start {
            at,
            duration_hint: None,
            end: true,
        }
    }
}

/// What a component may know when it is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    /// The current time.
    pub now: Nanos,
    /// Requests outstanding at the device right now.
    pub outstanding: u32,
    /// When the current idle period began, if the device is idle (as
    /// announced to the components; see the ordering rule in
    /// [`crate::event`]).
    pub idle_since: Option<Nanos>,
    /// Offline lookahead: when the current idle period will end. Only the
    /// replay driver knows it, and only offline components (the oracle)
    /// may use it.
    pub lookahead: Option<Nanos>,
    /// The wall clock at time 0, as nanoseconds since the Unix epoch, when
    /// the driver knows it (the daemon does; a replay of a trace with
    /// absolute timestamps can). Environmental skeptics (time of day) read
    /// it, and so does the periodic estimator, to carry its sources'
    /// phases over a restart; everything else works on relative time.
    pub clock: Option<Nanos>,
}

impl Context {
    /// A context at `now` with an idle device and no lookahead.
    pub const fn at(now: Nanos) -> Self {
        Context {
            now,
            outstanding: 0,
            idle_since: None,
            lookahead: None,
            clock: None,
        }
    }
    /// Whether no request is outstanding.
    pub const fn is_idle(&self) -> bool {
        self.outstanding == 0
    }
}

/// Decides *when* an idle period has begun (§3.1.1).
///
/// It sees every foreground event and the beginning and end of every actual
/// idle period, may ask to be woken at a deadline, and returns a [`Start`]
/// when it declares idleness.
///
/// Contract: a returned `Start::at` is never before `ctx.now`;
/// `next_deadline` is never before the last `now` it was told (a deadline in
/// the past is a bug the engine reports); `on_deadline` may be called at a
/// time when nothing is due (it should then do nothing).
pub trait StartDetector: Send + fmt::Debug {
    /// A request arrived or completed.
    fn on_event(&mut self, _ev: &Event, _ctx: &Context) -> Option<Start> {
        None
    }
    /// Whether `on_event` must see every arrival and completion. A
    /// component that reacts only to idle-period boundaries and deadlines
    /// returns `false`, and the engine skips it on the hot path. Asked once,
    /// when the engine is built: it must not change afterwards.
    fn wants_events(&self) -> bool {
        true
    }
    /// Internal values worth watching while it runs (an adaptive timeout,
    /// a learned threshold, combination weights) as `(name, value)`, for
    /// metrics and debugging; empty by default. Not on any hot path.
    fn gauges(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// How short an idle period must be for this detector to sit it out
    /// untouched: one that begins now and ends (with an arrival) less than
    /// this later would, through `on_idle_begin` and `on_idle_end`, emit
    /// nothing, fire no deadline and leave the state exactly as it is now.
    /// A replay may then skip both calls (and the foreground events around
    /// them when nothing wants events). Asked again each time it matters;
    /// zero, the default, promises nothing. A timer with timeout `t` and
    /// no alarm armed returns `t`.
    fn quiet_below(&self) -> Nanos {
        Nanos::ZERO
    }
    /// The device has just become idle (`ctx.now` is the completion that
    /// emptied it).
    fn on_idle_begin(&mut self, _ctx: &Context) -> Option<Start> {
        None
    }
    /// An idle period that began at `began` ended with an arrival at
    /// `ctx.now`. Called before `on_event` for that arrival.
    fn on_idle_end(&mut self, _ctx: &Context, _began: Nanos) {}
    /// When the detector wants `on_deadline` called next.
    fn next_deadline(&self) -> Option<Nanos> {
        None
    }
    /// A deadline it asked for is due.
    fn on_deadline(&mut self, _ctx: &Context) -> Option<Start> {
        None
    }
    /// Feedback: the prediction that was issued from this detector's last
    /// start (adaptive detectors judge it against what follows).
    fn on_prediction(&mut self, _p: &Prediction) {}
    /// What it has learned about the device, to keep across restarts
    /// ([`crate::learned`]): statistics that hold beyond the current idle
    /// period, any time in them relative to `now`. `None`, the default,
    /// for a component that learns nothing.
    fn save(&self, _now: Nanos) -> Option<Learned> {
        None
    }
    /// Takes back, at `now`, what [`save`](Self::save) returned (into a
    /// fresh component built from the same spec). An error, leaving it
    /// unusable, when the state does not fit; the default refuses any
    /// state (it learns nothing).
    fn restore(&mut self, learned: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        Err(stateless(learned))
    }
}

/// Says *how long* an idle period will last (§3.1.2), with the interface of
/// §3.1.3: notifications of actual idle periods, `duration` at the start of
/// a prediction and `continuance` when a prediction ran out while the device
/// is still idle.
pub trait DurationPredictor: Send + fmt::Debug {
    /// An actual idle period began at `now`.
    fn on_idle_begin(&mut self, _now: Nanos) {}
    /// The actual idle period that began `length` ago ended at `now`.
    fn on_idle_end(&mut self, _now: Nanos, _length: Nanos) {}
    /// A request arrived or completed (for predictors that model the
    /// arrival process).
    fn on_event(&mut self, _ev: &Event, _ctx: &Context) {}
    /// Whether `on_event` must see every arrival and completion. A
    /// component that reacts only to idle-period boundaries and deadlines
    /// returns `false`, and the engine skips it on the hot path. Asked once,
    /// when the engine is built: it must not change afterwards.
    fn wants_events(&self) -> bool {
        true
    }
    /// What it has learned, as for [`StartDetector::gauges`].
    fn gauges(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// Whether `on_idle_begin` and `on_idle_end` never change anything
    /// (`fixed`, `no-duration`): a replay may then skip idle periods that
    /// the start detector sits out. `false`, the default, promises nothing.
    fn ignores_idle_periods(&self) -> bool {
        false
    }
    /// What it has learned about the device, to keep across restarts
    /// ([`crate::learned`]): statistics that hold beyond the current idle
    /// period, any time in them relative to `now`. `None`, the default,
    /// for a component that learns nothing.
    fn save(&self, _now: Nanos) -> Option<Learned> {
        None
    }
    /// Takes back, at `now`, what [`save`](Self::save) returned (into a
    /// fresh component built from the same spec). An error, leaving it
    /// unusable, when the state does not fit; the default refuses any
    /// state (it learns nothing).
    fn restore(&mut self, learned: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        Err(stateless(learned))
    }
    /// The predicted length of an idle period starting at `now`; `None` for
    /// no prediction ("until busy").
    fn duration(&mut self, now: Nanos) -> Option<Nanos>;
    /// A prediction ran out at `now` and the device is still idle; the idle
    /// period has lasted `elapsed` since the first prediction of the chain.
    /// Returns how much longer it will last, or `None` to stop predicting.
    fn continuance(&mut self, _now: Nanos, _elapsed: Nanos) -> Option<Nanos> {
        None
    }
}

/// Filters or combines prediction streams (§3.2).
///
/// Inputs are numbered in the order the network spec lists them. A skeptic
/// must never emit a prediction that none of its inputs supported.
pub trait Skeptic: Send + fmt::Debug {
    /// Input `input` emitted `p`.
    fn on_input(&mut self, input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction>;
    /// A request arrived or completed; called before the inputs' outputs
    /// for the same event are delivered.
    fn on_event(&mut self, _ev: &Event, _ctx: &Context) -> Option<Prediction> {
        None
    }
    /// The device has just become idle.
    fn on_idle_begin(&mut self, _ctx: &Context) -> Option<Prediction> {
        None
    }
    /// An idle period that began at `began` ended at `ctx.now`.
    fn on_idle_end(&mut self, _ctx: &Context, _began: Nanos) {}
    /// When the skeptic wants `on_deadline` called next.
    fn next_deadline(&self) -> Option<Nanos> {
        None
    }
    /// A deadline it asked for is due.
    fn on_deadline(&mut self, _ctx: &Context) -> Option<Prediction> {
        None
    }
    /// What it has learned, as for [`StartDetector::gauges`].
    fn gauges(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// What it has learned about the device, to keep across restarts
    /// ([`crate::learned`]): statistics that hold beyond the current idle
    /// period, any time in them relative to `now`. `None`, the default,
    /// for a component that learns nothing.
    fn save(&self, _now: Nanos) -> Option<Learned> {
        None
    }
    /// Takes back, at `now`, what [`save`](Self::save) returned (into a
    /// fresh component built from the same spec). An error, leaving it
    /// unusable, when the state does not fit; the default refuses any
    /// state (it learns nothing).
    fn restore(&mut self, learned: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        Err(stateless(learned))
    }
}

/// A whole detector: anything that turns events into one prediction
/// stream. [`Predictor`] and [`crate::network::Network`] are detectors; the
/// engine drives one.
///
/// Predictions are pushed into `out` (a stimulus may produce several in a
/// network).
pub trait Detector: Send + fmt::Debug {
    /// A request arrived or completed.
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>);
    /// Whether `on_event` must see every arrival and completion. A
    /// component that reacts only to idle-period boundaries and deadlines
    /// returns `false`, and the engine skips it on the hot path. Asked once,
    /// when the engine is built: it must not change afterwards.
    fn wants_events(&self) -> bool {
        true
    }
    /// What it has learned, as for [`StartDetector::gauges`].
    fn gauges(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// How short an idle period must be for the whole detector to sit it
    /// out untouched (see [`StartDetector::quiet_below`]); zero, the
    /// default, promises nothing.
    fn quiet_below(&self) -> Nanos {
        Nanos::ZERO
    }
    /// The spec it was built from, named networks expanded
    /// ([`Network::spec`](crate::network::Network::spec)); `None`, the
    /// default, for a detector made in code. A snapshot of what it learned
    /// is tagged with it.
    fn spec(&self) -> Option<&str> {
        None
    }
    /// Appends what each of its components has learned ([`crate::learned`]),
    /// in a fixed order, `None` for one that learns nothing; the default
    /// appends nothing (a detector that keeps nothing).
    fn save_parts(&self, _now: Nanos, _out: &mut Vec<Option<Learned>>) {}
    /// Takes its components' states from the front of `parts`, in the
    /// order [`save_parts`](Self::save_parts) wrote them, advancing
    /// `parts` past them.
    fn restore_parts(
        &mut self,
        _parts: &mut &[Option<Learned>],
        _now: Nanos,
    ) -> Result<(), LearnedError> {
        Ok(())
    }
    /// The device has just become idle.
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>);
    /// An idle period that began at `began` ended at `ctx.now`.
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos);
    /// The earliest deadline of any part.
    fn next_deadline(&self) -> Option<Nanos>;
    /// A deadline is due at `ctx.now`.
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>);
}

macro_rules! forward_box {
    ($trait:ident { $($body:tt)* }) => {
        impl<T: $trait + ?Sized> $trait for Box<T> { $($body)* }
    };
}

forward_box!(StartDetector {
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> { (**self).on_event(ev, ctx) }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> { (**self).on_idle_begin(ctx) }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) { (**self).on_idle_end(ctx, began) }
    fn next_deadline(&self) -> Option<Nanos> { (**self).next_deadline() }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> { (**self).on_deadline(ctx) }
    fn on_prediction(&mut self, p: &Prediction) { (**self).on_prediction(p) }
    fn save(&self, now: Nanos) -> Option<Learned> { (**self).save(now) }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> { (**self).restore(l, now) }
    fn wants_events(&self) -> bool { (**self).wants_events() }
    fn quiet_below(&self) -> Nanos { (**self).quiet_below() }
    fn gauges(&self) -> Vec<(String, f64)> { (**self).gauges() }
});

forward_box!(DurationPredictor {
    fn on_idle_begin(&mut self, now: Nanos) { (**self).on_idle_begin(now) }
    fn on_idle_end(&mut self, now: Nanos, length: Nanos) { (**self).on_idle_end(now, length) }
    fn on_event(&mut self, ev: &Event, ctx: &Context) { (**self).on_event(ev, ctx) }
    fn duration(&mut self, now: Nanos) -> Option<Nanos> { (**self).duration(now) }
    fn continuance(&mut self, now: Nanos, elapsed: Nanos) -> Option<Nanos> { (**self).continuance(now, elapsed) }
    fn wants_events(&self) -> bool { (**self).wants_events() }
    fn ignores_idle_periods(&self) -> bool { (**self).ignores_idle_periods() }
    fn save(&self, now: Nanos) -> Option<Learned> { (**self).save(now) }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> { (**self).restore(l, now) }
    fn gauges(&self) -> Vec<(String, f64)> { (**self).gauges() }
});

forward_box!(Skeptic {
    fn on_input(&mut self, input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> { (**self).on_input(input, p, ctx) }
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> { (**self).on_event(ev, ctx) }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Prediction> { (**self).on_idle_begin(ctx) }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) { (**self).on_idle_end(ctx, began) }
    fn next_deadline(&self) -> Option<Nanos> { (**self).next_deadline() }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Prediction> { (**self).on_deadline(ctx) }
    fn gauges(&self) -> Vec<(String, f64)> { (**self).gauges() }
    fn save(&self, now: Nanos) -> Option<Learned> { (**self).save(now) }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> { (**self).restore(l, now) }
});

forward_box!(Detector {
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) { (**self).on_event(ev, ctx, out) }
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) { (**self).on_idle_begin(ctx, out) }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) { (**self).on_idle_end(ctx, began) }
    fn next_deadline(&self) -> Option<Nanos> { (**self).next_deadline() }
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) { (**self).on_deadline(ctx, out) }
    fn wants_events(&self) -> bool { (**self).wants_events() }
    fn quiet_below(&self) -> Nanos { (**self).quiet_below() }
    fn spec(&self) -> Option<&str> { (**self).spec() }
    fn gauges(&self) -> Vec<(String, f64)> { (**self).gauges() }
    fn save_parts(&self, now: Nanos, out: &mut Vec<Option<Learned>>) { (**self).save_parts(now, out) }
    fn restore_parts(&mut self, parts: &mut &[Option<Learned>], now: Nanos) -> Result<(), LearnedError> { (**self).restore_parts(parts, now) }
});

/// The refusal of a component that learns nothing.
fn stateless(l: &Learned) -> LearnedError {
    LearnedError::new(format!(
        "a {} state cannot go into a component that learns nothing",
        l.kind
    ))
}

/// Takes the next part from the front of `parts` and restores it into
/// `c` with `restore`: `None` (the saver learned nothing) leaves `c` as
/// built; running out of parts is an error.
pub fn restore_next(
    parts: &mut &[Option<Learned>],
    restore: impl FnOnce(&Learned) -> Result<(), LearnedError>,
) -> Result<(), LearnedError> {
    let (first, rest) = parts
        .split_first()
        .ok_or_else(|| LearnedError::new("the state has fewer parts than the network"))?;
    *parts = rest;
    match first {
        Some(l) => restore(l),
        None => Ok(()),
    }
}

/// The earlier of two optional deadlines.
pub fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// A start detector paired with a duration predictor (§3.1): emits
/// `Prediction { start, duration }`.
///
/// It forwards the actual idle periods to the duration predictor, asks it
/// for a `duration` when the start detector fires and, when a prediction
/// runs out with no arrival since it began, for a `continuance`; a returned
/// continuance is emitted as a new prediction starting then. The chain of
/// continuances ends at the next arrival or when the duration predictor
/// returns `None`.
///
/// Generic, so a predictor composed in code costs no dynamic dispatch; the
/// `Box<dyn …>` instantiation is what networks built from strings use.
#[derive(Debug)]
pub struct Predictor<S, D> {
    start: S,
    duration: D,
    chain: Option<Chain>,
    start_events: bool,
    duration_events: bool,
}

#[derive(Clone, Copy, Debug)]
struct Chain {
    first: Nanos,
    end: Option<Nanos>,
}

impl<S: StartDetector, D: DurationPredictor> Predictor<S, D> {
    /// Pairs `start` with `duration`.
    pub fn new(start: S, duration: D) -> Self {
        Predictor {
            start_events: start.wants_events(),
            duration_events: duration.wants_events(),
            start,
            duration,
            chain: None,
        }
    }
    /// The start detector.
    pub fn start_detector(&self) -> &S {
        &self.start
    }
    /// The duration predictor.
    pub fn duration_predictor(&self) -> &D {
        &self.duration
    }

    fn predict(&mut self, s: Start, out: &mut Vec<Prediction>) {
        if s.end {
            // End of the declared idle period: withdraw (the actuator stops
            // a task that follows predictions; see `StopPolicy`).
            self.chain = None;
            out.push(Prediction::new(s.at, Some(Nanos::ZERO)));
            return;
        }
        let duration = self.duration.duration(s.at).or(s.duration_hint);
        let p = Prediction::new(s.at, duration);
        self.chain = Some(Chain {
            first: s.at,
            end: duration.map(|d| s.at + d),
        });
        self.start.on_prediction(&p);
        out.push(p);
    }
}

impl<S: StartDetector, D: DurationPredictor> Detector for Predictor<S, D> {
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        if ev.is_arrival() {
            self.chain = None;
        }
        if self.duration_events {
            self.duration.on_event(ev, ctx);
        }
        if self.start_events {
            if let Some(s) = self.start.on_event(ev, ctx) {
                self.predict(s, out);
            }
        }
    }

    fn wants_events(&self) -> bool {
        self.start_events || self.duration_events
    }

    fn gauges(&self) -> Vec<(String, f64)> {
        let mut g = self.start.gauges();
        g.extend(self.duration.gauges());
        g
    }

    fn save_parts(&self, now: Nanos, out: &mut Vec<Option<Learned>>) {
        out.push(self.start.save(now));
        out.push(self.duration.save(now));
    }

    fn restore_parts(
        &mut self,
        parts: &mut &[Option<Learned>],
        now: Nanos,
    ) -> Result<(), LearnedError> {
        restore_next(parts, |l| self.start.restore(l, now))?;
        restore_next(parts, |l| self.duration.restore(l, now))
    }

    fn quiet_below(&self) -> Nanos {
        // An open chain would be closed by the idle end it skipped.
        if self.chain.is_none() && self.duration.ignores_idle_periods() {
            self.start.quiet_below()
        } else {
            Nanos::ZERO
        }
    }

    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.duration.on_idle_begin(ctx.now);
        if let Some(s) = self.start.on_idle_begin(ctx) {
            self.predict(s, out);
        }
    }

    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        // The arrival that ends an idle period ends the chain of
        // continuances (also when on_event is skipped).
        self.chain = None;
        self.duration.on_idle_end(ctx.now, ctx.now - began);
        self.start.on_idle_end(ctx, began);
    }

    fn next_deadline(&self) -> Option<Nanos> {
        earliest(self.start.next_deadline(), self.chain.and_then(|c| c.end))
    }

    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        let now = ctx.now;
        if let Some(chain) = self.chain.filter(|c| c.end.is_some_and(|e| e <= now)) {
            match self.duration.continuance(now, now - chain.first) {
                Some(d) if d > Nanos::ZERO => {
                    self.chain = Some(Chain {
                        first: chain.first,
                        end: Some(now + d),
                    });
                    out.push(Prediction::new(now, Some(d)));
                }
                _ => self.chain = Some(Chain { end: None, ..chain }),
            }
        }
        if self.start.next_deadline().is_some_and(|d| d <= now) {
            if let Some(s) = self.start.on_deadline(ctx) {
                self.predict(s, out);
            }
        }
    }
}

/// Compile-time proof that the traits stay object safe.
#[allow(dead_code)]
fn _object_safe(
    _: Box<dyn StartDetector>,
    _: Box<dyn DurationPredictor>,
    _: Box<dyn Skeptic>,
    _: Box<dyn Detector>,
) {
}
