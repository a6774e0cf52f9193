//! `lull trace info` on the biggest real sample (issue 25): reading the
//! Hadoop blktrace set (39 per-CPU files, 44.4 MB, 900,647 records) with
//! `open` on its directory, the idle-period analysis of what was read
//! (`TraceInfo::of`), and the whole `lull trace info` process (start, read
//! into fresh memory, analysis, report, exit), each measured by criterion
//! and then **checked against a throughput floor**: the bench exits
//! non-zero when criterion's median is slower than the floor. The floors
//! and why they are where they are: `docs/performance.md`, "Guarding the
//! reader's speed".
//!
//! The times are **CPU time**, not wall time: of this process for `read`
//! and `trace-info`, of the `lull` child for `process` (user and system,
//! so page faults and the kernel's copy from the page cache count). On
//! this project's shared 2-core VM the wall time of a read went up five
//! times while other builds ran and its CPU time by less than a sixth, so
//! a floor on CPU time can be tight and still not fail for someone else's
//! load. (Wall time against blkparse: `scripts/trace-info-vs-blkparse.py`.)
//!
//! `cargo bench --bench trace_info`
//!
//! The set is found at `$LULL_TRACES`, else `../shared/traces` beside the
//! workspace; without it the bench says so and measures nothing. A run
//! that measures only some benchmarks (a filter, `--test`, `--list`)
//! checks only those it measured.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use criterion::{Criterion, SamplingMode, Throughput};
use lull_blktrace_replay::{ReadOptions, TraceInfo, open};
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;
use nix::time::{ClockId, clock_gettime};

/// The reader's floor, MB/s (10^6 bytes of the set's files a second).
const READ_FLOOR_MB_S: f64 = 400.0;

/// The analysis' floor, requests a second (millions).
const INFO_FLOOR_M_REQUESTS_S: f64 = 40.0;

/// The whole `lull trace info` process' floor, MB/s of the set's files.
const PROCESS_FLOOR_MB_S: f64 = 400.0;

/// Criterion's group for both benchmarks.
const GROUP: &str = "hadoop-blktrace";

/// CPU time used by this process so far.
fn process_cpu() -> Duration {
    Duration::from(clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).expect("a CPU clock"))
}

/// CPU time used by this process' finished children so far.
fn children_cpu() -> Duration {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let of = |t: TimeVal| Duration::from_micros((t.tv_sec() * 1_000_000 + t.tv_usec()) as u64);
    of(usage.user_time()) + of(usage.system_time())
}

/// The CPU time `f` takes.
fn cpu_time_of(f: impl FnOnce()) -> Duration {
    let start = process_cpu();
    f();
    process_cpu() - start
}

/// The Hadoop set's directory, or `None` after saying why nothing runs.
fn hadoop_dir() -> Option<PathBuf> {
    let traces = std::env::var_os("LULL_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces"));
    let dir = traces.join("blktrace/zzunny97_hadoop_eternity10_sdb");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "skipping the trace_info bench: {} not found (set LULL_TRACES to the trace samples folder)",
            dir.display()
        );
        None
    }
}

/// Where criterion writes its estimates: where it would by default
/// (`$CRITERION_HOME`, else `criterion` in the cargo target directory),
/// set explicitly so the check below reads the same place.
fn criterion_home() -> PathBuf {
    std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("../criterion"))
}

/// Criterion's median (CPU) time per iteration of `bench`, seconds, when
/// this run measured it (its estimates written after `since`).
fn median_s(home: &Path, bench: &str, since: SystemTime) -> Option<f64> {
    let file = home.join(GROUP).join(bench).join("new/estimates.json");
    let fresh = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= since);
    if !fresh {
        return None;
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).ok()?).ok()?;
    Some(json["median"]["point_estimate"].as_f64()? / 1e9)
}

fn main() {
    let Some(dir) = hadoop_dir() else {
        return;
    };
    let bytes: u64 = std::fs::read_dir(&dir)
        .expect("the Hadoop set's directory lists")
        .map(|e| {
            e.expect("a directory entry")
                .metadata()
                .expect("its size")
                .len()
        })
        .sum();
    let trace = open(&dir, ReadOptions::default()).expect("the Hadoop set reads");
    let requests = trace.requests.len() as u64;
    assert!(requests > 100_000, "{requests} requests read");

    let home = criterion_home();
    let started = SystemTime::now();
    let mut c = Criterion::default()
        .configure_from_args()
        .output_directory(&home);
    {
        let mut g = c.benchmark_group(GROUP);
        g.sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
        g.throughput(Throughput::BytesDecimal(bytes));
        g.bench_function("read", |b| {
            b.iter_custom(|iters| {
                cpu_time_of(|| {
                    for _ in 0..iters {
                        black_box(open(black_box(&dir), ReadOptions::default()).unwrap());
                    }
                })
            })
        });
        g.throughput(Throughput::Elements(requests));
        g.bench_function("trace-info", |b| {
            b.iter_custom(|iters| {
                cpu_time_of(|| {
                    for _ in 0..iters {
                        black_box(TraceInfo::of(black_box(&trace)));
                    }
                })
            })
        });
        g.throughput(Throughput::BytesDecimal(bytes));
        g.bench_function("process", |b| {
            b.iter_custom(|iters| {
                let start = children_cpu();
                for _ in 0..iters {
                    let status = Command::new(env!("CARGO_BIN_EXE_lull"))
                        .args(["trace", "info"])
                        .arg(&dir)
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status()
                        .expect("lull starts");
                    assert!(status.success(), "lull trace info: {status}");
                }
                children_cpu() - start
            })
        });
        g.finish();
    }
    c.final_summary();

    // The check: criterion's medians against the floors.
    let checks = [
        (
            "read",
            "MB/s",
            bytes as f64 / 1e6,
            READ_FLOOR_MB_S,
            "READ_FLOOR_MB_S",
        ),
        (
            "trace-info",
            "M requests/s",
            requests as f64 / 1e6,
            INFO_FLOOR_M_REQUESTS_S,
            "INFO_FLOOR_M_REQUESTS_S",
        ),
        (
            "process",
            "MB/s",
            bytes as f64 / 1e6,
            PROCESS_FLOOR_MB_S,
            "PROCESS_FLOOR_MB_S",
        ),
    ];
    let mut failed = false;
    for (bench, unit, work, floor, name) in checks {
        let Some(median) = median_s(&home, bench, started) else {
            println!("floor check {GROUP}/{bench}: not measured in this run, not checked");
            continue;
        };
        let rate = work / median;
        let verdict = if rate >= floor { "ok" } else { "FAILED" };
        println!(
            "floor check {GROUP}/{bench}: median {:.2} ms of CPU = {rate:.1} {unit}, floor {floor} {unit} ({name}): {verdict}",
            median * 1e3
        );
        failed |= rate < floor;
    }
    if failed {
        eprintln!(
            "trace_info bench: below its throughput floor; see docs/performance.md, \"Guarding the reader's speed\""
        );
        std::process::exit(1);
    }
}
