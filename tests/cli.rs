//! The `lull` binary on real files: output keys, exit codes and messages.

use std::path::Path;
use std::process::{Command, Output};

fn lull(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lull"))
        .args(args)
        .output()
        .expect("run lull")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const HEADER: &str = "arrival_ns,completion_ns,op,sector,bytes,device\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const INTERNAL_KEYS: [&str; 7] = [
    "actual_s",
    "predicted_s",
    "overflow_s",
    "violations",
    "violation_rate",
    "efficiency",
    "incompetence",
];

#[test]
fn replay_prints_the_internal_measures_as_json() {
    let dir = tempfile::tempdir().unwrap();
    // Idle 1..4 s and 5..25 s; timer(1s) + fixed(10s), predicted-end:
    // declared [2,16) → 14 s, 1 s of it busy, one violation.
    let csv = write(
        dir.path(),
        "t.csv",
        &format!(
            "{HEADER}0,1000000000,R,0,4096,8,0\n4000000000,5000000000,W,8,4096,8,0\n25000000000,26000000000,R,16,4096,8,0\n"
        ),
    );
    let out = lull(&[
        "replay",
        &csv,
        "--net",
        "timer(1s) + fixed(10s)",
        "--task",
        "none",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let obj = v.as_object().unwrap();
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(keys, INTERNAL_KEYS);
    assert!(obj.values().all(|x| x.is_number()));
    assert_eq!(obj["actual_s"], 23.0);
    assert_eq!(obj["predicted_s"], 14.0);
    assert_eq!(obj["overflow_s"], 1.0);
    assert_eq!(obj["violations"], 1.0);
}

#[test]
fn replay_without_a_trace_uses_the_built_in_workload() {
    let out = lull(&[
        "replay",
        "--net",
        "oracle",
        "--duration",
        "1h",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["efficiency"], 1.0);
    assert!(v["actual_s"].as_f64().unwrap() > 600.0);
}

#[test]
fn bad_csv_exits_2_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("empty.csv", String::new(), "empty"),
        ("missing.csv", format!("{HEADER}0,10,R,0\n"), ":2:"),
        (
            "backwards.csv",
            format!("{HEADER}0,10,R,0,4096,d\n50,20,R,0,4096,d\n"),
            ":3:",
        ),
        (
            "unsorted.csv",
            format!("{HEADER}50,60,R,0,4096,d\n10,20,R,0,4096,d\n"),
            ":3:",
        ),
        ("nan.csv", format!("{HEADER}0,10,R,zero,4096,d\n"), ":2:"),
    ];
    for (name, text, needle) in cases {
        let path = write(dir.path(), name, &text);
        let out = lull(&["replay", &path, "--format", "json"]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(name) && err.contains(needle), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

#[test]
fn bad_network_specs_exit_2_with_the_position() {
    let cases = [
        ("timer(1s", "column 9"),
        ("timer(t=-1s)", "`t`"),
        ("nosuch(1s)", "unknown component"),
        ("fixed(1s)", "duration predictor"),
        ("timer(1s) + timer(2s)", "not a duration-predictor"),
    ];
    for (spec, needle) in cases {
        let out = lull(&["replay", "--net", spec, "--duration", "10m"]);
        assert_eq!(out.status.code(), Some(2), "{spec}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{spec}: {}", stderr(&out));
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        lull(&["replay", "--policy", "sometimes", "--duration", "1m"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(lull(&["replay", "--no-such-flag"]).status.code(), Some(2));
    assert_eq!(lull(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        lull(&["replay", "/no/such/trace.csv"]).status.code(),
        Some(2)
    );
}

#[test]
fn components_lists_every_kind_as_json() {
    let out = lull(&["components", "--format", "json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = v.as_array().unwrap();
    for name in ["timer", "fixed", "no-duration", "oracle"] {
        let c = items
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert!(
            c["role"].is_string() && c["description"].is_string() && c["parameters"].is_array()
        );
    }
    let timer = items.iter().find(|c| c["name"] == "timer").unwrap();
    assert_eq!(timer["parameters"][0]["name"], "t");
    assert_eq!(timer["parameters"][0]["unit"], "s");
}

#[test]
fn replay_accepts_a_toml_network() {
    let dir = tempfile::tempdir().unwrap();
    let toml = write(
        dir.path(),
        "net.toml",
        "[[node]]\nname = \"only\"\nspec = \"oracle\"\n",
    );
    let out = lull(&[
        "replay",
        "--net",
        &format!("@{toml}"),
        "--duration",
        "10m",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["efficiency"], 1.0);
}

/// Traces with absolute timestamps say when they were recorded.
#[test]
fn trace_info_says_when_an_msr_trace_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write(
        dir.path(),
        "hm_0.csv",
        "128166385295514663,hm,0,Write,9056014336,2048,2833\n\
         128166385395514663,hm,0,Read,9056014336,4096,2000\n",
    );
    let o = lull(&["trace", "info", &csv]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("recorded    from 2007-02-22T17:22:09Z"),
        "{text}"
    );
    let o = lull(&["trace", "info", &csv, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let start = v["start_unix_s"].as_f64().unwrap();
    assert!((start - 1_172_164_929.551).abs() < 1e-3, "{start}");
    // A normalized CSV has no wall clock.
    let csv = write(dir.path(), "n.csv", &format!("{HEADER}0,1000,R,0,512,a\n"));
    let o = lull(&["trace", "info", &csv, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("start_unix_s").is_none());
}
