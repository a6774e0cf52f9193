//! Shared machinery of the adaptive families: a value kept between a floor
//! and a ceiling that is lengthened and shortened arithmetically (add or
//! subtract a step) or geometrically (double or halve).
//!
//! Used by the adaptive timers (`adapt-timer-*`, §3.1.1, Table 4) and the
//! backoff duration predictors (`backoff-*`, `filtered-backoff-*`, §3.1.2,
//! Table 5). In a name such as `adapt-timer-arith-geom` the first word says
//! how the value is lengthened and the second how it is shortened.

use lull_core::registry::{ParamError, ParamInfo, ParamKind, Params};
use lull_core::time::Nanos;

/// One direction of adjustment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Add (lengthen) or subtract (shorten) a constant.
    Arith(Nanos),
    /// Double (lengthen) or halve (shorten).
    Geom,
}

impl Step {
    /// A length of `x` nanoseconds lengthened by this step (lengths are
    /// `f64` nanoseconds: see [`Bounded`]).
    pub fn up(self, x: f64) -> f64 {
        match self {
            Step::Arith(s) => x + s.0 as f64,
            Step::Geom => x * 2.0,
        }
    }
    /// A length of `x` nanoseconds shortened by this step, not below zero.
    pub fn down(self, x: f64) -> f64 {
        match self {
            Step::Arith(s) => (x - s.0 as f64).max(0.0),
            Step::Geom => x / 2.0,
        }
    }
}

/// A length kept within `[floor, ceiling]` and adjusted by [`Step`]s.
///
/// The length is kept in nanoseconds as an `f64`, not as whole
/// nanoseconds: halving an odd length would drop half a nanosecond that
/// the next doubling doubles, so over many periods the value would drift
/// from what the same adjustments give on a trace scaled by a power of
/// two (`crates/rank/tests/scale_invariance.rs` found 2.5 µs in a day).
/// An `f64` halves and doubles exactly and holds every whole nanosecond up
/// to 104 days; [`Bounded::value`] rounds to the nearest nanosecond.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounded {
    value: f64,
    floor: Nanos,
    ceiling: Nanos,
    up: Step,
    down: Step,
}

impl Bounded {
    /// Starts at `initial` (clamped into `[floor, ceiling]`), lengthens by
    /// `up` and shortens by `down`.
    ///
    /// # Panics
    /// If `floor > ceiling` (the factories reject that as a parameter error
    /// first).
    pub fn new(initial: Nanos, floor: Nanos, ceiling: Nanos, up: Step, down: Step) -> Self {
        assert!(floor <= ceiling, "floor above ceiling");
        Bounded {
            value: initial.clamp(floor, ceiling).0 as f64,
            floor,
            ceiling,
            up,
            down,
        }
    }
    /// Sets the value to `v` (a restored state, [`lull_core::learned`]):
    /// an error when it lies outside `[floor, ceiling]`.
    pub fn restore(&mut self, v: f64) -> Result<(), lull_core::learned::LearnedError> {
        if !(v >= self.floor.0 as f64 && v <= self.ceiling.0 as f64) {
            return Err(lull_core::learned::LearnedError::new(format!(
                "{} is outside the bounds [{}, {}]",
                Nanos::from_secs_f64(v / 1e9).approx(),
                self.floor.approx(),
                self.ceiling.approx()
            )));
        }
        self.value = v;
        Ok(())
    }
    /// The current value, to the nearest nanosecond.
    pub fn value(&self) -> Nanos {
        Nanos(self.value.round() as u64)
    }
    /// The current value in nanoseconds, unrounded: what a saved state
    /// keeps, so that a restored copy adjusts exactly alike.
    pub fn exact(&self) -> f64 {
        self.value
    }
    /// The floor.
    pub fn floor(&self) -> Nanos {
        self.floor
    }
    /// The ceiling.
    pub fn ceiling(&self) -> Nanos {
        self.ceiling
    }
    /// Lengthens the value by one step, up to the ceiling.
    pub fn lengthen(&mut self) {
        self.value = self.clamped(self.up.up(self.value));
    }
    /// Shortens the value by one step, down to the floor.
    pub fn shorten(&mut self) {
        self.value = self.clamped(self.down.down(self.value));
    }
    fn clamped(&self, v: f64) -> f64 {
        v.clamp(self.floor.0 as f64, self.ceiling.0 as f64)
    }

    /// Reads `step` (when either direction is arithmetic), `initial`,
    /// `floor` and `ceiling`, and checks them: `step > 0`, `floor ≤
    /// ceiling`, `floor ≤ initial ≤ ceiling`, and `floor > 0` when the
    /// value lengthens by doubling (zero doubled stays zero).
    pub(crate) fn from_params(
        p: &Params,
        up_geom: bool,
        down_geom: bool,
    ) -> Result<Self, ParamError> {
        let step = if up_geom && down_geom {
            Nanos::ZERO
        } else {
            p.positive_duration("step")?
        };
        let initial = p.duration("initial")?;
        let floor = p.duration("floor")?;
        let ceiling = p.duration("ceiling")?;
        if floor > ceiling {
            return Err(ParamError::new(
                "floor",
                format!("floor {floor} is above ceiling {ceiling}"),
            ));
        }
        if up_geom && floor == Nanos::ZERO {
            return Err(ParamError::new(
                "floor",
                "must be greater than 0 when lengthening by doubling (0 doubled stays 0)",
            ));
        }
        if initial < floor || initial > ceiling {
            return Err(ParamError::new(
                "initial",
                format!("{initial} is outside [floor {floor}, ceiling {ceiling}]"),
            ));
        }
        let dir = |geom: bool| if geom { Step::Geom } else { Step::Arith(step) };
        Ok(Bounded::new(
            initial,
            floor,
            ceiling,
            dir(up_geom),
            dir(down_geom),
        ))
    }
}

/// The `step` parameter.
pub(crate) const STEP: ParamInfo = ParamInfo::required(
    "step",
    ParamKind::Duration,
    "s",
    "increment added or subtracted by the arithmetic direction(s) (> 0)",
);

/// `initial` of adaptive timers.
pub(crate) const T_INITIAL: ParamInfo = ParamInfo::optional(
    "initial",
    ParamKind::Duration,
    "B",
    "s",
    "timeout before any feedback (default: the device's break-even time B)",
);
/// `floor` of adaptive timers.
pub(crate) const T_FLOOR: ParamInfo = ParamInfo::optional(
    "floor",
    ParamKind::Duration,
    "B/16",
    "s",
    "shortest timeout (> 0 when lengthening by doubling; default B/16)",
);
/// `ceiling` of adaptive timers.
pub(crate) const T_CEILING: ParamInfo = ParamInfo::optional(
    "ceiling",
    ParamKind::Duration,
    "16B",
    "s",
    "longest timeout (>= floor; default 16·B)",
);
/// `missed` of adaptive timers: how long an idle period in which the
/// timer did not fire must be to count as a missed opportunity.
pub(crate) const T_MISSED: ParamInfo = ParamInfo::optional(
    "missed",
    ParamKind::Duration,
    "B",
    "s",
    "an idle period at least this long that ended before the timeout fired shortens the timeout (default B: acting in it would have paid off; 0 turns this off)",
);
/// `initial` of backoff predictors.
pub(crate) const B_INITIAL: ParamInfo = ParamInfo::optional(
    "initial",
    ParamKind::Duration,
    "1s",
    "s",
    "estimate before any feedback",
);
/// `floor` of backoff predictors.
pub(crate) const B_FLOOR: ParamInfo = ParamInfo::optional(
    "floor",
    ParamKind::Duration,
    "10ms",
    "s",
    "shortest estimate (> 0 when lengthening by doubling)",
);
/// `ceiling` of backoff predictors.
pub(crate) const B_CEILING: ParamInfo = ParamInfo::optional(
    "ceiling",
    ParamKind::Duration,
    "10m",
    "s",
    "longest estimate (>= floor)",
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Halving an odd length and doubling it back gives the length again,
    /// as it does on a trace scaled by two: nothing is lost to whole
    /// nanoseconds between adjustments (the type's docs).
    #[test]
    fn halvings_lose_nothing_between_adjustments() {
        let mut b = Bounded::new(
            Nanos(1_001),
            Nanos(1),
            Nanos(1 << 40),
            Step::Geom,
            Step::Geom,
        );
        for _ in 0..5 {
            b.shorten();
        }
        assert_eq!(b.exact(), 1_001.0 / 32.0);
        assert_eq!(b.value(), Nanos(31), "rounded to the nearest (31.28)");
        for _ in 0..5 {
            b.lengthen();
        }
        assert_eq!(b.value(), Nanos(1_001));
        // The same adjustments at twice the scale are exactly twice.
        let mut k = Bounded::new(
            Nanos(2_002),
            Nanos(2),
            Nanos(1 << 41),
            Step::Geom,
            Step::Geom,
        );
        for _ in 0..5 {
            k.shorten();
        }
        assert_eq!(k.exact(), 2.0 * b.exact() / 32.0);
    }

    #[test]
    fn steps_stay_within_bounds() {
        let s = Nanos::from_secs;
        let mut b = Bounded::new(s(2), s(1), s(5), Step::Arith(s(2)), Step::Geom);
        b.lengthen();
        assert_eq!(b.value(), s(4));
        b.lengthen();
        assert_eq!(b.value(), s(5));
        b.shorten();
        assert_eq!(b.value(), Nanos::from_millis(2500));
        b.shorten();
        b.shorten();
        assert_eq!(b.value(), s(1));
    }
}
