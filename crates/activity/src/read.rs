//! Reading activity logs: bytes, a segment file or a disk's directory of
//! segments, back into records, and records into a trace.
//!
//! # Damage
//!
//! The daemon appends whole polls with one `write(2)` each, so a crash
//! (`kill -9`, a power cut) can leave the last frame of a segment cut
//! short, or followed by zeros where the file system extended the file but
//! never wrote the data. A segment whose *last* frame is incomplete, fails
//! its CRC, or is followed only by zeros is read up to it, with a warning
//! ([`Log::warnings`]). A bad frame with good data after it is not a torn
//! tail: it is an error naming the file and the byte offset
//! ([`ReadError::Corrupt`]).

use std::fs;
use std::path::{Path, PathBuf};

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::poll::Piece;
use crate::record::{
    FrameError, HEADER_LEN, MAGIC, PollKind, Record, Session, decode, frame_extent,
};

/// The extension of segment files.
pub const EXTENSION: &str = "lact";

/// Why a log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file does not start with the activity log's magic bytes.
    #[error("{path}: not a lull activity log (no \\x89LULLACT header at offset 0)")]
    NotALog {
        /// The file.
        path: PathBuf,
    },
    /// A frame is damaged and more data follows it.
    #[error("{path}: at byte offset {offset}: {what}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where the damaged frame starts.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// A directory without segments.
    #[error("{path}: no activity log segments (*.{EXTENSION}) in this directory")]
    Empty {
        /// The directory.
        path: PathBuf,
    },
}

/// Whether `bytes` start like an activity log segment.
pub fn sniff(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The session a segment starts with, from its first bytes (a session
/// record is a few hundred bytes; the rest of the segment need not be
/// read): `None` when `bytes` are not a segment's start or its first
/// record is not a whole session. To find the segments of one drive among
/// many without reading them whole.
pub fn first_session(bytes: &[u8]) -> Option<Session> {
    if !sniff(bytes) || bytes.len() < HEADER_LEN {
        return None;
    }
    match decode(&bytes[HEADER_LEN..]) {
        Ok((Some(Record::Session(s)), _)) => Some(s),
        _ => None,
    }
}

/// Reads and parses the segment file `f`.
fn read_segment(f: &Path) -> Result<(Vec<Record>, Option<String>), ReadError> {
    let bytes = fs::read(f).map_err(|source| ReadError::Io {
        path: f.to_path_buf(),
        source,
    })?;
    parse_segment(&bytes, f)
}

/// The records of one segment's bytes (`path` names it in errors and
/// warnings), and a warning when its tail was torn.
pub fn parse_segment(
    bytes: &[u8],
    path: &Path,
) -> Result<(Vec<Record>, Option<String>), ReadError> {
    if !sniff(bytes) {
        return Err(ReadError::NotALog {
            path: path.to_path_buf(),
        });
    }
    let mut records = Vec::new();
    if bytes.len() < HEADER_LEN {
        return Ok((
            records,
            Some(format!(
                "{}: the header is cut short at {} bytes (an empty segment)",
                path.display(),
                bytes.len()
            )),
        ));
    }
    let mut at = HEADER_LEN;
    while at < bytes.len() {
        let rest = &bytes[at..];
        match decode(rest) {
            Ok((rec, len)) => {
                if let Some(rec) = rec {
                    if records.is_empty() && !matches!(rec, Record::Session(_)) {
                        return Err(ReadError::Corrupt {
                            path: path.to_path_buf(),
                            offset: at as u64,
                            what: "the segment does not start with a session record".into(),
                        });
                    }
                    records.push(rec);
                }
                at += len;
            }
            Err(e) => {
                let torn = match &e {
                    FrameError::Truncated => true,
                    FrameError::Bad(_) => rest.iter().all(|&b| b == 0) || reaches_end(rest),
                };
                let what = match e {
                    FrameError::Truncated => "cut short".to_string(),
                    FrameError::Bad(w) => w,
                };
                if torn {
                    return Ok((
                        records,
                        Some(format!(
                            "{}: the last record, at byte offset {at}, is torn ({what}); \
                             {} bytes skipped",
                            path.display(),
                            rest.len()
                        )),
                    ));
                }
                return Err(ReadError::Corrupt {
                    path: path.to_path_buf(),
                    offset: at as u64,
                    what,
                });
            }
        }
    }
    Ok((records, None))
}

/// Whether the damaged frame at the start of `rest` claims to run to the
/// end of the bytes (or past it): then it was the last one written.
fn reaches_end(rest: &[u8]) -> bool {
    frame_extent(rest).is_none_or(|n| n >= rest.len() as u64)
}

/// One daemon run's records of a disk (possibly spread over segments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Its session.
    pub session: Session,
    /// Its records after the session, in order.
    pub records: Vec<Record>,
}

impl Run {
    /// Its last instant (`None` when it has no timed record).
    pub fn last(&self) -> Option<Nanos> {
        self.records.iter().filter_map(Record::time).max()
    }
}

/// A disk's activity log, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log {
    /// The daemon runs, in order.
    pub runs: Vec<Run>,
    /// Torn tails that were skipped, one line each.
    pub warnings: Vec<String>,
    /// Segments read from other keys' logs because they hold runs of the
    /// drive of this log's last run ([`Log::open`] of a directory).
    pub followed: usize,
}

impl Log {
    /// Reads a segment file, or every `*.lact` segment of a directory in
    /// the order of their names (which the daemon makes the order they
    /// were written in).
    ///
    /// A directory is one disk key's log, and the drive of its last run
    /// may have been watched under other keys before (two USB drives under
    /// `sd*` that swapped kernel names): the segments of the sibling
    /// directories that start with a run of that drive
    /// ([`Session::drive_id`], [`drive_segments`]) are read too, in the
    /// order written, and of them only that drive's runs are kept, as the
    /// daemon's own evidence and learned state follow the drive
    /// ([`Log::followed`] counts them).
    pub fn open(path: &Path) -> Result<Log, ReadError> {
        let io = |source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = fs::metadata(path).map_err(io)?;
        if !meta.is_dir() {
            let mut log = Log::default();
            log.push_file(path, |_| true)?;
            return Ok(log);
        }
        let files = segments(path).map_err(io)?;
        let Some(newest) = files.last() else {
            return Err(ReadError::Empty {
                path: path.to_path_buf(),
            });
        };
        // The drive of the last run: the newest segment's last session
        // (its records are kept for their turn below, not read again).
        let mut newest_parsed = Some(read_segment(newest)?);
        let drive = newest_parsed.as_ref().and_then(|(records, _)| {
            records
                .iter()
                .rev()
                .find_map(|r| match r {
                    Record::Session(s) => Some(s.drive_id),
                    _ => None,
                })
                .flatten()
        });
        let (all, followed) = drive_segments(path, drive);
        let mut log = Log {
            followed,
            ..Log::default()
        };
        for f in all {
            // Of the own log, every run: the rebuild leaves out another
            // drive's and counts them.
            let own = f.parent() == Some(path);
            let parsed = match newest_parsed.take_if(|_| f == *newest) {
                Some(p) => p,
                None => read_segment(&f)?,
            };
            log.push_parsed(parsed, |s| own || of_drive(s, drive, false));
        }
        Ok(log)
    }

    /// Adds the segment file `f`, keeping the runs whose session `keep`
    /// accepts.
    fn push_file(&mut self, f: &Path, keep: impl Fn(&Session) -> bool) -> Result<(), ReadError> {
        let parsed = read_segment(f)?;
        self.push_parsed(parsed, keep);
        Ok(())
    }

    /// Adds a parsed segment, keeping the runs whose session `keep`
    /// accepts.
    fn push_parsed(
        &mut self,
        (records, warning): (Vec<Record>, Option<String>),
        keep: impl Fn(&Session) -> bool,
    ) {
        self.warnings.extend(warning);
        let mut on = true;
        self.extend(records.into_iter().filter(|r| {
            if let Record::Session(s) = r {
                on = keep(s);
            }
            on
        }));
    }

    /// Adds a segment's bytes (`path` names it in errors).
    pub fn push_segment(&mut self, bytes: &[u8], path: &Path) -> Result<(), ReadError> {
        let (records, warning) = parse_segment(bytes, path)?;
        self.warnings.extend(warning);
        self.extend(records);
        Ok(())
    }

    /// Adds records in order: a session starts a run unless it repeats the
    /// current one's (a new segment of the same run) and that run has not
    /// ended (a reload that started the disk's controller again with the
    /// same session, only a top-level key such as `power_check` changed,
    /// ends the old run first: its new engine is another run's); records
    /// before any session are dropped.
    pub fn extend(&mut self, records: impl IntoIterator<Item = Record>) {
        for rec in records {
            match rec {
                Record::Session(s) => {
                    if self.runs.last().is_some_and(|r| {
                        r.session == s && !matches!(r.records.last(), Some(Record::End(_)))
                    }) {
                        continue;
                    }
                    self.runs.push(Run {
                        session: s,
                        records: Vec::new(),
                    });
                }
                rec => {
                    if let Some(run) = self.runs.last_mut() {
                        run.records.push(rec);
                    }
                }
            }
        }
    }

    /// Every record, sessions included, in order.
    pub fn records(&self) -> impl Iterator<Item = Record> + '_ {
        self.runs.iter().flat_map(|r| {
            std::iter::once(Record::Session(r.session.clone())).chain(r.records.iter().cloned())
        })
    }

    /// The requests the daemon's engine saw, on one timeline
    /// ([`Rebuilt`]).
    pub fn rebuild(&self) -> Rebuilt {
        let mut out = Rebuilt::default();
        let Some(last) = self.runs.last() else {
            return out;
        };
        out.session = last.session.clone();
        // The runs of the last run's drive: a key (a bay, a kernel name
        // under a glob) another drive had is that drive's evidence, and the
        // daemon's learned state follows a drive, not its key. The time of
        // another drive's runs is time nobody watched this one.
        let drive = last.session.drive_id;
        let ours = |r: &&Run| of_drive(&r.session, drive, true);
        out.other_drive_runs = self.runs.iter().filter(|r| !ours(r)).count();
        let first = self.runs.iter().find(ours).expect("the last run is ours");
        out.clock = first.session.clock;
        // Where the previous run ended, on the log's timeline.
        let mut prev_end: Option<Nanos> = None;
        let mut prev_clean = false;
        for run in self.runs.iter().filter(ours) {
            let mut offset = Nanos(run.session.clock.0.saturating_sub(first.session.clock.0));
            let first_t = run.records.iter().filter_map(Record::time).min();
            let mut downtime = None;
            // A run that continues the one before it (a reload while the
            // disk was idle, or a restart that found it untouched) has no
            // unwatched time before it: the disk was idle through it.
            let continues = run.session.continues && prev_end.is_some();
            if let (Some(end), Some(t)) = (prev_end, first_t) {
                // Never overlap the previous run (a clock set back).
                if offset + t < end {
                    offset = end - t;
                }
                // The daemon was not watching: one busy request.
                if offset + t > end && !continues {
                    out.requests
                        .push(Request::new(end, offset + t, Op::Read, 0, 0));
                    downtime = Some((end, offset + t));
                }
            }
            out.runs.push(RunStart {
                offset,
                clock: run.session.clock,
                after: prev_end,
                downtime,
                clean: prev_clean,
                saves_learned: run.session.saves_learned,
                saved: Vec::new(),
                dry_run: run.session.dry_run,
                max_spindowns_per_day: run.session.max_spindowns_per_day,
                network: run.session.network.clone(),
                drive: run.session.drive.clone(),
                continues: first_t.map(|t| offset + t).filter(|_| continues),
            });
            let saved = &mut out.runs.last_mut().expect("just pushed").saved;
            let mut open: Option<Nanos> = None;
            // The stretch withheld since, and the last standby sent.
            let mut alone: Option<(Nanos, String)> = None;
            let mut sent: Option<Nanos> = None;
            // Where the disk vanished, while it is away.
            let mut gone: Option<Nanos> = None;
            for rec in &run.records {
                match rec {
                    Record::Poll(p) => {
                        match p.kind {
                            PollKind::Vanished => gone = Some(offset + p.t),
                            PollKind::Baseline if p.held_since.is_some() => {
                                if let Some(from) = gone.take() {
                                    out.away.push((from, offset + p.t));
                                }
                            }
                            _ => {}
                        }
                        let mut shifted = *p;
                        shifted.t0 = offset + p.t0;
                        shifted.t = offset + p.t;
                        shifted.held_since = p.held_since.map(|h| offset + h);
                        let mut last_arrival = None;
                        shifted.pieces(|piece| match piece {
                            Piece::Request {
                                start,
                                end,
                                op,
                                bytes,
                            } => {
                                last_arrival = last_arrival.max(Some(start));
                                out.requests.push(Request::new(start, end, op, 0, bytes))
                            }
                            Piece::Open { at } => {
                                last_arrival = last_arrival.max(Some(at));
                                open = Some(at)
                            }
                            Piece::Close { at, since } => {
                                out.requests.push(Request::new(
                                    open.take().unwrap_or(since),
                                    at,
                                    Op::Read,
                                    0,
                                    0,
                                ));
                            }
                        });
                        if let Some(last) = last_arrival {
                            out.busy_polls.push(shifted.t0, last);
                        }
                    }
                    Record::Standby(t) => {
                        out.standbys.push(offset + *t);
                        sent = Some(offset + *t);
                    }
                    Record::StandbyFailed(t) => {
                        out.failed.push(offset + *t);
                        // The standby it answers: the last one sent.
                        if let Some(at) = sent.take() {
                            out.daemon_standbys.push_failed(at);
                        }
                    }
                    Record::Learned { at, .. } => saved.push(offset + *at),
                    Record::Power {
                        t,
                        standby,
                        found: true,
                    } => out.daemon_standbys.push_power(offset + *t, *standby),
                    Record::Withheld { t, why } => {
                        let t = offset + *t;
                        // A repeat at a new segment's start changes nothing.
                        if alone.as_ref().is_some_and(|(_, w)| w == why) {
                            continue;
                        }
                        if let Some((from, w)) = alone.take() {
                            out.daemon_standbys.push_withheld(from, t, w);
                        }
                        if !why.is_empty() {
                            alone = Some((t, why.clone()));
                        }
                    }
                    _ => {}
                }
            }
            let end = run.last().map(|t| offset + t);
            if let (Some(from), Some(end)) = (gone, end) {
                out.away.push((from, end));
            }
            if let Some((from, why)) = alone.take() {
                // To the run's last instant, included.
                let until = end.unwrap_or(from) + Nanos(1);
                out.daemon_standbys.push_withheld(from, until, why);
            }
            if let (Some(since), Some(end)) = (open, end) {
                out.requests.push(Request::new(since, end, Op::Read, 0, 0));
            }
            if end.is_some() {
                prev_end = end;
                // A stop is clean when its last record (but for the state
                // file's) is the end.
                prev_clean = matches!(
                    run.records
                        .iter()
                        .rev()
                        .find(|r| !matches!(r, Record::Learned { .. })),
                    Some(Record::End(_))
                );
            }
        }
        out.end = prev_end.unwrap_or(Nanos::ZERO);
        // Pieces come in time order within a poll, and a held request's
        // arrival precedes the requests after it: sort by arrival, stable.
        out.requests.sort_by_key(|r| r.arrival);
        out
    }
}

/// Whether the run that `session` begins counts in the evidence of the
/// drive `drive` (a [`Session::drive_id`], `None` when unknown) of the
/// disk whose log is read: in that disk's own log (`own`), every run but
/// another known drive's, runs naming no drive included (an older lull's,
/// or a drive without a serial number); in another key's log, only the
/// drive's own runs. The daemon's read-back and [`Log`] both ask this.
pub fn of_drive(session: &Session, drive: Option<u64>, own: bool) -> bool {
    match (drive, session.drive_id) {
        (Some(a), Some(b)) => a == b,
        (_, None) => own,
        (None, Some(_)) => own,
    }
}

/// The segments holding the runs of the drive `drive` (a
/// [`Session::drive_id`]) for the disk whose log is `own_dir`, in the
/// order written, and how many of them are in other keys' logs: every
/// segment of `own_dir`, and with a drive, the segments of its sibling
/// directories (the other keys' logs) that start with a session of that
/// drive, told from their first 4 KiB ([`first_session_of`]). Segment
/// names are their creation times, so sorting by name orders them across
/// directories. A directory that cannot be read gives nothing.
pub fn drive_segments(own_dir: &Path, drive: Option<u64>) -> (Vec<PathBuf>, usize) {
    let mut files = segments(own_dir).unwrap_or_default();
    let mut followed = 0;
    // However the path was written (`sdc`, `./sdc/`, `.` inside it).
    let own = fs::canonicalize(own_dir).unwrap_or_else(|_| own_dir.to_path_buf());
    let siblings = own.parent().and_then(|root| fs::read_dir(root).ok());
    if let (Some(id), Some(dirs)) = (drive, siblings) {
        for dir in dirs.filter_map(|e| e.ok().map(|e| e.path())) {
            if dir.file_name() == own.file_name() || !dir.is_dir() {
                continue;
            }
            for f in segments(&dir).unwrap_or_default() {
                if first_session_of(&f).and_then(|s| s.drive_id) == Some(id) {
                    files.push(f);
                    followed += 1;
                }
            }
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()).then_with(|| a.cmp(b)));
    (files, followed)
}

/// The session segment file `path` starts with, from its first 4 KiB (a
/// session record is a few hundred bytes: its strings are the key, the
/// kernel name, the preset, the task and the network).
pub fn first_session_of(path: &Path) -> Option<Session> {
    use std::io::Read;
    let mut head = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut head)
        .ok()?;
    first_session(&head)
}

/// The segment files of a directory, sorted by name.
pub fn segments(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == EXTENSION) && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// A log as a trace: what the daemon's engine saw of the drive of the
/// log's last run (the runs of another drive under the same key are left
/// out, [`Rebuilt::other_drive_runs`]).
///
/// Times are nanoseconds since the first run's time zero; `clock` is the
/// wall clock then. Between two runs (the daemon was stopped) the disk
/// counts as busy: nothing is known of it, and no policy may be credited
/// with sleep it did not see. A request held open when a run ends closes
/// at that run's last record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rebuilt {
    /// The requests, sorted by arrival.
    pub requests: Vec<Request>,
    /// The wall clock at time 0, Unix nanoseconds.
    pub clock: Nanos,
    /// When lull ordered a standby.
    pub standbys: Vec<Nanos>,
    /// When an ordered standby failed.
    pub failed: Vec<Nanos>,
    /// The last instant the log speaks of.
    pub end: Nanos,
    /// The last run's session (the disk's current configuration).
    pub session: Session,
    /// Where each daemon run began on this timeline, the first included:
    /// a replay that restarts the network where the daemon restarted
    /// decides as the daemon did across its restarts.
    pub runs: Vec<RunStart>,
    /// Each poll that brought I/O, for a replay that skips the standbys
    /// such a poll overtook, as the daemon did
    /// ([`lull_tasks::gate::BusyPolls`]).
    pub busy_polls: lull_tasks::gate::BusyPolls,
    /// What the daemon did with its standbys beyond the network's
    /// decisions: where it withheld them ([`Record::Withheld`], from each
    /// such record to the one that ended it, else to the end of its run: a
    /// new run decides afresh), which failed (each
    /// [`Record::StandbyFailed`] answers the last standby sent), and the
    /// drive's power states it found ([`Record::Power`]).
    pub daemon_standbys: lull_tasks::gate::DaemonStandbys,
    /// The runs left out because they were of another drive than the last
    /// run's ([`Session::drive_id`]: the disk's key had another drive
    /// then). Runs that name no drive are kept.
    pub other_drive_runs: usize,
    /// Where the disk was away from diskstats (unplugged, detached), from
    /// the poll that missed it to the one that saw it back or its run's
    /// end: each a request held open in `requests`
    /// ([`PollKind::Vanished`]), so no policy sleeps through it. Logs of
    /// older daemons have none (their vanish left the absence idle).
    pub away: Vec<(Nanos, Nanos)>,
}

/// Where a daemon run began on a [`Rebuilt`] log's timeline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStart {
    /// Its time zero on the log's timeline: its records' times plus this.
    pub offset: Nanos,
    /// The wall clock at its time zero (its session's clock).
    pub clock: Nanos,
    /// Where the run before it ended (its last record), if there was one
    /// with records.
    pub after: Option<Nanos>,
    /// The busy request that stands for the time nobody watched, from
    /// `after` to this run's first record (arrival, completion), when
    /// there was such time. The run's own engine never saw it.
    pub downtime: Option<(Nanos, Nanos)>,
    /// Whether the run before it stopped cleanly (its last record is an
    /// end): what its network learned was saved then. After a crash the
    /// daemon resumed from its last save, which the log does not hold.
    pub clean: bool,
    /// Whether its daemon named the learned states it wrote to the state
    /// file ([`Session::saves_learned`]): then `saved` is all of them.
    pub saves_learned: bool,
    /// The instants (on this timeline) whose learned state it wrote to
    /// the state file ([`Record::Learned`]), in order. A run after a crash
    /// resumed from the last state written before it, a clean stop's
    /// included (saved at the end).
    pub saved: Vec<Nanos>,
    /// A dry run ([`Session::dry_run`]): it kept its own state file.
    pub dry_run: bool,
    /// Its session's wear budget ([`Session::max_spindowns_per_day`]).
    pub max_spindowns_per_day: Option<u32>,
    /// Its session's network.
    pub network: String,
    /// Its session's drive preset.
    pub drive: String,
    /// Where it took over, when it continues the run before it without a
    /// break ([`Session::continues`]): its first record, the instant its
    /// network was built, idle. No downtime request comes before it.
    pub continues: Option<Nanos>,
}
