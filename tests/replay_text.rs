//! `lull replay`'s output: one measure per line, names and values in
//! aligned columns whatever the longest name, and the network's gauges at
//! the end of the trace (text and JSON).

mod common;

use common::{lull, stderr, stdout};

#[test]
fn measures_line_up_in_two_columns() {
    let o = lull(&[
        "replay",
        "--workload",
        "office",
        "--duration",
        "2h",
        "--task",
        "spindown",
        "--device",
        "wd-red-plus",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // The verdict first (issue 78): what `auto` saves and its spin-ups a
    // day, then hd-idle's 10 minutes and the best fixed timeout on the
    // same trace.
    let head: Vec<&str> = text.lines().take(4).collect();
    assert!(
        head[0].starts_with("verdict  auto saves ")
            && head[0].contains(" % of the energy of never spinning down, with ")
            && head[0].ends_with(" spin-ups a day"),
        "{text}"
    );
    assert!(
        head[1].starts_with("verdict  hd-idle's 10 minutes saves "),
        "{text}"
    );
    assert!(
        head[2].starts_with("verdict  the best fixed timeout in hindsight ("),
        "{text}"
    );
    assert!(head[3].starts_with("network  auto"), "{text}");
    let measures: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
    assert!(
        measures
            .iter()
            .any(|l| l.trim_start().starts_with("window_clairvoyant_energy_j ")),
        "{text}"
    );
    // The gauges follow under their heading, in the same columns.
    assert!(text.contains("\ngauges "), "{text}");
    assert!(
        measures
            .iter()
            .any(|l| l.trim_start().starts_with("n0.fallback_timeout_s ")),
        "{text}"
    );
    // Every value ends in the same column, and every name is followed by
    // at least one space before its value.
    let ends: Vec<usize> = measures.iter().map(|l| l.trim_end().len()).collect();
    assert!(ends.windows(2).all(|w| w[0] == w[1]), "{text}");
    for l in &measures {
        let mut parts = l.split_whitespace();
        let (name, value) = (parts.next().unwrap(), parts.next().unwrap());
        assert!(parts.next().is_none(), "{l}");
        assert!(value.parse::<f64>().is_ok(), "{l}");
        assert!(l.rfind(value).unwrap() > 2 + name.len(), "{l}");
    }
}

/// `--format json` carries the gauges as an object: on the checkpointing
/// server (a 5-minute checkpoint, day and night) on the NAS drive, `auto`'s
/// periodic estimator has found the checkpoint by the end of two days.
#[test]
fn json_carries_what_auto_learned() {
    let args = "replay --workload cron-server --duration 48h --task spindown \
                --device wd-red-plus --format json";
    let o = lull(&args.split_whitespace().collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    // The measures stay top-level numbers.
    assert!(v["energy_j"].as_f64().is_some_and(|e| e > 0.0), "{v}");
    let g = v["gauges"].as_object().expect("a gauges object");
    let gauge = |k: &str| {
        g.get(k)
            .and_then(|x| x.as_f64())
            .unwrap_or_else(|| panic!("{k}: {v}"))
    };
    assert!(gauge("n0.periodic_sources") >= 1.0, "{v}");
    assert!((gauge("n0.periodic_period_s") - 300.0).abs() < 3.0, "{v}");
    assert!(
        gauge("n0.periodic_hits") > gauge("n0.periodic_misses"),
        "{v}"
    );
    assert!((0.0..=1.0).contains(&gauge("n0.p_long")), "{v}");
    assert!(gauge("n0.fallback_periods") > 0.0, "{v}");
}

/// `--warm-up-seed` and `--warm-up`: the network learns from another day
/// first; the JSON says how long the warm-up was, the measures are the
/// trace's, and misuse is a usage error that names the flag.
#[test]
fn warm_up_learns_first_and_says_so() {
    let base = [
        "replay",
        "--workload",
        "office",
        "--duration",
        "6h",
        "--task",
        "spindown",
        "--device",
        "wd-red-plus",
        "--format",
        "json",
    ];
    let json = |extra: &[&str]| {
        let o = lull(&[&base[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let cold = json(&[]);
    let warm = json(&["--warm-up-seed", "7"]);
    assert!(cold.get("warm_up_s").is_none());
    let span = warm["warm_up_s"].as_f64().unwrap();
    assert!(span > 5.0 * 3600.0 && span <= 6.0 * 3600.0, "{span}");
    assert_eq!(cold["baseline_energy_j"], warm["baseline_energy_j"]);
    assert!(
        warm["gauges"]["n0.fallback_periods"].as_f64().unwrap()
            > cold["gauges"]["n0.fallback_periods"].as_f64().unwrap()
    );
    // The same day as a file (the normalized CSV, which carries no wall
    // clock, so the hour of day is not learned from it): as many periods
    // learned from as from the seed.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("day.csv");
    let o = lull(&[
        "synth",
        "--workload",
        "office",
        "--duration",
        "6h",
        "--seed",
        "7",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let from_file = json(&["--warm-up", file.to_str().unwrap()]);
    assert_eq!(
        from_file["gauges"]["n0.fallback_periods"],
        warm["gauges"]["n0.fallback_periods"]
    );
    assert_ne!(from_file["energy_j"], cold["energy_j"]);
    // Misuse.
    let missing = dir.path().join("nope.csv");
    let o = lull(&[&base[..], &["--warm-up", missing.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nope.csv"), "{}", stderr(&o));
    let o = lull(&[
        "replay",
        file.to_str().unwrap(),
        "--task",
        "spindown",
        "--warm-up-seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--warm-up TRACE"), "{}", stderr(&o));
    let o = lull(&[&base[..], &["--warm-up-seed", "3", "--restart-every", "1h"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Warming up on the trace itself (here a copy of it) would measure
    // the network on what it learned from.
    let copy = dir.path().join("copy.csv");
    std::fs::copy(&file, &copy).unwrap();
    let o = lull(&[
        "replay",
        file.to_str().unwrap(),
        "--task",
        "spindown",
        "--warm-up",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("copy.csv holds the same requests as the trace replayed"),
        "{}",
        stderr(&o)
    );
}

/// A task other than spin-down opens with the two measures `lull rank`
/// ranks it on, before the header (issue 78).
#[test]
fn other_tasks_open_with_their_two_measures() {
    let args = "replay --workload office --duration 1h --task writeback";
    let o = lull(&args.split_whitespace().collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("verdict  auto: latency improvement (%) ")
            && first.contains(", mean queue (bytes) "),
        "{text}"
    );
    assert!(
        text.lines().nth(1).unwrap().starts_with("network  auto"),
        "{text}"
    );
}
