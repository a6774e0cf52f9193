//! Human output: the ranking as a fixed-width table (stdout) and
//! `report.md` (top ten, recommendation, figures, notes).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::analysis::{Choice, EXCESS, GAIN, Limits, choose, limit_ratio, unchecked_limits};
use crate::axes::{Axes, Form, label};
use crate::means::pooled;
use crate::meta::{RunMeta, plural};
use crate::plot::Figure;
use crate::score::Summary;
use crate::sweep::Row;

mod answer;
mod recommend;

// The means it shows, public here as they were.
pub use crate::means::{pooled_excess, pooled_gain, raw_mean};

pub use answer::{answer_lines, answer_markdown, answer_text};
pub use recommend::{day_spread, nothing_gained, pick, recommendation};

/// How a number is shown in tables.
fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if !v.is_finite() => format!("{v}"),
        Some(v) if v.abs() >= 1e5 => format!("{v:.3e}"),
        Some(v) if v.abs() >= 100.0 => format!("{v:.1}"),
        // A value that rounds to zero prints as 0.000, not -0.000.
        Some(v) if v.abs() < 0.0005 => format!("{:.3}", 0.0),
        Some(v) => format!("{v:.3}"),
    }
}

/// A number with at most three decimals and no trailing zeros (`3`,
/// `2.5`, `72.125`).
fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// What the clairvoyant per-window timer and the oracle add over the best
/// fixed timer, pooled over network `policy`'s traces as a share of the
/// energy of never spinning down: the denominators of
/// `gain_vs_clairvoyant` and of the excess, so a reader can tell a gain
/// of −12 that is twelve times a sliver from one that is twelve times
/// half the energy. Under [`lull_tasks::spindown::SMALL_MARGIN_PCT`] it
/// says the gain divides by little, as `lull replay` and `lull status`
/// note it. `None` without spindown rows.
fn clairvoyant_margin(rows: &[Row], policy: usize) -> Option<String> {
    // Over the energy of never spinning down, pooled as the ratios are.
    let share_of_never = |reference: &str| {
        pooled(
            rows,
            policy,
            ["best_fixed_energy_j", reference, "baseline_energy_j"],
            |[b, r, never]| (b - r, never, 0.0),
        )
        .map(|x| 100.0 * x)
    };
    let cv = share_of_never("window_clairvoyant_energy_j")?;
    let oracle = share_of_never("oracle_energy_j")?;
    // Under a wear budget: the references hold to it, and so does an
    // oracle that spends each day's spin-downs on its best periods.
    let mut note = match share_of_never("budget_oracle_energy_j") {
        Some(held) => format!(
            "On these traces, held to the wear budget, the clairvoyant timer spends {cv:.2} % of the energy of never spinning down less than the best fixed timer (the oracle held to the budget {held:.2} %, without it {oracle:.2} %)"
        ),
        None => format!(
            "On these traces the clairvoyant timer spends {cv:.2} % of the energy of never spinning down less than the best fixed timer (the oracle {oracle:.2} %)"
        ),
    };
    if cv < lull_tasks::spindown::SMALL_MARGIN_PCT {
        note.push_str(": the gain divides by little, and a gain of −1 is that sliver lost again");
    }
    note.push('.');
    Some(note)
}

fn spec_of(rows: &[Row], policy: usize) -> Option<&Row> {
    rows.iter().find(|r| r.network_index == policy)
}

/// How a row's network is named in tables: its spec as written (B- and
/// R-relative), the best fixed timer by name, and how many equivalent
/// networks it stands for.
pub fn network_label(s: &Summary, rows: &[Row]) -> String {
    let (name, suffix) = label_parts(s, rows);
    format!("{name}{suffix}")
}

fn label_parts(s: &Summary, rows: &[Row]) -> (String, String) {
    let name = match spec_of(rows, s.policy) {
        None => "?".to_string(),
        Some(r) if r.spec == crate::grid::BEST_FIXED => match r.params.get(crate::sweep::UNDER) {
            Some(under) => format!("best fixed timer in hindsight under {under}"),
            None => "best fixed timer in hindsight".into(),
        },
        Some(r) => r.spec.clone(),
    };
    let mut suffix = if s.equivalents.is_empty() {
        String::new()
    } else {
        format!(" (= {} equivalent)", s.equivalents.len())
    };
    if s.reference && spec_of(rows, s.policy).is_some_and(|r| r.spec == crate::grid::HD_IDLE) {
        suffix.push_str(" (hd-idle's default)");
    }
    (name, suffix)
}

/// Flags of a row: `P` on the Pareto frontier across traces, `worse`
/// when it did worse than no task on some trace, `over` when it breaks a
/// limit of the run (`--max-…`) on some trace, `pick` for the network the
/// report recommends under those limits (without limits it is rank 1), or
/// `auto` where the report recommends it over the grid ([`pick`]).
fn flags(s: &Summary, rows: &[Row], limits: &Limits, pick: Option<usize>) -> String {
    let mut f = Vec::new();
    // Without limits the grid's best is rank 1 and needs no flag; `auto`
    // recommended over the grid always carries it.
    if pick == Some(s.policy) && (s.reference || !limits.is_empty()) {
        f.push("pick".to_string());
    }
    if s.pareto && !s.reference {
        f.push("P".to_string());
    }
    if s.worse > 0 {
        f.push("worse".to_string());
    }
    if !limits.is_empty() && limit_ratio(rows, s.policy, limits) > 1.0 {
        f.push("over".to_string());
    }
    if f.is_empty() {
        "-".into()
    } else {
        f.join(",")
    }
}

/// The rows a table shows: the `top` best-ranked networks, then the
/// grid's recommended one under `limits` when it ranks below them (under
/// limits the best networks may break; it is the alternative when `auto`
/// is recommended), then the reference rows.
fn chosen<'a>(
    summaries: &'a [Summary],
    rows: &[Row],
    top: usize,
    limits: &Limits,
) -> impl Iterator<Item = &'a Summary> {
    let grid = choose(summaries, rows, limits).network();
    let ranked = || summaries.iter().filter(|s| !s.reference);
    let below = ranked().skip(top).find(|s| Some(s.policy) == grid);
    ranked()
        .take(top)
        .chain(below)
        .chain(summaries.iter().filter(|s| s.reference))
}

/// A network's standard deviation of the distance across its traces, for
/// a table; `None` (shown `-`) on one trace, where there is no spread.
fn spread(s: &Summary, rows: &[Row]) -> Option<f64> {
    let mut traces: Vec<usize> = rows
        .iter()
        .filter(|r| r.network_index == s.policy)
        .map(|r| r.trace_index)
        .collect();
    traces.sort_unstable();
    traces.dedup();
    (traces.len() > 1).then(|| s.variance.sqrt())
}

fn has_excess(rows: &[Row]) -> bool {
    rows.iter().any(|r| r.measure(EXCESS).is_some())
}

fn has_gain(rows: &[Row]) -> bool {
    rows.iter().any(|r| r.measure(GAIN).is_some())
}

/// The ranking as a fixed-width text table: the `top` best networks, the
/// recommended one under `limits` when it ranks below them, and the
/// reference rows.
pub fn text_table(
    summaries: &[Summary],
    rows: &[Row],
    axes: &Axes,
    top: usize,
    limits: &Limits,
) -> String {
    let pick = pick(summaries, rows, limits);
    let excess = has_excess(rows);
    let mut header = vec![
        "rank".to_string(),
        "mean d".into(),
        "sd d".into(),
        axes.x.measure.into(),
        axes.y.measure.into(),
    ];
    if excess {
        header.push("excess/bf".into());
    }
    let gain = has_gain(rows);
    if gain {
        header.push("gain/cv".into());
    }
    header.push("flags".into());
    header.push("network".into());
    let mut lines: Vec<Vec<String>> = vec![header];
    for s in chosen(summaries, rows, top, limits) {
        let mut l = vec![
            s.rank.map_or_else(|| "ref".into(), |r| r.to_string()),
            num(Some(s.mean)),
            num(spread(s, rows)),
            num(raw_mean(rows, s.policy, axes.x.measure)),
            num(raw_mean(rows, s.policy, axes.y.measure)),
        ];
        if excess {
            l.push(num(raw_mean(rows, s.policy, EXCESS)));
        }
        if gain {
            l.push(num(raw_mean(rows, s.policy, GAIN)));
        }
        l.push(flags(s, rows, limits, pick));
        l.push(network_label(s, rows));
        lines.push(l);
    }
    let cols = lines[0].len();
    let mut width = vec![0usize; cols];
    for l in &lines {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for l in &lines {
        let mut line = String::new();
        for (i, c) in l.iter().enumerate() {
            if i + 1 == cols {
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

/// The run's drive in the report's first lines: the one `--device` named,
/// or the lab's default, with the drive whose service times time a
/// model-timed run when it is another's (`paper-2.5in`'s power,
/// `wd-red-plus`'s service times, named or the default).
fn drive_text(meta: &RunMeta) -> String {
    let named = |d: &str| format!(", device `{d}`");
    let Ok(d) = lull_blktrace_replay::replay::profile(meta.device.as_deref()) else {
        return meta.device.as_deref().map(named).unwrap_or_default();
    };
    let service = if meta.timing == "model" && d.service().name != d.preset() {
        format!(" (service times of `{}`)", d.service().name)
    } else {
        String::new()
    };
    match meta.device.as_deref() {
        Some(spec) => format!("{}{service}", named(spec)),
        None => format!(", the lab's default device `{}`{service}", d.preset()),
    }
}

/// The ranking's top rows as a Markdown table, as [`text_table`]'s.
pub fn markdown_table(
    summaries: &[Summary],
    rows: &[Row],
    axes: &Axes,
    top: usize,
    limits: &Limits,
) -> String {
    let pick = pick(summaries, rows, limits);
    let excess = has_excess(rows);
    let gain = has_gain(rows);
    let mut out = format!(
        "| rank | network | mean distance | sd | {} | {} |{}{} flags |\n|---:|---|---:|---:|---:|---:|{}{}---|\n",
        crate::axes::mean_label(axes.x.measure),
        crate::axes::mean_label(axes.y.measure),
        if excess {
            " excess vs best fixed |"
        } else {
            ""
        },
        if gain { " gain vs clairvoyant |" } else { "" },
        if excess { "---:|" } else { "" },
        if gain { "---:|" } else { "" },
    );
    for s in chosen(summaries, rows, top, limits) {
        let (name, suffix) = label_parts(s, rows);
        let _ = writeln!(
            out,
            "| {} | `{name}`{suffix} | {} | {} | {} | {} |{}{} {} |",
            s.rank.map_or_else(|| "ref".into(), |r| r.to_string()),
            num(Some(s.mean)),
            num(spread(s, rows)),
            num(raw_mean(rows, s.policy, axes.x.measure)),
            num(raw_mean(rows, s.policy, axes.y.measure)),
            if excess {
                format!(" {} |", num(raw_mean(rows, s.policy, EXCESS)))
            } else {
                String::new()
            },
            if gain {
                format!(" {} |", num(raw_mean(rows, s.policy, GAIN)))
            } else {
                String::new()
            },
            flags(s, rows, limits, pick),
        );
    }
    out
}

/// Per family: (family, networks, best rank, mean of the networks' mean
/// distances), best first.
pub fn family_table(
    summaries: &[Summary],
    rows: &[Row],
    start: bool,
) -> Vec<(String, usize, usize, f64)> {
    let mut by: BTreeMap<String, (usize, usize, f64)> = BTreeMap::new();
    for s in summaries.iter().filter(|s| !s.reference) {
        let (Some(r), Some(rank)) = (spec_of(rows, s.policy), s.rank) else {
            continue;
        };
        let fam = if start {
            r.start_family.clone()
        } else {
            r.duration_family.clone()
        };
        let e = by.entry(fam).or_insert((0, usize::MAX, 0.0));
        e.0 += 1;
        e.1 = e.1.min(rank);
        e.2 += s.mean;
    }
    let mut v: Vec<_> = by
        .into_iter()
        .map(|(f, (n, best, sum))| (f, n, best, sum / n as f64))
        .collect();
    v.sort_by(|a, b| a.2.cmp(&b.2).then(a.3.total_cmp(&b.3)));
    v
}

/// What a ranking counted, for its first line: the distinct networks, the
/// networks folded into one of them for identical measures on every trace,
/// and the reference rows ("55 networks (5 more identical to one of them)
/// and 3 references"), so that networks × traces adds up to the runs.
pub fn counted(summaries: &[Summary]) -> String {
    let ranked = summaries.iter().filter(|s| !s.reference);
    let same: usize = ranked.clone().map(|s| s.equivalents.len()).sum();
    let references = summaries.iter().filter(|s| s.reference).count();
    let mut text = plural(ranked.count(), "network", "networks");
    if same > 0 {
        text += &format!(" ({same} more identical to one of them)");
    }
    if references > 0 {
        text += &format!(" and {}", plural(references, "reference", "references"));
    }
    text
}

/// Where networks beat the oracle: at least as good on both measures of a
/// trace and better on one (a writeback oracle stops its flushes at every
/// arrival, which writes into the cache do not require). The report says
/// the oracle is a yardstick there, not a bound, rather than leave "0.5 =
/// as costly as the oracle" to read as one (a trial saw `timer(0s)` queue
/// 161 bytes against the oracle's 367). A network that only trades one
/// measure for the other (a timer that never fires delays nothing) does
/// not count.
fn oracle_beaten(rows: &[Row], axes: &Axes) -> Option<String> {
    let oracle: BTreeMap<usize, &Row> = rows
        .iter()
        .filter(|r| r.reference && r.spec.starts_with("oracle"))
        .map(|r| (r.trace_index, r))
        .collect();
    // How `v` compares with the oracle's `o` on `axis`: better (1), as
    // good (0, within the ranking's tie), worse (-1).
    let cmp = |axis: &crate::axes::Axis, v: f64, o: f64| {
        let tie = crate::score::TIE_EPSILON * o.abs().max(1.0);
        let d = match axis.better {
            crate::score::Better::Lower => o - v,
            crate::score::Better::Higher => v - o,
        };
        if d > tie {
            1
        } else if d >= -tie {
            0
        } else {
            -1
        }
    };
    let beats = |r: &&Row| {
        let Some(o) = oracle.get(&r.trace_index) else {
            return false;
        };
        let mut sides = [&axes.x, &axes.y].into_iter().map(|a| {
            match (r.measure(a.measure), o.measure(a.measure)) {
                (Some(v), Some(ov)) if v.is_finite() && ov.is_finite() => cmp(a, v, ov),
                _ => -1,
            }
        });
        let (x, y) = (sides.next().unwrap_or(-1), sides.next().unwrap_or(-1));
        x >= 0 && y >= 0 && x + y > 0
    };
    let beaten: Vec<&Row> = rows.iter().filter(|r| !r.reference).filter(beats).collect();
    if beaten.is_empty() {
        return None;
    }
    let networks = beaten
        .iter()
        .map(|r| r.network_index)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let traces = beaten
        .iter()
        .map(|r| r.trace_index)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    Some(format!(
        "The oracle is a yardstick here, not a bound: it knows each idle period in advance and stops the task \
         when the period ends, which this task does not require, and {} {} at least as well as it on `{}` and \
         `{}` and better on one, on {}.",
        plural(networks, "network", "networks"),
        if networks == 1 { "does" } else { "do" },
        axes.x.measure,
        axes.y.measure,
        plural(traces, "trace", "traces"),
    ))
}

/// The whole `report.md`: the answer (three lines and a table) first,
/// then the details as bullets, the ranking, how it was scored, the
/// traces, the figures and the notes.
pub fn markdown(
    meta: &RunMeta,
    summaries: &[Summary],
    rows: &[Row],
    axes: &Axes,
    figures: &[Figure],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# lull rank — task `{}`\n", meta.task);
    out.push_str(&answer_markdown(meta, summaries, rows, axes));
    let _ = writeln!(out, "\n## Details\n");
    if let Some(b) = meta.breakeven_s {
        let _ = writeln!(
            out,
            "- Specs are written relative to the device. **B = {} s** is its break-even time (`timer(t=2B)` waits {} s). \
             **R** is each trace's mean request rate (IO/s, in the Traces table).",
            short(b),
            short(2.0 * b),
        );
    }
    for line in recommendation(meta, summaries, rows, axes).lines() {
        if !line.trim().is_empty() {
            let _ = writeln!(out, "- {line}");
        }
    }
    if let Some(text) = oracle_beaten(rows, axes) {
        let _ = writeln!(out, "- {text}");
    }
    out.push('\n');
    let how = match meta.score {
        crate::score::Mode::Robust => format!(
            "Scored robustly: on each trace, {} is scaled against references no other network can move ({}), \
             {} as `c / (c + c_oracle)` (0.5 = as costly as the oracle); a network's distance from the origin (0 = ideal) \
             is averaged over the traces. A network that does worse than no task on a trace is scored there as achieving nothing of {} (its {} still counts) and flagged `worse`. \
             (`--score paper` gives the min–max scaling of §4.1.1 of *Idleness is not sloth*.)",
            axes.x.measure,
            match axes.x.form {
                Form::Share(crate::axes::Ideal::Measure(m)) =>
                    format!("the share of `{m}` captured"),
                Form::Share(crate::axes::Ideal::Const(c)) => format!("the share of {c} captured"),
                Form::Share(crate::axes::Ideal::Oracle) =>
                    "the share of the oracle's value captured".into(),
                Form::Cost => "as a cost against the oracle's".into(),
            },
            axes.y.measure,
            axes.x.measure,
            axes.y.measure,
        ),
        crate::score::Mode::Paper => format!(
            "Ranked by the scaled distance of §4.1.1 of *Idleness is not sloth*: on each trace, {} ({}) and {} ({}) \
             are scaled to [0, 1] with 0 the best network's value, and a network's distance from the origin is averaged over the traces.",
            axes.x.measure,
            crate::axes::direction(axes.x.better),
            axes.y.measure,
            crate::axes::direction(axes.y.better),
        ),
    };
    if let Some(v) = &meta.validation {
        let _ = writeln!(
            out,
            "## Out-of-sample validation\n\nPicked on the first {:.0} % of each trace, `{}` (mean distance {:.3} there) scores {:.3} on the rest, \
             rank {} of {}; the best network on the rest in hindsight is `{}` ({:.3}).\n",
            v.fraction * 100.0,
            v.pick,
            v.pick_in_sample,
            v.pick_out_of_sample,
            v.pick_rank_out_of_sample,
            v.ranked,
            v.best_out_of_sample,
            v.best_out_of_sample_distance
        );
    }
    let auto_picked = pick(summaries, rows, &meta.limits)
        .is_some_and(|p| summaries.iter().any(|s| s.policy == p && s.reference));
    let _ = writeln!(out, "## Ranking (top 10)\n");
    out.push_str(&markdown_table(summaries, rows, axes, 10, &meta.limits));
    let _ = writeln!(
        out,
        "\nFlags: {}`P` on the Pareto frontier across traces (of the mean scaled measures the distance is made of, so a row the raw means shown seem to beat can carry it), `worse` worse than no task on some trace{}; `(= N equivalent)`: N more networks with identical measures on every trace (listed in `ranking.csv`). \
         The full ranking is in `ranking.csv`; every run with every measure in `results.csv` / `results.parquet`.\n",
        match (meta.limits.is_empty(), auto_picked) {
            (true, false) => "",
            (true, true) => "`pick` the network recommended (`auto`, which beats the grid here), ",
            (false, _) =>
                "`pick` the network recommended under the limits (listed below the top ten when it ranks lower; `auto` when it beats the grid), ",
        },
        if meta.limits.is_empty() {
            ""
        } else {
            ", `over` breaks a limit on some trace"
        },
    );
    let _ = writeln!(
        out,
        "## How it was ranked\n\n{} on {} ({} runs{}); stop policy `{}`, {} timing{}. {how}\n",
        counted(summaries),
        meta.traces_text(),
        rows.len(),
        meta.shard
            .as_ref()
            .map(|s| format!(", shard {s}"))
            .unwrap_or_default(),
        meta.policy,
        meta.timing,
        drive_text(meta),
    );
    let _ = writeln!(
        out,
        "## Traces\n\n| trace | source | requests | span (s) | idle (s) | idle periods | R (IO/s) | best fixed timer |\n|---|---|---:|---:|---:|---:|---:|---|"
    );
    for t in &meta.traces {
        let best_fixed = rows
            .iter()
            .find(|r| r.trace_index == t.index && r.reference && r.spec == crate::grid::BEST_FIXED)
            .and_then(|r| {
                // A timeout as long as the longest idle period never fires:
                // no timeout saves anything on the trace (lab-25 R10).
                if r.measure("spinups") == Some(0.0) {
                    return Some("never (no timeout saves)".to_string());
                }
                let t = r.params.get("start.t")?;
                Some(match r.params.get(crate::sweep::UNDER) {
                    Some(under) => format!("`timer(t={t})` under {under}"),
                    None => format!("`timer(t={t})`"),
                })
            })
            .unwrap_or_else(|| "-".to_string());
        let name = match &t.left_out {
            Some(why) => format!("{} (left out: {why})", t.name),
            None => t.name.clone(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} | {:.1} | {} | {} | {best_fixed} |",
            name,
            t.source,
            t.requests,
            t.span_s,
            t.idle_s,
            t.idle_periods,
            num(Some(t.mean_rate)),
        );
    }
    out.push('\n');
    if !figures.is_empty() {
        let _ = writeln!(out, "## Figures\n");
        for f in figures {
            let _ = writeln!(
                out,
                "### {}\n\n![{}](plots/{}.png)\n\n([SVG](plots/{}.svg))\n",
                f.title, f.title, f.stem, f.stem
            );
        }
    }
    if !meta.notes.is_empty() {
        let _ = writeln!(out, "## Notes\n");
        for n in &meta.notes {
            let _ = writeln!(out, "- {n}");
        }
    }
    out
}
