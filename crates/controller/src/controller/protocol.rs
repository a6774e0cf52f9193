//! The controller's protocol: the time and settings of its inputs, the
//! orders and outcomes it exchanges with the actors, the outputs it
//! returns, and the witness of wakes a caller lends it.

use std::path::PathBuf;

use lull_activity::Record;
use lull_core::registry::Registry;
use lull_core::time::Nanos;

use crate::drive::PowerState;
use crate::hooks::HookEvent;
use crate::task::Intent;
use crate::transport::TransportMemo;
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
    /// The poll interval (written in the activity log's sessions).
    pub poll: Nanos,
    /// The longest poll while the disk is idle or asleep
    /// ([`super::DiskController::poll_every`]); `poll` or less: always
    /// every `poll`.
    pub max_poll: Nanos,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id` as a
    /// number), `None` when unknown: a disk left idle by a clean stop is
    /// taken up idle only in the same boot
    /// ([`crate::state::IdleAtStop`]).
    pub boot_id: Option<u128>,
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
    /// The command ran to its end, with this status, and whether it
    /// succeeded (exit status 0).
    CommandExited(u32, String, bool),
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
    /// A record for the disk's activity log ([`lull_activity`]): a session
    /// when the controller first sees the disk, each poll that changed
    /// what it knows, a mark after a minute of quiet polls, and what lull
    /// did (standby orders, their failures, power states). The shadow
    /// evaluation has already seen it; the shell appends it to the log
    /// (or drops it: `activity_log = false`). In a dry run the standby
    /// records say what lull would have done.
    Activity(Record),
}

/// The questions about processes the controller cannot answer from its
/// inputs: which process woke a disk, and how much I/O its own task's
/// command did. The first needs every process's I/O counters when the
/// drive went to sleep and again when it woke ([`crate::wakeup`]), and it
/// is needed at once, in the same log line as the wake; the second is
/// needed at each poll while a command runs, to tell its I/O from the
/// foreground's. So the caller lends the controller a witness for the
/// calls that may need them: the daemon's reads `/proc`
/// ([`crate::wakeup`]); a test or a replay passes [`NoWitness`].
pub trait WakeWitness {
    /// Every process's I/O counters now (a drive just went to sleep).
    fn snapshot(&mut self) -> Snapshot;
    /// Who woke a drive whose users are `devs` (device numbers of the disk,
    /// its partitions and holders) and that moved `woke` bytes in the poll
    /// that showed it awake (0: no I/O was counted), from the counters
    /// taken when it went to sleep.
    fn attribute(&mut self, before: Snapshot, devs: &[(u32, u32)], woke: u64) -> Attribution;
    /// The bytes process `pid` and its descendants have read from and
    /// written to storage so far (`read_bytes` and `write_bytes` of
    /// `/proc/PID/io`, which hold a process's reaped children's too),
    /// `None` when it cannot be read. Asked for the running command of a
    /// `command` or `jobs` disk only. The default knows nothing, so every
    /// poll's I/O counts as the foreground's.
    fn tree_io(&mut self, _pid: u32) -> Option<(u64, u64)> {
        None
    }
    /// The programs running now that spin the disk named `kernel` down on
    /// a timeout of their own (hd-idle, by its options; another by its
    /// name). Asked when a drive lull did not spin down is found in
    /// standby, or is already in standby when lull spins it down: one of
    /// them is then the likely cause. The default knows of none.
    fn spinners(&mut self, _kernel: &str) -> Vec<Spinner> {
        Vec::new()
    }
}

/// A program that spins disks down on a timeout of its own, running beside
/// lull ([`WakeWitness::spinners`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spinner {
    /// Its name (`hd-idle`).
    pub name: String,
    /// Its process id.
    pub pid: u32,
    /// The warning for the admin: what it spins down and after how long,
    /// and what to do (`lull_live::preflight::competition`); empty when the
    /// witness has given it already (the controller then logs none).
    pub warning: String,
}

/// A witness that sees nothing: no snapshot, no suspects (what the
/// daemon reports when it could not take one).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoWitness;

impl WakeWitness for NoWitness {
    fn snapshot(&mut self) -> Snapshot {
        Snapshot::default()
    }
    fn attribute(&mut self, _before: Snapshot, _devs: &[(u32, u32)], _woke: u64) -> Attribution {
        Attribution::default()
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
