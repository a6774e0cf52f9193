//! `lull plan` (issue 19) end to end on the built-in `office` workload:
//! measure the idle capacity, ask for 80 % and 150 % of it with two jobs,
//! and check the decisions, deadlines and the plot; bad jobs exit with 2.

use std::process::{Command, Output};

fn lull(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lull"))
        .args(args)
        .output()
        .expect("run lull")
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = lull(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The measured usable idle time per day for 60 s steps, seconds.
fn capacity() -> f64 {
    let v = json(&["plan", "--job", "probe:1m/day:step=60s", "--format", "json"]);
    v["capacity"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["step_s"] == 60.0)
        .unwrap()["day_mean_s"]
        .as_f64()
        .unwrap()
}

fn two_jobs(each_s: u64) -> serde_json::Value {
    let a = format!("scrub:{each_s}s/day:step=60s");
    let b = format!("backup:{each_s}s/day:step=60s");
    json(&["plan", "--job", &a, "--job", &b, "--format", "json"])
}

#[test]
fn eighty_percent_is_admitted_and_met_one_hundred_fifty_is_refused_with_the_shortfall() {
    let c = capacity();
    assert!(c > 3600.0, "{c}");

    let v = two_jobs((0.4 * c) as u64);
    for d in v["decisions"].as_array().unwrap() {
        assert_eq!(d["admitted"], true, "{d}");
    }
    for j in v["jobs"].as_array().unwrap() {
        assert_eq!(j["windows"], 1, "{j}");
        assert_eq!(j["deadlines_met"], 1, "{j}");
        assert!(j["obtained_s"].as_f64().unwrap() >= j["requested_s"].as_f64().unwrap());
    }

    let each = (0.75 * c) as u64;
    let v = two_jobs(each);
    let d = v["decisions"].as_array().unwrap();
    assert_eq!(d[0]["admitted"], true);
    assert_eq!(d[1]["admitted"], false);
    // 150 % asked, 90 % reservable: short by about 60 % of the capacity.
    let short = d[1]["shortfalls"][0]["per_day_s"].as_f64().unwrap();
    assert!((short / c - 0.6).abs() < 0.01, "{short} of {c}");
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);

    // The text output says it too.
    let a = format!("scrub:{each}s/day:step=60s");
    let b = format!("backup:{each}s/day:step=60s");
    let o = lull(&["plan", "--job", &a, "--job", &b]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("backup     refused"), "{text}");
    assert!(text.contains("short by"), "{text}");
}

#[test]
fn writes_the_plot() {
    let dir = tempfile::tempdir().unwrap();
    let o = lull(&[
        "plan",
        "--job",
        "trim:5m/hour",
        "--plot",
        dir.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("plan.svg").exists());
    assert!(dir.path().join("plan.png").exists());
}

#[test]
fn bad_jobs_and_flags_are_usage_errors() {
    for args in [
        vec!["plan", "--job", "scrub"],
        vec!["plan", "--job", "scrub:2h/5h"],
        vec!["plan", "--job", "scrub:2h/day:stp=1s"],
        vec!["plan", "--job", "scrub:25h/day"],
        vec!["plan", "--job", "a:1h/day", "--best-effort", "1"],
        vec!["plan", "--job", "a:1h/day", "--wait", "soon"],
    ] {
        let o = lull(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!o.stderr.is_empty());
    }
}

/// Issue 34: `2B` means one thing for one drive and task. `lull plan
/// --device wd-red-plus` and a daemon disk with `preset = "wd-red-plus"`
/// and `task = "jobs"` give the same B (the drive's service time for
/// I/O work), the same step and the same request; the text shows the
/// step as a person writes it.
#[test]
fn two_b_means_the_same_in_lull_plan_and_in_the_daemon() {
    let job = "scrub:1h/day:step=2B";
    let v = json(&[
        "plan",
        "--device",
        "wd-red-plus",
        "--job",
        job,
        "--format",
        "json",
    ]);
    let registry = lull::registry();
    let cfg = lull_live::config::Config::parse(
        std::path::Path::new("lull.toml"),
        "[[disk]]\ndevice = \"sdb\"\npreset = \"wd-red-plus\"\ntask = \"jobs\"\n\
         [[disk.job]]\nname = \"scrub\"\ncommand = [\"/bin/true\"]\nreserve = \"1h/day:step=2B\"\n",
        &registry,
    )
    .unwrap();
    let d = &cfg.disks[0];
    assert_eq!(
        v["breakeven_s"].as_f64().unwrap(),
        d.breakeven().as_secs_f64()
    );
    let lull_live::config::TaskConfig::Jobs { jobs, .. } = &d.task else {
        panic!("a jobs disk")
    };
    let daemon_request = &jobs[0].spec.ranked[0];
    let plan_job = &v["jobs"][0];
    assert_eq!(
        plan_job["step_s"].as_f64().unwrap(),
        daemon_request.step.as_secs_f64()
    );
    assert_eq!(
        plan_job["request"].as_str().unwrap(),
        daemon_request.to_string()
    );
    // 2 × 17.7 ms, not the spin-down B of the same drive (72 s).
    assert!(
        daemon_request.step.as_secs_f64() < 0.1,
        "{}",
        daemon_request.step
    );
    let text = lull(&["plan", "--device", "wd-red-plus", "--job", job]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("step=35.4ms") && text.contains("B = 17.7ms"),
        "{text}"
    );
}

/// A trace shorter than a day plans on the hours it covers and says that
/// the others count as no idle time; a whole day says nothing.
#[test]
fn a_trace_of_part_of_a_day_is_warned_of() {
    let err = |args: &[&str]| {
        let o = lull(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let part = err(&[
        "plan",
        "--workload",
        "office",
        "--duration",
        "3h",
        "--job",
        "scrub:1m/hour",
    ]);
    assert!(
        part.contains("the trace covers 3 of the day's 24 hours")
            && part.contains("count as no idle time"),
        "{part}"
    );
    let whole = err(&["plan", "--workload", "office", "--job", "scrub:1m/hour"]);
    assert!(!whole.contains("warning"), "{whole}");
}

/// The header names the drive whose service model gives B (the lab's
/// default borrows wd-red-plus's).
#[test]
fn the_header_names_the_drive() {
    let o = lull(&["plan", "--workload", "office", "--job", "scrub:1m/hour"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("plan     drive paper-2.5in (service times of wd-red-plus)   wait 17.7ms"),
        "{text}"
    );
    let o = lull(&[
        "plan",
        "--workload",
        "office",
        "--device",
        "wd-red-plus",
        "--job",
        "scrub:1m/hour",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("plan     drive wd-red-plus   wait"), "{text}");
    assert!(!text.contains("no wall clock"), "{text}");
    // A trace with no wall clock (a normalized CSV) counts its hours from
    // its start, and the header says so, as plan.png's axis does.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(
        &csv,
        "arrival_ns,completion_ns,op,sector,bytes,device\n0,1000000,R,0,4096,d\n7200000000000,7200001000000,R,8,4096,d\n",
    )
    .unwrap();
    let o = lull(&["plan", csv.to_str().unwrap(), "--job", "scrub:1m/hour"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("(no wall clock: hours count from its start, 00:00 being its first)"),
        "{text}"
    );
}

/// A job whose steps run into I/O is warned of in words, with the count
/// the JSON gives; one whose steps never do, not.
#[test]
fn overruns_are_warned_of_in_the_text() {
    let mut warned = 0;
    for job in ["scrub:60s/day:step=1s", "scrub:1800s/day:step=60s"] {
        let v = json(&["plan", "--job", job, "--format", "json"]);
        let j = &v["jobs"][0];
        let (overruns, steps) = (
            j["overruns"].as_u64().unwrap(),
            j["steps"].as_u64().unwrap(),
        );
        let o = lull(&["plan", "--job", job]);
        let text = String::from_utf8_lossy(&o.stdout);
        let line = format!("warning: {overruns} of its {steps} steps ran into I/O");
        if overruns > 0 {
            warned += 1;
            assert!(text.contains(&line), "{job}: {text}");
        } else {
            assert!(!text.contains("steps ran into I/O"), "{job}: {text}");
        }
    }
    assert_eq!(
        warned, 1,
        "a minute's steps on office overrun, a second's do not"
    );
}
