//! Properties of `preempt-gate` and `latency-target` on random stimulus
//! scripts, driven through a network built from a spec string the way the
//! engine drives it (deadlines included).

use lull_core::prelude::*;
use lull_testkit::start_instants;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    Wait(u64),
    Arrive,
    Complete,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u64..400).prop_map(Step::Wait),
        1 => (0u64..5_000).prop_map(Step::Wait),
        3 => Just(Step::Arrive),
        3 => Just(Step::Complete),
    ]
}

/// Replays the script through an engine (its actuator never stops a task
/// on its own: `predicted-end`) and returns the requests and the log.
fn drive(spec: &str, script: &[Step]) -> (Vec<Request>, Vec<LogEntry>) {
    let mut reg = lull_detectors::registry();
    lull_skeptics::register(&mut reg);
    let net = build_network(spec, &reg).unwrap();
    // Turn the script into requests: FIFO completions.
    let ms = Nanos::from_millis;
    let (mut t, mut open, mut reqs) = (0u64, std::collections::VecDeque::new(), Vec::new());
    for s in script {
        match s {
            Step::Wait(d) => t += d,
            Step::Arrive => open.push_back(t),
            Step::Complete => {
                if let Some(a) = open.pop_front() {
                    reqs.push(Request::new(ms(a), ms(t), Op::Read, 0, 512));
                }
            }
        }
    }
    for a in open {
        reqs.push(Request::new(ms(a), ms(t + 1), Op::Read, 0, 512));
    }
    reqs.sort_by_key(|r| r.arrival);
    let timeline = Timeline::from_requests(&reqs);
    let mut engine = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask).with_log();
    replay(&timeline, &mut engine).unwrap();
    (reqs, engine.log().to_vec())
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    /// The gate never lets background work start less than `p` after a
    /// foreground request (its arrival or its completion), nor while one
    /// is outstanding.
    #[test]
    fn the_gate_never_starts_work_within_p_of_a_foreground_request(
        script in proptest::collection::vec(step(), 0..120),
        p in 0u64..300,
    ) {
        let spec = format!("preempt-gate(p={p}ms, bounds=false; timer(t=0s))");
        let (reqs, log) = drive(&spec, &script);
        let p = Nanos::from_millis(p);
        for at in start_instants(&log) {
            for r in &reqs {
                let fg_end = r.completion.max(r.arrival);
                // A start at the instant of an arrival came first
                // (deadlines before arrivals, core's ordering rule).
                prop_assert!(
                    !(r.arrival < at && at < fg_end + p),
                    "start at {} within p of request [{}, {}]", at, r.arrival, r.completion
                );
            }
        }
    }

    /// The bounded and auto-tuned gates only ever pass a tail of what
    /// their input predicted, and never start work while a request is
    /// outstanding; so does latency-target.
    #[test]
    fn gates_and_latency_target_start_only_when_idle(
        script in proptest::collection::vec(step(), 0..120),
    ) {
        for spec in [
            "preempt-gate(p=50ms; timer(t=0s) + fixed(d=1s))",
            "preempt-gate-auto(window=1s; timer(t=0s))",
            "latency-target(target=100ms, window=1s, min-samples=2; timer(t=0s) + fixed(d=1s))",
        ] {
            let (reqs, log) = drive(spec, &script);
            for at in start_instants(&log) {
                for r in &reqs {
                    prop_assert!(
                        !(r.arrival < at && at < r.completion),
                        "{}: start at {} while [{}, {}) is outstanding", spec, at, r.arrival, r.completion
                    );
                }
            }
        }
    }
}

/// The property above is not vacuous: the gate does start work, exactly
/// `p` after the last completion.
#[test]
fn the_gate_starts_work_p_after_the_last_completion() {
    let script = [
        Step::Arrive,
        Step::Wait(10),
        Step::Complete,
        Step::Wait(500),
        Step::Arrive,
        Step::Wait(5),
        Step::Complete,
        Step::Wait(50),
    ];
    let (_, log) = drive("preempt-gate(p=100ms, bounds=false; timer(t=0s))", &script);
    assert_eq!(start_instants(&log), vec![Nanos::from_millis(110)]);
}

/// The regulation skeptics are registered, documented, and build with
/// their defaults over one input, as the catalogue test asks of every
/// skeptic.
#[test]
fn regulation_skeptics_are_registered_and_build_with_defaults() {
    let mut full = lull_detectors::registry();
    lull_skeptics::register(&mut full);
    for name in ["preempt-gate", "preempt-gate-auto", "latency-target"] {
        let info = full.info(name).unwrap();
        assert_eq!(info.role, Role::Skeptic);
        assert!(!info.summary.is_empty() && info.source.starts_with('§'));
        assert!(info.params.iter().all(|p| !p.doc.is_empty()));
        assert_eq!(info.inputs, Some(Arity::ONE));
        build_network(&format!("{name}(timer(1s))"), &full).unwrap();
        build_network(&format!("{name}(timer(1s), timer(2s))"), &full).unwrap_err();
    }
}
