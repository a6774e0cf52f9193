//! From a poll record to requests and events: the one place where counter
//! deltas become the engine's arrivals and completions, for the daemon
//! (which pushes the events into its engine as it polls) and for the lab
//! (which rebuilds requests from a recorded log). Both go through
//! [`Poll::pieces`], so a replay of a log sees what the daemon saw.
//!
//! # The approximation
//!
//! diskstats has counters, not requests:
//!
//! - The `n` operations completed in `(t0, t]` become `n` requests spread
//!   evenly over the interval: it is cut into `n` slots and request `i`
//!   ends at the end of slot `i`, lasting `io_ms / n` (the kernel's own busy
//!   time, at least 1 ns, at most the slot; the whole slot when the kernel
//!   reports no busy time), and arriving after `t0` (the first a nanosecond
//!   after it, so a deadline the daemon acted on at `t0` came first). The
//!   last one completes at the poll: an idle period is only seen to start
//!   at a poll that found no new work.
//! - I/O in flight at a poll holds one request open from that poll until
//!   the first poll that finds none.
//! - At most [`MAX_EVENTS_PER_POLL`] requests per poll (the counts are
//!   sampled beyond that).
//! - A baseline (the first sample) is a one-nanosecond request ending at
//!   the poll; a late poll (after a suspend) is one busy request from the
//!   previous poll to this one.
//! - A disk that leaves diskstats (unplugged, detached) holds a request
//!   open from the poll that missed it to the baseline that sees it again:
//!   its absence is no idle time. No policy sleeps through it (a replay
//!   once credited lull and every reference with the sleep of a drive
//!   that did not exist), and no network learns an idle period the length
//!   of a weekend in a drawer. The time nobody watched between two daemon
//!   runs counts as busy for the same reason ([`crate::read::Rebuilt`]).

use lull_core::event::{Event, EventKind};
use lull_core::request::{DeviceId, Op};
use lull_core::time::Nanos;

use crate::record::{Poll, PollKind};

/// The most requests one poll turns into.
pub const MAX_EVENTS_PER_POLL: u64 = 1024;

/// A part of what a poll stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// A whole request.
    Request {
        /// Arrival.
        start: Nanos,
        /// Completion.
        end: Nanos,
        /// What it did.
        op: Op,
        /// Its length in bytes.
        bytes: u32,
    },
    /// A request held open for I/O in flight arrives.
    Open {
        /// Its arrival.
        at: Nanos,
    },
    /// The held request completes.
    Close {
        /// Its completion.
        at: Nanos,
        /// Its arrival.
        since: Nanos,
    },
}

impl Poll {
    /// Calls `f` with each piece of the poll, in the order the daemon
    /// pushes their events.
    pub fn pieces(&self, mut f: impl FnMut(Piece)) {
        let (t0, t) = (self.t0, self.t);
        match self.kind {
            PollKind::Vanished | PollKind::VanishedIdle => {
                if let Some(since) = self.held_since {
                    f(Piece::Close { at: t, since });
                }
                // Absent is not idle: held open until it is back.
                if self.kind == PollKind::Vanished {
                    f(Piece::Open { at: t });
                }
            }
            PollKind::Baseline => match self.held_since {
                // Back after it vanished: the absence ends here.
                Some(since) => f(Piece::Close { at: t, since }),
                None => f(Piece::Request {
                    start: Nanos(t.0.saturating_sub(1)),
                    end: t,
                    op: Op::Read,
                    bytes: 0,
                }),
            },
            PollKind::Late => {
                if self.held_since.is_none() {
                    f(Piece::Open { at: t0 });
                }
                if !self.held_after {
                    f(Piece::Close {
                        at: t,
                        since: self.held_since.unwrap_or(t0),
                    });
                }
            }
            PollKind::Normal => {
                spread(self, &mut f);
                match (self.held_since, self.held_after) {
                    (Some(since), false) => f(Piece::Close { at: t, since }),
                    (None, true) => f(Piece::Open { at: t }),
                    _ => {}
                }
            }
        }
    }

    /// Appends the poll's events to `out`, in time order.
    pub fn events(&self, out: &mut Vec<Event>) {
        self.pieces(|p| match p {
            Piece::Request {
                start,
                end,
                op,
                bytes,
            } => {
                out.push(event(start, EventKind::Arrival, op, bytes, end));
                out.push(event(end, EventKind::Completion, op, bytes, start));
            }
            Piece::Open { at } => out.push(event(at, EventKind::Arrival, Op::Read, 0, Nanos::MAX)),
            Piece::Close { at, since } => {
                out.push(event(at, EventKind::Completion, Op::Read, 0, since))
            }
        });
    }
}

fn event(time: Nanos, kind: EventKind, op: Op, bytes: u32, pair: Nanos) -> Event {
    Event {
        time,
        pair,
        sector: 0,
        bytes,
        kind,
        op,
        device: DeviceId(0),
    }
}

/// The idle periods in a stream of [`Piece`]s: the gap from the last
/// completion to the next arrival while no request is held open. One
/// definition for the shadow ([`crate::Shadow`], which counts the idle
/// periods of at least the daemon's poll) and the daemon's own count of
/// the idle periods its network has learned from, so that `lull status`
/// shows two counts of one thing that agree on a fresh run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gaps {
    busy_until: Option<Nanos>,
    open: bool,
}

impl Gaps {
    /// Nothing seen yet: the first arrival ends no idle period.
    pub fn new() -> Gaps {
        Gaps::default()
    }

    /// Takes the next piece; returns the length of the idle period an
    /// arrival ends (none before the first request, while one is held
    /// open, or for an arrival before the disk emptied).
    pub fn piece(&mut self, p: Piece) -> Option<Nanos> {
        match p {
            Piece::Request { start, end, .. } => {
                let gap = self.arrival(start);
                self.complete(end);
                gap
            }
            Piece::Open { at } => {
                let gap = self.arrival(at);
                self.open = true;
                gap
            }
            Piece::Close { at, .. } => {
                self.open = false;
                self.complete(at);
                None
            }
        }
    }

    /// The length of the idle period an arrival at `t` would end (what
    /// [`Gaps::piece`] returns for it), without taking it.
    pub fn arrival(&self, t: Nanos) -> Option<Nanos> {
        let from = self.busy_until.filter(|_| !self.open)?;
        (t > from).then(|| t - from)
    }

    fn complete(&mut self, t: Nanos) {
        self.busy_until = Some(self.busy_until.map_or(t, |b| b.max(t)));
    }

    /// When the last request completed (none before the first).
    pub fn busy_until(&self) -> Option<Nanos> {
        self.busy_until
    }

    /// Whether a request is held open (I/O in flight at the last poll).
    pub fn open(&self) -> bool {
        self.open
    }
}

/// The operations completed in `(t0, t]` as requests (module docs).
fn spread(p: &Poll, f: &mut impl FnMut(Piece)) {
    let d = &p.counts;
    let ops = d.ops();
    if ops == 0 {
        return;
    }
    let (t0, t) = (p.t0, p.t);
    let n = ops.min(MAX_EVENTS_PER_POLL);
    let dt = (t - t0).0;
    let slot = (dt / n).max(1);
    let busy = if d.io_ms > 0 {
        d.io_ms.saturating_mul(1_000_000).min(dt)
    } else {
        dt
    };
    let len = (busy / n).clamp(1, slot);
    let bytes = u32::try_from(d.sectors.saturating_mul(512) / ops).unwrap_or(u32::MAX);
    let kinds = [
        (Op::Read, d.reads),
        (Op::Write, d.writes),
        (Op::Discard, d.discards),
        (Op::Flush, d.flushes),
    ];
    for i in 0..n {
        // The i-th of n evenly sampled positions in the op sequence
        // R…R W…W D…D F…F.
        let mut pos = (i as u128 * ops as u128 / n as u128) as u64;
        let mut op = Op::Read;
        for (k, c) in kinds {
            if pos < c {
                op = k;
                break;
            }
            pos -= c;
        }
        let end = if i + 1 == n {
            t
        } else {
            Nanos(t0.0.saturating_add(slot.saturating_mul(i + 1)).min(t.0))
        };
        // Strictly after the last poll: a decision taken then (a deadline
        // at that poll) came before any of this I/O, as a replay of these
        // requests sees it.
        let start = Nanos(end.0.saturating_sub(len).max(t0.0 + 1).min(end.0));
        f(Piece::Request {
            start,
            end,
            op,
            bytes,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(start: u64, end: u64) -> Piece {
        Piece::Request {
            start: Nanos(start),
            end: Nanos(end),
            op: Op::Read,
            bytes: 0,
        }
    }

    fn pieces(p: &Poll) -> Vec<Piece> {
        let mut v = Vec::new();
        p.pieces(|piece| v.push(piece));
        v
    }

    #[test]
    fn an_absent_disk_is_held_busy_from_its_vanish_to_its_baseline() {
        let (t0, t, back) = (Nanos(100), Nanos(200), Nanos(900));
        let vanish = |kind| Poll {
            t0,
            t,
            kind,
            held_since: Some(Nanos(150)),
            ..Poll::default()
        };
        // I/O in flight completes; the absence is held open.
        let close = Piece::Close {
            at: t,
            since: Nanos(150),
        };
        assert_eq!(
            pieces(&vanish(PollKind::Vanished)),
            [close, Piece::Open { at: t }]
        );
        // An older daemon's vanish: its engine took the absence as idle.
        assert_eq!(pieces(&vanish(PollKind::VanishedIdle)), [close]);
        // The baseline that sees it again completes the absence, or is a
        // one-nanosecond request of its own.
        let mut base = Poll {
            t0: back,
            t: back,
            kind: PollKind::Baseline,
            held_since: Some(t),
            ..Poll::default()
        };
        assert_eq!(pieces(&base), [Piece::Close { at: back, since: t }]);
        base.held_since = None;
        assert_eq!(pieces(&base), [req(back.0 - 1, back.0)]);
        // No idle period runs through the absence.
        let mut g = Gaps::new();
        g.piece(req(50, 60));
        let mut gaps = Vec::new();
        let quiet = Poll {
            held_since: None,
            ..vanish(PollKind::Vanished)
        };
        for p in pieces(&quiet)
            .into_iter()
            .chain(pieces(&Poll {
                held_since: Some(t),
                ..base
            }))
            .chain([req(1000, 1001)])
        {
            gaps.extend(g.piece(p));
        }
        assert_eq!(gaps, [Nanos(140), Nanos(100)]);
    }

    #[test]
    fn gaps_are_from_the_last_completion_to_the_next_arrival() {
        let mut g = Gaps::new();
        // The first arrival ends nothing.
        assert_eq!(g.piece(req(10, 20)), None);
        // Overlapping or back-to-back: no idle period.
        assert_eq!(g.piece(req(15, 30)), None);
        assert_eq!(g.piece(req(30, 40)), None);
        assert_eq!(g.busy_until(), Some(Nanos(40)));
        // A gap from the latest completion, not the last request's.
        assert_eq!(g.piece(req(45, 46)), Some(Nanos(5)));
        assert_eq!(g.arrival(Nanos(100)), Some(Nanos(54)));
        // A request held open hides every gap until it closes.
        assert_eq!(g.piece(Piece::Open { at: Nanos(60) }), Some(Nanos(14)));
        assert!(g.open());
        assert_eq!(g.piece(req(200, 210)), None);
        assert_eq!(g.arrival(Nanos(300)), None);
        assert_eq!(
            g.piece(Piece::Close {
                at: Nanos(250),
                since: Nanos(60)
            }),
            None
        );
        assert!(!g.open());
        assert_eq!(g.piece(req(1000, 1001)), Some(Nanos(750)));
    }
}
