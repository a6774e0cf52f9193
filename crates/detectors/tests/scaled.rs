//! Everything scales with the drive: every component that needs the
//! device's break-even time B changes its behaviour with B, `share` stays
//! within its regret bound against the best expert in hindsight, and
//! `long-idle` learns to act at once on structure a timeout cannot see.

use lull_core::prelude::*;
use lull_detectors::share::ShareExperts;
use proptest::prelude::*;

fn secs(x: f64) -> Nanos {
    Nanos::from_secs_f64(x)
}

/// The start times of the predictions `spec` makes on `reqs` when built
/// for a drive with break-even `b`.
fn starts(spec: &str, b: Nanos, reqs: &[Request]) -> Vec<Nanos> {
    let r = lull_detectors::registry().with_breakeven(b);
    let net = build_network(spec, &r).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mut e = Engine::with_policy(net, StopPolicy::EarlierOf, NoTask).with_log();
    replay(&Timeline::from_requests(reqs), &mut e).unwrap();
    e.log()
        .iter()
        .filter_map(|l| match l {
            LogEntry::Prediction { prediction, .. } => Some(prediction.start),
            _ => None,
        })
        .collect()
}

/// Idle gaps of 2, 30, 400 and 5000 s, each after a 1 s request, repeated.
fn gaps_trace() -> Vec<Request> {
    let mut out = Vec::new();
    let mut t = 0.0;
    for _ in 0..6 {
        for g in [2.0, 30.0, 400.0, 5000.0] {
            out.push(Request::new(secs(t), secs(t + 1.0), Op::Read, 0, 4096));
            t += 1.0 + g;
        }
    }
    out.push(Request::new(secs(t), secs(t + 1.0), Op::Read, 0, 4096));
    out
}

#[test]
fn every_component_that_needs_b_changes_with_b() {
    let reqs = gaps_trace();
    // The paper's 2.5" disk and a NAS disk.
    let (paper, nas) = (Nanos::from_secs(3), Nanos::from_secs_f64(72.4));
    for spec in [
        "timer(2B)",
        "random-timer()",
        "share()",
        "share(decision=median)",
        "long-idle()",
        "periodic()",
        "adapt-timer-arith-geom(step=B/8)",
        "adapt-timer-geom-geom()",
        "adapt-timer-arith-arith(step=1s)",
        "adapt-timer-geom-arith(step=1s)",
    ] {
        let a = starts(spec, paper, &reqs);
        let b = starts(spec, nas, &reqs);
        assert!(!a.is_empty(), "{spec} never fired with B = 3 s");
        assert_ne!(a, b, "{spec} ignores the break-even time");
    }
    // Named networks expand for the device too.
    let a = starts("auto", paper, &reqs);
    let b = starts("auto", nas, &reqs);
    assert_ne!(a, b, "auto ignores the break-even time");
    // timer(2B) is exactly 6 s on the paper disk: the 2 s gap is sat out,
    // the 30 s gap after the request at [3 s, 4 s) fires at 10 s.
    assert_eq!(starts("timer(2B)", paper, &reqs)[0], secs(10.0));
}

#[test]
fn components_that_need_b_say_so_without_it() {
    let r = lull_detectors::registry();
    for spec in [
        "random-timer()",
        "share()",
        "long-idle()",
        "periodic()",
        "timer(2B)",
        "adapt-timer-geom-geom()",
    ] {
        let e = build_network(spec, &r).unwrap_err().to_string();
        assert!(e.contains("break-even"), "{spec}: {e}");
    }
}

#[test]
fn an_adaptive_timer_stuck_at_its_ceiling_comes_back_after_missed_periods() {
    // Phase 1: gaps just past the timeout make every prediction look too
    // eager and push the timeout to its ceiling. Phase 2: the workload
    // shifts to gaps far longer than B but shorter than that ceiling, which
    // the paper's rule never judges, so the timeout would never come back.
    let b = Nanos::from_secs(3);
    let r = lull_detectors::registry().with_breakeven(b);
    let spec = "adapt-timer-geom-geom(initial=1s, floor=500ms, ceiling=48s)";
    let mut reqs = Vec::new();
    let mut t = 0.0;
    let mut push = |t: &mut f64, gap: f64| {
        reqs.push(Request::new(secs(*t), secs(*t + 0.1), Op::Read, 0, 4096));
        *t += 0.1 + gap;
    };
    // Eager predictions (the timer fires, a request follows at once) grow
    // the timeout: gaps just over the current timeout.
    for g in [1.2, 2.2, 4.2, 8.2, 16.2, 32.2] {
        push(&mut t, g);
    }
    // Then gaps of 20 s, long past break-even but shorter than the grown
    // timeout: the timer never fires in them.
    for _ in 0..8 {
        push(&mut t, 20.0);
    }
    push(&mut t, 0.0);
    let net = build_network(spec, &r).unwrap();
    let mut e = Engine::with_policy(net, StopPolicy::EarlierOf, NoTask);
    replay(&Timeline::from_requests(&reqs), &mut e).unwrap();
    let g = e.detector().node_gauges();
    let timeout = g.iter().find(|(_, k, _)| k == "timeout_s").unwrap().2;
    assert!(timeout < 20.0, "the timeout stayed at {timeout} s");
    // The paper's rule (missed=0) leaves it stuck.
    let net = build_network(&spec.replace(')', ", missed=0s)"), &r).unwrap();
    let mut e = Engine::with_policy(net, StopPolicy::EarlierOf, NoTask);
    replay(&Timeline::from_requests(&reqs), &mut e).unwrap();
    let g = e.detector().node_gauges();
    let stuck = g.iter().find(|(_, k, _)| k == "timeout_s").unwrap().2;
    assert!(stuck >= 32.0, "without the missed-period rule: {stuck} s");
}

/// Idle periods in regimes `(scale, spread, count)`: log-uniform around
/// each scale, from a xorshift seeded with `seed`.
fn periods(regimes: &[(f64, f64, usize)], seed: u64) -> Vec<f64> {
    let mut periods = Vec::new();
    let mut x = seed | 1;
    for &(scale, spread, len) in regimes {
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            periods.push(scale * (spread * (2.0 * u - 1.0)).exp());
        }
    }
    periods
}

/// The regret bound of `share` (module docs of `lull_detectors::share`).
fn bound(eta: f64, alpha: f64, n: usize, best: f64) -> f64 {
    ((eta + (1.0 / (1.0 - alpha)).ln()) * best + (n as f64).ln()) / (1.0 - (-eta).exp())
}

proptest! {
    #![proptest_config(lull_testkit::cases(64))]

    /// Over a long random sequence of idle periods (regimes of short and
    /// long gaps), the mixture's loss stays within the stated bound of the
    /// best expert in hindsight.
    #[test]
    fn share_stays_within_its_regret_bound(
        regimes in prop::collection::vec((0.05f64..50.0, 0.1f64..3.0, 20usize..120), 4..12),
        eta in 0.5f64..8.0,
        alpha in 0.0f64..0.2,
        seed in any::<u64>(),
    ) {
        let b = 3.0;
        let n = 24;
        let mut e = ShareExperts::new(n, secs(b / 32.0), secs(4.0 * b), secs(b), eta, alpha, 0.0);
        let periods = periods(&regimes, seed);
        for &p in &periods {
            e.observe(secs(p));
        }
        let best = e
            .timeouts()
            .iter()
            .map(|t| periods.iter().map(|&p| e.loss(t.as_secs_f64(), p)).sum::<f64>())
            .fold(f64::INFINITY, f64::min);
        let limit = bound(eta, alpha, n, best);
        prop_assert!(e.mix_loss() <= limit + 1e-9, "mixture {} > bound {limit} (best {best})", e.mix_loss());
        // The timeouts acted on have no such bound (the loss is not convex
        // in the timeout: `the_decisions_can_exceed_the_mixture_bound`);
        // each period costs them at most the normalized maximum, 1.
        prop_assert!(
            (0.0..=periods.len() as f64 + 1e-9).contains(&e.decision_loss()),
            "decisions {} over {} periods", e.decision_loss(), periods.len()
        );
    }
}

/// The soak (issue 25) found that the loss of the weighted-mean timeouts
/// `share` acts on can exceed the mixture's regret bound: the bound is a
/// theorem for the mixture only, the loss not being convex in the timeout.
/// This pins the case (4 regimes, η = 1.445, α = 0) so the docs do not
/// claim more again.
#[test]
fn the_decisions_can_exceed_the_mixture_bound() {
    let regimes = [
        (3.0718543015497364, 0.34333432440808, 48),
        (33.41365178276499, 0.1, 20),
        (32.15034178281777, 0.1, 20),
        (39.373548874295125, 0.1, 20),
    ];
    let (eta, alpha, n, b) = (1.4453039802606633, 0.0, 24, 3.0);
    let mut e = ShareExperts::new(n, secs(b / 32.0), secs(4.0 * b), secs(b), eta, alpha, 0.0);
    let periods = periods(&regimes, 3541364942927755756);
    for &p in &periods {
        e.observe(secs(p));
    }
    let best = e
        .timeouts()
        .iter()
        .map(|t| {
            periods
                .iter()
                .map(|&p| e.loss(t.as_secs_f64(), p))
                .sum::<f64>()
        })
        .fold(f64::INFINITY, f64::min);
    let limit = bound(eta, alpha, n, best);
    assert!(
        e.mix_loss() <= limit,
        "the theorem: {} > {limit}",
        e.mix_loss()
    );
    assert!(
        e.decision_loss() > limit,
        "decisions {} within {limit}: the counterexample is gone",
        e.decision_loss()
    );
}
