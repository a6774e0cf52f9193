//! `long-idle`'s unit tests.

use super::*;

#[test]
fn the_fast_log_is_close_and_monotonic() {
    let mut last = -1.0;
    for i in 0..10_000 {
        let x = i as f64 * 0.37;
        let f = fast_ln_1p(x);
        assert!((f - x.ln_1p()).abs() < 0.06, "{x}: {f} vs {}", x.ln_1p());
        assert!(f >= last);
        last = f;
    }
    assert_eq!(fast_ln_1p(0.0), 0.0);
    assert!((fast_ln_1p(3.0) - 4f64.ln()).abs() < 1e-12);
}

#[test]
fn bins_are_powers_of_two_of_b() {
    assert_eq!(bin(0.0), 0);
    assert_eq!(bin(0.01), 0);
    assert_eq!(bin(1.0 / 16.0), 1);
    assert_eq!(bin(1.0), 5);
    assert_eq!(bin(1.9), 5);
    assert_eq!(bin(2.0), 6);
    assert_eq!(bin(16.0), 9);
    assert_eq!(bin(1e9), 9);
}

/// Drives `d` through one idle period of `len` starting at `at`; returns
/// the probability it decided with (if the period reached a decision).
fn period(d: &mut LongIdle, at: Nanos, len: Nanos) -> Option<f64> {
    d.on_idle_begin(&Context::at(at));
    let mut p = None;
    let decide = at + d.decision_delay();
    if len > d.decision_delay() {
        d.on_deadline(&Context::at(decide));
        p = Some(d.last_p);
    }
    d.on_idle_end(&Context::at(at + len), at);
    p
}

/// xorshift64*: a deterministic stream of uniforms in (0, 1).
fn uniforms(mut x: u64) -> impl FnMut() -> f64 {
    move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        ((x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// A detector with `auto`'s defaults for break-even `b` seconds
/// (experts from B/32 to 8B) but the fallback's `decision`.
fn detector(b: f64, decision: Decision) -> LongIdle {
    let experts = ShareExperts::new(
        32,
        Nanos::from_secs_f64(b / 32.0),
        Nanos::from_secs_f64(8.0 * b),
        Nanos::from_secs_f64(b),
        4.0,
        0.08,
        0.0,
    )
    .with_decision(decision);
    LongIdle::new(experts, Nanos::from_secs_f64(b), None, 0.1)
}

/// `auto`'s detector for the paper's drive (B = 3 s).
fn paper_drive() -> LongIdle {
    detector(3.0, Decision::Learned)
}

/// Drives `d` through one idle period of `len` from `at`, deadline by
/// deadline; returns whether it was declared at its start.
fn drive(d: &mut LongIdle, at: Nanos, len: Nanos) -> bool {
    if d.on_idle_begin(&Context::at(at)).is_some() {
        d.on_idle_end(&Context::at(at + len), at);
        return true;
    }
    while let Some(t) = d.next_deadline().filter(|&t| t < at + len) {
        if d.on_deadline(&Context::at(t)).is_some() {
            break;
        }
    }
    d.on_idle_end(&Context::at(at + len), at);
    false
}

/// Drives `d` through idle periods of `lens` seconds from `from`, 5 ms
/// of busy time apart; returns which were declared at their start,
/// and when the last period's busy time ended.
fn drive_all(d: &mut LongIdle, from: Nanos, lens: &[f64]) -> (Vec<bool>, Nanos) {
    let mut t = from;
    let fired = lens
        .iter()
        .map(|&len| {
            let len = Nanos::from_secs_f64(len);
            let fired = drive(d, t, len);
            t = t + len + Nanos::from_millis(5);
            fired
        })
        .collect();
    (fired, t)
}

/// `n` exponential gaps of mean 10 s plus `floor` seconds.
fn exponential(seed: u64, n: usize, floor: f64) -> Vec<f64> {
    let mut u = uniforms(seed);
    (0..n).map(|_| floor - 10.0 * u().ln()).collect()
}

#[test]
fn independent_gaps_read_as_independent_and_regimes_do_not() {
    let mut d = paper_drive();
    drive_all(&mut d, Nanos::ZERO, &exponential(7, 600, 0.0));
    let r = d.serial_correlation();
    assert!(r.abs() < INDEPENDENT && d.independent(), "{r}");
    // Where the previous length tells nothing, no context decides.
    assert!(d.context_fallback().is_none());
    assert_eq!(d.acting_timeout(), d.fallback_timeout());
    // Regimes: runs of twenty 100 s gaps and twenty 0.5 s ones.
    let runs: Vec<f64> = (0..600)
        .map(|i| if (i / 20) % 2 == 0 { 100.0 } else { 0.5 })
        .collect();
    let mut d = paper_drive();
    drive_all(&mut d, Nanos::ZERO, &runs);
    let r = d.serial_correlation();
    assert!(r > 0.5 && !d.independent(), "{r}");
}

#[test]
fn a_fallback_per_context_learns_what_follows_what() {
    // B = 3 s. Gaps alternate: about 20 s, then about 1 s. After a long
    // gap the next is short (the best timeout outlasts it: no spin-down);
    // after a short one the next is long (the best is the shortest
    // expert). One global timeout must hedge between the two.
    let mut u = uniforms(5);
    let lens: Vec<f64> = (0..400)
        .map(|i| {
            if i % 2 == 0 {
                15.0 + 10.0 * u()
            } else {
                0.7 + 0.6 * u()
            }
        })
        .collect();
    // A fixed margin that never acts at once: only the timeouts decide.
    let mut d = paper_drive();
    d.fixed_margin = Some(f64::INFINITY);
    let (_, t) = drive_all(&mut d, Nanos::ZERO, &lens);
    assert!(!d.independent(), "{}", d.serial_correlation());
    let global = d.fallback_timeout();
    // The last gap was short: the next is long, spin down at once.
    let after_short = d.context_fallback().expect("a context's fallback");
    assert_eq!(after_short.timeout(), d.acting_timeout());
    assert!(
        d.acting_timeout() < global / 4,
        "{} vs {global}",
        d.acting_timeout()
    );
    assert!(d.acting_timeout() < d.fallback().min_timeout() * 2);
    // One more long gap: now the next is short, wait it out.
    drive_all(&mut d, t, &[20.0]);
    assert!(
        d.acting_timeout() > Nanos::from_secs_f64(1.3) && d.acting_timeout() > global,
        "{} vs {global}",
        d.acting_timeout()
    );
    let acting = d
        .gauges()
        .into_iter()
        .find(|(k, _)| k == "acting_timeout_s");
    assert_eq!(
        acting,
        Some(("acting_timeout_s".into(), d.acting_timeout().as_secs_f64()))
    );
    let by_context = d.gauges().into_iter().find(|(k, _)| k == "by_context");
    assert!(
        by_context.as_ref().is_some_and(|(_, v)| *v > 300.0),
        "{by_context:?}"
    );
}

#[test]
fn a_state_without_contexts_restores_them_afresh() {
    let mut u = uniforms(9);
    let lens: Vec<f64> = (0..200)
        .map(|i| if i % 2 == 0 { 20.0 } else { 1.0 + u() })
        .collect();
    let mut d = paper_drive();
    drive_all(&mut d, Nanos::ZERO, &lens);
    let now = Nanos::from_secs(10_000);
    let saved = d.save(now).expect("state");
    assert_eq!(saved.version, STATE_VERSION);
    assert_eq!(saved.values.len(), d.saved_len());
    // The same state as version 4 wrote it: without the contexts.
    let contexts = d.contexts_saved_len();
    let v4 = Learned::new(
        LONG_IDLE.name,
        4,
        saved.values[..saved.values.len() - contexts].to_vec(),
    );
    // Into a detector that has learned contexts of its own: those go.
    let mut fresh = d.clone();
    fresh.restore(&v4, now).expect("version 4 restores");
    let new = paper_drive();
    for (a, b) in fresh.by_context.iter().zip(new.by_context.iter()) {
        assert_eq!(a.experts.weights(), b.experts.weights());
        assert_eq!(a.experts.timeout(), b.experts.timeout());
    }
    assert_eq!(fresh.fallback().weights(), d.fallback().weights());
    assert_eq!(fresh.context_decisions, 0);
    assert!(fresh.by_context.iter().all(|c| c.periods == 0.0));
    // And version 5 restores them.
    let mut back = paper_drive();
    back.restore(&saved, now).expect("version 5 restores");
    assert_eq!(back.context_decisions, d.context_decisions);
    assert_eq!(back.acting_timeout(), d.acting_timeout());
    for (a, b) in back.by_context.iter().zip(d.by_context.iter()) {
        assert_eq!((a.loss, a.periods), (b.loss, b.periods));
        assert_eq!(a.experts.weights(), b.experts.weights());
    }
    // A negative loss is refused.
    let mut bad = saved.clone();
    let n = bad.values.len();
    bad.values[n - 2] = -1.0;
    assert!(paper_drive().restore(&bad, now).is_err());
}

#[test]
fn the_learned_decision_commits_to_the_median_on_independent_gaps_only() {
    let mut lens = exponential(11, 600, 0.0);
    let mut d = paper_drive();
    drive_all(&mut d, Nanos::ZERO, &lens);
    // Memoryless gaps of mean 10 s against B = 3 s: the best timeout
    // is the shortest; the median commits to it, the mean hedges.
    let [mean, median] = d.fallback().rule_timeouts();
    assert_eq!(median, d.fallback().min_timeout());
    assert!(mean > median, "{mean} {median}");
    assert_eq!(d.fallback().learned_rule(), Decision::Median);
    assert_eq!(d.fallback_timeout(), median);
    // The same lengths in regimes (sorted into runs): the mean.
    for run in lens.chunks_mut(30) {
        run.sort_by(f64::total_cmp);
    }
    let mut d = paper_drive();
    drive_all(&mut d, Nanos::ZERO, &lens);
    assert!(!d.independent());
    assert_eq!(d.fallback_timeout(), d.fallback().rule_timeouts()[0]);
}

#[test]
fn it_declares_at_idle_start_while_that_pays_and_backs_off_when_it_does_not() {
    let mut d = paper_drive();
    let min = d.decision_delay().as_secs_f64();
    // Exponential gaps of mean 10 s, none shorter than the decision
    // point: declaring at once always pays.
    let (fired, t) = drive_all(&mut d, Nanos::ZERO, &exponential(3, 400, 0.2));
    let at_start = fired.iter().filter(|&&f| f).count();
    // Not before 66 periods (50 before the independence test, 16
    // before the first trial), and the test flickers on real noise.
    assert!(at_start > 150, "{at_start}");
    assert_eq!(d.at_start(), at_start as u64);
    assert!(d.zero.on);
    assert_eq!(d.quiet_below(), Nanos::ZERO, "it must see every period");
    // Now every other gap is 10 ms, shorter than the decision point
    // (which the engine would let it skip): a spin-down at idle start
    // there wastes a cycle. Trials back off (16, 32, 64, ... learned
    // periods apart), each ended by the first short gap.
    let long = exponential(4, 400, 0.2);
    let lens: Vec<f64> = long.iter().flat_map(|&l| [0.01, l]).collect();
    let (fired, _) = drive_all(&mut d, t, &lens);
    let wasted = lens
        .iter()
        .zip(&fired)
        .filter(|&(&l, &f)| f && l < min)
        .count();
    // The gain banked before pays for a few, then one per trial.
    assert!((1..=12).contains(&wasted), "{wasted} cycles wasted");
    assert!(!d.zero.on || d.zero.gain >= 0.0);
    assert!(d.zero.wait >= 4 * ZERO_WAIT, "{}", d.zero.wait);
}

#[test]
fn the_context_cell_learns_what_follows_what() {
    // B = 10 s. Every cycle: an 8 s gap, then (right after it) a long
    // 200 s gap; then twenty 2 s gaps, each right after another. The
    // long gap and the short ones share the busy-stretch bin and the
    // hour (no clock), and only the last length tells them apart.
    let mut d = detector(10.0, Decision::Mean);
    let mut t = Nanos::ZERO;
    let busy = Nanos::from_millis(10);
    let (mut after_medium, mut after_short) = (0.0, 0.0);
    for _ in 0..40 {
        for (len, slot) in [(8.0, None), (200.0, Some(0)), (2.0, None)]
            .into_iter()
            .chain(std::iter::repeat_n((2.0, Some(1)), 19))
        {
            let len = Nanos::from_secs_f64(len);
            let p = period(&mut d, t, len);
            if let (Some(p), Some(k)) = (p, slot) {
                *[&mut after_medium, &mut after_short][k] = p;
            }
            t = t + len + busy;
        }
    }
    let [long, all] = d.cells[cell(0.8, 0.001)];
    assert!(long > 0.9 * all && all > 10.0, "{long}/{all}");
    let [long, all] = d.cells[cell(0.2, 0.001)];
    assert!(long < 0.01 * all && all > 100.0, "{long}/{all}");
    assert!(after_medium > 0.9, "{after_medium}");
    assert!(after_short < 0.1, "{after_short}");
}

#[test]
fn the_logistic_model_learns_a_separable_rule() {
    let mut m = Logistic::new(0.5, 0.0);
    let bias = |first: f64| {
        let mut dense = [0.0; DENSE];
        dense[0] = first;
        dense[DENSE - 1] = 1.0;
        Features {
            dense,
            bins: [0; GROUPS],
            offset: 0.0,
        }
    };
    let (long, short) = (bias(1.0), bias(0.0));
    assert_eq!(m.predict(&long), 0.5);
    for _ in 0..200 {
        m.learn(&long, 1.0);
        m.learn(&short, 0.0);
    }
    assert!(m.predict(&long) > 0.9, "{}", m.predict(&long));
    assert!(m.predict(&short) < 0.1, "{}", m.predict(&short));
}

#[test]
fn a_state_of_the_layout_before_the_wall_time_is_still_read() {
    // Version 3 (a daemon before the upgrade) lacked the periodic
    // estimator's two values of wall time, at the end of its block.
    let mut d = paper_drive();
    let (_, end) = drive_all(&mut d, Nanos::ZERO, &exponential(3, 200, 0.0));
    let v5 = d.save(end).unwrap();
    assert_eq!(v5.version, STATE_VERSION);
    // Version 4 is version 5 without the contexts at the end.
    let mut v4 = v5.clone();
    v4.version = 4;
    v4.values.truncate(v5.values.len() - d.contexts_saved_len());
    let at = v4.values.len() - d.fallback.saved_len() - 2;
    let mut v3 = v4.clone();
    v3.version = 3;
    v3.values.drain(at..at + 2);
    // Unknown wall time is written as -1: the values dropped are those.
    assert_eq!(&v4.values[at..at + 2], &[-1.0, -1.0]);
    let (mut a, mut b) = (paper_drive(), paper_drive());
    a.restore(&v4, end).unwrap();
    b.restore(&v3, end).unwrap();
    assert_eq!(a.save(end), b.save(end));
    // Either layout at the wrong length, or another version, is refused.
    let mut short = v3.clone();
    short.values.pop();
    assert!(paper_drive().restore(&short, end).is_err());
    let mut v2 = v5.clone();
    v2.version = 2;
    assert!(paper_drive().restore(&v2, end).is_err());
}

/// Spin-downs of `long-idle` built from `args` for B = 3 s over `n` idle
/// periods of `len` seconds, 5 ms of busy time apart.
fn spin_downs(args: &[(Option<&str>, &str)], len: f64, n: usize) -> usize {
    let r = crate::registry().with_breakeven(Nanos::from_secs(3));
    let Ok(Built::Start(mut d)) = r.build("long-idle", args, 0) else {
        panic!("long-idle does not build from {args:?}");
    };
    let len = Nanos::from_secs_f64(len);
    let mut t = Nanos::ZERO;
    let mut downs = 0;
    for _ in 0..n {
        if d.on_idle_begin(&Context::at(t)).is_some() {
            downs += 1;
        } else {
            while let Some(at) = d.next_deadline().filter(|&at| at < t + len) {
                if d.on_deadline(&Context::at(at)).is_some() {
                    downs += 1;
                    break;
                }
            }
        }
        d.on_idle_end(&Context::at(t + len), t);
        t = t + len + Nanos::from_millis(5);
    }
    downs
}

#[test]
fn a_price_per_spin_up_wait_keeps_the_disk_up_where_little_is_saved() {
    // Periods of 1.5·B: a spin-down saves half a break-even of spinning.
    // Energy alone spins down in most of them.
    let n = 2000;
    let free = spin_downs(&[], 4.5, n);
    assert!(free > n / 2, "energy alone: {free} of {n}");
    // A wait priced at one break-even (B' = 2·B) outweighs that saving:
    // after learning, the disk stays up.
    let priced = spin_downs(&[(Some("delay-weight"), "1")], 4.5, n);
    assert!(priced < n / 20, "priced: {priced} of {n}");
    // Where a spin-down saves far more than the price, it still pays.
    let long = spin_downs(&[(Some("delay-weight"), "1")], 60.0, 200);
    assert!(long > 180, "long periods, priced: {long} of 200");
    // A price of 0 is energy alone, exactly.
    assert_eq!(spin_downs(&[(Some("delay-weight"), "0")], 4.5, n), free);
}

#[test]
fn auto_takes_long_idles_parameters() {
    let mut r = crate::registry().with_breakeven(Nanos::from_secs(3));
    let expand = |r: &Registry, s: &str| r.expand_network(s).map(|e| e.map_err(|e| e.reason));
    assert_eq!(expand(&r, "auto"), Some(Ok("long-idle()".into())));
    assert_eq!(expand(&r, " auto() "), Some(Ok("long-idle()".into())));
    assert_eq!(
        expand(&r, "auto(delay-weight=1, per-day=12)"),
        Some(Ok("long-idle(delay-weight=1, per-day=12)".into()))
    );
    // Not a named network: left to the spec parser.
    assert_eq!(expand(&r, "long-idle(delay-weight=1)"), None);
    assert_eq!(expand(&r, "auto(x) + no-duration()"), None);
    // Where `auto` stands for more than one component, no arguments.
    crate::use_background_auto(&mut r);
    let err = expand(&r, "auto(delay-weight=1)").unwrap().unwrap_err();
    assert!(err.contains("takes no parameters"), "{err}");
}
