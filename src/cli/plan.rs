//! `lull plan`: idle-time reservations for background jobs on one trace
//! (issue 19). The work is `lull_reserve::plan`; this file parses flags
//! and prints.

use std::io::Write;
use std::path::PathBuf;

use anyhow::anyhow;
use lull_core::event::Timeline;
use lull_core::time::{Nanos, parse_duration_in};
use lull_rank::plan_plot::PlanPlot;
use lull_reserve::plan::{JobSpec, PlanOptions, PlanReport, parse_job, plan};
use lull_reserve::reserve::{Decision, Request};

use super::replay::{load_trace, select_device};
use super::{CliError, Format};

/// Flags of `lull plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Trace file (any supported format). Without it, the built-in
    /// workload is used.
    trace: Option<PathBuf>,
    /// A job and its ranked requests, highest-ranked job first:
    /// NAME:AMOUNT/PERIOD[:step=S][:extra][,AMOUNT/PERIOD...], e.g.
    /// `scrub:2h/day:step=60s,1h/day:step=60s` or `trim:5m/hour`. PERIOD is
    /// hour, day or whole hours dividing a day; S may be relative to B.
    #[arg(long = "job", required = true)]
    jobs: Vec<String>,
    /// The drive (a preset, with optional overrides): its break-even time
    /// B for work that moves I/O (the service model's random access time,
    /// as for a daemon disk with `task = "jobs"` and the same `preset`)
    /// scales `--wait` and `B` in job specs.
    #[arg(long)]
    device: Option<String>,
    /// How long the device must be idle before a job starts (may be
    /// relative to B).
    #[arg(long, default_value = "B")]
    wait: String,
    /// Share of the forecast idle time kept for unreserved work.
    #[arg(long, default_value_t = 0.1)]
    best_effort: f64,
    /// Plan on mean − K·sd of each hour's usable idle time.
    #[arg(long, default_value_t = 0.0)]
    sigmas: f64,
    /// Built-in workload used without a TRACE.
    #[arg(long, default_value = "office")]
    workload: String,
    #[command(flatten)]
    source: super::SourceArgs,
    /// Write the plot (plan.svg, plan.png) into this directory.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Hours to two decimals; below a hundredth of an hour (36 s) the
/// duration itself, so a small shortfall does not read "0.00 h".
fn hours(n: Nanos) -> String {
    if n > Nanos::ZERO && n < Nanos::from_secs(36) {
        n.approx().to_string()
    } else {
        format!("{:.2} h", n.as_secs_f64() / 3600.0)
    }
}

fn request_text(r: &Request) -> String {
    r.to_string()
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    if let Some(dir) = &args.plot {
        super::check_out_dir("--plot", dir)?;
    }
    // The B of a daemon disk's `jobs` task on the same drive: one
    // resolution, so `step=2B` means the same here and in the daemon.
    let profile = lull_blktrace_replay::replay::profile(args.device.as_deref())?;
    let b = profile
        .io()
        .map_err(|e| CliError::input(anyhow!("--device: {e}")))?;
    // The service model that gives B (a preset may borrow another's).
    let drive = if profile.service().name == profile.preset() {
        profile.preset().to_string()
    } else {
        format!(
            "{} (service times of {})",
            profile.preset(),
            profile.service().name
        )
    };
    let wait = parse_duration_in(&args.wait, Some(b))
        .map_err(|e| CliError::input(anyhow!("--wait: {e}")))?;
    if !(0.0..1.0).contains(&args.best_effort) {
        return Err(CliError::input(anyhow!(
            "--best-effort {}: must be in [0, 1)",
            args.best_effort
        )));
    }
    if !(args.sigmas >= 0.0 && args.sigmas.is_finite()) {
        return Err(CliError::input(anyhow!(
            "--sigmas {}: must be zero or more",
            args.sigmas
        )));
    }
    let jobs: Vec<JobSpec> = args
        .jobs
        .iter()
        .map(|j| parse_job(j, Some(b)).map_err(|e| CliError::input(anyhow!("--job: {e}"))))
        .collect::<Result<_, _>>()?;
    let trace = load_trace(args.trace.as_ref(), &args.workload, &args.source)?;
    let requests = select_device(&trace, args.source.disk.as_deref())?;
    if requests.is_empty() {
        return Err(CliError::input(anyhow!("the trace has no requests")));
    }
    let timeline = Timeline::from_requests(&requests).with_clock(trace.clock);
    // A built-in workload lasts exactly --duration.
    let end = match &args.trace {
        None => Some(
            lull_core::time::parse_duration(&args.source.duration)
                .map_err(|e| CliError::input(anyhow!("--duration: {e}")))?,
        ),
        Some(_) => None,
    };
    let opts = PlanOptions {
        wait,
        best_effort: args.best_effort,
        sigmas: args.sigmas,
        end,
    };
    let report = plan(&timeline, &jobs, &opts).map_err(|e| CliError::input(anyhow!(e)))?;
    if report.forecast.hours_sampled() == 0 {
        eprintln!(
            "lull: warning: the trace ({:.1} min) covers no complete hour, so the forecast has no data and every request is refused; plan on a trace of a day or more",
            timeline.span().as_secs_f64() / 60.0
        );
    } else if report.forecast.hours_of_day_seen() < lull_reserve::forecast::HOURS_PER_DAY {
        eprintln!(
            "lull: warning: the trace covers {} of the day's {} hours; the hours it does not cover count as no idle time, so the capacity is understated; plan on a trace of a day or more",
            report.forecast.hours_of_day_seen(),
            lull_reserve::forecast::HOURS_PER_DAY
        );
    }
    let name = match &args.trace {
        Some(p) => p.display().to_string(),
        None => format!("{} (built-in, {})", args.workload, args.source.duration),
    };
    // A trace without a wall clock counts its hours from its start.
    let from_start = args.trace.is_some() && trace.clock.is_none();
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::runtime(anyhow!("{}: {e}", dir.display())))?;
        plot(&report, &name, dir, from_start)?;
    }
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        Format::Json => writeln!(out, "{}", json(&report, &opts, b)),
        Format::Text => text(
            &mut out,
            &report,
            &opts,
            (b, &drive),
            (&name, from_start),
            timeline.requests(),
        ),
    };
    written.map_err(CliError::runtime)
}

fn plot(
    report: &PlanReport,
    name: &str,
    dir: &std::path::Path,
    hours_from_start: bool,
) -> Result<(), CliError> {
    let days = report.days.max(1e-9);
    let mut idle_s = [0.0; 24];
    for (h, v) in idle_s.iter_mut().enumerate() {
        *v = report
            .forecast
            .hour(Nanos::ZERO, h)
            .map_or(0.0, |e| e.mean_s);
    }
    let jobs = report
        .jobs
        .iter()
        .map(|j| {
            let mut per = j.per_hour_s;
            for v in &mut per {
                *v /= days;
            }
            (j.name.clone(), per)
        })
        .collect();
    PlanPlot {
        title: format!("lull plan: {name}"),
        idle_s,
        jobs,
        hours_from_start,
    }
    .save(dir, "plan")
    .map_err(|e| CliError::runtime(anyhow!(e)))
}

fn text(
    out: &mut impl Write,
    r: &PlanReport,
    opts: &PlanOptions,
    (b, drive): (Nanos, &str),
    (name, from_start): (&str, bool),
    requests: usize,
) -> std::io::Result<()> {
    writeln!(
        out,
        "trace    {name}: {requests} requests over {:.2} days{}",
        r.days,
        if from_start {
            " (no wall clock: hours count from its start, 00:00 being its first)"
        } else {
            ""
        }
    )?;
    writeln!(
        out,
        "plan     drive {drive}   wait {} (B = {})   best-effort share {:.0} %   planning on mean - {}·sd per hour",
        opts.wait.approx(),
        b.approx(),
        opts.best_effort * 100.0,
        opts.sigmas
    )?;
    writeln!(out, "usable idle time per day (measured):")?;
    for &s in r.forecast.steps() {
        if let Some(e) = r.day_capacity(s) {
            let what = if s == Nanos::ZERO {
                "interruptible".to_string()
            } else {
                format!("step {}", s.approx())
            };
            writeln!(
                out,
                "  {what:<16} {:>9.3} h ± {:.3} h",
                e.mean_s / 3600.0,
                e.sd_s / 3600.0
            )?;
        }
    }
    writeln!(out, "jobs (in rank order):")?;
    for d in &r.decisions {
        match &d.decision {
            Decision::Granted { rank, request } => {
                writeln!(
                    out,
                    "  {:<10} admitted {} (choice {} of {})",
                    d.spec.name,
                    request_text(request),
                    rank + 1,
                    d.spec.ranked.len()
                )?;
            }
            Decision::Refused { shortfalls } => {
                for (req, s) in shortfalls {
                    writeln!(
                        out,
                        "  {:<10} refused  {}: short by {} per day ({:.1} % of the request; worst window from {:02}:00 short by {})",
                        d.spec.name,
                        request_text(req),
                        hours(s.per_day),
                        100.0 * s.per_day.as_secs_f64()
                            / (req.amount.as_secs_f64() * req.windows_per_day() as f64),
                        s.worst_window_hour,
                        hours(s.worst)
                    )?;
                }
            }
        }
    }
    if !r.jobs.is_empty() {
        writeln!(out, "schedule (complete windows only):")?;
        writeln!(
            out,
            "  {:<10} {:>12} {:>12} {:>10} {:>8} {:>9} {:>10} {:>10}",
            "job", "obtained", "requested", "deadlines", "steps", "overruns", "delayed", "delay"
        )?;
        for (j, d) in r.jobs.iter().zip(&r.delays) {
            writeln!(
                out,
                "  {:<10} {:>12} {:>12} {:>10} {:>8} {:>9} {:>10} {:>9.3}s",
                j.name,
                hours(j.obtained),
                hours(j.requested()),
                format!("{}/{}", j.met, j.windows),
                j.steps,
                j.overruns,
                d.requests,
                d.total.as_secs_f64()
            )?;
            if j.met < j.windows {
                writeln!(
                    out,
                    "  {:<10} missed {} window(s), the worst short by {}",
                    "",
                    j.windows - j.met,
                    hours(j.worst_shortfall)
                )?;
            }
            if j.overruns > 0 {
                // An overrun delays the user's I/O: said in words, not only
                // as a count in a column.
                writeln!(
                    out,
                    "  {:<10} warning: {} of its {} steps ran into I/O, which waited {:.3}s in all behind them; a shorter step= overruns less",
                    "",
                    j.overruns,
                    j.steps,
                    d.total.as_secs_f64()
                )?;
            }
        }
    }
    Ok(())
}

fn json(r: &PlanReport, opts: &PlanOptions, b: Nanos) -> String {
    use serde_json::{Value, json};
    let capacity: Vec<Value> = r
        .forecast
        .steps()
        .iter()
        .filter_map(|&s| {
            let e = r.day_capacity(s)?;
            Some(json!({"step_s": s.as_secs_f64(), "day_mean_s": e.mean_s, "day_sd_s": e.sd_s}))
        })
        .collect();
    let decisions: Vec<Value> = r
        .decisions
        .iter()
        .map(|d| match &d.decision {
            Decision::Granted { rank, request } => json!({
                "job": d.spec.name, "admitted": true, "rank": rank, "request": request_text(request),
            }),
            Decision::Refused { shortfalls } => json!({
                "job": d.spec.name, "admitted": false,
                "shortfalls": shortfalls.iter().map(|(req, s)| json!({
                    "request": request_text(req),
                    "per_day_s": s.per_day.as_secs_f64(),
                    "worst_window_s": s.worst.as_secs_f64(),
                    "worst_window_hour": s.worst_window_hour,
                })).collect::<Vec<_>>(),
            }),
        })
        .collect();
    let jobs: Vec<Value> = r
        .jobs
        .iter()
        .zip(&r.delays)
        .map(|(j, d)| {
            json!({
                "job": j.name, "request": request_text(&j.request),
                "step_s": j.request.step.as_secs_f64(),
                "obtained_s": j.obtained.as_secs_f64(), "requested_s": j.requested().as_secs_f64(),
                "windows": j.windows, "deadlines_met": j.met,
                "worst_shortfall_s": j.worst_shortfall.as_secs_f64(),
                "steps": j.steps, "overruns": j.overruns,
                "delayed_requests": d.requests, "delay_total_s": d.total.as_secs_f64(),
                "delay_max_s": d.max.as_secs_f64(),
            })
        })
        .collect();
    json!({
        "days": r.days, "wait_s": opts.wait.as_secs_f64(), "breakeven_s": b.as_secs_f64(),
        "best_effort": opts.best_effort, "sigmas": opts.sigmas,
        "capacity": capacity, "decisions": decisions, "jobs": jobs,
    })
    .to_string()
}
