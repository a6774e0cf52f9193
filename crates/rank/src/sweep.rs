//! Running a grid over workloads: each trace is parsed once into a
//! [`Timeline`] that every network reads, and the (trace, network) jobs
//! run in parallel on a rayon pool.
//!
//! Jobs are numbered trace-major: job `i` is trace `i / networks`, network
//! `i % networks`. Shard `K/N` runs the jobs with `i % N == K − 1`, a
//! strided slice, so expensive networks (long windows, skeptics) spread
//! evenly over the shards. Results carry their trace and network indices
//! and are always sorted by them, so the order in which jobs finish never
//! shows in an output file.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lull_blktrace_replay::activity;
use lull_blktrace_replay::replay::{
    ReplayOptions, replay_spec, replay_spec_runs_with, replay_spec_warm_with, replay_spec_with,
    trace_reference_runs,
};
use lull_blktrace_replay::synth;
use lull_core::event::Timeline;
use lull_core::registry::Registry;
use lull_core::request::Request;
use lull_core::time::Nanos;
use lull_tasks::spindown::BestFixed;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::RankError;
use crate::grid::Network;

/// `K/N`: the K-th (1-based) of N slices of the jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// K, from 1.
    pub index: usize,
    /// N, at least 1.
    pub count: usize,
}

impl Shard {
    /// The whole run.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Whether job `i` belongs to this shard.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count == self.index - 1
    }
}

impl Shard {
    /// `--shard auto`: the shard a cluster scheduler assigned, read
    /// through `var` (the process environment in [`Shard::auto`]):
    ///
    /// - Slurm job arrays: `SLURM_ARRAY_TASK_ID` minus
    ///   `SLURM_ARRAY_TASK_MIN` (0 when unset) is the 0-based index,
    ///   `SLURM_ARRAY_TASK_COUNT` the count;
    /// - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` (0-based) and the
    ///   count in `LULL_SHARD_COUNT` (set it to the Job's `completions`).
    ///
    /// `LULL_SHARD_COUNT` also overrides Slurm's count.
    pub fn auto_from(var: impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
        let num = |name: &str| -> Result<Option<usize>, String> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<usize>()
                    .map(Some)
                    .map_err(|_| format!("--shard auto: {name}={v:?} is not a whole number")),
            }
        };
        let (index0, count) = if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let count = num("LULL_SHARD_COUNT")?
                .or(num("SLURM_ARRAY_TASK_COUNT")?)
                .ok_or(
                    "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not",
                )?;
            let index0 = id.checked_sub(min).ok_or_else(|| {
                format!(
                    "--shard auto: SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
                )
            })?;
            (index0, count)
        } else if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let count = num("LULL_SHARD_COUNT")?.ok_or(
                "--shard auto: JOB_COMPLETION_INDEX is set but LULL_SHARD_COUNT is not (set it to the Job's completions)",
            )?;
            (i, count)
        } else {
            return Err("--shard auto: neither SLURM_ARRAY_TASK_ID (Slurm job array) nor JOB_COMPLETION_INDEX (Kubernetes Indexed Job) is set".into());
        };
        if count == 0 || index0 >= count {
            return Err(format!(
                "--shard auto: index {index0} (0-based) is not below the count {count}"
            ));
        }
        Ok(Shard {
            index: index0 + 1,
            count,
        })
    }

    /// [`Shard::auto_from`] the process environment.
    pub fn auto() -> Result<Shard, String> {
        Shard::auto_from(|k| std::env::var(k).ok())
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("bad shard {s:?}: expected K/N with 1 <= K <= N");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Where a workload comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A trace file (or directory) in any format the readers detect.
    File(PathBuf),
    /// One device of a multi-device trace file (`--disk all` ranks each
    /// device of a trace as a workload of its own).
    Device {
        /// The trace file (or directory).
        path: PathBuf,
        /// The device's name in the trace.
        device: String,
    },
    /// A built-in synthetic workload.
    Builtin {
        /// Its name (`workstation`, …).
        name: String,
        /// How long.
        duration: Nanos,
        /// Its seed.
        seed: u64,
        /// Which day of a several-day run it is (`lull rank --days N`,
        /// 1-based; its seed is [`day_seed`] of the run's), or `None`
        /// for a run of one day. It names the trace `office@2`.
        day: Option<u32>,
        /// `lull rank --warm-up`: every network first learns from a
        /// stretch of the same workload and length with this seed
        /// ([`warm_up_seed`] of its own), as a daemon that ran the day
        /// before would have, and is measured on this one alone.
        warm_up: Option<u64>,
    },
}

/// The seed of the stretch a built-in workload of seed `seed` is warmed
/// up on (`lull rank --warm-up`): a mix of `seed` that no day of a run
/// shares ([`day_seed`] mixes the run's seed with the day's number).
pub fn warm_up_seed(seed: u64) -> u64 {
    day_seed(seed ^ 0x5741_524D_5550_0000, 2)
}

/// The seed of day `day` (1-based) of a built-in workload in a run with
/// seed `seed` (`lull rank --days N`): day 1 is the run's seed itself, so
/// `--days 1` ranks the workload `--seed` names; day `k ≥ 2` is
/// SplitMix64's mix of (the mix of `seed`) + `k`, so that no day repeats
/// another and nearby run seeds do not share days.
pub fn day_seed(seed: u64, day: u32) -> u64 {
    fn mix(x: u64) -> u64 {
        let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    if day <= 1 {
        return seed;
    }
    mix(mix(seed).wrapping_add(u64::from(day)))
}

impl Source {
    /// A short name for tables and plot titles: the file name without
    /// extensions, or the workload's name.
    pub fn name(&self) -> String {
        match self {
            Source::Device { path, device } => {
                format!("{}[{device}]", Source::File(path.clone()).name())
            }
            Source::File(p) => {
                let base = p
                    .file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into());
                let mut stem = base.as_str();
                for ext in [".gz", ".bz2", ".zst", ".csv", ".txt", ".blktrace"] {
                    if let Some(s) = stem.strip_suffix(ext)
                        && !s.is_empty()
                    {
                        stem = s;
                    }
                }
                stem.to_string()
            }
            Source::Builtin {
                name, day: Some(d), ..
            } => format!("{name}@{d}"),
            Source::Builtin { name, .. } => name.clone(),
        }
    }

    /// Where it came from, for the run description.
    pub fn describe(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Device { path, device } => format!("{}, device {device}", path.display()),
            Source::Builtin {
                name,
                duration,
                seed,
                day,
                warm_up,
            } => format!(
                "built-in workload {name}, {} s, seed {seed}{}{}",
                duration.as_secs_f64(),
                day.map(|d| format!(" (day {d})")).unwrap_or_default(),
                warm_up
                    .map(|w| format!(", after learning from seed {w}"))
                    .unwrap_or_default()
            ),
        }
    }

    /// The sources `--disk all` ranks: a trace file with several devices
    /// becomes one [`Source::Device`] per device that has requests (in the
    /// trace's device order); everything else stays as it is. Reads each
    /// trace file once to list its devices.
    pub fn per_device(sources: &[Source], lenient: bool) -> Result<Vec<Source>, RankError> {
        let mut out = Vec::new();
        for src in sources {
            let Source::File(path) = src else {
                out.push(src.clone());
                continue;
            };
            let trace =
                lull_blktrace_replay::open(path, lull_blktrace_replay::ReadOptions { lenient })
                    .map_err(RankError::Trace)?;
            let mut used = vec![false; trace.devices.len()];
            for r in &trace.requests {
                if let Some(u) = used.get_mut(usize::from(r.device.0)) {
                    *u = true;
                }
            }
            if trace.devices.len() <= 1 {
                out.push(src.clone());
                continue;
            }
            out.extend(
                trace
                    .devices
                    .iter()
                    .zip(used)
                    .filter(|(_, used)| *used)
                    .map(|(device, _)| Source::Device {
                        path: path.clone(),
                        device: device.clone(),
                    }),
            );
        }
        Ok(out)
    }

    /// Every built-in workload, each `duration` long.
    pub fn all_builtin(duration: Nanos, seed: u64) -> Vec<Source> {
        Source::all_builtin_days(duration, seed, 1)
    }

    /// Every built-in workload on `days` days, each `duration` long: one
    /// day is the workload with `seed` (the names of [`all_builtin`]),
    /// several are `days` traces per workload named `office@1`,
    /// `office@2`, …, day `k` with seed [`day_seed`]`(seed, k)`, grouped
    /// by workload.
    ///
    /// [`all_builtin`]: Source::all_builtin
    pub fn all_builtin_days(duration: Nanos, seed: u64, days: u32) -> Vec<Source> {
        let mut out = Vec::new();
        for name in synth::names() {
            if days <= 1 {
                out.push(Source::Builtin {
                    name: name.to_string(),
                    duration,
                    seed,
                    day: None,
                    warm_up: None,
                });
                continue;
            }
            out.extend((1..=days).map(|d| Source::Builtin {
                name: name.to_string(),
                duration,
                seed: day_seed(seed, d),
                day: Some(d),
                warm_up: None,
            }));
        }
        out
    }

    /// The same source, warmed up (`lull rank --warm-up`): a built-in
    /// workload learns first from a stretch of [`warm_up_seed`] of its
    /// seed; a trace file cannot be (an error naming it).
    pub fn warmed_up(self) -> Result<Source, RankError> {
        match self {
            Source::Builtin {
                name,
                duration,
                seed,
                day,
                ..
            } => Ok(Source::Builtin {
                name,
                duration,
                seed,
                day,
                warm_up: Some(warm_up_seed(seed)),
            }),
            other => Err(RankError::Input(format!(
                "{}: --warm-up warms up the built-in workloads on another stretch of the same workload; \
                 a trace has none (replay one after another with lull replay TRACE --warm-up OTHER)",
                other.describe()
            ))),
        }
    }

    /// Reads (or generates) the workload. A multi-device trace is reduced
    /// to `disk`, or to its busiest device.
    pub fn load(&self, disk: Option<&str>, lenient: bool) -> Result<Workload, RankError> {
        let mut runs = Vec::new();
        let mut busy_polls = None;
        let mut warm = None;
        let mut notes = Vec::new();
        // A reader's notes, each naming its file, then the device picked.
        let mut read_notes = |trace: &lull_blktrace_replay::Trace, p: &Path| {
            notes.extend(trace.notes.iter().map(|n| format!("{}: {n}", p.display())));
        };
        let (requests, note, clock) = match self {
            Source::File(p) if activity::is_log(p).map_err(RankError::Trace)? => {
                // A daemon's log: its runs too, to restart where it did.
                let log = activity::open_log(p).map_err(RankError::Trace)?;
                read_notes(&log.trace, p);
                runs = log.runs;
                busy_polls = Some(log.busy_polls);
                if let Some((_, _, why)) = log.daemon_standbys.withheld().first() {
                    notes.push(format!(
                        "{}: the daemon sent no standby for part of the log ({why}); the ranking says what each network would have saved had its standbys gone (lull replay of the log withholds them, as the daemon did)",
                        p.display(),
                    ));
                }
                // Under a wear budget of 0 every network saves nothing,
                // and a ranking would recommend one tie among all: such
                // runs are ranked without a budget (`lull replay` of the
                // log still replays them as the daemon ran).
                let mut zero = 0;
                for r in &mut runs {
                    if r.max_spindowns_per_day == Some(0) {
                        r.max_spindowns_per_day = None;
                        zero += 1;
                    }
                }
                if zero > 0 {
                    notes.push(format!(
                        "{}: {zero} of its {} runs had a wear budget of 0 spin-downs a day (`max_spindowns_per_day = 0`: the daemon never spun the disk down); under it no network saves anything, so they are ranked without one (--max-spinups-per-day N recommends among the networks that keep N)",
                        p.display(),
                        runs.len()
                    ));
                }
                let (requests, note) = pick_device(&log.trace, disk, p)?;
                (requests, note, log.trace.clock)
            }
            Source::File(p) => {
                let trace =
                    lull_blktrace_replay::open(p, lull_blktrace_replay::ReadOptions { lenient })
                        .map_err(RankError::Trace)?;
                read_notes(&trace, p);
                let (requests, note) = pick_device(&trace, disk, p)?;
                (requests, note, trace.clock)
            }
            Source::Device { path, device } => {
                let trace =
                    lull_blktrace_replay::open(path, lull_blktrace_replay::ReadOptions { lenient })
                        .map_err(RankError::Trace)?;
                read_notes(&trace, path);
                let (requests, note) = pick_device(&trace, Some(device), path)?;
                (requests, note, trace.clock)
            }
            Source::Builtin {
                name,
                duration,
                seed,
                warm_up,
                ..
            } => {
                let shape =
                    synth::shape(name).ok_or_else(|| RankError::Input(synth::unknown(name)))?;
                // Structured workloads carry a wall clock (time 0 is midnight).
                let trace = synth::generate(shape, *duration, *seed);
                if let Some(w) = warm_up {
                    let t = synth::generate(shape, *duration, *w);
                    warm = Some(Timeline::from_requests(&t.requests).with_clock(t.clock));
                }
                (trace.requests, None, trace.clock)
            }
        };
        notes.extend(note);
        if requests.is_empty() {
            return Err(RankError::Input(format!(
                "{}: the trace has no requests",
                self.describe()
            )));
        }
        let mut w = Workload::from_requests(self.name(), self.describe(), &requests);
        w.timeline = std::mem::take(&mut w.timeline).with_clock(clock);
        w.notes = notes;
        w.runs = runs;
        w.busy_polls = busy_polls;
        w.warm = warm;
        Ok(w)
    }
}

fn pick_device(
    trace: &lull_blktrace_replay::Trace,
    disk: Option<&str>,
    path: &Path,
) -> Result<(Vec<Request>, Option<String>), RankError> {
    let (requests, busiest) = trace
        .select(disk)
        .map_err(|e| RankError::Input(format!("{}: {e}", path.display())))?;
    let note = busiest.map(|name| {
        format!(
            "{}: {} devices, ranked on the busiest, {name} (--disk NAME picks another, --disk all ranks each)",
            path.display(),
            trace.devices.len()
        )
    });
    Ok((requests, note))
}

/// One workload, parsed once and shared read-only by every network.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Short name.
    pub name: String,
    /// Where it came from.
    pub source: String,
    /// Its events.
    pub timeline: Timeline,
    /// What the user should know: what the reader did (a per-CPU file
    /// read with its siblings, requests that never completed, …) and the
    /// device chosen, each naming the file.
    pub notes: Vec<String>,
    /// For a daemon's activity log, where each of its runs began
    /// ([`lull_activity::Rebuilt::runs`](lull_blktrace_replay::activity::lull_activity::Rebuilt::runs)):
    /// with more than one, every network restarts where the daemon did,
    /// as `lull replay` of the log does. Empty for other traces.
    pub runs: Vec<activity::lull_activity::RunStart>,
    /// For a daemon's activity log, its polls that brought I/O: replayed
    /// with the daemon's checks, a standby such a poll overtook is skipped
    /// as the daemon skipped it ([`ReplayOptions::busy_polls`]).
    pub busy_polls: Option<std::sync::Arc<lull_tasks::BusyPolls>>,
    /// What every network learns from first (`lull rank --warm-up`;
    /// [`Source::warmed_up`]), or nothing.
    pub warm: Option<Timeline>,
}

/// The mean request rate of a timeline (requests over its span, IO/s):
/// what rate thresholds written relative to `R` resolve against.
pub fn mean_rate(t: &Timeline) -> f64 {
    let span = t.span().as_secs_f64().max(1e-3);
    t.requests() as f64 / span
}

impl Workload {
    /// A workload from requests sorted by arrival.
    pub fn from_requests(name: String, source: String, requests: &[Request]) -> Workload {
        Workload {
            name,
            source,
            timeline: Timeline::from_requests(requests),
            notes: Vec::new(),
            runs: Vec::new(),
            busy_polls: None,
            warm: None,
        }
    }
}

/// One finished job: a network on a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Index of the workload in the run.
    pub trace_index: usize,
    /// The workload's name.
    pub trace: String,
    /// Index of the network in the resolved grid.
    pub network_index: usize,
    /// The network's spec.
    pub spec: String,
    /// Whether it is the reference (oracle) row.
    pub reference: bool,
    /// Start detector family.
    pub start_family: String,
    /// Duration predictor family.
    pub duration_family: String,
    /// Skeptic at the sink, if any.
    pub skeptic: Option<String>,
    /// Parameters as written (`start.t` → `1s`).
    pub params: BTreeMap<String, String>,
    /// Every measure of the run, internal first, in report order.
    pub measures: Vec<(String, f64)>,
}

impl Row {
    /// The value of measure `name`.
    pub fn measure(&self, name: &str) -> Option<f64> {
        self.measures.iter().find(|m| m.0 == name).map(|m| m.1)
    }
}

/// The jobs of `shard` as `(trace, network)` index pairs, trace-major.
pub fn plan(traces: usize, networks: usize, shard: Shard) -> Vec<(usize, usize)> {
    (0..traces * networks)
        .filter(|&i| shard.owns(i))
        .map(|i| (i / networks, i % networks))
        .collect()
}

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Task, policy, device and timing of every replay.
    pub replay: ReplayOptions,
    /// Worker threads (`None`: one per core).
    pub jobs: Option<usize>,
    /// Draw a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
}

/// The result of a sweep.
#[derive(Clone, Debug, Default)]
pub struct SweepOutcome {
    /// Finished jobs, sorted by (trace, network).
    pub rows: Vec<Row>,
    /// Jobs that failed, one line each.
    pub failures: Vec<String>,
}

/// Runs `jobs` (from [`plan`]) of `networks` over `workloads` (indexed by
/// trace index; `None` for traces this shard does not need). A job whose
/// network index is `networks.len()` computes the best fixed timer in
/// hindsight on its trace ([`best_fixed_row`]).
pub fn run(
    workloads: &[Option<Workload>],
    networks: &[Network],
    jobs: &[(usize, usize)],
    registry: &Registry,
    opts: &SweepOptions,
) -> Result<SweepOutcome, RankError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| RankError::Input(format!("--jobs: {e}")))?;
    let bar = if opts.progress {
        let b =
            ProgressBar::with_draw_target(Some(jobs.len() as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} runs  eta {eta}  {msg}",
        ) {
            b.set_style(style);
        }
        b
    } else {
        ProgressBar::hidden()
    };
    let failed = AtomicUsize::new(0);
    // What every network of a trace is measured against (the best fixed
    // timeout for spindown), computed once per trace rather than per run.
    let references: Vec<Option<BestFixed>> = pool.install(|| {
        workloads
            .par_iter()
            .map(|w| {
                w.as_ref().and_then(|w| {
                    // A daemon's log: each run's wear budget, as its
                    // networks are replayed.
                    let runs = replayed_runs(w, &opts.replay);
                    trace_reference_runs(&w.timeline, &workload_options(w, &opts.replay), runs)
                        .ok()
                        .flatten()
                })
            })
            .collect()
    });
    let results: Vec<Result<Option<Row>, String>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(t, n)| {
                let out = if n == networks.len() {
                    workloads
                        .get(t)
                        .and_then(Option::as_ref)
                        .ok_or_else(|| format!("trace #{t} was not loaded"))
                        .and_then(|w| {
                            let reference = references.get(t).copied().flatten();
                            best_fixed_row(w, t, n, &networks[0], reference, registry, &opts.replay)
                        })
                } else {
                    let reference = references.get(t).copied().flatten();
                    run_one(
                        workloads,
                        networks,
                        (t, n),
                        reference,
                        registry,
                        &opts.replay,
                    )
                    .map(Some)
                };
                if out.is_err() {
                    let f = failed.fetch_add(1, Ordering::Relaxed) + 1;
                    bar.set_message(format!("{f} failed"));
                }
                bar.inc(1);
                out
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut outcome = SweepOutcome::default();
    for r in results {
        match r {
            Ok(Some(row)) => outcome.rows.push(row),
            Ok(None) => {}
            Err(e) => outcome.failures.push(e),
        }
    }
    outcome
        .rows
        .sort_by_key(|r| (r.trace_index, r.network_index));
    Ok(outcome)
}

/// `opts` for replays of `w`: with the daemon's checks, a log's polls
/// that brought I/O too, so that the standbys they overtook are skipped.
fn workload_options<'a>(w: &Workload, opts: &'a ReplayOptions) -> Cow<'a, ReplayOptions> {
    match &w.busy_polls {
        Some(p) if !opts.gate.is_open() => Cow::Owned(ReplayOptions {
            busy_polls: Some(p.clone()),
            ..opts.clone()
        }),
        _ => Cow::Borrowed(opts),
    }
}

/// The daemon's runs `w` is replayed with, each network restarting and
/// checked with its run's budget where the daemon did: a log of several
/// runs, for a trace-timed task (the daemon runs no task on a device
/// model); empty otherwise (one run).
fn replayed_runs<'a>(
    w: &'a Workload,
    opts: &ReplayOptions,
) -> &'a [activity::lull_activity::RunStart] {
    let trace_timed = lull_blktrace_replay::replay::resolve_timing(&opts.task, opts.timing)
        .is_ok_and(|t| t != lull_blktrace_replay::replay::Timing::Model);
    if w.runs.len() > 1 && trace_timed {
        &w.runs
    } else {
        &[]
    }
}

fn run_one(
    workloads: &[Option<Workload>],
    networks: &[Network],
    (t, n): (usize, usize),
    reference: Option<BestFixed>,
    registry: &Registry,
    opts: &ReplayOptions,
) -> Result<Row, String> {
    let w = workloads
        .get(t)
        .and_then(Option::as_ref)
        .ok_or_else(|| format!("trace #{t} was not loaded"))?;
    let net = &networks[n];
    let opts = &*workload_options(w, opts);
    let spec = net
        .spec_for(mean_rate(&w.timeline), registry)
        .map_err(|e| format!("{e} on {}", w.name))?;
    // The oracle is the bound no policy exceeds: under the daemon's wear
    // budget it would spend the budget on the first gaps longer than B
    // and save less than networks that wait for the long ones, so its row
    // ignores the daemon's checks, the budget and the polls (as its
    // measure, `oracle_energy_j`, does).
    let ungated;
    let opts = if net.reference && net.description.start_family == "oracle" {
        ungated = ReplayOptions {
            gate: lull_tasks::StandbyGate::default(),
            busy_polls: None,
            ..opts.clone()
        };
        &ungated
    } else {
        opts
    };
    let out = if let Some(warm) = &w.warm {
        replay_spec_warm_with(&w.timeline, warm, &spec, registry, opts, reference)
    } else if let runs @ [_, ..] = replayed_runs(w, opts) {
        replay_spec_runs_with(&w.timeline, &spec, registry, opts, runs, reference).map(|o| o.0)
    } else {
        replay_spec_with(&w.timeline, &spec, registry, opts, reference)
    }
    .map_err(|e| format!("`{}` on {}: {e}", net.text, w.name))?;
    let d = &net.description;
    let measures = measures_of(&out.report, &w.timeline);
    Ok(Row {
        trace_index: t,
        trace: w.name.clone(),
        network_index: n,
        spec: net.text.clone(),
        reference: net.reference,
        start_family: d.start_family.clone(),
        duration_family: d.duration_family.clone(),
        skeptic: d.skeptic.clone(),
        params: d.params.clone(),
        measures,
    })
}

/// A replay's measures as owned pairs, with their per-time forms
/// ([`add_rates`]).
fn measures_of(report: &lull_core::engine::RunReport, t: &Timeline) -> Vec<(String, f64)> {
    let mut m: Vec<(String, f64)> = report
        .pairs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    add_rates(&mut m, t);
    m
}

/// Appends the per-time forms of a task's counts: `delayed_ops_per_hour`,
/// `wait_s_per_hour` and `spinups_per_day` over the trace's span, the
/// units limits are written in (`--max-delayed-per-hour`,
/// `--max-spinups-per-day`, the daemon's `max_spindowns_per_day`).
pub fn add_rates(measures: &mut Vec<(String, f64)>, t: &Timeline) {
    let span = t.span().as_secs_f64();
    if span <= 0.0 {
        return;
    }
    let get = |m: &[(String, f64)], k: &str| m.iter().find(|p| p.0 == k).map(|p| p.1);
    if let Some(d) = get(measures, "delayed_ops") {
        measures.push((DELAYED_PER_HOUR.into(), d * 3600.0 / span));
    }
    if let Some(w) = get(measures, "added_latency_s") {
        measures.push((WAIT_PER_HOUR.into(), w * 3600.0 / span));
    }
    if let Some(s) = get(measures, "spinups") {
        measures.push((SPINUPS_PER_DAY.into(), s * 86_400.0 / span));
    }
}

/// Delayed operations per hour of trace.
pub const DELAYED_PER_HOUR: &str = "delayed_ops_per_hour";
/// Seconds requests waited behind spin-ups, per hour of trace: the
/// spin-down task's cost axis. A spin-down before a 5 s period costs its
/// request a whole spin-up; counting requests alone, a network that
/// delayed one request by 10 s looked as good as one that delayed it by
/// 10 ms.
pub const WAIT_PER_HOUR: &str = "wait_s_per_hour";
/// Spin-ups per day of trace.
pub const SPINUPS_PER_DAY: &str = "spinups_per_day";

/// The best fixed timer in hindsight on one trace, as a row: the task
/// reports the timeout (`best_fixed_timeout_s`, computed exactly from the
/// idle periods) on any replay, and `timer(t=THAT)` is replayed so the row
/// carries every measure. `None` when the task reports no such timeout.
pub fn best_fixed_row(
    w: &Workload,
    trace_index: usize,
    network_index: usize,
    probe: &Network,
    reference: Option<BestFixed>,
    registry: &Registry,
    opts: &ReplayOptions,
) -> Result<Option<Row>, String> {
    let opts = &*workload_options(w, opts);
    let t = match reference {
        // Computed once per trace (`trace_reference`): no probe replay.
        Some(b) => Some(b.timeout_s),
        None => {
            let first = replay_spec(
                &w.timeline,
                &probe.spec_for(mean_rate(&w.timeline), registry)?,
                registry,
                opts,
            )
            .map_err(|e| format!("best fixed timer on {}: {e}", w.name))?;
            first
                .report
                .pairs()
                .into_iter()
                .find(|p| p.0 == BEST_FIXED_TIMEOUT)
                .map(|p| p.1)
        }
    };
    let Some(t) = t.filter(|t| *t >= 0.0) else {
        return Ok(None);
    };
    // "Never spin down" (an infinite timeout): a timer longer than the
    // trace never fires.
    let never = !t.is_finite();
    let t = if never {
        w.timeline.span().as_secs_f64().ceil() + 1.0
    } else {
        t
    };
    // To the nanosecond: the best timeout lies just above an idle period's
    // length, and a rounded one could fire in that period.
    // A daemon's log of several runs: its timers replayed as the
    // networks' rows are, each run with its own budget.
    let runs = replayed_runs(w, opts);
    let reference = match reference {
        Some(r) => Some(r),
        None => trace_reference_runs(&w.timeline, opts, runs)
            .map_err(|e| format!("best fixed timer on {}: {e}", w.name))?,
    };
    let timer = |t: f64| -> Result<_, String> {
        let text = format!("timer(t={}ns)", Nanos::from_secs_f64(t).0);
        let spec = lull_core::spec::NetworkSpec::parse(&text, Some(registry))
            .map_err(|e| format!("`{text}`: {}", e.message))?;
        if runs.is_empty() {
            replay_spec_with(&w.timeline, &spec, registry, opts, reference)
        } else {
            replay_spec_runs_with(&w.timeline, &spec, registry, opts, runs, reference).map(|o| o.0)
        }
        .map_err(|e| format!("`{text}` on {}: {e}", w.name))
    };
    let mut best = (t, never, timer(t)?);
    // Under the daemon's wear budget (its activity log records one), the
    // timeout that is best without it can spend the budget in the first
    // short gaps and sit the long ones out awake: the reference is then
    // the best of it and the shadow's candidates (B/64 to 128·B, hd-idle's
    // and hdparm's, 20 minutes; from the daemon's poll on), each replayed
    // under the budget.
    let gated = opts.gate.max_spindowns_per_day.zip(opts.gate.break_even);
    if let Some((_, b)) = gated {
        let energy = |o: &lull_blktrace_replay::replay::ReplayOutcome| {
            o.report
                .pairs()
                .into_iter()
                .find(|p| p.0 == "energy_j")
                .map_or(f64::INFINITY, |p| p.1)
        };
        // The shadow's own candidates, from the daemon's poll on.
        let grid = activity::lull_activity::shadow::fixed_timeouts(b, opts.reference_floor);
        for c in grid.into_iter().map(Nanos::as_secs_f64) {
            let out = timer(c)?;
            if energy(&out) < energy(&best.2) {
                best = (c, false, out);
            }
        }
    }
    let (t, never, out) = best;
    let measures = measures_of(&out.report, &w.timeline);
    let mut params = BTreeMap::new();
    let shown = if never {
        "never".to_string()
    } else {
        format!("{}s", (t * 1e3).round() / 1e3)
    };
    params.insert("start.t".to_string(), shown);
    if gated.is_some() {
        params.insert(UNDER.to_string(), "the wear budget".to_string());
    }
    Ok(Some(Row {
        trace_index,
        trace: w.name.clone(),
        network_index,
        spec: crate::grid::BEST_FIXED.into(),
        reference: true,
        start_family: "timer".into(),
        duration_family: "no-duration".into(),
        skeptic: None,
        params,
        measures,
    }))
}

/// The parameter of a best-fixed reference row chosen under the daemon's
/// wear budget ([`best_fixed_row`]): what it was chosen under.
pub const UNDER: &str = "under";

/// The measure key of the best fixed timeout in hindsight.
pub const BEST_FIXED_TIMEOUT: &str = "best_fixed_timeout_s";

/// The cumulative distribution of idle-period lengths of one trace
/// (Figure 2): by count and weighted by time.
#[derive(Clone, Debug, PartialEq)]
pub struct IdleCdf {
    /// The trace.
    pub trace: String,
    /// `(length_s, fraction of periods ≤ length, fraction of idle time in
    /// periods ≤ length)`, lengths increasing.
    pub points: Vec<(f64, f64, f64)>,
}

impl IdleCdf {
    /// Computes the CDF at 120 log-spaced lengths from 1 ms (or the
    /// shortest period) to the longest period.
    pub fn of(name: &str, timeline: &Timeline) -> IdleCdf {
        let mut lens: Vec<f64> = timeline
            .idle_periods()
            .map(|p| p.len().as_secs_f64())
            .filter(|l| *l > 0.0)
            .collect();
        lens.sort_by(f64::total_cmp);
        let mut points = Vec::new();
        if let (Some(&lo), Some(&hi)) = (lens.first(), lens.last()) {
            let total: f64 = lens.iter().sum();
            let n = lens.len() as f64;
            let lo = lo.clamp(1e-6, 1e-3);
            let steps = 120;
            let (mut i, mut acc) = (0usize, 0.0f64);
            for s in 0..=steps {
                let l = if s == steps {
                    hi
                } else {
                    lo * (hi / lo).powf(s as f64 / steps as f64)
                };
                while i < lens.len() && lens[i] <= l {
                    acc += lens[i];
                    i += 1;
                }
                points.push((l, i as f64 / n, if total > 0.0 { acc / total } else { 0.0 }));
            }
        }
        IdleCdf {
            trace: name.to_string(),
            points,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_jobs() {
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        for bad in ["0/3", "4/3", "1/0", "x", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let all = plan(3, 5, Shard::ALL);
        assert_eq!(all.len(), 15);
        assert_eq!(all[6], (1, 1));
        let mut union: Vec<_> = (1..=4)
            .flat_map(|k| plan(3, 5, Shard { index: k, count: 4 }))
            .collect();
        union.sort_unstable();
        assert_eq!(union, all);
    }

    #[test]
    fn names_drop_extensions() {
        assert_eq!(Source::File("/x/hm_0.csv.gz".into()).name(), "hm_0");
        assert_eq!(
            Source::File("sda.blktrace.0".into()).name(),
            "sda.blktrace.0"
        );
    }

    #[test]
    fn idle_cdf_reaches_one() {
        let s = Nanos::from_secs;
        let reqs = [
            Request::new(s(0), s(1), lull_core::request::Op::Read, 0, 512),
            Request::new(s(2), s(3), lull_core::request::Op::Read, 0, 512),
            Request::new(s(13), s(14), lull_core::request::Op::Read, 0, 512),
        ];
        let cdf = IdleCdf::of("t", &Timeline::from_requests(&reqs));
        let last = cdf.points.last().unwrap();
        assert_eq!((last.0, last.1, last.2), (10.0, 1.0, 1.0));
        // Half the periods are ≤ 1 s; they hold 1/11 of the idle time.
        let at1 = cdf.points.iter().rfind(|p| p.0 <= 1.0 + 1e-9).unwrap();
        assert_eq!(at1.1, 0.5);
        assert!((at1.2 - 1.0 / 11.0).abs() < 1e-12);
    }
}
