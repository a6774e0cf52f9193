//! The standby policy: whether a start the engine decided may go out now.
//! A sub-machine of [`DiskController`](super::DiskController).
//!
//! It is a type of its own so that a change to when a standby is sent is
//! made in one place. As four loose fields of the controller, the
//! policy's state (the failures in a row, the retry time, the wear
//! budget's token, the poll that overtook a decision) was set in three
//! files and read in two, and its rules lay between log lines. Here the
//! state and the rules live together: whether a decision came too late,
//! why a standby is withheld, whether the wear budget and the break-even
//! check let it pass, what a failure costs and what it gives back. The
//! controller logs, records and orders what the policy decides.
//!
//! The same back-off holds a `command` disk's command, and a decision the
//! poll overtook is skipped whatever the task: they are the same checks
//! before a start.
//!
//! The state file keeps the wear budget ([`DiskState::wear`]) and the
//! last day's attempts ([`DiskState::spindown_attempts_unix`]). They stay
//! in the state entry. A method that changes them takes `&mut DiskState`
//! and changes both together, so a token taken is an attempt counted, and
//! a token given back an attempt forgotten.

use lull_core::event::{Event, EventKind};
use lull_core::time::{Nanos, UnixTime};
use lull_tasks::gate::{Charge, Refusal, StandbyGate, overtook, unix_secs};

use super::Now;
use crate::config::{Backend, DiskConfig};
use crate::state::{DiskState, keep_last_day};

/// Failures in a row before the policy waits between attempts.
const BACK_OFF_AFTER: u32 = 3;

/// The longest wait between attempts that keep failing.
const LONGEST_WAIT: Nanos = Nanos::from_secs(3600);

/// When a standby (or a command) may start, and what the last one cost.
#[derive(Debug, Default)]
pub(super) struct StandbyPolicy {
    /// Standby (or, on a `command` disk, command) failures in a row.
    failures: u32,
    /// No standby (or command) attempt before this (after repeated
    /// failures). Not cleared when a command runs again: only a standby
    /// that goes clears it ([`StandbyPolicy::succeeded`]).
    retry_at: Option<Nanos>,
    /// The wear budget's token that the last standby the gate let through
    /// took, given back if it fails (as a replay of the log gives it
    /// back). An `Option`, not an attempt in flight: the next standby
    /// that reaches the gate replaces it, whatever the last one's outcome.
    charge: Option<Charge>,
    /// The poll being handled, when it brought I/O: the previous poll's
    /// instant and its latest arrival. A start the engine decided between
    /// the two is skipped, its idle period already over
    /// (`lull_tasks::gate`, "Decisions the poll overtook").
    overtaking: Option<(Nanos, Nanos)>,
}

/// Why a standby is not sent before the wear budget and the break-even
/// check are asked. The retry time lives in the one reason that has one,
/// so no other reason can carry it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Withheld {
    /// The disk is not present (unplugged).
    Absent,
    /// The configuration leaves the disk alone, for this reason.
    LeftAlone(String),
    /// No transport reaches the drive.
    NoTransport,
    /// The drive is in standby already: a standby now would be counted
    /// and charged for a drive that spins nothing down.
    InStandby,
    /// Standbys failed this many times in a row: none before `until`.
    BackingOff {
        /// The failures in a row.
        failures: u32,
        /// When the next attempt may go.
        until: Nanos,
    },
}

impl Withheld {
    /// The reason in words. Stable: a countdown would change at every
    /// decision, and the activity log says it when it changes.
    pub(super) fn reason(&self) -> String {
        match self {
            Withheld::Absent => "the disk is not present (unplugged)".into(),
            Withheld::LeftAlone(why) => format!("left alone: {why}"),
            Withheld::NoTransport => "no transport reaches the drive".into(),
            Withheld::InStandby => "the drive is in standby already".into(),
            Withheld::BackingOff { failures, .. } => {
                format!("it failed {failures} times in a row")
            }
        }
    }

    /// When the next attempt may go, when the reason is a back-off.
    pub(super) fn next_try(&self) -> Option<Nanos> {
        match *self {
            Withheld::BackingOff { until, .. } => Some(until),
            _ => None,
        }
    }
}

/// Why the gate refused a standby, and when the engine should try it
/// again (a wear refusal, while the idle period lasts).
#[derive(Debug)]
pub(super) struct Refused {
    /// The wear budget's or the break-even check's refusal.
    pub(super) refusal: Refusal,
    /// When the wear budget has its next token, for a retry.
    pub(super) retry: Option<Nanos>,
}

impl StandbyPolicy {
    /// The poll being handled began after `since` (the recorded poll's
    /// interval; `None`: it recorded none) and brought `events`: a start
    /// decided after its latest arrival is not overtaken. As a replay of
    /// the log has it (`Rebuilt::busy_polls`).
    pub(super) fn poll_saw(&mut self, since: Option<Nanos>, events: &[Event]) {
        self.overtaking = since.and_then(|since| {
            events
                .iter()
                .filter(|e| e.kind == EventKind::Arrival)
                .map(|e| e.time)
                .max()
                .map(|last| (since, last))
        });
    }

    /// Whether the poll that let the engine decide at `at` also brought
    /// I/O at or after that instant: the idle period ended before the
    /// daemon could act, and a start now would follow I/O just seen.
    pub(super) fn overtaken(&self, at: Nanos) -> bool {
        self.overtaking
            .is_some_and(|(since, last)| overtook(since, last, at))
    }

    /// The failures in a row and the retry time, while that time has not
    /// come at `now`.
    pub(super) fn backing_off(&self, now: Nanos) -> Option<(u32, Nanos)> {
        let until = self.retry_at.filter(|&at| at > now)?;
        Some((self.failures, until))
    }

    /// Why a standby must not be sent at `now`, before the gate is asked:
    /// the disk is absent, left alone (by `cfg`, or because no transport
    /// of `backend` reaches it), `in_standby` already, or backing off.
    pub(super) fn withheld(
        &self,
        now: Nanos,
        st: &DiskState,
        cfg: &DiskConfig,
        backend: Backend,
        in_standby: bool,
    ) -> Option<Withheld> {
        if !st.present {
            Some(Withheld::Absent)
        } else if let Some(why) = &cfg.left_alone {
            Some(Withheld::LeftAlone(why.clone()))
        } else if crate::transport::left_alone(backend, st.transport.as_ref()) {
            Some(Withheld::NoTransport)
        } else if in_standby {
            Some(Withheld::InStandby)
        } else {
            let (failures, until) = self.backing_off(now)?;
            Some(Withheld::BackingOff { failures, until })
        }
    }

    /// Asks `gate` whether a standby the engine decided at `at` (with
    /// predicted idle time `budget`) may go, as a replay of the log asks
    /// it: at the wall clock of that instant (`clock`: the engine's
    /// zero). One that passes takes its token from the entry's wear
    /// budget and counts as an attempt at `now`.
    pub(super) fn admit(
        &mut self,
        gate: StandbyGate,
        (now, at): (Now, Nanos),
        budget: Option<Nanos>,
        clock: Nanos,
        st: &mut DiskState,
    ) -> Result<(), Refused> {
        let unix = unix_secs(Some(clock), at);
        self.charge = None;
        match gate.admit_charge(&mut st.wear, UnixTime::from_secs(unix), budget) {
            Ok(charge) => {
                self.charge = charge;
                keep_last_day(&mut st.spindown_attempts_unix, now.unix);
                st.spindown_attempts_unix.push(now.unix);
                Ok(())
            }
            Err(refusal) => {
                // Tried again when a token is there, while the idle period
                // lasts: a refusal at an evening's last idle period start
                // left the disk spinning all night (a trial's NAS), the
                // bucket refilled within the hour. A replay of the log
                // retries at the same instant (`Spindown`).
                let retry = match refusal {
                    Refusal::Wear { .. } => gate.wear_retry(&st.wear, at, Some(clock)),
                    Refusal::ShortPrediction { .. } => None,
                };
                Err(Refused { refusal, retry })
            }
        }
    }

    /// The standby failed: the drive did not spin down, it wore nothing,
    /// and the token goes back to the entry's wear budget (a replay of
    /// the log gives it back at the same failure), as does the attempt in
    /// the last day's count.
    pub(super) fn refund(&mut self, st: &mut DiskState) {
        if let (Some(charge), Some(w)) = (self.charge.take(), st.wear.as_mut()) {
            w.refund(charge);
            st.spindown_attempts_unix.pop();
        }
    }

    /// One more failure in a row at `now`: after three, no new attempt
    /// for 1 min, doubling to at most 1 h (until one succeeds). Returns
    /// the failures in a row and the wait, when it waits.
    pub(super) fn failed(&mut self, now: Nanos) -> Option<(u32, Nanos)> {
        self.failures += 1;
        if self.failures < BACK_OFF_AFTER {
            return None;
        }
        let doublings = (self.failures - BACK_OFF_AFTER).min(6);
        let wait = Nanos::from_secs(60 << doublings).min(LONGEST_WAIT);
        self.retry_at = Some(now + wait);
        Some((self.failures, wait))
    }

    /// A standby went: no failures in a row, no wait.
    pub(super) fn succeeded(&mut self) {
        self.failures = 0;
        self.retry_at = None;
    }

    /// The command ran (it was paused, or exited well): no failures in a
    /// row. A wait already set stays.
    pub(super) fn ran(&mut self) {
        self.failures = 0;
    }

    /// The failures in a row (for the tests).
    #[cfg(test)]
    pub(super) fn failures(&self) -> u32 {
        self.failures
    }
}
