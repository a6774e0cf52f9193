//! `lull rank`: sweep a grid of detector networks over traces for one idle
//! task and rank them (§4.1.1), writing tables, plots and a report; `lull
//! rank merge` combines shard outputs.

use std::io::IsTerminal;
use std::path::PathBuf;

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
    /// The idle task: none, spindown, writeback, cleaning (as built; see
    /// `lull replay --help`).
    #[arg(long, required = true)]
    task: Option<String>,
    /// `default` (the paper's sweep derived from the device's break-even
    /// time B and each trace's mean rate R) or a grid TOML file.
    #[arg(long, default_value = "default")]
    grid: String,
    /// Output directory (created if needed).
    #[arg(long, required = true)]
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
    #[command(flatten)]
    source: super::SourceArgs,
    /// Rows of the ranking printed on stdout.
    #[arg(long, default_value_t = 20)]
    top: usize,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    match args.sub {
        Some(Sub::Merge(m)) => {
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
            finish(&outcome, &m.out, m.top)
        }
        None => run_rank(*args.run),
    }
}

fn run_rank(a: RunArgs) -> Result<(), CliError> {
    let task = a.task.clone().unwrap_or_default();
    let out = a.out.clone().unwrap_or_default();
    let grid = if a.grid == lull_rank::grid::DEFAULT {
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
        let all = Source::all_builtin(d, a.source.seed);
        if a.workload.is_empty() {
            all
        } else {
            let mut chosen = Vec::new();
            for w in &a.workload {
                let s = all.iter().find(|s| s.name() == *w).ok_or_else(|| {
                    CliError::input(anyhow!(lull_blktrace_replay::synth::unknown(w)))
                })?;
                chosen.push(s.clone());
            }
            chosen
        }
    } else {
        a.traces.iter().cloned().map(Source::File).collect()
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
    finish(&outcome, &out, a.top)
}

fn finish(outcome: &lull_rank::Outcome, out: &std::path::Path, top: usize) -> Result<(), CliError> {
    for n in &outcome.meta.notes {
        eprintln!("lull: note: {n}");
    }
    let ranked = outcome.summaries.iter().filter(|s| !s.reference).count();
    println!(
        "task {}: {} networks × {} traces, {} runs ranked on {} and {}{}",
        outcome.meta.task,
        ranked,
        outcome.meta.traces.len(),
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
        println!(
            "B = {b} s (the device's break-even time), R = each trace's mean request rate; scores: {}",
            outcome.meta.score
        );
    }
    print!("{}", outcome.table(top));
    if outcome.meta.shard.is_some() {
        println!(
            "wrote {}/{{results.csv, results.parquet, ranking.csv, run.toml}}; `lull rank merge` the shards for plots and report.md",
            out.display()
        );
    } else {
        println!(
            "wrote {}/{{results.csv, results.parquet, ranking.csv, report.md, plots/}}",
            out.display()
        );
    }
    Ok(())
}
