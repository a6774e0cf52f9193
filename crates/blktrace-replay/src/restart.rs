//! What a restart costs a learning network: a replay that rebuilds the
//! network at fixed times, as a daemon restarted every day (or at every
//! boot) would, with or without the state it learned
//! ([`lull_core::learned`]); and a replay of a daemon's activity log that
//! rebuilds it where the daemon restarted ([`Restarting::at_runs`]).
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
//!
//! **A daemon's restarts** are replayed as the daemon made them. The log
//! joins its runs on one timeline, the time nobody watched between them
//! one busy request ([`lull_activity::Rebuilt`]). At that request's
//! arrival the old network is saved without seeing it (its run ended
//! inside the idle period, which it never saw end); the new one is built
//! in the run's own time frame (its time zero, its session's wall clock:
//! times it sees are the run's own, as the daemon's new engine saw them),
//! gets at its time zero the learned state the daemon's state file held
//! when it fits the run's network and drive (as the daemon restores only
//! a state that fits), and never sees the downtime request: its first
//! event is the run's first poll, as the daemon's was.
//!
//! **A run that continues the one before it** ([`RunStart::continues`]: a
//! reload, or a restart that found the disk untouched, while the disk was
//! idle) has no downtime request: the disk was idle through the change.
//! The old network goes dormant where its run ended (the daemon had no
//! engine deciding between the two runs), and the new one is built at the
//! run's first instant, in its own frame, with the state file's learned
//! state as at any restart, and begins idle there
//! ([`lull_core::component::Detector::on_idle_begin`] with that instant as
//! the idle start), as the daemon's new engine did
//! ([`lull_core::engine::Engine::assume_idle`]). The drive's standby, if
//! the old run left it asleep, goes on in the task; the new network's
//! start while it sleeps is withheld, as the daemon withheld it.
//!
//! **The state file** is kept as the daemon kept it: the network's state
//! is written to it at each instant the log names
//! ([`RunStart::saved`], once the replay is past it) and at each clean
//! stop, and a state that does not fit the next run is dropped (the
//! daemon's next write leaves it out). So a run after a crash resumes
//! from the last write before the crash, as the daemon did; in a log of an
//! older daemon, which does not name its writes, from the crash.

use lull_activity::RunStart;
use lull_core::component::{Context, Detector, Prediction};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError, same_spec};
use lull_core::network::Network;
use lull_core::time::Nanos;
use lull_tasks::gate::GateRun;

/// How often, and whether with its learned state, the network restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restart {
    /// The interval between restarts (> 0).
    pub every: Nanos,
    /// Whether the new network gets the old one's learned state.
    pub keep: bool,
}

/// When the network restarts.
#[derive(Debug)]
enum Schedule {
    /// Every so often ([`Restart`]), at the next multiple `next`.
    Every { restart: Restart, next: Nanos },
    /// Where a daemon's runs began: `runs[next..]` are still to come.
    Runs { runs: Vec<RunStart>, next: usize },
}

/// A run's time frame, for the network built at its start.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// The run's time zero on the replay's timeline.
    offset: Nanos,
    /// The wall clock then.
    clock: Nanos,
    /// The downtime request (arrival, completion), never shown to it.
    hide: Option<(Nanos, Nanos)>,
    /// Where the run took over, on the replay's timeline: an idle period
    /// the run did not see begin began there for it (a run that continues
    /// the one before it, idle: [`RunStart::continues`]).
    from: Nanos,
}

/// A network rebuilt at each restart ([`Restart`], or a daemon's runs);
/// see the module docs.
pub struct Restarting {
    inner: Network,
    /// Builds the network of a run (its index; 0 for every network of a
    /// fixed-interval schedule).
    build: Box<dyn Fn(usize) -> Network + Send>,
    schedule: Schedule,
    frame: Option<Frame>,
    pending: bool,
    restarts: u64,
    failed: Option<LearnedError>,
    /// The learned state in the daemon's state files, as the replay has
    /// come: the run whose network wrote it, and the state; the real
    /// daemon's file first, a dry run's (its own) second.
    files: [Option<(usize, Vec<Option<Learned>>)>; 2],
    /// The instants a run wrote its learned state to the file
    /// ([`RunStart::saved`]), with the run, in order; `writes[written..]`
    /// are still to come.
    writes: Vec<(Nanos, usize)>,
    written: usize,
    /// The current run.
    run: usize,
    /// Between a continuing run's predecessor's end and its own start:
    /// no network decides (the daemon had none then).
    dormant: bool,
}

impl std::fmt::Debug for Restarting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Restarting")
            .field("inner", &self.inner)
            .field("schedule", &self.schedule)
            .field("restarts", &self.restarts)
            .finish_non_exhaustive()
    }
}

impl Restarting {
    /// The network `build` makes, rebuilt as `restart` says.
    pub fn new(build: Box<dyn Fn() -> Network + Send>, restart: Restart) -> Self {
        Self::with(
            Box::new(move |_| build()),
            Schedule::Every {
                next: restart.every,
                restart,
            },
        )
    }

    /// The network `build` makes for each of a daemon's `runs` (by index:
    /// the same for all, or each run's own), rebuilt where each run after
    /// the first began ([`lull_activity::Rebuilt::runs`]), as the daemon
    /// rebuilt it (module docs).
    pub fn at_runs(build: Box<dyn Fn(usize) -> Network + Send>, runs: &[RunStart]) -> Self {
        Self::with(
            build,
            Schedule::Runs {
                runs: runs.to_vec(),
                next: 1,
            },
        )
    }

    fn with(build: Box<dyn Fn(usize) -> Network + Send>, schedule: Schedule) -> Self {
        let writes = match &schedule {
            Schedule::Runs { runs, .. } => runs
                .iter()
                .enumerate()
                .flat_map(|(i, r)| r.saved.iter().map(move |&t| (t, i)))
                .collect(),
            Schedule::Every { .. } => Vec::new(),
        };
        Restarting {
            inner: build(0),
            build,
            schedule,
            frame: None,
            pending: false,
            restarts: 0,
            failed: None,
            files: [None, None],
            writes,
            written: 0,
            run: 0,
            dormant: false,
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

    /// The daemon run due to start at an arrival at `t`, if one is: the
    /// first arrival at or after the previous run's end (or, when that run
    /// left no record, the new run's time zero).
    fn run_due(&self, t: Nanos) -> Option<&RunStart> {
        match &self.schedule {
            Schedule::Runs { runs, next } => runs
                .get(*next)
                .filter(|r| r.continues.is_none() && t >= r.after.unwrap_or(r.offset)),
            Schedule::Every { .. } => None,
        }
    }

    /// The next run, when it continues the one before it: where that one
    /// ended (the old network decides no more) and where it takes over
    /// (its network is built, idle from then).
    fn continuing(&self) -> Option<(Nanos, Nanos)> {
        match &self.schedule {
            Schedule::Runs { runs, next } => runs.get(*next).and_then(|r| {
                r.continues
                    .map(|at| (r.after.map_or(at, |a| a.min(at)), at))
            }),
            Schedule::Every { .. } => None,
        }
    }

    /// A continuing run's instants as they come due at `now`: the old
    /// network goes dormant at its end, the new one starts at its own
    /// first instant, idle from then when the device is idle, as the
    /// daemon's new engine was ([`lull_core::engine::Engine::assume_idle`]).
    /// Whether anything happened.
    fn continue_due(&mut self, ctx: &Context, out: &mut Vec<Prediction>) -> bool {
        let Some((after, at)) = self.continuing() else {
            return false;
        };
        let mut acted = false;
        if !self.dormant && ctx.now >= after {
            self.dormant = true;
            acted = true;
        }
        if self.dormant && ctx.now >= at {
            self.dormant = false;
            self.begin_run(ctx);
            if ctx.idle_since.is_some() {
                let c = Context {
                    idle_since: Some(ctx.now),
                    lookahead: None,
                    ..*ctx
                };
                let from = out.len();
                let c = self.inner_ctx(&c);
                self.inner.on_idle_begin(&c, out);
                self.back(&mut out[from..]);
            }
            acted = true;
        }
        acted
    }

    /// Writes the learned state to the emulated state file at every
    /// instant before `now` where the daemon did ([`RunStart::saved`]):
    /// once the replay is past one, the network has seen every stimulus
    /// at or before it, as the daemon's engine had after its poll there.
    fn write_before(&mut self, now: Nanos) {
        self.write_until(now, false);
    }

    /// [`Restarting::write_before`], and at `now` too with `inclusive`.
    fn write_until(&mut self, now: Nanos, inclusive: bool) {
        while let Some(&(t, _)) = self
            .writes
            .get(self.written)
            .filter(|w| w.0 < now || (inclusive && w.0 == now))
        {
            self.written += 1;
            self.write_file(t);
        }
    }

    /// The current network's learned state at `t` (on the replay's
    /// timeline) goes to the emulated state file, unless it learns
    /// nothing (the daemon keeps the file's older state then).
    fn write_file(&mut self, t: Nanos) {
        let mut parts = Vec::new();
        let t = self.frame.map_or(t, |f| t.saturating_sub(f.offset));
        self.inner.save_parts(t, &mut parts);
        if parts.iter().any(Option::is_some) {
            self.files[self.mode(self.run)] = Some((self.run, parts));
        }
    }

    /// Which state file run `run` kept: 0 the real daemon's, 1 a dry
    /// run's.
    fn mode(&self, run: usize) -> usize {
        match &self.schedule {
            Schedule::Runs { runs, .. } => usize::from(runs[run].dry_run),
            Schedule::Every { .. } => 0,
        }
    }

    /// The checks of a daemon's runs, for the replay's `spindown` task
    /// ([`lull_tasks::Spindown::with_gate_runs`]): where each run begins,
    /// whether it was a dry run (its own state file, so its own wear
    /// bucket) and its session's wear budget; `None` for a fixed-interval
    /// schedule.
    pub fn gate_runs(&self) -> Option<Vec<GateRun>> {
        match &self.schedule {
            Schedule::Runs { runs, .. } => Some(gate_runs(runs)),
            Schedule::Every { .. } => None,
        }
    }

    fn restart_at(&mut self, ev: &Event, ctx: &Context) {
        let keep = match &self.schedule {
            Schedule::Every { restart, .. } => restart.keep,
            Schedule::Runs { .. } => true,
        };
        let mut parts: Vec<Option<Learned>> = Vec::new();
        if keep {
            self.inner.save_parts(self.inner_ctx(ctx).now, &mut parts);
        }
        let mut fresh = (self.build)(0);
        // The arrival, as a new daemon's first: its outputs are the old
        // network's, already given.
        fresh.on_event(ev, ctx, &mut Vec::new());
        if keep {
            let mut rest = parts.as_slice();
            if let Err(e) = fresh.restore_parts(&mut rest, ctx.now) {
                self.failed.get_or_insert(e);
            }
        }
        self.inner = fresh;
        self.restarts += 1;
        if let Schedule::Every { restart, next } = &mut self.schedule {
            while *next <= ctx.now {
                *next += restart.every;
            }
        }
    }

    /// A daemon's run begins at the arrival `ev`. The new network is
    /// built in the run's frame and given, at its time zero, the learned
    /// state in the daemon's state file when it fits (the same network
    /// and drive): after a clean stop, the state at the stop; after a
    /// crash, the last the daemon wrote (a log of an older daemon, which
    /// does not say, resumes from the crash). Unless `ev` is the downtime
    /// request, the new network sees it as its first event, and what it
    /// predicts from it goes to `out`.
    fn start_run(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        self.begin_run(ctx);
        if !self.hidden(ev) {
            self.forward_event(ev, ctx, out);
        }
    }

    /// The next run's network, built at `ctx.now` ([`Restarting::start_run`]).
    fn begin_run(&mut self, ctx: &Context) {
        // The old network has seen all it will (the downtime request at
        // `ctx.now` is hidden from it): the writes up to here are due.
        self.write_until(ctx.now, true);
        let Schedule::Runs { runs, next } = &mut self.schedule else {
            return;
        };
        let index = *next;
        *next += 1;
        let run = runs[index].clone();
        let said = runs[index - 1].saves_learned;
        if run.clean || !said {
            self.write_file(run.after.unwrap_or(ctx.now).min(ctx.now));
        }
        let Schedule::Runs { runs, .. } = &self.schedule else {
            return;
        };
        // A real daemon with nothing learned in its file takes what a dry
        // run learned (`State::carry_over_learned`).
        let m = usize::from(run.dry_run);
        if m == 0 && self.files[0].is_none() {
            self.files[0] = self.files[1].clone();
        }
        // A state that does not fit is dropped (the daemon's next write
        // of the file leaves it out); one that does stays there.
        let fits = self.files[m].as_ref().is_some_and(|(k, _)| {
            same_spec(&runs[*k].network, &run.network) && runs[*k].drive == run.drive
        });
        let parts = match &self.files[m] {
            Some((_, p)) if fits => p.clone(),
            _ => {
                self.files[m] = None;
                Vec::new()
            }
        };
        self.inner = (self.build)(index);
        self.run = index;
        self.frame = Some(Frame {
            offset: run.offset,
            clock: run.clock,
            hide: run.downtime,
            from: run.continues.unwrap_or(Nanos::ZERO),
        });
        if fits {
            // At the run's time zero; a run that continues the one before
            // takes its state up where it took over, as the daemon does
            // (`DiskController::continue_from`).
            let at = run
                .continues
                .map_or(Nanos::ZERO, |c| c.saturating_sub(run.offset));
            let mut rest = parts.as_slice();
            if let Err(e) = self.inner.restore_parts(&mut rest, at) {
                self.failed.get_or_insert(e);
            }
        }
        self.restarts += 1;
    }

    /// `ctx` in the current network's frame.
    fn inner_ctx(&self, ctx: &Context) -> Context {
        match self.frame {
            None => *ctx,
            Some(f) => Context {
                now: ctx.now.saturating_sub(f.offset),
                idle_since: ctx
                    .idle_since
                    .map(|t| t.max(f.from).saturating_sub(f.offset)),
                lookahead: ctx.lookahead.map(|t| t.saturating_sub(f.offset)),
                clock: Some(f.clock),
                ..*ctx
            },
        }
    }

    /// Whether `ev` belongs to the downtime request the current network
    /// must not see.
    fn hidden(&self, ev: &Event) -> bool {
        self.frame.and_then(|f| f.hide).is_some_and(|(a, c)| {
            if ev.is_arrival() {
                ev.time == a && ev.pair == c
            } else {
                ev.time == c && ev.pair == a
            }
        })
    }

    /// Predictions the current network made, back on the replay's timeline.
    fn back(&self, out: &mut [Prediction]) {
        if let Some(f) = self.frame {
            for p in out {
                p.start += f.offset;
            }
        }
    }

    fn forward_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        let from = out.len();
        match self.frame {
            None => self.inner.on_event(ev, ctx, out),
            Some(f) => {
                let shifted = Event {
                    time: ev.time.saturating_sub(f.offset),
                    pair: ev.pair.saturating_sub(f.offset),
                    ..*ev
                };
                let c = self.inner_ctx(ctx);
                self.inner.on_event(&shifted, &c, out);
            }
        }
        self.back(&mut out[from..]);
    }
}

impl Detector for Restarting {
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        if matches!(self.schedule, Schedule::Runs { .. }) {
            self.write_before(ctx.now);
            // A continuing run whose start no deadline reached (an event
            // came first, which the daemon's log never has): it starts
            // here, at the event.
            if self.continuing().is_some_and(|(after, _)| ctx.now >= after) {
                self.dormant = false;
                self.begin_run(ctx);
            }
            if ev.is_arrival() && (self.pending || self.run_due(ev.time).is_some()) {
                self.pending = false;
                self.start_run(ev, ctx, out);
            } else if !self.hidden(ev) {
                self.forward_event(ev, ctx, out);
            }
            return;
        }
        self.inner.on_event(ev, ctx, out);
        if ev.is_arrival() && std::mem::take(&mut self.pending) {
            self.restart_at(ev, ctx);
        }
    }
    fn gauges(&self) -> Vec<(String, f64)> {
        self.inner.gauges()
    }
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.write_before(ctx.now);
        let from = out.len();
        let c = self.inner_ctx(ctx);
        self.inner.on_idle_begin(&c, out);
        self.back(&mut out[from..]);
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        match &self.schedule {
            Schedule::Every { next, .. } => {
                self.inner.on_idle_end(ctx, began);
                self.pending = ctx.now >= *next;
            }
            Schedule::Runs { .. } => {
                self.write_before(ctx.now);
                if self.run_due(ctx.now).is_some() {
                    // The arrival that ends this period is the downtime:
                    // the run ended inside the period and never saw its end.
                    self.pending = true;
                    return;
                }
                if self.dormant {
                    return;
                }
                let c = self.inner_ctx(ctx);
                let began = self
                    .frame
                    .map_or(began, |f| began.max(f.from).saturating_sub(f.offset));
                self.inner.on_idle_end(&c, began);
            }
        }
    }
    fn next_deadline(&self) -> Option<Nanos> {
        let inner = if self.dormant {
            None
        } else {
            self.inner
                .next_deadline()
                .map(|d| self.frame.map_or(d, |f| d.saturating_add(f.offset)))
        };
        let next_run = self
            .continuing()
            .map(|(after, at)| if self.dormant { at } else { after });
        match (inner, next_run) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.write_before(ctx.now);
        if self.continue_due(ctx, out) {
            // The new network's own deadline may be due too (not the old
            // one's: it decides no more).
            let due = !self.dormant
                && self
                    .inner
                    .next_deadline()
                    .map(|d| self.frame.map_or(d, |f| d.saturating_add(f.offset)))
                    .is_some_and(|d| d <= ctx.now);
            if !due {
                return;
            }
        }
        if self.dormant {
            return;
        }
        let from = out.len();
        let c = self.inner_ctx(ctx);
        self.inner.on_deadline(&c, out);
        self.back(&mut out[from..]);
    }
    fn save_parts(&self, now: Nanos, out: &mut Vec<Option<Learned>>) {
        let now = self.frame.map_or(now, |f| now.saturating_sub(f.offset));
        self.inner.save_parts(now, out);
    }
    fn restore_parts(
        &mut self,
        parts: &mut &[Option<Learned>],
        now: Nanos,
    ) -> Result<(), LearnedError> {
        let now = self.frame.map_or(now, |f| now.saturating_sub(f.offset));
        self.inner.restore_parts(parts, now)
    }
}

/// The checks of a daemon's `runs` for the replay's `spindown` task and
/// its references: where each run begins, whether it was a dry run (its
/// own wear bucket) and its session's wear budget.
pub fn gate_runs(runs: &[RunStart]) -> Vec<GateRun> {
    runs.iter()
        .map(|r| GateRun {
            // Where it took over: a run the daemon started again without
            // stopping (a SIGHUP that changed the disk's entry) shares the
            // daemon's time zero with the run before it, and begins where
            // that one ended.
            from: r.after.map_or(r.offset, |a| a.max(r.offset)),
            dry_run: r.dry_run,
            max_spindowns_per_day: r.max_spindowns_per_day,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::network::NetworkBuilder;
    use lull_core::request::Op;

    /// Predicts an idle period at every arrival it sees, in its own frame.
    #[derive(Debug)]
    struct Echo;

    impl Detector for Echo {
        fn on_event(&mut self, ev: &Event, _ctx: &Context, out: &mut Vec<Prediction>) {
            if ev.is_arrival() {
                out.push(Prediction::new(ev.time, None));
            }
        }
        fn on_idle_begin(&mut self, _ctx: &Context, _out: &mut Vec<Prediction>) {}
        fn on_idle_end(&mut self, _ctx: &Context, _began: Nanos) {}
        fn next_deadline(&self) -> Option<Nanos> {
            None
        }
        fn on_deadline(&mut self, _ctx: &Context, _out: &mut Vec<Prediction>) {}
    }

    /// Counts the arrivals it sees (what it learns), and predicts at each
    /// an idle period as long in nanoseconds as its count.
    #[derive(Debug, Default)]
    struct Counter(u64);

    impl Detector for Counter {
        fn on_event(&mut self, ev: &Event, _ctx: &Context, out: &mut Vec<Prediction>) {
            if ev.is_arrival() {
                self.0 += 1;
                out.push(Prediction::new(ev.time, Some(Nanos(self.0))));
            }
        }
        fn save_parts(&self, _now: Nanos, out: &mut Vec<Option<Learned>>) {
            out.push(Some(Learned::new("counter", 1, vec![self.0 as f64])));
        }
        fn restore_parts(
            &mut self,
            parts: &mut &[Option<Learned>],
            _now: Nanos,
        ) -> Result<(), LearnedError> {
            let (first, rest) = parts.split_first().expect("a part");
            self.0 = first.as_ref().expect("learned").expect("counter", 1, 1)?[0] as u64;
            *parts = rest;
            Ok(())
        }
        fn on_idle_begin(&mut self, _ctx: &Context, _out: &mut Vec<Prediction>) {}
        fn on_idle_end(&mut self, _ctx: &Context, _began: Nanos) {}
        fn next_deadline(&self) -> Option<Nanos> {
            None
        }
        fn on_deadline(&mut self, _ctx: &Context, _out: &mut Vec<Prediction>) {}
    }

    fn counter() -> Network {
        let mut b = NetworkBuilder::new();
        b.source("counter", Box::new(Counter::default()));
        b.build().unwrap()
    }

    /// Arrivals at `secs` through `r`; the count each predicted.
    fn counts(r: &mut Restarting, secs: &[u64]) -> Vec<u64> {
        let mut out = Vec::new();
        for &s in secs {
            let ev = Event::arrival_at(Nanos::from_secs(s), Op::Read, 0, 4096);
            r.on_event(&ev, &Context::at(ev.time), &mut out);
        }
        out.iter().map(|p| p.duration.map_or(0, |d| d.0)).collect()
    }

    /// The replay keeps the daemon's state file: a crash resumes from its
    /// last write, not from the crash; a clean stop from the stop; a
    /// state that does not fit the next run's network is dropped, as the
    /// daemon drops it, so a later run of the first network starts afresh.
    #[test]
    fn each_run_resumes_from_the_state_file_as_the_daemon_left_it() {
        let net = |name: &str| if name == "counter" { counter() } else { echo() };
        let with = |offset, after, clean, saved: &[u64], network: &str| RunStart {
            clean,
            saved: saved.iter().map(|&s| Nanos::from_secs(s)).collect(),
            network: network.into(),
            ..run(offset, after)
        };
        // Run 0 counts 3 arrivals, writes the state after the second (at
        // 20 s) and crashes; run 1 resumes from 2, counts 2 more (4) and
        // stops cleanly; run 2 resumes from those 4.
        let runs = [
            with(0, None, true, &[20], "counter"),
            with(100, Some(35), false, &[], "counter"),
            with(200, Some(125), true, &[], "counter"),
        ];
        let names: Vec<String> = runs.iter().map(|r| r.network.clone()).collect();
        let mut r = Restarting::at_runs(Box::new(move |i| net(&names[i])), &runs);
        assert_eq!(counts(&mut r, &[10, 20, 30]), [1, 2, 3]);
        assert_eq!(counts(&mut r, &[101, 110]), [3, 4]);
        assert_eq!(counts(&mut r, &[201]), [5]);
        assert_eq!(r.restarts(), 2);
        // The same with an older daemon's log (it did not name its writes):
        // the crash resumes from the crash.
        let mut old = runs.clone();
        for run in &mut old {
            run.saves_learned = false;
            run.saved.clear();
        }
        let names: Vec<String> = old.iter().map(|r| r.network.clone()).collect();
        let mut r = Restarting::at_runs(Box::new(move |i| net(&names[i])), &old);
        assert_eq!(counts(&mut r, &[10, 20, 30]), [1, 2, 3]);
        assert_eq!(counts(&mut r, &[101]), [4]);
        // A network changed for good: what it cannot take is dropped.
        let runs = [
            with(0, None, true, &[], "counter"),
            with(100, Some(15), true, &[], "echo"),
            with(200, Some(115), true, &[], "counter"),
        ];
        let names: Vec<String> = runs.iter().map(|r| r.network.clone()).collect();
        let mut r = Restarting::at_runs(Box::new(move |i| net(&names[i])), &runs);
        assert_eq!(counts(&mut r, &[10]), [1]);
        assert_eq!(counts(&mut r, &[101, 201]), [0, 1]);
    }

    fn echo() -> Network {
        let mut b = NetworkBuilder::new();
        b.source("echo", Box::new(Echo));
        b.build().unwrap()
    }

    fn run(offset: u64, after: Option<u64>) -> RunStart {
        RunStart {
            offset: Nanos::from_secs(offset),
            clock: Nanos::from_secs(1_700_000_000 + offset),
            after: after.map(Nanos::from_secs),
            downtime: None,
            clean: true,
            saves_learned: true,
            saved: Vec::new(),
            dry_run: false,
            max_spindowns_per_day: None,
            network: "echo".into(),
            drive: "paper-2.5in".into(),
            continues: None,
        }
    }

    /// A run with no downtime request (the clock was set back across the
    /// restart) begins at an arrival the new network must see: what it
    /// predicts from it reaches the engine, on the replay's timeline.
    #[test]
    fn a_runs_first_arrival_reaches_the_new_network_and_its_output() {
        let runs = [run(0, None), run(55, Some(50))];
        let mut r = Restarting::at_runs(Box::new(|_| echo()), &runs);
        let mut out = Vec::new();
        let first = Event::arrival_at(Nanos::from_secs(10), Op::Read, 0, 4096);
        r.on_event(&first, &Context::at(first.time), &mut out);
        assert_eq!(out, [Prediction::new(Nanos::from_secs(10), None)]);
        out.clear();
        let second = Event::arrival_at(Nanos::from_secs(60), Op::Read, 0, 4096);
        r.on_event(&second, &Context::at(second.time), &mut out);
        assert_eq!(r.restarts(), 1);
        assert_eq!(out, [Prediction::new(Nanos::from_secs(60), None)]);
    }
}
