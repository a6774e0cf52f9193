//! The example of this package (the tokio one: the light `lull` facade's
//! examples, in crates/lull/examples, are run by its own tests) is run
//! here so it never rots.

#[path = "../examples/async_service.rs"]
#[allow(unreachable_pub, dead_code)]
mod async_service;

use lull::core::prelude::*;

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
