//! Adaptive timers (§3.1.1 "timer-based … adaptive", Table 4
//! `AdaptTimerArithArith`, `AdaptTimerArithGeom`, `AdaptTimerGeomArith`,
//! `AdaptTimerGeomGeom`).
//!
//! Like `timer(t)`, an adaptive timer declares an idle period once the
//! device has been idle for its current timeout. After each prediction it
//! issued, it judges the prediction when the idle period ends (the next
//! arrival):
//!
//! - **too eager** — a request arrived within the prediction, i.e. before
//!   `start + duration` — the timeout is **lengthened**;
//! - **too conservative** — the idle period outlasted the prediction — the
//!   timeout is **shortened**.
//!
//! A prediction with no duration (`+ no-duration`) always ends with an
//! arrival, so it is judged against the wait instead: too eager when the
//! declared part (`arrival − start`) was shorter than the timeout the
//! detector waited before declaring, too conservative otherwise (it waited
//! a small share of a long period).
//!
//! **Missed opportunities.** An idle period in which the timer did not fire
//! but that lasted at least `missed` (default: the device's break-even time
//! `B`, beyond which acting would have paid off) also **shortens** the
//! timeout. The paper's rule judges only predictions that were made, so a
//! timeout that once grew past the typical long gap never fires again and
//! stays at its ceiling forever, however long the idle periods it sits out;
//! this feedback lets it come back. `missed=0` restores the paper's rule.
//!
//! The timeout always stays within `[floor, ceiling]`. The first word of the
//! name says how it lengthens (`arith`: add `step`; `geom`: double), the
//! second how it shortens (`arith`: subtract `step`; `geom`: halve).
//!
//! These detectors require full idleness: they only declare while no request
//! is outstanding.

use lull_core::component::{Context, Prediction, Start, StartDetector};
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{
    Built, ComponentInfo, GaugeInfo, GaugeUnit, ParamError, Params, Registry, Role,
};
use lull_core::time::Nanos;

use crate::adjust::{Bounded, STEP, T_CEILING, T_FLOOR, T_INITIAL, T_MISSED};
use crate::timer::Alarm;

/// An adaptive timer (`adapt-timer-*`); see the [module docs](self).
#[derive(Clone, Debug)]
pub struct AdaptiveTimer {
    timeout: Bounded,
    /// Periods at least this long that the timer sat out shorten it
    /// (`None`: off).
    missed: Option<Nanos>,
    armed: Alarm,
    /// The prediction issued in the current idle period and the timeout it
    /// waited for.
    issued: Option<(Prediction, Nanos)>,
}

impl AdaptiveTimer {
    /// An adaptive timer whose timeout is `timeout`, judging only the
    /// predictions it made (the paper's rule).
    pub fn new(timeout: Bounded) -> Self {
        AdaptiveTimer {
            timeout,
            missed: None,
            armed: Alarm::default(),
            issued: None,
        }
    }
    /// Also shortens the timeout after an idle period of at least
    /// `missed` in which it did not fire (`Nanos::ZERO`: off).
    pub fn with_missed(mut self, missed: Nanos) -> Self {
        self.missed = (missed > Nanos::ZERO).then_some(missed);
        self
    }
    /// The current timeout.
    pub fn timeout(&self) -> Nanos {
        self.timeout.value()
    }
    /// The adjustable timeout with its bounds.
    pub fn bounds(&self) -> &Bounded {
        &self.timeout
    }
}

impl StartDetector for AdaptiveTimer {
    // As for the plain timer: the alarm is armed only inside an announced
    // idle period, so the arrival that ends it (told through
    // `on_idle_end`) is the only one that matters.
    fn wants_events(&self) -> bool {
        false
    }
    fn gauges(&self) -> Vec<(String, f64)> {
        vec![("timeout_s".into(), self.timeout.value().as_secs_f64())]
    }
    fn quiet_below(&self) -> Nanos {
        // With no alarm armed and no prediction to judge, a period shorter
        // than the timeout arms and disarms the alarm and judges nothing.
        // A period long enough to be a missed opportunity must be seen.
        if self.armed.deadline().is_none() && self.issued.is_none() {
            self.missed
                .map_or(self.timeout.value(), |m| m.min(self.timeout.value()))
        } else {
            Nanos::ZERO
        }
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.armed.arm(ctx.now + self.timeout.value());
        None
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        let fired = self.armed.deadline().is_none();
        self.armed.disarm();
        if self.issued.is_none() && !fired {
            if self.missed.is_some_and(|m| ctx.now - began >= m) {
                self.timeout.shorten();
            }
            return;
        }
        if let Some((p, waited)) = self.issued.take() {
            let eager = match p.duration {
                Some(d) => ctx.now < p.start + d,
                None => ctx.now - p.start < waited,
            };
            if eager {
                self.timeout.lengthen();
            } else {
                self.timeout.shorten();
            }
        }
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.armed.deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        self.armed.fire(ctx.now)
    }
    fn save(&self, _now: Nanos) -> Option<Learned> {
        Some(Learned::new(
            "adaptive-timer",
            1,
            vec![self.timeout.exact()],
        ))
    }
    fn restore(&mut self, l: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect("adaptive-timer", 1, 1)?;
        self.timeout
            .restore(v[0])
            .map_err(|e| LearnedError::new(format!("adaptive-timer: timeout {e}")))
    }
    fn on_prediction(&mut self, p: &Prediction) {
        // The timeout waited for: it changes only at idle ends, after this.
        self.issued = Some((*p, self.timeout.value()));
    }
}

const fn info(
    name: &'static str,
    summary: &'static str,
    source: &'static str,
    params: &'static [lull_core::registry::ParamInfo],
) -> ComponentInfo {
    ComponentInfo {
        name,
        role: Role::StartDetector,
        summary,
        source,
        params,
        inputs: None,
        offline: false,
        gauges: TIMEOUT_GAUGES,
    }
}

/// Catalogue entry of `adapt-timer-arith-arith`.
pub const ADAPT_TIMER_ARITH_ARITH: ComponentInfo = info(
    "adapt-timer-arith-arith",
    "adaptive timeout: +step when too eager, -step when too conservative",
    "§3.1.1 timer-based (adaptive), Table 4 AdaptTimerArithArith",
    &[STEP, T_INITIAL, T_FLOOR, T_CEILING, T_MISSED],
);
/// Catalogue entry of `adapt-timer-arith-geom`.
pub const ADAPT_TIMER_ARITH_GEOM: ComponentInfo = info(
    "adapt-timer-arith-geom",
    "adaptive timeout: +step when too eager, halved when too conservative",
    "§3.1.1 timer-based (adaptive), Table 4 AdaptTimerArithGeom",
    &[STEP, T_INITIAL, T_FLOOR, T_CEILING, T_MISSED],
);
/// Catalogue entry of `adapt-timer-geom-arith`.
pub const ADAPT_TIMER_GEOM_ARITH: ComponentInfo = info(
    "adapt-timer-geom-arith",
    "adaptive timeout: doubled when too eager, -step when too conservative",
    "§3.1.1 timer-based (adaptive), Table 4 AdaptTimerGeomArith",
    &[STEP, T_INITIAL, T_FLOOR, T_CEILING, T_MISSED],
);
/// Catalogue entry of `adapt-timer-geom-geom`.
pub const ADAPT_TIMER_GEOM_GEOM: ComponentInfo = info(
    "adapt-timer-geom-geom",
    "adaptive timeout: doubled when too eager, halved when too conservative",
    "§3.1.1 timer-based (adaptive), Table 4 AdaptTimerGeomGeom",
    &[T_INITIAL, T_FLOOR, T_CEILING, T_MISSED],
);

fn build(p: &Params, up_geom: bool, down_geom: bool) -> Result<Built, ParamError> {
    Ok(Built::Start(Box::new(
        AdaptiveTimer::new(Bounded::from_params(p, up_geom, down_geom)?)
            .with_missed(p.duration("missed")?),
    )))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(ADAPT_TIMER_ARITH_ARITH, |p| build(p, false, false));
    r.register(ADAPT_TIMER_ARITH_GEOM, |p| build(p, false, true));
    r.register(ADAPT_TIMER_GEOM_ARITH, |p| build(p, true, false));
    r.register(ADAPT_TIMER_GEOM_GEOM, |p| build(p, true, true));
}

/// The gauge of every adaptive timer: its current timeout.
const TIMEOUT_GAUGES: &[GaugeInfo] = &[GaugeInfo::new("timeout_s", "timeout", GaugeUnit::Seconds)];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjust::Step;
    use crate::duration::{Fixed, NoDuration};
    use crate::testutil::{run, s, trace};

    #[test]
    fn arith_arith_adjusts_over_several_periods() {
        let b = Bounded::new(
            s(2.0),
            s(1.0),
            s(4.0),
            Step::Arith(s(1.0)),
            Step::Arith(s(1.0)),
        );
        let t = trace(&[
            (0.0, 1.0),
            (5.0, 6.0),     // idle 1..5: fires at 3, [3,8) cut at 5: eager -> 3 s
            (30.0, 31.0),   // idle 6..30: fires at 9, [9,14) outlasted: -> 2 s
            (34.0, 35.0),   // idle 31..34: fires at 33, cut at 34: eager -> 3 s
            (38.5, 39.0),   // idle 35..38.5: fires at 38, cut: eager -> 4 s
            (44.0, 45.0),   // idle 39..44: fires at 43, cut: eager -> 4 s (ceiling)
            (100.0, 101.0), // idle 45..100: fires at 49, outlasted -> 3 s
        ]);
        let (preds, e) = run(AdaptiveTimer::new(b), Fixed::new(s(5.0), false), &t);
        let starts: Vec<_> = preds.iter().map(|p| (p.0, p.1, p.2)).collect();
        let want: Vec<_> = [3.0, 9.0, 33.0, 38.0, 43.0, 49.0]
            .iter()
            .map(|&x| (s(x), s(x), Some(s(5.0))))
            .collect();
        assert_eq!(starts, want);
        assert_eq!(e.detector().start_detector().timeout(), s(3.0));
    }

    #[test]
    fn geom_geom_with_no_duration_judges_against_the_wait() {
        let b = Bounded::new(s(1.0), s(0.5), s(8.0), Step::Geom, Step::Geom);
        let t = trace(&[
            (0.0, 1.0),
            (2.5, 3.0),   // fires at 2, declared 0.5 < waited 1: eager -> 2 s
            (20.0, 21.0), // fires at 5, declared 15 >= 2: -> 1 s
            (21.5, 22.0), // idle 0.5 < 1: no prediction, unchanged
            (40.0, 41.0), // fires at 23, declared 17: -> 0.5 s
            (41.2, 41.3), // idle 0.2 < 0.5: nothing
        ]);
        let (preds, e) = run(AdaptiveTimer::new(b), NoDuration, &t);
        let want: Vec<_> = [2.0, 5.0, 23.0]
            .iter()
            .map(|&x| (s(x), s(x), None))
            .collect();
        assert_eq!(preds, want);
        assert_eq!(e.detector().start_detector().timeout(), s(0.5));
    }
}
