//! End-to-end: a small grid over short synthetic traces, whole and sharded.

use std::fs;
use std::path::Path;

use lull_blktrace_replay::replay::ReplayOptions;
use lull_core::time::Nanos;
use lull_rank::{Grid, RankConfig, Shard, Source, atomic::TEMP_PREFIX};

fn small_grid() -> Grid {
    Grid::from_toml(
        r#"
specs = ["adapt-timer-arith-geom(step=100ms) + fixed(d=10s)"]
[[template]]
spec = "timer(t={t}) + {d}"
t = ["100ms", "1s", "5s"]
d = ["fixed(d=10s)", "average(n=10)"]
[[template]]
spec = "event-window(n={n}, rate={rate}) + fixed(d=10s)"
n = [2, 10]
rate = [0.5, 5]
"#,
        "none",
    )
    .unwrap()
}

fn sources() -> Vec<Source> {
    vec![
        Source::Builtin {
            name: "workstation".into(),
            duration: Nanos::from_secs(900),
            seed: 1,
            day: None,
            warm_up: None,
        },
        Source::Builtin {
            name: "workstation".into(),
            duration: Nanos::from_secs(900),
            seed: 2,
            day: None,
            warm_up: None,
        },
    ]
}

fn config(out: &Path, shard: Shard) -> RankConfig {
    RankConfig {
        sources: sources(),
        grid: small_grid(),
        grid_name: "test".into(),
        replay: ReplayOptions::default(),
        jobs: Some(2),
        shard,
        disk: None,
        lenient: false,
        progress: false,
        out: out.to_path_buf(),
        score: lull_rank::Mode::Robust,
        limits: lull_rank::Limits::default(),
        validate: None,
    }
}

fn walk(dir: &Path, out: &mut Vec<String>) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            walk(&e.path(), out);
        } else {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
}

#[test]
fn sharded_and_merged_ranking_is_byte_identical() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let outcome = lull_rank::rank(&config(&whole, Shard::ALL), &reg).unwrap();
    // 11 grid networks and two references (`auto`, the oracle) per trace.
    assert_eq!(outcome.meta.runs, 2 * 13, "{:?}", outcome.meta.notes);
    // The first ranked row has rank 1; the oracle is the unranked reference.
    assert_eq!(outcome.summaries[0].rank, Some(1));
    assert!(outcome.summaries.last().unwrap().reference);

    let mut shards = Vec::new();
    for k in 1..=3 {
        let dir = tmp.path().join(format!("shard{k}"));
        lull_rank::rank(&config(&dir, Shard { index: k, count: 3 }), &reg).unwrap();
        shards.push(dir);
    }
    let merged = tmp.path().join("merged");
    let m = lull_rank::merge(&shards, &merged).unwrap();
    assert_eq!(m.meta.runs, outcome.meta.runs);
    let a = fs::read(whole.join("ranking.csv")).unwrap();
    let b = fs::read(merged.join("ranking.csv")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&a),
        String::from_utf8_lossy(&b),
        "ranking.csv differs"
    );
    assert_eq!(
        fs::read(whole.join("results.csv")).unwrap(),
        fs::read(merged.join("results.csv")).unwrap()
    );
    // Merging shards in another order changes nothing.
    shards.reverse();
    let merged2 = tmp.path().join("merged2");
    lull_rank::merge(&shards, &merged2).unwrap();
    assert_eq!(a, fs::read(merged2.join("ranking.csv")).unwrap());

    // A shard whose task failed left no directory (here 1/3): the merge
    // refuses, naming it, and writes nothing.
    let partial = tmp.path().join("partial");
    let e = lull_rank::merge(&shards[..2], &partial).unwrap_err();
    assert!(e.to_string().starts_with("shard 1/3 is missing"), "{e}");
    assert!(!partial.exists());
    // One killed before it finished has no run.toml (written last).
    fs::remove_file(shards[2].join("run.toml")).unwrap();
    let e = lull_rank::merge(&shards, &partial).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: no run.toml, so no finished `lull rank` output (it is written last: a shard whose task failed or was killed has none)",
            shards[2].display()
        )
    );
    assert!(!partial.exists());

    // Everything is there, and no temporary file is left.
    let mut files = Vec::new();
    walk(&whole, &mut files);
    for f in [
        "results.csv",
        "results.parquet",
        "ranking.csv",
        "idle_cdf.csv",
        "report.md",
        "run.toml",
        "tradeoff-workstation.png",
        "tradeoff-workstation-2.svg",
        "range-start.png",
        "range-duration.png",
        "event-window.png",
        "idle-cdf-workstation.png",
    ] {
        assert!(files.iter().any(|x| x == f), "{f} missing from {files:?}");
    }
    assert!(
        !files.iter().any(|f| f.starts_with(TEMP_PREFIX)),
        "{files:?}"
    );
    let report = fs::read_to_string(whole.join("report.md")).unwrap();
    assert!(report.contains("## Details"), "{report}");
    assert!(report.contains("plots/tradeoff-workstation.png"));

    // The trade-off rings the recommended network.
    let tradeoff = fs::read_to_string(whole.join("plots/tradeoff-workstation.svg")).unwrap();
    assert!(tradeoff.contains("\nrecommended\n"), "no recommended mark");
    // The idle CDF marks the device's break-even time.
    let cdf_svg = || fs::read_to_string(whole.join("plots/idle-cdf-workstation.svg")).unwrap();
    let b = outcome.meta.breakeven_s.expect("a spindown run has a B");
    assert_eq!(b, 3.0, "the paper's drive");
    let b = "break-even time B = 3 s";
    assert!(cdf_svg().contains(b), "{b} not in the idle CDF");

    // `lull plot` redraws from the tables alone.
    fs::remove_dir_all(whole.join("plots")).unwrap();
    let r = lull_rank::replot(&whole).unwrap();
    assert!(whole.join("plots/range-start.svg").exists());
    assert!(cdf_svg().contains(b), "{b} not in the redrawn idle CDF");
    assert_eq!(r.figures.len(), outcome.figures.len());
}

#[test]
fn a_failed_run_leaves_no_partial_file() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    fs::create_dir_all(&out).unwrap();
    // `plots` is a file, so drawing fails after the tables are written.
    fs::write(out.join("plots"), b"in the way").unwrap();
    let mut cfg = config(&out, Shard::ALL);
    cfg.sources.truncate(1);
    assert!(lull_rank::rank(&cfg, &reg).is_err());
    let mut files = Vec::new();
    walk(&out, &mut files);
    assert!(
        !files.iter().any(|f| f.starts_with(TEMP_PREFIX)),
        "{files:?}"
    );
    // run.toml is written last: its absence marks the run incomplete, and
    // what was written is whole.
    assert!(!out.join("run.toml").exists());
    let csv = fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.ends_with('\n'));
    assert_eq!(csv.lines().count(), 1 + 13);

    // Unknown tasks and empty grids are input errors.
    let mut bad = config(&out, Shard::ALL);
    bad.replay.task = "no-such-task".into();
    let e = lull_rank::rank(&bad, &reg).unwrap_err();
    assert!(
        e.is_input_error() && e.to_string().contains("no-such-task"),
        "{e}"
    );
}

/// Writes two built-in workloads into one normalized CSV as devices `a`
/// and `b` (each request's device id is its workload's).
fn two_device_trace(path: &Path) -> (usize, usize) {
    use lull_blktrace_replay::{Trace, normalized, synth};
    use lull_core::request::DeviceId;
    let mut trace = Trace {
        devices: vec!["a".into(), "b".into()],
        ..Trace::default()
    };
    let mut counts = [0; 2];
    for (id, (name, seed)) in [("workstation", 1), ("news", 2)].into_iter().enumerate() {
        let shape = synth::shape(name).unwrap();
        for mut r in synth::generate(shape, Nanos::from_secs(600), seed).requests {
            r.device = DeviceId(id as u16);
            trace.requests.push(r);
            counts[id] += 1;
        }
    }
    trace.requests.sort_by_key(|r| r.arrival);
    let mut f = fs::File::create(path).unwrap();
    normalized::write(&trace, &mut f).unwrap();
    (counts[0], counts[1])
}

#[test]
fn disk_all_ranks_every_device_as_its_own_trace() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("two.csv");
    let (a, b) = two_device_trace(&csv);
    let run = |disk: &str, out: &str| {
        let cfg = RankConfig {
            sources: vec![Source::File(csv.clone())],
            disk: Some(disk.into()),
            ..config(&dir.path().join(out), Shard::ALL)
        };
        lull_rank::rank(&cfg, &lull_rank::registry()).unwrap()
    };
    let all = run(lull_rank::ALL_DISKS, "all");
    let names: Vec<_> = all.meta.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["two[a]", "two[b]"]);
    let requests: Vec<_> = all.meta.traces.iter().map(|t| t.requests).collect();
    assert_eq!(requests, [a as u64, b as u64]);
    // Each device's rows are those of a run on that device alone.
    for (i, disk) in ["a", "b"].into_iter().enumerate() {
        let one = run(disk, disk);
        let mine: Vec<_> = all
            .rows
            .iter()
            .filter(|r| r.trace_index == i)
            .map(|r| (&r.spec, &r.measures))
            .collect();
        let alone: Vec<_> = one.rows.iter().map(|r| (&r.spec, &r.measures)).collect();
        assert!(!alone.is_empty());
        assert_eq!(mine, alone, "device {disk}");
    }
}
