//! Parameters out of range are rejected when a network is built, with an
//! error naming the parameter; every catalogue entry is documented and
//! builds from a spec string.

use lull_core::prelude::*;

fn err(spec: &str) -> String {
    let r = lull_detectors::registry().with_breakeven(lull_core::time::Nanos::from_secs(3));
    match build_network(spec, &r) {
        Ok(_) => panic!("{spec:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_parameters_are_rejected_naming_the_parameter() {
    for (spec, param) in [
        ("timer(-1s)", "t"),
        ("adapt-timer-arith-arith(step=0s)", "step"),
        (
            "adapt-timer-arith-arith(step=1s, floor=5s, ceiling=1s)",
            "floor",
        ),
        ("adapt-timer-arith-geom(step=1s, initial=100s)", "initial"),
        ("adapt-timer-geom-geom(floor=0s)", "floor"),
        ("adapt-timer-geom-arith(step=-1s)", "step"),
        ("moving-average(rate=0)", "rate"),
        ("moving-average(rate=-1)", "rate"),
        ("moving-average(rate=NaN)", "rate"),
        ("moving-average(rate=1, period=0s)", "period"),
        ("moving-average(rate=1, n=0)", "n"),
        ("moving-average(rate=1, end=0.5)", "end"),
        ("event-window(n=0, rate=1)", "n"),
        ("event-window(n=5, rate=-1)", "rate"),
        ("event-window(n=5, rate=inf)", "rate"),
        ("event-window(n=5, rate=2, kind=busy)", "rate"),
        ("event-window(n=5, rate=1, kind=iops)", "kind"),
        ("time-window(window=0s, rate=1)", "window"),
        ("time-window(window=1s, rate=2, end=1)", "end"),
        ("adaptive-rate(goal=1.5)", "goal"),
        ("adaptive-rate(min=2, max=1)", "max"),
        ("adaptive-rate(rate=5000)", "rate"),
        ("adaptive-rate(gain=0)", "gain"),
        ("adaptive-rate(hysteresis=0.5)", "hysteresis"),
        ("rate-change(rate=1, alpha=0)", "alpha"),
        ("rate-change(rate=1, period=0s)", "period"),
        ("dpll(period=0s)", "period"),
        ("dpll(gap=20s)", "gap"),
        ("dpll(tolerance=15s)", "tolerance"),
        ("dpll(lock=0)", "lock"),
        ("random-timer(breakeven=0s)", "breakeven"),
        ("timer(1s) + fixed(0s)", "d"),
        ("timer(1s) + backoff-arith-geom(step=0s)", "step"),
        (
            "timer(1s) + backoff-geom-geom(floor=2s, ceiling=1s)",
            "floor",
        ),
        ("timer(1s) + backoff-geom-arith(step=1s, floor=0s)", "floor"),
        (
            "timer(1s) + backoff-arith-arith(step=1s, adjust=sometimes)",
            "adjust",
        ),
        (
            "timer(1s) + filtered-backoff-arith-arith(min=0s, step=1s)",
            "min",
        ),
        (
            "timer(1s) + filtered-backoff-geom-geom(min=1s, initial=1h)",
            "initial",
        ),
        ("timer(1s) + average(n=0)", "n"),
        ("timer(1s) + average(4, kind=mode)", "kind"),
        ("timer(1s) + filtered-average(min=0s)", "min"),
        ("timer(1s) + autocorrelation(bin=0s)", "bin"),
        ("timer(1s) + autocorrelation(threshold=0)", "threshold"),
        ("timer(1s) + autocorrelation(threshold=NaN)", "threshold"),
        (
            "timer(1s) + autocorrelation(horizon=1m, history=30s)",
            "history",
        ),
    ] {
        let e = err(spec);
        assert!(
            e.contains(&format!("`{param}`")),
            "{spec:?}: error does not name `{param}`: {e}"
        );
    }
}

/// One working spec per catalogue entry.
const EXAMPLES: &[(&str, &str)] = &[
    ("timer", "timer(1s)"),
    (
        "adapt-timer-arith-arith",
        "adapt-timer-arith-arith(step=100ms)",
    ),
    (
        "adapt-timer-arith-geom",
        "adapt-timer-arith-geom(step=100ms)",
    ),
    (
        "adapt-timer-geom-arith",
        "adapt-timer-geom-arith(step=100ms)",
    ),
    ("adapt-timer-geom-geom", "adapt-timer-geom-geom()"),
    ("moving-average", "moving-average(rate=0.5, period=1s)"),
    ("event-window", "event-window(n=10, rate=1, kind=ios)"),
    ("time-window", "time-window(window=10s, rate=0.5)"),
    ("adaptive-rate", "adaptive-rate(n=10, rate=1)"),
    ("rate-change", "rate-change(rate=1)"),
    ("dpll", "dpll(period=30s)"),
    ("share", "share() + fixed(10s)"),
    ("long-idle", "long-idle() + fixed(10s)"),
    ("periodic", "periodic() + fixed(10s)"),
    ("random-timer", "random-timer(breakeven=3s, seed=1)"),
    ("oracle", "oracle"),
    ("no-duration", "timer(1s) + no-duration"),
    ("fixed", "timer(1s) + fixed(10s)"),
    (
        "backoff-arith-arith",
        "timer(1s) + backoff-arith-arith(step=500ms)",
    ),
    (
        "backoff-arith-geom",
        "timer(1s) + backoff-arith-geom(step=500ms)",
    ),
    (
        "backoff-geom-arith",
        "timer(1s) + backoff-geom-arith(step=500ms, adjust=prediction)",
    ),
    ("backoff-geom-geom", "timer(1s) + backoff-geom-geom()"),
    ("average", "timer(1s) + average(8, median)"),
    (
        "filtered-average",
        "timer(1s) + filtered-average(min=1s, n=8, kind=geometric)",
    ),
    (
        "filtered-backoff-arith-arith",
        "timer(1s) + filtered-backoff-arith-arith(min=1s, step=1s)",
    ),
    (
        "filtered-backoff-arith-geom",
        "timer(1s) + filtered-backoff-arith-geom(min=1s, step=1s)",
    ),
    (
        "filtered-backoff-geom-arith",
        "timer(1s) + filtered-backoff-geom-arith(min=1s, step=1s)",
    ),
    (
        "filtered-backoff-geom-geom",
        "timer(1s) + filtered-backoff-geom-geom(min=1s)",
    ),
    (
        "autocorrelation",
        "timer(1s) + autocorrelation(bin=100ms, horizon=10s)",
    ),
];

#[test]
fn the_catalogue_is_complete_documented_and_builds() {
    let r = lull_detectors::registry().with_breakeven(lull_core::time::Nanos::from_secs(3));
    let names: Vec<&str> = r.list().iter().map(|i| i.name).collect();
    let mut want: Vec<&str> = EXAMPLES.iter().map(|e| e.0).collect();
    want.sort();
    let mut got = names.clone();
    got.sort();
    assert_eq!(got, want, "registered names");
    for info in r.list() {
        assert!(!info.summary.is_empty(), "{}", info.name);
        assert!(info.source.contains('§'), "{}: paper section", info.name);
        for p in info.params {
            assert!(!p.doc.is_empty(), "{}.{}", info.name, p.name);
            if p.kind == ParamKind::Duration {
                assert_eq!(p.unit, "s", "{}.{}", info.name, p.name);
            }
        }
    }
    let s = Nanos::from_secs;
    let reqs: Vec<Request> = (0..40u64)
        .map(|i| {
            Request::new(
                s(i * i),
                s(i * i) + Nanos::from_millis(20),
                Op::Write,
                0,
                4096,
            )
        })
        .collect();
    let t = Timeline::from_requests(&reqs);
    let mut gauges = 0;
    for (name, spec) in EXAMPLES {
        let net = build_network(spec, &r).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut e = Engine::with_policy(net, StopPolicy::EarlierOf, NoTask);
        let m = replay(&t, &mut e)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .internal;
        assert!(m.efficiency.is_finite(), "{name}");
        assert!(
            m.predicted_s - m.overflow_s <= m.actual_s + 1e-9,
            "{name}: declared more idle time than there was"
        );
        // Every gauge it reports has a label and a unit in the catalogue
        // (`lull status` and `lull components` show them).
        for (node, g, _) in e.detector().node_gauges() {
            gauges += 1;
            let documented = r
                .list()
                .iter()
                .filter(|i| spec.contains(i.name))
                .any(|i| i.gauge(&g).is_some());
            assert!(
                documented,
                "{name} ({spec}): node {node}'s gauge {g} is not in its ComponentInfo::gauges"
            );
        }
    }
    // share, long-idle, the adaptive timers, adaptive-rate and backoff.
    assert!(gauges >= 12, "{gauges} gauges seen");
}

#[test]
fn an_online_build_refuses_the_oracle_naming_it() {
    // Issue 36: the oracle builds for a live engine and never fires; an
    // embedder building for live use is told instead.
    let r = lull_detectors::registry().with_breakeven(Nanos::from_secs(3));
    let spec = lull_core::spec::NetworkSpec::parse("oracle()", Some(&r)).unwrap();
    let e = spec.build_online(&r).unwrap_err().to_string();
    assert!(e.contains("`oracle`") && e.contains("offline"), "{e}");
    assert!(spec.build(&r).is_ok(), "a replay builds it");
    let live = lull_core::spec::NetworkSpec::parse("timer(B) + fixed(2B)", Some(&r)).unwrap();
    assert!(live.build_online(&r).is_ok());
}
