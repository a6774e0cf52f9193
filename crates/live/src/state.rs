//! The state file (SPEC §6.1): per-disk counters kept across restarts.
//!
//! A JSON object with one entry per disk, keyed by the disk's stable name
//! (the device as configured, or the glob match). Written atomically: a
//! temporary file in the same directory, `fsync`, `rename`, `fsync` of the
//! directory, so a crash or power cut leaves the old file or the new one,
//! never half of one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One disk's counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskState {
    /// Idle periods observed (a poll with activity followed by one without).
    pub idle_starts: u64,
    /// Times the idle task was started.
    pub task_starts: u64,
    /// Times it was stopped (the disk became busy, or the prediction ran out).
    pub task_stops: u64,
    /// Successful spin-downs.
    pub spindowns: u64,
    /// Activity seen on a disk lull had spun down.
    pub spinups: u64,
    /// Seconds spent in standby after lull's spin-downs.
    pub standby_s: f64,
    /// The last decision, in words.
    pub last_decision: String,
    /// When it was taken (Unix seconds).
    pub last_decision_unix: u64,
    /// The kernel name the disk had last.
    pub kernel_name: String,
    /// Whether the disk was present at the last poll.
    pub present: bool,
    /// Errors while acting on the disk.
    pub errors: u64,
    /// The running command's process id, if any.
    pub command_pid: Option<u32>,
    /// Commands that ran to their end.
    pub command_exits: u64,
    /// Unix times of the spin-downs of the last 24 h (the wear budget).
    pub recent_spindowns: Vec<u64>,
}

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct State {
    /// By disk.
    pub disks: BTreeMap<String, DiskState>,
}

impl State {
    /// Reads `path`; a missing file is an empty state. A file that does
    /// not parse is an error (the caller decides whether to start afresh).
    pub fn load(path: &Path) -> std::io::Result<State> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: not a lull state file: {e}", path.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(e),
        }
    }

    /// Writes the state to `path` atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        json.push(b'\n');
        write_atomically(path, &json, true)
    }

    /// The entry of `key`, created if needed.
    pub fn disk(&mut self, key: &str) -> &mut DiskState {
        self.disks.entry(key.to_string()).or_default()
    }
}

/// Writes `bytes` to `path` through a temporary file and `rename`, so
/// readers see the old or the new content, never a mix. `durable` adds the
/// `fsync`s that make it survive a power cut (the state file needs them; a
/// metrics textfile, rewritten every second, does not).
pub fn write_atomically(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        drop(f);
        std::fs::rename(&tmp, path)?;
        // The rename is durable once the directory is.
        if durable {
            if let Ok(d) = std::fs::File::open(&dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        assert_eq!(State::load(&p).unwrap(), State::default());
        let mut s = State::default();
        s.disk("sda").spindowns = 3;
        s.disk("sda").last_decision = "standby".into();
        s.save(&p).unwrap();
        let back = State::load(&p).unwrap();
        assert_eq!(back, s);
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        for k in [
            "idle_starts",
            "task_starts",
            "task_stops",
            "spindowns",
            "spinups",
            "standby_s",
            "last_decision",
        ] {
            assert!(v["sda"].get(k).is_some(), "{k}");
        }
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // An unwritable place fails and leaves nothing.
        let bad = p.join("below-a-file.json");
        assert!(s.save(&bad).is_err());
    }
}
