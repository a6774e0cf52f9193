//! `lull rank` with a trace the modelled device cannot serve (lab-25 B6):
//! the trace is left out of the ranking, and nothing counts it: not the
//! first line, not the report's "on N traces", and the Traces table marks
//! it.

mod common;

use common::{lull, stderr, stdout};

/// A normalized CSV of `n` requests `gap_ms` apart, `bytes` each.
fn trace(path: &std::path::Path, n: u64, gap_ms: u64, bytes: u64) {
    let mut csv = String::from("arrival_ns,completion_ns,op,sector,bytes,device\n");
    for i in 0..n {
        let t = i * gap_ms * 1_000_000;
        // Sectors spread over the disk, so every request seeks.
        let sector = (i * 7_919_993) % 900_000_000;
        csv += &format!("{t},{},R,{sector},{bytes},\"8,0\"\n", t + 1000);
    }
    std::fs::write(path, csv).unwrap();
}

#[test]
fn a_saturated_trace_is_left_out_and_not_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let (light, heavy) = (tmp.path().join("light.csv"), tmp.path().join("heavy.csv"));
    trace(&light, 200, 500, 4096);
    // 1 MiB every 2 ms: far more than a disk serves.
    trace(&heavy, 6000, 2, 1 << 20);
    let grid = tmp.path().join("grid.toml");
    std::fs::write(
        &grid,
        "specs = [\"timer(t=B) + fixed(d=1s)\", \"timer(t=2B) + fixed(d=1s)\"]\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = lull(&[
        "rank",
        light.to_str().unwrap(),
        heavy.to_str().unwrap(),
        "--task",
        "cleaning",
        "--grid",
        grid.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("it is not ranked"), "{}", stderr(&o));
    let text = stdout(&o);
    // The answer counts the ranked trace only, and so does the header
    // that follows it.
    let first = text.lines().next().unwrap();
    assert!(
        first.contains(" for cleaning on 1 trace (1 left out: saturated)"),
        "{first}"
    );
    let header = text.lines().find(|l| l.starts_with("task ")).unwrap();
    assert!(
        header.contains("× 1 trace (1 left out: saturated), "),
        "{header}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("on 1 trace (1 left out: saturated) ("),
        "{report}"
    );
    assert!(
        report.contains("For `cleaning` on 1 trace (1 left out: saturated), "),
        "{report}"
    );
    assert!(
        report.contains("| heavy (left out: saturated) |"),
        "{report}"
    );
    assert!(!report.contains("| light (left out"), "{report}");
    // One trace ranked: no spread across traces to speak of.
    assert!(!report.contains("standard deviation"), "{report}");
}
