//! Built-in synthetic workloads: deterministic, seeded request streams.
//! Same name, duration and seed give the same trace on every machine.
//!
//! Two families:
//!
//! **Bursty workloads** (`workstation`, `news`, `database`, `sync30`):
//! the bursty shape of real disks (§1.1 of the paper: most idle periods
//! are short, most idle *time* is in a few long ones, and period lengths
//! are correlated). Each alternates bursts and idle gaps. A two-state
//! regime (active/quiet) that persists from gap to gap gives the
//! correlation of successive idle lengths; long gaps come from a Pareto
//! tail. Requests are served first-come first-served by one server, so
//! completions queue behind each other as they would on a disk. They
//! follow the three patterns of the paper's Figure 3, plus a periodic one:
//!
//! * `workstation` (like `hplajw-disk0`): quiet, mostly very long idle
//!   periods, strongly correlated (a persistent quiet regime).
//! * `news` (like `cello-disk6`, a Usenet news partition): busy, short
//!   gaps with a Pareto tail; the regime switches often, so a period
//!   length depends on the last few periods only.
//! * `database` (like `database-disk0`, transaction processing): busy,
//!   very short gaps; the regime rarely switches, which gives correlation
//!   at long lags.
//! * `sync30`: a quiet machine whose update daemon writes back dirty
//!   buffers every 30 s: a burst of writes at every multiple of 30 s (with
//!   a few milliseconds of jitter) on top of sparse user I/O, the
//!   periodic pattern the `dpll` detector locks onto.
//!
//! None of the four has independent gap lengths: the regime persists from
//! gap to gap (all four), `news` and `database` add a persistent load
//! level, and `sync30` a period ([`Shape::gaps`] labels each; a test
//! measures the lag-1 autocorrelation of idle lengths and the period
//! against the label). Their structure is short-range, though, and weak at
//! the scale of a NAS drive's break-even time. Hence the second family.
//!
//! **Workloads with independent gaps** (`iid-exp`, `iid-pareto`): one
//! request at a time, each after an idle gap drawn independently of every
//! other (exponential, or Pareto with a heavy tail). Only on these does
//! the argument hold that no online policy beats the best fixed timeout
//! in expectation (when idle lengths are i.i.d., the past says nothing
//! about the present period, so the best online policy is a fixed
//! timeout); they are the reference for that claim and for nothing else.
//!
//! **Workloads with structure** (`office`, `home-nas`, `db-checkpoint`,
//! `cron-server`;
//! [`Shape::is_structured`]): a day built from the mechanisms that make
//! real idle time predictable: a user present or away, a page cache that
//! writes back 30 s after the last write, daemons that wake on a period,
//! a nightly backup, busy and quiet regimes that last for an hour. Time 0
//! is midnight and the trace carries a wall clock
//! ([`Trace::clock`]). Each has idle periods on the scale of a 2.5"
//! drive's break-even (seconds) and of a 3.5" NAS drive's (minutes);
//! see [`structured`] for what each models, its parameters and why.
//!
//! * `office`: [`structured::Office`], an office PC: work sessions with
//!   short gaps, away spells of minutes, lunch, quiet nights with a 5 min
//!   background sync and an hourly job.
//! * `home-nas`: [`structured::HomeNas`], evening streaming, a nightly
//!   backup, hours of silence broken by SMART polls every 30 minutes.
//! * `db-checkpoint`: [`structured::DbCheckpoint`], a database with
//!   Markov-modulated busy/quiet regimes and a checkpoint every 5 minutes.
//!   (The name `database` was taken by the bursty workload above, whose
//!   output a golden test pins.)
//! * `cron-server`: [`structured::CronServer`], a small server busy with
//!   clients in the daytime, and at night quiet but for rare clients
//!   (heavy-tailed gaps) and its scheduled work: a cron job every 5
//!   minutes, a checkpoint every 15, an hourly job.

pub mod structured;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::trace::Trace;

/// The parameters of a bursty workload (the first family above).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bursty {
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
    /// Period of a write-back burst, seconds (0: none).
    pub sync_period_s: f64,
    /// Persistence of a log-normal load level that scales every gap
    /// (an AR(1) process in log space, `0 <= φ < 1`; 0: none). Larger
    /// values make idle-period lengths correlated over more lags.
    pub persistence: f64,
}

/// A built-in workload: its name, a summary, the dependence of its idle
/// lengths, and the generator with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Canonical name.
    pub name: &'static str,
    /// One line for `--help` and docs.
    pub summary: &'static str,
    /// How its idle lengths depend on each other (a test measures it).
    pub gaps: Gaps,
    /// The generator and its parameters.
    pub model: Model,
}

/// How a workload's idle-period lengths depend on each other: its label,
/// which `tests/workload_labels.rs` measures against the generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gaps {
    /// Independent and identically distributed: no online policy beats
    /// the best fixed timeout in expectation.
    Independent,
    /// Correlated: successive lengths depend on each other (persistent
    /// regimes, load levels, time of day); an online policy can learn it.
    Correlated,
    /// Correlated, with a period of this many seconds (a sync daemon).
    Periodic {
        /// The period, seconds.
        period_s: u32,
    },
}

/// The parameters of a workload with independent gaps: one request at a
/// time, each after an idle gap drawn independently.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Iid {
    /// Mean service time, seconds (exponential).
    pub service_s: f64,
    /// The gap distribution.
    pub gap: IidGap,
}

/// The distribution of an [`Iid`] workload's idle gaps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IidGap {
    /// Exponential with this mean, seconds.
    Exponential {
        /// Mean gap, seconds.
        mean_s: f64,
    },
    /// Pareto with this scale (least gap, seconds) and shape.
    Pareto {
        /// Least gap, seconds.
        scale_s: f64,
        /// Shape (smaller: heavier tail; above 1 for a finite mean).
        alpha: f64,
    },
}

/// The generator of a workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Model {
    /// Bursts and gaps from a persistent two-state regime.
    Bursty(Bursty),
    /// An office PC's day ([`structured::Office`]).
    Office(structured::Office),
    /// A home NAS's day ([`structured::HomeNas`]).
    HomeNas(structured::HomeNas),
    /// A database with checkpoints and busy/quiet regimes
    /// ([`structured::DbCheckpoint`]).
    DbCheckpoint(structured::DbCheckpoint),
    /// A server paced by cron jobs and checkpoints
    /// ([`structured::CronServer`]).
    CronServer(structured::CronServer),
    /// Independent gaps ([`Iid`]).
    Iid(Iid),
}

impl Shape {
    /// Whether the workload is one of the days with structure (the second
    /// family above): neither bursty nor independent.
    pub fn is_structured(&self) -> bool {
        !matches!(self.model, Model::Bursty(_) | Model::Iid(_))
    }
}

/// The built-in workloads.
pub const WORKLOADS: &[Shape] = &[
    Shape {
        name: "workstation",
        summary: "a quiet single-user workstation: short bursts, long heavy-tailed idle periods",
        gaps: Gaps::Correlated,
        model: Model::Bursty(Bursty {
            burst_mean: 6.0,
            think_s: 0.004,
            service_s: 0.008,
            write_share: 0.6,
            active_gap_s: 0.25,
            quiet_gap_s: 2.0,
            pareto_alpha: 1.3,
            switch_p: 0.15,
            quiet_share: 0.5,
            sync_period_s: 0.0,
            persistence: 0.0,
        }),
    },
    Shape {
        name: "news",
        summary: "a Usenet news disk (cello-disk6-like): busy, short gaps, correlation over the last few periods",
        gaps: Gaps::Correlated,
        model: Model::Bursty(Bursty {
            burst_mean: 12.0,
            think_s: 0.003,
            service_s: 0.010,
            write_share: 0.5,
            active_gap_s: 0.05,
            quiet_gap_s: 0.5,
            pareto_alpha: 1.5,
            switch_p: 0.3,
            quiet_share: 0.3,
            sync_period_s: 0.0,
            persistence: 0.85,
        }),
    },
    Shape {
        name: "database",
        summary: "a transaction-processing database disk: busy, very short gaps, long-term correlation",
        gaps: Gaps::Correlated,
        model: Model::Bursty(Bursty {
            burst_mean: 20.0,
            think_s: 0.002,
            service_s: 0.006,
            write_share: 0.4,
            active_gap_s: 0.01,
            quiet_gap_s: 0.3,
            pareto_alpha: 1.8,
            switch_p: 0.03,
            quiet_share: 0.3,
            sync_period_s: 0.0,
            persistence: 0.97,
        }),
    },
    Shape {
        name: "sync30",
        summary: "a quiet machine with a 30 s write-back daemon: periodic write bursts over sparse user I/O",
        gaps: Gaps::Periodic { period_s: 30 },
        model: Model::Bursty(Bursty {
            burst_mean: 4.0,
            think_s: 0.004,
            service_s: 0.008,
            write_share: 0.5,
            active_gap_s: 0.5,
            quiet_gap_s: 5.0,
            pareto_alpha: 1.2,
            switch_p: 0.15,
            quiet_share: 0.6,
            sync_period_s: 30.0,
            persistence: 0.0,
        }),
    },
    Shape {
        name: "office",
        summary: "an office PC: work sessions, away spells, lunch, quiet nights with a 5 min sync (structured)",
        gaps: Gaps::Correlated,
        model: Model::Office(structured::OFFICE),
    },
    Shape {
        name: "home-nas",
        summary: "a home NAS: evening streaming, a nightly backup, hours of silence with SMART polls (structured)",
        gaps: Gaps::Correlated,
        model: Model::HomeNas(structured::HOME_NAS),
    },
    Shape {
        name: "db-checkpoint",
        summary: "a database: busy/quiet regimes lasting an hour, a checkpoint every 5 min (structured)",
        gaps: Gaps::Correlated,
        model: Model::DbCheckpoint(structured::DB_CHECKPOINT),
    },
    Shape {
        name: "cron-server",
        summary: "a server: busy days, quiet nights with heavy-tailed gaps, paced by a 5 min cron job, a 15 min checkpoint and an hourly job (structured)",
        gaps: Gaps::Periodic { period_s: 300 },
        model: Model::CronServer(structured::CRON_SERVER),
    },
    Shape {
        name: "iid-exp",
        summary: "independent exponential idle gaps (mean 10 s) between single requests: the reference where a fixed timeout is optimal",
        gaps: Gaps::Independent,
        model: Model::Iid(Iid {
            service_s: 0.008,
            gap: IidGap::Exponential { mean_s: 10.0 },
        }),
    },
    Shape {
        name: "iid-pareto",
        summary: "independent Pareto idle gaps (least 1 s, shape 1.5) between single requests: heavy-tailed, still no history to learn",
        gaps: Gaps::Independent,
        model: Model::Iid(Iid {
            service_s: 0.008,
            gap: IidGap::Pareto {
                scale_s: 1.0,
                alpha: 1.5,
            },
        }),
    },
];

/// The workload named `name`.
pub fn shape(name: &str) -> Option<&'static Shape> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// Names of the built-in workloads.
pub fn names() -> Vec<&'static str> {
    WORKLOADS.iter().map(|w| w.name).collect()
}

/// The message for an unknown workload name: the closest known one, if
/// any is close, and the list.
pub fn unknown(name: &str) -> String {
    format!(
        "unknown workload `{name}`{} (known: {})",
        lull_core::suggest::did_you_mean(name, names()),
        names().join(", ")
    )
}

fn exp(rng: &mut Pcg64, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut Pcg64) -> f64 {
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Generates `duration` of workload `shape` from `seed`. Same arguments,
/// same trace, on every machine.
pub fn generate(shape: &Shape, duration: Nanos, seed: u64) -> Trace {
    let end = duration.as_secs_f64();
    match &shape.model {
        Model::Bursty(b) => bursty(shape.name, b, end, seed),
        Model::Office(p) => structured::office(p, shape.name, end, seed),
        Model::HomeNas(p) => structured::home_nas(p, shape.name, end, seed),
        Model::DbCheckpoint(p) => structured::db_checkpoint(p, shape.name, end, seed),
        Model::CronServer(p) => structured::cron_server(p, shape.name, end, seed),
        Model::Iid(p) => iid(shape.name, p, end, seed),
    }
}

/// Generates `end` seconds of a workload with independent gaps: each
/// request starts a gap after the previous one completed, so the idle
/// periods are exactly the gaps drawn (capped at an hour, as the bursty
/// workloads' are).
fn iid(name: &str, shape: &Iid, end: f64, seed: u64) -> Trace {
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x6969_6400);
    let mut trace = Trace::new("synthetic");
    let dev = trace.device_id(&format!("synth:{name}"));
    let draw = |rng: &mut Pcg64| match shape.gap {
        IidGap::Exponential { mean_s } => exp(rng, mean_s),
        IidGap::Pareto { scale_s, alpha } => {
            let u: f64 = 1.0 - rng.random::<f64>();
            scale_s / u.powf(1.0 / alpha)
        }
    };
    let mut t = draw(&mut rng).min(3600.0);
    while t < end {
        let service = exp(&mut rng, shape.service_s).max(1e-4);
        let op = if rng.random::<f64>() < 0.5 {
            Op::Write
        } else {
            Op::Read
        };
        let sector: u64 = rng.random_range(0..1 << 30);
        trace.requests.push(
            Request::new(
                Nanos::from_secs_f64(t),
                Nanos::from_secs_f64(t + service),
                op,
                sector,
                4096,
            )
            .on_device(dev),
        );
        t += service + draw(&mut rng).min(3600.0);
    }
    trace
}

/// Generates `end` seconds of a bursty workload.
fn bursty(name: &str, shape: &Bursty, end: f64, seed: u64) -> Trace {
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x6c75_6c6c);
    let mut trace = Trace::new("synthetic");
    let dev = trace.device_id(&format!("synth:{name}"));
    let mut t = 0.0f64;
    let mut free_at = 0.0f64;
    let mut quiet = rng.random::<f64>() < shape.quiet_share;
    let mut sector: u64 = rng.random_range(0..1 << 30);
    // The log of the load level (see `Shape::persistence`); drawn from its
    // own stream so workloads without it stay as they were.
    let mut level_rng = Pcg64::seed_from_u64(seed ^ 0x6c65_7665);
    let mut level = 0.0f64;
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
        let gap = if shape.persistence > 0.0 {
            let phi = shape.persistence.min(0.999);
            level = phi * level + (1.0 - phi * phi).sqrt() * normal(&mut level_rng);
            (gap * level.exp()).min(3600.0)
        } else {
            gap
        };
        t = free_at.max(t) + gap;
        if rng.random::<f64>() < shape.switch_p {
            quiet = !quiet;
        }
        if t >= end {
            break;
        }
    }
    if shape.sync_period_s > 0.0 {
        add_sync(&mut trace, name, shape, end, seed);
    }
    trace
}

/// Overlays the periodic write-back bursts of `shape` and re-serves the
/// merged stream first-come first-served. A separate random stream keeps
/// the base workload identical to the one without the overlay.
fn add_sync(trace: &mut Trace, name: &str, shape: &Bursty, end: f64, seed: u64) {
    let dev = trace.device_id(&format!("synth:{name}"));
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x7379_6e63);
    // Service times of the base stream, recovered from its FCFS schedule.
    let mut jobs: Vec<(f64, f64, Request)> = Vec::with_capacity(trace.requests.len());
    let mut free_at = 0.0f64;
    for r in &trace.requests {
        let a = r.arrival.as_secs_f64();
        let c = r.completion.as_secs_f64();
        jobs.push((a, c - a.max(free_at), *r));
        free_at = c;
    }
    let mut k = 1.0;
    while k * shape.sync_period_s < end {
        let mut t = k * shape.sync_period_s + exp(&mut rng, 0.005);
        let n = 4 + rng.random_range(0..12u32);
        let mut sector: u64 = rng.random_range(0..1 << 30);
        for _ in 0..n {
            if t >= end {
                break;
            }
            let service = exp(&mut rng, shape.service_s).max(1e-4);
            let bytes = 4096 * (1u32 << rng.random_range(0..4u32));
            let r = Request::new(
                Nanos::from_secs_f64(t),
                Nanos::ZERO,
                Op::Write,
                sector,
                bytes,
            )
            .on_device(dev);
            jobs.push((t, service, r));
            sector += u64::from(bytes / 512);
            t += exp(&mut rng, 0.0005);
        }
        k += 1.0;
    }
    jobs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut free_at = 0.0f64;
    trace.requests.clear();
    for (a, service, mut r) in jobs {
        free_at = a.max(free_at) + service;
        r.arrival = Nanos::from_secs_f64(a);
        r.completion = Nanos::from_secs_f64(free_at);
        trace.requests.push(r);
    }
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

    fn idle_lengths(name: &str, secs: u64) -> Vec<f64> {
        let t = generate(shape(name).unwrap(), Nanos::from_secs(secs), 3);
        assert!(t.requests.windows(2).all(|p| p[0].arrival <= p[1].arrival));
        assert!(t.requests.iter().all(|r| r.completion >= r.arrival));
        let tl = Timeline::from_requests(&t.requests);
        tl.idle_periods().map(|p| p.len().as_secs_f64()).collect()
    }

    #[test]
    fn every_workload_is_deterministic_and_heavy_tailed() {
        assert_eq!(
            names(),
            [
                "workstation",
                "news",
                "database",
                "sync30",
                "office",
                "home-nas",
                "db-checkpoint",
                "cron-server",
                "iid-exp",
                "iid-pareto"
            ]
        );
        let bursty = WORKLOADS
            .iter()
            .filter(|w| matches!(w.model, Model::Bursty(_)));
        assert_eq!(bursty.clone().count(), 4);
        for name in bursty.map(|w| w.name) {
            let w = shape(name).unwrap();
            assert_eq!(
                generate(w, Nanos::from_secs(300), 5),
                generate(w, Nanos::from_secs(300), 5)
            );
            let l = idle_lengths(name, 3600);
            let total: f64 = l.iter().sum();
            let mut sorted = l.clone();
            sorted.sort_by(f64::total_cmp);
            // The longest tenth of the periods holds most of the idle time
            // (sync30's write-backs cap periods at 30 s, so a bit less).
            let top: f64 = sorted[sorted.len() * 9 / 10..].iter().sum();
            assert!(top > 0.4 * total, "{name}: {top} of {total}");
            let acf = crate::info::autocorrelation(&l, 1);
            assert!(acf[0] > 0.03, "{name}: lag-1 autocorrelation {}", acf[0]);
        }
    }

    #[test]
    fn correlation_patterns_of_figure_3() {
        // news: mostly short-term; database: long-term as well.
        let news = crate::info::autocorrelation(&idle_lengths("news", 3600), 10);
        assert!(news[0] > 0.1 && news[9].abs() < 0.1, "{news:?}");
        let db = crate::info::autocorrelation(&idle_lengths("database", 3600), 10);
        assert!(db.iter().all(|&r| r > 0.05), "{db:?}");
    }

    #[test]
    fn busy_workloads_have_shorter_gaps() {
        let mean = |n: &str| {
            let l = idle_lengths(n, 1800);
            l.iter().sum::<f64>() / l.len() as f64
        };
        let (ws, news, db) = (mean("workstation"), mean("news"), mean("database"));
        assert!(news < ws / 3.0 && db < news, "{ws} {news} {db}");
    }

    #[test]
    fn sync30_writes_every_30_seconds() {
        let t = generate(shape("sync30").unwrap(), Nanos::from_secs(600), 2);
        for k in 1..20u64 {
            let at = Nanos::from_secs(30 * k);
            assert!(
                t.requests.iter().any(|r| r.arrival >= at
                    && r.arrival < at + Nanos::from_millis(100)
                    && r.op == Op::Write),
                "no write-back burst at {k}x30 s"
            );
        }
        // The base stream is the same as without the overlay.
        let Model::Bursty(b) = shape("sync30").unwrap().model else {
            panic!("sync30 is bursty")
        };
        let base = Shape {
            name: "sync30",
            summary: "",
            gaps: Gaps::Correlated,
            model: Model::Bursty(Bursty {
                sync_period_s: 0.0,
                ..b
            }),
        };
        let b = generate(&base, Nanos::from_secs(600), 2);
        assert!(b.requests.len() < t.requests.len());
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
