//! One daemon per state file: an exclusive `flock` on `STATE_FILE.lock`,
//! held for the daemon's life.
//!
//! Why: an admin who starts `lulld --config /etc/lull.toml` by hand while
//! the service runs gets two daemons on the same disks. Both would act
//! (two maintenance commands at once, spin-downs from both), both would
//! write one state file and one metrics textfile, each overwriting the
//! other's counters, and the second would take the first's running
//! command, recorded in the state file, for one left over from a crash
//! and stop it. So the second start is refused before it reads the state
//! file, naming the daemon that holds it.
//!
//! Why a lock file beside the state file and not the state file itself:
//! the state file is replaced by a rename at every write, so a lock on it
//! would be on an inode that is soon gone. Why `flock` and not a pid file:
//! the kernel drops the lock when its holder dies, however it dies
//! (`kill -9`, a power cut), so a crashed daemon never blocks the next
//! start and no stale file needs cleaning. The file holds the holder's pid
//! for the message only; it is never removed (removing it would let a
//! third start lock a new inode while the second still holds the old one).
//! An admin may remove it anyway, with the state directory, to start
//! afresh: the running daemon checks at every poll that the path still
//! names the file it holds ([`InstanceLock::intact`]) and otherwise makes
//! and locks it again ([`InstanceLock::retake`]), or stops if another
//! daemon locked the new file first.
//! Not on the disk devices: `udevd` skips a block device another process
//! holds an exclusive `flock` on, which a daemon must never cause.
//!
//! Each real daemon also claims the disks it acts on, one lock per disk
//! keyed by device numbers ([`disk_lock_dir`]), without waiting: a
//! configuration with a state file of its own escapes the state file's
//! lock, not the disk's.
//!
//! A dry run locks its own state file's lock (`state.dry-run.json.lock`),
//! so it can run beside the real daemon, as docs/daemon.md suggests when
//! switching from hd-idle; where it may not create that file (a dry run
//! must not need the real daemon's rights) it runs unlocked and says so.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// How long a start waits for the lock before it is refused: long enough
/// for a `lulld --check` run by hand at the same moment to let go (it
/// holds the lock for a moment to see whether it is free), short enough
/// that a second daemon is refused at once to a person.
const WAIT: Duration = Duration::from_secs(2);

/// An exclusive lock of a state file or of a disk, released when dropped
/// (or when the process dies).
#[derive(Debug)]
pub struct InstanceLock {
    path: PathBuf,
    _lock: Flock<File>,
}

/// Why [`InstanceLock::acquire`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock. The text is the state file's case;
    /// the daemon words a disk's claim itself.
    #[error(
        "another lulld{} is running on this state file (it holds {}): two daemons on one state file overwrite each other's counters and what they learned, and both act on the same disks; stop it first (`systemctl stop lull`), or give it a changed configuration with `systemctl reload lull`",
        holder_text(*.pid),
        .path.display()
    )]
    Held {
        /// The lock file.
        path: PathBuf,
        /// The pid written in it by its holder, if readable.
        pid: Option<u32>,
    },
    /// The lock file cannot be opened or locked.
    #[error("lock file {}: {source}", .path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// ` (pid N)` when the holder's pid is known, for messages that name it.
pub(crate) fn holder_text(pid: Option<u32>) -> String {
    pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
}

/// The lock file of `state_file`: `STATE_FILE.lock`.
pub fn lock_path(state_file: &Path) -> PathBuf {
    let mut s = state_file.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// The directory `path` is in (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

impl InstanceLock {
    /// Locks `state_file`'s lock file, creating it (and the directory
    /// both are in, as `mkdir -p` would: a `cargo install` has no package
    /// to make `/var/lib/lull`), and writes this process's pid in it.
    /// Waits up to two seconds for a holder to let go.
    pub fn acquire(state_file: &Path) -> Result<InstanceLock, LockError> {
        let path = lock_path(state_file);
        let dir = parent_dir(state_file);
        std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
            path: path.clone(),
            source,
        })?;
        Self::lock(path, WAIT)
    }

    /// Locks the disk with device numbers `dev` in `dir` (created if need
    /// be) without waiting: the poll loop must not block. See [`disk_lock_dir`].
    pub fn acquire_disk(dir: &Path, dev: (u32, u32)) -> Result<InstanceLock, LockError> {
        let path = disk_lock_path(dir, dev);
        std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
            path: path.clone(),
            source,
        })?;
        Self::lock(path, Duration::ZERO)
    }

    fn lock(path: PathBuf, wait: Duration) -> Result<InstanceLock, LockError> {
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let deadline = Instant::now() + wait;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(mut lock) => {
                    let pid = format!("{}\n", std::process::id());
                    lock.set_len(0)
                        .and_then(|()| lock.seek(SeekFrom::Start(0)).map(drop))
                        .and_then(|()| lock.write_all(pid.as_bytes()))
                        .map_err(io)?;
                    return Ok(InstanceLock { path, _lock: lock });
                }
                Err((mut file, Errno::EWOULDBLOCK)) => {
                    if Instant::now() >= deadline {
                        return Err(LockError::Held {
                            pid: read_pid(&mut file),
                            path,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err((_, e)) => return Err(io(std::io::Error::from(e))),
            }
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the lock file at [`InstanceLock::path`] is still the file
    /// this lock holds (same device and inode). An admin who removes the
    /// state directory to start afresh removes the lock file with it: the
    /// lock then holds an inode no path names, and a second daemon would
    /// lock a new file and take the state file.
    pub fn intact(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(&self.path), self._lock.metadata()) {
            (Ok(named), Ok(held)) => named.dev() == held.dev() && named.ino() == held.ino(),
            _ => false,
        }
    }

    /// Takes the lock again when it is no longer [`intact`](Self::intact),
    /// without waiting: the lock file (and its directory, as at a start) is
    /// made anew and locked. `Ok(false)`: it was intact; `Ok(true)`: taken
    /// again; [`LockError::Held`]: another process locked the new file
    /// first (this one keeps its old lock, which protects nothing now).
    pub fn retake(&mut self) -> Result<bool, LockError> {
        if self.intact() {
            return Ok(false);
        }
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
                path: self.path.clone(),
                source,
            })?;
        }
        *self = Self::lock(self.path.clone(), Duration::ZERO)?;
        Ok(true)
    }
}

/// The lock file of the disk with device numbers `dev` in `dir`:
/// `dir/disk-MAJOR-MINOR.lock`.
pub fn disk_lock_path(dir: &Path, dev: (u32, u32)) -> PathBuf {
    dir.join(format!("disk-{}-{}.lock", dev.0, dev.1))
}

/// Where the daemons of one machine lock the disks they act on: `/run/lull`
/// for the machine's own `/proc/diskstats`; beside any other diskstats
/// file (a test's simulated machine), so that the locks belong to the
/// machine whose disks they name.
///
/// Why per disk as well as per state file: two daemons with different
/// state files (a configuration tried by hand with its own `state_file`)
/// could otherwise act on one disk. A real daemon claims each disk it
/// acts on; a disk another daemon holds is left alone, with an error.
/// Keyed by device numbers, which name a disk whatever path or link the
/// configurations use. A daemon that may not create the directory (not
/// root) acts without the claim.
pub fn disk_lock_dir(diskstats: &Path) -> PathBuf {
    if diskstats == Path::new("/proc/diskstats") {
        PathBuf::from("/run/lull")
    } else {
        let mut name = diskstats.as_os_str().to_owned();
        name.push(".lull-locks");
        PathBuf::from(name)
    }
}

/// Who holds a state file's lock now ([`holder`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    /// A daemon runs on it: its pid, when the lock file gives it.
    Held(Option<u32>),
    /// The lock file exists and nothing holds it: the daemon that used
    /// this state file has stopped (or died).
    Free,
    /// No lock file (or one this process may not read): no daemon of
    /// this version has run on this state file, or it cannot be told.
    Unknown,
}

/// Who holds `state_file`'s lock now (`lulld --check` and `lull status`
/// say so). A check must not create the lock file, so a missing one is
/// [`Holder::Unknown`]. The probe holds the lock for a moment when it is
/// free, which a start meanwhile waits out.
pub fn holder(state_file: &Path) -> Holder {
    holder_of(&lock_path(state_file))
}

/// Who holds the lock file `path` now (see [`holder`]).
pub fn holder_of(path: &Path) -> Holder {
    let Ok(file) = File::open(path) else {
        return Holder::Unknown;
    };
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(_free) => Holder::Free,
        Err((mut file, Errno::EWOULDBLOCK)) => Holder::Held(read_pid(&mut file)),
        Err(_) => Holder::Unknown,
    }
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holders_pid_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let first = InstanceLock::acquire(&state).unwrap();
        assert_eq!(first.path(), dir.path().join("state.json.lock"));
        assert_eq!(holder(&state), Holder::Held(Some(std::process::id())));
        // flock locks belong to an open file description: a second open in
        // the same process conflicts, as another process's would.
        match InstanceLock::acquire(&state) {
            Err(e @ LockError::Held { pid, .. }) => {
                assert_eq!(pid, Some(std::process::id()));
                let text = e.to_string();
                assert!(
                    text.contains(&format!("pid {}", std::process::id())),
                    "{text}"
                );
                assert!(text.contains("state.json.lock"), "{text}");
            }
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        assert_eq!(holder(&state), Holder::Free);
        let again = InstanceLock::acquire(&state).unwrap();
        let written = std::fs::read_to_string(again.path()).unwrap();
        assert_eq!(written, format!("{}\n", std::process::id()));
    }

    #[test]
    fn a_disk_is_claimed_once_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().join("locks");
        let first = InstanceLock::acquire_disk(&locks, (8, 16)).unwrap();
        assert_eq!(first.path(), locks.join("disk-8-16.lock"));
        let t = Instant::now();
        assert!(matches!(
            InstanceLock::acquire_disk(&locks, (8, 16)),
            Err(LockError::Held { pid: Some(p), .. }) if p == std::process::id()
        ));
        assert!(t.elapsed() < WAIT, "no wait in the poll loop");
        // Another disk is another lock.
        let _other = InstanceLock::acquire_disk(&locks, (8, 32)).unwrap();
        drop(first);
        assert_eq!(holder_of(&locks.join("disk-8-16.lock")), Holder::Free);
        assert_eq!(
            disk_lock_dir(Path::new("/proc/diskstats")),
            Path::new("/run/lull")
        );
        assert_eq!(
            disk_lock_dir(Path::new("/tmp/x/diskstats")),
            Path::new("/tmp/x/diskstats.lull-locks")
        );
    }

    #[test]
    fn a_lock_whose_file_was_removed_is_taken_again_unless_another_took_it() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("lull").join("state.json");
        let mut lock = InstanceLock::acquire(&state).unwrap();
        assert!(lock.intact());
        assert!(!lock.retake().unwrap());
        // The admin removes the state directory: the lock is not intact,
        // and a second daemon could lock the state file now.
        std::fs::remove_dir_all(dir.path().join("lull")).unwrap();
        assert!(!lock.intact());
        assert!(lock.retake().unwrap());
        assert!(lock.intact());
        assert_eq!(holder(&state), Holder::Held(Some(std::process::id())));
        assert!(matches!(
            InstanceLock::lock(lock_path(&state), Duration::ZERO),
            Err(LockError::Held { .. })
        ));
        // Removed again, and another process locks the new file first.
        std::fs::remove_dir_all(dir.path().join("lull")).unwrap();
        let other = InstanceLock::acquire(&state).unwrap();
        assert!(!lock.intact());
        assert!(matches!(lock.retake(), Err(LockError::Held { .. })));
        drop(other);
    }

    #[test]
    fn no_lock_file_means_unknown_and_a_check_creates_none() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        assert_eq!(holder(&state), Holder::Unknown);
        assert!(!lock_path(&state).exists());
    }

    #[test]
    fn a_missing_directory_is_created_and_one_that_cannot_be_is_an_io_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("var/lib/lull").join("state.json");
        let lock = InstanceLock::acquire(&state).unwrap();
        assert!(lock_path(&state).is_file());
        drop(lock);
        // A path through a regular file cannot be made.
        std::fs::write(dir.path().join("file"), b"").unwrap();
        let state = dir.path().join("file/lull").join("state.json");
        let e = InstanceLock::acquire(&state).unwrap_err();
        assert!(matches!(e, LockError::Io { .. }), "{e:?}");
        assert!(e.to_string().contains("file/lull/state.json.lock"), "{e}");
    }
}
