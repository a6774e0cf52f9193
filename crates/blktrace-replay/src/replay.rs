//! The replay driver: runs a detector network and an idle task over a
//! trace and returns the measures.

use std::fmt;
use std::str::FromStr;

use lull_core::actuator::StopPolicy;
use lull_core::engine::{Engine, LogEntry, RunReport, replay};
use lull_core::event::Timeline;
use lull_core::registry::Registry;
use lull_core::spec::NetworkSpec;
use lull_core::task::{IdleTask, NoTask};

use crate::error::ReplayError;

/// How foreground requests are timed during a replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timing {
    /// Requests keep the times the trace recorded; tasks do not perturb
    /// them (SPEC §4.2 for spindown).
    #[default]
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
            "trace" => Ok(Timing::Trace),
            "model" => Ok(Timing::Model),
            _ => Err(format!("unknown timing {s:?} (expected trace or model)")),
        }
    }
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
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
    /// Trace or model timing.
    pub timing: Timing,
    /// Keep the action log.
    pub log: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            task: "none".into(),
            policy: None,
            device: None,
            timing: Timing::Trace,
            log: false,
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

/// The idle tasks this build knows.
pub const TASKS: &[&str] = &["none"];

/// Builds the idle task named `name`.
pub fn make_task(name: &str, opts: &ReplayOptions) -> Result<Box<dyn IdleTask>, ReplayError> {
    match name {
        "none" => {
            if opts.timing == Timing::Model {
                return Err(ReplayError::Option(
                    "task `none` moves no I/O: use --timing trace (model timing is for tasks that add I/O)".into(),
                ));
            }
            Ok(Box::new(NoTask))
        }
        _ => Err(ReplayError::Option(format!(
            "unknown task `{name}` (known: {})",
            TASKS.join(", ")
        ))),
    }
}

/// A finished replay.
#[derive(Clone, Debug)]
pub struct ReplayOutcome {
    /// The measures.
    pub report: RunReport,
    /// The action log (empty unless asked for).
    pub log: Vec<LogEntry>,
}

/// Replays `timeline` through the network `spec` with the options.
pub fn replay_spec(
    timeline: &Timeline,
    spec: &NetworkSpec,
    registry: &Registry,
    opts: &ReplayOptions,
) -> Result<ReplayOutcome, ReplayError> {
    let network = spec.build(registry)?;
    let task = make_task(&opts.task, opts)?;
    let policy = opts.policy.unwrap_or_else(|| default_policy(&opts.task));
    let mut engine = Engine::with_policy(network, policy, task);
    if opts.log {
        engine = engine.with_log();
    }
    let report = replay(timeline, &mut engine)?;
    Ok(ReplayOutcome {
        report,
        log: engine.log().to_vec(),
    })
}
