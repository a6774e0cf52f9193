//! `lull status`: what a running daemon says about its disks, read from
//! what it already exposes — its snapshot (`GET /snapshot.json` on the
//! metrics endpoint, else the JSON file beside the metrics textfile) and
//! its state file — both located through its config file.
//!
//! Why a client of those and not a socket of its own: both are written by
//! the daemon anyway, both can be opened to a group without giving it the
//! power to act (the endpoint answers only `GET`, the state file is read),
//! and status needs no new code in the decision loop.
//!
//! The snapshot ([`DaemonSnapshot`]) is the typed value the daemon
//! renders its Prometheus text from, so status reads fields, not metric
//! names. A daemon older than the snapshot has only the text: status
//! reads it back into the same type ([`from_prometheus`]). The metric
//! names below are those of the text; the snapshot's fields carry the
//! same figures.
//!
//! What each field rests on:
//! - **power state**: `lull_in_standby` (the daemon's view, kept up to date
//!   by its CHECK POWER MODE polls and by diskstats), `lull_disk_present`;
//!   without metrics, the state file's standby, or its last decision's
//!   words unless a wake from standby came after them.
//! - **time in the state**: `lull_power_state_since_timestamp_seconds`,
//!   when the daemon saw the state begin; else every power-state change
//!   the daemon sees is a decision in the state file or, for I/O that
//!   woke a drive from standby, its last wake, so the time since the
//!   later of the two is a lower bound of the time in the current state,
//!   exact when it is the change itself ([`DiskStatus::since_exact`]);
//!   while a daemon runs, never from before the boot (drives spin up at
//!   power-on: "at least" the time since the boot). An absent disk: since
//!   the daemon saw it vanish (the same metric, or the state file's
//!   `vanished_unix`), else unknown (an older daemon's state file).
//! - **not watched**: a state-file entry no `[[disk]]` covers and the
//!   metrics give no task for; since the reload ([`REMOVED_AT_RELOAD`])
//!   or the start ([`NOT_CONFIGURED_AT_START`]) that marked it.
//! - **the last decision**: the metrics' commented-out
//!   `lull_last_decision` sample (current), else the state file's.
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
use lull_core::time::Nanos;
use serde::Serialize;

use crate::config::{Config, ConfigError, DiskConfig, TaskConfig};
use crate::snapshot::{DaemonSnapshot, DiskSnapshot, HookSnapshot, JobSnapshot, NodeValue};
use crate::state::{DiskState, State, WearBudget};
use crate::units::{energy, secs};

pub use crate::persist::{NOT_CONFIGURED_AT_START, REMOVED_AT_RELOAD, is_parked_key};

/// The backend a `standby` disk's config names, when it is not `auto`
/// (whose probe the state file remembers).
fn configured_backend(dcfg: Option<&DiskConfig>) -> Option<&'static str> {
    match dcfg?.task {
        TaskConfig::Standby { backend, .. } if backend != crate::drive::Backend::Auto => {
            Some(crate::drive::backend_name(backend))
        }
        _ => None,
    }
}

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
/// lines are skipped, but for the commented-out samples of disks' last
/// decisions ([`crate::metrics::LAST_DECISION`]), which are read as
/// samples of that name; an error names the line.
pub fn parse_metrics(text: &str) -> Result<Vec<Sample>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut line = line.trim();
        let decision = |c: &&str| {
            c.strip_prefix(crate::metrics::LAST_DECISION)
                .is_some_and(|r| r.starts_with('{'))
        };
        if let Some(c) = line.strip_prefix("# ").filter(decision) {
            line = c;
        }
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

/// `GET path` from the daemon's endpoint at `addr`, with `timeout` for
/// connecting and for the whole answer: the status line and the body.
fn http_get(addr: SocketAddr, path: &str, timeout: Duration) -> std::io::Result<(String, String)> {
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: lull\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("not an HTTP answer"))?;
    let status = head.lines().next().unwrap_or("").to_string();
    Ok((status, body.to_string()))
}

/// `GET /metrics` from the daemon's endpoint at `addr`, with `timeout` for
/// connecting and for the whole answer.
pub fn fetch_metrics(addr: SocketAddr, timeout: Duration) -> std::io::Result<String> {
    let (status, body) = http_get(addr, "/metrics", timeout)?;
    if !status.contains(" 200 ") {
        return Err(std::io::Error::other(format!("answered {status:?}")));
    }
    Ok(body)
}

/// The daemon's snapshot from its endpoint at `addr`, and the path it
/// came from: `GET /snapshot.json`, or for a daemon older than that path
/// (it answers 404), `GET /metrics` read back ([`from_prometheus`]).
pub fn fetch_snapshot(
    addr: SocketAddr,
    timeout: Duration,
) -> std::io::Result<(&'static str, DaemonSnapshot)> {
    let path = crate::metrics::SNAPSHOT_PATH;
    let (status, body) = http_get(addr, path, timeout)?;
    if status.contains(" 200 ") {
        let snap = serde_json::from_str(&body)
            .map_err(|e| std::io::Error::other(format!("{path}: not a lull snapshot: {e}")))?;
        return Ok((path, snap));
    }
    if !status.contains(" 404 ") {
        return Err(std::io::Error::other(format!("{path} answered {status:?}")));
    }
    let text = fetch_metrics(addr, timeout)?;
    let samples =
        parse_metrics(&text).map_err(|e| std::io::Error::other(format!("/metrics: {e}")))?;
    Ok(("/metrics", from_prometheus(&samples)))
}

/// The daemon's snapshot from the file beside its textfile `tf`
/// (`snapshot`), when that is at least as new as the textfile; else, for
/// a daemon older than that file, the textfile read back
/// ([`from_prometheus`]). Returns the file read.
pub fn read_textfile(
    tf: &Path,
    snapshot: Option<&Path>,
) -> std::io::Result<(PathBuf, DaemonSnapshot)> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified());
    let text_at = modified(tf)?;
    if let Some(jf) = snapshot.filter(|jf| modified(jf).is_ok_and(|t| t >= text_at)) {
        let bytes = std::fs::read(jf)?;
        let snap = serde_json::from_slice(&bytes).map_err(|e| {
            std::io::Error::other(format!("{}: not a lull snapshot: {e}", jf.display()))
        })?;
        return Ok((jf.to_path_buf(), snap));
    }
    let text = std::fs::read_to_string(tf)?;
    let samples = parse_metrics(&text).map_err(std::io::Error::other)?;
    Ok((tf.to_path_buf(), from_prometheus(&samples)))
}

/// A wear budget as status shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WearStatus {
    /// `max_spindowns_per_day`.
    pub per_day: u32,
    /// Spin-down attempts the budget was charged for in the last 24 hours
    /// (a failed one gives its token back; one that found the drive
    /// asleep already costs one).
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
    /// `standby`, `active` or `absent`; `unwatched` for a state-file
    /// entry that no `[[disk]]` covers and the daemon has no controller
    /// for (a disk a reload or restart removed from the configuration, a
    /// drive's entry waiting under `serial:SERIAL`): what the entry holds
    /// is from when it was watched, and [`DiskStatus::left_alone`] says
    /// why.
    pub power: String,
    /// Since when (Unix seconds) it is at least in that state: for
    /// `absent`, since the daemon saw it vanish (`None` when the daemon
    /// does not say, as an older daemon's state file alone does not); for
    /// `unwatched`,
    /// since the reload that removed it (exact) or the daemon's start
    /// that found it removed (at least).
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
    /// The network's decisions to start the idle task (for `standby` also
    /// those the wear budget or the break-even check refused).
    pub task_starts: u64,
    /// Seconds a `command` disk's command ran in idle time, neither
    /// paused nor stopped (all time).
    pub command_s: f64,
    /// Commands that ran to their end.
    pub command_exits: u64,
    /// Seconds in standby after lull's spin-downs.
    pub standby_s: f64,
    /// The wear budget (standby disks).
    pub wear: Option<WearStatus>,
    /// What the network has learned (its current timeouts, thresholds).
    pub nodes: Vec<NodeGauge>,
    /// How many idle periods of a poll or longer its learned state has
    /// seen, over every run that kept it (counted as the shadow counts
    /// them; from the state file; absent for a network that learns
    /// nothing, or before its first idle period).
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
    /// Why the daemon never spins the disk down, if it does not: for an
    /// `unwatched` disk, that it is not in the configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_alone: Option<String>,
    /// The drive's own power management as its IDENTIFY data reports it
    /// (`APM level 127: the drive may spin itself down`), if it reports
    /// any ([`crate::identify::Identity::power_management`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive_power: Option<String>,
    /// Whether the drive may spin itself down, competing with lull's
    /// decisions: its APM level allows it (01h–7Fh), or its Standby_z
    /// timer is enabled.
    pub spins_itself_down: bool,
    /// What leaves spin-down to lull then (`hdparm -B 254 /dev/sdb`;
    /// [`crate::identify::Identity::own_standby_fix`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standby_fix: Option<String>,
    /// How the daemon reaches the drive's power management (`ata16`,
    /// `ata12`, `scsi`, `hdparm`, or `none`: nothing does, and a standby
    /// disk is left alone until it is replugged), once it has probed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// What the probe found: what answered, and what was refused before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_why: Option<String>,
    /// The shadow evaluation (`standby` disks with a power model, from the
    /// metrics when they carry it, else the state file): per window, what lull saved against hd-idle's 10
    /// minutes, common `hdparm -S` values, the best fixed timeout and the
    /// oracle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow: Option<lull_activity::ShadowReport>,
    /// A `jobs` disk's jobs, from the metrics (the state file holds only
    /// their running commands): empty without metrics or jobs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobStatus>,
}

/// One job of a `jobs` disk as the daemon's metrics report it: the
/// snapshot's ([`JobSnapshot`]), shown as it is.
pub use crate::snapshot::JobSnapshot as JobStatus;

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
    /// A disk asked for by name is not in the status (exit 2).
    #[error("{0}")]
    NoSuchDisk(String),
}

impl StatusError {
    /// The exit code: 2 for a bad config or a disk name that is not
    /// there, 1 when the daemon cannot be read.
    pub fn exit_code(&self) -> u8 {
        match self {
            StatusError::Config(_) | StatusError::NoSuchDisk(_) => 2,
            StatusError::Unreachable(_) => 1,
        }
    }
}

impl DiskStatus {
    /// The disk as its status block names it: the stable name, and the
    /// kernel name beside it where the stable name does not end in it
    /// (`/dev/disk/by-id/ata-X (sdb)`).
    pub fn title(&self) -> String {
        if self.kernel_name.is_empty() || self.disk.ends_with(&self.kernel_name) {
            self.disk.clone()
        } else {
            format!("{} ({})", self.disk, self.kernel_name)
        }
    }
}

/// Whether `name`, as a user typed it, names disk `d`: its stable name
/// (the state-file key, `/dev/disk/by-id/…` or the config's device), its
/// kernel name (`sdb`), or either's `/dev/` path.
fn names_disk(name: &str, d: &DiskStatus) -> bool {
    let bare = name.strip_prefix("/dev/").unwrap_or(name);
    let kernel = !d.kernel_name.is_empty() && bare == d.kernel_name;
    kernel || name == d.disk || d.disk.strip_prefix("/dev/") == Some(bare)
}

/// Keeps the disks of `st` that `names` name (a stable
/// name, a kernel name, a `/dev/` path), in the status's order; all of them
/// when `names` is empty. A name that matches no disk is an error that
/// lists the disks there are, so that `lull status sdx` never answers with
/// an empty report.
pub fn select(st: &mut Status, names: &[String]) -> Result<(), StatusError> {
    if names.is_empty() {
        return Ok(());
    }
    if let Some(missing) = names
        .iter()
        .find(|n| !st.disks.iter().any(|d| names_disk(n, d)))
    {
        let known: Vec<String> = st.disks.iter().map(DiskStatus::title).collect();
        let candidates: Vec<&str> = st
            .disks
            .iter()
            .flat_map(|d| [d.disk.as_str(), d.kernel_name.as_str()])
            .filter(|s| !s.is_empty())
            .collect();
        let hint = lull_core::suggest::did_you_mean(missing, candidates);
        return Err(StatusError::NoSuchDisk(if known.is_empty() {
            format!(
                "no disk {missing:?} in the daemon's status ({}): it reports no disks yet",
                st.state_file.display()
            )
        } else {
            format!(
                "no disk {missing:?} in the daemon's status (its disks: {}){hint}",
                known.join(", ")
            )
        }));
    }
    st.disks.retain(|d| names.iter().any(|n| names_disk(n, d)));
    Ok(())
}

/// What `lull status` and `lulld status` print: [`render_text`], or the
/// [`Status`] as one JSON object (`json`), of the disks `disks` names
/// ([`select`]; every disk when it is empty).
pub fn report(
    config: &Path,
    json: bool,
    registry: &Registry,
    disks: &[String],
) -> Result<String, StatusError> {
    let mut st = gather(config, registry)?;
    select(&mut st, disks)?;
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
    let (source, exported) = if let Some(addr) = cfg.metrics.listen {
        match fetch_snapshot(addr, Duration::from_secs(5)) {
            Ok((path, snap)) => (Some(format!("http://{addr}{path}")), Some(snap)),
            // A stopped daemon answers nothing: its state file says what
            // its last run left, as without `listen` (the text says that
            // no daemon runs).
            Err(_) if stopped(&cfg) => (None, None),
            Err(e) => {
                return Err(StatusError::Unreachable(format!(
                    "the daemon's metrics endpoint http://{addr}/metrics (`metrics.listen` in {}) is not reachable: {e}; is the daemon running?",
                    config.display()
                )));
            }
        }
    } else if let Some(tf) = &cfg.metrics.textfile {
        let (from, snap) =
            read_textfile(tf, cfg.metrics.snapshot_file().as_deref()).map_err(|e| {
                StatusError::Unreachable(format!(
                    "cannot read the daemon's metrics textfile {} (`metrics.textfile` in {}): {e}",
                    tf.display(),
                    config.display()
                ))
            })?;
        (Some(from.display().to_string()), Some(snap))
    } else {
        (None, None)
    };
    let dry_run = exported.as_ref().map(|s| s.dry_run);
    // A dry run keeps its own state file; without metrics to say so, the
    // files and their locks tell it.
    let dry_run = dry_run.or_else(|| dry_run_by_files(&cfg.state_file, &cfg.dry_run_state_file()));
    let state_file = cfg.state_path(dry_run == Some(true));
    let state = match std::fs::read(&state_file) {
        Ok(bytes) => serde_json::from_slice::<State>(&bytes).map_err(|e| {
            StatusError::Unreachable(format!(
                "{}: not a lull state file: {e}",
                state_file.display()
            ))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && exported.is_some() => {
            State::default()
        }
        Err(e) => {
            return Err(StatusError::Unreachable(format!(
                "cannot read the daemon's state file {} (`state_file` in {}): {e}{}",
                state_file.display(),
                config.display(),
                if exported.is_none() {
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
    let snaps = exported.map_or_else(Vec::new, |s| s.disks);
    let mut disks = from_snapshots(&cfg, &state, &snaps, source.is_some(), now_unix);
    // A running daemon runs in this boot: what it says of a power state
    // from before it (a state file's decision) bounds nothing.
    if daemon_running != Some(false) {
        let booted = now_unix.saturating_sub(crate::timer::boottime().0 / 1_000_000_000);
        since_the_boot(&mut disks, booted);
    }
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
        disks: with_logged_shadows(&cfg, disks),
    })
}

/// Holds the time present disks have been in their power state to the
/// boot at `booted_unix`: drives spin up at power-on, so a state the
/// state file dates from before the boot (an active disk's last decision
/// two days ago, before a reboot an hour ago) began at the boot at the
/// latest; such a time reads "at least" the time since the boot.
fn since_the_boot(disks: &mut [DiskStatus], booted_unix: u64) {
    for d in disks {
        let held = d.power == "active" || d.power == "standby";
        if held && d.since_unix.is_some_and(|t| t < booted_unix) {
            d.since_unix = Some(booted_unix);
            d.since_exact = false;
        }
    }
}

/// Whether the lock files say that no daemon of `cfg` runs: neither the
/// real run's nor the dry run's is held, and at least one is there and
/// free (a daemon, or a dry run, ran here and stopped: a trial's stopped
/// `lulld --dry-run`, before any real run, left only its own). Without a
/// lock file (a daemon never started here, or one older than the lock)
/// it cannot be told, and an endpoint that does not answer stays an
/// error.
fn stopped(cfg: &Config) -> bool {
    use crate::instance::{Holder, holder};
    let locks = [holder(&cfg.state_file), holder(&cfg.dry_run_state_file())];
    !locks.iter().any(|h| matches!(h, Holder::Held(_)))
        && locks.iter().any(|h| matches!(h, Holder::Free))
}

/// Whether the status should come from the dry run's state file `dry`
/// rather than the real one, `real`, when no metrics say which daemon
/// runs: the one whose lock a daemon holds; with neither running, the one
/// written last (`lulld --dry-run` beside hd-idle after a real run, or a
/// real run after a dry one: both files stay). `None`: the real one.
fn dry_run_by_files(real: &Path, dry: &Path) -> Option<bool> {
    use crate::instance::{Holder, holder};
    if matches!(holder(real), Holder::Held(_)) {
        return None;
    }
    if matches!(holder(dry), Holder::Held(_)) {
        return Some(true);
    }
    let written = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (written(real), written(dry)) {
        (None, Some(_)) => Some(true),
        (Some(r), Some(d)) if d > r => Some(true),
        _ => None,
    }
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
        d.shadow =
            crate::activity::shadow_from_log(&cfg.activity, &d.disk, compare_timeout(cfg, &d.disk));
    }
    disks
}

/// The `compare_timeout` of the entry that disk `key` comes from.
fn compare_timeout(cfg: &Config, key: &str) -> Option<Nanos> {
    match cfg.entry_for(key)?.task {
        TaskConfig::Standby {
            compare_timeout, ..
        } => compare_timeout,
        _ => None,
    }
}

/// Why the daemon does not watch the disk of state-file entry `key`
/// whose last decision is `decision` (at `decision_unix`), for a key no
/// `[[disk]]` covers: the words, and since when it is not watched (with
/// whether that is exact, not a lower bound).
fn unwatched_why(key: &str, decision: &str, decision_unix: u64) -> (String, Option<(u64, bool)>) {
    if let Some(serial) = key.strip_prefix(crate::state::PARKED_PREFIX) {
        return (
            format!(
                "the state of drive {serial}, kept until the drive is back under a name the configuration covers (a year at most)"
            ),
            None,
        );
    }
    if is_parked_key(key) {
        return (
            "the state of a drive without a serial number that another drive replaced under its name".into(),
            None,
        );
    }
    let when = (decision_unix > 0).then_some(decision_unix);
    if decision == REMOVED_AT_RELOAD {
        (
            "a reload removed it from the configuration".into(),
            when.map(|t| (t, true)),
        )
    } else if decision == NOT_CONFIGURED_AT_START {
        (
            "not in the configuration since the daemon's start (removed while it was stopped)"
                .into(),
            when.map(|t| (t, false)),
        )
    } else {
        (
            "not in the configuration file (a daemon that has not reloaded since it was removed still watches it)".into(),
            None,
        )
    }
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
            || decision == crate::state::SPUN_UP_AT_BOOT
    }
}

/// Whether the state file records a wake from standby (a spin-up, lull's
/// or another's) at or after `t`.
fn woke_after(st: &DiskState, t: u64) -> bool {
    st.last_wake
        .as_ref()
        .is_some_and(|w| w.unix >= t && crate::state::Wake::from_standby(&w.cause))
}

/// The latest instant the state file (and the metrics' last wake) knows
/// the disk's power state held from, when the daemon did not see the
/// state begin, and whether it is the change itself. Each change the
/// daemon sees is a decision, but one: I/O on a disk lull spun down wakes
/// it without a decision, only a wake (`last_wake`, cause
/// [`crate::state::Wake::SPINUP`]). An active disk's time since its last
/// decision (the standby, hours before) was then no bound at all: a trial
/// read "active for at least 3h26m" of a drive that had spun up 32
/// minutes before, when a restarted daemon had not seen it wake. So a
/// wake from standby after the last decision is the change, for an
/// active disk.
fn last_change(st: &DiskState, standby: bool, wake: Option<(u64, &str)>) -> (Option<u64>, bool) {
    let decided = (st.last_decision_unix > 0).then_some(st.last_decision_unix);
    let woke = wake
        .filter(|&(_, cause)| !standby && crate::state::Wake::from_standby(cause))
        .map(|(t, _)| t);
    match (woke, decided) {
        (Some(w), d) if d.is_none_or(|d| w >= d) => (Some(w), true),
        (_, d) => (d, is_change(&st.last_decision, standby)),
    }
}

/// The disks of `state` and the metrics `samples`, each with its config:
/// [`from_snapshots`] of the samples read into [`snapshots`].
pub fn combine(
    cfg: &Config,
    state: &State,
    samples: &[Sample],
    have_metrics: bool,
    now_unix: u64,
) -> Vec<DiskStatus> {
    from_snapshots(cfg, state, &snapshots(samples), have_metrics, now_unix)
}

/// What an older daemon exported, read back from its Prometheus text:
/// the daemon's [`DaemonSnapshot`] as this one's would be. A daemon that
/// serves `/snapshot.json` or writes the file beside its textfile is read
/// from that instead ([`gather`]).
pub fn from_prometheus(samples: &[Sample]) -> DaemonSnapshot {
    let global = |name: &str| {
        samples
            .iter()
            .find(|s| s.name == name && s.labels.is_empty())
            .map(|s| s.value)
    };
    let mut hooks: Vec<HookSnapshot> = Vec::new();
    for s in samples {
        let runs = s.name == "lull_hook_runs_total";
        if !runs && s.name != "lull_hook_failures_total" {
            continue;
        }
        let (Some(disk), Some(event)) = (s.label("disk"), s.label("event")) else {
            continue;
        };
        let i = match hooks
            .iter()
            .position(|h| h.disk == disk && h.event == event)
        {
            Some(i) => i,
            None => {
                hooks.push(HookSnapshot {
                    disk: disk.to_string(),
                    event: event.to_string(),
                    runs: 0,
                    failures: 0,
                });
                hooks.len() - 1
            }
        };
        let n = s.value as u64;
        if runs {
            hooks[i].runs = n;
        } else {
            hooks[i].failures = n;
        }
    }
    DaemonSnapshot {
        polls: global("lull_polls_total").map_or(0, |v| v as u64),
        dry_run: global("lull_dry_run").is_some_and(|v| v != 0.0),
        disks: snapshots(samples),
        hooks,
    }
}

/// The metrics `samples` read into one [`DiskSnapshot`] per disk, in the
/// order the disks first appear: the one place the status reads the
/// Prometheus text's names and labels. Where a metric has more than one
/// sample for a disk and one is meant, the first counts.
pub fn snapshots(samples: &[Sample]) -> Vec<DiskSnapshot> {
    let mut out: Vec<DiskSnapshot> = Vec::new();
    // The hooks' counters name disks the daemon may not export.
    for s in samples.iter().filter(|s| !s.name.starts_with("lull_hook_")) {
        let Some(key) = s.label("disk") else {
            continue;
        };
        let i = match out.iter().position(|d| d.disk == key) {
            Some(i) => i,
            None => {
                out.push(DiskSnapshot {
                    disk: key.to_string(),
                    shadow: shadow_windows(samples, key).filter(|w| !w.is_empty()),
                    jobs: jobs_from_metrics(samples, key),
                    ..DiskSnapshot::default()
                });
                out.len() - 1
            }
        };
        let d = &mut out[i];
        let v = s.value;
        // A count, a time in Unix seconds, an instant (NaN: none).
        let count = |f: &mut Option<u64>| {
            f.get_or_insert(v as u64);
        };
        let real = |f: &mut Option<f64>| {
            f.get_or_insert(v);
        };
        let instant = |f: &mut Option<Option<u64>>| {
            f.get_or_insert((v.is_finite() && v >= 0.0).then_some(v as u64));
        };
        match s.name.as_str() {
            "lull_disk_present" => {
                d.present.get_or_insert(v != 0.0);
            }
            "lull_in_standby" => {
                d.in_standby.get_or_insert(v != 0.0);
            }
            "lull_task_running" if d.task_running.is_none() => {
                d.task_running = Some(v != 0.0);
                d.task = s.label("task").map(str::to_string);
            }
            "lull_power_state_since_timestamp_seconds" => instant(&mut d.power_since_unix),
            "lull_idle_since_timestamp_seconds" => instant(&mut d.idle_since_unix),
            "lull_next_decision_timestamp_seconds" => instant(&mut d.next_decision_unix),
            "lull_idle_starts_total" => count(&mut d.idle_starts),
            "lull_task_starts_total" => count(&mut d.task_starts),
            "lull_task_stops_total" => count(&mut d.task_stops),
            "lull_spindowns_total" => count(&mut d.spindowns),
            "lull_spinups_total" => count(&mut d.spinups),
            "lull_foreign_spinups_total" => count(&mut d.foreign_spinups),
            "lull_errors_total" => count(&mut d.errors),
            "lull_command_seconds_total" => real(&mut d.command_s),
            "lull_command_exits_total" => count(&mut d.command_exits),
            "lull_standby_seconds_total" => real(&mut d.standby_s),
            "lull_energy_saved_joules" => real(&mut d.energy_saved_j),
            "lull_learned_idle_periods" => count(&mut d.learned_idle_periods),
            "lull_learned_since_timestamp_seconds" => count(&mut d.learned_since_unix),
            "lull_wakeups_total" => {
                if let Some(comm) = s.label("comm") {
                    d.wakeups.push((comm.to_string(), v as u64));
                }
            }
            "lull_last_wake_timestamp_seconds" => {
                d.last_wake
                    .get_or_insert_with(|| (v as u64, s.label("cause").map(str::to_string)));
            }
            "lull_node_gauge" => d.nodes.push(NodeValue {
                node: s.label("node").unwrap_or("").to_string(),
                name: s.label("name").unwrap_or("").to_string(),
                value: v,
            }),
            n if n == crate::metrics::LAST_DECISION && d.last_decision.is_none() => {
                d.last_decision = s.label("text").map(str::to_string);
                d.last_decision_unix = Some(v as u64);
            }
            _ => {}
        }
    }
    out
}

/// The disks of `state` and of the metrics' `snapshots`, each with its
/// config. `have_metrics`: the metrics were read (a daemon's, even one
/// that exported no disk).
pub fn from_snapshots(
    cfg: &Config,
    state: &State,
    snaps: &[DiskSnapshot],
    have_metrics: bool,
    now_unix: u64,
) -> Vec<DiskStatus> {
    let mut keys: Vec<&str> = state.disks.keys().map(String::as_str).collect();
    keys.extend(snaps.iter().map(|s| s.disk.as_str()));
    keys.sort_unstable();
    keys.dedup();
    // In the config's order (a glob's disks by name within it), then the
    // keys no entry names now: the admin reads them as written.
    let place = |key: &str| {
        cfg.entry_for(key)
            .and_then(|e| cfg.disks.iter().position(|d| std::ptr::eq(d, e)))
            .unwrap_or(usize::MAX)
    };
    keys.sort_by_key(|k| place(k));
    let empty = DiskState::default();
    let none = DiskSnapshot::default();
    keys.into_iter()
        .map(|key| {
            let st = state.disks.get(key).unwrap_or(&empty);
            let m = snaps.iter().find(|s| s.disk == key).unwrap_or(&none);
            let counter = |v: Option<u64>, fallback: u64| v.unwrap_or(fallback);
            // An instant of the metrics (`Some(None)`: none) is current;
            // the state file's may be up to `state_interval` old. A
            // daemon without the metric leaves the state file's.
            let instant = |v: Option<Option<u64>>, fallback: Option<u64>| v.unwrap_or(fallback);
            // A parked drive's entry is no entry's disk, whatever glob
            // its key would match.
            let dcfg = cfg.entry_for(key).filter(|_| !is_parked_key(key));
            let backend = configured_backend(dcfg);
            let present = m.present.unwrap_or(st.present);
            let standby = match m.in_standby {
                Some(b) => b,
                // No controller's gauges for the disk (a stopped daemon's
                // last textfile has none, an older daemon's no such
                // gauge): the state file's standby, which the daemon
                // writes at once and clears at the wake. Before, a
                // stopped daemon's textfile made a disk it left asleep
                // read "active". Without metrics, also a file of an older
                // daemon, which has only its last decision's words (I/O
                // that woke the drive from it writes no decision, only a
                // wake: the words are stale once a wake followed them).
                None => {
                    st.standby_unix.is_some()
                        || (!have_metrics
                            && (st.last_decision.starts_with("standby")
                                || st.last_decision.starts_with("found in standby"))
                            && !woke_after(st, st.last_decision_unix))
                }
            };
            // A disk the daemon has no controller for (the metrics carry
            // `lull_task_running` for every one it has) whose key no
            // entry covers: a state-file entry kept from when it was
            // watched, not its state now.
            let unwatched = (dcfg.is_none() && m.task_running.is_none())
                .then(|| unwatched_why(key, &st.last_decision, st.last_decision_unix));
            let power = if unwatched.is_some() {
                "unwatched"
            } else if !present {
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
            let mut counted: Vec<(&str, u64)> =
                m.wakeups.iter().map(|(c, n)| (c.as_str(), *n)).collect();
            if counted.is_empty() {
                counted = st.wakeups.iter().map(|(c, &n)| (c.as_str(), n)).collect();
            }
            // A daemon older than the tally by work (its state file, or
            // the last textfile it left) counts kernel workers by
            // instance: counted by their work, as the daemon counts them
            // now ([`crate::wakeup::tally`]).
            let wakeups = crate::wakeup::tally(counted);
            // The metric is current; the state file may lag a little
            // (not after a spin-up, which it saves at once), so the
            // suspects count only when it tells of the same wake.
            let (last_wake_unix, last_wake_cause) = match &m.last_wake {
                Some((t, cause)) => (Some(*t), cause.clone()),
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
            // When the power state began, if the daemon saw it begin;
            // else the state file's last decision bounds it (exact when
            // that decision is the change). A metrics endpoint of an
            // older daemon has neither.
            let since_metric = m.power_since_unix;
            let power_since = match since_metric {
                Some(t) => t.filter(|&t| t > 0),
                // Without the gauge, the state file's standby began when
                // it says.
                None => st.standby_unix.filter(|_| standby),
            };
            // NaN: the daemon did not see the state begin, whatever the
            // state file's last decision says (a drive asleep when first
            // asked was "found in standby").
            let unseen = since_metric.is_some() && power_since.is_none();
            // Since when the disk is in `power`, and whether exactly: a
            // disk not watched since a reload or start that said so; an
            // absent one since the daemon saw it vanish (the metrics say
            // when, or the state file of a daemon that records it), or
            // unknown (an older daemon's state file: its last decision
            // came before the vanish, and bounds nothing); else as above.
            let (since_unix, since_exact) = match &unwatched {
                Some((_, since)) => (since.map(|(t, _)| t), since.is_some_and(|(_, e)| e)),
                None if !present => {
                    let since = power_since.or(st.vanished_unix.filter(|_| since_metric.is_none()));
                    (since, since.is_some())
                }
                None => {
                    let (bound, is_the_change) =
                        last_change(st, standby, last_wake_unix.zip(last_wake_cause.as_deref()));
                    (
                        power_since.or(bound),
                        power_since.is_some() || (!unseen && is_the_change),
                    )
                }
            };
            let watched = unwatched.is_none();
            // The last decision's words: the metrics' (current) over the
            // state file's (up to `state_interval` old).
            let last_decision = m
                .last_decision
                .clone()
                .unwrap_or_else(|| st.last_decision.clone());
            DiskStatus {
                disk: key.to_string(),
                kernel_name: st.kernel_name.clone(),
                task: m
                    .task
                    .clone()
                    .or_else(|| dcfg.map(|d| d.task.name().to_string())),
                power: power.into(),
                since_unix,
                since_exact,
                // Nothing runs on an absent disk's behalf: a standby the
                // vanish ended (counted as a spin-up) is not "running", as
                // a trial read it.
                task_running: m
                    .task_running
                    .map(|r| r && (present || m.task.as_deref() != Some("standby"))),
                last_decision,
                idle_since_unix: instant(m.idle_since_unix, st.idle_since_unix)
                    .filter(|_| present && watched),
                next_decision_unix: instant(m.next_decision_unix, st.next_decision_unix)
                    .filter(|_| present && watched),
                spindowns: counter(m.spindowns, st.spindowns),
                spinups: counter(m.spinups, st.spinups),
                foreign_spinups: counter(m.foreign_spinups, st.foreign_spinups),
                errors: counter(m.errors, st.errors),
                task_starts: counter(m.task_starts, st.task_starts),
                command_s: m.command_s.unwrap_or(st.command_s),
                command_exits: counter(m.command_exits, st.command_exits),
                standby_s: m.standby_s.unwrap_or(st.standby_s),
                wear,
                nodes: m
                    .nodes
                    .iter()
                    .map(|n| NodeGauge::new(&n.node, &n.name, n.value))
                    .collect(),
                learned_idle_periods: m
                    .learned_idle_periods
                    .or(st.learned.as_ref().map(|l| l.idle_periods)),
                learned_since_unix: m
                    .learned_since_unix
                    .or(st.learned.as_ref().map(|l| l.since_unix))
                    .filter(|&t| t > 0),
                wakeups,
                last_wake_unix,
                last_wake_cause,
                last_wake_by,
                preset: st.drive.as_ref().map(|d| d.preset.clone()),
                preset_source: st.drive.as_ref().map(|d| d.preset_source.clone()),
                breakeven_s: st.drive.as_ref().map(|d| d.breakeven_s),
                // Not watched: why, in the field that says why the daemon
                // does not spin a disk down.
                left_alone: unwatched
                    .map(|(why, _)| why)
                    .or_else(|| st.drive.as_ref().and_then(|d| d.left_alone.clone())),
                drive_power: st.identity.as_ref().and_then(|i| i.power_management()),
                // A backend the config names is what reaches the drive;
                // a probe remembered from `backend = "auto"` is not (a
                // trial's hdparm disks read "none … left alone" while
                // lull spun them down).
                transport: backend.map_or_else(
                    || {
                        st.transport
                            .as_ref()
                            .map(|t| t.transport.name().to_string())
                    },
                    |b| Some(format!("{b} (the config's backend)")),
                ),
                transport_why: st
                    .transport
                    .as_ref()
                    .filter(|_| backend.is_none())
                    .map(|t| t.why.clone())
                    .filter(|w| !w.is_empty()),
                spins_itself_down: st
                    .identity
                    .as_ref()
                    .is_some_and(crate::identify::Identity::spins_itself_down),
                standby_fix: st
                    .identity
                    .as_ref()
                    .and_then(crate::identify::Identity::own_standby_fix),
                shadow: shadow_of(m.shadow.as_deref(), st)
                    .or_else(|| st.shadow.clone())
                    .map(without_empty_ratios),
                jobs: m.jobs.clone(),
            }
        })
        .collect()
}

/// Whether even the oracle saved nothing in window `w` (no idle period
/// outlasted the break-even time): both ratios are then 0/0.
pub(super) fn nothing_to_save(w: &lull_activity::shadow::WindowReport) -> bool {
    w.policy("oracle")
        .is_some_and(|o| o.energy_j >= w.baseline_energy_j)
}

/// The report with no ratio where there was nothing to save (the oracle
/// saved nothing): both would be 0/0, and the metrics' conventional 1 read
/// in the JSON as lull matching the best fixed timeout (an audit: the text
/// said "no ratio" beside `"excess_vs_best_fixed": 1.0`).
fn without_empty_ratios(mut r: lull_activity::ShadowReport) -> lull_activity::ShadowReport {
    for w in &mut r.windows {
        if nothing_to_save(w) {
            w.excess_vs_best_fixed = None;
            w.gain_vs_clairvoyant = None;
        }
    }
    r
}

/// The shadow evaluation's windows of disk `key` in the metrics
/// `samples`; `None` when the metrics do not carry them whole (a daemon
/// from before `lull_shadow_observed_seconds` has none: an empty list).
fn shadow_windows(
    samples: &[Sample],
    key: &str,
) -> Option<Vec<lull_activity::shadow::WindowReport>> {
    use lull_activity::shadow::{PolicyFigures, WindowReport};
    let of = |name: &'static str| {
        samples
            .iter()
            .filter(move |s| s.name == name && s.label("disk") == Some(key))
    };
    let mut windows = Vec::new();
    for observed in of("lull_shadow_observed_seconds") {
        let window = observed.label("window")?;
        let in_window = |s: &&Sample| s.label("window") == Some(window);
        let per_window = |name| of(name).find(in_window).map(|s| s.value);
        let baseline = per_window("lull_shadow_baseline_energy_joules")?;
        let mut policies = Vec::new();
        for e in of("lull_shadow_energy_joules").filter(in_window) {
            let policy = e.label("policy")?;
            let per_policy = |name| {
                of(name)
                    .find(|s| in_window(s) && s.label("policy") == Some(policy))
                    .map(|s| s.value)
            };
            policies.push(PolicyFigures {
                policy: policy.to_string(),
                timeout_s: per_policy("lull_shadow_timeout_seconds"),
                saved_wh: (baseline - e.value) / 3600.0,
                energy_j: e.value,
                spinups: per_policy("lull_shadow_spinups_total")? as u64,
            });
        }
        windows.push(WindowReport {
            window: window.to_string(),
            observed_s: observed.value,
            // A daemon from before it: none said.
            dry_run_s: per_window("lull_shadow_dry_run_seconds").unwrap_or(0.0),
            idle_periods: per_window("lull_shadow_idle_periods")? as u64,
            baseline_energy_j: baseline,
            policies,
            excess_vs_best_fixed: per_window("lull_shadow_excess_vs_best_fixed"),
            gain_vs_clairvoyant: per_window("lull_shadow_gain_vs_clairvoyant"),
            wear_budget_per_day: per_window("lull_shadow_wear_budget_per_day")
                .filter(|n| n.is_finite() && *n >= 1.0 && *n <= f64::from(u32::MAX))
                .map(|n| n as u32),
        });
    }
    Some(windows)
}

/// The shadow evaluation of a disk from its exported `windows`, current
/// to the second where the state file's is up to `state_interval` old;
/// `None` when the metrics do not carry it whole (no metrics, no shadow,
/// or a daemon from before `lull_shadow_observed_seconds`). The drive and
/// B come from the state file, which has them from the disk's start.
fn shadow_of(
    windows: Option<&[lull_activity::shadow::WindowReport]>,
    st: &DiskState,
) -> Option<lull_activity::ShadowReport> {
    let windows = windows?.to_vec();
    let (drive, breakeven_s) = match (&st.shadow, &st.drive) {
        (Some(r), _) => (r.drive.clone(), r.breakeven_s),
        (None, Some(d)) => (d.preset.clone(), d.breakeven_s),
        (None, None) => return None,
    };
    (!windows.is_empty()).then_some(lull_activity::ShadowReport {
        drive,
        breakeven_s,
        windows,
    })
}

/// The jobs of disk `key` in the metrics `samples`, in the order they
/// first appear.
fn jobs_from_metrics(samples: &[Sample], key: &str) -> Vec<JobSnapshot> {
    let mut jobs: Vec<JobSnapshot> = Vec::new();
    for s in samples.iter().filter(|s| s.label("disk") == Some(key)) {
        let Some(name) = s.label("job") else {
            continue;
        };
        let i = match jobs.iter().position(|j| j.name == name) {
            Some(i) => i,
            None => {
                jobs.push(JobSnapshot {
                    name: name.to_string(),
                    admitted: false,
                    idle_s: 0.0,
                    deadlines_missed: 0,
                    fits_observed: None,
                });
                jobs.len() - 1
            }
        };
        let j = &mut jobs[i];
        match s.name.as_str() {
            "lull_job_admitted" => j.admitted = s.value != 0.0,
            "lull_job_idle_seconds_total" => j.idle_s = s.value,
            "lull_job_deadlines_missed_total" => j.deadlines_missed = s.value as u64,
            "lull_job_fits_observed" => {
                j.fits_observed = (!s.value.is_nan()).then_some(s.value != 0.0)
            }
            _ => {}
        }
    }
    jobs
}

mod text;
pub use text::render_text;
// The tests reach the text's helpers through `super::*`.
#[cfg(test)]
use text::*;

#[cfg(test)]
mod tests;
