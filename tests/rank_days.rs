//! `lull rank --days N` (issue 29, item 4): every built-in workload is
//! ranked on several days, day 1 being the day `--seed` names, and the
//! recommendation says how the winner varied across them.

mod common;

use common::{lull, stderr, stdout};

/// The rows of `results.csv` for `trace`, without the trace's index
/// (which depends on how many traces the run had).
fn rows_of(dir: &std::path::Path, trace: &str) -> Vec<String> {
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..2], ["trace_index", "trace"]);
    lines
        .filter_map(|l| {
            let (_, rest) = l.split_once(',')?;
            let (name, rest) = rest.split_once(',')?;
            (name == trace).then(|| rest.to_string())
        })
        .collect()
}

/// The traces of a run, in order, from `results.csv`.
fn traces(dir: &std::path::Path) -> Vec<String> {
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut names: Vec<String> = Vec::new();
    for l in csv.lines().skip(1) {
        let name = l.split(',').nth(1).unwrap();
        if names.last().is_none_or(|n| n != name) {
            names.push(name.to_string());
        }
    }
    names
}

#[test]
fn days_are_traces_of_their_own_and_day_one_is_the_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, three) = (tmp.path().join("one"), tmp.path().join("three"));
    let base = [
        "rank",
        "--task",
        "spindown",
        "--device",
        "wd-red-plus",
        "--workload",
        "office",
        "--duration",
        "6h",
        "--seed",
        "5",
    ];
    let run = |days: &str, out: &std::path::Path| {
        let mut args = base.to_vec();
        args.extend(["--days", days, "--out", out.to_str().unwrap()]);
        let o = lull(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let text1 = run("1", &one);
    let text3 = run("3", &three);
    // stdout opens with the answer (issue 78): the network to use, what
    // it saves beside hd-idle's 10 minutes and the best fixed timeout,
    // and the spin-ups it costs a day.
    let head: Vec<&str> = text3.lines().take(3).collect();
    assert!(
        head[0].starts_with("Use ") && head[0].contains(" for spindown on 3 traces"),
        "{text3}"
    );
    assert!(
        head[1].starts_with("It saves ")
            && head[1].contains(" percentage points ")
            && head[1].contains(" than hd-idle's 10 minutes (timer(t=600s), ")
            && head[1].contains(" than the best fixed timeout in hindsight ("),
        "{text3}"
    );
    assert!(
        head[2].starts_with("It costs ")
            && head[2].contains(" spin-ups a day (hd-idle's 10 minutes "),
        "{text3}"
    );
    assert_eq!(traces(&one), ["office"]);
    assert_eq!(traces(&three), ["office@1", "office@2", "office@3"]);
    // Day 1 is the day --seed names: the same runs, measure for measure.
    let day1 = rows_of(&three, "office@1");
    assert!(!day1.is_empty());
    assert_eq!(day1, rows_of(&one, "office"));
    // The other days are other days.
    assert_ne!(rows_of(&three, "office@2"), day1);
    assert_ne!(rows_of(&three, "office@3"), rows_of(&three, "office@2"));
    // The spread across days is said on stdout and in the report; one day
    // has none to say. Days of 6 h are runs of 6 h, not days (lab-25 R9).
    assert!(
        text3.contains("Over the 3 runs of 6 h of office, "),
        "{text3}"
    );
    assert!(!text1.contains("Over the "), "{text1}");
    let report = std::fs::read_to_string(three.join("report.md")).unwrap();
    let spread = report
        .split("Over the 3 runs of 6 h of office, `")
        .nth(1)
        .and_then(|s| s.split_once("`'s scaled distance ranged from "))
        .map(|(_, s)| s)
        .expect("the recommendation states the spread across days, naming the network");
    let (lo, rest) = spread.split_once(" to ").unwrap();
    let hi = rest.split([',', ' ']).next().unwrap();
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert!(lo <= hi, "{lo} > {hi}");
    assert!(rest.contains("(per workload, distance then excess: office "));
    // The default is three days.
    let default = tmp.path().join("default");
    let mut args = base.to_vec();
    args.extend(["--out", default.to_str().unwrap()]);
    let o = lull(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(traces(&default), traces(&three));
}

#[test]
fn days_need_built_in_workloads_and_at_least_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = lull(&[
        "rank",
        "--task",
        "spindown",
        "--workload",
        "office",
        "--days",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--days must be at least 1"),
        "{}",
        stderr(&o)
    );
    let trace = tmp.path().join("t.csv");
    std::fs::write(&trace, "").unwrap();
    let o = lull(&[
        "rank",
        trace.to_str().unwrap(),
        "--task",
        "spindown",
        "--days",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--days"), "{}", stderr(&o));
}

#[test]
fn day_seeds_are_distinct_and_day_one_is_the_seed() {
    use lull_rank::day_seed;
    for seed in [0, 1, 7, u64::MAX] {
        assert_eq!(day_seed(seed, 1), seed);
        let days: Vec<u64> = (1..=30).map(|d| day_seed(seed, d)).collect();
        let mut sorted = days.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), days.len(), "seed {seed}: {days:?}");
    }
    // Nearby run seeds do not share days.
    assert_ne!(day_seed(1, 2), 2);
    assert_ne!(day_seed(1, 3), day_seed(2, 2));
}

/// `--warm-up` is for the built-in workloads and the tasks on recorded
/// times: elsewhere a usage error that says why.
#[test]
fn warm_up_is_refused_where_it_cannot_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let out = out.to_str().unwrap();
    let o = lull(&[
        "rank",
        "--task",
        "writeback",
        "--warm-up",
        "--workload",
        "office",
        "--days",
        "1",
        "--duration",
        "1h",
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("trace-timed tasks"), "{}", stderr(&o));
    let trace = tmp.path().join("t.csv");
    let s = lull(&[
        "synth",
        "--workload",
        "office",
        "--duration",
        "1h",
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(s.status.success(), "{}", stderr(&s));
    let o = lull(&[
        "rank",
        trace.to_str().unwrap(),
        "--task",
        "spindown",
        "--warm-up",
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--warm-up"), "{}", stderr(&o));
    let o = lull(&[
        "rank",
        "--task",
        "spindown",
        "--warm-up",
        "--workload",
        "office",
        "--days",
        "1",
        "--duration",
        "2h",
        "--out",
        out,
        "--top",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("auto"), "{}", stdout(&o));
}

/// Over several workloads the spread is over every day of each, and the
/// sentence says how many traces that is (it read "across the 2 days"
/// where the range was over four traces).
#[test]
fn the_spread_over_several_workloads_counts_its_traces() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("two");
    let grid = tmp.path().join("grid.toml");
    std::fs::write(&grid, "specs = [\"timer(t=B)\", \"timer(t=4B)\"]\n").unwrap();
    let o = lull(&[
        "rank",
        "--task",
        "spindown",
        "--workload",
        "office",
        "--workload",
        "home-nas",
        "--duration",
        "2h",
        "--days",
        "2",
        "--grid",
        grid.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(traces(&out).len(), 4, "{:?}", traces(&out));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("Over the 2 runs of 2 h of each of the 2 workloads (4 traces), `"),
        "{report}"
    );
}
