//! Random activity logs, as the daemon writes them.

#![allow(dead_code)]

use lull_activity::record::header;
use lull_activity::{Counts, Poll, PollKind, Record, Session};
use lull_core::time::Nanos;
use proptest::prelude::*;

/// One step of a made-up disk: seconds to the next poll, operations
/// completed, I/O in flight at the poll, a standby ordered after it.
pub(crate) type Step = (u64, u64, bool, bool);

pub(crate) fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (
            prop_oneof![1u64..5, 5u64..120, 120u64..4000],
            prop_oneof![3 => Just(0u64), 1 => 1u64..50, 1 => 1000u64..3000],
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.2),
        ),
        1..120,
    )
}

/// Whether a step is an absence: a quiet step of two minutes or more,
/// one in four by its length, with no I/O held open. The disk vanishes
/// at the poll after the step began and is back (a baseline) at its end.
pub(crate) fn absent(&(dt, ops, flying, _): &Step) -> bool {
    dt >= 120 && dt % 4 == 1 && ops == 0 && !flying
}

/// The records a daemon polling like `steps` writes, starting at Unix
/// time `clock` (with the absences of [`absent`]).
pub(crate) fn records(clock: Nanos, steps: &[Step]) -> Vec<Record> {
    let mut out = vec![Record::Session(Session {
        clock,
        poll: Nanos::from_secs(1),
        key: "sdb".into(),
        kernel: "sdb".into(),
        drive: "wd-red-plus".into(),
        task: "standby".into(),
        network: "timer(2B)".into(),
        max_spindowns_per_day: Some(48),
        saves_learned: true,
        dry_run: false,
        // One drive (a full 64-bit value, for the round trip).
        drive_id: Some(lull_activity::drive_id("WD-WCC7K0000001")),
        continues: false,
    })];
    let mut t = Nanos::from_secs(1);
    out.push(Record::Poll(Poll {
        t0: t,
        t,
        kind: PollKind::Baseline,
        ..Poll::default()
    }));
    let mut held: Option<Nanos> = None;
    let mut last_record = t;
    for &(dt, ops, flying, standby) in steps {
        let t0 = t;
        t = t + Nanos::from_secs(dt) + Nanos(dt * 7919);
        let held_after = flying;
        let quiet = ops == 0 && held.is_none() && !held_after;
        if absent(&(dt, ops, flying, standby)) && held.is_none() {
            let gone = t0 + Nanos::from_secs(1);
            out.push(Record::Poll(Poll {
                t0,
                t: gone,
                kind: PollKind::Vanished,
                ..Poll::default()
            }));
            out.push(Record::Poll(Poll {
                t0: t,
                t,
                kind: PollKind::Baseline,
                held_since: Some(gone),
                ..Poll::default()
            }));
            last_record = t;
        } else if !quiet {
            out.push(Record::Poll(Poll {
                t0,
                t,
                kind: PollKind::Normal,
                counts: Counts {
                    reads: ops / 2,
                    writes: ops - ops / 2,
                    sectors: ops * 8,
                    io_ms: ops / 3,
                    ..Counts::default()
                },
                held_since: held,
                held_after,
            }));
            last_record = t;
        } else if t - last_record >= Nanos::from_secs(60) {
            out.push(Record::Mark(t));
            last_record = t;
        }
        held = match (held, held_after) {
            (Some(h), true) => Some(h),
            (None, true) => Some(t),
            (_, false) => None,
        };
        if standby {
            out.push(Record::Standby(t));
        } else if ops == 0 && dt % 5 == 0 {
            // Now and then the daemon withholds its standbys, or no
            // longer.
            let why = if dt % 10 == 0 {
                "no transport reaches the drive"
            } else {
                ""
            };
            out.push(Record::Withheld { t, why: why.into() });
        }
        // The state file written after a busy poll, holding what was
        // learned at the poll before.
        if ops >= 1000 {
            out.push(Record::Learned { t, at: t0 });
        }
    }
    out
}

/// A segment file's bytes.
pub(crate) fn segment(records: &[Record]) -> Vec<u8> {
    let mut b = header().to_vec();
    for r in records {
        r.encode(&mut b);
    }
    b
}
