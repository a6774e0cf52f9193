//! Asking new drives what they are, off the poll loop.
//!
//! A drive found for the first time is identified (IDENTIFY DEVICE and
//! VPD pages over SG_IO, `identify::identify_disk`) before its controller
//! starts: its B comes from what it says it is. Most drives answer in
//! milliseconds, but a drive behind a slow USB bridge, or one that spins
//! up to answer, can take seconds. Asked inline, such a drive stalled
//! every other disk's poll for that long.
//!
//! So each question runs on a thread of its own. The poll loop waits for
//! the answer only briefly ([`WAIT`]): a drive that answers by then starts
//! in the same poll, as before. One that does not is not asked again: the
//! loop goes on without waiting at the later polls, and the drive's
//! controller starts at the first poll after its answer came.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use tracing::{info, warn};

use crate::identify::Identity;

/// How long a poll waits for a drive's answer before it goes on without
/// it. Long enough for a drive that answers at once (a few ms), short
/// enough that a slow one holds the other disks' polls for no longer.
pub(super) const WAIT: Duration = Duration::from_millis(250);

/// How a drive is asked: its kernel name and the sysfs root.
pub(super) type Ask = fn(&str, &Path) -> Identity;

/// A question that has not been answered yet.
#[derive(Debug)]
struct Pending {
    /// The kernel name asked: an answer for another name is stale.
    kernel: String,
    /// Where the answer comes.
    answer: Receiver<Identity>,
}

/// The drives being identified, by the disk's key.
#[derive(Debug)]
pub(super) struct Identifying {
    ask: Ask,
    wait: Duration,
    pending: HashMap<String, Pending>,
}

impl Identifying {
    /// Asks drives with `ask`, waiting up to `wait` in each call.
    pub(super) fn new(ask: Ask, wait: Duration) -> Identifying {
        Identifying {
            ask,
            wait,
            pending: HashMap::new(),
        }
    }

    /// The identity of the drive `kernel` (with sysfs root `sysfs`) of
    /// disk `key`: asked now, or the answer to an earlier call. `None`
    /// while it has not answered; the question goes on, and a later call
    /// takes its answer.
    pub(super) fn identity(&mut self, key: &str, kernel: &str, sysfs: &Path) -> Option<Identity> {
        // A question about another kernel name (the disk came back under
        // a new one) is no longer the one to wait for.
        if self.pending.get(key).is_some_and(|p| p.kernel != kernel) {
            self.pending.remove(key);
        }
        // Only the first call waits: a drive still asking at a later poll
        // holds up none of it.
        let asked = self.pending.contains_key(key);
        let p = self.pending.entry(key.to_string()).or_insert_with(|| {
            let (tx, answer) = mpsc::channel();
            let inline = tx.clone();
            let (ask, name, root) = (self.ask, kernel.to_string(), PathBuf::from(sysfs));
            let spawned = std::thread::Builder::new()
                .name("lull-identify".into())
                .spawn(move || {
                    let _ = tx.send(ask(&name, &root));
                });
            if let Err(e) = spawned {
                // No thread: asked inline, as before threads were used.
                warn!(
                    "disk {key}: cannot start a thread to identify {kernel} ({e}); asking inline"
                );
                let _ = inline.send(ask(kernel, sysfs));
            }
            Pending {
                kernel: kernel.to_string(),
                answer,
            }
        });
        let wait = if asked { Duration::ZERO } else { self.wait };
        let got = match p.answer.recv_timeout(wait) {
            Ok(identity) => Some(identity),
            Err(RecvTimeoutError::Timeout) if asked => return None,
            Err(RecvTimeoutError::Timeout) => {
                info!(
                    "disk {key}: {kernel} has not answered IDENTIFY within {} ms; the other disks are polled meanwhile, and this one is watched once it answers",
                    self.wait.as_millis()
                );
                return None;
            }
            // The thread ended without an answer (it panicked): asked
            // again at the next call.
            Err(RecvTimeoutError::Disconnected) => None,
        };
        self.pending.remove(key);
        got
    }

    /// Whether a drive has not answered yet: the disks are resolved again
    /// at the next poll, to take its answer.
    pub(super) fn waiting(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The kernel names of the drives being asked (their disks stay
    /// claimed meanwhile).
    pub(super) fn kernels(&self) -> impl Iterator<Item = &str> {
        self.pending.values().map(|p| p.kernel.as_str())
    }

    /// Forgets the questions about disks `keep` does not accept (a reload
    /// removed them).
    pub(super) fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.pending.retain(|k, _| keep(k));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(kernel: &str, _: &Path) -> Identity {
        Identity {
            kernel: kernel.to_string(),
            ..Identity::default()
        }
    }

    fn slow(kernel: &str, sysfs: &Path) -> Identity {
        std::thread::sleep(Duration::from_millis(300));
        fast(kernel, sysfs)
    }

    #[test]
    fn a_drive_that_answers_at_once_is_identified_in_the_same_call() {
        let mut ids = Identifying::new(fast, WAIT);
        let i = ids.identity("sda", "sda", Path::new("/sys")).unwrap();
        assert_eq!(i.kernel, "sda");
        assert!(!ids.waiting());
    }

    #[test]
    fn a_slow_drive_does_not_hold_up_the_caller_and_its_answer_is_kept() {
        fn slower(kernel: &str, sysfs: &Path) -> Identity {
            std::thread::sleep(Duration::from_millis(2000));
            fast(kernel, sysfs)
        }
        let mut ids = Identifying::new(slower, Duration::from_millis(200));
        let t = std::time::Instant::now();
        assert!(ids.identity("sdb", "sdb", Path::new("/sys")).is_none());
        let first = t.elapsed();
        assert!(
            first >= Duration::from_millis(200) && first < Duration::from_millis(1500),
            "{first:?}"
        );
        assert!(ids.waiting());
        // A later call before the answer does not wait at all.
        let t = std::time::Instant::now();
        assert!(ids.identity("sdb", "sdb", Path::new("/sys")).is_none());
        assert!(
            t.elapsed() < Duration::from_millis(150),
            "{:?}",
            t.elapsed()
        );
        // The question goes on; its answer is taken by a later call.
        std::thread::sleep(Duration::from_millis(2100));
        let i = ids.identity("sdb", "sdb", Path::new("/sys")).unwrap();
        assert_eq!(i.kernel, "sdb");
        assert!(!ids.waiting());
    }

    #[test]
    fn a_question_about_an_old_name_or_a_removed_disk_is_dropped() {
        let mut ids = Identifying::new(slow, Duration::from_millis(10));
        assert!(ids.identity("k", "sdc", Path::new("/sys")).is_none());
        // The disk came back as sdd: sdc's answer is not taken for it.
        std::thread::sleep(Duration::from_millis(400));
        assert!(ids.identity("k", "sdd", Path::new("/sys")).is_none());
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            ids.identity("k", "sdd", Path::new("/sys")).unwrap().kernel,
            "sdd"
        );
        assert!(ids.identity("gone", "sde", Path::new("/sys")).is_none());
        ids.retain(|k| k != "gone");
        assert!(!ids.waiting());
    }
}
