//! # lull
//!
//! Find idle time in storage devices and put it to work: the library an
//! embedder adds. It re-exports lull's library crates — [`core`] (time,
//! events, the engine, the network builder), [`detectors`], [`skeptics`]
//! and [`tasks`] (simulated tasks and the drive presets) — and offers one
//! entry point that builds a detector network for a drive:
//!
//! ```
//! use lull::prelude::*;
//!
//! // A WD Red Plus that spins down: B = 72.4 s, from the preset's power
//! // model, resolved as the daemon and `lull plan` resolve it.
//! let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
//! assert_eq!(setup.break_even().as_secs_f64().round(), 72.0);
//! let network = setup.build_network("auto").unwrap();
//! let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, Recorded::<NoTask>::default());
//!
//! // The application's own clock, in monotonic nanoseconds.
//! let s = Nanos::from_secs;
//! engine.push(&Event::arrival_at(s(0), Op::Read, 0, 4096)).unwrap();
//! engine.push(&Event::completion_at(s(1), s(0), Op::Read, 0, 4096)).unwrap();
//! engine.advance(s(3600)).unwrap();
//! // An hour without I/O: `auto` spun the disk down once.
//! let commands: Vec<_> = engine.task_mut().drain().collect();
//! assert!(matches!(commands.as_slice(), [(_, Command::Start { .. })]));
//! ```
//!
//! ## Why a separate, light package
//!
//! lull is also a lab (trace readers, sweeps, tables with polars, plots
//! with plotters, parallel runs with rayon), a command-line tool (clap) and
//! a daemon (tokio). Storage software that only wants the decisions must
//! not compile any of that: this package depends on the four library
//! crates alone, whose own dependencies are serde and a small random
//! number generator. A test of the workspace (`tests/deps.rs` here) fails
//! when its normal dependency tree grows past 30 crates or takes in an
//! async runtime, a data-frame, plotting or parallelism crate or a
//! command-line parser. The lab (`lull-blktrace-replay`, `lull-rank`) and
//! the daemon (`lull-live`) stay usable as libraries of their own; the
//! `lull` binary lives in the `lull-cli` package.
//!
//! ## Features
//!
//! Off by default, each forwarding lull-core's:
//!
//! - `suggest`: "did you mean `timer`?" in errors about unknown
//!   components, parameters and drive presets (adds the tiny,
//!   dependency-free `strsim`); without it errors list the known names.
//! - `toml`: detector networks from TOML documents
//!   ([`NetworkSpec::from_toml`](lull_core::spec::NetworkSpec), adds the
//!   `toml` crate).
//!
//! ## Where the rest is
//!
//! - `docs/embedding.md` in the repository: the event and time model,
//!   the engine's commands and deadlines, how to pick B, determinism,
//!   cost per event, thread-safety, and how to test an embedding against
//!   `lull replay`.
//! - This crate's `examples/`: a write-back cache, a custom detector and
//!   skeptic, and spin-down with `auto` fed by the application's clock,
//!   saving and restoring what `auto` learned.

#![forbid(unsafe_code)]

// The README's example (what a registry page shows), run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The engine, the component traits, events, networks and their specs
/// (`lull-core`).
#[doc(inline)]
pub use lull_core as core;
/// Start detectors and duration predictors, `auto` among them
/// (`lull-detectors`).
#[doc(inline)]
pub use lull_detectors as detectors;
/// Skeptics: the filters and combinations between predictors and the
/// actuator (`lull-skeptics`).
#[doc(inline)]
pub use lull_skeptics as skeptics;
/// Idle tasks, drives and their power and service models, and the
/// daemon's standby checks ([`tasks::gate`]) (`lull-tasks`).
#[doc(inline)]
pub use lull_tasks as tasks;

/// What a network has learned (`auto`'s tuning, adaptive timers' state),
/// serializable with serde: see [`Setup::snapshot`] and [`Setup::restore`].
pub use lull_core::learned::{Learned, LearnedError, Snapshot};
/// Drives, their presets and the kind of work B is asked for.
pub use lull_tasks::drive::{Drive, DriveError, DriveFacts, PresetSource, Work};
pub use lull_tasks::profile::DriveProfile;

use std::fmt;

use lull_core::engine::Engine;
use lull_core::learned::same_spec;
use lull_core::prelude::{
    Actuator, Detector, IdleTask, Nanos, Network, NetworkError, NetworkSpec, NoTask,
    PolicyActuator, Recorded, Registry, StopPolicy, UnixTime,
};
use lull_tasks::gate::StandbyGate;
use lull_tasks::{PowerModel, ServiceModel, Spindown};

/// The names an embedder needs, in one import: lull-core's prelude (the
/// engine, events, `Command`, `Recorded` …), plus [`Setup`], [`Work`],
/// [`Drive`], [`DriveFacts`], [`Snapshot`], [`for_drive`], the engine
/// types [`LiveEngine`] and [`SpindownEngine`], and [`SetupError`].
pub mod prelude {
    pub use crate::{
        Drive, DriveFacts, LiveEngine, Setup, SetupError, Snapshot, SpindownEngine, Work, for_drive,
    };
    pub use lull_core::prelude::*;
}

/// The engine an embedder runs live: a network built from a spec, the
/// stop policy's actuator, and its commands recorded for the embedder to
/// drain ([`Recorded`]) around the task `T` (none by default).
/// [`Setup::engine`] builds one. Name it for a struct field:
/// `engine: LiveEngine` (or `LiveEngine<MyTask>`).
pub type LiveEngine<T = NoTask> = Engine<Network, PolicyActuator, Recorded<T>>;

/// A [`LiveEngine`] whose task books what spinning down costs and saves
/// on the drive's power model ([`Spindown`]): the commands to drain, and
/// `engine.task().inner().report()` to judge them (docs/embedding.md,
/// "Judging your own results"). [`Setup::spindown_engine`] builds one.
pub type SpindownEngine = LiveEngine<Spindown>;

/// Why a [`Setup`] refused to build something. Each names the call, the
/// parameter and the value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetupError {
    /// The network's spec did not build.
    Network {
        /// The call (`Setup::engine`).
        call: &'static str,
        /// The spec given.
        spec: String,
        /// Why.
        error: Box<NetworkError>,
    },
    /// The setup does not fit what was asked of it (a spin-down on a
    /// setup for work that moves I/O, a drive without a power model).
    Refused(DriveError),
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Network { call, spec, error } => write!(f, "{call}(`{spec}`): {error}"),
            SetupError::Refused(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SetupError {}

/// A registry with every built-in start detector, duration predictor,
/// skeptic and named network (`auto`), and no break-even time: networks
/// that need B (`timer(B)`, `auto`) fail to build from it with an error
/// that says how to give it. [`Setup`] gives B from a drive.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r
}

/// The [`Setup`] for the drive `spec` names and the kind of work: a
/// preset (`wd-red-plus`), a preset with overrides
/// (`wd-red-plus,p_active=4.1`) or the five power keys of a custom drive
/// (see [`Drive::from_spec`]). The error lists the known presets.
///
/// A drive whose B cannot scale a network is refused here, naming the
/// spec and B: one whose B is under 32 ns (a custom drive with no
/// spin-up cost has B = 0, and `auto`'s shortest idle period, B/32, would
/// be 0) or too long for [`Nanos`] (see [`DriveProfile::break_even`]).
pub fn for_drive(spec: &str, work: Work) -> Result<Setup, DriveError> {
    // Named once: an error that names the preset already is left as it
    // is, and one that names the drive by its preset is named by the spec.
    let named = |e: DriveError, preset: Option<&str>| match spec.trim() {
        "" => e,
        s if e.0.contains(s) => e,
        s => {
            let why = preset
                .and_then(|p| e.0.strip_prefix(&format!("drive {p}: ")))
                .unwrap_or(&e.0);
            DriveError(format!("drive `{s}`: {why}"))
        }
    };
    let mut drive = Drive::from_spec(spec, PresetSource::Config).map_err(|e| named(e, None))?;
    drive.why = "named by the embedder".into();
    let preset = drive.preset.clone();
    Setup::drive(drive, work).map_err(|e| named(e, Some(&preset)))
}

/// A drive, the kind of work done in its idle time, its break-even time B
/// and a registry set up for it: where networks are built.
///
/// B is resolved as the daemon (`lulld`), `lull plan`, `lull replay` and
/// `lull rank` resolve it ([`DriveProfile::break_even`]): for
/// [`Work::Standby`] the power model's `p_spinup·t_spinup / (p_active −
/// p_sleep)`, for [`Work::Io`] the service model's random 8 KiB access
/// time. For `Work::Io`, `auto` stands for
/// [`AUTO_BACKGROUND_SPEC`](lull_detectors::AUTO_BACKGROUND_SPEC), as in
/// the daemon's `flush`, `command` and `jobs` tasks.
#[derive(Clone, Debug)]
pub struct Setup {
    drive: Option<DriveProfile>,
    /// The model a setup made by [`Setup::power_model`] was given (a
    /// drive's own is in `drive`).
    power: Option<PowerModel>,
    work: Work,
    break_even: Nanos,
    registry: Registry,
}

impl Setup {
    /// For `drive` (a preset, an identified drive — [`Drive::identified`]
    /// — or [`Drive::resolve`]'s choice, or its [`DriveProfile`]) and
    /// `work`: B is the profile's ([`DriveProfile::break_even`]). An error
    /// for [`Work::Standby`] on a drive without a power model.
    pub fn drive(drive: impl Into<DriveProfile>, work: Work) -> Result<Setup, DriveError> {
        let profile = drive.into();
        let b = profile.break_even(work)?;
        let mut s = Setup::unchecked(b, work);
        s.drive = Some(profile);
        Ok(s)
    }

    /// For spinning down a drive described by its power model. Refused,
    /// naming the model and its B, when B is below the physical floor
    /// for spinning down ([`Work::min_break_even`], 100 ms): a model
    /// whose times were written in the wrong unit. B is the model's own,
    /// [`PowerModel::break_even`], which a [`DriveProfile`] also reads.
    pub fn power_model(model: &PowerModel) -> Result<Setup, DriveError> {
        let b = model.break_even();
        let call = || format!("Setup::power_model({})", model.spec());
        let mut s = Setup::checked(b, Work::Standby, call)?;
        s.power = Some(model.clone());
        Ok(s)
    }

    /// For work that moves I/O on a drive described by its service
    /// model. Refused, naming the model and its B, when B is below the
    /// physical floor for I/O ([`Work::min_break_even`], 1 µs).
    pub fn service_model(model: &ServiceModel) -> Result<Setup, DriveError> {
        let call = || format!("Setup::service_model({})", model.name);
        Setup::checked(model.break_even(), Work::Io, call)
    }

    /// For a break-even time `b` the embedder knows (measured, or from
    /// its own model) and `work`. Build `b` with a unit:
    /// `Nanos::from_secs(72)`, `Nanos::from_millis(17)`.
    ///
    /// Refused when `b` is below the physical floor of `work`
    /// ([`Work::min_break_even`]: 100 ms to spin down, 1 µs for work
    /// that moves I/O): `Nanos(72)` is 72 ns, not 72 s, and with it
    /// `auto` would have spun the disk down after 2 ns of quiet. The
    /// error names the call and the value:
    /// `Setup::break_even_for(b = 72ns, Work::Standby): …`.
    pub fn break_even_for(b: Nanos, work: Work) -> Result<Setup, DriveError> {
        Setup::checked(b, work, || {
            format!("Setup::break_even_for(b = {}, {work})", exact(b))
        })
    }

    /// [`Setup::unchecked`] after the floor of `work`, the error named by
    /// `call`.
    fn checked(b: Nanos, work: Work, call: impl Fn() -> String) -> Result<Setup, DriveError> {
        let floor = work.min_break_even();
        if b < floor {
            let hint = match work {
                Work::Standby => "no drive spins up that fast",
                Work::Io => "no device serves an access that fast",
            };
            return Err(DriveError(format!(
                "{}: B = {} is below {}, the shortest B for {work} ({hint}); give B with its unit, e.g. Nanos::from_secs(72) or Nanos::from_millis(17)",
                call(),
                exact(b),
                floor.approx()
            )));
        }
        Ok(Setup::unchecked(b, work))
    }

    /// For `b` and `work`, unchecked (a drive's B was checked by
    /// [`DriveProfile::break_even`]).
    fn unchecked(b: Nanos, work: Work) -> Setup {
        let mut registry = registry().with_breakeven(b);
        if work == Work::Io {
            lull_detectors::use_background_auto(&mut registry);
        }
        Setup {
            drive: None,
            power: None,
            work,
            break_even: b,
            registry,
        }
    }

    /// The break-even time B that `B` in specs and B-scaled defaults
    /// resolve against.
    pub fn break_even(&self) -> Nanos {
        self.break_even
    }

    /// The kind of work.
    pub fn work(&self) -> Work {
        self.work
    }

    /// The drive, when the setup was made from one.
    pub fn drive_info(&self) -> Option<&Drive> {
        self.drive.as_ref().map(DriveProfile::drive)
    }

    /// The drive's profile (the drive and both its B), when the setup was
    /// made from one.
    pub fn profile(&self) -> Option<&DriveProfile> {
        self.drive.as_ref()
    }

    /// The drive's power model, when the setup was made from one (a drive
    /// with one, or [`Setup::power_model`]): what an embedder weighs its
    /// spin-downs with ([`PowerModel::energy`]).
    pub fn power(&self) -> Option<&PowerModel> {
        match &self.drive {
            Some(d) => d.power(),
            None => self.power.as_ref(),
        }
    }

    /// The registry networks are built from: every built-in component,
    /// with B set.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The registry, to register components of one's own next to the
    /// built-ins (`examples/custom_detector.rs`).
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// Builds the network `spec` (`auto`, `timer(B) + fixed(2B)`, a
    /// multi-line spec …) to run live: components that need to know the
    /// future (`oracle`) are refused with an error that names them. A
    /// replay that wants them builds with
    /// [`NetworkSpec::build`](lull_core::spec::NetworkSpec::build).
    pub fn build_network(&self, spec: &str) -> Result<Network, NetworkError> {
        NetworkSpec::parse(spec, Some(&self.registry))
            .map_err(NetworkError::from)?
            .build_online(&self.registry)
    }

    /// The common engine: the network `spec` under
    /// [`StopPolicy::EarlierOf`] (a run stops at the next request or
    /// when its predicted time runs out), its commands recorded to drain
    /// (`engine.task_mut().drain()`).
    pub fn engine(&self, spec: &str) -> Result<LiveEngine, SetupError> {
        let network = self.network_for("Setup::engine", spec)?;
        Ok(Engine::with_policy(
            network,
            StopPolicy::EarlierOf,
            Recorded::default(),
        ))
    }

    /// [`Setup::engine`] for spinning the drive down, with a
    /// [`Spindown`] task that books the energy each decision costs and
    /// saves on the drive's power model ([`SpindownEngine`]). The task
    /// puts the daemon's checks ([`Setup::standby_gate`] with
    /// `max_spindowns_per_day`) before each spin-down, on the engine's
    /// wall clock ([`Engine::with_clock`]; from zero without one): a
    /// `Start` they refuse leaves the disk spinning. So spin the drive
    /// down when `engine.task().inner().is_asleep()` turns true, and the
    /// report (`engine.task().inner().report()`) is what the drive did.
    ///
    /// Refused for a setup of [`Work::Io`], whose B is one access
    /// (17.7 ms on `wd-red-plus`) and not what a spin-down costs (72 s):
    /// make the setup with [`Work::Standby`]. Refused too without a power
    /// model (a setup made from B alone): use [`Setup::power_model`] or
    /// a drive.
    pub fn spindown_engine(
        &self,
        spec: &str,
        max_spindowns_per_day: Option<u32>,
    ) -> Result<SpindownEngine, SetupError> {
        let model = self.standby_model("Setup::spindown_engine")?.clone();
        let gate = self.standby_gate(max_spindowns_per_day)?;
        let network = self.network_for("Setup::spindown_engine", spec)?;
        Ok(Engine::with_policy(
            network,
            StopPolicy::EarlierOf,
            Recorded::new(Spindown::new(model).with_gate(gate)),
        ))
    }

    /// The daemon's checks between a `Start` and the drive
    /// (docs/embedding.md, "Guarding the drive"): predictions shorter
    /// than B refused, and at most `max_spindowns_per_day` spin-downs a
    /// day (`None`: no wear budget). Refused for a setup of
    /// [`Work::Io`], as [`Setup::spindown_engine`] is: its B is not a
    /// spin-down's.
    pub fn standby_gate(
        &self,
        max_spindowns_per_day: Option<u32>,
    ) -> Result<StandbyGate, SetupError> {
        self.refuse_io("Setup::standby_gate")?;
        Ok(StandbyGate {
            break_even: Some(self.break_even),
            max_spindowns_per_day,
        })
    }

    fn network_for(&self, call: &'static str, spec: &str) -> Result<Network, SetupError> {
        self.build_network(spec)
            .map_err(|error| SetupError::Network {
                call,
                spec: spec.to_string(),
                error: Box::new(error),
            })
    }

    fn refuse_io(&self, call: &str) -> Result<(), SetupError> {
        match self.work {
            Work::Standby => Ok(()),
            Work::Io => Err(SetupError::Refused(DriveError(format!(
                "{call}: this setup is for Work::Io (B = {}, one access), not for spinning down: make it with Work::Standby (`lull::for_drive(drive, Work::Standby)`), whose B is what a spin-down costs",
                self.break_even.approx()
            )))),
        }
    }

    fn standby_model(&self, call: &str) -> Result<&PowerModel, SetupError> {
        self.refuse_io(call)?;
        self.power().ok_or_else(|| {
            SetupError::Refused(DriveError(format!(
                "{call}: this setup has no power model (B = {} was given alone): make it with Setup::power_model or from a drive",
                self.break_even.approx()
            )))
        })
    }

    /// What the network of `engine` (built from `spec` by this setup) has
    /// learned, with the network and B, for [`Setup::restore`] in a later
    /// run. `idle_periods` and `since` (when learning began, written as
    /// whole Unix seconds, [`Snapshot::since`]) are carried for the
    /// embedder's bookkeeping (the daemon counts idle periods and the
    /// learning's start); lull itself does not read them.
    ///
    /// The snapshot names the network the engine runs, as it was built:
    /// named networks expanded ([`Network::spec`]), so a state `auto`
    /// learned for spin-down (`long-idle`) is told from one it learned
    /// for work that moves I/O (`timer(B) + no-duration`) and is refused
    /// by the other. `spec` is written only for a detector that does not
    /// know its spec (one wired in code).
    pub fn snapshot<D: Detector, A: Actuator, T: IdleTask>(
        &self,
        spec: &str,
        engine: &Engine<D, A, T>,
        idle_periods: u64,
        since: UnixTime,
    ) -> Snapshot {
        Snapshot {
            format: lull_core::learned::SNAPSHOT_FORMAT,
            network: engine.detector().spec().unwrap_or(spec).to_string(),
            breakeven_ns: self.break_even.0,
            idle_periods,
            since_unix: since.as_secs(),
            parts: engine.save_learned(),
        }
    }

    /// Puts what `saved` learned back into `engine`, whose network was
    /// built from `spec` by this setup. An error, saying why, when the
    /// state came from another network or another B (then keep the fresh
    /// engine: a half-restored one should be built anew). If the disk is
    /// quiet at the restore, tell the engine so with
    /// [`Engine::assume_idle`](lull_core::engine::Engine::assume_idle):
    /// otherwise the network misses the idle period that spans the
    /// restart.
    ///
    /// Checked first: that `spec` is what `engine` runs (the spec this
    /// setup expands it to is the one its network was built from), and
    /// that `saved` was learned by that network. A snapshot names the
    /// network expanded ([`Setup::snapshot`]); one written before it did
    /// (naming `auto` itself) is read as before, by the name.
    ///
    /// The error names the call and the spec: `Setup::restore(`auto`): …`.
    pub fn restore<D: Detector, A: Actuator, T: IdleTask>(
        &self,
        spec: &str,
        engine: &mut Engine<D, A, T>,
        saved: &Snapshot,
    ) -> Result<(), LearnedError> {
        self.restore_unnamed(spec, engine, saved)
            .map_err(|e| LearnedError::new(format!("Setup::restore(`{spec}`): {e}")))
    }

    /// [`Setup::restore`], its error without the call's name.
    fn restore_unnamed<D: Detector, A: Actuator, T: IdleTask>(
        &self,
        spec: &str,
        engine: &mut Engine<D, A, T>,
        saved: &Snapshot,
    ) -> Result<(), LearnedError> {
        let runs = engine.detector().spec();
        if let Some(runs) = runs {
            match NetworkSpec::parse(spec, Some(&self.registry)) {
                Ok(named) if same_spec(&named.to_string(), runs) => {}
                Ok(named) => {
                    return Err(LearnedError::new(format!(
                        "the engine runs `{runs}`, not `{spec}`{}: restore with the spec it was built from",
                        expansion(spec, &named)
                    )));
                }
                Err(e) => {
                    return Err(LearnedError::new(format!(
                        "the engine runs `{runs}`, and `{spec}` does not name it: {e}"
                    )));
                }
            }
        }
        let network = match runs {
            // Written by name (before snapshots named the expansion, or
            // for a network wired in code): checked by the name.
            Some(runs) if !same_spec(&saved.network, spec) => runs,
            _ => spec,
        };
        saved.fits(network, Some(self.break_even)).map_err(|e| {
            if network == spec {
                e
            } else {
                LearnedError::new(format!("{e} (what `{spec}` stands for with this setup)"))
            }
        })?;
        engine.restore_learned(&saved.parts)
    }
}

/// `b` exactly, with its approximation when that differs: `72ns`,
/// `72413793103ns (1m12s)`.
fn exact(b: Nanos) -> String {
    let (ns, approx) = (format!("{}ns", b.as_nanos()), b.approx().to_string());
    if approx == ns {
        ns
    } else {
        format!("{ns} ({approx})")
    }
}

/// ` (which this setup expands to `…`)` for a named network, or nothing.
fn expansion(spec: &str, parsed: &NetworkSpec) -> String {
    match parsed.expanded_from() {
        Some(_) => format!(" (which this setup expands to `{parsed}`)"),
        None if parsed.to_string() != spec.trim() => format!(" (`{parsed}`)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b_is_the_drive_resolution_for_both_kinds_of_work() {
        let d = DriveProfile::from_spec("wd-red-plus", PresetSource::Config).unwrap();
        let standby = for_drive("wd-red-plus", Work::Standby).unwrap();
        assert_eq!(standby.break_even(), d.standby().unwrap());
        assert_eq!(
            standby.break_even(),
            PowerModel::preset("wd-red-plus").unwrap().break_even()
        );
        let io = for_drive("wd-red-plus", Work::Io).unwrap();
        assert_eq!(io.break_even(), d.io().unwrap());
        assert_eq!(io.break_even(), d.service().break_even());
        assert_eq!(io.registry().breakeven(), Some(io.break_even()));
        // `auto` is the background network for work that moves I/O.
        assert_eq!(
            io.registry().expand_network("auto").unwrap().unwrap(),
            lull_detectors::AUTO_BACKGROUND_SPEC
        );
        assert_ne!(
            standby.registry().expand_network("auto").unwrap().unwrap(),
            lull_detectors::AUTO_BACKGROUND_SPEC
        );
    }

    #[test]
    fn an_unknown_preset_names_itself_and_the_known_ones() {
        let e = for_drive("wd-blue", Work::Standby).unwrap_err().to_string();
        assert!(e.contains("`wd-blue`"), "{e}");
        assert!(e.contains("wd-red-plus"), "{e}");
    }

    #[test]
    fn spin_down_on_a_drive_without_a_power_model_is_refused() {
        let e = for_drive("hp97560", Work::Standby).unwrap_err().to_string();
        assert!(e.contains("no power model"), "{e}");
        assert!(for_drive("hp97560", Work::Io).is_ok());
    }

    #[test]
    fn offline_components_are_refused_live() {
        let s = Setup::power_model(&PowerModel::paper()).unwrap();
        let e = s.build_network("oracle").unwrap_err().to_string();
        assert!(e.contains("offline"), "{e}");
        assert!(s.build_network("timer(B) + fixed(2B)").is_ok());
    }

    #[test]
    fn the_bare_registry_says_how_to_give_b() {
        let e = lull_core::spec::build_network("auto", &registry())
            .unwrap_err()
            .to_string();
        assert!(e.contains("with_breakeven"), "{e}");
    }
}
