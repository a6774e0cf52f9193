//! Background regulation under model timing (issue 11): the preemption
//! interval gate, MS Manners and latency-target policy selection on the
//! built-in workloads, each next to plain detectors.
//!
//! The assertions pin the *shape* of each paper's headline result; the
//! ignored `regulation_tables` prints the tables of `docs/results.md`
//! ("Background regulation"):
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-regulate cargo test --release -p lull-blktrace-replay \
//!     --test regulate_replay -- --ignored --nocapture
//! ```

use lull_blktrace_replay::model::{ModelOptions, Source, requests_of, run_model};
use lull_blktrace_replay::synth;
use lull_core::actuator::StopPolicy;
use lull_core::event::Timeline;
use lull_core::registry::Registry;
use lull_core::request::Request;
use lull_core::spec::build_network;
use lull_core::time::Nanos;
use lull_tasks::background::{BackgroundTask, IoClass};
use lull_tasks::cleaning::{Cleaning, CleaningConfig};
use lull_tasks::device::ServiceModel;
use lull_tasks::manners::{MannersConfig, Regulated};
use lull_tasks::writeback::{Writeback, WritebackConfig};

/// The components, with the default disk's break-even time for work that
/// moves I/O (its random access), as `lull replay --task cleaning` has it:
/// the adaptive timers' defaults are relative to it.
fn registry() -> Registry {
    let mut r = lull_detectors::registry();
    lull_skeptics::register(&mut r);
    r.set_breakeven(Some(ServiceModel::default_model().break_even()));
    r
}

fn workload(name: &str, secs: u64) -> Vec<Request> {
    let mut t = synth::generate(synth::shape(name).unwrap(), Nanos::from_secs(secs), 1);
    t.sort();
    requests_of(&Timeline::from_requests(&t.requests))
}

/// What one run gives.
#[derive(Clone, Debug)]
struct Row {
    /// Foreground latency percentiles, ms (requests served by the disk).
    p50: f64,
    p95: f64,
    p99: f64,
    mean: f64,
    /// Idle-time bytes the task moved through the disk, MiB.
    bg_mib: f64,
    /// Time-weighted backlog, KiB: cleaning's unprocessed bytes,
    /// writeback's queue.
    backlog_kib: f64,
    /// Writeback's forced foreground flushes.
    forced: f64,
}

#[derive(Clone, Copy, Debug)]
enum Task {
    Cleaning,
    Writeback,
}

fn task(
    kind: Task,
    manners: Option<MannersConfig>,
    model: &ServiceModel,
) -> Box<dyn BackgroundTask> {
    match (kind, manners) {
        (Task::Cleaning, None) => Box::new(Cleaning::new(CleaningConfig::default(), model)),
        (Task::Writeback, None) => Box::new(Writeback::new(WritebackConfig::default(), model)),
        (Task::Cleaning, Some(c)) => Box::new(Regulated::new(
            Cleaning::new(CleaningConfig::default(), model),
            c,
        )),
        (Task::Writeback, Some(c)) => Box::new(Regulated::new(
            Writeback::new(WritebackConfig::default(), model),
            c,
        )),
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1]
}

fn run(
    reqs: &[Request],
    spec: &str,
    policy: StopPolicy,
    kind: Task,
    manners: Option<MannersConfig>,
) -> Row {
    let model = ServiceModel::default_model();
    let net = build_network(spec, &registry()).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let out = run_model(
        reqs,
        net,
        policy,
        task(kind, manners, &model),
        &model,
        ModelOptions {
            log: false,
            device_log: true,
            ..ModelOptions::default()
        },
    )
    .unwrap();
    let mut lat = Vec::new();
    let mut bg = 0u64;
    for r in &out.device_log {
        match r.source {
            Source::Foreground(i) => lat.push((r.done - reqs[i].arrival).as_secs_f64() * 1e3),
            Source::Task(io) if io.class == IoClass::Idle => bg += u64::from(io.bytes),
            Source::Task(_) => {}
        }
    }
    lat.sort_by(f64::total_cmp);
    let measure = |name: &str| {
        out.report
            .task
            .iter()
            .find(|m| m.0 == name)
            .map_or(0.0, |m| m.1)
    };
    Row {
        backlog_kib: (measure("mean_unprocessed_bytes") + measure("mean_queue_bytes")) / 1024.0,
        forced: measure("forced_flushes"),
        p50: pct(&lat, 50.0),
        p95: pct(&lat, 95.0),
        p99: pct(&lat, 99.0),
        mean: lat.iter().sum::<f64>() / lat.len().max(1) as f64,
        bg_mib: bg as f64 / (1 << 20) as f64,
    }
}

/// Eggert, Figures 4.13–4.19: as p grows, foreground latency falls toward
/// the no-background baseline and background work falls, to nothing once
/// p exceeds the foreground inter-arrival gaps.
#[test]
fn gate_trades_background_work_for_foreground_latency_as_p_grows() {
    let reqs = workload("news", 300);
    let base = run(
        &reqs,
        "timer(t=0s)",
        StopPolicy::EarlierOf,
        Task::Cleaning,
        None,
    );
    let rows: Vec<(u64, Row)> = [0u64, 20, 200, 2000, 60_000]
        .into_iter()
        .map(|p| {
            let spec = format!("preempt-gate(p={p}ms, bounds=false; timer(t=0s))");
            (
                p,
                run(&reqs, &spec, StopPolicy::EarlierOf, Task::Cleaning, None),
            )
        })
        .collect();
    // p = 0 is the ungated detector.
    assert!(
        (rows[0].1.bg_mib - base.bg_mib).abs() < 1e-9,
        "{rows:?} {base:?}"
    );
    for w in rows.windows(2) {
        assert!(w[1].1.bg_mib <= w[0].1.bg_mib + 1e-9, "{rows:?}");
    }
    let (first, last) = (&rows[0].1, &rows[rows.len() - 1].1);
    assert!(first.bg_mib > 0.0);
    assert!(last.bg_mib < 0.2 * first.bg_mib, "{rows:?}");
    assert!(last.mean < first.mean && last.p99 < first.p99, "{rows:?}");
}

/// The auto-tuned gate and the bounded gate build from spec strings and
/// sit between the extremes.
#[test]
fn auto_gate_and_bounded_gate_run_in_replay() {
    let reqs = workload("news", 300);
    let free = run(
        &reqs,
        "timer(t=0s)",
        StopPolicy::EarlierOf,
        Task::Cleaning,
        None,
    );
    for spec in [
        "preempt-gate-auto(timer(t=0s))",
        "preempt-gate(p=500ms; timer(t=0s))",
    ] {
        let r = run(&reqs, spec, StopPolicy::EarlierOf, Task::Cleaning, None);
        assert!(
            r.bg_mib > 0.0 && r.bg_mib <= free.bg_mib,
            "{spec}: {r:?} {free:?}"
        );
        assert!(r.mean <= free.mean, "{spec}: {r:?} {free:?}");
    }
}

fn manners_cfg() -> MannersConfig {
    MannersConfig {
        base: Nanos::from_millis(500),
        cap: Nanos::from_secs(30),
        init_samples: 50,
        ..MannersConfig::default()
    }
}

/// Douceur & Bolosky §8: a background task that runs regardless of the
/// foreground (here: always offered time, `predicted-end` over
/// hour-long predictions) hurts it; regulated by MS Manners it suspends
/// itself when its own operations slow down, cutting the foreground
/// impact while still getting its work done (cleaning's work is bounded
/// by what the foreground wrote, so it is delayed, not lost).
#[test]
fn manners_cuts_the_foreground_impact_of_an_always_on_task() {
    let reqs = workload("database", 300);
    let spec = "timer(t=0s) + fixed(d=1h)";
    let raw = run(&reqs, spec, StopPolicy::PredictedEnd, Task::Cleaning, None);
    let reg = run(
        &reqs,
        spec,
        StopPolicy::PredictedEnd,
        Task::Cleaning,
        Some(manners_cfg()),
    );
    assert!(reg.bg_mib >= 0.9 * raw.bg_mib, "{reg:?} {raw:?}");
    assert!(reg.mean < raw.mean, "{reg:?} {raw:?}");
}

/// The middleware paper §4.1: the hybrid meets a foreground percentile
/// target that running background work freely misses, and does more
/// background work than foreground-only (which does none).
#[test]
fn latency_target_meets_the_target_free_running_misses() {
    let reqs = workload("news", 600);
    let policy = StopPolicy::PredictedEnd;
    let free = run(
        &reqs,
        "timer(t=0s) + fixed(d=1h)",
        policy,
        Task::Cleaning,
        None,
    );
    let target = free.p95 * 0.5;
    let spec = format!(
        "latency-target(target={}us, percentile=95, window=5s; timer(t=0s) + fixed(d=1h))",
        (target * 1e3) as u64
    );
    let hybrid = run(&reqs, &spec, policy, Task::Cleaning, None);
    assert!(hybrid.p95 < free.p95, "{hybrid:?} {free:?}");
    assert!(hybrid.bg_mib > 0.0, "{hybrid:?}");
}

/// Prints the tables of docs/results.md, "Background regulation": all three
/// with headings, or only the one `LULL_REGULATION_TABLE` names (`gate`,
/// `manners`, `latency-target`), bare, as `scripts/figures.sh` splices it.
#[test]
#[ignore = "prints the docs/results.md tables; run with --release --ignored --nocapture"]
fn regulation_tables() {
    let secs = 1800;
    let head = "| workload | network | task | policy | p50 ms | p95 ms | p99 ms | mean ms | background MiB | mean backlog KiB | forced flushes |\n|---|---|---|---|---|---|---|---|---|---|---|";
    let line = |w: &str, spec: &str, t: &str, pol: StopPolicy, r: &Row| {
        println!(
            "| {w} | `{spec}` | {t} | {pol} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {:.0} | {} |",
            r.p50, r.p95, r.p99, r.mean, r.bg_mib, r.backlog_kib, r.forced
        )
    };
    let only = std::env::var("LULL_REGULATION_TABLE").ok();
    if let Some(t) = &only {
        assert!(
            ["gate", "manners", "latency-target"].contains(&t.as_str()),
            "LULL_REGULATION_TABLE={t}: expected gate, manners or latency-target"
        );
    }
    let table = |name: &str, heading: &str| match &only {
        None => {
            println!("\n### {heading}\n\n{head}");
            true
        }
        Some(t) if t == name => {
            println!("{head}");
            true
        }
        Some(_) => false,
    };
    let workloads: &[&str] = &["workstation", "news", "database", "sync30"];
    let gate: &[&str] = if table("gate", "Preemption-interval gate: cleaning, earlier-of") {
        workloads
    } else {
        &[]
    };
    for &w in gate {
        let reqs = workload(w, secs);
        let mut specs: Vec<String> = vec![
            "timer(t=100ms) + fixed(d=1s)".into(),
            "adapt-timer-arith-geom(step=100ms) + fixed(d=1s)".into(),
            "timer(t=0s)".into(),
        ];
        for p in ["5ms", "20ms", "100ms", "500ms", "2s", "10s"] {
            specs.push(format!("preempt-gate(p={p}, bounds=false; timer(t=0s))"));
        }
        specs.push("preempt-gate(p=100ms; timer(t=0s))".into());
        specs.push("preempt-gate-auto(timer(t=0s))".into());
        for s in &specs {
            let r = run(&reqs, s, StopPolicy::EarlierOf, Task::Cleaning, None);
            line(w, s, "cleaning", StopPolicy::EarlierOf, &r);
        }
    }
    let manners: &[&str] = if table("manners", "MS Manners: always-on task vs regulated") {
        workloads
    } else {
        &[]
    };
    for &w in manners {
        let reqs = workload(w, secs);
        // The paper's FIFO writeback (`WritebackConfig::default()`), as
        // `lull replay --task writeback-paper` runs it.
        for (kind, tname) in [
            (Task::Cleaning, "cleaning"),
            (Task::Writeback, "writeback-paper"),
        ] {
            let r = run(&reqs, "timer(t=0s)", StopPolicy::EarlierOf, kind, None);
            line(w, "timer(t=0s)", tname, StopPolicy::EarlierOf, &r);
            let s = "timer(t=0s) + fixed(d=1h)";
            let r = run(&reqs, s, StopPolicy::PredictedEnd, kind, None);
            line(w, s, tname, StopPolicy::PredictedEnd, &r);
            let r = run(
                &reqs,
                s,
                StopPolicy::PredictedEnd,
                kind,
                Some(MannersConfig::default()),
            );
            line(
                w,
                s,
                &format!("{tname}+manners"),
                StopPolicy::PredictedEnd,
                &r,
            );
            let r = run(
                &reqs,
                s,
                StopPolicy::PredictedEnd,
                kind,
                Some(manners_cfg()),
            );
            line(
                w,
                s,
                &format!("{tname}+manners, base 500ms, cap 30s, n'' 50"),
                StopPolicy::PredictedEnd,
                &r,
            );
        }
    }
    let latency: &[&str] = if table(
        "latency-target",
        "Latency target: cleaning, predicted-end, target = ½ the free-running p95",
    ) {
        workloads
    } else {
        &[]
    };
    for &w in latency {
        let reqs = workload(w, secs);
        let s = "timer(t=0s) + fixed(d=1h)";
        let free = run(&reqs, s, StopPolicy::PredictedEnd, Task::Cleaning, None);
        line(w, s, "cleaning", StopPolicy::PredictedEnd, &free);
        let target_us = (free.p95 * 500.0) as u64;
        let spec = format!("latency-target(target={target_us}us, percentile=95, window=5s; {s})");
        let r = run(&reqs, &spec, StopPolicy::PredictedEnd, Task::Cleaning, None);
        line(w, &spec, "cleaning", StopPolicy::PredictedEnd, &r);
        let r = run(
            &reqs,
            "timer(t=100ms) + fixed(d=1s)",
            StopPolicy::EarlierOf,
            Task::Cleaning,
            None,
        );
        line(
            w,
            "timer(t=100ms) + fixed(d=1s)",
            "cleaning",
            StopPolicy::EarlierOf,
            &r,
        );
    }
}

/// `lull replay --task cleaning+manners` goes through `replay_spec`: the
/// regulated tasks are known there, run on the model, and report the
/// regulator's measures after the task's own.
#[test]
fn manners_tasks_replay_from_spec_strings() {
    use lull_blktrace_replay::replay::{ReplayOptions, replay_spec};
    use lull_core::spec::NetworkSpec;
    let mut t = synth::generate(synth::shape("news").unwrap(), Nanos::from_secs(60), 1);
    t.sort();
    let timeline = Timeline::from_requests(&t.requests);
    let reg = registry();
    let spec = NetworkSpec::parse("preempt-gate(p=20ms; timer(t=0s))", Some(&reg)).unwrap();
    for task in ["cleaning+manners", "writeback+manners"] {
        let opts = ReplayOptions {
            task: task.into(),
            ..ReplayOptions::default()
        };
        let out = replay_spec(&timeline, &spec, &reg, &opts).unwrap();
        let names: Vec<&str> = out.report.task.iter().map(|m| m.0).collect();
        assert!(names.contains(&"manners_suspensions"), "{task}: {names:?}");
        assert!(names.contains(&"background_bytes"), "{task}: {names:?}");
    }
}

/// Prints docs/results.md's saturation table ("Saturation (issue 17)"):
/// peak utilization over the busiest 60 s window and the longest queueing
/// delay of each paper-era built-in workload (4 h, seed 1) on the two
/// drive presets, as `lull replay` computes them before a model-timing
/// run. `scripts/regulation-table.sh saturation` runs it.
#[test]
#[ignore = "prints the docs/results.md saturation table; run with --release --ignored --nocapture"]
fn saturation_table() {
    use lull_blktrace_replay::model::{SATURATION_WINDOW, saturation};
    let workloads = ["workstation", "news", "database", "sync30"];
    println!("| device | {} |", workloads.join(" | "));
    println!("|---|{}", "---|".repeat(workloads.len()));
    let traces: Vec<Vec<Request>> = workloads.iter().map(|w| workload(w, 4 * 3600)).collect();
    for (device, label) in [
        (
            "wd-red-plus",
            "`wd-red-plus`: peak utilization, longest wait",
        ),
        ("hp97560", "`hp97560`"),
    ] {
        let model = lull_blktrace_replay::replay::service_model(Some(device)).unwrap();
        let cells: Vec<String> = traces
            .iter()
            .map(|reqs| {
                let s = saturation(reqs, &model, SATURATION_WINDOW);
                let cell = format!(
                    "{:.2}, {:.1} s",
                    s.peak_utilization,
                    s.max_wait.as_secs_f64()
                );
                if s.is_saturated() {
                    format!("**{cell}**")
                } else {
                    cell
                }
            })
            .collect();
        println!("| {label} | {} |", cells.join(" | "));
    }
}
