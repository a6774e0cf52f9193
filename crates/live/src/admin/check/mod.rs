//! `--check`: the configuration as a start would see it, each disk with
//! the drive it was identified as and its break-even time B, and what an
//! admin should know before starting (`lulld --check`, `lull daemon
//! --check`).
//!
//! It runs the start's own checks ([`crate::preflight()`]) and adds what
//! only an admin asks for: by subject, [`hints`] (names and timeouts an
//! admin may want to change) and `access` (whether the daemon could reach
//! each drive with the rights it runs with).

use std::path::Path;

use lull_core::registry::Registry;
use lull_core::time::Nanos;
use serde::Serialize;

use crate::config::{Config, ConfigError, DiskConfig, TaskConfig};
use crate::preflight::{absent_hint, preflight};

mod access;
pub mod hints;

use access::{no_sg_io, unopenable, unreached};
use hints::{short_timeout, stable_name_hint};

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
            if let Some(why) = lull_tasks::PowerModel::caveat_for(&d.preset, d.breakeven_s) {
                out.push_str(&format!("  B unverified: {why}\n"));
            }
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
        preset: d.profile.preset().to_string(),
        preset_source: d.profile.source().name(),
        preset_why: d.profile.why().to_string(),
        identified,
        serial: serial.flatten(),
        breakeven_s: d.breakeven().as_secs_f64(),
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
                        d.index, r.kernel, d.profile.preset()
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

/// [`check_report`] as text.
pub fn check(path: &Path, registry: &Registry) -> Result<String, ConfigError> {
    check_report(path, registry).map(|r| r.text())
}

#[cfg(test)]
mod tests;
