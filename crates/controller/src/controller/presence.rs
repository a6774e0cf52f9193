//! Whether the disk is there: plugged, gone, or replugged under another
//! kernel name. A sub-machine of [`DiskController`](super::DiskController)
//! that holds what the state file's `present` and `kernel_name` are known
//! to say, and whether the disk's path has come loose from its kernel
//! name.

/// The disk's presence as the controller tracks it.
#[derive(Debug, Default)]
pub(super) struct Presence {
    /// The state entry's presence and kernel name are known to match, and
    /// the disk was then present (`Some(true)`) or absent; `None`: not
    /// known (a new controller, a replug).
    recorded: Option<bool>,
    /// Its path (a by-id link) leads to no device now, or to another
    /// kernel name than its own: the disk counts as absent, whatever
    /// disk holds its old kernel name now.
    detached: bool,
}

impl Presence {
    /// Whether the disk counts as absent, whatever its kernel name shows.
    pub(super) fn detached(&self) -> bool {
        self.detached
    }

    /// Marks the disk detached or attached; returns whether it was
    /// attached before and is detached now.
    pub(super) fn detach(&mut self, detached: bool) -> bool {
        std::mem::replace(&mut self.detached, detached) != detached && detached
    }

    /// The disk came back under another kernel name: what the state entry
    /// says must be checked again.
    pub(super) fn replugged(&mut self) {
        self.recorded = None;
    }

    /// A poll found the disk `present` or not: whether the state entry
    /// must be checked (its presence or kernel name may be stale). It is
    /// checked once per change.
    pub(super) fn seen(&mut self, present: bool) -> bool {
        self.recorded.replace(present) != Some(present)
    }
}
