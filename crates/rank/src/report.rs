//! Human output: the ranking as a fixed-width table (stdout) and
//! `report.md` (top ten, recommendation, figures, notes).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::axes::{Axes, label};
use crate::output::RunMeta;
use crate::plot::Figure;
use crate::score::Summary;
use crate::sweep::Row;

/// How a number is shown in tables.
fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if !v.is_finite() => format!("{v}"),
        Some(v) if v.abs() >= 1e5 => format!("{v:.3e}"),
        Some(v) if v.abs() >= 100.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// A network's mean of raw measure `m` across its traces.
pub fn raw_mean(rows: &[Row], policy: usize, m: &str) -> Option<f64> {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.network_index == policy)
        .filter_map(|r| r.measure(m))
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn spec_of(rows: &[Row], policy: usize) -> Option<&Row> {
    rows.iter().find(|r| r.network_index == policy)
}

/// The ranking as a fixed-width text table: the `top` best networks and
/// the reference rows.
pub fn text_table(summaries: &[Summary], rows: &[Row], axes: &Axes, top: usize) -> String {
    let mut lines: Vec<[String; 6]> = vec![[
        "rank".into(),
        "mean d".into(),
        "sd d".into(),
        axes.x.measure.into(),
        axes.y.measure.into(),
        "network".into(),
    ]];
    let chosen = summaries
        .iter()
        .filter(|s| !s.reference)
        .take(top)
        .chain(summaries.iter().filter(|s| s.reference));
    for s in chosen {
        let spec = spec_of(rows, s.policy).map_or("?", |r| r.spec.as_str());
        lines.push([
            s.rank.map_or_else(|| "ref".into(), |r| r.to_string()),
            num(Some(s.mean)),
            num(Some(s.variance.sqrt())),
            num(raw_mean(rows, s.policy, axes.x.measure)),
            num(raw_mean(rows, s.policy, axes.y.measure)),
            spec.to_string(),
        ]);
    }
    let mut width = [0usize; 6];
    for l in &lines {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for l in &lines {
        let _ = writeln!(
            out,
            "{:>w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {}",
            l[0],
            l[1],
            l[2],
            l[3],
            l[4],
            l[5],
            w0 = width[0],
            w1 = width[1],
            w2 = width[2],
            w3 = width[3],
            w4 = width[4],
        );
    }
    out
}

/// The ranking's top rows as a Markdown table.
pub fn markdown_table(summaries: &[Summary], rows: &[Row], axes: &Axes, top: usize) -> String {
    let mut out = format!(
        "| rank | network | start family | duration family | mean distance | sd | mean {} | mean {} |\n|---:|---|---|---|---:|---:|---:|---:|\n",
        label(axes.x.measure),
        label(axes.y.measure)
    );
    let chosen = summaries
        .iter()
        .filter(|s| !s.reference)
        .take(top)
        .chain(summaries.iter().filter(|s| s.reference));
    for s in chosen {
        let Some(r) = spec_of(rows, s.policy) else {
            continue;
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} | {} | {} | {} |",
            s.rank.map_or_else(|| "ref".into(), |r| r.to_string()),
            r.spec,
            r.start_family,
            r.duration_family,
            num(Some(s.mean)),
            num(Some(s.variance.sqrt())),
            num(raw_mean(rows, s.policy, axes.x.measure)),
            num(raw_mean(rows, s.policy, axes.y.measure)),
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

/// A recommendation in plain words.
pub fn recommendation(meta: &RunMeta, summaries: &[Summary], rows: &[Row], axes: &Axes) -> String {
    let ranked: Vec<&Summary> = summaries.iter().filter(|s| !s.reference).collect();
    let Some(best) = ranked.first() else {
        return "No network finished, so there is nothing to recommend.".into();
    };
    let spec = |s: &Summary| spec_of(rows, s.policy).map_or("?".into(), |r| r.spec.clone());
    let traces = meta.traces.len();
    let mut out = String::new();
    let _ = write!(
        out,
        "For `{}` on {} trace{}, use **`{}`**. It came closest to the best observed value of both {} and {} \
         (mean scaled distance {:.3}, standard deviation {:.3} across traces), averaging {} {} and {} {}.",
        meta.task,
        traces,
        if traces == 1 { "" } else { "s" },
        spec(best),
        axes.x.measure.replace('_', " "),
        axes.y.measure.replace('_', " "),
        best.mean,
        best.variance.sqrt(),
        num(raw_mean(rows, best.policy, axes.x.measure)),
        label(axes.x.measure),
        num(raw_mean(rows, best.policy, axes.y.measure)),
        label(axes.y.measure),
    );
    if let Some(cr) = raw_mean(rows, best.policy, "competitive_ratio") {
        let _ = write!(
            out,
            " Its energy is {cr:.3}× what the offline oracle spends (competitive ratio)."
        );
    }
    // The steadiest of the top ten.
    let top: Vec<&&Summary> = ranked.iter().take(10).collect();
    if let Some(steady) = top.iter().min_by(|a, b| {
        a.variance
            .total_cmp(&b.variance)
            .then(a.policy.cmp(&b.policy))
    }) {
        if steady.policy != best.policy && traces > 1 {
            let _ = write!(
                out,
                " If the same behaviour on every workload matters more than the last bit of performance, \
                 `{}` (rank {}) varies least among the top ten (sd {:.3}).",
                spec(steady),
                steady.rank.unwrap_or(0),
                steady.variance.sqrt()
            );
        }
    }
    let fams = family_table(summaries, rows, true);
    if let Some(f) = fams.first() {
        let _ = write!(
            out,
            "\n\nBy start-detector family, **{}** has the best network (rank {}; its {} network{} average a distance of {:.3})",
            f.0,
            f.2,
            f.1,
            if f.1 == 1 { "" } else { "s" },
            f.3
        );
        if let Some(g) = fams.get(1) {
            let _ = write!(
                out,
                ", ahead of {} (best rank {}, average {:.3})",
                g.0, g.2, g.3
            );
        }
        if let Some(w) = fams.last().filter(|_| fams.len() > 2) {
            let _ = write!(
                out,
                "; {} trails (best rank {}, average {:.3})",
                w.0, w.2, w.3
            );
        }
        out.push('.');
        // The family that is safest to pick blindly: lowest average.
        if let Some(safe) = fams
            .iter()
            .filter(|f| f.1 > 1)
            .min_by(|a, b| a.3.total_cmp(&b.3).then(a.2.cmp(&b.2)))
        {
            if safe.0 != f.0 {
                let _ = write!(
                    out,
                    " The family whose settings matter least is {}: its {} networks average {:.3}.",
                    safe.0, safe.1, safe.3
                );
            }
        }
    }
    let durs = family_table(summaries, rows, false);
    if let Some(d) = durs.first() {
        let _ = write!(
            out,
            " Among duration predictors, **{}** gives the best networks (best rank {}, average {:.3}).",
            d.0, d.2, d.3
        );
    }
    out
}

/// The whole `report.md`.
pub fn markdown(
    meta: &RunMeta,
    summaries: &[Summary],
    rows: &[Row],
    axes: &Axes,
    figures: &[Figure],
) -> String {
    let mut out = String::new();
    let networks = summaries.iter().filter(|s| !s.reference).count();
    let _ = writeln!(out, "# lull rank — task `{}`\n", meta.task);
    let _ = writeln!(
        out,
        "{} networks ranked on {} trace{} ({} runs{}); stop policy `{}`, {} timing{}. \
         Ranked by the scaled distance of §4.1.1 of *Idleness is not sloth*: on each trace, {} ({}) and {} ({}) \
         are scaled to [0, 1] with 0 the best network's value, and a network's distance from the origin is averaged over the traces.\n",
        networks,
        meta.traces.len(),
        if meta.traces.len() == 1 { "" } else { "s" },
        rows.len(),
        meta.shard
            .as_ref()
            .map(|s| format!(", shard {s}"))
            .unwrap_or_default(),
        meta.policy,
        meta.timing,
        meta.device
            .as_ref()
            .map(|d| format!(", device `{d}`"))
            .unwrap_or_default(),
        axes.x.measure,
        crate::axes::direction(axes.x.better),
        axes.y.measure,
        crate::axes::direction(axes.y.better),
    );
    let _ = writeln!(
        out,
        "## Recommendation\n\n{}\n",
        recommendation(meta, summaries, rows, axes)
    );
    let _ = writeln!(out, "## Ranking (top 10)\n");
    out.push_str(&markdown_table(summaries, rows, axes, 10));
    let _ = writeln!(
        out,
        "\nThe full ranking is in `ranking.csv`; every run with every measure in `results.csv` / `results.parquet`.\n"
    );
    let _ = writeln!(
        out,
        "## Traces\n\n| trace | source | requests | span (s) | idle (s) | idle periods |\n|---|---|---:|---:|---:|---:|"
    );
    for t in &meta.traces {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} | {:.1} | {} |",
            t.name, t.source, t.requests, t.span_s, t.idle_s, t.idle_periods
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
