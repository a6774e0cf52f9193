//! The sans-IO engine: drives a detector, an actuator and an idle task
//! from foreground events and deadlines, and keeps the internal measures.
//!
//! The engine does no I/O and reads no clock. A driver pushes events in time
//! order ([`Engine::push`]) and tells it when time passes with no event
//! ([`Engine::advance`]); between the two it asks [`Engine::next_deadline`]
//! how long it may wait. The replay driver ([`replay`]) jumps straight from
//! event to event; the daemon sleeps until the next deadline or poll. The
//! same network therefore makes the same decisions in both.
//!
//! # Deadlines and the ordering rule
//!
//! Within one instant `t` the engine runs, in this order: completions at `t`;
//! deadlines due at `t` (those of the detector, then the actuator's, then the
//! task's, so a continuance renews a run before the actuator would stop it);
//! arrivals at `t`; then, when no arrival shares the instant, the start of
//! the idle period that a completion at `t` opened, and any deadline that
//! sets for `t`. A deadline set in the past fires at once. A component that
//! keeps asking for the same instant is stopped with
//! [`EngineError::StuckDeadline`] instead of hanging the engine.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::actuator::{Actuator, Command, PolicyActuator, StopPolicy};
use crate::component::{Context, Detector, Prediction};
use crate::event::{Event, EventKind, Timeline};
use crate::learned::{Learned, LearnedError};
use crate::measures::{InternalMeasures, MeasureAccumulator};
use crate::request::Op;
use crate::task::{IdleTask, Measure};
use crate::time::{Nanos, UnixTime};

/// How many times deadlines may fire at one instant before the engine
/// decides a component is stuck.
const MAX_FIRINGS_PER_INSTANT: u32 = 100_000;

/// What went wrong while driving the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// An event was pushed with a time before the engine's current time.
    ///
    /// No longer returned: a late event is taken at the engine's time and
    /// counted ([`Engine::lateness`]), because refusing it left the
    /// engine's count of outstanding requests wrong for ever.
    #[deprecated(
        note = "never returned: a late event is taken at the engine's time (Engine::lateness)"
    )]
    OutOfOrder {
        /// The event's time.
        event: Nanos,
        /// The engine's time.
        now: Nanos,
    },
    /// A completion came with no request outstanding.
    CompletionWithoutArrival {
        /// When.
        at: Nanos,
    },
    /// A completion named an arrival after it (its `pair`).
    CompletionBeforeArrival {
        /// The completion's time.
        at: Nanos,
        /// The arrival it named.
        arrived: Nanos,
    },
    /// A component kept asking to be woken at the same instant.
    StuckDeadline {
        /// Which part: `detector`, `actuator` or `task`.
        component: &'static str,
        /// The instant.
        at: Nanos,
    },
    /// [`Engine::complete`] named a request that is not outstanding: it
    /// was completed already, or this engine did not take it. Nothing
    /// changed.
    UnknownRequest {
        /// The id given.
        id: RequestId,
        /// The completion's time.
        at: Nanos,
    },
    /// Requests have been outstanding longer than the bound set with
    /// [`Engine::with_overdue_after`]: their completions were lost or
    /// never pushed, and until they come the engine sees the disk busy.
    /// A report, not a refusal: [`Engine::advance`] took the time first.
    /// Each request is reported once; [`Engine::overdue`] is the gauge.
    /// Complete a request that is gone with [`Engine::complete`].
    Overdue {
        /// The requests newly past the bound.
        overdue: Overdue,
        /// The engine's time.
        now: Nanos,
    },
    /// The engine was ended by [`Engine::finish`] and takes no more events
    /// or time: its task was stopped and told the run is over
    /// ([`IdleTask::finish`]), and its measures span ends there. Build a
    /// new engine (restoring what the old one learned, [`Engine::save_learned`],
    /// if it should carry on learning); for a report without ending the
    /// run, take [`Engine::measures`] and the task's own.
    Finished {
        /// The instant it was finished at.
        at: Nanos,
    },
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = |n: &Nanos| format!("{}ns ({})", n.0, n.approx());
        #[allow(deprecated)]
        match self {
            EngineError::OutOfOrder { event, now } => write!(
                f,
                "Engine::push: event at {} after the engine reached {}",
                t(event),
                t(now)
            ),
            EngineError::CompletionWithoutArrival { at } => write!(
                f,
                "Engine::push: completion at {} with no request outstanding: nothing changed (a second completion of one request?)",
                t(at)
            ),
            EngineError::CompletionBeforeArrival { at, arrived } => write!(
                f,
                "Engine::push: completion at {} names an arrival at {}, after it: nothing changed",
                t(at),
                t(arrived)
            ),
            EngineError::UnknownRequest { id, at } => write!(
                f,
                "Engine::complete({id}, at {}): {id} is not outstanding (completed already, or not taken by this engine): nothing changed",
                t(at)
            ),
            EngineError::Overdue { overdue, now } => write!(
                f,
                "Engine::advance(to {}): {} request(s) outstanding longer than the {} set with Engine::with_overdue_after, the oldest {} since {}: their completions were lost; complete them with Engine::complete(id, now)",
                t(now),
                overdue.count,
                overdue.bound.approx(),
                overdue.oldest,
                t(&overdue.arrived)
            ),
            EngineError::StuckDeadline { component, at } => write!(
                f,
                "the {component} asked for a deadline at {} ns over and over without progress",
                at.0
            ),
            EngineError::Finished { at } => write!(
                f,
                "the engine was finished at {} ns and decides nothing more: build a new one, or restore its learned state into one (for a report that does not end the run, take `measures()`)",
                at.0
            ),
        }
    }
}

impl std::error::Error for EngineError {}

/// A request the engine keeps by id: returned by [`Engine::arrive`],
/// completed by [`Engine::complete`], and named by
/// [`EngineError::Overdue`]. Ids count up from 0 per engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(u64);

impl RequestId {
    /// The number of the request (its order of arrival at this engine).
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "request #{}", self.0)
    }
}

/// Events that reached the engine after its time had passed theirs, and
/// were taken at the engine's time ([`Engine::lateness`]).
///
/// Any lateness is taken. A refused event is worse than a late one: a
/// refused completion left its request outstanding for ever (the disk
/// busy in the engine's eyes), and a refused arrival let a later
/// completion end another request. Taken late, an event costs at most
/// its lateness: the idle period a late completion opens begins when the
/// engine hears of it (a spin-down comes that much later, never
/// earlier); a late arrival stops a running task when the engine hears
/// of it (the task ran over it, as the measures say). Watch `max`: a
/// lateness near the network's time scale (B/32 for `auto`) means the
/// events should be merged by time before they are pushed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lateness {
    /// Arrivals taken late.
    pub arrivals: u64,
    /// Completions taken late.
    pub completions: u64,
    /// The largest lateness.
    pub max: Nanos,
    /// The sum of every lateness.
    pub total: Nanos,
}

/// Requests outstanding longer than the bound set with
/// [`Engine::with_overdue_after`] ([`Engine::overdue`],
/// [`EngineError::Overdue`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overdue {
    /// How many.
    pub count: u32,
    /// The oldest of them.
    pub oldest: RequestId,
    /// When the oldest arrived (engine time).
    pub arrived: Nanos,
    /// The bound.
    pub bound: Nanos,
}

/// A request the engine keeps by id.
#[derive(Clone, Copy, Debug)]
struct Pending {
    arrived: Nanos,
    op: Op,
    sector: u64,
    bytes: u32,
}

/// The requests the engine keeps by id (once [`Engine::arrive`] or
/// [`Engine::with_overdue_after`] asked for them; a replay keeps none).
#[derive(Clone, Debug, Default)]
struct Requests {
    next: u64,
    /// By id; ids count up with arrivals, which the engine takes in time
    /// order, so the first is the oldest.
    pending: BTreeMap<u64, Pending>,
    overdue_after: Option<Nanos>,
    /// Every pending request below this id has been reported overdue.
    reported_below: u64,
}

impl Requests {
    fn insert(&mut self, ev: &Event) -> RequestId {
        let id = self.next;
        self.next += 1;
        self.pending.insert(
            id,
            Pending {
                arrived: ev.time,
                op: ev.op,
                sector: ev.sector,
                bytes: ev.bytes,
            },
        );
        RequestId(id)
    }

    /// Removes the request a pushed completion ends: the one that
    /// arrived at its `pair`, else the oldest.
    fn remove_for(&mut self, ev: &Event) {
        let id = self
            .pending
            .iter()
            .find(|(_, p)| p.arrived == ev.pair)
            .or_else(|| self.pending.iter().next())
            .map(|(&id, _)| id);
        if let Some(id) = id {
            self.pending.remove(&id);
        }
    }

    /// When the next request not yet reported becomes overdue.
    fn next_overdue(&self) -> Option<Nanos> {
        let bound = self.overdue_after?;
        self.pending
            .range(self.reported_below..)
            .next()
            .map(|(_, p)| p.arrived + bound)
    }

    /// The requests overdue at `now` among `ids` (the oldest first).
    fn overdue<'a>(
        &self,
        now: Nanos,
        ids: impl Iterator<Item = (&'a u64, &'a Pending)>,
    ) -> Option<Overdue> {
        let bound = self.overdue_after?;
        let mut due = ids.take_while(|(_, p)| now - p.arrived >= bound);
        let (&oldest, first) = due.next()?;
        Some(Overdue {
            count: 1 + due.count() as u32,
            oldest: RequestId(oldest),
            arrived: first.arrived,
            bound,
        })
    }
}

/// One entry of the engine's action log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LogEntry {
    /// The network's sink emitted a prediction.
    Prediction {
        /// When.
        at: Nanos,
        /// What.
        prediction: Prediction,
    },
    /// The actuator gave the task a command.
    Command {
        /// When.
        at: Nanos,
        /// What.
        command: Command,
    },
}

/// The result of a run: internal measures and the task's external ones.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RunReport {
    /// SPEC §4.1.
    pub internal: InternalMeasures,
    /// The task's measures (SPEC §4.2–4.3), in its own order.
    pub task: Vec<Measure>,
}

impl RunReport {
    /// Every measure as `(name, value)`, internal first.
    pub fn pairs(&self) -> Vec<Measure> {
        let mut v: Vec<Measure> = self.internal.pairs().to_vec();
        v.extend(self.task.iter().copied());
        v
    }

    /// The task's measure `name` (`spinups`, `energy_j`, …), if it reports
    /// one.
    pub fn task_measure(&self, name: &str) -> Option<f64> {
        self.task.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }
}

/// The engine: one detector, one actuator, one idle task.
///
/// Generic so that a network composed in code pays no dynamic dispatch; the
/// defaults are the boxed trait objects used when everything is built at run
/// time.
#[derive(Debug)]
pub struct Engine<D = Box<dyn Detector>, A = Box<dyn Actuator>, T = Box<dyn IdleTask>> {
    detector: D,
    actuator: A,
    task: T,
    now: Nanos,
    outstanding: u32,
    pending_idle: Option<Nanos>,
    idle_since: Option<Nanos>,
    lookahead: Option<Nanos>,
    // The detector sat out the current idle period (it is shorter than the
    // detector's `quiet_below`): neither its begin nor its end is told.
    sat_out: bool,
    // Whether the batch paths (`quiet_below`, `fast_forward`) are taken.
    shortcuts: bool,
    // Wall clock at time 0 (Unix nanoseconds), if known.
    clock: Option<Nanos>,
    acc: MeasureAccumulator,
    buf: Vec<Prediction>,
    log: Option<Vec<LogEntry>>,
    // Each component's next deadline, refreshed after every call into it,
    // so the hot path asks nobody (the task's may change behind
    // `task_mut`, which marks it stale).
    det_deadline: Option<Nanos>,
    act_deadline: Option<Nanos>,
    task_deadline: Option<Nanos>,
    task_stale: bool,
    // The earliest of the above and the pending idle start: an event
    // before it needs no trip through `run`.
    due: Nanos,
    // Which components need every event (asked once).
    det_events: bool,
    act_events: bool,
    task_events: bool,
    // When `finish` ended the run: no event or time is taken after it.
    finished: Option<Nanos>,
    // Events taken after the engine's time had passed theirs.
    lateness: Lateness,
    // Requests kept by id (`arrive`, `with_overdue_after`).
    requests: Option<Box<Requests>>,
}

impl<D: Detector, T: IdleTask> Engine<D, PolicyActuator, T> {
    /// An engine whose actuator follows `policy`.
    pub fn with_policy(detector: D, policy: StopPolicy, task: T) -> Self {
        Engine::new(detector, PolicyActuator::new(policy), task)
    }
}

impl<D: Detector, A: Actuator, T: IdleTask> Engine<D, A, T> {
    /// An engine at time zero with nothing outstanding.
    pub fn new(detector: D, actuator: A, task: T) -> Self {
        Engine {
            det_deadline: detector.next_deadline(),
            act_deadline: actuator.next_deadline(),
            task_deadline: task.next_deadline(),
            task_stale: false,
            due: Nanos::ZERO,
            det_events: detector.wants_events(),
            act_events: actuator.wants_events_when_stopped(),
            task_events: task.wants_events(),
            detector,
            actuator,
            task,
            now: Nanos::ZERO,
            outstanding: 0,
            pending_idle: None,
            idle_since: None,
            lookahead: None,
            sat_out: false,
            shortcuts: true,
            clock: None,
            acc: MeasureAccumulator::new(),
            buf: Vec::with_capacity(4),
            log: None,
            finished: None,
            lateness: Lateness::default(),
            requests: None,
        }
    }

    /// Keeps a log of every prediction and command (for tests and
    /// `--log`); off by default because a sweep does not need it.
    pub fn with_log(mut self) -> Self {
        self.log = Some(Vec::new());
        self
    }

    /// Turns the batch paths on (the default) or off. With them on, an
    /// idle period shorter than the detector's [`Detector::quiet_below`]
    /// (known from the lookahead) is not announced to the detector, and
    /// [`replay`] skips foreground events nobody looks at. Both are exact:
    /// turning them off changes no decision and no measure, only the speed
    /// (tests compare the two).
    pub fn with_shortcuts(mut self, on: bool) -> Self {
        self.shortcuts = on;
        self
    }

    /// Tells the components the wall clock: time 0 of this engine is the
    /// instant `at_zero` (see [`Context::clock`]). The daemon sets it; a
    /// replay can for traces with absolute times.
    pub fn with_clock(mut self, at_zero: UnixTime) -> Self {
        self.clock = Some(at_zero.elapsed_since_epoch());
        self
    }

    /// The wall-clock instant of engine time `at`, when the engine was
    /// given the wall clock ([`Engine::with_clock`]).
    pub fn wall_time(&self, at: Nanos) -> Option<UnixTime> {
        self.clock.map(|c| UnixTime::since_epoch(c) + at)
    }

    /// Reports requests outstanding for `bound` or longer: their
    /// completions were lost, and the engine would otherwise see the disk
    /// busy for ever. [`Engine::next_deadline`] then includes the instant
    /// the oldest request not yet reported becomes overdue, and
    /// [`Engine::advance`] to it or later returns
    /// [`EngineError::Overdue`] (once per request, after taking the
    /// time); [`Engine::overdue`] is the gauge. Pick a bound well above
    /// the longest a request may take (a spin-up, a deep queue): 10
    /// minutes for a spinning disk. The engine keeps every request by
    /// id from here on, pushed ones included: set it before the first
    /// event.
    pub fn with_overdue_after(mut self, bound: Nanos) -> Self {
        self.requests
            .get_or_insert_with(Default::default)
            .overdue_after = Some(bound);
        self
    }

    /// The current time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// The events taken late so far ([`Lateness`]): their time had
    /// passed when they were pushed, and the engine took them at its own.
    pub fn lateness(&self) -> Lateness {
        self.lateness
    }

    /// The requests outstanding longer than the bound of
    /// [`Engine::with_overdue_after`] at the engine's time, reported or
    /// not; `None` when there are none or no bound was set.
    pub fn overdue(&self) -> Option<Overdue> {
        let r = self.requests.as_deref()?;
        r.overdue(self.now, r.pending.iter())
    }

    /// Takes the arrival of a request at `at`, as [`Engine::push`] of
    /// [`Event::arrival_at`] does, and returns its id, which completes it
    /// ([`Engine::complete`]): no completion can then fail to find its
    /// request. An `at` before the engine's time is taken at the engine's
    /// time and counted ([`Engine::lateness`]). Refused only after
    /// [`Engine::finish`].
    pub fn arrive(
        &mut self,
        at: Nanos,
        op: Op,
        sector: u64,
        bytes: u32,
    ) -> Result<RequestId, EngineError> {
        self.requests.get_or_insert_with(Default::default);
        let id = self.take(&Event::arrival_at(at, op, sector, bytes), None, true)?;
        Ok(id.expect("an arrival kept by id"))
    }

    /// Takes the completion at `at` of the request [`Engine::arrive`]
    /// returned `id` for. An `at` before the engine's time (or before
    /// the arrival, as the engine took it) is taken at the engine's time
    /// and counted ([`Engine::lateness`]). Refused, changing nothing,
    /// for an id not outstanding ([`EngineError::UnknownRequest`]: a
    /// second completion) and after [`Engine::finish`].
    pub fn complete(&mut self, id: RequestId, at: Nanos) -> Result<(), EngineError> {
        if let Some(at) = self.finished {
            return Err(EngineError::Finished { at });
        }
        let Some(p) = self.requests.as_mut().and_then(|r| r.pending.remove(&id.0)) else {
            return Err(EngineError::UnknownRequest { id, at });
        };
        // The arrival as the engine took it is at most its time, so an
        // `at` before it is late too, and taken at the engine's time.
        let ev = Event::completion_at(at, p.arrived, p.op, p.sector, p.bytes);
        let taken = self.take(&ev, None, false);
        if taken.is_err() {
            // Refused: the request stays outstanding, as before.
            if let Some(r) = self.requests.as_mut() {
                r.pending.insert(id.0, p);
            }
        }
        taken.map(|_| ())
    }

    /// What the detector's components have learned, at the engine's time
    /// ([`crate::learned`]).
    pub fn save_learned(&self) -> Vec<Option<Learned>> {
        self.save_learned_at(self.now)
    }

    /// [`Engine::save_learned`] as of `at`, at or after the engine's time
    /// (never before it), when nothing reached the engine in between: a
    /// daemon that stops between two polls saves what it knew then, with
    /// its times as old as they are at the stop.
    pub fn save_learned_at(&self, at: Nanos) -> Vec<Option<Learned>> {
        let mut out = Vec::new();
        self.detector.save_parts(at.max(self.now), &mut out);
        out
    }

    /// Restores what [`Engine::save_learned`] returned (from an engine
    /// built from the same spec) into this engine's detector, at its
    /// time. An error when a part does not fit or the count differs: the
    /// detector may then be half restored, and the caller builds a fresh
    /// one.
    pub fn restore_learned(&mut self, parts: &[Option<Learned>]) -> Result<(), LearnedError> {
        let mut rest = parts;
        self.detector.restore_parts(&mut rest, self.now)?;
        if !rest.is_empty() {
            return Err(LearnedError::new(format!(
                "the state has {} parts, the network {}",
                parts.len(),
                parts.len() - rest.len()
            )));
        }
        self.det_deadline = self.detector.next_deadline();
        self.refresh_due();
        Ok(())
    }

    /// Tells the engine the device is idle as of its current time, as if a
    /// request had just completed: an idle period begins at
    /// [`Engine::now`] (at the next [`Engine::advance`], like the one a
    /// completion opens). Returns whether it began one: `false` with
    /// requests outstanding, an idle period already begun or pending, or
    /// an engine [finished](Engine::finish).
    ///
    /// A new engine has seen no request, so it is neither busy nor idle,
    /// and nothing is decided until the first completion. A service that
    /// starts (or restarts, after [`Engine::restore_learned`]) while its
    /// disk is quiet calls this once, before its first event: otherwise a
    /// disk that stays quiet is never spun down, and a learning network
    /// misses the idle period that spans the restart. That period is
    /// often the longest of the day (a restart at night), and without it
    /// `auto`'s statistics of gap lengths drift from those of a network
    /// that never restarted (docs/embedding.md, "Starting and
    /// restarting"). The daemon does the same with its first poll, a
    /// baseline request that ends the moment it starts watching.
    pub fn assume_idle(&mut self) -> bool {
        if self.finished.is_some()
            || self.outstanding > 0
            || self.idle_since.is_some()
            || self.pending_idle.is_some()
        {
            return false;
        }
        self.pending_idle = Some(self.now);
        self.lookahead = None;
        self.refresh_due();
        true
    }

    /// The detector.
    pub fn detector(&self) -> &D {
        &self.detector
    }
    /// The idle task.
    pub fn task(&self) -> &T {
        &self.task
    }
    /// The idle task, mutably (live tasks report errors through it, an
    /// embedder's task takes its own work through it).
    pub fn task_mut(&mut self) -> &mut T {
        self.task_stale = true;
        &mut self.task
    }
    /// The action log (empty unless [`Engine::with_log`]).
    pub fn log(&self) -> &[LogEntry] {
        self.log.as_deref().unwrap_or(&[])
    }
    /// When [`Engine::finish`] ended the run, if it did: the engine then
    /// takes no more events or time ([`EngineError::Finished`]).
    pub fn finished_at(&self) -> Option<Nanos> {
        self.finished
    }
    /// Whether the idle task is running.
    pub fn task_running(&self) -> bool {
        self.acc.is_running()
    }
    /// Requests outstanding.
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }
    /// The internal measures so far: those of the requests pushed, over
    /// `[first arrival, last completion)` as the definition clips them
    /// ([`crate::measures::internal_measures`]). Time declared since the
    /// last completion counts once a request arrives (it was then inside
    /// an idle period), never if the run finishes first; time declared
    /// before the first request (after [`Engine::assume_idle`]) never
    /// does. So efficiency stays in `[0, 1]` however long the task runs
    /// past the last request.
    pub fn measures(&self) -> InternalMeasures {
        self.acc.measures()
    }

    /// When the engine next has something to do with no new event: the
    /// earliest component deadline or pending idle-period start. A daemon
    /// sleeps until then (or its next poll) and calls [`Engine::advance`].
    /// `None` when nothing is due, and after [`Engine::finish`].
    pub fn next_deadline(&self) -> Option<Nanos> {
        if self.finished.is_some() {
            return None;
        }
        let task = if self.task_stale {
            self.task.next_deadline()
        } else {
            self.task_deadline
        };
        let overdue = self.requests.as_deref().and_then(Requests::next_overdue);
        [
            self.pending_idle,
            self.det_deadline,
            self.act_deadline,
            task,
            overdue,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn ctx(&self) -> Context {
        Context {
            now: self.now,
            outstanding: self.outstanding,
            idle_since: self.idle_since,
            lookahead: self.lookahead,
            clock: self.clock,
        }
    }

    /// Pushes a foreground event. An event before the engine's time is
    /// taken at the engine's time and counted ([`Engine::lateness`]; why
    /// any lateness is taken: [`Lateness`]). A completion with nothing
    /// outstanding ([`EngineError::CompletionWithoutArrival`]) or naming
    /// an arrival after it ([`EngineError::CompletionBeforeArrival`]) is
    /// refused and changes nothing, the engine's time included; so is any
    /// event after [`Engine::finish`] ([`EngineError::Finished`]). A
    /// live embedder whose completions may not match their arrivals uses
    /// [`Engine::arrive`] and [`Engine::complete`] instead.
    pub fn push(&mut self, ev: &Event) -> Result<(), EngineError> {
        self.push_with_lookahead(ev, None)
    }

    fn note_late(&mut self, kind: EventKind, by: Nanos) {
        let l = &mut self.lateness;
        match kind {
            EventKind::Arrival => l.arrivals += 1,
            EventKind::Completion => l.completions += 1,
        }
        l.max = l.max.max(by);
        l.total += by;
    }

    /// Pushes an event, telling offline components when the idle period it
    /// opens (if it is a completion that empties the device) will end.
    pub fn push_with_lookahead(
        &mut self,
        ev: &Event,
        lookahead: Option<Nanos>,
    ) -> Result<(), EngineError> {
        self.take(ev, lookahead, true).map(|_| ())
    }

    /// Takes an event; `track`: keep it in (or remove it from) the
    /// requests kept by id, if any. Returns the id of an arrival kept.
    fn take(
        &mut self,
        ev: &Event,
        lookahead: Option<Nanos>,
        track: bool,
    ) -> Result<Option<RequestId>, EngineError> {
        if let Some(at) = self.finished {
            return Err(EngineError::Finished { at });
        }
        if ev.kind == EventKind::Completion {
            // Refused before anything moves, the engine's time included.
            if self.outstanding == 0 {
                return Err(EngineError::CompletionWithoutArrival { at: ev.time });
            }
            if ev.pair > ev.time.max(self.now) {
                return Err(EngineError::CompletionBeforeArrival {
                    at: ev.time,
                    arrived: ev.pair,
                });
            }
        }
        let late;
        let ev = if ev.time < self.now {
            self.note_late(ev.kind, self.now - ev.time);
            late = Event {
                time: self.now,
                ..*ev
            };
            &late
        } else {
            ev
        };
        let mut id = None;
        if let (true, Some(r)) = (track, self.requests.as_deref_mut()) {
            match ev.kind {
                EventKind::Arrival => id = Some(r.insert(ev)),
                EventKind::Completion => r.remove_for(ev),
            }
        }
        if self.task_stale || self.due <= ev.time {
            self.run(ev.time, ev.kind == EventKind::Arrival, false)?;
        }
        self.now = ev.time;
        self.acc.advance(ev.time);
        match ev.kind {
            EventKind::Arrival => {
                let ended = self.idle_since.take();
                self.pending_idle = None;
                self.lookahead = None;
                self.outstanding += 1;
                let ctx = self.ctx();
                self.actuator_event(ev, &ctx);
                self.acc.on_event(ev);
                self.task_event(ev, &ctx);
                if let Some(began) = ended {
                    if !std::mem::take(&mut self.sat_out) {
                        self.detector.on_idle_end(&ctx, began);
                        self.det_deadline = self.detector.next_deadline();
                    }
                }
                self.detector_event(ev, &ctx);
            }
            EventKind::Completion => {
                // Checked above: a request is outstanding.
                self.outstanding -= 1;
                self.acc.on_event(ev);
                if self.outstanding == 0 {
                    self.pending_idle = Some(ev.time);
                    self.lookahead = lookahead;
                }
                let ctx = self.ctx();
                self.actuator_event(ev, &ctx);
                self.task_event(ev, &ctx);
                self.detector_event(ev, &ctx);
            }
        }
        self.refresh_due();
        Ok(id)
    }

    /// The batch path of [`replay`]: `events[..i]` have been pushed.
    /// While the foreground events can change nothing but counts (no
    /// component looks at them in the current state) and nothing is due,
    /// jumps to the end of the current busy run, and then on over every
    /// idle period the detector sits out (shorter than its
    /// [`Detector::quiet_below`]) together with the busy run after it.
    /// Returns the next event to push. Leaves the engine exactly as pushing
    /// those events one by one would: they only move counts that return to
    /// where they started (every request of a run completes in it), the
    /// measures (idle, overflow and violations, summed per run) and the
    /// clock.
    fn fast_forward(&mut self, events: &[Event], ends: &[u32], k: &mut usize, i: usize) -> usize {
        let Some(last) = i.checked_sub(1) else {
            return i;
        };
        let running = self.acc.is_running();
        let act_quiet = if running {
            self.actuator.ignores_events()
        } else {
            !self.act_events
        };
        // A task that looks at events may still take whole runs.
        let task_runs = self.task_events;
        if !act_quiet
            || self.det_events
            || self.task_stale
            || (task_runs && !self.task.skips_runs(self.now))
        {
            return i;
        }
        // Deadlines only; the pending idle start is what gets skipped.
        let t = |d: Option<Nanos>| d.map_or(u64::MAX, |d| d.0);
        let limit = Nanos(
            t(self.det_deadline)
                .min(t(self.act_deadline))
                .min(t(self.task_deadline)),
        );
        while (ends[*k] as usize) < last {
            *k += 1;
        }
        let (mut actual, mut overflow, mut violations) = (Nanos::ZERO, Nanos::ZERO, 0u64);
        // Requests completed while the task runs.
        let mut settled = 0usize;
        let mut j = last;
        if self.outstanding > 0 {
            // Only right after the arrival that opened the run: then every
            // request of events[j..=end] arrives and completes in it.
            if self.outstanding != 1 || events[j].kind != EventKind::Arrival {
                return i;
            }
            let end = ends[*k] as usize;
            if events[end].time >= limit {
                return i;
            }
            if task_runs {
                self.task.skip_run(None, events[end].time);
            }
            if running {
                // events[j..=end] hold both events of each of their
                // requests; all but the first arrive while the task runs.
                let requests = (end + 1 - j) / 2;
                violations += (requests - 1) as u64;
                settled += requests;
                overflow += events[end].time - events[j].time;
            }
            j = end;
        } else if ends[*k] as usize != j {
            // A completion at the instant of the next arrival: no idle
            // period begins here.
            return i;
        }
        let quiet_below = self.detector.quiet_below();
        if quiet_below > Nanos::ZERO {
            while let Some(next) = events.get(j + 1) {
                let gap = next.time - events[j].time;
                let end = ends[*k + 1] as usize;
                if gap >= quiet_below || events[end].time >= limit {
                    break;
                }
                actual += gap;
                if task_runs {
                    self.task.skip_run(Some(next.time), events[end].time);
                }
                if running {
                    violations += ((end - j) / 2) as u64;
                    settled += (end - j) / 2;
                    overflow += events[end].time - next.time;
                }
                j = end;
                *k += 1;
            }
        }
        if j == last {
            return i;
        }
        let end = events[j].time;
        debug_assert!(self.idle_since.is_none() && end >= self.now);
        self.now = end;
        self.outstanding = 0;
        self.pending_idle = Some(end);
        self.lookahead = events.get(j + 1).map(|e| e.time);
        let settled = u32::try_from(settled).unwrap_or(u32::MAX);
        self.acc
            .fast_forward(end, actual, overflow, violations, settled);
        if task_runs {
            self.task_deadline = self.task.next_deadline();
        }
        self.refresh_due();
        j + 1
    }

    /// Recomputes the earliest instant anything is due.
    fn refresh_due(&mut self) {
        // Hot: once per event, so plain compares rather than an iterator.
        let t = |d: Option<Nanos>| d.map_or(u64::MAX, |d| d.0);
        self.due = Nanos(
            t(self.pending_idle)
                .min(t(self.det_deadline))
                .min(t(self.act_deadline))
                .min(t(self.task_deadline)),
        );
    }

    fn actuator_event(&mut self, ev: &Event, ctx: &Context) {
        if self.act_events || self.acc.is_running() {
            let cmd = self.actuator.on_event(ev, ctx);
            self.act_deadline = self.actuator.next_deadline();
            if let Some(cmd) = cmd {
                self.apply(cmd);
            }
        }
    }

    fn task_event(&mut self, ev: &Event, ctx: &Context) {
        if self.task_events {
            self.task.on_event(ev, ctx);
            self.task_deadline = self.task.next_deadline();
        }
    }

    fn detector_event(&mut self, ev: &Event, ctx: &Context) {
        if self.det_events {
            let mut buf = std::mem::take(&mut self.buf);
            self.detector.on_event(ev, ctx, &mut buf);
            self.det_deadline = self.detector.next_deadline();
            self.dispatch(&mut buf);
            self.buf = buf;
        }
    }

    /// Time has reached `now` and every event up to `now` has been pushed:
    /// runs whatever is due. After [`Engine::finish`] an error
    /// ([`EngineError::Finished`]) that changes nothing.
    ///
    /// With [`Engine::with_overdue_after`], requests that became overdue
    /// by `now` are then reported, once each, as [`EngineError::Overdue`]:
    /// the time was taken all the same.
    pub fn advance(&mut self, now: Nanos) -> Result<(), EngineError> {
        self.advance_only(now)?;
        let Some(r) = self.requests.as_deref_mut() else {
            return Ok(());
        };
        let now = self.now;
        match r.overdue(now, r.pending.range(r.reported_below..)) {
            Some(overdue) => {
                r.reported_below = r
                    .pending
                    .range(overdue.oldest.0..)
                    .nth(overdue.count as usize - 1)
                    .map_or(r.next, |(&id, _)| id + 1);
                Err(EngineError::Overdue { overdue, now })
            }
            None => Ok(()),
        }
    }

    /// [`Engine::advance`] without the report of overdue requests.
    fn advance_only(&mut self, now: Nanos) -> Result<(), EngineError> {
        if let Some(at) = self.finished {
            return Err(EngineError::Finished { at });
        }
        self.run(now, true, true)?;
        if now > self.now {
            self.now = now;
            self.acc.advance(now);
        }
        Ok(())
    }

    /// Ends the run at `end`: runs what is due, stops a running task (the
    /// measures span ends here), tells the task the run is over
    /// ([`IdleTask::finish`]) and returns the report.
    ///
    /// The end is final. Every later [`Engine::push`], [`Engine::advance`]
    /// or `finish` is refused with [`EngineError::Finished`] and changes
    /// nothing, and [`Engine::next_deadline`] is `None`. The task was
    /// stopped behind the actuator's back and has closed its own
    /// accounts, so an engine that went on would either decide nothing
    /// more (its actuator still thinks the task runs) or decide on a task
    /// that is over: both are silent failures, an error is not. A service
    /// that wants a report and keeps running takes [`Engine::measures`]
    /// (and its task's own) instead; one that ends a run and starts
    /// another builds a new engine, with [`Engine::save_learned`] and
    /// [`Engine::restore_learned`] to carry what the network learned.
    /// What the engine holds stays readable after the end (the log, the
    /// task, the detector, [`Engine::save_learned`]).
    pub fn finish(&mut self, end: Nanos) -> Result<RunReport, EngineError> {
        self.advance_only(end)?;
        if self.acc.is_running() {
            self.apply(Command::Stop);
        }
        self.finished = Some(self.now);
        self.refresh_due();
        self.task.finish(end);
        Ok(RunReport {
            internal: self.acc.measures(),
            task: self.task.measures(),
        })
    }

    fn run(
        &mut self,
        limit: Nanos,
        deadlines_inclusive: bool,
        idle_inclusive: bool,
    ) -> Result<(), EngineError> {
        let due = |t: Nanos, inclusive: bool| t < limit || (inclusive && t == limit);
        let mut instant = self.now;
        let mut firings = 0u32;
        if self.task_stale {
            self.task_deadline = self.task.next_deadline();
            self.task_stale = false;
        }
        loop {
            // Earliest first; at one instant deadlines before the idle start,
            // and detector, actuator, task in that order (a strict `<` keeps
            // the first of equal instants). Plain compares: this runs at
            // every idle period.
            let mut best: Option<(Nanos, u8)> = None;
            let candidates = [
                (self.det_deadline, deadlines_inclusive),
                (self.act_deadline, deadlines_inclusive),
                (self.task_deadline, deadlines_inclusive),
                (self.pending_idle, idle_inclusive),
            ];
            for (rank, (t, inclusive)) in candidates.into_iter().enumerate() {
                if let Some(t) = t.filter(|&t| due(t, inclusive)) {
                    let t = t.max(self.now);
                    if best.is_none_or(|(bt, _)| t < bt) {
                        best = Some((t, rank as u8));
                    }
                }
            }
            let Some((t, rank)) = best else {
                self.refresh_due();
                return Ok(());
            };
            if t == instant {
                firings += 1;
                if firings > MAX_FIRINGS_PER_INSTANT {
                    let component = ["detector", "actuator", "task", "engine"][rank as usize];
                    return Err(EngineError::StuckDeadline { component, at: t });
                }
            } else {
                instant = t;
                firings = 0;
            }
            self.now = t;
            self.acc.advance(t);
            match rank {
                0 => {
                    let ctx = self.ctx();
                    let mut buf = std::mem::take(&mut self.buf);
                    self.detector.on_deadline(&ctx, &mut buf);
                    self.det_deadline = self.detector.next_deadline();
                    self.dispatch(&mut buf);
                    self.buf = buf;
                }
                1 => {
                    let ctx = self.ctx();
                    let cmd = self.actuator.on_deadline(&ctx);
                    self.act_deadline = self.actuator.next_deadline();
                    if let Some(cmd) = cmd {
                        self.apply(cmd);
                    }
                }
                2 => {
                    let ctx = self.ctx();
                    self.task.on_deadline(&ctx);
                    self.task_deadline = self.task.next_deadline();
                }
                _ => {
                    self.pending_idle = None;
                    self.idle_since = Some(t);
                    // An idle period the detector would sit out is not
                    // announced (nor its end): same decisions, less work.
                    if self.shortcuts
                        && self
                            .lookahead
                            .is_some_and(|end| end - t < self.detector.quiet_below())
                    {
                        self.sat_out = true;
                        continue;
                    }
                    let ctx = self.ctx();
                    let mut buf = std::mem::take(&mut self.buf);
                    self.detector.on_idle_begin(&ctx, &mut buf);
                    self.det_deadline = self.detector.next_deadline();
                    self.dispatch(&mut buf);
                    self.buf = buf;
                }
            }
        }
    }

    fn dispatch(&mut self, buf: &mut Vec<Prediction>) {
        for p in buf.drain(..) {
            if let Some(log) = &mut self.log {
                log.push(LogEntry::Prediction {
                    at: self.now,
                    prediction: p,
                });
            }
            let ctx = self.ctx();
            let cmd = self.actuator.on_prediction(&p, &ctx);
            self.act_deadline = self.actuator.next_deadline();
            if let Some(cmd) = cmd {
                self.apply(cmd);
            }
        }
    }

    fn apply(&mut self, cmd: Command) {
        let ctx = self.ctx();
        let applied = match cmd {
            Command::Start { budget } if !self.acc.is_running() => {
                self.acc.start(self.now);
                self.task.start(&ctx, budget);
                true
            }
            Command::Renew { budget } if self.acc.is_running() => {
                self.task.renew(&ctx, budget);
                true
            }
            Command::Stop if self.acc.is_running() => {
                self.acc.stop(self.now);
                self.task.stop(&ctx);
                true
            }
            _ => false,
        };
        if applied {
            self.task_deadline = self.task.next_deadline();
            if let Some(log) = &mut self.log {
                log.push(LogEntry::Command {
                    at: self.now,
                    command: cmd,
                });
            }
        }
    }
}

/// The intervals an engine's log ([`Engine::with_log`]) declared idle:
/// from each [`Command::Start`] to the [`Command::Stop`] after it, sorted
/// and disjoint, for [`internal_measures`](crate::measures::internal_measures)
/// (SPEC §4.1, by the definition); and the start of a run the log leaves
/// open (an engine not yet finished: [`Engine::finish`] stops the task).
/// Renewals extend the run they belong to.
pub fn declared_intervals(log: &[LogEntry]) -> (Vec<(Nanos, Nanos)>, Option<Nanos>) {
    let mut out = Vec::new();
    let mut open = None;
    for e in log {
        if let LogEntry::Command { at, command } = e {
            match command {
                Command::Start { .. } => open = open.or(Some(*at)),
                Command::Stop => out.extend(open.take().map(|s| (s, *at))),
                Command::Renew { .. } => {}
            }
        }
    }
    (out, open)
}

/// Replays a timeline through an engine and finishes it at the last
/// completion. The engine gets lookahead (the end of each idle period) for
/// offline components.
///
/// Makes exactly the decisions of pushing every event with
/// [`Engine::push_with_lookahead`], but faster: while no component looks
/// at foreground events and nothing is due, the rest of a busy run is
/// skipped in one step, and so is every idle period shorter than the
/// detector's [`Detector::quiet_below`] (a timer's timeout) with the run
/// after it. A timer network then pays for the idle periods long enough to
/// matter rather than for every event.
pub fn replay<D: Detector, A: Actuator, T: IdleTask>(
    timeline: &Timeline,
    engine: &mut Engine<D, A, T>,
) -> Result<RunReport, EngineError> {
    if engine.clock.is_none() {
        engine.clock = timeline.clock();
    }
    let events = timeline.events();
    let run_ends = timeline
        .run_ends()
        .filter(|_| engine.outstanding == 0 && engine.shortcuts && engine.requests.is_none());
    let mut k = 0;
    let mut i = 0;
    while let Some(ev) = events.get(i) {
        let lookahead = if timeline.idle_after(i) {
            events.get(i + 1).map(|e| e.time)
        } else {
            None
        };
        engine.push_with_lookahead(ev, lookahead)?;
        i += 1;
        if let Some(ends) = run_ends {
            // Worth a look right after a run opens or ends.
            if engine.outstanding == 0 || (engine.outstanding == 1 && ev.kind == EventKind::Arrival)
            {
                i = engine.fast_forward(events, ends, &mut k, i);
            }
        }
    }
    engine.finish(timeline.end().unwrap_or(Nanos::ZERO))
}

/// Networks and engines move between threads (a sweep runs them on a
/// thread pool; a daemon may hand one to a blocking task).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Engine>();
    send::<crate::network::Network>();
    send::<Engine<crate::network::Network, PolicyActuator, crate::task::NoTask>>();
};
