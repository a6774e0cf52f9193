//! End-to-end properties of the engine with the built-in components
//! (SPEC §4.1 and issue 2): exact internal measures on hand-made traces,
//! and invariants over random request streams.

use lull::core::engine::{Engine, LogEntry, RunReport, declared_intervals, replay};
use lull::core::measures::{InternalMeasures, internal_measures};
use lull::core::prelude::*;
use lull_testkit::finished_declared as declared;
use proptest::prelude::*;

fn secs(s: f64) -> Nanos {
    Nanos::from_secs_f64(s)
}

fn req(a: f64, c: f64) -> Request {
    Request::new(secs(a), secs(c), Op::Read, 0, 4096)
}

fn run(requests: &[Request], spec: &str, policy: StopPolicy) -> (InternalMeasures, Vec<LogEntry>) {
    let registry = lull::registry().with_breakeven(Nanos::from_secs(3));
    let network = build_network(spec, &registry).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mut engine = Engine::with_policy(network, policy, NoTask).with_log();
    let report = replay(&Timeline::from_requests(requests), &mut engine).unwrap();
    (report.internal, engine.log().to_vec())
}

/// A renewal belongs to the run it renews; a run the log leaves open is
/// returned apart (an engine not yet finished).
#[test]
fn declared_intervals_join_renewals_and_return_an_open_run() {
    let cmd = |s: u64, command| LogEntry::Command {
        at: Nanos::from_secs(s),
        command,
    };
    let log = [
        cmd(1, Command::Start { budget: None }),
        cmd(2, Command::Renew { budget: None }),
        cmd(3, Command::Stop),
        cmd(5, Command::Start { budget: None }),
    ];
    let (closed, open) = declared_intervals(&log);
    assert_eq!(closed, vec![(Nanos::from_secs(1), Nanos::from_secs(3))]);
    assert_eq!(open, Some(Nanos::from_secs(5)));
}

/// Busy [0,1) [4,5) [25,26) [26.5,30) [35,36) [37,38) [50,51);
/// idle periods 3 + 20 + 0.5 + 5 + 1 + 12 = 41.5 s. The timer expires
/// exactly when the request at 37 s arrives: by the ordering rule the
/// deadline fires first.
fn hand_trace() -> Vec<Request> {
    vec![
        req(0.0, 1.0),
        req(4.0, 5.0),
        req(25.0, 26.0),
        req(26.5, 30.0),
        req(35.0, 36.0),
        req(37.0, 38.0),
        req(50.0, 51.0),
    ]
}

fn assert_measures(m: &InternalMeasures, predicted: f64, overflow: f64, violations: u64) {
    let actual = 41.5;
    assert_eq!(m.actual_s, actual);
    assert_eq!(m.predicted_s, predicted, "predicted");
    assert_eq!(m.overflow_s, overflow, "overflow");
    assert_eq!(m.violations, violations, "violations");
    assert!((m.efficiency - (predicted - overflow) / actual).abs() < 1e-12);
    assert!((m.incompetence - overflow / actual).abs() < 1e-12);
    let rate = if predicted == 0.0 {
        0.0
    } else {
        violations as f64 / predicted
    };
    assert!((m.violation_rate - rate).abs() < 1e-12);
}

#[test]
fn timer_fixed_under_predicted_end() {
    // Fires at 2 (run to 12), renewed at 6 (to 16) across the request at 4:
    // [2,16). Fires at 31 (to 41), renewed at 37 (to 47) and 39 (to 49):
    // [31,49). Declared 14 + 18 = 32 s; busy inside: [4,5) [35,36) [37,38)
    // = 3 s; violations: the requests at 4, 35 and 37.
    let (m, log) = run(
        &hand_trace(),
        "timer(1s) + fixed(10s)",
        StopPolicy::PredictedEnd,
    );
    assert_eq!(
        declared(&log),
        vec![(secs(2.0), secs(16.0)), (secs(31.0), secs(49.0))]
    );
    assert_measures(&m, 32.0, 3.0, 3);
}

#[test]
fn timer_fixed_under_when_busy() {
    // [2,4) [6,25) [31,35) [37,37) [39,50): 2 + 19 + 4 + 0 + 11 = 36 s,
    // never busy, no violations.
    let (m, log) = run(
        &hand_trace(),
        "timer(1s) + fixed(10s)",
        StopPolicy::WhenBusy,
    );
    assert_eq!(
        declared(&log),
        vec![
            (secs(2.0), secs(4.0)),
            (secs(6.0), secs(25.0)),
            (secs(31.0), secs(35.0)),
            (secs(37.0), secs(37.0)),
            (secs(39.0), secs(50.0)),
        ]
    );
    assert_measures(&m, 36.0, 0.0, 0);
}

#[test]
fn timer_fixed_under_earlier_of() {
    // [2,4) [6,16) [31,35) [37,37) [39,49): 2 + 10 + 4 + 0 + 10 = 26 s.
    let (m, log) = run(
        &hand_trace(),
        "timer(1s) + fixed(10s)",
        StopPolicy::EarlierOf,
    );
    assert_eq!(
        declared(&log),
        vec![
            (secs(2.0), secs(4.0)),
            (secs(6.0), secs(16.0)),
            (secs(31.0), secs(35.0)),
            (secs(37.0), secs(37.0)),
            (secs(39.0), secs(49.0)),
        ]
    );
    assert_measures(&m, 26.0, 0.0, 0);
}

#[test]
fn timer_fixed_under_later_of() {
    // Started at 2 (to 12); the arrival at 4 is seen but the renewal at 6
    // (to 16) is judged afresh; at 16 the disk is still idle, so the run
    // goes on to the arrival at 25: [2,25). Likewise [31,50), renewed at
    // 37 and 39, ending at the arrival at 50. 23 + 19 = 42 s; busy inside
    // [4,5) [35,36) [37,38) = 3 s; violations at 4, 35, 37.
    let (m, log) = run(&hand_trace(), "timer(1s) + fixed(10s)", StopPolicy::LaterOf);
    assert_eq!(
        declared(&log),
        vec![(secs(2.0), secs(25.0)), (secs(31.0), secs(50.0))]
    );
    assert_measures(&m, 42.0, 3.0, 3);
}

#[test]
fn every_policy_agrees_with_the_offline_definition_on_the_hand_trace() {
    let trace = hand_trace();
    let timeline = Timeline::from_requests(&trace);
    for policy in StopPolicy::ALL {
        let (m, log) = run(&trace, "timer(1s) + fixed(10s)", policy);
        assert_eq!(m, internal_measures(&timeline, &declared(&log)), "{policy}");
    }
}

fn arb_trace() -> impl Strategy<Value = Vec<Request>> {
    // Times in milliseconds on a coarse grid so that ties (same-instant
    // arrivals and completions, zero-length requests) are common.
    let gap = prop_oneof![Just(0u64), 0u64..50, 0u64..5_000, 5_000u64..60_000];
    let service = prop_oneof![Just(0u64), 1u64..30, 0u64..3_000];
    prop::collection::vec((gap, service), 1..60).prop_map(|v| {
        let mut t = 0;
        v.into_iter()
            .map(|(g, s)| {
                t += g;
                Request::new(
                    Nanos::from_millis(t),
                    Nanos::from_millis(t + s),
                    Op::Write,
                    0,
                    512,
                )
            })
            .collect()
    })
}

fn arb_spec() -> impl Strategy<Value = String> {
    let ms = prop_oneof![Just(0u64), 1u64..100, 100u64..20_000];
    let dur = prop_oneof![Just(None), (1u64..30_000).prop_map(Some)];
    prop_oneof![
        (ms, dur, any::<bool>()).prop_map(|(t, d, renew)| match d {
            Some(d) => format!("timer({t}ms) + fixed({d}ms, renew={renew})"),
            None => format!("timer({t}ms)"),
        }),
        (0u64..5_000).prop_map(|m| format!("oracle(min={m}ms)")),
    ]
}

fn arb_policy() -> impl Strategy<Value = StopPolicy> {
    prop::sample::select(StopPolicy::ALL.to_vec())
}

fn in_bounds(m: &InternalMeasures) {
    for (k, v) in m.pairs() {
        assert!(v.is_finite(), "{k} = {v}");
        assert!(v >= 0.0, "{k} = {v}");
    }
    assert!(m.efficiency <= 1.0);
    assert!(m.overflow_s <= m.predicted_s + 1e-12);
}

proptest! {
    #![proptest_config(lull_testkit::cases(400))]

    #[test]
    fn online_measures_equal_the_offline_definition(trace in arb_trace(), spec in arb_spec(), policy in arb_policy()) {
        let (m, log) = run(&trace, &spec, policy);
        let timeline = Timeline::from_requests(&trace);
        prop_assert_eq!(m, internal_measures(&timeline, &declared(&log)));
        in_bounds(&m);
    }

    #[test]
    fn timer_zero_when_busy_declares_exactly_the_idle_time(trace in arb_trace()) {
        let (m, _) = run(&trace, "timer(0s) + fixed(10s)", StopPolicy::WhenBusy);
        prop_assert_eq!(m.efficiency, 1.0);
        prop_assert_eq!(m.incompetence, 0.0);
        prop_assert_eq!(m.violations, 0);
        prop_assert_eq!(m.predicted_s, m.actual_s);
    }

    #[test]
    fn the_oracle_is_perfect_under_every_policy(trace in arb_trace(), policy in arb_policy()) {
        let (m, _) = run(&trace, "oracle()", policy);
        prop_assert_eq!(m.efficiency, 1.0);
        prop_assert_eq!(m.incompetence, 0.0);
        prop_assert_eq!(m.violations, 0);
    }

    #[test]
    fn nothing_beats_the_oracle(trace in arb_trace(), spec in arb_spec(), policy in arb_policy()) {
        // Compare the quantities, not the ratios: the idle time a network
        // declared correctly (predicted − overflow) can be no more than the
        // oracle's, which is all of it.
        let (m, _) = run(&trace, &spec, policy);
        let (o, _) = run(&trace, "oracle()", policy);
        let eps = 1e-9 * (1.0 + o.actual_s);
        prop_assert!((o.predicted_s - o.overflow_s - o.actual_s).abs() <= eps, "{o:?}");
        prop_assert!(m.predicted_s - m.overflow_s <= o.predicted_s - o.overflow_s + eps, "{m:?} vs {o:?}");
        prop_assert!(m.overflow_s >= o.overflow_s);
        prop_assert!(m.violations >= o.violations);
    }

    #[test]
    fn same_input_same_output(trace in arb_trace(), spec in arb_spec(), policy in arb_policy()) {
        let a = run(&trace, &spec, policy);
        let b = run(&trace, &spec, policy);
        prop_assert_eq!(a.0, b.0);
        prop_assert_eq!(a.1, b.1);
    }
}

/// The task of an equivalence run: none, or one that looks at every event
/// (so only the sit-out shortcut applies).
fn task(spindown: bool) -> Box<dyn IdleTask> {
    if spindown {
        let model = lull::tasks::power::PowerModel::preset("paper-2.5in").unwrap();
        Box::new(lull::tasks::spindown::Spindown::new(model))
    } else {
        Box::new(NoTask)
    }
}

/// One equivalence run: through `replay` (the batch paths), or (`slow`)
/// the straightforward path the batch paths must match: every event
/// pushed one by one, every idle period announced.
fn run_path(
    requests: &[Request],
    spec: &str,
    policy: StopPolicy,
    spindown: bool,
    slow: bool,
) -> (RunReport, Vec<LogEntry>) {
    let registry = lull::registry().with_breakeven(Nanos::from_secs(3));
    let network = build_network(spec, &registry).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mut engine = Engine::with_policy(network, policy, task(spindown))
        .with_log()
        .with_shortcuts(!slow);
    let timeline = Timeline::from_requests(requests);
    let report = if slow {
        let events = timeline.events();
        for (i, ev) in events.iter().enumerate() {
            let lookahead = if timeline.idle_after(i) {
                events.get(i + 1).map(|e| e.time)
            } else {
                None
            };
            engine.push_with_lookahead(ev, lookahead).unwrap();
        }
        engine.finish(timeline.end().unwrap_or(Nanos::ZERO))
    } else {
        replay(&timeline, &mut engine)
    };
    (report.unwrap(), engine.log().to_vec())
}

/// Networks of every kind: quiet ones (timers, fixed, the oracle), which
/// take the batch path, and ones that look at every event, which must not.
fn arb_any_spec() -> impl Strategy<Value = String> {
    prop_oneof![
        arb_spec(),
        prop::sample::select(vec![
            "adapt-timer-arith-geom(step=100ms) + fixed(2s)",
            "adapt-timer-geom-geom(initial=200ms) + fixed(1s)",
            "random-timer(breakeven=2s, seed=7) + backoff-geom-geom()",
            "timer(200ms) + average(n=3)",
            "timer(1s) + no-duration()",
            "event-window(n=3, rate=1) + fixed(1s)",
            "moving-average(rate=1, period=500ms) + fixed(3s)",
            "dpll(period=10s, gap=2s, guard=500ms, tolerance=1s) + fixed(1s)",
            "low-pass(min=500ms; timer(100ms) + average(n=4))",
        ])
        .prop_map(String::from),
    ]
}

/// Networks whose skeptics withdraw predictions (zero-duration), combine
/// them, or declare with requests outstanding: the ties between a stop and
/// the arrival that caused it, and intervals that end where they begin.
fn arb_skeptic_spec() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "preempt-gate(p=100ms; timer(0s) + fixed(5s))",
        "preempt-gate(p=10ms; event-window(n=2, rate=1) + fixed(5s))",
        "preempt-gate-auto(timer(0s))",
        "latency-target(target=10ms; timer(0s) + fixed(5s))",
        "and(timer(100ms) + fixed(5s), event-window(n=2, rate=1) + fixed(3s))",
        "vote(threshold=1; timer(100ms) + fixed(5s), event-window(n=2, rate=1) + fixed(3s))",
        "follow-share(timer(100ms) + fixed(5s), timer(1s) + fixed(2s))",
        "quality(timer(10ms) + fixed(50ms))",
        "violation-rate(timer(10ms) + backoff-geom-geom())",
        "event-window(n=2, rate=1) + fixed(500ms)",
        "moving-average(rate=1, period=500ms) + no-duration()",
        "rate-change(rate=1, period=500ms) + fixed(1s)",
        "adaptive-rate(n=3) + fixed(2s)",
    ])
}

proptest! {
    #![proptest_config(lull_testkit::cases(1000))]

    /// The exact online measures hold for every kind of network, not only
    /// timers: with skeptics that withdraw at an arrival the task often
    /// stops at the instant a request arrives, or at the instant it started.
    #[test]
    fn online_measures_equal_the_offline_definition_for_skeptic_networks(trace in arb_trace(), spec in arb_skeptic_spec(), policy in arb_policy()) {
        let (m, log) = run(&trace, spec, policy);
        let timeline = Timeline::from_requests(&trace);
        prop_assert_eq!(m, internal_measures(&timeline, &declared(&log)));
        in_bounds(&m);
    }
}

proptest! {
    #![proptest_config(lull_testkit::cases(600))]

    /// The batch path through busy runs changes nothing: same report, same
    /// decisions at the same instants, for quiet networks and busy ones.
    #[test]
    fn replay_decides_exactly_as_pushing_every_event(trace in arb_trace(), spec in arb_any_spec(), policy in arb_policy(), spindown in any::<bool>()) {
        let (fast, fast_log) = run_path(&trace, &spec, policy, spindown, false);
        let (slow, slow_log) = run_path(&trace, &spec, policy, spindown, true);
        prop_assert_eq!(fast, slow);
        prop_assert_eq!(fast_log, slow_log);
    }
}

/// A start detector that records the wall clock it is told.
#[derive(Debug, Default)]
struct SeesClock(Option<Option<Nanos>>);

impl StartDetector for SeesClock {
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.0.get_or_insert(ctx.clock);
        None
    }
}

/// A timeline's wall clock reaches the components through `replay`; an
/// engine's own clock wins.
#[test]
fn replay_tells_components_the_timeline_clock() {
    let trace = hand_trace();
    let clock = Nanos::from_secs(1_172_164_929);
    let seen = |timeline: Timeline, engine_clock: Option<Nanos>| {
        let det = Predictor::new(
            SeesClock::default(),
            lull::detectors::duration::Fixed::new(Nanos::from_secs(1), false),
        );
        let mut e = Engine::with_policy(det, StopPolicy::EarlierOf, NoTask);
        if let Some(c) = engine_clock {
            e = e.with_clock(UnixTime::since_epoch(c));
        }
        replay(&timeline, &mut e).unwrap();
        e.detector().start_detector().0.flatten()
    };
    assert_eq!(seen(Timeline::from_requests(&trace), None), None);
    let with = Timeline::from_requests(&trace).with_clock(Some(clock));
    assert_eq!(seen(with.clone(), None), Some(clock));
    assert_eq!(seen(with, Some(Nanos(7))), Some(Nanos(7)));
}
