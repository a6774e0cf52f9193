//! The model-timing driver with writeback and cleaning: no write lost,
//! duplicated or reordered; the queue within its cap; cleaning keeps up
//! when there is idle time; interruption semantics; CLI-level options.

use std::collections::HashMap;

use lull_blktrace_replay::model::{ModelOptions, Source, run_model};
use lull_blktrace_replay::replay::{ReplayOptions, Timing, replay_spec, resolve_timing};
use lull_blktrace_replay::synth;
use lull_core::actuator::StopPolicy;
use lull_core::event::Timeline;
use lull_core::request::{Op, Request};
use lull_core::spec::build_network;
use lull_core::time::Nanos;
use lull_tasks::background::BackgroundTask;
use lull_tasks::cleaning::{Cleaning, CleaningConfig};
use lull_tasks::device::ServiceModel;
use lull_tasks::writeback::{Writeback, WritebackConfig};
use proptest::prelude::*;

fn registry() -> lull_core::registry::Registry {
    let mut r = lull_core::registry::Registry::new();
    lull_detectors::register(&mut r);
    r
}

fn measure(pairs: &[(&'static str, f64)], name: &str) -> f64 {
    pairs
        .iter()
        .find(|p| p.0 == name)
        .unwrap_or_else(|| panic!("no {name} in {pairs:?}"))
        .1
}

fn ms(x: u64) -> Nanos {
    Nanos::from_millis(x)
}

/// Random read/write traces: bursts over a few hundred sectors, gaps up
/// to 2 s.
fn trace() -> impl Strategy<Value = Vec<Request>> {
    prop::collection::vec((0u64..2000, prop::bool::ANY, 0u64..400, 1u32..64), 1..150).prop_map(
        |v| {
            let mut t = 0;
            v.into_iter()
                .map(|(gap, write, sector, sectors)| {
                    t += gap;
                    let op = if write { Op::Write } else { Op::Read };
                    Request::new(ms(t), ms(t), op, sector, sectors * 512)
                })
                .collect()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn writeback_loses_duplicates_and_reorders_nothing(
        reqs in trace(),
        net in prop::sample::select(vec!["timer(0s)", "timer(100ms) + fixed(500ms)", "timer(1s) + fixed(50ms)"]),
        small_cap in prop::bool::ANY,
    ) {
        let model = ServiceModel::default_model();
        let cfg = if small_cap {
            WritebackConfig { max_outstanding: 8192, queue_cap: 64 << 10, forced_flush: 32 << 10 }
        } else {
            WritebackConfig::default()
        };
        let task: Box<dyn BackgroundTask> = Box::new(Writeback::new(cfg, &model));
        let det = build_network(net, &registry()).unwrap();
        let out = run_model(&reqs, det, StopPolicy::EarlierOf, task, &model,
            ModelOptions { log: false, device_log: true, ..ModelOptions::default() }).unwrap();
        // Per (write, sector): how often it reached the disk; per sector:
        // the order of the writes that reached it.
        let mut count: HashMap<(u64, u64), u32> = HashMap::new();
        let mut order: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut apply = |tag: u64, sector: u64, bytes: u32| {
            for s in sector..sector + u64::from(bytes).div_ceil(512) {
                *count.entry((tag, s)).or_default() += 1;
                order.entry(s).or_default().push(tag);
            }
        };
        for rec in &out.device_log {
            match rec.source {
                Source::Task(io) => apply(io.tag, io.sector, io.bytes),
                Source::Foreground(i) if rec.op == Op::Write => apply(i as u64, rec.sector, rec.bytes),
                Source::Foreground(_) => {}
            }
        }
        // Task I/O still in the disk's queue at the end is neither logged
        // nor drained: count the bytes that did reach the disk or the drain.
        for io in &out.drained {
            apply(io.tag, io.sector, io.bytes);
        }
        for (i, r) in reqs.iter().enumerate() {
            if r.op != Op::Write { continue; }
            for s in r.sector..r.sector + u64::from(r.bytes).div_ceil(512) {
                let c = count.get(&(i as u64, s)).copied().unwrap_or(0);
                prop_assert!(c <= 1, "write {} sector {} reached the disk {} times", i, s, c);
            }
        }
        for tags in order.values() {
            prop_assert!(tags.windows(2).all(|w| w[0] < w[1]), "reordered: {:?}", tags);
        }
        let max_q = measure(&out.report.task, "max_queue_bytes");
        prop_assert!(max_q <= cfg.queue_cap as f64);
    }
}

#[test]
fn writeback_with_a_quiet_end_writes_every_byte_exactly_once() {
    // A tail of idle time lets the disk finish everything: then every byte
    // is in the device log or the drain exactly once.
    let model = ServiceModel::default_model();
    let mut reqs: Vec<Request> = (0..200u64)
        .map(|i| {
            let op = if i % 3 == 0 { Op::Read } else { Op::Write };
            Request::new(
                ms(i * 7),
                ms(i * 7),
                op,
                (i * 37) % 500,
                4096 * (1 + (i % 4) as u32),
            )
        })
        .collect();
    reqs.push(Request::new(ms(60_000), ms(60_000), Op::Read, 0, 512));
    let task: Box<dyn BackgroundTask> =
        Box::new(Writeback::new(WritebackConfig::default(), &model));
    let det = build_network("timer(10ms)", &registry()).unwrap();
    let out = run_model(
        &reqs,
        det,
        StopPolicy::EarlierOf,
        task,
        &model,
        ModelOptions {
            log: false,
            device_log: true,
            ..ModelOptions::default()
        },
    )
    .unwrap();
    assert!(out.drained.is_empty(), "the idle minute flushed the queue");
    let written: u64 = out
        .device_log
        .iter()
        .filter(|r| r.op == Op::Write)
        .map(|r| u64::from(r.bytes))
        .sum();
    let want: u64 = reqs
        .iter()
        .filter(|r| r.op == Op::Write)
        .map(|r| u64::from(r.bytes))
        .sum();
    assert_eq!(written, want);
}

/// Bursts of writes every `period`, `n` bursts.
fn periodic(n: u64, period_ms: u64) -> Vec<Request> {
    let mut out = Vec::new();
    for b in 0..n {
        for k in 0..20u64 {
            let t = b * period_ms + k * 5;
            let op = if k % 2 == 0 { Op::Write } else { Op::Read };
            out.push(Request::new(ms(t), ms(t), op, b * 1000 + k * 16, 8192));
        }
    }
    out
}

fn clean(reqs: &[Request], net: &str) -> Vec<(&'static str, f64)> {
    let model = ServiceModel::preset("hp97560").unwrap();
    let task: Box<dyn BackgroundTask> = Box::new(Cleaning::new(CleaningConfig::default(), &model));
    let det = build_network(net, &registry()).unwrap();
    run_model(
        reqs,
        det,
        StopPolicy::EarlierOf,
        task,
        &model,
        ModelOptions::default(),
    )
    .unwrap()
    .report
    .task
}

#[test]
fn cleaning_keeps_up_when_there_is_idle_time() {
    // 10 writes of 8 KiB (80 KiB) every 10 s, the rest idle. Whatever the
    // length of the trace, the backlog stays under a couple of bursts.
    let short = clean(&periodic(30, 10_000), "timer(100ms) + fixed(5s)");
    let long = clean(&periodic(300, 10_000), "timer(100ms) + fixed(5s)");
    for m in [&short, &long] {
        assert!(
            measure(m, "max_unprocessed_bytes") <= 2.0 * 80.0 * 1024.0,
            "{m:?}"
        );
        assert!(measure(m, "cycles") >= 1.0);
    }
    assert_eq!(
        measure(&short, "max_unprocessed_bytes"),
        measure(&long, "max_unprocessed_bytes")
    );
    // A detector that never fires lets it grow with the trace: 300 bursts
    // of 80 KiB.
    let never = clean(&periodic(300, 10_000), "timer(1h)");
    assert_eq!(measure(&never, "cycles"), 0.0);
    assert_eq!(
        measure(&never, "max_unprocessed_bytes"),
        300.0 * 80.0 * 1024.0
    );
}

#[test]
fn cleaning_cycles_are_interrupted_only_while_reading() {
    // Bursts of ten 1 MiB writes 600 ms apart, every 30 s. On the hp97560
    // one write takes ≈ 440 ms, so the device empties between them;
    // timer(0s) with no duration starts a 1 MiB cycle at once (≈ 16 reads
    // of 64 KiB, ≈ 470 ms) and the next write, ≈ 160 ms later, interrupts
    // the read. Every interrupted cycle still completes (it writes what it
    // read), so interrupted ≤ cycles, and the long gaps clean the rest.
    let mut reqs = Vec::new();
    for b in 0..20u64 {
        for k in 0..10u64 {
            let t = ms(b * 30_000 + k * 600);
            reqs.push(Request::new(
                t,
                t,
                Op::Write,
                b * 100_000 + k * 2048,
                1 << 20,
            ));
        }
    }
    let m = clean(&reqs, "timer(0s)");
    let cycles = measure(&m, "cycles");
    let interrupted = measure(&m, "interrupted_cycles");
    assert!(interrupted >= 1.0, "{m:?}");
    assert!(interrupted <= cycles);
    assert!(
        measure(&m, "max_unprocessed_bytes") <= 10.0 * 1024.0 * 1024.0,
        "{m:?}"
    );
}

#[test]
fn timing_follows_the_task() {
    assert_eq!(
        resolve_timing("spindown", Timing::Auto).unwrap(),
        Timing::Trace
    );
    assert_eq!(
        resolve_timing("writeback", Timing::Auto).unwrap(),
        Timing::Model
    );
    assert_eq!(
        resolve_timing("cleaning", Timing::Model).unwrap(),
        Timing::Model
    );
    let e = resolve_timing("writeback", Timing::Trace)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--timing model"), "{e}");
    assert!(resolve_timing("spindown", Timing::Model).is_err());
    assert!(resolve_timing("defrag", Timing::Auto).is_err());
}

#[test]
fn replay_spec_reports_every_spec_key() {
    let reg = registry();
    let trace = synth::generate(
        synth::shape("workstation").unwrap(),
        Nanos::from_secs(1800),
        3,
    );
    let timeline = Timeline::from_requests(&trace.requests);
    let spec = lull_core::spec::NetworkSpec::parse("timer(1s) + fixed(10s)", Some(&reg)).unwrap();
    let keys: [(&str, &[&str]); 3] = [
        (
            "spindown",
            &[
                "energy_j",
                "baseline_energy_j",
                "oracle_energy_j",
                "energy_saved_pct",
                "oracle_saved_pct",
                "competitive_ratio",
                "spinups",
                "delayed_ops",
                "added_latency_s",
            ],
        ),
        (
            "writeback",
            &[
                "read_latency_ms",
                "baseline_read_latency_ms",
                "latency_improvement_pct",
                "mean_queue_bytes",
                "max_queue_bytes",
                "forced_flushes",
            ],
        ),
        (
            "cleaning",
            &[
                "mean_added_delay_ms",
                "mean_unprocessed_bytes",
                "max_unprocessed_bytes",
                "cycles",
                "interrupted_cycles",
            ],
        ),
    ];
    for (task, want) in keys {
        let opts = ReplayOptions {
            task: task.into(),
            ..ReplayOptions::default()
        };
        let out = replay_spec(&timeline, &spec, &reg, &opts).unwrap();
        let pairs = out.report.pairs();
        let names: Vec<&str> = pairs.iter().map(|p| p.0).collect();
        assert_eq!(
            &names[..7],
            [
                "actual_s",
                "predicted_s",
                "overflow_s",
                "violations",
                "violation_rate",
                "efficiency",
                "incompetence"
            ]
        );
        assert_eq!(&names[7..], want);
        assert!(pairs.iter().all(|p| p.1.is_finite()), "{pairs:?}");
    }
    // Devices: presets and custom values, bad names rejected.
    for (task, dev) in [
        ("spindown", "kittyhawk"),
        (
            "spindown",
            "p_active=2,p_sleep=0.5,p_spinup=4,t_spinup=2s,t_spindown=1s",
        ),
        ("writeback", "wd-red-plus"),
        ("cleaning", "hp97560,rpm=7200"),
    ] {
        let opts = ReplayOptions {
            task: task.into(),
            device: Some(dev.into()),
            ..ReplayOptions::default()
        };
        replay_spec(&timeline, &spec, &reg, &opts).unwrap();
    }
    let bad = ReplayOptions {
        task: "writeback".into(),
        device: Some("floppy".into()),
        ..ReplayOptions::default()
    };
    assert!(replay_spec(&timeline, &spec, &reg, &bad).is_err());
}

#[test]
fn writeback_improves_reads_on_a_read_write_mix() {
    let reg = registry();
    let trace = synth::generate(
        synth::shape("workstation").unwrap(),
        Nanos::from_secs(3600),
        1,
    );
    let timeline = Timeline::from_requests(&trace.requests);
    let spec =
        lull_core::spec::NetworkSpec::parse("timer(100ms) + fixed(10s)", Some(&reg)).unwrap();
    let opts = ReplayOptions {
        task: "writeback".into(),
        // The paper's disk, where writes are expensive (docs/results.md).
        device: Some("hp97560".into()),
        ..ReplayOptions::default()
    };
    let r = replay_spec(&timeline, &spec, &reg, &opts)
        .unwrap()
        .report
        .task;
    assert!(measure(&r, "latency_improvement_pct") > 10.0, "{r:?}");
    assert!(measure(&r, "read_latency_ms") < measure(&r, "baseline_read_latency_ms"));
}
