//! The `[[disk]]` tables: a disk's task, network, power preset, hooks and
//! jobs, each value checked where it is read so an error names its line
//! and key.

use super::checks::{check_command, check_network};
use super::*;

/// The `on_*` hook keys of a table (`prefix`: `""` at the top level,
/// `disk[i].` in a disk), each checked like a `command`.
pub(super) fn hooks(
    cx: &Ctx<'_>,
    prefix: &str,
    raw: [&Option<Spanned<Vec<String>>>; 5],
) -> Result<Hooks, ConfigError> {
    let mut h = Hooks::default();
    for ((slot, r), ev) in h.argv.iter_mut().zip(raw).zip(HookEvent::ALL) {
        if let Some(a) = r {
            let argv: Vec<String> = a.get_ref().clone();
            check_command(&argv)
                .map_err(|m| cx.err(Some(a.span()), &format!("{prefix}{}", ev.key()), m))?;
            *slot = Some(argv);
        }
    }
    Ok(h)
}

/// The tasks a `[[disk]]` may name.
pub(super) const LIVE_TASKS: [&str; 4] = ["standby", "flush", "command", "jobs"];

pub(super) fn disk(
    cx: &Ctx<'_>,
    i: usize,
    d: &RawDisk,
    registry: &Registry,
) -> Result<DiskConfig, ConfigError> {
    let key = |k: &str| format!("disk[{i}].{k}");
    let device = d.device.get_ref().trim().to_string();
    if device.is_empty() {
        return Err(cx.err(Some(d.device.span()), &key("device"), "must not be empty"));
    }
    if device.starts_with('/') && !device.starts_with("/dev/") {
        return Err(cx.err(
            Some(d.device.span()),
            &key("device"),
            "a device path must be under /dev/",
        ));
    }
    let policy = match &d.policy {
        Some(p) => p
            .get_ref()
            .parse::<StopPolicy>()
            .map_err(|e| cx.err(Some(p.span()), &key("policy"), e.to_string()))?,
        None => StopPolicy::EarlierOf,
    };
    let preset = d.preset.as_ref().map(|p| p.get_ref().trim().to_string());
    let profile = Drive::resolve(preset.as_deref(), None)
        .map(DriveProfile::new)
        .map_err(|e| {
            cx.err(
                d.preset.as_ref().map(|p| p.span()),
                &key("preset"),
                e.to_string(),
            )
        })?;
    let task_name = d.task.as_ref().map_or("standby", |t| t.get_ref().as_str());
    let task_span = d.task.as_ref().map(|t| t.span());
    let only_for = |name: &str, span: Range<usize>, for_task: &str| {
        cx.err(
            Some(span),
            &key(name),
            format!("only applies to task = \"{for_task}\" (this disk's task is \"{task_name}\")"),
        )
    };
    // The lab's simulated tasks have live counterparts under other names:
    // a user who ranked `--task spindown` writes `task = "spindown"`.
    let lab_name = match task_name {
        "spindown" => Some("standby"),
        "writeback" => Some("flush"),
        _ => None,
    };
    // An unknown task is the error, not the keys that do not fit it: a
    // trial's `task = "standbye"` beside `backend` was reported as a
    // `backend` error.
    let unknown_task = || {
        let hint = match lab_name {
            Some(live) => format!(
                "; `{task_name}` is the lab's simulated task (`lull replay --task {task_name}`): on a live disk it is `task = \"{live}\"`"
            ),
            None => lull_core::suggest::did_you_mean(task_name, LIVE_TASKS),
        };
        cx.err(
            task_span.clone(),
            &key("task"),
            format!(
                "unknown task {task_name:?} (live tasks: {}){hint}",
                LIVE_TASKS.join(", "),
            ),
        )
    };
    if !LIVE_TASKS.contains(&task_name) {
        return Err(unknown_task());
    }
    if task_name != "standby" {
        if let Some(b) = &d.backend {
            return Err(only_for("backend", b.span(), "standby"));
        }
        if let Some(b) = &d.max_spindowns_per_day {
            return Err(only_for("max_spindowns_per_day", b.span(), "standby"));
        }
        if let Some(c) = &d.compare_timeout {
            return Err(only_for("compare_timeout", c.span(), "standby"));
        }
    }
    if task_name != "command" {
        if let Some(c) = &d.command {
            return Err(only_for("command", c.span(), "command"));
        }
        if let Some(c) = &d.interval {
            return Err(only_for("interval", c.span(), "command"));
        }
    }
    if task_name != "jobs" {
        if let Some(j) = &d.job {
            return Err(only_for("job", j.span(), "jobs"));
        }
        if let Some(b) = &d.best_effort {
            return Err(only_for("best_effort", b.span(), "jobs"));
        }
        if let Some(a) = &d.assume_idle {
            return Err(only_for("assume_idle", a.span(), "jobs"));
        }
    }
    let task = match task_name {
        "standby" => {
            let backend = match d.backend.as_ref() {
                None => Backend::Auto,
                Some(b) => match b.get_ref().as_str() {
                    "auto" => Backend::Auto,
                    "hdparm" => Backend::Hdparm,
                    "sgio" => Backend::Sgio,
                    "ata16" => Backend::Ata16,
                    "ata12" => Backend::Ata12,
                    "scsi" => Backend::Scsi,
                    other => {
                        return Err(cx.err(
                            Some(b.span()),
                            &key("backend"),
                            format!(
                                "unknown backend {other:?} (expected \"auto\", \"sgio\", \"ata16\", \"ata12\", \"scsi\" or \"hdparm\")"
                            ),
                        ));
                    }
                },
            };
            let max = match &d.max_spindowns_per_day {
                None => DEFAULT_SPINDOWNS_PER_DAY,
                Some(m) => u32::try_from(*m.get_ref()).map_err(|_| {
                    cx.err(
                        Some(m.span()),
                        &key("max_spindowns_per_day"),
                        "must be a whole number from 0 to 4294967295",
                    )
                })?,
            };
            let compare_timeout = match &d.compare_timeout {
                None => None,
                Some(c) => {
                    let t = parse_duration(c.get_ref()).map_err(|e| {
                        cx.err(Some(c.span()), &key("compare_timeout"), e.to_string())
                    })?;
                    if !(COMPARE_TIMEOUT_MIN..=COMPARE_TIMEOUT_MAX).contains(&t) {
                        return Err(cx.err(
                            Some(c.span()),
                            &key("compare_timeout"),
                            "must be from 1s to 24h (the fixed timeout you ran before, such as hd-idle's -i)",
                        ));
                    }
                    Some(t)
                }
            };
            TaskConfig::Standby {
                backend,
                max_spindowns_per_day: max,
                compare_timeout,
            }
        }
        "flush" => TaskConfig::Flush,
        "command" => {
            let Some(c) = &d.command else {
                return Err(cx.err(
                    task_span.clone(),
                    &key("command"),
                    "task = \"command\" needs command = [\"/path/to/program\", \"arg\", …]",
                ));
            };
            let argv = c.get_ref().clone();
            check_command(&argv).map_err(|m| cx.err(Some(c.span()), &key("command"), m))?;
            let interval = match &d.interval {
                Some(s) => parse_duration(s.get_ref())
                    .map_err(|e| cx.err(Some(s.span()), &key("interval"), e.to_string()))?,
                None => Nanos::ZERO,
            };
            TaskConfig::Command { argv, interval }
        }
        "jobs" => jobs(cx, i, d, task_span.clone(), &profile)?,
        _ => return Err(unknown_task()),
    };
    let breakeven = profile_breakeven(&task, &profile).map_err(|e| {
        cx.err(
            d.preset.as_ref().map(|p| p.span()),
            &key("preset"),
            format!("task = \"{task_name}\": {e}"),
        )
    })?;
    let registry = disk_registry(registry, &task, breakeven);
    let (network, time_scale) = match &d.network {
        Some(n) => {
            let scale = check_network(n.get_ref(), &registry)
                .map_err(|m| cx.err(Some(n.span()), &key("network"), m))?;
            (n.get_ref().trim().to_string(), scale)
        }
        None => {
            let scale = check_network(DEFAULT_NETWORK, &registry).map_err(|m| {
                cx.err(
                    Some(d.device.span()),
                    &key("network"),
                    format!("the default network: {m}"),
                )
            })?;
            (DEFAULT_NETWORK.to_string(), scale)
        }
    };
    let hooks = hooks(
        cx,
        &key(""),
        [
            &d.on_spindown,
            &d.on_spinup,
            &d.on_wake,
            &d.on_task_start,
            &d.on_task_stop,
        ],
    )?;
    Ok(DiskConfig {
        hooks,
        index: i,
        line: cx.line(&d.device.span()),
        device,
        network,
        policy,
        task,
        preset,
        profile,
        left_alone: None,
        time_scale,
    })
}

/// The `jobs` task of `disk[i]`: its `[[disk.job]]` tables, `best_effort`
/// and `assume_idle`.
fn jobs(
    cx: &Ctx<'_>,
    i: usize,
    d: &RawDisk,
    task_span: Option<Range<usize>>,
    profile: &DriveProfile,
) -> Result<TaskConfig, ConfigError> {
    let key = |k: &str| format!("disk[{i}].{k}");
    let raw = match &d.job {
        Some(j) if !j.get_ref().is_empty() => j.get_ref(),
        _ => {
            return Err(cx.err(
                task_span,
                &key("job"),
                "task = \"jobs\" needs at least one [[disk.job]] table with name, command and reserve",
            ));
        }
    };
    // Reservations are in the units of the disk's work, so `B` is the
    // drive's break-even for I/O, as in `lull plan` on the same drive.
    let b = profile
        .io()
        .map_err(|e| cx.err(task_span.clone(), &key("preset"), e.to_string()))?;
    let mut jobs: Vec<JobConfig> = Vec::with_capacity(raw.len());
    for (k, j) in raw.iter().enumerate() {
        let jkey = |f: &str| key(&format!("job[{k}].{f}"));
        let name = j.name.get_ref().trim().to_string();
        if name.is_empty()
            || name.contains([':', ',', '"', '\\'])
            || name.contains(char::is_whitespace)
        {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("name"),
                "must be a non-empty word without spaces, `:`, `,`, quotes or backslashes",
            ));
        }
        if let Some(prev) = jobs.iter().position(|p| p.name == name) {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("name"),
                format!("job {name:?} is already defined by job[{prev}]"),
            ));
        }
        let Some(c) = &j.command else {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("command"),
                "a job needs command = [\"/path/to/program\", \"arg\", …]",
            ));
        };
        let argv = c.get_ref().clone();
        check_command(&argv).map_err(|m| cx.err(Some(c.span()), &jkey("command"), m))?;
        let Some(r) = &j.reserve else {
            return Err(cx.err(
                Some(j.name.span()),
                &jkey("reserve"),
                "a job needs reserve = \"AMOUNT/PERIOD[:step=S][,…]\", e.g. \"2h/day:step=60s\" or \"5m/hour\"",
            ));
        };
        let spec = parse_job(&format!("{name}:{}", r.get_ref().trim()), Some(b))
            .map_err(|m| cx.err(Some(r.span()), &jkey("reserve"), m))?;
        for q in &spec.ranked {
            if q.amount == Nanos::ZERO || q.amount > q.period() {
                return Err(cx.err(
                    Some(r.span()),
                    &jkey("reserve"),
                    format!(
                        "request {q}: the amount must be more than zero and at most the period"
                    ),
                ));
            }
        }
        jobs.push(JobConfig {
            name,
            argv,
            reserve: r.get_ref().trim().to_string(),
            spec,
        });
    }
    let best_effort = match &d.best_effort {
        Some(b) if (0.0..1.0).contains(b.get_ref()) => *b.get_ref(),
        Some(b) => {
            return Err(cx.err(
                Some(b.span()),
                &key("best_effort"),
                format!("{}: must be a fraction in [0, 1)", b.get_ref()),
            ));
        }
        None => DEFAULT_BEST_EFFORT,
    };
    let assume_idle = match &d.assume_idle {
        Some(a) => {
            let v = parse_duration(a.get_ref())
                .map_err(|e| cx.err(Some(a.span()), &key("assume_idle"), e.to_string()))?;
            if v > Nanos::from_secs(3600) {
                return Err(cx.err(
                    Some(a.span()),
                    &key("assume_idle"),
                    "usable idle time per hour: at most 1h",
                ));
            }
            v
        }
        None => DEFAULT_ASSUME_IDLE,
    };
    Ok(TaskConfig::Jobs {
        jobs,
        best_effort,
        assume_idle,
    })
}
