//! Every built-in workload's label ([`synth::Gaps`]) is what its generator
//! makes (issue 35, item 2): measured on a day of each, for two seeds,
//! on the logarithms of the idle-period lengths (the lengths span six
//! orders of magnitude; a heavy tail would let a few periods decide a
//! correlation of raw lengths).
//!
//! - `Independent`: the autocorrelation at lags 1 to 5 stays inside the
//!   band of an independent sample, `±4/√n` (n periods);
//! - `Correlated` and `Periodic`: the lag-1 autocorrelation is above that
//!   band;
//! - `Periodic { period_s }`: besides, a request arrives within 100 ms
//!   after every multiple of the period.

use lull_blktrace_replay::info::autocorrelation;
use lull_blktrace_replay::synth::{self, Gaps};
use lull_core::event::Timeline;
use lull_core::time::Nanos;

const SEEDS: [u64; 2] = [1, 2];

/// The log idle lengths of a day of `name` with `seed`, and the trace.
fn day(name: &str, seed: u64) -> (Vec<f64>, lull_blktrace_replay::Trace) {
    let shape = synth::shape(name).unwrap();
    let mut t = synth::generate(shape, Nanos::from_secs(86_400), seed);
    t.sort();
    let l = Timeline::from_requests(&t.requests)
        .idle_periods()
        .map(|p| p.len().as_secs_f64().max(1e-9).ln())
        .collect();
    (l, t)
}

#[test]
fn every_label_is_what_the_generator_makes() {
    let mut report = Vec::new();
    for w in synth::WORKLOADS {
        for seed in SEEDS {
            let (l, t) = day(w.name, seed);
            let n = l.len();
            assert!(
                n >= 100,
                "{} seed {seed}: only {n} idle periods in a day",
                w.name
            );
            let band = 4.0 / (n as f64).sqrt();
            let acf = autocorrelation(&l, 5);
            report.push(format!(
                "{} seed {seed}: n = {n}, band {band:.3}, acf {acf:.3?}",
                w.name
            ));
            match w.gaps {
                Gaps::Independent => assert!(
                    acf.iter().all(|r| r.abs() < band),
                    "{} is labelled independent, but its log idle lengths are autocorrelated beyond ±{band:.3} (n = {n}, seed {seed}): lags 1-5 {acf:.3?}",
                    w.name
                ),
                Gaps::Correlated | Gaps::Periodic { .. } => assert!(
                    acf[0] > band,
                    "{} is labelled correlated, but the lag-1 autocorrelation of its log idle lengths, {:.3}, is within the band of an independent sample, ±{band:.3} (n = {n}, seed {seed})",
                    w.name,
                    acf[0]
                ),
                _ => panic!("{}: a label this test does not know: {:?}", w.name, w.gaps),
            }
            if let Gaps::Periodic { period_s } = w.gaps {
                let mut k = 1u64;
                while (k + 1) * u64::from(period_s) < 86_400 {
                    let at = Nanos::from_secs(k * u64::from(period_s));
                    let by = at + Nanos::from_millis(100);
                    assert!(
                        t.requests.iter().any(|r| r.arrival >= at && r.arrival < by),
                        "{} is labelled periodic ({period_s} s), but no request arrives within 100 ms after {} s (seed {seed})",
                        w.name,
                        at.as_secs_f64()
                    );
                    k += 1;
                }
            }
        }
    }
    eprintln!("{}", report.join("\n"));
}

/// The label says what the summary and the docs say: only workloads
/// labelled independent call themselves so, and they do.
#[test]
fn summaries_claim_independence_only_where_the_label_does() {
    for w in synth::WORKLOADS {
        let says = w.summary.contains("independent") || w.summary.contains("i.i.d.");
        assert_eq!(
            says,
            w.gaps == Gaps::Independent,
            "{}: summary {:?} against label {:?}",
            w.name,
            w.summary,
            w.gaps
        );
    }
}
