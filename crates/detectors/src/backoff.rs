//! Backoff duration predictors (§3.1.2 "backoff" and "filtered backoff",
//! Table 5 `BackoffArithArith`, `BackoffArithGeom`, `BackoffGeomArith`,
//! `BackoffGeomGeom`; §5.4.2 studies `BackoffArithGeom`).
//!
//! The predictor keeps an estimate `E` (starting at `initial`, always within
//! `[floor, ceiling]`) and predicts it: `duration(now) = E`. After each
//! prediction it learns whether the actual idle time was longer (the
//! prediction ran out with the device still idle) or shorter (a request
//! arrived before the prediction's end), and lengthens or shortens `E`. The
//! first word of the name says how it lengthens (`arith`: `+step`; `geom`:
//! doubles), the second how it shortens (`arith`: `−step`; `geom`: halves).
//!
//! When the feedback is applied is the `adjust` parameter (§3.1.2: "at the
//! end of the prediction period or at the end of the idle period"):
//!
//! - `adjust=prediction`: at the end of every prediction. When a prediction
//!   runs out while the device is still idle, `E` is lengthened at once and
//!   the new `E` is returned as the **continuance**, so a long idle period
//!   is covered by ever longer predictions (the "much more aggressive"
//!   variant); when a request arrives inside a prediction, `E` is shortened.
//! - `adjust=period` (default): once per idle period, when it ends (the next
//!   arrival), comparing the time from the first prediction's start to the
//!   arrival with that first prediction. A prediction that ran out while
//!   still idle is continued with the unchanged `E`.
//!
//! An actual time equal to the prediction changes nothing.
//!
//! The `filtered-backoff-*` variants take a lower bound `min`: idle periods
//! shorter than `min` are ignored in the backoff calculation (a prediction
//! ended by an arrival that ended a shorter idle period, or one made while
//! requests were outstanding, leaves `E` unchanged; a continuance only
//! lengthens once the idle period has lasted `min`).

use lull_core::component::{Context, DurationPredictor};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError, ago, from_ago};
use lull_core::registry::{
    Built, ComponentInfo, GaugeInfo, GaugeUnit, ParamError, ParamInfo, ParamKind, Params, Registry,
    Role,
};
use lull_core::time::Nanos;

use crate::adjust::{B_CEILING, B_FLOOR, B_INITIAL, Bounded, STEP};

/// When a backoff predictor applies its feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdjustAt {
    /// At the end of each prediction (and continuance).
    Prediction,
    /// At the end of each idle period.
    Period,
}

/// A backoff duration predictor; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Backoff {
    est: Bounded,
    at: AdjustAt,
    min: Nanos,
    /// The prediction being judged: (start, duration).
    issued: Option<(Nanos, Nanos)>,
    idle_start: Option<Nanos>,
    /// The last idle period that ended: (end, length).
    last_idle: Option<(Nanos, Nanos)>,
}

impl Backoff {
    /// A backoff predictor with estimate `est`, feedback at `at`, ignoring
    /// idle periods shorter than `min` (zero: none ignored).
    pub fn new(est: Bounded, at: AdjustAt, min: Nanos) -> Self {
        Backoff {
            est,
            at,
            min,
            issued: None,
            idle_start: None,
            last_idle: None,
        }
    }
    /// The current estimate.
    pub fn estimate(&self) -> Nanos {
        self.est.value()
    }
}

impl DurationPredictor for Backoff {
    fn gauges(&self) -> Vec<(String, f64)> {
        vec![("estimate_s".into(), self.est.value().as_secs_f64())]
    }
    fn save(&self, now: Nanos) -> Option<Learned> {
        let (end, len) = self.last_idle.unzip();
        Some(Learned::new(
            "backoff",
            1,
            vec![
                self.est.exact(),
                ago(now, end),
                len.map_or(-1.0, |l| l.0 as f64),
            ],
        ))
    }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect("backoff", 1, 3)?;
        self.est
            .restore(v[0])
            .map_err(|e| LearnedError::new(format!("backoff: estimate {e}")))?;
        self.last_idle = from_ago(now, v[1]).zip((v[2] >= 0.0).then(|| Nanos(v[2] as u64)));
        Ok(())
    }
    fn on_idle_begin(&mut self, now: Nanos) {
        self.idle_start = Some(now);
    }
    fn on_idle_end(&mut self, now: Nanos, length: Nanos) {
        self.idle_start = None;
        self.last_idle = Some((now, length));
    }
    fn on_event(&mut self, ev: &Event, _ctx: &Context) {
        if !ev.is_arrival() {
            return;
        }
        let Some((start, d)) = self.issued else {
            return;
        };
        if ev.time < start {
            return;
        }
        self.issued = None;
        let idle_len = match self.last_idle {
            Some((end, len)) if end == ev.time => len,
            _ => Nanos::ZERO,
        };
        if idle_len < self.min {
            return;
        }
        let actual = ev.time - start;
        if actual < d {
            self.est.shorten();
        } else if actual > d {
            self.est.lengthen();
        }
    }
    fn duration(&mut self, now: Nanos) -> Option<Nanos> {
        let d = self.est.value();
        self.issued = Some((now, d));
        Some(d)
    }
    fn continuance(&mut self, now: Nanos, _elapsed: Nanos) -> Option<Nanos> {
        if self.at == AdjustAt::Prediction {
            let so_far = self.idle_start.map_or(Nanos::ZERO, |s| now - s);
            if so_far >= self.min {
                self.est.lengthen();
            }
            self.issued = Some((now, self.est.value()));
        }
        Some(self.est.value())
    }
}

const ADJUST: ParamInfo = ParamInfo::optional(
    "adjust",
    ParamKind::Choice(&["prediction", "period"]),
    "period",
    "",
    "apply feedback at the end of each prediction or at the end of each idle period",
);
const MIN: ParamInfo = ParamInfo::required(
    "min",
    ParamKind::Duration,
    "s",
    "idle periods shorter than this are ignored by the backoff (> 0)",
);

const fn info(
    name: &'static str,
    summary: &'static str,
    source: &'static str,
    params: &'static [ParamInfo],
) -> ComponentInfo {
    ComponentInfo {
        name,
        role: Role::DurationPredictor,
        summary,
        source,
        params,
        inputs: None,
        offline: false,
        gauges: ESTIMATE_GAUGES,
    }
}

const SRC: &str = "§3.1.2 backoff, Table 5 Backoff*";
const FSRC: &str = "§3.1.2 filtered backoff";

/// Catalogue entry of `backoff-arith-arith`.
pub const BACKOFF_ARITH_ARITH: ComponentInfo = info(
    "backoff-arith-arith",
    "estimate +step when the idle time was longer, -step when shorter",
    SRC,
    &[STEP, ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);
/// Catalogue entry of `backoff-arith-geom`.
pub const BACKOFF_ARITH_GEOM: ComponentInfo = info(
    "backoff-arith-geom",
    "estimate +step when the idle time was longer, halved when shorter",
    SRC,
    &[STEP, ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);
/// Catalogue entry of `backoff-geom-arith`.
pub const BACKOFF_GEOM_ARITH: ComponentInfo = info(
    "backoff-geom-arith",
    "estimate doubled when the idle time was longer, -step when shorter",
    SRC,
    &[STEP, ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);
/// Catalogue entry of `backoff-geom-geom`.
pub const BACKOFF_GEOM_GEOM: ComponentInfo = info(
    "backoff-geom-geom",
    "estimate doubled when the idle time was longer, halved when shorter",
    SRC,
    &[ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);
/// Catalogue entry of `filtered-backoff-arith-arith`.
pub const FILTERED_BACKOFF_ARITH_ARITH: ComponentInfo = info(
    "filtered-backoff-arith-arith",
    "backoff-arith-arith ignoring idle periods shorter than min",
    FSRC,
    &[MIN, STEP, ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);
/// Catalogue entry of `filtered-backoff-arith-geom`.
pub const FILTERED_BACKOFF_ARITH_GEOM: ComponentInfo = info(
    "filtered-backoff-arith-geom",
    "backoff-arith-geom ignoring idle periods shorter than min",
    FSRC,
    &[MIN, STEP, ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);
/// Catalogue entry of `filtered-backoff-geom-arith`.
pub const FILTERED_BACKOFF_GEOM_ARITH: ComponentInfo = info(
    "filtered-backoff-geom-arith",
    "backoff-geom-arith ignoring idle periods shorter than min",
    FSRC,
    &[MIN, STEP, ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);
/// Catalogue entry of `filtered-backoff-geom-geom`.
pub const FILTERED_BACKOFF_GEOM_GEOM: ComponentInfo = info(
    "filtered-backoff-geom-geom",
    "backoff-geom-geom ignoring idle periods shorter than min",
    FSRC,
    &[MIN, ADJUST, B_INITIAL, B_FLOOR, B_CEILING],
);

fn build(p: &Params, up_geom: bool, down_geom: bool, filtered: bool) -> Result<Built, ParamError> {
    let est = Bounded::from_params(p, up_geom, down_geom)?;
    let at = match p.choice("adjust")? {
        "prediction" => AdjustAt::Prediction,
        _ => AdjustAt::Period,
    };
    let min = if filtered {
        p.positive_duration("min")?
    } else {
        Nanos::ZERO
    };
    Ok(Built::Duration(Box::new(Backoff::new(est, at, min))))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(BACKOFF_ARITH_ARITH, |p| build(p, false, false, false));
    r.register(BACKOFF_ARITH_GEOM, |p| build(p, false, true, false));
    r.register(BACKOFF_GEOM_ARITH, |p| build(p, true, false, false));
    r.register(BACKOFF_GEOM_GEOM, |p| build(p, true, true, false));
    r.register(FILTERED_BACKOFF_ARITH_ARITH, |p| {
        build(p, false, false, true)
    });
    r.register(FILTERED_BACKOFF_ARITH_GEOM, |p| build(p, false, true, true));
    r.register(FILTERED_BACKOFF_GEOM_ARITH, |p| build(p, true, false, true));
    r.register(FILTERED_BACKOFF_GEOM_GEOM, |p| build(p, true, true, true));
}

/// The gauge of every backoff predictor: its current estimate.
const ESTIMATE_GAUGES: &[GaugeInfo] = &[GaugeInfo::new(
    "estimate_s",
    "predicted idle time",
    GaugeUnit::Seconds,
)];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjust::Step;
    use crate::testutil::{run, s, trace};
    use crate::timer::Timer;

    fn preds(v: &[(f64, f64)]) -> Vec<(Nanos, Nanos, Option<Nanos>)> {
        v.iter().map(|&(a, d)| (s(a), s(a), Some(s(d)))).collect()
    }

    #[test]
    fn arith_geom_at_end_of_period() {
        let est = Bounded::new(s(4.0), s(0.5), s(20.0), Step::Arith(s(1.0)), Step::Geom);
        let t = trace(&[(0.0, 1.0), (11.0, 12.0), (14.0, 15.0), (25.0, 26.0)]);
        let (p, e) = run(
            Timer::new(Nanos::ZERO),
            Backoff::new(est, AdjustAt::Period, Nanos::ZERO),
            &t,
        );
        assert_eq!(
            p,
            preds(&[
                // 1..11: 4 s, continued unchanged; 10 > 4 -> 5 s
                (1.0, 4.0),
                (5.0, 4.0),
                (9.0, 4.0),
                // 12..14: 2 < 5 -> halved to 2.5 s
                (12.0, 5.0),
                // 15..25: 10 > 2.5 -> 3.5 s
                (15.0, 2.5),
                (17.5, 2.5),
                (20.0, 2.5),
                (22.5, 2.5),
                // A deadline at the arrival's instant fires first (core's rule).
                (25.0, 2.5),
                // The idle period the last completion opens (the trace ends).
                (26.0, 3.5),
            ])
        );
        assert_eq!(e.detector().duration_predictor().estimate(), s(3.5));
    }

    #[test]
    fn geom_arith_at_end_of_prediction_extends_continuances() {
        let est = Bounded::new(s(2.0), s(1.0), s(16.0), Step::Geom, Step::Arith(s(1.0)));
        let t = trace(&[(0.0, 1.0), (12.0, 13.0), (14.0, 15.0)]);
        let (p, e) = run(
            Timer::new(Nanos::ZERO),
            Backoff::new(est, AdjustAt::Prediction, Nanos::ZERO),
            &t,
        );
        // 1..12: 2 s runs out -> 4 s, runs out -> 8 s, cut at 12 -> 7 s;
        // 13..14: 7 s cut after 1 s -> 6 s; the trace ends at 15.
        assert_eq!(
            p,
            preds(&[(1.0, 2.0), (3.0, 4.0), (7.0, 8.0), (13.0, 7.0), (15.0, 6.0)])
        );
        assert_eq!(e.detector().duration_predictor().estimate(), s(6.0));
    }

    #[test]
    fn filtered_ignores_short_periods() {
        let est = Bounded::new(
            s(2.0),
            s(1.0),
            s(10.0),
            Step::Arith(s(1.0)),
            Step::Arith(s(1.0)),
        );
        let t = trace(&[(0.0, 1.0), (2.0, 3.0), (10.0, 11.0)]);
        let (p, e) = run(
            Timer::new(Nanos::ZERO),
            Backoff::new(est, AdjustAt::Period, s(3.0)),
            &t,
        );
        // 1..2 is shorter than min: no change; 3..10 (7 s > 2 s) -> 3 s.
        assert_eq!(
            p,
            preds(&[
                (1.0, 2.0),
                (3.0, 2.0),
                (5.0, 2.0),
                (7.0, 2.0),
                (9.0, 2.0),
                (11.0, 3.0)
            ])
        );
        assert_eq!(e.detector().duration_predictor().estimate(), s(3.0));
    }
}
