//! `lull replay` under model timing refuses a trace the modelled disk
//! cannot serve (exit 2, with the utilization figure and a hint) unless
//! `--allow-saturated` (issue 17).

use std::process::{Command, Output};

fn lull(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lull"))
        .args(args)
        .output()
        .expect("run lull")
}

/// Three minutes of 64 KiB requests every 20 ms, scattered over the
/// hp97560: each takes ≈ 48 ms there (2.2 ms overhead, ≈ 12 ms seek,
/// 7.5 ms rotation, 26.6 ms transfer), so the disk is needed ≈ 2.4 times
/// over; on wd-red-plus one takes ≈ 11 ms, about half the time there is.
fn saturating_trace() -> String {
    let mut text = String::from("arrival_ns,completion_ns,op,sector,bytes,device\n");
    for i in 0..9000u64 {
        let t = i * 20_000_000;
        let op = if i % 3 == 0 { 'W' } else { 'R' };
        let sector = (i * 7919 * 128) % 2_600_000;
        text.push_str(&format!("{t},{t},{op},{sector},65536,8,0\n"));
    }
    text
}

fn utilization(stderr: &str) -> f64 {
    let at = stderr.find("utilization ").expect("a utilization figure") + "utilization ".len();
    stderr[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .expect("a number")
}

#[test]
fn a_saturated_trace_exits_2_with_the_figures_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.csv");
    std::fs::write(&path, saturating_trace()).unwrap();
    let p = path.to_str().unwrap();
    let net = "timer(1s) + fixed(10s)";
    for task in ["writeback", "writeback-paper", "cleaning"] {
        let o = lull(&[
            "replay", p, "--task", task, "--device", "hp97560", "--net", net,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{task}: {err}");
        assert!(
            err.contains("hp97560") && err.contains("cannot serve"),
            "{err}"
        );
        let u = utilization(&err);
        assert!((2.0..3.0).contains(&u), "{task}: utilization {u}: {err}");
        for hint in ["--timing trace", "--allow-saturated", "faster preset"] {
            assert!(err.contains(hint), "no `{hint}` in {err}");
        }
        // Allowed: the old behaviour, with a warning.
        let o = lull(&[
            "replay",
            p,
            "--task",
            task,
            "--device",
            "hp97560",
            "--net",
            net,
            "--format",
            "json",
            "--allow-saturated",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains("warning"));
        // A faster disk serves the same trace.
        let o = lull(&[
            "replay",
            p,
            "--task",
            task,
            "--device",
            "wd-red-plus",
            "--net",
            net,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // Trace timing replays the recorded disk: no model, no check.
    let o = lull(&["replay", p, "--task", "spindown", "--net", net]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
