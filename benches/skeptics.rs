//! Cost per event of skeptic networks (issue 4): a 5-input `share` over
//! timers from 0.1 s to 30 s, next to the same five timers under `vote`
//! and one timer alone, on one synthetic bursty trace.
//!
//! `cargo bench --bench skeptics`. Criterion reports elements (events) per
//! second; the cost per event is its inverse. Each iteration builds the
//! network from its spec and replays the whole trace with task `none`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lull::core::prelude::*;

/// `n` requests of 5 ms with bursty gaps: mostly under 200 ms, some of
/// 0.5–3.5 s and a few of 5–25 s (a fixed LCG, so every run is the same).
fn trace(n: usize) -> Vec<Request> {
    let ms = Nanos::from_millis;
    let mut reqs = Vec::with_capacity(n);
    let (mut t, mut x) = (0u64, 0x2545_f491_4f6c_dd1du64);
    for _ in 0..n {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = x >> 20;
        let gap = match (x >> 33) % 10 {
            0..=6 => r % 200,
            7..=8 => 500 + r % 3_000,
            _ => 5_000 + r % 20_000,
        };
        reqs.push(Request::new(
            ms(t),
            ms(t + 5),
            Op::Read,
            r % 1_000_000,
            4096,
        ));
        t += 5 + gap;
    }
    reqs
}

const TIMERS: &str = "timer(100ms), timer(1s), timer(3s), timer(10s), timer(30s)";

fn bench(c: &mut Criterion) {
    let registry = lull::registry();
    let timeline = Timeline::from_requests(&trace(50_000));
    let events = timeline.events().len() as u64;
    let mut g = c.benchmark_group("skeptics-50k-requests");
    g.throughput(Throughput::Elements(events));
    g.sample_size(20);
    let specs = [
        ("timer-alone", "timer(1s)".to_string()),
        ("share-5", format!("follow-share(breakeven=3s; {TIMERS})")),
        (
            "share-5-majority",
            format!("follow-share(breakeven=3s, follow=majority; {TIMERS})"),
        ),
        ("vote-5", format!("vote(threshold=3; {TIMERS})")),
    ];
    for (name, spec) in &specs {
        // Fail early, outside the measurement, if a spec does not build.
        build_network(spec, &registry).expect("bench spec builds");
        g.bench_function(*name, |b| {
            b.iter_batched(
                || {
                    let net = build_network(spec, &registry).expect("bench spec builds");
                    Engine::with_policy(net, StopPolicy::EarlierOf, NoTask)
                },
                |mut engine| black_box(replay(&timeline, &mut engine).expect("replay")),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
