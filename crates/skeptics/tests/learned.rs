//! Learned state across a restart (issue 32): for every learning
//! component, a network run to an arrival, saved, rebuilt from its spec,
//! restored and run on decides exactly as the network that never stopped;
//! a state that does not fit (another network, truncated, random values)
//! is refused with a message, never a panic.

use lull_core::engine::{Engine, LogEntry};
use lull_core::learned::{Learned, Snapshot};
use lull_core::prelude::*;
use lull_core::spec::build_network;
use proptest::prelude::*;

const B: Nanos = Nanos(10_000_000_000);

/// The learning components, each in a network that lets it act.
const LEARNERS: &[&str] = &[
    "long-idle()",
    "periodic()",
    "share()",
    "adapt-timer-geom-geom()",
    "adapt-timer-arith-geom(step=B/8)",
    "timer(B) + backoff-geom-geom()",
    "follow-share(timer(B/4), timer(B), timer(4B))",
    "timer(B/4) + average()",
    "timer(B/4) + autocorrelation()",
    "quality(timer(B/4) + backoff-geom-geom())",
    "violation-rate(max=0.01; timer(B/4) + backoff-geom-geom())",
    "time-of-day(busiest=7; timer(B/4) + fixed(B))",
    "preempt-gate-auto(timer(B/4) + fixed(B))",
    "adaptive-rate() + backoff-arith-geom(step=B/8)",
];

/// How many of [`LEARNERS`] continue exactly: all but the last two, which
/// keep what they learned but not what is about the moment:
/// `preempt-gate-auto` keeps its tuned interval and estimates, not its
/// tuning window in progress, which starts again; `adaptive-rate` keeps
/// its threshold, not its window of the last `n` arrivals (a rate over
/// events from before a restart would span the downtime). For a while
/// after a restore they decide as those fresh windows do.
const EXACT: usize = LEARNERS.len() - 2;

fn registry() -> Registry {
    let mut r = Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r.with_breakeven(B)
}

fn engine(spec: &str, r: &Registry) -> Engine<Network, PolicyActuator, NoTask> {
    let net = build_network(spec, r).unwrap_or_else(|e| panic!("{spec}: {e}"));
    // A wall clock, so that time-of-day learns too (2026-11-24, 00:00 UTC).
    Engine::with_policy(net, StopPolicy::EarlierOf, NoTask)
        .with_log()
        .with_shortcuts(false)
        .with_clock(lull_core::time::UnixTime::from_secs(1_795_478_400))
}

/// One request per busy period, separated by `gaps` (milliseconds).
fn trace(gaps: &[u64]) -> Timeline {
    let mut reqs = Vec::new();
    let mut t = Nanos::ZERO;
    for &g in gaps {
        reqs.push(Request::new(
            t,
            t + Nanos::from_millis(5),
            Op::Read,
            0,
            4096,
        ));
        t = t + Nanos::from_millis(5) + Nanos::from_millis(g);
    }
    reqs.push(Request::new(
        t,
        t + Nanos::from_millis(5),
        Op::Write,
        8,
        4096,
    ));
    Timeline::from_requests(&reqs)
}

/// The entries of `log` after `t`.
fn after(log: &[LogEntry], t: Nanos) -> Vec<LogEntry> {
    log.iter()
        .filter(|e| match e {
            LogEntry::Prediction { at, .. } | LogEntry::Command { at, .. } => *at > t,
            _ => true,
        })
        .cloned()
        .collect()
}

/// Runs `spec` on `tl` straight through, and again stopped at the
/// arrival `events[cut]`: saved there, through JSON, into a fresh engine.
/// Returns both runs' log entries after the cut.
fn stop_and_go(spec: &str, tl: &Timeline, cut: usize) -> (Vec<LogEntry>, Vec<LogEntry>) {
    let r = registry();
    let ev = tl.events();
    let mut a = engine(spec, &r);
    for e in &ev[..=cut] {
        a.push(e).unwrap();
    }
    let t = ev[cut].time;
    let saved = Snapshot {
        format: lull_core::learned::SNAPSHOT_FORMAT,
        network: spec.to_string(),
        breakeven_ns: B.0,
        idle_periods: 0,
        since_unix: 0,
        parts: a.save_learned(),
    };
    let json = serde_json::to_string(&saved).unwrap();
    let back: Snapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, saved, "{spec}: the state survives JSON");
    back.fits(spec, Some(B)).unwrap();
    let mut b = engine(spec, &r);
    b.advance(t).unwrap();
    b.push(&ev[cut]).unwrap();
    b.restore_learned(&back.parts)
        .unwrap_or_else(|e| panic!("{spec}: {e}"));
    for e in &ev[cut + 1..] {
        a.push(e).unwrap();
        b.push(e).unwrap();
    }
    let end = ev.last().unwrap().time + Nanos::from_secs(100);
    a.finish(end).unwrap();
    b.finish(end).unwrap();
    (after(a.log(), t), after(b.log(), t))
}

/// Idle gaps from milliseconds to many break-evens, with runs of alike
/// lengths (persistence the learners pick up).
fn gaps() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(
        prop_oneof![
            3 => 1u64..2_000,
            2 => 2_000u64..30_000,
            2 => 30_000u64..400_000,
        ],
        20..120,
    )
}

proptest! {
    #![proptest_config(lull_testkit::cases(48))]

    #[test]
    fn a_restored_learner_decides_as_one_that_never_stopped(
        gaps in gaps(),
        cut_at in 0.05f64..0.95,
        which in 0usize..EXACT,
    ) {
        let tl = trace(&gaps);
        let ev = tl.events();
        // An arrival that ends an idle period, about `cut_at` through.
        let want = (ev.len() as f64 * cut_at) as usize;
        let cut = (want..ev.len())
            .chain(0..want)
            .find(|&i| i > 0 && ev[i].is_arrival() && tl.idle_after(i - 1))
            .unwrap();
        let spec = LEARNERS[which];
        let (straight, restarted) = stop_and_go(spec, &tl, cut);
        prop_assert_eq!(straight, restarted, "{}", spec);
    }

    #[test]
    fn a_damaged_state_is_refused_never_a_panic(
        gaps in gaps(),
        which in 0usize..LEARNERS.len(),
        garbage in prop::collection::vec(prop_oneof![any::<f64>(), -1e3f64..1e3], 0..80),
        drop in 0usize..4,
    ) {
        let r = registry();
        let spec = LEARNERS[which];
        let tl = trace(&gaps);
        let mut a = engine(spec, &r);
        for e in tl.events() {
            a.push(e).unwrap();
        }
        let parts = a.save_learned();
        // Random values in place of each saved part's.
        let damaged: Vec<Option<Learned>> = parts
            .iter()
            .map(|p| p.as_ref().map(|l| Learned::new(&l.kind, l.version, garbage.clone())))
            .collect();
        let mut b = engine(spec, &r);
        let _ = b.restore_learned(&damaged);
        // Truncated: fewer parts than the network has.
        let mut c = engine(spec, &r);
        if !parts.is_empty() {
            let short = &parts[..parts.len().saturating_sub(drop.max(1))];
            prop_assert!(c.restore_learned(short).is_err(), "{} took a truncated state", spec);
        }
        // Another network's state.
        let other = LEARNERS[(which + 1) % LEARNERS.len()];
        let mut d = engine(other, &r);
        let foreign = d.restore_learned(&parts);
        let theirs = engine(other, &r).save_learned();
        let same_layout = theirs.len() == parts.len()
            && theirs.iter().zip(&parts).all(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => x.kind == y.kind && x.values.len() == y.values.len(),
                (None, None) => true,
                _ => false,
            });
        prop_assert!(same_layout || foreign.is_err(), "{} took {}'s state", other, spec);
    }
}

#[test]
fn every_learner_saves_something_and_a_timer_nothing() {
    let r = registry();
    for spec in LEARNERS {
        let parts = engine(spec, &r).save_learned();
        assert!(parts.iter().any(Option::is_some), "{spec} saves nothing");
    }
    let parts = engine("timer(B)", &r).save_learned();
    assert!(parts.iter().all(Option::is_none), "{parts:?}");
    // A state for another drive or network does not fit.
    let s = Snapshot {
        format: lull_core::learned::SNAPSHOT_FORMAT,
        network: "long-idle()".into(),
        breakeven_ns: B.0,
        idle_periods: 3,
        since_unix: 1,
        parts,
    };
    assert!(s.fits("long-idle()", Some(B)).is_ok());
    // Spacing is not part of a spec (an admin's `network = "auto "`).
    assert!(s.fits(" long-idle ( ) ", Some(B)).is_ok());
    let timers = Snapshot {
        network: "timer(10s)+fixed(1m)".into(),
        ..s.clone()
    };
    assert!(timers.fits("timer( 10s ) + fixed(1m)", Some(B)).is_ok());
    // A spec written otherwise is another network.
    assert!(timers.fits("timer(10000ms) + fixed(1m)", Some(B)).is_err());
    assert!(timers.fits("timer(10s) + fixed(2m)", Some(B)).is_err());
    let e = s.fits("share()", Some(B)).unwrap_err();
    assert!(e.to_string().contains("\"long-idle()\""), "{e}");
    let e = s.fits("long-idle()", Some(B + B)).unwrap_err();
    assert!(e.to_string().contains("break-even 10s"), "{e}");
}

/// Every registered component in a network that lets it act, and whether
/// it keeps what it learned (`None`), or why a restarted copy may decide
/// otherwise for a while (`Some`: what it holds is about the last moments,
/// not the disk).
const ALL: &[(&str, &str, Option<&str>)] = &[
    (
        "adapt-timer-arith-arith",
        "adapt-timer-arith-arith(step=B/8)",
        None,
    ),
    (
        "adapt-timer-arith-geom",
        "adapt-timer-arith-geom(step=B/8)",
        None,
    ),
    (
        "adapt-timer-geom-arith",
        "adapt-timer-geom-arith(step=B/8)",
        None,
    ),
    ("adapt-timer-geom-geom", "adapt-timer-geom-geom()", None),
    (
        "adaptive-rate",
        "adaptive-rate()",
        Some("its window of the last n arrivals"),
    ),
    (
        "dpll",
        "dpll()",
        Some("its phase, locked to the last arrivals"),
    ),
    (
        "event-window",
        "event-window(n=4, rate=2)",
        Some("its window of the last n arrivals"),
    ),
    ("long-idle", "long-idle()", None),
    ("periodic", "periodic()", None),
    (
        "moving-average",
        "moving-average(rate=2)",
        Some("its window of recent rate samples"),
    ),
    (
        "oracle",
        "oracle()",
        Some("it knows the future, not the past"),
    ),
    (
        "random-timer",
        "random-timer()",
        Some("its random number stream"),
    ),
    (
        "rate-change",
        "rate-change(rate=2)",
        Some("its window of recent rates"),
    ),
    ("share", "share()", None),
    (
        "time-window",
        "time-window(window=1s, rate=2)",
        Some("its window of recent arrivals"),
    ),
    ("timer", "timer(B)", None),
    ("autocorrelation", "timer(B/4) + autocorrelation()", None),
    ("average", "timer(B/4) + average()", None),
    (
        "backoff-arith-arith",
        "timer(B/4) + backoff-arith-arith(step=B/8)",
        None,
    ),
    (
        "backoff-arith-geom",
        "timer(B/4) + backoff-arith-geom(step=B/8)",
        None,
    ),
    (
        "backoff-geom-arith",
        "timer(B/4) + backoff-geom-arith(step=B/8)",
        None,
    ),
    (
        "backoff-geom-geom",
        "timer(B/4) + backoff-geom-geom()",
        None,
    ),
    (
        "filtered-average",
        "timer(B/4) + filtered-average(min=B/8)",
        None,
    ),
    (
        "filtered-backoff-arith-arith",
        "timer(B/4) + filtered-backoff-arith-arith(min=B/8, step=B/8)",
        None,
    ),
    (
        "filtered-backoff-arith-geom",
        "timer(B/4) + filtered-backoff-arith-geom(min=B/8, step=B/8)",
        None,
    ),
    (
        "filtered-backoff-geom-arith",
        "timer(B/4) + filtered-backoff-geom-arith(min=B/8, step=B/8)",
        None,
    ),
    (
        "filtered-backoff-geom-geom",
        "timer(B/4) + filtered-backoff-geom-geom(min=B/8)",
        None,
    ),
    ("fixed", "timer(B/4) + fixed(B)", None),
    ("no-duration", "timer(B/4) + no-duration()", None),
    ("and", "and(timer(B/4), timer(B))", None),
    (
        "follow-share",
        "follow-share(timer(B/4), timer(B), timer(4B))",
        None,
    ),
    (
        "latency-target",
        "latency-target(timer(B/4) + fixed(B))",
        Some("its measuring window in progress starts again (its histograms are kept)"),
    ),
    ("low-pass", "low-pass(min=B/2; timer(B/4) + fixed(B))", None),
    ("preempt-gate", "preempt-gate(timer(B/4) + fixed(B))", None),
    (
        "preempt-gate-auto",
        "preempt-gate-auto(timer(B/4) + fixed(B))",
        Some("its tuning window in progress starts again (its interval and estimates are kept)"),
    ),
    ("quality", "quality(timer(B/4) + backoff-geom-geom())", None),
    ("time-of-day", "time-of-day(timer(B/4) + fixed(B))", None),
    (
        "violation-rate",
        "violation-rate(timer(B/4) + fixed(B))",
        None,
    ),
    ("vote", "vote(threshold=1; timer(B/4), timer(B))", None),
    (
        "weighted-vote",
        "weighted-vote(weights=[1, 2], threshold=0.5; timer(B/4), timer(B))",
        None,
    ),
];

#[test]
fn every_component_that_learns_keeps_it_or_says_why_not() {
    let r = registry();
    let mut listed: Vec<&str> = ALL.iter().map(|a| a.0).collect();
    listed.sort_unstable();
    let mut names: Vec<&str> = r.list().iter().map(|i| i.name).collect();
    names.sort_unstable();
    assert_eq!(listed, names, "ALL lists every registered component");
    // Gaps with structure (runs of alike lengths), long enough to learn.
    let gaps: Vec<u64> = (0..400u64)
        .map(|i| match (i / 7) % 4 {
            0 => 300 + (i * 37) % 900,
            1 => 20_000 + (i * 7919) % 40_000,
            2 => 2_000 + (i * 131) % 6_000,
            _ => 90_000 + (i * 104_729) % 200_000,
        })
        .collect();
    let tl = trace(&gaps);
    let ev = tl.events();
    let mut differ = Vec::new();
    for &(name, spec, exempt) in ALL {
        for frac in [0.3, 0.6] {
            let want = (ev.len() as f64 * frac) as usize;
            let cut = (want..ev.len())
                .find(|&i| i > 0 && ev[i].is_arrival() && tl.idle_after(i - 1))
                .unwrap();
            let (straight, restarted) = stop_and_go(spec, &tl, cut);
            if LEARNERS.contains(&spec) {
                // The comparison is not empty: it acts after the cut.
                assert!(!straight.is_empty(), "{spec} does nothing after {frac}");
            }
            if straight != restarted && exempt.is_none() {
                differ.push(format!("{name} ({spec}) at {frac}"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "decide otherwise after a restart: {differ:#?}"
    );
}

proptest! {
    #![proptest_config(lull_testkit::cases(48))]

    /// A daemon restores what its last run saved at the zero of its new
    /// run's clock, whatever the old run was doing when it saved (inside
    /// an idle period, a burst, a prediction being judged): every
    /// component takes its state back there, or the daemon would throw
    /// away all it learned ("its learned state is not used"). `quality`
    /// once refused a judged prediction that began before the new zero.
    #[test]
    fn every_component_takes_its_state_back_at_a_new_run_s_zero(
        gaps in gaps(),
        cut_at in 0.05f64..1.0,
        which in 0usize..ALL.len(),
    ) {
        let r = registry();
        let (name, spec, _) = ALL[which];
        let tl = trace(&gaps);
        let ev = tl.events();
        let cut = ((ev.len() as f64 * cut_at) as usize).min(ev.len() - 1);
        let mut a = engine(spec, &r);
        for e in &ev[..=cut] {
            a.push(e).unwrap();
        }
        // Saved a while after the last event, as at a stop mid-period.
        let stop = ev[cut].time + Nanos::from_millis(gaps[which % gaps.len()]);
        a.advance(stop).unwrap();
        let parts = a.save_learned();
        let mut b = engine(spec, &r);
        let restored = b.restore_learned(&parts);
        prop_assert!(restored.is_ok(), "{}: {:?}", name, restored);
    }
}

#[test]
fn every_component_restores_exactly_what_it_saved() {
    // What `restore` takes back, `save` gives again: no value dropped or
    // bent on the way (the exact continuation above depends on it, and
    // a component exempt there is checked here).
    let r = registry();
    let gaps: Vec<u64> = (0..300u64).map(|i| 200 + (i * 7919) % 120_000).collect();
    let tl = trace(&gaps);
    let ev = tl.events();
    for &(name, spec, _) in ALL {
        let mut a = engine(spec, &r);
        for e in ev {
            a.push(e).unwrap();
        }
        let parts = a.save_learned();
        let mut b = engine(spec, &r);
        b.advance(a.now()).unwrap();
        b.restore_learned(&parts)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(b.save_learned(), parts, "{name}");
    }
}
