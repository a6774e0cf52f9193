//! Built-in synthetic workloads: deterministic, seeded request streams with
//! the bursty shape of real disks (§1.1 of the paper: most idle periods are
//! short, most idle *time* is in a few long ones, and period lengths are
//! correlated).
//!
//! Each workload alternates bursts and idle gaps. A two-state regime
//! (active/quiet) that persists from gap to gap gives the correlation of
//! successive idle lengths; long gaps come from a Pareto tail. Requests are
//! served first-come first-served by one server, so completions queue
//! behind each other as they would on a disk.

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::trace::Trace;

/// The shape of a workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Canonical name.
    pub name: &'static str,
    /// One line for `--help` and docs.
    pub summary: &'static str,
    /// Mean requests per burst (geometric).
    pub burst_mean: f64,
    /// Mean gap between requests inside a burst, seconds (exponential).
    pub think_s: f64,
    /// Mean service time, seconds.
    pub service_s: f64,
    /// Share of writes.
    pub write_share: f64,
    /// In the active regime: mean short gap, seconds.
    pub active_gap_s: f64,
    /// In the quiet regime: Pareto scale (minimum gap), seconds.
    pub quiet_gap_s: f64,
    /// Pareto shape of quiet gaps (smaller: heavier tail).
    pub pareto_alpha: f64,
    /// Probability of switching regime after a gap.
    pub switch_p: f64,
    /// Share of time-steps starting in the quiet regime.
    pub quiet_share: f64,
}

/// The built-in workloads.
pub const WORKLOADS: &[Shape] = &[Shape {
    name: "workstation",
    summary: "a quiet single-user workstation: short bursts, long heavy-tailed idle periods",
    burst_mean: 6.0,
    think_s: 0.004,
    service_s: 0.008,
    write_share: 0.6,
    active_gap_s: 0.25,
    quiet_gap_s: 2.0,
    pareto_alpha: 1.3,
    switch_p: 0.15,
    quiet_share: 0.5,
}];

/// The workload named `name`.
pub fn shape(name: &str) -> Option<&'static Shape> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// Names of the built-in workloads.
pub fn names() -> Vec<&'static str> {
    WORKLOADS.iter().map(|w| w.name).collect()
}

fn exp(rng: &mut Pcg64, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

/// Generates `duration` of workload `shape` from `seed`. Same arguments,
/// same trace, on every machine.
pub fn generate(shape: &Shape, duration: Nanos, seed: u64) -> Trace {
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x6c75_6c6c);
    let mut trace = Trace::new("synthetic");
    let dev = trace.device_id(&format!("synth:{}", shape.name));
    let end = duration.as_secs_f64();
    let mut t = 0.0f64;
    let mut free_at = 0.0f64;
    let mut quiet = rng.random::<f64>() < shape.quiet_share;
    let mut sector: u64 = rng.random_range(0..1 << 30);
    'outer: loop {
        // One burst.
        let p = 1.0 / shape.burst_mean.max(1.0);
        let mut n = 1;
        while rng.random::<f64>() > p {
            n += 1;
        }
        for i in 0..n {
            if i > 0 {
                t += exp(&mut rng, shape.think_s);
            }
            if t >= end {
                break 'outer;
            }
            let start = t.max(free_at);
            let service = exp(&mut rng, shape.service_s).max(1e-4);
            free_at = start + service;
            let op = if rng.random::<f64>() < shape.write_share {
                Op::Write
            } else {
                Op::Read
            };
            // Mostly sequential within a burst, with occasional seeks.
            if rng.random::<f64>() < 0.3 {
                sector = rng.random_range(0..1 << 30);
            }
            let blocks = 1u32 << rng.random_range(0..5u32);
            let bytes = 4096 * blocks;
            trace.requests.push(
                Request::new(
                    Nanos::from_secs_f64(t),
                    Nanos::from_secs_f64(free_at),
                    op,
                    sector,
                    bytes,
                )
                .on_device(dev),
            );
            sector += u64::from(bytes / 512);
        }
        // One gap, from the current regime.
        let gap = if quiet {
            let u: f64 = 1.0 - rng.random::<f64>();
            (shape.quiet_gap_s / u.powf(1.0 / shape.pareto_alpha)).min(3600.0)
        } else {
            exp(&mut rng, shape.active_gap_s)
        };
        t = free_at.max(t) + gap;
        if rng.random::<f64>() < shape.switch_p {
            quiet = !quiet;
        }
        if t >= end {
            break;
        }
    }
    trace
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::event::Timeline;

    #[test]
    fn same_seed_same_trace() {
        let w = shape("workstation").unwrap();
        let a = generate(w, Nanos::from_secs(600), 7);
        let b = generate(w, Nanos::from_secs(600), 7);
        let c = generate(w, Nanos::from_secs(600), 8);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn idle_time_is_mostly_in_long_periods() {
        let w = shape("workstation").unwrap();
        let t = generate(w, Nanos::from_secs(3600), 1);
        assert!(t.requests.windows(2).all(|p| p[0].arrival <= p[1].arrival));
        let tl = Timeline::from_requests(&t.requests);
        let periods: Vec<_> = tl.idle_periods().map(|p| p.len().as_secs_f64()).collect();
        let total: f64 = periods.iter().sum();
        let long: f64 = periods.iter().filter(|&&l| l > 1.0).sum();
        let short_count = periods.iter().filter(|&&l| l <= 1.0).count();
        assert!(short_count * 2 > periods.len(), "most periods are short");
        assert!(
            long > 0.8 * total,
            "most idle time is in long periods: {long} of {total}"
        );
    }
}
