//! The checks a start runs before it touches anything: the configuration
//! as a start would see it (`lulld --check`), the state file's and metrics
//! textfile's directories, the disks as they resolve now; and the commands
//! a previous run left behind.

use std::path::Path;
use std::time::Duration;

use lull_core::registry::Registry;
use lull_core::time::Nanos;
use lull_tasks::drive::DriveFacts;
use tracing::{info, warn};

use crate::config::{Config, ConfigError, DiskConfig, TaskConfig};
use crate::controller::Spinner;
use crate::devices::{Resolved, partition_message, partition_of, resolve};
use crate::diskstats::parse;
use crate::instance::parent_dir;
use crate::process;
use crate::source::Sample;
use crate::state::State;
use serde::Serialize;

/// What [`preflight`] found: where each disk entry resolves now, and
/// warnings that do not stop a start.
#[derive(Debug, Default)]
pub struct Preflight {
    /// Per `[[disk]]`, in file order: the devices it resolves to now.
    pub found: Vec<Vec<Resolved>>,
    /// Things a start tolerates but an admin should know.
    pub warnings: Vec<String>,
    /// Warnings a start and a reload log, and `--check` lists with the
    /// others: the daemon's own files on a disk it is to spin down
    /// ([`own_files_on_spun_down_disks`]) and, but in a dry run, a program
    /// that spins disks down beside it ([`competing_spin_down`]).
    pub logged: Vec<String>,
    /// The process ids of the spin-down programs [`Preflight::logged`]
    /// warns of: the daemon does not warn of them again when it finds a
    /// drive one of them spun down.
    pub spinners_warned: Vec<u32>,
    /// The whole disks diskstats lists now, by kernel name (sorted).
    pub present: Vec<String>,
}

/// The checks a start (and a reload) runs beyond the file's own
/// validation, which `--check` runs too: the state file's directory is
/// writable, or can be made (the daemon creates it; not checked in a dry
/// run, which keeps its own state file and runs without it if need be),
/// and the state file is readable; the metrics textfile's directory exists
/// and is writable (or, when it is the state file's, can be made); the
/// activity log's directory can be made (a warning, not an error); no two entries resolve to the same device now (`loop0` and
/// `/dev/loop0`: which task would it get?).
pub fn preflight(cfg: &Config, dry_run: bool) -> Result<Preflight, ConfigError> {
    let err = |key: &str, message: String| ConfigError {
        file: cfg.path.clone(),
        line: cfg.lines.of(key),
        key: Some(key.to_string()),
        message,
    };
    let mut out = Preflight::default();
    if !dry_run {
        let dir = parent_dir(&cfg.state_file);
        creatable_dir(dir).map_err(|m| err("state_file", m))?;
        if !dir.exists() {
            out.warnings.push(format!(
                "state_file: directory {} does not exist; a start creates it",
                dir.display()
            ));
        }
        match State::load(&cfg.state_file) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => out.warnings.push(format!(
                "{e}; a start keeps it as {}.corrupt-<unix time> and begins with empty counters",
                cfg.state_file.display()
            )),
            Err(e) => {
                return Err(err(
                    "state_file",
                    format!("{}: cannot read: {e}", cfg.state_file.display()),
                ));
            }
        }
    }
    if let Some(tf) = &cfg.metrics.textfile {
        // Beside the state file, its directory is the one a start makes;
        // elsewhere (node-exporter's textfile directory) it must exist: a
        // typo there would leave the metrics where nothing collects them.
        let dir = parent_dir(tf);
        if dir == parent_dir(&cfg.state_file) {
            creatable_dir(dir).map_err(|m| err("metrics.textfile", m))?;
        } else {
            dir_writable(tf).map_err(|m| err("metrics.textfile", m))?;
        }
    }
    if cfg.activity.enabled
        && let Err(m) = creatable_dir(&cfg.activity.dir)
    {
        // Not an error: the daemon decides without its log (and says so
        // once per disk), but an admin checking the file should know.
        out.warnings.push(format!(
            "activity_dir: {m}; the daemon would run without its activity logs (`lull status` then has no shadow evaluation across restarts)"
        ));
    }
    let sample = std::fs::read_to_string(&cfg.diskstats)
        .ok()
        .and_then(|t| parse(&t).ok())
        .map(Sample::new);
    if sample.is_none() {
        out.warnings.push(format!(
            "{} cannot be read now: no disk is resolved",
            cfg.diskstats.display()
        ));
    }
    for (i, d) in cfg.disks.iter().enumerate() {
        let found = sample
            .as_ref()
            .map(|s| resolve(&d.device, s.names()))
            .unwrap_or_default();
        for r in &found {
            if let Some(disk) = sample
                .as_ref()
                .and_then(|s| partition_of(&r.kernel, s.names()))
            {
                return Err(ConfigError {
                    file: cfg.path.clone(),
                    line: Some(d.line),
                    key: Some(format!("disk[{i}].device")),
                    message: partition_message(&d.device, &r.kernel, &disk),
                });
            }
            if let Some((j, _)) = out
                .found
                .iter()
                .enumerate()
                .find(|(_, f)| f.iter().any(|o| o.kernel == r.kernel))
            {
                let prev = &cfg.disks[j];
                return Err(ConfigError {
                    file: cfg.path.clone(),
                    line: Some(d.line),
                    key: Some(format!("disk[{i}].device")),
                    message: format!(
                        "`{}` is {} now, which disk[{j}] (`{}`, line {}) already names; a disk can have one entry",
                        d.device, r.kernel, prev.device, prev.line
                    ),
                });
            }
        }
        out.found.push(found);
    }
    if let Some(sample) = &sample {
        out.present = whole_disks(sample);
        out.logged = own_files_on_spun_down_disks(cfg, dry_run, sample, &out.found);
        if !dry_run {
            out.warnings
                .extend(claimed_elsewhere(cfg, sample, &out.found));
        }
    }
    if !dry_run {
        for s in competing_spin_down(cfg, &out.found) {
            out.spinners_warned.push(s.pid);
            out.logged.push(s.warning);
        }
    }
    if cfg.disks.is_empty() {
        // hd-idle with no `-a` watches every disk; lull touches only the
        // disks its file names, so an empty file watches nothing.
        out.logged.push(
            "the configuration names no disk ([[disk]]): the daemon watches nothing (`device = \"sd*\"` names every SCSI and SATA disk)".to_string(),
        );
    }
    Ok(out)
}

/// The disks of `cfg` another daemon has claimed
/// ([`crate::instance::disk_lock_dir`]), one warning each: a start would
/// leave them alone. A daemon on this configuration's own state file is
/// said once, by the state file's warning, not per disk.
fn claimed_elsewhere(cfg: &Config, sample: &Sample, found: &[Vec<Resolved>]) -> Vec<String> {
    use crate::instance::{Holder, disk_lock_dir, disk_lock_path, holder, holder_of};
    let ours = match holder(&cfg.state_file) {
        Holder::Held(pid) => Some(pid),
        _ => None,
    };
    let dir = disk_lock_dir(&cfg.diskstats);
    let mut out = Vec::new();
    for (d, found) in cfg.disks.iter().zip(found) {
        for r in found {
            let Some(dev) = sample.dev(&r.kernel) else {
                continue;
            };
            let path = disk_lock_path(&dir, dev);
            if let Holder::Held(pid) = holder_of(&path)
                && ours != Some(pid)
            {
                out.push(format!(
                    "disk[{}] {}: another lulld{} acts on it (it holds {}): a start would leave it alone",
                    d.index,
                    r.kernel,
                    crate::instance::holder_text(pid),
                    path.display()
                ));
            }
        }
    }
    out
}

/// The daemon's own files that live on a disk this configuration spins
/// down (on the disk, a partition of it, or a device stacked on it: LVM,
/// dm-crypt, md), one warning each: the state file (every
/// `state_interval` and at every spin-down, two `fsync`s), the activity
/// logs (every poll with I/O) and the metrics textfile would wake the disk
/// or keep it awake, and the daemon would count its own writes as the
/// workload's. Where a file's file system has no block device of its own
/// (tmpfs, btrfs's anonymous devices), nothing can be told.
pub fn own_files_on_spun_down_disks(
    cfg: &Config,
    dry_run: bool,
    sample: &Sample,
    found: &[Vec<Resolved>],
) -> Vec<String> {
    let state = if dry_run {
        cfg.dry_run_state_file()
    } else {
        cfg.state_file.clone()
    };
    let mut files: Vec<(&str, std::path::PathBuf)> = vec![("state_file", state)];
    if cfg.activity.enabled {
        files.push(("activity_dir", cfg.activity.dir.clone()));
    }
    if let Some(tf) = &cfg.metrics.textfile {
        files.push(("metrics.textfile", tf.clone()));
    }
    let mut out = Vec::new();
    for (d, found) in cfg.disks.iter().zip(found) {
        if !matches!(d.task, TaskConfig::Standby { .. }) {
            continue;
        }
        for r in found {
            let fam = crate::source::Family::discover(&r.kernel, &cfg.sysfs, sample.names());
            let members: Vec<&String> = std::iter::once(&fam.disk)
                .chain(&fam.partitions)
                .chain(&fam.holders)
                .collect();
            for (key, path) in &files {
                let Some(dev) = device_of(path) else { continue };
                let Some(on) = members.iter().find(|m| sample.dev(m.as_str()) == Some(dev)) else {
                    continue;
                };
                let via = if on.as_str() == r.kernel {
                    String::new()
                } else {
                    format!(" (on {on})")
                };
                out.push(format!(
                    "{key} {} is on {}{via}, which disk[{}] spins down: the daemon's own writes would wake it or keep it awake, and count as its workload; put it on another disk",
                    path.display(),
                    r.kernel,
                    d.index
                ));
            }
        }
    }
    out
}

/// The device numbers of the file system that holds `path`, or of its
/// nearest existing ancestor (a file the daemon has not created yet).
fn device_of(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let mut at = path;
    let meta = loop {
        match std::fs::metadata(at) {
            Ok(m) => break m,
            Err(_) => at = at.parent()?,
        }
    };
    crate::drive::dev_numbers(meta.dev())
}

/// `dir` exists and is a directory the daemon may create files in, or
/// its nearest existing ancestor is one (the daemon creates the rest).
fn creatable_dir(dir: &Path) -> Result<(), String> {
    let mut at = dir;
    loop {
        match std::fs::metadata(at) {
            Ok(_) => return dir_writable(&at.join("x")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match at.parent() {
                Some(p) if !p.as_os_str().is_empty() => at = p,
                _ => return Ok(()),
            },
            Err(e) => return Err(format!("{}: {e}", at.display())),
        }
    }
}

/// The directory `path` is in exists and the daemon may create files in it.
fn dir_writable(path: &Path) -> Result<(), String> {
    let dir = parent_dir(path);
    let m = std::fs::metadata(dir).map_err(|e| format!("directory {}: {e}", dir.display()))?;
    if !m.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    // Try it: permission bits say nothing for root, and a read-only
    // mount or an immutable directory only shows when writing.
    let probe = dir.join(format!(".lull-check.{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| format!("cannot create files in {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// What `lulld --check` found: the configuration as a start would see it
/// and, for each disk present now, the drive it was identified as and the
/// B its task gets. `--format json` prints it as it is (keys documented in
/// `docs/daemon.md`).
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The configuration file.
    pub config: String,
    /// The poll interval, and whether it was derived, in words.
    pub poll: String,
    /// The poll interval, seconds (for scripts).
    pub poll_s: f64,
    /// Whether the poll interval was derived from the disks' networks
    /// (no `poll` in the file).
    pub poll_derived: bool,
    /// The state file.
    pub state_file: String,
    /// One item per disk present now (a glob's every match), and one per
    /// `[[disk]]` that matches nothing now.
    pub disks: Vec<CheckDisk>,
    /// Things a start tolerates but an admin should know.
    pub warnings: Vec<String>,
}

/// One disk of a [`CheckReport`].
#[derive(Clone, Debug, Serialize)]
pub struct CheckDisk {
    /// The kernel name it has now, or the entry's `device` when absent.
    pub device: String,
    /// The `[[disk]]` entry's `device` as written.
    pub entry: String,
    /// The entry's position and line.
    pub index: usize,
    /// The line of its `device` key.
    pub line: usize,
    /// Whether it is present now.
    pub present: bool,
    /// The task, network and stop policy.
    pub task: &'static str,
    /// The network spec.
    pub network: String,
    /// The stop policy.
    pub policy: String,
    /// The drive's preset.
    pub preset: String,
    /// Where it came from: `config`, `identified`, `class` or `default`.
    pub preset_source: &'static str,
    /// Why, in words.
    pub preset_why: String,
    /// What the drive said of itself, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identified: Option<String>,
    /// The break-even time B of its task, in seconds.
    pub breakeven_s: f64,
    /// Why the daemon would never spin it down, if it would not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_alone: Option<String>,
    /// What the state file and the activity log follow the drive by: its
    /// serial number, or the name sysfs has for a drive that gave none
    /// (absent: the disk is known by its entry's key only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// `compare_timeout`, in seconds: the user's own timeout its savings
    /// are set against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare_timeout_s: Option<f64>,
    /// `max_spindowns_per_day` of a `standby` disk: its wear budget over a
    /// rolling 24 h (0: never spun down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_spindowns_per_day: Option<u32>,
    /// Absent now: what might be meant instead, or where to look (a name
    /// that differs from a present disk's only in case, the disks present,
    /// the folder of a missing link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absent_hint: Option<String>,
    /// `task = "jobs"`: the admission decisions, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<String>,
}

impl CheckReport {
    /// The report as `--check` prints it.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{}: ok; poll {}, state file {}\n",
            self.config, self.poll, self.state_file
        );
        for d in &self.disks {
            let now = match (d.present, &d.absent_hint) {
                (true, _) => d.device.clone(),
                (false, None) => "not present now (the daemon waits for it)".to_string(),
                (false, Some(h)) => format!("not present now (the daemon waits for it; {h})"),
            };
            out.push_str(&format!(
                "disk[{}] {} (line {}): {}; task {}, network {}, policy {}\n  drive {} ({}: {}), break-even {}\n",
                d.index,
                d.entry,
                d.line,
                now,
                d.task,
                d.network,
                d.policy,
                d.preset,
                d.preset_source,
                d.preset_why,
                lull_core::time::Nanos::from_secs_f64(d.breakeven_s).approx()
            ));
            if d.present {
                out.push_str(&match &d.serial {
                    Some(s) => format!(
                        "  followed by serial {s:?}: its state and activity log go with the drive to any kernel name\n"
                    ),
                    None => "  no serial number: its state and activity log stay with this entry's key\n".into(),
                });
            }
            if let Some(why) = &d.left_alone {
                out.push_str(&format!("  left alone: {why}\n"));
            } else {
                match d.max_spindowns_per_day {
                    // hd-idle's `-i 0` and `hdparm -S 0` read alike.
                    Some(0) => out.push_str(
                        "  wear budget 0 spin-downs a day (max_spindowns_per_day = 0): it is never spun down\n",
                    ),
                    Some(n) => out.push_str(&format!(
                        "  wear budget {n} spin-downs a day, at most {} at once\n",
                        lull_tasks::gate::WearBudget::capacity(n)
                    )),
                    None => {}
                }
                if let Some(t) = d.compare_timeout_s {
                    out.push_str(&format!(
                        "  savings compared with your timeout {} in lull status and the metrics\n",
                        lull_core::time::Nanos::from_secs_f64(t).approx()
                    ));
                }
            }
            for j in &d.jobs {
                out.push_str(&format!("  {j}\n"));
            }
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }
}

/// The whole disks in `sample`, by kernel name, sorted.
pub(crate) fn whole_disks(sample: &Sample) -> Vec<String> {
    let mut out: Vec<String> = sample
        .names()
        .filter(|n| partition_of(n, sample.names()).is_none())
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// What `--check` (and the daemon's warning) says beside a `[[disk]]`
/// whose `device` resolves to nothing now (the daemon waits for it, so a
/// typo would wait forever): a kernel name that differs from a present
/// disk's only in case is named (kernel names are case-sensitive);
/// another kernel name gets the whole disks present now (its kind first,
/// at most ten; loop, ram, zram and nbd devices only for a name of their
/// kind); a missing link, the folder that lists those present, or that
/// the folder is missing. Nothing for a glob: matching nothing yet is
/// what a glob for hot-plugged disks does.
pub(crate) fn absent_hint(device: &str, present: &[String]) -> Option<String> {
    if crate::devices::is_glob(device) {
        return None;
    }
    let name = device.strip_prefix("/dev/").unwrap_or(device);
    if !name.contains('/') {
        if let Some(p) = present.iter().find(|p| p.eq_ignore_ascii_case(name)) {
            return Some(format!(
                "kernel names are case-sensitive: did you mean `{p}`?"
            ));
        }
        // Those of the same kind first (`sd…` for `sdz`, `nvme…` for
        // `nvme1n1`: the longest common prefix): a server lists dm-, loop,
        // nbd and ram devices too.
        let common = |n: &str| {
            n.bytes()
                .zip(name.bytes())
                .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
                .count()
        };
        // Memory and loop devices (every unattached loop is listed) only
        // for a name of their kind.
        let virtual_ = |p: &str| {
            ["loop", "ram", "zram", "nbd"]
                .iter()
                .any(|v| p.starts_with(v))
        };
        let mut ordered: Vec<&str> = present
            .iter()
            .map(String::as_str)
            .filter(|p| !virtual_(p) || common(p) > 0)
            .collect();
        ordered.sort_by_key(|p| std::cmp::Reverse(common(p)));
        if ordered.is_empty() {
            return None;
        }
        let shown = ordered.iter().take(10).copied().collect::<Vec<_>>();
        let more = ordered.len() - shown.len();
        return Some(format!(
            "present now: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let dir = Path::new(device).parent()?;
    Some(if dir.is_dir() {
        format!("`ls -l {}` lists the links present now", dir.display())
    } else {
        format!("{} does not exist now", dir.display())
    })
}

/// One [`CheckDisk`] for `d` as resolved for its drive.
fn check_disk(
    d: &DiskConfig,
    device: &str,
    present: bool,
    identified: Option<(String, Option<String>)>,
) -> CheckDisk {
    let (identified, serial) = identified.unzip();
    let jobs = match &d.task {
        TaskConfig::Jobs {
            jobs,
            best_effort,
            assume_idle,
        } => {
            let decisions = crate::jobs::admission(jobs, *best_effort, *assume_idle);
            jobs.iter()
                .zip(&decisions)
                .map(|(j, dec)| {
                    format!(
                        "{} (planning on {} of idle time per hour)",
                        crate::jobs::decision_text(j, dec),
                        assume_idle.approx()
                    )
                })
                .collect()
        }
        _ => Vec::new(),
    };
    CheckDisk {
        device: device.to_string(),
        entry: d.device.clone(),
        index: d.index,
        line: d.line,
        present,
        task: d.task.name(),
        network: d.network.clone(),
        policy: d.policy.to_string(),
        preset: d.drive.preset.clone(),
        preset_source: d.drive.source.name(),
        preset_why: d.drive.why.clone(),
        identified,
        serial: serial.flatten(),
        breakeven_s: d.breakeven.as_secs_f64(),
        left_alone: d.left_alone.clone(),
        compare_timeout_s: match d.task {
            TaskConfig::Standby {
                compare_timeout, ..
            } => compare_timeout.map(Nanos::as_secs_f64),
            _ => None,
        },
        max_spindowns_per_day: match d.task {
            TaskConfig::Standby {
                max_spindowns_per_day,
                ..
            } => Some(max_spindowns_per_day),
            _ => None,
        },
        absent_hint: None,
        jobs,
    }
}

/// Validates `path` as a start would ([`Config::load`], then
/// [`preflight`]), identifies the disks present now as the daemon would
/// (read-only questions, see [`crate::identify`]), and describes what the
/// daemon would watch, without starting it.
pub fn check_report(path: &Path, registry: &Registry) -> Result<CheckReport, ConfigError> {
    let cfg = Config::load(path, registry)?;
    let pre = preflight(&cfg, false)?;
    let mut disks = Vec::new();
    let mut warnings = pre.warnings;
    warnings.extend(pre.logged);
    let holder = crate::instance::holder(&cfg.state_file);
    if let crate::instance::Holder::Held(pid) = holder {
        warnings.push(format!(
            "a lulld{} is running on state file {}: a start now would be refused; `systemctl reload lull` (SIGHUP) gives it a changed file",
            crate::instance::holder_text(pid),
            cfg.state_file.display()
        ));
    } else if let Some(addr) = cfg.metrics.listen
        && let Err(e) = std::net::TcpListener::bind(addr)
    {
        // No lulld of this file holds it: a start would fail the same
        // way (another program on the port, a port below 1024 without
        // the right to it).
        warnings.push(format!(
            "metrics.listen {addr}: cannot listen: {e}; a start now would fail (is another program listening there?)"
        ));
    }
    let links = by_id_links();
    // The drives identified so far, by kernel name: a serial number two
    // of them give follows neither, as in the daemon.
    let mut identified: Vec<(String, crate::identify::Identity)> = Vec::new();
    for (d, found) in cfg.disks.iter().zip(&pre.found) {
        if found.is_empty() {
            let mut c = check_disk(d, &d.device, false, None);
            c.absent_hint = absent_hint(&d.device, &pre.present);
            if let Some(w) = short_timeout(registry, d, cfg.poll) {
                warnings.push(format!("disk[{}] {}: {w}", d.index, d.device));
            }
            disks.push(c);
        }
        for r in found {
            let mut id = crate::identify::identify_disk(&r.kernel, &cfg.sysfs);
            let serial = id.serial.clone().unwrap_or_default();
            let seen = identified.iter().map(|(k, i)| (k.as_str(), i));
            if let Some(twin) = id.drop_shared_serial(&r.kernel, seen) {
                warnings.push(format!(
                    "disk[{}] {}: {}",
                    d.index,
                    r.kernel,
                    crate::identify::shared_serial_text(twin, &serial)
                ));
            }
            let facts = id.facts();
            let sectors = crate::identify::sysfs_sectors(&cfg.sysfs, &r.kernel);
            let resolved = match d.for_identified(&facts, sectors, registry) {
                Ok(c) => c,
                Err(m) => {
                    warnings.push(format!(
                        "disk[{}] {}: the configuration does not fit the identified drive ({m}); the daemon would use {}",
                        d.index, r.kernel, d.drive.preset
                    ));
                    d.clone()
                }
            };
            let power = id
                .power_management()
                .map(|p| format!("; {p}"))
                .unwrap_or_default();
            let said = format!(
                "{}{power} (via {})",
                facts.describe(),
                if id.via.is_empty() {
                    "nothing"
                } else {
                    &id.via
                }
            );
            if matches!(d.task, TaskConfig::Standby { .. })
                && let Some(w) = unopenable(&r.kernel)
            {
                warnings.push(format!("disk[{}] {}: {w}", d.index, r.kernel));
            }
            if let TaskConfig::Standby { backend, .. } = resolved.task
                && let Some(w) = no_sg_io(&r.kernel, backend)
            {
                warnings.push(format!("disk[{}] {}: {w}", d.index, r.kernel));
            }
            if let TaskConfig::Standby { backend, .. } = resolved.task
                && resolved.left_alone.is_none()
                && let Some(w) = unreached(&r.kernel, backend, cfg.hdparm.as_deref())
            {
                warnings.push(format!("disk[{}] {}: {w}", d.index, r.kernel));
            }
            if let Some(own) = resolved.own_standby_warning(&id) {
                warnings.push(format!("disk[{}] {}: {own}", d.index, r.kernel));
            }
            if let Some(w) = cfg.poll_warning(&resolved) {
                warnings.push(format!("disk[{}] {}: {w}", d.index, r.kernel));
            }
            if let Some(w) = short_timeout(registry, &resolved, cfg.poll) {
                warnings.push(format!("disk[{}] {}: {w}", d.index, r.kernel));
            }
            if let Some(w) = stable_name_hint(&d.device, &r.kernel, &links)
                .filter(|_| resolved.left_alone.is_none())
            {
                warnings.push(format!("disk[{}] {}: {w}", d.index, r.kernel));
            }
            disks.push(check_disk(
                &resolved,
                &r.kernel,
                true,
                Some((said, id.serial.clone())),
            ));
            identified.push((r.kernel.clone(), id));
        }
    }
    Ok(CheckReport {
        config: path.display().to_string(),
        poll: cfg.poll_text(),
        poll_s: cfg.poll.as_secs_f64(),
        poll_derived: cfg.poll_derived,
        state_file: cfg.state_file.display().to_string(),
        disks,
        warnings,
    })
}

/// The `/dev/disk/by-id/` links and the kernel names they point to now
/// (empty where the folder is missing).
fn by_id_links() -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir("/dev/disk/by-id") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let target = crate::devices::kernel_name(&e.path())?;
            Some((name, target))
        })
        .collect()
}

/// The hint for an entry that names a disk by its kernel name (`sdb`,
/// `/dev/sdb`), which the kernel hands out in the order it finds disks:
/// after a reboot or a replug it can name another drive, which would get
/// this entry's task and budget. The by-id link of the drive `kernel` is
/// now, from `links` (name, kernel name), preferring a transport's name
/// (`ata-`, `scsi-`, `usb-`, `nvme-`) to a `wwn-`; `None` for a glob, a
/// link, or a drive without one (a loop device).
pub(crate) fn stable_name_hint(
    device: &str,
    kernel: &str,
    links: &[(String, String)],
) -> Option<String> {
    let name = device.strip_prefix("/dev/").unwrap_or(device);
    let kernel_named = name == kernel && !name.contains('/');
    if !kernel_named || crate::devices::is_glob(device) {
        return None;
    }
    let mut ours: Vec<&str> = links
        .iter()
        .filter(|(_, k)| k == kernel)
        .map(|(n, _)| n.as_str())
        .collect();
    ours.sort_by_key(|n| (n.starts_with("wwn-"), n.len(), *n));
    let link = ours.first()?;
    Some(format!(
        "`{device}` is a kernel name, which the kernel hands out in the order it finds disks: after a reboot or a replug it can name another drive, which would get this entry; /dev/disk/by-id/{link} names this drive"
    ))
}

/// When a new controller of the standby disk `d`, polled every `poll`,
/// orders its first standby in a quiet stretch after a burst of reads:
/// the network's acting timeout as the daemon acts on it (up to a poll
/// late), measured by driving the daemon's own controller over simulated
/// diskstats, not by reading the spec. `None` when it orders none within
/// four break-even times, or for another task.
pub(crate) fn first_standby(registry: &Registry, d: &DiskConfig, poll: Nanos) -> Option<Nanos> {
    use crate::controller::{Context, DiskController, NoWitness, Now, Order, Output, Settings};
    use crate::source::Family;
    if !matches!(d.task, TaskConfig::Standby { .. }) || poll == Nanos::ZERO {
        return None;
    }
    let family = Family {
        disk: "sdx".into(),
        partitions: vec![],
        holders: vec![],
    };
    let settings = Settings {
        power_check: Nanos::ZERO,
        dry_run: false,
        clock: Nanos::ZERO,
        poll,
        max_poll: poll,
        boot_id: None,
    };
    let mut ctl = DiskController::new(
        registry,
        d,
        "sdx",
        "sdx",
        family,
        1,
        Default::default(),
        settings,
        Nanos::ZERO,
    )
    .ok()?;
    let line = |reads: u64| format!("   8 0 sdx {reads} 0 {} 0 0 0 0 0 0 0 0\n", reads * 8);
    // Reads at the first three polls, then nothing.
    let busy = Nanos(poll.0 * 3);
    let until = busy + Nanos(d.breakeven.0.saturating_mul(4)) + Nanos(poll.0 * 2);
    let mut now = Nanos::ZERO;
    let mut next_poll = Nanos::ZERO;
    let mut out = Vec::new();
    while now <= until {
        let reads = 10 * (now.0 / poll.0).min(3);
        let sample = Sample::new(parse(&line(reads)).ok()?);
        let at = Now {
            mono: now,
            unix: now.0 / 1_000_000_000,
        };
        out.clear();
        let mut cx = Context {
            registry,
            witness: &mut NoWitness,
        };
        ctl.on_poll(at, &sample, false, &mut cx, &mut out);
        let ordered = out.iter().any(|o| {
            matches!(
                o,
                Output::Order {
                    job: None,
                    order: Order::Start { .. }
                }
            )
        });
        if ordered {
            return Some(now.saturating_sub(busy));
        }
        if now >= next_poll {
            next_poll = now + poll;
        }
        now = ctl
            .next_deadline()
            .filter(|&t| t > now)
            .map_or(next_poll, |t| t.min(next_poll));
    }
    None
}

/// The warning for a standby disk whose network spins it down, from the
/// start of a quiet stretch, in under half its break-even time `B` and
/// learns nothing that could change that (a timer converted from hd-idle's
/// `-i 10`, a unit mistake): every idle period between that timeout and
/// `B` costs more energy than it saves, and a spin-up's wear. A learning
/// network (`auto`) adapts its timeout, so it is not judged by its first.
///
/// The timeout is the network's, measured at a poll no longer than the
/// one a derived default would take: under a `poll` longer than the
/// timeout the first standby comes at the poll that shows the burst's
/// last reads, which measured 0 s, so `timer(2B)` under a 10-minute poll
/// was warned of as spinning down "0ns into a quiet stretch" (the long
/// poll has a warning of its own, [`Config::poll_warning`]).
pub(crate) fn short_timeout(registry: &Registry, d: &DiskConfig, poll: Nanos) -> Option<String> {
    let poll = poll.min(crate::config::derived_poll(std::slice::from_ref(d)));
    if d.left_alone.is_some() || d.power.is_none() {
        return None;
    }
    let mut parts = Vec::new();
    let network = crate::controller::build_network(registry, d).ok()?;
    lull_core::component::Detector::save_parts(&network, Nanos::ZERO, &mut parts);
    if parts.iter().any(Option::is_some) {
        return None;
    }
    let t = first_standby(registry, d, poll)?;
    (t.0.saturating_mul(2) < d.breakeven.0).then(|| {
        format!(
            "network `{}` spins the drive down {} into a quiet stretch, under half its break-even time B = {}: a spin-down in an idle period between {} and {} costs more energy than it saves, and a spin-up's wear; a timer of at least B (`timer(B)`) or `auto` avoids that",
            d.network,
            t.approx(),
            d.breakeven.approx(),
            t.approx(),
            d.breakeven.approx(),
        )
    })
}

/// Why the daemon, with this process's rights, could not open `/dev/KERNEL`
/// to send it a spin-down, if it could not: `--check` runs with the
/// daemon's rights (as the unit's `ExecStartPre`), so a daemon run as a
/// user, or a unit that drops the rights it needs, is caught before the
/// first spin-down fails. Opened read-only and non-blocking, as the
/// transport probe does, which sends the drive nothing. Only a refusal is
/// reported; a device node that is not there (a test's fake disk, a
/// container without `/dev`) is for the start to find.
fn unopenable(kernel: &str) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = format!("/dev/{kernel}");
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
    {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Some(refused(&path, &e, crate::config::running_as_root()))
        }
        _ => None,
    }
}

/// What `auto`'s transport probe finds on `/dev/KERNEL` when it finds
/// nothing that reaches the drive: the daemon would leave the disk alone
/// (no spin-down, no power checks), which its start logs but `--check`
/// did not say (a trial found out from the journal). The probe sends
/// only power-state questions (CHECK POWER MODE, REQUEST SENSE, `hdparm
/// -C`), which wake no drive, as the daemon's own does. A device node
/// that is not there (a test's fake disk) is for the start to find.
fn unreached(
    kernel: &str,
    backend: crate::drive::Backend,
    hdparm: Option<&Path>,
) -> Option<String> {
    use crate::transport::{DeviceLink, Transport, probe};
    if backend != crate::drive::Backend::Auto {
        return None;
    }
    let dev = Path::new("/dev").join(kernel);
    if !dev.exists() {
        return None;
    }
    let mut link = DeviceLink::open(&dev, crate::drive::hdparm_program(hdparm));
    match probe(&mut link, &[]) {
        Ok(p) if p.transport == Transport::None => Some(format!(
            "no command reaches the drive ({}): the daemon would leave it alone (no spin-down, no power checks) until it is replugged, as it does loop, NVMe and device-mapper devices",
            p.why
        )),
        _ => None,
    }
}

/// Why a standby by SG_IO (`backend` `sgio`, `ata16`, `ata12`, `scsi`)
/// cannot reach `/dev/KERNEL`, if the device takes no SG_IO at all (a
/// loop device, NVMe, device-mapper): every spin-down would fail (and
/// the daemon back off after three in a row). `auto` probes and leaves such a
/// device alone, and `hdparm` runs its own program, so neither is asked.
/// Asked with REQUEST SENSE, which changes no power state (the transport
/// probe's last question); a device that cannot be opened is for
/// [`unopenable`] and the start.
fn no_sg_io(kernel: &str, backend: crate::drive::Backend) -> Option<String> {
    use crate::drive::Backend;
    if matches!(backend, Backend::Auto | Backend::Hdparm) {
        return None;
    }
    let dev = crate::sgio::Device::open(Path::new("/dev").join(kernel).as_path()).ok()?;
    match dev.send(&crate::sgio::request_sense(18), 18, 5_000) {
        Err(crate::sgio::SendError::NotSg(m)) => Some(format!(
            "backend = \"{}\": {m}, so every spin-down would fail (the daemon backs off after three in a row); the default backend, auto, probes the transport and leaves such a device alone",
            crate::drive::backend_name(backend)
        )),
        _ => None,
    }
}

/// [`unopenable`]'s warning for `path`, refused with `e` to a process run
/// as root (`as_root`) or not. Root refused is refused by something above
/// it (a container that does not pass the device through, a device
/// cgroup, a security policy), which "run it as root" would not mend.
fn refused(path: &str, e: &std::io::Error, as_root: bool) -> String {
    if as_root {
        format!(
            "cannot open {path} ({e}) although the daemon runs as root: something above root refuses it (a container that does not pass the device through, a device cgroup such as systemd's DevicePolicy=/DeviceAllow=, seccomp, AppArmor or SELinux); the daemon could not send it a spin-down until that allows it"
        )
    } else {
        format!(
            "cannot open {path} ({e}): the daemon could not send it a spin-down; run it as root (the packaged unit does), or give it read access to the device and CAP_SYS_RAWIO (SG_IO) or `hdparm`'s rights"
        )
    }
}

/// [`check_report`] as text.
pub fn check(path: &Path, registry: &Registry) -> Result<String, ConfigError> {
    check_report(path, registry).map(|r| r.text())
}

/// The programs that spin disks down on their own timeout
/// ([`process::SPIN_DOWN_DAEMONS`]) and run now, each with its warning,
/// when they may spin down a disk of `cfg` that lull is to spin down
/// (`found`: the disks each entry resolves to now). For hd-idle its
/// command line tells which disks it spins down and after how long
/// ([`competition`]): it is warned of only for those it shares with lull,
/// by name. For another program, or an hd-idle whose command line cannot
/// be read, the warning says that it may.
pub fn competing_spin_down(cfg: &Config, found: &[Vec<Resolved>]) -> Vec<Spinner> {
    let kernels = spun_down_disks(cfg, found);
    if kernels.is_empty() {
        return Vec::new();
    }
    spinners_of(&kernels)
}

/// The programs running now that spin disks down on a timeout of their own
/// ([`process::SPIN_DOWN_DAEMONS`]) and may spin down one of `kernels`,
/// each with its warning ([`competition`]). What the daemon's witness
/// answers when a drive is found asleep that lull did not spin down
/// ([`crate::controller::WakeWitness::spinners`]), and what the start
/// warns of.
pub fn spinners_of(kernels: &[&str]) -> Vec<Spinner> {
    process::running_named(process::SPIN_DOWN_DAEMONS)
        .into_iter()
        .filter_map(|(pid, name)| {
            // An empty command line is a process in the middle of its
            // exec (renamed already, its arguments not yet readable): not
            // hd-idle with no options, but one whose are unknown.
            let args = (name == "hd-idle")
                .then(|| process::cmdline(pid))
                .flatten()
                .filter(|c| !c.is_empty())
                .map(|c| c.into_iter().skip(1).collect());
            let warning = competition(&name, pid, args, kernels, &crate::hd_idle::kernel_name_now)?;
            Some(Spinner { name, pid, warning })
        })
        .collect()
}

/// The disks of `cfg` (`found`: the disks each entry resolves to now)
/// that lull spins down: those of `standby` entries, but not those it
/// leaves alone ([`DiskConfig::leaves_alone`]: a solid-state disk, an
/// empty card-reader slot). Told from sysfs alone (the kernel's rotational
/// flag and the size), which never reaches a drive: a drive the daemon
/// finds to be solid-state only by asking it (a USB SSD the kernel calls
/// rotational) is counted, on the side of warning.
pub fn spun_down_disks<'a>(cfg: &Config, found: &'a [Vec<Resolved>]) -> Vec<&'a str> {
    cfg.disks
        .iter()
        .zip(found)
        .filter(|(d, _)| matches!(d.task, TaskConfig::Standby { .. }))
        .flat_map(|(d, f)| f.iter().map(move |r| (d, r.kernel.as_str())))
        .filter(|(d, k)| {
            let facts = DriveFacts {
                rotational: crate::identify::sysfs_rotational(&cfg.sysfs, k),
                ..DriveFacts::default()
            };
            let sectors = crate::identify::sysfs_sectors(&cfg.sysfs, k);
            d.leaves_alone(Some(&facts), sectors).is_none()
        })
        .map(|(_, k)| k)
        .collect()
}

/// The warning for the spin-down program `name` (pid `pid`) run with the
/// arguments `args` (if known), beside lull spinning down the disks
/// `kernels`; `None` when its arguments show it spins none of them down.
pub fn competition(
    name: &str,
    pid: u32,
    args: Option<Vec<String>>,
    kernels: &[&str],
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    // `-i 0 -a DISK` is hd-idle's own way to leave one disk alone.
    let keep = if name == "hd-idle" {
        ", or `-i 0 -a DISK` in its options"
    } else {
        ", or its own setting that leaves a disk alone"
    };
    let advice = format!(
        "a disk both spin down goes down at whichever timeout comes first, and what lull learns and the savings it reports assume that it alone spins its disks down; stop {name} for the disks lull spins down (`systemctl disable --now {name}`{keep}), or run `lulld --dry-run` beside it to compare"
    );
    let options = args.and_then(|a| crate::hd_idle::parse_words(a).ok());
    let Some(o) = options else {
        return Some(format!(
            "{name} (pid {pid}) is running and may spin down the disks lull does: {advice}"
        ));
    };
    let shared: Vec<String> = kernels
        .iter()
        .filter_map(|&k| {
            let idle = o.idle_for(k, resolve);
            (idle > 0).then(|| format!("{k} (after {})", Nanos::from_secs(idle).approx()))
        })
        .collect();
    (!shared.is_empty()).then(|| {
        format!(
            "{name} (pid {pid}, options `{}`) spins down {} too: {advice}",
            o.words.join(" "),
            shared.join(", ")
        )
    })
}

/// Commands a previous run of the daemon started and did not stop (it was
/// killed with SIGKILL, or crashed) may still run: a command that ignores
/// SIGHUP survives its daemon. Stop those that are still ours (same pid
/// and start time, see [`crate::process`]) so a command never runs twice;
/// forget the others.
pub(crate) async fn stop_orphans(state: &mut State, cfg: &Config) {
    let argvs: Vec<Vec<String>> = cfg
        .disks
        .iter()
        .flat_map(|d| match &d.task {
            TaskConfig::Command { argv, .. } => vec![argv.clone()],
            TaskConfig::Jobs { jobs, .. } => jobs.iter().map(|j| j.argv.clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    for (key, st) in &mut state.disks {
        let mut old: Vec<(String, u32, Option<u64>)> = std::mem::take(&mut st.job_pids)
            .into_iter()
            .map(|(job, p)| (format!("job {job}: command"), p.pid, p.start))
            .collect();
        if let Some(pid) = st.command_pid.take() {
            old.push(("command".into(), pid, st.command_start.take()));
        }
        for (what, pid, start) in old {
            if process::is_our_command(pid, start, &argvs) {
                warn!(
                    "disk {key}: {what} pid {pid} of a previous run still runs (the daemon was killed?); stopping it so it does not run twice"
                );
                let how = process::terminate_group(pid, start, Duration::from_secs(10)).await;
                info!("disk {key}: old {what} pid {pid} {how}");
                st.last_decision = format!("old {what} pid {pid} stopped at start ({how})");
                st.last_decision_unix = crate::timer::unix_now();
            } else {
                info!("disk {key}: {what} pid {pid} of a previous run is gone");
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Starts a program named `hd-idle` in `dir` (a `sleep 60`: its
    /// command line is not hd-idle's) and waits until it runs as that.
    pub(crate) fn fake_hd_idle(dir: &Path) -> std::process::Child {
        let fake = dir.join("hd-idle");
        // A link, not a copy: the process is named after the path run,
        // and a copy just written can fail to run (ETXTBSY) while another
        // test's thread forks with its file still open for writing.
        std::os::unix::fs::symlink("/bin/sleep", &fake).unwrap();
        let p = std::process::Command::new(&fake).arg("60").spawn().unwrap();
        // `spawn` may return before the child has run the program, and
        // an exec renames the process before its new command line can be
        // read (empty until then: read as hd-idle's with no options).
        let comm = format!("/proc/{}/comm", p.id());
        for _ in 0..500 {
            if std::fs::read_to_string(&comm).is_ok_and(|c| c == "hd-idle\n")
                && crate::process::cmdline(p.id()).is_some_and(|c| !c.is_empty())
            {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        p
    }

    /// A program named like hd-idle, started now, is found spinning the
    /// disk down (its command line is not hd-idle's, so it may spin down
    /// any: the warning says so), with its pid; gone, it is not.
    #[test]
    fn a_running_spin_down_program_is_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = fake_hd_idle(dir.path());
        let found = spinners_of(&["fakea"]);
        let ours: Vec<_> = found.iter().filter(|s| s.pid == p.id()).collect();
        assert_eq!(ours.len(), 1, "{found:?}");
        assert_eq!(ours[0].name, "hd-idle");
        assert!(
            ours[0]
                .warning
                .contains(&format!("hd-idle (pid {})", p.id())),
            "{}",
            ours[0].warning
        );
        p.kill().unwrap();
        p.wait().unwrap();
        assert!(spinners_of(&["fakea"]).iter().all(|s| s.pid != p.id()));
    }

    /// A refusal to root is not mended by running as root: the warning
    /// says what refuses root instead.
    #[test]
    fn a_device_refused_to_root_is_not_told_to_run_as_root() {
        let e = std::io::Error::from_raw_os_error(libc::EPERM);
        let user = refused("/dev/sdb", &e, false);
        assert!(user.contains("run it as root"), "{user}");
        let root = refused("/dev/sdb", &e, true);
        assert!(!root.contains("run it as root"), "{root}");
        assert!(
            root.starts_with("cannot open /dev/sdb (Operation not permitted (os error 1)) although the daemon runs as root"),
            "{root}"
        );
        assert!(root.contains("device cgroup"), "{root}");
    }

    #[test]
    fn an_absent_disk_gets_a_hint_where_one_helps() {
        let present: Vec<String> = ["loop0", "sda", "sdb"].map(String::from).to_vec();
        assert_eq!(
            absent_hint("SDA", &present).as_deref(),
            Some("kernel names are case-sensitive: did you mean `sda`?")
        );
        assert_eq!(
            absent_hint("/dev/Loop0", &present).as_deref(),
            Some("kernel names are case-sensitive: did you mean `loop0`?")
        );
        assert_eq!(
            absent_hint("sdz", &present).as_deref(),
            Some("present now: sda, sdb")
        );
        assert_eq!(
            absent_hint("loop9", &present).as_deref(),
            Some("present now: loop0, sda, sdb")
        );
        let only_loops: Vec<String> = ["loop0", "zram0"].map(String::from).to_vec();
        assert_eq!(absent_hint("sdb", &only_loops), None);
        let many: Vec<String> = (0..13).map(|i| format!("sd{i}")).collect();
        assert!(
            absent_hint("nvme0n1", &many)
                .unwrap()
                .ends_with("sd8, sd9 and 3 more")
        );
        // A glob for hot-plugged disks waits quietly.
        assert_eq!(absent_hint("sd[x-z]", &present), None);
        assert_eq!(absent_hint("sdz", &[]), None);
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("ata-NOPE");
        assert_eq!(
            absent_hint(link.to_str().unwrap(), &present),
            Some(format!(
                "`ls -l {}` lists the links present now",
                dir.path().display()
            ))
        );
        let gone = dir.path().join("by-nothing/ata-NOPE");
        assert_eq!(
            absent_hint(gone.to_str().unwrap(), &present),
            Some(format!(
                "{} does not exist now",
                dir.path().join("by-nothing").display()
            ))
        );
    }

    fn args(s: &str) -> Option<Vec<String>> {
        Some(s.split_whitespace().map(String::from).collect())
    }

    // The hd-idle warning names only disks lull spins down: not a flush
    // entry's, not a solid-state disk or an empty slot under a glob, but
    // those with a preset named whatever they are.
    #[test]
    fn only_disks_lull_spins_down_are_shared_with_hd_idle() {
        let dir = tempfile::tempdir().unwrap();
        let sysfs = dir.path();
        for (name, rotational, size) in [
            ("sda", "1", "7814037168"),
            ("sdb", "0", "1953525168"),
            ("sdc", "1", "0"),
            ("sdd", "1", "7814037168"),
            ("sde", "0", "0"),
        ] {
            let d = sysfs.join("block").join(name);
            std::fs::create_dir_all(d.join("queue")).unwrap();
            std::fs::write(d.join("queue/rotational"), rotational).unwrap();
            std::fs::write(d.join("size"), size).unwrap();
        }
        let text = format!(
            "sysfs = {:?}\n[[disk]]\ndevice = \"sd[abc]\"\n[[disk]]\ndevice = \"sdd\"\ntask = \"flush\"\n[[disk]]\ndevice = \"sde\"\npreset = \"paper-2.5in\"\n",
            sysfs.display().to_string()
        );
        let cfg = Config::parse(Path::new("lull.toml"), &text, &crate::default_registry()).unwrap();
        let found: Vec<Vec<Resolved>> = [&["sda", "sdb", "sdc"][..], &["sdd"], &["sde"]]
            .iter()
            .map(|names| {
                names
                    .iter()
                    .map(|n| Resolved {
                        key: n.to_string(),
                        kernel: n.to_string(),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(spun_down_disks(&cfg, &found), ["sda", "sde"]);
    }

    #[test]
    fn hd_idle_is_named_only_for_the_disks_it_shares_with_lull() {
        let none = |_: &str| None;
        // Debian's example: it spins down only sda, and lull only sdb.
        assert_eq!(
            competition("hd-idle", 7, args("-i 0 -a sda -i 300"), &["sdb"], &none),
            None
        );
        let w = competition(
            "hd-idle",
            7,
            args("-i 0 -a sdb -i 300"),
            &["sdb", "sdc"],
            &none,
        )
        .unwrap();
        assert!(
            w.starts_with(
                "hd-idle (pid 7, options `-i 0 -a sdb -i 300`) spins down sdb (after 5m) too: "
            ),
            "{w}"
        );
        // Its default covers every sd disk after 10 minutes.
        let w = competition("hd-idle", 7, args(""), &["sdc"], &none).unwrap();
        assert!(w.contains("spins down sdc (after 10m) too"), "{w}");
        // Options it cannot read, or another program: it may.
        for (name, a) in [
            ("hd-idle", None),
            ("hd-idle", args("-x")),
            ("spindownd", None),
        ] {
            let w = competition(name, 9, a, &["sdb"], &none).unwrap();
            assert!(
                w.starts_with(&format!("{name} (pid 9) is running and may spin down")),
                "{w}"
            );
            // hd-idle's options are advised to hd-idle alone.
            assert_eq!(w.contains("-i 0 -a DISK"), name == "hd-idle", "{w}");
        }
    }

    /// The acting timeout is measured on the daemon's own controller, and
    /// only a network that spins down in under half of `B` and learns
    /// nothing is warned of: hd-idle's `-i 10` converted, not `auto`, a
    /// timer of `B` or a timer whose predictor keeps it from acting.
    #[test]
    fn a_timer_far_shorter_than_break_even_is_warned_of() {
        let registry = crate::default_registry();
        let disk = |network: &str| {
            let text = format!(
                "[[disk]]\ndevice = \"sdb\"\nnetwork = \"{network}\"\ntask = \"standby\"\npreset = \"wd-red-plus\"\n"
            );
            Config::parse(Path::new("lull.toml"), &text, &registry)
                .unwrap()
                .disks
                .remove(0)
        };
        let poll = Nanos::from_secs(1);
        let b = disk("auto").breakeven;
        assert_eq!(b.as_secs_f64().round(), 72.0, "{b}");
        // A timer acts at its timeout: the poll after the last reads is
        // the quiet stretch's start.
        let t = first_standby(&registry, &disk("timer(10s)"), poll).unwrap();
        assert!(
            (Nanos::from_secs(10)..=Nanos::from_secs(11)).contains(&t),
            "{t}"
        );
        let w = short_timeout(&registry, &disk("timer(10s)"), poll).unwrap();
        assert!(w.contains("`timer(10s)` spins the drive down 10s"), "{w}");
        assert!(w.contains("B = 1m12s"), "{w}");
        // At B/2 or longer: not warned of.
        assert!(short_timeout(&registry, &disk("timer(37s)"), poll).is_none());
        assert!(short_timeout(&registry, &disk("timer(B)"), poll).is_none());
        // Under a poll longer than the timeout, the network's timeout
        // still: `timer(2B)` is not warned of, `timer(10s)` is, at 10 s.
        let long = Nanos::from_secs(600);
        assert!(short_timeout(&registry, &disk("timer(2B)"), long).is_none());
        let w = short_timeout(&registry, &disk("timer(10s)"), long).unwrap();
        assert!(w.contains("spins the drive down 10s"), "{w}");
        let t = first_standby(&registry, &disk("timer(2B)"), poll).unwrap();
        assert!(t >= Nanos(2 * b.0) && t <= Nanos(2 * b.0) + poll, "{t}");
        // A predictor that says the period is shorter than B keeps it from
        // spinning down at all.
        assert_eq!(
            first_standby(&registry, &disk("timer(10s) + fixed(20s)"), poll),
            None
        );
        // A learner adapts: never judged by its first timeout.
        assert!(short_timeout(&registry, &disk("auto"), poll).is_none());
        assert!(short_timeout(&registry, &disk("share()"), poll).is_none());
    }

    /// A kernel name gets the drive's by-id link, a transport's name
    /// first; a glob, a link already, or a drive with no link gets none.
    #[test]
    fn a_kernel_name_is_told_the_drives_stable_name() {
        let links: Vec<(String, String)> = [
            ("wwn-0x50014ee2b5a1c3d4", "sdb"),
            ("ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX", "sdb"),
            ("ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX-part1", "sdb1"),
            ("usb-WD_Elements_25A3_575836314134-0:0", "sdc"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .to_vec();
        for device in ["sdb", "/dev/sdb"] {
            let w = stable_name_hint(device, "sdb", &links).unwrap();
            assert!(
                w.ends_with(
                    "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX names this drive"
                ),
                "{w}"
            );
            assert!(
                w.starts_with(&format!("`{device}` is a kernel name")),
                "{w}"
            );
        }
        assert!(
            stable_name_hint("sdc", "sdc", &links)
                .unwrap()
                .contains("usb-WD_Elements")
        );
        assert_eq!(stable_name_hint("sd[b-c]", "sdb", &links), None);
        assert_eq!(
            stable_name_hint(
                "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX",
                "sdb",
                &links
            ),
            None
        );
        assert_eq!(stable_name_hint("loop0", "loop0", &links), None);
    }
}
