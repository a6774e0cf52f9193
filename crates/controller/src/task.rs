//! The live idle task: what the sans-IO engine decides, recorded as intents.
//!
//! [`IdleTask`] is synchronous and clock-free, while spinning a disk down or
//! pausing a process is I/O that may take seconds. So the engine drives a
//! [`LiveTask`] that only records [`Intent`]s; after every poll the daemon
//! drains them and hands them to the disk's actor task, which does the I/O
//! on tokio (child processes, the blocking pool for ioctls and `syncfs`) and
//! reports back. The engine's decisions are therefore exactly those of a
//! replay of the same events, and a slow drive never stalls the poll loop.

use lull_core::component::Context;
use lull_core::task::IdleTask;
use lull_core::time::Nanos;

/// What the engine asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    /// Start (or resume) the task; `budget` is the predicted idle time
    /// (`None`: until busy).
    Start {
        /// When the engine decided.
        at: Nanos,
        /// Predicted idle time left.
        budget: Option<Nanos>,
        /// A standby the wear budget refused, tried again once a token is
        /// there ([`LiveTask::retry_at`]), not a decision of the network.
        retry: bool,
    },
    /// Stop (or pause) the task.
    Stop {
        /// When the engine decided.
        at: Nanos,
    },
}

/// An [`IdleTask`] that records intents for the daemon to execute.
#[derive(Debug)]
pub struct LiveTask {
    name: &'static str,
    intents: Vec<Intent>,
    /// A refused start to try again: when, and the end of the idle time
    /// it predicted.
    retry: Option<(Nanos, Option<Nanos>)>,
}

impl LiveTask {
    /// A task reporting `name` (`standby`, `flush`, `command`).
    pub fn new(name: &'static str) -> Self {
        LiveTask {
            name,
            intents: Vec::with_capacity(2),
            retry: None,
        }
    }

    /// Tries the start decided at `at` again at `when` (a standby the wear
    /// budget refused, due when a token is there), with what is left then
    /// of the idle time predicted at `at` (`budget`), unless the idle
    /// period ends first: the engine stops the task at its end, which
    /// drops the retry. A replay of the daemon's log retries alike
    /// (`lull_tasks::Spindown`, at the same instant: the engine orders
    /// both tasks' deadlines with the events).
    pub fn retry_at(&mut self, when: Nanos, at: Nanos, budget: Option<Nanos>) {
        self.retry = Some((when, budget.map(|b| at + b)));
    }
    /// Takes the intents recorded since the last call, in order.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Intent> {
        self.intents.drain(..)
    }

    /// Whether an intent waits to be drained.
    pub fn pending(&self) -> bool {
        !self.intents.is_empty()
    }
}

impl IdleTask for LiveTask {
    fn name(&self) -> &'static str {
        self.name
    }
    fn start(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.retry = None;
        self.intents.push(Intent::Start {
            at: ctx.now,
            budget,
            retry: false,
        });
    }
    fn stop(&mut self, ctx: &Context) {
        self.retry = None;
        self.intents.push(Intent::Stop { at: ctx.now });
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.retry.map(|(r, _)| r)
    }
    fn on_deadline(&mut self, ctx: &Context) {
        if let Some((r, end)) = self.retry.filter(|&(r, _)| ctx.now >= r) {
            let _ = r;
            self.retry = None;
            self.intents.push(Intent::Start {
                at: ctx.now,
                budget: end.map(|e| e.saturating_sub(ctx.now)),
                retry: true,
            });
        }
    }
}
