//! The examples are run here so they never rot; each checks its outcome.

#[path = "../examples/custom_detector.rs"]
#[allow(unreachable_pub, dead_code)]
mod custom_detector;
#[path = "../examples/writeback_cache.rs"]
#[allow(unreachable_pub, dead_code)]
mod writeback_cache;

use lull::core::prelude::*;

#[test]
fn custom_detector_and_skeptic_work_from_a_spec_string() {
    let out = custom_detector::run();
    let s = Nanos::from_secs;
    // quiet-writes(2s) fires 2 s after each write; cap clamps fixed(60s)
    // to 5 s. The read at 2.5 s stops the first run (earlier-of).
    assert_eq!(
        out.predictions,
        vec![
            Prediction::new(s(2), Some(s(5))),
            Prediction::new(s(22), Some(s(5)))
        ]
    );
    // Declared [2, 2.5) and [22, 27) = 5.5 s of 37.5 s idle.
    assert_eq!(out.measures.predicted_s, 5.5);
    assert_eq!(out.measures.actual_s, 37.5);
    assert_eq!(out.measures.violations, 0);
}

#[test]
fn writeback_cache_flushes_every_write_exactly_once() {
    let out = writeback_cache::run().unwrap();
    let s = &out.stats;
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

#[path = "../examples/async_service.rs"]
#[allow(unreachable_pub, dead_code)]
mod async_service;

/// The same network makes identical decisions driven by the replay driver
/// and by a tokio service under the paused clock.
#[tokio::test(start_paused = true)]
async fn tokio_driver_matches_replay_under_paused_time() {
    // tokio's timer has millisecond resolution, so requests arrive on a
    // millisecond grid: arrivals at even milliseconds, completions at odd
    // ones, so no completion shares an instant with an arrival (see the
    // example's docs on exact ties). Gaps from 2 ms to 40 s; requests
    // overlap.
    let mut t = 0u64;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut trace = Vec::new();
    for _ in 0..400 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += 2
            * (1 + match x % 4 {
                0 => x % 7,
                1 => x % 450,
                2 => x % 2_500,
                _ => x % 20_000,
            });
        let service = 2 * ((x >> 20) % 15) + 1;
        trace.push(Request::new(
            Nanos::from_millis(t),
            Nanos::from_millis(t + service),
            Op::Write,
            0,
            4096,
        ));
    }
    let timeline = Timeline::from_requests(&trace);
    for spec in [
        "timer(1s) + fixed(10s)",
        "timer(300ms)",
        "vote(threshold=1; timer(2s) + fixed(5s), timer(500ms) + fixed(1s))",
    ] {
        for policy in [StopPolicy::EarlierOf, StopPolicy::PredictedEnd] {
            let registry = lull::registry();
            let net = build_network(spec, &registry).unwrap();
            let mut engine = Engine::with_policy(net, policy, NoTask).with_log();
            let replayed = replay(&timeline, &mut engine).unwrap();
            let (live, live_log) = async_service::run_trace(&trace, spec, policy).await;
            let replay_log = engine.log();
            if let Some(i) = (0..live_log.len().max(replay_log.len()))
                .find(|&i| live_log.get(i) != replay_log.get(i))
            {
                panic!(
                    "{spec} under {policy}: logs differ at entry {i}: live {:?}, replay {:?}",
                    live_log.get(i),
                    replay_log.get(i)
                );
            }
            assert_eq!(live.internal, replayed.internal, "{spec} under {policy}");
            assert!(!live_log.is_empty());
        }
    }
}
