//! Property: a skeptic never emits a prediction that none of its inputs
//! supported. Every output must be the same as, or a sub-interval of, a
//! prediction one of its inputs made before, and must not start before the
//! moment it is emitted.

use lull_core::prelude::*;
use proptest::prelude::*;

/// One step of a hand-driven stimulus script.
#[derive(Clone, Debug)]
enum Step {
    /// Time passes.
    Wait(u64),
    /// A request arrives.
    Arrive,
    /// The oldest outstanding request completes (ignored when none is).
    Complete,
    /// Input `slot` predicts idleness from `now + delay` for `duration`
    /// (ms; `None`: until busy).
    Input {
        slot: usize,
        delay: u64,
        duration: Option<u64>,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u64..4_000).prop_map(Step::Wait),
        1 => (0u64..10_000_000).prop_map(Step::Wait), // up to ~3 h, for time-of-day
        3 => Just(Step::Arrive),
        3 => Just(Step::Complete),
        6 => (
            0usize..8,
            prop_oneof![4 => Just(0u64), 1 => 0u64..3_000],
            prop_oneof![1 => Just(None), 3 => (0u64..20_000).prop_map(Some)],
        )
            .prop_map(|(slot, delay, duration)| Step::Input {
                slot,
                delay,
                duration
            }),
    ]
}

/// A skeptic to build: name, named arguments, number of inputs.
type Kind = (&'static str, &'static [(&'static str, &'static str)], usize);

/// The skeptics under test.
const KINDS: &[Kind] = &[
    ("low-pass", &[("min", "2s")], 1),
    ("quality", &[("threshold", "0.6"), ("gain", "0.5")], 1),
    ("time-of-day", &[("busiest", "3"), ("offset", "5")], 1),
    ("time-of-day", &[("busiest", "20")], 1),
    ("violation-rate", &[("max", "0.7"), ("gain", "0.5")], 1),
    ("violation-rate", &[("max", "0.1"), ("gain", "1")], 1),
    ("and", &[], 2),
    ("and", &[], 3),
    ("vote", &[("threshold", "1")], 3),
    ("vote", &[("threshold", "2")], 3),
    ("vote", &[("threshold", "3")], 4),
    (
        "weighted-vote",
        &[("weights", "[1, 2, 0.5]"), ("threshold", "2.5")],
        3,
    ),
    (
        "weighted-vote",
        &[("weights", "[0.1, 0.2]"), ("threshold", "0.3")],
        2,
    ),
    (
        "follow-share",
        &[("eta", "2"), ("alpha", "0.05"), ("breakeven", "1s")],
        3,
    ),
    (
        "follow-share",
        &[("eta", "0.5"), ("alpha", "0"), ("breakeven", "3s")],
        5,
    ),
    (
        "follow-share",
        &[("follow", "majority"), ("majority", "0.5")],
        3,
    ),
    (
        "follow-share",
        &[("follow", "majority"), ("majority", "0.9"), ("eta", "5")],
        4,
    ),
];

fn build(
    registry: &Registry,
    name: &str,
    args: &[(&str, &str)],
    inputs: usize,
) -> Box<dyn Skeptic> {
    let args: Vec<(Option<&str>, &str)> = args.iter().map(|(k, v)| (Some(*k), *v)).collect();
    match registry.build(name, &args, inputs) {
        Ok(Built::Skeptic(s)) => s,
        other => panic!("{name}: {other:?}"),
    }
}

/// Runs `script` through `skeptic` the way a network would, and checks
/// every output against the inputs it had seen.
fn check(
    mut skeptic: Box<dyn Skeptic>,
    inputs: usize,
    script: &[Step],
) -> Result<(), TestCaseError> {
    let mut now = Nanos::ZERO;
    let mut outstanding: Vec<Request> = Vec::new();
    let mut idle_since: Option<Nanos> = Some(Nanos::ZERO);
    let mut seen: Vec<Prediction> = Vec::new();
    let ctx = |now, out: usize, idle| Context {
        now,
        outstanding: out as u32,
        idle_since: idle,
        lookahead: None,
        clock: None,
    };
    skeptic.on_idle_begin(&ctx(now, 0, idle_since));
    for st in script {
        let mut outputs: Vec<Prediction> = Vec::new();
        match *st {
            Step::Wait(ms) => now += Nanos::from_millis(ms),
            Step::Arrive => {
                let r = Request::new(now, now + Nanos::from_millis(1), Op::Read, 0, 512);
                outstanding.push(r);
                if let Some(began) = idle_since.take() {
                    skeptic.on_idle_end(&ctx(now, outstanding.len(), None), began);
                }
                outputs.extend(
                    skeptic.on_event(&Event::arrival(&r), &ctx(now, outstanding.len(), None)),
                );
            }
            Step::Complete => {
                if outstanding.is_empty() {
                    continue;
                }
                let r = outstanding.remove(0);
                let ev = Event {
                    time: now,
                    ..Event::completion(&r)
                };
                outputs.extend(skeptic.on_event(&ev, &ctx(now, outstanding.len(), None)));
                if outstanding.is_empty() {
                    idle_since = Some(now);
                    outputs.extend(skeptic.on_idle_begin(&ctx(now, 0, idle_since)));
                }
            }
            Step::Input {
                slot,
                delay,
                duration,
            } => {
                let p = Prediction::new(
                    now + Nanos::from_millis(delay),
                    duration.map(Nanos::from_millis),
                );
                seen.push(p);
                outputs.extend(skeptic.on_input(
                    slot % inputs,
                    &p,
                    &ctx(now, outstanding.len(), idle_since),
                ));
            }
        }
        for o in outputs {
            prop_assert!(o.start >= now, "{o:?} starts before {now:?}");
            prop_assert!(
                seen.iter()
                    .any(|q| q.start <= o.start && o.end() <= q.end()),
                "{o:?} is not inside any input prediction: {seen:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(lull_testkit::cases(128))]

    #[test]
    fn skeptics_never_emit_an_unsupported_prediction(
        script in proptest::collection::vec(step(), 0..200),
    ) {
        let registry = lull_skeptics::registry().with_breakeven(lull_core::time::Nanos::from_secs(3));
        for &(name, args, inputs) in KINDS {
            check(build(&registry, name, args, inputs), inputs, &script)?;
        }
    }
}

/// The same property through a whole network driven by the engine: the
/// sink's predictions always lie inside a prediction of one of the
/// predictors, here replayed one by one on the same trace.
#[test]
fn network_outputs_lie_inside_predictor_outputs() {
    let mut registry = Registry::new();
    registry.set_breakeven(Some(Nanos::from_secs(3)));
    lull_detectors::register(&mut registry);
    lull_skeptics::register(&mut registry);
    let predictors = [
        "timer(100ms) + fixed(2s)",
        "timer(1s)",
        "timer(300ms) + fixed(800ms)",
    ];
    let ms = Nanos::from_millis;
    // A deterministic, bursty trace.
    let mut reqs = Vec::new();
    let mut t = 0u64;
    let mut x = 12345u64;
    for _ in 0..400 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let gap = match (x >> 33) % 10 {
            0..=5 => (x >> 20) % 200,
            6..=8 => 500 + (x >> 20) % 3000,
            _ => 5000 + (x >> 20) % 20000,
        };
        reqs.push(Request::new(ms(t), ms(t + 5), Op::Write, 0, 4096));
        t += 5 + gap;
    }
    let timeline = Timeline::from_requests(&reqs);
    let log = |spec: &str| {
        let net = build_network(spec, &registry).unwrap();
        let mut e = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask).with_log();
        replay(&timeline, &mut e).unwrap();
        e.log()
            .iter()
            .filter_map(|x| match x {
                LogEntry::Prediction { at, prediction } => Some((*at, *prediction)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let inputs: Vec<(Nanos, Prediction)> = predictors.iter().flat_map(|p| log(p)).collect();
    let all = predictors.join(", ");
    for spec in [
        format!("and({all})"),
        format!("vote(threshold=2; {all})"),
        format!("weighted-vote(weights=[1, 1, 2], threshold=2; {all})"),
        format!("follow-share(breakeven=2s; {all})"),
        format!("follow-share(follow=majority; {all})"),
        format!("low-pass(min=1s; {})", predictors[0]),
        format!("quality(threshold=0.9; {})", predictors[0]),
        format!("violation-rate(max=0.5; {})", predictors[0]),
        format!("time-of-day(busiest=1; {})", predictors[1]),
    ] {
        let out = log(&spec);
        assert!(
            !out.is_empty(),
            "{spec} never predicted: the check would be empty"
        );
        for (at, o) in out {
            assert!(o.start >= at, "{spec}: {o:?} at {at:?}");
            assert!(
                inputs
                    .iter()
                    .any(|(t, q)| *t <= at && q.start <= o.start && o.end() <= q.end()),
                "{spec}: {o:?} at {at:?} is not inside any predictor output"
            );
        }
    }
}
