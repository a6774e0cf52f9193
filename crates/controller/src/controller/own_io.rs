//! The task's own I/O, told from the foreground's: a flush's writes, and
//! what a `command` or `jobs` disk's commands read and wrote. A
//! sub-machine of [`DiskController`](super::DiskController): a poll whose
//! I/O is all the task's own is absorbed, so the task does not end its
//! own idle period and pause itself.

use lull_core::time::Nanos;

use super::{OWN_IO_MEMORY, OWN_READ_MEMORY};

/// The task's own I/O since the last poll, and what it is owed.
#[derive(Debug, Default)]
pub(super) struct OwnIo {
    /// A flush runs: its own writes are not foreground I/O.
    flushing: bool,
    /// The flush finished: the next poll's deltas are still its own.
    absorb_next: bool,
    /// The storage bytes read and written by each running command's
    /// process tree at the last poll, by pid (`WakeWitness::tree_io`).
    trees: Vec<(u32, (u64, u64))>,
    /// Bytes the task's commands read that no poll has shown on the disk
    /// yet: a read is charged when it is submitted and counted by the
    /// disk when it completes. Forgotten after [`OWN_READ_MEMORY`].
    reads: Credit,
    /// Bytes the task's commands wrote that no poll has shown on the disk
    /// yet: a write is charged to its process when the page is dirtied
    /// and reaches the disk at writeback, up to half a minute later.
    /// Forgotten after [`OWN_IO_MEMORY`].
    writes: Credit,
}

impl OwnIo {
    /// A flush started (`dry_run`: it did not, nothing of it will show).
    pub(super) fn flush_started(&mut self, dry_run: bool) {
        self.flushing = !dry_run;
    }

    /// The flush finished: the next poll's deltas are still its own.
    pub(super) fn flush_done(&mut self) {
        self.flushing = false;
        self.absorb_next = true;
    }

    /// The task failed: no flush runs.
    pub(super) fn flush_failed(&mut self) {
        self.flushing = false;
    }

    /// Whether the poll's deltas are absorbed: a flush runs or just
    /// finished, or they were the commands' own (`own`).
    pub(super) fn absorb(&mut self, own: bool) -> bool {
        self.flushing || std::mem::take(&mut self.absorb_next) || own
    }

    /// Charges at `t` what the running commands' process trees moved
    /// since the last poll (`trees`: by pid, the bytes each has read and
    /// written so far); a command first seen now counts all it moved
    /// since it began.
    pub(super) fn charge(&mut self, t: Nanos, trees: Vec<(u32, (u64, u64))>) {
        let (mut read, mut written) = (0u64, 0u64);
        for &(pid, (r, w)) in &trees {
            let (r0, w0) = self
                .trees
                .iter()
                .find(|(p, _)| *p == pid)
                .map_or((0, 0), |&(_, b)| b);
            read = read.saturating_add(r.saturating_sub(r0));
            written = written.saturating_add(w.saturating_sub(w0));
        }
        self.trees = trees;
        self.reads.charge(t, read, OWN_READ_MEMORY);
        self.writes.charge(t, written, OWN_IO_MEMORY);
    }

    /// Whether what the disk showed (`moved`: bytes read, bytes written,
    /// and whether it completed a discard or flush, which no process is
    /// charged with) is all the commands' own: no more than their credit.
    /// `moved` is asked only when there is credit. What the disk showed
    /// of the credit is spent.
    pub(super) fn judge(
        &mut self,
        moved: impl FnOnce() -> Option<(u64, u64, bool)>,
    ) -> Option<(u64, u64)> {
        let (read_credit, write_credit) = (self.reads.total(), self.writes.total());
        if read_credit == 0 && write_credit == 0 {
            return None;
        }
        let (disk_read, disk_written, other) = moved()?;
        let own = !other
            && disk_read + disk_written > 0
            && disk_read <= read_credit
            && disk_written <= write_credit;
        self.reads.spend(disk_read);
        self.writes.spend(disk_written);
        own.then_some((disk_read, disk_written))
    }
}

/// Bytes a task's command moved that no poll has shown on the disk yet,
/// oldest first, each with the poll it was charged at
/// ([`OwnIo`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Credit(std::collections::VecDeque<(Nanos, u64)>);

impl Credit {
    /// Adds `bytes` charged at `t` and forgets what was charged more than
    /// `memory` before `t`.
    fn charge(&mut self, t: Nanos, bytes: u64, memory: Nanos) {
        if bytes > 0 {
            self.0.push_back((t, bytes));
        }
        while self.0.front().is_some_and(|&(at, _)| at + memory < t) {
            self.0.pop_front();
        }
    }

    /// What is left.
    fn total(&self) -> u64 {
        self.0.iter().map(|&(_, b)| b).sum()
    }

    /// Spends `bytes` the disk showed, oldest first.
    fn spend(&mut self, mut bytes: u64) {
        while bytes > 0
            && let Some(front) = self.0.front_mut()
        {
            let take = front.1.min(bytes);
            front.1 -= take;
            bytes -= take;
            if front.1 == 0 {
                self.0.pop_front();
            }
        }
    }
}
