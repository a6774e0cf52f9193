//! What a run did: `run.toml`, the facts about each trace, and the
//! out-of-sample validation. [`crate::output`] writes and reads it and
//! re-exports its types; [`crate::report`] shows it.

use serde::{Deserialize, Serialize};

use crate::analysis::Limits;
use crate::score::Mode;

/// Facts about one trace of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceMeta {
    /// Index in the run.
    pub index: usize,
    /// Short name.
    pub name: String,
    /// Where it came from.
    pub source: String,
    /// Requests replayed.
    pub requests: u64,
    /// First arrival to last completion, seconds.
    pub span_s: f64,
    /// Total idle time, seconds.
    pub idle_s: f64,
    /// Number of idle periods.
    pub idle_periods: u64,
    /// Mean request rate (IO/s): what `R` means in the grid's rate
    /// thresholds on this trace.
    #[serde(default)]
    pub mean_rate: f64,
    /// Why the trace was left out of the ranking (`saturated`), if it
    /// was: it has no rows, and counts of traces leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

/// `n` and the word for one or many ("1 trace", "3 traces").
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl RunMeta {
    /// The traces the ranking scored (not [`TraceMeta::left_out`]).
    pub fn ranked_traces(&self) -> usize {
        self.traces.iter().filter(|t| t.left_out.is_none()).count()
    }

    /// How many traces were ranked, for a sentence: `3 traces`, or
    /// `2 traces (1 left out: saturated)` when some were left out.
    pub fn traces_text(&self) -> String {
        let mut text = plural(self.ranked_traces(), "trace", "traces");
        let mut why: Vec<&str> = self
            .traces
            .iter()
            .filter_map(|t| t.left_out.as_deref())
            .collect();
        if !why.is_empty() {
            let out = why.len();
            why.sort_unstable();
            why.dedup();
            text += &format!(" ({out} left out: {})", why.join(", "));
        }
        text
    }
}

/// Out-of-sample validation (`--validate F`): the recommendation picked on
/// the first fraction of each trace, measured on the rest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// The fraction of each trace (by time) the pick was made on.
    pub fraction: f64,
    /// The network picked on the first part.
    pub pick: String,
    /// Its mean distance there.
    pub pick_in_sample: f64,
    /// Its mean distance on the rest.
    pub pick_out_of_sample: f64,
    /// Its rank on the rest.
    pub pick_rank_out_of_sample: usize,
    /// The best network on the rest, in hindsight.
    pub best_out_of_sample: String,
    /// Its mean distance there.
    pub best_out_of_sample_distance: f64,
    /// Networks ranked on the rest.
    pub ranked: usize,
}

/// What a run did: `run.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// The crate version that wrote it.
    pub version: String,
    /// The idle task.
    pub task: String,
    /// The stop policy.
    pub policy: String,
    /// Request timing.
    pub timing: String,
    /// Device preset, if one was given.
    pub device: Option<String>,
    /// `default` or the grid file.
    pub grid: String,
    /// Fingerprint of the resolved network list.
    pub grid_fingerprint: String,
    /// Networks in the grid (with the reference).
    pub networks: usize,
    /// The traces, by index.
    pub traces: Vec<TraceMeta>,
    /// `K/N` for a shard; absent for a whole (or merged) run.
    pub shard: Option<String>,
    /// Runs this directory holds.
    pub runs: usize,
    /// Skipped networks, failed runs, device choices: one line each.
    pub notes: Vec<String>,
    /// The device's break-even time `B` (s) the networks were built with.
    #[serde(default)]
    pub breakeven_s: Option<f64>,
    /// Whether the best fixed timer in hindsight is a reference row (its
    /// rows have network index `networks`).
    #[serde(default)]
    pub best_fixed: bool,
    /// How measures were scaled.
    #[serde(default)]
    pub score: Mode,
    /// Limits the recommendation keeps.
    #[serde(default)]
    pub limits: Limits,
    /// Out-of-sample validation, when asked for.
    #[serde(default)]
    pub validation: Option<Validation>,
}
