//! # lull-skeptics
//!
//! Skeptics (§3.2 and §5.5 of *Idleness is not sloth*): components that
//! take one or more prediction streams and emit one, registered under
//! their canonical names so spec strings, TOML networks and
//! `lull components` see them.
//!
//! | name | kind | what it does | paper |
//! |---|---|---|---|
//! | [`low-pass(min)`](low_pass::LowPass) | filter | drops predictions shorter than `min` | §3.2 low-pass |
//! | [`quality(threshold, gain, initial)`](quality::Quality) | filter | passes while the input's smoothed accuracy is ≥ `threshold` | §3.2 quality |
//! | [`time-of-day(busiest, offset, gain)`](time_of_day::TimeOfDay) | filter | drops predictions in the `busiest` busiest hours of the day | §3.2 environmental, §5.5 SkepticTOD |
//! | [`violation-rate(max, gain)`](violation_rate::ViolationRate) | filter | passes while the input's moving-average violation rate is < `max` | §5.5 SkepticRate |
//! | [`and(...)`](vote::And) | combiner | the overlap, when all inputs predict idleness | §3.2 |
//! | [`vote(threshold)`](vote::Vote) | combiner | when `threshold` inputs agree | §3.2 voting |
//! | [`weighted-vote(weights, threshold)`](vote::WeightedVote) | combiner | when the agreeing inputs weigh `threshold` | §3.2 weighted voting |
//! | [`follow-share(eta, alpha, breakeven, …)`](share::Share) | combiner | fixed-share weights over input streams, learned from a ski-rental loss | §3.2 \[CesaBianchi94\] |
//!
//! Filters take exactly one input, combiners two or more.
//!
//! ```
//! use lull_core::prelude::*;
//!
//! let mut registry = Registry::new();
//! lull_detectors::register(&mut registry);
//! lull_skeptics::register(&mut registry);
//! // Spin down after 1 s of idleness, but only for predictions of at least 5 s.
//! let network = build_network("low-pass(min=5s; timer(1s) + fixed(10s))", &registry).unwrap();
//! let s = Nanos::from_secs;
//! let trace = [Request::new(s(0), s(1), Op::Read, 0, 4096), Request::new(s(31), s(32), Op::Read, 0, 4096)];
//! let mut engine = Engine::with_policy(network, StopPolicy::PredictedEnd, NoTask);
//! let report = replay(&Timeline::from_requests(&trace), &mut engine).unwrap();
//! assert_eq!(report.internal.predicted_s, 10.0);
//! ```
//!
//! A TOML network can share a predictor between skeptics; the network
//! evaluates the shared node once per event and hands its output to each
//! consumer:
//!
//! ```
//! use lull_core::prelude::*;
//!
//! let mut registry = Registry::new();
//! lull_detectors::register(&mut registry);
//! lull_skeptics::register(&mut registry);
//! let doc = r#"
//!     [[node]]
//!     name = "fast"
//!     spec = "timer(1s) + fixed(10s)"
//!     [[node]]
//!     name = "long"
//!     skeptic = "low-pass(min=5s)"
//!     inputs = ["fast"]
//!     [[node]]
//!     name = "good"
//!     skeptic = "violation-rate(max=0.7)"
//!     inputs = ["fast"]
//!     [[node]]
//!     name = "both"
//!     skeptic = "and"
//!     inputs = ["long", "good"]
//! "#;
//! let network = NetworkSpec::from_toml(doc, Some(&registry))
//!     .unwrap()
//!     .build(&registry)
//!     .unwrap();
//! assert_eq!(network.node_names(), ["fast", "long", "good", "both"]);
//! ```
//!
//! ## The rules every skeptic follows
//!
//! - **Never more than was predicted.** A skeptic emits an input
//!   prediction unchanged, or a sub-interval of one (`[start, end)` inside
//!   an input's `[start, end)`; "no duration" is an end of never). It
//!   never emits a prediction none of its inputs supported, and never one
//!   that starts before the moment it is emitted.
//! - **When an input prediction is live.** Combiners reason about what
//!   their inputs "currently predict": an input prediction is live until
//!   its end, until the same input makes a newer one (it replaces it, as
//!   the actuator replaces a running prediction), or until a request
//!   arrives at or after its start (the device is busy again; a "no
//!   duration" prediction ends there).
//! - **How a prediction is judged.** `quality` and `violation-rate`
//!   judge every prediction of their input, passed or not, as SPEC §4.1
//!   does with the actuator following predicted ends: it covers
//!   `[start, end)` (cut where a newer one replaced it; "no duration" up to
//!   the next arrival) and is violated by every request outstanding at its
//!   start or arriving inside it.
//! - **No clocks, no deadlines.** Skeptics are handed `now`; they judge
//!   outcomes lazily at the next event or input, so none of them asks the
//!   driver for a deadline.
//! - **Stateless in the network's shape.** A skeptic sizes its state from
//!   the number of inputs it was built with ([`Params::inputs`]); a node
//!   shared by several skeptics is evaluated once per stimulus by the
//!   network, and each consumer gets its output.
//!
//! [`Params::inputs`]: lull_core::registry::Params::inputs

#![forbid(unsafe_code)]

// The README's example (what a registry page shows), run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod latency_target;
pub mod low_pass;
pub mod preempt;
pub mod quality;
pub mod share;
pub mod time_of_day;
pub(crate) mod track;
pub mod violation_rate;
pub mod vote;

use lull_core::registry::Registry;

/// Registers every skeptic of this crate.
pub fn register(registry: &mut Registry) {
    low_pass::register(registry);
    quality::register(registry);
    time_of_day::register(registry);
    violation_rate::register(registry);
    vote::register(registry);
    share::register(registry);
    preempt::register(registry);
    latency_target::register(registry);
}

/// A registry holding this crate's skeptics only.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    register(&mut r);
    r
}
