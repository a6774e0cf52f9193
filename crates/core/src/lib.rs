//! # lull-core
//!
//! The sans-IO heart of lull: time, foreground events, predictions, the
//! component traits of the idleness taxonomy of Golding, Bosch and Wilkes
//! (*Idleness is not sloth*, 1995), detector networks, the actuator, the
//! engine that drives them, and the internal measures.
//!
//! ```
//! use lull_core::prelude::*;
//!
//! // A start detector that fires a fixed time after the device empties,
//! // and a duration predictor that always says 10 s: written here to keep
//! // the example inside this crate (lull-detectors has the real catalogue).
//! #[derive(Debug)]
//! struct After(Nanos, Option<Nanos>);
//! impl StartDetector for After {
//!     fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
//!         self.1 = Some(ctx.now + self.0);
//!         None
//!     }
//!     fn on_event(&mut self, ev: &Event, _: &Context) -> Option<Start> {
//!         if ev.is_arrival() { self.1 = None; }
//!         None
//!     }
//!     fn next_deadline(&self) -> Option<Nanos> { self.1 }
//!     fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
//!         self.1.take().map(|_| Start::now(ctx.now))
//!     }
//! }
//! #[derive(Debug)]
//! struct Ten;
//! impl DurationPredictor for Ten {
//!     fn duration(&mut self, _: Nanos) -> Option<Nanos> { Some(Nanos::from_secs(10)) }
//! }
//!
//! // Two requests with a 20 s gap between them.
//! let s = Nanos::from_secs;
//! let trace = [
//!     Request::new(s(0), s(1), Op::Read, 0, 4096),
//!     Request::new(s(21), s(22), Op::Write, 8, 4096),
//! ];
//! let timeline = Timeline::from_requests(&trace);
//! let detector = Predictor::new(After(s(1), None), Ten);
//! let mut engine = Engine::with_policy(detector, StopPolicy::EarlierOf, NoTask);
//! let report = replay(&timeline, &mut engine).unwrap();
//! // Declared [2 s, 12 s) of the 20 s idle period.
//! assert_eq!(report.internal.actual_s, 20.0);
//! assert_eq!(report.internal.predicted_s, 10.0);
//! assert_eq!(report.internal.efficiency, 0.5);
//! assert_eq!(report.internal.violations, 0);
//! ```
//!
//! ## Why it is built this way
//!
//! - **Sans-IO and clock-free.** Components are `&mut self` state machines
//!   handed `now`; they ask for deadlines instead of sleeping. The replay
//!   driver jumps from event to event, the daemon sleeps until the next
//!   deadline, and both get the same decisions from the same network. Tests
//!   need no fake clock.
//! - **One ordering rule**, written in [`event`] and [`engine`]: ties are
//!   broken by `(time, sequence)` with completions, then due deadlines, then
//!   arrivals, then the start of an idle period. Same input, same output,
//!   bit for bit.
//! - **Object-safe traits, zero-cost generics.** [`StartDetector`],
//!   [`DurationPredictor`], [`Skeptic`], [`Actuator`] and [`IdleTask`] are
//!   object safe, so spec strings and TOML build networks at run time; the
//!   engine and [`Predictor`] are generic, so a network written in code pays
//!   no dynamic dispatch.
//! - **A compact event array.** A [`Timeline`] holds a trace as 32-byte
//!   events, built once and shared read-only by every network of a sweep.
//! - **Pay per idle period that matters, not per event.** Most of a
//!   trace's events are the middle of busy runs, and most idle periods are
//!   shorter than a detector's timeout. Components say when they would
//!   learn nothing from either ([`StartDetector::quiet_below`](component::StartDetector::quiet_below),
//!   [`Actuator::ignores_events`](actuator::Actuator::ignores_events), `wants_events`), and [`replay`](engine::replay) then
//!   skips them, summing the measures per run. The shortcuts are exact:
//!   [`Engine::with_shortcuts`](engine::Engine::with_shortcuts)`(false)` takes the straightforward path,
//!   and a property test checks both make the same decisions.
//! - **Exact internal measures online.** The engine keeps SPEC §4.1's
//!   measures in O(1) per event ([`measures`] explains how); the offline
//!   definition is kept beside it as the reference the tests check against.
//! - **Light.** The only dependency is serde (and, with the `toml` feature,
//!   the `toml` crate), so storage software can embed detectors without a
//!   runtime or a data-frame library.
//!
//! ## Scaled to the device: break-even time `B`
//!
//! The right time scale of a spin-down decision belongs to the drive: its
//! break-even time `B = p_spinup·t_spinup / (p_active − p_sleep)` (SPEC
//! §4.2) is 3 s for the paper's 1995 laptop disk and over a minute for a
//! current NAS disk. So no component or default here carries a time scale
//! of its own; it comes from the task's device:
//!
//! - [`Registry::with_breakeven`](registry::Registry::with_breakeven)
//!   sets `B` for every network the registry builds (the lab and the daemon
//!   set it from the task's preset: the power model's break-even for
//!   `spindown`, a random access of the service model for the tasks that
//!   move I/O).
//! - In spec strings and TOML, any duration parameter may be written
//!   relative to it ([`time::parse_duration_in`]): `timer(2B)`,
//!   `adapt-timer-arith-geom(step=B/8)`, `fixed(d=3B/2)`. `B` alone is the
//!   break-even time; a number before it multiplies, `/k` after it divides.
//!   Plain durations (`10s`) are unchanged.
//! - Components whose behaviour depends on the drive take `B` as their
//!   default (`random-timer`, `share`, `long-idle`, the adaptive timers'
//!   initial value, floor and ceiling); a factory that needs it and has
//!   none fails with an error naming the parameter
//!   ([`Params::require_breakeven`](registry::Params::require_breakeven)).
//! - Named networks ([`Registry::register_network`](registry::Registry::register_network)),
//!   such as `auto`, are whole specs chosen for the device; the spec parser
//!   expands them when it is given the registry.
//!
//! ## Stability
//!
//! - Enums that will grow — [`actuator::Command`], [`actuator::StopPolicy`],
//!   [`engine::EngineError`], [`engine::LogEntry`], [`registry::Built`] — are
//!   `#[non_exhaustive]`, and so are the report structs
//!   ([`engine::RunReport`], [`measures::InternalMeasures`]), which embedders
//!   read but never build.
//! - The data records keep public fields on purpose: [`request::Request`],
//!   [`event::Event`], [`component::Prediction`], [`component::Context`] and
//!   the catalogue entries ([`registry::ComponentInfo`],
//!   [`registry::ParamInfo`]) *are* the formats SPEC §2–§3 define, and
//!   components and registrations build them as `const` literals. A new
//!   field (as `Context::clock` and `Start::end` were added) breaks struct
//!   literals; build them with `..Context::at(now)` / `Start::now(at)` to
//!   stay clear of that.
//! - Trait methods beyond the required ones have defaults, so adding a hook
//!   (as `wants_events` was added) does not break existing components.
//! - Networks and engines are `Send` (checked at compile time), so they can
//!   move between threads.
//!
//! [`StartDetector`]: component::StartDetector
//! [`DurationPredictor`]: component::DurationPredictor
//! [`Skeptic`]: component::Skeptic
//! [`Predictor`]: component::Predictor
//! [`Actuator`]: actuator::Actuator
//! [`IdleTask`]: task::IdleTask
//! [`Timeline`]: event::Timeline

#![forbid(unsafe_code)]

// The README's example (what a registry page shows), run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod actuator;
pub mod component;
pub mod engine;
pub mod event;
pub mod learned;
pub mod measures;
pub mod network;
pub mod registry;
pub mod request;
// `Learned` and its kin, public through `learned` (below the component
// traits; `learned`'s `Snapshot` is above the spec).
mod saved;
pub mod spec;
pub mod suggest;
pub mod task;
pub mod time;
#[cfg(feature = "toml")]
pub mod toml_spec;

/// The names most users need, in one import.
pub mod prelude {
    pub use crate::actuator::{Actuator, Command, PolicyActuator, StopPolicy};
    pub use crate::component::{
        Context, Detector, DurationPredictor, Prediction, Predictor, Skeptic, Start, StartDetector,
    };
    pub use crate::engine::{
        Engine, EngineError, Lateness, LogEntry, Overdue, RequestId, RunReport, replay,
    };
    pub use crate::event::{Event, EventKind, IdlePeriod, Timeline};
    pub use crate::measures::InternalMeasures;
    pub use crate::network::{Network, NetworkBuilder, NetworkError};
    pub use crate::registry::{
        Arity, Built, ComponentInfo, ParamError, ParamInfo, ParamKind, Params, Registry, Role,
    };
    pub use crate::request::{DeviceId, Op, Request};
    pub use crate::spec::{NetworkSpec, build_network};
    pub use crate::task::{Granularity, IdleTask, NoTask, Recorded};
    pub use crate::time::{Nanos, UnixTime, parse_duration};
}
