//! Skeptics in networks: a shared predictor feeding two skeptics whose
//! outputs are combined (a diamond) is evaluated once per stimulus, built
//! from TOML or in code; bad parameters and wrong input counts are
//! rejected at build time, naming the parameter or the node.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use lull_core::prelude::*;
use lull_detectors::duration::NoDuration;
use lull_detectors::timer::Timer;
use lull_skeptics::low_pass::LowPass;
use lull_skeptics::quality::Quality;
use lull_skeptics::vote::And;

fn registry() -> Registry {
    let mut r = Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r.with_breakeven(lull_core::time::Nanos::from_secs(3))
}

fn ms(x: u64) -> Nanos {
    Nanos::from_millis(x)
}

/// Requests with idle gaps of these lengths, plus a pair of overlapping
/// requests in the middle of each busy period.
fn trace() -> Vec<Request> {
    let gaps = [500, 2_000, 30_000, 200, 5_000, 1_500, 700, 12_000, 3_000];
    let mut v = Vec::new();
    let mut t = ms(0);
    for g in gaps {
        v.push(Request::new(t, t + ms(10), Op::Read, 0, 4096));
        v.push(Request::new(t + ms(5), t + ms(20), Op::Write, 8, 4096));
        t = t + ms(20) + ms(g);
    }
    v.push(Request::new(t, t + ms(10), Op::Read, 0, 4096));
    v
}

const DIAMOND: &str = r#"
    sink = "d"

    [[node]]
    name = "a"
    spec = "timer(1s)"

    [[node]]
    name = "b"
    skeptic = "low-pass(min=500ms)"
    inputs = ["a"]

    [[node]]
    name = "c"
    skeptic = "quality(threshold=0.5)"
    inputs = ["a"]

    [[node]]
    name = "d"
    skeptic = "and"
    inputs = ["b", "c"]
"#;

/// Stimuli that reach a source on this trace: every event, every idle
/// begin (one more than the idle periods: the device empties after the
/// last request too), every idle end, and its own deadlines (a 1 s timer
/// fires in each idle period of at least 1 s).
fn expected_source_evaluations(timeline: &Timeline) -> u64 {
    let periods: Vec<IdlePeriod> = timeline.idle_periods().collect();
    let fired = periods.iter().filter(|p| p.len() >= ms(1000)).count();
    (timeline.events().len() + (periods.len() + 1) + periods.len() + fired) as u64
}

#[test]
fn toml_diamond_evaluates_the_shared_predictor_once_per_stimulus() {
    let r = registry();
    let spec = NetworkSpec::from_toml(DIAMOND, Some(&r)).unwrap();
    let network = spec.build(&r).unwrap();
    assert_eq!(network.node_names(), ["a", "b", "c", "d"]);
    let timeline = Timeline::from_requests(&trace());
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, NoTask).with_log();
    let report = replay(&timeline, &mut engine).unwrap();

    let net = engine.detector();
    let a = net.evaluations("a").unwrap();
    assert_eq!(a, expected_source_evaluations(&timeline));
    // Each consumer is evaluated at least whenever `a` sees a non-deadline
    // stimulus, yet `a` itself is not evaluated once per consumer.
    let b = net.evaluations("b").unwrap();
    let c = net.evaluations("c").unwrap();
    assert_eq!(b, c);
    assert!(a < b + c, "a = {a}, b = {b}, c = {c}");

    // End to end: both filters pass the timer's "until busy" predictions
    // and `and` emits their (identical) overlap: one prediction 1 s into
    // every idle period of at least 1 s, no violation.
    let expect: Vec<Prediction> = timeline
        .idle_periods()
        .filter(|p| p.len() >= ms(1000))
        .map(|p| Prediction::new(p.start + ms(1000), None))
        .collect();
    let got: Vec<Prediction> = engine
        .log()
        .iter()
        .filter_map(|e| match e {
            LogEntry::Prediction { prediction, .. } => Some(*prediction),
            _ => None,
        })
        .collect();
    assert_eq!(got, expect);
    assert_eq!(report.internal.violations, 0);
}

/// A source that counts how often the network calls it.
#[derive(Debug)]
struct Counted<D> {
    inner: D,
    events: Arc<AtomicU64>,
    calls: Arc<AtomicU64>,
}

impl<D: Detector> Detector for Counted<D> {
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        self.events.fetch_add(1, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.on_event(ev, ctx, out)
    }
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.on_idle_begin(ctx, out)
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.on_idle_end(ctx, began)
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.inner.next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.on_deadline(ctx, out)
    }
}

#[test]
fn builder_diamond_evaluates_the_shared_predictor_once_per_stimulus() {
    let events = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(AtomicU64::new(0));
    let source = Counted {
        inner: Predictor::new(Timer::new(ms(1000)), NoDuration),
        events: events.clone(),
        calls: calls.clone(),
    };
    let mut b = NetworkBuilder::new();
    b.source("a", Box::new(source))
        .skeptic("b", Box::new(LowPass::new(ms(500))), &["a"])
        .skeptic("c", Box::new(Quality::new(0.5, 0.1, 1.0)), &["a"])
        .skeptic("d", Box::new(And::new(2)), &["b", "c"]);
    let network = b.build().unwrap();
    let timeline = Timeline::from_requests(&trace());
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, NoTask);
    replay(&timeline, &mut engine).unwrap();

    let a = engine.detector().evaluations("a").unwrap();
    // Every event reached `a` exactly once although two skeptics consume it.
    assert_eq!(
        events.load(Ordering::Relaxed),
        timeline.events().len() as u64
    );
    assert_eq!(calls.load(Ordering::Relaxed), a);
    assert_eq!(a, expected_source_evaluations(&timeline));
}

#[test]
fn one_line_and_toml_diamonds_agree() {
    // The same skeptics over two separate copies of the predictor (a tree)
    // decide the same as the diamond that shares one.
    let r = registry();
    let tree = build_network(
        "and(low-pass(min=500ms; timer(1s)), quality(threshold=0.5; timer(1s)))",
        &r,
    )
    .unwrap();
    let diamond = NetworkSpec::from_toml(DIAMOND, Some(&r))
        .unwrap()
        .build(&r)
        .unwrap();
    let timeline = Timeline::from_requests(&trace());
    let run = |net: Network| {
        let mut e = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask).with_log();
        replay(&timeline, &mut e).unwrap();
        e.log().to_vec()
    };
    assert_eq!(run(tree), run(diamond));
}

fn build_err(spec: &str) -> NetworkError {
    build_network(spec, &registry()).expect_err(spec)
}

#[test]
fn bad_parameters_are_rejected_naming_the_parameter() {
    let cases = [
        ("low-pass(min=fast; timer(1s))", "min"),
        ("low-pass(timer(1s))", "min"),
        ("quality(threshold=1.5; timer(1s))", "threshold"),
        ("quality(gain=0; timer(1s))", "gain"),
        ("quality(initial=-1; timer(1s))", "initial"),
        ("time-of-day(busiest=25; timer(1s))", "busiest"),
        ("time-of-day(offset=24; timer(1s))", "offset"),
        ("time-of-day(gain=2; timer(1s))", "gain"),
        ("violation-rate(max=0; timer(1s))", "max"),
        ("violation-rate(gain=1.1; timer(1s))", "gain"),
        ("vote(threshold=3; timer(1s), timer(2s))", "threshold"),
        ("vote(threshold=0; timer(1s), timer(2s))", "threshold"),
        ("vote(timer(1s), timer(2s))", "threshold"),
        (
            "weighted-vote(weights=[1, 2], threshold=1; timer(1s), timer(2s), timer(3s))",
            "weights",
        ),
        (
            "weighted-vote(weights=[1, -2], threshold=1; timer(1s), timer(2s))",
            "weights",
        ),
        (
            "weighted-vote(weights=1, threshold=1; timer(1s), timer(2s))",
            "weights",
        ),
        (
            "weighted-vote(weights=[1, 1], threshold=3; timer(1s), timer(2s))",
            "threshold",
        ),
        (
            "weighted-vote(weights=[1, 1], threshold=0; timer(1s), timer(2s))",
            "threshold",
        ),
        ("follow-share(eta=0; timer(1s), timer(2s))", "eta"),
        ("follow-share(alpha=0.9; timer(1s), timer(2s))", "alpha"),
        (
            "follow-share(breakeven=0s; timer(1s), timer(2s))",
            "breakeven",
        ),
        ("follow-share(follow=worst; timer(1s), timer(2s))", "follow"),
        ("follow-share(majority=0; timer(1s), timer(2s))", "majority"),
    ];
    for (spec, param) in cases {
        let e = build_err(spec);
        let text = e.to_string();
        assert!(
            text.contains(&format!("parameter `{param}`")),
            "{spec}: expected the error to name `{param}`: {text}"
        );
        assert_eq!(e.node, "n0", "{spec}: {text}");
    }
}

/// A cycle is named by its nodes, whether or not a node is left to be the
/// sink (with none, every node feeds another).
#[test]
fn a_cycle_is_rejected_naming_its_nodes() {
    let r = registry();
    let build = |doc: &str| {
        NetworkSpec::from_toml(doc, Some(&r))
            .unwrap()
            .build(&r)
            .unwrap_err()
    };
    let cycle = r#"
        [[node]]
        name = "a"
        skeptic = "and"
        inputs = ["b", "fast"]
        [[node]]
        name = "b"
        skeptic = "and"
        inputs = ["a", "fast"]
        [[node]]
        name = "fast"
        spec = "timer(1s) + fixed(10s)"
    "#;
    let e = build(cycle);
    assert!(["a", "b"].contains(&e.node.as_str()), "{e}");
    let text = e.to_string();
    assert!(text.contains("is part of a cycle"), "{text}");
    assert!(
        text.contains("a → b → a") || text.contains("b → a → b"),
        "{text}"
    );
    // With a node left over as the sink, the cycle is found too.
    let with_sink = format!(
        "{cycle}\n[[node]]\nname = \"out\"\nskeptic = \"and\"\ninputs = [\"a\", \"fast\"]\n"
    );
    let e = build(&with_sink);
    assert!(["a", "b"].contains(&e.node.as_str()), "{e}");
    assert!(e.to_string().contains("is part of a cycle"), "{e}");
}

#[test]
fn wrong_number_of_inputs_is_rejected_naming_the_node() {
    for spec in [
        "and(timer(1s))",
        "vote(threshold=1; timer(1s))",
        "weighted-vote(weights=[1], threshold=1; timer(1s))",
        "follow-share(timer(1s))",
        "low-pass(min=1s; timer(1s), timer(2s))",
        "quality(timer(1s), timer(2s))",
        "time-of-day(timer(1s), timer(2s))",
        "violation-rate(timer(1s), timer(2s))",
    ] {
        let e = build_err(spec);
        assert_eq!(e.node, "n0", "{spec}: {e}");
        assert!(e.to_string().contains("input"), "{spec}: {e}");
    }
    // In TOML the node has the name it was given.
    let doc = r#"
        [[node]]
        name = "fast"
        spec = "timer(1s)"
        [[node]]
        name = "both"
        skeptic = "and"
        inputs = ["fast"]
    "#;
    let r = registry();
    let e = NetworkSpec::from_toml(doc, Some(&r))
        .unwrap()
        .build(&r)
        .unwrap_err();
    assert_eq!(e.node, "both", "{e}");
    assert!(e.to_string().contains("input"), "{e}");
}

#[test]
fn every_skeptic_is_registered_documented_and_builds_with_its_defaults() {
    let r = lull_skeptics::registry().with_breakeven(lull_core::time::Nanos::from_secs(3));
    let names: Vec<&str> = r.list().iter().map(|i| i.name).collect();
    assert_eq!(
        names,
        [
            "and",
            "follow-share",
            "latency-target",
            "low-pass",
            "preempt-gate",
            "preempt-gate-auto",
            "quality",
            "time-of-day",
            "violation-rate",
            "vote",
            "weighted-vote"
        ]
    );
    let full = registry();
    for info in r.list() {
        assert_eq!(info.role, Role::Skeptic);
        assert!(!info.summary.is_empty() && info.source.starts_with('§'));
        for p in info.params {
            assert!(!p.doc.is_empty(), "{}: {}", info.name, p.name);
        }
        let arity = info.inputs.unwrap();
        let n = arity.min.max(2).min(arity.max.unwrap_or(usize::MAX));
        let inputs: Vec<&str> = ["timer(1s)", "timer(2s) + fixed(5s)"][..n].to_vec();
        let args = match info.name {
            "low-pass" => "min=1s; ",
            "vote" => "threshold=2; ",
            "weighted-vote" => "weights=[1, 0.5], threshold=1; ",
            _ => "",
        };
        let spec = format!("{}({args}{})", info.name, inputs.join(", "));
        build_network(&spec, &full).unwrap_or_else(|e| panic!("{spec}: {e}"));
    }
}

/// SkepticRate end to end: a detector that keeps being violated is
/// silenced, with the paper's threshold of 0.7 violations/s.
#[test]
fn violation_rate_silences_a_detector_that_keeps_being_violated() {
    let r = registry();
    // Requests every 500 ms for 20 s, then two quiet minutes and requests
    // every 10 s. In the first part `timer(100ms) + fixed(2s)` fires in
    // every 495 ms gap and each prediction is violated by the next request
    // before the next one replaces it: 1 violation per 0.5 s, 2/s.
    let mut reqs = Vec::new();
    for k in 0..40 {
        reqs.push(Request::new(
            ms(500 * k),
            ms(500 * k + 5),
            Op::Read,
            0,
            4096,
        ));
    }
    for k in 0..20 {
        let t = ms(140_000 + 10_000 * k);
        reqs.push(Request::new(t, t + ms(5), Op::Read, 0, 4096));
    }
    let timeline = Timeline::from_requests(&reqs);
    let run = |spec: &str| {
        let net = build_network(spec, &r).unwrap();
        let mut e = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask).with_log();
        let report = replay(&timeline, &mut e).unwrap();
        let starts: Vec<Nanos> = e
            .log()
            .iter()
            .filter_map(|x| match x {
                LogEntry::Prediction { prediction, .. } => Some(prediction.start),
                _ => None,
            })
            .collect();
        (report, starts)
    };
    let (bare, bare_starts) = run("timer(100ms) + fixed(2s)");
    let (filtered, starts) = run("violation-rate(max=0.7, gain=0.5; timer(100ms) + fixed(2s))");
    assert!(bare.internal.violations > 30, "{:?}", bare.internal);
    assert!(
        filtered.internal.violations < bare.internal.violations / 4,
        "{:?}",
        filtered.internal
    );
    assert!(
        filtered.internal.violation_rate < bare.internal.violation_rate / 2.0,
        "{:?}",
        filtered.internal
    );
    // Every prediction it passed is one the detector made.
    assert!(starts.iter().all(|s| bare_starts.contains(s)));
    // In the busy part it lets through only the first few, before the
    // estimate is known; in the quiet part it passes predictions again
    // once the estimate has decayed below 0.7/s.
    let busy = starts.iter().filter(|&&s| s < ms(20_000)).count();
    let quiet = starts.iter().filter(|&&s| s > ms(140_000)).count();
    assert!(busy <= 3, "{starts:?}");
    assert!(quiet >= 10, "{starts:?}");
}

/// SkepticTOD end to end over three days: once the hourly averages know
/// the office hours, predictions in the busiest hours are dropped.
#[test]
fn time_of_day_drops_predictions_in_the_busiest_hours() {
    let r = registry();
    let hour = 3_600_000u64;
    let mut reqs = Vec::new();
    for h in 0..72u64 {
        let busy = (9..17).contains(&(h % 24));
        let step = if busy { 30_000 } else { 600_000 };
        let mut t = 0;
        while t < hour {
            let at = ms(h * hour + t);
            reqs.push(Request::new(at, at + ms(10), Op::Read, 0, 4096));
            t += step;
        }
    }
    let timeline = Timeline::from_requests(&reqs);
    let net = build_network("time-of-day(busiest=7; timer(5s) + fixed(10s))", &r).unwrap();
    let mut e = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask).with_log();
    replay(&timeline, &mut e).unwrap();
    let hours: Vec<(u64, u64)> = e
        .log()
        .iter()
        .filter_map(|x| match x {
            LogEntry::Prediction { prediction, .. } => {
                let h = prediction.start.as_nanos() / 3_600_000_000_000;
                Some((h / 24, h % 24))
            }
            _ => None,
        })
        .collect();
    // Day 0: every hour has predictions.
    assert!(hours.iter().any(|&(d, h)| d == 0 && h == 10));
    // Days 1 and 2: the 7 busiest hours (09:00–15:00; 16:00 ties with them
    // and loses to the earlier hours) have none, the others do.
    for day in 1..3 {
        for h in 0..24 {
            let n = hours.iter().filter(|&&x| x == (day, h)).count();
            if (9..16).contains(&h) {
                assert_eq!(n, 0, "day {day} hour {h}");
            } else {
                assert!(n > 0, "day {day} hour {h}");
            }
        }
    }
}

/// A daemon can watch what the nodes learn: the share node's weights (a
/// distribution that moved away from uniform), its leader, the backoff
/// estimate and the adaptive timeout, each under its node's name.
#[test]
fn node_gauges_expose_what_the_nodes_learned() {
    let r = registry();
    let spec = "follow-share(breakeven=1s; timer(100ms) + fixed(10s), \
                adapt-timer-arith-geom(step=100ms) + backoff-geom-geom())";
    let network = build_network(spec, &r).unwrap();
    let before = network.node_gauges();
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, NoTask);
    replay(&Timeline::from_requests(&trace()), &mut engine).unwrap();
    let after = engine.detector().node_gauges();
    let get = |g: &[(String, String, f64)], name: &str| -> Vec<(String, f64)> {
        g.iter()
            .filter(|(_, n, _)| n == name)
            .map(|(node, _, v)| (node.clone(), *v))
            .collect()
    };
    let w0 = get(&after, "weight_0");
    let w1 = get(&after, "weight_1");
    assert_eq!((w0.len(), w1.len()), (1, 1), "{after:?}");
    assert!((w0[0].1 + w1[0].1 - 1.0).abs() < 1e-9, "weights sum to 1");
    assert_ne!(w0[0].1, 0.5, "the weights moved: {after:?}");
    assert_eq!(get(&before, "weight_0")[0].1, 0.5);
    let leader = get(&after, "leader")[0].1;
    assert_eq!(leader, if w0[0].1 >= w1[0].1 { 0.0 } else { 1.0 });
    // The share node and the two sources are different nodes.
    let timeout = get(&after, "timeout_s");
    let estimate = get(&after, "estimate_s");
    assert_eq!((timeout.len(), estimate.len()), (1, 1), "{after:?}");
    assert_eq!(timeout[0].0, estimate[0].0, "one source node holds both");
    assert_ne!(timeout[0].0, w0[0].0);
    assert!(timeout[0].1 > 0.0 && estimate[0].1 > 0.0);
    assert!(
        get(&after, "timeout_s") != get(&before, "timeout_s")
            || get(&after, "estimate_s") != get(&before, "estimate_s"),
        "the adaptive source learned something: {before:?} -> {after:?}"
    );
}
