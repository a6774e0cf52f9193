//! # lull-live
//!
//! The `lull daemon`: watches live disks through `/proc/diskstats`, runs a
//! detector network per disk through the same sans-IO engine the replay lab
//! uses, and puts idle time to work — spinning drives down (`hdparm -y` or
//! native SG_IO), flushing their file systems (`syncfs`), or running a
//! maintenance command that is paused with SIGSTOP whenever the disk turns
//! busy. Something a storage admin installs instead of hd-idle.
//!
//! ## Why it is built this way
//!
//! - **Same decisions as replay.** Counter deltas become ordinary arrival
//!   and completion events ([`source`] documents the approximation), the
//!   engine is pushed and advanced exactly as in replay, and the daemon
//!   sleeps until `min(next poll, next deadline)`. A network tuned in the
//!   lab behaves the same on a live disk.
//! - **Sans-IO engine, async actions.** The engine's idle task only records
//!   intents ([`task`]); a per-disk actor executes them on tokio, so a drive
//!   that takes 30 s to answer never stalls the poll loop or other disks,
//!   and an error is one disk's error. A new drive is identified on a
//!   thread of its own; the loop waits a quarter second for its answer at
//!   most, and starts a slow drive's controller at a later poll.
//! - **Safe by default.** Every config error names its line and key;
//!   `--check` validates without acting, `--dry-run` decides without
//!   touching anything; offline components are refused; only disks the
//!   config names are ever touched; as root, a config file or command that
//!   others can modify is refused; commands run without a shell; a wear
//!   budget caps spin-downs per day; power state is read with CHECK POWER
//!   MODE or REQUEST SENSE, which never wake a disk, and so is the
//!   transport probe ([`transport`]).
//! - **Light.** A current-thread runtime, a hand-written diskstats parser,
//!   a hand-rolled metrics responder, its own log writer; the `lulld`
//!   binary links nothing of the lab (`docs/performance.md`, "Daemon
//!   against hd-idle").
//! - **No crash paths.** A broken log pipe loses lines, not the daemon
//!   ([`log`]); a corrupt state file is kept aside; a command left by a
//!   daemon killed with SIGKILL is found by pid and start time and stopped
//!   before it could run twice ([`process`]); a second daemon on the same
//!   state file is refused before it reads it ([`instance`]).
//! - **Observable.** journald priorities on log lines, a state file written
//!   atomically and kept across restarts, Prometheus metrics as a
//!   node_exporter textfile and optionally over HTTP, sd_notify readiness
//!   and watchdog, and "what woke my disk" ([`wakeup`]).
//!
//! Only this crate and the binary use tokio (SPEC §1). The decisions are
//! not here: they are in `lull-controller`, a crate with no IO crate in
//! its tree, so the compiler keeps the shell's IO out of them. This crate
//! re-exports its modules (`controller`, `config`, `source`, `state`,
//! `task`, `jobs`) at their old paths, and splits the modules that both
//! parse and do IO (`diskstats`, `identify`, `sgio`, `transport`):
//! the parsers are the controller crate's, the IO is here.
//!
//! ## Limits
//!
//! - diskstats cannot tell whose I/O it counts. A `command` that does I/O
//!   on the disk it watches (fstrim, a scrub) makes the disk busy and so
//!   pauses itself; give such commands `policy = "predicted-end"`, a
//!   duration predictor and a timer-based start detector, so they run for
//!   their predicted slot (a rate detector would see the command's own I/O
//!   raise the rate above its end threshold and withdraw). A `flush` is
//!   handled by the daemon: its own writes are absorbed.
//! - `flush` finds file systems by the device numbers in
//!   `/proc/self/mountinfo`, or, for those that report an anonymous device
//!   there (btrfs), by their mount source. A multi-device btrfs is found
//!   from the one device its mount source names; overlay and network file
//!   systems have no disk of their own (flushing the file system under an
//!   overlay's upper directory is what reaches the disk).
//! - The wear budget is a token bucket refilled by wall-clock time (it must
//!   survive restarts): a clock set back refills nothing, a clock set
//!   forward refills at most the bucket's size.
//! - Which process woke a disk is a best-effort guess ([`wakeup`]).
//! - The `hdparm` backend needs `hdparm` in `/usr/sbin`, `/sbin`, `/usr/bin`
//!   or `/bin`; the others need nothing but SCSI/ATA pass-through
//!   ([`transport`]).

pub mod activity;
mod actor;
pub mod admin;
pub mod daemon;
pub mod devices;
pub mod diskstats;
pub mod drive;
pub mod hd_idle;
pub mod hooks;
pub mod identify;
pub mod instance;
pub mod log;
pub mod metrics;
mod persist;
pub mod preflight;
pub mod process;
mod resident;
pub mod sgio;
pub mod timer;
pub mod transport;
mod units;
pub mod wakeup;

// The decisions and their types live in lull-controller, behind a wall the
// compiler keeps (no IO crate in its tree); their paths here stay as they
// were.
pub use lull_controller::{config, controller, jobs, snapshot, source, state, task};

pub use admin::check::{CheckReport, check, check_report};
pub use config::{Config, ConfigError};
pub use daemon::{DaemonError, Options, run};
pub use preflight::preflight;

pub use lull_controller::default_registry;

/// Sets up the daemon's log ([`log::init_logging`]).
pub use log::init_logging;
