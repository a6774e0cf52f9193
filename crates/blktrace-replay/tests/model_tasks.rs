//! The model-timing driver with writeback and cleaning: no write lost,
//! duplicated or reordered, and reads see the newest data, under both
//! writeback policies; the queue within its cap; cleaning keeps up when
//! there is idle time; interruption semantics; saturation; CLI-level
//! options.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use lull_blktrace_replay::model::{
    ModelOptions, SATURATION_WINDOW, Source, requests_of, run_model, saturation,
};
use lull_blktrace_replay::replay::{
    ReplayOptions, Timing, make_background_task, replay_spec, resolve_timing, saturation_check,
};
use lull_blktrace_replay::synth;
use lull_core::actuator::StopPolicy;
use lull_core::component::Context;
use lull_core::event::Timeline;
use lull_core::request::{Op, Request};
use lull_core::spec::build_network;
use lull_core::task::{Granularity, IdleTask, Measure};
use lull_core::time::Nanos;
use lull_tasks::background::{Admission, BackgroundTask, Baseline, DeviceIo};
use lull_tasks::cleaning::{Cleaning, CleaningConfig};
use lull_tasks::device::Disk;
use lull_tasks::device::ServiceModel;
use lull_tasks::writeback::{Piece, Writeback, WritebackConfig};
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
    #![proptest_config(lull_testkit::cases(64))]
    #[test]
    fn writeback_loses_duplicates_and_reorders_nothing(
        reqs in trace(),
        net in prop::sample::select(vec!["timer(0s)", "timer(100ms) + fixed(500ms)", "timer(1s) + fixed(50ms)"]),
        small_cap in prop::bool::ANY,
        through_when_idle in prop::bool::ANY,
    ) {
        let model = ServiceModel::default_model();
        let cfg = if small_cap {
            WritebackConfig { max_outstanding: 8192, queue_cap: 64 << 10, forced_flush: 32 << 10, ..WritebackConfig::paper() }
        } else if through_when_idle {
            // FIFO, whose device writes carry the foreground write's index
            // as their tag (the accounting below); the elevator's pieces
            // are checked in lull-tasks' own property.
            WritebackConfig { absorb: lull_tasks::writeback::Absorb::WhenBusy, ..WritebackConfig::paper() }
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

/// What [`Audited`] saw: the foreground data each task write carried, and
/// for each foreground read what the task's memory held for its first
/// sector at arrival.
#[derive(Debug, Default)]
struct Audit {
    pieces: HashMap<(u64, u64), Vec<Piece>>,
    reads: HashMap<u64, Option<u64>>,
}

/// A writeback task that records [`Audit`] for the test.
#[derive(Debug)]
struct Audited {
    wb: Writeback,
    audit: Arc<Mutex<Audit>>,
    arrivals: u64,
}

impl Audited {
    fn record(&self, out: &[DeviceIo]) {
        let mut a = self.audit.lock().unwrap();
        for io in out {
            let p = self.wb.pieces_of(io).expect("an issued write").to_vec();
            a.pieces.insert((io.tag, io.sector), p);
        }
    }
}

impl IdleTask for Audited {
    fn name(&self) -> &'static str {
        self.wb.name()
    }
    fn granularity(&self) -> Granularity {
        self.wb.granularity()
    }
    fn start(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.wb.start(ctx, budget)
    }
    fn renew(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.wb.renew(ctx, budget)
    }
    fn stop(&mut self, ctx: &Context) {
        self.wb.stop(ctx)
    }
    fn finish(&mut self, end: Nanos) {
        self.wb.finish(end)
    }
    fn measures(&self) -> Vec<Measure> {
        self.wb.measures()
    }
}

impl BackgroundTask for Audited {
    fn on_arrival(&mut self, req: &Request, now: Nanos, out: &mut Vec<DeviceIo>) -> Admission {
        let before = out.len();
        if req.op == Op::Read {
            let held = self.wb.latest(req.sector);
            self.audit.lock().unwrap().reads.insert(self.arrivals, held);
        }
        self.arrivals += 1;
        let a = self.wb.on_arrival(req, now, out);
        self.record(&out[before..]);
        a
    }
    fn poll(&mut self, now: Nanos, free: Nanos, disk: &Disk, out: &mut Vec<DeviceIo>) {
        let before = out.len();
        self.wb.poll(now, free, disk, out);
        self.record(&out[before..]);
    }
    fn on_io_done(&mut self, io: &DeviceIo, now: Nanos) {
        self.wb.on_io_done(io, now)
    }
    fn on_foreground_done(&mut self, op: Op, arrival: Nanos, done: Nanos) {
        self.wb.on_foreground_done(op, arrival, done)
    }
    fn set_baseline(&mut self, baseline: Baseline) {
        self.wb.set_baseline(baseline)
    }
    fn drain(&mut self, out: &mut Vec<DeviceIo>) {
        let before = out.len();
        self.wb.drain(out);
        self.record(&out[before..]);
    }
    fn read_priority(&self) -> bool {
        self.wb.read_priority()
    }
}

/// Random traces dense enough to fill a small queue: gaps of 0–30 ms
/// (an hp97560 write takes longer), over a couple of hundred sectors.
fn dense_trace() -> impl Strategy<Value = Vec<Request>> {
    prop::collection::vec((0u64..30, 0u32..5, 0u64..200, 1u32..64), 1..250).prop_map(|v| {
        let mut t = 0;
        v.into_iter()
            .map(|(gap, kind, sector, sectors)| {
                t += if kind == 0 { gap * 100 } else { gap };
                let op = if kind < 3 { Op::Write } else { Op::Read };
                Request::new(ms(t), ms(t), op, sector, sectors * 512)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(lull_testkit::cases(128))]
    /// Both policies on the driver: every sector of every write reaches
    /// the disk at most once and in the order written, the disk ends with
    /// the newest data, every read sees the newest data (from the task's
    /// memory or the disk), and the queue stays within its cap.
    #[test]
    fn both_policies_keep_the_data_right_on_the_driver(
        reqs in prop_oneof![trace(), dense_trace()],
        net in prop::sample::select(vec!["timer(0s)", "timer(100ms) + fixed(500ms)", "timer(1s) + fixed(50ms)"]),
        improved in prop::bool::ANY,
        policy in prop::sample::select(vec![StopPolicy::EarlierOf, StopPolicy::PredictedEnd]),
    ) {
        let model = ServiceModel::preset("hp97560").unwrap();
        let base = if improved { WritebackConfig::improved(&model) } else { WritebackConfig::paper() };
        let cfg = WritebackConfig { queue_cap: 48 << 10, forced_flush: base.forced_flush.min(16 << 10), high_water: base.high_water.min(24 << 10), ..base };
        let audit = Arc::new(Mutex::new(Audit::default()));
        let task = Audited { wb: Writeback::new(cfg, &model), audit: audit.clone(), arrivals: 0 };
        let det = build_network(net, &registry()).unwrap();
        let out = run_model(&reqs, det, policy, Box::new(task), &model,
            ModelOptions { device_log: true, ..ModelOptions::default() }).unwrap();
        let audit = audit.lock().unwrap();
        // Replay the device log: the disk's content and, per (write, sector),
        // how often it landed.
        let mut disk: HashMap<u64, u64> = HashMap::new();
        let mut count: HashMap<(u64, u64), u32> = HashMap::new();
        let mut order: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut truth: HashMap<u64, u64> = HashMap::new();
        let mut seen_by_read: Vec<(usize, u64, Option<u64>)> = Vec::new();
        let mut apply = |disk: &mut HashMap<u64, u64>, tag: u64, sector: u64, sectors: u64| {
            for s in sector..sector + sectors {
                disk.insert(s, tag);
                *count.entry((tag, s)).or_default() += 1;
                order.entry(s).or_default().push(tag);
            }
        };
        for rec in &out.device_log {
            match rec.source {
                Source::Task(io) => {
                    for p in &audit.pieces[&(io.tag, io.sector)] {
                        apply(&mut disk, p.tag, p.sector, p.sectors);
                    }
                }
                Source::Foreground(i) if rec.op == Op::Write => {
                    apply(&mut disk, i as u64, rec.sector, u64::from(rec.bytes).div_ceil(512));
                }
                Source::Foreground(i) => seen_by_read.push((i, rec.sector, disk.get(&rec.sector).copied())),
            }
        }
        for io in &out.drained {
            for p in &audit.pieces[&(io.tag, io.sector)] {
                apply(&mut disk, p.tag, p.sector, p.sectors);
            }
        }
        prop_assert!(count.values().all(|&c| c == 1), "a write landed twice");
        for tags in order.values() {
            prop_assert!(tags.windows(2).all(|w| w[0] < w[1]), "reordered: {:?}", tags);
        }
        for (i, r) in reqs.iter().enumerate() {
            if r.op == Op::Write {
                for s in r.sector..r.sector + u64::from(r.bytes).div_ceil(512) {
                    truth.insert(s, i as u64);
                }
            }
        }
        // Task writes still in the device at the end are neither logged
        // nor drained; with a quiet end there are none (see the test
        // below), so compare only when the newest data of every sector
        // landed. (Counting entries is not enough: a superseded write that
        // was already in flight lands too, and can stand in for a sector
        // of the newest write still in the device.)
        let all_landed = truth.iter().all(|(s, t)| count.contains_key(&(*t, *s)));
        if out.device_log.last().is_none_or(|r| matches!(r.source, Source::Foreground(_))) && all_landed {
            prop_assert_eq!(&disk, &truth);
        }
        // Reads: the newest write before the read's arrival, from the
        // task's memory (recorded at arrival) or the disk.
        for (i, sector, on_disk) in seen_by_read {
            let want = reqs[..i].iter().enumerate().rev()
                .find(|(_, w)| w.op == Op::Write && sector >= w.sector && sector < w.sector + u64::from(w.bytes).div_ceil(512))
                .map(|(j, _)| j as u64);
            let held = audit.reads.get(&(i as u64)).copied().flatten();
            prop_assert_eq!(held.or(on_disk), want, "read {} of sector {}", i, sector);
        }
        prop_assert!(measure(&out.report.task, "max_queue_bytes") <= cfg.queue_cap as f64);
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
                // Beyond SPEC §4.2: the best fixed timeout in hindsight
                // (issue 15).
                "best_fixed_timeout_s",
                "best_fixed_energy_j",
                "excess_vs_best_fixed",
                // And the clairvoyant per-10-minute timer (issue 29).
                "window_clairvoyant_energy_j",
                "gain_vs_clairvoyant",
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
                "queued_bytes_at_end",
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

/// Three minutes of 64 KiB requests every 20 ms, scattered over the
/// hp97560: ≈ 48 ms of service each there, ≈ 11 ms on wd-red-plus.
fn saturating() -> Vec<Request> {
    (0..9000u64)
        .map(|i| {
            let t = ms(i * 20);
            let op = if i % 3 == 0 { Op::Write } else { Op::Read };
            Request::new(t, t, op, (i * 7919 * 128) % 2_600_000, 65536)
        })
        .collect()
}

#[test]
fn saturation_is_measured_against_the_device() {
    let reqs = saturating();
    let hp = ServiceModel::preset("hp97560").unwrap();
    let s = saturation(&reqs, &hp, SATURATION_WINDOW);
    assert!(s.is_saturated(), "{s}");
    assert!((2.0..3.0).contains(&s.peak_utilization), "{s}");
    // The queue grows for the whole trace: the last requests wait for
    // most of what came before.
    assert!(s.max_wait > Nanos::from_secs(200), "{s}");
    assert!(s.to_string().contains("utilization"));
    let wd = saturation(&reqs, &ServiceModel::default_model(), SATURATION_WINDOW);
    assert!(!wd.is_saturated(), "{wd}");
    assert!((0.3..1.0).contains(&wd.peak_utilization), "{wd}");
    // A window longer than the trace is the trace.
    let long = saturation(&reqs[..100], &hp, Nanos::from_secs(3600));
    assert!(long.window <= long.span.max(Nanos::NANO));
    // The built-in workloads: of the paper-era ones only database
    // overwhelms the 1993 disk (the structured ones stream or back up
    // megabytes at a time, which it cannot keep up with: not asserted);
    // the current drive serves them all.
    for name in synth::names() {
        let mut t = synth::generate(synth::shape(name).unwrap(), Nanos::from_secs(3 * 3600), 1);
        t.sort();
        let r = requests_of(&Timeline::from_requests(&t.requests));
        let s = saturation(&r, &hp, SATURATION_WINDOW);
        if ["workstation", "news", "sync30", "database"].contains(&name) {
            assert_eq!(s.is_saturated(), name == "database", "{name}: {s}");
        }
        let s = saturation(&r, &ServiceModel::default_model(), SATURATION_WINDOW);
        assert!(!s.is_saturated(), "{name}: {s}");
    }
    // replay's check: only for tasks under model timing.
    let timeline = Timeline::from_requests(&reqs);
    for (task, want) in [
        ("writeback", Some(true)),
        ("cleaning", Some(true)),
        ("spindown", None),
    ] {
        let opts = ReplayOptions {
            task: task.into(),
            device: Some("hp97560".into()),
            ..ReplayOptions::default()
        };
        let got = saturation_check(&timeline, &opts).unwrap();
        assert_eq!(got.map(|s| s.is_saturated()), want, "{task}");
    }
}

#[test]
fn writeback_policies_are_picked_by_name() {
    let m = ServiceModel::default_model();
    for name in [
        "writeback",
        "writeback-paper",
        "writeback(cap=4MiB, order=fifo)",
        "writeback-paper(read_priority=true)",
        "writeback+manners",
        "writeback-paper+manners",
        "cleaning+manners",
    ] {
        assert_eq!(
            resolve_timing(name, Timing::Auto).unwrap(),
            Timing::Model,
            "{name}"
        );
        make_background_task(name, &m).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert!(
        make_background_task("writeback", &m)
            .unwrap()
            .read_priority()
    );
    assert!(
        !make_background_task("writeback-paper", &m)
            .unwrap()
            .read_priority()
    );
    let e = make_background_task("writeback(speed=2)", &m)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("speed"), "{e}");
    assert!(resolve_timing("writeback-linux", Timing::Auto).is_err());
}

#[test]
fn the_improved_policy_helps_where_the_paper_policy_stalls_reads() {
    // database on wd-red-plus: the paper's FIFO policy hits the cap and its
    // 8 MiB forced flushes stall reads (docs/results.md); the improved one
    // never forces a flush and makes reads faster than without delay.
    let reg = registry();
    let mut trace = synth::generate(synth::shape("database").unwrap(), Nanos::from_secs(3600), 1);
    trace.sort();
    let timeline = Timeline::from_requests(&trace.requests);
    let spec = lull_core::spec::NetworkSpec::parse("timer(1s) + fixed(10s)", Some(&reg)).unwrap();
    let run = |task: &str| {
        let opts = ReplayOptions {
            task: task.into(),
            device: Some("wd-red-plus".into()),
            ..ReplayOptions::default()
        };
        replay_spec(&timeline, &spec, &reg, &opts)
            .unwrap()
            .report
            .task
    };
    let paper = run("writeback-paper");
    let improved = run("writeback");
    assert!(measure(&paper, "forced_flushes") > 0.0, "{paper:?}");
    assert!(
        measure(&paper, "latency_improvement_pct") < 0.0,
        "{paper:?}"
    );
    assert_eq!(measure(&improved, "forced_flushes"), 0.0, "{improved:?}");
    assert!(
        measure(&improved, "latency_improvement_pct") > 10.0,
        "{improved:?}"
    );
    assert!(measure(&improved, "max_queue_bytes") <= (16 << 20) as f64);
}

#[test]
fn auto_follows_the_task_cost_model() {
    use lull_blktrace_replay::replay::registry_for;
    let base = registry();
    let spec = |task: &str| {
        let r = registry_for(&base, task, Some("wd-red-plus")).unwrap();
        lull_core::spec::NetworkSpec::parse("auto", Some(&r)).unwrap()
    };
    let parse = |text: &str, task: &str| {
        let r = registry_for(&base, task, Some("wd-red-plus")).unwrap();
        lull_core::spec::NetworkSpec::parse(text, Some(&r)).unwrap()
    };
    assert_eq!(
        spec("spindown"),
        parse(lull_detectors::AUTO_SPEC, "spindown")
    );
    for task in ["writeback", "writeback-paper", "cleaning"] {
        assert_eq!(
            spec(task),
            parse(lull_detectors::AUTO_BACKGROUND_SPEC, task),
            "{task}"
        );
        assert_ne!(spec(task), parse(lull_detectors::AUTO_SPEC, task), "{task}");
    }
}

#[test]
fn auto_improves_reads_with_writeback_on_a_current_drive() {
    let base = registry();
    let trace = synth::generate(
        synth::shape("workstation").unwrap(),
        Nanos::from_secs(3600),
        1,
    );
    let timeline = Timeline::from_requests(&trace.requests);
    let opts = ReplayOptions {
        task: "writeback".into(),
        device: Some("wd-red-plus".into()),
        ..ReplayOptions::default()
    };
    let reg = lull_blktrace_replay::replay::registry_for(&base, "writeback", Some("wd-red-plus"))
        .unwrap();
    let spec = lull_core::spec::NetworkSpec::parse("auto", Some(&reg)).unwrap();
    let r = replay_spec(&timeline, &spec, &reg, &opts)
        .unwrap()
        .report
        .task;
    assert!(
        measure(&r, "read_latency_ms") < measure(&r, "baseline_read_latency_ms"),
        "{r:?}"
    );
}
