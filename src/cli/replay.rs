//! `lull replay`: one network, one task, one trace.

use std::io::Write;
use std::path::PathBuf;

use anyhow::anyhow;
use lull_blktrace_replay::replay::{
    ReplayOptions, Timing, default_policy, presets_that_serve, replay_spec, resolve_timing,
    saturation_check,
};
use lull_blktrace_replay::{Trace, synth};
use lull_core::actuator::StopPolicy;
use lull_core::event::Timeline;
use lull_core::spec::NetworkSpec;
use lull_core::time::{Nanos, parse_duration};

use super::{CliError, Format, json_number_map};

/// Flags of `lull replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Trace file (any supported format, detected by content). Without it,
    /// the built-in synthetic workload is replayed.
    trace: Option<PathBuf>,
    /// The detector network, as a one-line spec (`timer(2B) + fixed(10s)`,
    /// durations may be relative to the device's break-even time B, rates
    /// to the trace's mean request rate R: `rate=R/4`), a named network (`auto`: lull's recommendation for the device) or
    /// `@FILE.toml`. Default: `auto`, or for a daemon's activity log the
    /// network it last ran.
    #[arg(long)]
    net: Option<String>,
    /// The idle task. Default: `none`, or for the activity log of a
    /// `standby` disk `spindown`.
    #[arg(long)]
    task: Option<String>,
    /// Device preset for tasks that model a drive. Default: the paper's
    /// drive, or for a daemon's activity log the drive it last ran with.
    #[arg(long)]
    device: Option<String>,
    /// Stop policy: predicted-end, when-busy, earlier-of, later-of.
    /// Default: predicted-end for task none (the paper's method for
    /// internal measures), earlier-of otherwise.
    #[arg(long)]
    policy: Option<String>,
    /// Request timing: trace (as recorded), model (device service model),
    /// or auto: what the task needs (trace for none and spindown, model
    /// for writeback and cleaning).
    #[arg(long, default_value = "auto")]
    timing: String,
    /// Built-in workload used without a TRACE.
    #[arg(long, default_value = "workstation")]
    workload: String,
    #[command(flatten)]
    source: super::SourceArgs,
    /// Replay under model timing even if the device model cannot serve the
    /// trace (utilization ≥ 1 over a minute, or a minute of queueing);
    /// the measures are then mostly queueing noise.
    #[arg(long)]
    allow_saturated: bool,
    /// Write the action log (every prediction and command) as JSON lines.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Rebuild the network every DURATION (at the first arrival that ends
    /// an idle period after each multiple), as a daemon restarted that
    /// often would: what forgetting costs (`24h`: a daily reboot). Trace-
    /// timed tasks only (none, spindown).
    #[arg(long, value_name = "DURATION")]
    restart_every: Option<String>,
    /// With --restart-every: the new network gets what the old one learned
    /// (as the daemon keeps it in its state file).
    #[arg(long, requires = "restart_every")]
    keep_state: bool,
    /// Before the trace, the network learns from this one (any supported
    /// format; the day before, say), and starts the trace with what it
    /// learned, as a daemon restarted between them would: the measures
    /// are the trace's alone, of a network that has already learned.
    /// Trace-timed tasks only (none, spindown).
    #[arg(long, value_name = "TRACE", conflicts_with_all = ["restart_every", "warm_up_seed"])]
    warm_up: Option<PathBuf>,
    /// Like --warm-up, from the built-in workload with this seed (the same
    /// workload; without a TRACE only).
    #[arg(long, value_name = "SEED", conflicts_with = "restart_every")]
    warm_up_seed: Option<u64>,
    /// With --warm-up-seed: how long a stretch of the workload the network
    /// learns from. Default: --duration.
    #[arg(long, value_name = "DURATION", requires = "warm_up_seed")]
    warm_up_duration: Option<String>,
    /// For a daemon's activity log of several runs: replay it as one run.
    /// By default the network restarts where the daemon restarted, in the
    /// run's own time frame and wall clock, with what the run before
    /// learned (as the daemon restores it), so the replay decides as the
    /// daemon did.
    #[arg(long, conflicts_with = "restart_every")]
    one_run: bool,
    /// For spindown: make the daemon's checks before each spin-down
    /// (`daemon`: its wear budget and its refusal of a start predicted
    /// shorter than the drive's break-even time, as `lulld` makes them) or
    /// none (the lab's model, SPEC §4.2). Default: `daemon` for a daemon's
    /// activity log (its drive and wear budget, from its last session) or
    /// with --max-spindowns-per-day; `none` otherwise.
    #[arg(long, value_enum, value_name = "CHECKS")]
    standby_checks: Option<StandbyChecks>,
    /// For spindown, with the daemon's checks: the wear budget, spin-downs
    /// a day (`max_spindowns_per_day`: a token bucket under a cap per UTC
    /// day; 0 never spins down), for every run of an activity log. `auto`
    /// knows it and paces itself; the references (best fixed timeout,
    /// clairvoyant, `budget_oracle_energy_j`) are held to it. Default:
    /// each run's own, as its session recorded it, else unlimited.
    #[arg(long, value_name = "N")]
    max_spindowns_per_day: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// `--standby-checks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum StandbyChecks {
    /// The daemon's: wear budget and break-even.
    Daemon,
    /// None (SPEC §4.2).
    None,
}

pub(crate) fn load_spec(
    text: &str,
    registry: &lull_core::registry::Registry,
) -> Result<NetworkSpec, CliError> {
    if let Some(path) = text.strip_prefix('@') {
        let doc =
            std::fs::read_to_string(path).map_err(|e| CliError::input(anyhow!("{path}: {e}")))?;
        NetworkSpec::from_toml(&doc, Some(registry))
            .map_err(|e| CliError::input(anyhow!("{path}: {e}")))
    } else {
        NetworkSpec::parse(text, Some(registry)).map_err(CliError::input)
    }
}

/// The trace at `path`, or without one the built-in `workload` as
/// `source` sets it (length, seed), read as `source` says (lenient).
pub(crate) fn load_trace(
    path: Option<&PathBuf>,
    workload: &str,
    source: &super::SourceArgs,
) -> Result<Trace, CliError> {
    let (duration, seed) = (source.duration.as_str(), source.seed);
    match path {
        Some(p) => super::open_trace(p, source.columns.as_deref(), source.lenient),
        None => {
            if source.columns.is_some() {
                return Err(CliError::input(anyhow!(
                    "--columns maps a CSV's columns: name the TRACE it is for"
                )));
            }
            let shape = synth::shape(workload)
                .ok_or_else(|| CliError::input(anyhow!(synth::unknown(workload))))?;
            let d: Nanos = parse_duration(duration)
                .map_err(|e| CliError::input(anyhow!("--duration: {e}")))?;
            Ok(synth::generate(shape, d, seed))
        }
    }
}

pub(crate) fn select_device(
    trace: &Trace,
    disk: Option<&str>,
) -> Result<Vec<lull_core::request::Request>, CliError> {
    let (requests, busiest) = trace
        .select(disk)
        .map_err(|e| CliError::input(anyhow!(e)))?;
    if let Some(name) = busiest {
        eprintln!(
            "lull: the trace has {} devices; replaying the busiest, {name} (choose with --disk)",
            trace.devices.len()
        );
    }
    Ok(requests)
}

pub(crate) fn run(mut args: Args) -> Result<(), CliError> {
    // A daemon's activity log is read once, for its requests and for the
    // session that says how the daemon ran.
    let mut session = None;
    let mut runs = Vec::new();
    let mut busy_polls = None;
    let mut daemon_standbys = None;
    let chosen_net = args.net.is_some();
    let trace = match args.trace.clone() {
        Some(p) if is_activity_log(&p)? => {
            let log = lull_blktrace_replay::activity::open_log(&p)?;
            daemon_defaults(&mut args, &log.session);
            session = Some(log.session);
            runs = log.runs;
            busy_polls = Some(log.busy_polls);
            daemon_standbys = Some(log.daemon_standbys).filter(|d| !d.is_empty());
            if args.max_spindowns_per_day.is_some() {
                // The budget asked for wins over each run's own.
                for r in &mut runs {
                    r.max_spindowns_per_day = None;
                }
            }
            log.trace
        }
        _ => load_trace(args.trace.as_ref(), &args.workload, &args.source)?,
    };
    let task = args.task.clone().unwrap_or_else(|| "none".into());
    let registry = lull_blktrace_replay::replay::registry_for(
        &lull::registry(),
        &task,
        args.device.as_deref(),
    )?;
    let asked = args.net.as_deref().unwrap_or("auto");
    // A rate written relative to the trace's mean request rate (`R/4`, as
    // `lull rank` writes its rows) resolves once the requests are known.
    let rate_relative = !asked.starts_with('@') && lull_rank::grid::rate_relative(asked);
    let spec = match rate_relative {
        true => None,
        false => Some(load_spec(asked, &registry)?),
    };
    let policy = match &args.policy {
        Some(p) => Some(
            p.parse::<StopPolicy>()
                .map_err(|e| CliError::input(anyhow!("--policy: {e}")))?,
        ),
        None => None,
    };
    let timing: Timing = args
        .timing
        .parse()
        .map_err(|e: String| CliError::input(anyhow!("--timing: {e}")))?;
    // What the reader did: records skipped, a torn tail of the daemon's
    // activity log read up to it, a per-CPU file read with its siblings,
    // requests that never completed.
    super::trace::report_reading(args.trace.as_deref(), &trace);
    let requests = select_device(&trace, args.source.disk.as_deref())?;
    if requests.is_empty() {
        return Err(CliError::input(anyhow!("the trace has no requests")));
    }
    let timeline = Timeline::from_requests(&requests).with_clock(trace.clock);
    let spec = match spec {
        Some(spec) => spec,
        None => {
            // As `lull rank` resolves it, to the digit, so a ranked row
            // replays to the same numbers.
            let rate = lull_rank::sweep::mean_rate(&timeline);
            let text = lull_rank::grid::with_rate(asked, rate).ok_or_else(|| {
                CliError::input(anyhow!(
                    "--net: a malformed rate relative to R in `{asked}` (write R, 4R, R/16)"
                ))
            })?;
            eprintln!(
                "lull: note: R is this trace's mean request rate, {} IO/s: replaying `{text}`",
                lull_rank::grid::with_rate("x=R", rate)
                    .unwrap_or_default()
                    .trim_start_matches("x=")
            );
            load_spec(&text, &registry)?
        }
    };
    let gate = standby_gate(&args, session.as_ref(), &task)?;
    let opts = ReplayOptions {
        task,
        policy,
        device: args.device.clone(),
        timing,
        log: args.log.is_some(),
        gate,
        // A daemon's log: its references from its poll on (it could not act
        // sooner, and shorter gaps are the log's reconstruction).
        reference_floor: session.as_ref().map_or(Nanos::ZERO, |s| s.poll),
        // With the daemon's checks, the standbys its polls overtook are
        // skipped as it skipped them.
        busy_polls: busy_polls.filter(|_| !gate.is_open()),
        // And what it did with its standbys: none where it withheld
        // them, the disk left spinning where one failed.
        daemon_standbys: daemon_standbys.filter(|_| !gate.is_open()),
    };
    if let Some(d) = &opts.daemon_standbys {
        for note in daemon_standbys_notes(d) {
            eprintln!("lull: note: {note}");
        }
    }
    if let Some(sat) = saturation_check(&timeline, &opts)?.filter(|s| s.is_saturated()) {
        let what = format!(
            "the device model `{}` cannot serve this trace: {sat}",
            opts.device
                .as_deref()
                .unwrap_or(lull_tasks::device::DEFAULT_PRESET)
        );
        if !args.allow_saturated {
            let current = opts
                .device
                .as_deref()
                .unwrap_or(lull_tasks::device::DEFAULT_PRESET);
            let serve: Vec<String> = presets_that_serve(&timeline, &opts)?
                .into_iter()
                .filter(|&p| p != current)
                .map(|p| format!("--device {p}"))
                .collect();
            let faster = if serve.is_empty() {
                "no built-in preset serves it: describe a faster disk \
                 (--device PRESET,key=value,...)"
                    .to_string()
            } else {
                format!(
                    "a preset whose model passes the same check ({}: not necessarily a faster disk)",
                    serve.join(" or ")
                )
            };
            return Err(CliError::input(anyhow!(
                "{what}\nhint: {faster}, --timing trace for tasks that do not move I/O, \
                 a shorter stretch of the trace, or --allow-saturated to replay it anyway"
            )));
        }
        eprintln!("lull: warning: {what} (replaying anyway: --allow-saturated)");
    }
    // A daemon's restarts, replayed where it made them (not with
    // --restart-every, which asks for others, nor a task on a device
    // model, which the daemon does not run).
    let daemon_runs = runs.len() > 1
        && !args.one_run
        && args.restart_every.is_none()
        && resolve_timing(&opts.task, timing)? != Timing::Model;
    if daemon_runs {
        // Crashes, by whether the crashed run's daemon named its saves.
        let (named, unnamed) = runs
            .windows(2)
            .filter(|w| !w[1].clean)
            .fold((0, 0), |(n, u), w| {
                if w[0].saves_learned {
                    (n + 1, u)
                } else {
                    (n, u + 1)
                }
            });
        let mut crashes = String::new();
        if named > 0 {
            crashes += &format!(
                "; {named} run(s) ended without a clean stop: the next resumes from the daemon's \
                 last save before it, as the daemon did"
            );
        }
        if unnamed > 0 {
            crashes += &format!(
                "; {unnamed} run(s) ended without a clean stop in a log of an older lulld, which \
                 does not say when it last saved: the next resumes from the run's end"
            );
        }
        let dry = runs.iter().filter(|r| r.dry_run).count();
        if dry > 0 {
            crashes += &format!(
                "; {dry} dry run(s) (lulld --dry-run): each mode kept its own state file and wear \
                 budget, as the daemon does, and a real run with nothing learned took the dry \
                 run's"
            );
        }
        eprintln!(
            "lull: note: the daemon's activity log holds {} runs: the network restarts where the daemon did, \
             with what its state file held (as one run: --one-run){crashes}",
            runs.len(),
        );
    }
    // A daemon whose network changed between runs: each run with its own,
    // as it ran (unless --net asks what one network would have done).
    let own_networks = daemon_runs
        && !chosen_net
        && runs
            .iter()
            .any(|r| r.network != runs[runs.len() - 1].network);
    let warm = warm_up_timeline(&args, &requests)?;
    if warm.is_some() && daemon_runs {
        return Err(CliError::input(anyhow!(
            "--warm-up and --warm-up-seed replay one run: add --one-run for a daemon's activity log of {} runs",
            runs.len()
        )));
    }
    let (outcome, restarts) = match &args.restart_every {
        None if warm.is_some() => {
            let warm = warm.as_ref().expect("checked");
            let o = lull_blktrace_replay::replay::replay_spec_warm(
                &timeline, warm, &spec, &registry, &opts,
            )?;
            (o, None)
        }
        None if own_networks => {
            let specs = runs
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    load_spec(&r.network, &registry).map_err(|e| {
                        CliError::input(anyhow!(
                            "the daemon's run {} of the log ran network `{}`: {} (replay one network with --net)",
                            i + 1,
                            r.network,
                            e.message()
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            eprintln!(
                "lull: note: the daemon's network changed between its runs: each run is replayed with its own ({}; one network for all: --net)",
                runs_text(&runs)
            );
            let (o, n) = lull_blktrace_replay::replay::replay_log_runs(
                &timeline, &specs, &registry, &opts, &runs,
            )?;
            (o, Some(n))
        }
        None if daemon_runs => {
            let (o, n) = lull_blktrace_replay::replay::replay_spec_runs(
                &timeline, &spec, &registry, &opts, &runs,
            )?;
            (o, Some(n))
        }
        None => (replay_spec(&timeline, &spec, &registry, &opts)?, None),
        Some(text) => {
            let every = parse_duration(text)
                .map_err(|e| CliError::input(anyhow!("--restart-every: {e}")))?;
            let restart = lull_blktrace_replay::restart::Restart {
                every,
                keep: args.keep_state,
            };
            let (o, n) = lull_blktrace_replay::replay::replay_spec_restarting(
                &timeline, &spec, &registry, &opts, restart,
            )?;
            (o, Some(n))
        }
    };
    if let Some(path) = &args.log {
        let mut text = String::new();
        for entry in &outcome.log {
            text.push_str(&serde_json::to_string(entry).map_err(CliError::runtime)?);
            text.push('\n');
        }
        std::fs::write(path, text)
            .map_err(|e| CliError::runtime(anyhow!("{}: {e}", path.display())))?;
    }
    let mut pairs = outcome.report.pairs();
    if let Some(w) = &warm {
        pairs.push(("warm_up_s", w.span().as_secs_f64()));
    }
    if let Some(n) = restarts {
        pairs.push(("restarts", n as f64));
    }
    // hd-idle's 10 minutes on the same trace, behind the same checks, for
    // the text's verdict (spin-down only; the JSON keeps SPEC's keys).
    let hd_idle = match args.format {
        Format::Text if lull_rank::base_task(&opts.task) == "spindown" => {
            let hd = load_spec(lull_rank::grid::HD_IDLE, &registry)?;
            let hd_opts = ReplayOptions {
                log: false,
                // What the daemon did with its own standbys is not what
                // hd-idle would have done.
                daemon_standbys: None,
                ..opts.clone()
            };
            Some(
                replay_spec(&timeline, &hd, &registry, &hd_opts)?
                    .report
                    .pairs(),
            )
        }
        _ => None,
    };
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        Format::Json => {
            let mut map = json_number_map(pairs.iter().copied());
            if !outcome.gauges.is_empty() {
                let gauges = json_number_map(outcome.gauges.iter().map(|(k, v)| (k.as_str(), *v)));
                map.insert("gauges".into(), serde_json::Value::Object(gauges));
            }
            writeln!(out, "{}", serde_json::Value::Object(map))
        }
        Format::Text => (|| {
            // The verdict first (issue 78), the details below it.
            // A network asked for by name is named so; a spec as written
            // out in full. One label a line, as the notes have it.
            let net = if asked.contains(['(', '@']) {
                spec.to_string()
            } else {
                asked.trim().to_string()
            };
            for line in verdict_lines(
                &net,
                &opts.task,
                &pairs,
                hd_idle.as_deref(),
                timeline.span(),
            ) {
                writeln!(out, "verdict  {line}")?;
            }
            // A named network (`auto`, the default) says what it stands for.
            let line = spec.to_string();
            if asked.trim() != line && !asked.contains(['(', '@']) {
                writeln!(out, "network  {} ({line})", asked.trim())?;
            } else {
                writeln!(out, "network  {line}")?;
            }
            writeln!(
                out,
                "task     {}   policy {}   timing {}",
                opts.task,
                policy.unwrap_or_else(|| default_policy(&opts.task)),
                resolve_timing(&opts.task, timing).unwrap_or(timing)
            )?;
            writeln!(
                out,
                "trace    {} requests over {:.1} s",
                requests.len(),
                timeline.span().as_secs_f64()
            )?;
            if let Some(b) = registry.breakeven() {
                // A task on the device model is timed by the drive's
                // service model, which a preset may borrow (`paper-2.5in`,
                // named or the lab's default, has wd-red-plus's): name it.
                let model_timed =
                    resolve_timing(&opts.task, timing).unwrap_or(timing) == Timing::Model;
                let drive = lull_blktrace_replay::replay::profile(args.device.as_deref())
                    .map(|d| match model_timed {
                        true if d.service().name != d.preset() => {
                            format!("{} (service times of {}), ", d.preset(), d.service().name)
                        }
                        _ => format!("{}, ", d.preset()),
                    })
                    .unwrap_or_default();
                writeln!(
                    out,
                    "device   {drive}break-even B = {:.3} s",
                    b.as_secs_f64()
                )?;
            }
            if !opts.gate.is_open() {
                writeln!(
                    out,
                    "checks   {}",
                    checks_text(
                        &opts.gate,
                        opts.busy_polls.is_some(),
                        opts.daemon_standbys.is_some()
                    )
                )?;
            }
            // Names align however long the longest is
            // (`window_clairvoyant_energy_j` is 27 characters), the
            // gauges' below with them.
            let w = pairs
                .iter()
                .map(|(k, _)| k.len())
                .chain(outcome.gauges.iter().map(|(k, _)| k.len()))
                .max()
                .unwrap_or(0);
            for (k, v) in &pairs {
                writeln!(out, "  {k:<w$} {:>14}", super::text_value(k, *v))?;
            }
            for note in reference_notes(&pairs) {
                writeln!(out, "note     {note}")?;
            }
            if !outcome.gauges.is_empty() {
                writeln!(
                    out,
                    "gauges   what the network learned, at the end of the trace"
                )?;
                for (k, v) in &outcome.gauges {
                    writeln!(out, "  {k:<w$} {:>14}", gauge_value(k, *v, &registry))?;
                }
            }
            Ok(())
        })(),
    };
    written.map_err(CliError::runtime)
}

/// The verdict that opens the text output: for spin-down, what network
/// `net` saves of the energy of never spinning down beside hd-idle's 10
/// minutes (`hd_idle`, its measures on the same trace) and the best fixed
/// timeout in hindsight, and the spin-ups it costs a day over `span`; for
/// other tasks (`task`), the two measures `lull rank` ranks it on.
fn verdict_lines(
    net: &str,
    task: &str,
    pairs: &[(&str, f64)],
    hd_idle: Option<&[lull_core::task::Measure]>,
    span: Nanos,
) -> Vec<String> {
    let get = |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|&(_, v)| v);
    let pct = |v: f64| format!("{v:.1} %");
    if let Some(saved) = get("energy_saved_pct") {
        let hd = |k: &str| hd_idle?.iter().find(|m| m.0 == k).map(|m| m.1);
        let days = span.as_secs_f64() / 86_400.0;
        let per_day = |n: Option<f64>| match n {
            Some(n) if days > 0.0 => format!(", with {:.1} spin-ups a day", n / days),
            _ => String::new(),
        };
        let mut lines = vec![format!(
            "{net} saves {} of the energy of never spinning down{}",
            pct(saved),
            per_day(get("spinups"))
        )];
        if let Some(h) = hd("energy_saved_pct") {
            lines.push(format!(
                "hd-idle's 10 minutes saves {}{}",
                pct(h),
                per_day(hd("spinups"))
            ));
        }
        if let (Some(b), Some(base), Some(t)) = (
            get("best_fixed_energy_j"),
            get("baseline_energy_j"),
            get("best_fixed_timeout_s"),
        ) && base > 0.0
        {
            lines.push(format!(
                "the best fixed timeout in hindsight ({}) saves {}",
                Nanos::from_secs_f64(t).approx(),
                pct(100.0 * (1.0 - b / base))
            ));
        }
        return lines;
    }
    let axes = lull_rank::axes::axes(task);
    let mut parts = Vec::new();
    for m in [axes.x.measure, axes.y.measure] {
        if let Some(v) = get(m) {
            // Three decimals: the measures below carry six.
            let v = if v.abs() >= 100.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.3}")
            };
            parts.push(format!("{} {v}", lull_rank::axes::label(m)));
        }
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![format!("{net}: {}", parts.join(", "))]
}

/// The trace `--warm-up` or `--warm-up-seed` names, as a timeline (its
/// busiest device, or `--disk`'s), if either is given. One whose requests
/// are the replayed trace's own (the same file, a link to it, or another
/// CPU's file of the same blktrace capture, read with its siblings) is an
/// input error: the network would be measured on what it learned from.
fn warm_up_timeline(
    args: &Args,
    replayed: &[lull_core::request::Request],
) -> Result<Option<Timeline>, CliError> {
    let trace = match (&args.warm_up, args.warm_up_seed) {
        (Some(path), _) => load_trace(Some(path), &args.workload, &args.source)?,
        (None, Some(seed)) => {
            if args.trace.is_some() {
                return Err(CliError::input(anyhow!(
                    "--warm-up-seed warms up on a built-in workload: without a TRACE only (for a trace, --warm-up TRACE)"
                )));
            }
            let mut source = super::SourceArgs {
                seed,
                ..args.source.clone()
            };
            if let Some(d) = &args.warm_up_duration {
                parse_duration(d)
                    .map_err(|e| CliError::input(anyhow!("--warm-up-duration: {e}")))?;
                source.duration = d.clone();
            }
            load_trace(None, &args.workload, &source)?
        }
        (None, None) => return Ok(None),
    };
    let requests = select_device(&trace, args.source.disk.as_deref())
        .map_err(|e| CliError::input(anyhow!("--warm-up: {}", e.message())))?;
    if requests.is_empty() {
        return Err(CliError::input(anyhow!(
            "--warm-up: the trace has no requests"
        )));
    }
    if requests == replayed {
        return Err(CliError::input(anyhow!(
            "--warm-up: {} holds the same requests as the trace replayed (the same capture: a blktrace CPU file is read with its siblings); warm up on another day's trace",
            args.warm_up.as_deref().map_or_else(
                || "the built-in workload".to_string(),
                |p| p.display().to_string()
            )
        )));
    }
    Ok(Some(
        Timeline::from_requests(&requests).with_clock(trace.clock),
    ))
}

/// A daemon's activity log is replayed as the daemon ran it: what the
/// command line leaves open (`--device`, `--net`, `--task`) comes from
/// the log's last session, said on stderr.
fn daemon_defaults(args: &mut Args, session: &lull_blktrace_replay::activity::Session) {
    let mut took = Vec::new();
    if args.device.is_none()
        && let Some(d) = super::session_drive(session)
    {
        took.push(format!("drive {d}"));
        args.device = Some(d);
    }
    if args.net.is_none() && !session.network.is_empty() {
        took.push(format!("network {}", session.network));
        args.net = Some(session.network.clone());
    }
    if args.task.is_none() && session.task == "standby" {
        took.push("task spindown (its standby)".into());
        args.task = Some("spindown".into());
    }
    if !took.is_empty() {
        eprintln!(
            "lull: note: the daemon's activity log: replaying its {} (from its last session; choose with --device, --net, --task)",
            took.join(", ")
        );
    }
}

/// The daemon's checks before a spin-down, as `--standby-checks` and
/// `--max-spindowns-per-day` ask, or for a daemon's activity log (its last
/// `session`) as the daemon made them; for a task other than spindown,
/// none (and the flags are a usage error).
fn standby_gate(
    args: &Args,
    session: Option<&lull_blktrace_replay::activity::Session>,
    task: &str,
) -> Result<lull_tasks::StandbyGate, CliError> {
    let asked = args.standby_checks.is_some() || args.max_spindowns_per_day.is_some();
    if task != "spindown" {
        if asked {
            return Err(CliError::input(anyhow!(
                "--standby-checks and --max-spindowns-per-day are for --task spindown, not {task}"
            )));
        }
        return Ok(lull_tasks::StandbyGate::default());
    }
    let checks = args.standby_checks.unwrap_or(
        if session.is_some() || args.max_spindowns_per_day.is_some() {
            StandbyChecks::Daemon
        } else {
            StandbyChecks::None
        },
    );
    if checks == StandbyChecks::None {
        if args.max_spindowns_per_day.is_some() {
            return Err(CliError::input(anyhow!(
                "--max-spindowns-per-day is the daemon's check: not with --standby-checks none"
            )));
        }
        return Ok(lull_tasks::StandbyGate::default());
    }
    // The daemon checks the break-even of the drive it has a preset for:
    // the one replayed (--device), or the log's when it had one.
    let mut gate = session
        .map(lull_blktrace_replay::activity::daemon_gate)
        .unwrap_or_default();
    if args.device.is_some() || session.is_none() {
        // Its break-even, from its profile (an error without a power model).
        lull_blktrace_replay::replay::power_model(args.device.as_deref())?;
        let profile = lull_blktrace_replay::replay::profile(args.device.as_deref())?;
        gate.break_even = profile.standby_gate(None).break_even;
    }
    if let Some(n) = args.max_spindowns_per_day {
        gate.max_spindowns_per_day = Some(n);
    } else if let Some(s) = session
        && s.task == "standby"
        && s.max_spindowns_per_day.is_none()
    {
        eprintln!(
            "lull: note: the log does not record the daemon's wear budget (written by an older lulld): \
             replaying without it (give --max-spindowns-per-day)"
        );
    }
    Ok(gate)
}

/// What the log says the daemon did with its standbys, for notes: how
/// long it withheld them in all, each stretch from a decision it withheld
/// to the next it let through (an audit took a stretch of "the drive is
/// in standby already" for the drive's sleep, which ended at its wake),
/// and why (`the daemon sent no standby for 2h3m of the log, from each
/// decision it withheld to the next it let through (no transport reaches
/// the drive): …`), and how many it
/// sent failed.
fn daemon_standbys_notes(d: &lull_tasks::DaemonStandbys) -> Vec<String> {
    let mut notes = Vec::new();
    if !d.withheld().is_empty() {
        let total = d
            .withheld()
            .iter()
            .fold(Nanos::ZERO, |t, (from, until, _)| t + (*until - *from));
        let mut why: Vec<&str> = Vec::new();
        for (_, _, w) in d.withheld() {
            if !why.contains(&w.as_str()) {
                why.push(w);
            }
        }
        notes.push(format!(
            "the daemon sent no standby for {} of the log, from each decision it withheld to the next it let through ({}): the replay withholds them too (withheld_by_daemon; what the network would have done: --standby-checks none)",
            total.approx(),
            why.join("; ")
        ));
    }
    if !d.failed().is_empty() {
        notes.push(format!(
            "{} standby(s) the daemon sent failed (the drive did not sleep): the replay leaves the disk spinning there too (failed_standbys)",
            d.failed().len()
        ));
    }
    notes
}

/// The checks' line of the text output.
fn checks_text(gate: &lull_tasks::StandbyGate, polls: bool, standbys: bool) -> String {
    let mut parts = Vec::new();
    if let Some(n) = gate.max_spindowns_per_day {
        parts.push(format!(
            "wear budget {n} spin-downs a day (at most {} at once)",
            lull_tasks::WearBudget::capacity(n)
        ));
    }
    if let Some(b) = gate.break_even {
        parts.push(format!(
            "no spin-down predicted shorter than {:.3} s",
            b.as_secs_f64()
        ));
    }
    if gate.max_spindowns_per_day.is_some_and(|n| n > 0) {
        // `trace_reference_runs`: the references keep the budget too.
        parts.push("the best fixed timeout and the clairvoyant held to the budget too".into());
    }
    if polls {
        // `Spindown::with_busy_polls`: the log's polls are known.
        parts.push("no standby the same poll's I/O overtook".into());
    }
    if standbys {
        // `Spindown::with_daemon_standbys`: the log says where.
        parts.push("none where it withheld them, none asleep after one that failed".into());
    }
    format!("the daemon's: {}", parts.join("; "))
}

/// Which runs ran which network: `runs 1–2 timer(10s), run 3 auto`.
fn runs_text(runs: &[lull_blktrace_replay::activity::lull_activity::RunStart]) -> String {
    let mut parts: Vec<(usize, usize, &str)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        match parts.last_mut() {
            Some(p) if p.2 == r.network => p.1 = i + 1,
            _ => parts.push((i + 1, i + 1, &r.network)),
        }
    }
    parts
        .iter()
        .map(|&(a, b, n)| {
            if a == b {
                format!("run {a} {n}")
            } else {
                format!("runs {a}–{b} {n}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `path` is a daemon's activity log: a directory of its
/// segments, or a file whose (decoded) content starts like one.
fn is_activity_log(path: &std::path::Path) -> Result<bool, CliError> {
    Ok(lull_blktrace_replay::activity::is_log(path)?)
}

/// What the text output says under the measures when a reference ratio
/// divides by little (as docs/results.md marks "little to capture"): on a
/// short trace the best fixed timeout can come within a hair of the
/// oracle, and `excess_vs_best_fixed` of 250 is then a ratio of two small
/// numbers, not a disaster.
fn reference_notes(pairs: &[(&str, f64)]) -> Vec<String> {
    let get = |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|&(_, v)| v);
    let (Some(base), Some(best), Some(oracle)) = (
        get("baseline_energy_j"),
        get("best_fixed_energy_j"),
        get("oracle_energy_j"),
    ) else {
        return Vec::new();
    };
    let [best_over_oracle, clairvoyant_over_best] =
        lull_tasks::spindown::small_margins(base, oracle, best, get("window_clairvoyant_energy_j"));
    let mut notes = Vec::new();
    if oracle >= base {
        // Not even the oracle saves: no idle period outlasts B. One note
        // says so; the three it would take say it three times.
        // The best fixed timeout is then one that never fires (the
        // least above the longest idle period): said, so that a timeout
        // of milliseconds beside a B of a minute reads as what it is.
        let never = get("best_fixed_timeout_s").map_or(String::new(), |t| {
            format!(" (best_fixed_timeout_s, {t:.6} s, is just above the longest idle period: it never fires)")
        });
        notes.push(format!(
            "nothing can save energy on this trace, not even the oracle: no idle period \
             outlasts the break-even time, so every reference spends what never spinning down \
             does and the ratios compare equals{never}"
        ));
        return notes;
    }
    if best >= base
        && let Some(t) = get("best_fixed_timeout_s")
    {
        notes.push(format!(
            "no fixed timeout saves energy on this trace: the best, {t:.6} s (just above \
             the longest idle period), never fires"
        ));
    }
    if let Some(p) = best_over_oracle {
        notes.push(format!(
            "the best fixed timeout spends only {p:.2} % of the never-spin-down energy more \
             than the oracle: excess_vs_best_fixed divides by that"
        ));
    }
    if let Some(p) = clairvoyant_over_best {
        notes.push(format!(
            "the per-window clairvoyant timer saves only {p:.2} % of the never-spin-down energy \
             beyond the best fixed timeout: gain_vs_clairvoyant divides by that{}",
            if get("gain_vs_clairvoyant").is_some_and(f64::is_nan) {
                " (NaN: nothing to divide by)"
            } else {
                ""
            }
        ));
    }
    notes
}

/// A gauge's value as text: a whole number as one (counts, hits), a huge
/// one in scientific notation (a margin of "never" is the largest
/// float), else six decimals.
fn gauge_value(name: &str, v: f64, registry: &lull_core::registry::Registry) -> String {
    if v.is_infinite() || v.abs() >= 1e300 {
        // The gauges' "does not exist" (`f64::MAX`), in the catalogue's
        // word for it (`never` a margin, `none` a periodic source).
        let gauge = name.rsplit_once('.').map_or(name, |(_, g)| g);
        return registry
            .list()
            .iter()
            .flat_map(|c| c.gauges.iter())
            .find(|g| g.matches(gauge))
            .map_or("never", |g| g.none)
            .to_string();
    }
    if v.abs() >= 1e12 {
        format!("{v:.3e}")
    } else {
        super::number_text(v, true)
    }
}

#[cfg(test)]
mod tests {
    use super::gauge_value;

    #[test]
    fn small_reference_margins_are_pointed_out() {
        let pairs = |best: f64, clairvoyant: f64| {
            vec![
                ("baseline_energy_j", 1000.0),
                ("oracle_energy_j", 500.0),
                ("best_fixed_energy_j", best),
                ("window_clairvoyant_energy_j", clairvoyant),
                ("gain_vs_clairvoyant", f64::NAN),
            ]
        };
        // Room on both: nothing to say.
        assert!(super::reference_notes(&pairs(700.0, 600.0)).is_empty());
        let n = super::reference_notes(&pairs(505.0, 505.0));
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(n[0].contains("0.50 %") && n[0].contains("excess_vs_best_fixed"));
        assert!(n[1].contains("0.00 %") && n[1].contains("NaN"));
        // Only the clairvoyant is close.
        let n = super::reference_notes(&pairs(700.0, 695.0));
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].contains("gain_vs_clairvoyant"));
        // Nothing to save by any fixed timeout: said, with the timeout.
        let mut never = pairs(1000.0, 1000.0);
        never.push(("best_fixed_timeout_s", 4.999641));
        let n = super::reference_notes(&never);
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(
            n[0].contains("never fires") && n[0].contains("4.999641 s"),
            "{n:?}"
        );
        // Nothing to save even for the oracle: one note, not three.
        let nothing = vec![
            ("baseline_energy_j", 1000.0),
            ("oracle_energy_j", 1000.0),
            ("best_fixed_energy_j", 1000.0),
            ("window_clairvoyant_energy_j", 1000.0),
            ("best_fixed_timeout_s", 4.999641),
            ("gain_vs_clairvoyant", f64::NAN),
        ];
        let n = super::reference_notes(&nothing);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].contains("not even the oracle"), "{n:?}");
        assert!(
            n[0].contains("4.999641 s") && n[0].contains("never fires"),
            "{n:?}"
        );
        // Not a spin-down replay: no references, no notes.
        assert!(super::reference_notes(&[("actual_s", 1.0)]).is_empty());
    }

    #[test]
    fn gauge_values_stay_short() {
        let r = lull::registry();
        let v = |name: &str, x: f64| gauge_value(name, x, &r);
        assert_eq!(v("n0.hits", 42.0), "42");
        assert_eq!(v("n0.x", -1.0), "-1");
        assert_eq!(v("n0.x", 0.25), "0.250000");
        assert_eq!(v("n0.x", 3e15), "3.000e15");
        // "Does not exist", in the catalogue's word.
        assert_eq!(v("n0.margin", f64::MAX), "never");
        assert_eq!(v("n0.periodic_period_s", f64::MAX), "none");
        assert_eq!(v("n0.unknown", f64::INFINITY), "never");
        assert_eq!(v("n0.x", f64::NAN), "NaN");
    }
}
