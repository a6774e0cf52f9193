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
//! `auto`, see [`DEFAULT_NETWORK`]), `task` (`standby` | `flush` |
//! `command` | `jobs`, default `standby`), `policy` (stop policy, default
//! `earlier-of`), `preset` (the drive, a preset of
//! [`lull_tasks::drive`] with optional overrides: its power model for
//! standby, its service model for flush, command and jobs, and so the
//! break-even time B that `2B` and the B-scaled defaults mean; without it
//! the daemon identifies the drive when it appears, see
//! [`crate::identify`], and a drive that reports no rotation is left
//! alone), `backend` (`auto` | `sgio` |
//! `ata16` | `ata12` | `scsi` | `hdparm`, see [`crate::transport`]),
//! `max_spindowns_per_day` (default 48 a UTC day, paced by a token bucket, which `auto` spends on its longest periods; 0 never spins
//! down), `compare_timeout` (`standby` only, 1 s to 24 h: the fixed timeout
//! you ran before, which `lull status` and the metrics set lull's savings
//! against; `--from-hd-idle` writes hd-idle's `-i` there), `command` (argv, absolute program path, no shell) and `interval`
//! (least time between two runs of a command that exited, default `0s`).
//!
//! **Several jobs on one disk** (issue 19): `task = "jobs"` with one
//! `[[disk.job]]` table per job, each with `name`, `command` (as above) and
//! `reserve`, the job's ranked requests in `lull plan --job` syntax
//! (`"2h/day:step=60s,1h/day"`, `"5m/hour"`, `:extra` to take unreserved
//! idle time too; see `lull_reserve::plan`), and on the disk
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
//! `hdparm` (default: the system's, in `/usr/sbin`, `/sbin`, `/usr/bin`
//! or `/bin`) names the `hdparm` program, an absolute path checked like a
//! command's (an executable file; under root, owned by root and not
//! writable by others, nor its directories).
//!
//! **Activity log** (issue 27): `activity_log` (default `true`; `false`
//! records nothing and the shadow evaluation starts empty at each start),
//! `activity_dir` (default `activity` next to the state file),
//! `activity_retention` (default `7d`, between `1h` and `366d`) and
//! `activity_max_mb` (default 64 per disk, between 1 and 100000). See
//! the shell's `activity` module.
//!
//! `poll` (SPEC §6.1) defaults to a tenth of the shortest time scale of
//! the disks' networks, within 1 s and 60 s ([`derived_poll`]).
//! `max_poll` (default 60 s, hd-idle's own poll; from `poll` to 1 h) is
//! the longest poll while every disk is idle or asleep: the daemon then
//! polls at a tenth of the time the disks have been idle, as hd-idle
//! polls at a tenth of its timeout
//! ([`crate::controller::DiskController::poll_every`]). `max_poll = poll`
//! polls every `poll`, always.
//!
//! Top-level keys besides SPEC §6.1's: `power_check` (default `60s`, `0s`
//! never, else from the poll to 1 day: how often the power state of standby disks is read, by CHECK
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
use lull_core::spec::NetworkSpec;
use lull_core::time::{Nanos, parse_duration};
use lull_reserve::plan::{JobSpec, parse_job};
use lull_tasks::drive::{Drive, DriveFacts, PresetSource, Work};
use lull_tasks::profile::DriveProfile;
use serde::Deserialize;
use toml::Spanned;

mod checks;
mod disk;
#[cfg(test)]
mod tests;

pub use checks::{check_network, check_not_writable_by_others, running_as_root};
use checks::{parse_listen, raw_errors};
use disk::{disk, hooks};

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
    /// The longest poll while the disks are idle or asleep (`max_poll`,
    /// default [`MAX_DERIVED_POLL`], never below `poll`).
    pub max_poll: Nanos,
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
    /// The activity log.
    pub activity: ActivityConfig,
    /// The `hdparm` program (`hdparm`, an absolute path checked like a
    /// command's); `None`: the system's, found in `/usr/sbin`, `/sbin`,
    /// `/usr/bin` or `/bin`.
    pub hdparm: Option<PathBuf>,
    /// The lines of the top-level paths checked after the file's own
    /// validation (`lull_live::preflight::preflight`), so their errors name
    /// the line too.
    pub lines: KeyLines,
}

/// The 1-based lines of the path keys a start checks on the file system,
/// `None` where the file does not set the key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyLines {
    /// `state_file`.
    pub state_file: Option<usize>,
    /// `[metrics] textfile`.
    pub metrics_textfile: Option<usize>,
    /// `activity_dir`.
    pub activity_dir: Option<usize>,
}

impl KeyLines {
    /// The line of `key` (`state_file`, `metrics.textfile`,
    /// `activity_dir`), when the file sets it.
    pub fn of(&self, key: &str) -> Option<usize> {
        match key {
            "state_file" => self.state_file,
            "metrics.textfile" => self.metrics_textfile,
            "activity_dir" => self.activity_dir,
            _ => None,
        }
    }
}

/// A path key's value must be absolute: the daemon runs in `/` (systemd
/// gives it no other working directory), so a relative path names a file
/// there, and `lull status` run elsewhere would look somewhere else.
fn absolute(cx: &Ctx<'_>, value: &Spanned<String>, key: &str) -> Result<PathBuf, ConfigError> {
    let p = PathBuf::from(value.get_ref());
    if p.is_relative() {
        return Err(cx.err(
            Some(value.span()),
            key,
            format!(
                "must be an absolute path, not {:?}: the daemon's working directory is / (as under systemd), so a relative path names a file there",
                value.get_ref()
            ),
        ));
    }
    Ok(p)
}

/// Where and how much the daemon records of each disk's activity
/// (the shell's `activity` module).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActivityConfig {
    /// Record at all (`activity_log`).
    pub enabled: bool,
    /// The directory holding one directory per disk (`activity_dir`).
    pub dir: PathBuf,
    /// Segments older than this are deleted (`activity_retention`).
    pub retention: Nanos,
    /// At most this many bytes per disk (`activity_max_mb`): the oldest
    /// segments go first.
    pub max_bytes: u64,
}

/// The default `activity_retention`: a week, the shadow's longest window.
pub const DEFAULT_ACTIVITY_RETENTION: Nanos = Nanos::from_secs(7 * 86_400);
/// The default `activity_max_mb`: a disk busy every second of a week
/// writes about 20 MB (a recorded poll is about 30 bytes).
pub const DEFAULT_ACTIVITY_MAX_MB: u64 = 64;

/// Where metrics go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricsConfig {
    /// A node_exporter textfile, rewritten atomically.
    pub textfile: Option<PathBuf>,
    /// An HTTP endpoint (`GET /metrics`, and `GET /snapshot.json`).
    pub listen: Option<SocketAddr>,
}

impl MetricsConfig {
    /// The daemon's snapshot as JSON, written beside the textfile with
    /// `.json` appended to its name (`lull.prom` → `lull.prom.json`):
    /// what `lull status` reads when there is no endpoint. node_exporter
    /// reads only `*.prom` files, so it leaves this one alone.
    pub fn snapshot_file(&self) -> Option<PathBuf> {
        let tf = self.textfile.as_ref()?;
        let mut name = tf.file_name().unwrap_or_default().to_os_string();
        name.push(".json");
        Some(tf.with_file_name(name))
    }
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
    /// The `preset` as written, if the table has one.
    pub preset: Option<String>,
    /// The drive's profile, the one source of its B: the drive the
    /// `preset` names, or, until the daemon has identified the disk
    /// ([`DiskConfig::for_drive`]), the default drive
    /// ([`Drive::fallback`]). Set with `task` (its B for the task's work
    /// was checked then): see [`DiskConfig::breakeven`].
    pub profile: DriveProfile,
    /// Why the daemon never spins this disk down, if it does not: a
    /// `standby` disk without a `preset` whose drive reports that it does
    /// not rotate.
    pub left_alone: Option<String>,
    /// Its hooks, the global ones filling the events it leaves unset.
    pub hooks: Hooks,
    /// The network's time scale ([`check_network`]): what a derived
    /// default `poll` is a tenth of.
    pub time_scale: Nanos,
}

/// The kind of work a task does: spinning the drive down (`standby`), or
/// I/O that competes with the foreground (`flush`, `command`, `jobs`).
pub fn task_work(task: &TaskConfig) -> Work {
    match task {
        TaskConfig::Standby { .. } => Work::Standby,
        TaskConfig::Flush | TaskConfig::Command { .. } | TaskConfig::Jobs { .. } => Work::Io,
    }
}

/// The break-even time B of a disk's task on the drive of `profile`
/// ([`DriveProfile::break_even`] for [`task_work`]): for `standby`, the
/// power model's; for `flush`, `command` and `jobs`, the service model's
/// random 8 KiB access time, the time scale of the work they do in idle
/// periods. `lull plan`, `lull replay` and `lull rank` take their B from
/// the same profile.
fn profile_breakeven(task: &TaskConfig, profile: &DriveProfile) -> Result<Nanos, String> {
    profile
        .break_even(task_work(task))
        .map_err(|e| e.to_string())
}

/// `registry` set up for a disk whose task is `task` with break-even
/// `breakeven`: durations relative to B resolve against it, and for the
/// tasks that only compete with the foreground for the disk (`flush`,
/// `command`, `jobs`) the named network `auto` is the background one
/// ([`lull_detectors::AUTO_BACKGROUND_SPEC`]), as in a replay of
/// writeback or cleaning.
pub fn disk_registry(registry: &Registry, task: &TaskConfig, breakeven: Nanos) -> Registry {
    let mut r = registry.clone().with_breakeven(breakeven);
    match task {
        // `auto` spends the disk's wear budget on its longest periods.
        TaskConfig::Standby {
            max_spindowns_per_day,
            ..
        } => r.set_wear_budget(Some(*max_spindowns_per_day)),
        _ => lull_detectors::use_background_auto(&mut r),
    }
    r
}

impl DiskConfig {
    /// Whether `other` configures the disk the same way, wherever in the
    /// file it is written (a reload keeps such a disk running; its hooks
    /// are then taken from `other`, they are not part of the comparison).
    /// Networks written with other spacing are the same network.
    pub fn same_settings(&self, other: &DiskConfig) -> bool {
        self.device == other.device
            && lull_core::learned::same_spec(&self.network, &other.network)
            && self.policy == other.policy
            && self.task.same_settings(&other.task)
            && self.preset == other.preset
    }

    /// What a reload changes from this (running) configuration to `new`,
    /// a phrase per key as the log says it: `network timer(20s) →
    /// timer(40s)`, `max_spindowns_per_day 24 → 480`, `task standby →
    /// flush` (the keys of another task then go unsaid). Only the keys
    /// [`DiskConfig::same_settings`] compares: empty when it holds.
    pub fn changes_to(&self, new: &DiskConfig) -> Vec<String> {
        fn change(
            out: &mut Vec<String>,
            key: &str,
            old: impl fmt::Display,
            new: impl fmt::Display,
        ) {
            let (old, new) = (old.to_string(), new.to_string());
            if old != new {
                out.push(format!("{key} {old} → {new}"));
            }
        }
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        let dur = |v: Option<Nanos>| v.map_or_else(|| "none".into(), |t| t.to_string());
        let mut out = Vec::new();
        change(&mut out, "device", &self.device, &new.device);
        if !lull_core::learned::same_spec(&self.network, &new.network) {
            out.push(format!("network {} → {}", self.network, new.network));
        }
        change(&mut out, "policy", self.policy, new.policy);
        change(&mut out, "preset", opt(&self.preset), opt(&new.preset));
        match (&self.task, &new.task) {
            (
                TaskConfig::Standby {
                    backend: b0,
                    max_spindowns_per_day: m0,
                    compare_timeout: c0,
                },
                TaskConfig::Standby {
                    backend: b1,
                    max_spindowns_per_day: m1,
                    compare_timeout: c1,
                },
            ) => {
                change(
                    &mut out,
                    "backend",
                    crate::drive::backend_name(*b0),
                    crate::drive::backend_name(*b1),
                );
                change(&mut out, "max_spindowns_per_day", m0, m1);
                change(&mut out, "compare_timeout", dur(*c0), dur(*c1));
            }
            (
                TaskConfig::Command {
                    argv: a0,
                    interval: i0,
                },
                TaskConfig::Command {
                    argv: a1,
                    interval: i1,
                },
            ) => {
                change(&mut out, "command", format!("{a0:?}"), format!("{a1:?}"));
                change(&mut out, "interval", i0, i1);
            }
            (
                TaskConfig::Jobs {
                    jobs: j0,
                    best_effort: b0,
                    assume_idle: i0,
                },
                TaskConfig::Jobs {
                    jobs: j1,
                    best_effort: b1,
                    assume_idle: i1,
                },
            ) => {
                let same_jobs = j0.len() == j1.len()
                    && j0.iter().zip(j1).all(|(x, y)| {
                        x.name == y.name && x.argv == y.argv && x.reserve == y.reserve
                    });
                if !same_jobs {
                    out.push("the [[disk.job]] tables".into());
                }
                change(&mut out, "best_effort", b0, b1);
                change(&mut out, "assume_idle", i0, i1);
            }
            (a, b) => change(&mut out, "task", a.name(), b.name()),
        }
        out
    }

    /// Whether this disk comes from the `[[disk]]` table `entry` (same
    /// position and settings), whatever drive it was resolved for since.
    pub fn is_entry(&self, entry: &DiskConfig) -> bool {
        self.index == entry.index && self.same_settings(entry)
    }

    /// This disk configured for `drive` (what identification found, or
    /// the `preset`): its B, the network's time scale and the jobs'
    /// reservations are worked out again, and a `standby` disk without a
    /// `preset` whose drive does not rotate (`facts`) is left alone. An
    /// error when the network or a reservation does not fit the new B.
    pub fn for_drive(
        &self,
        drive: impl Into<DriveProfile>,
        facts: Option<&DriveFacts>,
        registry: &Registry,
    ) -> Result<DiskConfig, String> {
        let profile = drive.into();
        let mut c = self.clone();
        let b = profile_breakeven(&c.task, &profile)?;
        let r = disk_registry(registry, &c.task, b);
        c.time_scale = check_network(&c.network, &r)?;
        if let TaskConfig::Jobs { jobs, .. } = &mut c.task {
            for j in jobs {
                j.spec = parse_job(&format!("{}:{}", j.name, j.reserve), Some(b))
                    .map_err(|e| format!("job {}: reserve: {e}", j.name))?;
            }
        }
        c.left_alone = c.rotation_leaves_alone(facts);
        c.profile = profile;
        Ok(c)
    }

    /// The break-even time B the network is built with (`timer(2B)`, the
    /// B-scaled defaults): the profile's, for the task's kind of work
    /// ([`task_work`]). Checked when the disk was configured (a table no
    /// drive gives a B for is an error of the file), so it is there.
    pub fn breakeven(&self) -> Nanos {
        profile_breakeven(&self.task, &self.profile)
            .expect("a disk's B is checked when its profile is set")
    }

    /// The drive's power model, if it has one ([`DriveProfile::power`]).
    pub fn power(&self) -> Option<&lull_tasks::PowerModel> {
        self.profile.power()
    }

    /// Why a `standby` disk without a `preset` is left alone because its
    /// drive does not rotate (`facts`), if it is.
    fn rotation_leaves_alone(&self, facts: Option<&DriveFacts>) -> Option<String> {
        match (&self.task, &self.preset, facts.and_then(DriveFacts::spins)) {
            (TaskConfig::Standby { .. }, None, Some(false)) => Some(format!(
                "the drive does not rotate ({}): a solid-state disk is never spun down; name a preset to spin it down anyway",
                facts.map(DriveFacts::describe).unwrap_or_default()
            )),
            _ => None,
        }
    }

    /// Why a `standby` disk without a `preset` is left alone because it
    /// holds no medium (`sectors`, its size now, is 0: an empty
    /// card-reader slot, which a glob such as `sd*` matches, or an
    /// unattached loop device), if it is: there is nothing to spin down,
    /// and every command would fail with NOT READY (medium not present).
    /// The daemon works this out when it finds the disk; a medium put in
    /// later (a flash card, nothing to spin down either) changes nothing
    /// until the disk reappears.
    fn medium_leaves_alone(&self, sectors: Option<u64>) -> Option<String> {
        (sectors == Some(0) && matches!(self.task, TaskConfig::Standby { .. }) && self.preset.is_none())
            .then(|| "it holds no medium (size 0: an empty card-reader slot, an unattached loop device): nothing to spin down; name a preset to send it spin-downs anyway".into())
    }

    /// Why this entry leaves alone the drive identification describes
    /// (`facts`, and `sectors`, its size now), if it does: what
    /// [`DiskConfig::for_identified`] would set as `left_alone`, without
    /// working out the rest (the hd-idle warning asks only this).
    pub fn leaves_alone(&self, facts: Option<&DriveFacts>, sectors: Option<u64>) -> Option<String> {
        self.rotation_leaves_alone(facts)
            .or_else(|| self.medium_leaves_alone(sectors))
    }

    /// This entry configured for the drive identification found, as the
    /// daemon runs it and `lulld --check` reports it: the drive the
    /// `preset` names or `facts` match ([`Drive::resolve`]), then
    /// [`DiskConfig::for_drive`], left alone as [`DiskConfig::leaves_alone`]
    /// says (`sectors`, its size now). An error when no drive resolves or
    /// the network or a job does not fit its B.
    pub fn for_identified(
        &self,
        facts: &DriveFacts,
        sectors: Option<u64>,
        registry: &Registry,
    ) -> Result<DiskConfig, String> {
        let drive =
            Drive::resolve(self.preset.as_deref(), Some(facts)).map_err(|e| e.to_string())?;
        let mut c = self.for_drive(drive, Some(facts), registry)?;
        c.left_alone = c.leaves_alone(Some(facts), sectors);
        Ok(c)
    }

    /// The warning for a disk this configuration spins down (a `standby`
    /// disk not left alone) whose drive spins itself down on a timer of
    /// its own, as `identity` reports it
    /// ([`crate::identify::Identity::own_standby`]).
    pub fn own_standby_warning(&self, identity: &crate::identify::Identity) -> Option<String> {
        if matches!(self.task, TaskConfig::Standby { .. }) && self.left_alone.is_none() {
            identity.own_standby()
        } else {
            None
        }
    }

    /// Takes from `resolved` (this disk's running configuration) what the
    /// daemon worked out for its drive, keeping this table's hooks and
    /// position: a reload of an unchanged disk keeps its drive.
    pub fn keep_drive(&mut self, resolved: &DiskConfig) {
        self.profile = resolved.profile.clone();
        self.time_scale = resolved.time_scale;
        self.task = resolved.task.clone();
        self.left_alone = resolved.left_alone.clone();
    }

    /// Where the drive's preset came from.
    pub fn preset_source(&self) -> PresetSource {
        self.profile.source()
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
        /// Spin-downs a day: a hard cap per UTC day, paced by a token
        /// bucket ([`lull_tasks::WearBudget`]).
        max_spindowns_per_day: u32,
        /// The fixed timeout the user ran before (`compare_timeout`), which
        /// `lull status` and the metrics compare lull's savings with.
        compare_timeout: Option<Nanos>,
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
    /// `reserve` as written (its `B` is worked out again for the drive).
    pub reserve: String,
    /// The ranked requests and whether it takes unreserved time.
    pub spec: JobSpec,
}

/// The default share of idle time kept for unreserved work.
pub const DEFAULT_BEST_EFFORT: f64 = 0.1;
/// The usable idle time per hour admission control assumes by default.
pub const DEFAULT_ASSUME_IDLE: Nanos = Nanos::from_secs(1800);

impl TaskConfig {
    /// Whether `other` is the same task as written: jobs compare by name,
    /// command and `reserve` text, not by the reservations worked out for
    /// a drive's B.
    pub fn same_settings(&self, other: &TaskConfig) -> bool {
        match (self, other) {
            (
                TaskConfig::Jobs {
                    jobs: a,
                    best_effort: ba,
                    assume_idle: ia,
                },
                TaskConfig::Jobs {
                    jobs: b,
                    best_effort: bb,
                    assume_idle: ib,
                },
            ) => {
                ba == bb
                    && ia == ib
                    && a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| {
                        x.name == y.name && x.argv == y.argv && x.reserve == y.reserve
                    })
            }
            _ => self == other,
        }
    }

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
    max_poll: Option<Spanned<String>>,
    state_interval: Option<Spanned<String>>,
    power_check: Option<Spanned<String>>,
    diskstats: Option<String>,
    sysfs: Option<String>,
    metrics: Option<RawMetrics>,
    hook_timeout: Option<Spanned<String>>,
    activity_log: Option<bool>,
    activity_dir: Option<Spanned<String>>,
    activity_retention: Option<Spanned<String>>,
    activity_max_mb: Option<Spanned<i64>>,
    hdparm: Option<Spanned<String>>,
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
    compare_timeout: Option<Spanned<String>>,
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
/// The shortest `compare_timeout`.
pub const COMPARE_TIMEOUT_MIN: Nanos = Nanos::from_secs(1);
/// The longest `compare_timeout`: a day.
pub const COMPARE_TIMEOUT_MAX: Nanos = Nanos::from_secs(86_400);
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
    /// The state file of a dry run: beside `state_file`, with `.dry-run`
    /// before its extension (`state.json` → `state.dry-run.json`). A dry
    /// run keeps what its networks learned there across restarts, and
    /// never touches the real daemon's counters; a real run takes what a
    /// dry run learned from it for a disk whose own state has nothing
    /// learned yet.
    pub fn dry_run_state_file(&self) -> PathBuf {
        let f = &self.state_file;
        let name = match (f.file_stem(), f.extension()) {
            (Some(stem), Some(ext)) => format!(
                "{}.dry-run.{}",
                stem.to_string_lossy(),
                ext.to_string_lossy()
            ),
            _ => format!(
                "{}.dry-run",
                f.file_name().unwrap_or_default().to_string_lossy()
            ),
        };
        f.with_file_name(name)
    }

    /// The state file a run writes: [`Config::dry_run_state_file`] for a
    /// dry run, else `state_file`.
    pub fn state_path(&self, dry_run: bool) -> PathBuf {
        if dry_run {
            self.dry_run_state_file()
        } else {
            self.state_file.clone()
        }
    }

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
        let raw: RawConfig = toml::from_str(text).map_err(|e| raw_errors(&cx, &e))?;
        let state_file = match &raw.state_file {
            Some(s) if s.get_ref().trim().is_empty() => {
                return Err(cx.err(Some(s.span()), "state_file", "must not be empty"));
            }
            Some(s) => absolute(&cx, s, "state_file")?,
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
            Some(p) => {
                let d = parse_duration(p.get_ref())
                    .map_err(|e| cx.err(Some(p.span()), "power_check", e.to_string()))?;
                // Past a day it would mean `0s` without saying so; below
                // the poll (checked once the poll is known) it would not
                // be what it says, the state being read at polls.
                if d > Nanos::from_secs(86_400) {
                    return Err(cx.err(
                        Some(p.span()),
                        "power_check",
                        "must be 0s (never) or between the poll and 1d",
                    ));
                }
                d
            }
            None => DEFAULT_POWER_CHECK,
        };
        let mut metrics = MetricsConfig::default();
        if let Some(m) = &raw.metrics {
            if let Some(t) = &m.textfile {
                metrics.textfile = Some(absolute(&cx, t, "metrics.textfile")?);
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
        let activity = ActivityConfig {
            enabled: raw.activity_log.unwrap_or(true),
            dir: match &raw.activity_dir {
                Some(d) if d.get_ref().trim().is_empty() => {
                    return Err(cx.err(Some(d.span()), "activity_dir", "must not be empty"));
                }
                Some(d) => absolute(&cx, d, "activity_dir")?,
                None => state_file
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join("activity"),
            },
            retention: match &raw.activity_retention {
                Some(r) => {
                    let d = parse_duration(r.get_ref())
                        .map_err(|e| cx.err(Some(r.span()), "activity_retention", e.to_string()))?;
                    if d < Nanos::from_secs(3600) || d > Nanos::from_secs(366 * 86_400) {
                        return Err(cx.err(
                            Some(r.span()),
                            "activity_retention",
                            "must be between 1h and 366d",
                        ));
                    }
                    d
                }
                None => DEFAULT_ACTIVITY_RETENTION,
            },
            max_bytes: match &raw.activity_max_mb {
                Some(m) if !(1..=100_000).contains(m.get_ref()) => {
                    return Err(cx.err(
                        Some(m.span()),
                        "activity_max_mb",
                        "must be between 1 and 100000",
                    ));
                }
                Some(m) => *m.get_ref() as u64 * 1_000_000,
                None => DEFAULT_ACTIVITY_MAX_MB * 1_000_000,
            },
        };
        let hdparm = match &raw.hdparm {
            Some(h) => {
                checks::check_command(std::slice::from_ref(h.get_ref()))
                    .map_err(|m| cx.err(Some(h.span()), "hdparm", m))?;
                Some(PathBuf::from(h.get_ref()))
            }
            None => None,
        };
        let poll_derived = poll == Nanos::ZERO;
        let poll = if poll_derived {
            derived_poll(&disks)
        } else {
            poll
        };
        let max_poll = match &raw.max_poll {
            Some(p) => {
                let d = parse_duration(p.get_ref())
                    .map_err(|e| cx.err(Some(p.span()), "max_poll", e.to_string()))?;
                if d < poll || d > Nanos::from_secs(3600) {
                    return Err(cx.err(
                        Some(p.span()),
                        "max_poll",
                        format!(
                            "must be between the poll ({}{}) and 1h",
                            poll,
                            if poll_derived { ", derived" } else { "" }
                        ),
                    ));
                }
                d
            }
            None => MAX_DERIVED_POLL.max(poll),
        };
        if let Some(p) = &raw.power_check
            && power_check != Nanos::ZERO
            && power_check < poll
        {
            return Err(cx.err(
                Some(p.span()),
                "power_check",
                format!(
                    "must be 0s (never) or between the poll ({}{}) and 1d: the power state is read at polls",
                    poll,
                    if poll_derived { ", derived" } else { "" }
                ),
            ));
        }
        Ok(Config {
            path: path.to_path_buf(),
            state_file,
            poll,
            poll_derived,
            max_poll,
            state_interval,
            power_check,
            diskstats: PathBuf::from(raw.diskstats.as_deref().unwrap_or("/proc/diskstats")),
            sysfs: PathBuf::from(raw.sysfs.as_deref().unwrap_or("/sys")),
            metrics,
            disks,
            hooks: global_hooks,
            hook_timeout,
            activity,
            hdparm,
            lines: KeyLines {
                state_file: raw.state_file.as_ref().map(|s| cx.line(&s.span())),
                metrics_textfile: raw
                    .metrics
                    .as_ref()
                    .and_then(|m| m.textfile.as_ref())
                    .map(|t| cx.line(&t.span())),
                activity_dir: raw.activity_dir.as_ref().map(|d| cx.line(&d.span())),
            },
        })
    }
}

impl Config {
    /// The entry disk `key` (a state-file key, a metrics `disk` label)
    /// comes from: the one whose device it is, else the first glob that
    /// matches it; `None` when no entry covers it (a disk removed from
    /// the file, a drive's entry waiting under `serial:SERIAL`).
    pub fn entry_for(&self, key: &str) -> Option<&DiskConfig> {
        self.disks.iter().find(|d| d.device == key).or_else(|| {
            self.disks.iter().find(|d| {
                crate::glob::is_glob(&d.device) && crate::glob::glob_match(&d.device, key)
            })
        })
    }

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

    /// Why a `poll` set in the file is too coarse for disk `d` (its
    /// configuration for the drive found), if it is: longer than the
    /// time scale of the disk's network (at least [`MIN_DERIVED_POLL`]).
    /// The network then sees no idle period shorter than a poll (the
    /// quiet polls between two busy ones merge into busy time), learns
    /// from fewer periods than it was built for, and acts up to a poll
    /// late: `timer(5s)` under a 30 s poll is a 30 s timer. A derived
    /// poll never is, and a disk left alone does not matter.
    pub fn poll_warning(&self, d: &DiskConfig) -> Option<String> {
        if self.poll_derived
            || d.left_alone.is_some()
            || self.poll <= d.time_scale.max(MIN_DERIVED_POLL)
        {
            return None;
        }
        Some(format!(
            "poll {} is longer than the time scale of its network `{}` ({}): it sees no idle period shorter than a poll and acts up to a poll late; without `poll` the default would be {}",
            self.poll,
            d.network,
            d.time_scale.approx(),
            derived_poll(std::slice::from_ref(d)).approx()
        ))
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
