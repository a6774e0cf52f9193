//! The daemon's own files: where they may go (a directory it may create
//! files in), and which of them live on a disk it spins down.

use std::path::Path;

use crate::config::{Config, TaskConfig};
use crate::devices::Resolved;
use crate::instance::parent_dir;
use crate::source::Sample;

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
pub(super) fn creatable_dir(dir: &Path) -> Result<(), String> {
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
pub(super) fn dir_writable(path: &Path) -> Result<(), String> {
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
