//! # lull-tasks
//!
//! The idle tasks of *Idleness is not sloth* (§2.5, §4) as simulations
//! that report their external measures (SPEC §4.2–§4.3): disk power-down
//! ([`spindown`]), delayed writeback ([`writeback`]) and eager LFS
//! cleaning ([`cleaning`]), with the drive models they need ([`power`],
//! [`device`], [`drive`]) and a drive's break-even times B
//! ([`profile`], the one source of B).
//!
//! ```
//! use lull_core::prelude::*;
//! use lull_tasks::{power::PowerModel, spindown::Spindown};
//!
//! // A detector that declares idleness the moment the device empties,
//! // "until busy": the most eager spindown policy.
//! #[derive(Debug)]
//! struct AtOnce;
//! impl Detector for AtOnce {
//!     fn on_event(&mut self, _: &Event, _: &Context, _: &mut Vec<Prediction>) {}
//!     fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
//!         out.push(Prediction::new(ctx.now, None));
//!     }
//!     fn on_idle_end(&mut self, _: &Context, _: Nanos) {}
//!     fn next_deadline(&self) -> Option<Nanos> { None }
//!     fn on_deadline(&mut self, _: &Context, _: &mut Vec<Prediction>) {}
//! }
//!
//! // Busy [0, 1 s), idle 10 s, busy [11 s, 12 s).
//! let s = Nanos::from_secs;
//! let timeline = Timeline::from_requests(&[
//!     Request::new(s(0), s(1), Op::Read, 0, 4096),
//!     Request::new(s(11), s(12), Op::Read, 8, 4096),
//! ]);
//! let task = Spindown::new(PowerModel::paper());
//! let mut engine = Engine::with_policy(AtOnce, StopPolicy::EarlierOf, task);
//! replay(&timeline, &mut engine).unwrap();
//! let r = engine.task().report();
//! // Span 12 s, asleep 10 s, one spin-up:
//! // 1.6·2 + 0.4·10 + 2.4·1.5 = 3.2 + 4 + 3.6 = 10.8 J, against 1.6·12 = 19.2 J.
//! assert!((r.energy_j - 10.8).abs() < 1e-9);
//! assert!((r.baseline_energy_j - 19.2).abs() < 1e-9);
//! assert_eq!(r.spinups, 1);
//! // The waking request waits t_spinup = 1.5 s (the disk had long spun down).
//! assert!((r.added_latency_s - 1.5).abs() < 1e-9);
//! ```
//!
//! ## Why it is built this way
//!
//! - **Every task is an [`IdleTask`](lull_core::task::IdleTask)**, the
//!   engine's `&mut self` state machine: the actuator starts and stops it,
//!   it sees every foreground event, and it reports its measures in
//!   `measures()`. Nothing here reads a clock or does I/O, so the tests
//!   drive the tasks by hand and pin the numbers.
//! - **Two timings, chosen by what the task does** (SPEC §4.2, §4.3).
//!   Spindown only books energy and delay, so it runs on the recorded
//!   trace times (*trace timing*) and needs nothing but the engine.
//!   Writeback and cleaning add or move I/O, so the recorded completions
//!   are no longer true; they run under *model timing*, where a driver
//!   (`lull_blktrace_replay::model`) owns a simulated disk ([`device`]) and
//!   its queue, and the tasks issue I/O through the small
//!   [`background::BackgroundTask`] interface. The split keeps the task
//!   rules (how much fits in the predicted time, the writeback policies'
//!   limits and caps, cleaning cycles) here, next to the paper's text, and the
//!   queueing in one place in the driver.
//! - **Granularity is part of each task** (§2.4): `spindown` can be
//!   interrupted at any time and loses nothing but the spin-up energy;
//!   `writeback` and `cleaning` are not interruptible (an issued write
//!   runs to completion; a cleaning cycle stopped while reading still
//!   writes what it read) and lose no work. The driver honours it: it
//!   never aborts their device I/O.
//! - **The oracle is computed, not replayed.** `spindown` derives the
//!   offline optimum from the idle periods it saw, in the same pass, so
//!   every run carries its own reference (`oracle_energy_j`,
//!   `competitive_ratio`).

#![forbid(unsafe_code)]

// The README's example (what a registry page shows), run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod background;
pub mod budget_clairvoyant;
pub mod budget_oracle;
pub mod cleaning;
pub mod device;
pub mod drive;
pub mod gate;
pub mod manners;
pub mod power;
pub mod profile;
pub mod spindown;
pub mod writeback;

pub use background::{Admission, BackgroundTask, Baseline, DeviceIo, IoClass};
pub use budget_clairvoyant::BudgetClairvoyant;
pub use budget_oracle::BudgetOracle;
pub use cleaning::{Cleaning, CleaningConfig};
pub use device::{Disk, ServiceModel};
pub use drive::{Drive, PresetSource, Work};
pub use gate::{
    BudgetedTimers, BusyPolls, Charge, DaemonStandbys, StandbyGate, TimerBudget, WearBudget,
};
pub use power::PowerModel;
pub use profile::DriveProfile;
pub use spindown::Spindown;
pub use writeback::{FlushOrder, SectorQueue, WriteQueue, Writeback, WritebackConfig};

/// The simulated idle tasks and the timing each runs under.
pub const TASKS: &[(&str, &str)] = &[
    ("spindown", "trace"),
    ("writeback", "model"),
    ("writeback-paper", "model"),
    ("cleaning", "model"),
];
