//! # lull-blktrace-replay
//!
//! Trace readers, synthetic workloads and the replay driver of lull's lab.
//!
//! Readers, each found by content ([`read`]): blktrace binary, blkparse
//! text, MSR Cambridge, SPC, CloudPhysics VSCSI, SYSTOR '17, Tencent CBS,
//! Alibaba, fio iologs ([`fio`]), bcc and bpftrace `biosnoop` output
//! ([`biosnoop`]), lull's normalized CSV and its daemon's activity logs.
//! Any other CSV or TSV is read with a column map ([`columns`]; its cells
//! are split by polars in `lull-rank`, which keeps polars out of this
//! crate).
//!
//! ```
//! use lull_blktrace_replay::{replay::{ReplayOptions, replay_spec}, synth};
//! use lull_core::{event::Timeline, spec::NetworkSpec, time::Nanos};
//!
//! let mut registry = lull_core::registry::Registry::new();
//! lull_detectors::register(&mut registry);
//! let trace = synth::generate(synth::shape("workstation").unwrap(), Nanos::from_secs(600), 1);
//! let timeline = Timeline::from_requests(&trace.requests);
//! let spec = NetworkSpec::parse("oracle", Some(&registry)).unwrap();
//! let out = replay_spec(&timeline, &spec, &registry, &ReplayOptions::default()).unwrap();
//! assert_eq!(out.report.internal.efficiency, 1.0);
//! ```

#![forbid(unsafe_code)]

pub mod activity;
pub mod alibaba;
pub mod biosnoop;
pub mod blkparse;
pub mod blktrace;
pub mod columns;
pub mod error;
pub mod fio;
pub mod info;
pub mod input;
pub mod model;
pub mod msr;
pub mod normalized;
pub mod pairing;
pub mod read;
pub mod replay;
pub mod restart;
pub mod spc;
pub mod synth;
pub mod systor;
pub mod tencent;
mod text;
pub mod trace;
pub mod vscsi;

pub use error::{ReplayError, TraceError};
pub use info::TraceInfo;
pub use read::{Format, ReadOptions, open, read_from};
pub use trace::Trace;
