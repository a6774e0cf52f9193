//! When what the network learned is kept, and what the activity log
//! says of it. A sub-machine of [`DiskController`](super::DiskController):
//! the learned state itself is the engine's (saved into the state entry's
//! `learned`); this type holds when it was saved, whether a save is
//! due, and how many idle periods ended since.

use lull_activity::poll::{Gaps, Piece};
use lull_core::time::Nanos;

/// The learned state's bookkeeping.
#[derive(Debug)]
pub(super) struct Learning {
    /// An idle period ended at this poll: what the network learned is
    /// kept once the engine has seen the poll's events.
    pending: bool,
    /// The poll whose learned state the state entry holds.
    at: Option<Nanos>,
    /// The learned state's poll the activity log last named
    /// (`Record::Learned`).
    logged: Option<Nanos>,
    /// The idle periods in the polls' requests, as the shadow finds them
    /// in the activity log ([`lull_activity::poll::Gaps`]).
    gaps: Gaps,
    /// Idle periods of `floor` (a poll) or longer that ended since the
    /// learned state last counted them.
    ended: u64,
}

impl Learning {
    /// Nothing kept yet, no idle period seen.
    pub(super) fn new() -> Learning {
        Learning {
            pending: false,
            at: None,
            logged: None,
            gaps: Gaps::new(),
            ended: 0,
        }
    }

    /// An idle period ended at this poll: keep what was learned once the
    /// engine has seen it.
    pub(super) fn due(&mut self) {
        self.pending = true;
    }

    /// Whether a keep is due; clears it.
    pub(super) fn take_due(&mut self) -> bool {
        std::mem::take(&mut self.pending)
    }

    /// A piece of a poll's requests: counts an idle period of `floor` or
    /// longer that it ends.
    pub(super) fn piece(&mut self, piece: Piece, floor: Nanos) {
        if self.gaps.piece(piece).is_some_and(|len| len >= floor) {
            self.ended += 1;
        }
    }

    /// The watch ends at `t`: the idle period in progress ends there, as
    /// the shadow ends it when the log's next run begins.
    pub(super) fn end_at(&mut self, t: Nanos, floor: Nanos) {
        if self.gaps.arrival(t).is_some_and(|len| len >= floor) {
            self.ended += 1;
        }
    }

    /// The learned state was kept at `t`: returns the idle periods that
    /// ended since the last keep.
    pub(super) fn kept(&mut self, t: Nanos) -> u64 {
        self.at = Some(t);
        std::mem::take(&mut self.ended)
    }

    /// The poll whose learned state the state entry holds, if the log
    /// has not named it yet (`session_sent`: the log has begun); the log
    /// names it now.
    pub(super) fn news_for_log(&mut self, session_sent: bool) -> Option<Nanos> {
        let at = self.at?;
        if session_sent && self.logged != Some(at) {
            self.logged = Some(at);
            return Some(at);
        }
        None
    }
}
