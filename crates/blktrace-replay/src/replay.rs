//! The replay driver: runs a detector network and an idle task over a
//! trace and returns the measures.
//!
//! Each task has the timing it needs (SPEC §4.2, §4.3): `none` and
//! `spindown` run on the recorded times ([`Timing::Trace`], the engine's
//! own [`replay`]); `writeback` and `cleaning` add or move I/O and run on
//! the device model ([`Timing::Model`], [`crate::model`]). With
//! [`Timing::Auto`] (the default) the driver picks it; asking for the
//! other one is an error that says why.
//!
//! `--device` names a drive preset: a power model for `spindown`
//! ([`lull_tasks::power`], default `paper-2.5in`), a service-time model for
//! the model-timing tasks ([`lull_tasks::device`], default `wd-red-plus`);
//! either also takes custom `key=value` lists.

use std::fmt;
use std::str::FromStr;

use lull_core::actuator::StopPolicy;
use lull_core::component::Detector;
use lull_core::engine::{Engine, LogEntry, RunReport, replay};
use lull_core::event::Timeline;
use lull_core::registry::Registry;
use lull_core::spec::NetworkSpec;
use lull_core::task::{IdleTask, NoTask};
use lull_core::time::Nanos;
use lull_tasks::background::BackgroundTask;
use lull_tasks::cleaning::{Cleaning, CleaningConfig};
use lull_tasks::device::ServiceModel;
use lull_tasks::drive::{Drive, PresetSource, Work};
use lull_tasks::gate::StandbyGate;
use lull_tasks::power::PowerModel;
use lull_tasks::profile::DriveProfile;
use lull_tasks::spindown::{BestFixed, Spindown, WindowClairvoyant};
use lull_tasks::writeback::{Writeback, WritebackConfig};

use crate::error::ReplayError;
use crate::model::{
    ModelOptions, SATURATION_WINDOW, Saturation, requests_of, run_model, saturation,
};

/// How foreground requests are timed during a replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timing {
    /// The timing the task needs: trace for `none` and `spindown`, model
    /// for `writeback` and `cleaning` ([`resolve_timing`]).
    #[default]
    Auto,
    /// Requests keep the times the trace recorded; tasks do not perturb
    /// them (SPEC §4.2 for spindown).
    Trace,
    /// Arrivals at trace times, completions from a device service-time
    /// model with queueing, so tasks that add or move I/O perturb the
    /// foreground (SPEC §4.3).
    Model,
}

impl FromStr for Timing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Timing::Auto),
            "trace" => Ok(Timing::Trace),
            "model" => Ok(Timing::Model),
            _ => Err(format!(
                "unknown timing {s:?} (expected trace, model or auto)"
            )),
        }
    }
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Timing::Auto => "auto",
            Timing::Trace => "trace",
            Timing::Model => "model",
        })
    }
}

/// What to replay a network with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayOptions {
    /// The idle task (`none`, …).
    pub task: String,
    /// The stop policy; `None` picks [`default_policy`].
    pub policy: Option<StopPolicy>,
    /// The device preset for tasks that model a drive.
    pub device: Option<String>,
    /// Trace or model timing ([`Timing::Auto`]: what the task needs).
    pub timing: Timing,
    /// Keep the action log.
    pub log: bool,
    /// For `spindown`: the daemon's checks before a standby (wear budget,
    /// break-even), as `lull replay` of a daemon's activity log makes them
    /// ([`lull_tasks::gate`]). The default checks nothing (SPEC §4.2).
    pub gate: StandbyGate,
    /// For `spindown`: the shortest timeout the fixed-timeout references
    /// (the best fixed timeout, the per-window clairvoyant) may use. For a
    /// daemon's activity log, its poll: the daemon cannot act sooner, and
    /// the log's idle periods shorter than a poll are its reconstruction
    /// ([`BestFixed::from_idle_periods_from`]). Zero (the default): any.
    pub reference_floor: Nanos,
    /// For `spindown` replaying a daemon's activity log with its checks:
    /// the log's polls that brought I/O, so that a start such a poll
    /// overtook is skipped as the daemon skipped it
    /// ([`lull_tasks::gate`], "Decisions the poll overtook"). `None`: no
    /// polls (any other trace).
    pub busy_polls: Option<std::sync::Arc<lull_tasks::BusyPolls>>,
    /// For `spindown` replaying a daemon's activity log with its checks:
    /// where the log says the daemon withheld its standbys, and which it
    /// sent failed, so that the replay does with each start what the
    /// daemon did ([`lull_tasks::Spindown::with_daemon_standbys`]).
    /// `None`: any other trace, or a replay asking what the network would
    /// have done.
    pub daemon_standbys: Option<std::sync::Arc<lull_tasks::DaemonStandbys>>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            task: "none".into(),
            policy: None,
            device: None,
            timing: Timing::Auto,
            log: false,
            gate: StandbyGate::default(),
            reference_floor: Nanos::ZERO,
            busy_polls: None,
            daemon_standbys: None,
        }
    }
}

/// The stop policy used when none is given: the paper's method for
/// internal measures (`predicted-end`) with the no-op task, the
/// conservative `earlier-of` otherwise (SPEC §3, §4.1).
pub fn default_policy(task: &str) -> StopPolicy {
    if task == "none" {
        StopPolicy::PredictedEnd
    } else {
        StopPolicy::EarlierOf
    }
}

/// The idle tasks this build knows. `writeback` is the improved policy,
/// `writeback-paper` the paper's FIFO one ([`lull_tasks::writeback`]);
/// either takes knob overrides in parentheses
/// (`writeback(cap=4MiB, order=fifo)`, [`WritebackConfig::parse`]), and
/// any model-timing task takes `+manners` ([`lull_tasks::manners`]).
pub const TASKS: &[&str] = &[
    "none",
    "spindown",
    "writeback",
    "writeback-paper",
    "cleaning",
];

/// A writeback task name: its policy preset and overrides.
fn writeback_policy(name: &str) -> Option<(&'static str, &str)> {
    let (base, overrides) = match name.split_once('(') {
        Some((b, rest)) => (b.trim(), rest.strip_suffix(')')?),
        None => (name, ""),
    };
    match base {
        "writeback" => Some(("improved", overrides)),
        "writeback-paper" => Some(("paper", overrides)),
        _ => None,
    }
}

fn unknown_task(name: &str) -> ReplayError {
    let modified = ["writeback+manners", "cleaning+manners"];
    ReplayError::Option(format!(
        "unknown task `{name}`{} (known: {}; and {})",
        lull_core::suggest::did_you_mean(name, TASKS.iter().copied().chain(modified)),
        TASKS.join(", "),
        modified.join(", ")
    ))
}

/// The timing task `name` needs: [`Timing::Trace`] for `none` and
/// `spindown`, [`Timing::Model`] for `writeback` and `cleaning`.
pub fn natural_timing(name: &str) -> Result<Timing, ReplayError> {
    // MS Manners regulation (lull_tasks::manners): same timing.
    let base = name.strip_suffix("+manners").unwrap_or(name);
    match base {
        "none" | "spindown" => Ok(Timing::Trace),
        "cleaning" => Ok(Timing::Model),
        _ if writeback_policy(base).is_some() => Ok(Timing::Model),
        _ => Err(unknown_task(name)),
    }
}

/// The timing a replay of task `name` runs under when `timing` is asked
/// for: [`Timing::Auto`] becomes the task's own; a mismatch is an error
/// that says which timing to use.
pub fn resolve_timing(name: &str, timing: Timing) -> Result<Timing, ReplayError> {
    let natural = natural_timing(name)?;
    match (timing, natural) {
        (Timing::Auto, t) => Ok(t),
        (t, n) if t == n => Ok(t),
        (Timing::Model, _) if name == "none" => Err(ReplayError::Option(
            "task `none` moves no I/O: use --timing trace (model timing is for tasks that add I/O)"
                .into(),
        )),
        (Timing::Model, _) => Err(ReplayError::Option(format!(
            "task `{name}` runs under trace timing (SPEC §4.2: the request stream is not perturbed): use --timing trace or leave --timing out"
        ))),
        _ => Err(ReplayError::Option(format!(
            "task `{name}` adds or moves I/O, so recorded completion times would be wrong: use --timing model or leave --timing out"
        ))),
    }
}

/// The profile of the drive `--device` names ([`Drive::from_spec`]: a
/// preset of either table with overrides of either model's keys), or
/// without it of the lab's default ([`Drive::lab_default`]: the paper's
/// 2.5" drive for spin-down, `wd-red-plus` for service times). The
/// daemon resolves a disk's drive with the same [`lull_tasks::drive`]
/// functions, and takes its B from the same [`DriveProfile`].
pub fn profile(device: Option<&str>) -> Result<DriveProfile, ReplayError> {
    match device {
        Some(d) => DriveProfile::from_spec(d, PresetSource::Config)
            .map_err(|e| ReplayError::Option(format!("--device: {e}"))),
        None => Ok(DriveProfile::new(Drive::lab_default())),
    }
}

/// The power model for `spindown` from `--device` (default `paper-2.5in`).
pub fn power_model(device: Option<&str>) -> Result<PowerModel, ReplayError> {
    let d = profile(device)?.into_drive();
    d.power.ok_or_else(|| {
        ReplayError::Option(format!(
            "--device: drive {} has no power model (power presets: {})",
            d.preset,
            lull_tasks::power::PRESETS.join(", ")
        ))
    })
}

/// The service-time model for model timing from `--device` (default
/// `wd-red-plus`).
pub fn service_model(device: Option<&str>) -> Result<ServiceModel, ReplayError> {
    Ok(profile(device)?.into_drive().service)
}

/// The kind of work task `name` does: spin-down (`spindown`, and `none`,
/// which is measured for the same drive) or I/O (`writeback`, `cleaning`
/// and their `+manners` forms).
pub fn task_work(name: &str) -> Result<Work, ReplayError> {
    Ok(match natural_timing(name)? {
        Timing::Model => Work::Io,
        _ => Work::Standby,
    })
}

/// The break-even time `B` of task `name` on the `--device` drive
/// ([`DriveProfile::break_even`]): what networks built for it resolve `2B`
/// and their B-scaled defaults against ([`Registry::with_breakeven`]).
///
/// - `spindown` (and `none`): the power model's break-even
///   ([`PowerModel::break_even`]);
/// - `writeback`, `cleaning` (and their `+manners` forms): the service
///   model's random-access time ([`ServiceModel::break_even`]).
pub fn task_breakeven(name: &str, device: Option<&str>) -> Result<Nanos, ReplayError> {
    let work = task_work(name)?;
    profile(device)?
        .break_even(work)
        .map_err(|e| ReplayError::Option(format!("--device: {e}")))
}

/// `registry` set up for task `name` on the `--device` preset
/// ([`task_breakeven`]), unless it already has a break-even time; for the
/// background tasks under model timing (writeback, cleaning) the named
/// network `auto` stands for
/// [`AUTO_BACKGROUND_SPEC`](lull_detectors::AUTO_BACKGROUND_SPEC) (see
/// `lull_detectors`' crate docs: their cost model is not spin-down's); for
/// `spindown`, `oracle`'s `min` defaults to `B`
/// ([`use_spindown_oracle`](lull_detectors::oracle::use_spindown_oracle)).
pub fn registry_for(
    registry: &Registry,
    name: &str,
    device: Option<&str>,
) -> Result<Registry, ReplayError> {
    let mut r = registry.clone();
    if r.breakeven().is_none() {
        r.set_breakeven(Some(task_breakeven(name, device)?));
    }
    if natural_timing(name)? == Timing::Model {
        lull_detectors::use_background_auto(&mut r);
    }
    if name == "spindown" {
        lull_detectors::oracle::use_spindown_oracle(&mut r);
    }
    Ok(r)
}

/// [`registry_for`] `opts`' task and device, held to the wear budget of
/// `opts`' gate ([`Registry::with_wear_budget`]): the networks a replay
/// with the daemon's checks builds spend the budget they are held to.
pub fn registry_for_opts(
    registry: &Registry,
    opts: &ReplayOptions,
) -> Result<Registry, ReplayError> {
    let mut r = registry_for(registry, &opts.task, opts.device.as_deref())?;
    if opts.task == "spindown" && r.wear_budget().is_none() {
        r.set_wear_budget(opts.gate.max_spindowns_per_day);
    }
    Ok(r)
}

/// The reference measures of `timeline` for task `opts.task` that do not
/// depend on the network: for `spindown`, the best fixed timeout in
/// hindsight ([`BestFixed`]); `None` for other tasks. Compute it once per
/// trace and hand it to [`replay_spec_with`] when replaying many networks.
pub fn trace_reference(
    timeline: &Timeline,
    opts: &ReplayOptions,
) -> Result<Option<BestFixed>, ReplayError> {
    trace_reference_runs(timeline, opts, &[])
}

/// [`trace_reference`] of a daemon's activity log of `runs`. With the
/// daemon's wear budget among `opts`' checks, the best fixed timeout and
/// the clairvoyant per-window timer keep it too, as the daemon's shadow
/// judges them ([`BestFixed::under_wear_budget`]): each run's budget (its
/// session's, else the gate's), a bucket per mode, over the shadow's
/// candidates from the reference floor on
/// ([`lull_activity::shadow::fixed_timeouts`]). Without a budget (or with
/// 0, a daemon that never spun the disk down), the exact ones. With the
/// log's polls ([`ReplayOptions::busy_polls`]), each timer fires only
/// where the daemon could have acted on its deadline
/// ([`lull_tasks::gate::BusyPolls::act_end`]), as the network's standbys
/// are skipped where a poll overtook them.
pub fn trace_reference_runs(
    timeline: &Timeline,
    opts: &ReplayOptions,
    runs: &[lull_activity::RunStart],
) -> Result<Option<BestFixed>, ReplayError> {
    if opts.task != "spindown" {
        return Ok(None);
    }
    let model = power_model(opts.device.as_deref())?;
    let span = timeline.span().as_secs_f64();
    let floor = opts.reference_floor;
    let gate_runs = crate::restart::gate_runs(runs);
    let per_day = opts.gate.max_spindowns_per_day;
    // The daemon's checks are on (the gate has a budget), and some run
    // had one above 0.
    let budgeted = per_day.is_some()
        && std::iter::once(per_day)
            .chain(gate_runs.iter().map(|r| r.max_spindowns_per_day))
            .any(|n| n.is_some_and(|n| n > 0));
    // Each period with the latest deadline the daemon could act on: a
    // daemon's log's polls overtook those after the poll before its end,
    // as they overtook the network's (`Spindown::with_busy_polls`).
    let periods = || {
        timeline.idle_periods().map(|p| {
            let act_end = opts
                .busy_polls
                .as_ref()
                .map_or(p.end, |b| b.act_end(p.start, p.end));
            (p.start, act_end, p.end)
        })
    };
    if budgeted {
        let b = match opts.gate.break_even {
            Some(b) => b,
            None => task_breakeven("spindown", opts.device.as_deref())?,
        };
        let timeouts = lull_activity::shadow::fixed_timeouts(b, floor);
        return Ok(Some(BestFixed::under_wear_budget(
            periods(),
            span,
            &model,
            &timeouts,
            &gate_runs,
            per_day,
            timeline.clock(),
        )));
    }
    let mut best = BestFixed::from_act_periods_from(
        periods().map(|(start, act_end, end)| (act_end - start, end - start)),
        span,
        &model,
        floor,
    );
    best.window_clairvoyant = Some(WindowClairvoyant::from_act_periods_from(
        periods(),
        span,
        &model,
        WindowClairvoyant::WINDOW,
        timeline.clock().unwrap_or(Nanos::ZERO),
        floor,
    ));
    Ok(Some(best))
}

/// Builds the idle task named `name` for trace timing (`none`,
/// `spindown`). Model-timing tasks are built by [`make_background_task`].
pub fn make_task(name: &str, opts: &ReplayOptions) -> Result<Box<dyn IdleTask>, ReplayError> {
    make_task_with(name, opts, None)
}

/// [`make_task`], with the trace's best fixed timeout for `spindown` to
/// report against.
pub fn make_task_with(
    name: &str,
    opts: &ReplayOptions,
    best_fixed: Option<BestFixed>,
) -> Result<Box<dyn IdleTask>, ReplayError> {
    let timing = resolve_timing(name, opts.timing)?;
    match name {
        "none" => Ok(Box::new(NoTask)),
        "spindown" => Ok(Box::new(spindown_task(opts, best_fixed)?)),
        _ if timing == Timing::Model => Err(ReplayError::Option(format!(
            "task `{name}` runs under model timing: build it with make_background_task"
        ))),
        _ => Err(unknown_task(name)),
    }
}

/// The `spindown` task of `opts` (its drive, the daemon's checks), with
/// the trace's best fixed timeout to report against.
fn spindown_task(
    opts: &ReplayOptions,
    best_fixed: Option<BestFixed>,
) -> Result<Spindown, ReplayError> {
    let mut task = Spindown::new(power_model(opts.device.as_deref())?).with_gate(opts.gate);
    if let Some(p) = &opts.busy_polls {
        task = task.with_busy_polls(p.clone());
    }
    if let Some(d) = &opts.daemon_standbys {
        task = task.with_daemon_standbys(d.clone());
    }
    Ok(match best_fixed {
        Some(b) => task.with_best_fixed(b),
        None => task,
    })
}

/// Builds the model-timing task named `name` (`writeback`,
/// `writeback-paper`, `cleaning`, each optionally `+manners`) for a disk
/// with `model`.
pub fn make_background_task(
    name: &str,
    model: &ServiceModel,
) -> Result<Box<dyn BackgroundTask>, ReplayError> {
    // `TASK+manners`: the task regulated by MS Manners (lull_tasks::manners).
    let (base, manners) = match name.strip_suffix("+manners") {
        Some(b) => (b, true),
        None => (name, false),
    };
    fn boxed<T: BackgroundTask + 'static>(task: T, manners: bool) -> Box<dyn BackgroundTask> {
        if manners {
            Box::new(lull_tasks::manners::Regulated::new(
                task,
                lull_tasks::manners::MannersConfig::default(),
            ))
        } else {
            Box::new(task)
        }
    }
    match base {
        "cleaning" => Ok(boxed(
            Cleaning::new(CleaningConfig::default(), model),
            manners,
        )),
        "none" | "spindown" => Err(ReplayError::Option(format!(
            "task `{name}` runs under trace timing, not on the device model"
        ))),
        _ => match writeback_policy(base) {
            Some((policy, overrides)) => {
                let cfg = WritebackConfig::parse(policy, overrides, model)
                    .map_err(|e| ReplayError::Option(format!("--task {name}: {e}")))?;
                Ok(boxed(Writeback::new(cfg, model), manners))
            }
            None => Err(unknown_task(name)),
        },
    }
}

/// Whether the `--device` model can serve `timeline` at all, for a task
/// under model timing ([`Saturation`], windows of [`SATURATION_WINDOW`]);
/// `None` for a task under trace timing, whose disk is the recorded one.
/// `lull replay` refuses a saturated trace unless `--allow-saturated`.
pub fn saturation_check(
    timeline: &Timeline,
    opts: &ReplayOptions,
) -> Result<Option<Saturation>, ReplayError> {
    if resolve_timing(&opts.task, opts.timing)? != Timing::Model {
        return Ok(None);
    }
    let model = service_model(opts.device.as_deref())?;
    Ok(Some(saturation(
        &requests_of(timeline),
        &model,
        SATURATION_WINDOW,
    )))
}

/// The built-in presets ([`lull_tasks::device::PRESETS`]) whose service
/// model can serve `timeline` ([`Saturation::is_saturated`] is false), in
/// the order they are listed: what a hint may suggest when the chosen one
/// cannot. Empty for a task under trace timing, which has no model.
pub fn presets_that_serve(
    timeline: &Timeline,
    opts: &ReplayOptions,
) -> Result<Vec<&'static str>, ReplayError> {
    if resolve_timing(&opts.task, opts.timing)? != Timing::Model {
        return Ok(Vec::new());
    }
    let requests = requests_of(timeline);
    let mut serve = Vec::new();
    for &name in lull_tasks::device::PRESETS {
        let model = service_model(Some(name))?;
        if !saturation(&requests, &model, SATURATION_WINDOW).is_saturated() {
            serve.push(name);
        }
    }
    Ok(serve)
}

/// A finished replay.
#[derive(Clone, Debug)]
pub struct ReplayOutcome {
    /// The measures.
    pub report: RunReport,
    /// The action log (empty unless asked for).
    pub log: Vec<LogEntry>,
    /// The network's gauges at the end of the trace, as `node.name`
    /// ([`Network`](lull_core::network::Network)'s): what it learned, for
    /// a look at why it decided as it did.
    pub gauges: Vec<(String, f64)>,
}

/// Replays `timeline` through the network `spec` with the options. For
/// `spindown` the report also carries the trace's best fixed timeout and
/// the network's excess relative to it ([`trace_reference`]).
pub fn replay_spec(
    timeline: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
) -> Result<ReplayOutcome, ReplayError> {
    let reference = trace_reference(timeline, opts)?;
    replay_spec_with(timeline, spec, registry, opts, reference)
}

/// [`replay_spec`] with the network rebuilt as `restart` says
/// ([`crate::restart`]): what a daemon restarted every so often, with or
/// without its learned state, would have done on the trace. Only for
/// trace-timed tasks (`none`, `spindown`). Also returns how many times
/// it restarted.
pub fn replay_spec_restarting(
    timeline: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
    restart: crate::restart::Restart,
) -> Result<(ReplayOutcome, u64), ReplayError> {
    if restart.every == Nanos::ZERO {
        return Err(ReplayError::Option(
            "--restart-every must be above 0".into(),
        ));
    }
    trace_timed(opts, "--restart-every")?;
    let detector = |build| crate::restart::Restarting::new(build, restart);
    let reference = trace_reference(timeline, opts)?;
    replay_restarting(timeline, spec, registry, opts, detector, reference)
}

/// An error naming `flag` unless `opts`' task replays on the trace's own
/// times (`none`, `spindown`): a network rebuilt or warmed up mid-way is
/// the daemon's, which runs no task on a device model.
pub fn trace_timed(opts: &ReplayOptions, flag: &str) -> Result<(), ReplayError> {
    if resolve_timing(&opts.task, opts.timing)? == Timing::Model {
        return Err(ReplayError::Option(format!(
            "{flag} replays trace-timed tasks (none, spindown), not {}",
            opts.task
        )));
    }
    Ok(())
}

/// [`replay_spec`] of a daemon's activity log with the network rebuilt
/// where each of the daemon's `runs` began ([`lull_activity::Rebuilt::runs`],
/// [`crate::restart::Restarting::at_runs`]): in the run's own time frame
/// and wall clock, with what the previous run learned when its network and
/// drive were the same, so that the replay decides as the daemon did across
/// its restarts. Only for trace-timed tasks (`none`, `spindown`). Also
/// returns how many times it restarted.
pub fn replay_spec_runs(
    timeline: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
    runs: &[lull_activity::RunStart],
) -> Result<(ReplayOutcome, u64), ReplayError> {
    let reference = trace_reference_runs(timeline, opts, runs)?;
    replay_spec_runs_with(timeline, spec, registry, opts, runs, reference)
}

/// [`replay_spec_runs`] with the trace's reference measures computed once
/// beforehand ([`trace_reference`]), as a sweep over many networks does.
pub fn replay_spec_runs_with(
    timeline: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
    runs: &[lull_activity::RunStart],
    reference: Option<BestFixed>,
) -> Result<(ReplayOutcome, u64), ReplayError> {
    let registries = run_registries(registry, opts, runs)?;
    spec.build(&registries[0])?;
    let spec = spec.clone();
    let build = Box::new(move |i: usize| {
        spec.build(&registries[i.min(registries.len() - 1)])
            .expect("built once already")
    });
    let detector = crate::restart::Restarting::at_runs(build, runs);
    run_restarting(timeline, opts, detector, reference)
}

/// The registry each of `runs` builds its network with: `opts`' task and
/// device, and the run's own wear budget (its session's, else the
/// gate's), as the daemon built that run's ([`registry_for_opts`]).
fn run_registries(
    registry: &Registry,
    opts: &ReplayOptions,
    runs: &[lull_activity::RunStart],
) -> Result<Vec<Registry>, ReplayError> {
    let base = registry_for(registry, &opts.task, opts.device.as_deref())?;
    let own = |r: &lull_activity::RunStart| {
        let mut reg = base.clone();
        if opts.task == "spindown" && registry.wear_budget().is_none() {
            reg.set_wear_budget(r.max_spindowns_per_day.or(opts.gate.max_spindowns_per_day));
        }
        reg
    };
    let mut v: Vec<Registry> = runs.iter().map(own).collect();
    if v.is_empty() {
        v.push(registry_for_opts(registry, opts)?);
    }
    Ok(v)
}

/// [`replay_spec_runs`] with each run's own network, `specs[i]` for
/// `runs[i]` (a daemon whose configuration changed between runs: `lull
/// replay` of its log replays each run as it ran). The state is carried
/// from one run to the next only where their sessions' networks and
/// drives are the same, as the daemon restores it.
pub fn replay_log_runs(
    timeline: &Timeline,
    specs: &[NetworkSpec],
    registry: &Registry,
    opts: &ReplayOptions,
    runs: &[lull_activity::RunStart],
) -> Result<(ReplayOutcome, u64), ReplayError> {
    if specs.len() != runs.len() || specs.is_empty() {
        return Err(ReplayError::Option(format!(
            "{} networks for {} runs",
            specs.len(),
            runs.len()
        )));
    }
    let reference = trace_reference_runs(timeline, opts, runs)?;
    let registries = run_registries(registry, opts, runs)?;
    for (s, r) in specs.iter().zip(&registries) {
        s.build(r)?;
    }
    let specs = specs.to_vec();
    let runs = runs.to_vec();
    let build = Box::new(move |i: usize| {
        specs[i.min(specs.len() - 1)]
            .build(&registries[i.min(registries.len() - 1)])
            .expect("built once already")
    });
    let detector = crate::restart::Restarting::at_runs(build, &runs);
    run_restarting(timeline, opts, detector, reference)
}

/// The replay of [`replay_spec_restarting`] and [`replay_spec_runs`]: the
/// detector `make` wraps around the network builder; `reference` is the
/// trace's ([`trace_reference`]).
fn replay_restarting(
    timeline: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
    make: impl FnOnce(Box<dyn Fn() -> lull_core::network::Network + Send>) -> crate::restart::Restarting,
    reference: Option<BestFixed>,
) -> Result<(ReplayOutcome, u64), ReplayError> {
    let registry = registry_for_opts(registry, opts)?;
    // Built once here to report a bad spec as such; then once per restart.
    spec.build(&registry)?;
    let spec = spec.clone();
    let build = Box::new(move || spec.build(&registry).expect("built once already"));
    run_restarting(timeline, opts, make(build), reference)
}

/// Replays `timeline` through `detector` with `opts`' task.
fn run_restarting(
    timeline: &Timeline,
    opts: &ReplayOptions,
    detector: crate::restart::Restarting,
    reference: Option<BestFixed>,
) -> Result<(ReplayOutcome, u64), ReplayError> {
    if resolve_timing(&opts.task, opts.timing)? == Timing::Model {
        return Err(ReplayError::Option(format!(
            "restarts are replayed for trace-timed tasks (none, spindown), not {}",
            opts.task
        )));
    }
    let policy = opts.policy.unwrap_or_else(|| default_policy(&opts.task));
    let task = match detector.gate_runs() {
        // A daemon's runs: each checked with its own wear budget, and a
        // bucket for the dry runs and one for the real daemon, as each
        // kept its own state file.
        Some(runs) if opts.task == "spindown" => {
            Box::new(spindown_task(opts, reference)?.with_gate_runs(runs))
        }
        _ => make_task_with(&opts.task, opts, reference)?,
    };
    let mut engine = Engine::with_policy(detector, policy, task);
    if opts.log {
        engine = engine.with_log();
    }
    let report = replay(timeline, &mut engine)?;
    if let Some(e) = engine.detector().failure() {
        return Err(ReplayError::Learned(e.clone()));
    }
    let restarts = engine.detector().restarts();
    Ok((
        ReplayOutcome {
            report,
            log: engine.log().to_vec(),
            gauges: engine.detector().gauges(),
        },
        restarts,
    ))
}

/// [`replay_spec`] with the trace's reference measures computed once
/// beforehand ([`trace_reference`]), as a sweep over many networks does.
pub fn replay_spec_with(
    timeline: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
    reference: Option<BestFixed>,
) -> Result<ReplayOutcome, ReplayError> {
    let registry = &registry_for_opts(registry, opts)?;
    let network = spec.build(registry)?;
    replay_network(timeline, network, opts, reference)
}

/// [`replay_spec`] of a network that has first learned from `warm` (another
/// trace: the day before, say) what a daemon that ran it would have kept in
/// its state file, and starts `timeline` with that, restored at its start
/// as the daemon restores it after a restart (times saved before are long
/// ago; what was learned from them is kept). The measures are
/// `timeline`'s alone. What it answers: how a network does on a trace once
/// it has learned, where a cold replay also counts its learning. Only for
/// trace-timed tasks (`none`, `spindown`): the network sees the same events
/// whatever the task does, so `warm` is replayed without one.
pub fn replay_spec_warm(
    timeline: &Timeline,
    warm: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
) -> Result<ReplayOutcome, ReplayError> {
    let reference = trace_reference(timeline, opts)?;
    replay_spec_warm_with(timeline, warm, spec, registry, opts, reference)
}

/// [`replay_spec_warm`] with the trace's reference measures computed once
/// beforehand ([`trace_reference`]), as a sweep over many networks does.
pub fn replay_spec_warm_with(
    timeline: &Timeline,
    warm: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
    reference: Option<BestFixed>,
) -> Result<ReplayOutcome, ReplayError> {
    trace_timed(opts, "--warm-up")?;
    let registry = &registry_for_opts(registry, opts)?;
    let mut network = spec.build(registry)?;
    // A network with nothing to save learns nothing (a learning component
    // saves its state from the start): the warm-up would change nothing.
    let mut fresh = Vec::new();
    network.save_parts(Nanos::ZERO, &mut fresh);
    if fresh.iter().any(Option::is_some) {
        let policy = opts.policy.unwrap_or_else(|| default_policy(&opts.task));
        let mut engine = Engine::with_policy(spec.build(registry)?, policy, NoTask);
        replay(warm, &mut engine)?;
        let mut parts = Vec::new();
        let end = warm.end().unwrap_or(Nanos::ZERO);
        engine.detector().save_parts(end, &mut parts);
        let start = timeline.start().unwrap_or(Nanos::ZERO);
        network
            .restore_parts(&mut parts.as_slice(), start)
            .map_err(ReplayError::Learned)?;
    }
    replay_network(timeline, network, opts, reference)
}

/// Replays `timeline` through `network` (built for `opts`' task and
/// device) with the options; `reference` is the trace's
/// ([`trace_reference`]).
fn replay_network(
    timeline: &Timeline,
    network: lull_core::network::Network,
    opts: &ReplayOptions,
    reference: Option<BestFixed>,
) -> Result<ReplayOutcome, ReplayError> {
    let policy = opts.policy.unwrap_or_else(|| default_policy(&opts.task));
    if resolve_timing(&opts.task, opts.timing)? == Timing::Model {
        let model = service_model(opts.device.as_deref())?;
        let task = make_background_task(&opts.task, &model)?;
        let requests = requests_of(timeline);
        let out = run_model(
            &requests,
            network,
            policy,
            task,
            &model,
            ModelOptions {
                log: opts.log,
                device_log: false,
                clock: timeline.clock(),
            },
        )?;
        return Ok(ReplayOutcome {
            report: out.report,
            log: out.log,
            gauges: out.gauges,
        });
    }
    let task = make_task_with(&opts.task, opts, reference)?;
    let mut engine = Engine::with_policy(network, policy, task);
    if opts.log {
        engine = engine.with_log();
    }
    let report = replay(timeline, &mut engine)?;
    Ok(ReplayOutcome {
        report,
        log: engine.log().to_vec(),
        gauges: engine.detector().gauges(),
    })
}
