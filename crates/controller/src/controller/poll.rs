//! What the controller does with a diskstats sample: the disk's deltas
//! become events, the engine runs on them, an idle period begins or ends,
//! a drive in standby wakes, and the jobs of a `jobs` disk switch.

use lull_core::event::Event;
use lull_core::registry::Registry;
use lull_core::time::Nanos;
use tracing::{error, info, warn};

use super::{Context, DiskController, Now, Order, Output, WakeWitness, build_network};
use crate::config::{Backend, TaskConfig};
use crate::hooks::HookEvent;
use crate::jobs::Switch;
use crate::source::{PollOutcome, Sample};
use crate::state::Wake;
use crate::task::Intent;

impl DiskController {
    /// Whether all the disk did since the last poll was its own task's
    /// command's I/O: it read no more than the running commands' process
    /// trees read (within [`OWN_READ_MEMORY`](super::OWN_READ_MEMORY): a read is charged when
    /// submitted and counted by the disk when it completes), wrote no
    /// more than they wrote (within [`OWN_IO_MEMORY`](super::OWN_IO_MEMORY): a write is charged
    /// when the page is dirtied and reaches the disk at writeback), and
    /// completed no discard or flush (which no process is charged with).
    /// Such a poll is absorbed as a flush's writes are: a scrub reading
    /// the disk in its idle time does not end that idle time and pause
    /// itself. I/O beyond the command's is the foreground's, and the poll
    /// counts whole. Without a running command (or where the witness
    /// cannot tell, [`WakeWitness::tree_io`]) nothing is asked.
    fn own_io_only(&mut self, t: Nanos, sample: &Sample, witness: &mut dyn WakeWitness) -> bool {
        let pids: Vec<u32> = match &self.cfg.task {
            TaskConfig::Command { .. } => self.st.command_pid.into_iter().collect(),
            TaskConfig::Jobs { .. } => self.st.job_pids.values().map(|j| j.pid).collect(),
            TaskConfig::Standby { .. } | TaskConfig::Flush => Vec::new(),
        };
        let trees: Vec<(u32, (u64, u64))> = pids
            .into_iter()
            .filter_map(|pid| witness.tree_io(pid).map(|io| (pid, io)))
            .collect();
        self.own_io.charge(t, trees);
        let tracker = &self.tracker;
        let Some((disk_read, disk_written)) = self.own_io.judge(|| tracker.moved_since(sample))
        else {
            return false;
        };
        tracing::debug!(
            "disk {}: the poll's {} KiB read and {} KiB written were its command's own I/O: not counted as activity",
            self.key,
            disk_read >> 10,
            disk_written >> 10
        );
        true
    }

    /// Handles the diskstats `sample` taken at `now` (`late`: much later
    /// than planned, [`crate::source`]): turns the disk's deltas into
    /// events, pushes them into the engine, advances it to `now`, and acts
    /// on what it decided. Appends what the shell must do to `out`. A
    /// run's first poll that finds the disk as the last run left it at a
    /// clean stop while idle ([`crate::state::IdleAtStop`]) continues that
    /// idle period instead of taking a baseline.
    pub fn on_poll(
        &mut self,
        now: Now,
        sample: &Sample,
        late: bool,
        cx: &mut Context<'_>,
        out: &mut Vec<Output>,
    ) {
        let t = now.mono;
        self.polled_at = Some(t);
        // A detached disk is absent, whoever holds its kernel name now.
        let none;
        let sample = if self.presence.detached() {
            none = Sample::new(Vec::new());
            &none
        } else {
            sample
        };
        // The first poll of a run may take up the idle period a clean
        // stop left (a restart in the same boot, the disk untouched).
        if self.idle_at_stop.is_some() {
            self.resume_idle(sample, t);
        }
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        // Asked even after a late poll, so the command's counters are
        // current at the next one; a late poll's gap counts as busy anyway.
        let own = self.own_io_only(t, sample, cx.witness) && !late;
        let absorb = self.own_io.absorb(own);
        let absorbed = if absorb && !late {
            self.tracker.absorb(t, sample)
        } else {
            None
        };
        let o = match absorbed {
            Some(o) => o,
            None => self.tracker.poll(t, sample, late, &mut events),
        };
        let since = o.record.map(|p| p.t0);
        self.record_poll(t, o.record, out);
        self.poll_presence(now, &o, out);
        self.poll_left_standby(now, o.present, sample, cx.witness, out);
        if o.active && !absorb {
            // The bytes the poll showed, for the wake's attribution.
            let moved = o.record.map_or(0, |p| p.counts.sectors.saturating_mul(512));
            self.on_busy(now, sample, moved, cx.witness, out);
        }
        self.order_power_check(t, o.present, sample, out);
        // A start the engine decides below may come after this poll's I/O.
        self.standby.poll_saw(since, &events);
        self.run_engine(t, &events, cx.registry, out);
        self.events = events;
        if self.learning.take_due() {
            self.keep_learned(now);
        }
        if self.engine.task().pending() {
            let intents: Vec<Intent> = self.engine.task_mut().drain().collect();
            for intent in intents {
                out.push(Output::Decided(intent));
                self.on_intent(now, intent, sample, out);
            }
        }
        if let Some(j) = self.jobs.as_mut() {
            let switches = j.run.advance(t);
            // A running job's idle seconds grow: keep its metric current
            // (the metrics follow changes, once a second).
            self.dirty |= j.run.running() || !switches.is_empty();
            self.switch_jobs(switches, out);
        }
        self.settle_shadow(now);
        self.note_news(now);
    }

    /// What the poll's outcome `o` at `now` says of the disk's presence
    /// and its idle period: the state entry's presence and kernel name, a
    /// disk that vanished or came back, an idle period that began.
    fn poll_presence(&mut self, now: Now, o: &PollOutcome, out: &mut Vec<Output>) {
        let t = now.mono;
        if self.presence.seen(o.present)
            && (self.st.present != o.present || self.st.kernel_name != self.kernel)
        {
            self.st.present = o.present;
            self.st.kernel_name = self.kernel.clone();
            self.dirty = true;
        }
        match (o.present, self.st.vanished_unix) {
            (false, None) => {
                self.st.vanished_unix = Some(now.unix);
                // Written at once: how long it has been gone is what
                // `lull status` says of an absent disk.
                self.urgent = true;
            }
            (true, Some(_)) => {
                self.st.vanished_unix = None;
                self.dirty = true;
            }
            _ => {}
        }
        if o.vanished {
            warn!("disk {} ({}) vanished", self.key, self.kernel);
            // Whatever it was doing ended: its standby time so far counts,
            // the idle period is over, and I/O after it comes back is not
            // a wake from anything lull did. A drive that comes back has
            // spun up, and what it does then, lull has not seen begin.
            self.power.vanished(t, &mut self.st);
            self.idle_since = None;
            self.idle_began_unix = None;
            self.continued_stop_unix = None;
            self.acted = false;
            // The engine holds its absence as busy (`PollKind::Vanished`):
            // nothing is decided until it is back.
            self.decide(
                now,
                "nothing decided: the disk is not present (unplugged)".to_string(),
            );
        }
        if o.appeared {
            info!("disk {} ({}) is back", self.key, self.kernel);
            out.push(Output::Order {
                job: None,
                order: Order::Replugged { dev: self.dev() },
            });
        }
        if o.idle_started {
            self.st.idle_starts += 1;
            self.dirty = true;
            // From the engine's idle start (the last request's
            // completion), which its timers count from: `lull status`'s
            // "idle for" and "decides in" then add up to the timeout.
            self.idle_since = Some(o.idle_from.unwrap_or(t));
            self.idle_began_unix = None;
        }
    }

    /// The standby the previous run left, at a poll at `now` that found
    /// the disk `present` (or not) with `sample`: untouched, woken by I/O
    /// this run saw, woken while no daemon watched, or taken up from the
    /// state file when nothing can ask the drive.
    fn poll_left_standby(
        &mut self,
        now: Now,
        present: bool,
        sample: &Sample,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) {
        // The disk's completed I/O: while it sleeps, kept with its
        // standby for a later run to compare (it does not change while
        // the drive sleeps, so it is written with the standby's own
        // writes).
        let io = sample.get(&self.tracker.family().disk).map(io_mark);
        // The standby the previous run left, not taken up yet, with the
        // disk's counters kept with it: did they move?
        let left =
            present && self.power.left_in_standby() && io.is_some() && self.st.standby_io.is_some();
        if left && io == self.st.standby_io {
            // Untouched: this run has seen the drive asleep since then.
            self.power.seen_untouched(now);
        } else if left && let Some(from) = self.power.untouched_at() {
            // I/O this run saw, before the power check took the standby
            // up: the drive slept until now (its counters had not moved
            // since the spin-down when this run first looked), and this
            // I/O woke it. Taken up from that first look, so that the
            // wake below counts a spin-up, runs its hooks and books the
            // standby, as after the check's answer (without it the wake
            // went unrecorded and its standby uncounted).
            self.take_up_standby(from, now, witness, out);
            info!(
                "disk {}: in standby since before the daemon's restart or reload, until this I/O",
                self.key
            );
        } else if left {
            // The counters moved while no daemon watched: something read
            // or wrote the disk, so the drive spun up (a disk a reload
            // removed, used, then added back; a daemon stopped for a
            // while). Its standby is over, counted as a spin-up, and not
            // taken up.
            info!(
                "disk {}: awake: it did I/O while the daemon was not watching (its diskstats counters moved since its standby), so its standby is over",
                self.key
            );
            self.power.woke_unwatched(&mut self.st);
            self.urgent = true;
        }
        if present && self.power.keep_io(io, &mut self.st) {
            self.dirty = true;
        }
        if present && self.power.left_in_standby() && !self.checks_power() {
            // The previous run left the drive in standby and nothing can
            // ask it (`hdparm`, no power checks): the state file is all
            // there is to go on. Taken up at the first poll, as a power
            // check's answer takes it up: no second standby is sent (and
            // counted, and charged) while it sleeps, and the I/O that
            // wakes it is a spin-up.
            self.take_up_standby(now, now, witness, out);
            info!(
                "disk {}: in standby since before the daemon's restart or reload, as its state file says",
                self.key
            );
        }
    }

    /// Asks a standby disk's drive its power state at `t`, when a check
    /// is due and the disk is `present`.
    fn order_power_check(
        &mut self,
        t: Nanos,
        present: bool,
        sample: &Sample,
        out: &mut Vec<Output>,
    ) {
        if let TaskConfig::Standby { backend, .. } = self.cfg.task {
            let pc = self.settings.power_check;
            // A disk left alone (a solid-state disk under a glob) is not
            // spun down, so nothing is asked of it either.
            if pc > Nanos::ZERO
                && backend != Backend::Hdparm
                && !self.settings.dry_run
                && self.cfg.left_alone.is_none()
                && present
                && self.power.check_due(t, pc)
            {
                self.devs = self.sample_devs(sample);
                out.push(Output::Order {
                    job: None,
                    order: Order::CheckPower { dev: self.dev() },
                });
            }
        }
    }

    /// Pushes the poll's `events` into the engine and advances it to `t`.
    /// An engine error restarts the detectors from what they had learned
    /// (a network built from `registry`), and the jobs follow the new
    /// engine.
    fn run_engine(
        &mut self,
        t: Nanos,
        events: &[Event],
        registry: &Registry,
        out: &mut Vec<Output>,
    ) {
        let mut failed = None;
        for ev in events.iter() {
            if let Err(e) = self.engine.push(ev) {
                failed = Some(e);
                break;
            }
        }
        if failed.is_none() {
            failed = self.engine.advance(t).err();
        }
        if let Some(e) = failed {
            error!(
                "disk {}: engine error, restarting its detectors: {e}",
                self.key
            );
            self.st.errors += 1;
            self.dirty = true;
            if let Ok(n) = build_network(registry, &self.cfg) {
                self.engine = Self::engine(n, &self.cfg, self.settings.clock);
                self.resume_learned(t, registry);
                // A quiet disk is idle from here, as after a start's
                // baseline poll: without it the new engine, outside any
                // idle period, waited for the next I/O to decide anything.
                if !self.tracker.holding() && self.engine.assume_idle() {
                    let _ = self.engine.advance(t);
                }
            }
            // The jobs' idle period ended with the old engine; they follow
            // the new one's decisions from here.
            if let Some(j) = self.jobs.as_mut() {
                let switches = j.run.on_idle_end(t);
                self.switch_jobs(switches, out);
            }
        }
    }

    /// Ends a poll at `now`: a deadline that passed and gave way to
    /// another is news; what will be written notes its timing.
    fn note_news(&mut self, now: Now) {
        let t = now.mono;
        // The deadline the state shows passed and the network set
        // another: `lull status` read "nothing decided until I/O comes"
        // while `auto`'s timeout was pending. (Only then: a timer re-armed
        // by every request of a busy stretch is no news, nor is any
        // deadline while the disk is busy: status shows it busy.)
        if self.idle_since.is_some()
            && self.noted_deadline.is_some_and(|d| d <= t)
            && self.next_deadline_of_engine() != self.noted_deadline
        {
            self.dirty = true;
        }
        if self.dirty || self.urgent {
            self.note_timing(now);
        }
    }

    /// Keeps when the idle period began and when the network decides
    /// next, in Unix seconds, for `lull status`: at a poll whose changes
    /// will be written (never a reason to write the state, and both are
    /// instants, so a quiet poll after it has nothing to add).
    fn note_timing(&mut self, now: Now) {
        // To the nearest second: `now.unix` is whole seconds, and an
        // instant a poll ago lies a few microseconds more than a second
        // back (the loop's polls run late), which flooring took as two
        // ("active for 3s" beside "idle for 4s").
        let unix = |t: Nanos| {
            let ahead = t.0 as i128 - now.mono.0 as i128;
            u64::try_from(now.unix as i128 + (ahead + 500_000_000).div_euclid(1_000_000_000)).ok()
        };
        // An idle period taken up from the run before this one began
        // when that run saw it begin.
        let began = self.idle_began_unix;
        self.st.idle_since_unix = self.idle_since.and_then(|t| began.or_else(|| unix(t)));
        self.noted_deadline = self.next_deadline_of_engine();
        self.st.next_decision_unix = self.noted_deadline.and_then(unix);
    }

    /// The engine's next deadline, if it has one.
    pub(super) fn next_deadline_of_engine(&self) -> Option<Nanos> {
        self.engine.next_deadline().filter(|&d| d != Nanos::MAX)
    }

    /// The poll saw I/O that is not lull's own: an idle period (if any)
    /// ended; a drive in standby spun up.
    fn on_busy(
        &mut self,
        now: Now,
        sample: &Sample,
        moved: u64,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) {
        self.power.saw_io();
        let idle = self.idle_len(now);
        let env = || {
            idle.map(|idle| vec![("LULL_IDLE_S", format!("{:.3}", idle.as_secs_f64()))])
                .unwrap_or_default()
        };
        // The standby this I/O ended: its hooks and its line, made while
        // the drive still shows in standby (the hooks' `LULL_STANDBY_S`).
        let spun_up = self.power.standby_since().map(|since| {
            self.devs = self.sample_devs(sample);
            let hooks = [HookEvent::Spinup, HookEvent::Wake]
                .into_iter()
                .filter_map(|ev| self.hook_env(now, ev, env))
                .collect();
            (self.busy_again_text(now, since), hooks)
        });
        if spun_up.is_none() && self.acted {
            self.st.last_wake = Some(Wake {
                unix: now.unix,
                cause: Wake::IO.to_string(),
                by: Vec::new(),
            });
            self.dirty = true;
            // A dry run's would-be spin-up is written at once, as a real
            // one is: `lull status` of a dry run beside hd-idle shows the
            // period it would have slept through (its shadow) at once,
            // not up to `state_interval` later.
            if self.settings.dry_run && matches!(self.cfg.task, TaskConfig::Standby { .. }) {
                self.urgent = true;
            }
            self.hook(now, HookEvent::Wake, env, out);
        }
        self.acted = false;
        self.last_idle = self.idle_len(now);
        self.idle_since = None;
        self.idle_began_unix = None;
        self.continued_stop_unix = None;
        // Awake: a standby in progress is booked (its time, a spin-up),
        // and one the previous run left is over too.
        let slept = self.power.woke(now, &mut self.st);
        if let Some((text, hooks)) = spun_up {
            self.woke(now, (Wake::SPINUP, moved, slept), text, hooks, witness, out);
            self.dirty = true;
            // Written at once, so `lull status` names the wakers (spin-ups
            // are rare: the wear budget bounds them).
            self.urgent = true;
        }
        if self.last_idle.is_some() {
            self.learning.due();
            // The idle period `lull status` shows ended: the metrics say
            // so within a second (the state file at its next write).
            self.dirty = true;
        }
    }

    /// The line saying the drive is busy again after its standby since
    /// `since`. A standby taken up after a restart or reload began before
    /// this run: said whole (a trial added up the log's lines and found
    /// them short of the drive's sleep).
    fn busy_again_text(&self, now: Now, since: Nanos) -> String {
        let watched = now.mono - since;
        let whole = self
            .power
            .since_unix()
            .map(|u| Nanos::from_secs(now.unix.saturating_sub(u)))
            .filter(|&w| w > watched + Nanos::from_secs(1));
        match whole {
            Some(w) => format!(
                "disk {}: busy again after {} in standby (since before the daemon's restart or reload; {} of it watched by this run)",
                self.key,
                w.approx(),
                watched.approx()
            ),
            None => format!(
                "disk {}: busy again after {} in standby",
                self.key,
                watched.approx()
            ),
        }
    }

    /// Orders for the jobs' actors that `switches` calls for.
    pub(super) fn switch_jobs(&self, switches: Vec<Switch>, out: &mut Vec<Output>) {
        let Some(j) = self.jobs.as_ref() else {
            return;
        };
        for s in switches {
            let (job, order) = match s {
                Switch::Start(job) => {
                    routine!(self, "disk {}: job {} runs", self.key, j.run.name(job));
                    (
                        job,
                        Order::Start {
                            dev: self.dev(),
                            devs: Vec::new(),
                        },
                    )
                }
                Switch::Stop(job) => {
                    routine!(self, "disk {}: job {} pauses", self.key, j.run.name(job));
                    (job, Order::Stop)
                }
            };
            out.push(Output::Order {
                job: Some(job),
                order,
            });
        }
    }
}

/// A disk's completed I/O in one number: its reads, writes, discards and
/// flushes in diskstats (wrapping, as the counters do).
pub(super) fn io_mark(c: &crate::diskstats::Counters) -> u64 {
    c.reads
        .wrapping_add(c.writes)
        .wrapping_add(c.discards)
        .wrapping_add(c.flushes)
}
