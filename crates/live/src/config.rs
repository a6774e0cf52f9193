//! The daemon's TOML configuration (SPEC §6.1), validated up front.
//!
//! Every error names the file, the line and the key (`disk[1].network`),
//! because an admin reads it in `systemctl status` and must find the typo
//! without reading code. Semantic checks (network specs, task names,
//! devices, command paths, file permissions) run at load time, so
//! `lull daemon --check` and a SIGHUP reload catch exactly what a start
//! would.
//!
//! ```toml
//! state_file = "/var/lib/lull/state.json"
//! poll = "1s"
//! state_interval = "1m"
//! [metrics]
//! textfile = "/var/lib/node_exporter/lull.prom"
//! listen = "127.0.0.1:9733"
//! [[disk]]
//! device = "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX"
//! network = "adapt-timer-arith-geom(step=100ms) + fixed(10s)"
//! task = "standby"
//! backend = "hdparm"
//! max_spindowns_per_day = 48
//! preset = "wd-red-plus"
//! ```
//!
//! Keys of a `[[disk]]`: `device` (required: kernel name, `/dev/…` path,
//! `/dev/disk/by-id/…` link, or a glob of either), `network` (default
//! `timer(10m)`, hd-idle's default timeout), `task` (`standby` | `flush` |
//! `command`, default `standby`), `policy` (stop policy, default
//! `earlier-of`), `preset` (power model of `lull-tasks`: standby is skipped
//! when the predicted idle time is below its break-even, and the energy
//! saved is estimated in the metrics), `backend` (`auto` | `sgio` |
//! `ata16` | `ata12` | `scsi` | `hdparm`, see [`crate::transport`]),
//! `max_spindowns_per_day` (default 48, a rolling 24 h budget; 0 never spins
//! down), `command` (argv, absolute program path, no shell) and `interval`
//! (least time between two runs of a command that exited, default `0s`).
//!
//! **Several jobs on one disk** (issue 19): `task = "jobs"` with one
//! `[[disk.job]]` table per job, each with `name`, `command` (as above) and
//! `reserve`, the job's ranked requests in `lull plan --job` syntax
//! (`"2h/day:step=60s,1h/day"`, `"5m/hour"`, `:extra` to take unreserved
//! idle time too; see `lull_detectors::plan`), and on the disk
//! `best_effort` (share of idle time kept for unreserved work, default
//! 0.1) and `assume_idle` (the usable idle time per hour admission control
//! plans on, default `30m`: the daemon has no history of the disk when it
//! starts, see `crate::daemon`). The jobs are admitted in file order.
//!
//! ```toml
//! [[disk]]
//! device = "sdb"
//! task = "jobs"
//! assume_idle = "40m"
//! [[disk.job]]
//! name = "scrub"
//! command = ["/usr/local/bin/scrub", "/dev/sdb"]
//! reserve = "2h/day:step=60s,1h/day:step=60s"
//! [[disk.job]]
//! name = "trim"
//! command = ["/sbin/fstrim", "/srv"]
//! reserve = "5m/hour"
//! ```
//!
//! `poll` (SPEC §6.1) defaults to a tenth of the shortest time scale of
//! the disks' networks, within 1 s and 60 s ([`derived_poll`]).
//!
//! Top-level keys besides SPEC §6.1's: `power_check` (default `60s`, `0s`
//! never: how often the power state of standby disks is read, by CHECK
//! POWER MODE or REQUEST SENSE, neither of which wakes a disk; not with
//! `hdparm`), `diskstats` (default
//! `/proc/diskstats`) and `sysfs` (default `/sys`) for tests and
//! containers.
//!
//! **Event hooks** (issue 20): `on_spindown`, `on_spinup`, `on_wake`,
//! `on_task_start`, `on_task_stop`, each an argv checked like `command`,
//! at the top level (every disk's default) or in a `[[disk]]` (replacing
//! the default for that event), and `hook_timeout` (top level, default
//! `10s`). See [`crate::hooks`] and docs/daemon.md for the events and
//! their environment.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::ops::Range;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::hooks::{HookEvent, Hooks};
use lull_core::actuator::StopPolicy;
use lull_core::registry::Registry;
use lull_core::spec::{NetworkSpec, NodeKind};
use lull_core::time::{Nanos, parse_duration};
use lull_detectors::plan::{JobSpec, parse_job};
use lull_tasks::PowerModel;
use serde::Deserialize;
use toml::Spanned;

/// A configuration error: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The key (`poll`, `disk[0].network`), when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(k) = &self.key {
            write!(f, ": key `{k}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file it came from.
    pub path: PathBuf,
    /// Where the state is kept across restarts.
    pub state_file: PathBuf,
    /// How often diskstats is read: `poll`, or [`derived_poll`] of the
    /// disks when the file does not say.
    pub poll: Nanos,
    /// `poll` was derived from the disks' networks ([`derived_poll`]).
    pub poll_derived: bool,
    /// How often, at most, counters that changed are written to the state
    /// file (`state_interval`, default 1 min): what a crash may lose of
    /// them, against a write and two `fsync`s on the system disk each time.
    /// Spin-downs, spin-ups, wakes and commands' pids are written at once.
    pub state_interval: Nanos,
    /// How often the power state of standby disks is read with CHECK POWER
    /// MODE over SG_IO (never wakes a disk; zero: never), to see spin-ups
    /// and spin-downs the daemon did not cause.
    pub power_check: Nanos,
    /// The diskstats file.
    pub diskstats: PathBuf,
    /// The sysfs root (partitions and holders).
    pub sysfs: PathBuf,
    /// Metrics outputs.
    pub metrics: MetricsConfig,
    /// The disks, in file order.
    pub disks: Vec<DiskConfig>,
    /// The global hooks (`on_spindown`… at the top level): the defaults
    /// of every disk.
    pub hooks: Hooks,
    /// How long a hook may run before it is killed (`hook_timeout`).
    pub hook_timeout: Nanos,
}

/// Where metrics go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricsConfig {
    /// A node_exporter textfile, rewritten atomically.
    pub textfile: Option<PathBuf>,
    /// An HTTP endpoint (`GET /metrics`).
    pub listen: Option<SocketAddr>,
}

/// One `[[disk]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskConfig {
    /// Its position among the `[[disk]]` tables.
    pub index: usize,
    /// The line of its `device` key.
    pub line: usize,
    /// The device as written.
    pub device: String,
    /// The network spec (one line).
    pub network: String,
    /// The stop policy.
    pub policy: StopPolicy,
    /// The idle task.
    pub task: TaskConfig,
    /// The power model, if one was named.
    pub power: Option<PowerModel>,
    /// The break-even time B the network is built with (`timer(2B)`, the
    /// B-scaled defaults): see [`task_breakeven`].
    pub breakeven: Nanos,
    /// Its hooks, the global ones filling the events it leaves unset.
    pub hooks: Hooks,
    /// The network's time scale ([`check_network`]): what a derived
    /// default `poll` is a tenth of.
    pub time_scale: Nanos,
}

/// The break-even time B of a disk's task: for `standby`, its power
/// model's (`preset`, or lull-tasks' default preset) spin-up energy over
/// the power saved asleep; for `flush` and `command`, the default service
/// model's random 8 KiB access time, the time scale of the work they do in
/// idle periods.
pub fn task_breakeven(task: &TaskConfig, power: Option<&PowerModel>) -> Nanos {
    match task {
        TaskConfig::Standby { .. } => {
            let p = power.cloned().unwrap_or_else(PowerModel::paper);
            Nanos::from_secs_f64(p.break_even())
        }
        TaskConfig::Flush | TaskConfig::Command { .. } | TaskConfig::Jobs { .. } => {
            lull_tasks::device::ServiceModel::preset(lull_tasks::device::DEFAULT_PRESET)
                .map_or(Nanos::from_millis(10), |m| m.breakeven())
        }
    }
}

/// `registry` set up for a disk whose task is `task` with break-even
/// `breakeven`: durations relative to B resolve against it, and for the
/// tasks that only compete with the foreground for the disk (`flush`,
/// `command`, `jobs`) the named network `auto` is the background one
/// ([`lull_detectors::AUTO_BACKGROUND_SPEC`]), as in a replay of
/// writeback or cleaning.
pub fn disk_registry(registry: &Registry, task: &TaskConfig, breakeven: Nanos) -> Registry {
    let mut r = registry.clone().with_breakeven(breakeven);
    if !matches!(task, TaskConfig::Standby { .. }) {
        lull_detectors::use_background_auto(&mut r);
    }
    r
}

impl DiskConfig {
    /// Whether `other` configures the disk the same way, wherever in the
    /// file it is written (a reload keeps such a disk running; its hooks
    /// are then taken from `other`, they are not part of the comparison).
    pub fn same_settings(&self, other: &DiskConfig) -> bool {
        self.device == other.device
            && self.network == other.network
            && self.policy == other.policy
            && self.task == other.task
            && self.power == other.power
            && self.breakeven == other.breakeven
    }
}

pub use crate::drive::Backend;

/// The live idle task of a disk.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskConfig {
    /// Spin the drive down.
    Standby {
        /// How.
        backend: Backend,
        /// Rolling 24 h budget of spin-downs.
        max_spindowns_per_day: u32,
    },
    /// `syncfs` the disk's mounted file systems.
    Flush,
    /// Run a program; SIGSTOP when busy, SIGCONT when idle again.
    Command {
        /// Program and arguments (no shell).
        argv: Vec<String>,
        /// Least time between a run's exit and the next start.
        interval: Nanos,
    },
    /// Several commands sharing the disk's idle time by reservation.
    Jobs {
        /// The jobs, in file order (their admission order).
        jobs: Vec<JobConfig>,
        /// Share of the idle time kept for unreserved work.
        best_effort: f64,
        /// Usable idle time per hour assumed by admission control.
        assume_idle: Nanos,
    },
}

/// One `[[disk.job]]` of a `jobs` disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobConfig {
    /// Its name (unique on the disk).
    pub name: String,
    /// Program and arguments (no shell).
    pub argv: Vec<String>,
    /// The ranked requests and whether it takes unreserved time.
    pub spec: JobSpec,
}

/// The default share of idle time kept for unreserved work.
pub const DEFAULT_BEST_EFFORT: f64 = 0.1;
/// The usable idle time per hour admission control assumes by default.
pub const DEFAULT_ASSUME_IDLE: Nanos = Nanos::from_secs(1800);

impl TaskConfig {
    /// The task's name as configured.
    pub fn name(&self) -> &'static str {
        match self {
            TaskConfig::Standby { .. } => "standby",
            TaskConfig::Flush => "flush",
            TaskConfig::Command { .. } => "command",
            TaskConfig::Jobs { .. } => "jobs",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    state_file: Option<Spanned<String>>,
    poll: Option<Spanned<String>>,
    state_interval: Option<Spanned<String>>,
    power_check: Option<Spanned<String>>,
    diskstats: Option<String>,
    sysfs: Option<String>,
    metrics: Option<RawMetrics>,
    hook_timeout: Option<Spanned<String>>,
    on_spindown: Option<Spanned<Vec<String>>>,
    on_spinup: Option<Spanned<Vec<String>>>,
    on_wake: Option<Spanned<Vec<String>>>,
    on_task_start: Option<Spanned<Vec<String>>>,
    on_task_stop: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    disk: Vec<RawDisk>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMetrics {
    textfile: Option<Spanned<String>>,
    listen: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDisk {
    device: Spanned<String>,
    network: Option<Spanned<String>>,
    task: Option<Spanned<String>>,
    policy: Option<Spanned<String>>,
    preset: Option<Spanned<String>>,
    backend: Option<Spanned<String>>,
    max_spindowns_per_day: Option<Spanned<i64>>,
    command: Option<Spanned<Vec<String>>>,
    interval: Option<Spanned<String>>,
    job: Option<Spanned<Vec<RawJob>>>,
    best_effort: Option<Spanned<f64>>,
    assume_idle: Option<Spanned<String>>,
    on_spindown: Option<Spanned<Vec<String>>>,
    on_spinup: Option<Spanned<Vec<String>>>,
    on_wake: Option<Spanned<Vec<String>>>,
    on_task_start: Option<Spanned<Vec<String>>>,
    on_task_stop: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    name: Spanned<String>,
    command: Option<Spanned<Vec<String>>>,
    reserve: Option<Spanned<String>>,
}

/// The default network: `auto`, lull's learning network for the disk's
/// break-even time B (Helmbold et al.'s `share` timeout, acting at once on
/// idle periods it has learned will be long; see `lull_detectors`). On the
/// built-in workloads it spends less energy above the optimum than the
/// best fixed timeout chosen in hindsight wherever idle periods have
/// structure (docs/results.md). `timer(4B)` is the simplest fixed
/// alternative with a bounded cost.
pub const DEFAULT_NETWORK: &str = "auto";
/// How long a hook may run by default before it is killed.
pub const DEFAULT_HOOK_TIMEOUT: Nanos = Nanos::from_secs(10);
/// How often standby disks' power state is read by default.
pub const DEFAULT_POWER_CHECK: Nanos = Nanos::from_secs(60);

/// `state_interval` when not set: counters reach the state file at most a
/// minute late, so the daemon of a quiet NAS does not write to its system
/// disk every few seconds (an `fsync` every ten polls kept that disk, and
/// a fifth of the daemon's CPU time, busy under steady I/O).
pub const DEFAULT_STATE_INTERVAL: Nanos = Nanos::from_secs(60);
/// The default wear budget.
pub const DEFAULT_SPINDOWNS_PER_DAY: u32 = 48;

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }
    fn err(&self, span: Option<Range<usize>>, key: &str, msg: impl Into<String>) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            line: span.map(|s| self.line(&s)),
            key: Some(key.to_string()),
            message: msg.into(),
        }
    }
}

impl Config {
    /// Reads and validates `path`. `registry` knows the network components.
    pub fn load(path: &Path, registry: &Registry) -> Result<Config, ConfigError> {
        let plain = |msg: String| ConfigError {
            file: path.to_path_buf(),
            line: None,
            key: None,
            message: msg,
        };
        let text = std::fs::read_to_string(path).map_err(|e| plain(format!("cannot read: {e}")))?;
        if running_as_root() {
            check_not_writable_by_others(path)
                .map_err(|m| plain(format!("refusing the config file: {m}")))?;
        }
        Config::parse(path, &text, registry)
    }

    /// Validates `text` as if read from `path` (no permission checks on the
    /// file itself).
    pub fn parse(path: &Path, text: &str, registry: &Registry) -> Result<Config, ConfigError> {
        let cx = Ctx { path, text };
        let raw: RawConfig = toml::from_str(text).map_err(|e| toml_error(&cx, &e))?;
        let state_file = match &raw.state_file {
            Some(s) if s.get_ref().trim().is_empty() => {
                return Err(cx.err(Some(s.span()), "state_file", "must not be empty"));
            }
            Some(s) => PathBuf::from(s.get_ref()),
            None => PathBuf::from("/var/lib/lull/state.json"),
        };
        let poll = match &raw.poll {
            Some(p) => {
                let d = parse_duration(p.get_ref())
                    .map_err(|e| cx.err(Some(p.span()), "poll", e.to_string()))?;
                if d < Nanos::from_millis(10) || d > Nanos::from_secs(3600) {
                    return Err(cx.err(Some(p.span()), "poll", "must be between 10ms and 1h"));
                }
                d
            }
            None => Nanos::ZERO, // Derived from the disks' networks below.
        };
        let state_interval = match &raw.state_interval {
            Some(p) => {
                let d = parse_duration(p.get_ref())
                    .map_err(|e| cx.err(Some(p.span()), "state_interval", e.to_string()))?;
                if d < Nanos::from_secs(1) || d > Nanos::from_secs(3600) {
                    return Err(cx.err(
                        Some(p.span()),
                        "state_interval",
                        "must be between 1s and 1h",
                    ));
                }
                d
            }
            None => DEFAULT_STATE_INTERVAL,
        };
        let power_check = match &raw.power_check {
            Some(p) => parse_duration(p.get_ref())
                .map_err(|e| cx.err(Some(p.span()), "power_check", e.to_string()))?,
            None => DEFAULT_POWER_CHECK,
        };
        let mut metrics = MetricsConfig::default();
        if let Some(m) = &raw.metrics {
            if let Some(t) = &m.textfile {
                metrics.textfile = Some(PathBuf::from(t.get_ref()));
            }
            if let Some(l) = &m.listen {
                metrics.listen = Some(
                    parse_listen(l.get_ref())
                        .map_err(|msg| cx.err(Some(l.span()), "metrics.listen", msg))?,
                );
            }
        }
        let hook_timeout = match &raw.hook_timeout {
            Some(t) => {
                let d = parse_duration(t.get_ref())
                    .map_err(|e| cx.err(Some(t.span()), "hook_timeout", e.to_string()))?;
                if d < Nanos::from_millis(10) {
                    return Err(cx.err(Some(t.span()), "hook_timeout", "must be at least 10ms"));
                }
                d
            }
            None => DEFAULT_HOOK_TIMEOUT,
        };
        let global_hooks = hooks(
            &cx,
            "",
            [
                &raw.on_spindown,
                &raw.on_spinup,
                &raw.on_wake,
                &raw.on_task_start,
                &raw.on_task_stop,
            ],
        )?;
        let mut disks = Vec::with_capacity(raw.disk.len());
        for (i, d) in raw.disk.iter().enumerate() {
            let mut dc = disk(&cx, i, d, registry)?;
            dc.hooks = dc.hooks.or(&global_hooks);
            disks.push(dc);
        }
        for (i, d) in disks.iter().enumerate() {
            if let Some(prev) = disks[..i].iter().find(|p| p.device == d.device) {
                return Err(ConfigError {
                    file: path.to_path_buf(),
                    line: Some(d.line),
                    key: Some(format!("disk[{i}].device")),
                    message: format!(
                        "`{}` is already configured by disk[{}] (line {})",
                        d.device, prev.index, prev.line
                    ),
                });
            }
        }
        let poll_derived = poll == Nanos::ZERO;
        let poll = if poll_derived {
            derived_poll(&disks)
        } else {
            poll
        };
        Ok(Config {
            path: path.to_path_buf(),
            state_file,
            poll,
            poll_derived,
            state_interval,
            power_check,
            diskstats: PathBuf::from(raw.diskstats.as_deref().unwrap_or("/proc/diskstats")),
            sysfs: PathBuf::from(raw.sysfs.as_deref().unwrap_or("/sys")),
            metrics,
            disks,
            hooks: global_hooks,
            hook_timeout,
        })
    }
}

/// The `on_*` hook keys of a table (`prefix`: `""` at the top level,
/// `disk[i].` in a disk), each checked like a `command`.
fn hooks(
    cx: &Ctx<'_>,
    prefix: &str,
    raw: [&Option<Spanned<Vec<String>>>; 5],
) -> Result<Hooks, ConfigError> {
    let mut h = Hooks::default();
    for ((slot, r), ev) in h.argv.iter_mut().zip(raw).zip(HookEvent::ALL) {
        if let Some(a) = r {
            let argv: Vec<String> = a.get_ref().clone();
            check_command(&argv)
                .map_err(|m| cx.err(Some(a.span()), &format!("{prefix}{}", ev.key()), m))?;
            *slot = Some(argv);
        }
    }
    Ok(h)
}

fn toml_error(cx: &Ctx<'_>, e: &toml::de::Error) -> ConfigError {
    let line = e.span().map(|s| cx.line(&s));
    // Name the key written on the offending line, if it is `key = value`.
    let key = line.and_then(|l| {
        let text = cx.text.lines().nth(l - 1)?;
        let (k, _) = text.split_once('=')?;
        let k = k.trim().trim_matches('"');
        (!k.is_empty() && !k.starts_with('[') && !k.starts_with('#'))
            .then(|| format!("{}{k}", table_prefix(cx.text, l)))
    });
    ConfigError {
        file: cx.path.to_path_buf(),
        line,
        key,
        message: e.message().trim().to_string(),
    }
}

/// The key prefix of the table line `line` (1-based) is in: `disk[2].`
/// inside the third `[[disk]]`, `metrics.` inside `[metrics]`, nothing at
/// the top level.
fn table_prefix(text: &str, line: usize) -> String {
    let mut prefix = String::new();
    let mut disks = 0;
    let mut jobs = 0;
    for l in text.lines().take(line.saturating_sub(1)) {
        let l = l.trim();
        let header = l.split('#').next().unwrap_or("").trim();
        if header.starts_with("[[") {
            let name = header.trim_matches(['[', ']']).trim();
            if name == "disk" {
                prefix = format!("disk[{disks}].");
                disks += 1;
                jobs = 0;
            } else if name == "disk.job" {
                prefix = format!("disk[{}].job[{jobs}].", disks.max(1) - 1);
                jobs += 1;
            } else {
                prefix = format!("{name}.");
            }
        } else if header.starts_with('[') {
            prefix = format!("{}.", header.trim_matches(['[', ']']).trim());
        }
    }
    prefix
}

fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.trim().trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    s.trim().parse::<SocketAddr>().map_err(|_| {
        format!("{s:?} is not an address: write a port (9733, bound to 127.0.0.1) or ADDRESS:PORT")
    })
}

fn disk(
    cx: &Ctx<'_>,
    i: usize,
    d: &RawDisk,
    registry: &Registry,
) -> Result<DiskConfig, ConfigError> {
    let key = |k: &str| format!("disk[{i}].{k}");
    let device = d.device.get_ref().trim().to_string();
    if device.is_empty() {
        return Err(cx.err(Some(d.device.span()), &key("device"), "must not be empty"));
    }
    if device.starts_with('/') && !device.starts_with("/dev/") {
        return Err(cx.err(
            Some(d.device.span()),
            &key("device"),
            "a device path must be under /dev/",
        ));
    }
    let policy = match &d.policy {
        Some(p) => p
            .get_ref()
            .parse::<StopPolicy>()
            .map_err(|e| cx.err(Some(p.span()), &key("policy"), e.to_string()))?,
        None => StopPolicy::EarlierOf,
    };
    let power = match &d.preset {
        Some(p) => Some(
            p.get_ref()
                .parse::<PowerModel>()
                .map_err(|e| cx.err(Some(p.span()), &key("preset"), e.to_string()))?,
        ),
        None => None,
    };
    let task_name = d.task.as_ref().map_or("standby", |t| t.get_ref().as_str());
    let task_span = d.task.as_ref().map(|t| t.span());
    let only_for = |name: &str, span: Range<usize>, for_task: &str| {
        cx.err(
            Some(span),
            &key(name),
            format!("only applies to task = \"{for_task}\" (this disk's task is \"{task_name}\")"),
        )
    };
    if task_name != "standby" {
        if let Some(b) = &d.backend {
            return Err(only_for("backend", b.span(), "standby"));
        }
        if let Some(b) = &d.max_spindowns_per_day {
            return Err(only_for("max_spindowns_per_day", b.span(), "standby"));
        }
    }
    if task_name != "command" {
        if let Some(c) = &d.command {
            return Err(only_for("command", c.span(), "command"));
        }
        if let Some(c) = &d.interval {
            return Err(only_for("interval", c.span(), "command"));
        }
    }
    if task_name != "jobs" {
        if let Some(j) = &d.job {
            return Err(only_for("job", j.span(), "jobs"));
        }
        if let Some(b) = &d.best_effort {
            return Err(only_for("best_effort", b.span(), "jobs"));
        }
        if let Some(a) = &d.assume_idle {
            return Err(only_for("assume_idle", a.span(), "jobs"));
        }
    }
    let task = match task_name {
        "standby" => {
            let backend = match d.backend.as_ref() {
                None => Backend::Auto,
                Some(b) => match b.get_ref().as_str() {
                    "auto" => Backend::Auto,
                    "hdparm" => Backend::Hdparm,
                    "sgio" => Backend::Sgio,
                    "ata16" => Backend::Ata16,
                    "ata12" => Backend::Ata12,
                    "scsi" => Backend::Scsi,
                    other => {
                        return Err(cx.err(
                            Some(b.span()),
                            &key("backend"),
                            format!(
                                "unknown backend {other:?} (expected \"auto\", \"sgio\", \"ata16\", \"ata12\", \"scsi\" or \"hdparm\")"
                            ),
                        ));
                    }
                },
            };
            let max = match &d.max_spindowns_per_day {
                None => DEFAULT_SPINDOWNS_PER_DAY,
                Some(m) => u32::try_from(*m.get_ref()).map_err(|_| {
                    cx.err(
                        Some(m.span()),
                        &key("max_spindowns_per_day"),
                        "must be a whole number from 0 to 4294967295",
                    )
                })?,
            };
            TaskConfig::Standby {
                backend,
                max_spindowns_per_day: max,
            }
        }
        "flush" => TaskConfig::Flush,
        "command" => {
            let Some(c) = &d.command else {
                return Err(cx.err(
                    task_span,
                    &key("command"),
                    "task = \"command\" needs command = [\"/path/to/program\", \"arg\", …]",
                ));
            };
            let argv = c.get_ref().clone();
            check_command(&argv).map_err(|m| cx.err(Some(c.span()), &key("command"), m))?;
            let interval = match &d.interval {
                Some(s) => parse_duration(s.get_ref())
                    .map_err(|e| cx.err(Some(s.span()), &key("interval"), e.to_string()))?,
                None => Nanos::ZERO,
            };
            TaskConfig::Command { argv, interval }
        }
        "jobs" => jobs(cx, i, d, task_span)?,
        other => {
            return Err(cx.err(
                task_span,
                &key("task"),
                format!("unknown task {other:?} (live tasks: standby, flush, command, jobs)"),
            ));
        }
    };
    let breakeven = task_breakeven(&task, power.as_ref());
    let registry = disk_registry(registry, &task, breakeven);
    let (network, time_scale) = match &d.network {
        Some(n) => {
            let scale = check_network(n.get_ref(), &registry)
                .map_err(|m| cx.err(Some(n.span()), &key("network"), m))?;
            (n.get_ref().trim().to_string(), scale)
        }
        None => {
            let scale = check_network(DEFAULT_NETWORK, &registry).map_err(|m| {
                cx.err(
                    Some(d.device.span()),
                    &key("network"),
                    format!("the default network: {m}"),
                )
            })?;
            (DEFAULT_NETWORK.to_string(), scale)
        }
    };
    let hooks = hooks(
        cx,
        &key(""),
        [
            &d.on_spindown,
            &d.on_spinup,
            &d.on_wake,
            &d.on_task_start,
            &d.on_task_stop,
        ],
    )?;
    Ok(DiskConfig {
        hooks,
        index: i,
        breakeven,
        line: cx.line(&d.device.span()),
        device,
        network,
        policy,
        task,
        power,
        time_scale,
    })
}

/// The `jobs` task of `disk[i]`: its `[[disk.job]]` tables, `best_effort`
/// and `assume_idle`.
fn jobs(
    cx: &Ctx<'_>,
    i: usize,
    d: &RawDisk,
    task_span: Option<Range<usize>>,
) -> Result<TaskConfig, ConfigError> {
    let key = |k: &str| format!("disk[{i}].{k}");
    let raw = match &d.job {
        Some(j) if !j.get_ref().is_empty() => j.get_ref(),
        _ => {
            return Err(cx.err(
                task_span,
                &key("job"),
                "task = \"jobs\" needs at least one [[disk.job]] table with name, command and reserve",
            ));
        }
    };
    // Reservations are in the units of the disk's work, so `B` is the
    // command task's break-even.
    let b = task_breakeven(
        &TaskConfig::Command {
            argv: Vec::new(),
            interval: Nanos::ZERO,
        },
        None,
    );
    let mut jobs: Vec<JobConfig> = Vec::with_capacity(raw.len());
    for (k, j) in raw.iter().enumerate() {
        let jkey = |f: &str| key(&format!("job[{k}].{f}"));
        let name = j.name.get_ref().trim().to_string();
        if name.is_empty()
            || name.contains([':', ',', '"', '\\'])
            || name.contains(char::is_whitespace)
        {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("name"),
                "must be a non-empty word without spaces, `:`, `,`, quotes or backslashes",
            ));
        }
        if let Some(prev) = jobs.iter().position(|p| p.name == name) {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("name"),
                format!("job {name:?} is already defined by job[{prev}]"),
            ));
        }
        let Some(c) = &j.command else {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("command"),
                "a job needs command = [\"/path/to/program\", \"arg\", …]",
            ));
        };
        let argv = c.get_ref().clone();
        check_command(&argv).map_err(|m| cx.err(Some(c.span()), &jkey("command"), m))?;
        let Some(r) = &j.reserve else {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("reserve"),
                "a job needs reserve = \"AMOUNT/PERIOD[:step=S][,…]\", e.g. \"2h/day:step=60s\" or \"5m/hour\"",
            ));
        };
        let spec = parse_job(&format!("{name}:{}", r.get_ref().trim()), Some(b))
            .map_err(|m| cx.err(Some(r.span()), &jkey("reserve"), m))?;
        for q in &spec.ranked {
            if q.amount == Nanos::ZERO || q.amount > q.period() {
                return Err(cx.err(
                    Some(r.span()),
                    &jkey("reserve"),
                    format!(
                        "request {q}: the amount must be more than zero and at most the period"
                    ),
                ));
            }
        }
        jobs.push(JobConfig { name, argv, spec });
    }
    let best_effort = match &d.best_effort {
        Some(b) if (0.0..1.0).contains(b.get_ref()) => *b.get_ref(),
        Some(b) => {
            return Err(cx.err(
                Some(b.span()),
                &key("best_effort"),
                format!("{}: must be a fraction in [0, 1)", b.get_ref()),
            ));
        }
        None => DEFAULT_BEST_EFFORT,
    };
    let assume_idle = match &d.assume_idle {
        Some(a) => {
            let v = parse_duration(a.get_ref())
                .map_err(|e| cx.err(Some(a.span()), &key("assume_idle"), e.to_string()))?;
            if v > Nanos::from_secs(3600) {
                return Err(cx.err(
                    Some(a.span()),
                    &key("assume_idle"),
                    "usable idle time per hour: at most 1h",
                ));
            }
            v
        }
        None => DEFAULT_ASSUME_IDLE,
    };
    Ok(TaskConfig::Jobs {
        jobs,
        best_effort,
        assume_idle,
    })
}

/// Parses and builds a network spec, refusing offline components; returns
/// the network's time scale: the idle length below which it decides
/// nothing and learns nothing ([`Detector::quiet_below`] of the fresh
/// network: a timer's timeout, `share`'s shortest expert, `auto`'s
/// decision delay; zero when it watches every event).
pub fn check_network(text: &str, registry: &Registry) -> Result<Nanos, String> {
    let spec = NetworkSpec::parse(text, Some(registry)).map_err(|e| e.to_string())?;
    for n in &spec.nodes {
        let names: Vec<&str> = match &n.kind {
            NodeKind::Predictor { start, duration } => std::iter::once(start.name.as_str())
                .chain(duration.iter().map(|d| d.name.as_str()))
                .collect(),
            NodeKind::Skeptic { skeptic, .. } => vec![skeptic.name.as_str()],
        };
        for name in names {
            if registry.info(name).is_some_and(|i| i.offline) {
                return Err(format!(
                    "`{name}` is an offline component (it needs to know the future) and cannot run live"
                ));
            }
        }
    }
    let network = spec.build(registry).map_err(|e| e.to_string())?;
    Ok(lull_core::component::Detector::quiet_below(&network))
}

impl Config {
    /// `poll` in words, saying where a derived one comes from.
    pub fn poll_text(&self) -> String {
        if self.poll_derived {
            format!(
                "{} (derived: a tenth of the shortest time scale of the disks' networks, within {MIN_DERIVED_POLL}..{MAX_DERIVED_POLL})",
                self.poll
            )
        } else {
            self.poll.to_string()
        }
    }
}

/// The least poll a derived default takes: what `poll` defaulted to
/// before it was derived, so no network is watched more coarsely than
/// then unless its time scale allows.
pub const MIN_DERIVED_POLL: Nanos = Nanos::from_secs(1);

/// The most a derived default takes (hd-idle's bound too).
pub const MAX_DERIVED_POLL: Nanos = Nanos::from_secs(60);

/// The default `poll` for `disks`: a tenth of the shortest time scale of
/// their networks (hd-idle polls at a tenth of its shortest timeout), at
/// least [`MIN_DERIVED_POLL`] and at most [`MAX_DERIVED_POLL`]. A network
/// sees each idle period start at most one poll late and end at most one
/// poll early, and ignores periods shorter than its time scale: with a
/// tenth of it, a timer's spin-downs come at most one poll later than on
/// the activity itself, none is added, and none is lost on an idle period
/// that outlasts the timeout by two polls (`tests/controller_replay.rs`).
/// A network that watches every event (time scale zero) is polled at the
/// least.
pub fn derived_poll(disks: &[DiskConfig]) -> Nanos {
    disks
        .iter()
        .map(|d| Nanos(d.time_scale.0 / 10))
        .min()
        .unwrap_or(MIN_DERIVED_POLL)
        .clamp(MIN_DERIVED_POLL, MAX_DERIVED_POLL)
}

fn check_command(argv: &[String]) -> Result<(), String> {
    let Some(prog) = argv.first() else {
        return Err("must name a program: [\"/path/to/program\", \"arg\", …]".into());
    };
    let p = Path::new(prog);
    if !p.is_absolute() {
        return Err(format!(
            "the program must be an absolute path (no PATH search, no shell): {prog:?}"
        ));
    }
    let meta = std::fs::metadata(p).map_err(|e| format!("{prog}: {e}"))?;
    if !meta.is_file() || meta.mode() & 0o111 == 0 {
        return Err(format!("{prog}: not an executable file"));
    }
    if running_as_root() {
        check_not_writable_by_others(p).map_err(|m| format!("refusing the program: {m}"))?;
    }
    Ok(())
}

/// Whether the daemon runs as root (and so must not trust files others can
/// change).
pub fn running_as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `path` and every directory above it must be owned by root and not
/// writable by group or others (a sticky directory such as `/tmp` is fine:
/// others cannot replace what root owns in it).
pub fn check_not_writable_by_others(path: &Path) -> Result<(), String> {
    let path = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut cur = Some(path.as_path());
    while let Some(p) = cur {
        let m = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let sticky_dir = m.is_dir() && m.mode() & 0o1000 != 0;
        if m.uid() != 0 {
            return Err(format!(
                "{} is owned by uid {}, not root",
                p.display(),
                m.uid()
            ));
        }
        if !sticky_dir && (m.mode() & 0o002 != 0 || (m.mode() & 0o020 != 0 && m.gid() != 0)) {
            return Err(format!(
                "{} is writable by users other than root (mode {:o})",
                p.display(),
                m.mode() & 0o7777
            ));
        }
        cur = p.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        crate::default_registry()
    }

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("lull.toml"), text, &registry())
    }

    #[test]
    fn a_full_config_parses() {
        let c = parse(
            r#"
state_file = "/tmp/s.json"
poll = "100ms"
[metrics]
textfile = "/tmp/lull.prom"
listen = "9733"
[[disk]]
device = "sda"
network = "timer(2s) + fixed(10s)"
task = "standby"
backend = "sgio"
max_spindowns_per_day = 10
preset = "paper-2.5in"
[[disk]]
device = "/dev/disk/by-id/ata-*"
task = "command"
command = ["/bin/sleep", "1000"]
policy = "when-busy"
"#,
        )
        .unwrap();
        assert_eq!(c.poll, Nanos::from_millis(100));
        assert_eq!(c.metrics.listen.unwrap().to_string(), "127.0.0.1:9733");
        assert_eq!(c.disks.len(), 2);
        assert_eq!(c.disks[0].line, 8);
        assert_eq!(
            c.disks[0].task,
            TaskConfig::Standby {
                backend: Backend::Sgio,
                max_spindowns_per_day: 10
            }
        );
        assert_eq!(c.disks[1].network, DEFAULT_NETWORK);
        assert_eq!(c.disks[1].policy, StopPolicy::WhenBusy);
    }

    fn err(text: &str) -> ConfigError {
        parse(text).unwrap_err()
    }

    /// Issue 25: without `poll`, a tenth of the shortest time scale of the
    /// disks' networks, within 1 s and 60 s; the key wins.
    #[test]
    fn the_default_poll_follows_the_networks() {
        let disk = |net: &str| {
            format!(
                "[[disk]]\ndevice = \"sd{}\"\nnetwork = \"{net}\"\n",
                net.len()
            )
        };
        let poll = |text: &str| {
            let c = parse(text).unwrap();
            (c.poll, c.poll_derived)
        };
        let s = Nanos::from_secs;
        assert_eq!(poll(&disk("timer(10m)")), (s(60), true));
        assert_eq!(poll(&disk("timer(2h)")), (s(60), true), "at most 60 s");
        assert_eq!(poll(&disk("timer(30s)")), (s(3), true));
        assert_eq!(poll(&disk("timer(5s)")), (s(1), true), "at least 1 s");
        // auto's decision delay and share's shortest expert are B/32.
        assert_eq!(poll(&disk("auto")), (s(1), true));
        assert_eq!(poll(&disk("share()")), (s(1), true));
        // The shortest of several disks.
        let two = disk("timer(10m)") + &disk("timer(100s)");
        assert_eq!(poll(&two), (s(10), true));
        // No disk: the least.
        assert_eq!(poll(""), (s(1), true));
        let explicit = format!("poll = \"5s\"\n{}", disk("timer(10m)"));
        assert_eq!(poll(&explicit), (s(5), false));
        let c = parse(&disk("timer(10m)")).unwrap();
        assert!(
            c.poll_text().starts_with("1m (derived"),
            "{}",
            c.poll_text()
        );
    }

    const JOBS: &str = r#"
[[disk]]
device = "sda"
task = "standby"
[[disk]]
device = "sdb"
task = "jobs"
assume_idle = "40m"
[[disk.job]]
name = "scrub"
command = ["/bin/sleep", "1000"]
reserve = "2h/day:step=60s,1h/day:step=60s"
[[disk.job]]
name = "trim"
command = ["/bin/sleep", "1001"]
reserve = "5m/hour:extra"
"#;

    #[test]
    fn a_jobs_disk_parses() {
        let c = parse(JOBS).unwrap();
        let TaskConfig::Jobs {
            jobs,
            best_effort,
            assume_idle,
        } = &c.disks[1].task
        else {
            panic!("{:?}", c.disks[1].task)
        };
        assert_eq!(*best_effort, DEFAULT_BEST_EFFORT);
        assert_eq!(*assume_idle, Nanos::from_secs(2400));
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "scrub");
        assert_eq!(jobs[0].spec.ranked.len(), 2);
        assert_eq!(jobs[0].spec.ranked[1].amount, Nanos::from_secs(3600));
        assert_eq!(jobs[0].spec.ranked[1].step, Nanos::from_secs(60));
        assert_eq!(jobs[1].argv, ["/bin/sleep", "1001"]);
        assert!(jobs[1].spec.extra);
        assert_eq!(jobs[1].spec.ranked[0].period_hours, 1);
        assert_eq!(c.disks[1].task.name(), "jobs");
    }

    #[test]
    fn jobs_errors_name_the_job_table_and_key() {
        let bad = |from: &str, to: &str| err(&JOBS.replacen(from, to, 1));
        let e = bad("reserve = \"5m/hour:extra\"", "reserve = \"5m/week\"");
        assert_eq!(e.key.as_deref(), Some("disk[1].job[1].reserve"), "{e}");
        assert_eq!(e.line, Some(16), "{e}");
        let e = bad("reserve = \"5m/hour:extra\"", "reserve = \"2h/hour\"");
        assert_eq!(e.key.as_deref(), Some("disk[1].job[1].reserve"), "{e}");
        assert!(e.message.contains("at most the period"), "{e}");
        let e = bad("reserve = \"5m/hour:extra\"", "reserv = \"5m/hour\"");
        assert_eq!(e.key.as_deref(), Some("disk[1].job[1].reserv"), "{e}");
        assert!(e.message.contains("reserv"), "{e}");
        let e = bad("name = \"trim\"", "name = \"scrub\"");
        assert_eq!(e.key.as_deref(), Some("disk[1].job[1].name"), "{e}");
        assert!(e.message.contains("job[0]"), "{e}");
        let e = bad(
            "command = [\"/bin/sleep\", \"1000\"]",
            "command = [\"sleep\"]",
        );
        assert_eq!(e.key.as_deref(), Some("disk[1].job[0].command"), "{e}");
        let e = bad("assume_idle = \"40m\"", "assume_idle = \"2h\"");
        assert_eq!(e.key.as_deref(), Some("disk[1].assume_idle"), "{e}");
        let e = bad("assume_idle = \"40m\"", "best_effort = 1.5");
        assert_eq!(e.key.as_deref(), Some("disk[1].best_effort"), "{e}");
        let e = bad("task = \"jobs\"", "task = \"command\"");
        assert_eq!(e.key.as_deref(), Some("disk[1].job"), "{e}");
        assert!(e.message.contains("only applies to task = \"jobs\""), "{e}");
        let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"jobs\"\n");
        assert_eq!(e.key.as_deref(), Some("disk[0].job"), "{e}");
    }

    #[test]
    fn errors_name_line_and_key() {
        let e = err(
            "poll = \"1s\"\n[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(1s) + nonsense(3)\"\n",
        );
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(4), Some("disk[0].network")),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("lull.toml:4: key `disk[0].network`"),
            "{e}"
        );

        let e = err("poll = 5\n");
        assert_eq!((e.line, e.key.as_deref()), (Some(1), Some("poll")), "{e}");

        let e = err(
            "poll = \"1s\"\n\n[[disk]]\ndevice = \"sda\"\ntask = \"standby\"\nbakend = \"x\"\n",
        );
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("bakend"), "{e}");

        let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"nap\"\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(3), Some("disk[0].task")),
            "{e}"
        );

        let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"command\"\n");
        assert_eq!(e.key.as_deref(), Some("disk[0].command"), "{e}");

        let e =
            err("[[disk]]\ndevice = \"sda\"\ntask = \"command\"\ncommand = [\"sleep\", \"1\"]\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(4), Some("disk[0].command")),
            "{e}"
        );
        assert!(e.message.contains("absolute"), "{e}");

        let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"flush\"\nbackend = \"sgio\"\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(4), Some("disk[0].backend")),
            "{e}"
        );

        let e = err("[[disk]]\ndevice = \"sda\"\n[[disk]]\ndevice = \"sda\"\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(4), Some("disk[1].device")),
            "{e}"
        );

        let e = err("poll = \"1ms\"\n");
        assert_eq!(e.key.as_deref(), Some("poll"));

        let e = err("poll = \"1s\"\nstate_interval = \"100ms\"\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(2), Some("state_interval")),
            "{e}"
        );
        assert!(e.message.contains("between 1s and 1h"), "{e}");
        assert_eq!(parse("").unwrap().state_interval, DEFAULT_STATE_INTERVAL);
        assert_eq!(
            parse("state_interval = \"5m\"\n").unwrap().state_interval,
            Nanos::from_secs(300)
        );

        let e = err("[metrics]\nlisten = \"localhost\"\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(2), Some("metrics.listen")),
            "{e}"
        );

        let e = err("[[disk]]\nnetwork = \"timer(1s)\"\n");
        assert!(e.message.contains("device"), "{e}");
        assert_eq!(e.line, Some(1), "{e}");

        let e = err("[[disk]]\ndevice = \"sda\"\npreset = \"floppy\"\n");
        assert_eq!(e.key.as_deref(), Some("disk[0].preset"), "{e}");
    }

    #[test]
    fn the_shipped_config_parses_with_the_drives_break_even() {
        let c = parse(include_str!("../../../contrib/lull.toml")).unwrap();
        assert_eq!(c.disks.len(), 1);
        let d = &c.disks[0];
        let red = PowerModel::preset("wd-red-plus").unwrap();
        assert_eq!(d.breakeven, Nanos::from_secs_f64(red.break_even()));
        assert!(d.breakeven > Nanos::from_secs(60), "{}", d.breakeven);
        assert_eq!(
            d.task,
            TaskConfig::Standby {
                backend: Backend::Auto,
                max_spindowns_per_day: 24
            }
        );
    }

    #[test]
    fn the_default_network_scales_with_the_drive() {
        let c = parse(
            "[[disk]]\ndevice = \"sda\"\npreset = \"wd-red-plus\"\n[[disk]]\ndevice = \"sdb\"\n[[disk]]\ndevice = \"sdc\"\ntask = \"flush\"\n",
        )
        .unwrap();
        assert!(c.disks.iter().all(|d| d.network == DEFAULT_NETWORK));
        let b: Vec<Nanos> = c.disks.iter().map(|d| d.breakeven).collect();
        assert_eq!(
            b[1],
            Nanos::from_secs_f64(PowerModel::paper().break_even()),
            "standby without a preset: the default preset"
        );
        assert!(b[0] > b[1] && b[1] > b[2], "{b:?}");
        // `2B` is accepted because each disk knows its B.
        parse("[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(2B) + fixed(8B)\"\n").unwrap();
    }

    #[test]
    fn auto_follows_the_disks_task() {
        let c = parse(
            "[[disk]]\ndevice = \"sda\"\npreset = \"wd-red-plus\"\n[[disk]]\ndevice = \"sdc\"\ntask = \"flush\"\n",
        )
        .unwrap();
        let expand = |d: &DiskConfig| {
            disk_registry(&registry(), &d.task, d.breakeven)
                .expand_network(&d.network)
                .unwrap()
                .unwrap()
        };
        assert_eq!(expand(&c.disks[0]), lull_detectors::AUTO_SPEC);
        assert_eq!(expand(&c.disks[1]), lull_detectors::AUTO_BACKGROUND_SPEC);
    }

    #[test]
    fn unknown_keys_name_their_table() {
        let e = err(
            "poll = \"1s\"\n[[disk]]\ndevice = \"a\"\n[[disk]]\ndevice = \"b\"\nnetwrok = \"x\"\n",
        );
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(6), Some("disk[1].netwrok")),
            "{e}"
        );
        let e = err("[metrics]\ntextfil = \"x\"\n");
        assert_eq!(e.key.as_deref(), Some("metrics.textfil"), "{e}");
        let e = err("pol = \"1s\"\n");
        assert_eq!(e.key.as_deref(), Some("pol"), "{e}");
    }

    #[test]
    fn offline_components_are_refused() {
        let e = err("[[disk]]\ndevice = \"sda\"\nnetwork = \"oracle()\"\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(3), Some("disk[0].network")),
            "{e}"
        );
        assert!(e.message.contains("offline"), "{e}");
    }

    #[test]
    fn writable_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        if !running_as_root() {
            eprintln!("skipping: needs root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("lull.toml");
        std::fs::write(&f, "poll = \"1s\"\n").unwrap();
        assert!(check_not_writable_by_others(&f).is_ok());
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = Config::load(&f, &registry()).unwrap_err();
        assert!(e.message.contains("writable"), "{e}");
        let prog = dir.path().join("job.sh");
        std::fs::write(&prog, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_command(&[prog.to_string_lossy().into_owned()]).unwrap_err();
        assert!(e.contains("writable"), "{e}");
    }

    #[test]
    fn hooks_are_argv_lists_with_global_defaults() {
        let c = parse(
            "hook_timeout = \"3s\"\non_spindown = [\"/bin/true\", \"global\"]\non_wake = [\"/bin/true\", \"w\"]\n\
             [[disk]]\ndevice = \"sda\"\non_spindown = [\"/bin/true\", \"own\"]\n\
             [[disk]]\ndevice = \"sdb\"\n",
        )
        .unwrap();
        assert_eq!(c.hook_timeout, Nanos::from_secs(3));
        let v = |s: &[&str]| Some(s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        let a = &c.disks[0].hooks;
        assert_eq!(
            a.get(HookEvent::Spindown).cloned(),
            v(&["/bin/true", "own"])
        );
        assert_eq!(a.get(HookEvent::Wake).cloned(), v(&["/bin/true", "w"]));
        assert_eq!(a.get(HookEvent::TaskStart), None);
        let b = &c.disks[1].hooks;
        assert_eq!(
            b.get(HookEvent::Spindown).cloned(),
            v(&["/bin/true", "global"])
        );
        assert_eq!(
            parse("[[disk]]\ndevice = \"sda\"\n").unwrap().hook_timeout,
            DEFAULT_HOOK_TIMEOUT
        );
    }

    #[test]
    fn hook_errors_name_their_key() {
        let e = err("[[disk]]\ndevice = \"sda\"\non_wake = [\"true\"]\n");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(3), Some("disk[0].on_wake")),
            "{e}"
        );
        assert!(e.message.contains("absolute"), "{e}");
        let e = err("on_task_stop = []\n");
        assert_eq!(e.key.as_deref(), Some("on_task_stop"), "{e}");
        let e = err("hook_timeout = \"1ms\"\n");
        assert_eq!(e.key.as_deref(), Some("hook_timeout"), "{e}");
        let e = err("[[disk]]\ndevice = \"sda\"\non_spindwn = [\"/bin/true\"]\n");
        assert_eq!(e.key.as_deref(), Some("disk[0].on_spindwn"), "{e}");
    }

    #[test]
    fn a_hook_writable_by_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        if !running_as_root() {
            eprintln!("skipping: needs root (only root refuses files others can change)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let prog = dir.path().join("hook.sh");
        std::fs::write(&prog, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o757)).unwrap();
        let e = err(&format!(
            "[[disk]]\ndevice = \"sda\"\non_spinup = [{prog:?}]\n"
        ));
        assert_eq!(e.key.as_deref(), Some("disk[0].on_spinup"), "{e}");
        assert!(e.message.contains("writable"), "{e}");
    }
}
