//! The shell's side of the activity log: one directory of segments per
//! disk, appended to as the controller gives records
//! ([`crate::controller::Output::Activity`]), rotated and pruned.
//!
//! # Files
//!
//! `<activity_dir>/<disk>/<start>.lact`, where `<disk>` is the disk's key
//! with every character outside `[A-Za-z0-9._-]` replaced by `_`
//! ([`disk_dir`]) and `<start>` the segment's creation time in Unix
//! nanoseconds, 20 digits, so names sort in the order they were written.
//! The format is [`lull_activity::record`]'s.
//!
//! # Crash safety
//!
//! A segment is only ever appended to, and each poll's records go out in
//! one `write(2)` at the end of the poll: a `kill -9` or a power cut loses
//! at most that poll's records, and a write cut short leaves a torn last
//! frame the reader skips with a warning. Rotation never renames or
//! rewrites: a new segment starts with the header and the session record
//! in its first write, and the old one is simply no longer written. A
//! daemon that starts again always starts a new segment, so it never
//! appends after a torn tail. There is no `fsync`: the log is evidence,
//! not state, and a lost second of it costs nothing.
//!
//! # Bounds
//!
//! A segment is rotated after a day or an eighth of `activity_max_mb`;
//! segments whose last write is older than `activity_retention`, and the
//! oldest while the disk's segments take more than `activity_max_mb`, are
//! deleted (the current one never). The logs of other keys whose every
//! segment is older than `activity_retention` go whole ([`prune_stale`]:
//! a disk that has gone has no writer to prune its log). Pruning runs at
//! each rotation and at start.
//!
//! # Faults
//!
//! A directory that cannot be made or a write that fails (a full file
//! system, a read-only mount) is logged once per disk; the disk's log
//! stops until the next rotation, when it tries again, and the daemon
//! keeps deciding: the log is never a reason to miss a spin-down.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use lull_activity::Record;
use lull_activity::read::{EXTENSION, parse_segment, segments};
use lull_activity::record::header;
use lull_core::time::Nanos;
use tracing::{info, warn};

use crate::config::ActivityConfig;

/// The directory of disk `key`'s segments under `base`.
pub fn disk_dir(base: &Path, key: &str) -> PathBuf {
    let mut name: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Never `.` or `..`, never hidden.
    if name.starts_with('.') || name.is_empty() {
        name.insert(0, '_');
    }
    base.join(name)
}

/// A segment is rotated after this long.
pub const SEGMENT_AGE: Duration = Duration::from_secs(86_400);

/// One disk's log writer.
#[derive(Debug)]
pub struct Writer {
    dir: PathBuf,
    key: String,
    cfg: ActivityConfig,
    file: Option<File>,
    /// The current segment's path.
    path: PathBuf,
    /// When the current segment started, and its size.
    started: SystemTime,
    size: u64,
    /// The current run's session record: every segment starts with it.
    session: Option<Record>,
    /// The run's last [`Record::Withheld`] while it holds (its `why` is
    /// not empty): every segment repeats it after the session, so that a
    /// segment read alone says so too.
    withheld: Option<Record>,
    /// Encoded records not yet written.
    buf: Vec<u8>,
    /// A fault was logged and not yet cleared by a good write.
    faulted: bool,
}

impl Writer {
    /// A writer for disk `key` (nothing is created before its first
    /// records).
    pub fn new(cfg: &ActivityConfig, key: &str) -> Writer {
        Writer {
            dir: disk_dir(&cfg.dir, key),
            key: key.to_string(),
            cfg: cfg.clone(),
            file: None,
            path: PathBuf::new(),
            started: SystemTime::UNIX_EPOCH,
            size: 0,
            session: None,
            withheld: None,
            buf: Vec::with_capacity(256),
            faulted: false,
        }
    }

    /// The disk's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds a record to the next write. A session record starts a new
    /// segment.
    pub fn push(&mut self, rec: &Record) {
        if let Record::Session(_) = rec {
            self.session = Some(rec.clone());
            self.withheld = None;
            self.file = None;
            self.buf.clear();
            return;
        }
        if let Record::Withheld { why, .. } = rec {
            self.withheld = (!why.is_empty()).then(|| rec.clone());
        }
        if self.session.is_some() {
            rec.encode(&mut self.buf);
        }
    }

    /// Writes what was pushed since the last call, in one `write(2)`;
    /// rotates and prunes when the segment is due.
    pub fn flush(&mut self) {
        if self.buf.is_empty() && self.file.is_some() {
            return;
        }
        let Some(session) = self.session.clone() else {
            return;
        };
        // A segment removed or moved under the daemon (an admin deleting
        // the state directory to start afresh, or moving it aside) is not
        // written on unseen until it is due: a new one starts where the
        // log belongs, with the session record. The path must still name
        // the file written: an open file moved away keeps its links.
        let unlinked = self.file.as_ref().is_some_and(|f| {
            use std::os::unix::fs::MetadataExt;
            match (f.metadata(), fs::metadata(&self.path)) {
                (Ok(open), Ok(named)) => open.dev() != named.dev() || open.ino() != named.ino(),
                _ => true,
            }
        });
        let due = self.file.is_some()
            && (unlinked
                || self.size >= self.cfg.max_bytes / 8
                || self.started.elapsed().unwrap_or_default() >= SEGMENT_AGE);
        if self.file.is_none() || due {
            self.file = None;
            let mut first = header().to_vec();
            session.encode(&mut first);
            // Repeated by the buffer when it was pushed just now: the
            // reader takes a repeat as one.
            if let Some(l) = &self.withheld {
                l.encode(&mut first);
            }
            first.append(&mut self.buf);
            self.buf = first;
            match self.create() {
                Ok(f) => self.file = Some(f),
                Err(e) => {
                    self.fault(&format!(
                        "cannot start a segment in {}: {e}",
                        self.dir.display()
                    ));
                    self.buf.clear();
                    return;
                }
            }
            self.prune();
        }
        let Some(f) = self.file.as_mut() else { return };
        match f.write_all(&self.buf) {
            Ok(()) => {
                self.size += self.buf.len() as u64;
                self.faulted = false;
            }
            Err(e) => {
                let what = format!(
                    "cannot write its activity log in {}: {e}",
                    self.dir.display()
                );
                self.fault(&what);
                // Try again with a new segment at the next records.
                self.file = None;
            }
        }
        self.buf.clear();
    }

    fn fault(&mut self, what: &str) {
        if !self.faulted {
            warn!(
                "disk {}: {what}; the daemon goes on without it (logged once until it works again)",
                self.key
            );
            self.faulted = true;
        }
    }

    fn create(&mut self) -> std::io::Result<File> {
        fs::create_dir_all(&self.dir)?;
        let now = SystemTime::now();
        let mut ns = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        loop {
            let path = self.dir.join(format!("{ns:020}.{EXTENSION}"));
            match OpenOptions::new().append(true).create_new(true).open(&path) {
                Ok(f) => {
                    self.path = path;
                    self.started = now;
                    self.size = 0;
                    return Ok(f);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => ns += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Deletes segments past the retention time or the size cap, oldest
    /// first, never the newest; and the logs of other keys whose every
    /// segment is past the retention time ([`prune_stale`]).
    pub fn prune(&self) {
        prune(&self.dir, &self.cfg);
        prune_stale(&self.cfg);
    }
}

/// Deletes the logs under `cfg`'s directory whose every segment was last
/// written longer ago than the retention time, and their directories;
/// returns how many logs. A key whose disk has gone (a USB disk once seen
/// as `sdd` under a glob, an entry since removed) has no writer to prune
/// it, and its newest segment, which [`prune`] always keeps, would stay
/// for ever. A log with a segment written within the retention time is
/// left to its own writer.
pub fn prune_stale(cfg: &ActivityConfig) -> usize {
    let Ok(dirs) = fs::read_dir(&cfg.dir) else {
        return 0;
    };
    let retention = Duration::from_nanos(cfg.retention.0);
    let stale = |f: &PathBuf| {
        fs::metadata(f)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > retention)
    };
    let mut gone = 0;
    for dir in dirs.filter_map(|e| e.ok().map(|e| e.path())) {
        let Ok(files) = segments(&dir) else { continue };
        if files.is_empty() || !files.iter().all(stale) {
            continue;
        }
        if files.iter().all(|f| fs::remove_file(f).is_ok()) {
            // Only when nothing else is in it.
            let _ = fs::remove_dir(&dir);
            gone += 1;
        }
    }
    gone
}

/// Deletes `dir`'s segments past `cfg`'s retention time or size cap,
/// oldest first, never the newest; returns how many.
pub fn prune(dir: &Path, cfg: &ActivityConfig) -> usize {
    let Ok(files) = segments(dir) else { return 0 };
    let Some((_, older)) = files.split_last() else {
        return 0;
    };
    let retention = Duration::from_nanos(cfg.retention.0);
    let sizes: Vec<(u64, Option<SystemTime>)> = files
        .iter()
        .map(|f| fs::metadata(f).map_or((0, None), |m| (m.len(), m.modified().ok())))
        .collect();
    let mut total: u64 = sizes.iter().map(|s| s.0).sum();
    let mut gone = 0;
    for (f, (size, modified)) in older.iter().zip(&sizes) {
        let old = modified
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > retention);
        if (old || total > cfg.max_bytes) && fs::remove_file(f).is_ok() {
            total -= size;
            gone += 1;
        }
    }
    gone
}

/// Feeds the records of disk `key`'s log to `feed`, segment by segment,
/// for the controller's shadow to resume from; a session repeated at the
/// start of a segment of the same run is given once.
///
/// With `drive` (the [`lull_activity::drive_id`] of the drive at `key`
/// now) the evidence is that drive's, wherever it was: a key names a bay
/// or a kernel name, which another drive may have had (`sdb` under a glob
/// after a reboot or a swap), and the drive may have been watched under
/// another key before. So the sessions of another drive in `key`'s log
/// are skipped with their records, and the segments of other keys' logs
/// that start with a session of this drive are read too, all in the order
/// they were written (their names are their creation times). Sessions that
/// name no drive (an older lull's, or a drive without a serial number)
/// count only in `key`'s own log.
///
/// Damage is logged and the damaged segment skipped (its records before
/// the damage are kept only when the damage is a torn tail). Returns the
/// records given.
pub fn read_back(
    cfg: &ActivityConfig,
    key: &str,
    drive: Option<u64>,
    mut feed: impl FnMut(Record),
) -> usize {
    let own_dir = disk_dir(&cfg.dir, key);
    let (files, moved) = lull_activity::read::drive_segments(&own_dir, drive);
    let mut session: Option<Record> = None;
    let mut other = false;
    let (mut n, mut others) = (0, 0);
    for f in files {
        let own = f.parent() == Some(own_dir.as_path());
        let Ok(bytes) = fs::read(&f) else { continue };
        match parse_segment(&bytes, &f) {
            Ok((records, warning)) => {
                if let Some(w) = warning {
                    warn!("disk {key}: activity log: {w}");
                }
                for r in records {
                    if let Record::Session(s) = &r {
                        if session.as_ref() == Some(&r) {
                            continue;
                        }
                        other = !lull_activity::read::of_drive(s, drive, own);
                        others += usize::from(other && own);
                        session = Some(r.clone());
                    }
                    if other {
                        continue;
                    }
                    n += 1;
                    feed(r);
                }
            }
            Err(e) => warn!("disk {key}: activity log: {e}; the segment is skipped"),
        }
    }
    if others > 0 {
        info!(
            "disk {key}: activity log: {others} run(s) of another drive under this key are left out of this drive's evidence"
        );
    }
    if moved > 0 {
        info!(
            "disk {key}: activity log: {moved} segment(s) of this drive under another key count in its evidence"
        );
    }
    n
}

/// The shadow evaluation of disk `key`, recomputed from its log with the
/// drive its last session names, from that drive's sessions only (`None`
/// without a log, or when the log
/// is not of a `standby` disk with a power model). The daemon's own shadow
/// is fed the same records, so the figures are the same (`lull status`
/// uses this when the state file has none yet).
pub fn shadow_from_log(
    cfg: &ActivityConfig,
    key: &str,
    yours: Option<Nanos>,
) -> Option<lull_activity::ShadowReport> {
    let session = last_session(cfg, key)?;
    if session.task != "standby" {
        return None;
    }
    let profile =
        lull_tasks::DriveProfile::from_spec(&session.drive, lull_tasks::PresetSource::Config)
            .ok()?;
    let mut shadow = lull_activity::Shadow::for_profile(&profile)?;
    if let Some(t) = yours {
        shadow = shadow.with_your_timeout(t);
    }
    // Judged from the poll on, as the daemon's own shadow is (its last
    // session's poll).
    shadow = shadow.with_floor(session.poll);
    // Streamed: a week of a busy disk's polls is a few million records,
    // which `lull status` has no need to hold at once.
    read_back(cfg, key, session.drive_id, |r| shadow.feed(&r));
    shadow.settle();
    Some(shadow.report())
}

/// The last session record of disk `key`'s log, as [`read_back`] would
/// give it last: from the newest segment that reads and holds one (each
/// segment begins with its run's session, so this reads one segment).
fn last_session(cfg: &ActivityConfig, key: &str) -> Option<lull_activity::Session> {
    let files = segments(&disk_dir(&cfg.dir, key)).ok()?;
    files.iter().rev().find_map(|f| {
        let bytes = fs::read(f).ok()?;
        let (records, _) = parse_segment(&bytes, f).ok()?;
        records.into_iter().rev().find_map(|r| match r {
            Record::Session(s) => Some(s),
            _ => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_activity::{Counts, Poll, PollKind, Session, Shadow, drive_id};
    use lull_core::time::Nanos;

    /// The shadow the daemon builds for a disk of `preset`.
    fn shadow_of(preset: &str) -> Shadow {
        let p = lull_tasks::DriveProfile::from_spec(preset, lull_tasks::PresetSource::Config);
        Shadow::for_profile(&p.unwrap()).unwrap()
    }

    fn cfg(dir: &Path) -> ActivityConfig {
        ActivityConfig {
            enabled: true,
            dir: dir.to_path_buf(),
            retention: crate::config::DEFAULT_ACTIVITY_RETENTION,
            max_bytes: 1_000_000,
        }
    }

    fn records(clock: u64) -> Vec<Record> {
        let s = Nanos::from_secs;
        let mut v = vec![
            Record::Session(Session {
                clock: s(clock),
                poll: s(1),
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
            }),
            Record::Poll(Poll {
                t0: s(1),
                t: s(1),
                kind: PollKind::Baseline,
                ..Poll::default()
            }),
        ];
        for i in 1..20u64 {
            v.push(Record::Poll(Poll {
                t0: s(i * 300 - 1),
                t: s(i * 300),
                counts: Counts {
                    reads: 3,
                    sectors: 24,
                    io_ms: 5,
                    ..Counts::default()
                },
                ..Poll::default()
            }));
            v.push(Record::Standby(s(i * 300 + 150)));
        }
        v
    }

    /// What the writer writes reads back as the records given, across a
    /// restart (a new session, a new segment); `lull status`'s shadow from
    /// the log is the daemon's.
    #[test]
    fn written_records_read_back_and_give_the_daemons_shadow() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = cfg(dir.path());
        let (a, b) = (records(1_700_000_000), records(1_700_010_000));
        for run in [&a, &b] {
            let mut w = Writer::new(&cfg, "/dev/disk/by-id/ata-X");
            for r in run.iter() {
                w.push(r);
                w.flush();
            }
        }
        let disk = disk_dir(dir.path(), "/dev/disk/by-id/ata-X");
        assert_eq!(disk, dir.path().join("_dev_disk_by-id_ata-X"));
        assert_eq!(segments(&disk).unwrap().len(), 2);
        let mut back = Vec::new();
        read_back(&cfg, "/dev/disk/by-id/ata-X", None, |r| back.push(r));
        let all: Vec<Record> = a.iter().chain(&b).cloned().collect();
        assert_eq!(back, all);
        // As the daemon builds it: judged from its poll (the sessions' 1 s).
        let mut live = shadow_of("wd-red-plus").with_floor(Nanos::from_secs(1));
        for r in &all {
            live.feed(r);
        }
        live.settle();
        let report = shadow_from_log(&cfg, "/dev/disk/by-id/ata-X", None).unwrap();
        assert_eq!(report, live.report());
        assert!(report.windows[1].idle_periods >= 30, "{report:?}");
        assert!(shadow_from_log(&cfg, "sdz", None).is_none());
    }

    /// Writes ten records of `key`'s log under `dir/activity`, then
    /// `cut(dir/activity)` under the running writer, then the rest; what
    /// the log's directory reads back, and the records written.
    fn written_across(dir: &Path, key: &str, cut: impl Fn(&Path)) -> (Vec<Record>, Vec<Record>) {
        let cfg = cfg(&dir.join("activity"));
        let recs = records(1_700_000_000);
        let mut w = Writer::new(&cfg, key);
        for (i, r) in recs.iter().enumerate() {
            if i == 10 {
                cut(&dir.join("activity"));
            }
            w.push(r);
            w.flush();
        }
        let mut back = Vec::new();
        read_back(&cfg, key, None, |r| back.push(r));
        (back, recs)
    }

    /// The log's directory removed under a running writer: its next
    /// records start a new segment there (with the session record), not
    /// the removed file no path names.
    #[test]
    fn a_removed_log_starts_again_with_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let (back, recs) = written_across(dir.path(), "/dev/disk/by-id/ata-X", |d| {
            std::fs::remove_dir_all(d).unwrap()
        });
        let mut want = vec![recs[0].clone()];
        want.extend(recs[10..].iter().cloned());
        assert_eq!(back, want);
    }

    /// A disk whose standbys are withheld (here: no transport reaches
    /// it): each new segment repeats the record after its session, so the
    /// segment read alone says so; one that ended it is not repeated.
    #[test]
    fn a_new_segment_repeats_that_standbys_are_withheld() {
        let dir = tempfile::tempdir().unwrap();
        let s = Nanos::from_secs;
        let alone = Record::Withheld {
            t: s(450),
            why: "no transport reaches the drive".into(),
        };
        let recs = records(1_700_000_000);
        let mut w = Writer::new(&cfg(&dir.path().join("a")), "sdb");
        for r in &recs[..4] {
            w.push(r);
            w.flush();
        }
        w.push(&alone);
        w.flush();
        // The segment is cut under the writer (`rm`): the next starts anew.
        std::fs::remove_dir_all(dir.path().join("a")).unwrap();
        w.push(&recs[4]);
        w.flush();
        let seg = |d: &Path| {
            let files = segments(&disk_dir(d, "sdb")).unwrap();
            assert_eq!(files.len(), 1);
            lull_activity::read::parse_segment(&std::fs::read(&files[0]).unwrap(), &files[0])
                .unwrap()
                .0
        };
        assert_eq!(
            seg(&dir.path().join("a")),
            [recs[0].clone(), alone.clone(), recs[4].clone()]
        );
        // Ended: the next segment does not repeat it.
        w.push(&Record::Withheld {
            t: s(600),
            why: String::new(),
        });
        w.flush();
        std::fs::remove_dir_all(dir.path().join("a")).unwrap();
        w.push(&recs[5]);
        w.flush();
        assert_eq!(
            seg(&dir.path().join("a")),
            [recs[0].clone(), recs[5].clone()]
        );
    }

    /// The same with the directory moved aside (`mv state state.old`): the
    /// open segment keeps its links, and was written on in the moved
    /// directory while the log's own started empty.
    #[test]
    fn a_log_moved_aside_starts_again_where_it_belongs() {
        let dir = tempfile::tempdir().unwrap();
        let aside = dir.path().join("activity.old");
        let (back, recs) =
            written_across(dir.path(), "sdb", |d| std::fs::rename(d, &aside).unwrap());
        let mut want = vec![recs[0].clone()];
        want.extend(recs[10..].iter().cloned());
        assert_eq!(back, want);
        // What was moved aside holds what was written before the move only.
        let mut old = Vec::new();
        read_back(&cfg(&aside), "sdb", None, |r| old.push(r));
        assert_eq!(old, recs[..10].to_vec());
    }

    #[test]
    fn the_shadow_from_a_log_takes_the_drive_of_its_last_session() {
        // The drive changed between two runs: the whole log is evaluated
        // with the last one's model, as the daemon now running it would.
        let dir = tempfile::tempdir().unwrap();
        let cfg = cfg(dir.path());
        let a = records(1_700_000_000);
        let mut b = records(1_700_010_000);
        if let Record::Session(s) = &mut b[0] {
            s.drive = "paper-2.5in".into();
        }
        for run in [&a, &b] {
            let mut w = Writer::new(&cfg, "sdb");
            for r in run.iter() {
                w.push(r);
                w.flush();
            }
        }
        let report = |preset: &str| {
            let mut sh = shadow_of(preset).with_floor(Nanos::from_secs(1));
            a.iter().chain(&b).for_each(|r| sh.feed(r));
            sh.settle();
            sh.report()
        };
        let from_log = shadow_from_log(&cfg, "sdb", None).unwrap();
        assert_eq!(from_log, report("paper-2.5in"));
        assert_ne!(from_log, report("wd-red-plus"));
        // A log of another task has no shadow.
        let mut c = records(1_700_020_000);
        if let Record::Session(s) = &mut c[0] {
            s.task = "flush".into();
        }
        let mut w = Writer::new(&cfg, "sdb");
        w.push(&c[0]);
        w.flush();
        assert!(shadow_from_log(&cfg, "sdb", None).is_none());
    }

    /// A key under a glob (`sdb`) is a kernel name, which another drive
    /// can have after a reboot or a swap: one drive's evidence leaves out
    /// the runs of another, and keeps those that name no drive (an older
    /// lull's).
    #[test]
    fn the_evidence_of_one_drive_leaves_out_another_drives_runs() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = cfg(dir.path());
        let (x, y) = (drive_id("WD-WCC7K0000001"), drive_id("WD-WCC7K0000002"));
        assert_ne!(x, y);
        let run = |clock, id| {
            let mut r = records(clock);
            if let Record::Session(s) = &mut r[0] {
                s.kernel = "sdb".into();
                s.drive_id = id;
            }
            r
        };
        let old = run(1_699_990_000, None);
        let (a, b, c) = (
            run(1_700_000_000, Some(x)),
            run(1_700_010_000, Some(y)),
            run(1_700_020_000, Some(x)),
        );
        for r in [&old, &a, &b, &c] {
            let mut w = Writer::new(&cfg, "sdb");
            for rec in r.iter() {
                w.push(rec);
                w.flush();
            }
        }
        let back = |drive| {
            let mut v = Vec::new();
            let n = read_back(&cfg, "sdb", drive, |r| v.push(r));
            assert_eq!(n, v.len());
            v
        };
        let cat = |runs: &[&Vec<Record>]| -> Vec<Record> {
            runs.iter().flat_map(|r| r.iter().cloned()).collect()
        };
        assert_eq!(back(Some(x)), cat(&[&old, &a, &c]));
        assert_eq!(back(Some(y)), cat(&[&old, &b]));
        assert_eq!(back(None), cat(&[&old, &a, &b, &c]), "no drive known: all");
        // `lull status`'s shadow from the log is that of the last run's drive.
        let mut sh = shadow_of("wd-red-plus").with_floor(Nanos::from_secs(1));
        cat(&[&old, &a, &c]).iter().for_each(|r| sh.feed(r));
        sh.settle();
        assert_eq!(shadow_from_log(&cfg, "sdb", None).unwrap(), sh.report());
    }

    /// Two USB drives under `sd*` swap kernel names after a reboot: each
    /// drive's evidence follows it to its new key, in the order written,
    /// and a run naming no drive counts only under its own key.
    #[test]
    fn the_evidence_of_a_drive_follows_it_to_another_key() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = cfg(dir.path());
        let (x, y) = (drive_id("WD-X"), drive_id("WD-Y"));
        let run = |clock, key: &str, id| {
            let mut r = records(clock);
            if let Record::Session(s) = &mut r[0] {
                s.key = key.into();
                s.kernel = key.into();
                s.drive_id = id;
            }
            r
        };
        let runs = [
            ("sdb", run(1_699_990_000, "sdb", None)),
            ("sdb", run(1_700_000_000, "sdb", Some(x))),
            ("sdc", run(1_700_000_000, "sdc", Some(y))),
            // After a reboot, swapped.
            ("sdb", run(1_700_010_000, "sdb", Some(y))),
            ("sdc", run(1_700_010_000, "sdc", Some(x))),
        ];
        for (key, r) in &runs {
            let mut w = Writer::new(&cfg, key);
            for rec in r.iter() {
                w.push(rec);
                w.flush();
            }
        }
        let back = |key, drive| {
            let mut v = Vec::new();
            read_back(&cfg, key, drive, |r| v.push(r));
            v
        };
        let cat = |idx: &[usize]| -> Vec<Record> {
            idx.iter()
                .flat_map(|&i| runs[i].1.iter().cloned())
                .collect()
        };
        assert_eq!(back("sdc", Some(x)), cat(&[1, 4]));
        assert_eq!(back("sdb", Some(y)), cat(&[0, 2, 3]));
        assert_eq!(back("sdb", Some(x)), cat(&[0, 1, 4]));
        assert_eq!(
            back("sdc", None),
            cat(&[2, 4]),
            "no drive known: the key's log"
        );
    }

    /// A log no writer prunes (its disk gone) goes once its every segment
    /// is past the retention time; one with a recent segment stays.
    #[test]
    fn a_stale_log_of_a_gone_disk_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = cfg(dir.path());
        let recs = records(1_700_000_000);
        for key in ["sdd", "sde", "sde"] {
            let mut w = Writer::new(&cfg, key);
            w.push(&recs[0]);
            w.flush();
        }
        let week_ago = SystemTime::now() - Duration::from_secs(8 * 86_400);
        let age = |f: &Path| {
            File::options()
                .write(true)
                .open(f)
                .unwrap()
                .set_modified(week_ago)
                .unwrap()
        };
        segments(&disk_dir(dir.path(), "sdd"))
            .unwrap()
            .iter()
            .for_each(|f| age(f));
        let sde = segments(&disk_dir(dir.path(), "sde")).unwrap();
        assert_eq!(sde.len(), 2);
        age(&sde[0]);
        // Not a log: left alone, whatever its age.
        let other = dir.path().join("notes");
        fs::create_dir(&other).unwrap();
        fs::write(other.join("x.txt"), "x").unwrap();
        age(&other.join("x.txt"));
        assert_eq!(prune_stale(&cfg), 1);
        assert!(!disk_dir(dir.path(), "sdd").exists());
        assert_eq!(segments(&disk_dir(dir.path(), "sde")).unwrap(), sde);
        assert!(other.join("x.txt").exists());
        // Once the recent one is old too, it goes.
        age(&sde[1]);
        assert_eq!(prune_stale(&cfg), 1);
        assert!(!disk_dir(dir.path(), "sde").exists());
    }

    /// Segments beyond the size cap go, oldest first; the newest stays.
    #[test]
    fn pruning_keeps_the_cap_and_the_newest_segment() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = cfg(dir.path());
        cfg.max_bytes = 8 * 1024;
        let mut w = Writer::new(&cfg, "sdb");
        let recs = records(1_700_000_000);
        w.push(&recs[0]);
        // Many polls: segments rotate every max_bytes / 8.
        for i in 0..2000u64 {
            w.push(&Record::Mark(Nanos::from_secs(i)));
            w.flush();
        }
        let files = segments(w.dir()).unwrap();
        let total: u64 = files.iter().map(|f| fs::metadata(f).unwrap().len()).sum();
        assert!(files.len() > 1, "{files:?}");
        assert!(total <= cfg.max_bytes + cfg.max_bytes / 8 + 64, "{total}");
        // Every segment reads alone: it starts with the session.
        for f in &files {
            let (recs, warning) = parse_segment(&fs::read(f).unwrap(), f).unwrap();
            assert!(matches!(recs.first(), Some(Record::Session(_))) && warning.is_none());
        }
    }
}
