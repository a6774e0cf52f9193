//! Wall-clock reading speed on the biggest real sample, the 39-file Hadoop
//! blktrace set (44 MB, 900k records), for `docs/performance.md`.
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
    let mut best = f64::MAX;
    let mut requests = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let t = open(&dir, ReadOptions::default()).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        requests = t.requests.len();
    }
    println!(
        "hadoop set: {bytes} bytes, 900647 records, {requests} requests: best of 5 {:.1} ms = {:.0} MB/s, {:.1} M records/s",
        best * 1e3,
        bytes as f64 / 1e6 / best,
        900_647.0 / 1e6 / best
    );
}
