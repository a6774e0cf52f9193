//! Duration predictors (§3.1.2).

use lull_core::component::DurationPredictor;
use lull_core::registry::{Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

/// `no-duration`: makes no prediction; the idle period lasts "until busy".
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDuration;

impl DurationPredictor for NoDuration {
    fn wants_events(&self) -> bool {
        false
    }
    fn ignores_idle_periods(&self) -> bool {
        true
    }
    fn duration(&mut self, _now: Nanos) -> Option<Nanos> {
        None
    }
}

/// `fixed(d)`: always predicts `d` (Table 5 "Fixed"); "enough time to run
/// the idle task once" in the paper's words.
///
/// With `renew=true` a prediction that ran out while the device is still
/// idle is continued by another `d`; by default it is not, as in the
/// paper's experiments where the task "ran for 10 s, whether new work
/// arrived or not".
#[derive(Clone, Copy, Debug)]
pub struct Fixed {
    d: Nanos,
    renew: bool,
}

impl Fixed {
    /// Predicts `d`; continues with another `d` if `renew`.
    pub fn new(d: Nanos, renew: bool) -> Self {
        Fixed { d, renew }
    }
}

impl DurationPredictor for Fixed {
    fn wants_events(&self) -> bool {
        false
    }
    fn ignores_idle_periods(&self) -> bool {
        true
    }
    fn duration(&mut self, _now: Nanos) -> Option<Nanos> {
        Some(self.d)
    }
    fn continuance(&mut self, _now: Nanos, _elapsed: Nanos) -> Option<Nanos> {
        self.renew.then_some(self.d)
    }
}

/// Catalogue entry of `no-duration`.
pub const NO_DURATION: ComponentInfo = ComponentInfo {
    name: "no-duration",
    role: Role::DurationPredictor,
    summary: "no prediction: idle until the device is busy again",
    source: "§3.1.2 no duration",
    params: &[],
    inputs: None,
    offline: false,
    gauges: &[],
};

/// Catalogue entry of `fixed`.
pub const FIXED: ComponentInfo = ComponentInfo {
    name: "fixed",
    role: Role::DurationPredictor,
    summary: "predicts the same duration every time",
    source: "§3.1.2 fixed duration, Table 5 Fixed",
    params: &[
        ParamInfo::required(
            "d",
            ParamKind::Duration,
            "s",
            "the predicted duration (> 0)",
        ),
        ParamInfo::optional(
            "renew",
            ParamKind::Bool,
            "false",
            "",
            "continue a prediction that ran out while still idle by another d",
        ),
    ],
    inputs: None,
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(NO_DURATION, |_| Ok(Built::Duration(Box::new(NoDuration))));
    r.register(FIXED, |p| {
        Ok(Built::Duration(Box::new(Fixed::new(
            p.positive_duration("d")?,
            p.bool("renew")?,
        ))))
    });
}
