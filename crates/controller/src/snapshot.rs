//! What the daemon exports, typed: one [`DaemonSnapshot`] per save, one
//! [`DiskSnapshot`] per disk.
//!
//! Every view of a running daemon renders from this one value: the
//! Prometheus text (the textfile and `GET /metrics`), its JSON (`GET
//! /snapshot.json` and the file beside the textfile) and `lull status`,
//! which reads the JSON back. Adding a status field is a field here, a
//! line where [`DaemonSnapshot::build`] fills it, and a line where a view
//! shows it.
//!
//! Why typed and not the Prometheus text: the text is a transport for a
//! scraper. It has no integers, no "none" but `NaN`, and one sample per
//! line, so a client that reads it back must know every name and label.
//! `lull status` did that until the snapshot: the daemon rendered text,
//! status parsed it and rendered it again. It still parses the text of a
//! daemon older than the snapshot ([`DiskSnapshot`]'s fields are options
//! for that reason): a field is `None` where the daemon exported nothing,
//! and status falls back to the state file then.
//!
//! Pure and sans-IO, as the rest of this crate: the shell writes and
//! serves what this module builds.

use serde::{Deserialize, Deserializer, Serialize};

use crate::gauges::DiskGauges;
use crate::jobs::JobGauge;
use crate::state::{DiskState, State};

/// Everything the daemon exports at one save.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DaemonSnapshot {
    /// Reads of `/proc/diskstats` since the start (`lull_polls_total`).
    pub polls: u64,
    /// The daemon only logs its decisions (`lull_dry_run`).
    pub dry_run: bool,
    /// The disks: those watched and those the configuration waits for, in
    /// the order of their keys. Not the state-file entries kept of disks
    /// a reload removed, nor of drives that left.
    pub disks: Vec<DiskSnapshot>,
    /// The hooks' counters, by disk and event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookSnapshot>,
}

/// A disk's figures as the daemon exported them.
///
/// The state file's counters are `Some` for every disk the daemon
/// exports; the controller's figures (`task` and the rest from
/// [`DiskGauges`]) only for a disk it has a controller for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskSnapshot {
    /// The stable name: the state-file key, the metrics' `disk` label.
    pub disk: String,
    /// The disk is in `/proc/diskstats`.
    pub present: Option<bool>,
    /// lull spun it down (or found it so) and it has stayed idle.
    pub in_standby: Option<bool>,
    /// The disk's task.
    pub task: Option<String>,
    /// The idle task runs.
    pub task_running: Option<bool>,
    /// When the power state began, Unix seconds; `Some(None)`: the daemon
    /// did not see it begin. For an absent disk, when it vanished.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "exported")]
    pub power_since_unix: Option<Option<u64>>,
    /// The last decision's words.
    pub last_decision: Option<String>,
    /// When the last decision was made (Unix seconds).
    pub last_decision_unix: Option<u64>,
    /// When the current idle period began; `Some(None)`: busy or absent.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "exported")]
    pub idle_since_unix: Option<Option<u64>>,
    /// When the network decides next unless I/O comes; `Some(None)`:
    /// nothing is due, or the disk is absent.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "exported")]
    pub next_decision_unix: Option<Option<u64>>,
    /// Idle periods observed.
    pub idle_starts: Option<u64>,
    /// The network's decisions to start the idle task.
    pub task_starts: Option<u64>,
    /// Idle task stops.
    pub task_stops: Option<u64>,
    /// Spin-downs issued by lull.
    pub spindowns: Option<u64>,
    /// Activity on disks lull spun down.
    pub spinups: Option<u64>,
    /// Spin-ups lull did not cause.
    pub foreign_spinups: Option<u64>,
    /// Errors while acting on the disk.
    pub errors: Option<u64>,
    /// Seconds the idle command ran, neither paused nor stopped.
    pub command_s: Option<f64>,
    /// Idle commands that ran to their end.
    pub command_exits: Option<u64>,
    /// Seconds in standby after lull's spin-downs.
    pub standby_s: Option<f64>,
    /// Energy saved while the disk was in standby (joules), with a power
    /// model.
    pub energy_saved_j: Option<f64>,
    /// Idle periods the learned state has seen, over every run that kept
    /// it; `None` for a network that learns nothing.
    pub learned_idle_periods: Option<u64>,
    /// Since when the network has been learning (Unix seconds).
    pub learned_since_unix: Option<u64>,
    /// Wakes by the process that most likely caused them, in the order
    /// exported.
    pub wakeups: Vec<(String, u64)>,
    /// When the disk last woke (Unix seconds), and its cause.
    pub last_wake: Option<(u64, Option<String>)>,
    /// What the network's nodes learned.
    pub nodes: Vec<NodeValue>,
    /// The shadow evaluation's windows; `None` when not exported whole.
    pub shadow: Option<Vec<lull_activity::shadow::WindowReport>>,
    /// A `jobs` disk's jobs, in configuration order.
    pub jobs: Vec<JobSnapshot>,
}

/// A node's gauge: what a detector node learned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeValue {
    /// The node.
    pub node: String,
    /// The gauge (`timeout_s`, a share node's weights, …).
    pub name: String,
    /// Its value. A node says "never" or "none yet" with an enormous or
    /// infinite number; JSON has no infinity, so those are written as
    /// the strings `"+Inf"`, `"-Inf"` and `"NaN"`, as the text format
    /// writes them.
    #[serde(with = "text_f64")]
    pub value: f64,
}

/// A job's figures (`task = "jobs"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobSnapshot {
    /// The job's name.
    pub name: String,
    /// Admission control admitted its reservation.
    pub admitted: bool,
    /// Seconds its command ran in the disk's idle time.
    pub idle_s: f64,
    /// Reservation windows in which it got less than its reservation.
    pub deadlines_missed: u64,
    /// It fits the idle time observed (`None` before a full day).
    pub fits_observed: Option<bool>,
}

/// A hook's counters for one disk and event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSnapshot {
    /// The disk's key.
    pub disk: String,
    /// The event (`spindown`, `spinup`, `wake`, `task-start`,
    /// `task-stop`).
    pub event: String,
    /// Hooks started (or that failed to start).
    pub runs: u64,
    /// Spawn errors, non-zero exits and timeouts.
    pub failures: u64,
}

impl From<&JobGauge> for JobSnapshot {
    fn from(j: &JobGauge) -> JobSnapshot {
        JobSnapshot {
            name: j.name.clone(),
            admitted: j.admitted,
            idle_s: j.idle_s,
            deadlines_missed: j.missed,
            fits_observed: j.fits_observed,
        }
    }
}

impl DaemonSnapshot {
    /// The snapshot of a save: the disks of `state` whose key `exported`
    /// accepts, and every disk of `gauges` (a controller's).
    pub fn build(
        state: &State,
        exported: &dyn Fn(&str) -> bool,
        gauges: &[DiskGauges],
        polls: u64,
        dry_run: bool,
    ) -> DaemonSnapshot {
        let mut disks: Vec<DiskSnapshot> = state
            .disks
            .iter()
            .filter(|(k, _)| exported(k))
            .map(|(k, d)| DiskSnapshot::of_state(k, d))
            .collect();
        for g in gauges {
            let i = match disks.iter().position(|d| d.disk == g.key) {
                Some(i) => i,
                None => {
                    disks.push(DiskSnapshot {
                        disk: g.key.clone(),
                        ..DiskSnapshot::default()
                    });
                    disks.len() - 1
                }
            };
            disks[i].add_gauges(g);
        }
        DaemonSnapshot {
            polls,
            dry_run,
            disks,
            hooks: Vec::new(),
        }
    }

    /// The snapshot of disk `key`, if exported.
    pub fn disk(&self, key: &str) -> Option<&DiskSnapshot> {
        self.disks.iter().find(|d| d.disk == key)
    }
}

impl DiskSnapshot {
    /// The state file's figures of disk `key`.
    fn of_state(key: &str, d: &DiskState) -> DiskSnapshot {
        // An instant of a present disk; none for an absent one.
        let instant = |t: Option<u64>| Some(t.filter(|_| d.present));
        DiskSnapshot {
            disk: key.to_string(),
            present: Some(d.present),
            last_decision: (d.last_decision_unix > 0).then(|| d.last_decision.clone()),
            last_decision_unix: (d.last_decision_unix > 0).then_some(d.last_decision_unix),
            idle_since_unix: instant(d.idle_since_unix),
            next_decision_unix: instant(d.next_decision_unix),
            idle_starts: Some(d.idle_starts),
            task_starts: Some(d.task_starts),
            task_stops: Some(d.task_stops),
            spindowns: Some(d.spindowns),
            spinups: Some(d.spinups),
            foreign_spinups: Some(d.foreign_spinups),
            errors: Some(d.errors),
            command_s: Some(d.command_s),
            command_exits: Some(d.command_exits),
            standby_s: Some(d.standby_s),
            learned_idle_periods: d.learned.as_ref().map(|l| l.idle_periods),
            learned_since_unix: d.learned.as_ref().map(|l| l.since_unix),
            wakeups: d.wakeups.iter().map(|(c, &n)| (c.clone(), n)).collect(),
            last_wake: d
                .last_wake
                .as_ref()
                .map(|w| (w.unix, Some(w.cause.clone()))),
            ..DiskSnapshot::default()
        }
    }

    /// Adds what the disk's controller knows beyond the state file.
    fn add_gauges(&mut self, g: &DiskGauges) {
        self.task = Some(g.task.to_string());
        self.task_running = Some(g.running);
        self.in_standby = Some(g.in_standby);
        self.power_since_unix = Some(g.power_since_unix);
        self.energy_saved_j = g.energy_saved_j;
        self.nodes = g
            .nodes
            .iter()
            .map(|(node, name, value)| NodeValue {
                node: node.clone(),
                name: name.clone(),
                // A node's "none" (`f64::MAX`) is an infinity, as the
                // text format writes it.
                value: if value.abs() >= 1e300 {
                    value.signum() * f64::INFINITY
                } else {
                    *value
                },
            })
            .collect();
        self.shadow = g.shadow.as_ref().map(|r| r.windows.clone());
        self.jobs = g.jobs.iter().map(JobSnapshot::from).collect();
    }
}

/// Reads a field that may be exported as `null` (`Some(None)`), unlike
/// one the daemon did not export at all (`None`, the field absent).
fn exported<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

/// An `f64` in JSON as a number, or as the text format's `"NaN"`,
/// `"+Inf"` or `"-Inf"` where JSON has no number for it.
mod text_f64 {
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    pub(super) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() {
            s.serialize_str("NaN")
        } else if v.is_infinite() {
            s.serialize_str(if *v > 0.0 { "+Inf" } else { "-Inf" })
        } else {
            s.serialize_f64(*v)
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Num<'a> {
            Number(f64),
            Text(&'a str),
        }
        match Num::deserialize(d)? {
            Num::Number(v) => Ok(v),
            Num::Text("NaN") => Ok(f64::NAN),
            Num::Text("+Inf") => Ok(f64::INFINITY),
            Num::Text("-Inf") => Ok(f64::NEG_INFINITY),
            Num::Text(t) => Err(D::Error::custom(format!(
                "{t:?} is not a number, NaN, +Inf or -Inf"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gauges(key: &str) -> DiskGauges {
        DiskGauges {
            key: key.into(),
            task: "standby",
            running: true,
            in_standby: false,
            power_since_unix: None,
            energy_saved_j: Some(2.5),
            shadow: None,
            nodes: vec![
                ("n0".into(), "timeout_s".into(), 42.5),
                ("n0".into(), "margin".into(), f64::INFINITY),
                ("n0".into(), "period_s".into(), f64::MAX),
            ],
            jobs: Vec::new(),
        }
    }

    #[test]
    fn a_snapshot_holds_the_state_files_disks_and_the_controllers() {
        let mut st = State::default();
        st.disk("sda").spindowns = 3;
        st.disk("sda").present = true;
        st.disk("sda").idle_since_unix = Some(1_700_000_000);
        st.disk("gone").present = false;
        st.disk("gone").idle_since_unix = Some(1_700_000_000);
        st.disk("removed");
        let snap = DaemonSnapshot::build(
            &st,
            &|k| k != "removed",
            &[gauges("sda"), gauges("sdb")],
            9,
            true,
        );
        let keys: Vec<&str> = snap.disks.iter().map(|d| d.disk.as_str()).collect();
        assert_eq!(keys, ["gone", "sda", "sdb"]);
        let sda = snap.disk("sda").unwrap();
        assert_eq!(sda.spindowns, Some(3));
        assert_eq!(sda.idle_since_unix, Some(Some(1_700_000_000)));
        assert_eq!(sda.task.as_deref(), Some("standby"));
        assert_eq!(sda.power_since_unix, Some(None));
        // An absent disk has no idle period; a controller-only disk has
        // no state-file counters.
        assert_eq!(snap.disk("gone").unwrap().idle_since_unix, Some(None));
        assert_eq!(snap.disk("gone").unwrap().task, None);
        assert_eq!(snap.disk("sdb").unwrap().spindowns, None);
        assert_eq!((snap.polls, snap.dry_run), (9, true));
    }

    #[test]
    fn json_keeps_a_snapshot_whole_infinities_and_nones_included() {
        let mut st = State::default();
        st.disk("sda").present = true;
        let snap = DaemonSnapshot::build(&st, &|_| true, &[gauges("sda")], 1, false);
        let json = serde_json::to_string(&snap).unwrap();
        assert!(json.contains("\"+Inf\""), "{json}");
        assert!(json.contains("\"power_since_unix\":null"), "{json}");
        let back: DaemonSnapshot = serde_json::from_str(&json).unwrap();
        assert_eq!(back, snap);
        // Not exported at all reads as None; exported as none as Some(None).
        let d: DiskSnapshot = serde_json::from_str(r#"{"disk":"x"}"#).unwrap();
        assert_eq!(d.power_since_unix, None);
        let nan: NodeValue =
            serde_json::from_str(r#"{"node":"a","name":"b","value":"NaN"}"#).unwrap();
        assert!(nan.value.is_nan());
        assert!(
            serde_json::from_str::<NodeValue>(r#"{"node":"a","name":"b","value":"x"}"#).is_err()
        );
    }
}
