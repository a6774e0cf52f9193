//! `low-pass(min)`: drops short predictions (§3.2 *low-pass*).

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::registry::{Arity, Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

/// `low-pass(min)`: discards predicted periods shorter than `min`, e.g.
/// the duration of the idle task ("discards predicted periods that are
/// shorter than some threshold", §3.2).
///
/// - A prediction with a duration `d` passes, unchanged, when `d ≥ min`.
/// - A prediction with no duration ("until busy") always passes: it makes
///   no claim about its length, so nothing shows it is too short.
/// - Each prediction is judged on its own, continuances included (a
///   continuance shorter than `min` is dropped even if the prediction it
///   continues passed).
///
/// Stateless; `low-pass(min=0s)` passes everything.
#[derive(Clone, Copy, Debug)]
pub struct LowPass {
    min: Nanos,
}

impl LowPass {
    /// Passes predictions of at least `min`.
    pub fn new(min: Nanos) -> Self {
        LowPass { min }
    }
    /// The shortest duration that passes.
    pub fn min(&self) -> Nanos {
        self.min
    }
}

impl Skeptic for LowPass {
    fn on_input(&mut self, _input: usize, p: &Prediction, _ctx: &Context) -> Option<Prediction> {
        match p.duration {
            Some(d) if d < self.min => None,
            _ => Some(*p),
        }
    }
}

/// Catalogue entry of `low-pass`.
pub const LOW_PASS: ComponentInfo = ComponentInfo {
    name: "low-pass",
    role: Role::Skeptic,
    summary: "drops predictions shorter than min (no-duration predictions pass)",
    source: "§3.2 skeptics: low-pass",
    params: &[ParamInfo::required(
        "min",
        ParamKind::Duration,
        "s",
        "shortest predicted duration that passes",
    )],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(LOW_PASS, |p| {
        Ok(Built::Skeptic(Box::new(LowPass::new(p.duration("min")?))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_short_predictions_and_keeps_the_rest() {
        let s = Nanos::from_secs;
        let mut lp = LowPass::new(s(3));
        let ctx = Context::at(s(0));
        let short = Prediction::new(s(0), Some(Nanos::from_millis(2999)));
        let exact = Prediction::new(s(0), Some(s(3)));
        let open = Prediction::new(s(0), None);
        assert_eq!(lp.on_input(0, &short, &ctx), None);
        assert_eq!(lp.on_input(0, &exact, &ctx), Some(exact));
        assert_eq!(lp.on_input(0, &open, &ctx), Some(open));
    }
}
