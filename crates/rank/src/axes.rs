//! Which two measures a task is ranked on, which way is better, and the
//! units used on plot axes.
//!
//! The pairs follow the paper's evaluation of each task (§4.2–§4.4); for
//! the no-op task `none` the internal measures are ranked, efficiency
//! against violation rate (§5.3.1). A task this table does not know (one
//! added after this crate) falls back to the internal pair, with a note.

use crate::score::Better;

/// One axis of a ranking: a measure and its direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    /// The measure's name, as the replay reports it.
    pub measure: &'static str,
    /// Which end is better.
    pub better: Better,
    /// How the robust score scales it.
    pub form: Form,
}

/// How the robust score ([`crate::score::Mode::Robust`]) maps a measure to
/// `[0, 1]` (0 = best) against references the other networks cannot move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Form {
    /// A benefit whose "no task" value is 0: the share of the ideal
    /// captured, `v / ideal`, clipped to `[0, 1]` and scored `1 − share`;
    /// a negative value is flagged "worse than no task".
    Share(Ideal),
    /// A cost, 0 at best: `c / (c + c_ref)` with `c_ref` the oracle row's
    /// value on the trace (0.5 = as costly as the oracle); when the oracle
    /// costs nothing, the median positive cost of the trace's networks.
    Cost,
}

/// Where the ideal of a [`Form::Share`] comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ideal {
    /// Another measure of the same row (spindown: `oracle_saved_pct`).
    Measure(&'static str),
    /// The oracle row's value of the measure on the same trace.
    Oracle,
    /// A constant (efficiency: 1).
    Const(f64),
}

/// The two measures a task trades off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axes {
    /// The horizontal axis of the trade-off plot.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// Whether the task is in this table (false: the internal fallback).
    pub known: bool,
}

const fn axis(measure: &'static str, better: Better) -> Axis {
    let form = match better {
        Better::Higher => Form::Share(Ideal::Oracle),
        Better::Lower => Form::Cost,
    };
    Axis {
        measure,
        better,
        form,
    }
}

const fn share(measure: &'static str, ideal: Ideal) -> Axis {
    Axis {
        measure,
        better: Better::Higher,
        form: Form::Share(ideal),
    }
}

/// The axes of `task`; a variant `TASK+WRAPPER` (such as
/// `writeback+manners`) is ranked like `TASK`.
pub fn axes(task: &str) -> Axes {
    let base = crate::base_task(task);
    let (x, y, known) = match base {
        // §4.2, Figure 9: power saved against the delay it costs. The
        // paper counts delayed operations; we count the seconds they
        // waited behind spin-ups (per hour, so traces of any length
        // compare), since one spin-up's wait is seconds, not a count.
        // Delayed requests per hour stay in the summary table.
        "spindown" => (
            share("energy_saved_pct", Ideal::Measure("oracle_saved_pct")),
            axis("wait_s_per_hour", Better::Lower),
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
            share("efficiency", Ideal::Const(1.0)),
            axis("violation_rate", Better::Lower),
            other == "none",
        ),
    };
    Axes { x, y, known }
}

/// A human label with units for a measure name.
pub fn label(measure: &str) -> String {
    // Names whose unit is already in words, said once.
    let said = match measure {
        "energy_saved_pct" => "energy saved (%)",
        "oracle_saved_pct" => "oracle's energy saved (%)",
        "latency_improvement_pct" => "latency improvement (%)",
        "delayed_ops" => "delayed requests",
        "delayed_ops_per_hour" => "delayed requests per hour",
        "wait_s_per_hour" => "seconds waited behind spin-ups per hour",
        "spinups" => "spin-ups",
        "spinups_per_day" => "spin-ups per day",
        _ => "",
    };
    if !said.is_empty() {
        return said.into();
    }
    let unit = match measure {
        "actual_s" | "predicted_s" | "overflow_s" | "added_latency_s" => "s",
        "violations" => "requests",
        "violation_rate" => "violations per declared second",
        "efficiency" | "incompetence" => "fraction of idle time",
        "energy_j" | "baseline_energy_j" | "oracle_energy_j" => "J",
        "competitive_ratio" => "× oracle energy",
        "excess_vs_best_fixed" => "× best fixed timer's excess over the oracle",
        "oracle_share" => "share of the oracle's savings",
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
    // A name that ends in its unit says it once, in the parentheses:
    // "mean added delay (ms)", not "mean added delay ms (ms)".
    let bare = measure
        .strip_suffix(&format!("_{unit}"))
        .filter(|_| !unit.is_empty())
        .unwrap_or(measure);
    let name = bare.replace('_', " ");
    if unit.is_empty() {
        name
    } else {
        format!("{name} ({unit})")
    }
}

/// The column heading of a measure's mean over the traces: "mean
/// energy saved (%)", but "mean queue (bytes)" for a measure that is a
/// mean already, not "mean mean queue".
pub fn mean_label(measure: &str) -> String {
    let l = label(measure);
    if l.starts_with("mean ") {
        l
    } else {
        format!("mean {l}")
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
        assert_eq!(label("delayed_ops"), "delayed requests");
        assert_eq!(label("energy_saved_pct"), "energy saved (%)");
        assert_eq!(label("mystery"), "mystery");
    }
}
