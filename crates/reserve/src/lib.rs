//! # lull-reserve
//!
//! Idle-time reservations (issue 19): several background jobs sharing a
//! disk's idle time, after Domjan and Gross's CPU reservations.
//!
//! - [`forecast`] estimates the usable idle time per hour of day for a
//!   job's step length, online, from the idle periods a detector sees;
//! - [`reserve`] admits a job's ranked requests against that forecast (an
//!   exact max-flow test, keeping a share for unreserved work);
//! - [`schedule`] hands idle periods to the admitted jobs by deadline and
//!   lag, as a sans-IO state machine the replay and the daemon drive alike;
//! - [`plan`] runs all three over a trace (`lull plan`).
//!
//! ## Why a crate of its own
//!
//! These are not detectors: they consume what detectors find (idle
//! periods) and decide who gets them. They lived in `lull-detectors`, where
//! they formed an import cycle among three files; here the shared time grid
//! is a leaf ([`hours`]) and the dependency direction is one way:
//! `plan` → `schedule`, `forecast` → `reserve` → `hours`. Like the
//! detectors it is sans-IO and deterministic, and depends on `lull-core`
//! only, so an embedder (a storage service scheduling its own scrubs)
//! takes it without the lab or the daemon.

pub mod forecast;
pub mod hours;
pub mod plan;
pub mod reserve;
pub mod schedule;
