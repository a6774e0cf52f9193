//! The eBPF tools' output and fio's iologs, read from the fixtures laid
//! out from each tool's documented example (see `fixtures/README.md`):
//! each is recognised by content, and its requests carry the times the
//! tool's columns mean.

use std::path::{Path, PathBuf};

use lull_blktrace_replay::{Format, ReadOptions, Trace, biosnoop, fio, open, read::sniff_file};
use lull_core::request::Op;
use lull_core::time::Nanos;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(name: &str) -> Trace {
    open(&fixture(name), ReadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn each_fixture_is_recognised_by_content() {
    for (name, format) in [
        ("bcc_biosnoop.txt", Format::BccBiosnoop),
        ("bcc_biosnoop_q.txt", Format::BccBiosnoop),
        ("libbpf_biosnoop.txt", Format::BccBiosnoop),
        ("bpftrace_biosnoop.txt", Format::BpftraceBiosnoop),
        ("bpftrace_biosnoop_old.txt", Format::BpftraceBiosnoop),
        ("fio_v3.iolog", Format::FioIolog),
        ("fio_v2.iolog", Format::FioIolog),
    ] {
        assert_eq!(sniff_file(&fixture(name)).unwrap(), Some(format), "{name}");
        assert_eq!(read(name).format, format.name(), "{name}");
    }
    // The phone CSV is no format of its own: it needs a column map.
    assert_eq!(sniff_file(&fixture("phone.csv")).unwrap(), None);
}

/// bcc's TIME is the completion: arrival = TIME - LAT (- QUE with -Q).
#[test]
fn bcc_times_run_back_from_completion() {
    let t = read("bcc_biosnoop.txt");
    assert_eq!(t.requests.len(), 15);
    assert_eq!(t.devices, ["xvda1", "xvdc", "xvdb"]);
    // The first row completes at 0.000004 s after 0.74 ms: it arrived at
    // -0.000736 s, the earliest arrival, time 0 now. The third completes
    // at 0.001469 s after 1.24 ms: it arrived at 0.000229 s.
    let first = t.requests[0];
    assert_eq!(first.arrival, Nanos(0));
    assert_eq!(first.completion, Nanos(740_000));
    assert_eq!(
        (first.sector, first.bytes, first.op),
        (13_092_560, 4096, Op::Write)
    );
    let third = t.requests.iter().find(|r| r.sector == 13_092_440).unwrap();
    assert_eq!(third.arrival, Nanos(229_000 + 736_000));
    assert_eq!(third.completion, Nanos(1_469_000 + 736_000));
    let q = read("bcc_biosnoop_q.txt");
    // Row 2: 0.000771 - 0.47 ms - 0.11 ms, against row 1's 0 - 0.55 - 0.01.
    assert_eq!(q.requests[1].arrival, Nanos(771_000 - 580_000 + 560_000));
    assert_eq!(q.requests[1].completion, Nanos(771_000 + 560_000));
    // The 5.3 s gap is idle time the trace keeps.
    assert!(q.requests[2].arrival.0 > 5_000_000_000);
}

#[test]
fn libbpf_tools_rwbs_and_missed_queue_times() {
    let t = read("libbpf_biosnoop.txt");
    let ops: Vec<Op> = t.requests.iter().map(|r| r.op).collect();
    assert_eq!(ops, [Op::Write, Op::Write, Op::Read, Op::Discard]);
    assert!(
        t.notes.iter().any(|n| n.contains("QUE(ms) -1")),
        "{:?}",
        t.notes
    );
    // `Web Content` holds a blank: the row still splits.
    assert_eq!(t.requests[2].bytes, 131_072);
}

#[test]
fn bpftrace_has_times_only() {
    let t = read("bpftrace_biosnoop.txt");
    assert_eq!(t.devices, ["259,0"]);
    assert_eq!(t.requests.len(), 8);
    // 627 ms less 15 ms, against the earliest arrival, 611 - 10 ms.
    let r = t
        .requests
        .iter()
        .find(|r| r.completion == Nanos(26_000_000))
        .unwrap();
    assert_eq!(r.arrival, Nanos(11_000_000));
    assert!(t.requests.iter().all(|r| r.op == Op::Read && r.bytes == 0));
    assert!(t.notes.iter().any(|n| n.contains("no direction")));
    let old = read("bpftrace_biosnoop_old.txt");
    assert_eq!(
        (old.requests.len(), old.devices.as_slice()),
        (2, ["?".to_string()].as_slice())
    );
}

#[test]
fn fio_iologs() {
    let v3 = read("fio_v3.iolog");
    assert_eq!(v3.requests.len(), 4);
    assert_eq!(v3.requests[2].arrival, Nanos(2_004_000_000));
    assert_eq!(v3.requests[3].op, Op::Flush);
    let v2 = read("fio_v2.iolog");
    assert_eq!(v2.requests.len(), 3);
    // Back to back, then the 2 s wait.
    assert_eq!(v2.requests[1].arrival, Nanos(0));
    assert_eq!(v2.requests[2].arrival, Nanos(2_000_000_000));
    assert!(v2.notes.iter().any(|n| n.contains("no times")));
    assert_eq!(fio::NAME, Format::FioIolog.name());
    assert_eq!(biosnoop::BCC, Format::BccBiosnoop.name());
}

/// An unrecognized CSV: the error shows the first line and the map its
/// header suggests.
#[test]
fn an_unknown_csv_gets_a_column_map() {
    let e = open(&fixture("phone.csv"), ReadOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("proces,device,rw_flag,sector,size,timestamp"),
        "{text}"
    );
    assert!(
        text.contains("--columns 'time=timestamp:s,op=rw_flag,sector,bytes=size,device'"),
        "{text}"
    );
    assert!(e.is_input_error());
}
