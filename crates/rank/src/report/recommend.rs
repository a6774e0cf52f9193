//! What `report.md` recommends, in words: the network to use (`auto`
//! where it beats the grid), warnings where the pick loses, the
//! alternative lowest in energy, the spread across days, the families,
//! and where nothing in the grid gains anything.

use super::*;

/// The network the report recommends under `limits`: `auto` where it
/// keeps every limit and either scores better than the grid's best on the
/// ranking's own score or the grid's best breaks a limit, else the grid's
/// best ([`choose`]), if any.
pub fn pick(summaries: &[Summary], rows: &[Row], limits: &Limits) -> Option<usize> {
    let choice = choose(summaries, rows, limits);
    auto_instead(summaries, rows, limits, &choice)
        .map(|a| a.policy)
        .or(choice.network())
}

/// `auto`'s summary row (the reference a user can deploy: lull's default
/// network), if the run has one.
fn auto_row<'a>(summaries: &'a [Summary], rows: &[Row]) -> Option<&'a Summary> {
    summaries
        .iter()
        .find(|s| s.reference && spec_of(rows, s.policy).is_some_and(|r| r.spec == "auto"))
}

/// The rule by which the report recommends `auto` over the grid's best
/// `choice` (issue lab-25 B1): `auto` is the one reference a user can
/// deploy (the oracle and the best fixed timer in hindsight need the
/// future), so it is recommended when it keeps every limit on every trace
/// and either scores better than the grid's best on the ranking's own
/// score (a lower mean scaled distance, which no network of the grid then
/// reaches) or the grid's best breaks a limit. `None`: the grid's best.
fn auto_instead<'a>(
    summaries: &'a [Summary],
    rows: &[Row],
    limits: &Limits,
    choice: &Choice,
) -> Option<&'a Summary> {
    let auto = auto_row(summaries, rows)?;
    if !auto.mean.is_finite() || limit_ratio(rows, auto.policy, limits) > 1.0 {
        return None;
    }
    match *choice {
        Choice::Nothing => None,
        Choice::Closest(..) => Some(auto),
        Choice::Meets(p) => {
            let best = summaries.iter().find(|s| s.policy == p)?;
            (auto.mean < best.mean - 1e-9).then_some(auto)
        }
    }
}

/// The traces where network `policy` did worse than no task on the
/// benefit measure `x` (a negative value), worst first, with that value.
fn losing_traces(meta: &RunMeta, rows: &[Row], policy: usize, x: &str) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| r.network_index == policy)
        .filter_map(|r| Some((r.trace_index, r.measure(x)?)))
        .filter(|(_, v)| v.is_finite() && *v < -1e-9)
        .map(|(t, v)| {
            let name = meta
                .traces
                .iter()
                .find(|m| m.index == t)
                .map_or_else(|| format!("trace {}", t + 1), |m| m.name.clone());
            (name, v)
        })
        .collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

/// How close in mean scaled distance a network that never does worse
/// than no task must be to a pick that does for the warning to call it
/// close.
const CLOSE: f64 = 0.05;

/// A loud warning when the recommended network `pick` loses on the main
/// measure (issue lab-25 B1): its mean is negative, or it did worse than
/// no task on some trace (flag `worse`; the robust score counts such a
/// trace as achieving nothing, so the loss does not lower its rank). It
/// names the traces and by how much, and the best-ranked network of the
/// grid that keeps the limits and is worse nowhere, saying whether it is
/// close in score (within [`CLOSE`]). `None` for a benefit measure the
/// pick never loses on, or for a cost measure.
fn loss_warning(
    meta: &RunMeta,
    summaries: &[Summary],
    rows: &[Row],
    axes: &Axes,
    pick: &Summary,
) -> Option<String> {
    if !matches!(axes.x.form, Form::Share(_)) {
        return None;
    }
    let x = axes.x.measure;
    let mean = raw_mean(rows, pick.policy, x);
    let lost = losing_traces(meta, rows, pick.policy, x);
    let negative = mean.is_some_and(|m| m < -1e-9);
    if lost.is_empty() && !negative {
        return None;
    }
    let name = label_parts(pick, rows).0;
    let mut out = String::from("**Warning: ");
    if negative {
        let _ = write!(
            out,
            "`{name}` loses on average: its {} is {}",
            crate::axes::mean_label(x),
            num(mean)
        );
        out.push_str(if lost.is_empty() { "" } else { ", and it" });
    } else {
        let _ = write!(out, "`{name}`");
    }
    if !lost.is_empty() {
        let _ = write!(
            out,
            " does worse than no task on {} ({})",
            if lost.len() == 1 {
                "one trace".to_string()
            } else {
                format!("{} traces", lost.len())
            },
            lost.iter()
                .map(|(t, v)| format!("{t}: {} {}", num(Some(*v)), label(x)))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    out.push_str(".**");
    if !lost.is_empty() {
        out.push_str(
            " The ranking's score counts such a trace as achieving nothing, not as the loss it is.",
        );
    }
    let safe = summaries.iter().find(|s| {
        !s.reference
            && s.worse == 0
            && s.policy != pick.policy
            && limit_ratio(rows, s.policy, &meta.limits) <= 1.0
            && losing_traces(meta, rows, s.policy, x).is_empty()
    });
    match safe {
        Some(s) => {
            let gap = s.mean - pick.mean;
            let _ = write!(
                out,
                " The best-ranked network of the grid that does worse than no task nowhere is `{}` (rank {}, mean scaled distance {:.3}{}, averaging {} {}).",
                label_parts(s, rows).0,
                s.rank.unwrap_or(0),
                s.mean,
                if gap.abs() <= CLOSE {
                    format!(", close: {gap:.3} behind")
                } else {
                    format!(", {gap:.3} behind")
                },
                num(raw_mean(rows, s.policy, x)),
                label(x),
            );
        }
        None => {
            out.push_str(" Every other network of the grid does worse than no task somewhere too.")
        }
    }
    Some(out)
}

/// The lowest and the highest mean distance of the ranked networks of
/// start-detector family `family`.
fn family_range(summaries: &[Summary], rows: &[Row], family: &str) -> (f64, f64) {
    summaries
        .iter()
        .filter(|s| !s.reference && s.rank.is_some())
        .filter(|s| spec_of(rows, s.policy).is_some_and(|r| r.start_family == family))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
            (lo.min(s.mean), hi.max(s.mean))
        })
}

/// How far below no task the networks flagged `worse` fell, on the trace
/// where each fell furthest, in benefit measure `x`: the range across
/// them, and how many fell by a hundredth or less (a loss within
/// rounding of the measure, where the flag is strict).
fn worst_losses(worse: &[&&Summary], rows: &[Row], x: &str) -> String {
    let losses: Vec<f64> = worse
        .iter()
        .filter_map(|s| {
            rows.iter()
                .filter(|r| r.network_index == s.policy)
                .filter_map(|r| r.measure(x))
                .filter(|v| v.is_finite())
                .reduce(f64::min)
                .map(|v| -v)
        })
        .filter(|v| *v > 0.0)
        .collect();
    let (Some(lo), Some(hi)) = (
        losses.iter().copied().reduce(f64::min),
        losses.iter().copied().reduce(f64::max),
    ) else {
        return String::new();
    };
    let slight = losses.iter().filter(|v| **v <= 0.01).count();
    let mut text = if losses.len() == 1 {
        format!(", by {} of `{x}` on its worst trace", num(Some(hi)))
    } else {
        format!(
            ", by {} to {} of `{x}` on the worst trace of each",
            num(Some(lo)),
            num(Some(hi)),
        )
    };
    if slight > 0 && losses.len() > 1 {
        let _ = write!(text, "; {slight} of them by 0.01 or less");
    }
    text
}

/// Traces on which no ranked network achieves a positive value of a
/// benefit measure (nothing in the grid saves energy there).
pub fn nothing_gained(meta: &RunMeta, rows: &[Row], axes: &Axes) -> Vec<String> {
    if !matches!(axes.x.form, Form::Share(_)) {
        return Vec::new();
    }
    meta.traces
        .iter()
        .filter(|t| {
            let mine: Vec<&Row> = rows
                .iter()
                .filter(|r| r.trace_index == t.index && !r.reference)
                .collect();
            !mine.is_empty()
                && !mine
                    .iter()
                    .any(|r| r.measure(axes.x.measure).is_some_and(|v| v > 1e-9))
        })
        .map(|t| t.name.clone())
        .collect()
}

/// How a network fared across the days of each built-in workload, in a
/// run of several days (`lull rank --days N`, traces named `office@1`,
/// `office@2`, …): the range of its scaled distance and of its energy
/// above the best fixed timer's (`excess_vs_best_fixed`) over every day,
/// then per workload. One day can flatter or wrong any policy (on a NAS
/// drive a day holds only tens of idle periods longer than B), so the
/// recommendation says how much the days differ. `None` when no workload
/// was run on more than one day.
///
/// `whose` names the network in the sentence (`its`, or `` `auto`'s ``).
pub fn day_spread(meta: &RunMeta, summary: &Summary, rows: &[Row], whose: &str) -> Option<String> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for t in &meta.traces {
        let Some((base, day)) = t.name.rsplit_once('@') else {
            continue;
        };
        if day.parse::<u32>().is_err() {
            continue;
        }
        match groups.iter_mut().find(|(b, _)| *b == base) {
            Some((_, ix)) => ix.push(t.index),
            None => groups.push((base, vec![t.index])),
        }
    }
    groups.retain(|(_, ix)| ix.len() > 1);
    if groups.is_empty() {
        return None;
    }
    let range = |v: &[f64]| -> Option<(f64, f64)> {
        let lo = v
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .reduce(f64::min)?;
        let hi = v
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .reduce(f64::max)?;
        Some((lo, hi))
    };
    let mut all_d = Vec::new();
    let mut all_e = Vec::new();
    let mut parts = Vec::new();
    for (base, ix) in &groups {
        let d: Vec<f64> = summary
            .distances
            .iter()
            .filter(|(t, _)| ix.contains(t))
            .map(|(_, d)| *d)
            .collect();
        let e: Vec<f64> = rows
            .iter()
            .filter(|r| r.network_index == summary.policy && ix.contains(&r.trace_index))
            .filter_map(|r| r.measure(EXCESS))
            .collect();
        all_d.extend_from_slice(&d);
        all_e.extend_from_slice(&e);
        let mut part = String::from(*base);
        if let Some((lo, hi)) = range(&d) {
            let _ = write!(part, " {lo:.3}–{hi:.3}");
        }
        if let Some((lo, hi)) = range(&e) {
            let _ = write!(part, ", {lo:.2}–{hi:.2}×");
        }
        parts.push(part);
    }
    let days = groups.iter().map(|(_, ix)| ix.len()).max().unwrap_or(0);
    // Days only when they are 24 h long (`--duration 6h` runs are not).
    let length = meta
        .traces
        .iter()
        .find(|t| groups.iter().any(|(_, ix)| ix.contains(&t.index)))
        .and_then(|t| built_in_duration(&t.source));
    let days_word = match length {
        Some(d) if (d - 86_400.0).abs() > 0.5 => format!("runs of {}", duration_words(d)),
        _ => "days".to_string(),
    };
    // The range is over every day of every workload: say how many traces
    // that is (it read "across the 3 days" over 30 traces).
    let over = match groups.as_slice() {
        [(base, _)] => format!("Over the {days} {days_word} of {base}"),
        _ => format!(
            "Over the {days} {days_word} of each of the {} workloads ({} traces)",
            groups.len(),
            groups.iter().map(|(_, ix)| ix.len()).sum::<usize>()
        ),
    };
    let mut out = format!("{over}, {whose} scaled distance ranged");
    if let Some((lo, hi)) = range(&all_d) {
        let _ = write!(out, " from {lo:.3} to {hi:.3}");
    }
    if let Some((lo, hi)) = range(&all_e) {
        let _ = write!(
            out,
            ", and its energy above the best fixed timer's from {lo:.2}× to {hi:.2}×"
        );
    }
    let _ = write!(
        out,
        " (per workload{}: {}).",
        if all_e.is_empty() {
            ""
        } else {
            ", distance then excess"
        },
        parts.join("; ")
    );
    Some(out)
}

/// The length (s) of a built-in workload's trace from its source text
/// (`built-in workload office, 21600 s, seed 5, …`); `None` for a file.
fn built_in_duration(source: &str) -> Option<f64> {
    let rest = source.strip_prefix("built-in workload ")?;
    rest.split(", ")
        .nth(1)?
        .strip_suffix(" s")?
        .parse::<f64>()
        .ok()
}

/// A length in words: `6 h`, `90 min`, `45 s`.
fn duration_words(s: f64) -> String {
    if s >= 3600.0 && (s / 3600.0).fract() == 0.0 {
        format!("{} h", s / 3600.0)
    } else if s >= 60.0 && (s / 60.0).fract() == 0.0 {
        format!("{} min", s / 60.0)
    } else {
        format!("{} s", short(s))
    }
}

/// Where the recommended network is not the grid's lowest in energy: the
/// network that is (least mean `excess_vs_best_fixed`, ties to the better
/// rank), and what it costs on the other measure. The ranking weighs both
/// measures alike (the paper's method), so a reader who cares for energy
/// alone should not have to find this in the table.
fn energy_first(
    ranked: &[&Summary],
    rows: &[Row],
    best: &Summary,
    best_excess: f64,
    axes: &Axes,
) -> Option<String> {
    let (low, e) = ranked
        .iter()
        .filter_map(|s| {
            Some((
                *s,
                raw_mean(rows, s.policy, EXCESS).filter(|e| e.is_finite())?,
            ))
        })
        .min_by(|(a, x), (b, y)| {
            x.total_cmp(y).then(
                a.rank
                    .unwrap_or(usize::MAX)
                    .cmp(&b.rank.unwrap_or(usize::MAX)),
            )
        })?;
    if low.policy == best.policy || e >= best_excess {
        return None;
    }
    let y = axes.y.measure;
    Some(format!(
        "For energy alone, the grid's lowest is `{}` (rank {}, {e:.2}×), with {} {} against {}.",
        label_parts(low, rows).0,
        low.rank.unwrap_or(0),
        num(raw_mean(rows, low.policy, y)),
        label(y),
        num(raw_mean(rows, best.policy, y)),
    ))
}

/// A recommendation in plain words, one statement a line (`report.md`
/// lists them as bullets under the answer).
pub fn recommendation(meta: &RunMeta, summaries: &[Summary], rows: &[Row], axes: &Axes) -> String {
    let ranked: Vec<&Summary> = summaries.iter().filter(|s| !s.reference).collect();
    let limits = &meta.limits;
    let choice = choose(summaries, rows, limits);
    let Some(best) = choice
        .network()
        .and_then(|p| ranked.iter().find(|s| s.policy == p).copied())
    else {
        return "No network finished, so there is nothing to recommend.".into();
    };
    let spec = |s: &Summary| label_parts(s, rows).0;
    let traces = meta.ranked_traces();
    let traces_text = meta.traces_text();
    let mut out = String::new();
    let auto_pick = auto_instead(summaries, rows, limits, &choice);
    // How `auto` compares with the grid's best on each averaged column:
    // `(measure, auto's mean, the grid's best's, auto no worse)`.
    let columns = |auto: &Summary| -> Vec<(&str, f64, f64, bool)> {
        [axes.x, axes.y]
            .iter()
            .filter_map(|a| {
                let (av, bv) = (
                    raw_mean(rows, auto.policy, a.measure)?,
                    raw_mean(rows, best.policy, a.measure)?,
                );
                let ok = match a.better {
                    crate::score::Better::Higher => av >= bv,
                    crate::score::Better::Lower => av <= bv,
                };
                Some((a.measure, av, bv, ok))
            })
            .collect()
    };
    let compare = |cols: &[(&str, f64, f64, bool)], which: bool| {
        cols.iter()
            .filter(|c| c.3 == which)
            .map(|(m, a, b, _)| format!("{} against {} {}", num(Some(*a)), num(Some(*b)), label(m)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(auto) = auto_pick {
        let cols = columns(auto);
        let _ = write!(
            out,
            "For `{}` on {traces_text}, use **`auto`** (lull's default network){}: it beats every network of the grid here on the ranking's score \
             (mean scaled distance {:.3}, against {:.3} for the grid's best, `{}`)",
            meta.task,
            if limits.is_empty() {
                ""
            } else {
                ", which keeps the limits on every trace"
            },
            auto.mean,
            best.mean,
            spec(best),
        );
        if cols.iter().all(|c| c.3) {
            let _ = write!(
                out,
                " and is no worse on either averaged column ({})",
                compare(&cols, true)
            );
        } else {
            let _ = write!(out, ", though it averages {}", compare(&cols, false));
        }
        out.push_str(
            ".\nThe rule: `auto` is recommended when it keeps the limits and scores better than the grid's best, or when the grid's best breaks a limit. The oracle and the best fixed timer in hindsight need the future: they are never recommended.",
        );
        if let Some(w) = loss_warning(meta, summaries, rows, axes, auto) {
            let _ = write!(out, "\n{w}");
        }
        out.push('\n');
    }
    let limit_text = limits
        .list()
        .iter()
        .map(|(f, _, v)| {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("`{f} {}`", *v as i64)
            } else {
                format!("`{f} {v}`")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    match choice {
        Choice::Closest(_, ratio) => {
            let _ = write!(
                out,
                "**No network of the grid keeps the limits ({limit_text}) on every trace.** The one that comes closest is `{}` \
                 (its worst measure is {:.2}× its limit); ",
                spec(best),
                ratio
            );
        }
        _ if !limits.is_empty() => {
            let skipped = ranked
                .iter()
                .take_while(|s| s.policy != best.policy)
                .count();
            let _ = write!(
                out,
                "Under the limits ({limit_text}), kept on every trace{}, ",
                if skipped > 0 {
                    format!(
                        " ({skipped} better-ranked network{} break{} them)",
                        if skipped == 1 { "" } else { "s" },
                        if skipped == 1 { "s" } else { "" }
                    )
                } else {
                    String::new()
                }
            );
        }
        _ => {}
    }
    let lead = if auto_pick.is_some() && out.ends_with('\n') {
        "Within the grid, for"
    } else if out.is_empty() {
        "For"
    } else if auto_pick.is_some() {
        "within the grid, for"
    } else {
        "for"
    };
    let mut tail = label_parts(best, rows).1;
    if limit_ratio(rows, best.policy, limits) > 1.0 {
        tail.push_str(" if the limits can bend");
    }
    // Where nothing saves anything on any trace, that is the answer; the
    // first-ranked network only spends least doing nothing useful.
    let none = nothing_gained(meta, rows, axes);
    let nothing_anywhere = traces > 0 && none.len() == traces;
    // Rank 1 came closest to the ideal; a pick the limits moved down the
    // ranking did not, and says where it ranks.
    let closeness = match best.rank {
        Some(r) if r > 1 => format!("ranks {r} by closeness to the ideal of both"),
        _ => "came closest to the ideal of both".to_string(),
    };
    let use_text = if nothing_anywhere {
        format!(
            "**leave the device alone: nothing in the grid achieves any {} there**. \
             Were one to run, `{}`{}: it {closeness}",
            label(axes.x.measure),
            spec(best),
            tail
        )
    } else if auto_pick.is_some() {
        format!(
            "the best network, the alternative to `auto`, is **`{}`**{}. It {closeness}",
            spec(best),
            tail
        )
    } else {
        format!("use **`{}`**{}. It {closeness}", spec(best), tail)
    };
    // With one trace there is no spread to speak of.
    let spread = if traces > 1 {
        format!(
            ", standard deviation {:.3} across traces",
            best.variance.sqrt()
        )
    } else {
        String::new()
    };
    let _ = write!(
        out,
        "{} `{}` on {traces_text}, {use_text} {} and {} \
         (mean scaled distance {:.3}{spread}), averaging {} {} and {} {}.",
        lead,
        meta.task,
        label(axes.x.measure),
        label(axes.y.measure),
        best.mean,
        num(raw_mean(rows, best.policy, axes.x.measure)),
        label(axes.x.measure),
        num(raw_mean(rows, best.policy, axes.y.measure)),
        label(axes.y.measure),
    );
    if let Some(w) = loss_warning(meta, summaries, rows, axes, best) {
        let _ = write!(out, "\n{w}");
    }
    // `auto` better on both averaged columns, though not on the score.
    if auto_pick.is_none()
        && let Some(auto) = auto_row(summaries, rows)
    {
        let cols = columns(auto);
        if cols.len() == 2 && cols.iter().all(|c| c.3) {
            let _ = write!(
                out,
                "\n`auto` (lull's default network) is no worse on either averaged column ({}), though it scores worse (mean scaled distance {:.3}): the score weighs every trace alike, the averages do not.",
                compare(&cols, true),
                auto.mean
            );
        }
    }
    if !limits.is_empty()
        && matches!(axes.x.form, Form::Share(_))
        && raw_mean(rows, best.policy, axes.x.measure).is_some_and(|v| v <= 1e-9)
    {
        let _ = write!(
            out,
            "\n**No network that keeps these limits achieves any {}**: under them, leave the device alone.",
            axes.x.measure.replace('_', " ")
        );
    }
    for u in unchecked_limits(rows, limits) {
        let _ = write!(
            out,
            "\n`{u}` does not apply to task `{}`: it reports no such measure.",
            meta.task
        );
    }
    if !none.is_empty() && !nothing_anywhere {
        let _ = write!(
            out,
            "\n**Nothing in the grid achieves any {} on {}** (some traces): there, the best choice is to leave the device alone.",
            axes.x.measure.replace('_', " "),
            none.join(", "),
        );
    }
    // `auto`'s row, which the excess and the gain sentences compare with.
    let auto = summaries
        .iter()
        .find(|s| s.reference && spec_of(rows, s.policy).is_some_and(|r| r.spec == "auto"));
    let name = spec(best);
    // With nothing to save, every ratio to a reference is 0/0.
    let ratio = |m: &str| {
        (!nothing_anywhere)
            .then(|| raw_mean(rows, best.policy, m))
            .flatten()
    };
    let excess = ratio(EXCESS);
    if let Some(e) = excess {
        let _ = write!(
            out,
            "\nIts energy above the oracle's is {} the best fixed timer's in hindsight (`excess_vs_best_fixed`, pooled over the traces; below 1 beats that timer).",
            if e.is_finite() {
                format!("{e:.2}×")
            } else {
                "unboundedly above".into()
            }
        );
        if let Some(auto) = auto
            && let Some(a) = raw_mean(rows, auto.policy, EXCESS)
        {
            let _ = write!(out, " `auto`'s is {a:.2}×.");
        }
    }
    if let Some(cr) = ratio("competitive_ratio") {
        let _ = write!(
            out,
            "\n`{name}` spends {cr:.3}× the offline oracle's energy (competitive ratio, mean over the traces)."
        );
    }
    if let Some(g) = ratio(GAIN) {
        let _ = write!(
            out,
            "\nOf what a clairvoyant timer chosen per 10-minute window adds over the best fixed timer, `{name}` captures {g:.2} (`gain_vs_clairvoyant`, pooled: 1 all of it, 0 nothing, below 0 worse than the best fixed timer)."
        );
        if let Some(auto) = auto
            && let Some(a) = raw_mean(rows, auto.policy, GAIN)
        {
            let _ = write!(out, " `auto` captures {a:.2}.");
        }
        if let Some(note) = clairvoyant_margin(rows, best.policy) {
            let _ = write!(out, "\n{note}");
        }
    } else if !nothing_anywhere && clairvoyant_margin(rows, best.policy).is_some() {
        // Spindown rows, and the clairvoyant adds nothing to divide by.
        let _ = write!(
            out,
            "\nOn these traces the clairvoyant timer chosen per 10-minute window adds nothing over the best fixed timer (within 0.01 % of its energy): `gain_vs_clairvoyant` is 1 for a network as good as the best fixed timer (all of nothing) and not a number, shown as `-`, for one that is worse or better (a share of nothing; `excess_vs_best_fixed` tells them apart)."
        );
    }
    if let Some(e) = excess
        && let Some(energy) = energy_first(&ranked, rows, best, e, axes)
    {
        let _ = write!(out, "\n{energy}");
    }
    if let Some(spread) = day_spread(meta, best, rows, &format!("`{name}`'s")) {
        let _ = write!(out, "\n{spread}");
    }
    let worse: Vec<&&Summary> = ranked.iter().filter(|s| s.worse > 0).collect();
    if !worse.is_empty() {
        let _ = write!(
            out,
            "\n{} network{} did worse than no task on at least one trace (flagged `worse`){}. On such a trace {} scored as saving nothing: {} no other network's scale, and {} {} still weigh in.",
            worse.len(),
            if worse.len() == 1 { "" } else { "s" },
            worst_losses(&worse, rows, axes.x.measure),
            if worse.len() == 1 {
                "it is"
            } else {
                "they are"
            },
            if worse.len() == 1 {
                "it stretches"
            } else {
                "they stretch"
            },
            if worse.len() == 1 { "its" } else { "their" },
            label(axes.y.measure),
        );
    }
    let frontier = ranked.iter().filter(|s| s.pareto).count();
    let _ = write!(
        out,
        "\n{frontier} network{} on the Pareto frontier of the two measures across traces (flag `P`).",
        if frontier == 1 { " is" } else { "s are" }
    );
    // The steadiest of the top ten that achieves something and keeps
    // the limits: a network that never acts varies least of all.
    let top: Vec<&&Summary> = ranked
        .iter()
        .take(10)
        .filter(|s| {
            rows.iter()
                .filter(|r| r.network_index == s.policy)
                .any(|r| r.measure(axes.x.measure).is_some_and(|v| v > 1e-9))
                && limit_ratio(rows, s.policy, limits) <= 1.0
        })
        .collect();
    if let Some(steady) = top.iter().min_by(|a, b| {
        a.variance
            .total_cmp(&b.variance)
            .then(a.policy.cmp(&b.policy))
    }) && steady.policy != best.policy
        && traces > 1
    {
        let _ = write!(
            out,
            "\nIf the same behaviour on every workload matters more than the last bit of performance, \
                 `{}` (rank {}) varies least among the top ten (sd {:.3}).",
            spec(steady),
            steady.rank.unwrap_or(0),
            steady.variance.sqrt()
        );
    }
    let fams = family_table(summaries, rows, true);
    if let Some(f) = fams.first() {
        let _ = write!(
            out,
            "\nBy start-detector family, **`{}`** has the best single network (rank {}; its {} network{} average a distance of {:.3})",
            f.0,
            f.2,
            f.1,
            if f.1 == 1 { "" } else { "s" },
            f.3
        );
        // "Ahead of" only where it is ahead on the average too.
        if let Some(g) = fams.get(1) {
            if g.3 < f.3 {
                let _ = write!(
                    out,
                    "; `{}` has the next best (best rank {}) and the better average ({:.3})",
                    g.0, g.2, g.3
                );
            } else {
                let _ = write!(
                    out,
                    ", ahead of `{}` (best rank {}, average {:.3})",
                    g.0, g.2, g.3
                );
            }
        }
        if let Some(w) = fams.last().filter(|_| fams.len() > 2) {
            let _ = write!(
                out,
                "; `{}`'s best network ranks lowest (best rank {}, average {:.3})",
                w.0, w.2, w.3
            );
        }
        out.push('.');
        // The family that is safest to pick blindly: lowest average.
        if let Some(safe) = fams
            .iter()
            .filter(|f| f.1 > 1)
            .min_by(|a, b| a.3.total_cmp(&b.3).then(a.2.cmp(&b.2)))
            && safe.0 != f.0
        {
            let (lo, hi) = family_range(summaries, rows, &safe.0);
            let _ = write!(
                out,
                "\nPicked with any of its settings, **`{}`** does best on average: its {} networks average {:.3} (from {lo:.3} to {hi:.3}).",
                safe.0, safe.1, safe.3
            );
        }
    }
    let durs = family_table(summaries, rows, false);
    if let Some(d) = durs.first() {
        let _ = write!(
            out,
            "\nAmong duration predictors, **`{}`** gives the best single network (best rank {}; its {} network{} average {:.3})",
            d.0,
            d.2,
            d.1,
            if d.1 == 1 { "" } else { "s" },
            d.3
        );
        // The best network's family need not be the best on average.
        match durs
            .iter()
            .filter(|e| e.1 > 1)
            .min_by(|a, b| a.3.total_cmp(&b.3).then(a.2.cmp(&b.2)))
        {
            Some(a) if a.0 != d.0 && a.3 < d.3 => {
                let _ = write!(
                    out,
                    "; **`{}`** does best on average ({} networks, average {:.3}, best rank {}).",
                    a.0, a.1, a.3, a.2
                );
            }
            _ => out.push('.'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::score_rows;
    use crate::output::TraceMeta;

    /// Writeback's oracle stops its flushes at every arrival, which writes
    /// into the cache do not require: on writes alone (a trial's
    /// `liuzel01_mynotes_sda`, no read, so no latency to improve)
    /// `timer(0s)` queued 161 bytes against its 367 and was as good on
    /// the other measure. The report says the oracle is a yardstick
    /// there, not a bound. A network that trades one measure for the
    /// other beats nothing, and spin-down's energy bound is never beaten.
    #[test]
    fn a_network_as_good_as_the_oracle_on_both_measures_and_better_on_one_is_named() {
        let wb = |n: usize, spec: &str, latency: f64, queue: f64| Row {
            trace_index: 0,
            trace: "sda".into(),
            network_index: n,
            spec: spec.into(),
            reference: spec.starts_with("oracle"),
            start_family: "timer".into(),
            duration_family: "no-duration".into(),
            skeptic: None,
            params: BTreeMap::new(),
            measures: vec![
                ("latency_improvement_pct".into(), latency),
                ("mean_queue_bytes".into(), queue),
            ],
        };
        let axes = crate::axes::axes("writeback");
        let rows = [
            wb(0, "oracle()", 0.0, 367.3),
            wb(1, "timer(t=0s)", 0.0, 161.5),
            wb(2, "timer(t=B)", 0.0, 400.0),
        ];
        let text = oracle_beaten(&rows, &axes).expect("timer(t=0s) beats the oracle");
        assert!(
            text.contains("1 network does at least as well as it on `latency_improvement_pct` and `mean_queue_bytes` and better on one, on 1 trace."),
            "{text}"
        );
        // Less queued for less latency improvement: a trade, not a win.
        let rows = [
            wb(0, "oracle()", 5.0, 367.3),
            wb(1, "timer(t=0s)", 4.0, 161.5),
        ];
        assert_eq!(oracle_beaten(&rows, &axes), None);
        // Spin-down: a timer that never fires delays nothing, and saves
        // nothing, against the oracle's savings.
        let rows = [
            row(0, 0, "oracle()", 60.0, 30.0),
            row(0, 1, "timer(t=16B)", 0.0, 0.0),
        ];
        assert_eq!(oracle_beaten(&rows, &crate::axes::axes("spindown")), None);
    }

    /// A spindown row: network `n` (`spec`, a reference when `reference`)
    /// on trace `t`, saving `saved` % of the energy (the oracle `oracle`
    /// %) with `delayed` delayed requests per hour and `spinups`.
    fn row(t: usize, n: usize, spec: &str, saved: f64, delayed: f64) -> Row {
        let family = spec.split('(').next().unwrap_or(spec).to_string();
        Row {
            trace_index: t,
            trace: format!("w{t}"),
            network_index: n,
            spec: spec.into(),
            reference: matches!(spec, "auto" | "oracle()"),
            start_family: family,
            duration_family: "no-duration".into(),
            skeptic: None,
            params: BTreeMap::new(),
            measures: vec![
                ("energy_saved_pct".into(), saved),
                ("oracle_saved_pct".into(), 60.0),
                ("delayed_ops_per_hour".into(), delayed),
                ("spinups".into(), if saved == 0.0 { 0.0 } else { 5.0 }),
            ],
        }
    }

    fn meta(traces: usize) -> RunMeta {
        RunMeta {
            version: "0".into(),
            task: "spindown".into(),
            policy: "p".into(),
            timing: "model".into(),
            device: None,
            grid: "test".into(),
            grid_fingerprint: String::new(),
            networks: 4,
            traces: (0..traces)
                .map(|i| TraceMeta {
                    index: i,
                    name: format!("w{i}"),
                    source: format!("w{i}.csv"),
                    requests: 10,
                    span_s: 100.0,
                    idle_s: 90.0,
                    idle_periods: 9,
                    mean_rate: 0.1,
                    left_out: None,
                })
                .collect(),
            shard: None,
            runs: 0,
            notes: Vec::new(),
            breakeven_s: None,
            best_fixed: false,
            score: crate::score::Mode::Robust,
            limits: Limits::default(),
            validation: None,
        }
    }

    /// The recommendation and the pick of these rows.
    fn recommend(rows: &[Row], meta: &RunMeta) -> (String, Option<String>) {
        let axes = crate::axes::axes("spindown");
        let (_, summaries) = score_rows(rows, &axes, crate::score::Mode::Robust);
        let text = recommendation(meta, &summaries, rows, &axes);
        let pick = pick(&summaries, rows, &meta.limits)
            .and_then(|p| spec_of(rows, p))
            .map(|r| r.spec.clone());
        (text, pick)
    }

    /// lab-25 B1: a grid whose best network saves less and delays more
    /// than `auto` on every trace; `auto` is recommended, the grid's best
    /// named as the alternative.
    #[test]
    fn auto_that_beats_the_grid_is_recommended() {
        let mut rows = Vec::new();
        for t in 0..2 {
            rows.push(row(t, 0, "share()", 20.0, 50.0));
            rows.push(row(t, 1, "timer(t=10s)", 10.0, 60.0));
            rows.push(row(t, 2, "auto", 30.0, 40.0));
            rows.push(row(t, 3, "oracle()", 60.0, 1.0));
        }
        let (text, pick) = recommend(&rows, &meta(2));
        assert_eq!(pick.as_deref(), Some("auto"));
        assert!(
            text.starts_with("For `spindown` on 2 traces, use **`auto`**"),
            "{text}"
        );
        assert!(
            text.contains("no worse on either averaged column"),
            "{text}"
        );
        assert!(
            text.contains("Within the grid, for `spindown` on 2 traces, the best network, the alternative to `auto`, is **`share()`**"),
            "{text}"
        );
        // Over a limit `auto` breaks, the grid's best is recommended.
        let mut m = meta(2);
        m.limits.max_delayed_per_hour = Some(45.0);
        for r in rows.iter_mut().filter(|r| r.network_index == 0) {
            r.measures[2].1 = 44.0;
        }
        for r in rows.iter_mut().filter(|r| r.network_index == 2) {
            r.measures[2].1 = 46.0;
        }
        let (text, pick) = recommend(&rows, &m);
        assert_eq!(pick.as_deref(), Some("share()"), "{text}");
        assert!(!text.contains("use **`auto`**"), "{text}");
    }

    /// lab-25 B1: a pick that loses energy on a trace (scored there as
    /// saving nothing) is warned about, with the trace and the loss, and
    /// the best network that loses nowhere is named.
    #[test]
    fn a_pick_that_loses_energy_is_warned_about() {
        let mut rows = Vec::new();
        for (t, saved) in [(0, 55.0), (1, 50.0), (2, -82.9)] {
            rows.push(row(t, 0, "timer(t=100ms)", saved, 5.0));
            rows.push(row(t, 1, "timer(t=10s)", 8.0, 5.0));
            rows.push(row(t, 2, "auto", 1.0, 400.0));
            rows.push(row(t, 3, "oracle()", 60.0, 1.0));
        }
        let (text, pick) = recommend(&rows, &meta(3));
        assert_eq!(pick.as_deref(), Some("timer(t=100ms)"), "{text}");
        assert!(text.contains("**Warning: `timer(t=100ms)`"), "{text}");
        assert!(
            text.contains("does worse than no task on one trace (w2: -82.900 energy saved (%))"),
            "{text}"
        );
        assert!(
            text.contains("does worse than no task nowhere is `timer(t=10s)`"),
            "{text}"
        );
        // Negative on average: said so.
        for r in rows
            .iter_mut()
            .filter(|r| r.network_index == 0 && r.trace_index == 2)
        {
            r.measures[0].1 = -200.0;
        }
        let (text, _) = recommend(&rows, &meta(3));
        assert!(
            text.contains("loses on average: its mean energy saved (%) is -31.667"),
            "{text}"
        );
    }

    /// lab-25 R9: one trace has no spread; B6: a left-out trace is not
    /// counted.
    #[test]
    fn one_trace_has_no_spread_and_left_out_traces_do_not_count() {
        let rows = vec![
            row(0, 0, "share()", 30.0, 5.0),
            row(0, 1, "timer(t=10s)", 10.0, 60.0),
            row(0, 3, "oracle()", 60.0, 1.0),
        ];
        let mut m = meta(2);
        m.traces[1].left_out = Some("saturated".into());
        let (text, _) = recommend(&rows, &m);
        assert!(
            text.starts_with("For `spindown` on 1 trace (1 left out: saturated), use"),
            "{text}"
        );
        assert!(!text.contains("standard deviation"), "{text}");
        let axes = crate::axes::axes("spindown");
        let (_, summaries) = score_rows(&rows, &axes, crate::score::Mode::Robust);
        let md = markdown(&m, &summaries, &rows, &axes, &[]);
        assert!(md.contains("on 1 trace (1 left out: saturated) ("), "{md}");
        assert!(md.contains("| w1 (left out: saturated) |"), "{md}");
        let table = markdown_table(&summaries, &rows, &axes, 10, &m.limits);
        let first = table.lines().nth(2).unwrap();
        assert!(first.contains("| - |"), "no sd on one trace: {first}");
    }

    /// lab-25 R9: a measure named with its unit says it once, and a mean
    /// of a mean is not "mean mean".
    #[test]
    fn column_names_say_things_once() {
        assert_eq!(label("mean_added_delay_ms"), "mean added delay (ms)");
        assert_eq!(
            crate::axes::mean_label("mean_queue_bytes"),
            "mean queue (bytes)"
        );
        assert_eq!(
            crate::axes::mean_label("energy_saved_pct"),
            "mean energy saved (%)"
        );
    }

    /// lab-25 R9: `--duration 6h --days 2` runs are not days.
    #[test]
    fn runs_shorter_than_a_day_are_not_days() {
        assert_eq!(
            built_in_duration("built-in workload office, 21600 s, seed 5 (day 2)"),
            Some(21600.0)
        );
        assert_eq!(duration_words(21600.0), "6 h");
        let mut m = meta(2);
        for (i, t) in m.traces.iter_mut().enumerate() {
            t.name = format!("office@{}", i + 1);
            t.source = format!("built-in workload office, 21600 s, seed 5 (day {})", i + 1);
        }
        let rows: Vec<Row> = (0..2)
            .flat_map(|t| {
                [
                    row(t, 0, "share()", 30.0, 5.0),
                    row(t, 3, "oracle()", 60.0, 1.0),
                ]
            })
            .collect();
        let axes = crate::axes::axes("spindown");
        let (_, summaries) = score_rows(&rows, &axes, crate::score::Mode::Robust);
        let s = summaries.iter().find(|s| !s.reference).unwrap();
        let text = day_spread(&m, s, &rows, "its").unwrap();
        assert!(
            text.starts_with("Over the 2 runs of 6 h of office"),
            "{text}"
        );
    }
    /// lab-25 R9: the family that is second by best rank but first on
    /// average is not said to be behind.
    #[test]
    fn the_family_sentence_names_the_better_average() {
        let mut rows = Vec::new();
        for t in 0..2 {
            rows.push(row(t, 0, "timer(t=1s)", 40.0, 5.0));
            rows.push(row(t, 1, "timer(t=2s)", 1.0, 500.0));
            rows.push(row(t, 2, "periodic()", 30.0, 6.0));
            rows.push(row(t, 3, "oracle()", 60.0, 1.0));
        }
        let (text, _) = recommend(&rows, &meta(2));
        assert!(
            text.contains("**`timer`** has the best single network (rank 1;"),
            "{text}"
        );
        assert!(
            text.contains("; `periodic` has the next best (best rank 2) and the better average"),
            "{text}"
        );
        assert!(!text.contains("ahead of"), "{text}");
    }

    /// lab-25 R10: a best fixed timeout that never fires is "never".
    #[test]
    fn a_best_fixed_timeout_that_never_fires_reads_never() {
        let mut rows = vec![
            row(0, 0, "timer(t=1s)", 0.0, 0.0),
            row(0, 3, "oracle()", 0.0, 0.0),
        ];
        let mut bf = row(0, 4, crate::grid::BEST_FIXED, 0.0, 0.0);
        bf.reference = true;
        bf.params.insert("start.t".into(), "4.997s".into());
        rows.push(bf);
        let mut m = meta(1);
        m.best_fixed = true;
        let axes = crate::axes::axes("spindown");
        let (_, summaries) = score_rows(&rows, &axes, crate::score::Mode::Robust);
        let md = markdown(&m, &summaries, &rows, &axes, &[]);
        assert!(md.contains("| never (no timeout saves) |"), "{md}");
        assert!(!md.contains("timer(t=4.997s)"), "{md}");
    }
    /// With `auto` recommended under limits, the grid's choice under them
    /// (the alternative the text names) is still listed below the top.
    #[test]
    fn the_alternative_is_listed_when_auto_is_picked_under_limits() {
        let mut rows = Vec::new();
        for t in 0..2 {
            rows.push(row(t, 0, "timer(t=10s)", 45.0, 60.0));
            rows.push(row(t, 1, "share()", 20.0, 50.0));
            rows.push(row(t, 2, "auto", 45.0, 40.0));
            rows.push(row(t, 3, "oracle()", 60.0, 1.0));
        }
        let mut m = meta(2);
        m.limits.max_delayed_per_hour = Some(55.0);
        let (text, pick) = recommend(&rows, &m);
        assert_eq!(pick.as_deref(), Some("auto"), "{text}");
        let axes = crate::axes::axes("spindown");
        let (_, summaries) = score_rows(&rows, &axes, crate::score::Mode::Robust);
        let table = markdown_table(&summaries, &rows, &axes, 1, &m.limits);
        assert!(table.contains("`timer(t=10s)`"), "{table}");
        assert!(table.contains("`share()`"), "{table}");
        let auto = table.lines().find(|l| l.contains("`auto`")).unwrap();
        assert!(auto.ends_with("| pick |"), "{auto}");
    }
}
