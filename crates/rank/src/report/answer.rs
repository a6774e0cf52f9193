//! The answer a ranking opens with (issue 78): three lines, then a short
//! table, before any detail.
//!
//! For spin-down the three lines are the network to use; what it saves
//! beside hd-idle's 10 minutes and the best fixed timeout in hindsight;
//! and the spin-ups it costs a day. The table puts the pick beside the
//! grid's best (or `auto`), hd-idle's 10 minutes, the best fixed timeout
//! and the oracle. Other tasks get the same shape on their two measures.

use super::*;
use crate::grid::HD_IDLE;
use crate::sweep::SPINUPS_PER_DAY;

/// The measure the spin-down answer speaks in.
const SAVED: &str = "energy_saved_pct";

/// The caveat beside B where the drive's figures are not sourced
/// (issue 78): B scales with the spin-up energy, and these presets'
/// spin-up power or time is assumed (crates/tasks/src/power.rs).
/// Nothing for a drive whose spin-up figures were overridden.
fn unverified_b(meta: &RunMeta) -> Option<String> {
    let d = lull_blktrace_replay::replay::profile(meta.device.as_deref()).ok()?;
    let why = d.power()?.caveat()?;
    Some(format!(" (unverified: {why})"))
}

/// The answer's three lines, in Markdown (names in backticks, the
/// pick in bold). Fewer when nothing finished.
pub fn answer_lines(
    meta: &RunMeta,
    summaries: &[Summary],
    rows: &[Row],
    axes: &Axes,
) -> Vec<String> {
    let limits = &meta.limits;
    let choice = choose(summaries, rows, limits);
    let Some(p) = pick(summaries, rows, limits) else {
        return vec!["No network finished: there is nothing to recommend.".into()];
    };
    let Some(picked) = summaries.iter().find(|s| s.policy == p) else {
        return vec!["No network finished: there is nothing to recommend.".into()];
    };
    let name = label_parts(picked, rows).0;
    let mean = |s: &Summary, m: &str| raw_mean(rows, s.policy, m);
    let spindown = rows.iter().any(|r| r.measure(SAVED).is_some());
    let drive = match meta.breakeven_s {
        Some(b) => format!(
            "{}, B = {} s{}",
            drive_text(meta),
            short(b),
            unverified_b(meta).unwrap_or_default()
        ),
        None => drive_text(meta),
    };
    let on = format!("`{}` on {}{drive}", meta.task, meta.traces_text());
    let both = format!("{} and {}", label(axes.x.measure), label(axes.y.measure));
    let none = nothing_gained(meta, rows, axes);
    let nothing_anywhere = meta.ranked_traces() > 0 && none.len() == meta.ranked_traces();
    let mut first = if nothing_anywhere {
        format!(
            "**Leave the device alone**: nothing in the grid achieves any {} for {on}.",
            label(axes.x.measure)
        )
    } else if let Choice::Closest(_, ratio) = choice
        && !picked.reference
    {
        format!(
            "**No network keeps the limits on every trace** for {on}; `{name}` comes closest (its worst measure is {ratio:.2}× its limit)."
        )
    } else if picked.reference {
        format!(
            "**Use `{name}`** (lull's default network) for {on}: it beats the grid's best on {both}."
        )
    } else {
        format!("**Use `{name}`** for {on}: it comes closest to the ideal of {both}.")
    };
    if picked.worse > 0 {
        first.push_str(" It does worse than no task on some trace: see the warning below.");
    }
    let mut lines = vec![first];
    let hd = reference_with(summaries, rows, |r| r.spec == HD_IDLE);
    let bf = reference_with(summaries, rows, |r| r.spec == crate::grid::BEST_FIXED);
    if spindown {
        let pct = |s: &Summary| mean(s, SAVED).map_or("-".into(), |v| format!("{v:.1} %"));
        // Where nothing saves, the grid's best is no advice: named as such.
        let subject = if nothing_anywhere {
            format!("The grid's best, `{name}`,")
        } else {
            "It".to_string()
        };
        // Against each reference, in percentage points of the energy of
        // never spinning down (said once), the reference's share beside it.
        let against = |r: &Summary, name: &str, note: &str, unit: &str| match (
            mean(picked, SAVED),
            mean(r, SAVED),
        ) {
            (Some(a), Some(b)) => {
                let d = a - b;
                let how = if format!("{:.1}", d.abs()) == "0.0" {
                    "as much as".to_string()
                } else if d > 0.0 {
                    format!("{d:.1}{unit} more than")
                } else {
                    format!("{:.1}{unit} fewer than", -d)
                };
                format!("{how} {name} ({note}{b:.1} %)")
            }
            _ => format!("{name}: -"),
        };
        let mut parts = Vec::new();
        match hd {
            Some(h) => parts.push(against(
                h,
                "hd-idle's 10 minutes",
                &format!("`{HD_IDLE}`, "),
                " percentage points",
            )),
            None => parts.push(
                "hd-idle's 10 minutes was not run (no `timer(t=600s)` reference row)".to_string(),
            ),
        }
        if let Some(b) = bf {
            let unit = if hd.is_some() {
                ""
            } else {
                " percentage points"
            };
            parts.push(against(b, "the best fixed timeout in hindsight", "", unit));
        }
        let second = format!(
            "{subject} saves {} of the energy of never spinning down: {}.",
            pct(picked),
            parts.join(" and ")
        );
        lines.push(second);
        let per_day =
            |s: &Summary| mean(s, SPINUPS_PER_DAY).map_or("-".into(), |v| format!("{v:.1}"));
        let mut third = format!("It costs {} spin-ups a day", per_day(picked));
        let others: Vec<String> = [
            hd.map(|h| format!("hd-idle's 10 minutes {}", per_day(h))),
            bf.map(|b| format!("the best fixed timeout {}", per_day(b))),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !others.is_empty() {
            let _ = write!(third, " ({})", others.join(", "));
        }
        third.push('.');
        if let Some(under) =
            bf.and_then(|b| spec_of(rows, b.policy)?.params.get(crate::sweep::UNDER))
        {
            let _ = write!(third, " Every row keeps {under}.");
        }
        lines.push(third);
    } else {
        let both = |s: &Summary| {
            format!(
                "{} {} and {} {}",
                num(mean(s, axes.x.measure)),
                label(axes.x.measure),
                num(mean(s, axes.y.measure)),
                label(axes.y.measure)
            )
        };
        lines.push(format!("It averages {}.", both(picked)));
        if let Some(b) = bf.filter(|b| b.policy != picked.policy) {
            lines.push(format!(
                "The best fixed timer in hindsight averages {}.",
                both(b)
            ));
        }
    }
    lines
}

/// The reference row whose row satisfies `is`, if the run has one.
fn reference_with<'a>(
    summaries: &'a [Summary],
    rows: &[Row],
    is: impl Fn(&Row) -> bool,
) -> Option<&'a Summary> {
    summaries
        .iter()
        .find(|s| s.reference && spec_of(rows, s.policy).is_some_and(&is))
}

/// The rows of the answer's table: `(role, summary)`, the pick first,
/// then the grid's best (when `auto` is picked) or `auto` (when the grid's
/// best is), hd-idle's 10 minutes, the best fixed timeout and the oracle,
/// each once and where the run has it.
fn answer_rows<'a>(
    meta: &RunMeta,
    summaries: &'a [Summary],
    rows: &[Row],
) -> Vec<(&'static str, &'a Summary)> {
    let limits = &meta.limits;
    let by = |p: Option<usize>| p.and_then(|p| summaries.iter().find(|s| s.policy == p));
    let picked = by(pick(summaries, rows, limits));
    let grid = by(choose(summaries, rows, limits).network());
    let auto = reference_with(summaries, rows, |r| r.spec == "auto");
    let mut out: Vec<(&'static str, &Summary)> = Vec::new();
    let mut add = |role: &'static str, s: Option<&'a Summary>| {
        if let Some(s) = s
            && !out.iter().any(|(_, o)| o.policy == s.policy)
        {
            out.push((role, s));
        }
    };
    add("use", picked);
    add("grid's best", grid);
    add("lull's default", auto);
    add(
        "hd-idle 10 min",
        reference_with(summaries, rows, |r| r.spec == HD_IDLE),
    );
    add(
        "best fixed in hindsight",
        reference_with(summaries, rows, |r| r.spec == crate::grid::BEST_FIXED),
    );
    add(
        "oracle (a bound)",
        reference_with(summaries, rows, |r| {
            r.reference && r.start_family == "oracle"
        }),
    );
    out
}

/// The answer table's header and cells: role, network, then the means
/// of energy saved and spin-ups a day (spin-down) and the task's two
/// ranking measures.
fn answer_cells(
    meta: &RunMeta,
    summaries: &[Summary],
    rows: &[Row],
    axes: &Axes,
) -> (Vec<String>, Vec<Vec<String>>) {
    let spindown = rows.iter().any(|r| r.measure(SAVED).is_some());
    let mut measures: Vec<&str> = vec![axes.x.measure];
    if spindown && !measures.contains(&SPINUPS_PER_DAY) {
        measures.push(SPINUPS_PER_DAY);
    }
    if !measures.contains(&axes.y.measure) {
        measures.push(axes.y.measure);
    }
    let mut header = vec!["role".to_string(), "network".into()];
    header.extend(measures.iter().map(|m| crate::axes::mean_label(m)));
    let body = answer_rows(meta, summaries, rows)
        .into_iter()
        .map(|(role, s)| {
            let (name, suffix) = label_parts(s, rows);
            let mut l = vec![role.to_string(), format!("`{name}`{suffix}")];
            l.extend(measures.iter().map(|m| num(raw_mean(rows, s.policy, m))));
            l
        })
        .collect();
    (header, body)
}

/// The answer as Markdown: the three lines, then its table.
pub fn answer_markdown(meta: &RunMeta, summaries: &[Summary], rows: &[Row], axes: &Axes) -> String {
    let mut out = answer_lines(meta, summaries, rows, axes).join("\n");
    out.push_str("\n\n");
    let (header, body) = answer_cells(meta, summaries, rows, axes);
    if body.is_empty() {
        return out;
    }
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|---|---|{}",
        "---:|".repeat(header.len().saturating_sub(2))
    );
    for l in body {
        let _ = writeln!(out, "| {} |", l.join(" | "));
    }
    out
}

/// Markdown's emphasis and code marks taken out, for a terminal.
fn plain(s: &str) -> String {
    s.replace("**", "").replace('`', "")
}

/// The answer as plain text for stdout: the three lines, then its table
/// in fixed-width columns.
pub fn answer_text(meta: &RunMeta, summaries: &[Summary], rows: &[Row], axes: &Axes) -> String {
    let mut out: String = answer_lines(meta, summaries, rows, axes)
        .iter()
        .map(|l| format!("{}\n", plain(l)))
        .collect();
    let (header, body) = answer_cells(meta, summaries, rows, axes);
    if body.is_empty() {
        return out;
    }
    out.push('\n');
    // The network last, as in the ranking's table: names run long.
    let lines: Vec<Vec<String>> = std::iter::once(header)
        .chain(body)
        .map(|mut l| {
            let network = l.remove(1);
            l.push(network);
            l.iter().map(|c| plain(c)).collect()
        })
        .collect();
    let mut width = vec![0usize; lines[0].len()];
    for l in &lines {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    for l in &lines {
        let mut line = String::new();
        for (i, c) in l.iter().enumerate() {
            // The role to the left, numbers to the right, the network
            // unpadded.
            if i == 0 {
                let _ = write!(line, "{c:<w$}  ", w = width[i]);
            } else if i + 1 == l.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:>w$}  ", w = width[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
