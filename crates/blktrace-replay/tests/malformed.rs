//! Malformed and hostile input: byte-swapped, truncated, empty,
//! wrong-magic and oversized-`pdu_len` blktrace files (made here in a
//! temporary directory), errors that name the file and offset or line,
//! `lenient` reads, and property tests that no reader panics on arbitrary
//! bytes.

use std::io::Write;
use std::path::Path;

use lull_blktrace_replay::{
    Format, ReadOptions, Trace, TraceError, alibaba, biosnoop, blkparse, blktrace, fio, msr,
    normalized, read_from, spc, systor, tencent, vscsi,
};
use proptest::prelude::*;

const MAGIC: u32 = 0x6561_7400;
const Q: u32 = 1 | ((1 << 4 | 1 << 1) << 16);
const C: u32 = 8 | ((1 << 7 | 1 << 1) << 16);
const PROCESS: u32 = 1 << 26;

/// A v7 `blk_io_trace` record with its payload.
fn record(time: u64, action: u32, sector: u64, pdu: &[u8], big: bool) -> Vec<u8> {
    let mut v = Vec::new();
    let w32 = |v: &mut Vec<u8>, x: u32| {
        v.extend(if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let w64 = |v: &mut Vec<u8>, x: u64| {
        v.extend(if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    w32(&mut v, MAGIC | 7);
    w32(&mut v, 1);
    w64(&mut v, time);
    w64(&mut v, sector);
    w32(&mut v, 4096);
    w32(&mut v, action);
    w32(&mut v, 7);
    w32(&mut v, (8 << 20) | 16);
    w32(&mut v, 2);
    v.extend([0, 0]);
    let n = pdu.len() as u16;
    v.extend(if big {
        n.to_be_bytes()
    } else {
        n.to_le_bytes()
    });
    v.extend(pdu);
    v
}

/// Three requests, with a notify record in between.
fn sample(big: bool) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..3u64 {
        v.extend(record(1_000 + i * 1_000_000, Q, 8 * i, &[], big));
        if i == 1 {
            v.extend(record(5, PROCESS, 0, b"kworker/1:1\0", big));
        }
        v.extend(record(1_000 + i * 1_000_000 + 500, C, 8 * i, &[], big));
    }
    v
}

fn write(dir: &Path, name: &str, data: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(data).unwrap();
    p
}

fn open(p: &Path, lenient: bool) -> Result<Trace, TraceError> {
    lull_blktrace_replay::open(p, ReadOptions { lenient })
}

fn offset_of(e: &TraceError) -> Option<u64> {
    match e {
        TraceError::Offset { offset, .. } => Some(*offset),
        _ => None,
    }
}

#[test]
fn byte_swapped_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let le = open(&write(dir.path(), "le", &sample(false)), false).unwrap();
    let be = open(&write(dir.path(), "be", &sample(true)), false).unwrap();
    assert_eq!(le.requests.len(), 3);
    assert_eq!(le, be);
    assert_eq!(le.requests[2].arrival.0, 2_000_000);
    assert_eq!(le.requests[2].completion.0, 2_000_500);
}

#[test]
fn mixed_byte_order_is_an_error_at_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = record(1, Q, 0, &[], false);
    let at = data.len() as u64;
    data.extend(record(2, C, 0, &[], true));
    let e = open(&write(dir.path(), "mixed", &data), false).unwrap_err();
    assert_eq!(offset_of(&e), Some(at), "{e}");
    assert!(e.to_string().contains("mixed"), "{e}");
    assert!(e.is_input_error());
}

#[test]
fn truncated_record_names_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = sample(false);
    let at = data.len() as u64;
    data.extend(&record(9, C, 0, &[], false)[..30]);
    let p = write(dir.path(), "trunc", &data);
    let e = open(&p, false).unwrap_err();
    assert_eq!(offset_of(&e), Some(at), "{e}");
    assert!(e.to_string().contains("truncated"), "{e}");
    let t = open(&p, true).unwrap();
    assert_eq!((t.requests.len(), t.skipped), (3, 1));
}

/// A stretch of garbage in the middle of a file (a user's trial: 200
/// random bytes from offset 4800), which begins inside a header: the
/// strict error names that record, not a bad magic past the damage
/// (a garbage `pdu_len` swallowed the records after it as payload), and a
/// lenient read counts about the records lost, not one.
#[test]
fn a_damaged_stretch_is_named_where_it_begins_and_counted_as_the_records_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    for i in 0..40u64 {
        data.extend(record(1000 * i, Q, 8 * i, &[], false));
        data.extend(record(1000 * i + 500, C, 8 * i, &[], false));
    }
    // 200 bytes of garbage from the 25th byte of record 20 (offset 960):
    // records 20 to 24 (offsets 960 to 1199) are damaged.
    let mut x: u32 = 0x2545_f491;
    for b in &mut data[984..1184] {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = (x >> 24) as u8;
    }
    let pdu_len = u16::from_le_bytes([data[960 + 46], data[960 + 47]]);
    assert!(
        pdu_len > blktrace::MAX_PDU_LEN,
        "{pdu_len}: the garbage must reach it"
    );
    let p = write(dir.path(), "mid", &data);
    let e = open(&p, false).unwrap_err();
    assert_eq!(offset_of(&e), Some(960), "{e}");
    assert!(e.to_string().contains("implausible pdu_len"), "{e}");
    let t = open(&p, true).unwrap();
    // Records 20 to 24: the damaged header, then 192 bytes to the next
    // magic (record 25's, at 1200), which could have held four.
    assert_eq!(t.skipped, 5, "{t:?}");
    // 80 records, 40 requests; 5 records lost: 3 requests lose an event.
    assert!(
        (36..=38).contains(&t.requests.len()),
        "{}",
        t.requests.len()
    );
}

#[test]
fn empty_file_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(&write(dir.path(), "empty", b""), false).unwrap_err();
    assert!(e.is_input_error());
    assert!(e.to_string().contains("empty"), "{e}");
    // A directory whose per-CPU files are all empty.
    let d = dir.path().join("cap");
    std::fs::create_dir(&d).unwrap();
    write(&d, "sda.blktrace.0", b"");
    let e = open(&d, false).unwrap_err();
    assert!(e.is_input_error(), "{e}");
}

#[test]
fn wrong_magic() {
    let dir = tempfile::tempdir().unwrap();
    // Not a trace at all: no reader claims it.
    let e = open(&write(dir.path(), "junk", &[0xde; 200]), false).unwrap_err();
    assert!(matches!(e, TraceError::Format { .. }), "{e}");
    // A good record, then garbage where the next magic should be.
    let mut data = sample(false);
    let at = data.len() as u64;
    data.extend([0xde, 0xad, 0xbe, 0xef]);
    data.extend(record(9_000_000, Q, 64, &[], false));
    data.extend(record(9_000_100, C, 64, &[], false));
    let p = write(dir.path(), "badmagic", &data);
    let e = open(&p, false).unwrap_err();
    assert_eq!(offset_of(&e), Some(at), "{e}");
    assert!(e.to_string().contains("bad magic"), "{e}");
    // Lenient: resynchronises on the next record.
    let t = open(&p, true).unwrap();
    assert_eq!((t.requests.len(), t.skipped), (4, 1));
    // An unsupported version.
    let mut v6 = record(1, Q, 0, &[], false);
    v6[0] = 0x06;
    let e = open(&write(dir.path(), "v6", &v6), false).unwrap_err();
    assert!(e.is_input_error(), "{e}");
}

#[test]
fn oversized_pdu_len() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = sample(false);
    let at = data.len() as u64;
    let mut rec = record(9_000_000, Q, 64, &[], false);
    rec[46..48].copy_from_slice(&u16::MAX.to_le_bytes());
    data.extend(rec);
    data.extend([0u8; 100]);
    let p = write(dir.path(), "pdu", &data);
    let e = open(&p, false).unwrap_err();
    assert_eq!(offset_of(&e), Some(at), "{e}");
    assert!(e.to_string().contains("pdu_len"), "{e}");
    let t = open(&p, true).unwrap();
    // The damaged header, and the 100 bytes after it, which could have
    // held two records.
    assert_eq!((t.requests.len(), t.skipped), (3, 3));
}

#[test]
fn per_cpu_files_merge_by_time() {
    let dir = tempfile::tempdir().unwrap();
    // Q on CPU 0, C on CPU 1 (completions on another CPU, as with IRQ
    // affinity); plus a gzip-compressed CPU file.
    let mut cpu0 = record(100, Q, 8, &[], false);
    cpu0.extend(record(300, Q, 16, &[], false));
    let cpu1 = record(200, C, 8, &[], false);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&record(400, C, 16, &[], false)).unwrap();
    write(dir.path(), "sdb.blktrace.0", &cpu0);
    write(dir.path(), "sdb.blktrace.1", &cpu1);
    write(dir.path(), "sdb.blktrace.2", &gz.finish().unwrap());
    write(dir.path(), "notes.txt", b"not a trace");
    let t = open(dir.path(), false).unwrap();
    assert_eq!(t.requests.len(), 2);
    assert_eq!(
        (t.requests[0].arrival.0, t.requests[0].completion.0),
        (0, 100)
    );
    assert_eq!(
        (t.requests[1].arrival.0, t.requests[1].completion.0),
        (200, 300)
    );
}

#[test]
fn text_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, u64); 7] = [
        (
            "msr",
            "128166385295514663,hm,0,Write,1,512,1\n128166385295514664,hm,0,Write,x,512,1\n",
            2,
        ),
        (
            "systor",
            "Timestamp,Response,IOType,LUN,Offset,Size\n1.5,0.1,R,0,0,512\n1.6,0.1,Q,0,0,512\n",
            3,
        ),
        ("spc", "0,1,512,w,0.1\n0,1,512,w,0.2\n0,1,512,w,abc\n", 3),
        (
            "blkparse",
            "8,0 0 1 0.000000001 1 Q W 8 + 8 [a]\n8,0 0 2 bad 1 Q W 8 + 8 [a]\n",
            2,
        ),
        (
            "bcc",
            "TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)\n0.1 a 1 sda W 8 512 0.5\n\
             0.2 a 1 sda W 8 5x2 0.5\n",
            3,
        ),
        (
            "bpftrace",
            "TIME(ms) COMM PID LAT(ms)\n611 bash 4179 10\n612 bash 4179 -1\n",
            3,
        ),
        (
            "fio",
            "fio version 3 iolog\n1 /dev/sdb read 0 512\n2 /dev/sdb read x 512\n",
            3,
        ),
    ];
    for (name, text, line) in cases {
        let p = write(dir.path(), name, text.as_bytes());
        match open(&p, false) {
            Err(TraceError::Line { line: l, path, .. }) => {
                assert_eq!(l, line, "{name}");
                assert_eq!(path, p);
            }
            other => panic!("{name}: {other:?}"),
        }
        let t = open(&p, true).unwrap();
        assert_eq!(t.skipped, 1, "{name}");
    }
}

#[test]
fn unsorted_normalized_csv_is_rejected_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{}\n10,20,R,0,512,d\n5,20,R,0,512,d\n", normalized::HEADER);
    let e = open(&write(dir.path(), "n.csv", text.as_bytes()), false).unwrap_err();
    assert!(e.to_string().contains("not sorted"), "{e}");
}

/// Runs every reader, strict and lenient, on `bytes`, and `read_from`
/// (sniffing and decompression).
fn all_readers(bytes: &[u8]) {
    let p = Path::new("prop");
    for lenient in [false, true] {
        let o = ReadOptions { lenient };
        let _ = normalized::read(bytes, p, o);
        let _ = blktrace::read_one(Box::new(std::io::Cursor::new(bytes.to_vec())), p, o);
        let _ = blkparse::read(bytes, p, o);
        let _ = msr::read(bytes, p, o);
        let _ = spc::read(bytes, p, o);
        let _ = systor::read(bytes, p, o);
        let _ = tencent::read(bytes, p, o);
        let _ = alibaba::read(bytes, p, o);
        let _ = vscsi::read(bytes, p, o);
        let _ = fio::read(bytes, p, o);
        let _ = biosnoop::read_bcc(bytes, p, o);
        let _ = biosnoop::read_bpftrace(bytes, p, o);
        let _ = read_from(std::io::Cursor::new(bytes.to_vec()), p, o);
    }
    let _ = Format::sniff(bytes);
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        all_readers(&bytes);
    }

    #[test]
    fn mutated_blktrace_never_panics(
        flips in proptest::collection::vec((0usize..400, any::<u8>()), 1..8),
        cut in 0usize..500,
    ) {
        let mut data = sample(false);
        for (i, b) in flips {
            let n = data.len();
            data[i % n] = b;
        }
        data.truncate(cut.max(4));
        all_readers(&data);
        let _ = blktrace::read_one(Box::new(std::io::Cursor::new(data)), Path::new("p"), ReadOptions { lenient: true });
    }

    /// Lines of the eBPF tools' and fio's vocabularies, after each of
    /// their headers: no reader panics on them.
    #[test]
    fn tool_like_text_never_panics(
        header in prop_oneof![
            Just("TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)"),
            Just("TIMESTAMP COMM PID DISK T SECTOR BYTES P QUE(ms) LAT(ms)"),
            Just("TIME(ms) DISK ID COMM PID LAT(ms)"),
            Just("TIME(ms) COMM PID LAT(ms)"),
            Just("fio version 2 iolog"),
            Just("fio version 3 iolog"),
        ],
        lines in proptest::collection::vec(
            "([0-9:.-]{1,12}|[RWDFNASM]{1,4}|sda|<unknown>|\\?|/dev/sdb|read|write|wait|trim|add|MAJOR|MINOR| ){0,12}",
            0..12,
        ),
    ) {
        let text = format!("{header}\n{}", lines.join("\n"));
        all_readers(text.as_bytes());
    }

    #[test]
    fn csv_like_text_never_panics(lines in proptest::collection::vec("[0-9RWrw.,+ ]{0,40}", 0..20)) {
        all_readers(lines.join("\n").as_bytes());
    }
}
