//! Atomic output files: every file is written under a temporary name in
//! its destination directory, flushed to disk, then renamed over the final
//! name, so a reader (or an interrupted run) never sees half a file. A
//! failed write removes its temporary file; temporary names start with
//! [`TEMP_PREFIX`] and [`clean_stale`] removes leftovers of a killed run.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::RankError;

/// Temporary files start with this.
pub const TEMP_PREFIX: &str = ".lull-tmp-";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary path beside `path`, keeping its extension (image
/// encoders pick the format from it).
pub fn temp_path(path: &Path) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!("{TEMP_PREFIX}{}-{n}-{name}", std::process::id()))
}

/// Runs `write` on a temporary path, then renames it to `path`. On error
/// the temporary file is removed and `path` is left as it was.
pub fn write_with<F>(path: &Path, write: F) -> Result<(), RankError>
where
    F: FnOnce(&Path) -> Result<(), RankError>,
{
    let tmp = temp_path(path);
    let result = write(&tmp).and_then(|()| {
        // Flush the data before the rename makes it visible.
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| RankError::io(&tmp, e))?;
        fs::rename(&tmp, path).map_err(|e| RankError::io(path, e))
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `path` atomically.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), RankError> {
    write_with(path, |tmp| {
        let mut f = File::create(tmp).map_err(|e| RankError::io(tmp, e))?;
        f.write_all(bytes).map_err(|e| RankError::io(tmp, e))
    })
}

/// Removes temporary files left in `dir` by an interrupted run.
pub fn clean_stale(dir: &Path) -> Result<(), RankError> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            fs::remove_file(e.path()).map_err(|err| RankError::io(e.path(), err))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn success_renames_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_bytes(&p, b"x\n1\n").unwrap();
        write_bytes(&p, b"x\n2\n").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"x\n2\n");
        assert_eq!(names(dir.path()), vec!["a.csv"]);
    }

    #[test]
    fn failure_keeps_the_old_file_and_removes_the_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_bytes(&p, b"old").unwrap();
        let r = write_with(&p, |tmp| {
            fs::write(tmp, b"half of a ne").unwrap();
            Err(RankError::Input("disk full (simulated)".into()))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(names(dir.path()), vec!["a.csv"]);
        // A failed first write leaves nothing at all.
        let q = dir.path().join("b.png");
        assert!(write_with(&q, |_| Err(RankError::Input("no".into()))).is_err());
        assert!(!q.exists());
    }

    #[test]
    fn stale_temps_are_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(format!("{TEMP_PREFIX}1-0-x.csv")), b"").unwrap();
        fs::write(dir.path().join("keep.csv"), b"").unwrap();
        clean_stale(dir.path()).unwrap();
        assert_eq!(names(dir.path()), vec!["keep.csv"]);
        assert_eq!(temp_path(Path::new("/d/p.png")).extension().unwrap(), "png");
    }
}
