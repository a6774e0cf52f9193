//! What the daemon exports of one disk, typed: [`DiskSnapshot`].
//!
//! `lull status` reads the daemon's metrics and its state file. It used to
//! look each metric up by name and label wherever it needed one, so a new
//! status field meant new string lookups in the middle of the status
//! logic. Now the metrics are read once into one [`DiskSnapshot`] per disk
//! ([`crate::admin::status::snapshots`]), and the status logic reads
//! fields. The Prometheus text is still the transport: it is what a
//! running daemon serves and what an older daemon's textfile holds.
//!
//! Each field is one metric's sample for the disk, `None` (or empty) where
//! the daemon exported none: a daemon older than the metric, or a disk it
//! has no controller for. The status logic falls back to the state file
//! then, as before.

use serde::{Deserialize, Serialize};

/// A disk's figures as the daemon exported them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskSnapshot {
    /// The stable name: the state-file key, the metrics' `disk` label.
    pub disk: String,
    /// `lull_disk_present`: the disk is in `/proc/diskstats`.
    pub present: Option<bool>,
    /// `lull_in_standby`: lull spun it down (or found it so) and it has
    /// stayed idle.
    pub in_standby: Option<bool>,
    /// `lull_task_running`'s `task` label: the disk's task.
    pub task: Option<String>,
    /// `lull_task_running`: the idle task runs. Exported for every disk
    /// the daemon has a controller for.
    pub task_running: Option<bool>,
    /// `lull_power_state_since_timestamp_seconds`: when the power state
    /// began, Unix seconds (NaN: the daemon did not see it begin).
    pub power_since: Option<f64>,
    /// `lull_last_decision` (a comment): the last decision's words.
    pub last_decision: Option<String>,
    /// `lull_idle_since_timestamp_seconds` (NaN: busy).
    pub idle_since: Option<f64>,
    /// `lull_next_decision_timestamp_seconds` (NaN: nothing due).
    pub next_decision: Option<f64>,
    /// `lull_spindowns_total`.
    pub spindowns: Option<f64>,
    /// `lull_spinups_total`.
    pub spinups: Option<f64>,
    /// `lull_foreign_spinups_total`.
    pub foreign_spinups: Option<f64>,
    /// `lull_errors_total`.
    pub errors: Option<f64>,
    /// `lull_task_starts_total`.
    pub task_starts: Option<f64>,
    /// `lull_command_seconds_total`.
    pub command_s: Option<f64>,
    /// `lull_command_exits_total`.
    pub command_exits: Option<f64>,
    /// `lull_standby_seconds_total`.
    pub standby_s: Option<f64>,
    /// `lull_learned_idle_periods`.
    pub learned_idle_periods: Option<f64>,
    /// `lull_learned_since_timestamp_seconds`.
    pub learned_since: Option<f64>,
    /// `lull_wakeups_total`: `(comm, count)`, in the order exported.
    pub wakeups: Vec<(String, f64)>,
    /// `lull_last_wake_timestamp_seconds`: when, and its `cause` label.
    pub last_wake: Option<(f64, Option<String>)>,
    /// `lull_node_gauge`: `(node, name, value)`.
    pub nodes: Vec<(String, String, f64)>,
    /// The shadow evaluation's windows (`lull_shadow_*`); `None` when the
    /// metrics do not carry them whole.
    pub shadow: Option<Vec<lull_activity::shadow::WindowReport>>,
    /// `lull_job_*`: per job, in the order they first appear.
    pub jobs: Vec<JobSnapshot>,
}

/// A job's figures as the daemon exported them (`task = "jobs"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobSnapshot {
    /// The job's name.
    pub name: String,
    /// `lull_job_admitted`.
    pub admitted: bool,
    /// `lull_job_idle_seconds_total`.
    pub idle_s: f64,
    /// `lull_job_deadlines_missed_total`.
    pub deadlines_missed: u64,
    /// `lull_job_fits_observed` (`None`: NaN, before a full day).
    pub fits_observed: Option<bool>,
}
