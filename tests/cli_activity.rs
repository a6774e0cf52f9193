//! The `lull` binary on the daemon's activity logs: `lull replay` and
//! `lull rank --from-daemon` read them, `--emit-config` prints a
//! `[[disk]]` table the daemon accepts, damage is an input error.

use std::path::{Path, PathBuf};

use lull_blktrace_replay::activity::lull_activity::record::header;
use lull_blktrace_replay::activity::lull_activity::{Counts, Poll, PollKind, Record, Session};
use lull_core::time::Nanos;

mod common;
use common::{lull, stderr, stdout};

const S: u64 = 1_000_000_000;
const KEY: &str = "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-TEST";

fn session() -> Session {
    session_with(None)
}

/// The session of a log that records the wear budget `budget` (`None`: a
/// log written before sessions recorded it).
fn session_with(budget: Option<u32>) -> Session {
    Session {
        clock: Nanos(1_700_000_000 * S),
        poll: Nanos(S),
        key: KEY.into(),
        kernel: "sdb".into(),
        drive: "wd-red-plus".into(),
        task: "standby".into(),
        network: "auto".into(),
        max_spindowns_per_day: budget,
        saves_learned: budget.is_some(),
        dry_run: false,
        drive_id: None,
        continues: false,
    }
}

fn poll(t0: u64, t: u64, kind: PollKind, reads: u64, writes: u64) -> Record {
    Record::Poll(Poll {
        t0: Nanos(t0 * S),
        t: Nanos(t * S),
        kind,
        counts: Counts {
            reads,
            writes,
            sectors: (reads + writes) * 8,
            io_ms: 5,
            ..Counts::default()
        },
        held_since: None,
        held_after: false,
    })
}

/// A segment: a session, a baseline, then bursts of a few busy seconds
/// separated by idle gaps from 20 s to 40 min, over about 5 hours.
fn segment() -> Vec<u8> {
    segment_of(session())
}

/// [`segment`] under the session `s`.
fn segment_of(s: Session) -> Vec<u8> {
    let mut out = header().to_vec();
    Record::Session(s).encode(&mut out);
    poll(1, 1, PollKind::Baseline, 0, 0).encode(&mut out);
    let gaps = [20, 300, 45, 1200, 90, 2400, 30, 600, 150, 1800, 60, 900];
    let mut t = 1;
    for i in 0..24 {
        for k in 0..3 {
            poll(t + k, t + k + 1, PollKind::Normal, 3 + k, 2).encode(&mut out);
        }
        t += 3 + gaps[i % gaps.len()];
    }
    Record::Mark(Nanos(t * S)).encode(&mut out);
    out
}

/// `lull replay FILE EXTRA… --format json`, which must succeed: its
/// measures and its stderr.
fn replay_json(file: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec!["replay", file, "--format", "json"];
    args.extend_from_slice(extra);
    let out = lull(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (v, stderr(&out))
}

/// Measure `k` of a JSON replay.
fn num(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"))
}

fn write(path: &Path, bytes: &[u8]) -> String {
    std::fs::write(path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

/// The emitted snippet, parsed as the daemon parses its config.
fn parse_config(text: &str) -> lull_live::Config {
    lull_live::config::Config::parse(
        Path::new("emitted.toml"),
        text,
        &lull_live::default_registry(),
    )
    .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn replay_reads_a_segment_and_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir.path().join("0001.lact"), &segment());
    for input in [file.as_str(), dir.path().to_str().unwrap()] {
        let out = lull(&[
            "replay",
            input,
            "--net",
            "timer(10s)",
            "--task",
            "spindown",
            "--device",
            "wd-red-plus",
            "--format",
            "json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let spinups = v["spinups"].as_f64().expect("spinups");
        // Every gap of at least 45 s is slept through (not the 20 and
        // 30 s ones).
        assert!(spinups >= 10.0, "{v}");
    }
    let out = lull(&["trace", "info", &file]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("activity-log"), "{}", stdout(&out));
}

/// A daemon that polls once a second cannot run a timeout shorter than
/// a second, and the log's gaps shorter than a poll are its
/// reconstruction (a poll's requests spread evenly over it): the
/// references of a replay of the log are judged from the poll on, where
/// the same requests as a plain trace find a best fixed timeout of a
/// tenth of a second between those reconstructed requests.
#[test]
fn replay_of_a_log_judges_fixed_timeouts_from_the_daemons_poll() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = header().to_vec();
    let mut s = session();
    s.drive = "paper-2.5in".into();
    Record::Session(s).encode(&mut bytes);
    poll(1, 1, PollKind::Baseline, 0, 0).encode(&mut bytes);
    let mut t = 1;
    for i in 0..40u64 {
        // Three busy polls of eight reads (gaps of about an eighth of a
        // second inside each), then 4 to 11 s of quiet.
        for k in 0..3 {
            poll(t + k, t + k + 1, PollKind::Normal, 8, 0).encode(&mut bytes);
        }
        t += 3 + 4 + i % 8;
    }
    Record::Mark(Nanos(t * S)).encode(&mut bytes);
    let log = write(&dir.path().join("0001.lact"), &bytes);
    let csv = dir.path().join("same.csv");
    let out = lull(&["trace", "convert", &log, "-o", csv.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = |input: &str| {
        let out = lull(&[
            "replay",
            input,
            "--net",
            "timer(2s)",
            "--task",
            "spindown",
            "--device",
            "paper-2.5in",
            "--format",
            "json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let (from_log, plain) = (json(&log), json(csv.to_str().unwrap()));
    let timeout = |v: &serde_json::Value| v["best_fixed_timeout_s"].as_f64().unwrap();
    assert_eq!(from_log["baseline_energy_j"], plain["baseline_energy_j"]);
    assert!(timeout(&plain) < 0.5, "{plain}");
    assert!(timeout(&from_log) >= 1.0, "{from_log}");
    let energy = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
    // Fewer choices: never better than the unfloored references.
    for k in ["best_fixed_energy_j", "window_clairvoyant_energy_j"] {
        assert!(
            energy(&from_log, k) >= energy(&plain, k),
            "{k}: {from_log} {plain}"
        );
    }
    assert_eq!(from_log["oracle_energy_j"], plain["oracle_energy_j"]);
    // `lull rank --from-daemon` judges its reference rows the same way.
    let out_dir = dir.path().join("ranked");
    let out = rank_from_daemon(&log, &["--jobs", "1", "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    for (spec, t) in columns(&csv, "best_fixed_timeout_s") {
        assert_eq!(t, timeout(&from_log), "{spec}");
    }
}

#[test]
fn replay_of_a_log_defaults_to_how_the_daemon_ran() {
    // The log's session: wd-red-plus (B = 72 s), auto, standby. Without
    // flags the replay is of that; a flag still wins.
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir.path().join("0001.lact"), &segment());
    let json = |extra: &[&str]| {
        let mut args = vec!["replay", file.as_str(), "--format", "json"];
        args.extend_from_slice(extra);
        let out = lull(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, stderr(&out))
    };
    let (v, err) = json(&[]);
    assert!(
        err.contains("replaying its drive wd-red-plus, network auto, task spindown"),
        "{err}"
    );
    // Spin-down measures: the task is the daemon's standby.
    assert!(v["spinups"].as_f64().is_some(), "{v}");
    // auto's own gauges: the network is the daemon's.
    assert!(v["gauges"]["n0.p_long"].as_f64().is_some(), "{v}");
    let (flagged, err) = json(&["--device", "paper-2.5in", "--net", "timer(10s)"]);
    assert!(
        err.contains("task spindown") && !err.contains("drive"),
        "{err}"
    );
    // Another drive: another energy for the same trace.
    assert_ne!(flagged["baseline_energy_j"], v["baseline_energy_j"]);
    assert!(flagged["gauges"].get("n0.p_long").is_none(), "{flagged}");
    let (none, _) = json(&["--task", "none"]);
    assert!(none.get("spinups").is_none(), "{none}");
}

#[test]
fn replay_of_a_log_makes_the_daemons_checks_before_a_spin_down() {
    let dir = tempfile::tempdir().unwrap();
    let one_a_day = write(
        &dir.path().join("a.lact"),
        &segment_of(session_with(Some(1))),
    );
    let older = write(&dir.path().join("b.lact"), &segment());
    let run = replay_json;
    // The log's budget, one a day: the bucket holds one, so one spin-down
    // in these 5 hours, where a 10 s timer would sleep through 10 gaps.
    let (v, err) = run(&one_a_day, &["--net", "timer(10s)"]);
    assert_eq!(num(&v, "spinups"), 1.0, "{v}");
    assert!(num(&v, "refused_wear_budget") >= 9.0, "{v}");
    assert_eq!(num(&v, "refused_below_break_even"), 0.0, "{v}");
    assert!(!err.contains("does not record"), "{err}");
    // The lab's model: every gap of 45 s or more.
    let (lab, _) = run(
        &one_a_day,
        &["--net", "timer(10s)", "--standby-checks", "none"],
    );
    assert!(num(&lab, "spinups") >= 10.0, "{lab}");
    assert!(lab.get("refused_wear_budget").is_none(), "{lab}");
    // A budget on the command line wins over the log's.
    let (more, _) = run(
        &one_a_day,
        &["--net", "timer(10s)", "--max-spindowns-per-day", "1000"],
    );
    assert_eq!(num(&more, "spinups"), num(&lab, "spinups"), "{more}");
    // An older log: no budget to replay, said; the break-even check still
    // refuses what the daemon refused (30 s predicted, B = 72 s).
    let (old, err) = run(&older, &["--net", "timer(10s) + fixed(30s)"]);
    assert!(
        err.contains("does not record the daemon's wear budget"),
        "{err}"
    );
    assert_eq!(num(&old, "spinups"), 0.0, "{old}");
    assert!(num(&old, "refused_below_break_even") >= 10.0, "{old}");
    // The text output says which checks were made.
    let out = lull(&["replay", &one_a_day, "--net", "timer(10s)"]);
    assert!(
        stdout(&out).contains("checks   the daemon's: wear budget 1 spin-downs a day"),
        "{}",
        stdout(&out)
    );
    // ... and that the references kept the budget as lull did.
    assert!(
        stdout(&out).contains("the best fixed timeout and the clairvoyant held to the budget too"),
        "{}",
        stdout(&out)
    );
    // The flags are spin-down's, and the budget is a daemon's check.
    for bad in [
        vec!["--standby-checks", "none", "--max-spindowns-per-day", "3"],
        vec!["--task", "none", "--max-spindowns-per-day", "3"],
    ] {
        let mut args = vec!["replay", one_a_day.as_str()];
        args.extend_from_slice(&bad);
        let out = lull(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
    }
    // A trace with the daemon's checks: its budget, the drive's B.
    let out = lull(&[
        "replay",
        "--duration",
        "6h",
        "--task",
        "spindown",
        "--net",
        "timer(1s)",
        "--max-spindowns-per-day",
        "6",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // One at once, then one per 4 h.
    assert!(num(&v, "spinups") <= 2.0, "{v}");
    assert!(num(&v, "refused_wear_budget") > 0.0, "{v}");
}

/// A log whose daemon left the disk alone (no transport reached it) from
/// the first decision on: `lull replay` withholds its standbys too, says
/// so, and `--standby-checks none` shows what the network would have done.
#[test]
fn replay_of_a_log_of_a_disk_left_alone_spins_nothing_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = segment_of(session_with(Some(1000)));
    // Before the first decision (a daemon writes it at that decision).
    Record::Withheld {
        t: Nanos(2 * S),
        why: "no transport reaches the drive".into(),
    }
    .encode(&mut bytes);
    // A later poll: the record sits in time order among the others in a
    // real log, and the rebuild does not need it to.
    poll(20_000, 20_001, PollKind::Normal, 1, 0).encode(&mut bytes);
    let file = write(&dir.path().join("alone.lact"), &bytes);
    let json = |extra: &[&str]| {
        let mut args = vec!["--net", "timer(10s)"];
        args.extend_from_slice(extra);
        replay_json(&file, &args)
    };
    let (v, err) = json(&[]);
    assert_eq!(num(&v, "spinups"), 0.0, "{v}");
    assert!(num(&v, "withheld_by_daemon") >= 10.0, "{v}");
    assert_eq!(num(&v, "failed_standbys"), 0.0, "{v}");
    assert_eq!(num(&v, "energy_j"), num(&v, "baseline_energy_j"), "{v}");
    assert!(
        err.contains("the daemon sent no standby for")
            && err.contains("(no transport reaches the drive)")
            && err.contains("--standby-checks none"),
        "{err}"
    );
    let (lab, err) = json(&["--standby-checks", "none"]);
    assert!(num(&lab, "spinups") >= 10.0, "{lab}");
    assert!(lab.get("withheld_by_daemon").is_none(), "{lab}");
    assert!(!err.contains("sent no standby"), "{err}");
    let out = lull(&["replay", &file, "--net", "timer(10s)"]);
    assert!(
        stdout(&out).contains("none where it withheld them"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn replay_of_a_log_restarts_the_network_where_the_daemon_did() {
    // Two daemon runs of about 5 hours, the second started 6 hours after
    // the first: the replay rebuilds `auto` once, as the daemon did.
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("log");
    std::fs::create_dir(&logs).unwrap();
    write(&logs.join("0001.lact"), &segment_of(session_with(Some(48))));
    let mut later = session_with(Some(48));
    later.clock = Nanos(later.clock.0 + 6 * 3600 * S);
    write(&logs.join("0002.lact"), &segment_of(later));
    let dir_arg = logs.to_str().unwrap();
    let out = lull(&["replay", dir_arg, "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["restarts"].as_f64(), Some(1.0), "{v}");
    assert!(
        stderr(&out).contains("holds 2 runs: the network restarts where the daemon did"),
        "{}",
        stderr(&out)
    );
    // As one run: no restart.
    let one = lull(&["replay", dir_arg, "--format", "json", "--one-run"]);
    assert!(one.status.success(), "{}", stderr(&one));
    let w: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert!(w.get("restarts").is_none(), "{w}");
    assert!(!stderr(&one).contains("runs:"), "{}", stderr(&one));
    // --restart-every asks for other restarts.
    let every = lull(&["replay", dir_arg, "--restart-every", "1h", "--one-run"]);
    assert_eq!(every.status.code(), Some(2), "{}", stderr(&every));
    // `lull rank --from-daemon` replays each network as `lull replay` does,
    // restarts included: the same energy for `auto`.
    let grid = dir.path().join("grid.toml");
    std::fs::write(&grid, "specs = [\"long-idle()\", \"share()\"]\n").unwrap();
    let keep = dir.path().join("out");
    let ranked = rank_from_daemon(
        dir_arg,
        &[
            "--grid",
            grid.to_str().unwrap(),
            "--jobs",
            "1",
            "--out",
            keep.to_str().unwrap(),
        ],
    );
    assert!(ranked.status.success(), "{}", stderr(&ranked));
    let csv = std::fs::read_to_string(keep.join("ranking.csv")).unwrap();
    let ranked = column(&csv, "long-idle()", "mean_energy_saved_pct");
    let saved = |v: &serde_json::Value| v["energy_saved_pct"].as_f64().unwrap();
    // The restart changes what `auto` (long-idle) saves on this log…
    assert!((saved(&v) - saved(&w)).abs() > 1e-6, "{v} {w}");
    // …and the ranking has the replay's figure, restarts included.
    assert!((ranked - saved(&v)).abs() < 1e-9, "{csv}\n{v}");
}

#[test]
fn replay_of_a_log_replays_each_run_with_the_network_it_ran() {
    // A 10 s timer for a run, then `auto`: the replay runs each, unless
    // --net asks for one network throughout.
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("log");
    std::fs::create_dir(&logs).unwrap();
    let mut timer = session_with(Some(48));
    timer.network = "timer(10s)".into();
    write(&logs.join("0001.lact"), &segment_of(timer));
    let mut auto = session_with(Some(48));
    auto.clock = Nanos(auto.clock.0 + 6 * 3600 * S);
    write(&logs.join("0002.lact"), &segment_of(auto));
    let json = |extra: &[&str]| {
        let mut args = vec!["replay", logs.to_str().unwrap(), "--format", "json"];
        args.extend_from_slice(extra);
        let out = lull(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, stderr(&out))
    };
    let (own, err) = json(&[]);
    assert!(
        err.contains("each run is replayed with its own (run 1 timer(10s), run 2 auto"),
        "{err}"
    );
    let (all_auto, err) = json(&["--net", "auto"]);
    assert!(!err.contains("its own"), "{err}");
    let (all_timer, _) = json(&["--net", "timer(10s)"]);
    // Each run as it ran is neither network throughout.
    let saved = |v: &serde_json::Value| v["energy_saved_pct"].as_f64().unwrap();
    assert_ne!(saved(&own), saved(&all_auto), "{own}");
    assert_ne!(saved(&own), saved(&all_timer), "{own}");
    assert_eq!(own["restarts"].as_f64(), Some(1.0), "{own}");
}

/// `lull rank --from-daemon ARG` with `extra` flags.
fn rank_from_daemon(arg: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["rank", "--from-daemon", arg];
    args.extend_from_slice(extra);
    lull(&args)
}

/// The column `name` of every row of a ranking CSV, by spec.
fn columns(csv: &str, name: &str) -> Vec<(String, f64)> {
    let fields = lull_testkit::csv_fields;
    let mut lines = csv.lines();
    let head = fields(lines.next().unwrap());
    let at = head.iter().position(|h| h == name).expect(name);
    lines
        .map(|l| {
            let f = fields(l);
            (f[1].clone(), f[at].parse().unwrap())
        })
        .collect()
}

/// The column `name` of the row of `spec` in a ranking CSV.
fn column(csv: &str, spec: &str, name: &str) -> f64 {
    columns(csv, name)
        .into_iter()
        .find(|(s, _)| s == spec)
        .unwrap_or_else(|| panic!("no row {spec}: {csv}"))
        .1
}

#[test]
fn rank_from_a_log_directory_emits_a_config_the_daemon_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("log");
    std::fs::create_dir(&logs).unwrap();
    write(&logs.join("0001.lact"), &segment());
    let out = rank_from_daemon(logs.to_str().unwrap(), &["--emit-config", "--jobs", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // The ranking goes to stderr, the TOML alone to stdout.
    assert!(stderr(&out).contains("task spindown"), "{}", stderr(&out));
    assert!(!text.contains("task spindown"), "{text}");
    let cfg = parse_config(&text);
    assert_eq!(cfg.disks.len(), 1);
    let d = &cfg.disks[0];
    assert_eq!(d.device, KEY);
    assert_eq!(d.preset.as_deref(), Some("wd-red-plus"));
    assert_eq!(d.task.name(), "standby");
    assert!(!d.network.is_empty());
    // No R left: the daemon does not know the trace's mean rate.
    assert!(!writes_rate_relative(&d.network), "{}", d.network);
    // A log that records its wear budget: the winner was ranked under it,
    // and the emitted table keeps it.
    write(&logs.join("0001.lact"), &segment_of(session_with(Some(24))));
    let out = rank_from_daemon(logs.to_str().unwrap(), &["--emit-config", "--jobs", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let cfg = parse_config(&stdout(&out));
    match cfg.disks[0].task {
        lull_live::config::TaskConfig::Standby {
            max_spindowns_per_day,
            ..
        } => assert_eq!(max_spindowns_per_day, 24),
        ref other => panic!("{other:?}"),
    }
}

/// The network the daemon ran is ranked beside the grid, and says where
/// it came; the emitted table says which keys of the entry it cannot know.
#[test]
fn rank_from_daemon_ranks_the_network_the_daemon_ran() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("log");
    std::fs::create_dir(&logs).unwrap();
    let mut s = session_with(Some(48));
    s.network = "timer(95s)".into();
    write(&logs.join("0001.lact"), &segment_of(s));
    let keep = dir.path().join("out");
    let out = rank_from_daemon(
        logs.to_str().unwrap(),
        &["--jobs", "1", "--out", keep.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("the daemon ran `timer(95s)`: rank "))
        .unwrap_or_else(|| panic!("{text}"));
    let csv = std::fs::read_to_string(keep.join("ranking.csv")).unwrap();
    // Its row (reference rows have no rank: not a number to parse).
    let rank = csv
        .lines()
        .find(|l| l.split(',').nth(1) == Some("timer(95s)"))
        .and_then(|l| l.split(',').next())
        .unwrap_or_else(|| panic!("no row timer(95s): {csv}"));
    assert!(
        line.contains(&format!("rank {rank} of ")),
        "{line} against {rank}"
    );
    // The emitted table says what the log does not hold.
    let out = rank_from_daemon(logs.to_str().unwrap(), &["--emit-config", "--jobs", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(compare_timeout, backend, hooks, ...): keep yours"),
        "{}",
        stdout(&out)
    );
}

/// Whether a spec still writes a rate relative to `R` (`rate=R/4`).
fn writes_rate_relative(spec: &str) -> bool {
    spec.split(['=', ',', ')', ';'])
        .any(|v| v.trim().ends_with('R') || v.contains("R/"))
}

#[test]
fn rank_from_daemon_finds_a_disk_by_key_or_kernel_name() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let logs: PathBuf = dir
        .path()
        .join("activity")
        .join("_dev_disk_by-id_ata-WDC_WD40EFRX-68N32N0_WD-TEST");
    std::fs::create_dir_all(&logs).unwrap();
    write(&logs.join("0001.lact"), &segment());
    let keep = dir.path().join("out");
    for disk in [KEY, "sdb", "/dev/sdb"] {
        let out = rank_from_daemon(
            disk,
            &[
                "--state",
                state.to_str().unwrap(),
                "--jobs",
                "1",
                "--out",
                keep.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{disk}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("task spindown"), "{text}");
        assert!(text.contains("ranking.csv"), "{text}");
    }
    assert!(keep.join("ranking.csv").is_file());
    let out = rank_from_daemon("sdz", &["--state", state.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(KEY), "{}", stderr(&out));
}

#[test]
fn rank_from_daemon_makes_the_daemons_checks() {
    // The most spin-ups a day of any network ranked on the log `session`
    // writes (its segment spans about 4 hours), the oracle left out.
    let most_spinups = |session: Session| {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("log");
        std::fs::create_dir(&logs).unwrap();
        write(&logs.join("0001.lact"), &segment_of(session));
        let keep = dir.path().join("out");
        let out = rank_from_daemon(
            logs.to_str().unwrap(),
            &["--jobs", "1", "--out", keep.to_str().unwrap()],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let csv = std::fs::read_to_string(keep.join("ranking.csv")).unwrap();
        // The oracle ignores the budget: it is the bound, not a choice.
        columns(&csv, "mean_spinups_per_day")
            .into_iter()
            .filter(|(spec, _)| !spec.starts_with("oracle"))
            .map(|(_, v)| v)
            .fold(0.0, f64::max)
    };
    // A wear budget of one a day: one spin-down in the log's hours for
    // every network (one in 4 hours is 6 a day).
    let one = most_spinups(session_with(Some(1)));
    assert!(one > 0.0 && one <= 6.1, "{one}");
    // A log that records no budget: networks spin down as they decide.
    let free = most_spinups(session());
    assert!(free > 20.0, "{free}");
}

/// Under a wear budget the best fixed timer in hindsight is the best one
/// under that budget: the one that is best without it spends the budget
/// in the first gaps that outlast it. The reference row says so and
/// saves at least what every fixed timer the grid ranked saves.
#[test]
fn rank_from_daemon_s_best_fixed_timer_is_the_best_under_the_wear_budget() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("log");
    std::fs::create_dir(&logs).unwrap();
    let keep = dir.path().join("out");
    let saved = |budget: Option<u32>| {
        write(&logs.join("0001.lact"), &segment_of(session_with(budget)));
        let out = rank_from_daemon(
            logs.to_str().unwrap(),
            &["--jobs", "1", "--out", keep.to_str().unwrap()],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let csv = std::fs::read_to_string(keep.join("ranking.csv")).unwrap();
        let report = std::fs::read_to_string(keep.join("report.md")).unwrap();
        (
            columns(&csv, "mean_energy_saved_pct"),
            report,
            columns(&csv, "pooled_excess_vs_best_fixed"),
        )
    };
    let (rows, report, excess) = saved(Some(1));
    // Every row is judged against that reference, as `lull status` and
    // `lull replay` of the log judge lull: the reference's own row is 1.
    let own = excess
        .iter()
        .find(|(spec, _)| spec == "best-fixed")
        .map(|r| r.1)
        .expect("a best-fixed row");
    assert!((own - 1.0).abs() < 1e-9, "{own}: {excess:?}");
    let best = rows
        .iter()
        .find(|(spec, _)| spec == "best-fixed")
        .map(|r| r.1)
        .expect("a best-fixed row");
    let timers: Vec<f64> = rows
        .iter()
        .filter(|(spec, _)| spec.starts_with("timer(t="))
        .map(|r| r.1)
        .collect();
    assert!(!timers.is_empty(), "{rows:?}");
    for t in &timers {
        assert!(
            best >= *t - 1e-9,
            "best fixed {best} < a timer's {t}: {rows:?}"
        );
    }
    assert!(
        report.contains("best fixed timer in hindsight under the wear budget"),
        "{report}"
    );
    // The oracle ignores the budget: no network saves more.
    let oracle = rows
        .iter()
        .find(|(spec, _)| spec.starts_with("oracle"))
        .map(|r| r.1)
        .expect("an oracle row");
    for (spec, v) in &rows {
        assert!(
            oracle >= *v - 1e-9,
            "{spec} saves {v} > the oracle's {oracle}"
        );
    }
    // Without a budget, the exact best fixed timer, as before.
    let (_, report, _) = saved(None);
    assert!(report.contains("best fixed timer in hindsight"), "{report}");
    assert!(!report.contains("under the wear budget"), "{report}");
}

/// A log whose daemon ran with `max_spindowns_per_day = 0` (it never spun
/// the disk down: hd-idle's `-i 0`, or only watching): under that budget
/// every network saves nothing and the ranking was one tie. It is ranked
/// without one, with a note, and `--emit-config` says which budget its
/// table takes; `lull replay` of the log still replays it as it ran.
#[test]
fn rank_from_daemon_ranks_a_log_with_a_budget_of_zero_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("log");
    std::fs::create_dir(&logs).unwrap();
    write(&logs.join("0001.lact"), &segment_of(session_with(Some(0))));
    let keep = dir.path().join("out");
    let out = rank_from_daemon(
        logs.to_str().unwrap(),
        &["--jobs", "1", "--out", keep.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("had a wear budget of 0 spin-downs a day"),
        "{}",
        stderr(&out)
    );
    let csv = std::fs::read_to_string(keep.join("ranking.csv")).unwrap();
    let rows = columns(&csv, "mean_energy_saved_pct");
    let timers: Vec<f64> = rows
        .iter()
        .filter(|(spec, _)| spec.starts_with("timer(t="))
        .map(|r| r.1)
        .collect();
    assert!(timers.iter().any(|&v| v > 1.0), "{rows:?}");
    let report = std::fs::read_to_string(keep.join("report.md")).unwrap();
    assert!(!report.contains("under the wear budget"), "{report}");
    let emitted = rank_from_daemon(logs.to_str().unwrap(), &["--jobs", "1", "--emit-config"]);
    assert!(emitted.status.success(), "{}", stderr(&emitted));
    let toml = String::from_utf8_lossy(&emitted.stdout);
    assert!(!toml.contains("\nmax_spindowns_per_day"), "{toml}");
    assert!(
        toml.contains("takes the daemon's default (48 a day)"),
        "{toml}"
    );
    // The replay is the daemon's: nothing spun down.
    let out = lull(&["replay", logs.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["spinups"].as_f64(), Some(0.0), "{v}");
}

#[test]
fn a_torn_tail_is_a_note_and_damage_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut torn = segment();
    let n = torn.len();
    poll(100_000, 100_001, PollKind::Normal, 1, 0).encode(&mut torn);
    torn.truncate(n + 4);
    let torn = write(&dir.path().join("torn.lact"), &torn);
    let out = lull(&["replay", &torn, "--net", "timer(10s)", "--task", "spindown"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("torn"), "{}", stderr(&out));

    // Flip a byte inside the first poll's frame: good frames follow.
    let mut bad = header().to_vec();
    Record::Session(session()).encode(&mut bad);
    let at = bad.len();
    bad.extend_from_slice(&segment()[at..]);
    bad[at + 2] ^= 0x55;
    let bad = write(&dir.path().join("bad.lact"), &bad);
    for args in [
        vec!["replay", bad.as_str(), "--net", "timer(10s)"],
        vec!["rank", "--from-daemon", bad.as_str()],
        vec!["trace", "info", bad.as_str()],
    ] {
        let out = lull(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let e = stderr(&out);
        assert!(e.contains("bad.lact"), "{e}");
        assert!(e.contains(&format!("byte offset {at}")), "{e}");
    }
}
