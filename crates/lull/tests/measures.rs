//! The internal measures of a live engine keep their definition
//! (`lull_core::measures::internal_measures`, SPEC §4.1) when the task
//! runs outside the requests' span: from `assume_idle` before the first
//! request, and past the last completion up to `finish` (embed-26 B1,
//! where efficiency came out near 2).

use lull::core::measures::{InternalMeasures, internal_measures};
use lull::prelude::*;
use lull_testkit::finished_declared as declared;
use proptest::prelude::*;

/// Drives `setup`'s `spec` live over `requests` (sorted by arrival, any
/// overlap), optionally from `assume_idle`, and finishes at `end`:
/// the engine's measures and the definition's over the same commands.
fn live(
    setup: &Setup,
    spec: &str,
    policy: StopPolicy,
    requests: &[Request],
    assume_idle: bool,
    end: Nanos,
) -> (InternalMeasures, InternalMeasures) {
    let network = setup.build_network(spec).unwrap();
    let mut engine = Engine::with_policy(network, policy, NoTask).with_log();
    if assume_idle {
        assert!(engine.assume_idle());
    }
    let timeline = Timeline::from_requests(requests);
    for ev in timeline.events() {
        engine.push(ev).unwrap();
    }
    let online = engine.finish(end).unwrap().internal;
    let reference = internal_measures(&timeline, &declared(engine.log()));
    (online, reference)
}

fn in_bounds(m: &InternalMeasures) {
    for (k, v) in m.pairs() {
        assert!(v.is_finite() && v >= 0.0, "{k} = {v}: {m:?}");
    }
    assert!(m.efficiency <= 1.0, "{m:?}");
    assert!(m.predicted_s <= m.actual_s + m.overflow_s + 1e-9, "{m:?}");
}

/// The trial's case: two requests 50 s apart on a drive whose B is
/// 17.7 ms, finished 49 s after the last. The 49 s declared after the
/// last completion counted as predicted but not as actual idle time:
/// efficiency 1.9993.
#[test]
fn time_declared_past_the_last_completion_is_not_counted() {
    let setup = lull::for_drive("wd-red-plus", Work::Io).unwrap();
    let s = Nanos::from_secs;
    let reqs = [
        Request::new(s(0), s(1), Op::Read, 0, 4096),
        Request::new(s(50), s(51), Op::Read, 0, 4096),
    ];
    for spec in ["auto", "timer(B)", "timer(B) + fixed(2B)"] {
        let (online, reference) = live(&setup, spec, StopPolicy::EarlierOf, &reqs, false, s(100));
        assert_eq!(online, reference, "{spec}");
        in_bounds(&online);
        assert_eq!(online.actual_s, 49.0);
    }
    let (online, _) = live(&setup, "auto", StopPolicy::EarlierOf, &reqs, false, s(100));
    let b = setup.break_even().as_secs_f64();
    assert!((online.predicted_s - (49.0 - b)).abs() < 1e-9, "{online:?}");
}

/// A quiet disk from `assume_idle` on, for 200 s, then one request: the
/// time declared before it is no idle period's (the span starts at the
/// first arrival), so nothing is predicted and nothing missed.
#[test]
fn time_declared_before_the_first_request_is_not_counted() {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let s = Nanos::from_secs;
    let network = setup.build_network("auto").unwrap();
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, NoTask);
    engine.assume_idle();
    engine.advance(s(199)).unwrap();
    assert!(engine.task_running(), "auto declared the quiet disk idle");
    let m = engine.measures();
    assert_eq!((m.actual_s, m.predicted_s, m.efficiency), (0.0, 0.0, 1.0));
    engine
        .push(&Event::arrival_at(s(200), Op::Read, 0, 4096))
        .unwrap();
    engine
        .push(&Event::completion_at(s(201), s(200), Op::Read, 0, 4096))
        .unwrap();
    let m = engine.finish(s(400)).unwrap().internal;
    assert_eq!(m.predicted_s, 0.0, "{m:?}");
    // The arrival stopped the task at its own instant: `[start, 200 s)`
    // overlaps no request.
    assert_eq!(m.violations, 0, "{m:?}");
    in_bounds(&m);
}

/// Mid-run, time declared since the last completion is held back until
/// the next arrival shows it was an idle period's.
#[test]
fn held_time_counts_when_the_next_request_arrives() {
    let setup = lull::Setup::break_even_for(Nanos::from_secs(1), Work::Standby).unwrap();
    let s = Nanos::from_secs;
    let network = setup.build_network("timer(B)").unwrap();
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, NoTask);
    engine
        .push(&Event::arrival_at(s(0), Op::Read, 0, 4096))
        .unwrap();
    engine
        .push(&Event::completion_at(s(1), s(0), Op::Read, 0, 4096))
        .unwrap();
    engine.advance(s(10)).unwrap();
    assert_eq!(engine.measures().predicted_s, 0.0);
    engine
        .push(&Event::arrival_at(s(10), Op::Read, 0, 4096))
        .unwrap();
    let m = engine.measures();
    assert_eq!((m.actual_s, m.predicted_s), (9.0, 8.0), "{m:?}");
}

/// Requests as (gap before, service) pairs in milliseconds, some
/// overlapping the one before (a gap of 0 starts it at the previous
/// arrival).
fn arb_requests() -> impl Strategy<Value = Vec<Request>> {
    prop::collection::vec(
        (
            prop_oneof![Just(0u64), 0u64..50, 50u64..5_000],
            1u64..400,
            any::<bool>(),
        ),
        1..40,
    )
    .prop_map(|v| {
        let ms = Nanos::from_millis;
        let mut t = 0;
        let mut prev_arrival = 0;
        let mut out = Vec::new();
        for (gap, service, overlap) in v {
            let arrival = if overlap {
                prev_arrival + gap / 4
            } else {
                t + gap
            };
            let arrival = arrival.max(prev_arrival);
            out.push(Request::new(
                ms(arrival),
                ms(arrival + service),
                Op::Write,
                0,
                4096,
            ));
            prev_arrival = arrival;
            t = t.max(arrival + service);
        }
        out
    })
}

fn arb_spec() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "auto",
        "timer(B)",
        "timer(0s)",
        "timer(B) + fixed(2B)",
        "timer(B/4) + fixed(B/2)",
        "adapt-timer-arith-geom(step=B/8) + average(n=4)",
        "random-timer",
    ])
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    /// Whatever the task declares before the first arrival (after
    /// `assume_idle`) and after the last completion (up to `finish`), the
    /// online measures are the definition's, and efficiency is in [0, 1].
    #[test]
    fn online_measures_equal_the_definition_with_time_outside_the_span(
        requests in arb_requests(),
        spec in arb_spec(),
        policy in prop::sample::select(StopPolicy::ALL.to_vec()),
        start in 0u64..3_000,
        tail in 0u64..20_000,
        assume_idle in any::<bool>(),
    ) {
        let setup = lull::Setup::break_even_for(Nanos::from_millis(300), Work::Standby).unwrap();
        let shift = Nanos::from_millis(start);
        let requests: Vec<Request> = requests
            .iter()
            .map(|r| Request::new(r.arrival + shift, r.completion + shift, r.op, r.sector, r.bytes))
            .collect();
        let last = requests.iter().map(|r| r.completion).max().unwrap();
        let (online, reference) =
            live(&setup, spec, policy, &requests, assume_idle, last + Nanos::from_millis(tail));
        prop_assert_eq!(online, reference);
        in_bounds(&online);
    }
}
