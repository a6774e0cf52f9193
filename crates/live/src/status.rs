//! `lull status`: what a running daemon says about its disks, read from
//! what it already exposes — its metrics (the HTTP endpoint, else the
//! textfile) and its state file — both located through its config file.
//!
//! Why a client of those and not a socket of its own: both are written by
//! the daemon anyway, both can be opened to a group without giving it the
//! power to act (the endpoint answers only `GET`, the state file is read),
//! and status needs no new code in the decision loop.
//!
//! What each field rests on:
//! - **power state**: `lull_in_standby` (the daemon's view, kept up to date
//!   by its CHECK POWER MODE polls and by diskstats), `lull_disk_present`;
//!   without metrics, the last decision in the state file.
//! - **time in the state**: every power-state change the daemon sees is a
//!   decision in the state file, so the time since the last decision is a
//!   lower bound of the time in the current state, exact when that decision
//!   is the change itself ([`DiskStatus::since_exact`]).
//! - **spin-downs against the wear budget**: the state file's counter and
//!   token bucket, refilled to now, and the spin-down attempts the budget
//!   was charged for in the last 24 hours, with the config's
//!   `max_spindowns_per_day`.
//! - **the network's timeouts/thresholds**: the `lull_node_gauge` series.
//! - **wakes and their causes**: `lull_wakeups_total{comm}` (the state
//!   file's `wakeups` without metrics); the last wake's time and cause from
//!   `lull_last_wake_timestamp_seconds{cause}`, its suspects from the state
//!   file's `last_wake` (which the daemon writes at once after a spin-up).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use lull_core::registry::Registry;
use serde::Serialize;

use crate::config::{Config, ConfigError, TaskConfig};
use crate::state::{DiskState, State, WearBudget};

/// One sample of the Prometheus text format.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Metric name.
    pub name: String,
    /// Labels, in the order written, unescaped.
    pub labels: Vec<(String, String)>,
    /// Value (`NaN`, `+Inf` accepted).
    pub value: f64,
}

impl Sample {
    /// The value of label `key`, if present.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the Prometheus text exposition format (the subset lull writes,
/// which is all of it but timestamps and exemplars). Comments and blank
/// lines are skipped; an error names the line.
pub fn parse_metrics(text: &str) -> Result<Vec<Sample>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(parse_sample(line).map_err(|e| format!("metrics line {}: {e}: {line}", n + 1))?);
    }
    Ok(out)
}

fn parse_sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_ascii_whitespace())
        .ok_or("no value")?;
    let name = line[..name_end].to_string();
    if name.is_empty() {
        return Err("no metric name".into());
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        let mut chars = r.char_indices().peekable();
        let mut end = None;
        loop {
            while chars.peek().is_some_and(|(_, c)| *c == ',' || *c == ' ') {
                chars.next();
            }
            match chars.peek() {
                Some((i, '}')) => {
                    end = Some(*i + 1);
                    break;
                }
                None => break,
                _ => {}
            }
            let mut key = String::new();
            for (_, c) in chars.by_ref() {
                if c == '=' {
                    break;
                }
                key.push(c);
            }
            if chars.next().map(|(_, c)| c) != Some('"') {
                return Err(format!("label {key:?} has no quoted value"));
            }
            let mut value = String::new();
            let mut closed = false;
            while let Some((_, c)) = chars.next() {
                match c {
                    '\\' => match chars.next().map(|(_, c)| c) {
                        Some('n') => value.push('\n'),
                        Some(c) => value.push(c),
                        None => break,
                    },
                    '"' => {
                        closed = true;
                        break;
                    }
                    c => value.push(c),
                }
            }
            if !closed {
                return Err(format!("label {key:?}: unterminated value"));
            }
            labels.push((key.trim().to_string(), value));
        }
        let end = end.ok_or("unterminated labels")?;
        rest = &r[end..];
    }
    let value = rest.split_ascii_whitespace().next().ok_or("no value")?;
    let value = match value {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().map_err(|_| format!("bad value {v:?}"))?,
    };
    Ok(Sample {
        name,
        labels,
        value,
    })
}

/// `GET /metrics` from the daemon's endpoint at `addr`, with `timeout` for
/// connecting and for the whole answer.
pub fn fetch_metrics(addr: SocketAddr, timeout: Duration) -> std::io::Result<String> {
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: lull\r\nConnection: close\r\n\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("not an HTTP answer"))?;
    let status = head.lines().next().unwrap_or("");
    if !status.contains(" 200 ") {
        return Err(std::io::Error::other(format!("answered {status:?}")));
    }
    Ok(body.to_string())
}

/// A wear budget as status shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WearStatus {
    /// `max_spindowns_per_day`.
    pub per_day: u32,
    /// Spin-down attempts the budget was charged for in the last 24 hours
    /// (a failed attempt costs a token too).
    pub spent_24h: usize,
    /// Spin-downs allowed right now (the bucket refilled to now).
    pub tokens: f64,
    /// The bucket's size ([`WearBudget::capacity`]).
    pub capacity: f64,
    /// Seconds until the next spin-down is allowed (0: now; `None`: never,
    /// a budget of 0).
    pub next_in_s: Option<f64>,
}

/// A detector node's gauge (`lull_node_gauge`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeGauge {
    /// The node.
    pub node: String,
    /// The gauge (`timeout_s`, a share node's weights, …).
    pub name: String,
    /// Its value; `null` when it is "never" or "none yet" (a node reports
    /// those as an infinite or enormous number: `f64::MAX`), with `never`.
    pub value: Option<f64>,
    /// The value stands for "never" / "none yet" (only when true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub never: bool,
}

impl NodeGauge {
    /// A gauge from a metric's value: beyond 1e300 or not finite is never.
    pub fn new(node: &str, name: &str, value: f64) -> NodeGauge {
        let never = !value.is_finite() || value.abs() >= 1e300;
        NodeGauge {
            node: node.to_string(),
            name: name.to_string(),
            value: (!never).then_some(value),
            never,
        }
    }
}

/// One disk's status.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiskStatus {
    /// The stable name (state-file key, metrics `disk` label).
    pub disk: String,
    /// The kernel name it had last.
    pub kernel_name: String,
    /// The idle task (from the metrics, else the config).
    pub task: Option<String>,
    /// `standby`, `active` or `absent`.
    pub power: String,
    /// Since when (Unix seconds) it is at least in that state.
    pub since_unix: Option<u64>,
    /// Whether `since_unix` is the change itself, not a later decision.
    pub since_exact: bool,
    /// The idle task runs.
    pub task_running: Option<bool>,
    /// The last decision, in words.
    pub last_decision: String,
    /// When the current idle period began (Unix seconds), while the disk
    /// was idle when the daemon last wrote its state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_since_unix: Option<u64>,
    /// When the network decides next without new I/O (Unix seconds): a
    /// timer's spin-down, a prediction's end; as of the daemon's last
    /// write of its state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_decision_unix: Option<u64>,
    /// Spin-downs by lull (all time, kept across restarts).
    pub spindowns: u64,
    /// Spin-ups of disks lull spun down.
    pub spinups: u64,
    /// Spin-ups lull did not cause.
    pub foreign_spinups: u64,
    /// Errors while acting on the disk.
    pub errors: u64,
    /// Idle task starts.
    pub task_starts: u64,
    /// Seconds in standby after lull's spin-downs.
    pub standby_s: f64,
    /// The wear budget (standby disks).
    pub wear: Option<WearStatus>,
    /// What the network has learned (its current timeouts, thresholds).
    pub nodes: Vec<NodeGauge>,
    /// How many idle periods its learned state has seen, over every run
    /// that kept it (from the state file; absent for a network that
    /// learns nothing, or before its first idle period).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learned_idle_periods: Option<u64>,
    /// Since when it has been learning (Unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learned_since_unix: Option<u64>,
    /// Wakes by the process that most likely caused them.
    pub wakeups: BTreeMap<String, u64>,
    /// When the disk last woke (Unix seconds): I/O after the idle task
    /// acted, or a spin-up.
    pub last_wake_unix: Option<u64>,
    /// What that wake was ([`crate::state::Wake`]): `spinup` (I/O on a
    /// disk in standby), `foreign-spinup` (found spinning with no I/O
    /// counted) or `io` (I/O after the task acted, the disk not in
    /// standby).
    pub last_wake_cause: Option<String>,
    /// The processes that most likely caused it, most likely first
    /// (`unknown`: gone; `NAME?`: did I/O but holds no file on the disk);
    /// empty when no attribution was made (an `io` wake: no snapshot).
    pub last_wake_by: Vec<String>,
    /// The drive's preset (from the state file, once the daemon found the
    /// disk).
    pub preset: Option<String>,
    /// Where the preset came from: `config`, `identified`, `class` or
    /// `default`.
    pub preset_source: Option<String>,
    /// The break-even time B of the disk's task, in seconds.
    pub breakeven_s: Option<f64>,
    /// Why the daemon never spins the disk down, if it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_alone: Option<String>,
    /// The shadow evaluation (`standby` disks with a power model, from the
    /// state file): per window, what lull saved against hd-idle's 10
    /// minutes, common `hdparm -S` values, the best fixed timeout and the
    /// oracle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow: Option<lull_activity::ShadowReport>,
}

/// What `lull status` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Status {
    /// The config file read.
    pub config: PathBuf,
    /// Where the metrics came from (`http://ADDR/metrics` or the textfile),
    /// if any.
    pub metrics: Option<String>,
    /// The state file read.
    pub state_file: PathBuf,
    /// Whether the daemon only logs its decisions (`lull_dry_run`).
    pub dry_run: Option<bool>,
    /// Whether a daemon runs on the state file now, from its lock
    /// ([`crate::instance`]): `false` when the lock file is there and
    /// nothing holds it (what follows is what the last run left), absent
    /// when it cannot be told (no lock file: a daemon older than the lock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daemon_running: Option<bool>,
    /// The running daemon's pid, when its lock file gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daemon_pid: Option<u32>,
    /// When this was read (Unix seconds).
    pub now_unix: u64,
    /// When the state file read was last written (its modification time,
    /// Unix seconds), if it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_written_unix: Option<u64>,
    /// How often the daemon writes its state file when nothing urgent
    /// happens (`state_interval`, seconds).
    pub state_interval_s: f64,
    /// The disks, by name.
    pub disks: Vec<DiskStatus>,
}

/// Why status could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// The config file is missing or invalid (exit 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The daemon's endpoint or files cannot be read (exit 1).
    #[error("{0}")]
    Unreachable(String),
}

impl StatusError {
    /// The exit code: 2 for a bad config, 1 when the daemon cannot be read.
    pub fn exit_code(&self) -> u8 {
        match self {
            StatusError::Config(_) => 2,
            StatusError::Unreachable(_) => 1,
        }
    }
}

/// What `lull status` and `lulld status` print: [`render_text`], or the
/// [`Status`] as one JSON object (`json`).
pub fn report(config: &Path, json: bool, registry: &Registry) -> Result<String, StatusError> {
    let st = gather(config, registry)?;
    Ok(if json {
        let mut s = serde_json::to_string_pretty(&st).map_err(|e| {
            StatusError::Unreachable(format!("cannot write the status as JSON: {e}"))
        })?;
        s.push('\n');
        s
    } else {
        render_text(&st)
    })
}

/// Reads the status of the daemon configured by `config`: its metrics
/// (endpoint, else textfile) and state file.
pub fn gather(config: &Path, registry: &Registry) -> Result<Status, StatusError> {
    let cfg = Config::load(config, registry)?;
    let now_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (source, text) = if let Some(addr) = cfg.metrics.listen {
        let text = fetch_metrics(addr, Duration::from_secs(5)).map_err(|e| {
            StatusError::Unreachable(format!(
                "the daemon's metrics endpoint http://{addr}/metrics (`metrics.listen` in {}) is not reachable: {e}; is the daemon running?",
                config.display()
            ))
        })?;
        (Some(format!("http://{addr}/metrics")), Some(text))
    } else if let Some(tf) = &cfg.metrics.textfile {
        let text = std::fs::read_to_string(tf).map_err(|e| {
            StatusError::Unreachable(format!(
                "cannot read the daemon's metrics textfile {} (`metrics.textfile` in {}): {e}",
                tf.display(),
                config.display()
            ))
        })?;
        (Some(tf.display().to_string()), Some(text))
    } else {
        (None, None)
    };
    let samples = match &text {
        Some(t) => parse_metrics(t).map_err(|e| {
            StatusError::Unreachable(format!("{}: {e}", source.as_deref().unwrap_or("")))
        })?,
        None => Vec::new(),
    };
    let dry_run = samples
        .iter()
        .find(|s| s.name == "lull_dry_run")
        .map(|s| s.value != 0.0);
    // A dry run keeps its own state file; without metrics to say so, a
    // dry-run file where no real one is tells it.
    let dry_run = dry_run.or_else(|| {
        (!cfg.state_file.exists() && cfg.dry_run_state_file().exists()).then_some(true)
    });
    let state_file = cfg.state_path(dry_run == Some(true));
    let state = match std::fs::read(&state_file) {
        Ok(bytes) => serde_json::from_slice::<State>(&bytes).map_err(|e| {
            StatusError::Unreachable(format!(
                "{}: not a lull state file: {e}",
                state_file.display()
            ))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && text.is_some() => State::default(),
        Err(e) => {
            return Err(StatusError::Unreachable(format!(
                "cannot read the daemon's state file {} (`state_file` in {}): {e}{}",
                state_file.display(),
                config.display(),
                if text.is_none() {
                    "; no [metrics] listen or textfile is configured either, so there is nothing else to read"
                } else {
                    ""
                }
            )));
        }
    };
    let state_written_unix = std::fs::metadata(&state_file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    let (daemon_running, daemon_pid) = match crate::instance::holder(&state_file) {
        crate::instance::Holder::Held(pid) => (Some(true), pid),
        crate::instance::Holder::Free => (Some(false), None),
        crate::instance::Holder::Unknown => (None, None),
    };
    Ok(Status {
        config: config.to_path_buf(),
        metrics: source,
        state_file,
        dry_run,
        daemon_running,
        daemon_pid,
        now_unix,
        state_written_unix,
        state_interval_s: cfg.state_interval.as_secs_f64(),
        disks: with_logged_shadows(
            &cfg,
            combine(&cfg, &state, &samples, text.is_some(), now_unix),
        ),
    })
}

/// How old (seconds) the state file is that the status of a running
/// daemon comes from alone (no metrics), when that is old enough to
/// matter: two seconds or more, a poll or two, and the daemon writes the
/// file only every `state_interval` unless something urgent happens. A
/// stopped daemon's status says so instead.
fn state_lag(st: &Status) -> Option<u64> {
    if st.metrics.is_some() || st.daemon_running == Some(false) {
        return None;
    }
    let age = st.now_unix.saturating_sub(st.state_written_unix?);
    (age >= 2).then_some(age)
}

/// Fills in the shadow evaluation of `standby` disks whose state entry
/// has none (a daemon, or a dry run, that has not saved its state file
/// yet) from their activity logs: the same records give the same figures
/// as the daemon's ([`crate::activity::shadow_from_log`]).
fn with_logged_shadows(cfg: &Config, mut disks: Vec<DiskStatus>) -> Vec<DiskStatus> {
    if !cfg.activity.enabled {
        return disks;
    }
    for d in disks
        .iter_mut()
        .filter(|d| d.shadow.is_none() && d.task.as_deref() == Some("standby"))
    {
        d.shadow = crate::activity::shadow_from_log(&cfg.activity, &d.disk);
    }
    disks
}

/// Whether `decision` is itself the change into the power state
/// (`standby` or not).
fn is_change(decision: &str, standby: bool) -> bool {
    if standby {
        [
            "standby done",
            "standby: the drive was already",
            "found in standby",
        ]
        .iter()
        .any(|p| decision.starts_with(p))
    } else {
        decision.starts_with("spun up by something else")
    }
}

/// The disks of `state` and `samples`, each with its config.
pub fn combine(
    cfg: &Config,
    state: &State,
    samples: &[Sample],
    have_metrics: bool,
    now_unix: u64,
) -> Vec<DiskStatus> {
    let mut keys: Vec<&str> = state.disks.keys().map(String::as_str).collect();
    keys.extend(samples.iter().filter_map(|s| s.label("disk")));
    keys.sort_unstable();
    keys.dedup();
    let empty = DiskState::default();
    keys.into_iter()
        .map(|key| {
            let st = state.disks.get(key).unwrap_or(&empty);
            let metric = |name: &str| {
                samples
                    .iter()
                    .find(|s| s.name == name && s.label("disk") == Some(key))
            };
            let counter =
                |name: &str, fallback: u64| metric(name).map_or(fallback, |s| s.value as u64);
            // An instant of the metrics (NaN: none) is current; the state
            // file's may be up to `state_interval` old. A daemon without
            // the metric leaves the state file's.
            let instant = |name: &str, fallback: Option<u64>| match metric(name) {
                Some(s) if s.value.is_finite() && s.value >= 0.0 => Some(s.value as u64),
                Some(_) => None,
                None => fallback,
            };
            let dcfg = cfg.disks.iter().find(|d| d.device == key).or_else(|| {
                cfg.disks.iter().find(|d| {
                    crate::devices::is_glob(&d.device) && crate::devices::glob_match(&d.device, key)
                })
            });
            let present = metric("lull_disk_present").map_or(st.present, |s| s.value != 0.0);
            let standby = match metric("lull_in_standby") {
                Some(s) => s.value != 0.0,
                None => {
                    !have_metrics
                        && (st.last_decision.starts_with("standby")
                            || st.last_decision.starts_with("found in standby"))
                }
            };
            let power = if !present {
                "absent"
            } else if standby {
                "standby"
            } else {
                "active"
            };
            let wear = dcfg.and_then(|d| match &d.task {
                TaskConfig::Standby {
                    max_spindowns_per_day,
                    ..
                } => {
                    let per_day = *max_spindowns_per_day;
                    let mut b = st
                        .wear
                        .clone()
                        .unwrap_or_else(|| WearBudget::full(per_day, now_unix));
                    b.refill(per_day, now_unix);
                    let next_in_s = match b.clone().take(per_day, now_unix) {
                        Ok(()) => Some(0.0),
                        Err(w) if w.is_finite() => Some(w),
                        Err(_) => None,
                    };
                    let from = now_unix.saturating_sub(86_400);
                    Some(WearStatus {
                        per_day,
                        spent_24h: st
                            .spindown_attempts_unix
                            .iter()
                            .filter(|&&t| t > from && t <= now_unix)
                            .count(),
                        tokens: b.tokens,
                        capacity: WearBudget::capacity(per_day),
                        next_in_s,
                    })
                }
                _ => None,
            });
            let mut wakeups = BTreeMap::new();
            for s in samples
                .iter()
                .filter(|s| s.name == "lull_wakeups_total" && s.label("disk") == Some(key))
            {
                if let Some(c) = s.label("comm") {
                    wakeups.insert(c.to_string(), s.value as u64);
                }
            }
            if wakeups.is_empty() {
                wakeups = st.wakeups.clone();
            }
            // The metric is current; the state file may lag a little
            // (not after a spin-up, which it saves at once), so the
            // suspects count only when it tells of the same wake.
            let (last_wake_unix, last_wake_cause) = match metric("lull_last_wake_timestamp_seconds")
            {
                Some(s) => (Some(s.value as u64), s.label("cause").map(str::to_string)),
                None => (
                    st.last_wake.as_ref().map(|w| w.unix),
                    st.last_wake.as_ref().map(|w| w.cause.clone()),
                ),
            };
            let last_wake_by = st
                .last_wake
                .as_ref()
                .filter(|w| {
                    Some(w.unix) == last_wake_unix
                        && Some(w.cause.as_str()) == last_wake_cause.as_deref()
                })
                .map_or_else(Vec::new, |w| w.by.clone());
            DiskStatus {
                disk: key.to_string(),
                kernel_name: st.kernel_name.clone(),
                task: samples
                    .iter()
                    .find(|s| s.name == "lull_task_running" && s.label("disk") == Some(key))
                    .and_then(|s| s.label("task").map(str::to_string))
                    .or_else(|| dcfg.map(|d| d.task.name().to_string())),
                power: power.into(),
                since_unix: (st.last_decision_unix > 0).then_some(st.last_decision_unix),
                since_exact: present && is_change(&st.last_decision, standby),
                task_running: metric("lull_task_running").map(|s| s.value != 0.0),
                last_decision: st.last_decision.clone(),
                idle_since_unix: instant("lull_idle_since_timestamp_seconds", st.idle_since_unix)
                    .filter(|_| present),
                next_decision_unix: instant(
                    "lull_next_decision_timestamp_seconds",
                    st.next_decision_unix,
                )
                .filter(|_| present),
                spindowns: counter("lull_spindowns_total", st.spindowns),
                spinups: counter("lull_spinups_total", st.spinups),
                foreign_spinups: counter("lull_foreign_spinups_total", st.foreign_spinups),
                errors: counter("lull_errors_total", st.errors),
                task_starts: counter("lull_task_starts_total", st.task_starts),
                standby_s: metric("lull_standby_seconds_total").map_or(st.standby_s, |s| s.value),
                wear,
                nodes: samples
                    .iter()
                    .filter(|s| s.name == "lull_node_gauge" && s.label("disk") == Some(key))
                    .map(|s| {
                        NodeGauge::new(
                            s.label("node").unwrap_or(""),
                            s.label("name").unwrap_or(""),
                            s.value,
                        )
                    })
                    .collect(),
                learned_idle_periods: st.learned.as_ref().map(|l| l.idle_periods),
                learned_since_unix: st.learned.as_ref().map(|l| l.since_unix).filter(|&t| t > 0),
                wakeups,
                last_wake_unix,
                last_wake_cause,
                last_wake_by,
                preset: st.drive.as_ref().map(|d| d.preset.clone()),
                preset_source: st.drive.as_ref().map(|d| d.preset_source.clone()),
                breakeven_s: st.drive.as_ref().map(|d| d.breakeven_s),
                left_alone: st.drive.as_ref().and_then(|d| d.left_alone.clone()),
                shadow: st.shadow.clone(),
            }
        })
        .collect()
}

/// A node's gauge in words, from its component's catalogue entry
/// ([`lull_core::registry::GaugeInfo`]: `p_long 0.1219` → "chance the
/// idle period is long 12 %", `fallback_timeout_s 110` → "fallback
/// timeout 1m50s"); a gauge the catalogue does not describe keeps its
/// name, its value rounded to what matters. `None` is "never".
fn human_gauge(name: &str, value: Option<f64>) -> String {
    static GAUGES: std::sync::OnceLock<Vec<&'static lull_core::registry::GaugeInfo>> =
        std::sync::OnceLock::new();
    let gauges = GAUGES.get_or_init(|| {
        crate::default_registry()
            .list()
            .iter()
            .flat_map(|c| c.gauges.iter())
            .collect()
    });
    match gauges.iter().find(|g| g.matches(name)) {
        Some(g) => g.describe(value),
        None => format!(
            "{} {}",
            name.replace('_', " "),
            value.map_or_else(|| "never".to_string(), |v| significant(v, 4))
        ),
    }
}

use lull_core::registry::significant;

/// A long span for people: whole days from two days on, else as [`secs`].
fn span(s: f64) -> String {
    if s >= 2.0 * 86_400.0 {
        format!("{} days", (s / 86_400.0).round())
    } else {
        secs(s)
    }
}

fn secs(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return format!("{s}");
    }
    if s < 60.0 {
        return format!("{}s", (s * 10.0).round() / 10.0);
    }
    humantime::format_duration(Duration::from_secs(s.round() as u64)).to_string()
}

/// One block per disk, for people: a header with the disk's name, then
/// one field a line, labels aligned, numbers rounded to what matters.
///
/// ```text
/// /dev/disk/by-id/ata-WDC_WD40EFRX-X (sdb)
///   power       standby for 16m 40s
///   task        standby (running)
///   waiting     for I/O: asleep since lull spun it down
///   drive       wd-red-plus (identified), break-even 1m12s
///   spin-downs  4 (wear budget 24/day: 4 used in 24 h, 3 of 4 left now)
///   …
/// ```
pub fn render_text(st: &Status) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if st.daemon_running == Some(false) {
        let _ = writeln!(
            out,
            "(no daemon is running: nothing holds {}; below is what its last run left, not the disks' state now)",
            crate::instance::lock_path(&st.state_file).display()
        );
    }
    if let Some(age) = state_lag(st) {
        let _ = writeln!(
            out,
            "(as the daemon last wrote its state file, {} ago: without [metrics] that is every {} and at once for spin-downs, spin-ups and commands, so what follows can lag)",
            secs(age as f64),
            secs(st.state_interval_s)
        );
    }
    if st.dry_run == Some(true) {
        out.push_str("(the daemon runs with --dry-run: it decides but does not act)\n");
    }
    if st.disks.is_empty() {
        let _ = writeln!(out, "no disks in the daemon's state or metrics yet");
    }
    let ago = |t: u64| secs(st.now_unix.saturating_sub(t) as f64);
    for (n, d) in st.disks.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{}", d.disk);
        if !d.kernel_name.is_empty() && !d.disk.ends_with(&d.kernel_name) {
            let _ = write!(out, " ({})", d.kernel_name);
        }
        out.push('\n');
        let mut field = |label: &str, text: String| {
            let _ = writeln!(out, "  {label:<11} {text}");
        };
        let mut power = d.power.clone();
        if let Some(t) = d.since_unix {
            let _ = write!(
                power,
                " for {}{}",
                if d.since_exact { "" } else { "at least " },
                ago(t)
            );
        }
        field("power", power);
        if let Some(task) = &d.task {
            let running = if d.task_running == Some(true) {
                " (running)"
            } else {
                ""
            };
            field("task", format!("{task}{running}"));
        }
        if let Some(w) = waiting(d, st.now_unix) {
            field("waiting", w);
        }
        if let (Some(p), Some(src), Some(b)) = (&d.preset, &d.preset_source, d.breakeven_s) {
            let b = lull_core::time::Nanos::from_secs_f64(b).approx();
            field("drive", format!("{p} ({src}), break-even {b}"));
        }
        if let Some(why) = &d.left_alone {
            field("left alone", why.clone());
        }
        let standby = d.task.as_deref() == Some("standby") || d.spindowns + d.spinups > 0;
        let mut downs = d.spindowns.to_string();
        // A dry run spends its budget on the spin-downs it would have
        // done, which no counter counts: say so, or "0 … 8 used" puzzles.
        let would = if st.dry_run == Some(true) {
            " by spin-downs it would have done"
        } else {
            ""
        };
        if let Some(w) = &d.wear {
            let _ = write!(
                downs,
                " (wear budget {}/day: {} used in 24 h{would}, {})",
                w.per_day,
                w.spent_24h,
                budget_now(w)
            );
        }
        if standby {
            field("spin-downs", downs);
        }
        let mut ups = d.spinups.to_string();
        if d.foreign_spinups > 0 {
            let _ = write!(ups, " ({} not caused by lull)", d.foreign_spinups);
        }
        if !d.wakeups.is_empty() {
            let mut w: Vec<_> = d.wakeups.iter().collect();
            w.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let list: Vec<String> = w.iter().map(|(c, n)| format!("{c} {n}")).collect();
            let _ = write!(ups, "; woken by {}", list.join(", "));
        }
        if let Some(t) = d.last_wake_unix {
            let _ = write!(
                ups,
                "; last {} ago ({}",
                ago(t),
                d.last_wake_cause.as_deref().unwrap_or("?")
            );
            if !d.last_wake_by.is_empty() {
                let _ = write!(ups, ": {}", d.last_wake_by.join(", "));
            }
            ups.push(')');
        }
        if standby || !d.wakeups.is_empty() {
            field("spin-ups", ups);
        }
        if d.errors > 0 {
            field("errors", d.errors.to_string());
        }
        // What the network has learned, in words, a line per node.
        let mut nodes: Vec<(&str, Vec<String>)> = Vec::new();
        for g in &d.nodes {
            let words = human_gauge(&g.name, g.value);
            match nodes.last_mut() {
                Some((node, list)) if *node == g.node => list.push(words),
                _ => nodes.push((g.node.as_str(), vec![words])),
            }
        }
        let mut label = "learned";
        if let Some(n) = d.learned_idle_periods {
            let over = d
                .learned_since_unix
                .map(|t| format!(" for {},", span(st.now_unix.saturating_sub(t) as f64)))
                .unwrap_or_default();
            field(
                label,
                format!(
                    "learning{over} {n} idle period{} seen (kept across restarts)",
                    if n == 1 { "" } else { "s" }
                ),
            );
            label = "";
        }
        for (node, list) in &nodes {
            field(label, format!("{node}: {}", list.join(", ")));
            label = "";
        }
        if !d.last_decision.is_empty() {
            field("last", d.last_decision.clone());
        }
        if let Some(r) = &d.shadow {
            shadow_text(&mut out, r);
        }
    }
    out
}

/// What the wear budget allows now: "3 of 4 left now", or when the next
/// spin-down is allowed.
fn budget_now(w: &WearStatus) -> String {
    let now = w.tokens.floor() as u64;
    match w.next_in_s {
        None => "none allowed: the budget is 0".to_string(),
        Some(_) if now >= 1 => format!("{now} of {} left now", w.capacity),
        Some(n) => format!("none left now, the next in {}", secs(n)),
    }
}

/// What the disk's network is waiting for, and why, from the daemon's
/// last state: the I/O that wakes a disk lull spun down, the end of the
/// task's run, the network's next decision in the current idle period,
/// or the disk going idle.
fn waiting(d: &DiskStatus, now: u64) -> Option<String> {
    if d.power == "absent" {
        return Some("the disk to come back".into());
    }
    if d.left_alone.is_some() {
        return None;
    }
    if d.power == "standby" {
        return Some("I/O: the disk sleeps until something reads or writes it".into());
    }
    let idle = d
        .idle_since_unix
        .map(|t| format!("idle for {}", secs(now.saturating_sub(t) as f64)));
    let next = d.next_decision_unix.filter(|&t| t > now).map(|t| {
        format!(
            "the network decides in {} unless I/O comes",
            secs((t - now) as f64)
        )
    });
    match (idle, next) {
        (_, _) if d.task_running == Some(true) => {
            Some("I/O, or the end of the predicted idle time: the task runs".into())
        }
        (Some(i), Some(n)) => Some(format!("{i}; {n}")),
        (Some(i), None) => Some(format!("{i}; nothing decided until I/O comes")),
        (None, Some(n)) => Some(n),
        (None, None) => Some("an idle period: the disk is busy".into()),
    }
}

/// The shadow evaluation in a disk's block: per window, what each policy
/// saved on this disk's own activity, then how lull compares.
fn shadow_text(out: &mut String, r: &lull_activity::ShadowReport) {
    use std::fmt::Write as _;
    for w in &r.windows {
        let _ = write!(out, "  {:<11} ", format!("saved {}", w.window));
        if w.idle_periods == 0 {
            let _ = writeln!(
                out,
                "no idle period ended yet ({} watched)",
                secs(w.observed_s)
            );
            continue;
        }
        let mut first = true;
        for (policy, label) in [
            ("lull", "lull"),
            ("hd-idle-10min", "hd-idle 10 min"),
            ("best-fixed", "best fixed"),
            ("clairvoyant-10min", "clairvoyant 10 min"),
            ("oracle", "oracle"),
        ] {
            let Some(p) = w.policy(policy) else { continue };
            if !first {
                out.push_str("; ");
            }
            let _ = write!(out, "{label}");
            if policy == "best-fixed" {
                match p.timeout_s {
                    Some(t) => {
                        let _ = write!(out, " ({})", secs(t));
                    }
                    None => out.push_str(" (never)"),
                }
            }
            let _ = write!(
                out,
                " {:.2} Wh, {} spin-up{}",
                p.saved_wh,
                p.spinups,
                if p.spinups == 1 { "" } else { "s" }
            );
            first = false;
        }
        let _ = write!(out, "\n  {:<11} ", "");
        match w.excess_vs_best_fixed {
            Some(x) => {
                let _ = write!(out, "excess vs best fixed {x:.2}");
            }
            None => out.push_str("excess vs best fixed n/a (a fixed timeout was optimal)"),
        }
        if let Some(g) = w.gain_vs_clairvoyant {
            let _ = write!(out, ", gain vs clairvoyant {g:.2}");
        }
        let _ = writeln!(
            out,
            " ({} idle period{} in {} watched)",
            w.idle_periods,
            if w.idle_periods == 1 { "" } else { "s" },
            secs(w.observed_s)
        );
        if let Some(note) = small_margin_note(w) {
            let _ = writeln!(out, "  {:<11} {note}", "");
        }
    }
}

/// A line under a window's ratios when they divide by little
/// ([`lull_tasks::spindown::small_margins`]), as `lull replay` notes it.
fn small_margin_note(w: &lull_activity::shadow::WindowReport) -> Option<String> {
    let energy = |p: &str| w.policy(p).map(|f| f.energy_j);
    let [best, clairvoyant] = lull_tasks::spindown::small_margins(
        w.baseline_energy_j,
        energy("oracle")?,
        energy("best-fixed")?,
        energy("clairvoyant-10min"),
    );
    let part = |p: Option<f64>, what: &str| p.map(|p| format!("{what} by {p:.2} %"));
    let parts: Vec<String> = [
        part(best, "the best fixed timeout trails the oracle"),
        part(
            clairvoyant,
            "the clairvoyant timer beats the best fixed one",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "(the ratios divide by little: {} of the energy of never spinning down)",
            parts.join(", and ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scrape of a daemon with one standby disk (captured from
    /// `metrics::render`'s output format).
    const CAPTURED: &str = r#"# HELP lull_spindowns_total Spin-downs issued by lull.
# TYPE lull_spindowns_total counter
lull_spindowns_total{disk="/dev/disk/by-id/ata-X \"1\""} 5
lull_spindowns_total{disk="sdb"} 0
# TYPE lull_spinups_total counter
lull_spinups_total{disk="/dev/disk/by-id/ata-X \"1\""} 4
lull_errors_total{disk="/dev/disk/by-id/ata-X \"1\""} 1
lull_wakeups_total{disk="/dev/disk/by-id/ata-X \"1\"",comm="smbd"} 3
lull_wakeups_total{disk="/dev/disk/by-id/ata-X \"1\"",comm="unknown"} 1
lull_disk_present{disk="/dev/disk/by-id/ata-X \"1\""} 1
lull_disk_present{disk="sdb"} 0
lull_task_running{disk="/dev/disk/by-id/ata-X \"1\"",task="standby"} 1
lull_in_standby{disk="/dev/disk/by-id/ata-X \"1\""} 1
lull_last_wake_timestamp_seconds{disk="/dev/disk/by-id/ata-X \"1\"",cause="spinup"} 1699999970
lull_node_gauge{disk="/dev/disk/by-id/ata-X \"1\"",node="adaptive-timer",name="timeout_s"} 42.5
lull_job_fits_observed{disk="sdb",job="scrub"} NaN
lull_polls_total 1234
lull_dry_run 0
"#;

    const DISK: &str = "/dev/disk/by-id/ata-X \"1\"";

    #[test]
    fn parses_a_captured_scrape() {
        let s = parse_metrics(CAPTURED).unwrap();
        assert_eq!(s.len(), 15);
        assert_eq!(s[0].name, "lull_spindowns_total");
        assert_eq!(s[0].label("disk"), Some(DISK));
        assert_eq!(s[0].value, 5.0);
        let g = s.iter().find(|s| s.name == "lull_node_gauge").unwrap();
        assert_eq!(g.label("node"), Some("adaptive-timer"));
        assert_eq!(g.label("name"), Some("timeout_s"));
        assert_eq!(g.value, 42.5);
        assert!(
            s.iter()
                .any(|s| s.name == "lull_job_fits_observed" && s.value.is_nan())
        );
        let p = s.iter().find(|s| s.name == "lull_polls_total").unwrap();
        assert!(p.labels.is_empty());
        assert_eq!(p.value, 1234.0);
        assert!(parse_metrics("x{a=\"b} 1").unwrap_err().contains("line 1"));
        assert!(
            parse_metrics("ok 1\nx{a=b} 1")
                .unwrap_err()
                .contains("line 2")
        );
        assert!(parse_metrics("x one").is_err());
    }

    #[test]
    fn the_metrics_renderer_parses_back() {
        let mut st = State::default();
        st.disk("a\\b\nc").spindowns = 7;
        let g = [crate::metrics::DiskGauges {
            key: "a\\b\nc".into(),
            task: "standby",
            running: false,
            in_standby: true,
            energy_saved_j: None,
            nodes: vec![("n".into(), "timeout_s".into(), 3.0)],
            jobs: Vec::new(),
            shadow: None,
        }];
        let s = parse_metrics(&crate::metrics::render(&st, &g, 1, true)).unwrap();
        let sd = s.iter().find(|s| s.name == "lull_spindowns_total").unwrap();
        assert_eq!(sd.label("disk"), Some("a\\b\nc"));
        assert_eq!(sd.value, 7.0);
    }

    /// The idle period and the next decision come from the metrics when
    /// they have them (current to the second), else from the state file
    /// (up to `state_interval` old): a disk busy now is not "idle for 50s".
    #[test]
    fn the_idle_period_comes_from_the_metrics_when_they_have_it() {
        let reg = crate::default_registry();
        let cfg = Config::parse(
            Path::new("t.toml"),
            "[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(10s)\"\ntask = \"standby\"\n",
            &reg,
        )
        .unwrap();
        let now = 1_700_000_000;
        let mut state = State::default();
        let d = state.disk("sda");
        d.present = true;
        // The state file's last write: an idle period 50 s old.
        d.idle_since_unix = Some(now - 50);
        d.next_decision_unix = Some(now + 5);
        let gauges = [crate::metrics::DiskGauges {
            key: "sda".into(),
            task: "standby",
            running: false,
            in_standby: false,
            energy_saved_j: None,
            nodes: Vec::new(),
            jobs: Vec::new(),
            shadow: None,
        }];
        // The daemon now: busy (nothing idle, nothing due).
        let mut current = state.clone();
        let c = current.disk("sda");
        (c.idle_since_unix, c.next_decision_unix) = (None, None);
        let text = crate::metrics::render(&current, &gauges, 1, false);
        assert!(
            text.contains("lull_idle_since_timestamp_seconds{disk=\"sda\"} NaN\n"),
            "{text}"
        );
        let busy = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
        assert_eq!(busy[0].idle_since_unix, None);
        assert_eq!(busy[0].next_decision_unix, None);
        assert_eq!(
            waiting(&busy[0], now).as_deref(),
            Some("an idle period: the disk is busy")
        );
        // The daemon now: idle for 2 s, deciding in 1 s.
        let c = current.disk("sda");
        (c.idle_since_unix, c.next_decision_unix) = (Some(now - 2), Some(now + 1));
        let text = crate::metrics::render(&current, &gauges, 1, false);
        let idle = combine(&cfg, &state, &parse_metrics(&text).unwrap(), true, now);
        assert_eq!(idle[0].idle_since_unix, Some(now - 2));
        assert_eq!(idle[0].next_decision_unix, Some(now + 1));
        // Metrics of a daemon without them, or none: the state file's.
        let old = parse_metrics("lull_polls_total 3\n").unwrap();
        for samples in [old, Vec::new()] {
            let d = combine(&cfg, &state, &samples, !samples.is_empty(), now);
            assert_eq!(d[0].idle_since_unix, Some(now - 50));
            assert_eq!(d[0].next_decision_unix, Some(now + 5));
        }
    }

    #[test]
    fn combines_metrics_state_and_config() {
        let reg = crate::default_registry();
        let cfg = Config::parse(
            Path::new("t.toml"),
            &format!(
                "[[disk]]\ndevice = {DISK:?}\nnetwork = \"timer(10s)\"\ntask = \"standby\"\nmax_spindowns_per_day = 12\n[[disk]]\ndevice = \"sd?\"\nnetwork = \"timer(10s)\"\ntask = \"flush\"\n"
            ),
            &reg,
        )
        .unwrap();
        let now = 1_700_000_000;
        let mut state = State::default();
        let d = state.disk(DISK);
        d.spindowns = 4; // older than the metrics: they win
        d.last_decision = "standby done (sgio)".into();
        d.last_decision_unix = now - 90;
        d.kernel_name = "sda".into();
        d.wear = Some(WearBudget {
            tokens: 0.5,
            at_unix: now,
        });
        // One attempt more than a day ago, two within the day.
        d.spindown_attempts_unix = vec![now - 90_000, now - 3600, now - 90];
        d.last_wake = Some(crate::state::Wake {
            unix: now - 30,
            cause: "spinup".into(),
            by: vec!["smbd".into(), "rsync?".into()],
        });
        // No metric for sdb's wake: the state file's.
        state.disk("sdb").last_wake = Some(crate::state::Wake {
            unix: now - 5,
            cause: "io".into(),
            by: Vec::new(),
        });
        let samples = parse_metrics(CAPTURED).unwrap();
        // A state file behind the metrics: the metric's time and cause,
        // no suspects of another wake.
        let mut behind = state.clone();
        behind.disk(DISK).last_wake.as_mut().unwrap().unix = now - 4000;
        let old = combine(&cfg, &behind, &samples, true, now);
        assert_eq!(old[0].last_wake_unix, Some(now - 30));
        assert_eq!(old[0].last_wake_cause.as_deref(), Some("spinup"));
        assert!(old[0].last_wake_by.is_empty());
        let disks = combine(&cfg, &state, &samples, true, now);
        assert_eq!(disks.len(), 2);
        let a = &disks[0];
        assert_eq!(a.disk, DISK);
        assert_eq!(a.power, "standby");
        assert!(a.since_exact);
        assert_eq!(a.since_unix, Some(now - 90));
        assert_eq!(a.spindowns, 5);
        assert_eq!(a.errors, 1);
        let w = a.wear.as_ref().unwrap();
        assert_eq!((w.per_day, w.capacity, w.spent_24h), (12, 2.0, 2));
        assert_eq!(a.last_wake_unix, Some(now - 30));
        assert_eq!(a.last_wake_by, ["smbd", "rsync?"]);
        // Half a token short at 12 a day: 1 h.
        assert!((w.next_in_s.unwrap() - 3600.0).abs() < 1e-6, "{w:?}");
        assert_eq!(a.nodes[0].value, Some(42.5));
        // "Never" is null in JSON and a word in the text.
        let g = NodeGauge::new("n0", "margin", f64::MAX);
        assert_eq!((g.value, g.never), (None, true));
        let json = serde_json::to_value(&g).unwrap();
        assert!(json["value"].is_null() && json["never"] == true, "{json}");
        assert_eq!(human_gauge("margin", None), "at-once margin never");
        // A periodic source that does not exist is "none", not 0 s or -1.
        assert_eq!(
            human_gauge("periodic_period_s", None),
            "period of the most confident source none"
        );
        assert_eq!(
            human_gauge("periodic_next_in_s", Some(95.0)),
            "time to the next predicted periodic arrival 1m35s"
        );
        assert_eq!(significant(0.12191474762754606, 4), "0.1219");
        assert_eq!(significant(3.0, 4), "3");
        assert_eq!(significant(1234.5678, 4), "1235");
        assert_eq!(a.wakeups["smbd"], 3);
        let b = &disks[1];
        assert_eq!((b.disk.as_str(), b.power.as_str()), ("sdb", "absent"));
        assert_eq!(b.task.as_deref(), Some("flush"));
        assert!(b.wear.is_none());
        assert_eq!(b.last_wake_unix, Some(now - 5));
        assert_eq!(b.last_wake_cause.as_deref(), Some("io"));
        let text = render_text(&Status {
            config: "t.toml".into(),
            metrics: None,
            state_file: "s".into(),
            dry_run: Some(false),
            daemon_running: None,
            daemon_pid: None,
            now_unix: now,
            state_written_unix: Some(now),
            state_interval_s: 60.0,
            disks,
        });
        let (first, second) = text.split_once("\n\n").unwrap();
        assert!(first.lines().next().unwrap().ends_with("(sda)"), "{first}");
        for want in [
            "  power       standby for 1m 30s",
            "  spin-downs  5 (wear budget 12/day: 2 used in 24 h, none left now, the next in 1h)",
            "last 30s ago (spinup: smbd, rsync?)",
            "  learned     adaptive-timer: timeout 42.5s",
            "woken by smbd 3, unknown 1",
        ] {
            assert!(first.contains(want), "{want:?} in {first}");
        }
        assert!(second.starts_with("sdb\n  power       absent"), "{second}");
        // Only a decision that is the change dates the state exactly.
        assert!(is_change("spun up by something else", false));
        assert!(!is_change("spun up by something else", true));
        assert!(!is_change("standby done (sgio)", false));
        assert!(!is_change("skip standby: wear budget", true));
    }

    /// The text status of a scripted scene, pinned as a whole (issue 31,
    /// item 4): a change of layout shows in review as a change of
    /// `tests/data/status.txt` (`LULL_BLESS=1` writes it anew, for a
    /// change that is meant).
    /// A scripted scene: a standby disk with a shadow, a flush disk.
    fn scene() -> Status {
        use lull_activity::{Counts, Poll, PollKind, Record, Session, Shadow};
        use lull_core::time::Nanos;
        let model = lull_tasks::PowerModel::preset("wd-red-plus").unwrap();
        let mut sh = Shadow::new(model.clone(), model.break_even());
        let s = Nanos::from_secs;
        sh.feed(&Record::Session(Session {
            clock: s(1_800_000_000),
            ..Session::default()
        }));
        let mut t = 1;
        sh.feed(&Record::Poll(Poll {
            t0: s(t),
            t: s(t),
            kind: PollKind::Baseline,
            ..Poll::default()
        }));
        // Gaps of 30 s to 40 min, a standby in each long one.
        for gap in [30, 600, 90, 2400, 45, 1200, 300] {
            if gap > 200 {
                sh.feed(&Record::Standby(s(t + 150)));
            }
            t += gap;
            sh.feed(&Record::Poll(Poll {
                t0: s(t - 1),
                t: s(t),
                counts: Counts {
                    reads: 4,
                    sectors: 32,
                    io_ms: 8,
                    ..Counts::default()
                },
                ..Poll::default()
            }));
        }
        sh.settle();
        Status {
            config: "/etc/lull.toml".into(),
            metrics: Some("http://127.0.0.1:9733/metrics".into()),
            state_file: "/var/lib/lull/state.json".into(),
            dry_run: Some(false),
            daemon_running: Some(true),
            daemon_pid: Some(4242),
            now_unix: 1_800_005_000,
            state_written_unix: Some(1_800_004_990),
            state_interval_s: 60.0,
            disks: vec![
                DiskStatus {
                    disk: "/dev/disk/by-id/ata-WDC_WD40EFRX-X".into(),
                    kernel_name: "sdb".into(),
                    task: Some("standby".into()),
                    power: "standby".into(),
                    since_unix: Some(1_800_004_000),
                    since_exact: true,
                    task_running: Some(true),
                    last_decision: "standby done (ATA PASS-THROUGH (16) STANDBY IMMEDIATE)".into(),
                    idle_since_unix: None,
                    next_decision_unix: None,
                    spindowns: 4,
                    spinups: 3,
                    foreign_spinups: 0,
                    errors: 0,
                    task_starts: 5,
                    standby_s: 3456.0,
                    wear: Some(WearStatus {
                        per_day: 24,
                        spent_24h: 4,
                        tokens: 3.25,
                        capacity: 4.0,
                        next_in_s: Some(0.0),
                    }),
                    nodes: vec![
                        NodeGauge::new("n0", "p_long", 0.12191474762754606),
                        NodeGauge::new("n0", "margin", f64::MAX),
                        NodeGauge::new("n0", "fallback_timeout_s", 110.25),
                    ],
                    learned_idle_periods: Some(1234),
                    learned_since_unix: Some(1_800_005_000 - 9 * 86_400),
                    wakeups: [("smbd".to_string(), 2u64), ("unknown".to_string(), 1)]
                        .into_iter()
                        .collect(),
                    last_wake_unix: Some(1_800_003_900),
                    last_wake_cause: Some("spinup".into()),
                    last_wake_by: vec!["smbd".into()],
                    preset: Some("wd-red-plus".into()),
                    preset_source: Some("identified".into()),
                    breakeven_s: Some(72.413793103),
                    left_alone: None,
                    shadow: Some(sh.report()),
                },
                DiskStatus {
                    disk: "nvme0n1".into(),
                    kernel_name: "nvme0n1".into(),
                    task: Some("flush".into()),
                    power: "active".into(),
                    since_unix: Some(1_800_004_990),
                    since_exact: false,
                    task_running: Some(false),
                    last_decision: "flush done (1 file systems)".into(),
                    idle_since_unix: Some(1_800_004_960),
                    next_decision_unix: Some(1_800_005_035),
                    spindowns: 0,
                    spinups: 0,
                    foreign_spinups: 0,
                    errors: 1,
                    task_starts: 12,
                    standby_s: 0.0,
                    wear: None,
                    nodes: vec![NodeGauge::new("n0", "timeout_s", 5.0)],
                    learned_idle_periods: None,
                    learned_since_unix: None,
                    wakeups: BTreeMap::new(),
                    last_wake_unix: None,
                    last_wake_cause: None,
                    last_wake_by: Vec::new(),
                    preset: None,
                    preset_source: None,
                    breakeven_s: None,
                    left_alone: None,
                    shadow: None,
                },
            ],
        }
    }

    #[test]
    fn the_text_status_of_a_scripted_scene_is_pinned() {
        let text = render_text(&scene());
        let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/status.txt");
        if std::env::var_os("LULL_BLESS").is_some() {
            std::fs::write(&golden, &text).unwrap();
        }
        let want = std::fs::read_to_string(&golden).expect("tests/data/status.txt");
        assert_eq!(
            text, want,
            "the text status changed; LULL_BLESS=1 to accept"
        );
    }

    #[test]
    fn a_dry_run_s_budget_is_spent_on_what_it_would_have_done() {
        let mut st = scene();
        assert!(!render_text(&st).contains("would have done"));
        st.dry_run = Some(true);
        let text = render_text(&st);
        assert!(
            text.starts_with("(the daemon runs with --dry-run"),
            "{text}"
        );
        assert!(
            text.contains("4 used in 24 h by spin-downs it would have done, "),
            "{text}"
        );
    }

    #[test]
    fn a_status_from_the_state_file_alone_says_how_old_it_is() {
        let lag = "(as the daemon last wrote its state file, 40s ago: without [metrics] that is every 1m and at once for spin-downs, spin-ups and commands, so what follows can lag)\n";
        let mut st = scene();
        st.state_written_unix = Some(st.now_unix - 40);
        // With metrics, the power state is current: no word of the lag.
        assert!(!render_text(&st).contains("last wrote"));
        st.metrics = None;
        let text = render_text(&st);
        assert!(text.starts_with(lag), "{text}");
        // Just written: nothing to say.
        st.state_written_unix = Some(st.now_unix - 1);
        assert!(!render_text(&st).contains("last wrote"));
        // A stopped daemon's status says that instead.
        st.state_written_unix = Some(st.now_unix - 40);
        st.daemon_running = Some(false);
        let text = render_text(&st);
        assert!(text.starts_with("(no daemon is running"), "{text}");
        assert!(!text.contains("last wrote"), "{text}");
    }

    /// `lull status --format json` keeps to the schema in
    /// `docs/status.schema.json` (issue 31, item 2): every key documented,
    /// no key the schema does not know, each of its type.
    #[test]
    fn the_json_status_keeps_to_its_schema() {
        let schema: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../docs/status.schema.json"),
            )
            .expect("docs/status.schema.json"),
        )
        .expect("the schema is JSON");
        let json = serde_json::to_value(scene()).unwrap();
        let mut errors = Vec::new();
        validate(&schema, &json, "$", &mut errors);
        assert!(errors.is_empty(), "{errors:#?}");
        // And the check can fail: a key the schema does not know.
        let mut bad = json.clone();
        bad["disks"][0]["surprise"] = serde_json::json!(1);
        bad["now_unix"] = serde_json::json!("soon");
        let mut errors = Vec::new();
        validate(&schema, &bad, "$", &mut errors);
        assert_eq!(errors.len(), 2, "{errors:#?}");
    }

    /// A JSON Schema subset: `type` (a name or a list), `properties`,
    /// `required`, `additionalProperties: false`, `items`.
    fn validate(
        schema: &serde_json::Value,
        v: &serde_json::Value,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        use serde_json::Value;
        if let Some(t) = schema.get("type") {
            let types: Vec<&str> = match t {
                Value::String(s) => vec![s.as_str()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            let ok = types.iter().any(|t| match *t {
                "object" => v.is_object(),
                "array" => v.is_array(),
                "string" => v.is_string(),
                "number" => v.is_number(),
                "integer" => v.is_u64() || v.is_i64(),
                "boolean" => v.is_boolean(),
                "null" => v.is_null(),
                _ => false,
            });
            if !ok {
                errors.push(format!("{at}: {v} is not {types:?}"));
                return;
            }
        }
        if let (Some(props), Some(obj)) = (
            schema.get("properties").and_then(Value::as_object),
            v.as_object(),
        ) {
            for r in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(k) = r.as_str().filter(|k| !obj.contains_key(*k)) {
                    errors.push(format!("{at}: `{k}` is missing"));
                }
            }
            for (k, val) in obj {
                match props.get(k) {
                    Some(sub) => validate(sub, val, &format!("{at}.{k}"), errors),
                    None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        errors.push(format!("{at}: `{k}` is not in the schema"))
                    }
                    None => {}
                }
            }
        }
        if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
            for (i, x) in arr.iter().enumerate() {
                validate(items, x, &format!("{at}[{i}]"), errors);
            }
        }
    }
}
