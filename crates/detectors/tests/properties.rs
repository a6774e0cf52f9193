//! Property tests over random traces for every component of the catalogue.

use lull_core::prelude::*;
use lull_detectors::adaptive::AdaptiveTimer;
use lull_detectors::adjust::{Bounded, Step};
use lull_detectors::backoff::{AdjustAt, Backoff};
use lull_detectors::timer::Timer;
use proptest::prelude::*;

type Args = &'static [(&'static str, &'static str)];

/// Start detectors: (name, args, requires full idleness).
const STARTS: &[(&str, Args, bool)] = &[
    ("timer", &[("t", "500ms")], true),
    ("adapt-timer-arith-arith", &[("step", "100ms")], true),
    ("adapt-timer-arith-geom", &[("step", "100ms")], true),
    ("adapt-timer-geom-arith", &[("step", "100ms")], true),
    ("adapt-timer-geom-geom", &[], true),
    ("random-timer", &[("breakeven", "2s"), ("seed", "3")], true),
    (
        "dpll",
        &[
            ("period", "5s"),
            ("gap", "500ms"),
            ("tolerance", "500ms"),
            ("lock", "2"),
        ],
        true,
    ),
    ("oracle", &[], true),
    (
        "moving-average",
        &[("rate", "1"), ("period", "500ms"), ("end", "2")],
        false,
    ),
    ("event-window", &[("n", "4"), ("rate", "1")], false),
    (
        "event-window",
        &[("n", "4"), ("rate", "20"), ("kind", "kbs")],
        false,
    ),
    (
        "event-window",
        &[("n", "4"), ("rate", "0.3"), ("kind", "busy")],
        false,
    ),
    (
        "time-window",
        &[("window", "2s"), ("rate", "1"), ("end", "1.5")],
        false,
    ),
    ("adaptive-rate", &[("n", "4"), ("rate", "1")], false),
    ("rate-change", &[("rate", "1"), ("period", "500ms")], false),
];

/// Duration predictors.
const DURATIONS: &[(&str, Args)] = &[
    ("no-duration", &[]),
    ("fixed", &[("d", "2s"), ("renew", "true")]),
    ("backoff-arith-arith", &[("step", "200ms")]),
    (
        "backoff-arith-geom",
        &[("step", "200ms"), ("adjust", "prediction")],
    ),
    ("backoff-geom-arith", &[("step", "200ms")]),
    ("backoff-geom-geom", &[("adjust", "prediction")]),
    (
        "filtered-backoff-arith-arith",
        &[("min", "1s"), ("step", "200ms")],
    ),
    (
        "filtered-backoff-arith-geom",
        &[("min", "1s"), ("step", "200ms")],
    ),
    (
        "filtered-backoff-geom-arith",
        &[("min", "1s"), ("step", "200ms"), ("adjust", "prediction")],
    ),
    ("filtered-backoff-geom-geom", &[("min", "1s")]),
    ("average", &[("n", "4")]),
    ("average", &[("n", "4"), ("kind", "median")]),
    ("filtered-average", &[("min", "1s"), ("kind", "geometric")]),
    (
        "autocorrelation",
        &[
            ("bin", "50ms"),
            ("horizon", "3s"),
            ("history", "30s"),
            ("recompute", "5s"),
        ],
    ),
];

fn build(name: &str, args: Args) -> Built {
    let r = lull_detectors::registry().with_breakeven(lull_core::time::Nanos::from_secs(3));
    let a: Vec<(Option<&str>, &str)> = args.iter().map(|(k, v)| (Some(*k), *v)).collect();
    r.build(name, &a, 0)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}
fn start(name: &str, args: Args) -> Box<dyn StartDetector> {
    match build(name, args) {
        Built::Start(s) => s,
        _ => panic!("{name} is not a start detector"),
    }
}
fn duration(name: &str, args: Args) -> Box<dyn DurationPredictor> {
    match build(name, args) {
        Built::Duration(d) => d,
        _ => panic!("{name} is not a duration predictor"),
    }
}

/// Wraps a start detector and checks every start it returns against the
/// context of the call.
#[derive(Debug)]
struct Probe {
    inner: Box<dyn StartDetector>,
    full_idle: bool,
    bad: Vec<String>,
}

impl Probe {
    fn check(&mut self, s: Option<Start>, ctx: &Context, what: &str) -> Option<Start> {
        if let Some(st) = s {
            if st.at < ctx.now {
                self.bad.push(format!(
                    "{what}: start {:?} before now {:?}",
                    st.at, ctx.now
                ));
            }
            if self.full_idle && ctx.outstanding > 0 {
                self.bad.push(format!(
                    "{what}: declared at {:?} with {} outstanding",
                    ctx.now, ctx.outstanding
                ));
            }
        }
        s
    }
}

impl StartDetector for Probe {
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> {
        let s = self.inner.on_event(ev, ctx);
        self.check(s, ctx, "on_event")
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        let s = self.inner.on_idle_begin(ctx);
        self.check(s, ctx, "on_idle_begin")
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.inner.on_idle_end(ctx, began)
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.inner.next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        let s = self.inner.on_deadline(ctx);
        self.check(s, ctx, "on_deadline")
    }
    fn on_prediction(&mut self, p: &Prediction) {
        self.inner.on_prediction(p)
    }
}

/// Random traces: bursts of requests separated by gaps, overlaps allowed.
fn traces() -> impl Strategy<Value = Timeline> {
    prop::collection::vec(
        (0u64..3, 0u64..400, 1u64..8000, 1u64..300, 0u32..65),
        1..120,
    )
    .prop_map(|v| {
        let mut t = 0u64;
        let reqs: Vec<Request> = v
            .iter()
            .map(|&(kind, short, long, service, kb)| {
                t += if kind == 0 { long } else { short };
                let a = Nanos::from_millis(t);
                Request::new(a, a + Nanos::from_millis(service), Op::Read, 0, kb * 1024)
            })
            .collect();
        Timeline::from_requests(&reqs)
    })
}

fn run(
    s: Box<dyn StartDetector>,
    full_idle: bool,
    d: Box<dyn DurationPredictor>,
    t: &Timeline,
    policy: StopPolicy,
) -> (InternalMeasures, Vec<LogEntry>, Vec<String>) {
    let probe = Probe {
        inner: s,
        full_idle,
        bad: Vec::new(),
    };
    let mut e = Engine::with_policy(Predictor::new(probe, d), policy, NoTask).with_log();
    let m = replay(t, &mut e).unwrap().internal;
    let mut bad = e.detector().start_detector().bad.clone();
    for l in e.log() {
        if let LogEntry::Prediction { at, prediction } = l {
            if prediction.start < *at {
                bad.push(format!("prediction {prediction:?} starts before {at:?}"));
            }
        }
    }
    (m, e.log().to_vec(), bad)
}

fn check_bounds(m: &InternalMeasures, what: &str) {
    for (k, v) in m.pairs() {
        assert!(v.is_finite() && v >= 0.0, "{what}: {k} = {v}");
    }
    // The quantities behind efficiency ≤ 1 (efficiency is not clamped).
    assert!(
        m.predicted_s - m.overflow_s <= m.actual_s + 1e-9 * (1.0 + m.actual_s),
        "{what}: declared idle time {} exceeds the actual {}",
        m.predicted_s - m.overflow_s,
        m.actual_s
    );
    assert!(
        m.overflow_s <= m.predicted_s + 1e-9,
        "{what}: overflow > predicted"
    );
}

proptest! {
    #![proptest_config(lull_testkit::cases(48))]

    #[test]
    fn every_pair_is_sound_deterministic_and_never_beats_the_oracle(t in traces()) {
        let (oracle, _, _) = run(start("oracle", &[]), true, duration("no-duration", &[]), &t, StopPolicy::PredictedEnd);
        prop_assert_eq!(oracle.violations, 0);
        prop_assert_eq!(oracle.efficiency, 1.0);
        prop_assert_eq!(oracle.incompetence, 0.0);
        let pairs = STARTS
            .iter()
            .map(|&(n, a, f)| (n, a, f, "fixed", &[("d", "2s")] as Args))
            .chain(DURATIONS.iter().map(|&(n, a)| ("timer", &[("t", "200ms")] as Args, true, n, a)));
        for (sn, sa, full, dn, da) in pairs {
            let what = format!("{sn}{sa:?} + {dn}{da:?}");
            for policy in [StopPolicy::PredictedEnd, StopPolicy::EarlierOf] {
                let (m1, log1, bad) = run(start(sn, sa), full, duration(dn, da), &t, policy);
                prop_assert!(bad.is_empty(), "{}: {:?}", what, bad);
                check_bounds(&m1, &what);
                // Declared idle time, compared directly (not the ratio).
                prop_assert!(
                    m1.predicted_s - m1.overflow_s <= oracle.predicted_s - oracle.overflow_s + 1e-9 * (1.0 + oracle.actual_s),
                    "{}", what
                );
                let (m2, log2, _) = run(start(sn, sa), full, duration(dn, da), &t, policy);
                prop_assert_eq!(m1, m2, "{}", what);
                prop_assert_eq!(log1, log2, "{}", what);
            }
        }
    }

    #[test]
    fn timer_zero_when_busy_and_the_oracle_are_perfect(t in traces()) {
        let (m, _, _) = run(Box::new(Timer::new(Nanos::ZERO)), true, duration("no-duration", &[]), &t, StopPolicy::WhenBusy);
        prop_assert_eq!(m.efficiency, 1.0);
        prop_assert_eq!(m.incompetence, 0.0);
        let (m, _, _) = run(start("oracle", &[]), true, duration("no-duration", &[]), &t, StopPolicy::WhenBusy);
        prop_assert_eq!((m.efficiency, m.incompetence, m.violations), (1.0, 0.0, 0));
    }

    #[test]
    fn adaptive_values_stay_within_floor_and_ceiling(
        t in traces(),
        step in 1u64..3000,
        floor in 1u64..2000,
        span in 0u64..5000,
        init in 0u64..=100,
        up_geom: bool,
        down_geom: bool,
        per_prediction: bool,
    ) {
        let ms = Nanos::from_millis;
        let (floor, ceiling) = (ms(floor), ms(floor + span));
        let initial = floor + (ceiling - floor).mul_f64(init as f64 / 100.0);
        let dir = |g: bool| if g { Step::Geom } else { Step::Arith(ms(step)) };
        let b = Bounded::new(initial, floor, ceiling, dir(up_geom), dir(down_geom));
        let at = if per_prediction { AdjustAt::Prediction } else { AdjustAt::Period };
        let p = Predictor::new(AdaptiveTimer::new(b), Backoff::new(b, at, Nanos::ZERO));
        let mut e = Engine::with_policy(p, StopPolicy::PredictedEnd, NoTask);
        for ev in t.events() {
            e.push(ev).unwrap();
            let timeout = e.detector().start_detector().timeout();
            let est = e.detector().duration_predictor().estimate();
            prop_assert!(floor <= timeout && timeout <= ceiling, "timeout {:?}", timeout);
            prop_assert!(floor <= est && est <= ceiling, "estimate {:?}", est);
        }
    }

    #[test]
    fn random_timer_is_reproducible_with_a_seed(t in traces(), seed: u64) {
        let args: Vec<(Option<&str>, String)> = vec![(Some("breakeven"), "3s".into()), (Some("seed"), seed.to_string())];
        let r = lull_detectors::registry().with_breakeven(lull_core::time::Nanos::from_secs(3));
        let mk = || {
            let a: Vec<(Option<&str>, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            match r.build("random-timer", &a, 0).unwrap() {
                Built::Start(s) => s,
                _ => unreachable!(),
            }
        };
        let (m1, l1, _) = run(mk(), true, duration("fixed", &[("d", "1s")]), &t, StopPolicy::PredictedEnd);
        let (m2, l2, _) = run(mk(), true, duration("fixed", &[("d", "1s")]), &t, StopPolicy::PredictedEnd);
        prop_assert_eq!(m1, m2);
        prop_assert_eq!(l1, l2);
    }
}
