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
//! use lull_controller::config::Config;
//! use lull_controller::controller::{Context, DiskController, NoWitness, Now, Order, Output, Settings};
//! use lull_controller::diskstats::parse;
//! use lull_controller::source::{Family, Sample};
//!
//! // One disk on a 10 s timer, no wear limit to speak of.
//! let registry = lull_controller::default_registry();
//! let cfg = Config::parse(
//!     std::path::Path::new("lull.toml"),
//!     "[[disk]]\ndevice = \"sdb\"\nnetwork = \"timer(10s)\"\ntask = \"standby\"\n\
//!      max_spindowns_per_day = 1000\n",
//!     &registry,
//! )
//! .unwrap();
//! let family = Family { disk: "sdb".into(), partitions: vec![], holders: vec![] };
//! let settings = Settings {
//!     power_check: Nanos::ZERO, dry_run: false, clock: Nanos::ZERO, poll: Nanos::from_secs(1),
//!     max_poll: Nanos::from_secs(1), boot_id: None,
//! };
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

/// Logs a line that a `flush`, `command` or `jobs` disk writes at every
/// idle period (its start, its outcome, its stop): at info level until
/// the first idle period's stop has said so, then at debug level
/// ([`Reporter`]). Such a disk can see thousands of
/// idle periods a day; `lull status` and the metrics count them.
macro_rules! routine {
    ($ctl:expr, $($arg:tt)*) => {
        if $ctl.reporter.quiet_routine() {
            tracing::debug!($($arg)*)
        } else {
            tracing::info!($($arg)*)
        }
    };
}

mod intent;
mod learning;
mod outcome;
mod own_io;
mod poll;
mod power;
mod presence;
mod protocol;
mod reporter;
mod standby;

pub use protocol::{
    Context, HookEnv, NoWitness, Now, Order, Outcome, Output, Settings, Spinner, WakeWitness,
};

use std::path::PathBuf;

use lull_activity::{PollKind, Record, Session, Shadow, ShadowReport};
use lull_core::actuator::PolicyActuator;
use lull_core::engine::Engine;
use lull_core::event::Event;
use lull_core::network::Network;
use lull_core::registry::Registry;
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;
use tracing::info;

use crate::config::{DiskConfig, TaskConfig};
use crate::gauges::DiskGauges;
use crate::hooks::HookEvent;
use crate::jobs::{JobGauge, JobsRun};
use crate::source::{DiskTracker, Family, Sample};
use crate::state::{DiskState, Wake};
use crate::task::LiveTask;
use crate::wakeup::Snapshot;
use learning::Learning;
use own_io::OwnIo;
use power::Power;
use presence::Presence;
use reporter::Reporter;
use standby::StandbyPolicy;

/// The jobs of a `task = "jobs"` disk, as the controller sees them.
#[derive(Debug)]
struct Jobs {
    run: JobsRun,
}

/// Builds a disk's network for its device: durations relative to the
/// break-even time (`timer(4B)`) and B-scaled defaults resolve against the
/// disk's own B ([`DiskConfig::breakeven`], from its drive's profile), and `auto` follows the
/// task ([`crate::config::disk_registry`]). The same path as a replay's
/// network for that task and B.
pub fn build_network(registry: &Registry, cfg: &DiskConfig) -> Result<Network, String> {
    let registry = crate::config::disk_registry(registry, &cfg.task, cfg.breakeven());
    NetworkSpec::parse(&cfg.network, Some(&registry))
        .map_err(|e| e.to_string())
        .and_then(|s| s.build_online(&registry).map_err(|e| e.to_string()))
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
    /// Whether the disk is there ([`presence`]).
    presence: Presence,
    /// Whether the drive sleeps, and since when ([`power`]).
    power: Power,
    /// The task's own I/O: a flush's, a command's ([`own_io`]).
    own_io: OwnIo,
    /// Since when the command runs (started or resumed, not paused since):
    /// its run time goes to [`DiskState::command_s`] when it is paused,
    /// exits or is stopped.
    command_since: Option<Nanos>,
    /// The engine started the task but it is not running: the start was
    /// refused (wear budget, break-even, interval), failed, or the command
    /// exited. Cleared at the next start.
    not_running: bool,
    /// Device numbers of the disk, its partitions and holders, as of the
    /// last wake-up or power check.
    devs: Vec<(u32, u32)>,
    /// When a standby (or a command) may start, and what the last one
    /// cost ([`standby`]).
    standby: StandbyPolicy,
    /// `task = "jobs"`: the jobs sharing the disk's idle time.
    jobs: Option<Jobs>,
    /// The first poll of the current idle period (`None`: busy).
    idle_since: Option<Nanos>,
    /// When the current idle period began, in Unix seconds, when it began
    /// before this controller took it up (a reload's or a restart's
    /// continuing run, [`DiskController::continue_from`]): `lull status`
    /// shows the disk idle since then, not since the takeover.
    idle_began_unix: Option<u64>,
    /// What the log has said already ([`reporter`]).
    reporter: Reporter,
    /// The engine's next deadline when the state last took it
    /// ([`DiskController::note_timing`]): a deadline that passes and
    /// gives way to another (`auto`'s decision point, then its fallback's
    /// timeout) is news for `lull status` and the metrics.
    noted_deadline: Option<Nanos>,
    /// The task started in this idle period: I/O ending it fires
    /// `on_wake`.
    acted: bool,
    /// The length of the last idle period, once I/O ended it (for
    /// `on_task_stop`'s `LULL_IDLE_S`).
    last_idle: Option<Nanos>,
    /// Reused for each poll's events.
    events: Vec<Event>,
    /// `standby` with a power model: the shadow evaluation
    /// ([`lull_activity::shadow`]), fed every activity record.
    shadow: Option<Shadow>,
    /// The session record was given (at the first poll that saw the disk).
    session_sent: bool,
    /// The instant this controller took its disk over from the one a
    /// reload retired, idle ([`DiskController::continue_from`]): its
    /// session says it continues that run, and its first record is a
    /// mark then.
    continued_at: Option<Nanos>,
    /// Where the previous run left the disk, when a clean stop left it
    /// idle ([`DiskController::resume_idle`]); taken from the state-file
    /// entry, so that no later save keeps it.
    idle_at_stop: Option<crate::state::IdleAtStop>,
    /// When the previous run stopped (Unix seconds), when this run
    /// continues its idle period ([`DiskController::resume_idle`]): a
    /// standby it takes up counts from then.
    continued_stop_unix: Option<u64>,
    /// The instant of the last activity record.
    last_record: Option<Nanos>,
    /// The Unix day of the last poll (a new one logs the shadow's
    /// summary of the day before).
    day: Option<u64>,
    /// When what the network learned is kept ([`learning`]).
    learning: Learning,
    /// The last poll.
    polled_at: Option<Nanos>,
}

/// The longest stretch of quiet polls without an activity record: a log
/// cut short still tells how long the disk was watched to within this.
pub const MARK_EVERY: Nanos = Nanos::from_secs(60);

/// The shortest interval between two polls while a `command` or `jobs`
/// disk's command runs ([`DiskController::task_poll`]): ten polls a
/// second, a few hundred microseconds of CPU a second, and only while
/// a command runs in the disk's idle time.
pub const TASK_POLL: Nanos = Nanos::from_millis(100);

/// How long the bytes a task's command read may wait for a poll that
/// shows them on the disk: a queue of reads submitted at once completes
/// over a few hundred milliseconds on a spinning drive, more than one of
/// the polls every [`TASK_POLL`] while the command runs.
pub const OWN_READ_MEMORY: Nanos = Nanos::from_secs(1);

/// How long the bytes a task's command moved may wait for a poll that
/// shows them on the disk: the kernel writes a dirty page back within
/// `dirty_expire_centisecs` (30 s by default) plus a writeback interval
/// (5 s), and a poll may come later still.
pub const OWN_IO_MEMORY: Nanos = Nanos::from_secs(60);

/// What a new [`DiskController`] is made of, by name
/// ([`DiskController::create`]): the nine positional arguments of
/// [`DiskController::new`], which a caller could swap unnoticed (`key`
/// and `kernel` are both `&str`).
#[derive(Debug)]
pub struct NewDisk<'a> {
    /// The registry the network is built from.
    pub registry: &'a Registry,
    /// The disk's config entry.
    pub cfg: &'a DiskConfig,
    /// The disk's state-file key (its config entry or resolved path).
    pub key: &'a str,
    /// Its kernel name now (`sdb`).
    pub kernel: &'a str,
    /// The disk, its partitions and holders.
    pub family: Family,
    /// The generation of the actors its orders go to.
    pub generation: u64,
    /// Its state-file entry.
    pub state: DiskState,
    /// The daemon-wide settings.
    pub settings: Settings,
    /// The instant it starts at.
    pub now: Nanos,
}

impl DiskController {
    /// A controller for `disk` ([`NewDisk`]): the network is built from
    /// its registry; an error names the network's fault.
    pub fn create(disk: NewDisk<'_>) -> Result<DiskController, String> {
        DiskController::new(
            disk.registry,
            disk.cfg,
            disk.key,
            disk.kernel,
            disk.family,
            disk.generation,
            disk.state,
            disk.settings,
            disk.now,
        )
    }

    /// A controller for the disk `key` (its config entry or resolved path)
    /// now named `kernel`, watching `family`, for actors of generation
    /// `generation`, starting at `now` from the state-file entry `st`. The
    /// network is built from `registry`; an error names the network's
    /// fault. The positional form of [`DiskController::create`], kept for
    /// the callers that predate it (`tests/controller_replay.rs`).
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
        let mut st = st;
        // The previous run's instants: its idle period and its next
        // decision ended with it. Until this run's first poll finds the
        // disk idle, the state says none (`lull status` read "idle for
        // 18s" of a period the last run saw, while this one saw I/O).
        st.idle_since_unix = None;
        st.next_decision_unix = None;
        // Wakers an older lull counted under each kernel worker's own
        // name, counted by their work as this one counts them
        // ([`crate::wakeup::tally_name`]).
        st.wakeups = crate::wakeup::tally(st.wakeups.iter().map(|(c, &n)| (c.as_str(), n)));
        let idle_at_stop = st.idle_at_stop.take();
        let engine = Self::engine_from_state(registry, cfg, network, key, &mut st, settings.clock)?;
        // A standby the previous run left began when it says.
        let power = Power::new(&st, now);
        Ok(DiskController {
            key: key.to_string(),
            engine,
            cfg: cfg.clone(),
            generation,
            kernel: kernel.to_string(),
            settings,
            tracker: DiskTracker::new(family),
            st,
            dirty: false,
            urgent: false,
            presence: Presence::default(),
            power,
            command_since: None,
            own_io: OwnIo::default(),
            not_running: false,
            devs: Vec::new(),
            standby: StandbyPolicy::default(),
            jobs,
            idle_since: None,
            reporter: Reporter::default(),
            noted_deadline: None,
            acted: false,
            last_idle: None,
            events: Vec::with_capacity(64),
            shadow: Self::shadow_for(cfg, settings.poll),
            session_sent: false,
            continued_at: None,
            idle_at_stop,
            continued_stop_unix: None,
            idle_began_unix: None,
            last_record: None,
            day: None,
            learning: Learning::new(),
            polled_at: None,
        })
    }

    /// The engine of the disk `key`, on `network` built for `cfg`, with
    /// what its state entry `st` says the network learned restored (and
    /// kept in `st`); a network that cannot take it back is built again
    /// from `registry` and learns from scratch. `clock`: the engine's
    /// zero on the wall clock.
    fn engine_from_state(
        registry: &Registry,
        cfg: &DiskConfig,
        network: Network,
        key: &str,
        st: &mut DiskState,
        clock: Nanos,
    ) -> Result<Engine<Network, PolicyActuator, LiveTask>, String> {
        let mut engine = Self::engine(network, cfg, clock);
        if let Some(saved) = st.learned.take() {
            match Self::restore_learned(&mut engine, &saved, cfg) {
                Ok(()) => {
                    info!(
                        "disk {key}: what its network learned is restored ({} idle periods{})",
                        saved.idle_periods,
                        since_text(saved.since_unix)
                    );
                    st.learned = Some(saved);
                }
                Err(why) => {
                    tracing::warn!(
                        "disk {key}: its learned state is not used ({why}); its network learns from scratch"
                    );
                    // A half-restored network is never used.
                    engine = Self::engine(build_network(registry, cfg)?, cfg, clock);
                }
            }
        }
        Ok(engine)
    }

    /// Restores `saved` into a fresh `engine` for `cfg`. At the engine's
    /// time zero: the first poll's events come before the instant the
    /// controller is built, and the engine must not have passed them.
    /// Times in the state (relative to its save) that fall before the
    /// daemon's start are forgotten, as long ago; a periodic source's
    /// phase is carried over the downtime by the wall clock (the engine's
    /// [`Settings::clock`]: a cron job kept its phase while the daemon
    /// was down).
    fn restore_learned(
        engine: &mut Engine<Network, PolicyActuator, LiveTask>,
        saved: &lull_core::learned::Snapshot,
        cfg: &DiskConfig,
    ) -> Result<(), String> {
        saved
            .fits(&cfg.network, Some(cfg.breakeven()))
            .map_err(|e| e.to_string())?;
        engine
            .restore_learned(&saved.parts)
            .map_err(|e| e.to_string())
    }

    /// After an engine error, gives the fresh engine (outside any idle
    /// period) what the network had learned up to its last snapshot,
    /// restored at `t` as a restart would at its start; a network that
    /// cannot take it back starts from scratch.
    fn resume_learned(&mut self, t: Nanos, registry: &Registry) {
        let Some(saved) = self.st.learned.clone() else {
            return;
        };
        let restored = self.engine.advance(t).is_ok()
            && Self::restore_learned(&mut self.engine, &saved, &self.cfg).is_ok();
        if restored {
            info!(
                "disk {}: its detectors resume from what they had learned ({} idle periods)",
                self.key, saved.idle_periods
            );
        } else if let Ok(n) = build_network(registry, &self.cfg) {
            self.engine = Self::engine(n, &self.cfg, self.settings.clock);
        }
    }

    /// Keeps what the network has learned in the state (at the poll that
    /// ended an idle period, once the engine has seen its events; and at
    /// stop), counting the idle periods of a poll or longer that ended
    /// since: those the shadow counts, so that `lull status`'s two counts
    /// agree on a fresh run.
    fn keep_learned(&mut self, now: Now) {
        let parts = self.engine.save_learned_at(now.mono);
        if parts.iter().all(Option::is_none) {
            return;
        }
        let ended = self.learning.kept(now.mono);
        let (periods, since) = self
            .st
            .learned
            .as_ref()
            .map_or((0, now.unix), |l| (l.idle_periods, l.since_unix));
        self.st.learned = Some(lull_core::learned::Snapshot {
            format: lull_core::learned::SNAPSHOT_FORMAT,
            network: self.cfg.network.clone(),
            breakeven_ns: self.cfg.breakeven().0,
            idle_periods: periods + ended,
            since_unix: since,
            parts,
        });
    }

    /// The shadow evaluation of a `standby` disk with a power model,
    /// judging fixed timeouts from the daemon's `poll` on (it cannot act
    /// sooner; [`Shadow::with_floor`]).
    fn shadow_for(cfg: &DiskConfig, poll: Nanos) -> Option<Shadow> {
        match &cfg.task {
            TaskConfig::Standby {
                compare_timeout, ..
            } => {
                let shadow = Shadow::for_profile(&cfg.profile)?;
                let shadow = match compare_timeout {
                    Some(t) => shadow.with_your_timeout(*t),
                    None => shadow,
                };
                Some(shadow.with_floor(poll))
            }
            _ => None,
        }
    }

    /// The [`lull_activity::drive_id`] of this disk's drive, when its
    /// serial number is known: the activity log's sessions carry it, so
    /// that the evidence of one drive is never mixed with another's that
    /// had the same key before.
    pub fn drive_id(&self) -> Option<u64> {
        self.st
            .identity
            .as_ref()
            .and_then(|i| i.serial.as_deref())
            .map(lull_activity::drive_id)
    }

    /// The session record of this controller's activity log: what a
    /// segment starts with.
    pub fn session(&self) -> Session {
        Session {
            clock: self.settings.clock,
            poll: self.settings.poll,
            key: self.key.clone(),
            kernel: self.kernel.clone(),
            drive: self
                .cfg
                .power()
                .map(lull_tasks::PowerModel::spec)
                .unwrap_or_default(),
            task: self.cfg.task.name().to_string(),
            network: self.cfg.network.clone(),
            max_spindowns_per_day: match self.cfg.task {
                TaskConfig::Standby {
                    max_spindowns_per_day,
                    ..
                } => Some(max_spindowns_per_day),
                _ => None,
            },
            saves_learned: true,
            dry_run: self.settings.dry_run,
            drive_id: self.drive_id(),
            continues: self.continued_at.is_some(),
        }
    }

    /// The disk's tracker, for the controller that a reload starts in
    /// this one's place to continue from ([`DiskController::continue_from`]),
    /// when the disk is present and idle (nothing in flight, an idle
    /// period under way) and its task either not started in it or done
    /// (the drive asleep). `None` otherwise, and the new controller starts
    /// with a baseline, as at a restart: a start the wear budget refused
    /// and would try again, or a command running, belongs to this
    /// controller's engine, which a replay of the log cannot stop halfway
    /// through an idle period.
    pub fn handover(&self) -> Option<DiskTracker> {
        let st = &self.st;
        let task_done = !self.engine.task_running() || self.in_standby();
        (st.present
            && !self.presence.detached()
            && !self.tracker.holding()
            && self.idle_since.is_some()
            && task_done)
            .then(|| self.tracker.clone())
    }

    /// Takes the disk over at `now` from the controller a reload retired,
    /// with its `tracker` ([`DiskController::handover`]): no baseline
    /// poll, the counters go on, and the engine is idle from `now`, as
    /// after a baseline. The idle period the retired controller was in
    /// goes on in the evidence: a reload while the disk sleeps cost every
    /// reference (hd-idle's timeout, the best fixed one, the oracle) its
    /// timeout's sleep again and a spin-up, and lull's own row a spin-up,
    /// that the drive never made (an audit: lull's `timer(60s)` beat the
    /// identical 60 s reference by 14 %). `began_unix` is when that idle
    /// period began (Unix seconds, the retired controller's
    /// [`DiskState::idle_since_unix`]), which `lull status` and the metrics
    /// go on showing; the network's own count starts again at `now`. Call
    /// it before the first poll.
    pub fn continue_from(&mut self, tracker: DiskTracker, now: Nanos, began_unix: Option<u64>) {
        self.tracker = tracker.handed_over(now);
        self.continued_at = Some(now);
        let _ = self.engine.advance(now);
        // What was learned, taken up again at `now`: restored at the
        // engine's time zero, its times would lie `now` further back (a
        // reload after days would forget the wear pacer's day and scores).
        if let Some(saved) = self.st.learned.clone()
            && Self::restore_learned(&mut self.engine, &saved, &self.cfg).is_err()
        {
            tracing::warn!(
                "disk {}: its learned state did not restore at the reload",
                self.key
            );
        }
        if self.engine.assume_idle() {
            let _ = self.engine.advance(now);
        }
        self.idle_since = Some(now);
        self.idle_began_unix = began_unix;
        // The first poll writes the idle period it took up.
        self.dirty = true;
    }

    /// Takes the disk up idle at `now`, as the last run left it, when that
    /// run stopped cleanly while the disk was idle and watched
    /// ([`crate::state::IdleAtStop`], written by
    /// [`DiskController::finish`]) in this boot, under this kernel name,
    /// and `sample` (diskstats at this run's first poll) shows its
    /// completed I/O unchanged since and nothing in flight: no process
    /// touched it while no daemon watched, so its idle period went on.
    /// The run then continues the last one
    /// ([`DiskController::continue_from`]): no baseline poll, no busy
    /// request over the downtime, and every reference (hd-idle's timeout,
    /// the best fixed one, the oracle) and lull's own drive sleep through
    /// the restart, as the drive did. Before, a restart charged each of
    /// them a spin-up and its timeout's sleep again. Otherwise the first
    /// poll is a baseline, as before. Called by the first
    /// [`DiskController::on_poll`].
    fn resume_idle(&mut self, sample: &Sample, now: Nanos) {
        let Some(at_stop) = self.idle_at_stop.take() else {
            return;
        };
        let same_boot = self
            .settings
            .boot_id
            .is_some_and(|b| crate::state::parse_boot_id(&at_stop.boot_id) == Some(b));
        let Some(c) = sample.get(&self.tracker.family().disk) else {
            return;
        };
        if !same_boot
            || at_stop.kernel != self.kernel
            || poll::io_mark(c) != at_stop.io
            || c.in_flight > 0
            || self.session_sent
            || self.continued_at.is_some()
        {
            return;
        }
        let mut tracker = DiskTracker::new(self.tracker.family().clone());
        let mut events = Vec::new();
        let o = tracker.poll(now, sample, false, &mut events);
        if !o.present || tracker.holding() {
            return;
        }
        info!(
            "disk {}: idle through the restart (no I/O since the last run stopped): its idle period goes on",
            self.key
        );
        self.continue_from(tracker, now, at_stop.idle_since_unix);
        self.continued_stop_unix = at_stop.stopped_unix;
    }

    /// Gives the shadow evaluation the records of earlier runs (the disk's
    /// activity log, read by the shell at start), so its windows span
    /// restarts. Call it before the first poll.
    pub fn restore(&mut self, records: impl IntoIterator<Item = Record>) {
        for r in records {
            self.restore_record(&r);
        }
        if let Some(s) = self.shadow.as_mut() {
            s.settle();
        }
    }

    /// [`DiskController::restore`] one record at a time, for a caller
    /// that streams the log (call `restore` with nothing at the end, to
    /// book what the last record left pending).
    pub fn restore_record(&mut self, record: &Record) {
        if let Some(s) = self.shadow.as_mut() {
            s.feed(record);
        }
    }

    /// Whether it keeps a shadow evaluation (`standby` with a power model).
    pub fn has_shadow(&self) -> bool {
        self.shadow.is_some()
    }

    /// The shadow evaluation's figures (`standby` disks with a power
    /// model).
    pub fn shadow(&self) -> Option<ShadowReport> {
        self.shadow.as_ref().map(Shadow::report)
    }

    /// Gives an activity record: the shadow sees it, the shell logs it.
    fn activity(&mut self, rec: Record, out: &mut Vec<Output>) {
        if let Some(t) = rec.time() {
            self.last_record = Some(t);
        }
        if let Some(s) = self.shadow.as_mut() {
            s.feed(&rec);
        }
        out.push(Output::Activity(rec));
    }

    /// The shell wrote the state file after the last poll: the activity
    /// log records which poll's learned state it holds
    /// ([`Record::Learned`]), when that changed. A daemon that crashes
    /// resumes from it, and a replay of the log across the crash resumes
    /// from the same instant. Not needed after [`DiskController::finish`]
    /// (a clean stop saves at its end).
    pub fn state_written(&mut self, out: &mut Vec<Output>) {
        let Some(t) = self.polled_at else {
            return;
        };
        if let Some(at) = self.learning.news_for_log(self.session_sent) {
            self.activity(Record::Learned { t, at }, out);
        }
    }

    /// The daemon stops watching the disk at `now` (a clean stop, a
    /// configuration change that replaces the controller): the log's last
    /// record says so, and what the network learned is kept in the state
    /// (a first snapshot is dated `now.unix`), with, when the disk is idle
    /// and its task not halfway through, where it stood
    /// ([`crate::state::IdleAtStop`]): the next run in this boot that finds
    /// the disk untouched continues its idle period.
    pub fn finish(&mut self, now: Now, out: &mut Vec<Output>) {
        if self.session_sent {
            self.activity(Record::End(now.mono), out);
        }
        // The period in progress ends here, as the shadow ends it when the
        // log's next run begins.
        self.learning.end_at(now.mono, self.settings.poll);
        self.keep_learned(now);
        // Idle and watched: the next run in this boot may take the idle
        // period up ([`DiskController::resume_idle`]).
        self.st.idle_at_stop = match (self.handover(), self.settings.boot_id) {
            (Some(t), Some(boot)) => t.counters().map(|c| crate::state::IdleAtStop {
                boot_id: format!("{boot:032x}"),
                io: poll::io_mark(&c),
                kernel: self.kernel.clone(),
                idle_since_unix: self.idle_began_unix.or(self.st.idle_since_unix),
                stopped_unix: Some(now.unix),
            }),
            _ => None,
        };
        // The standby in progress counts to here: the entry it leaves
        // ([`DiskController::into_state`]) is what the state file keeps
        // (a stop lost the standby so far, which the saves before it had
        // counted, and `lull status` saw the time in standby go back).
        self.power.counted_to(now.mono, &mut self.st);
    }

    /// The poll's record, a mark, or nothing (a quiet poll).
    fn record_poll(&mut self, t: Nanos, poll: Option<lull_activity::Poll>, out: &mut Vec<Output>) {
        let Some(p) = poll else { return };
        let (learning, floor) = (&mut self.learning, self.settings.poll);
        p.pieces(|piece| learning.piece(piece, floor));
        if !self.session_sent {
            self.session_sent = true;
            let s = self.session();
            self.activity(Record::Session(s), out);
            // The run continues from where it took over.
            if let Some(at) = self.continued_at {
                self.activity(Record::Mark(at), out);
            }
        }
        let quiet = p.kind == PollKind::Normal
            && p.counts.ops() == 0
            && p.held_since.is_none()
            && !p.held_after;
        if !quiet {
            self.activity(Record::Poll(p), out);
        } else if self.last_record.is_none_or(|l| t - l >= MARK_EVERY) {
            self.activity(Record::Mark(t), out);
        }
    }

    /// Ends a poll for the shadow: books what it saw, and at the first
    /// poll of a new UTC day logs the last 24 hours in one line.
    fn settle_shadow(&mut self, now: Now) {
        let Some(s) = self.shadow.as_mut() else {
            return;
        };
        // Books the poll's pieces; and a quiet poll writes no record (a
        // mark a minute), so the time watched still reaches this poll for
        // `lull status`.
        s.watched_to(now.mono);
        let day = now.unix / 86_400;
        if self.day.replace(day).is_some_and(|d| d != day) {
            let r = s.report();
            if let Some(line) = summary_line(&r) {
                info!("disk {}: {line}", self.key);
            }
        }
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
        .with_clock(lull_core::time::UnixTime::since_epoch(clock))
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
        st.standby_s += self.power.standby_so_far(now);
        if let Some(since) = self.command_since {
            st.command_s += (now - since).as_secs_f64();
        }
        st.shadow = self.shadow();
        st
    }
    /// Gives up the state-file entry (the disk is retired; its command,
    /// if it runs, is stopped and reported to the retired controller).
    pub fn into_state(self) -> DiskState {
        let mut st = self.st;
        st.shadow = self.shadow.as_ref().map(Shadow::report);
        st
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
    /// Whether the daemon asks this drive its power state (CHECK POWER
    /// MODE over SG_IO): a standby disk with a transport that answers, in
    /// a daemon that acts, with power checks on.
    fn checks_power(&self) -> bool {
        match self.cfg.task {
            TaskConfig::Standby { backend, .. } => {
                backend != crate::config::Backend::Hdparm
                    && self.settings.power_check > Nanos::ZERO
                    && !self.settings.dry_run
                    && self.cfg.left_alone.is_none()
                    && !crate::transport::left_alone(backend, self.st.transport.as_ref())
            }
            _ => false,
        }
    }
    /// Whether the drive is in standby (lull's or found so).
    pub fn in_standby(&self) -> bool {
        self.power.in_standby()
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
    /// How long the daemon may wait, from `now`, before it reads
    /// diskstats for this disk again (issue 79). While I/O runs, every
    /// `poll`. While the disk is idle (asleep too), a tenth of the time it
    /// has been idle, within `poll` and `max_poll`: hd-idle polls at a
    /// tenth of its timeout, and a disk idle for ten minutes is likely
    /// idle for a while more. Decisions keep their instants: each is a
    /// wake-up of its own ([`DiskController::next_deadline`]), judged on
    /// fresh counters. What a longer poll costs is when I/O is seen: the
    /// I/O that ends an idle period of length `L` is seen up to
    /// `L / 10` late (within the bounds), so the next period, and the
    /// decisions in it, start that much later (`tests/controller_replay.rs`
    /// bounds it for timers).
    pub fn poll_every(&self, now: Nanos) -> Nanos {
        let fine = self.settings.poll;
        if let Some(p) = self.task_poll() {
            return p.min(fine);
        }
        let coarse = self.settings.max_poll;
        if coarse <= fine || !self.st.present || self.presence.detached() || self.tracker.holding()
        {
            return fine;
        }
        match self.idle_since {
            Some(since) => Nanos(now.saturating_sub(since).0 / 10).clamp(fine, coarse),
            None => fine,
        }
    }

    /// How often the daemon should read diskstats for this disk now, when
    /// it needs more than every `poll`: while a `command` disk's command
    /// or a `jobs` disk's job runs (not in a dry run), every
    /// [`TASK_POLL`] (or its B, when longer). Its B is one random access,
    /// far below a poll, so the foreground's return is otherwise seen up
    /// to a poll late while the command competes with it; polling faster
    /// only while a command runs pauses it within [`TASK_POLL`] and costs
    /// the extra polls only then. A standby disk never asks: nothing
    /// competes with the foreground there, and a drive in standby can
    /// wait for the next poll to be found awake.
    pub fn task_poll(&self) -> Option<Nanos> {
        let command = match self.cfg.task {
            TaskConfig::Jobs { .. } => self.jobs.is_some(),
            TaskConfig::Command { .. } => self.st.command_pid.is_some(),
            TaskConfig::Standby { .. } | TaskConfig::Flush => false,
        };
        (command && self.task_runs() && !self.settings.dry_run)
            .then(|| self.cfg.breakeven().max(TASK_POLL))
    }

    /// Whether the idle task really runs (`lull_task_running`): a `jobs`
    /// disk's job has the time, or the engine started the task and it was
    /// neither refused nor failed nor exited.
    fn task_runs(&self) -> bool {
        match &self.jobs {
            Some(j) => j.run.running(),
            None => self.engine.task_running() && !self.not_running,
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
        let mut c = cfg.clone();
        c.keep_drive(&self.cfg);
        self.cfg = c;
    }

    /// The disk is now `kernel` (a by-id link moved after a replug): the
    /// counters start afresh and the transport is probed again.
    pub fn replugged(&mut self, kernel: &str, family: Family, out: &mut Vec<Output>) {
        info!("disk {} is now {}", self.key, kernel);
        self.kernel = kernel.to_string();
        self.presence.replugged();
        out.push(Output::Order {
            job: None,
            order: Order::Replugged { dev: self.dev() },
        });
        self.tracker = self.tracker.moved(family);
    }

    /// Marks the disk detached (`true`: its path is gone or points to
    /// another kernel name) or attached. A detached disk counts as
    /// absent at the next polls, so that a disk replugged under its old
    /// kernel name (another USB disk taking `sdb` while this one's link
    /// is gone) is neither watched nor spun down on its behalf.
    /// Returns whether it was attached before.
    pub fn detach(&mut self, detached: bool) -> bool {
        self.presence.detach(detached)
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

    /// How long the current idle period has lasted at `now`: from the
    /// run before's start of it when this run took it up (to the second),
    /// else from this run's.
    pub(super) fn idle_len(&self, now: Now) -> Option<Nanos> {
        let since = self.idle_since?;
        let here = now.mono.saturating_sub(since);
        Some(match self.idle_began_unix {
            Some(b) => here.max(Nanos::from_secs(now.unix.saturating_sub(b))),
            None => here,
        })
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
        if let Some(idle) = self.idle_len(now) {
            env.push(("LULL_IDLE_S", format!("{:.3}", idle.as_secs_f64())));
        }
        if let Some(t) = self.power.standby_since() {
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

    /// The drive woke (`cause`: [`Wake::SPINUP`] or [`Wake::FOREIGN`],
    /// after `moved` bytes of I/O, 0 when none was counted, from the
    /// standby whose snapshot is `slept`, [`Power::woke`]): names what
    /// woke it, records it, logs `text` with it, and runs
    /// `hooks` (the wake's, with their environment so far) with
    /// `LULL_WOKEN_BY` added.
    fn woke(
        &mut self,
        now: Now,
        (cause, moved, slept): (&str, u64, Option<Snapshot>),
        text: String,
        hooks: Vec<(HookEvent, HookEnv)>,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) {
        let a = slept
            .map(|before| witness.attribute(before, &self.devs, moved))
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

    /// The disk's gauges for the metrics at `now`.
    pub fn gauges(&self, now: Nanos) -> DiskGauges {
        let energy_saved_j = self.cfg.power().map(|p| {
            let standby = self.st.standby_s + self.power.standby_so_far(now);
            (p.p_active - p.p_sleep) * standby - p.spinup_energy() * self.st.spinups as f64
        });
        DiskGauges {
            key: self.key.clone(),
            task: self.cfg.task.name(),
            running: self.task_runs(),
            in_standby: self.power.shows_standby(),
            power_since_unix: self.power.since_unix(),
            energy_saved_j,
            shadow: self.shadow(),
            nodes: self.engine.detector().node_gauges(),
            jobs: self
                .jobs
                .as_ref()
                .map_or_else(Vec::<JobGauge>::new, |j| j.run.gauges(now)),
        }
    }
}

/// The shadow's last 24 hours in one line (the daily log summary), or
/// `None` before any idle period ended.
pub fn summary_line(r: &ShadowReport) -> Option<String> {
    let w = r.windows.first()?;
    if w.idle_periods == 0 {
        return None;
    }
    let p = |name: &str| w.policy(name);
    let (lull, hd, best, oracle) = (
        p("lull")?,
        p("hd-idle-10min")?,
        p("best-fixed")?,
        p("oracle")?,
    );
    let timeout = |t: Option<f64>| crate::units::secs(t.unwrap_or(0.0));
    let energy = crate::units::energy;
    let yours = p(lull_activity::shadow::YOUR_TIMEOUT)
        .map(|y| {
            format!(
                ", your timeout ({}) {} ({})",
                timeout(y.timeout_s),
                energy(y.saved_wh),
                y.spinups
            )
        })
        .unwrap_or_default();
    Some(format!(
        "last 24 h: lull saved {} with {} spin-ups; hd-idle's 10 min would have saved {} ({}){yours}, \
         the best fixed timeout ({}) {} ({}), the oracle {} ({})",
        energy(lull.saved_wh),
        lull.spinups,
        energy(hd.saved_wh),
        hd.spinups,
        timeout(best.timeout_s),
        energy(best.saved_wh),
        best.spinups,
        energy(oracle.saved_wh),
        oracle.spinups
    ))
}

#[cfg(test)]
mod tests;

/// `, learning since DATE` for a Unix time (nothing for 0).
fn since_text(unix: u64) -> String {
    if unix == 0 {
        return String::new();
    }
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix);
    format!(", learning since {}", humantime::format_rfc3339_seconds(t))
}
