//! The daemon's shell: the poll loop and the disk table around the
//! per-disk [controllers](crate::controller), which make every decision.
//!
//! # Shape
//!
//! - **The poll loop** (one task on a current-thread tokio runtime) sleeps
//!   until the next poll or the earliest controller deadline, whichever
//!   comes first, reads diskstats, and hands the sample to every disk's
//!   [`DiskController`](crate::controller::DiskController) with the time (one clock reading per poll). Every
//!   wake-up is a poll, so events are always pushed in time order (the
//!   engine never ran ahead of the counters) and a deadline is judged on
//!   fresh counters. What the controllers return is carried out here:
//!   orders go to the actors, hooks to the [`HookRunner`], snapshots for
//!   "what woke my disk" are taken ([`crate::wakeup`]).
//! - **An actor per disk** (the `actor` module) executes orders: spawns,
//!   pauses and resumes the command, runs `hdparm`/SG_IO/`syncfs`, and
//!   reports outcomes back on a channel, which the loop hands to the
//!   disk's controller. The loop never waits for a drive.
//! - **Persistence** (the `persist` module): the controllers keep their disks'
//!   state-file entries; the loop writes the file and the metrics when due.
//! - **Time** is `CLOCK_BOOTTIME` since start: monotonic, immune to
//!   wall-clock jumps, and it keeps counting in suspend, so a poll that
//!   comes much later than planned is recognised and handled as described
//!   in [`crate::source`].
//! - **Signals**: SIGHUP reloads (a config that does not validate is
//!   rejected with its error and the running one kept); SIGTERM/SIGINT stop
//!   commands cleanly (SIGCONT, then SIGTERM to the process group, SIGKILL
//!   after 10 s), save the state and exit. systemd is told READY, WATCHDOG
//!   (at half `WatchdogSec`, from the loop itself, so a stuck loop is
//!   restarted), RELOADING and STOPPING.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use lull_core::registry::Registry;
use lull_core::time::Nanos;
use nix::sys::signal::Signal;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

use crate::actor::Report;
use crate::config::{Config, ConfigError};
use crate::controller::{Context, Now, Output, Settings};
use crate::diskstats::read_diskstats;
use crate::hooks::HookRunner;
use crate::instance::{InstanceLock, LockError};
use crate::persist::{Persist, Snapshot, said_once};
use crate::preflight::{preflight, stop_orphans};
use crate::resident::{RELEASE_DELAY, release_code_pages};
use crate::source::Sample;
use crate::state::State;
use crate::timer::{PollTimer, boottime};
use crate::timer::{unix_now, unix_now_ns};

mod admin;
mod disks;
mod identifying;
use disks::Disk;

/// How the daemon is started.
#[derive(Debug)]
pub struct Options {
    /// The config file.
    pub config: PathBuf,
    /// Decide and log, but touch no drive, run no command, write no state.
    pub dry_run: bool,
    /// The components networks are built from.
    pub registry: Registry,
}

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The configuration is invalid (exit code 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Something failed at run time (exit code 1).
    #[error("{0}")]
    Runtime(String),
    /// Another daemon holds the state file's lock (exit code 1): the
    /// message names it, with its pid when the lock file gives it.
    #[error("{1}")]
    Held(Option<u32>, String),
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(opts: Options) -> Result<(), DaemonError> {
    let cfg = Config::load(&opts.config, &opts.registry)?;
    let pre = preflight(&cfg, opts.dry_run)?;
    for w in &pre.logged {
        tracing::warn!("{w}");
    }
    let spinners_warned = pre.spinners_warned;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(4)
        // SG_IO and syncfs run on the blocking pool, rarely: let its
        // threads go soon after (the daemon is one thread when idle).
        .thread_keep_alive(Duration::from_secs(1))
        .build()
        .map_err(|e| DaemonError::Runtime(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        // Before the lock and the state file: a SIGTERM while the daemon
        // starts is then queued and ends it cleanly, state saved, instead
        // of killing it (the default action) with its state unsaved.
        let signals = SignalStreams::register()?;
        let mut d = Daemon::new(opts, cfg, spinners_warned).await?;
        d.run(signals).await
    })
}

/// The signals the daemon answers, registered once at its start.
struct SignalStreams {
    hup: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl SignalStreams {
    /// Installs the handlers: from now on these signals are queued.
    fn register() -> Result<SignalStreams, DaemonError> {
        let sig = |k| signal(k).map_err(|e| DaemonError::Runtime(format!("signals: {e}")));
        Ok(SignalStreams {
            hup: sig(SignalKind::hangup())?,
            term: sig(SignalKind::terminate())?,
            int: sig(SignalKind::interrupt())?,
        })
    }
}

/// The daemon's witness: reads `/proc` ([`crate::wakeup`]). `warned`
/// holds the spin-down programs the daemon has warned of (at its start
/// or at a drive they spun down): their warning is given once per
/// process, whichever disk finds them.
#[derive(Debug)]
pub(crate) struct SystemWitness<'a> {
    warned: &'a mut Vec<u32>,
}

impl crate::controller::WakeWitness for SystemWitness<'_> {
    fn snapshot(&mut self) -> crate::wakeup::Snapshot {
        crate::wakeup::snapshot()
    }
    fn attribute(
        &mut self,
        before: crate::wakeup::Snapshot,
        devs: &[(u32, u32)],
        woke: u64,
    ) -> crate::wakeup::Attribution {
        crate::wakeup::attribute(before, devs, woke)
    }
    fn tree_io(&mut self, pid: u32) -> Option<(u64, u64)> {
        crate::wakeup::tree_io(pid)
    }
    fn spinners(&mut self, kernel: &str) -> Vec<crate::controller::Spinner> {
        let mut found = crate::preflight::spinners_of(&[kernel]);
        for s in &mut found {
            if self.warned.contains(&s.pid) {
                s.warning.clear();
            } else {
                self.warned.push(s.pid);
            }
        }
        found
    }
}

/// The shell: see the [module docs](self).
pub(crate) struct Daemon {
    opts: Options,
    cfg: Config,
    /// The state file's entries of the disks that are not watched now
    /// (a watched disk's entry is its controller's).
    state: State,
    persist: Persist,
    disks: Vec<Disk>,
    /// Disks whose actors are being stopped: their reports still count.
    retiring: Vec<Disk>,
    base: Nanos,
    /// The wall clock at `base` (Unix nanoseconds): engines are told it, so
    /// time-of-day skeptics see real hours across restarts.
    clock: Nanos,
    last_poll: Nanos,
    /// When to take the code pages out of the resident set
    /// ([`Daemon::release_code_soon`]).
    release_code_at: Option<Nanos>,
    /// When they were last released.
    last_release: Option<Nanos>,
    /// Resolve the disks at the next poll (at start and after a reload).
    resolve_now: bool,
    /// The last diskstats sample, updated in place at every poll.
    sample: Sample,
    /// `/proc/diskstats`, kept open and read again from its start at each
    /// poll (a procfs file regenerates; a regular file, as in tests, is
    /// opened afresh at each poll, since it may be replaced).
    diskstats_file: Option<std::fs::File>,
    polls: u64,
    /// A drive just identified by [`Daemon::another_drive`], for the
    /// controller that replaces the old one.
    fresh_identity: Option<crate::identify::Identity>,
    /// The drives being identified, off the poll loop.
    identifying: identifying::Identifying,
    generation: u64,
    reports_tx: mpsc::UnboundedSender<Report>,
    reports_rx: mpsc::UnboundedReceiver<Report>,
    metrics_server: Option<(std::net::SocketAddr, JoinHandle<()>)>,
    missing: HashSet<String>,
    /// Entries (device, kernel name) that came to name a partition while
    /// the daemon ran, logged once each.
    refused: HashSet<(String, String)>,
    /// The trackers of the disks a reload retired while idle, by key,
    /// with their kernel name, the reload's instant and when the idle
    /// period began (Unix seconds): the controller started in each one's
    /// place continues from it ([`DiskController::continue_from`]).
    handover: HashMap<String, (crate::source::DiskTracker, String, Nanos, Option<u64>)>,
    /// The kernel's boot id ([`Settings::boot_id`]), read at start.
    boot_id: Option<u128>,
    /// The disks this daemon claimed, by device numbers
    /// ([`crate::instance::disk_lock_dir`]).
    claims: std::collections::HashMap<(u32, u32), InstanceLock>,
    /// The lock directory could not be made: no claims (said once).
    claims_off: bool,
    /// When to resolve the disks again because another daemon held one's
    /// claim (once a minute while one does).
    retry_claims_at: Option<Nanos>,
    read_error_logged: bool,
    /// The spin-down programs warned of, by process id: at the start
    /// ([`crate::preflight::Preflight::spinners_warned`]), at a reload, or
    /// when a drive one of them spun down was found asleep
    /// ([`SystemWitness`]).
    spinners_warned: Vec<u32>,
    /// Where the by-path and glob entries resolved at the last poll: they
    /// are re-resolved every poll, because udev creates a by-id link after
    /// the kernel device appears.
    path_sig: u64,
    /// Reused for every read of diskstats.
    read_buf: Vec<u8>,
    /// Reused for the controllers' outputs.
    out: Vec<Output>,
    /// Runs the disks' hooks and counts them.
    hooks: HookRunner,
    /// The state file's lock ([`crate::instance`]), held while the daemon
    /// runs; `None` only for a dry run that may not create it.
    lock: Option<InstanceLock>,
    /// Why the daemon must stop at once, without writing its state: the
    /// state file's lock was lost to another daemon ([`Daemon::check_lock`]).
    fatal: Option<String>,
    /// The error that kept the lock from being taken again, said once.
    lock_error: Option<String>,
}

/// Locks the state file the daemon is about to use (the dry run's own in a
/// dry run): another daemon holding it is an error; a dry run that may
/// not create the lock file runs without it and says so.
fn lock_state(cfg: &Config, dry_run: bool) -> Result<Option<InstanceLock>, DaemonError> {
    let path = if dry_run {
        cfg.dry_run_state_file()
    } else {
        cfg.state_file.clone()
    };
    match InstanceLock::acquire(&path) {
        Ok(l) => Ok(Some(l)),
        Err(e @ LockError::Io { .. }) if dry_run => {
            warn!(
                "dry run: {e}; running without it (a second dry run on this file is not refused)"
            );
            Ok(None)
        }
        Err(LockError::Held { pid, path }) => Err(DaemonError::Held(
            pid,
            LockError::Held { pid, path }.to_string(),
        )),
        Err(e) => Err(DaemonError::Runtime(e.to_string())),
    }
}

/// At the start: the state-file entries of disks removed from the file
/// while the daemon was stopped are marked so
/// ([`crate::persist::NOT_CONFIGURED_AT_START`]), each said once.
fn unconfigured_at_start(state: &mut State, cfg: &Config) {
    let marked = mark_unconfigured(
        state,
        cfg,
        crate::persist::NOT_CONFIGURED_AT_START,
        unix_now(),
    );
    for key in marked {
        info!(
            "disk {key}: in the state file but not in the configuration: not watched (its entry is kept; lull status shows it as not watched)"
        );
    }
}

impl Daemon {
    async fn new(
        opts: Options,
        cfg: Config,
        spinners_warned: Vec<u32>,
    ) -> Result<Daemon, DaemonError> {
        // Before the state file is read: a second daemon must not take the
        // first's running command for a crash's leftover.
        let lock = lock_state(&cfg, opts.dry_run)?;
        let state = if opts.dry_run {
            // Its own file: what the networks learn survives a restart,
            // the real daemon's counters are never touched.
            let path = cfg.dry_run_state_file();
            let mut s = State::load(&path).unwrap_or_else(|e| {
                warn!(
                    "dry run: state file {}: {e}; starting with nothing learned",
                    path.display()
                );
                State::default()
            });
            unconfigured_at_start(&mut s, &cfg);
            s
        } else {
            let mut s = match State::load(&cfg.state_file) {
                Ok(s) => s,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    match State::keep_corrupt(&cfg.state_file, unix_now()) {
                        Ok(kept) => warn!(
                            "{e}; kept it as {} and starting with empty counters",
                            kept.display()
                        ),
                        Err(k) => {
                            return Err(DaemonError::Runtime(format!(
                                "{e}; cannot keep it aside ({k}), so it is not overwritten: move it away"
                            )));
                        }
                    }
                    State::default()
                }
                Err(e) => {
                    return Err(DaemonError::Runtime(format!(
                        "state file {}: cannot read: {e}",
                        cfg.state_file.display()
                    )));
                }
            };
            stop_orphans(&mut s, &cfg).await;
            // A standby the last run left ended if the machine rebooted
            // since.
            s.forget_standby_before(unix_now().saturating_sub(boottime().0 / 1_000_000_000));
            s.carry_over_learned(&cfg.dry_run_state_file());
            unconfigured_at_start(&mut s, &cfg);
            s.save(&cfg.state_file).map_err(|e| {
                DaemonError::Runtime(format!(
                    "state file {}: cannot write: {e}",
                    cfg.state_file.display()
                ))
            })?;
            s
        };
        let (reports_tx, reports_rx) = mpsc::unbounded_channel();
        let dry_run = opts.dry_run;
        let hooks = HookRunner::new(cfg.hook_timeout, dry_run);
        let mut d = Daemon {
            hooks,
            opts,
            cfg,
            state,
            persist: Persist::new(dry_run),
            disks: Vec::new(),
            retiring: Vec::new(),
            base: boottime(),
            clock: unix_now_ns(),
            last_poll: Nanos::ZERO,
            resolve_now: true,
            release_code_at: None,
            last_release: None,
            sample: Sample::default(),
            diskstats_file: None,
            polls: 0,
            fresh_identity: None,
            identifying: identifying::Identifying::new(
                crate::identify::identify_disk,
                identifying::WAIT,
            ),
            generation: 0,
            reports_tx,
            reports_rx,
            metrics_server: None,
            missing: HashSet::new(),
            refused: HashSet::new(),
            handover: HashMap::new(),
            boot_id: crate::state::boot_id(),
            claims: std::collections::HashMap::new(),
            claims_off: false,
            retry_claims_at: None,
            read_error_logged: false,
            spinners_warned,
            path_sig: 0,
            read_buf: Vec::new(),
            out: Vec::with_capacity(8),
            lock,
            fatal: None,
            lock_error: None,
        };
        d.start_metrics_server().await?;
        Ok(d)
    }

    fn now(&self) -> Nanos {
        boottime() - self.base
    }

    /// The time of an input now: one reading of each clock.
    fn stamp(&self, mono: Nanos) -> Now {
        Now {
            mono,
            unix: unix_now(),
        }
    }

    fn settings(&self) -> Settings {
        Settings {
            power_check: self.cfg.power_check,
            dry_run: self.opts.dry_run,
            clock: self.clock,
            poll: self.cfg.poll,
            max_poll: self.cfg.max_poll,
            boot_id: self.boot_id,
        }
    }

    async fn run(&mut self, signals: SignalStreams) -> Result<(), DaemonError> {
        let SignalStreams {
            mut hup,
            mut term,
            mut int,
        } = signals;
        // Signals are awaited by a task of their own, which forwards them:
        // the poll loop's `select!` then makes no signal futures at each
        // poll (they would be built and polled anew every second).
        let (signals_tx, mut signals) = mpsc::unbounded_channel();
        let signal_task = tokio::spawn(async move {
            loop {
                let s = tokio::select! {
                    _ = hup.recv() => Signal::SIGHUP,
                    _ = term.recv() => Signal::SIGTERM,
                    _ = int.recv() => Signal::SIGINT,
                };
                if signals_tx.send(s).is_err() {
                    break;
                }
            }
        });
        let watchdog = sd_notify::watchdog_enabled().map(|d| d / 2);
        let mut dog = tokio::time::interval(watchdog.unwrap_or(Duration::from_secs(3600)));
        dog.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

        info!(
            "lull daemon started: {}, poll {}{}",
            entries(self.cfg.disks.len()),
            self.cfg.poll_text(),
            if self.opts.dry_run {
                ", dry run: no drive is touched, no command runs"
            } else {
                ""
            }
        );
        self.last_poll = self.now();
        self.poll(self.last_poll, false);
        self.release_code_soon();
        let _ = sd_notify::notify(&[
            sd_notify::NotifyState::Ready,
            sd_notify::NotifyState::Status(&format!("watching {} disks", self.disks.len())),
        ]);
        let timer = PollTimer::new()
            .map_err(|e| DaemonError::Runtime(format!("cannot create the poll timer: {e}")))?;
        loop {
            let now = self.now();
            // Each disk's own need (`poll_every`): faster while a command
            // runs, slower while every disk is idle with its decision far
            // off, or asleep. One read of diskstats serves them all.
            let every = self
                .disks
                .iter()
                .map(|d| d.ctl.poll_every(now))
                .min()
                .unwrap_or(self.cfg.poll);
            let next_poll = self.last_poll + every;
            let wake = self
                .disks
                .iter()
                .filter_map(|d| d.ctl.next_deadline())
                .min()
                .map_or(next_poll, |t| t.min(next_poll))
                .max(now + Nanos::from_millis(1));
            let slack = self.cfg.poll.max(Nanos::from_secs(2));
            if let Err(e) = timer.set(self.base + wake) {
                return Err(DaemonError::Runtime(format!("poll timer: {e}")));
            }
            tokio::select! {
                // In this order: no random draw per wake-up.
                biased;
                r = timer.wait() => {
                    // The clock the timer read: one reading for the poll.
                    let now = match r {
                        Ok(t) => t - self.base,
                        Err(e) => return Err(DaemonError::Runtime(format!("poll timer: {e}"))),
                    };
                    self.poll(now, now > wake + slack);
                    if self.fatal.is_some() {
                        break;
                    }
                }
                Some(s) = signals.recv() => {
                    if s == Signal::SIGHUP {
                        self.reload().await;
                    } else {
                        info!("{s}: stopping");
                        break;
                    }
                }
                Some(r) = self.reports_rx.recv() => self.on_report(r),
                _ = dog.tick(), if watchdog.is_some() => {
                    let _ = sd_notify::notify(&[sd_notify::NotifyState::Watchdog]);
                }
            }
        }
        signal_task.abort();
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
        let disks = std::mem::take(&mut self.disks);
        self.retire_all(disks).await;
        // After the disks' last hooks (a command's `on_task_stop`): each
        // gets its grace time, then the signals.
        self.hooks.stop().await;
        if let Some(why) = self.fatal.take() {
            // The state file is another daemon's now: not written.
            return Err(DaemonError::Runtime(why));
        }
        self.save(true);
        info!("stopped");
        Ok(())
    }

    /// After an admin removed the state directory (and the lock file in
    /// it) under the running daemon: checked at every poll, before the
    /// state can be written (a `stat` and an `fstat`, a few microseconds
    /// against the poll's read of diskstats), makes the lock file again and takes
    /// it, and writes the state at once, so that a second daemon is still
    /// refused ([`InstanceLock::retake`]). If another daemon locked the
    /// new file first, this one stops without writing the state file: two
    /// daemons on one state file are what the lock is for.
    fn check_lock(&mut self) {
        let Some(lock) = self.lock.as_mut() else {
            return;
        };
        match lock.retake() {
            Ok(false) => {}
            Ok(true) => {
                warn!(
                    "the state file's lock file {} was removed (with its directory?): made and taken again; the state is written again now",
                    lock.path().display()
                );
                self.persist.mark(true, true);
                self.lock_error = None;
            }
            Err(e @ LockError::Held { .. }) => {
                let why = format!(
                    "the state file's lock file {} was removed, and another daemon took it: {e}; this one stops",
                    lock.path().display()
                );
                error!("{why}");
                self.fatal = Some(why);
            }
            Err(e) => said_once(&mut self.lock_error, e.to_string(), |e| {
                error!(
                    "{e} (the state file's lock file was removed and cannot be made again; said once until it changes)"
                )
            }),
        }
    }

    /// Rare work ran (start-up, a reload, an actor's report, disks
    /// resolved): its code pages leave the resident set a few seconds later,
    /// when what it set off (hooks, commands, logging) is likely done
    /// ([`release_code_pages`]), and at most once a minute: under steady
    /// activity (a spin-down attempt every few seconds) the pages would only
    /// come back, at the cost of page faults.
    fn release_code_soon(&mut self) {
        if self.release_code_at.is_none() {
            let at = self.now() + RELEASE_DELAY;
            let not_before = self
                .last_release
                .map_or(Nanos::ZERO, |t| t + Nanos::from_secs(60));
            self.release_code_at = Some(at.max(not_before));
        }
    }

    /// Ends a poll whose diskstats could not be read or parsed: the error
    /// is logged once until a poll succeeds.
    fn poll_failed(&mut self, now: Nanos, e: impl std::fmt::Display) {
        if !self.read_error_logged {
            error!("{}: {e}", self.cfg.diskstats.display());
            self.read_error_logged = true;
        }
        self.last_poll = now;
    }

    /// Reads diskstats at `now` and runs every disk's tracker, engine
    /// and decisions on it.
    fn poll(&mut self, now: Nanos, late: bool) {
        if self.retry_claims_at.is_some_and(|t| now >= t) {
            // A disk another daemon had claimed: try again.
            self.retry_claims_at = None;
            self.resolve_now = true;
        }
        let mut buf = std::mem::take(&mut self.read_buf);
        let read = read_diskstats(&mut self.diskstats_file, &self.cfg.diskstats, &mut buf)
            .and_then(|len| {
                std::str::from_utf8(&buf[..len])
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            });
        let text = match read {
            Ok(t) => t,
            Err(e) => {
                self.read_buf = buf;
                return self.poll_failed(now, e);
            }
        };
        // Counters are parsed for the watched devices only (all of them
        // when the disks are to be resolved again: a new disk's too).
        let mut sample = std::mem::take(&mut self.sample);
        let parsed = sample.update(text, self.resolve_now);
        if let Err(e) = parsed {
            self.sample = sample;
            self.read_buf = buf;
            return self.poll_failed(now, e);
        }
        self.read_error_logged = false;
        if late {
            warn!(
                "poll {} late (suspend, or the daemon was stopped): the gap counts as busy, not idle",
                now - self.last_poll
            );
        }
        let path_sig = self.path_signature(&sample);
        if self.resolve_now || sample.names_changed() || path_sig != self.path_sig {
            self.resolve_now = false;
            self.path_sig = path_sig;
            self.resolve_all(&sample);
            // Disks found now watch devices whose counters were skipped.
            sample.fill(text);
            let mut wanted: Vec<&str> = self
                .disks
                .iter()
                .flat_map(|d| {
                    let f = d.ctl.family();
                    std::iter::once(&f.disk)
                        .chain(&f.partitions)
                        .chain(&f.holders)
                        .map(String::as_str)
                })
                .collect();
            wanted.sort_unstable();
            sample.set_wanted(|n| wanted.binary_search(&n).is_ok());
        }
        self.read_buf = buf;
        let stamp = self.stamp(now);
        let mut out = std::mem::take(&mut self.out);
        for d in &mut self.disks {
            out.clear();
            let mut cx = Context {
                registry: &self.opts.registry,
                witness: &mut SystemWitness {
                    warned: &mut self.spinners_warned,
                },
            };
            d.ctl.on_poll(stamp, &sample, late, &mut cx, &mut out);
            let (dirty, urgent) = d.carry_out(&self.hooks, &mut out);
            self.persist.mark(dirty, urgent);
        }
        self.out = out;
        self.sample = sample;
        if self.release_code_at.is_some_and(|t| now >= t) {
            self.release_code_at = None;
            self.last_release = Some(now);
            let kib = release_code_pages() >> 10;
            tracing::debug!("{kib} KiB of code mappings released from the resident set");
        }
        self.last_poll = now;
        self.polls += 1;
        self.check_lock();
        if self.fatal.is_some() {
            return;
        }
        self.save_at(now, false);
    }

    /// What an actor reported: handed to its disk's controller (a retired
    /// disk's, while its actors stop, still counts in its state entry).
    fn on_report(&mut self, r: Report) {
        self.release_code_soon();
        let now = self.stamp(self.now());
        let live = self.disks.len();
        let found = self
            .disks
            .iter_mut()
            .chain(self.retiring.iter_mut())
            .enumerate()
            .filter(|(_, d)| d.ctl.key() == r.key)
            .max_by_key(|(i, d)| (d.ctl.generation() == r.generation && *i < live, *i < live));
        let Some((i, d)) = found else {
            warn!(
                "disk {}: a report after its disk was retired, not counted: {:?}",
                r.key, r.outcome
            );
            return;
        };
        let current = i < live && d.ctl.generation() == r.generation;
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        match r.job {
            Some(name) => d
                .ctl
                .on_job_outcome(now, name, r.outcome, current, &mut out),
            None => {
                let mut witness = SystemWitness {
                    warned: &mut self.spinners_warned,
                };
                d.ctl
                    .on_outcome(now, r.outcome, current, &mut witness, &mut out);
            }
        }
        let (dirty, urgent) = d.carry_out(&self.hooks, &mut out);
        self.out = out;
        self.persist.mark(dirty, urgent);
        // An outcome that changed something urgent (a spin-down done or
        // failed, a command's start or exit) reaches the state file and
        // the metrics now, not at the next poll, which may be a minute
        // away.
        if urgent {
            self.save_at(now.mono, false);
        }
    }

    /// Saves the state (at most once a second unless `force`) and
    /// refreshes the metrics.
    fn save(&mut self, force: bool) {
        self.save_at(self.now(), force);
    }

    /// Writes the metrics and the state file if due at `now` (or `force`).
    fn save_at(&mut self, now: Nanos, force: bool) {
        let (state, disks, polls) = (&self.state, &self.disks, self.polls);
        let snapshot = || {
            // Standby time so far counts, so a crash loses little of it.
            let mut state = state.clone();
            for d in disks {
                state
                    .disks
                    .insert(d.ctl.key().to_string(), d.ctl.state_at(now));
            }
            Snapshot {
                state,
                gauges: disks.iter().map(|d| d.gauges(now)).collect(),
                polls,
            }
        };
        let written = self
            .persist
            .save(now, force, &self.cfg, &self.hooks, snapshot);
        if written {
            // Each disk's log names the learned state the file now holds:
            // what a crash would resume from.
            for d in &mut self.disks {
                d.state_written();
            }
        }
    }
}

/// Marks the state-file entries of `state` that no `[[disk]]` of `cfg`
/// covers (disks removed from the file; not the entries of drives
/// waiting for their drive) with `mark` as their last decision, at
/// `now_unix`, unless they say already that they are not configured:
/// `lull status` shows them as not watched since then, rather than in
/// their last watched state as if it were now. Returns the keys marked.
pub(super) fn mark_unconfigured(
    state: &mut State,
    cfg: &Config,
    mark: &str,
    now_unix: u64,
) -> Vec<String> {
    use crate::persist::{NOT_CONFIGURED_AT_START, REMOVED_AT_RELOAD, is_parked_key};
    let mut marked = Vec::new();
    for (key, d) in &mut state.disks {
        if is_parked_key(key)
            || cfg.entry_for(key).is_some()
            || d.last_decision == REMOVED_AT_RELOAD
            || d.last_decision == NOT_CONFIGURED_AT_START
        {
            continue;
        }
        d.last_decision = mark.to_string();
        d.last_decision_unix = now_unix;
        marked.push(key.clone());
    }
    marked
}

/// "1 disk entry", "3 disk entries": for the start's and a reload's log
/// lines.
fn entries(n: usize) -> String {
    format!("{n} disk {}", if n == 1 { "entry" } else { "entries" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::WakeWitness;

    /// The entries of disks the configuration no longer names are marked
    /// once, with the time, so `lull status` shows them as not watched
    /// since then; configured disks, parked drives and entries marked
    /// already are left as they are.
    #[test]
    fn entries_no_disk_entry_covers_are_marked_once() {
        use crate::persist::{NOT_CONFIGURED_AT_START, REMOVED_AT_RELOAD};
        let cfg = Config::parse(
            std::path::Path::new("t.toml"),
            "[[disk]]\ndevice = \"loop0\"\n[[disk]]\ndevice = \"sd[b-c]\"\n",
            &crate::default_registry(),
        )
        .unwrap();
        let mut st = State::default();
        for key in ["loop0", "sdb", "loop1", "serial:X", "sdd~3", "loop2"] {
            let d = st.disk(key);
            d.last_decision = "standby done".into();
            d.last_decision_unix = 100;
        }
        st.disk("loop2").last_decision = NOT_CONFIGURED_AT_START.into();
        assert_eq!(
            mark_unconfigured(&mut st, &cfg, REMOVED_AT_RELOAD, 500),
            ["loop1"]
        );
        let d = &st.disks["loop1"];
        assert_eq!(
            (d.last_decision.as_str(), d.last_decision_unix),
            (REMOVED_AT_RELOAD, 500)
        );
        assert_eq!(st.disks["loop2"].last_decision_unix, 100);
        assert_eq!(st.disks["sdb"].last_decision, "standby done");
        assert_eq!(st.disks["serial:X"].last_decision, "standby done");
        // Once: a restart does not move the time.
        assert!(mark_unconfigured(&mut st, &cfg, NOT_CONFIGURED_AT_START, 900).is_empty());
        assert_eq!(st.disks["loop1"].last_decision_unix, 500);
    }

    /// The daemon's witness gives a spin-down program's warning once per
    /// process: not for one its start already warned of, and once for one
    /// it finds first, whichever disk asks after that.
    #[test]
    fn a_spin_down_program_is_warned_of_once_per_process() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = crate::preflight::tests::fake_hd_idle(dir.path());
        let pid = p.id();
        // Other tests' fake hd-idles may run too: only this one counts.
        let ours = |found: Vec<crate::controller::Spinner>| {
            let mine: Vec<_> = found.into_iter().filter(|s| s.pid == pid).collect();
            assert_eq!(mine.len(), 1, "{mine:?}");
            mine.into_iter().next().unwrap()
        };
        let times = |warned: &[u32]| warned.iter().filter(|&&w| w == pid).count();
        // Warned of by the start's check: named, not warned of again.
        let mut warned = vec![pid];
        let s = ours(
            SystemWitness {
                warned: &mut warned,
            }
            .spinners("fakea"),
        );
        assert_eq!((s.name.as_str(), s.warning.as_str()), ("hd-idle", ""));
        assert_eq!(times(&warned), 1);
        // Started after the start: warned of at the first disk that finds
        // it, and then no more, on that disk or another.
        let mut warned = Vec::new();
        let s = ours(
            SystemWitness {
                warned: &mut warned,
            }
            .spinners("fakea"),
        );
        assert!(s.warning.contains("hd-idle"), "{}", s.warning);
        assert_eq!(times(&warned), 1);
        let s = ours(
            SystemWitness {
                warned: &mut warned,
            }
            .spinners("fakeb"),
        );
        assert_eq!(s.warning, "");
        assert_eq!(times(&warned), 1);
        p.kill().unwrap();
        p.wait().unwrap();
    }
}
