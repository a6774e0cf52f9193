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

/// The `--device X` options a hint suggests.
fn suggested(stderr: &str) -> Vec<String> {
    let hint = &stderr[stderr.find("hint:").expect("a hint")..];
    hint.split("--device ")
        .skip(1)
        .map(|rest| {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
                .unwrap()
                .to_string()
        })
        .filter(|name| !name.is_empty() && name != "PRESET")
        .collect()
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
        for hint in [
            "--timing trace",
            "--allow-saturated",
            "passes the same check",
        ] {
            assert!(err.contains(hint), "no `{hint}` in {err}");
        }
        let presets = suggested(&err);
        assert!(presets.iter().any(|p| p == "wd-red-plus"), "{err}");
        assert!(!presets.iter().any(|p| p == "hp97560"), "{err}");
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

/// The hint suggests only presets that serve the trace, never the one that
/// could not (issue 25: it named `wd-red-plus` when that was the device at
/// fault), and says so when no preset can.
#[test]
fn the_hint_suggests_only_presets_that_serve_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    // 64 KiB scattered every `gap_ms`: 4 ms saturates wd-red-plus (≈ 11 ms
    // a request); 1 ms saturates every preset.
    for gap_ms in [4u64, 1] {
        let mut text = String::from("arrival_ns,completion_ns,op,sector,bytes,device\n");
        for i in 0..20_000u64 {
            let t = i * gap_ms * 1_000_000;
            let sector = (i * 7919 * 128) % 2_600_000;
            text.push_str(&format!("{t},{t},R,{sector},65536,8,0\n"));
        }
        let path = dir.path().join(format!("busy-{gap_ms}.csv"));
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        let net = "timer(1s) + fixed(10s)";
        let o = lull(&[
            "replay",
            p,
            "--task",
            "writeback",
            "--device",
            "wd-red-plus",
            "--net",
            net,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        let presets = suggested(&err);
        assert!(!presets.iter().any(|p| p == "wd-red-plus"), "{err}");
        if presets.is_empty() {
            assert!(err.contains("no built-in preset serves it"), "{err}");
        }
        for preset in &presets {
            let o = lull(&[
                "replay",
                p,
                "--task",
                "writeback",
                "--device",
                preset,
                "--net",
                net,
            ]);
            assert!(
                o.status.success(),
                "suggested {preset} cannot serve it: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}
