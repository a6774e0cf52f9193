//! The checks a start (and a reload) runs before it touches anything:
//! the configuration's files and directories, the disks as they resolve
//! now, the daemon's own files on a disk it spins down, other programs
//! that spin disks down, and the commands a previous run left behind.
//!
//! `lulld --check` runs these too, and adds what only an admin asks for
//! ([`crate::admin::check`]). By subject: [`files`] (the daemon's own
//! files), [`names`] (disks present and hints for absent ones),
//! [`spinners`] (other spin-down programs), `orphans` (commands left
//! running).

use crate::config::{Config, ConfigError};
use crate::devices::{Resolved, partition_message, partition_of, resolve};
use crate::diskstats::parse;
use crate::instance::parent_dir;
use crate::source::Sample;
use crate::state::State;

pub mod files;
pub mod names;
mod orphans;
pub mod spinners;

pub use files::own_files_on_spun_down_disks;
pub(crate) use names::{absent_hint, whole_disks};
pub(crate) use orphans::stop_orphans;
pub use spinners::{competing_spin_down, competition, spinners_of, spun_down_disks};

use files::{creatable_dir, dir_writable};

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

#[cfg(test)]
pub(crate) mod tests;
