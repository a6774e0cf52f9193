//! The replay step against the memory-scan floor (issue 9): cost per event
//! of `timer(1s) + fixed(10s)` with task `none`, next to a bare scan that
//! only sums a field over the same event array; and `auto` (issue 15's
//! target, set on this path with the shortcuts on: at most 3×
//! `timer(1s)`; missed here since issue 29, met with the shortcuts off:
//! docs/performance.md, "`auto` per event"), built for the paper's 2.5"
//! drive (B = 3 s) and a NAS drive (B ≈ 72 s). Each of these also with the
//! engine's shortcuts off (`…/no-shortcuts`: every event pushed and every idle period
//! announced, as a live embedding and the daemon drive the engine), and
//! `auto` under a wear budget of 48 a day on that path (`auto-48/…`,
//! issue 75: at most 1.5× `auto`).
//!
//! `cargo bench --bench replay`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lull::core::prelude::*;
use lull::detectors::duration::Fixed;
use lull::detectors::timer::Timer;
use lull_blktrace_replay::synth;

#[path = "support/replay_trace.rs"]
mod replay_trace;

fn bench(c: &mut Criterion) {
    let tl = replay_trace::workstation(1_000_000);
    let events = tl.events().len() as u64;
    let registry = lull::registry();
    let mut g = c.benchmark_group("replay-1M-requests");
    g.throughput(Throughput::Elements(events));
    g.sample_size(20);

    g.bench_function("bare-scan", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for ev in black_box(tl.events()) {
                sum = sum.wrapping_add(ev.time.0 ^ u64::from(ev.bytes));
            }
            black_box(sum)
        })
    });

    g.bench_function("timer+fixed/dyn", |b| {
        b.iter(|| {
            let net = build_network("timer(1s) + fixed(10s)", &registry).unwrap();
            let mut engine = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask);
            black_box(replay(&tl, &mut engine).unwrap())
        })
    });

    // The straightforward path, every event pushed and every idle period
    // announced: what the batch paths save.
    g.bench_function("timer+fixed/dyn-no-shortcuts", |b| {
        b.iter(|| {
            let net = build_network("timer(1s) + fixed(10s)", &registry).unwrap();
            let mut engine =
                Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask).with_shortcuts(false);
            black_box(replay(&tl, &mut engine).unwrap())
        })
    });

    g.bench_function("timer+fixed/generic", |b| {
        b.iter(|| {
            let det = Predictor::new(
                Timer::new(Nanos::from_secs(1)),
                Fixed::new(Nanos::from_secs(10), false),
            );
            let mut engine = Engine::with_policy(det, StopPolicy::PredictedEnd, NoTask);
            black_box(replay(&tl, &mut engine).unwrap())
        })
    });

    for (name, preset) in [
        ("auto/paper-2.5in", "paper-2.5in"),
        ("auto/wd-red-plus", "wd-red-plus"),
    ] {
        let b_secs = lull::tasks::power::PowerModel::preset(preset)
            .expect("preset")
            .break_even_s();
        let scaled = lull::registry().with_breakeven(Nanos::from_secs_f64(b_secs));
        let spec = std::env::var("LULL_BENCH_AUTO").unwrap_or("auto".into());
        for shortcuts in [true, false] {
            // Without shortcuts: as `timer+fixed/dyn-no-shortcuts`, the
            // path a live embedding pays, to compare with that.
            let id = if shortcuts {
                name.to_string()
            } else {
                format!("{name}/no-shortcuts")
            };
            g.bench_function(id, |b| {
                b.iter(|| {
                    let net = build_network(&spec, &scaled).unwrap();
                    let mut engine = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask)
                        .with_shortcuts(shortcuts);
                    black_box(replay(&tl, &mut engine).unwrap())
                })
            });
        }
    }

    // Under a wear budget of 48 a day (issue 75: the pacer's 89 experts
    // per idle period; at most 1.5× `auto` per event), every event pushed.
    for (name, preset) in [
        ("auto-48/paper-2.5in/no-shortcuts", "paper-2.5in"),
        ("auto-48/wd-red-plus/no-shortcuts", "wd-red-plus"),
    ] {
        let b_secs = lull::tasks::power::PowerModel::preset(preset)
            .expect("preset")
            .break_even_s();
        let budgeted = lull::registry()
            .with_breakeven(Nanos::from_secs_f64(b_secs))
            .with_wear_budget(Some(48));
        g.bench_function(name, |b| {
            b.iter(|| {
                let net = build_network("auto", &budgeted).unwrap();
                let mut engine = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask)
                    .with_shortcuts(false);
                black_box(replay(&tl, &mut engine).unwrap())
            })
        });
    }

    g.bench_function("timeline-build", |b| {
        let shape = synth::shape("workstation").unwrap();
        let trace = synth::generate(shape, Nanos::from_secs(700_000), 42);
        b.iter(|| black_box(Timeline::from_requests(&trace.requests)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
