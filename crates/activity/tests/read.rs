//! Reading logs back: round trips, torn tails, damage, old versions.

mod common;

use std::path::Path;

use lull_activity::read::{first_session, parse_segment};
use lull_activity::{Log, ReadError, Rebuilt, Record};
use lull_core::time::Nanos;
use proptest::prelude::*;

use common::{records, segment, steps};

const CLOCK: Nanos = Nanos(1_700_000_000_000_000_000);

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    #[test]
    fn records_round_trip(steps in steps()) {
        let recs = records(CLOCK, &steps);
        let bytes = segment(&recs);
        let (back, warning) = parse_segment(&bytes, Path::new("x.lact")).unwrap();
        prop_assert_eq!(&back, &recs);
        prop_assert_eq!(warning, None);
        // The session, from the segment's first bytes alone.
        let Record::Session(s) = &recs[0] else { unreachable!() };
        let head = &bytes[..bytes.len().min(200)];
        prop_assert_eq!(first_session(head), Some(s.clone()));
        prop_assert_eq!(first_session(&bytes[..20]), None);
    }

    /// A crash can cut the file anywhere: the records before the cut are
    /// read, with a warning unless the cut falls between frames.
    #[test]
    fn a_torn_tail_loses_only_the_last_record(steps in steps(), cut in any::<prop::sample::Index>()) {
        let recs = records(CLOCK, &steps);
        let bytes = segment(&recs);
        let cut = 16 + cut.index(bytes.len() - 16);
        let (back, _) = parse_segment(&bytes[..cut], Path::new("x.lact")).unwrap();
        prop_assert!(back.len() <= recs.len());
        prop_assert_eq!(&recs[..back.len()], &back[..]);
        // Everything that was whole is kept.
        let mut whole = lull_activity::record::header().to_vec();
        let mut kept = 0;
        for r in &recs {
            r.encode(&mut whole);
            if whole.len() <= cut { kept += 1 } else { break }
        }
        prop_assert_eq!(back.len(), kept);
    }

    /// Arbitrary bytes after the header never panic the reader.
    #[test]
    fn garbage_never_panics(tail in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = lull_activity::record::header().to_vec();
        bytes.extend_from_slice(&tail);
        let parsed = parse_segment(&bytes, Path::new("x.lact"));
        // A session read from the first bytes is the one the segment, when
        // it reads, starts with.
        if let (Some(s), Ok((back, _))) = (first_session(&bytes), parsed) {
            prop_assert_eq!(back.first(), Some(&Record::Session(s)));
        }
    }

    /// A flipped byte inside a frame followed by good frames is damage, not
    /// a torn tail: an error naming the offset of the frame.
    #[test]
    fn damage_in_the_middle_is_an_error_with_its_offset(steps in steps(), pick in any::<prop::sample::Index>()) {
        let recs = records(CLOCK, &steps);
        prop_assume!(recs.len() >= 3);
        let mut starts = Vec::new();
        let mut b = lull_activity::record::header().to_vec();
        for r in &recs {
            starts.push(b.len());
            r.encode(&mut b);
        }
        // Damage a frame that is neither the first nor the last.
        let i = 1 + pick.index(recs.len() - 2);
        let at = starts[i] + (starts[i + 1] - starts[i]) - 1; // its CRC
        b[at] ^= 0x55;
        match parse_segment(&b, Path::new("d.lact")) {
            Err(ReadError::Corrupt { offset, .. }) => prop_assert_eq!(offset as usize, starts[i]),
            other => prop_assert!(false, "expected an error, got {:?}", other),
        }
    }
}

#[test]
fn zeros_after_the_last_record_are_a_torn_tail() {
    let recs = records(CLOCK, &[(5, 3, false, false), (5, 0, false, true)]);
    let mut bytes = segment(&recs);
    bytes.extend_from_slice(&[0; 4096]);
    let (back, warning) = parse_segment(&bytes, Path::new("z.lact")).unwrap();
    assert_eq!(back, recs);
    let w = warning.expect("a warning");
    assert!(w.contains("z.lact") && w.contains("torn"), "{w}");
}

#[test]
fn a_file_that_is_not_a_log_is_named() {
    let e = parse_segment(b"time,dev,op\n", Path::new("t.csv")).unwrap_err();
    assert!(e.to_string().contains("t.csv"), "{e}");
    assert!(matches!(e, ReadError::NotALog { .. }));
}

/// Version 1 as written by the first daemon that wrote logs: the reader
/// keeps reading it.
#[test]
fn version_1_fixture_still_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1.lact");
    let log = Log::open(&path).unwrap();
    assert_eq!(log.runs.len(), 1);
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    let run = &log.runs[0];
    assert_eq!(run.session.key, "sdb");
    assert_eq!(run.session.drive, "wd-red-plus");
    // Written before the session's trailing wear budget and drive: none.
    assert_eq!(run.session.max_spindowns_per_day, None);
    assert_eq!(run.session.drive_id, None);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(first_session(&bytes).as_ref(), Some(&run.session));
    let polls = run
        .records
        .iter()
        .filter(|r| matches!(r, Record::Poll(_)))
        .count();
    let standbys = run
        .records
        .iter()
        .filter(|r| matches!(r, Record::Standby(_)))
        .count();
    assert_eq!((polls, standbys), (4, 1));
    let rebuilt = log.rebuild();
    assert_eq!(rebuilt.standbys, vec![Nanos::from_secs(700)]);
    assert_eq!(rebuilt.clock, CLOCK);
    // Baseline (1), 10 reads at 10 s, 4 writes at 1000 s, 1 at 1010 s.
    assert_eq!(rebuilt.requests.len(), 16);
}

/// Regenerates the fixture (run with `--ignored` after a deliberate
/// format change, never to make the test above pass).
#[test]
#[ignore = "regenerates the fixture; run by hand after a deliberate format change"]
fn write_v1_fixture() {
    use lull_activity::{Counts, Poll, PollKind, Session};
    let s = |t| Nanos::from_secs(t);
    let recs = vec![
        Record::Session(Session {
            clock: CLOCK,
            poll: s(10),
            key: "sdb".into(),
            kernel: "sdb".into(),
            drive: "wd-red-plus".into(),
            task: "standby".into(),
            network: "timer(2B)".into(),
            max_spindowns_per_day: None,
            saves_learned: false,
            dry_run: false,
            drive_id: None,
            continues: false,
        }),
        Record::Poll(Poll {
            t0: s(0),
            t: s(0),
            kind: PollKind::Baseline,
            ..Poll::default()
        }),
        Record::Poll(Poll {
            t0: s(0),
            t: s(10),
            counts: Counts {
                reads: 10,
                sectors: 80,
                io_ms: 40,
                ..Counts::default()
            },
            ..Poll::default()
        }),
        Record::Mark(s(400)),
        Record::Standby(s(700)),
        Record::Power {
            t: s(701),
            standby: true,
            found: false,
        },
        Record::Poll(Poll {
            t0: s(990),
            t: s(1000),
            counts: Counts {
                writes: 4,
                sectors: 64,
                io_ms: 12,
                ..Counts::default()
            },
            ..Poll::default()
        }),
        Record::Poll(Poll {
            t0: s(1000),
            t: s(1010),
            counts: Counts {
                flushes: 1,
                ..Counts::default()
            },
            ..Poll::default()
        }),
        Record::End(s(1010)),
    ];
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1.lact");
    std::fs::write(path, segment(&recs)).unwrap();
}

// Under a glob the key is a kernel name, which another drive can have
// after a reboot or a swap. The rebuilt trace is the last run's drive's:
// another drive's run is time nobody watched it, as if the daemon had
// been stopped, and runs that name no drive (an older lull's) are kept.
#[test]
fn a_rebuilt_log_is_the_last_runs_drive() {
    let hour = Nanos::from_secs(3600);
    let with = |clock, id: Option<u64>| {
        let mut r = records(clock, &[(5, 3, false, false), (100, 2, false, true)]);
        if let Record::Session(s) = &mut r[0] {
            s.drive_id = id;
        }
        r
    };
    let (x, y) = (
        Some(lull_activity::drive_id("WD-X")),
        Some(lull_activity::drive_id("WD-Y")),
    );
    let runs = [
        with(CLOCK, None),
        with(CLOCK + hour, x),
        with(CLOCK + hour * 2, y),
        with(CLOCK + hour * 3, x),
    ];
    let mut log = Log::default();
    runs.iter().for_each(|r| log.extend(r.iter().cloned()));
    let mut ours = Log::default();
    [0, 1, 3]
        .iter()
        .for_each(|&i| ours.extend(runs[i].iter().cloned()));
    let r = log.rebuild();
    assert_eq!(r.other_drive_runs, 1);
    assert_eq!(r.runs.len(), 3);
    assert_eq!(
        r,
        Rebuilt {
            other_drive_runs: 1,
            ..ours.rebuild()
        }
    );
    // Drive Y's own trace is its run alone (and the run without a drive).
    log.extend(with(CLOCK + hour * 4, y));
    let r = log.rebuild();
    assert_eq!(r.other_drive_runs, 2);
    assert_eq!(r.runs.len(), 3);
    assert_eq!(r.standbys.len(), 3);
}

// Two drives under `sd*` swapped kernel names at a reboot: a key's log
// read as a directory is the history of the drive of its last run,
// wherever it was watched, in the order written; another drive's runs
// and runs naming no drive in other keys' logs are not.
#[test]
fn a_directory_follows_its_drive_to_other_keys() {
    let root = tempfile::tempdir().unwrap();
    let hour = Nanos::from_secs(3600);
    let (x, y) = (
        Some(lull_activity::drive_id("WD-X")),
        Some(lull_activity::drive_id("WD-Y")),
    );
    let run = |clock, key: &str, id: Option<u64>| {
        let mut r = records(clock, &[(5, 3, false, false), (100, 2, false, true)]);
        if let Record::Session(s) = &mut r[0] {
            s.key = key.into();
            s.drive_id = id;
        }
        r
    };
    // Segment names are creation times: 1 before 2 …, across keys.
    let segs = [
        ("sdc", "0001", run(CLOCK, "sdc", None)),
        ("sdb", "0002", run(CLOCK + hour, "sdb", x)),
        ("sdc", "0003", run(CLOCK + hour, "sdc", y)),
        ("sdb", "0004", run(CLOCK + hour * 3, "sdb", y)),
        ("sdc", "0005", run(CLOCK + hour * 3, "sdc", x)),
    ];
    for (key, name, recs) in &segs {
        let dir = root.path().join(key);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.lact")), segment(recs)).unwrap();
    }
    let of = |idx: &[usize]| {
        let mut log = Log::default();
        idx.iter()
            .for_each(|&i| log.extend(segs[i].2.iter().cloned()));
        log
    };
    // sdc now holds X: X's run under sdb comes in, in its place; sdc's
    // own run naming no drive stays; Y's runs are left out.
    let sdc = Log::open(&root.path().join("sdc")).unwrap();
    assert_eq!(sdc.followed, 1);
    assert_eq!(sdc.runs, of(&[0, 1, 2, 4]).runs);
    let r = sdc.rebuild();
    assert_eq!(r.other_drive_runs, 1);
    assert_eq!(
        r,
        Rebuilt {
            other_drive_runs: 1,
            ..of(&[0, 1, 4]).rebuild()
        }
    );
    // sdb now holds Y: Y's run under sdc, not sdc's run naming no drive.
    let sdb = Log::open(&root.path().join("sdb")).unwrap();
    assert_eq!(sdb.followed, 1);
    assert_eq!(sdb.runs, of(&[1, 2, 3]).runs);
    assert_eq!(sdb.rebuild().runs.len(), 2);
    // However the directory is written.
    for form in ["sdc/", "./sdc", "sdc/."] {
        let log = Log::open(&root.path().join(form)).unwrap();
        assert_eq!((log.followed, &log.runs), (1, &sdc.runs), "{form}");
    }
    // A segment file alone is just itself.
    let one = Log::open(&root.path().join("sdb/0004.lact")).unwrap();
    assert_eq!((one.followed, one.runs), (0, of(&[3]).runs));
}

/// A session repeated after an end is a new run, not a new segment of the
/// ended one: a reload that starts a disk's controller again with the same
/// session (a top-level key such as `power_check` changed) was read as one
/// run, so a replay kept the old network where the daemon built another.
#[test]
fn a_repeated_session_after_an_end_starts_a_run() {
    let a = records(CLOCK, &[(5, 3, false, false), (100, 2, false, false)]);
    let session = a[0].clone();
    let end = a.iter().filter_map(Record::time).max().unwrap() + Nanos::from_secs(1);
    let mut log = Log::default();
    log.extend(a.iter().cloned());
    // A new segment of the same run: one run.
    log.extend([session.clone(), Record::Mark(end)]);
    assert_eq!(log.runs.len(), 1);
    // The run ends; the same session again starts another.
    log.extend([
        Record::End(end),
        session,
        Record::Mark(end + Nanos::from_secs(1)),
    ]);
    assert_eq!(log.runs.len(), 2);
}

#[test]
fn a_directory_reads_as_one_log_and_sessions_join_on_one_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let a = records(CLOCK, &[(5, 3, false, false), (100, 2, false, false)]);
    // The same run continues in a second segment (its session repeated).
    let mut b = vec![a[0].clone()];
    b.extend(
        records(CLOCK, &[(300, 1, false, false)])
            .into_iter()
            .skip(2)
            .map(|r| match r {
                Record::Poll(mut p) => {
                    p.t0 += Nanos::from_secs(105);
                    p.t += Nanos::from_secs(105);
                    Record::Poll(p)
                }
                r => r,
            }),
    );
    // A second daemon run an hour later.
    let c = records(CLOCK + Nanos::from_secs(3600), &[(5, 1, false, false)]);
    std::fs::write(dir.path().join("0001.lact"), segment(&a)).unwrap();
    std::fs::write(dir.path().join("0002.lact"), segment(&b)).unwrap();
    std::fs::write(dir.path().join("0003.lact"), segment(&c)).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a segment").unwrap();
    let log = Log::open(dir.path()).unwrap();
    assert_eq!(log.runs.len(), 2);
    let r = log.rebuild();
    // Sorted, and the gap between the runs is one busy request.
    assert!(r.requests.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    let run1_end = log.runs[0].last().unwrap();
    let gap = r
        .requests
        .iter()
        .find(|q| q.arrival == run1_end)
        .expect("the gap request");
    assert_eq!(gap.completion, Nanos::from_secs(3601));
    let e = Log::open(&dir.path().join("none")).unwrap_err();
    assert!(e.to_string().contains("none"));
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        Log::open(empty.path()),
        Err(ReadError::Empty { .. })
    ));
}

/// Where the daemon withheld its standbys: from each record that says so
/// to the one that ends it, else to the end of its run; a repeat (a new
/// segment's) is one stretch; a new run decides afresh. A failed standby
/// is the decision instant of the standby it answers.
#[test]
fn withheld_stretches_run_to_their_end_or_their_runs_and_failures_pair() {
    let s = Nanos::from_secs;
    let withheld = |t: Nanos, why: &str| Record::Withheld { t, why: why.into() };
    let session = |clock| {
        let Record::Session(s) = records(clock, &[]).remove(0) else {
            unreachable!()
        };
        Record::Session(s)
    };
    let mut log = Log::default();
    log.extend([
        session(CLOCK),
        Record::Mark(s(1)),
        Record::Standby(s(5)),
        Record::StandbyFailed(s(6)),
        withheld(s(10), "no transport reaches the drive"),
        Record::Mark(s(60)),
        // The next segment repeats it after its session.
        session(CLOCK),
        withheld(s(10), "no transport reaches the drive"),
        Record::Mark(s(120)),
        withheld(s(200), ""),
        Record::Standby(s(250)),
        withheld(s(300), "left alone: the drive reports no rotation"),
        Record::Mark(s(400)),
        Record::End(s(400)),
        // A second run, an hour on: nothing said, nothing withheld; a
        // failure with no standby before it in its run answers none.
        session(CLOCK + s(3600)),
        Record::Mark(s(1)),
        Record::StandbyFailed(s(2)),
        Record::Standby(s(100)),
        Record::StandbyFailed(s(101)),
        Record::Mark(s(500)),
    ]);
    let r = log.rebuild();
    assert_eq!(r.runs.len(), 2);
    let d = &r.daemon_standbys;
    let spans: Vec<(Nanos, Nanos, &str)> = d
        .withheld()
        .iter()
        .map(|(a, b, w)| (*a, *b, w.as_str()))
        .collect();
    assert_eq!(
        spans,
        [
            (s(10), s(200), "no transport reaches the drive"),
            (
                s(300),
                s(400) + Nanos(1),
                "left alone: the drive reports no rotation"
            ),
        ]
    );
    let second = r.runs[1].offset;
    assert!(d.withheld_at(second + s(100)).is_none());
    assert!(d.withheld_at(s(400)).is_some());
    assert_eq!(d.failed(), [s(5), second + s(100)]);
    assert!(!d.failed_at(s(250)));
}

/// A power state's `found` flag is a trailing byte: it round-trips, and a
/// record without it (a daemon from before it) reads as not found, the
/// answer to a standby lull sent, which a replay and the shadow take up
/// as they always did (not at all).
#[test]
fn a_found_power_state_round_trips_and_an_older_one_is_not_found() {
    for (standby, found) in [(true, true), (false, true), (true, false)] {
        let rec = Record::Power {
            t: Nanos::from_secs(7),
            standby,
            found,
        };
        let mut recs = records(CLOCK, &[(5, 3, false, false)]);
        recs.push(rec.clone());
        let (back, _) = parse_segment(&segment(&recs), Path::new("x.lact")).unwrap();
        assert_eq!(back.last(), Some(&rec));
    }
    // Version 1's frame of a power state: kind 6, time, state; no flag.
    let v1 = Log::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1.lact")).unwrap();
    let found: Vec<bool> = v1
        .records()
        .filter_map(|r| match r {
            Record::Power { found, .. } => Some(found),
            _ => None,
        })
        .collect();
    assert_eq!(found, [false]);
}
