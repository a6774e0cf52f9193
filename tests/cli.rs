//! The `lull` binary on real files: output keys, exit codes and messages.

use std::path::Path;
use std::process::Command;

mod common;
use common::{lull, stderr};

const HEADER: &str = "arrival_ns,completion_ns,op,sector,bytes,device\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// `t.csv` in `dir`: a read, a write and a read of 1 s each, arriving at
/// the seconds `at`.
fn three_requests(dir: &Path, at: [u64; 3]) -> String {
    let mut text = HEADER.to_string();
    for (i, (s, op)) in at.iter().zip(["R", "W", "R"]).enumerate() {
        let ns = s * 1_000_000_000;
        text.push_str(&format!(
            "{ns},{},{op},{},4096,8,0\n",
            ns + 1_000_000_000,
            8 * i
        ));
    }
    write(dir, "t.csv", &text)
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
    let csv = three_requests(dir.path(), [0, 4, 25]);
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

/// A rate relative to the trace's mean request rate, as `lull rank` writes
/// its rows (`rate=R/4`), replays: R is resolved against the trace as rank
/// resolves it (a trial could not paste a recommendation into replay:
/// "R/4 is not a number").
#[test]
fn replay_resolves_rates_relative_to_the_trace_mean_rate() {
    let dir = tempfile::tempdir().unwrap();
    // Three requests over 26 s: R = 3/26 IO/s, written to six digits.
    let csv = three_requests(dir.path(), [0, 4, 25]);
    let run = |net: &str| {
        let out = lull(&[
            "replay", &csv, "--net", net, "--task", "spindown", "--format", "json",
        ]);
        assert!(out.status.success(), "{net}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, stderr(&out))
    };
    let (relative, err) = run("event-window(n=2, rate=2R) + fixed(d=B)");
    assert!(
        err.contains("R is this trace's mean request rate, 0.115385 IO/s: replaying `event-window(n=2, rate=0.230769) + fixed(d=B)`"),
        "{err}"
    );
    let (absolute, _) = run("event-window(n=2, rate=0.230769) + fixed(d=B)");
    assert_eq!(relative, absolute);
    // A malformed one is still an input error naming the value.
    let out = lull(&["replay", &csv, "--net", "event-window(n=2, rate=zR)"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("zR"), "{}", stderr(&out));
}

/// A trace of headers alone says it holds no request (it printed
/// "devices 0 ()" and lines of zeros), and one request's idle picture has
/// no negative zero ("-0.000 s of 0.000 s (-0.0%)").
#[test]
fn trace_info_on_an_empty_or_one_request_trace() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.csv", HEADER);
    let out = lull(&["trace", "info", &empty]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.ends_with("  requests    none: the trace holds no request\n"),
        "{text}"
    );
    let one = write(
        dir.path(),
        "one.csv",
        &format!("{HEADER}0,1000,R,0,4096,d\n"),
    );
    let out = lull(&["trace", "info", &one]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("  idle        device d: 0 periods, 0.000 s of 0.000 s (0.0%)"),
        "{text}"
    );
    assert!(!text.contains("-0."), "{text}");
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
    // A run directory named wrong is an input error too, named.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o").to_string_lossy().into_owned();
    for args in [
        vec!["plot", "/no/such/run"],
        vec!["rank", "merge", "/no/such/run", "--out", &out],
    ] {
        let o = lull(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("/no/such/run: no such directory"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // An output directory that is a file: named before any work, exit 2
    // (it was "File exists", exit 1, after the whole run).
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let file = file.to_string_lossy().into_owned();
    for (args, flag) in [
        (vec!["rank", "--task", "spindown", "--out", &file], "--out"),
        (vec!["rank", "merge", &out, "--out", &file], "--out"),
        (
            vec!["plan", "--job", "probe:1m/day:step=60s", "--plot", &file],
            "--plot",
        ),
    ] {
        let o = lull(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("{flag} {file}: exists and is not a directory")),
            "{args:?}: {}",
            stderr(&o)
        );
    }
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

/// `lull trace info` names each file and its devices in JSON too (one
/// object per input, so several files need their names), and counts the
/// bytes discarded beside those read and written.
#[test]
fn trace_info_names_the_file_and_counts_discarded_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "a.csv",
        &format!("{HEADER}0,1000,R,0,512,sda\n2000,3000,W,8,4096,sda\n4000,5000,D,16,65536,sda\n"),
    );
    let b = write(
        dir.path(),
        "b.csv",
        &format!("{HEADER}0,1000,R,0,512,sdb\n"),
    );
    let o = lull(&["trace", "info", &a, &b, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], a.as_str());
    assert_eq!(lines[1]["file"], b.as_str());
    assert_eq!(lines[0]["device_names"], serde_json::json!(["sda"]));
    assert_eq!(lines[1]["idle_device_name"], "sdb");
    assert_eq!(lines[0]["discard_bytes"], 65536);
    let sum = ["read_bytes", "write_bytes", "discard_bytes"]
        .iter()
        .map(|k| lines[0][k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(lines[0]["bytes"].as_u64(), Some(sum));
    let o = lull(&["trace", "info", &a]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("bytes       70144 (512 read, 4096 written, 65536 discarded)"),
        "{text}"
    );
}

/// `lull replay`'s header names the network asked for by name (`auto`,
/// the default) beside what it stands for, and the drive beside its B.
#[test]
fn replay_names_the_network_asked_for_and_the_drive() {
    let o = lull(&["replay", "--task", "spindown", "--duration", "10m"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // The verdict comes first (issue 78), then the header.
    assert!(text.starts_with("verdict  auto saves "), "{text}");
    assert!(text.contains("\nnetwork  auto (long-idle)\n"), "{text}");
    assert!(
        text.contains("device   paper-2.5in, break-even B = 3.000 s"),
        "{text}"
    );
    let o = lull(&[
        "replay",
        "--task",
        "spindown",
        "--duration",
        "10m",
        "--device",
        "wd-red-plus",
        "--net",
        "timer( 1s )+fixed(10s)",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("verdict  timer(1s) + fixed(10s) saves "),
        "{text}"
    );
    assert!(
        text.contains("\nnetwork  timer(1s) + fixed(10s)\n"),
        "{text}"
    );
    assert!(
        text.contains("device   wd-red-plus, break-even B = 72.4"),
        "{text}"
    );
    // A task on the device model names the service model that timed it:
    // the lab's default, named or not, borrows wd-red-plus's.
    for (device, want) in [
        (
            None,
            "device   paper-2.5in (service times of wd-red-plus), break-even B = 0.018 s",
        ),
        (
            Some("paper-2.5in"),
            "device   paper-2.5in (service times of wd-red-plus), break-even B = 0.018 s",
        ),
        (
            Some("wd-red-plus"),
            "device   wd-red-plus, break-even B = 0.018 s",
        ),
    ] {
        let mut args = vec!["replay", "--workload", "workstation", "--duration", "10m"];
        args.extend(["--task", "writeback"]);
        if let Some(d) = device {
            args.extend(["--device", d]);
        }
        let o = lull(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(want), "{device:?}: {text}");
    }
}

/// Issue 16, item 9: each cause of an error is printed once.
#[test]
fn an_error_chain_is_printed_once() {
    let out = lull(&["replay", "/no/such/trace.csv"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
    assert!(err.contains("/no/such/trace.csv"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = lull(&[
        "replay",
        "--net",
        "nosuch(1s) + fixed(10s)",
        "--duration",
        "1m",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.matches("unknown component").count(), 1, "{err}");
    assert_eq!(err.matches("known start-detectors").count(), 1, "{err}");
}

/// Unknown names of every kind suggest the closest known one.
#[test]
fn unknown_names_suggest_the_closest_known_one() {
    let cases: [(&[&str], &str); 7] = [
        (&["replay", "--net", "timerr(1s) + fixed(10s)"], "`timer`"),
        (&["replay", "--net", "timer(tt=1s) + fixed(10s)"], "`t`"),
        (&["replay", "--task", "spindwn"], "`spindown`"),
        (
            &["replay", "--task", "spindown", "--device", "wd-red"],
            "`wd-red-plus`",
        ),
        (
            &["replay", "--task", "writeback", "--device", "hp9756"],
            "`hp97560`",
        ),
        (&["replay", "--workload", "ofice"], "`office`"),
        (&["replay", "--policy", "earlierof"], "`earlier-of`"),
    ];
    for (args, name) in cases {
        let mut args = args.to_vec();
        args.extend(["--duration", "1m"]);
        let out = lull(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("did you mean {name}?")),
            "{args:?}: {err}"
        );
    }
    let out = lull(&[
        "synth",
        "--workload",
        "home-nass",
        "--duration",
        "1m",
        "-o",
        "/dev/null",
    ]);
    assert!(
        stderr(&out).contains("did you mean `home-nas`?"),
        "{}",
        stderr(&out)
    );
    // Nothing close: no suggestion, just the list.
    let out = lull(&["replay", "--task", "defragment", "--duration", "1m"]);
    let err = stderr(&out);
    assert!(
        !err.contains("did you mean") && err.contains("known: none"),
        "{err}"
    );
}

/// Text output prints counts as integers, other measures with decimals.
#[test]
fn replay_text_prints_counts_as_integers() {
    let dir = tempfile::tempdir().unwrap();
    let csv = three_requests(dir.path(), [0, 40, 90]);
    let out = lull(&[
        "replay",
        &csv,
        "--task",
        "spindown",
        "--net",
        "timer(1s) + fixed(10s)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |key: &str| -> String {
        text.lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some(key)).then(|| w.next().unwrap().to_string())
            })
            .unwrap_or_else(|| panic!("{key} missing: {text}"))
    };
    for key in ["spinups", "delayed_ops", "violations"] {
        let v = value(key);
        assert!(v.parse::<u64>().is_ok(), "{key} = {v}");
    }
    assert_eq!(value("spinups"), "2");
    for key in ["energy_j", "actual_s", "efficiency"] {
        assert!(value(key).contains('.'), "{key} = {}", value(key));
    }
}

/// A closed stdout (`lull components | head -1`) is not an error.
#[test]
fn a_closed_stdout_ends_quietly_with_status_0() {
    use std::process::Stdio;
    for args in [&["components"][..], &["components", "--format", "json"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lull"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before lull writes: every write fails.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

/// `lull components` lists tasks, modifiers, presets with their break-even,
/// named networks and workloads, besides the components.
#[test]
fn components_lists_tasks_modifiers_presets_networks_and_workloads() {
    let out = lull(&["components"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "named networks",
        "idle tasks",
        "  spindown ",
        "  cleaning ",
        "+manners",
        "device presets",
        "B = 3.0 s",
        "B = 72.4 s",
        "built-in workloads",
        "  db-checkpoint ",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let wd = text
        .lines()
        .find(|l| l.contains("wd-red-plus") && l.contains("power"))
        .unwrap();
    assert!(wd.contains("B = 72.4 s"), "{wd}");
    let out = lull(&["components", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = v.as_array().unwrap();
    let find = |name: &str, role: &str| {
        items
            .iter()
            .find(|c| c["name"] == name && c["role"] == role)
            .unwrap_or_else(|| panic!("{name} ({role}) missing"))
    };
    for t in ["none", "spindown", "writeback", "cleaning"] {
        assert!(find(t, "task")["description"].is_string());
    }
    assert_eq!(
        find("+manners", "task-modifier")["applies_to"],
        "writeback, cleaning"
    );
    let b = find("wd-red-plus", "power-preset")["breakeven_s"]
        .as_f64()
        .unwrap();
    assert!((b - 210.0 / 2.9).abs() < 1e-9, "{b}");
    let b = find("paper-2.5in", "power-preset")["breakeven_s"]
        .as_f64()
        .unwrap();
    assert!((b - 3.0).abs() < 1e-9, "{b}");
    assert!(
        find("hp97560", "service-preset")["breakeven_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(find("office", "workload")["structured"], true);
    assert_eq!(find("workstation", "workload")["structured"], false);
}

/// The structured workloads replay: a day of an office PC on a 3.5" NAS
/// drive has idle periods worth a spin-down.
#[test]
fn replay_runs_a_structured_workload() {
    let out = lull(&[
        "replay",
        "--workload",
        "office",
        "--duration",
        "24h",
        "--task",
        "spindown",
        "--device",
        "wd-red-plus",
        "--net",
        "timer(B) + fixed(10s)",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["spinups"].as_f64().unwrap() > 10.0, "{v}");
    assert!(v["oracle_saved_pct"].as_f64().unwrap() > 20.0, "{v}");
}

/// No manifest names a repository: the project has no public address
/// yet, and an invented one would send a registry page's readers to a
/// placeholder (issue 36's `repository` waits for a real one).
#[test]
fn the_manifest_names_no_placeholder_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut manifests = vec![root.join("Cargo.toml")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        manifests.push(entry.unwrap().path().join("Cargo.toml"));
    }
    // The deb's maintainer (crates/live) is an address under the reserved
    // `.invalid` on purpose; the workspace's manifest holds no placeholder.
    let workspace = std::fs::read_to_string(&manifests[0]).unwrap();
    for placeholder in ["example.invalid", ".example", "localhost", "TODO"] {
        assert!(
            !workspace.contains(placeholder),
            "placeholder {placeholder}"
        );
    }
    for path in manifests {
        let Ok(m) = std::fs::read_to_string(&path) else {
            continue;
        };
        for l in m.lines().map(str::trim_start) {
            assert!(
                !l.starts_with("repository") && !l.starts_with("homepage"),
                "{}: {l}",
                path.display()
            );
        }
    }
}

/// The shared trace samples, if they are there (`../shared/traces` or
/// `$LULL_TRACES`).
fn shared_traces() -> Option<std::path::PathBuf> {
    let p = lull_testkit::probe::traces_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
    p.is_dir().then_some(p)
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn auto_on_every_blktrace_sample_reports_the_best_fixed_timeout() {
    let Some(root) = shared_traces() else {
        lull_testkit::skip("no ../shared/traces (set LULL_TRACES)");
        return;
    };
    let mut seen = 0;
    let mut inputs = Vec::new();
    for dir in std::fs::read_dir(root.join("blktrace")).unwrap() {
        let dir = dir.unwrap().path();
        // A per-CPU set is read as its directory; anything else file by file.
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|f| f.unwrap().path())
            .collect();
        if files
            .iter()
            .any(|f| f.to_string_lossy().contains(".blktrace."))
        {
            inputs.push(dir);
        } else {
            inputs.extend(files);
        }
    }
    for dir in inputs {
        let out = lull(&[
            "replay",
            dir.to_str().unwrap(),
            "--net",
            "auto",
            "--task",
            "spindown",
            "--device",
            "wd-red-plus",
            "--format",
            "json",
        ]);
        assert!(out.status.success(), "{}: {}", dir.display(), stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let get = |k: &str| {
            v[k].as_f64()
                .unwrap_or_else(|| panic!("{}: no {k}", dir.display()))
        };
        let (e, o, b) = (
            get("energy_j"),
            get("oracle_energy_j"),
            get("best_fixed_energy_j"),
        );
        // The best fixed timeout lies between the oracle and never spinning
        // down, and auto's energy is never below the oracle's.
        assert!(
            o <= b + 1e-6 && b <= get("baseline_energy_j") + 1e-6,
            "{}",
            dir.display()
        );
        assert!(o <= e + 1e-6, "{}", dir.display());
        assert!(get("best_fixed_timeout_s") >= 0.0);
        let x = &v["excess_vs_best_fixed"];
        assert!(
            x.is_null() || x.as_f64().unwrap() >= 0.0,
            "{}: {x}",
            dir.display()
        );
        seen += 1;
    }
    assert!(seen >= 5, "only {seen} blktrace samples");
}

/// One CPU's file of a blktrace capture replays as the whole capture
/// (its directory, its base name as `blkparse -i` takes it), and stderr
/// says the siblings were read with it: a CPU's file alone misses the
/// requests the other CPUs saw and makes their gaps look idle.
#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn one_cpu_file_reads_the_whole_capture_and_says_so() {
    let Some(root) = shared_traces() else {
        lull_testkit::skip("no ../shared/traces (set LULL_TRACES)");
        return;
    };
    let dir = root.join("blktrace/liuzel01_mynotes_sda");
    let replay = |p: &Path| {
        let out = lull(&[
            "replay",
            p.to_str().unwrap(),
            "--task",
            "spindown",
            "--format",
            "json",
        ]);
        assert!(out.status.success(), "{}: {}", p.display(), stderr(&out));
        out
    };
    let whole = replay(&dir);
    let one = replay(&dir.join("sda.blktrace.0"));
    let base = replay(&dir.join("sda"));
    assert_eq!(one.stdout, whole.stdout);
    assert_eq!(base.stdout, whole.stdout);
    let note = stderr(&one);
    assert!(
        note.contains("sda.blktrace.0: one CPU's file of a per-CPU capture")
            && note.contains("blkparse -i sda"),
        "{note}"
    );
    assert!(
        !stderr(&base).contains("one CPU's file"),
        "{}",
        stderr(&base)
    );
    let info = lull(&[
        "trace",
        "info",
        dir.join("sda.blktrace.0").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("requests    113 "), "{text}");
}

/// A parameter out of its range says the range as a person reads it:
/// "greater than 0", not `f64::MIN_POSITIVE` written out (issue 36).
#[test]
fn a_range_error_is_short_and_plain() {
    let o = lull(&[
        "replay",
        "--net",
        "share(eta=-1)",
        "--workload",
        "workstation",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("parameter `eta`: -1 must be greater than 0 and at most 1000"),
        "{e}"
    );
    assert!(e.len() < 200, "{e}");
}

/// A network duration with a bad unit says that multiples of B are
/// accepted too (issue 36).
#[test]
fn a_bad_network_duration_names_b_in_its_hint() {
    let o = lull(&["replay", "--net", "timer(2b)", "--workload", "workstation"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("bad duration \"2b\"") && e.contains("B, 2B, B/16"),
        "{e}"
    );
}

/// A named network used as a part says what it is (issue 36).
#[test]
fn a_named_network_inside_a_composition_is_explained() {
    let o = lull(&[
        "replay",
        "--net",
        "auto + fixed(10s)",
        "--workload",
        "workstation",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("`auto`") && e.contains("is a whole network"),
        "{e}"
    );
    assert!(!e.contains("unknown component"), "{e}");
}
