//! `lull rank`: sweep a grid of detector networks over traces for one idle
//! task and rank them (§4.1.1), writing tables, plots and a report; `lull
//! rank merge` combines shard outputs.
//!
//! `lull rank --from-daemon DISK|PATH` ranks on a disk's activity log, the
//! daemon's own record of what it saw ([`lull_blktrace_replay::activity`]):
//! task spindown, the drive the daemon used, the default grid unless
//! `--grid`. With `--emit-config` the winner is printed on stdout as a
//! `[[disk]]` table for the daemon's configuration, and the ranking goes to
//! stderr, so `lull rank --from-daemon sdb --emit-config > sdb.toml` keeps
//! only the TOML.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use lull_blktrace_replay::replay::{ReplayOptions, Timing};
use lull_core::actuator::StopPolicy;
use lull_core::time::{Nanos, parse_duration};
use lull_rank::{Grid, Limits, Mode, RankConfig, RankError, Shard, Source};

use super::CliError;

impl From<RankError> for CliError {
    fn from(e: RankError) -> Self {
        if e.is_input_error() {
            CliError::Input(e.into())
        } else {
            CliError::Runtime(e.into())
        }
    }
}

/// Flags of `lull rank`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
#[command(mut_arg("disk", |a| a.help(
    "Which device of a multi-device trace (default: the busiest; `all` ranks every device as a trace of its own)"
)))]
pub(crate) struct Args {
    #[command(subcommand)]
    sub: Option<Sub>,
    #[command(flatten)]
    run: Box<RunArgs>,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Combine the output directories of `--shard` runs into one run.
    Merge(MergeArgs),
}

/// Limits the recommendation keeps on every trace.
#[derive(Debug, Clone, clap::Args)]
struct LimitArgs {
    /// Spindown: at most N spin-ups a day (the daemon's
    /// `max_spindowns_per_day`).
    #[arg(long, value_name = "N")]
    max_spinups_per_day: Option<f64>,
    /// Spindown: at most N requests delayed by a spin-up per hour.
    #[arg(long, value_name = "N")]
    max_delayed_per_hour: Option<f64>,
    /// Writeback: the queue never holds more than N bytes.
    #[arg(long, value_name = "N")]
    max_queue_bytes: Option<f64>,
    /// Cleaning: it adds at most N ms to requests on average.
    #[arg(long, value_name = "N")]
    max_added_delay_ms: Option<f64>,
}

impl LimitArgs {
    fn limits(&self) -> Result<Limits, CliError> {
        let l = Limits {
            max_spinups_per_day: self.max_spinups_per_day,
            max_delayed_per_hour: self.max_delayed_per_hour,
            max_queue_bytes: self.max_queue_bytes,
            max_added_delay_ms: self.max_added_delay_ms,
        };
        for (flag, _, v) in l.list() {
            if !(v.is_finite() && v >= 0.0) {
                return Err(CliError::input(anyhow!(
                    "{flag} {v}: must be a number >= 0"
                )));
            }
        }
        Ok(l)
    }
}

/// Flags of `lull rank merge`.
#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// Shard output directories.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Output directory of the merged run.
    #[arg(long)]
    out: PathBuf,
    /// Rows of the ranking printed on stdout.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Rescore the merged run: `robust` or `paper` (default: as the shards
    /// were run).
    #[arg(long)]
    score: Option<String>,
    /// Limits for the merged run's recommendation (default: the shards').
    #[command(flatten)]
    limits: LimitArgs,
}

/// Flags of a ranking run.
#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Trace files (any supported format, detected by content). Without
    /// any, every built-in synthetic workload is ranked.
    traces: Vec<PathBuf>,
    /// Rank on what the daemon saw of a disk: its activity log, a `.lact`
    /// segment or a directory of them (PATH), or the log of DISK (its key
    /// in the daemon's config or its kernel name) in `activity/` next to
    /// the daemon's state file. The task is spindown; the drive is the one
    /// the daemon used (the log's preset) unless --device; every network
    /// passes the daemon's checks before a spin-down (the log's wear
    /// budget, the drive's break-even) and restarts where the daemon did,
    /// as in `lull replay` of the log; --out is optional (without it the tables go to a temporary
    /// directory).
    #[arg(long, value_name = "DISK|PATH", conflicts_with_all = ["traces", "workload"])]
    from_daemon: Option<String>,
    /// With --from-daemon: print the winner on stdout as a `[[disk]]` table
    /// of the daemon's config (device, task, network, preset); the ranking
    /// is then printed on stderr.
    #[arg(long, requires = "from_daemon")]
    emit_config: bool,
    /// Spindown: rank every network behind the daemon's wear budget of N
    /// spin-downs a day (its `max_spindowns_per_day`: a token bucket under
    /// a daily cap), the budget known to each network (`auto` spends it
    /// on its longest periods) and to the references (the best fixed
    /// timeout, the clairvoyant and the oracle held to it). With
    /// --from-daemon it replaces the log's own.
    #[arg(long, value_name = "N")]
    max_spindowns_per_day: Option<u32>,
    /// With --from-daemon DISK: the daemon's state file, whose directory
    /// holds `activity/` (default: `activity_dir` of --config).
    #[arg(long, value_name = "FILE", requires = "from_daemon")]
    state: Option<PathBuf>,
    /// With --from-daemon DISK: the daemon's TOML configuration, read to
    /// find its `activity_dir` [default: /etc/lull.toml; without it, the
    /// daemon's default, /var/lib/lull/activity].
    #[arg(long, value_name = "FILE", requires = "from_daemon")]
    config: Option<PathBuf>,
    /// The idle task: none, spindown, writeback, cleaning (as built; see
    /// `lull replay --help`). With --from-daemon: spindown.
    #[arg(long, required_unless_present = "from_daemon")]
    task: Option<String>,
    /// `default` (the paper's sweep derived from the device's break-even
    /// time B and each trace's mean rate R) or a grid TOML file.
    #[arg(long, default_value = "default")]
    grid: String,
    /// Output directory (created if needed).
    #[arg(long, required_unless_present = "from_daemon")]
    out: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only the K-th of N slices of the grid × traces (1-based), or
    /// `auto`: the slice a Slurm job array (SLURM_ARRAY_TASK_ID,
    /// SLURM_ARRAY_TASK_COUNT) or Kubernetes Indexed Job
    /// (JOB_COMPLETION_INDEX, LULL_SHARD_COUNT) assigned.
    #[arg(long)]
    shard: Option<String>,
    /// Scores: `robust` (share of the oracle's savings, costs against the
    /// oracle's; outliers cannot move the scale) or `paper` (min–max).
    #[arg(long, default_value = "robust")]
    score: String,
    /// Pick on the first fraction F of each trace (by time) and report the
    /// pick's measures on the rest.
    #[arg(long, value_name = "F")]
    validate: Option<f64>,
    #[command(flatten)]
    limits: LimitArgs,
    /// Device preset for tasks that model a drive.
    #[arg(long)]
    device: Option<String>,
    /// Stop policy: predicted-end, when-busy, earlier-of, later-of.
    /// Default: predicted-end for task none, earlier-of otherwise.
    #[arg(long)]
    policy: Option<String>,
    /// Request timing: auto, trace or model. Default: what the task needs
    /// (model for writeback and cleaning, trace otherwise).
    #[arg(long)]
    timing: Option<String>,
    /// Built-in workloads to rank without TRACE (repeatable; default: all).
    #[arg(long)]
    workload: Vec<String>,
    /// Days of each built-in workload to rank [default: 3]: day 1 is the
    /// workload with --seed, day k one with a seed derived from it
    /// (`lull_rank::day_seed`), each a trace of its own (`office@2`); the
    /// recommendation says how it varied across the days. `--days 1` ranks
    /// the one day --seed names.
    #[arg(long, value_name = "N", conflicts_with_all = ["traces", "from_daemon"])]
    days: Option<u32>,
    /// Rank every built-in day as a daemon that ran the day before would
    /// decide it: each network first learns from a stretch of the same
    /// workload and length with another seed (`lull_rank::warm_up_seed`),
    /// then is measured on the day alone. Trace-timed tasks (none,
    /// spindown); not with TRACE (for a trace: `lull replay --warm-up`).
    #[arg(long, conflicts_with_all = ["traces", "from_daemon", "validate"])]
    warm_up: bool,
    #[command(flatten)]
    source: super::SourceArgs,
    /// Rows of the ranking printed on stdout.
    #[arg(long, default_value_t = 20)]
    top: usize,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    match args.sub {
        Some(Sub::Merge(m)) => {
            super::check_out_dir("--out", &m.out)?;
            let score: Option<Mode> = match &m.score {
                Some(s) => Some(
                    s.parse()
                        .map_err(|e: String| CliError::input(anyhow!("--score: {e}")))?,
                ),
                None => None,
            };
            let limits = m.limits.limits()?;
            let outcome = lull_rank::merge_with(&m.dirs, &m.out, |meta| {
                if let Some(s) = score {
                    meta.score = s;
                }
                if !limits.is_empty() {
                    meta.limits = limits;
                }
            })?;
            print!("{}", finish(&outcome, Some(&m.out), m.top));
            Ok(())
        }
        None => run_rank(*args.run),
    }
}

fn run_rank(mut a: RunArgs) -> Result<(), CliError> {
    if a.source.columns.is_some() {
        return Err(CliError::input(anyhow!(
            "--columns: `lull rank` reads traces in the formats it recognises; convert a CSV with a \
             column map first (lull trace convert FILE OUT.csv --columns MAP) and rank OUT.csv"
        )));
    }
    if let Some(out) = &a.out {
        super::check_out_dir("--out", out)?;
    }
    let daemon = match a.from_daemon.take() {
        Some(arg) => Some(from_daemon(&arg, &mut a)?),
        None => None,
    };
    // Without --out (only with --from-daemon): a temporary directory,
    // removed at the end.
    let keep = a.out.is_some();
    let out = match a.out.clone() {
        Some(o) => o,
        None => scratch_dir()?,
    };
    let result = rank_into(&a, &out, keep, daemon.as_ref());
    if !keep {
        let _ = std::fs::remove_dir_all(&out);
    }
    result
}

/// A new, empty directory of our own under the temporary directory
/// (`mkdir` fails on anything already there, a symlink included).
fn scratch_dir() -> Result<PathBuf, CliError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for i in 0..16u32 {
        let t = std::env::temp_dir().join(format!(
            "lull-rank-{}-{:08x}",
            std::process::id(),
            nanos.wrapping_add(i.wrapping_mul(0x9e37_79b9))
        ));
        match std::fs::create_dir(&t) {
            Ok(()) => return Ok(t),
            Err(e) => last = Some((t, e)),
        }
    }
    let (t, e) = last.expect("tried at least once");
    Err(CliError::runtime(anyhow!("{}: {e}", t.display())))
}

fn rank_into(a: &RunArgs, out: &Path, keep: bool, daemon: Option<&Daemon>) -> Result<(), CliError> {
    let task = a.task.clone().unwrap_or_default();
    let mut gate = daemon.map(|d| d.gate).unwrap_or_default();
    if let Some(n) = a.max_spindowns_per_day {
        if task != "spindown" {
            return Err(CliError::input(anyhow!(
                "--max-spindowns-per-day {n}: a wear budget is for --task spindown, not `{task}`"
            )));
        }
        if n == 0 {
            return Err(CliError::input(anyhow!(
                "--max-spindowns-per-day 0: no network spins the disk down under it; give at least 1"
            )));
        }
        gate.max_spindowns_per_day = Some(n);
    }
    let out = out.to_path_buf();
    let mut grid = if a.grid == lull_rank::grid::DEFAULT {
        let policy = match &a.policy {
            Some(p) => p
                .parse::<StopPolicy>()
                .map_err(|e| CliError::input(anyhow!("--policy: {e}")))?,
            None => lull_blktrace_replay::replay::default_policy(&task),
        };
        lull_rank::default_grid_for(&task, policy)
    } else {
        let text = std::fs::read_to_string(&a.grid)
            .map_err(|e| CliError::input(anyhow!("--grid {}: {e}", a.grid)))?;
        Grid::from_toml(&text, &task).map_err(|e| CliError::input(anyhow!("{}: {e}", a.grid)))?
    };
    // The network the daemon ran is ranked too (`auto` is a reference row
    // already): the first question about one's own disk is how it did.
    let ran = daemon
        .map(|d| d.session.network.trim().to_string())
        .filter(|n| !n.is_empty() && n != "auto");
    if let Some(n) = &ran
        && !grid.specs.contains(n)
    {
        grid.specs.push(n.clone());
    }
    let shard = match a.shard.as_deref() {
        Some("auto") => Shard::auto().map_err(|e| CliError::input(anyhow!("{e}")))?,
        Some(s) => s
            .parse::<Shard>()
            .map_err(|e| CliError::input(anyhow!("--shard: {e}")))?,
        None => Shard::ALL,
    };
    let score: Mode = a
        .score
        .parse()
        .map_err(|e: String| CliError::input(anyhow!("--score: {e}")))?;
    let limits = a.limits.limits()?;
    let policy = match &a.policy {
        Some(p) => Some(
            p.parse::<StopPolicy>()
                .map_err(|e| CliError::input(anyhow!("--policy: {e}")))?,
        ),
        None => None,
    };
    let timing: Timing = match &a.timing {
        Some(t) => t
            .parse()
            .map_err(|e: String| CliError::input(anyhow!("--timing: {e}")))?,
        None => Timing::Auto,
    };
    if a.jobs == Some(0) {
        return Err(CliError::input(anyhow!("--jobs must be at least 1")));
    }
    let sources = if a.traces.is_empty() {
        let d: Nanos = parse_duration(&a.source.duration)
            .map_err(|e| CliError::input(anyhow!("--duration: {e}")))?;
        let days = a.days.unwrap_or(DEFAULT_DAYS);
        if days == 0 {
            return Err(CliError::input(anyhow!("--days must be at least 1")));
        }
        let all = Source::all_builtin_days(d, a.source.seed, days);
        if a.workload.is_empty() {
            all
        } else {
            let mut chosen = Vec::new();
            for w in &a.workload {
                let mine: Vec<&Source> = all
                    .iter()
                    .filter(|s| matches!(s, Source::Builtin { name, .. } if name == w))
                    .collect();
                if mine.is_empty() {
                    return Err(CliError::input(anyhow!(
                        lull_blktrace_replay::synth::unknown(w)
                    )));
                }
                chosen.extend(mine.into_iter().cloned());
            }
            chosen
        }
    } else {
        a.traces.iter().cloned().map(Source::File).collect()
    };
    let sources = if a.warm_up {
        let opts = ReplayOptions {
            task: task.clone(),
            timing,
            ..ReplayOptions::default()
        };
        lull_blktrace_replay::replay::trace_timed(&opts, "--warm-up")
            .map_err(|e| CliError::input(anyhow!(e)))?;
        sources
            .into_iter()
            .map(Source::warmed_up)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CliError::input(anyhow!(e)))?
    } else {
        sources
    };
    let cfg = RankConfig {
        sources,
        grid,
        grid_name: a.grid.clone(),
        replay: ReplayOptions {
            task,
            policy,
            device: a.device.clone(),
            timing,
            log: false,
            gate,
            // The daemon's poll: no fixed timeout below it is a reference
            // it could have run.
            reference_floor: daemon.map_or(Nanos::ZERO, |d| d.session.poll),
            // Each log's own, set by the sweep with the daemon's checks.
            busy_polls: None,
            // A ranking asks what each network would save: where the
            // daemon withheld its standbys, none could have (the sweep
            // notes it).
            daemon_standbys: None,
        },
        jobs: a.jobs,
        shard,
        disk: a.source.disk.clone(),
        lenient: a.source.lenient,
        progress: std::io::stderr().is_terminal(),
        out: out.clone(),
        score,
        limits,
        validate: a.validate,
    };
    let outcome = lull_rank::rank(&cfg, &lull::registry())?;
    let mut table = finish(&outcome, keep.then_some(out.as_path()), a.top);
    if let Some(n) = &ran
        && let Some(s) = outcome.summaries.iter().find(|s| {
            // Its own row, or the row it was folded into (identical
            // measures on the log).
            let spec_is = |i: usize| {
                outcome
                    .rows
                    .iter()
                    .any(|r| r.network_index == i && r.spec == *n)
            };
            !s.reference && (spec_is(s.policy) || s.equivalents.iter().any(|&i| spec_is(i)))
        })
    {
        let ranked = outcome.summaries.iter().filter(|s| !s.reference).count();
        let _ = writeln!(
            table,
            "the daemon ran `{n}`: rank {} of {ranked} (its row is the network on the log with the daemon's checks, as every row; `lull status` and `lull replay` of the log count what the daemon did, the sleep it took up after a restart included; the `auto` row is the reference, not the daemon's)",
            s.rank.unwrap_or(0)
        );
    }
    match daemon {
        Some(d) if a.emit_config => {
            // stdout is the TOML alone; the ranking is for people.
            eprint!("{table}");
            print!("{}", emit_config(&outcome, d, policy)?);
        }
        _ => print!("{table}"),
    }
    Ok(())
}

/// What `--from-daemon` found: the disk's session and the drive ranked on.
#[derive(Debug)]
struct Daemon {
    /// The last run's session in the log.
    session: lull_blktrace_replay::activity::Session,
    /// The drive preset, when known (the log's, or --device).
    drive: Option<String>,
    /// The daemon's checks before a spin-down (its wear budget, its
    /// drive's break-even), made for every network ranked, as `lull
    /// replay` of the log makes them.
    gate: lull_tasks::StandbyGate,
}

/// Resolves `--from-daemon ARG` into a trace for `a` (task spindown, the
/// log's drive) and returns what `--emit-config` needs.
fn from_daemon(arg: &str, a: &mut RunArgs) -> Result<Daemon, CliError> {
    match a.task.as_deref() {
        None | Some("spindown") => a.task = Some("spindown".into()),
        Some(t) => {
            return Err(CliError::input(anyhow!(
                "--from-daemon ranks task spindown (the daemon's `standby`), not `{t}`"
            )));
        }
    }
    let path = daemon_log(arg, a.state.as_deref(), a.config.as_deref())?;
    // Its reader's notes (a torn tail) come with the ranking's, when the
    // log is loaded as the trace.
    let log = lull_blktrace_replay::activity::open_log(&path)?;
    let session = log.session;
    let mut gate = lull_blktrace_replay::activity::daemon_gate(&session);
    if gate.max_spindowns_per_day == Some(0) {
        // Ranked without it, as the loader ranks such runs (its note says
        // so): under a budget of 0 every network saves nothing.
        gate.max_spindowns_per_day = None;
    }
    if let Some(d) = &a.device {
        // Another drive: its break-even, from its profile.
        lull_blktrace_replay::replay::power_model(Some(d))?;
        let profile = lull_blktrace_replay::replay::profile(Some(d))?;
        gate.break_even = profile.standby_gate(None).break_even;
    }
    let drive = match &a.device {
        Some(d) => Some(d.clone()),
        None => super::session_drive(&session),
    };
    if drive.is_none() {
        // What the daemon falls back to for a drive it cannot identify.
        let fallback = lull_tasks::drive::DEFAULT_PRESET;
        eprintln!(
            "lull: note: the activity log names no drive preset; ranking for `{fallback}` (choose with --device)"
        );
        a.device = Some(fallback.into());
    } else {
        a.device.clone_from(&drive);
    }
    a.traces = vec![path];
    Ok(Daemon {
        session,
        drive,
        gate,
    })
}

/// Days of each built-in workload `lull rank` ranks without `--days`: one
/// day per workload can flatter or wrong any policy (issue 29), three
/// show how much they differ at three times the cost of one.
const DEFAULT_DAYS: u32 = 3;

/// The daemon's default configuration file.
const DEFAULT_CONFIG: &str = "/etc/lull.toml";

/// The activity log `--from-daemon ARG` names: ARG itself when it is a
/// file or directory, else the log directory of the disk ARG (its key or
/// kernel name) next to the daemon's state file.
fn daemon_log(arg: &str, state: Option<&Path>, config: Option<&Path>) -> Result<PathBuf, CliError> {
    let p = Path::new(arg);
    // A block device (`/dev/sdb`, a by-id link) is a disk, not a file.
    if std::fs::metadata(p).is_ok_and(|m| m.is_file() || m.is_dir()) {
        return Ok(p.to_path_buf());
    }
    if arg.ends_with(".lact") {
        return Err(CliError::input(anyhow!("{arg}: no such activity log")));
    }
    // The daemon's activity directory: `activity/` next to --state, else
    // `activity_dir` of the config (by default `activity/` next to its
    // state file).
    let root = match state {
        Some(s) => s.parent().unwrap_or(Path::new(".")).join("activity"),
        None => {
            let registry = lull::registry();
            let path = config.unwrap_or(Path::new(DEFAULT_CONFIG));
            let cfg = if config.is_some() || path.exists() {
                lull_live::Config::load(path, &registry).map_err(CliError::input)?
            } else {
                // No config: the daemon's defaults.
                lull_live::Config::parse(path, "", &registry).map_err(CliError::input)?
            };
            cfg.activity.dir
        }
    };
    let dir = lull_live::activity::disk_dir(&root, arg);
    if dir.is_dir() {
        return Ok(dir);
    }
    // A kernel name (`sdb`, `/dev/sdb`) of a disk configured by another
    // key: the log whose session names it.
    let kernel = arg.strip_prefix("/dev/").unwrap_or(arg);
    let mut known = Vec::new();
    let mut found = Vec::new();
    for d in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        let d = d.path();
        let Some(s) = last_session(&d) else { continue };
        if s.key == arg || s.kernel == kernel {
            found.push(d);
        } else {
            known.push(s.key);
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(CliError::input(anyhow!(
            "no activity log of disk `{arg}` in {} ({}); name a disk key or kernel name, \
             or a `.lact` file or directory",
            root.display(),
            if known.is_empty() {
                "it holds none".to_string()
            } else {
                format!("it has logs of: {}", known.join(", "))
            }
        ))),
        _ => Err(CliError::input(anyhow!(
            "several activity logs in {} name disk `{arg}`: {}; give the directory",
            root.display(),
            found
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The session of a log directory's last segment, if it reads.
fn last_session(dir: &Path) -> Option<lull_blktrace_replay::activity::Session> {
    use lull_blktrace_replay::activity::lull_activity::{Record, read};
    let last = read::segments(dir).ok()?.pop()?;
    let bytes = std::fs::read(&last).ok()?;
    let (records, _) = read::parse_segment(&bytes, &last).ok()?;
    records.into_iter().find_map(|r| match r {
        Record::Session(s) => Some(s),
        _ => None,
    })
}

/// The winner of a `--from-daemon` run as a `[[disk]]` table of the
/// daemon's config, checked to parse as one.
fn emit_config(
    outcome: &lull_rank::Outcome,
    d: &Daemon,
    policy: Option<StopPolicy>,
) -> Result<String, CliError> {
    // What the report recommends: `auto` where it beats the grid.
    let Some(best) =
        lull_rank::report::pick(&outcome.summaries, &outcome.rows, &outcome.meta.limits)
    else {
        return Err(CliError::runtime(anyhow!(
            "no network finished: there is no winner to emit"
        )));
    };
    let row = outcome
        .rows
        .iter()
        .find(|r| r.network_index == best && (!r.reference || r.spec == "auto"))
        .ok_or_else(|| CliError::runtime(anyhow!("the winner has no results")))?;
    // Rates relative to the trace's mean rate R become numbers: the daemon
    // knows B (from the preset) but not R.
    let trace = outcome.meta.traces.first();
    let rate = trace.map_or(0.0, |t| t.mean_rate);
    let network = lull_rank::grid::with_rate(&row.spec, rate).unwrap_or_else(|| row.spec.clone());
    let s = &d.session;
    let device = [&s.key, &s.kernel]
        .into_iter()
        .find(|k| !k.is_empty())
        .ok_or_else(|| CliError::input(anyhow!("the activity log names no disk")))?;
    let q = |v: &str| serde_json::to_string(v).unwrap_or_default();
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# lull rank --from-daemon: the winner on {} requests over {:.0} s of this disk's activity log",
        trace.map_or(0, |t| t.requests),
        trace.map_or(0.0, |t| t.span_s)
    );
    if network != row.spec {
        let _ = writeln!(t, "# as ranked: {}", row.spec);
    }
    let _ = writeln!(
        t,
        "# the log records no other key of the entry (compare_timeout, backend, hooks, ...): keep yours"
    );
    let _ = writeln!(t, "[[disk]]");
    let _ = writeln!(t, "device = {}", q(device));
    let _ = writeln!(t, "task = \"standby\"");
    let _ = writeln!(t, "network = {}", q(&network));
    if let Some(p) = policy.filter(|p| *p != StopPolicy::EarlierOf) {
        let _ = writeln!(t, "policy = {}", q(&p.to_string()));
    }
    if let Some(drive) = &d.drive {
        let _ = writeln!(t, "preset = {}", q(drive));
    }
    // The budget every network was ranked under (the log's).
    if let Some(n) = d.gate.max_spindowns_per_day {
        let _ = writeln!(t, "max_spindowns_per_day = {n}");
    } else if d.session.max_spindowns_per_day == Some(0) {
        let _ = writeln!(
            t,
            "# the log's max_spindowns_per_day = 0 never spun the disk down; ranked without a budget, this table takes the daemon's default (48 a day)"
        );
    }
    lull_live::Config::parse(Path::new("<--emit-config>"), &t, &lull::registry()).map_err(|e| {
        CliError::runtime(anyhow!(
            "the emitted [[disk]] table does not parse: {e}\n{t}"
        ))
    })?;
    Ok(t)
}

/// The ranking's text: the answer (three lines and a short table), then
/// the header, the ranking's table and where the files went (`out`, when
/// they are kept). Notes go to stderr.
fn finish(outcome: &lull_rank::Outcome, out: Option<&Path>, top: usize) -> String {
    for n in &outcome.meta.notes {
        eprintln!("lull: note: {n}");
    }
    // A shard ranks part of the runs: no answer until `lull rank merge`.
    let mut text = String::new();
    if outcome.meta.shard.is_none() {
        text = lull_rank::report::answer_text(
            &outcome.meta,
            &outcome.summaries,
            &outcome.rows,
            &outcome.axes,
        );
        text.push('\n');
    }
    // A trace left out of the ranking (saturated) is not counted.
    let _ = writeln!(
        text,
        "task {}: {} × {}, {} runs ranked on {} and {}{}",
        outcome.meta.task,
        lull_rank::report::counted(&outcome.summaries),
        outcome.meta.traces_text(),
        outcome.meta.runs,
        outcome.axes.x.measure,
        outcome.axes.y.measure,
        outcome
            .meta
            .shard
            .as_ref()
            .map(|s| format!(" (shard {s})"))
            .unwrap_or_default()
    );
    if let Some(b) = outcome.meta.breakeven_s {
        let _ = writeln!(
            text,
            "B = {b} s (the device's break-even time), R = each trace's mean request rate; scores: {}",
            outcome.meta.score
        );
    }
    text.push_str(&outcome.table(top));
    if let Some(first) = outcome.summaries.iter().find(|s| s.rank == Some(1))
        && let Some(spread) =
            lull_rank::report::day_spread(&outcome.meta, first, &outcome.rows, "its")
    {
        let name = lull_rank::report::network_label(first, &outcome.rows);
        let _ = writeln!(text, "rank 1, {name}: {spread}");
    }
    match out {
        None => {}
        Some(out) if outcome.meta.shard.is_some() => {
            let _ = writeln!(
                text,
                "wrote {}/{{results.csv, results.parquet, ranking.csv, run.toml}}; `lull rank merge` the shards for plots and report.md",
                out.display()
            );
        }
        Some(out) => {
            let _ = writeln!(
                text,
                "wrote {}/{{results.csv, results.parquet, ranking.csv, report.md, plots/}}",
                out.display()
            );
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_directory_names() {
        let dir = |k| lull_live::activity::disk_dir(Path::new("/a"), k);
        assert_eq!(
            dir("/dev/disk/by-id/ata-X"),
            Path::new("/a/_dev_disk_by-id_ata-X")
        );
        assert_eq!(dir("sdb"), Path::new("/a/sdb"));
        assert_eq!(
            dir("wwn-0x5000c500:a b"),
            Path::new("/a/wwn-0x5000c500_a_b")
        );
        assert_eq!(dir(".."), Path::new("/a/_.."));
    }
}
