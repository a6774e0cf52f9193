//! The `lull` binary on traces people record today: a phone's CSV read
//! with `--columns` end to end through `lull replay` and `lull trace
//! convert` (CSV and Parquet), eBPF tools' output, and the errors (exit
//! code 2) that name the file and suggest a column map.

use std::path::{Path, PathBuf};

mod common;
use common::{lull, stderr, stdout};

const PHONE_MAP: &str = "time=timestamp:s,op=rw_flag,sector,bytes=size*512,device";

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/blktrace-replay/tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn replay(trace: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "replay",
        trace,
        "--net",
        "timer(1s)+fixed(10s)",
        "--task",
        "spindown",
        "--format",
        "json",
    ];
    args.extend(extra);
    lull(&args)
}

/// The phone trace (seconds since boot, sizes in sectors) replays with
/// its column map: its two long gaps (29.5 s and 88.7 s, past the 1 s
/// timer) are two spin-downs; with completion = arrival, the idle time is
/// the whole span, 100 s to 220.002 s.
/// The same trace converted to the normalized CSV replays the same.
#[test]
fn a_phone_csv_replays_with_a_column_map() {
    let phone = fixture("phone.csv");
    let o = replay(&phone, &["--columns", PHONE_MAP]);
    let v = json(&o);
    assert_eq!(v["spinups"], 2.0, "{v}");
    let actual = v["actual_s"].as_f64().unwrap();
    assert!((actual - 120.002).abs() < 1e-6, "{actual}");
    assert!(
        stderr(&o).contains("completion = arrival"),
        "{}",
        stderr(&o)
    );
    let dir = tempfile::tempdir().unwrap();
    let csv: PathBuf = dir.path().join("phone-normalized.csv");
    let c = lull(&[
        "trace",
        "convert",
        &phone,
        csv.to_str().unwrap(),
        "--columns",
        PHONE_MAP,
    ]);
    assert!(c.status.success(), "{}", stderr(&c));
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], lull_blktrace_replay::normalized::HEADER);
    assert_eq!(rows.len(), 13);
    // Row 2: 4.5 ms after the first, a write of 8 sectors at 1050632.
    assert_eq!(rows[2], "4500000,4500000,W,1050632,4096,mmcblk0");
    let again = json(&replay(csv.to_str().unwrap(), &[]));
    assert_eq!(again, v);
}

#[test]
fn convert_writes_parquet_and_keeps_one_disk() {
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("phone.parquet");
    let o = lull(&[
        "trace",
        "convert",
        &fixture("phone.csv"),
        "-o",
        pq.to_str().unwrap(),
        "--columns",
        PHONE_MAP,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let df = lull_rank::table::read_parquet(&pq).unwrap();
    assert_eq!(df.height(), 12);
    let arrivals = df.column("arrival_ns").unwrap().u64().unwrap();
    assert_eq!(arrivals.get(11), Some(120_002_000_000));
    let bytes = df.column("bytes").unwrap().u32().unwrap();
    assert_eq!(bytes.get(8), Some(256 * 512));
    // bcc biosnoop, one of its three disks.
    let csv = dir.path().join("xvdb.csv");
    let o = lull(&[
        "trace",
        "convert",
        &fixture("bcc_biosnoop.txt"),
        csv.to_str().unwrap(),
        "--disk",
        "xvdb",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.lines().skip(1).all(|l| l.ends_with(",xvdb")), "{text}");
    let o = lull(&[
        "trace",
        "convert",
        &fixture("bcc_biosnoop.txt"),
        csv.to_str().unwrap(),
        "--disk",
        "sdz",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no device `sdz`"), "{}", stderr(&o));
}

#[test]
fn input_errors_say_what_to_do() {
    let phone = fixture("phone.csv");
    // No map: the error shows the header and a map that fits it.
    let o = replay(&phone, &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&phone) && e.contains("proces,device,rw_flag"),
        "{e}"
    );
    assert!(
        e.contains("--columns 'time=timestamp:s,op=rw_flag,sector,bytes=size,device'"),
        "{e}"
    );
    // A map naming a column the file lacks, or a bad unit.
    let o = replay(&phone, &["--columns", "time=stamp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no column `stamp`"), "{}", stderr(&o));
    let o = replay(&phone, &["--columns", "time=timestamp:h"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown time unit `h`"),
        "{}",
        stderr(&o)
    );
    // A bad value: file, line and column.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "timestamp,rw_flag\n1.0,1\n2.0,7\n").unwrap();
    let o = replay(
        bad.to_str().unwrap(),
        &["--columns", "time=timestamp,op=rw_flag"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.csv:3: `rw_flag` (column 2)"),
        "{}",
        stderr(&o)
    );
    let o = lull(&["replay", "--columns", PHONE_MAP]);
    assert_eq!(o.status.code(), Some(2));
}

/// The eBPF tools' output needs no flag: `lull replay` reads it.
#[test]
fn biosnoop_output_replays() {
    let v = json(&replay(&fixture("bcc_biosnoop_q.txt"), &[]));
    // Arrivals are TIME - LAT - QUE: the second request arrives 0.191 ms
    // after the first completes (0.771 - 0.58 against 0 - 0.56 + 0.56),
    // and the third at 5.332998 - 0.62 ms, 5.331607 s after the second
    // completes: the idle time, and one spin-down after the 1 s timer.
    assert_eq!(v["spinups"], 1.0, "{v}");
    let actual = v["actual_s"].as_f64().unwrap();
    assert!((actual - (0.000_191 + 5.331_607)).abs() < 1e-9, "{actual}");
    let predicted = v["predicted_s"].as_f64().unwrap();
    assert!((predicted - 4.331_607).abs() < 1e-9, "{predicted}");
}
