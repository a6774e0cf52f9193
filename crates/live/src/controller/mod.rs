//! The per-disk controller: every decision the daemon makes about one disk,
//! as a sans-IO state machine.
//!
//! # Why a controller
//!
//! The daemon used to decide next to its I/O: one type owned the poll
//! loop, each disk's engine, the actors, hooks and the state file, so "the
//! daemon decides what `lull replay` decides" could only be checked on a
//! loop device in real time. Like quinn-proto or rustls, the decisions now
//! live in a state machine that takes inputs and returns outputs and does
//! no I/O of its own: no tokio, no clock, no files, no processes.
//!
//! - **Inputs**: a diskstats sample at a time ([`DiskController::on_poll`],
//!   which also advances the engine to its deadlines), what an actor
//!   reports ([`DiskController::on_outcome`]: a standby, a power-state or
//!   transport answer, a command's start, pause or exit, a job's report),
//!   a new kernel name after a replug ([`DiskController::replugged`]) and a
//!   configuration change ([`DiskController::set_config`]). Time comes
//!   with every input ([`Now`]): the daemon's monotonic clock and the wall
//!   clock, read once by the caller.
//! - **Outputs** ([`Output`]): orders for the disk's actor or a job's
//!   actor (standby, flush, start, pause, power check, probe again) and
//!   hooks to run. Which process woke a drive is the one fact it cannot
//!   know from its inputs: the caller lends it a [`WakeWitness`] that reads
//!   `/proc` (the daemon's) or nothing (a test's, a replay's). Changes to the disk's state-file entry are kept in
//!   the controller ([`DiskController::state`]) with a flag saying whether
//!   they must reach the file at once ([`DiskController::take_changes`]);
//!   metrics are read from it ([`DiskController::gauges`]). Log records go
//!   through `tracing`, a facade that a subscriber (the daemon's journal
//!   writer, a test's recorder) turns into I/O.
//!
//! The engine inside is `lull-core`'s, built from the same registry and
//! spec as a replay ([`build_network`]), so a controller driven with
//! simulated time over the diskstats deltas of a trace decides exactly what
//! `lull replay` decides on the requests those deltas stand for
//! (`tests/controller_replay.rs`).
//!
//! ```
//! use lull_core::registry::Registry;
//! use lull_core::time::Nanos;
//! use lull_live::config::Config;
//! use lull_live::controller::{Context, DiskController, NoWitness, Now, Order, Output, Settings};
//! use lull_live::diskstats::parse;
//! use lull_live::source::{Family, Sample};
//!
//! // One disk on a 10 s timer, no wear limit to speak of.
//! let registry = lull_live::default_registry();
//! let cfg = Config::parse(
//!     std::path::Path::new("lull.toml"),
//!     "[[disk]]\ndevice = \"sdb\"\nnetwork = \"timer(10s)\"\ntask = \"standby\"\n\
//!      max_spindowns_per_day = 1000\n",
//!     &registry,
//! )
//! .unwrap();
//! let family = Family { disk: "sdb".into(), partitions: vec![], holders: vec![] };
//! let settings = Settings { power_check: Nanos::ZERO, dry_run: false, clock: Nanos::ZERO };
//! let mut disk = DiskController::new(
//!     &registry, &cfg.disks[0], "sdb", "sdb", family, 1, Default::default(), settings,
//!     Nanos::ZERO,
//! )
//! .unwrap();
//!
//! // diskstats of sdb: 100 reads done, then nothing more.
//! let line = |reads: u64| format!("   8      16 sdb {reads} 0 {} 0 0 0 0 0 0 0 0\n", reads * 8);
//! let mut out = Vec::new();
//! let mut standby_at = None;
//! for s in 0..30u64 {
//!     let reads = if s < 5 { 20 * s } else { 100 };
//!     let sample = Sample::new(parse(&line(reads)).unwrap());
//!     let now = Now { mono: Nanos::from_secs(s), unix: 1_700_000_000 + s };
//!     // The shell wakes at the next poll or the engine's deadline: here,
//!     // every second is both.
//!     out.clear();
//!     let mut cx = Context { registry: &registry, witness: &mut NoWitness };
//!     disk.on_poll(now, &sample, false, &mut cx, &mut out);
//!     for o in &out {
//!         if let Output::Order { job: None, order: Order::Start { .. } } = o {
//!             standby_at.get_or_insert(s);
//!         }
//!     }
//! }
//! // The last reads completed by the poll at 5 s: idle from then, standby
//! // ordered 10 s later.
//! assert_eq!(standby_at, Some(15));
//! assert!(disk.state().task_starts >= 1);
//! ```

mod intent;
mod outcome;

use std::path::PathBuf;

use lull_core::actuator::PolicyActuator;
use lull_core::engine::Engine;
use lull_core::event::Event;
use lull_core::network::Network;
use lull_core::registry::Registry;
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;
use tracing::{error, info, warn};

use crate::config::{Backend, DiskConfig, TaskConfig};
use crate::drive::PowerState;
use crate::hooks::HookEvent;
use crate::jobs::{JobGauge, JobsRun, Switch};
use crate::metrics::DiskGauges;
use crate::source::{DiskTracker, Family, Sample};
use crate::state::{DiskState, TransportMemo, Wake};
use crate::task::{Intent, LiveTask};
use crate::wakeup::{Attribution, Snapshot};

/// The time of an input, read once by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
    /// The daemon's monotonic clock (`CLOCK_BOOTTIME` since its start):
    /// what engines, deadlines and durations use.
    pub mono: Nanos,
    /// The wall clock, Unix seconds: for the state file (the wear budget
    /// must survive restarts) and hooks' `LULL_UNIX_TIME`.
    pub unix: u64,
}

/// Settings of the daemon that every disk's decisions depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Ask a standby disk's power state this often (zero: never).
    pub power_check: Nanos,
    /// Decide and log, touch nothing (orders are still given: the actors
    /// answer them with [`Outcome::DryRun`]).
    pub dry_run: bool,
    /// The wall clock at the daemon's time zero (Unix nanoseconds): engines
    /// are told it, so time-of-day skeptics see real hours.
    pub clock: Nanos,
}

/// An order for an actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// Spin `dev` down (standby) / flush the file systems on `devs`
    /// (major, minor) / start or resume the command. The device comes with
    /// the order because a by-id link may point to another kernel name
    /// after a re-plug.
    Start {
        /// The disk's device node now.
        dev: PathBuf,
        /// Device numbers of the disk, its partitions and holders (a
        /// flush's file systems; empty for the other tasks).
        devs: Vec<(u32, u32)>,
    },
    /// Pause the command (nothing for standby and flush).
    Stop,
    /// Read the power state with CHECK POWER MODE (SG_IO backends only:
    /// no process per check).
    CheckPower {
        /// The disk's device node now.
        dev: PathBuf,
    },
    /// The disk is back after it vanished, or its by-id link points to
    /// another kernel device: probe its transport again
    /// ([`crate::transport`]).
    Replugged {
        /// The disk's device node now.
        dev: PathBuf,
    },
    /// Stop the command for good and end.
    Shutdown,
}

/// What an actor did, reported back to the controller.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The drive was spun down, by this command.
    SpunDown(String),
    /// The power check found it in standby already.
    AlreadyStandby,
    /// These file systems were flushed.
    Flushed(Vec<PathBuf>),
    /// The command's pid and start time (clock ticks after boot).
    CommandStarted(u32, Option<u64>),
    /// The paused command was resumed (SIGCONT).
    CommandResumed(u32),
    /// The command was paused (SIGSTOP).
    CommandPaused(u32),
    /// The command ran to its end, with this status.
    CommandExited(u32, String),
    /// The daemon stopped the command (it is stopping or the disk's
    /// configuration changed): not a run to its end.
    CommandStopped(u32, String),
    /// The order was not carried out, for this reason.
    Skipped(String),
    /// CHECK POWER MODE's answer.
    Power(PowerState),
    /// `backend = "auto"` probed the disk's transport (for the state file).
    Transport(TransportMemo),
    /// A dry run: what would have been done.
    DryRun(String),
    /// The order failed.
    Failed(String),
}

/// Environment variables for a hook, beyond those the shell adds.
pub type HookEnv = Vec<(&'static str, String)>;

/// What a controller asks the shell to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Send `order` to the disk's actor (`job: None`) or to the actor of
    /// job `job` of a `jobs` disk.
    Order {
        /// The job (index in the disk's `[[disk.job]]` list), if any.
        job: Option<usize>,
        /// The order.
        order: Order,
    },
    /// The engine decided (a record: the shell has nothing to do for it;
    /// what it decided is carried out by the orders that follow). Its
    /// instant is the engine's: an arrival's, for a stop, which the shell
    /// learns at the next poll.
    Decided(Intent),
    /// Run the disk's hook for `event` with `env` (only given when the
    /// disk has that hook: a disk without one formats nothing).
    Hook {
        /// The event.
        event: HookEvent,
        /// `LULL_DEVICE`, `LULL_TASK`, `LULL_UNIX_TIME`, and those of the
        /// event, in order.
        env: HookEnv,
    },
}

/// The one question about a disk the controller cannot answer from its
/// inputs: which process woke it. The answer needs every process's I/O
/// counters when the drive went to sleep and again when it woke
/// ([`crate::wakeup`]), and it is needed at once, in the same log line as
/// the wake. So the caller lends the controller a witness for the calls
/// that may see a drive sleep or wake: the daemon's reads `/proc`
/// ([`SystemWitness`]); a test or a replay passes [`NoWitness`].
pub trait WakeWitness {
    /// Every process's I/O counters now (a drive just went to sleep).
    fn snapshot(&mut self) -> Snapshot;
    /// Who woke a drive whose users are `devs` (device numbers of the disk,
    /// its partitions and holders), from the counters taken when it went
    /// to sleep.
    fn attribute(&mut self, before: Snapshot, devs: &[(u32, u32)]) -> Attribution;
}

/// A witness that sees nothing: no snapshot, no suspects (what the
/// daemon reports when it could not take one).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoWitness;

impl WakeWitness for NoWitness {
    fn snapshot(&mut self) -> Snapshot {
        Snapshot::default()
    }
    fn attribute(&mut self, _before: Snapshot, _devs: &[(u32, u32)]) -> Attribution {
        Attribution::default()
    }
}

/// The daemon's witness: reads `/proc` ([`crate::wakeup`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemWitness;

impl WakeWitness for SystemWitness {
    fn snapshot(&mut self) -> Snapshot {
        crate::wakeup::snapshot()
    }
    fn attribute(&mut self, before: Snapshot, devs: &[(u32, u32)]) -> Attribution {
        crate::wakeup::attribute(before, devs)
    }
}

/// What the decisions of one call depend on besides its inputs: the
/// components to rebuild a network from after an engine error, and the
/// witness of wakes.
pub struct Context<'a> {
    /// The registry networks are built from.
    pub registry: &'a Registry,
    /// Who woke a drive.
    pub witness: &'a mut dyn WakeWitness,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").finish_non_exhaustive()
    }
}

/// The jobs of a `task = "jobs"` disk, as the controller sees them.
#[derive(Debug)]
struct Jobs {
    run: JobsRun,
}

/// Builds a disk's network for its device: durations relative to the
/// break-even time (`timer(4B)`) and B-scaled defaults resolve against the
/// disk's own B ([`crate::config::task_breakeven`]), and `auto` follows the
/// task ([`crate::config::disk_registry`]). The same path as a replay's
/// network for that task and B.
pub fn build_network(registry: &Registry, cfg: &DiskConfig) -> Result<Network, String> {
    let registry = crate::config::disk_registry(registry, &cfg.task, cfg.breakeven);
    NetworkSpec::parse(&cfg.network, Some(&registry))
        .map_err(|e| e.to_string())
        .and_then(|s| s.build(&registry).map_err(|e| e.to_string()))
}

/// One disk's decisions: see the [module docs](self).
#[derive(Debug)]
pub struct DiskController {
    key: String,
    cfg: DiskConfig,
    generation: u64,
    kernel: String,
    settings: Settings,
    tracker: DiskTracker,
    engine: Engine<Network, PolicyActuator, LiveTask>,
    /// The disk's state-file entry (the shell writes it out).
    st: DiskState,
    /// The entry changed since [`DiskController::take_changes`].
    dirty: bool,
    /// ... and must be written at once.
    urgent: bool,
    /// The entry's presence and kernel name are known to match.
    recorded: Option<bool>,
    standby_since: Option<Nanos>,
    /// A flush runs: its own writes are not foreground I/O.
    flushing: bool,
    /// The flush finished: the next poll's deltas are still its own.
    absorb_next: bool,
    /// The engine started the task but it is not running: the start was
    /// refused (wear budget, break-even, interval), failed, or the command
    /// exited. Cleared at the next start.
    not_running: bool,
    /// When the power state was last asked.
    last_power_check: Nanos,
    /// Device numbers of the disk, its partitions and holders, as of the
    /// last wake-up or power check.
    devs: Vec<(u32, u32)>,
    /// Every process's I/O counters when the drive went to sleep, to tell
    /// what woke it.
    sleep_snapshot: Option<Snapshot>,
    /// Standby failures in a row.
    failures: u32,
    /// No standby attempt before this (after repeated failures).
    retry_at: Option<Nanos>,
    /// `task = "jobs"`: the jobs sharing the disk's idle time.
    jobs: Option<Jobs>,
    /// The first poll of the current idle period (`None`: busy).
    idle_since: Option<Nanos>,
    /// The task started in this idle period: I/O ending it fires
    /// `on_wake`.
    acted: bool,
    /// The length of the last idle period, once I/O ended it (for
    /// `on_task_stop`'s `LULL_IDLE_S`).
    last_idle: Option<Nanos>,
    /// Reused for each poll's events.
    events: Vec<Event>,
}

impl DiskController {
    /// A controller for the disk `key` (its config entry or resolved path)
    /// now named `kernel`, watching `family`, for actors of generation
    /// `generation`, starting at `now` from the state-file entry `st`. The
    /// network is built from `registry`; an error names the network's
    /// fault.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        registry: &Registry,
        cfg: &DiskConfig,
        key: &str,
        kernel: &str,
        family: Family,
        generation: u64,
        st: DiskState,
        settings: Settings,
        now: Nanos,
    ) -> Result<DiskController, String> {
        let network = build_network(registry, cfg)?;
        let jobs = match &cfg.task {
            TaskConfig::Jobs {
                jobs,
                best_effort,
                assume_idle,
            } => Some(Jobs {
                run: JobsRun::admit(key, jobs, *best_effort, *assume_idle, now, settings.clock),
            }),
            _ => None,
        };
        Ok(DiskController {
            key: key.to_string(),
            engine: Self::engine(network, cfg, settings.clock),
            cfg: cfg.clone(),
            generation,
            kernel: kernel.to_string(),
            settings,
            tracker: DiskTracker::new(family),
            st,
            dirty: false,
            urgent: false,
            recorded: None,
            standby_since: None,
            flushing: false,
            absorb_next: false,
            not_running: false,
            last_power_check: now,
            devs: Vec::new(),
            sleep_snapshot: None,
            failures: 0,
            retry_at: None,
            jobs,
            idle_since: None,
            acted: false,
            last_idle: None,
            events: Vec::with_capacity(64),
        })
    }

    fn engine(
        network: Network,
        cfg: &DiskConfig,
        clock: Nanos,
    ) -> Engine<Network, PolicyActuator, LiveTask> {
        Engine::new(
            network,
            PolicyActuator::new(cfg.policy),
            LiveTask::new(cfg.task.name()),
        )
        .with_clock(clock)
    }

    /// The disk's key (config entry or resolved path).
    pub fn key(&self) -> &str {
        &self.key
    }
    /// Its configuration.
    pub fn config(&self) -> &DiskConfig {
        &self.cfg
    }
    /// Its kernel name now.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }
    /// The generation of the actors whose reports are this disk's own.
    pub fn generation(&self) -> u64 {
        self.generation
    }
    /// The family of devices it watches.
    pub fn family(&self) -> &Family {
        self.tracker.family()
    }
    /// Its state-file entry.
    pub fn state(&self) -> &DiskState {
        &self.st
    }
    /// Its state-file entry with the standby time so far counted (what a
    /// save writes, so a crash loses little of it).
    pub fn state_at(&self, now: Nanos) -> DiskState {
        let mut st = self.st.clone();
        if let Some(since) = self.standby_since {
            st.standby_s += (now - since).as_secs_f64();
        }
        st
    }
    /// Gives up the state-file entry (the disk is retired).
    pub fn into_state(self) -> DiskState {
        self.st
    }
    /// Whether the entry changed since the last call, and whether that
    /// change must be written at once (a command's pid, which a restart
    /// after SIGKILL needs; a spin-down attempt, spin-up or wake, which
    /// `lull status` shows); clears both.
    pub fn take_changes(&mut self) -> (bool, bool) {
        (
            std::mem::take(&mut self.dirty),
            std::mem::take(&mut self.urgent),
        )
    }
    /// Whether the drive is in standby (lull's or found so).
    pub fn in_standby(&self) -> bool {
        self.standby_since.is_some()
    }
    /// The earliest time the controller must be polled again, besides the
    /// poll interval: the engine's next deadline and the jobs'.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let jobs = self.jobs.as_ref().and_then(|j| j.run.next_deadline());
        match (self.engine.next_deadline(), jobs) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    /// The names of the jobs of a `jobs` disk, in order.
    pub fn job_name(&self, job: usize) -> Option<&str> {
        self.jobs.as_ref().map(|j| j.run.name(job))
    }

    /// The configuration changed only where it does not touch decisions
    /// (another line, the same settings): keep the engine and what it
    /// learned.
    pub fn set_config(&mut self, cfg: &DiskConfig) {
        debug_assert!(cfg.same_settings(&self.cfg));
        self.cfg = cfg.clone();
    }

    /// The disk is now `kernel` (a by-id link moved after a replug): the
    /// counters start afresh and the transport is probed again.
    pub fn replugged(&mut self, kernel: &str, family: Family, out: &mut Vec<Output>) {
        info!("disk {} is now {}", self.key, kernel);
        self.kernel = kernel.to_string();
        self.recorded = None;
        out.push(Output::Order {
            job: None,
            order: Order::Replugged { dev: self.dev() },
        });
        self.tracker = DiskTracker::new(family);
    }

    /// The disk's partitions or holders changed.
    pub fn set_family(&mut self, family: Family) {
        if *self.tracker.family() != family {
            self.tracker.set_family(family);
        }
    }

    /// The device node now.
    fn dev(&self) -> PathBuf {
        PathBuf::from("/dev").join(&self.kernel)
    }

    /// The device numbers of the disk, its partitions and holders.
    fn sample_devs(&self, sample: &Sample) -> Vec<(u32, u32)> {
        let f = self.tracker.family();
        std::iter::once(&f.disk)
            .chain(&f.partitions)
            .chain(&f.holders)
            .filter_map(|n| sample.dev(n))
            .collect()
    }

    /// The disk's hook for `event`, if it has one, with the disk's
    /// environment (`LULL_DEVICE`, `LULL_TASK`, `LULL_IDLE_S` while an idle
    /// period runs, `LULL_STANDBY_S` while in standby, `LULL_UNIX_TIME`)
    /// and what `extra` makes, called only then (a wake is on the poll
    /// path).
    fn hook_env(
        &self,
        now: Now,
        event: HookEvent,
        extra: impl FnOnce() -> HookEnv,
    ) -> Option<(HookEvent, HookEnv)> {
        self.cfg.hooks.get(event)?;
        let secs = |since: Nanos| format!("{:.3}", (now.mono - since).as_secs_f64());
        let mut env = vec![
            ("LULL_DEVICE", format!("/dev/{}", self.kernel)),
            ("LULL_TASK", self.cfg.task.name().to_string()),
            ("LULL_UNIX_TIME", now.unix.to_string()),
        ];
        if let Some(t) = self.idle_since {
            env.push(("LULL_IDLE_S", secs(t)));
        }
        if let Some(t) = self.standby_since {
            env.push(("LULL_STANDBY_S", secs(t)));
        }
        // `extra` comes last: it overrides (the length of the idle period
        // or the standby that just ended).
        env.extend(extra());
        Some((event, env))
    }

    /// [`DiskController::hook_env`] as an output.
    fn hook(
        &self,
        now: Now,
        event: HookEvent,
        extra: impl FnOnce() -> HookEnv,
        out: &mut Vec<Output>,
    ) {
        if let Some((event, env)) = self.hook_env(now, event, extra) {
            out.push(Output::Hook { event, env });
        }
    }

    /// Records the last decision, in words.
    fn decide(&mut self, now: Now, text: String) {
        self.st.last_decision = text;
        self.st.last_decision_unix = now.unix;
        self.dirty = true;
    }

    /// The drive woke (`cause`: [`Wake::SPINUP`] or [`Wake::FOREIGN`]):
    /// names what woke it, records it, logs `text` with it, and runs
    /// `hooks` (the wake's, with their environment so far) with
    /// `LULL_WOKEN_BY` added.
    fn woke(
        &mut self,
        now: Now,
        cause: &str,
        text: String,
        hooks: Vec<(HookEvent, HookEnv)>,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) {
        let a = self
            .sleep_snapshot
            .take()
            .map(|before| witness.attribute(before, &self.devs))
            .unwrap_or_default();
        let mut wake = Wake {
            unix: now.unix,
            cause: cause.to_string(),
            by: Vec::new(),
        };
        if let Some((comm, by)) = a.suspects {
            *self.st.wakeups.entry(comm).or_default() += 1;
            wake.by = by;
        }
        self.st.last_wake = Some(wake);
        self.dirty = true;
        info!("{text}{}", a.text);
        for (event, mut env) in hooks {
            if let Some(n) = &a.names {
                env.push(("LULL_WOKEN_BY", n.clone()));
            }
            out.push(Output::Hook { event, env });
        }
    }

    /// Handles the diskstats `sample` taken at `now` (`late`: much later
    /// than planned, [`crate::source`]): turns the disk's deltas into
    /// events, pushes them into the engine, advances it to `now`, and acts
    /// on what it decided. Appends what the shell must do to `out`.
    pub fn on_poll(
        &mut self,
        now: Now,
        sample: &Sample,
        late: bool,
        cx: &mut Context<'_>,
        out: &mut Vec<Output>,
    ) {
        let t = now.mono;
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        let absorb = self.flushing || std::mem::take(&mut self.absorb_next);
        let absorbed = if absorb && !late {
            self.tracker.absorb(t, sample)
        } else {
            None
        };
        let o = match absorbed {
            Some(o) => o,
            None => self.tracker.poll(t, sample, late, &mut events),
        };
        if self.recorded != Some(o.present) {
            if self.st.present != o.present || self.st.kernel_name != self.kernel {
                self.st.present = o.present;
                self.st.kernel_name = self.kernel.clone();
                self.dirty = true;
            }
            self.recorded = Some(o.present);
        }
        if o.vanished {
            warn!("disk {} ({}) vanished", self.key, self.kernel);
            self.standby_since = None;
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
            self.idle_since = Some(t);
        }
        if o.active && !absorb {
            self.on_busy(now, sample, cx.witness, out);
        }
        if let TaskConfig::Standby { backend, .. } = self.cfg.task {
            let pc = self.settings.power_check;
            if pc > Nanos::ZERO
                && backend != Backend::Hdparm
                && !self.settings.dry_run
                && o.present
                && t - self.last_power_check >= pc
            {
                self.last_power_check = t;
                self.devs = self.sample_devs(sample);
                out.push(Output::Order {
                    job: None,
                    order: Order::CheckPower { dev: self.dev() },
                });
            }
        }
        let mut failed = None;
        for ev in events.iter() {
            if let Err(e) = self.engine.push(ev) {
                failed = Some(e);
                break;
            }
        }
        self.events = events;
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
            if let Ok(n) = build_network(cx.registry, &self.cfg) {
                self.engine = Self::engine(n, &self.cfg, self.settings.clock);
            }
            // The new engine starts outside any idle period: so do the
            // jobs, until it sees the next one.
            if let Some(j) = self.jobs.as_mut() {
                let switches = j.run.on_idle_end(t);
                self.switch_jobs(switches, out);
            }
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
    }

    /// The poll saw I/O that is not lull's own: an idle period (if any)
    /// ended; a drive in standby spun up.
    fn on_busy(
        &mut self,
        now: Now,
        sample: &Sample,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) {
        let t = now.mono;
        let idle = self.idle_since.map(|since| t - since);
        let env = || {
            idle.map(|idle| vec![("LULL_IDLE_S", format!("{:.3}", idle.as_secs_f64()))])
                .unwrap_or_default()
        };
        if let Some(since) = self.standby_since {
            self.st.spinups += 1;
            self.st.standby_s += (t - since).as_secs_f64();
            self.devs = self.sample_devs(sample);
            let hooks = [HookEvent::Spinup, HookEvent::Wake]
                .into_iter()
                .filter_map(|ev| self.hook_env(now, ev, env))
                .collect();
            let text = format!(
                "disk {}: busy again after {} in standby",
                self.key,
                t - since
            );
            self.woke(now, Wake::SPINUP, text, hooks, witness, out);
            self.dirty = true;
            // Written at once, so `lull status` names the wakers (spin-ups
            // are rare: the wear budget bounds them).
            self.urgent = true;
        } else if self.acted {
            self.st.last_wake = Some(Wake {
                unix: now.unix,
                cause: Wake::IO.to_string(),
                by: Vec::new(),
            });
            self.dirty = true;
            self.hook(now, HookEvent::Wake, env, out);
        }
        self.acted = false;
        self.last_idle = self.idle_since.take().map(|since| t - since);
        self.standby_since = None;
    }

    /// Orders for the jobs' actors that `switches` calls for.
    fn switch_jobs(&self, switches: Vec<Switch>, out: &mut Vec<Output>) {
        let Some(j) = self.jobs.as_ref() else {
            return;
        };
        for s in switches {
            let (job, order) = match s {
                Switch::Start(job) => {
                    info!("disk {}: job {} runs", self.key, j.run.name(job));
                    (
                        job,
                        Order::Start {
                            dev: self.dev(),
                            devs: Vec::new(),
                        },
                    )
                }
                Switch::Stop(job) => {
                    info!("disk {}: job {} pauses", self.key, j.run.name(job));
                    (job, Order::Stop)
                }
            };
            out.push(Output::Order {
                job: Some(job),
                order,
            });
        }
    }

    /// The disk's gauges for the metrics at `now`.
    pub fn gauges(&self, now: Nanos) -> DiskGauges {
        let energy_saved_j = self.cfg.power.as_ref().map(|p| {
            let standby =
                self.st.standby_s + self.standby_since.map_or(0.0, |s| (now - s).as_secs_f64());
            (p.p_active - p.p_sleep) * standby - p.spinup_energy() * self.st.spinups as f64
        });
        DiskGauges {
            key: self.key.clone(),
            task: self.cfg.task.name(),
            running: match &self.jobs {
                Some(j) => j.run.running(),
                None => self.engine.task_running() && !self.not_running,
            },
            in_standby: self.standby_since.is_some(),
            energy_saved_j,
            nodes: self.engine.detector().node_gauges(),
            jobs: self
                .jobs
                .as_ref()
                .map_or_else(Vec::<JobGauge>::new, |j| j.run.gauges(now)),
        }
    }
}

#[cfg(test)]
mod tests;
