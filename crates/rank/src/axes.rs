//! Which two measures a task is ranked on, which way is better, and the
//! units used on plot axes.
//!
//! The pairs follow the paper's evaluation of each task (§4.2–§4.4); for
//! the no-op task `none` the internal measures are ranked, efficiency
//! against violation rate (§5.3.1). A task this table does not know (one
//! added after this crate) falls back to the internal pair, with a note.

use crate::score::Better;

/// One axis of a ranking: a measure and its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    /// The measure's name, as the replay reports it.
    pub measure: &'static str,
    /// Which end is better.
    pub better: Better,
}

/// The two measures a task trades off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axes {
    /// The horizontal axis of the trade-off plot.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// Whether the task is in this table (false: the internal fallback).
    pub known: bool,
}

const fn axis(measure: &'static str, better: Better) -> Axis {
    Axis { measure, better }
}

/// The axes of `task`; a variant `TASK+WRAPPER` (such as
/// `writeback+manners`) is ranked like `TASK`.
pub fn axes(task: &str) -> Axes {
    let base = task.split('+').next().unwrap_or(task);
    let (x, y, known) = match base {
        // §4.2, Figure 9: power saved against delayed operations.
        "spindown" => (
            axis("energy_saved_pct", Better::Higher),
            axis("delayed_ops", Better::Lower),
            true,
        ),
        // §4.3, Figure 11: read-latency improvement against queue length.
        "writeback" => (
            axis("latency_improvement_pct", Better::Higher),
            axis("mean_queue_bytes", Better::Lower),
            true,
        ),
        // §4.4, Figure 14: unprocessed data against added delay.
        "cleaning" => (
            axis("mean_unprocessed_bytes", Better::Lower),
            axis("mean_added_delay_ms", Better::Lower),
            true,
        ),
        other => (
            axis("efficiency", Better::Higher),
            axis("violation_rate", Better::Lower),
            other == "none",
        ),
    };
    Axes { x, y, known }
}

/// A human label with units for a measure name.
pub fn label(measure: &str) -> String {
    let unit = match measure {
        "actual_s" | "predicted_s" | "overflow_s" | "added_latency_s" => "s",
        "violations" => "requests",
        "violation_rate" => "violations per declared second",
        "efficiency" | "incompetence" => "fraction of idle time",
        "energy_j" | "baseline_energy_j" | "oracle_energy_j" => "J",
        "energy_saved_pct" | "oracle_saved_pct" | "latency_improvement_pct" => "%",
        "competitive_ratio" => "× oracle energy",
        "spinups" => "spin-ups",
        "delayed_ops" => "delayed requests",
        "read_latency_ms" | "baseline_read_latency_ms" | "mean_added_delay_ms" => "ms",
        "mean_queue_bytes"
        | "max_queue_bytes"
        | "mean_unprocessed_bytes"
        | "max_unprocessed_bytes" => "bytes",
        "forced_flushes" => "flushes",
        "cycles" | "interrupted_cycles" => "cycles",
        "distance" => "scaled distance, 0 = best",
        _ => "",
    };
    let name = measure.replace('_', " ");
    if unit.is_empty() {
        name
    } else {
        format!("{name} ({unit})")
    }
}

/// "higher is better" / "lower is better".
pub fn direction(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_fallback() {
        assert!(axes("spindown").known);
        assert_eq!(axes("spindown").x.measure, "energy_saved_pct");
        assert!(axes("none").known);
        let f = axes("defrag");
        assert!(!f.known);
        assert_eq!(f.x.measure, "efficiency");
        assert_eq!(
            axes("writeback+manners").x.measure,
            "latency_improvement_pct"
        );
        assert_eq!(label("delayed_ops"), "delayed ops (delayed requests)");
        assert_eq!(label("mystery"), "mystery");
    }
}
