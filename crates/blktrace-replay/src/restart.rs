//! What a restart costs a learning network: a replay that rebuilds the
//! network at fixed times, as a daemon restarted every day (or at every
//! boot) would, with or without the state it learned
//! ([`lull_core::learned`]).
//!
//! A restart happens at the first arrival that ends an idle period at or
//! after each multiple of the interval, so it never falls inside an idle
//! period (where a daemon that stopped would have missed the period's end
//! anyway). The old network sees that arrival; what it learned is saved
//! then; the new network is built from the same spec, sees the arrival as
//! a fresh one would, and, with `keep`, gets the saved state. The task and
//! its measures go on undisturbed, so the replay's energy and spin-ups are
//! those of the same trace under a network that forgot (or did not) at
//! each restart.

use lull_core::component::{Context, Detector, Prediction};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::network::Network;
use lull_core::time::Nanos;

/// How often, and whether with its learned state, the network restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restart {
    /// The interval between restarts (> 0).
    pub every: Nanos,
    /// Whether the new network gets the old one's learned state.
    pub keep: bool,
}

/// A network rebuilt at each restart ([`Restart`]); see the module docs.
pub struct Restarting {
    inner: Network,
    build: Box<dyn Fn() -> Network + Send>,
    restart: Restart,
    next: Nanos,
    pending: bool,
    restarts: u64,
    failed: Option<LearnedError>,
}

impl std::fmt::Debug for Restarting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Restarting")
            .field("inner", &self.inner)
            .field("restart", &self.restart)
            .field("restarts", &self.restarts)
            .finish_non_exhaustive()
    }
}

impl Restarting {
    /// The network `build` makes, rebuilt as `restart` says.
    pub fn new(build: Box<dyn Fn() -> Network + Send>, restart: Restart) -> Self {
        Restarting {
            inner: build(),
            build,
            next: restart.every,
            restart,
            pending: false,
            restarts: 0,
            failed: None,
        }
    }

    /// How many times it restarted.
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// A restore that failed (a bug: the state came from the same spec).
    pub fn failure(&self) -> Option<&LearnedError> {
        self.failed.as_ref()
    }

    fn restart_at(&mut self, ev: &Event, ctx: &Context) {
        let mut parts: Vec<Option<Learned>> = Vec::new();
        if self.restart.keep {
            self.inner.save_parts(ctx.now, &mut parts);
        }
        let mut fresh = (self.build)();
        // The arrival, as a new daemon's first: its outputs are the old
        // network's, already given.
        fresh.on_event(ev, ctx, &mut Vec::new());
        if self.restart.keep {
            let mut rest = parts.as_slice();
            if let Err(e) = fresh.restore_parts(&mut rest, ctx.now) {
                self.failed.get_or_insert(e);
            }
        }
        self.inner = fresh;
        self.restarts += 1;
        while self.next <= ctx.now {
            self.next += self.restart.every;
        }
    }
}

impl Detector for Restarting {
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        self.inner.on_event(ev, ctx, out);
        if ev.is_arrival() && std::mem::take(&mut self.pending) {
            self.restart_at(ev, ctx);
        }
    }
    fn gauges(&self) -> Vec<(String, f64)> {
        self.inner.gauges()
    }
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.inner.on_idle_begin(ctx, out);
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.inner.on_idle_end(ctx, began);
        self.pending = ctx.now >= self.next;
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.inner.next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.inner.on_deadline(ctx, out);
    }
    fn save_parts(&self, now: Nanos, out: &mut Vec<Option<Learned>>) {
        self.inner.save_parts(now, out);
    }
    fn restore_parts(
        &mut self,
        parts: &mut &[Option<Learned>],
        now: Nanos,
    ) -> Result<(), LearnedError> {
        self.inner.restore_parts(parts, now)
    }
}
