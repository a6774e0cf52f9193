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
}

impl LiveTask {
    /// A task reporting `name` (`standby`, `flush`, `command`).
    pub fn new(name: &'static str) -> Self {
        LiveTask {
            name,
            intents: Vec::with_capacity(2),
        }
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
        self.intents.push(Intent::Start {
            at: ctx.now,
            budget,
        });
    }
    fn stop(&mut self, ctx: &Context) {
        self.intents.push(Intent::Stop { at: ctx.now });
    }
}
