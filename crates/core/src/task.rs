//! Idle tasks (§2.4–§2.5): the work run in idle time.

use std::fmt;

use crate::actuator::Command;
use crate::component::Context;
use crate::event::Event;
use crate::time::Nanos;

/// How an idle task can be interrupted (§2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Granularity {
    /// Whether a stop takes effect at once; if not, the current step runs
    /// to its end.
    pub interruptible: bool,
    /// The length of one repeated step, if the task works in steps.
    pub step: Option<Nanos>,
    /// Whether the work of an interrupted step is lost.
    pub loses_work_on_interrupt: bool,
}

impl Granularity {
    /// A task that stops at once and loses nothing.
    pub const FINE: Granularity = Granularity {
        interruptible: true,
        step: None,
        loses_work_on_interrupt: false,
    };
}

/// One measure an idle task reports: a name from SPEC §4 and its value.
pub type Measure = (&'static str, f64);

/// An idle task: an initial step when started, repeated steps while it runs
/// (driven by its own deadlines), a recovery step when stopped.
///
/// It also sees the foreground events, since many tasks depend on them (a
/// spun-down disk spins up on the next arrival) and reports its external
/// measures at the end.
///
/// # Steps at the end of a budget
///
/// A run is the half-open interval `[start, stop)`. When the task's own
/// deadline (the end of a step, or the start of the next) falls at the
/// very instant its budget runs out, the actuator's stop comes first (at
/// one instant the engine fires the detector's deadline, then the
/// actuator's, then the task's: [`crate::engine`]), and the task is
/// stopped before that deadline: a task started with `budget: Some(b)`
/// whose step of length `b` would complete at `start + b` is interrupted
/// instead, every time. Size the work to end strictly inside the budget
/// (a step of length `s` fits if it starts before `start + b - s`), or
/// run a network without a duration, whose runs end only at an arrival.
pub trait IdleTask: Send + fmt::Debug {
    /// The task's canonical name (`none`, `spindown`, …).
    fn name(&self) -> &'static str;
    /// How it can be interrupted.
    fn granularity(&self) -> Granularity {
        Granularity::FINE
    }
    /// Initial step: the actuator started the task at `ctx.now` with
    /// `budget` of predicted idle time (`None`: until busy).
    fn start(&mut self, ctx: &Context, budget: Option<Nanos>);
    /// A new prediction while running.
    fn renew(&mut self, _ctx: &Context, _budget: Option<Nanos>) {}
    /// Recovery step: the actuator stopped the task at `ctx.now`.
    fn stop(&mut self, ctx: &Context);
    /// A foreground request arrived or completed (after the actuator saw
    /// it, so a stop caused by an arrival comes first).
    fn on_event(&mut self, _ev: &Event, _ctx: &Context) {}
    /// Whether `on_event` must see every foreground event; `false` lets the
    /// engine skip the call. Asked once, when the engine is built.
    fn wants_events(&self) -> bool {
        true
    }
    /// Whether, at `now`, the foreground events of a busy run would only
    /// book the idle gap before it and leave the task otherwise as it is
    /// (a spun-up disk with nothing to delay): the replay may then skip
    /// them and call [`IdleTask::skip_run`] instead. `false`, the default,
    /// promises nothing. Asked again each time it matters.
    fn skips_runs(&self, _now: Nanos) -> bool {
        false
    }
    /// A busy run the replay skipped (only after `skips_runs` said so):
    /// its first arrival came at `start`, ending the idle gap before it
    /// (`None` when that arrival was pushed as an event), and the device
    /// emptied again at `end`, its last completion.
    fn skip_run(&mut self, _start: Option<Nanos>, _end: Nanos) {}
    /// When the task wants `on_deadline` next (its repeated steps). A
    /// deadline at the instant the run is stopped does not fire while it
    /// runs (see "Steps at the end of a budget" above).
    fn next_deadline(&self) -> Option<Nanos> {
        None
    }
    /// A deadline it asked for is due.
    fn on_deadline(&mut self, _ctx: &Context) {}
    /// The run is over at `end`; close the books.
    fn finish(&mut self, _end: Nanos) {}
    /// External measures, in a fixed order (empty for the no-op task).
    fn measures(&self) -> Vec<Measure> {
        Vec::new()
    }
}

impl<T: IdleTask + ?Sized> IdleTask for Box<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn granularity(&self) -> Granularity {
        (**self).granularity()
    }
    fn start(&mut self, ctx: &Context, budget: Option<Nanos>) {
        (**self).start(ctx, budget)
    }
    fn renew(&mut self, ctx: &Context, budget: Option<Nanos>) {
        (**self).renew(ctx, budget)
    }
    fn stop(&mut self, ctx: &Context) {
        (**self).stop(ctx)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) {
        (**self).on_event(ev, ctx)
    }
    fn wants_events(&self) -> bool {
        (**self).wants_events()
    }
    fn skips_runs(&self, now: Nanos) -> bool {
        (**self).skips_runs(now)
    }
    fn skip_run(&mut self, start: Option<Nanos>, end: Nanos) {
        (**self).skip_run(start, end)
    }
    fn next_deadline(&self) -> Option<Nanos> {
        (**self).next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) {
        (**self).on_deadline(ctx)
    }
    fn finish(&mut self, end: Nanos) {
        (**self).finish(end)
    }
    fn measures(&self) -> Vec<Measure> {
        (**self).measures()
    }
}

/// The no-op task `none`: does nothing, reports nothing. Runs give the
/// internal measures only.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTask;

impl IdleTask for NoTask {
    fn name(&self) -> &'static str {
        "none"
    }
    fn start(&mut self, _ctx: &Context, _budget: Option<Nanos>) {}
    fn stop(&mut self, _ctx: &Context) {}
    fn wants_events(&self) -> bool {
        false
    }
}

/// A task whose commands can be pulled: wraps `T` (every call forwarded,
/// so the task and its measures are exactly as without the wrapper) and
/// records each command the actuator gave it, with its time, for the
/// embedder to take with [`Recorded::drain`] after each
/// [`crate::engine::Engine::push`] or [`crate::engine::Engine::advance`].
/// `Recorded<NoTask>` (its [`Default`]) is for an embedder that has no
/// task to model and only wants the decisions, as sans-IO protocol crates
/// hand out theirs.
///
/// ```
/// use lull_core::prelude::*;
/// use lull_core::task::Recorded;
///
/// # #[derive(Debug)] struct After(Nanos, Option<Nanos>);
/// # impl StartDetector for After {
/// #     fn on_idle_begin(&mut self, c: &Context) -> Option<Start> { self.1 = Some(c.now + self.0); None }
/// #     fn on_event(&mut self, e: &Event, _: &Context) -> Option<Start> { if e.is_arrival() { self.1 = None; } None }
/// #     fn next_deadline(&self) -> Option<Nanos> { self.1 }
/// #     fn on_deadline(&mut self, c: &Context) -> Option<Start> { self.1.take().map(|_| Start::now(c.now)) }
/// # }
/// # #[derive(Debug)] struct Until;
/// # impl DurationPredictor for Until { fn duration(&mut self, _: Nanos) -> Option<Nanos> { None } }
/// let s = Nanos::from_secs;
/// let detector = Predictor::new(After(s(5), None), Until);
/// let mut engine = Engine::with_policy(detector, StopPolicy::WhenBusy, Recorded::<NoTask>::default());
/// // A request that arrives and completes; the application's clock moves on.
/// engine.push(&Event::arrival_at(s(0), Op::Write, 0, 4096)).unwrap();
/// engine.push(&Event::completion_at(s(1), s(0), Op::Write, 0, 4096)).unwrap();
/// engine.advance(s(10)).unwrap();
/// let commands: Vec<_> = engine.task_mut().drain().collect();
/// assert_eq!(commands, [(s(6), Command::Start { budget: None })]);
/// ```
#[derive(Debug, Default)]
pub struct Recorded<T = NoTask> {
    inner: T,
    commands: Vec<(Nanos, Command)>,
}

impl<T: IdleTask> Recorded<T> {
    /// Records the commands given to `inner`.
    pub fn new(inner: T) -> Self {
        Recorded {
            inner,
            commands: Vec::new(),
        }
    }
    /// Takes the commands recorded since the last call, oldest first.
    pub fn drain(&mut self) -> std::vec::Drain<'_, (Nanos, Command)> {
        self.commands.drain(..)
    }
    /// The wrapped task.
    pub fn inner(&self) -> &T {
        &self.inner
    }
    /// The wrapped task, to hand it work (a queue to flush, a job to run).
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: IdleTask> IdleTask for Recorded<T> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn granularity(&self) -> Granularity {
        self.inner.granularity()
    }
    fn start(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.commands.push((ctx.now, Command::Start { budget }));
        self.inner.start(ctx, budget);
    }
    fn renew(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.commands.push((ctx.now, Command::Renew { budget }));
        self.inner.renew(ctx, budget);
    }
    fn stop(&mut self, ctx: &Context) {
        self.commands.push((ctx.now, Command::Stop));
        self.inner.stop(ctx);
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) {
        self.inner.on_event(ev, ctx);
    }
    fn wants_events(&self) -> bool {
        self.inner.wants_events()
    }
    fn skips_runs(&self, now: Nanos) -> bool {
        self.inner.skips_runs(now)
    }
    fn skip_run(&mut self, start: Option<Nanos>, end: Nanos) {
        self.inner.skip_run(start, end);
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.inner.next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) {
        self.inner.on_deadline(ctx);
    }
    fn finish(&mut self, end: Nanos) {
        self.inner.finish(end);
    }
    fn measures(&self) -> Vec<Measure> {
        self.inner.measures()
    }
}
