//! The lab's answer (issue 16): robust scores, limits, out-of-sample
//! validation, equivalent networks, reference rows, and shards assigned by
//! a cluster scheduler through its environment variables.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use lull_blktrace_replay::replay::ReplayOptions;
use lull_core::request::{Op, Request};
use lull_core::time::Nanos;
use lull_rank::{Grid, Limits, Mode, Outcome, RankConfig, Shard, Source};

fn grid(specs: &[&str]) -> Grid {
    Grid {
        specs: specs.iter().map(|s| s.to_string()).collect(),
        references: lull_rank::grid::default_references(),
        lenient: false,
    }
}

fn config(out: &Path, sources: Vec<Source>, specs: &[&str]) -> RankConfig {
    RankConfig {
        sources,
        grid: grid(specs),
        grid_name: "test".into(),
        replay: ReplayOptions {
            task: "spindown".into(),
            ..ReplayOptions::default()
        },
        jobs: Some(2),
        shard: Shard::ALL,
        disk: None,
        lenient: false,
        progress: false,
        out: out.to_path_buf(),
        score: Mode::Robust,
        limits: Limits::default(),
        validate: None,
    }
}

fn workstation(secs: u64, seed: u64) -> Source {
    Source::Builtin {
        name: "workstation".into(),
        duration: Nanos::from_secs(secs),
        seed,
        day: None,
        warm_up: None,
    }
}

const SENSIBLE: [&str; 7] = [
    "timer(t=B/4)",
    "timer(t=B/2)",
    "timer(t=B)",
    "timer(t=2B)",
    "timer(t=8B)",
    "adapt-timer-arith-geom(step=B/8)",
    "adapt-timer-geom-geom()",
];

fn ranked_specs(o: &Outcome, n: usize) -> Vec<String> {
    o.summaries
        .iter()
        .filter(|s| !s.reference)
        .take(n)
        .map(|s| lull_rank::report::network_label(s, &o.rows))
        .collect()
}

fn recommended(o: &Outcome) -> String {
    match lull_rank::analysis::choose(&o.summaries, &o.rows, &o.meta.limits) {
        lull_rank::analysis::Choice::Meets(p) | lull_rank::analysis::Choice::Closest(p, _) => o
            .rows
            .iter()
            .find(|r| r.network_index == p)
            .unwrap()
            .spec
            .clone(),
        lull_rank::analysis::Choice::Nothing => String::new(),
    }
}

#[test]
fn pathological_networks_move_neither_the_top_nor_the_recommendation() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let sources = vec![workstation(3600, 1), workstation(3600, 2)];
    let sane = lull_rank::rank(
        &config(&tmp.path().join("a"), sources.clone(), &SENSIBLE),
        &reg,
    )
    .unwrap();
    // Networks that spin the disk down in every millisecond gap.
    let mut all: Vec<&str> = SENSIBLE.to_vec();
    all.extend(["timer(t=1ms)", "timer(t=0s)", "timer(t=B/1000)"]);
    let with = lull_rank::rank(&config(&tmp.path().join("b"), sources, &all), &reg).unwrap();
    let bad: Vec<_> = with
        .summaries
        .iter()
        .filter(|s| s.worse > 0)
        .map(|s| lull_rank::report::network_label(s, &with.rows))
        .collect();
    assert!(!bad.is_empty(), "the pathological networks are flagged");
    assert_eq!(ranked_specs(&sane, 5), ranked_specs(&with, 5));
    assert_eq!(recommended(&sane), recommended(&with));
    // The same scores, not just the same order.
    let d = |o: &Outcome| {
        o.summaries
            .iter()
            .filter(|s| !s.reference)
            .take(5)
            .map(|s| s.mean)
            .collect::<Vec<_>>()
    };
    assert_eq!(d(&sane), d(&with));
    // Under the paper's min–max scaling the outliers squeeze the others.
    let mut paper = config(&tmp.path().join("c"), vec![workstation(3600, 1)], &all);
    paper.score = Mode::Paper;
    let p = lull_rank::rank(&paper, &reg).unwrap();
    let report = fs::read_to_string(tmp.path().join("c/report.md")).unwrap();
    assert!(report.contains("§4.1.1"), "{report}");
    assert!(p.summaries.iter().any(|s| !s.reference));
}

fn per_hour(o: &Outcome, spec: &str) -> f64 {
    o.rows
        .iter()
        .filter(|r| r.spec == spec)
        .map(|r| r.measure("delayed_ops_per_hour").unwrap())
        .fold(0.0, f64::max)
}

#[test]
fn limits_move_the_recommendation_or_say_none_keeps_them() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let sources = vec![workstation(3600, 3)];
    let free = lull_rank::rank(
        &config(&tmp.path().join("free"), sources.clone(), &SENSIBLE),
        &reg,
    )
    .unwrap();
    let best = recommended(&free);
    let best_rate = per_hour(&free, &best);
    assert!(best_rate > 0.0);
    // A limit the unconstrained pick breaks, which some network keeps.
    let limit = best_rate * 0.8;
    let keeps: Vec<String> = free
        .summaries
        .iter()
        .filter(|s| !s.reference)
        .map(|s| {
            free.rows
                .iter()
                .find(|r| r.network_index == s.policy)
                .unwrap()
                .spec
                .clone()
        })
        .filter(|spec| per_hour(&free, spec) <= limit)
        .collect();
    assert!(!keeps.is_empty(), "some network keeps {limit}/h");
    let mut cfg = config(&tmp.path().join("lim"), sources.clone(), &SENSIBLE);
    cfg.limits.max_delayed_per_hour = Some(limit);
    let lim = lull_rank::rank(&cfg, &reg).unwrap();
    assert_ne!(recommended(&lim), best);
    assert_eq!(
        recommended(&lim),
        keeps[0],
        "the best-ranked network that keeps it"
    );
    let report = fs::read_to_string(tmp.path().join("lim/report.md")).unwrap();
    assert!(
        report.contains(&format!("use **`{}`**", keeps[0])),
        "{report}"
    );
    assert!(report.contains("Under the limits"), "{report}");
    // The pick the limit moved down the ranking says where it ranks; it
    // did not come closest to the ideal.
    assert!(report.contains(". It ranks "), "{report}");
    assert!(!report.contains("It came closest"), "{report}");
    // The tables flag the rows that break the limit and the pick, and list
    // the pick even when it ranks below the rows shown.
    let table = lim.table(1);
    let lines: Vec<&str> = table.lines().collect();
    let flagged = |l: &str, flag: &str| {
        l.split_whitespace()
            .any(|w| w.split(',').any(|f| f == flag))
    };
    assert!(
        lines[1].starts_with("   1") || lines[1].trim_start().starts_with("1 "),
        "{table}"
    );
    assert!(
        flagged(lines[1], "over"),
        "rank 1 breaks the limit: {table}"
    );
    let pick: Vec<&&str> = lines.iter().filter(|l| flagged(l, "pick")).collect();
    assert_eq!(pick.len(), 1, "{table}");
    assert!(pick[0].contains(keeps[0].as_str()), "{table}");
    assert!(!flagged(pick[0], "over"), "{table}");
    let md_pick = report
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(&format!("`{}`", keeps[0])))
        .any(|l| l.contains("pick"));
    assert!(md_pick, "{report}");
    assert!(report.contains("`over` breaks a limit"), "{report}");
    // Family names are code, so `and` or `or` do not read as words.
    assert!(report.contains("By start-detector family, **`"), "{report}");
    // Without limits, neither flag.
    let free_table = free.table(10);
    assert!(
        free_table
            .lines()
            .all(|l| !flagged(l, "over") && !flagged(l, "pick")),
        "{free_table}"
    );

    // No network keeps a limit of zero spin-ups a day.
    let mut cfg = config(&tmp.path().join("none"), sources, &SENSIBLE[..4]);
    cfg.limits.max_spinups_per_day = Some(0.0);
    let none = lull_rank::rank(&cfg, &reg).unwrap();
    assert!(matches!(
        lull_rank::analysis::choose(&none.summaries, &none.rows, &none.meta.limits),
        lull_rank::analysis::Choice::Closest(..)
    ));
    let report = fs::read_to_string(tmp.path().join("none/report.md")).unwrap();
    assert!(
        report.contains("No network of the grid keeps the limits"),
        "{report}"
    );
}

/// A trace whose regime changes halfway: 10 s gaps (spinning down pays,
/// B = 3 s on the default drive), then 1.5 s gaps (it never does).
fn regime_change(path: &Path) {
    use lull_blktrace_replay::{Trace, normalized};
    let mut trace = Trace {
        devices: vec!["d".into()],
        ..Trace::default()
    };
    let ms = Nanos::from_millis;
    let mut t = 0u64;
    for i in 0..600u64 {
        let gap = if i < 300 { 10_000 } else { 1_500 };
        trace
            .requests
            .push(Request::new(ms(t), ms(t + 10), Op::Read, i * 8, 4096));
        t += gap;
    }
    let mut f = fs::File::create(path).unwrap();
    normalized::write(&trace, &mut f).unwrap();
}

#[test]
fn validation_shows_a_pick_that_does_not_generalize() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("regime.csv");
    regime_change(&csv);
    // 300 × 10 s then 300 × 1.5 s: the first 87 % of the time is regime 1.
    let fraction = 3000.0 / 3450.0 - 0.01;
    let mut cfg = config(
        &tmp.path().join("out"),
        vec![Source::File(csv)],
        &["timer(t=B/16)", "timer(t=16B)"],
    );
    cfg.validate = Some(fraction);
    let o = lull_rank::rank(&cfg, &lull_rank::registry()).unwrap();
    let v = o.meta.validation.clone().expect("validation ran");
    assert_eq!(v.pick, "timer(t=B/16)", "{v:?}");
    assert_eq!(v.best_out_of_sample, "timer(t=16B)", "{v:?}");
    assert_eq!(v.pick_rank_out_of_sample, 2, "{v:?}");
    assert!(v.pick_out_of_sample > v.pick_in_sample, "{v:?}");
    let report = fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    assert!(report.contains("## Out-of-sample validation"), "{report}");
    assert!(report.contains("the best network on the rest in hindsight is `timer(t=16B)`"));
}

#[test]
fn equivalents_collapse_and_references_come_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let specs = [
        "timer(t=B) + fixed(d=4B)",
        "timer(t=B)",
        "timer(t=B) + backoff-geom-geom(initial=B)",
        "timer(t=4B)",
    ];
    let o = lull_rank::rank(
        &config(&tmp.path().join("o"), vec![workstation(3600, 1)], &specs),
        &lull_rank::registry(),
    )
    .unwrap();
    let ranked: Vec<_> = o.summaries.iter().filter(|s| !s.reference).collect();
    assert_eq!(ranked.len(), 2, "three timer(B) rows collapse into one");
    let t = ranked.iter().find(|s| !s.equivalents.is_empty()).unwrap();
    assert_eq!(t.equivalents.len(), 2);
    let csv = fs::read_to_string(tmp.path().join("o/ranking.csv")).unwrap();
    assert!(
        csv.contains("timer(t=B) | timer(t=B) + backoff-geom-geom(initial=B)"),
        "{csv}"
    );
    // Reference rows: best fixed timer, then the oracle (`auto` when it
    // is registered comes first).
    let refs: Vec<String> = o
        .summaries
        .iter()
        .filter(|s| s.reference)
        .map(|s| {
            o.rows
                .iter()
                .find(|r| r.network_index == s.policy)
                .unwrap()
                .spec
                .clone()
        })
        .collect();
    let bf = refs
        .iter()
        .position(|s| s == "best-fixed")
        .expect("best fixed row");
    let oracle = refs.iter().position(|s| s.starts_with("oracle")).unwrap();
    assert!(bf < oracle, "{refs:?}");
    // Every spindown row carries its excess relative to the best fixed
    // timer; the best fixed timer's own is 1.
    for r in &o.rows {
        let e = r.measure("excess_vs_best_fixed");
        assert!(e.is_some(), "{}", r.spec);
        if r.spec == "best-fixed" {
            assert!((e.unwrap() - 1.0).abs() < 1e-9);
        }
    }
    let report = fs::read_to_string(tmp.path().join("o/report.md")).unwrap();
    assert!(report.contains("best fixed timer in hindsight"), "{report}");
    assert!(report.contains("**B = "), "{report}");
}

fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for name in ["results.csv", "ranking.csv", "report.md", "idle_cdf.csv"] {
        out.insert(PathBuf::from(name), fs::read(dir.join(name)).unwrap());
    }
    out
}

#[test]
fn four_shards_from_scheduler_variables_merge_into_one_run() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let sources = vec![workstation(1800, 1), workstation(1800, 2)];
    let whole = tmp.path().join("whole");
    lull_rank::rank(&config(&whole, sources.clone(), &SENSIBLE), &reg).unwrap();
    // Slurm arrays (here `--array=1-4`: ids from SLURM_ARRAY_TASK_MIN)
    // and Kubernetes Indexed Jobs (0-based, count from LULL_SHARD_COUNT).
    let slurm = |i: usize| -> Vec<(&'static str, String)> {
        vec![
            ("SLURM_ARRAY_TASK_ID", (i + 1).to_string()),
            ("SLURM_ARRAY_TASK_MIN", "1".into()),
            ("SLURM_ARRAY_TASK_COUNT", "4".into()),
        ]
    };
    let k8s = |i: usize| -> Vec<(&'static str, String)> {
        vec![
            ("JOB_COMPLETION_INDEX", i.to_string()),
            ("LULL_SHARD_COUNT", "4".into()),
        ]
    };
    type Env = Box<dyn Fn(usize) -> Vec<(&'static str, String)>>;
    for (name, env) in [("slurm", Box::new(slurm) as Env), ("k8s", Box::new(k8s))] {
        let mut dirs = Vec::new();
        for i in 0..4 {
            let vars = env(i);
            let shard =
                Shard::auto_from(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()))
                    .unwrap();
            assert_eq!(
                shard,
                Shard {
                    index: i + 1,
                    count: 4
                }
            );
            let dir = tmp.path().join(format!("{name}{i}"));
            let mut cfg = config(&dir, sources.clone(), &SENSIBLE);
            cfg.shard = shard;
            lull_rank::rank(&cfg, &reg).unwrap();
            dirs.push(dir);
        }
        let merged = tmp.path().join(format!("{name}-merged"));
        lull_rank::merge(&dirs, &merged).unwrap();
        assert_eq!(files(&whole), files(&merged), "{name}");
        // The merged run can be answered differently without re-running.
        let paper = tmp.path().join(format!("{name}-paper"));
        let p = lull_rank::merge_with(&dirs, &paper, |m| m.score = Mode::Paper).unwrap();
        assert_eq!(p.meta.score, Mode::Paper);
        let report = fs::read_to_string(paper.join("report.md")).unwrap();
        assert!(report.contains("§4.1.1"), "{report}");
    }
    assert!(Shard::auto_from(|_| None).is_err());
    assert!(Shard::auto_from(|k| (k == "JOB_COMPLETION_INDEX").then(|| "0".into())).is_err());
    assert!(
        Shard::auto_from(|k| match k {
            "SLURM_ARRAY_TASK_ID" => Some("4".into()),
            "SLURM_ARRAY_TASK_COUNT" => Some("4".into()),
            _ => None,
        })
        .is_err(),
        "index 4 of 4 (0-based) is out of range"
    );
}

/// The recommendation weighs delayed requests alike with energy; where the
/// grid's lowest in energy is another network, the report names it and
/// what it costs in delays.
#[test]
fn the_recommendation_points_to_the_lowest_energy_network() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let sources = vec![workstation(3600, 1), workstation(3600, 2)];
    let o = lull_rank::rank(&config(tmp.path(), sources, &SENSIBLE), &reg).unwrap();
    let report = fs::read_to_string(tmp.path().join("report.md")).unwrap();
    let mean = |spec: &str, m: &str| {
        let v: Vec<f64> = o
            .rows
            .iter()
            .filter(|r| r.spec == spec)
            .map(|r| r.measure(m).unwrap())
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let lowest = SENSIBLE
        .iter()
        .copied()
        .min_by(|a, b| mean(a, "excess_vs_best_fixed").total_cmp(&mean(b, "excess_vs_best_fixed")))
        .unwrap();
    let chosen = recommended(&o);
    assert!(SENSIBLE.contains(&chosen.as_str()), "{chosen}");
    // On these hours the ranking picks a long timer (few delays) and the
    // adaptive timer spends the least energy.
    assert_ne!(lowest, chosen);
    assert!(mean(lowest, "excess_vs_best_fixed") < mean(&chosen, "excess_vs_best_fixed"));
    let pointer = format!("For energy alone, the grid's lowest is `{lowest}`");
    assert!(report.contains(&pointer), "{pointer} in:\n{report}");
    assert!(
        per_hour(&o, lowest) > per_hour(&o, &chosen),
        "it spends less energy by delaying more"
    );
}

/// The report gives the clairvoyant's and the oracle's margins over the
/// best fixed timer, pooled over the traces as a share of the energy of
/// never spinning down: the room `gain_vs_clairvoyant` divides by.
#[test]
fn the_recommendation_says_how_much_room_the_gain_divides() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let sources = vec![workstation(3600, 1), workstation(3600, 2)];
    let o = lull_rank::rank(&config(tmp.path(), sources, &SENSIBLE), &reg).unwrap();
    let report = fs::read_to_string(tmp.path().join("report.md")).unwrap();
    let chosen = recommended(&o);
    let sum = |m: &str| -> f64 {
        o.rows
            .iter()
            .filter(|r| r.spec == chosen)
            .map(|r| r.measure(m).unwrap())
            .sum()
    };
    let base = sum("baseline_energy_j");
    let best = sum("best_fixed_energy_j");
    let cv = 100.0 * (best - sum("window_clairvoyant_energy_j")) / base;
    let oracle = 100.0 * (best - sum("oracle_energy_j")) / base;
    assert!(cv >= 0.0 && oracle >= cv, "{cv} {oracle}");
    let sentence = format!(
        "On these traces the clairvoyant timer spends {cv:.2} % of the energy of never spinning down less than the best fixed timer (the oracle {oracle:.2} %)"
    );
    assert!(report.contains(&sentence), "{sentence} in:\n{report}");
    assert_eq!(
        report.contains("the gain divides by little"),
        cv < lull_tasks::spindown::SMALL_MARGIN_PCT,
        "{report}"
    );
}

/// `lull rank --warm-up`: every network first learns from another stretch
/// of the same built-in workload; one that learns nothing ranks as cold,
/// `auto` does not, and the traces say what they were warmed up on.
#[test]
fn a_warmed_up_rank_changes_what_learns_and_nothing_else() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let office = |warm: bool| {
        let s = Source::Builtin {
            name: "office".into(),
            duration: Nanos::from_secs(86_400),
            seed: 5,
            day: None,
            warm_up: None,
        };
        if warm { s.warmed_up().unwrap() } else { s }
    };
    let specs = ["timer(t=B)", "share()"];
    let cold = lull_rank::rank(
        &config(&tmp.path().join("c"), vec![office(false)], &specs),
        &reg,
    )
    .unwrap();
    let warm = lull_rank::rank(
        &config(&tmp.path().join("w"), vec![office(true)], &specs),
        &reg,
    )
    .unwrap();
    let energy = |o: &Outcome, spec: &str| {
        o.rows
            .iter()
            .find(|r| r.spec == spec)
            .unwrap()
            .measure("energy_j")
            .unwrap()
    };
    assert_eq!(energy(&cold, "timer(t=B)"), energy(&warm, "timer(t=B)"));
    assert_eq!(
        energy(&cold, "oracle(min=B)"),
        energy(&warm, "oracle(min=B)")
    );
    assert_ne!(energy(&cold, "share()"), energy(&warm, "share()"));
    assert_ne!(energy(&cold, "auto"), energy(&warm, "auto"));
    let report = fs::read_to_string(tmp.path().join("w/report.md")).unwrap();
    let seed = lull_rank::warm_up_seed(5);
    assert!(
        report.contains(&format!("seed 5, after learning from seed {seed}")),
        "{report}"
    );
    assert_ne!(seed, lull_rank::day_seed(5, 2), "no day of a run");
    // A trace file has no other stretch to learn from.
    let e = Source::File("x.csv".into()).warmed_up().unwrap_err();
    assert!(e.to_string().contains("x.csv"), "{e}");
}

/// The day on which `quality` failed under `--warm-up` (its judge restored
/// a prediction that began before the new run's clock): every network now
/// finishes there.
#[test]
fn a_warmed_up_quality_network_finishes_on_news_day_three() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let seed = lull_rank::day_seed(1, 3);
    let news = Source::Builtin {
        name: "news".into(),
        duration: Nanos::from_secs(86_400),
        seed,
        day: None,
        warm_up: None,
    }
    .warmed_up()
    .unwrap();
    let spec = "quality(threshold=0.8; timer(t=B) + fixed(d=B))";
    let o = lull_rank::rank(&config(tmp.path(), vec![news], &[spec]), &reg).unwrap();
    assert!(o.rows.iter().any(|r| r.spec == spec), "it ran");
}

/// Shards of two runs over different traces (another seed, or the same
/// days warmed up) are not one run: merging them is refused, naming the
/// trace, where it used to mix their rows silently.
#[test]
fn shards_of_runs_over_different_traces_do_not_merge() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let shard = |dir: &str, sources: Vec<Source>, index: usize| {
        let dir = tmp.path().join(dir);
        let mut cfg = config(&dir, sources, &SENSIBLE);
        cfg.shard = Shard { index, count: 2 };
        lull_rank::rank(&cfg, &reg).unwrap();
        dir
    };
    let one = vec![workstation(1800, 1), workstation(1800, 2)];
    let other = vec![workstation(1800, 1), workstation(1800, 3)];
    let warm: Vec<Source> = one
        .iter()
        .cloned()
        .map(|s| s.warmed_up().unwrap())
        .collect();
    let a = shard("a", one.clone(), 1);
    for (name, sources) in [("seed", other), ("warm", warm)] {
        let b = shard(name, sources, 2);
        let e = lull_rank::merge(&[a.clone(), b], &tmp.path().join(format!("m-{name}")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank different traces"), "{name}: {e}");
    }
    // Its own second shard merges.
    let b = shard("b", one, 2);
    lull_rank::merge(&[a, b], &tmp.path().join("m")).unwrap();
}

/// The steadiest network the report points to achieves something: a
/// timer that never fires scores the same on every trace (it saves
/// nothing and delays nothing), so it would vary least of all.
#[test]
fn the_steadiest_alternative_is_one_that_saves_energy() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let sources = vec![workstation(3600, 1), workstation(3600, 2)];
    let mut specs = SENSIBLE.to_vec();
    specs.push("timer(t=1000B)");
    let o = lull_rank::rank(&config(tmp.path(), sources, &specs), &reg).unwrap();
    let report = fs::read_to_string(tmp.path().join("report.md")).unwrap();
    let never: Vec<f64> = o
        .rows
        .iter()
        .filter(|r| r.spec == "timer(t=1000B)")
        .map(|r| r.measure("energy_saved_pct").unwrap())
        .collect();
    assert!(never.iter().all(|&v| v == 0.0), "{never:?}");
    let sd = |spec: &str| {
        let s = o
            .summaries
            .iter()
            .find(|s| lull_rank::report::network_label(s, &o.rows) == spec)
            .unwrap();
        s.variance.sqrt()
    };
    // It is the steadiest of all, and not named.
    assert!(
        SENSIBLE.iter().all(|s| sd("timer(t=1000B)") <= sd(s)),
        "{report}"
    );
    let steady = report
        .split("If the same behaviour on every workload matters more than the last bit of performance, `")
        .nth(1)
        .and_then(|s| s.split_once('`'))
        .map(|(s, _)| s.to_string())
        .expect("a steadiest alternative");
    assert_ne!(steady, "timer(t=1000B)", "{report}");
    assert!(SENSIBLE.contains(&steady.as_str()), "{steady}");
    let chosen = recommended(&o);
    let steadiest = SENSIBLE
        .iter()
        .filter(|&&s| s != chosen)
        .min_by(|a, b| sd(a).total_cmp(&sd(b)))
        .unwrap();
    assert_eq!(&steady, steadiest, "{report}");
}

/// `ranking.csv` names the excess over the best fixed timer and the gain
/// over the clairvoyant as what they are: ratios of sums over the traces,
/// not means of the per-trace ratios.
#[test]
fn the_ranking_table_calls_the_pooled_ratios_pooled() {
    let reg = lull_rank::registry();
    let tmp = tempfile::tempdir().unwrap();
    let sources = vec![workstation(3600, 1), workstation(3600, 2)];
    let o = lull_rank::rank(&config(tmp.path(), sources, &SENSIBLE), &reg).unwrap();
    let csv = fs::read_to_string(tmp.path().join("ranking.csv")).unwrap();
    // The header's names hold no commas.
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for m in ["excess_vs_best_fixed", "gain_vs_clairvoyant"] {
        assert!(
            header.contains(&format!("pooled_{m}").as_str()),
            "{header:?}"
        );
        assert!(
            !header.contains(&format!("mean_{m}").as_str()),
            "{header:?}"
        );
    }
    // The pooled excess of a network is its total excess energy over the
    // oracle against the best fixed timer's, which is not the mean of the
    // per-trace ratios.
    let spec = recommended(&o);
    let mine: Vec<_> = o.rows.iter().filter(|r| r.spec == spec).collect();
    let m = |r: &&lull_rank::sweep::Row, k: &str| r.measure(k).unwrap();
    let pooled = mine
        .iter()
        .map(|r| m(r, "energy_j") - m(r, "oracle_energy_j"))
        .sum::<f64>()
        / mine
            .iter()
            .map(|r| m(r, "best_fixed_energy_j") - m(r, "oracle_energy_j"))
            .sum::<f64>();
    let col = header
        .iter()
        .position(|h| *h == "pooled_excess_vs_best_fixed")
        .unwrap();
    let line = csv
        .lines()
        .skip(1)
        .find(|l| l.contains(&spec))
        .expect("the recommended network's row");
    let shown: f64 = lull_testkit::csv_fields(line)[col].parse().unwrap();
    assert!(
        (shown - pooled).abs() < 1e-9 * pooled.abs().max(1.0),
        "{shown} against {pooled}"
    );
}

/// The lab's default drive (`paper-2.5in`'s power, `wd-red-plus`'s
/// service times) is `--device paper-2.5in`: both time a model-timed run
/// alike, and the report's first lines say whose service times they are.
#[test]
fn the_report_names_the_drive_whose_service_times_it_used() {
    let tmp = tempfile::tempdir().unwrap();
    let report = |device: Option<&str>, dir: &str| {
        let mut cfg = config(
            &tmp.path().join(dir),
            vec![workstation(600, 1)],
            &["timer(t=B)"],
        );
        cfg.replay.task = "writeback".into();
        cfg.replay.device = device.map(str::to_string);
        lull_rank::rank(&cfg, &lull_rank::registry()).unwrap();
        let text = fs::read_to_string(tmp.path().join(dir).join("report.md")).unwrap();
        text.lines().take(4).collect::<Vec<_>>().join("\n")
    };
    let default = report(None, "default");
    assert!(
        default
            .contains(", the lab's default device `paper-2.5in` (service times of `wd-red-plus`)"),
        "{default}"
    );
    let named = report(Some("paper-2.5in"), "named");
    assert!(
        named.contains(", device `paper-2.5in` (service times of `wd-red-plus`)"),
        "{named}"
    );
    // A drive with service times of its own names no other.
    let own = report(Some("wd-red-plus"), "own");
    assert!(
        own.contains(", device `wd-red-plus`,") || own.contains(", device `wd-red-plus`."),
        "{own}"
    );
    assert!(!own.contains("service times of"), "{own}");
}

/// Where B is shown for a drive whose spin-up figures are assumed
/// (`wd-red-plus`: powers not verified, spin-up time assumed), the answer
/// says so beside it (issue 78); a sourced drive, or one whose spin-up
/// figures the user set, carries no caveat.
#[test]
fn an_unverified_drive_says_so_beside_b() {
    let tmp = tempfile::tempdir().unwrap();
    let first = |device: &str, dir: &str| {
        let mut cfg = config(
            &tmp.path().join(dir),
            vec![workstation(600, 1)],
            &["timer(t=B)"],
        );
        cfg.replay.device = Some(device.to_string());
        lull_rank::rank(&cfg, &lull_rank::registry()).unwrap();
        let text = fs::read_to_string(tmp.path().join(dir).join("report.md")).unwrap();
        text.lines().take(4).collect::<Vec<_>>().join("\n")
    };
    let red = first("wd-red-plus", "red");
    assert!(red.contains("B = 72.414 s (unverified: "), "{red}");
    assert!(red.contains("B may be nearer 50 s"), "{red}");
    let sourced = first("constellation-es2", "es2");
    assert!(!sourced.contains("unverified"), "{sourced}");
    let own = first("wd-red-plus,p_spinup=14.5", "own");
    assert!(!own.contains("unverified"), "{own}");
}

/// Where nothing in the grid saves anything on any trace, the answer
/// leads with leaving the device alone, not with a network to use, and
/// gives no ratio to a reference (each would be 0/0).
#[test]
fn with_nothing_to_save_anywhere_the_answer_is_to_leave_the_device_alone() {
    use lull_blktrace_replay::{Trace, normalized};
    let tmp = tempfile::tempdir().unwrap();
    // A read a second: no gap comes near the default drive's B (3 s).
    let path = tmp.path().join("busy.csv");
    let mut trace = Trace {
        devices: vec!["d".into()],
        ..Trace::default()
    };
    let ms = Nanos::from_millis;
    for i in 0..600u64 {
        let t = i * 1000;
        trace
            .requests
            .push(Request::new(ms(t), ms(t + 10), Op::Read, i * 8, 4096));
    }
    normalized::write(&trace, &mut fs::File::create(&path).unwrap()).unwrap();
    let cfg = config(
        &tmp.path().join("out"),
        vec![Source::File(path)],
        &["timer(t=B/2)", "timer(t=2B)"],
    );
    lull_rank::rank(&cfg, &lull_rank::registry()).unwrap();
    let report = fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    // The report's first line under its title, then the first detail.
    let first = report.lines().nth(2).unwrap();
    assert!(
        first.starts_with(
            "**Leave the device alone**: nothing in the grid achieves any energy saved (%)"
        ),
        "{first}"
    );
    assert!(!first.contains("**Use"), "{first}");
    let answer = report
        .split("## Details\n\n")
        .nth(1)
        .and_then(|r| r.lines().find(|l| l.starts_with("- For ")))
        .unwrap();
    assert!(
        answer.contains(
            "**leave the device alone: nothing in the grid achieves any energy saved (%) there**"
        ),
        "{answer}"
    );
    assert!(!answer.contains("use **`"), "{answer}");
    assert!(!answer.contains("(some traces)"), "{answer}");
    for ratio in [
        "excess_vs_best_fixed",
        "gain_vs_clairvoyant",
        "competitive ratio",
    ] {
        assert!(!answer.contains(ratio), "{ratio}: {answer}");
    }
}

/// `report.md` opens with the answer (issue 78): under its title, three
/// lines (the network to use; what it saves beside hd-idle's 10 minutes
/// and the best fixed timeout; the spin-ups it costs a day), then the
/// answer's table, all within the first screen of 30 lines.
#[test]
fn the_report_opens_with_the_answer_and_its_table() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = config(
        &tmp.path().join("a"),
        vec![workstation(3600, 1), workstation(3600, 2)],
        &SENSIBLE,
    );
    cfg.grid.references = lull_rank::grid::default_references_for("spindown");
    let o = lull_rank::rank(&cfg, &lull_rank::registry()).unwrap();
    let report = fs::read_to_string(tmp.path().join("a/report.md")).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    let picked = lull_rank::report::pick(&o.summaries, &o.rows, &o.meta.limits).unwrap();
    let name = o
        .rows
        .iter()
        .find(|r| r.network_index == picked)
        .map(|r| r.spec.clone())
        .unwrap();
    assert!(
        lines[2].starts_with(&format!("**Use `{name}`**")),
        "{report}"
    );
    assert!(lines[2].contains("for `spindown` on 2 traces"), "{report}");
    assert!(
        lines[3].starts_with("It saves ")
            && lines[3].contains(" than hd-idle's 10 minutes (`timer(t=600s)`, ")
            && lines[3].contains(" than the best fixed timeout in hindsight ("),
        "{report}"
    );
    assert!(
        lines[4].starts_with("It costs ")
            && lines[4].contains(" spin-ups a day (hd-idle's 10 minutes "),
        "{report}"
    );
    // The table, within the first screen: the pick, hd-idle's row and the
    // best fixed timeout, with the figures the lines quote.
    let first_screen = &lines[..30.min(lines.len())];
    let table: Vec<&str> = first_screen
        .iter()
        .copied()
        .skip_while(|l| !l.starts_with("| role |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() >= 5, "{report}");
    assert!(
        table[2].starts_with(&format!("| use | `{name}`")),
        "{report}"
    );
    let hd = table
        .iter()
        .find(|l| l.starts_with("| hd-idle 10 min | `timer(t=600s)` (hd-idle's default) |"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        table
            .iter()
            .any(|l| l.starts_with("| best fixed in hindsight |")),
        "{report}"
    );
    // The line's figures are the table's, to the decimal shown: the
    // pick's share, hd-idle's, and the difference between them.
    let saved = |row: &str| -> f64 { row.split('|').nth(3).unwrap().trim().parse().unwrap() };
    let (mine, theirs) = (saved(table[2]), saved(hd));
    assert!(
        lines[3].starts_with(&format!("It saves {mine:.1} % of the energy")),
        "{mine}: {report}"
    );
    assert!(
        lines[3].contains(&format!("(`timer(t=600s)`, {theirs:.1} %)")),
        "{theirs}: {report}"
    );
    let d = mine - theirs;
    let said = if d > 0.0 {
        format!("{d:.1} percentage points more than hd-idle's")
    } else {
        format!("{:.1} percentage points fewer than hd-idle's", -d)
    };
    assert!(lines[3].contains(&said), "{said}: {report}");
    // The details come after the answer.
    let details = lines.iter().position(|l| *l == "## Details").unwrap();
    assert!(details > 4 + table.len(), "{report}");
}
