//! The drive's power view: awake, in standby since an instant, or left in
//! standby by the daemon's previous run and not taken up yet. A
//! sub-machine of [`DiskController`](super::DiskController).
//!
//! It is a type of its own so that states which exclude each other cannot
//! be held at once. As six loose fields they could: a standby instant
//! without the snapshot that tells what woke the drive, or a first look
//! at a left standby kept after that standby was taken up. Here the
//! snapshot lives in the standby it belongs to, and the first look in
//! the left standby it belongs to ([`Drive`]).
//!
//! The state file keeps its own copy of the standby
//! ([`DiskState::standby_unix`], [`DiskState::standby_io`]) and the
//! counters a standby adds to ([`DiskState::standby_s`],
//! [`DiskState::spinups`]). They stay in the state entry. A method that
//! must change them takes `&mut DiskState` and changes them with the
//! view, so the two cannot drift apart: [`Drive::LeftInStandby`] holds
//! exactly while the entry's `standby_unix` is set and this run has no
//! standby of its own, and [`Drive::Awake`] only while it is not set.

use lull_core::time::Nanos;

use super::Now;
use crate::state::DiskState;
use crate::wakeup::Snapshot;

/// The drive's power state as the controller sees it, and what it knows
/// of when that state began.
#[derive(Debug)]
pub(super) struct Power {
    /// Awake, in standby, or left in standby by the previous run.
    drive: Drive,
    /// When the drive entered its present power state, as this controller
    /// saw it happen (Unix seconds); `None` until it sees a change, and
    /// again after the disk vanished. A field, not part of [`Drive`]: it
    /// is known or not in every state alike, and a wake that ends no
    /// standby of this run's (a left one found over by I/O) keeps it.
    since_unix: Option<u64>,
    /// The drive was seen awake (I/O, or a power check) since this
    /// controller began or the disk came back: a standby found later
    /// began within a power check's interval, one found first may be
    /// hours old. A field: it is history, true or false in every state.
    seen_awake: bool,
    /// When the power state was last asked; `None` before the first
    /// check of a run that the state file says began in lull's standby:
    /// that check goes out at the first poll, not a `power_check` later,
    /// so the standby is taken up (or found over) at once. A field: the
    /// first poll may find the left standby over before it asks, and the
    /// check still goes out then.
    last_check: Option<Nanos>,
}

/// Whether the drive sleeps, as far as this run knows.
#[derive(Debug)]
enum Drive {
    /// Awake, or not known to be asleep.
    Awake,
    /// The state file says the previous run left the drive in standby
    /// ([`DiskState::standby_unix`]), and this run has neither taken that
    /// standby up nor found it over.
    LeftInStandby {
        /// The first poll of this run that found the disk as the previous
        /// run left it (present, its counters as at the spin-down): I/O
        /// after it is a wake this run saw, from a standby taken up from
        /// then.
        untouched_at: Option<Now>,
    },
    /// In standby: lull's, one found, or one taken up.
    InStandby {
        /// Since when, for this run's counters.
        since: Nanos,
        /// Every process's I/O counters when the drive went to sleep, to
        /// tell what woke it.
        snapshot: Snapshot,
    },
}

impl Power {
    /// The view at a controller's start, from its state entry `st`, at
    /// `now`: left in standby when the entry says the previous run left
    /// the drive so (since then), else awake (since when, nobody saw).
    pub(super) fn new(st: &DiskState, now: Nanos) -> Power {
        let since_unix = st.standby_unix;
        Power {
            drive: match since_unix {
                Some(_) => Drive::LeftInStandby { untouched_at: None },
                None => Drive::Awake,
            },
            since_unix,
            seen_awake: false,
            last_check: since_unix.is_none().then_some(now),
        }
    }

    /// Whether the drive is in standby (lull's, found, or taken up).
    pub(super) fn in_standby(&self) -> bool {
        matches!(self.drive, Drive::InStandby { .. })
    }

    /// Whether the previous run left the drive in standby and this run
    /// has not seen it since (taken it up or found it over).
    pub(super) fn left_in_standby(&self) -> bool {
        matches!(self.drive, Drive::LeftInStandby { .. })
    }

    /// Whether the metrics show the drive in standby: in this run's
    /// standby, or in the one the previous run left.
    pub(super) fn shows_standby(&self) -> bool {
        !matches!(self.drive, Drive::Awake)
    }

    /// Since when the drive is in standby, for this run's counters.
    pub(super) fn standby_since(&self) -> Option<Nanos> {
        match self.drive {
            Drive::InStandby { since, .. } => Some(since),
            _ => None,
        }
    }

    /// The seconds of the standby in progress up to `now` (0 when awake).
    pub(super) fn standby_so_far(&self, now: Nanos) -> f64 {
        self.standby_since()
            .map_or(0.0, |since| (now - since).as_secs_f64())
    }

    /// When the drive entered its present power state (Unix seconds), if
    /// this controller saw it happen or the state file says.
    pub(super) fn since_unix(&self) -> Option<u64> {
        self.since_unix
    }

    /// The first poll that found the disk as the previous run left it,
    /// while that standby is not taken up.
    pub(super) fn untouched_at(&self) -> Option<Now> {
        match self.drive {
            Drive::LeftInStandby { untouched_at } => untouched_at,
            _ => None,
        }
    }

    /// The drive went to sleep at `now` (lull's standby, or one found)
    /// with every process's I/O counters at `snapshot`; its new state
    /// began now, and the state entry says so. Already in standby: this
    /// run counts it from `now` again, and its age stays.
    pub(super) fn went_to_sleep(&mut self, now: Now, snapshot: Snapshot, st: &mut DiskState) {
        if !self.in_standby() {
            self.since_unix = Some(now.unix);
            st.standby_unix = Some(now.unix);
        }
        self.drive = Drive::InStandby {
            since: now.mono,
            snapshot,
        };
    }

    /// A power check found the drive asleep at `now`, though lull did not
    /// spin it down ([`Power::went_to_sleep`]). Not seen awake before:
    /// since when it sleeps, nobody saw.
    pub(super) fn found_asleep(&mut self, now: Now, snapshot: Snapshot, st: &mut DiskState) {
        self.went_to_sleep(now, snapshot, st);
        if !self.seen_awake {
            self.since_unix = None;
        }
    }

    /// Takes up the standby the previous run left: in standby from `from`
    /// on for this run's counters, with every process's I/O counters at
    /// `snapshot`. Its age stays the previous run's spin-down (from the
    /// state file, as when this run began).
    pub(super) fn took_up(&mut self, from: Now, snapshot: Snapshot) {
        self.drive = Drive::InStandby {
            since: from.mono,
            snapshot,
        };
    }

    /// The drive is awake at `now`: it did I/O, or a power check found it
    /// active. A standby in progress ended: its time goes to the entry's
    /// [`DiskState::standby_s`], a spin-up is counted, the new state
    /// began now, and its snapshot is returned (to tell what woke it). A
    /// standby the previous run left is over too (its age stays: nothing
    /// saw it end). The entry keeps no standby.
    pub(super) fn woke(&mut self, now: Now, st: &mut DiskState) -> Option<Snapshot> {
        let slept = match std::mem::replace(&mut self.drive, Drive::Awake) {
            Drive::InStandby { since, snapshot } => {
                st.spinups += 1;
                st.standby_s += (now.mono - since).as_secs_f64();
                self.since_unix = Some(now.unix);
                Some(snapshot)
            }
            _ => None,
        };
        st.standby_unix = None;
        st.standby_io = None;
        slept
    }

    /// The disk did I/O: it was seen awake.
    pub(super) fn saw_io(&mut self) {
        self.seen_awake = true;
    }

    /// A poll found the disk as the previous run left it in standby
    /// (present, its counters as at the spin-down) at `now`: the first
    /// such poll is kept.
    pub(super) fn seen_untouched(&mut self, now: Now) {
        if let Drive::LeftInStandby { untouched_at } = &mut self.drive {
            untouched_at.get_or_insert(now);
        }
    }

    /// The standby the previous run left ended while no daemon watched:
    /// the disk's counters moved since it. It counts as a spin-up, and
    /// since when the drive is awake, nobody saw.
    pub(super) fn woke_unwatched(&mut self, st: &mut DiskState) {
        self.drive = Drive::Awake;
        st.standby_unix = None;
        st.standby_io = None;
        st.spinups += 1;
        self.since_unix = None;
    }

    /// A power check found the drive active, with no standby of this
    /// run's to end: it was seen awake. Returns whether a standby the
    /// previous run left is over with it (it ended while no daemon
    /// watched: since when the drive is awake, nobody saw).
    pub(super) fn answered_active(&mut self, st: &mut DiskState) -> bool {
        self.seen_awake = true;
        if !self.left_in_standby() {
            return false;
        }
        self.drive = Drive::Awake;
        st.standby_unix = None;
        self.since_unix = None;
        true
    }

    /// The disk vanished at `t`. A standby in progress ends: its time goes
    /// to the entry, and a drive that comes back has spun up (spin-downs
    /// and spin-ups stay at most one apart, as the shadow counts them).
    /// What the drive does now, nothing saw begin, and it is no longer
    /// seen awake.
    pub(super) fn vanished(&mut self, t: Nanos, st: &mut DiskState) {
        if let Drive::InStandby { since, .. } = self.drive {
            st.standby_s += (t - since).as_secs_f64();
            st.spinups += 1;
        }
        self.drive = Drive::Awake;
        st.standby_unix = None;
        self.since_unix = None;
        self.seen_awake = false;
    }

    /// Keeps the disk's completed I/O `io` with the standby in progress in
    /// the entry (it does not move while the drive sleeps; a later run
    /// compares it). Returns whether the entry changed.
    pub(super) fn keep_io(&self, io: Option<u64>, st: &mut DiskState) -> bool {
        if !self.in_standby() || io.is_none() || st.standby_io == io {
            return false;
        }
        st.standby_io = io;
        true
    }

    /// Whether a power check is due at `t`, one every `every`; a check
    /// due counts as asked now. The first check of a run that began in
    /// lull's standby is due at once.
    pub(super) fn check_due(&mut self, t: Nanos, every: Nanos) -> bool {
        if self.last_check.is_some_and(|last| t - last < every) {
            return false;
        }
        self.last_check = Some(t);
        true
    }

    /// The daemon stops watching at `now`: the standby in progress counts
    /// to here in the entry's [`DiskState::standby_s`], and on from here.
    pub(super) fn counted_to(&mut self, now: Nanos, st: &mut DiskState) {
        if let Drive::InStandby { since, .. } = &mut self.drive {
            st.standby_s += (now - *since).as_secs_f64();
            *since = now;
        }
    }
}
