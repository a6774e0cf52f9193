//! `lull status`'s text: a block per disk, wrapped at 100 columns, from
//! a gathered [`Status`] (the JSON is its serde form). Kept apart from
//! the gathering (the metrics, the state file and the config, combined
//! in `status.rs`) because the wording and the layout change for other
//! reasons than where the figures come from.

use super::*;
pub(super) use lull_core::registry::significant;

pub(super) fn human_gauge(name: &str, value: Option<f64>) -> String {
    match gauge_info(name) {
        Some(g) => g.describe(value),
        None => format!(
            "{} {}",
            name.replace('_', " "),
            value.map_or_else(|| "never".to_string(), |v| significant(v, 4))
        ),
    }
}

/// The catalogue entry of gauge `name`, if a component documents it.
pub(super) fn gauge_info(name: &str) -> Option<&'static lull_core::registry::GaugeInfo> {
    static GAUGES: std::sync::OnceLock<Vec<&'static lull_core::registry::GaugeInfo>> =
        std::sync::OnceLock::new();
    let gauges = GAUGES.get_or_init(|| {
        crate::default_registry()
            .list()
            .iter()
            .flat_map(|c| c.gauges.iter())
            .collect()
    });
    gauges.iter().find(|g| g.matches(name)).copied()
}

/// `items` joined by `sep` (`", "`, `"; "`, `" "`) in lines of at most
/// `width` characters, each line but the last ending in `sep` without its
/// trailing blank (an item longer than `width` alone on its line).
pub(super) fn wrap_list(items: &[String], sep: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let end = sep.trim_end();
    for item in items {
        match lines.last_mut() {
            Some(line)
                if line.chars().count()
                    + sep.chars().count()
                    + item.chars().count()
                    + end.chars().count()
                    <= width =>
            {
                line.push_str(sep);
                line.push_str(item);
            }
            Some(line) => {
                line.push_str(end);
                lines.push(item.clone());
            }
            None => lines.push(item.clone()),
        }
    }
    lines
}

/// A long span for people: whole days from two days on, else as [`secs`].
pub(super) fn span(s: f64) -> String {
    if s >= 2.0 * 86_400.0 {
        format!("{} days", (s / 86_400.0).round())
    } else {
        secs(s)
    }
}

/// One block per disk, for people: a header with the disk's name, then
/// one field a line, labels aligned, numbers rounded to what matters.
///
/// ```text
/// /dev/disk/by-id/ata-WDC_WD40EFRX-X (sdb)
///   power       standby for 16m40s
///   task        standby (running)
///   waiting     for I/O: asleep since lull spun it down
///   drive       wd-red-plus (identified), break-even 1m12s
///   spin-downs  4 (wear budget 24/day: 4 used in 24 h, 3 of 4 left now)
///   …
/// ```
pub fn render_text(st: &Status) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if st.daemon_running == Some(false) {
        let _ = writeln!(
            out,
            "(no daemon is running: nothing holds {}; below is what its last run left, not the disks' state now)",
            crate::instance::lock_path(&st.state_file).display()
        );
    }
    if let Some(age) = state_lag(st) {
        let _ = writeln!(
            out,
            "(as the daemon last wrote its state file, {} ago: without [metrics] that is every {} and at once for spin-downs, spin-ups and commands, so what follows can lag)",
            secs(age as f64),
            secs(st.state_interval_s)
        );
    }
    if st.dry_run == Some(true) {
        out.push_str(if st.daemon_running == Some(false) {
            "(its last run was a dry run, lulld --dry-run: it decided but did not act)\n"
        } else {
            "(the daemon runs with --dry-run: it decides but does not act)\n"
        });
    }
    if st.disks.is_empty() {
        let _ = writeln!(out, "no disks in the daemon's state or metrics yet");
    }
    let ago = |t: u64| secs(st.now_unix.saturating_sub(t) as f64);
    for (n, d) in st.disks.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        out.push_str(&d.title());
        out.push('\n');
        let mut field = |label: &str, text: String| {
            let _ = writeln!(out, "  {label:<11} {text}");
        };
        let since = d.since_unix.map(|t| {
            format!(
                " for {}{}",
                if d.since_exact { "" } else { "at least " },
                ago(t)
            )
        });
        if d.power == "unwatched" {
            // A state-file entry kept from when the daemon watched the
            // disk: said first, and nothing below reads as live (no
            // power, task, waiting or learning lines; a trial's removed
            // disk read "power standby for 48s" long after).
            let words: Vec<String> = format!(
                "{}{}; what follows is the state file's, from when it was watched",
                since.map_or_else(String::new, |s| format!("{}: ", s.trim_start())),
                d.left_alone
                    .as_deref()
                    .unwrap_or("not in the configuration")
            )
            .split(' ')
            .map(str::to_string)
            .collect();
            for (i, line) in wrap_list(&words, " ", 100 - 14).into_iter().enumerate() {
                field(if i == 0 { "not watched" } else { "" }, line);
            }
            unwatched_text(&mut out, d, st.now_unix);
            continue;
        }
        let mut power = d.power.clone();
        if let Some(s) = since {
            power.push_str(&s);
        }
        field("power", power);
        if let Some(task) = &d.task {
            let running = if d.task_running == Some(true) {
                " (running)"
            } else {
                ""
            };
            field("task", format!("{task}{running}"));
            if task == "command" && (d.command_s > 0.0 || d.command_exits > 0) {
                // The evidence of a command disk: the idle time its
                // command was given.
                field(
                    "command",
                    format!(
                        "ran {} in idle time, {} run{} to the end",
                        secs(d.command_s),
                        d.command_exits,
                        if d.command_exits == 1 { "" } else { "s" }
                    ),
                );
            }
        }
        if st.daemon_running == Some(false) {
            // A stopped daemon decides nothing: its last idle period and
            // next decision, counted on from its last state, read as if
            // one ran (an audit: "the network decides in 24m" after the
            // stop).
            if d.power != "unwatched" {
                field(
                    "waiting",
                    "nothing: no daemon is running, so nothing decides".to_string(),
                );
            }
        } else if let Some(w) = waiting(d, st.now_unix) {
            field("waiting", w);
        }
        // A `jobs` disk's evidence: what each job got of the idle time.
        for (i, j) in d.jobs.iter().enumerate() {
            let fits = match (j.admitted, j.fits_observed) {
                (false, _) => "refused at admission".to_string(),
                (true, Some(true)) => "admitted; fits the idle time observed".to_string(),
                (true, Some(false)) => {
                    "admitted; would be refused on the idle time observed".to_string()
                }
                (true, None) => "admitted".to_string(),
            };
            let late = match j.deadlines_missed {
                0 => String::new(),
                n => format!(", late in {n} window{}", if n == 1 { "" } else { "s" }),
            };
            field(
                if i == 0 { "jobs" } else { "" },
                format!(
                    "{}: ran {} in idle time, {fits}{late}",
                    j.name,
                    secs(j.idle_s)
                ),
            );
        }
        if let (Some(p), Some(src), Some(b)) = (&d.preset, &d.preset_source, d.breakeven_s) {
            let approx = lull_core::time::Nanos::from_secs_f64(b).approx();
            field("drive", format!("{p} ({src}), break-even {approx}"));
            if let Some(why) = lull_tasks::PowerModel::caveat_for(p, b) {
                field("", format!("B unverified: {why}"));
            }
        }
        if let Some(why) = &d.left_alone {
            field("left alone", why.clone());
        }
        match d.transport.as_deref() {
            Some("none") if d.task.as_deref() == Some("standby") => {
                let why = d
                    .transport_why
                    .as_deref()
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default();
                field(
                    "transport",
                    format!(
                        "none: no command reaches the drive{why}; it is left alone (no spin-down, no power checks) until it is replugged"
                    ),
                );
            }
            Some(t) => field("transport", t.to_string()),
            None => {}
        }
        if let Some(p) = &d.drive_power {
            let fix = match &d.standby_fix {
                Some(f) if d.spins_itself_down && d.left_alone.is_none() => {
                    format!(" ({f} leaves spin-down to lull)")
                }
                _ => String::new(),
            };
            field("drive power", format!("{p}{fix}"));
        }
        let standby = d.task.as_deref() == Some("standby") || d.spindowns + d.spinups > 0;
        let mut downs = d.spindowns.to_string();
        if st.dry_run == Some(true) && standby {
            // Beside the `saved` lines' would-be spin-ups, which a reader
            // took for a contradiction.
            downs.push_str(
                " sent (a dry run sends none; lull's `saved` line counts those it would have done)",
            );
        }
        if let Some(w) = &d.wear {
            // What the tokens went to, where the counters leave a puzzle
            // ("0 … 8 used"): a dry run spends them on the spin-downs it
            // would have done, which no counter counts; a real run per
            // attempt, and a standby that found the drive asleep already
            // (hd-idle beside lull) or failed counts too.
            let would = if st.dry_run == Some(true) {
                " by spin-downs it would have done"
            } else if w.spent_24h as u64 > d.spindowns {
                " by attempts, which count when the drive was asleep already"
            } else {
                ""
            };
            let _ = write!(
                downs,
                " (wear budget {}/day: {} used in 24 h{would}, {})",
                w.per_day,
                w.spent_24h,
                budget_now(w)
            );
        }
        if standby {
            field("spin-downs", downs);
        }
        let mut ups = d.spinups.to_string();
        if d.foreign_spinups > 0 {
            let _ = write!(ups, " ({} not caused by lull)", d.foreign_spinups);
        }
        if !d.wakeups.is_empty() {
            let mut w: Vec<_> = d.wakeups.iter().collect();
            w.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let list: Vec<String> = w.iter().map(|(c, n)| format!("{c} {n}")).collect();
            let _ = write!(ups, "; woken by {}", list.join(", "));
        }
        if let Some(t) = d.last_wake_unix {
            let _ = write!(
                ups,
                "; last wake {} ago ({}",
                ago(t),
                d.last_wake_cause.as_deref().unwrap_or("cause not recorded")
            );
            if !d.last_wake_by.is_empty() {
                let _ = write!(ups, ": {}", d.last_wake_by.join(", "));
            }
            ups.push(')');
        }
        if standby || !d.wakeups.is_empty() {
            field("spin-ups", ups);
        }
        if d.errors > 0 {
            field("errors", d.errors.to_string());
        }
        // What the network has learned, in words, a block per node. What
        // does not exist yet ("none": the period of a periodic source
        // none was found) is left to the JSON.
        let mut nodes: Vec<(&str, Vec<String>)> = Vec::new();
        for g in &d.nodes {
            if g.value.is_none() && gauge_info(&g.name).is_some_and(|i| i.none == "none") {
                continue;
            }
            let words = human_gauge(&g.name, g.value);
            match nodes.last_mut() {
                Some((node, list)) if *node == g.node => list.push(words),
                _ => nodes.push((g.node.as_str(), vec![words])),
            }
        }
        let mut label = "learned";
        if let Some(n) = d.learned_idle_periods {
            let over = d
                .learned_since_unix
                .map(|t| format!(" for {},", span(st.now_unix.saturating_sub(t) as f64)))
                .unwrap_or_default();
            field(
                label,
                format!(
                    "learning{over} {n} idle period{} of a poll or longer seen (kept across restarts)",
                    if n == 1 { "" } else { "s" }
                ),
            );
            label = "";
        }
        for (node, list) in &nodes {
            // Wrapped at about 100 columns: `auto` reports a score of
            // gauges.
            let indent = " ".repeat(node.chars().count() + 2);
            let width = 100 - 14 - indent.len().min(40);
            for (i, line) in wrap_list(list, ", ", width).iter().enumerate() {
                if i == 0 {
                    field(label, format!("{node}: {line}"));
                } else {
                    field("", format!("{indent}{line}"));
                }
            }
            label = "";
        }
        if !d.last_decision.is_empty() {
            field("last", d.last_decision.replace('\n', " "));
        }
        if let Some(r) = &d.shadow {
            // A disk the daemon cannot or may not spin down: lull's line
            // is nothing it decided, and no ratio judges it.
            let unreached = (st.dry_run != Some(true) && d.task.as_deref() == Some("standby"))
                .then(|| {
                    d.left_alone.clone().or_else(|| {
                        (d.transport.as_deref() == Some("none"))
                            .then(|| "no command reaches the drive".to_string())
                    })
                })
                .flatten();
            shadow_text(&mut out, r, unreached.as_deref());
        }
    }
    out
}

/// The rest of the block of a disk the daemon does not watch
/// ([`DiskStatus::power`] `unwatched`): what it did while it was watched
/// (its drive, spin-downs, spin-ups, errors, last decision and savings),
/// none of it current.
fn unwatched_text(out: &mut String, d: &DiskStatus, now_unix: u64) {
    use std::fmt::Write as _;
    let mut field = |label: &str, text: String| {
        let _ = writeln!(out, "  {label:<11} {text}");
    };
    if let (Some(p), Some(src), Some(b)) = (&d.preset, &d.preset_source, d.breakeven_s) {
        let approx = lull_core::time::Nanos::from_secs_f64(b).approx();
        field("drive", format!("{p} ({src}), break-even {approx}"));
        if let Some(why) = lull_tasks::PowerModel::caveat_for(p, b) {
            field("", format!("B unverified: {why}"));
        }
    }
    if d.spindowns + d.spinups > 0 {
        field("spin-downs", d.spindowns.to_string());
        let mut ups = d.spinups.to_string();
        if d.foreign_spinups > 0 {
            let _ = write!(ups, " ({} not caused by lull)", d.foreign_spinups);
        }
        if let Some(t) = d.last_wake_unix {
            let _ = write!(
                ups,
                "; last wake {} ago ({})",
                secs(now_unix.saturating_sub(t) as f64),
                d.last_wake_cause.as_deref().unwrap_or("cause not recorded")
            );
        }
        field("spin-ups", ups);
    }
    if d.errors > 0 {
        field("errors", d.errors.to_string());
    }
    // The daemon's mark of the removal is said above.
    if !d.last_decision.is_empty()
        && d.last_decision != REMOVED_AT_RELOAD
        && d.last_decision != NOT_CONFIGURED_AT_START
    {
        field("last", d.last_decision.replace('\n', " "));
    }
    if let Some(r) = &d.shadow {
        shadow_text(out, r, None);
    }
}

/// What the wear budget allows now: "3 of 4 left now", or when the next
/// spin-down is allowed.
pub(super) fn budget_now(w: &WearStatus) -> String {
    let now = w.tokens.floor() as u64;
    match w.next_in_s {
        None => "none allowed: the budget is 0".to_string(),
        Some(_) if now >= 1 => format!("{now} of {} left now", w.capacity),
        Some(n) => format!("none left now, the next in {}", secs(n)),
    }
}

/// What the disk's network is waiting for, and why, from the daemon's
/// last state: the I/O that wakes a disk lull spun down, the end of the
/// task's run, the network's next decision in the current idle period,
/// or the disk going idle.
pub(super) fn waiting(d: &DiskStatus, now: u64) -> Option<String> {
    if d.power == "absent" {
        return Some("the disk to come back".into());
    }
    if d.left_alone.is_some() {
        return None;
    }
    if d.power == "standby" {
        return Some("I/O: the disk sleeps until something reads or writes it".into());
    }
    let idle = d
        .idle_since_unix
        .map(|t| format!("idle for {}", secs(now.saturating_sub(t) as f64)));
    let next = d.next_decision_unix.filter(|&t| t > now).map(|t| {
        format!(
            "the network decides in {} unless I/O comes",
            secs((t - now) as f64)
        )
    });
    // An empty wear budget refuses whatever the network decides: said
    // beside the idle period, which would otherwise read as if nothing
    // held the disk up.
    let wear = d
        .wear
        .as_ref()
        .and_then(|w| w.next_in_s.filter(|&n| n > 0.0 && w.tokens < 1.0))
        .map(|n| format!("; the wear budget allows no spin-down for {}", secs(n)))
        .unwrap_or_default();
    match (idle, next) {
        (_, _) if d.task_running == Some(true) => {
            Some("I/O, or the end of the predicted idle time: the task runs".into())
        }
        (Some(i), Some(n)) => Some(format!("{i}; {n}{wear}")),
        (Some(i), None) => Some(format!("{i}; nothing decided until I/O comes{wear}")),
        (None, Some(n)) => Some(n),
        (None, None) => Some("an idle period: the disk is busy".into()),
    }
}

/// The shadow evaluation in a disk's block: per window, what each policy
/// saved on this disk's own activity, then how lull compares.
///
/// `unreached`: why the daemon leaves the disk alone now, if it does;
/// then, in a window where lull spun nothing down, lull's line says so and
/// no ratio is given (the excess of a policy that never acted would read
/// as lull's bad decisions). A window where even the oracle saved nothing
/// gives no ratio either: both would be 0/0.
pub(super) fn shadow_text(
    out: &mut String,
    r: &lull_activity::ShadowReport,
    unreached: Option<&str>,
) {
    use std::fmt::Write as _;
    // Wrapped at 100 columns under the field, as the learned gauges are.
    let mut field = |label: &str, lines: Vec<String>| {
        let mut label = label.to_string();
        for l in lines {
            let _ = writeln!(out, "  {label:<11} {l}");
            label.clear();
        }
    };
    for w in &r.windows {
        let label = format!("saved {}", w.window);
        if w.idle_periods == 0 {
            field(
                &label,
                vec![format!(
                    "no idle period ended yet ({} watched)",
                    secs(w.observed_s)
                )],
            );
            continue;
        }
        // Whether lull spun the disk down in this window: then its figures
        // stand even if the disk is left alone now (a backend changed to
        // one that cannot reach it).
        let acted = w.policy("lull").is_some_and(|p| p.spinups > 0);
        // The verdict first (issue 78): what lull saved and how that
        // compares with hd-idle's 10 minutes and the best fixed timeout.
        let mut lines = Vec::new();
        if let Some(l) = w.policy("lull") {
            let verdict = if unreached.is_some() && !acted {
                vec!["lull none (the disk is left alone now)".to_string()]
            } else {
                shadow_verdict(w, l)
            };
            lines.extend(wrap_list(&verdict, " ", 100 - 14));
        }
        let mut policies = Vec::new();
        for (policy, name) in [
            ("hd-idle-10min", "hd-idle 10 min"),
            (lull_activity::shadow::YOUR_TIMEOUT, "your timeout"),
            ("best-fixed", "best fixed"),
            ("clairvoyant-10min", "clairvoyant 10 min"),
            (lull_activity::shadow::BUDGET_ORACLE, "oracle within budget"),
            ("oracle", "oracle"),
        ] {
            let Some(p) = w.policy(policy) else { continue };
            let mut item = name.to_string();
            if policy == "best-fixed" || policy == lull_activity::shadow::YOUR_TIMEOUT {
                match p.timeout_s {
                    Some(t) => {
                        let _ = write!(item, " ({})", secs(t));
                    }
                    None => item.push_str(" (never)"),
                }
            }
            let _ = write!(
                item,
                " {}, {} spin-up{}",
                energy(p.saved_wh),
                p.spinups,
                if p.spinups == 1 { "" } else { "s" }
            );
            policies.push(item);
        }
        lines.extend(wrap_list(&policies, "; ", 100 - 14));
        if let Some(why) = unreached.filter(|_| !acted) {
            let words: Vec<String> = format!(
                "no ratio: the daemon leaves this disk alone ({why}) and spun nothing down; the others show what each would have saved on its activity"
            )
            .split(' ')
            .map(str::to_string)
            .collect();
            lines.extend(wrap_list(&words, " ", 100 - 14));
            field(&label, lines);
            continue;
        }
        // With nothing to save (the oracle saved nothing), both ratios
        // are 0/0: their conventional 1 would read as lull matching a
        // reference that had nothing to match.
        if super::nothing_to_save(w) {
            lines.push(
                "no ratio: no idle period outlasted the break-even time, so there was nothing to save"
                    .to_string(),
            );
        } else {
            let mut ratios = match w.excess_vs_best_fixed {
                Some(x) => format!("excess vs best fixed {x:.2}"),
                None => "excess vs best fixed n/a (a fixed timeout was optimal)".to_string(),
            };
            match w.gain_vs_clairvoyant {
                Some(g) => {
                    let _ = write!(ratios, ", gain vs clairvoyant {g:.2}");
                }
                // A share of nothing: said, or the ratio seemed lost.
                None => ratios.push_str(
                    ", gain vs clairvoyant n/a (the clairvoyant timer adds nothing over the best fixed one)",
                ),
            }
            let words: Vec<String> = ratios.split(' ').map(str::to_string).collect();
            lines.extend(wrap_list(&words, " ", 100 - 14));
        }
        if w.dry_run_s > 0.0 {
            // A window may span `lulld --dry-run` and the real daemon:
            // lull's line then adds spin-downs it only would have made.
            let dry = if w.dry_run_s >= w.observed_s {
                "all of it watched by a dry run: lull's figures are the spin-downs it would have made".to_string()
            } else {
                format!(
                    "{} of it watched by a dry run: lull's figures count the spin-downs it would have made then",
                    secs(w.dry_run_s)
                )
            };
            let words: Vec<String> = dry.split(' ').map(str::to_string).collect();
            lines.extend(wrap_list(&words, " ", 100 - 14));
        }
        if let Some(n) = w.wear_budget_per_day {
            // The references lull is judged against kept its budget.
            lines.push(format!(
                "best fixed and clairvoyant held to lull's wear budget, {n} spin-downs a day"
            ));
        }
        // The periods of a poll or longer, as the learner counts them, and
        // the chances to save among them: the periods longer than B, the
        // oracle's spin-ups.
        let long = w.policy("oracle").map_or(0, |o| o.spinups);
        lines.push(format!(
            "{} idle period{} of a poll or longer in {} watched, {long} longer than the break-even time",
            w.idle_periods,
            if w.idle_periods == 1 { "" } else { "s" },
            secs(w.observed_s)
        ));
        if let Some(note) = small_margin_note(w) {
            let words: Vec<String> = note.split(' ').map(str::to_string).collect();
            lines.extend(wrap_list(&words, " ", 100 - 14));
        }
        field(&label, lines);
    }
}

/// The verdict that opens a window of the shadow evaluation: what lull
/// (`lull`, its figures in window `w`) saved with how many spin-ups, and
/// how much more or less that is than hd-idle's 10 minutes and the best
/// fixed timeout in hindsight saved on the same activity. In parts that
/// a wrapped line keeps whole, joined by spaces.
pub(super) fn shadow_verdict(
    w: &lull_activity::shadow::WindowReport,
    lull: &lull_activity::shadow::PolicyFigures,
) -> Vec<String> {
    let against = |policy: &str, name: String| {
        let p = w.policy(policy)?;
        let d = lull.saved_wh - p.saved_wh;
        Some(if energy(d) == energy(0.0) {
            format!("as much as {name}")
        } else if d > 0.0 {
            format!("{} more than {name}", energy(d))
        } else {
            format!("{} less than {name}", energy(-d))
        })
    };
    let best = w.policy("best-fixed").map(|p| {
        let t = p.timeout_s.map_or("never".to_string(), secs);
        format!("best fixed ({t})")
    });
    let others: Vec<String> = [
        against("hd-idle-10min", "hd-idle 10 min".into()),
        best.and_then(|b| against("best-fixed", b)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut head = format!(
        "lull {}, {} spin-up{}",
        energy(lull.saved_wh),
        lull.spinups,
        if lull.spinups == 1 { "" } else { "s" }
    );
    if others.is_empty() {
        return vec![head];
    }
    head.push(':');
    let last = others.len() - 1;
    let mut parts = vec![head];
    parts.extend(others.into_iter().enumerate().map(|(i, mut o)| {
        if i < last {
            o.push(',');
        }
        o
    }));
    parts
}

/// A line under a window's ratios when they divide by little
/// ([`lull_tasks::spindown::small_margins`]), as `lull replay` notes it:
/// only of a ratio the window shows, and not when even the oracle saved
/// nothing (the line above says that no idle period outlasted the
/// break-even time; there is no ratio to explain).
pub(super) fn small_margin_note(w: &lull_activity::shadow::WindowReport) -> Option<String> {
    let energy = |p: &str| w.policy(p).map(|f| f.energy_j);
    let oracle = energy("oracle")?;
    if oracle >= w.baseline_energy_j {
        return None;
    }
    let [best, clairvoyant] = lull_tasks::spindown::small_margins(
        w.baseline_energy_j,
        oracle,
        energy("best-fixed")?,
        energy("clairvoyant-10min"),
    );
    let best = best.filter(|_| w.excess_vs_best_fixed.is_some());
    let clairvoyant = clairvoyant.filter(|_| w.gain_vs_clairvoyant.is_some());
    let part = |p: Option<f64>, what: &str| p.map(|p| format!("{what} by {p:.2} %"));
    let parts: Vec<String> = [
        part(best, "the best fixed timeout trails the oracle"),
        part(
            clairvoyant,
            "the clairvoyant timer beats the best fixed one",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "(the ratios divide by little: {} of the energy of never spinning down)",
            parts.join(", and ")
        )
    })
}
