//! lull's activity log and shadow evaluation: the evidence, on a user's
//! own disk, of whether lull did better than a fixed timeout would have.
//!
//! # Why this crate
//!
//! The lab ranks detector networks on public traces; the daemon decides on
//! a live disk. Someone who replaces hd-idle with lull has no trace of
//! their own disk and so no answer to "is it worth it here?". The daemon
//! has every input needed: its diskstats polls. This crate turns them into
//!
//! - an **activity log** ([`record`], [`read`]): per disk, the polls that
//!   changed what the daemon knows, and what lull did (standby orders,
//!   their failures, power states). The lab reads it back as a trace
//!   ([`read::Log::rebuild`]) and the requests it rebuilds are those the
//!   daemon's engine saw, built by the same code ([`poll`]): a replay of
//!   the log decides what the daemon decided, to the nanosecond.
//! - a **shadow evaluation** ([`shadow`]): exact counterfactuals of the
//!   fixed timeouts people use (hd-idle's 10 minutes, `hdparm -S`), of the
//!   best fixed timeout in hindsight and of the oracle, next to what lull
//!   actually did, over rolling 24-hour and 7-day windows, in memory that
//!   does not grow with uptime.
//!
//! # Design
//!
//! Both are sans-IO, like `lull-core`'s engine and the daemon's
//! controller: records in, bytes or figures out, no files, no clock. The
//! daemon's shell owns the files (segment rotation, retention, a full
//! disk); the lab owns the replay. The format is a compact binary one
//! rather than the normalized CSV because a quiet disk polled every second
//! for a week must stay small (a quiet poll writes nothing; a busy one
//! about 30 bytes) and because a crash must cost at most the records of
//! the last write: every frame carries its own CRC, so a torn tail is told
//! apart from damage in the middle ([`read`]).
//!
//! The log holds no file names, process names or paths of files on the
//! disk: only counts, times, the disk's configured key and kernel name,
//! the configuration (drive preset, task, network) and a hash of the
//! drive's serial number ([`record::drive_id`]: enough to keep one drive's
//! evidence apart from another's under the same key, not the number
//! itself). Which process woke a drive stays in the daemon's state file.

pub mod poll;
pub mod read;
pub mod record;
pub mod shadow;

pub use read::{Log, ReadError, Rebuilt, Run, RunStart};
pub use record::{Counts, Poll, PollKind, Record, Session, drive_id};
pub use shadow::{Shadow, ShadowReport};
