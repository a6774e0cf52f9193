//! No skeptic of the default grid is its input again.
//!
//! A skeptic that judges predicted durations (`low-pass`, `quality`,
//! `violation-rate`) passes every prediction that carries none, and
//! `low-pass(min=B)` every prediction of a fixed duration of at least `B`.
//! The spin-down grid runs its start detectors without duration predictors
//! (the disk wakes on a request whatever the predicted end), and for a
//! while its skeptic networks were built the same way: five of its sixty
//! networks ranked as "equivalent" to their inputs on every trace, skeptics
//! that never filtered anything. Here the default grid of each task is
//! is taken (its skeptic networks and the input of each, alone), ranked on
//! two days of a built-in workload (`time-of-day` learns the busiest hours
//! on the first), and no skeptic network may have measures identical to
//! another network's. And the ranking's first line, which made those
//! networks visible ("55 networks × 30 traces, 1890 runs" did not add up),
//! counts every run.

use lull_core::time::Nanos;
use lull_rank::{Grid, RankConfig, Source, default_grid, rank};

/// Skeptics whose spec names them at the sink.
const SKEPTICS: &[&str] = &["low-pass(", "quality(", "violation-rate(", "time-of-day("];

fn skeptic(spec: &str) -> bool {
    SKEPTICS.iter().any(|s| spec.starts_with(s))
}

/// The input of a one-input skeptic's spec: `low-pass(min=B; X)` → `X`.
fn input(spec: &str) -> String {
    let inner = &spec[spec.find('(').unwrap() + 1..spec.len() - 1];
    inner.split_once("; ").map_or(inner, |(_, x)| x).to_string()
}

/// The grid's skeptic networks and each one's input.
fn skeptics_and_inputs(task: &str) -> Grid {
    let mut grid = default_grid(task);
    let skeptics: Vec<String> = grid.specs.into_iter().filter(|s| skeptic(s)).collect();
    grid.specs = skeptics
        .iter()
        .cloned()
        .chain(skeptics.iter().map(|s| input(s)))
        .collect();
    grid.specs.dedup();
    grid.references = vec!["oracle()".into()];
    grid
}

fn identical_skeptics(task: &str, workload: &str) -> (usize, Vec<String>) {
    let out = tempfile::tempdir().unwrap();
    let grid = skeptics_and_inputs(task);
    let source = Source::Builtin {
        name: workload.into(),
        duration: Nanos::from_secs(2 * 86_400),
        seed: 3,
        day: None,
        warm_up: None,
    };
    let cfg = RankConfig::new(vec![source], grid, "default", task, out.path());
    let outcome = rank(&cfg, &lull_rank::registry()).expect("the default grid ranks");
    let spec = |i: usize| {
        outcome
            .rows
            .iter()
            .find(|r| r.network_index == i)
            .map(|r| r.spec.clone())
            .unwrap_or_default()
    };
    let mut skeptics = 0;
    let mut identical = Vec::new();
    for s in &outcome.summaries {
        let name = spec(s.policy);
        skeptics += usize::from(skeptic(&name));
        for e in s.equivalents.iter().map(|&i| spec(i)) {
            skeptics += usize::from(skeptic(&e));
            if skeptic(&name) || skeptic(&e) {
                identical.push(format!("`{e}` = `{name}`"));
            }
        }
    }
    (skeptics, identical)
}

/// Ranks `task`'s skeptic networks on two days of `workload` and fails on
/// any identical to another network.
fn check(task: &str, workload: &str, least: usize) {
    let (skeptics, identical) = identical_skeptics(task, workload);
    assert!(
        skeptics >= least,
        "{task}: only {skeptics} skeptic networks in the grid"
    );
    assert!(
        identical.is_empty(),
        "{task}: skeptic networks identical to another network on two days of `{workload}`:\n{}",
        identical.join("\n")
    );
}

#[test]
fn every_skeptic_of_the_spindown_grid_filters_something() {
    check("spindown", "office", 4);
}

/// `cleaning` has the same skeptic networks (the grid of the tasks that
/// move I/O); ranked on its own measures, `low-pass(min=B)` over
/// `average(n=10)` drops a few predictions on these workloads (a second
/// less of predicted idle time in a day) but cleans the same segments.
#[test]
fn every_skeptic_of_the_writeback_grid_filters_something() {
    check("writeback", "office", 5);
}

/// The ranking's first line counts what ran: the distinct networks, those
/// folded into one of them, and the references, which times the traces
/// make the runs.
#[test]
fn the_counts_of_the_first_line_add_up_to_the_runs() {
    let out = tempfile::tempdir().unwrap();
    let grid = Grid {
        specs: vec![
            "timer(t=B)".into(),
            // No duration to judge: it passes everything.
            "quality(threshold=0.8; timer(t=B))".into(),
            "timer(t=2B)".into(),
        ],
        references: vec!["oracle()".into()],
        lenient: false,
    };
    let sources = Source::all_builtin(Nanos::from_secs(3600), 5)
        .into_iter()
        .take(2)
        .collect();
    let cfg = RankConfig::new(sources, grid, "counts", "spindown", out.path());
    let outcome = rank(&cfg, &lull_rank::registry()).unwrap();
    assert_eq!(
        lull_rank::report::counted(&outcome.summaries),
        "2 networks (1 more identical to one of them) and 1 reference"
    );
    assert_eq!(outcome.rows.len(), (2 + 1 + 1) * 2);
    // The oracle is written against B like the networks, and is exactly
    // the oracle its rows measure themselves against.
    for r in outcome.rows.iter().filter(|r| r.reference) {
        assert_eq!(r.spec, "oracle(min=B)");
        let (e, o) = (r.measure("energy_j"), r.measure("oracle_energy_j"));
        assert_eq!(e, o, "{}", r.trace);
    }
    let report = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        report.contains(
            "2 networks (1 more identical to one of them) and 1 reference on 2 traces (8 runs)"
        ),
        "{report}"
    );
}
