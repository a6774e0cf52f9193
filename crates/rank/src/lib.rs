//! # lull-rank
//!
//! The lab's main job: sweep hundreds of idle-detector networks over block
//! I/O traces for one idle task, rank them the way Golding, Bosch and
//! Wilkes do in *Idleness is not sloth* (§4.1.1), and write tables, plots
//! and a report.
//!
//! ```no_run
//! use lull_rank::{grid, output, sweep::{Shard, Source}};
//! use lull_blktrace_replay::replay::ReplayOptions;
//! use lull_core::time::Nanos;
//!
//! let mut registry = lull_core::registry::Registry::new();
//! lull_detectors::register(&mut registry);
//! lull_skeptics::register(&mut registry);
//! let cfg = output::RankConfig {
//!     sources: Source::all_builtin(Nanos::from_secs(3600), 1),
//!     grid: grid::default_grid("none"),
//!     grid_name: "default".into(),
//!     replay: ReplayOptions::default(),
//!     jobs: None,
//!     shard: Shard::ALL,
//!     disk: None,
//!     lenient: false,
//!     progress: false,
//!     out: "report".into(),
//!     score: lull_rank::Mode::Robust,
//!     limits: lull_rank::Limits::default(),
//!     validate: None,
//! };
//! let outcome = output::rank(&cfg, &registry).unwrap();
//! print!("{}", outcome.table(10));
//! ```
//!
//! ## How it is built
//!
//! - **[`grid`]**: which networks. A grid is spec strings (and cartesian
//!   templates in TOML) plus reference rows (`auto`, the best fixed timer,
//!   the oracle). The built-in grid covers the paper's sweep, written
//!   relative to the device's break-even time `B` and each trace's mean
//!   request rate `R`, and is
//!   resolved against the registry at run time, so components other crates
//!   add later join it by name, and entries whose component is not
//!   registered yet are skipped with a note instead of failing the run.
//! - **[`sweep`]**: running them. Each trace is parsed once into a
//!   `Timeline` that every network reads; (trace, network) jobs run on a
//!   rayon pool of `--jobs` threads; a strided shard `K/N` of the jobs can
//!   run on another machine. Rows carry their indices and are sorted, so
//!   scheduling never shows in the output.
//! - **[`score`]**: the ranking math on plain numbers (robust scaling
//!   against the trace's references, or the paper's min–max; distance,
//!   mean and variance across traces, competition ranks, Pareto
//!   frontiers), unit tested by hand. [`axes`] says which two measures
//!   each task trades off and how each is scaled.
//! - **[`analysis`]**: from rows to an answer: the best fixed timer in
//!   hindsight and every row's `excess_vs_best_fixed`, equivalent networks
//!   collapsed, frontiers marked, and the recommendation under the user's
//!   limits ([`Limits`]).
//! - **[`table`]** (polars): `results` and `ranking` frames, CSV and
//!   Parquet. **[`plot`]** (plotters, embedded font, SVG and PNG) and
//!   **[`report`]** (`report.md`, the stdout table) are drawn from the rows
//!   alone, so `lull plot DIR` and `lull rank merge` redraw them without
//!   re-running anything.
//! - **[`output`]**: the pipeline and the directory layout; every file is
//!   written through [`atomic`] (temporary file, fsync, rename), so an
//!   interrupted run never leaves half a file behind.
//!
//! Only this crate depends on polars and plotters (SPEC §1): an embedder who
//! wants detectors needs none of it.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

pub mod analysis;
pub mod atomic;
pub mod axes;
pub mod columns;
pub mod grid;
// Means across traces: public through `report`.
mod means;
// What a run did (`run.toml`): public through `output`.
mod meta;
pub mod output;
pub mod plan_plot;
pub mod plot;
pub mod report;
pub mod score;
pub mod sweep;
pub mod table;

pub use analysis::Limits;
pub use grid::{Grid, GridError, default_grid, default_grid_for};
pub use output::{ALL_DISKS, Outcome, RankConfig, RunMeta, merge, merge_with, rank, replot};
pub use score::Mode;
pub use sweep::{Shard, Source, day_seed, warm_up_seed};

/// Everything that can go wrong in a ranking.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    /// Bad flags, grid or inputs (exit code 2).
    #[error("{0}")]
    Input(String),
    /// A bad grid (exit code 2).
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A trace could not be read.
    #[error(transparent)]
    Trace(lull_blktrace_replay::TraceError),
    /// A file could not be read or written. The message includes the I/O
    /// error, so it is not also `source()` (it would print twice).
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A table could not be built, read or written.
    #[error("table: {0}")]
    Table(String),
    /// A plot could not be drawn.
    #[error("plot: {0}")]
    Plot(String),
}

impl RankError {
    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        RankError::Io {
            path: path.as_ref().to_path_buf(),
            error: source,
        }
    }

    /// Whether the user's input is at fault (exit code 2) rather than the
    /// system (exit code 1).
    pub fn is_input_error(&self) -> bool {
        match self {
            RankError::Input(_) | RankError::Grid(_) => true,
            RankError::Trace(e) => e.is_input_error(),
            RankError::Io { .. } | RankError::Table(_) | RankError::Plot(_) => false,
        }
    }
}

/// The task family of a task name: `writeback` for `writeback-paper`,
/// `writeback(cap=4MiB)` or `writeback+manners`, and so on.
pub fn base_task(task: &str) -> &str {
    let t = task.split(['+', '(']).next().unwrap_or(task).trim();
    t.strip_suffix("-paper").unwrap_or(t)
}

/// A registry with every detector and skeptic of this build.
pub fn registry() -> lull_core::registry::Registry {
    let mut r = lull_core::registry::Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r
}
