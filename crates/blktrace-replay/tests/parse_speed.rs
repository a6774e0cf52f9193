//! Wall-clock reading speed on the biggest real sample, the 39-file Hadoop
//! blktrace set (44 MB, about 900k records, counted each run), for
//! `docs/performance.md`.
//!
//! `cargo test --release -p lull-blktrace-replay --test parse_speed -- --ignored --nocapture`

use std::time::Instant;

use lull_blktrace_replay::{ReadOptions, open};

mod common;

#[test]
#[ignore = "a timing, not a check; run by hand in release mode"]
fn hadoop_set() {
    let Some(traces) = common::traces() else {
        return;
    };
    let dir = traces.join("blktrace/zzunny97_hadoop_eternity10_sdb");
    if !dir.is_dir() {
        lull_testkit::skip(&format!("{} not found", dir.display()));
        return;
    }
    let bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let records = records_in(&dir);
    let mut best = f64::MAX;
    let mut requests = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let t = open(&dir, ReadOptions::default()).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        requests = t.requests.len();
    }
    println!(
        "hadoop set: {bytes} bytes, {records} records, {requests} requests: best of 5 {:.1} ms = {:.0} MB/s, {:.1} M records/s",
        best * 1e3,
        bytes as f64 / 1e6 / best,
        records as f64 / 1e6 / best
    );
}

/// The blktrace records in the per-CPU files of `dir`, counted by walking
/// their headers (48 bytes, the payload length a little-endian `u16` at
/// offset 46), so the rate printed is of the files at hand rather than of
/// a count written down once.
fn records_in(dir: &std::path::Path) -> u64 {
    let mut records = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let mut at = 0;
        while at + 48 <= data.len() {
            let pdu = u16::from_le_bytes([data[at + 46], data[at + 47]]) as usize;
            at += 48 + pdu;
            records += 1;
        }
        assert_eq!(
            at,
            data.len(),
            "{}: a record runs past the end of the file",
            path.display()
        );
    }
    records
}
