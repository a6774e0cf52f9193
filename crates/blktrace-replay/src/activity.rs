//! lull's activity logs (`*.lact`, [`lull_activity`]): what the daemon saw
//! of one disk, poll by poll, read back as a trace.
//!
//! A segment file is sniffed by its magic bytes (`\x89LULLACT`); a
//! directory whose files include `*.lact` segments is one disk's log, its
//! segments read in name order, with the runs of its last run's drive
//! under other keys (sibling directories) and without another drive's
//! runs ([`lull_activity::Log::open`], [`lull_activity::Log::rebuild`]):
//! the daemon's learned state follows a drive, not its key. The trace
//! has one device, named after the disk's configured key (else its kernel
//! name), holds the requests the daemon's engine saw
//! ([`lull_activity::Log::rebuild`]) at the daemon's own times (not
//! rebased, so a replay decides what the daemon decided, to the
//! nanosecond), and carries the wall clock of the log's time zero. A torn
//! tail (a crash mid-write) is read up to the damage, with a note; damage
//! with good data after it is an error naming the file and byte offset.
//!
//! [`open_log`] gives the session too (the drive preset, task and network
//! the daemon ran with), for `lull rank --from-daemon`.

use std::io::Read;
use std::path::Path;

use lull_activity::{Log, ReadError};
use lull_core::time::Nanos;
use lull_tasks::gate::StandbyGate;

use crate::error::TraceError;
use crate::input::{self, Input};
use crate::trace::Trace;

/// The activity log crate, for callers without a dependency of their own
/// (the `lull` binary's tests build logs with it).
pub use lull_activity;
pub use lull_activity::Session;

/// The name [`Trace::format`] carries for an activity log.
pub const NAME: &str = "activity-log";

/// A log read as a trace, with what the daemon knew and did besides the
/// requests.
#[derive(Clone, Debug, PartialEq)]
pub struct ActivityTrace {
    /// The requests on one device, the wall clock of time 0, torn-tail
    /// warnings in `notes`.
    pub trace: Trace,
    /// The last run's session: the disk's key, kernel name, drive preset,
    /// task and network as the daemon last ran them.
    pub session: Session,
    /// When lull ordered a standby (trace times).
    pub standbys: Vec<Nanos>,
    /// When an ordered standby failed (trace times).
    pub failed: Vec<Nanos>,
    /// The last instant the log speaks of.
    pub end: Nanos,
    /// Where each daemon run began on the trace's timeline
    /// ([`lull_activity::Rebuilt::runs`]): a replay restarts the network
    /// there ([`crate::replay::replay_spec_runs`]).
    pub runs: Vec<lull_activity::RunStart>,
    /// Each poll that brought I/O: a replay with the daemon's checks skips
    /// the standbys such a poll overtook, as the daemon did
    /// ([`ReplayOptions::busy_polls`](crate::replay::ReplayOptions::busy_polls)).
    pub busy_polls: std::sync::Arc<lull_tasks::BusyPolls>,
    /// Where the daemon withheld its standbys whatever the network decided
    /// (the disk left alone, unplugged, backing off after failures) and
    /// which it sent failed: a replay with the daemon's checks does the
    /// same
    /// ([`ReplayOptions::daemon_standbys`](crate::replay::ReplayOptions::daemon_standbys)).
    pub daemon_standbys: std::sync::Arc<lull_tasks::DaemonStandbys>,
}

/// Whether `head` (the first bytes of a decoded stream) starts like an
/// activity log segment.
pub fn sniff(head: &[u8]) -> bool {
    lull_activity::read::sniff(head)
}

/// Whether `dir` holds activity log segments (`*.lact` files).
pub fn is_log_dir(dir: &Path) -> bool {
    lull_activity::read::segments(dir).is_ok_and(|s| !s.is_empty())
}

/// Whether `path` is an activity log: a directory of segments, or a file
/// whose (decoded) content starts like one. The activity log is the
/// first format sniffed, so this is what `read::sniff_file` finds.
pub fn is_log(path: &Path) -> Result<bool, TraceError> {
    Ok(is_log_dir(path)
        || (!path.is_dir() && path.exists() && sniff(&input::open_decoded(path)?.0)))
}

/// Reads one segment from a decoded stream; `path` names it in errors.
pub fn read(mut input: Input, path: &Path) -> Result<Trace, TraceError> {
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .map_err(|e| TraceError::io(path, e))?;
    let mut log = Log::default();
    log.push_segment(&bytes, path).map_err(error)?;
    Ok(from_log(&log).trace)
}

/// Opens a segment file (possibly compressed) or a directory of segments.
pub fn open_log(path: &Path) -> Result<ActivityTrace, TraceError> {
    let log = if path.is_dir() {
        Log::open(path).map_err(error)?
    } else {
        let (_, mut stream) = input::open_decoded(path)?;
        let mut bytes = Vec::new();
        stream
            .read_to_end(&mut bytes)
            .map_err(|e| TraceError::io(path, e))?;
        let mut log = Log::default();
        log.push_segment(&bytes, path).map_err(error)?;
        log
    };
    Ok(from_log(&log))
}

/// The checks the daemon made before each standby it sent for the
/// session's disk ([`lull_tasks::gate`]), for a replay to make them too:
/// the break-even check when the daemon had a drive preset (of that drive),
/// and the wear budget when the log records it (logs written before it did
/// do not: then none).
pub fn daemon_gate(session: &Session) -> StandbyGate {
    let per_day = session.max_spindowns_per_day;
    (!session.drive.is_empty())
        .then(|| crate::replay::profile(Some(&session.drive)).ok())
        .flatten()
        .map_or(
            StandbyGate {
                break_even: None,
                max_spindowns_per_day: per_day,
            },
            |p| p.standby_gate(per_day),
        )
}

/// A log, read, as a trace.
pub fn from_log(log: &Log) -> ActivityTrace {
    let rebuilt = log.rebuild();
    let s = &rebuilt.session;
    let name = [&s.key, &s.kernel]
        .into_iter()
        .find(|n| !n.is_empty())
        .map_or("activity", String::as_str);
    let mut trace = Trace::new(NAME);
    let dev = trace.device_id(name);
    trace.requests = rebuilt.requests.iter().map(|r| r.on_device(dev)).collect();
    trace.sort();
    trace.clock = Some(rebuilt.clock);
    trace.notes = log.warnings.clone();
    if log.followed > 0 {
        trace.notes.push(format!(
            "{} segment(s) of the same drive under other keys read too: the drive was watched under another name before (the daemon's evidence and learned state follow it)",
            log.followed
        ));
    }
    if !rebuilt.away.is_empty() {
        let total = rebuilt
            .away
            .iter()
            .fold(Nanos::ZERO, |t, &(from, until)| t + (until - from));
        trace.notes.push(format!(
            "the disk was away from diskstats (unplugged or detached) {} time(s), {} in all: that time is one busy request each, no policy's sleep (the daemon decided nothing then)",
            rebuilt.away.len(),
            total.approx()
        ));
    }
    if rebuilt.other_drive_runs > 0 {
        trace.notes.push(format!(
            "{} daemon run(s) of another drive under key {name} left out: the trace is the drive of the last run",
            rebuilt.other_drive_runs
        ));
    }
    ActivityTrace {
        trace,
        session: rebuilt.session,
        standbys: rebuilt.standbys,
        failed: rebuilt.failed,
        end: rebuilt.end,
        runs: rebuilt.runs,
        busy_polls: std::sync::Arc::new(rebuilt.busy_polls),
        daemon_standbys: std::sync::Arc::new(rebuilt.daemon_standbys),
    }
}

/// The activity log's errors as the readers' (each names the file, and a
/// damaged frame its byte offset).
fn error(e: ReadError) -> TraceError {
    match e {
        ReadError::Io { path, source } => TraceError::io(path, source),
        ReadError::Corrupt { path, offset, what } => {
            TraceError::offset(path, offset, format!("corrupt activity log: {what}"))
        }
        ReadError::NotALog { path } => {
            TraceError::format(path, "not a lull activity log (no \\x89LULLACT header)")
        }
        ReadError::Empty { path } => {
            TraceError::format(path, "no activity log segments (*.lact) in this directory")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_activity::record::header;
    use lull_activity::{Counts, Poll, PollKind, Record};
    use lull_core::request::Op;

    use crate::ReadOptions;

    const S: u64 = 1_000_000_000;
    const CLOCK: u64 = 1_700_000_000 * S;

    fn session() -> Session {
        Session {
            clock: Nanos(CLOCK),
            poll: Nanos(S),
            key: "/dev/disk/by-id/ata-X".into(),
            kernel: "sdb".into(),
            drive: "wd-red-plus".into(),
            task: "standby".into(),
            network: "auto".into(),
            max_spindowns_per_day: None,
            saves_learned: true,
            dry_run: false,
            drive_id: None,
            continues: false,
        }
    }

    fn poll(t0: u64, t: u64, kind: PollKind, reads: u64) -> Record {
        Record::Poll(Poll {
            t0: Nanos(t0 * S),
            t: Nanos(t * S),
            kind,
            counts: Counts {
                reads,
                sectors: reads * 8,
                ..Counts::default()
            },
            held_since: None,
            held_after: false,
        })
    }

    /// A session, a baseline at 1 s, 5 reads in (1, 2] s, 2 in (59, 60] s.
    fn log_bytes() -> Vec<u8> {
        let mut out = header().to_vec();
        for r in [
            Record::Session(session()),
            poll(1, 1, PollKind::Baseline, 0),
            poll(1, 2, PollKind::Normal, 5),
            poll(59, 60, PollKind::Normal, 2),
            Record::Standby(Nanos(30 * S)),
        ] {
            r.encode(&mut out);
        }
        out
    }

    fn check(t: &Trace) {
        assert_eq!(t.format, NAME);
        assert_eq!(t.devices, ["/dev/disk/by-id/ata-X"]);
        assert_eq!(t.clock, Some(Nanos(CLOCK)));
        // 1 baseline + 5 + 2.
        assert_eq!(t.requests.len(), 8);
        assert!(t.requests.iter().all(|r| r.op == Op::Read));
        assert_eq!(t.requests[0].completion, Nanos(S));
        assert_eq!(t.requests[0].arrival, Nanos(S - 1));
        // The last of the five completes at the poll, 2 s.
        assert_eq!(t.requests[5].completion, Nanos(2 * S));
        assert!(t.requests[1..6].iter().all(|r| r.arrival > Nanos(S)));
        assert_eq!(t.requests[7].completion, Nanos(60 * S));
        assert!(t.requests[6].arrival > Nanos(59 * S));
        assert_eq!(t.requests[1].bytes, 4096);
    }

    // Two runs of another drive under the key before this one's: the trace
    // is this drive's, and its notes say what was left out.
    #[test]
    fn another_drives_runs_are_left_out_with_a_note() {
        let run = |clock: u64, serial: &str| {
            let mut out = Vec::new();
            let mut s = session();
            s.clock = Nanos(clock);
            s.drive_id = Some(lull_activity::drive_id(serial));
            for r in [
                Record::Session(s),
                poll(1, 1, PollKind::Baseline, 0),
                poll(1, 2, PollKind::Normal, 5),
            ] {
                r.encode(&mut out);
            }
            out
        };
        let mut log = Log::default();
        for (i, serial) in ["WD-Y", "WD-Y", "WD-X"].iter().enumerate() {
            let mut bytes = header().to_vec();
            bytes.extend(run(CLOCK + i as u64 * 3600 * S, serial));
            log.push_segment(&bytes, Path::new("x.lact")).unwrap();
        }
        let a = from_log(&log);
        assert_eq!(a.runs.len(), 1);
        assert_eq!(a.trace.clock, Some(Nanos(CLOCK + 7200 * S)));
        assert_eq!(a.trace.requests.len(), 6);
        assert_eq!(
            a.trace.notes,
            [
                "2 daemon run(s) of another drive under key /dev/disk/by-id/ata-X left out: the trace is the drive of the last run"
            ]
        );
    }

    // The drive of `sdc`'s last run was watched as `sdb` before: opening
    // `sdc`'s log reads that run too, and the notes say so.
    #[test]
    fn a_log_directory_follows_its_drive_with_a_note() {
        let root = tempfile::tempdir().unwrap();
        for (key, name, clock) in [("sdb", "0001", CLOCK), ("sdc", "0002", CLOCK + 3600 * S)] {
            let mut s = session();
            s.key = key.into();
            s.clock = Nanos(clock);
            s.drive_id = Some(lull_activity::drive_id("WD-X"));
            let mut bytes = header().to_vec();
            for r in [
                Record::Session(s),
                poll(1, 1, PollKind::Baseline, 0),
                poll(1, 2, PollKind::Normal, 5),
            ] {
                r.encode(&mut bytes);
            }
            let dir = root.path().join(key);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("{name}.lact")), bytes).unwrap();
        }
        let a = open_log(&root.path().join("sdc")).unwrap();
        assert_eq!(a.runs.len(), 2);
        assert_eq!(a.trace.clock, Some(Nanos(CLOCK)));
        assert_eq!(a.trace.notes.len(), 1, "{:?}", a.trace.notes);
        assert!(
            a.trace.notes[0]
                .starts_with("1 segment(s) of the same drive under other keys read too"),
            "{:?}",
            a.trace.notes
        );
    }

    #[test]
    fn a_segment_opens_as_a_trace() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("0001.lact");
        std::fs::write(&p, log_bytes()).unwrap();
        assert_eq!(
            crate::read::sniff_file(&p).unwrap(),
            Some(crate::Format::Activity)
        );
        let t = crate::open(&p, ReadOptions::default()).unwrap();
        check(&t);
        assert!(t.notes.is_empty());
        let a = open_log(&p).unwrap();
        assert_eq!(a.session, session());
        assert_eq!(a.standbys, [Nanos(30 * S)]);
        assert_eq!(a.end, Nanos(60 * S));
    }

    #[test]
    fn a_directory_of_segments_opens_as_one_log() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = log_bytes();
        // The same run over two segments, each starting with the session.
        let mut second = header().to_vec();
        Record::Session(session()).encode(&mut second);
        poll(99, 100, PollKind::Normal, 3).encode(&mut second);
        std::fs::write(dir.path().join("0001.lact"), &bytes).unwrap();
        std::fs::write(dir.path().join("0002.lact"), &second).unwrap();
        std::fs::write(dir.path().join("README"), "not a segment").unwrap();
        let t = crate::open(dir.path(), ReadOptions::default()).unwrap();
        assert_eq!(t.format, NAME);
        assert_eq!(t.requests.len(), 11);
        assert_eq!(t.requests[10].completion, Nanos(100 * S));
        assert_eq!(t.devices.len(), 1);
    }

    #[test]
    fn a_torn_tail_is_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = log_bytes();
        let full = bytes.len();
        poll(60, 61, PollKind::Normal, 4).encode(&mut bytes);
        bytes.truncate(full + 5);
        let p = dir.path().join("torn.lact");
        std::fs::write(&p, &bytes).unwrap();
        let t = crate::open(&p, ReadOptions::default()).unwrap();
        check(&t);
        assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
        assert!(t.notes[0].contains("torn"), "{}", t.notes[0]);
    }

    #[test]
    fn damage_in_the_middle_is_an_error_with_the_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = header().to_vec();
        Record::Session(session()).encode(&mut bytes);
        let at = bytes.len();
        poll(1, 1, PollKind::Baseline, 0).encode(&mut bytes);
        poll(1, 2, PollKind::Normal, 5).encode(&mut bytes);
        poll(59, 60, PollKind::Normal, 2).encode(&mut bytes);
        // Flip a payload byte of the first poll: its CRC fails, good
        // frames follow.
        bytes[at + 3] ^= 0x40;
        let p = dir.path().join("bad.lact");
        std::fs::write(&p, &bytes).unwrap();
        let e = crate::open(&p, ReadOptions::default()).unwrap_err();
        match &e {
            TraceError::Offset { offset, .. } => assert_eq!(*offset, at as u64),
            other => panic!("{other:?}"),
        }
        assert!(e.is_input_error());
        let msg = e.to_string();
        assert!(msg.contains("bad.lact"), "{msg}");
        assert!(msg.contains(&format!("offset {at}")), "{msg}");
        // The same through a directory.
        let e = crate::open(dir.path(), ReadOptions::default()).unwrap_err();
        assert!(e.to_string().contains(&format!("offset {at}")), "{e}");
    }

    #[test]
    fn the_magic_wins_the_sniffing() {
        let bytes = log_bytes();
        assert_eq!(crate::Format::sniff(&bytes), Some(crate::Format::Activity));
        assert_eq!(crate::Format::Activity.name(), NAME);
        let t = crate::read_from(
            std::io::Cursor::new(bytes),
            Path::new("x"),
            ReadOptions::default(),
        )
        .unwrap();
        check(&t);
    }
}
