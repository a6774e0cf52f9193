//! # lull-controller
//!
//! Every decision `lulld` makes about a disk, and nothing that touches
//! one: the per-disk [`controller::DiskController`], the diskstats
//! [`source`] that turns counter deltas into the engine's events, the
//! live idle [`task`]s and [`jobs`], the types of the config and the
//! state file, and the [`snapshot`] of what the daemon exports. The
//! daemon's shell (`lull-live`) reads `/proc`, sends SG_IO, runs
//! processes and writes files; this crate only decides.
//!
//! ```
//! use lull_controller::diskstats::parse;
//!
//! let text = "   8      16 sdb 10 0 80 5 2 0 16 3 0 8 8 0 0 0 0 0 0\n";
//! let stats = parse(text).unwrap();
//! assert_eq!(stats[0].name, "sdb");
//! ```
//!
//! ## Why a crate of its own
//!
//! - **The wall is the compiler's.** This crate's `Cargo.toml` has no
//!   tokio, nix, libc or other crate that does IO
//!   (`crates/lull/tests/deps.rs` checks its tree). Code here cannot open
//!   a device or spawn a task by accident: it does not compile. In one
//!   crate with the shell, the sans-IO controller was a habit, and the
//!   code had begun to break it.
//! - **Inputs in, outputs out.** As quinn-proto's `Connection` is driven
//!   by its `quinn` shell (`handle_event` in, `poll_transmit` out), a
//!   [`controller::DiskController`] is fed samples, outcomes and the time,
//!   and returns orders for the disk's actor. The same controller runs
//!   under the daemon, under simulated time in tests, and under the
//!   replay of its activity log.
//! - **Pure halves of IO modules.** Where a module of the shell both
//!   parses and does IO (diskstats, IDENTIFY and VPD pages, SCSI sense
//!   data, what woke a disk), the parser and its types live here and the
//!   IO stays in `lull-live`, which re-exports them at their old paths.
//!
//! ## What is not pure yet
//!
//! `config` still checks the programs it names and the config file on
//! disk (`std::fs`, and `/proc/self/status` for the effective uid), and
//! `state` reads and writes its file with `std::fs`. Both use the
//! standard library only; docs/architecture.md lists them as next to
//! move to the shell.

pub mod cdb;
pub mod config;
pub mod controller;
pub mod diskstats;
pub mod drive;
pub mod gauges;
pub mod glob;
pub mod hooks;
pub mod identify;
pub mod jobs;
pub mod snapshot;
pub mod source;
pub mod state;
pub mod task;
pub mod transport;
pub mod units;
pub mod wakeup;

pub use config::{Config, ConfigError};

use lull_core::registry::Registry;

/// A registry with lull's built-in detectors and skeptics (the same set
/// `lull::registry()` gives embedders and the binary).
pub fn default_registry() -> Registry {
    let mut r = Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r
}
