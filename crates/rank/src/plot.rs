//! Plots, each written as SVG and PNG (plotters, with an embedded DejaVu
//! Sans font so no system font is needed):
//!
//! - `tradeoff-TRACE`: the task's two measures, one point per network,
//!   coloured by start-detector family, the oracle as a black cross
//!   (Figures 9, 11, 14).
//! - `range-start` and `range-duration`: per family, the networks' mean
//!   scaled distance across traces: a thin line from best to worst, a bar of
//!   mean ± sd and a dot at the mean (Figures 12, 13, 15, 16).
//! - `event-window`: the best mean distance for each window size ×
//!   rate threshold of the event-window detector (Figure 19).
//! - `idle-cdf-TRACE`: cumulative fraction of idle periods and of idle time
//!   against period length (Figure 2).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::RankError;
use crate::atomic;
use crate::axes::{Axes, direction, label};
use crate::score::{Scored, Summary};
use crate::sweep::{IdleCdf, Row};

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

fn register_font() {
    REGISTER.call_once(|| {
        // The embedded font is valid; a failure would only degrade text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

pub(crate) const SANS: &str = "sans-serif";

/// Distinct colours (Tableau 10 and two extra), cycled.
const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 128),
    RGBColor(128, 128, 0),
];

/// Everything the plots are drawn from.
#[derive(Debug)]
pub struct PlotInput<'a> {
    /// The task.
    pub task: &'a str,
    /// Its two measures.
    pub axes: Axes,
    /// Every run, sorted by (trace, network).
    pub rows: &'a [Row],
    /// Their within-trace scores.
    pub scored: &'a [Scored],
    /// Per-network summaries.
    pub summaries: &'a [Summary],
    /// Trace names by index.
    pub traces: &'a [String],
    /// Idle-period CDFs.
    pub cdfs: &'a [IdleCdf],
    /// The network the report recommends (its index), ringed on the
    /// trade-off plots.
    pub pick: Option<usize>,
    /// The device's break-even time B, seconds, marked on the idle CDFs
    /// (the periods longer than it are the ones worth a spin-down).
    pub breakeven_s: Option<f64>,
}

/// A drawn figure: its title and file stem (`.svg` and `.png` beside it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    /// What it shows.
    pub title: String,
    /// File name without extension, relative to the plot directory.
    pub stem: String,
}

pub(crate) type DrawResult = Result<(), String>;

/// A figure that draws itself on any plotters backend.
pub(crate) trait Draw {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult;
}

pub(crate) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Renders `fig` to `dir/stem.svg` and `dir/stem.png`, atomically.
pub(crate) fn save<F: Draw>(
    dir: &Path,
    stem: &str,
    size: (u32, u32),
    fig: &F,
) -> Result<(), RankError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        fig.draw(&root)
            .and_then(|()| root.present().map_err(err))
            .map_err(|e| RankError::Plot(format!("{stem}.svg: {e}")))?;
    }
    atomic::write_bytes(&dir.join(format!("{stem}.svg")), svg.as_bytes())?;
    atomic::write_with(&dir.join(format!("{stem}.png")), |tmp| {
        let root = BitMapBackend::new(tmp, size).into_drawing_area();
        fig.draw(&root)
            .and_then(|()| root.present().map_err(err))
            .map_err(|e| RankError::Plot(format!("{stem}.png: {e}")))
    })
}

/// A file-name-safe form of a trace name.
pub fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// How much of a measure counts as noise when the drawn frontier is
/// chosen: a thousandth of the spread of the values on the x axis, and a
/// thousandth of the value itself on the y axis (often logarithmic).
const FRONTIER_TOLERANCE: f64 = 1e-3;

/// Which points the drawn Pareto frontier goes through: those no other
/// point dominates within a tolerance ([`FRONTIER_TOLERANCE`]), that is,
/// no other point is as good on both measures up to noise and better on
/// one by more than noise. A strict frontier ran a vertical line from 200
/// B to 1.2·10⁶ B of queue through points 10⁻⁶ apart in latency (lab-25
/// R4): each was "best" on latency by noise.
fn pareto_within(
    pts: &[(f64, f64)],
    bx: crate::score::Better,
    by: crate::score::Better,
) -> Vec<bool> {
    use crate::score::Better;
    let finite: Vec<f64> = pts.iter().map(|p| p.0).filter(|v| v.is_finite()).collect();
    let span = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - finite.iter().copied().fold(f64::INFINITY, f64::min);
    let tx = if span.is_finite() {
        FRONTIER_TOLERANCE * span
    } else {
        0.0
    };
    // `a` better than `b` by more than `t` on a measure (`Some(true)`), as
    // good up to `t` (`Some(false)`), or worse (`None`).
    let cmp = |a: f64, b: f64, better: Better, t: f64| -> Option<bool> {
        let gain = match better {
            Better::Higher => a - b,
            Better::Lower => b - a,
        };
        if gain > t {
            Some(true)
        } else if gain >= -t {
            Some(false)
        } else {
            None
        }
    };
    let strict = crate::score::pareto(pts, bx, by);
    pts.iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            strict[i]
                && !pts.iter().enumerate().any(|(j, &(ox, oy))| {
                    if j == i || !(ox.is_finite() && oy.is_finite()) {
                        return false;
                    }
                    let ty = FRONTIER_TOLERANCE * y.abs().max(oy.abs());
                    match (cmp(ox, x, bx, tx), cmp(oy, y, by, ty)) {
                        (Some(a), Some(b)) => a || b,
                        _ => false,
                    }
                })
        })
        .collect()
}

/// Draws every plot into `dir`; returns the figures drawn.
pub fn draw_all(dir: &Path, input: &PlotInput<'_>) -> Result<Vec<Figure>, RankError> {
    std::fs::create_dir_all(dir).map_err(|e| RankError::io(dir, e))?;
    atomic::clean_stale(dir)?;
    let mut figures = Vec::new();
    let families = family_colours(input.rows);
    for (t, name) in input.traces.iter().enumerate() {
        let mut points: Vec<Pt> = input
            .rows
            .iter()
            .zip(input.scored)
            .filter(|(r, _)| r.trace_index == t)
            .filter_map(|(r, sc)| {
                let x = r.measure(input.axes.x.measure)?;
                let y = r.measure(input.axes.y.measure)?;
                (x.is_finite() && y.is_finite()).then(|| Pt {
                    x,
                    y,
                    family: r.start_family.clone(),
                    reference: r.reference.then(|| reference_name(&r.spec)),
                    worse: sc.worse,
                    frontier: false,
                    picked: Some(r.network_index) == input.pick,
                })
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let real: Vec<usize> = (0..points.len())
            .filter(|&i| points[i].reference.is_none())
            .collect();
        let xy: Vec<(f64, f64)> = real.iter().map(|&i| (points[i].x, points[i].y)).collect();
        for (k, on) in pareto_within(&xy, input.axes.x.better, input.axes.y.better)
            .into_iter()
            .enumerate()
        {
            points[real[k]].frontier = on;
        }
        let stem = format!("tradeoff-{}", slug(name));
        let title = format!("{}: {} on {name}", input.task, tradeoff_name(&input.axes));
        save(
            dir,
            &stem,
            (1100, 700),
            &Tradeoff {
                title: title.clone(),
                axes: input.axes,
                points,
                families: &families,
                same: input.summaries.iter().map(|s| s.equivalents.len()).sum(),
            },
        )?;
        figures.push(Figure { title, stem });
    }
    for (key, what) in [
        ("start", "start-detector"),
        ("duration", "duration-predictor"),
    ] {
        let bars = family_bars(input, key == "start");
        if bars.is_empty() {
            continue;
        }
        let stem = format!("range-{key}");
        // Over the traces ranked: one left out (saturated) has no rows.
        let ranked = (0..input.traces.len())
            .filter(|&t| input.rows.iter().any(|r| r.trace_index == t))
            .count();
        let title = format!(
            "{}: mean scaled distance by {what} family, over {ranked} trace{}",
            input.task,
            if ranked == 1 { "" } else { "s" }
        );
        save(
            dir,
            &stem,
            (1100, 120 + 34 * bars.len() as u32),
            &RangeBars {
                title: title.clone(),
                bars,
            },
        )?;
        figures.push(Figure { title, stem });
    }
    if let Some(h) = heatmap(input) {
        let stem = "event-window".to_string();
        let title = format!(
            "{}: event-window sensitivity, best mean scaled distance per window × threshold",
            input.task
        );
        save(
            dir,
            &stem,
            (1000, 620),
            &Heat {
                title: title.clone(),
                ..h
            },
        )?;
        figures.push(Figure { title, stem });
    }
    for cdf in input.cdfs {
        if cdf.points.len() < 2 {
            continue;
        }
        let stem = format!("idle-cdf-{}", slug(&cdf.trace));
        let title = format!("idle periods of {}", cdf.trace);
        save(
            dir,
            &stem,
            (900, 560),
            &Cdf {
                title: title.clone(),
                cdf,
                breakeven_s: input.breakeven_s,
            },
        )?;
        figures.push(Figure { title, stem });
    }
    Ok(figures)
}

fn tradeoff_name(a: &Axes) -> String {
    format!("{} vs {}", label(a.x.measure), label(a.y.measure))
}

/// Families in order of first appearance, each with a colour.
fn family_colours(rows: &[Row]) -> Vec<(String, RGBColor)> {
    let mut v: Vec<(String, RGBColor)> = Vec::new();
    for r in rows.iter().filter(|r| !r.reference) {
        if !v.iter().any(|f| f.0 == r.start_family) {
            let c = PALETTE[v.len() % PALETTE.len()];
            v.push((r.start_family.clone(), c));
        }
    }
    v
}

/// Pads a data range so points do not sit on the frame.
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.05
    } else {
        lo.abs().max(1.0) * 0.05
    };
    (lo - pad, hi + pad)
}

/// The size of a reference's cross, by its name ([`reference_name`]):
/// `auto` largest, then hd-idle's timeout and the best fixed timer, then
/// the oracle, each drawn over the larger, so that two references at one
/// point (`auto` and the best fixed timer, where `auto` settles on that
/// timeout) both show.
fn reference_size(name: &str) -> i32 {
    match name {
        "oracle" => 6,
        "best fixed timer" | "hd-idle 10 min" => 9,
        _ => 12,
    }
}

/// Tick labels without noise: 3 significant figures, compact.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&a) {
        // `1e-5`, `2.5e-5`, `2e7`: no `.0` on a whole mantissa, so a log
        // axis reads 1e-5, 1e-4, 0.001 rather than 1.0e-5, 1.0e-4, 0.001.
        format!("{v:.1e}").replace(".0e", "e")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Triangle,
    Square,
}

/// Colours repeat every 12 families; the marker shape tells them apart.
fn marker(family: usize) -> Marker {
    match (family / PALETTE.len()) % 3 {
        0 => Marker::Circle,
        1 => Marker::Triangle,
        _ => Marker::Square,
    }
}

/// One point of a trade-off plot.
struct Pt {
    x: f64,
    y: f64,
    family: String,
    /// The reference row's name (`auto`, best fixed timer, oracle).
    reference: Option<String>,
    worse: bool,
    frontier: bool,
    /// The recommended network's point.
    picked: bool,
}

/// A reference's colour, by its name ([`reference_name`]), so that each
/// keeps its colour whichever others a plot shows.
fn reference_colour(name: &str) -> RGBColor {
    match name {
        "best fixed timer" => RGBColor(200, 0, 0),
        "oracle" => RGBColor(0, 120, 0),
        "hd-idle 10 min" => RGBColor(0, 90, 200),
        _ => BLACK,
    }
}

fn reference_name(spec: &str) -> String {
    if spec == crate::grid::BEST_FIXED {
        "best fixed timer".into()
    } else if spec == crate::grid::HD_IDLE {
        "hd-idle 10 min".into()
    } else if spec.starts_with("oracle") {
        "oracle".into()
    } else {
        spec.to_string()
    }
}

struct Tradeoff<'a> {
    title: String,
    axes: Axes,
    points: Vec<Pt>,
    families: &'a [(String, RGBColor)],
    /// Networks with measures identical to another's on every trace
    /// (folded into it in the ranking), drawn over it.
    same: usize,
}

/// The view of a trade-off plot: the ranges that cover the frontier, the
/// reference rows and every network that is not worse than no task, and
/// whether the vertical axis is logarithmic (it spans decades).
struct View {
    x: (f64, f64),
    y: (f64, f64),
    log_y: bool,
}

impl View {
    fn of(points: &[Pt]) -> View {
        let keep: Vec<&Pt> = points
            .iter()
            // The recommended network too (lab-25 R4: its ring sat at a
            // clamped, made-up position when it was worse on this trace).
            .filter(|p| p.reference.is_some() || p.frontier || !p.worse || p.picked)
            .collect();
        let keep = if keep.is_empty() {
            points.iter().collect()
        } else {
            keep
        };
        let lo = |f: &dyn Fn(&Pt) -> f64| keep.iter().map(|p| f(p)).fold(f64::INFINITY, f64::min);
        let hi =
            |f: &dyn Fn(&Pt) -> f64| keep.iter().map(|p| f(p)).fold(f64::NEG_INFINITY, f64::max);
        let x = padded(lo(&|p| p.x), hi(&|p| p.x));
        let pos: Vec<f64> = keep.iter().map(|p| p.y).filter(|y| *y > 0.0).collect();
        let pmin = pos.iter().copied().fold(f64::INFINITY, f64::min);
        let pmax = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if pos.len() >= 2 && pmax / pmin > 100.0 {
            let (a, b) = padded(pmin.log10(), pmax.log10());
            return View {
                x,
                y: (a, b),
                log_y: true,
            };
        }
        View {
            x,
            y: padded(lo(&|p| p.y), hi(&|p| p.y)),
            log_y: false,
        }
    }

    /// Where a point is drawn, and whether it was pulled onto the edge.
    fn place(&self, p: &Pt) -> ((f64, f64), bool) {
        let y = if self.log_y {
            if p.y > 0.0 {
                p.y.log10()
            } else {
                f64::NEG_INFINITY
            }
        } else {
            p.y
        };
        let cx = p.x.clamp(self.x.0, self.x.1);
        let cy = y.clamp(self.y.0, self.y.1);
        ((cx, cy), cx != p.x || cy != y)
    }
}

impl Draw for Tradeoff<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let (w, h) = root.dim_in_pixel();
        let (main, foot) = root.split_vertically(h.saturating_sub(46));
        // The title spans the whole width, legend column included: over
        // the plot alone a long one was clipped at the left (lab-25 R4).
        let size = if self.title.chars().count() > 80 {
            18
        } else {
            22
        };
        let main = main.titled(&self.title, (SANS, size)).map_err(err)?;
        let (plot, legend) = main.split_horizontally(w.saturating_sub(230));
        let view = View::of(&self.points);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(84)
            .build_cartesian_2d(view.x.0..view.x.1, view.y.0..view.y.1)
            .map_err(err)?;
        let log_y = view.log_y;
        // A log axis is labelled at its decades only: its half-decade
        // ticks (3.16, 31.62, 316, 3162) read as other numbers when small.
        let yfmt = move |v: &f64| {
            if !log_y {
                tick(*v)
            } else if (v - v.round()).abs() < 1e-9 {
                tick(10f64.powf(v.round()))
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_desc(format!(
                "{} — {}",
                label(self.axes.x.measure),
                direction(self.axes.x.better)
            ))
            .y_desc(format!(
                "{}{} — {}",
                label(self.axes.y.measure),
                if log_y { ", log scale" } else { "" },
                direction(self.axes.y.better)
            ))
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&yfmt)
            .label_style((SANS, 14))
            .axis_desc_style((SANS, 16))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        // The frontier as a staircase through its points.
        let mut front: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter(|p| p.frontier)
            .map(|p| view.place(p).0)
            .collect();
        front.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        if front.len() > 1 {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    front.clone(),
                    BLACK.mix(0.5).stroke_width(2),
                )))
                .map_err(err)?;
        }
        let mut outside = 0usize;
        let mut zero = 0usize;
        for (i, (fam, colour)) in self.families.iter().enumerate() {
            for p in self
                .points
                .iter()
                .filter(|p| p.reference.is_none() && &p.family == fam)
            {
                let (at, edge) = view.place(p);
                if edge {
                    if view.log_y && p.y <= 0.0 && p.x >= view.x.0 && p.x <= view.x.1 {
                        zero += 1;
                    } else {
                        outside += 1;
                    }
                }
                let style = if edge {
                    colour.stroke_width(2)
                } else {
                    colour.mix(0.85).filled()
                };
                match marker(i) {
                    Marker::Circle => chart
                        .draw_series(std::iter::once(Circle::new(at, 4, style)))
                        .map(|_| ()),
                    Marker::Triangle => chart
                        .draw_series(std::iter::once(TriangleMarker::new(at, 6, style)))
                        .map(|_| ()),
                    Marker::Square => chart
                        .draw_series(std::iter::once(
                            EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style),
                        ))
                        .map(|_| ()),
                }
                .map_err(err)?;
            }
        }
        // The recommended network, ringed.
        let picked = self.points.iter().any(|p| p.picked);
        for p in self.points.iter().filter(|p| p.picked) {
            chart
                .draw_series(std::iter::once(Circle::new(
                    view.place(p).0,
                    10,
                    BLACK.stroke_width(2),
                )))
                .map_err(err)?;
        }
        let mut refs: Vec<String> = Vec::new();
        for p in self.points.iter().filter(|p| p.reference.is_some()) {
            let name = p.reference.clone().unwrap_or_default();
            if !refs.contains(&name) {
                refs.push(name.clone());
            }
            let c = reference_colour(&name);
            let (at, _) = view.place(p);
            chart
                .draw_series(std::iter::once(Cross::new(
                    at,
                    reference_size(&name),
                    c.stroke_width(3),
                )))
                .map_err(err)?;
        }
        // Legend in its own column, below the title; its rows close up
        // when there are many, so the last ones do not overlap.
        legend
            .draw(&Text::new(
                "start detector",
                (10, 10),
                (SANS, 16).into_font().color(&BLACK),
            ))
            .map_err(err)?;
        let entries = self.families.len() + refs.len() + usize::from(picked) + 1;
        let room = legend.dim_in_pixel().1.saturating_sub(44) as usize;
        let step = (room / entries.max(1)).clamp(16, 22) as i32;
        let mut y = 36;
        for (i, (fam, colour)) in self.families.iter().enumerate() {
            let style = colour.filled();
            let at = (18, y + 7);
            match marker(i) {
                Marker::Circle => legend.draw(&Circle::new(at, 5, style)),
                Marker::Triangle => legend.draw(&TriangleMarker::new(at, 6, style)),
                Marker::Square => legend.draw(&Rectangle::new(
                    [(at.0 - 5, at.1 - 5), (at.0 + 5, at.1 + 5)],
                    style,
                )),
            }
            .map_err(err)?;
            legend
                .draw(&Text::new(fam.as_str(), (32, y), (SANS, 14)))
                .map_err(err)?;
            y += step;
        }
        for name in &refs {
            let c = reference_colour(name);
            legend
                .draw(&Cross::new(
                    (18, y + 7),
                    reference_size(name) * 3 / 4,
                    c.stroke_width(3),
                ))
                .map_err(err)?;
            legend
                .draw(&Text::new(
                    format!("{name} (reference)"),
                    (32, y),
                    (SANS, 14),
                ))
                .map_err(err)?;
            y += step;
        }
        if picked {
            legend
                .draw(&Circle::new((18, y + 7), 8, BLACK.stroke_width(2)))
                .map_err(err)?;
            legend
                .draw(&Text::new("recommended", (32, y), (SANS, 14)))
                .map_err(err)?;
            y += step;
        }
        if front.len() > 1 {
            legend
                .draw(&PathElement::new(
                    vec![(8, y + 7), (28, y + 7)],
                    BLACK.mix(0.5).stroke_width(2),
                ))
                .map_err(err)?;
            legend
                .draw(&Text::new("Pareto frontier", (32, y), (SANS, 14)))
                .map_err(err)?;
        }
        let drawn = self.points.iter().filter(|p| p.reference.is_none()).count();
        let mut caption = if self.same > 0 && self.same < drawn {
            format!(
                "{} networks (+{} identical to one, drawn over it)",
                drawn - self.same,
                self.same
            )
        } else {
            format!("{drawn} networks")
        };
        if outside > 0 {
            caption.push_str(&format!("; {outside} outside the axes, hollow at the edge"));
        }
        if zero > 0 {
            caption.push_str(&format!("; {zero} with none, on the bottom edge"));
        }
        foot.draw(&Text::new(caption, (20, 4), (SANS, 14)))
            .map_err(err)?;
        foot.draw(&Text::new(
            "The axes cover the frontier, the references, the recommended network and every network not worse than no task.",
            (20, 24),
            (SANS, 14),
        ))
        .map_err(err)?;
        Ok(())
    }
}

/// One family's spread: (name, networks, mean, sd, best, worst).
type Bar = (String, usize, f64, f64, f64, f64);

fn family_bars(input: &PlotInput<'_>, start: bool) -> Vec<Bar> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in input
        .summaries
        .iter()
        .filter(|s| !s.reference && s.mean.is_finite())
    {
        if let Some(r) = input.rows.iter().find(|r| r.network_index == s.policy) {
            let fam = if start {
                &r.start_family
            } else {
                &r.duration_family
            };
            by.entry(fam.clone()).or_default().push(s.mean);
        }
    }
    let mut bars: Vec<Bar> = by
        .into_iter()
        .map(|(f, v)| {
            let (m, var) = crate::score::mean_var(&v);
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (f, v.len(), m, var.sqrt(), lo, hi)
        })
        .collect();
    // Best family at the top.
    bars.sort_by(|a, b| b.2.total_cmp(&a.2).then(b.0.cmp(&a.0)));
    bars
}

struct RangeBars {
    title: String,
    bars: Vec<Bar>,
}

impl Draw for RangeBars {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let n = self.bars.len();
        let xmax = self
            .bars
            .iter()
            .map(|b| b.5)
            .fold(0.0f64, f64::max)
            .max(0.1)
            * 1.05;
        // Start near the best network rather than at 0, so the spread
        // between families fills the plot.
        let lowest = self.bars.iter().map(|b| b.4).fold(f64::INFINITY, f64::min);
        let xmin = if lowest.is_finite() {
            ((lowest - 0.1).max(0.0) * 10.0).floor() / 10.0
        } else {
            0.0
        };
        let names: Vec<String> = self
            .bars
            .iter()
            .map(|b| format!("{} ({})", b.0, b.1))
            .collect();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (SANS, 20))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(260)
            .build_cartesian_2d(xmin..xmax.max(xmin + 0.1), -0.5..(n as f64 - 0.5))
            .map_err(err)?;
        let fmt = |v: &f64| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                names[i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_desc("mean scaled distance across traces (0 = best at both measures); bar: mean ± sd, line: best to worst network")
            .y_desc("family (networks)")
            .y_labels(n.max(1))
            .y_label_formatter(&fmt)
            .x_label_formatter(&|v| tick(*v))
            .label_style((SANS, 14))
            .axis_desc_style((SANS, 14))
            .light_line_style(WHITE)
            .disable_y_mesh()
            .draw()
            .map_err(err)?;
        for (i, b) in self.bars.iter().enumerate() {
            let y = i as f64;
            let c = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(b.4, y), (b.5, y)],
                    BLACK.stroke_width(1),
                )))
                .map_err(err)?;
            let lo = (b.2 - b.3).max(xmin);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(lo, y - 0.28), (b.2 + b.3, y + 0.28)],
                    c.mix(0.6).filled(),
                )))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Circle::new((b.2, y), 4, BLACK.filled())))
                .map_err(err)?;
        }
        Ok(())
    }
}

struct Heat {
    title: String,
    ns: Vec<f64>,
    rates: Vec<f64>,
    /// (n index, rate index) → best mean distance.
    cells: BTreeMap<(usize, usize), Cell>,
}

/// One heat-map cell: the best mean distance of the event-window networks
/// with its n and threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    distance: f64,
    /// The best of them was folded into an equivalent network (identical
    /// measures on every trace) and has that network's result.
    folded: bool,
    /// It did worse than no task on some trace (flag `worse`).
    worse: bool,
}

fn heatmap(input: &PlotInput<'_>) -> Option<Heat> {
    let mut best: BTreeMap<(u64, u64), Cell> = BTreeMap::new();
    for s in input
        .summaries
        .iter()
        .filter(|s| !s.reference && s.mean.is_finite())
    {
        // A network folded into an equivalent (lab-25 R3: a blank cell
        // read as "not swept") has the equivalent's result.
        for &policy in std::iter::once(&s.policy).chain(&s.equivalents) {
            let Some(r) = input.rows.iter().find(|r| r.network_index == policy) else {
                continue;
            };
            if r.start_family != "event-window" {
                continue;
            }
            let n = r.params.get("start.n").and_then(|v| v.parse::<f64>().ok());
            let rate = r.params.get("start.rate").and_then(|v| {
                v.parse::<f64>()
                    .ok()
                    .or_else(|| crate::grid::rate_factor(v.trim()))
            });
            if let (Some(n), Some(rate)) = (n, rate) {
                let cell = Cell {
                    distance: s.mean,
                    folded: policy != s.policy,
                    worse: s.worse > 0,
                };
                let e = best.entry((n.to_bits(), rate.to_bits())).or_insert(cell);
                if cell.distance < e.distance {
                    *e = cell;
                }
            }
        }
    }
    let mut ns: Vec<f64> = best.keys().map(|k| f64::from_bits(k.0)).collect();
    let mut rates: Vec<f64> = best.keys().map(|k| f64::from_bits(k.1)).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    if ns.len() < 2 || rates.len() < 2 {
        return None;
    }
    let cells = best
        .into_iter()
        .map(|((n, r), d)| {
            let i = ns.iter().position(|&v| v.to_bits() == n).unwrap_or(0);
            let j = rates.iter().position(|&v| v.to_bits() == r).unwrap_or(0);
            ((i, j), d)
        })
        .collect();
    Some(Heat {
        title: String::new(),
        ns,
        rates,
        cells,
    })
}

/// A heat-map cell's text: the distance, `=` before it when it is an
/// equivalent network's result, `!` after it when it did worse than no
/// task on some trace.
fn cell_text(c: &Cell) -> String {
    format!(
        "{}{:.3}{}",
        if c.folded { "=" } else { "" },
        c.distance,
        if c.worse { "!" } else { "" }
    )
}

/// Viridis-like colour ramp, 0 = dark purple (best) to 1 = yellow.
fn ramp(t: f64) -> RGBColor {
    const STOPS: [(f64, (f64, f64, f64)); 5] = [
        (0.0, (68.0, 1.0, 84.0)),
        (0.25, (59.0, 82.0, 139.0)),
        (0.5, (33.0, 145.0, 140.0)),
        (0.75, (94.0, 201.0, 98.0)),
        (1.0, (253.0, 231.0, 37.0)),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        1.0
    };
    for w in STOPS.windows(2) {
        let ((a, ca), (b, cb)) = (w[0], w[1]);
        if t <= b {
            let f = (t - a) / (b - a);
            let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
            return RGBColor(mix(ca.0, cb.0), mix(ca.1, cb.1), mix(ca.2, cb.2));
        }
    }
    RGBColor(253, 231, 37)
}

impl Draw for Heat {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let (_, h) = root.dim_in_pixel();
        let (area, foot) = root.split_vertically(h.saturating_sub(44));
        let root = &area;
        let (nx, ny) = (self.ns.len(), self.rates.len());
        let lo = self
            .cells
            .values()
            .map(|c| c.distance)
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .cells
            .values()
            .map(|c| c.distance)
            .fold(f64::NEG_INFINITY, f64::max);
        let norm = |d: f64| if hi > lo { (d - lo) / (hi - lo) } else { 0.0 };
        let xs: Vec<String> = self.ns.iter().map(|v| tick(*v)).collect();
        let ys: Vec<String> = self.rates.iter().map(|v| tick(*v)).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (SANS, 18))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5..(nx as f64 - 0.5), -0.5..(ny as f64 - 0.5))
            .map_err(err)?;
        let at = |v: &f64, names: &[String]| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
                names[i as usize].clone()
            } else {
                String::new()
            }
        };
        let fx = |v: &f64| at(v, &xs);
        let fy = |v: &f64| at(v, &ys);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nx)
            .y_labels(ny)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .x_desc("window size n (requests)")
            .y_desc("rate threshold (IO/s, or × the trace's mean rate R)")
            .label_style((SANS, 14))
            .axis_desc_style((SANS, 15))
            .draw()
            .map_err(err)?;
        for (&(i, j), cell) in &self.cells {
            let d = cell.distance;
            let (x, y) = (i as f64, j as f64);
            let t = norm(d);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                    ramp(t).filled(),
                )))
                .map_err(err)?;
            let colour = if t < 0.6 { WHITE } else { BLACK };
            let style = (SANS, 15)
                .into_font()
                .color(&colour)
                .pos(Pos::new(HPos::Center, VPos::Center));
            chart
                .draw_series(std::iter::once(Text::new(cell_text(cell), (x, y), style)))
                .map_err(err)?;
        }
        foot.draw(&Text::new(
            "cell: lowest mean scaled distance of the event-window networks with that n and threshold (darker = better)",
            (20, 2),
            (SANS, 13),
        ))
        .map_err(err)?;
        foot.draw(&Text::new(
            "= identical on every trace to a network listed under another spec (its result); ! worse than no task on some trace",
            (20, 18),
            (SANS, 13),
        ))
        .map_err(err)?;
        Ok(())
    }
}

struct Cdf<'a> {
    title: String,
    cdf: &'a IdleCdf,
    breakeven_s: Option<f64>,
}

impl Draw for Cdf<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let pts = &self.cdf.points;
        let lo = pts.first().map_or(1e-3, |p| p.0).max(1e-6);
        let hi = pts.last().map_or(1.0, |p| p.0).max(lo * 10.0) * 1.5;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (SANS, 22))
            .margin(14)
            .x_label_area_size(52)
            .y_label_area_size(70)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("idle period length (s, log scale)")
            .y_desc("cumulative fraction")
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .label_style((SANS, 14))
            .axis_desc_style((SANS, 16))
            .draw()
            .map_err(err)?;
        let series = [
            ("fraction of idle periods", PALETTE[0], 1usize),
            ("fraction of idle time", PALETTE[1], 2usize),
        ];
        for (name, colour, k) in series {
            let (bx, by) = root.get_base_pixel();
            let line: Vec<(i32, i32)> = pts
                .iter()
                .map(|p| {
                    let y = if k == 1 { p.1 } else { p.2 };
                    let (x, y) = chart.plotting_area().map_coordinate(&(p.0.max(lo), y));
                    (x - bx, y - by)
                })
                .collect();
            brushed(root, &line, colour)?;
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
                });
        }
        // The break-even time: the idle time right of it is what a
        // spin-down can save.
        if let Some(b) = self.breakeven_s.filter(|b| *b > lo && *b < hi) {
            let grey = RGBColor(90, 90, 90);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(b, 0.0), (b, 1.0)],
                    grey.stroke_width(2),
                )))
                .map_err(err)?
                .label(format!("break-even time B = {} s", tick(b)))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(2))
                });
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}

/// Draws the polyline `line` (in `root`'s pixels) 3 pixels wide with a
/// square brush: the 1-pixel line at each of the nine offsets of a 3×3
/// square. Plotters draws a wide line as a polygon whose corners, rounded
/// to whole pixels, wobble by a pixel or two where points lie a pixel
/// apart and the line turns sharply (a flat run of a CDF ending in a
/// jump): a curve that never falls was drawn with dips. A 1-pixel line
/// between pixels that never fall never falls, and neither do its
/// offsets.
fn brushed<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    line: &[(i32, i32)],
    colour: RGBColor,
) -> DrawResult {
    for dx in -1..=1 {
        for dy in -1..=1 {
            let moved: Vec<(i32, i32)> = line.iter().map(|&(x, y)| (x + dx, y + dy)).collect();
            root.draw(&PathElement::new(moved, colour.stroke_width(1)))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Draws the series legend of `chart` at `position` in the house style
/// (the font of every figure, a light box with a black border).
pub(crate) fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .label_font((SANS, 15))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A CDF never falls, and neither may its curve: neither edge of the
    // line may go down from left to right. Plotters' wide lines wobbled a
    // pixel or two where a flat run of sub-pixel steps ends in a jump, as
    // in the idle time of home-nas@2, a day with few long periods (its
    // points, as `lull rank` wrote them).
    #[test]
    fn a_cdf_curve_never_falls() {
        register_font();
        let points: Vec<(f64, f64, f64)> = include_str!("../tests/data/idle-cdf-home-nas-2.csv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
                (v[0], v[1], v[2])
            })
            .collect();
        assert_eq!(points.len(), 121);
        let cdf = IdleCdf {
            trace: "home-nas@2".into(),
            points,
        };
        let (w, h) = (900usize, 560usize);
        let mut buf = vec![0u8; w * h * 3];
        {
            let root =
                BitMapBackend::with_buffer(&mut buf, (w as u32, h as u32)).into_drawing_area();
            Cdf {
                title: "idle periods".into(),
                cdf: &cdf,
                breakeven_s: None,
            }
            .draw(&root)
            .unwrap();
            root.present().unwrap();
        }
        let buf = &buf;
        let rows = |x: usize, colour: RGBColor| {
            (0..h).filter(move |&y| {
                let i = 3 * (y * w + x);
                buf[i..i + 3] == [colour.0, colour.1, colour.2]
            })
        };
        for colour in [PALETTE[0], PALETTE[1]] {
            // From right of the legend (upper left, under 300 px wide),
            // whose sample lines have the curves' colours and beneath
            // which the two curves, both near 0, cover each other. Rows
            // count down the image: a rising curve's rows fall.
            let (mut top, mut bottom) = (usize::MAX, usize::MAX);
            let mut seen = 0;
            for x in 320..w {
                let (Some(t), Some(b)) = (rows(x, colour).min(), rows(x, colour).max()) else {
                    continue;
                };
                seen += 1;
                assert!(
                    t <= top && b <= bottom,
                    "colour {colour:?}: the curve falls at column {x} (rows {t}–{b} after {top}–{bottom})"
                );
                (top, bottom) = (t, b);
            }
            assert!(seen > 400, "colour {colour:?}: only {seen} columns drawn");
        }
    }

    #[test]
    fn ticks_and_slugs() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.1), "0.1");
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(2e7), "2e7");
        assert_eq!(tick(1e-5), "1e-5");
        assert_eq!(tick(2.5e-5), "2.5e-5");
        assert_eq!(tick(-1e-4), "-1e-4");
        assert_eq!(slug("msr:hm_0/x"), "msr-hm_0-x");
        assert_eq!(ramp(0.0), RGBColor(68, 1, 84));
        assert_eq!(ramp(2.0), RGBColor(253, 231, 37));
    }
    /// lab-25 R3: an event-window network folded into an equivalent of
    /// another spec fills its cell with that network's result, marked `=`;
    /// a network worse than no task somewhere is marked `!`.
    #[test]
    fn folded_event_window_networks_fill_their_cells() {
        let row = |n: usize, spec: &str, family: &str, params: &[(&str, &str)]| Row {
            trace_index: 0,
            trace: "w".into(),
            network_index: n,
            spec: spec.into(),
            reference: false,
            start_family: family.into(),
            duration_family: "no-duration".into(),
            skeptic: None,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            measures: vec![("energy_saved_pct".into(), 1.0)],
        };
        let rows = vec![
            row(0, "timer(t=16B)", "timer", &[("start.t", "16B")]),
            row(
                1,
                "event-window(n=5, rate=R)",
                "event-window",
                &[("start.n", "5"), ("start.rate", "R")],
            ),
            row(
                2,
                "event-window(n=50, rate=R)",
                "event-window",
                &[("start.n", "50"), ("start.rate", "R")],
            ),
            row(
                3,
                "event-window(n=5, rate=R/4)",
                "event-window",
                &[("start.n", "5"), ("start.rate", "R/4")],
            ),
            row(
                4,
                "event-window(n=50, rate=R/4)",
                "event-window",
                &[("start.n", "50"), ("start.rate", "R/4")],
            ),
        ];
        let summary = |policy: usize, mean: f64, equivalents: Vec<usize>, worse: usize| Summary {
            policy,
            reference: false,
            distances: vec![(0, mean)],
            mean,
            variance: 0.0,
            mean_x: mean,
            mean_y: 0.0,
            rank: Some(1),
            worse,
            equivalents,
            frontier: Vec::new(),
            pareto: false,
        };
        let summaries = vec![
            summary(0, 0.4, vec![4], 0),
            summary(1, 0.5, vec![], 1),
            summary(2, 0.6, vec![], 0),
            summary(3, 0.7, vec![], 0),
        ];
        let input = PlotInput {
            task: "spindown",
            axes: crate::axes::axes("spindown"),
            rows: &rows,
            scored: &[],
            summaries: &summaries,
            traces: &[],
            cdfs: &[],
            pick: None,
            breakeven_s: None,
        };
        let heat = heatmap(&input).expect("a 2 × 2 heat map");
        assert_eq!(heat.cells.len(), 4, "no blank cell: {:?}", heat.cells);
        let texts: Vec<String> = heat.cells.values().map(cell_text).collect();
        // Rates sort R/4 before R: (5, R/4), (5, R), (50, R/4), (50, R).
        assert_eq!(texts, ["0.700", "0.500!", "=0.400", "0.600"]);
    }
    /// lab-25 R4: points better by noise on one measure and far worse on
    /// the other are not drawn on the frontier.
    #[test]
    fn the_drawn_frontier_ignores_noise() {
        use crate::score::Better;
        let pts = [
            (0.845_000, 250.0),
            (0.845_001, 1.2e6),
            (0.845_002, 5.0e5),
            (0.2, 100.0),
            (0.5, 200.0),
        ];
        let strict = crate::score::pareto(&pts, Better::Higher, Better::Lower);
        assert_eq!(strict, [true, false, true, true, true]);
        let drawn = pareto_within(&pts, Better::Higher, Better::Lower);
        assert_eq!(drawn, [true, false, false, true, true]);
    }
    /// lab-25 R4: the recommended network is inside the axes even where it
    /// did worse than no task (its ring sat at a clamped position).
    #[test]
    fn the_axes_include_the_recommended_network() {
        let pt = |x: f64, y: f64, worse: bool, picked: bool| Pt {
            x,
            y,
            family: "share".into(),
            reference: None,
            worse,
            frontier: false,
            picked,
        };
        let mut points = vec![pt(10.0, 5.0, false, false), pt(20.0, 8.0, false, false)];
        points.push(pt(-23.7, 23_000.0, true, false));
        let (_, edge) = View::of(&points).place(&points[2]);
        assert!(edge, "a worse network is clamped");
        points[2].picked = true;
        let (_, edge) = View::of(&points).place(&points[2]);
        assert!(!edge, "the recommended one is not");
    }
}
