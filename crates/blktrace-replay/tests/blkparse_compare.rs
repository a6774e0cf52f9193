//! Checks the blktrace reader against `blkparse` on every binary sample in
//! `shared/traces`: per device, the Q, D and C event counts, the request
//! count, and the first and last event times (hence the span).
//!
//! Ignored, saying why, when the samples are absent (set `LULL_TRACES`)
//! or `blkparse` is not installed (Debian package `blktrace`): build.rs
//! probes for both.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use lull_blktrace_replay::blktrace;
use lull_blktrace_replay::input::open_decoded;
use lull_blktrace_replay::{ReadOptions, open};

mod common;
use common::traces;

fn have_blkparse() -> bool {
    let ok = Command::new("blkparse")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !ok {
        lull_testkit::skip("blkparse not installed");
    }
    ok
}

#[derive(Debug, Default, PartialEq)]
struct Expected {
    q: u64,
    d: u64,
    c: u64,
    first_ns: u64,
    last_ns: u64,
}

/// blkparse reads `<base>.blktrace.0`, `.1`, … and stops at the first
/// missing number, and it rejects a file whose records carry another CPU
/// than its name. So the files are linked into a fresh directory under
/// the CPU of their first record, with an empty file for every CPU
/// missing below the highest (the Hadoop set lacks CPU 33; the NVMe
/// sample holds CPU 1 in a file named `.0`).
fn blkparse_dir(files: &[PathBuf]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let mut max = 0;
    for f in files {
        let head = std::fs::read(f).unwrap();
        if head.len() < 48 {
            continue;
        }
        let cpu = u32::from_le_bytes(head[40..44].try_into().unwrap());
        max = max.max(cpu);
        std::os::unix::fs::symlink(
            std::fs::canonicalize(f).unwrap(),
            tmp.path().join(format!("t.blktrace.{cpu}")),
        )
        .unwrap();
    }
    for cpu in 0..=max {
        let p = tmp.path().join(format!("t.blktrace.{cpu}"));
        if !p.exists() {
            std::fs::write(p, b"").unwrap();
        }
    }
    tmp
}

/// Runs blkparse with a one-line-per-event format and tallies Q, D and C
/// per device: on per-CPU `files`, or with `dump` on one file fed on
/// stdin (a `blkparse -d` dump).
fn blkparse(files: &[PathBuf], dump: bool) -> BTreeMap<String, Expected> {
    let mut cmd = Command::new("blkparse");
    cmd.args(["-q", "-f", "@ %a %M,%m %T.%t\n"]);
    let _tmp;
    if dump {
        cmd.args(["-i", "-"]);
        cmd.stdin(std::fs::File::open(&files[0]).unwrap());
    } else {
        let tmp = blkparse_dir(files);
        cmd.arg("-D").arg(tmp.path()).args(["-i", "t"]);
        _tmp = tmp;
    }
    let out = cmd.output().expect("run blkparse");
    assert!(out.status.success(), "blkparse failed: {:?}", out);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut map: BTreeMap<String, Expected> = BTreeMap::new();
    for line in text.lines() {
        let mut t = line.split_whitespace();
        if t.next() != Some("@") {
            continue;
        }
        let (Some(a), Some(dev), Some(time)) = (t.next(), t.next(), t.next()) else {
            continue;
        };
        if !matches!(a, "Q" | "D" | "C") {
            continue;
        }
        let (s, ns) = time.split_once('.').unwrap();
        let ns: u64 = s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap();
        let e = map.entry(dev.to_string()).or_insert(Expected {
            first_ns: u64::MAX,
            ..Expected::default()
        });
        match a {
            "Q" => e.q += 1,
            "D" => e.d += 1,
            _ => e.c += 1,
        }
        e.first_ns = e.first_ns.min(ns);
        e.last_ns = e.last_ns.max(ns);
    }
    map
}

/// Compares the reader with blkparse on `rel`. In pipe mode (`dump`)
/// blkparse shifts the event times of a `blkparse -d` dump, so there only
/// the counts are compared and the span is checked against the README.
fn check(rel: &str, dump: bool) {
    let Some(root) = traces() else {
        return;
    };
    if !have_blkparse() {
        return;
    }
    let path = root.join(rel);
    let files = if path.is_dir() {
        blktrace::cpu_files(&path).unwrap()
    } else {
        vec![path.clone()]
    };
    let expected = blkparse(&files, dump);
    assert!(!expected.is_empty(), "{rel}: blkparse printed no events");
    let inputs = files
        .into_iter()
        .map(|f| {
            let (_, i) = open_decoded(&f).unwrap();
            (f, i)
        })
        .collect();
    let (trace, counts) = blktrace::read_with_counts(inputs, ReadOptions::default()).unwrap();
    let got_devices: Vec<&String> = counts.keys().collect();
    let want_devices: Vec<&String> = expected.keys().collect();
    assert_eq!(got_devices, want_devices, "{rel}: devices");
    let per_device = trace.counts();
    let (mut lo, mut hi) = (u64::MAX, 0);
    for (dev, want) in &expected {
        let got = &counts[dev];
        assert_eq!(
            (got.queued, got.issued, got.completed),
            (want.q, want.d, want.c),
            "{rel} {dev}: Q, D, C counts"
        );
        let (first, last) = (got.first_ns.unwrap(), got.last_ns.unwrap());
        if !dump {
            assert_eq!(
                last - first,
                want.last_ns - want.first_ns,
                "{rel} {dev}: first-to-last event time"
            );
        }
        lo = lo.min(first);
        hi = hi.max(last);
        let id = trace.devices.iter().position(|d| d == dev).unwrap();
        let n = per_device[&lull_core::request::DeviceId(id as u16)] as u64;
        assert_eq!(
            n,
            got.queued + got.issue_only + got.completion_only,
            "{rel} {dev}: one request per Q, plus D and C without one"
        );
        if want.q > 0 {
            assert!(n >= want.q, "{rel} {dev}: every Q is a request");
        } else {
            assert!(n >= want.d, "{rel} {dev}: every D is a request");
        }
    }
    // Rebased: the first arrival is 0 and the span is the first-to-last
    // event time blkparse shows.
    assert_eq!(trace.requests.first().unwrap().arrival.0, 0, "{rel}");
    let last_completion = trace.requests.iter().map(|r| r.completion.0).max();
    assert_eq!(last_completion, Some(hi - lo), "{rel}: span");
    if dump {
        // README: 0.047 s, from the raw I/O times of the dump.
        assert_eq!(hi - lo, 46_744_385, "{rel}: span");
    }
    // `open` gives the same trace, but for a note naming a missing CPU
    // file (the Hadoop set lacks CPU 33's), which only `open` sees.
    let mut opened = open(&path, ReadOptions::default()).unwrap();
    opened
        .notes
        .retain(|n| !n.contains("are otherwise there): unless"));
    assert_eq!(opened, trace, "{rel}");
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
#[cfg_attr(
    all(has_traces, not(has_blkparse)),
    ignore = "needs blkparse (apt-get install blktrace)"
)]
fn sda_two_cpus() {
    check("blktrace/liuzel01_mynotes_sda", false);
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
#[cfg_attr(
    all(has_traces, not(has_blkparse)),
    ignore = "needs blkparse (apt-get install blktrace)"
)]
fn hadoop_forty_cpus_one_missing() {
    check("blktrace/zzunny97_hadoop_eternity10_sdb", false);
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
#[cfg_attr(
    all(has_traces, not(has_blkparse)),
    ignore = "needs blkparse (apt-get install blktrace)"
)]
fn nvme_single_cpu_file() {
    check("blktrace/takeoverjp_nvme0n1", false);
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
#[cfg_attr(
    all(has_traces, not(has_blkparse)),
    ignore = "needs blkparse (apt-get install blktrace)"
)]
fn keks_d_and_c_only() {
    check("blktrace/isotopp_keks_sdd4", false);
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
#[cfg_attr(
    all(has_traces, not(has_blkparse)),
    ignore = "needs blkparse (apt-get install blktrace)"
)]
fn blkparse_d_dump() {
    check(
        "blktrace/romeus_blkparse_dump_loop0/trace_x_1_y_1.bin",
        true,
    );
}
