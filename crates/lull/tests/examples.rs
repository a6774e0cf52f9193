//! The examples are run here so they never rot; each checks its outcome.

#[path = "../examples/custom_detector.rs"]
#[allow(unreachable_pub, dead_code)]
mod custom_detector;
#[path = "../examples/spindown_auto.rs"]
#[allow(unreachable_pub, dead_code)]
mod spindown_auto;
#[path = "../examples/writeback_cache.rs"]
#[allow(unreachable_pub, dead_code)]
mod writeback_cache;
#[path = "../examples/writeback_spindown.rs"]
#[allow(unreachable_pub, dead_code)]
mod writeback_spindown;

use lull::prelude::*;

#[test]
fn custom_detector_and_skeptic_work_from_a_b_relative_spec() {
    let out = custom_detector::run();
    let b = out.break_even;
    assert_eq!(b, Nanos::from_secs(3), "the paper's 2.5-inch drive");
    // quiet-writes(B) fires B after each write; cap(max=2B) clamps
    // fixed(20B) to 2B. The read at 7B/6 stops the first run (earlier-of).
    assert_eq!(
        out.predictions,
        vec![
            Prediction::new(b, Some(b * 2)),
            Prediction::new(b * 8, Some(b * 2))
        ]
    );
    // Declared [B, 7B/6) and [8B, 10B) = 6.5 s of 39.5 s idle.
    assert_eq!(out.measures.predicted_s, 6.5);
    assert_eq!(out.measures.actual_s, 39.5);
    assert_eq!(out.measures.violations, 0);
}

#[test]
fn writeback_cache_flushes_every_write_exactly_once() {
    let out = writeback_cache::run().unwrap();
    let s = &out.stats;
    assert_eq!(
        out.break_even,
        lull::tasks::ServiceModel::preset("wd-red-plus")
            .unwrap()
            .break_even()
    );
    assert_eq!(
        out.mismatched_blocks, 0,
        "the file holds the last write of every block"
    );
    assert_eq!(out.stale_reads, 0, "reads see the latest data");
    // Every dirty version reached the file exactly once: each write either
    // replaced a still-dirty block or was flushed once.
    assert_eq!(s.flushed_idle + s.flushed_shutdown + s.coalesced, s.writes);
    assert!(s.flushed_idle > 0);
    assert!(
        s.flushed_idle * 10 >= (s.flushed_idle + s.flushed_shutdown) * 9,
        "most flushing happens in idle time: {s:?}"
    );
    // Flushing never overlaps foreground requests: earlier-of with no
    // duration stops at the next arrival.
    assert_eq!(out.measures.violations, 0);
}

#[test]
fn spindown_with_auto_pulls_commands_and_keeps_what_it_learned() {
    let out = spindown_auto::run();
    let b = out.break_even;
    assert_eq!(b.as_secs_f64().round(), 72.0, "wd-red-plus: {b}");
    for day in [&out.first, &out.restored, &out.fresh] {
        assert!(day.requests > 500, "{}", day.requests);
        assert!(day.spindowns > 5, "auto spins the disk down: {day:?}");
        assert!(
            day.energy_j < day.always_on_j * 0.8,
            "and saves energy: {} J against {} J",
            day.energy_j,
            day.always_on_j
        );
        // Commands alternate: a spin-down, then the request that needs
        // the disk again, never two spin-downs in a row.
        let starts: Vec<bool> = day
            .commands
            .iter()
            .filter_map(|(_, c)| match c {
                Command::Start { .. } => Some(true),
                Command::Stop => Some(false),
                _ => None,
            })
            .collect();
        assert!(starts.windows(2).all(|w| w[0] != w[1]), "{starts:?}");
        assert!(day.commands.windows(2).all(|w| w[0].0 <= w[1].0));
    }
    // The state learned on day one went through JSON and was restored:
    // the restored day is not the fresh one. It names what `auto` stood
    // for on this drive, not the name.
    assert!(
        out.saved_json.contains("\"network\":\"long-idle\""),
        "{}",
        &out.saved_json[..out.saved_json.len().min(200)]
    );
    assert_ne!(out.restored.commands, out.fresh.commands);
    assert_eq!(out.restored.requests, out.fresh.requests, "the same day");
    // On this day what `auto` learned the day before saves energy
    // (deterministic: the same numbers every run).
    assert!(
        out.restored.energy_j < out.fresh.energy_j,
        "restored {} J, fresh {} J",
        out.restored.energy_j,
        out.fresh.energy_j
    );
    assert!(out.refused.contains("break-even"), "{}", out.refused);
}

#[test]
fn writeback_with_spindown_keeps_the_data_and_saves_energy() {
    let o = writeback_spindown::run();
    let r = &o.report;
    assert_eq!(o.mismatched_blocks, 0, "the disk holds every last write");
    assert!(o.writes > 100 && o.flushed > 0, "{o:?}");
    assert!(o.flushed <= o.writes, "writes coalesce in the cache");
    // Completions came back late and were taken, none lost.
    assert!(o.late_completions > 0, "{o:?}");
    assert_eq!(o.outstanding, 0);
    // The disk slept, within the wear budget, and saved energy.
    assert!(r.spinups > 3 && r.spinups <= 48 + 8, "{r:?}");
    assert!(r.energy_j < r.baseline_energy_j * 0.8, "{r:?}");
    assert!(r.energy_j >= r.oracle_energy_j, "{r:?}");
    // Judged against the best fixed timeout in hindsight.
    assert!(o.excess_ratio.is_finite(), "{o:?}");
    assert!(o.best_fixed.energy_j >= r.oracle_energy_j - 1e-6, "{o:?}");
}
