//! The run pipeline and its output directory.
//!
//! ```text
//! DIR/
//!   results.csv, results.parquet   one row per network × trace
//!   ranking.csv                    one row per network, ranked
//!   idle_cdf.csv                   idle-period CDF of each trace
//!   plots/*.svg, plots/*.png       the figures
//!   report.md                      the answer, details, top ten, figures
//!   run.toml                       what was run (task, grid, traces, shard, notes)
//! ```
//!
//! A shard (`--shard K/N`) writes the tables and `run.toml` only: its
//! plots and report would show a partial ranking. Every file is written
//! atomically; `run.toml` is written last, so a
//! directory with a `run.toml` holds a complete run. [`merge`] reads the
//! Parquet results and `run.toml` of shard directories and writes the same
//! files as one unsharded run: the tables are computed from rows sorted by
//! (trace, network), so `ranking.csv` is byte-identical either way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lull_blktrace_replay::replay::{ReplayOptions, default_policy, replay_spec, resolve_timing};
use lull_core::registry::Registry;
use polars::prelude::*;
use rayon::prelude::*;

use crate::RankError;
use crate::analysis::{self, Limits};
use crate::atomic;
use crate::axes::{Axes, axes};
use crate::grid::{self, Grid};
use crate::plot::{self, Figure, PlotInput};
use crate::report;
use crate::score::{Mode, Scored, Summary};
use crate::sweep::{self, IdleCdf, Row, Shard, Source, SweepOptions, Workload};
use crate::table;

pub use crate::meta::{RunMeta, TraceMeta, Validation};

/// How to rank.
#[derive(Clone, Debug)]
pub struct RankConfig {
    /// The traces; built-in workloads when empty.
    pub sources: Vec<Source>,
    /// The grid.
    pub grid: Grid,
    /// `default` or the grid file, for `run.toml`.
    pub grid_name: String,
    /// Task, policy, device, timing.
    pub replay: ReplayOptions,
    /// Worker threads (`None`: all cores).
    pub jobs: Option<usize>,
    /// Which slice to run.
    pub shard: Shard,
    /// Device of multi-device traces (default: the busiest); [`ALL_DISKS`]
    /// ranks every device of each trace as a workload of its own.
    pub disk: Option<String>,
    /// Skip malformed trace records.
    pub lenient: bool,
    /// Show a progress bar.
    pub progress: bool,
    /// Output directory.
    pub out: PathBuf,
    /// How measures are scaled (robust by default, or the paper's).
    pub score: Mode,
    /// Limits the recommendation keeps on every trace.
    pub limits: Limits,
    /// `--validate F`: pick on the first fraction `F` of each trace and
    /// measure the pick on the rest.
    pub validate: Option<f64>,
}

impl RankConfig {
    /// Ranks `grid` (named `grid_name` in `run.toml`) over `sources` for
    /// `task` under its default policy, device and timing, writing to
    /// `out`: every core, the whole run, the busiest device of each trace,
    /// strict input, no progress bar, robust scores, no limits, no
    /// validation. Set the fields to change any of it.
    pub fn new(
        sources: Vec<Source>,
        grid: Grid,
        grid_name: &str,
        task: &str,
        out: impl Into<PathBuf>,
    ) -> Self {
        RankConfig {
            sources,
            grid,
            grid_name: grid_name.into(),
            replay: ReplayOptions {
                task: task.into(),
                ..ReplayOptions::default()
            },
            jobs: None,
            shard: Shard::ALL,
            disk: None,
            lenient: false,
            progress: false,
            out: out.into(),
            score: Mode::Robust,
            limits: Limits::default(),
            validate: None,
        }
    }
}

/// What a finished run, merge or redraw produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The run description written to `run.toml`.
    pub meta: RunMeta,
    /// The ranking, best first, reference rows last.
    pub summaries: Vec<Summary>,
    /// Every run.
    pub rows: Vec<Row>,
    /// The axes ranked on.
    pub axes: Axes,
    /// Figures drawn.
    pub figures: Vec<Figure>,
}

impl Outcome {
    /// The ranking's `top` rows (the recommended one too, and the
    /// reference rows) as a text table.
    pub fn table(&self, top: usize) -> String {
        report::text_table(
            &self.summaries,
            &self.rows,
            &self.axes,
            top,
            &self.meta.limits,
        )
    }
}

/// The `disk` value that ranks every device of a multi-device trace.
pub const ALL_DISKS: &str = "all";

/// Resolves the grid, loads the traces this shard needs (each once, in
/// parallel), runs the jobs and writes the output directory.
pub fn rank(cfg: &RankConfig, registry: &Registry) -> Result<Outcome, RankError> {
    let mut grid = cfg.grid.clone();
    let oracle = reference_for(&cfg.replay)?;
    for r in &mut grid.references {
        if r == "oracle()" {
            r.clone_from(&oracle);
        }
    }
    if let Some(f) = cfg.validate {
        if !(f > 0.0 && f < 1.0) {
            return Err(RankError::Input(format!(
                "--validate {f}: the fraction must be strictly between 0 and 1"
            )));
        }
        if cfg.shard != Shard::ALL {
            return Err(RankError::Input(
                "--validate runs whole: it cannot be combined with --shard".into(),
            ));
        }
    }
    // Networks are built for the task's device: `2B` and the B-scaled
    // defaults resolve against its break-even time.
    let registry = &lull_blktrace_replay::replay::registry_for(
        registry,
        &cfg.replay.task,
        cfg.replay.device.as_deref(),
    )
    .map_err(|e| RankError::Input(e.to_string()))?;
    let resolved = grid::resolve(&grid, registry)?;
    let mut notes = resolved.notes.clone();
    // Unknown tasks and impossible timings fail here, before any work.
    let timing = resolve_timing(&cfg.replay.task, cfg.replay.timing)
        .map_err(|e| RankError::Input(e.to_string()))?;
    // Check that the task builds with these options (device preset, …) on
    // a trivial trace, so a typo fails fast rather than once per run.
    if let Some(reference) = resolved.networks.first() {
        use lull_core::request::{Op, Request};
        use lull_core::time::Nanos;
        let ms = Nanos::from_millis;
        let probe = lull_core::event::Timeline::from_requests(&[
            Request::new(ms(0), ms(5), Op::Read, 0, 4096),
            Request::new(ms(10_000), ms(10_005), Op::Write, 8, 4096),
        ]);
        if let Err(e) = replay_spec(&probe, &reference.spec, registry, &cfg.replay)
            && !matches!(e, lull_blktrace_replay::ReplayError::Engine(_))
        {
            return Err(RankError::Input(e.to_string()));
        }
    }
    // `--disk all`: every device of a multi-device trace is a workload.
    let expanded;
    let (sources, disk) = if cfg.disk.as_deref() == Some(ALL_DISKS) {
        expanded = Source::per_device(&cfg.sources, cfg.lenient)?;
        (&expanded, None)
    } else {
        (&cfg.sources, cfg.disk.as_deref())
    };
    if sources.is_empty() {
        return Err(RankError::Input("no traces to rank".into()));
    }
    let names = unique_names(sources);
    // The best fixed timer in hindsight is one more job per trace, after
    // the grid's networks.
    let columns = resolved.networks.len() + usize::from(resolved.best_fixed);
    let mut jobs = sweep::plan(sources.len(), columns, cfg.shard);
    let mut needed = vec![false; sources.len()];
    for &(t, _) in &jobs {
        needed[t] = true;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.jobs.unwrap_or(0))
        .build()
        .map_err(|e| RankError::Input(format!("--jobs: {e}")))?;
    let loaded: Vec<Option<Workload>> = pool.install(|| {
        sources
            .par_iter()
            .zip(names.par_iter())
            .zip(needed.par_iter())
            .map(|((src, name), &need)| {
                if !need {
                    return Ok(None);
                }
                let mut w = src.load(disk, cfg.lenient)?;
                w.name = name.clone();
                Ok(Some(w))
            })
            .collect::<Result<Vec<_>, RankError>>()
    })?;
    // A trace the modelled device cannot serve gives noise, not a ranking
    // (issue 17): say so and leave it out.
    let mut left_out = vec![None; loaded.len()];
    for (t, w) in loaded.iter().enumerate() {
        let Some(w) = w else { continue };
        let check = lull_blktrace_replay::replay::saturation_check(&w.timeline, &cfg.replay)
            .map_err(|e| RankError::Input(e.to_string()))?;
        if let Some(sat) = check.filter(|s| s.is_saturated()) {
            notes.push(format!(
                "trace `{}` is saturated on the modelled device ({sat}); it is not ranked: use a faster --device, a shorter stretch, or --timing trace",
                w.name
            ));
            jobs.retain(|&(j, _)| j != t);
            left_out[t] = Some("saturated".to_string());
        }
    }
    let mut traces = Vec::new();
    let mut cdfs = Vec::new();
    for (i, (src, w)) in sources.iter().zip(&loaded).enumerate() {
        let (requests, span_s, idle_s, idle_periods) = match w {
            Some(w) => {
                for n in &w.notes {
                    if !notes.contains(n) {
                        notes.push(n.clone());
                    }
                }
                cdfs.push(IdleCdf::of(&w.name, &w.timeline));
                (
                    w.timeline.requests() as u64,
                    w.timeline.span().as_secs_f64(),
                    w.timeline.idle_time().as_secs_f64(),
                    w.timeline.idle_periods().count() as u64,
                )
            }
            None => (0, 0.0, 0.0, 0),
        };
        let mean_rate = w.as_ref().map_or(0.0, |w| sweep::mean_rate(&w.timeline));
        traces.push(TraceMeta {
            index: i,
            name: names[i].clone(),
            source: src.describe(),
            requests,
            span_s,
            idle_s,
            idle_periods,
            mean_rate,
            left_out: left_out[i].clone(),
        });
    }
    let outcome = sweep::run(
        &loaded,
        &resolved.networks,
        &jobs,
        registry,
        &SweepOptions {
            replay: cfg.replay.clone(),
            jobs: cfg.jobs,
            progress: cfg.progress,
        },
    )?;
    if !outcome.failures.is_empty() {
        notes.push(format!("{} run(s) failed:", outcome.failures.len()));
        notes.extend(outcome.failures.iter().map(|f| format!("  {f}")));
    }
    let policy = cfg
        .replay
        .policy
        .unwrap_or_else(|| default_policy(&cfg.replay.task));
    let meta = RunMeta {
        version: env!("CARGO_PKG_VERSION").to_string(),
        task: cfg.replay.task.clone(),
        policy: policy.to_string(),
        timing: timing.to_string(),
        device: cfg.replay.device.clone(),
        grid: cfg.grid_name.clone(),
        grid_fingerprint: resolved.fingerprint(),
        networks: resolved.networks.len(),
        traces,
        shard: (cfg.shard != Shard::ALL).then(|| cfg.shard.to_string()),
        runs: outcome.rows.len(),
        notes,
        breakeven_s: registry.breakeven().map(|b| b.as_secs_f64()),
        best_fixed: resolved.best_fixed,
        score: cfg.score,
        limits: cfg.limits.clone(),
        validation: None,
    };
    let mut meta = meta;
    if let Some(f) = cfg.validate {
        meta.validation = Some(validate(f, &loaded, &resolved, registry, cfg, &meta)?);
    }
    write_outputs(&cfg.out, meta, outcome.rows, cdfs)
}

/// The reference network of a task: the oracle, which for `spindown`
/// declares only the idle periods longer than the drive's break-even time
/// (SPEC §4.2's oracle energy; spinning down for a shorter period costs
/// energy), written `oracle(min=B)` like the grid's networks: resolved
/// against the drive's exact `B`, not a rounding of it.
pub fn reference_for(opts: &ReplayOptions) -> Result<String, RankError> {
    if crate::base_task(&opts.task) == "spindown" {
        // An unknown drive is an input error here, before any replay.
        lull_blktrace_replay::replay::power_model(opts.device.as_deref())
            .map_err(|e| RankError::Input(e.to_string()))?;
        return Ok("oracle(min=B)".into());
    }
    Ok("oracle()".to_string())
}

/// Trace names, made unique by a `#2`, `#3`… suffix.
fn unique_names(sources: &[Source]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    sources
        .iter()
        .map(|s| {
            let n = s.name();
            let c = seen.entry(n.clone()).or_default();
            *c += 1;
            if *c == 1 { n } else { format!("{n}#{c}") }
        })
        .collect()
}

/// Splits a timeline at `fraction` of its span: the requests that
/// arrive before the cut, and the rest.
fn split(t: &lull_core::event::Timeline, fraction: f64) -> (Workload, Workload) {
    let start = t.start().unwrap_or_default();
    let cut = start + lull_core::time::Nanos::from_secs_f64(t.span().as_secs_f64() * fraction);
    let arrival = |e: &lull_core::event::Event| if e.is_arrival() { e.time } else { e.pair };
    let part = |head: bool| {
        let events: Vec<_> = t
            .events()
            .iter()
            .filter(|e| (arrival(e) < cut) == head)
            .copied()
            .collect();
        Workload {
            name: String::new(),
            source: String::new(),
            timeline: lull_core::event::Timeline::from_sorted_events(events).with_clock(t.clock()),
            notes: Vec::new(),
            // Each part replays as one run, from nothing learned
            // (`lull rank` refuses --validate with --warm-up).
            runs: Vec::new(),
            busy_polls: None,
            warm: None,
        }
    };
    (part(true), part(false))
}

/// `--validate F`: runs the grid on the first fraction of every trace and
/// on the rest, picks the recommendation on the first part and measures it
/// on the rest, next to the rest's best network in hindsight.
fn validate(
    fraction: f64,
    loaded: &[Option<Workload>],
    resolved: &grid::Resolved,
    registry: &Registry,
    cfg: &RankConfig,
    meta: &RunMeta,
) -> Result<Validation, RankError> {
    let mut heads = Vec::new();
    let mut tails = Vec::new();
    for w in loaded.iter().flatten() {
        let (mut h, mut t) = split(&w.timeline, fraction);
        // A log's polls, at the times both parts keep.
        h.busy_polls.clone_from(&w.busy_polls);
        t.busy_polls.clone_from(&w.busy_polls);
        h.name = format!("{} (first {:.0} %)", w.name, fraction * 100.0);
        t.name = format!("{} (rest)", w.name);
        if h.timeline.requests() == 0 || t.timeline.requests() == 0 {
            return Err(RankError::Input(format!(
                "--validate {fraction}: one part of {} has no requests",
                w.name
            )));
        }
        heads.push(Some(h));
        tails.push(Some(t));
    }
    let columns = resolved.networks.len() + usize::from(resolved.best_fixed);
    let jobs = sweep::plan(heads.len(), columns, Shard::ALL);
    let opts = SweepOptions {
        replay: cfg.replay.clone(),
        jobs: cfg.jobs,
        progress: false,
    };
    let axes = axes(&meta.task);
    let mut parts = Vec::new();
    for ws in [&heads, &tails] {
        let mut rows = sweep::run(ws, &resolved.networks, &jobs, registry, &opts)?.rows;
        analysis::complete(&mut rows, meta.best_fixed.then_some(meta.networks));
        let (_, summaries) = analysis::score_rows(&rows, &axes, cfg.score);
        parts.push((rows, summaries));
    }
    let (head_rows, head_sum) = &parts[0];
    let tail_sum = &parts[1].1;
    let pick = match analysis::choose(head_sum, head_rows, &cfg.limits) {
        analysis::Choice::Meets(p) | analysis::Choice::Closest(p, _) => p,
        analysis::Choice::Nothing => {
            return Err(RankError::Input("--validate: no network finished".into()));
        }
    };
    let spec = |p: usize| {
        resolved
            .networks
            .get(p)
            .map_or("?".into(), |n| n.text.clone())
    };
    let in_sample = head_sum
        .iter()
        .find(|s| s.policy == pick)
        .map_or(f64::NAN, |s| s.mean);
    // The pick may have been collapsed into an equivalent on the rest.
    let tail_of = tail_sum
        .iter()
        .find(|s| s.policy == pick || s.equivalents.contains(&pick));
    let best = tail_sum.iter().find(|s| !s.reference);
    Ok(Validation {
        fraction,
        pick: spec(pick),
        pick_in_sample: in_sample,
        pick_out_of_sample: tail_of.map_or(f64::NAN, |s| s.mean),
        pick_rank_out_of_sample: tail_of.and_then(|s| s.rank).unwrap_or(0),
        best_out_of_sample: best.map_or("?".into(), |s| spec(s.policy)),
        best_out_of_sample_distance: best.map_or(f64::NAN, |s| s.mean),
        ranked: tail_sum.iter().filter(|s| !s.reference).count(),
    })
}

/// The axes to rank `rows` of `task` on: the task's pair if the rows carry
/// it, else the internal pair with a note.
fn pick_axes(task: &str, rows: &[Row], notes: &mut Vec<String>) -> Axes {
    let a = axes(task);
    let has = |m: &str| rows.iter().any(|r| r.measure(m).is_some());
    let mut note = |n: String| {
        if !notes.contains(&n) {
            notes.push(n);
        }
    };
    if rows.is_empty() || (has(a.x.measure) && has(a.y.measure)) {
        if !a.known {
            note(format!(
                "task `{task}` has no ranking measures in this build: ranked on efficiency and violation rate"
            ));
        }
        return a;
    }
    note(format!(
        "task `{task}` reported no `{}`/`{}`: ranked on efficiency and violation rate instead",
        a.x.measure, a.y.measure
    ));
    axes("none")
}

fn cdf_frame(cdfs: &[IdleCdf]) -> Result<DataFrame, RankError> {
    let mut trace = Vec::new();
    let (mut len, mut pf, mut tf) = (Vec::new(), Vec::new(), Vec::new());
    for c in cdfs {
        for p in &c.points {
            trace.push(c.trace.clone());
            len.push(p.0);
            pf.push(p.1);
            tf.push(p.2);
        }
    }
    let n = trace.len();
    DataFrame::new(
        n,
        vec![
            Column::new("trace".into(), trace),
            Column::new("length_s".into(), len),
            Column::new("fraction_of_periods".into(), pf),
            Column::new("fraction_of_idle_time".into(), tf),
        ],
    )
    .map_err(|e| RankError::Table(e.to_string()))
}

fn read_cdfs(path: &Path) -> Result<Vec<IdleCdf>, RankError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let df = table::read_csv(path)?;
    if df.height() == 0 {
        return Ok(Vec::new());
    }
    let get = |name: &str| -> Result<Vec<f64>, RankError> {
        let c = df
            .column(name)
            .and_then(|c| c.cast(&DataType::Float64))
            .map_err(|e| RankError::Table(format!("{}: {e}", path.display())))?;
        Ok(c.f64()
            .map_err(|e| RankError::Table(e.to_string()))?
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    };
    let names: Vec<String> = df
        .column("trace")
        .and_then(|c| c.cast(&DataType::String))
        .map_err(|e| RankError::Table(e.to_string()))?
        .str()
        .map_err(|e| RankError::Table(e.to_string()))?
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect();
    let (len, pf, tf) = (
        get("length_s")?,
        get("fraction_of_periods")?,
        get("fraction_of_idle_time")?,
    );
    let mut out: Vec<IdleCdf> = Vec::new();
    for i in 0..names.len() {
        if out.last().is_none_or(|c| c.trace != names[i]) {
            out.push(IdleCdf {
                trace: names[i].clone(),
                points: Vec::new(),
            });
        }
        if let Some(c) = out.last_mut() {
            c.points.push((len[i], pf[i], tf[i]));
        }
    }
    Ok(out)
}

/// Writes every output file of a run into `dir` (created if needed).
pub fn write_outputs(
    dir: &Path,
    mut meta: RunMeta,
    mut rows: Vec<Row>,
    cdfs: Vec<IdleCdf>,
) -> Result<Outcome, RankError> {
    std::fs::create_dir_all(dir).map_err(|e| RankError::io(dir, e))?;
    atomic::clean_stale(dir)?;
    rows.sort_by_key(|r| (r.trace_index, r.network_index));
    if meta.shard.is_none() {
        analysis::complete(&mut rows, meta.best_fixed.then_some(meta.networks));
    }
    let axes = pick_axes(&meta.task, &rows, &mut meta.notes);
    let (scored, summaries) = analysis::score_rows(&rows, &axes, meta.score);
    let trace_names: Vec<String> = meta.traces.iter().map(|t| t.name.clone()).collect();

    let mut results = table::results_frame(&rows, &scored)?;
    table::write_parquet(&mut results, &dir.join("results.parquet"))?;
    table::write_csv(&mut results, &dir.join("results.csv"))?;
    let mut ranking = table::ranking_frame(
        &summaries,
        &rows,
        &trace_names,
        axes.x.measure,
        axes.y.measure,
    )?;
    table::write_csv(&mut ranking, &dir.join("ranking.csv"))?;
    table::write_csv(&mut cdf_frame(&cdfs)?, &dir.join("idle_cdf.csv"))?;

    // A shard's plots and report would show a partial ranking: they are
    // drawn by `merge`.
    let figures = if meta.shard.is_none() {
        let figures = draw(dir, &meta, &axes, &rows, &scored, &summaries, &cdfs)?;
        let md = report::markdown(&meta, &summaries, &rows, &axes, &figures);
        atomic::write_bytes(&dir.join("report.md"), md.as_bytes())?;
        figures
    } else {
        Vec::new()
    };
    write_meta(dir, &meta)?;
    Ok(Outcome {
        meta,
        summaries,
        rows,
        axes,
        figures,
    })
}

fn draw(
    dir: &Path,
    meta: &RunMeta,
    axes: &Axes,
    rows: &[Row],
    scored: &[Scored],
    summaries: &[Summary],
    cdfs: &[IdleCdf],
) -> Result<Vec<Figure>, RankError> {
    let trace_names: Vec<String> = meta.traces.iter().map(|t| t.name.clone()).collect();
    plot::draw_all(
        &dir.join("plots"),
        &PlotInput {
            task: &meta.task,
            axes: *axes,
            rows,
            scored,
            summaries,
            traces: &trace_names,
            cdfs,
            pick: crate::report::pick(summaries, rows, &meta.limits),
            breakeven_s: meta.breakeven_s,
        },
    )
}

fn write_meta(dir: &Path, meta: &RunMeta) -> Result<(), RankError> {
    let text = toml::to_string(meta).map_err(|e| RankError::Table(format!("run.toml: {e}")))?;
    atomic::write_bytes(&dir.join("run.toml"), text.as_bytes())
}

/// Reads `run.toml` of a run directory.
pub fn read_meta(dir: &Path) -> Result<RunMeta, RankError> {
    let path = dir.join("run.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound && dir.is_dir() {
            RankError::Input(format!(
                "{}: no run.toml, so no finished `lull rank` output (it is written last: a shard whose task failed or was killed has none)",
                dir.display()
            ))
        } else if e.kind() == std::io::ErrorKind::NotFound || e.kind() == std::io::ErrorKind::NotADirectory {
            // A directory named wrong is the caller's input, not a failure
            // of the run (exit code 2).
            RankError::Input(format!(
                "{}: {}: a `lull rank --out` directory was expected",
                dir.display(),
                if dir.exists() {
                    "not a directory"
                } else {
                    "no such directory"
                }
            ))
        } else {
            RankError::io(&path, e)
        }
    })?;
    toml::from_str(&text).map_err(|e| RankError::Input(format!("{}: {e}", path.display())))
}

/// Reads the rows of a run directory (Parquet, or CSV without it).
pub fn read_rows(dir: &Path) -> Result<Vec<Row>, RankError> {
    let pq = dir.join("results.parquet");
    let df = if pq.exists() {
        table::read_parquet(&pq)?
    } else {
        table::read_csv(&dir.join("results.csv"))?
    };
    table::rows_from_frame(&df)
}

/// Combines shard directories into one run in `out`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Outcome, RankError> {
    merge_with(dirs, out, |_| {})
}

/// [`merge`], letting `adjust` change how the merged run is answered
/// (scores, limits) before its outputs are written.
pub fn merge_with(
    dirs: &[PathBuf],
    out: &Path,
    adjust: impl FnOnce(&mut RunMeta),
) -> Result<Outcome, RankError> {
    let Some(first) = dirs.first() else {
        return Err(RankError::Input("nothing to merge".into()));
    };
    let mut meta = read_meta(first)?;
    let mut rows: BTreeMap<(usize, usize), Row> = BTreeMap::new();
    let mut cdfs: BTreeMap<String, IdleCdf> = BTreeMap::new();
    let mut traces: BTreeMap<usize, TraceMeta> = BTreeMap::new();
    let mut notes: Vec<String> = Vec::new();
    let mut shards: Vec<(&Path, Option<Shard>)> = Vec::new();
    for dir in dirs {
        let m = read_meta(dir)?;
        let shard = match &m.shard {
            Some(s) => Some(
                s.parse::<Shard>()
                    .map_err(|e| RankError::Input(format!("{}: run.toml: {e}", dir.display())))?,
            ),
            None => None,
        };
        shards.push((dir, shard));
        for (what, a, b) in [
            ("task", &m.task, &meta.task),
            ("grid", &m.grid_fingerprint, &meta.grid_fingerprint),
            ("policy", &m.policy, &meta.policy),
            ("timing", &m.timing, &meta.timing),
        ] {
            if a != b {
                return Err(RankError::Input(format!(
                    "{} and {} were run with different {what}s ({b} vs {a}): they cannot be merged",
                    first.display(),
                    dir.display()
                )));
            }
        }
        if m.traces.len() != meta.traces.len() {
            return Err(RankError::Input(format!(
                "{} and {} rank different traces",
                first.display(),
                dir.display()
            )));
        }
        for t in m.traces {
            // A shard that loaded the trace knows its size.
            let e = traces.entry(t.index).or_insert_with(|| t.clone());
            if (&e.name, &e.source) != (&t.name, &t.source) {
                // Another seed, day or warm-up (or another file): the rows
                // of the two runs are not of one trace.
                return Err(RankError::Input(format!(
                    "{} and {} rank different traces as trace {}: `{}` ({}) against `{}` ({}): they cannot be merged",
                    first.display(),
                    dir.display(),
                    t.index + 1,
                    e.name,
                    e.source,
                    t.name,
                    t.source
                )));
            }
            if t.left_out.is_some() {
                e.left_out.clone_from(&t.left_out);
            }
            if e.requests == 0 {
                *e = t;
            }
        }
        for n in m.notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        for r in read_rows(dir)? {
            rows.insert((r.trace_index, r.network_index), r);
        }
        for c in read_cdfs(&dir.join("idle_cdf.csv"))? {
            cdfs.entry(c.trace.clone()).or_insert(c);
        }
    }
    complete(&shards).map_err(RankError::Input)?;
    meta.traces = traces.into_values().collect();
    meta.shard = None;
    meta.runs = rows.len();
    let expected = meta.networks * meta.ranked_traces();
    if rows.len() < expected {
        notes.push(format!(
            "merged {} of {} runs: some runs failed",
            rows.len(),
            expected
        ));
    }
    meta.notes = notes;
    adjust(&mut meta);
    let cdfs: Vec<IdleCdf> = meta
        .traces
        .iter()
        .filter_map(|t| cdfs.remove(&t.name))
        .collect();
    write_outputs(out, meta, rows.into_values().collect(), cdfs)
}

/// Whether the directories given to [`merge`] hold every shard of one
/// split: a merge of part of the shards would rank on part of the runs
/// and look like a whole ranking, so it is refused, naming the shard that
/// is missing (a scheduler's task that failed leaves no directory, or one
/// without `run.toml`, which is written last). A whole run among them
/// holds every run, and shards of different splits cannot be checked, so
/// they are refused too.
fn complete(shards: &[(&Path, Option<Shard>)]) -> Result<(), String> {
    if shards.iter().any(|(_, s)| s.is_none()) {
        return Ok(());
    }
    let Some(&(first, Some(split))) = shards.first() else {
        return Ok(());
    };
    let mut have = vec![false; split.count];
    for &(dir, shard) in shards {
        let Some(shard) = shard else { continue };
        if shard.count != split.count {
            return Err(format!(
                "{} holds shard {split} and {} shard {shard}: shards of different splits cannot be merged",
                first.display(),
                dir.display()
            ));
        }
        have[shard.index - 1] = true;
    }
    let missing: Vec<usize> = (1..=split.count).filter(|k| !have[k - 1]).collect();
    let Some(&k) = missing.first() else {
        return Ok(());
    };
    let list = |ks: &[usize]| {
        ks.iter()
            .map(|k| format!("{k}/{}", split.count))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let present: Vec<usize> = (1..=split.count).filter(|k| have[k - 1]).collect();
    let what = if missing.len() == 1 {
        format!(
            "shard {k}/{} is missing (scheduler index {}, counting from 0)",
            split.count,
            k - 1
        )
    } else {
        format!(
            "shards {} are missing (scheduler indices {}, counting from 0)",
            list(&missing),
            missing
                .iter()
                .map(|k| (k - 1).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let it = if missing.len() == 1 { "it" } else { "them" };
    Err(format!(
        "{what}: the merge was given {} {}, and without {it} would rank on part of the runs; rerun {it}, then merge all {}",
        if present.len() == 1 {
            "shard"
        } else {
            "shards"
        },
        list(&present),
        split.count
    ))
}

/// Redraws the plots (and `report.md`) of a run directory from its tables.
pub fn replot(dir: &Path) -> Result<Outcome, RankError> {
    let mut meta = read_meta(dir)?;
    let rows = read_rows(dir)?;
    let cdfs = read_cdfs(&dir.join("idle_cdf.csv"))?;
    let axes = pick_axes(&meta.task, &rows, &mut meta.notes);
    let (scored, summaries) = analysis::score_rows(&rows, &axes, meta.score);
    let figures = draw(dir, &meta, &axes, &rows, &scored, &summaries, &cdfs)?;
    let md = report::markdown(&meta, &summaries, &rows, &axes, &figures);
    atomic::write_bytes(&dir.join("report.md"), md.as_bytes())?;
    Ok(Outcome {
        meta,
        summaries,
        rows,
        axes,
        figures,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::complete;
    use crate::sweep::Shard;

    fn shard(index: usize, count: usize) -> Option<Shard> {
        Some(Shard { index, count })
    }

    #[test]
    fn a_merge_needs_every_shard_of_one_split() {
        let (a, b, c) = (Path::new("out/a"), Path::new("out/b"), Path::new("out/c"));
        assert_eq!(complete(&[(a, shard(2, 2)), (b, shard(1, 2))]), Ok(()));
        // A whole run holds every run; duplicates are harmless.
        assert_eq!(complete(&[(a, None), (b, shard(1, 4))]), Ok(()));
        assert_eq!(
            complete(&[(a, shard(1, 2)), (b, shard(2, 2)), (c, shard(2, 2))]),
            Ok(())
        );

        let e = complete(&[(a, shard(1, 4)), (b, shard(2, 4)), (c, shard(4, 4))]).unwrap_err();
        assert_eq!(
            e,
            "shard 3/4 is missing (scheduler index 2, counting from 0): the merge was given shards 1/4, 2/4, 4/4, and without it would rank on part of the runs; rerun it, then merge all 4"
        );
        let e = complete(&[(b, shard(2, 4))]).unwrap_err();
        assert!(
            e.starts_with(
                "shards 1/4, 3/4, 4/4 are missing (scheduler indices 0, 2, 3, counting from 0): the merge was given shard 2/4, and without them"
            ),
            "{e}"
        );
        let e = complete(&[(a, shard(1, 2)), (b, shard(2, 3))]).unwrap_err();
        assert_eq!(
            e,
            "out/a holds shard 1/2 and out/b shard 2/3: shards of different splits cannot be merged"
        );
    }
}
