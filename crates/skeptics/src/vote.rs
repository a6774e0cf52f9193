//! Combining skeptics that vote (§3.2): `and(...)`, `vote(threshold)` and
//! `weighted-vote(weights, threshold)`.

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::event::Event;
use lull_core::registry::{
    Arity, Built, ComponentInfo, ParamError, ParamInfo, ParamKind, Registry, Role,
};

use crate::track::{LiveSet, cover_vote};

/// The state every voting combiner shares: the live prediction of each
/// input, fixed weights, a threshold, and the last prediction emitted.
///
/// On each input prediction it updates that input's live prediction and
/// takes the weighted cover vote: the earliest instant `t ≥ now` at which
/// the live predictions covering `t` weigh at least `threshold`, and the
/// interval `[t, end)` that a set of them reaching the threshold all
/// cover (taken longest first). That interval is emitted, unless it is the
/// one emitted last. It is a sub-interval of every prediction that voted
/// for it.
///
/// Input predictions stay live until their end, until the same input makes
/// a newer one, or until an arrival at or after their start (the device is
/// busy: the idle period they were about is over).
///
/// A combiner cannot take back a prediction it has emitted: if a newer
/// input prediction loses the vote, what was emitted stands (the actuator
/// and its stop policy end it).
#[derive(Clone, Debug)]
struct Ballot {
    live: LiveSet,
    weights: Vec<f64>,
    threshold: f64,
    last: Option<Prediction>,
}

impl Ballot {
    fn new(weights: Vec<f64>, threshold: f64) -> Self {
        Ballot {
            live: LiveSet::new(weights.len()),
            weights,
            threshold,
            last: None,
        }
    }
    fn on_input(&mut self, input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> {
        self.live.expire(ctx.now);
        if !self.live.set(input, *p) {
            return None;
        }
        let w = &self.weights;
        let out = cover_vote(self.live.slots(), |i| w[i], self.threshold, ctx.now)?;
        if self.last == Some(out) {
            return None;
        }
        self.last = Some(out);
        Some(out)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) {
        if ev.is_arrival() {
            self.live.arrival(ctx.now);
            self.last = None;
        }
    }
}

/// `and(...)`: emits only when all its inputs currently predict idleness,
/// with the overlap of their predictions as the prediction (§3.2: "only
/// reporting a prediction when both agree").
///
/// When an input prediction arrives and every input has a live prediction
/// (see [`Vote`] for when one is live) whose intervals overlap, it emits
/// `[max start, min end)` (from `now` at the earliest). "No duration" is
/// an end of never. It is [`Vote`] with a threshold of all inputs.
#[derive(Clone, Debug)]
pub struct And(Ballot);

impl And {
    /// An `and` over `inputs` inputs.
    pub fn new(inputs: usize) -> Self {
        And(Ballot::new(vec![1.0; inputs], inputs as f64))
    }
}

/// `vote(threshold)`: emits when at least `threshold` of its inputs
/// currently predict idleness (§3.2, "when the weights are equal and
/// fixed, this becomes simple voting").
///
/// Each input keeps its latest prediction while it is live: until its end,
/// until the same input makes a newer one, or until a request arrives at
/// or after its start. When an input prediction arrives, the skeptic looks
/// for the earliest instant `t ≥ now` that at least `threshold` live
/// predictions cover, and emits `[t, end)` where `end` is the
/// `threshold`-th latest end among the predictions covering `t`: the
/// longest interval that `threshold` inputs all predicted. Nothing is
/// emitted when the result is the one emitted last.
#[derive(Clone, Debug)]
pub struct Vote(Ballot);

impl Vote {
    /// Emits when `threshold` of `inputs` inputs agree.
    pub fn new(inputs: usize, threshold: usize) -> Self {
        Vote(Ballot::new(vec![1.0; inputs], threshold as f64))
    }
}

/// `weighted-vote(weights, threshold)`: each input has a fixed weight, and
/// a prediction is emitted only when the combined weight of the inputs
/// predicting idleness reaches `threshold` (§3.2, weighted voting).
///
/// As [`Vote`], with weights: at the earliest instant `t ≥ now` where the
/// live predictions covering `t` weigh at least `threshold`, those are
/// taken longest first until their weights reach the threshold, and
/// `[t, end of the last one taken)` is emitted.
#[derive(Clone, Debug)]
pub struct WeightedVote(Ballot);

impl WeightedVote {
    /// One weight per input (≥ 0), and the weight needed (> 0).
    pub fn new(weights: Vec<f64>, threshold: f64) -> Self {
        WeightedVote(Ballot::new(weights, threshold))
    }
}

macro_rules! ballot_skeptic {
    ($t:ty) => {
        impl Skeptic for $t {
            fn on_input(
                &mut self,
                input: usize,
                p: &Prediction,
                ctx: &Context,
            ) -> Option<Prediction> {
                self.0.on_input(input, p, ctx)
            }
            fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> {
                self.0.on_event(ev, ctx);
                None
            }
        }
    };
}

ballot_skeptic!(And);
ballot_skeptic!(Vote);
ballot_skeptic!(WeightedVote);

/// Catalogue entry of `and`.
pub const AND: ComponentInfo = ComponentInfo {
    name: "and",
    role: Role::Skeptic,
    summary: "emits the overlap of its inputs' predictions when all of them predict idleness",
    source: "§3.2 skeptics: combining (\"only reporting a prediction when both agree\")",
    params: &[],
    inputs: Some(Arity::MANY),
    offline: false,
    gauges: &[],
};

/// Catalogue entry of `vote`.
pub const VOTE: ComponentInfo = ComponentInfo {
    name: "vote",
    role: Role::Skeptic,
    summary: "emits when at least threshold inputs predict idleness, for as long as that many agree",
    source: "§3.2 skeptics: simple voting",
    params: &[ParamInfo::required(
        "threshold",
        ParamKind::Int,
        "inputs",
        "how many inputs must agree, 1 to the number of inputs",
    )],
    inputs: Some(Arity::MANY),
    offline: false,
    gauges: &[],
};

/// Catalogue entry of `weighted-vote`.
pub const WEIGHTED_VOTE: ComponentInfo = ComponentInfo {
    name: "weighted-vote",
    role: Role::Skeptic,
    summary: "emits when the inputs predicting idleness weigh at least threshold",
    source: "§3.2 skeptics: weighted voting",
    params: &[
        ParamInfo::required(
            "weights",
            ParamKind::FloatList,
            "",
            "one weight ≥ 0 per input, in input order: [1, 2, 0.5]",
        ),
        ParamInfo::required(
            "threshold",
            ParamKind::Float,
            "",
            "combined weight needed (> 0, at most the sum of the weights)",
        ),
    ],
    inputs: Some(Arity::MANY),
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(AND, |p| Ok(Built::Skeptic(Box::new(And::new(p.inputs())))));
    r.register(VOTE, |p| {
        let n = p.inputs().max(1) as u64;
        let threshold = p.int_in("threshold", 1, n)? as usize;
        Ok(Built::Skeptic(Box::new(Vote::new(p.inputs(), threshold))))
    });
    r.register(WEIGHTED_VOTE, |p| {
        let weights = p.floats("weights")?.to_vec();
        if weights.len() != p.inputs() {
            return Err(ParamError::new(
                "weights",
                format!(
                    "has {} weight(s) for {} input(s): give one weight per input",
                    weights.len(),
                    p.inputs()
                ),
            ));
        }
        if let Some(w) = weights.iter().find(|w| **w < 0.0 || w.is_nan()) {
            return Err(ParamError::new(
                "weights",
                format!("{w} is negative: weights must be ≥ 0"),
            ));
        }
        let threshold = p.positive_float("threshold")?;
        let total: f64 = weights.iter().sum();
        if threshold > total * (1.0 + 1e-9) {
            return Err(ParamError::new(
                "threshold",
                format!("{threshold} is more than the sum of the weights ({total}): it could never be reached"),
            ));
        }
        Ok(Built::Skeptic(Box::new(WeightedVote::new(weights, threshold))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request};
    use lull_core::time::Nanos;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }
    fn p(start: u64, d: Option<u64>) -> Prediction {
        Prediction::new(s(start), d.map(s))
    }
    fn at(t: u64) -> Context {
        Context::at(s(t))
    }
    fn arrive(k: &mut dyn Skeptic, t: u64) {
        let r = Request::new(s(t), s(t) + Nanos::from_millis(1), Op::Read, 0, 512);
        let ctx = Context {
            outstanding: 1,
            ..at(t)
        };
        k.on_event(&Event::arrival(&r), &ctx);
    }

    #[test]
    fn and_emits_the_overlap_when_all_agree() {
        let mut a = And::new(2);
        assert_eq!(a.on_input(0, &p(10, Some(20)), &at(10)), None);
        assert_eq!(
            a.on_input(1, &p(12, Some(5)), &at(12)),
            Some(p(12, Some(5)))
        );
        // The same again: nothing new.
        assert_eq!(a.on_input(1, &p(12, Some(5)), &at(12)), None);
        // Input 1 continues: the overlap grows to input 0's end.
        assert_eq!(a.on_input(1, &p(17, None), &at(17)), Some(p(17, Some(13))));
        // An arrival ends both; input 0 alone is not enough.
        arrive(&mut a, 20);
        assert_eq!(a.on_input(0, &p(25, None), &at(25)), None);
        assert_eq!(a.on_input(1, &p(26, None), &at(26)), Some(p(26, None)));
    }

    #[test]
    fn and_ignores_predictions_that_ran_out() {
        let mut a = And::new(3);
        a.on_input(0, &p(0, Some(5)), &at(0));
        a.on_input(1, &p(0, None), &at(0));
        // Input 0 ran out at 5 s.
        assert_eq!(a.on_input(2, &p(6, Some(1)), &at(6)), None);
        assert_eq!(
            a.on_input(0, &p(7, Some(9)), &at(7)),
            None,
            "input 2 ran out at 7 s"
        );
        assert_eq!(a.on_input(2, &p(8, Some(3)), &at(8)), Some(p(8, Some(3))));
    }

    #[test]
    fn vote_needs_threshold_inputs_and_lasts_while_they_agree() {
        let mut v = Vote::new(3, 2);
        assert_eq!(v.on_input(0, &p(0, Some(10)), &at(0)), None);
        assert_eq!(v.on_input(2, &p(1, Some(3)), &at(1)), Some(p(1, Some(3))));
        // A third voter with a long prediction: two agree until 10 s.
        assert_eq!(v.on_input(1, &p(2, None), &at(2)), Some(p(2, Some(8))));
        // A future start: the vote holds from 6 s on (inputs 1 and 2).
        let mut v = Vote::new(3, 2);
        v.on_input(0, &p(0, None), &at(0));
        v.on_input(1, &p(0, Some(4)), &at(0));
        arrive(&mut v, 5); // ends inputs 0 and 1
        v.on_input(1, &p(6, Some(4)), &at(5));
        assert_eq!(v.on_input(2, &p(7, None), &at(5)), Some(p(7, Some(3))));
    }

    #[test]
    fn weighted_vote_weighs() {
        let mut w = WeightedVote::new(vec![1.0, 2.0, 0.5], 2.5);
        // 1 + 0.5 < 2.5.
        assert_eq!(w.on_input(0, &p(0, Some(9)), &at(0)), None);
        assert_eq!(w.on_input(2, &p(0, Some(5)), &at(0)), None);
        // Input 1 weighs 2: with input 2 or input 0 it is enough; the
        // longest pair is inputs 1 and 0 (2 + 1 ≥ 2.5) until 9 s.
        assert_eq!(w.on_input(1, &p(1, None), &at(1)), Some(p(1, Some(8))));
    }
}
