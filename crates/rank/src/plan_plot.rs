//! The plot of `lull plan` (issue 19): usable idle time per hour of day,
//! with the idle time each job obtained stacked inside it, written as SVG
//! and PNG.
//!
//! One bar per hour: the forecast's usable idle time (mean per day, for an
//! interruptible job; at most the hour's 60 minutes) as a light outline, and inside it, stacked from the
//! bottom, each job's mean work per day in that hour; what is left above
//! the stack went to unreserved work (or nobody).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::RankError;
use crate::plot::{Draw, DrawResult, SANS, draw_legend, err};

/// Job colours (Tableau 10), cycled.
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// What the plan plot is drawn from (all seconds per day).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanPlot {
    /// The title (trace or workload).
    pub title: String,
    /// Usable idle time per hour of day, mean per day, seconds.
    pub idle_s: [f64; 24],
    /// Per job: its name and its mean work per hour of day, seconds.
    pub jobs: Vec<(String, [f64; 24])>,
    /// The trace has no wall clock: its hours count from its start, not
    /// from midnight, and the x axis says so (lab-25 R12).
    pub hours_from_start: bool,
}

impl PlanPlot {
    /// The x axis: hours of the day, or hours since the trace's start
    /// when it has no wall clock.
    fn x_desc(&self) -> &'static str {
        if self.hours_from_start {
            "hour since the trace's start (the trace has no wall clock), modulo 24"
        } else {
            "hour of day"
        }
    }

    /// The y axis: each bar is one hour's slot, so at most 60 minutes (it
    /// read "minutes per day", lab-25 R12).
    const Y_DESC: &'static str = "idle minutes in the hour (mean per day; at most 60)";
}

impl Draw for PlanPlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let stacked = |h: usize| self.jobs.iter().map(|j| j.1[h]).sum::<f64>();
        let top = (0..24)
            .map(|h| self.idle_s[h].max(stacked(h)))
            .fold(0.0f64, f64::max)
            .max(1.0)
            / 60.0
            * 1.35;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (SANS, 22))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..24.0, 0.0..top)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(self.x_desc())
            .y_desc(Self::Y_DESC)
            .x_labels(13)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .label_style((SANS, 14))
            .axis_desc_style((SANS, 16))
            .draw()
            .map_err(err)?;
        // The whole hour, where the axis runs past it (room for the legend).
        if top > 60.0 {
            chart
                .draw_series(DashedLineSeries::new(
                    [(0.0, 60.0), (24.0, 60.0)],
                    6,
                    4,
                    BLACK.mix(0.5).stroke_width(1),
                ))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    "the whole hour (60 min)",
                    (0.2, 60.0 + top * 0.045),
                    (SANS, 13),
                )))
                .map_err(err)?;
        }
        let grey = RGBColor(200, 200, 200);
        chart
            .draw_series((0..24).map(|h| {
                let x = h as f64;
                Rectangle::new(
                    [(x + 0.08, 0.0), (x + 0.92, self.idle_s[h] / 60.0)],
                    grey.filled(),
                )
            }))
            .map_err(err)?
            .label("usable idle time")
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], grey.filled()));
        let mut base = [0.0f64; 24];
        for (k, (name, per_hour)) in self.jobs.iter().enumerate() {
            let c = COLOURS[k % COLOURS.len()];
            let bars: Vec<_> = (0..24)
                .map(|h| {
                    let x = h as f64;
                    let (lo, hi) = (base[h], base[h] + per_hour[h] / 60.0);
                    Rectangle::new([(x + 0.2, lo), (x + 0.8, hi)], c.filled())
                })
                .collect();
            for (h, b) in base.iter_mut().enumerate() {
                *b += per_hour[h] / 60.0;
            }
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

impl PlanPlot {
    /// Writes `stem.svg` and `stem.png` (atomically) into `dir`.
    pub fn save(&self, dir: &Path, stem: &str) -> Result<(), RankError> {
        crate::plot::save(dir, stem, (960, 540), self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut job = [0.0; 24];
        job[2] = 1800.0;
        let p = PlanPlot {
            title: "office".into(),
            idle_s: [3000.0; 24],
            jobs: vec![("scrub".into(), job)],
            hours_from_start: false,
        };
        p.save(dir.path(), "plan").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("plan.svg")).unwrap();
        assert!(svg.contains("scrub"));
        assert!(svg.contains("hour of day"));
        assert!(svg.contains("at most 60"), "{svg}");
        assert!(!svg.contains("minutes per day"));
        assert!(dir.path().join("plan.png").metadata().unwrap().len() > 1000);
    }

    /// lab-25 R12: a trace without a wall clock counts hours from its
    /// start, and the axis says so.
    #[test]
    fn hours_without_a_clock_count_from_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let p = PlanPlot {
            title: "trace".into(),
            idle_s: [3000.0; 24],
            jobs: Vec::new(),
            hours_from_start: true,
        };
        p.save(dir.path(), "plan").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("plan.svg")).unwrap();
        assert!(svg.contains("hour since the trace"), "{svg}");
        assert!(!svg.contains("hour of day"));
    }
}
