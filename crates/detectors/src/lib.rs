//! # lull-detectors
//!
//! Start detectors (§3.1.1 of *Idleness is not sloth*, Table 4), duration
//! predictors (§3.1.2, Table 5) and the offline oracle, each registered under
//! its canonical name so spec strings and `lull components` see it.
//!
//! ```
//! use lull_core::prelude::*;
//!
//! let mut registry = Registry::new();
//! lull_detectors::register(&mut registry);
//! let network = build_network("timer(1s) + fixed(10s)", &registry).unwrap();
//!
//! let s = Nanos::from_secs;
//! let trace = [Request::new(s(0), s(1), Op::Read, 0, 4096), Request::new(s(31), s(32), Op::Read, 0, 4096)];
//! let mut engine = Engine::with_policy(network, StopPolicy::PredictedEnd, NoTask);
//! let report = replay(&Timeline::from_requests(&trace), &mut engine).unwrap();
//! // The timer fires 1 s into the 30 s gap and declares 10 s.
//! assert_eq!(report.internal.predicted_s, 10.0);
//! assert_eq!(report.internal.violations, 0);
//! ```
//!
//! Every component is a small `&mut self` state machine that never reads a
//! clock: see `lull_core::component` for the contracts they follow.
//!
//! ## The catalogue (SPEC §3.1)
//!
//! | name | role | module | full idleness? |
//! |---|---|---|---|
//! | `timer(t)` | start | [`timer`] | yes |
//! | `adapt-timer-{arith,geom}-{arith,geom}` | start | [`adaptive`] | yes |
//! | `moving-average`, `event-window`, `time-window`, `adaptive-rate` | start | [`rate`] | no: may declare with requests outstanding |
//! | `rate-change` | start | [`rate_change`] | no (and its starts may lie in the future) |
//! | `dpll` | start | [`dpll`] | yes |
//! | `random-timer` | start | [`random`] | yes |
//! | `share` | start | [`share`] | yes |
//! | `long-idle` | start | [`long_idle`] | yes |
//! | `oracle` | start (offline) | [`oracle`] | yes |
//! | `no-duration`, `fixed` | duration | [`duration`] | |
//! | `backoff-*`, `filtered-backoff-*` | duration | [`backoff`] | |
//! | `average`, `filtered-average` | duration | [`average`] | |
//! | `autocorrelation` | duration | [`autocorrelation`] | |
//!
//! "Full idleness" means the detector only declares while no request is
//! outstanding; the rate detectors' idea of idle allows residual work.
//! Each module documents its algorithm, parameters (units and defaults are
//! also in the catalogue, `lull components`) and the choices made where the
//! paper is silent, for example how an adaptive timer judges a prediction
//! with no duration, the rate detectors' hysteresis, or what the DPLL does
//! while it acquires lock. Parameters out of range are rejected when the
//! network is built, with an error naming the parameter.
//!
//! ## Scaled to the drive
//!
//! The right timeout for a 1995 laptop disk (break-even 3 s) is far too
//! eager for a NAS disk whose break-even is over a minute. Components whose
//! behaviour depends on the device — `random-timer`, `share`, `long-idle`,
//! the adaptive timers' initial value, floor and ceiling — take its
//! break-even time `B` from the registry they are built with
//! ([`Registry::with_breakeven`]), and every duration parameter may be
//! written relative to it (`timer(2B)`, `min=B/32`). Nothing in this crate
//! assumes a time scale of its own.
//!
//! Idle-time reservations (forecasts, admission, the scheduler of jobs)
//! are in `lull-reserve`: they consume idle periods, they do not find them.
//!
//! ## `auto`
//!
//! The named network `auto` ([`AUTO`]) is what lull recommends without
//! seeing the trace: the learning [`long_idle`] detector, which acts at
//! once on idle periods it is confident will outlast `B` and otherwise
//! waits for Helmbold et al.'s [`share`] timeout, and which never starts
//! within `B` before an arrival of a periodic source it has learned
//! ([`periodic`]). Everything in it scales with the device's `B`.
//!
//! That is `auto` for spin-down, whose cost model the learning parts
//! share: waiting costs energy, a wrong start a spin-up. For background
//! work that only competes with the foreground for the disk (delayed
//! writeback, log cleaning), a wrong start costs one background step that
//! a read waits behind, about one random access, and waiting costs only
//! lost background time; there `auto` is [`AUTO_BACKGROUND_SPEC`], the
//! ski-rental rule "wait as long as being wrong costs" with `B` the
//! service model's random-access time. On lull's built-in workloads it
//! improves read latency more than the spin-down `auto` on all but one
//! (docs/results.md, issue 17); lull's replay registers it for those tasks
//! ([`use_background_auto`]).

#![forbid(unsafe_code)]

// The README's example (what a registry page shows), run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod adaptive;
pub mod adjust;
pub mod autocorrelation;
pub mod average;
pub mod backoff;
pub mod dpll;
pub mod duration;
pub mod long_idle;
pub mod oracle;
pub mod pace;
pub mod periodic;
pub mod random;
pub mod rate;
pub mod rate_change;
pub mod share;
pub mod timer;

use lull_core::registry::{NetworkInfo, Registry};

/// The named network `auto`: lull's recommendation for any drive with no
/// tuning; see the crate docs.
pub const AUTO: NetworkInfo = NetworkInfo {
    name: "auto",
    summary: "scaled to the device's break-even time B; spin-down: learning long-idle detector with Helmbold et al.'s share timeout as fallback; writeback, cleaning: timer(B)",
};

/// The spec `auto` stands for (for spin-down; see the crate docs).
pub const AUTO_SPEC: &str = "long-idle()";

/// The spec `auto` stands for with background tasks that compete with the
/// foreground for the disk (writeback, cleaning), where `B` is the
/// service model's random-access time; see the crate docs.
pub const AUTO_BACKGROUND_SPEC: &str = "timer(B) + no-duration()";

/// Makes `auto` in `registry` stand for [`AUTO_BACKGROUND_SPEC`]: what a
/// replay of a background task (writeback, cleaning) registers. A registry
/// without `auto` is left as it is.
pub fn use_background_auto(registry: &mut Registry) {
    if registry.expand_network(AUTO.name).is_some() {
        registry.register_network(AUTO, |_| Ok(AUTO_BACKGROUND_SPEC.to_string()));
    }
}

/// Registers every start detector and duration predictor of this crate.
pub fn register(registry: &mut Registry) {
    timer::register(registry);
    adaptive::register(registry);
    rate::register(registry);
    rate_change::register(registry);
    dpll::register(registry);
    random::register(registry);
    oracle::register(registry);
    duration::register(registry);
    backoff::register(registry);
    average::register(registry);
    autocorrelation::register(registry);
    share::register(registry);
    long_idle::register(registry);
    periodic::register(registry);
    registry.register_network(AUTO, |_| Ok(AUTO_SPEC.to_string()));
}

/// A registry holding this crate's components only.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    register(&mut r);
    r
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Helpers for the unit tests: hand-made traces and prediction logs.
    use lull_core::prelude::*;

    /// Seconds as nanoseconds.
    pub(crate) fn s(x: f64) -> Nanos {
        Nanos::from_secs_f64(x)
    }

    /// A timeline from `(arrival, completion)` pairs in seconds.
    pub(crate) fn trace(reqs: &[(f64, f64)]) -> Timeline {
        let r: Vec<Request> = reqs
            .iter()
            .map(|&(a, c)| Request::new(s(a), s(c), Op::Read, 0, 4096))
            .collect();
        Timeline::from_requests(&r)
    }

    /// Replays `t` through `start + duration` with `predicted-end` and
    /// returns the predictions as `(made at, start, duration)`, and the
    /// engine.
    pub(crate) type Preds = Vec<(Nanos, Nanos, Option<Nanos>)>;

    pub(crate) fn run<S, D>(
        start: S,
        duration: D,
        t: &Timeline,
    ) -> (Preds, Engine<Predictor<S, D>, PolicyActuator, NoTask>)
    where
        S: StartDetector,
        D: DurationPredictor,
    {
        let mut e = Engine::with_policy(
            Predictor::new(start, duration),
            StopPolicy::PredictedEnd,
            NoTask,
        )
        .with_log();
        replay(t, &mut e).unwrap();
        let p = e
            .log()
            .iter()
            .filter_map(|l| match l {
                LogEntry::Prediction { at, prediction } => {
                    Some((*at, prediction.start, prediction.duration))
                }
                _ => None,
            })
            .collect();
        (p, e)
    }
}
