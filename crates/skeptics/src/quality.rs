//! `quality(threshold, gain, initial)`: drops the predictions of an input
//! that is consistently wrong (§3.2 *quality*).

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{Arity, Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

use crate::track::{Judge, Outcome};

/// `quality(threshold, gain, initial)`: tracks the accuracy of its input
/// and passes its predictions only while the accuracy is at least
/// `threshold` ("compute a measure of the predictor's accuracy, perhaps
/// filtered to remove short-term variations, and pass along predictions
/// when the accuracy is above some threshold", §3.2).
///
/// **Accuracy** is the exponentially smoothed fraction of the input's
/// predictions that no request violated: when the outcome of a prediction
/// is known, `q ← (1 − gain)·q + gain·ok`, with `ok` = 1 if no request
/// overlapped it and 0 otherwise. `q` starts at `initial`.
///
/// A prediction is judged as SPEC §4.1 does with the actuator following
/// predicted ends: over `[start, end)`, where `end` is its own end or the
/// moment a newer prediction of the input replaced it; it is violated by a
/// request outstanding at its start or arriving inside it. A prediction
/// with no duration ("until busy") ends at the next arrival and so is only
/// violated if it was made while the device was busy.
///
/// The skeptic judges every prediction of its input, those it drops
/// included, so the estimate recovers when the input improves. A
/// prediction is passed unchanged when `q ≥ threshold` at the moment it
/// arrives (with the outcomes known by then).
#[derive(Clone, Debug)]
pub struct Quality {
    threshold: f64,
    gain: f64,
    q: f64,
    judge: Judge,
}

impl Quality {
    /// Passes while the smoothed accuracy is at least `threshold`; `gain`
    /// in (0, 1] is the weight of each new outcome; `initial` the accuracy
    /// assumed before any outcome.
    pub fn new(threshold: f64, gain: f64, initial: f64) -> Self {
        Quality {
            threshold,
            gain,
            q: initial,
            judge: Judge::new(),
        }
    }
    /// The current accuracy estimate, in [0, 1].
    pub fn accuracy(&self) -> f64 {
        self.q
    }
    fn learn(q: &mut f64, gain: f64, o: Outcome) {
        let ok = if o.violations == 0 { 1.0 } else { 0.0 };
        *q = (1.0 - gain) * *q + gain * ok;
    }
}

impl Skeptic for Quality {
    fn save(&self, now: Nanos) -> Option<Learned> {
        let mut v = vec![self.q];
        self.judge.save(now, &mut v);
        Some(Learned::new(QUALITY.name, 1, v))
    }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect(QUALITY.name, 1, 1 + Judge::SAVED)?;
        if !(0.0..=1.0).contains(&v[0]) {
            return Err(LearnedError::new(format!(
                "{}: accuracy {} outside [0, 1]",
                QUALITY.name, v[0]
            )));
        }
        self.judge.restore(&v[1..], now)?;
        self.q = v[0];
        Ok(())
    }
    fn on_input(&mut self, _input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> {
        let (q, gain) = (&mut self.q, self.gain);
        self.judge.on_input(p, ctx, |o| Self::learn(q, gain, o));
        (self.q >= self.threshold).then_some(*p)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> {
        let (q, gain) = (&mut self.q, self.gain);
        self.judge.on_event(ev, ctx, |o| Self::learn(q, gain, o));
        None
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Prediction> {
        let (q, gain) = (&mut self.q, self.gain);
        self.judge.tick(ctx.now, |o| Self::learn(q, gain, o));
        None
    }
}

/// Catalogue entry of `quality`.
pub const QUALITY: ComponentInfo = ComponentInfo {
    name: "quality",
    role: Role::Skeptic,
    summary: "passes predictions while the input's smoothed accuracy (share of unviolated predictions) is at least threshold",
    source: "§3.2 skeptics: quality",
    params: &[
        ParamInfo::optional(
            "threshold",
            ParamKind::Float,
            "0.8",
            "",
            "smallest accuracy (fraction of predictions not violated) that passes, in [0, 1]",
        ),
        ParamInfo::optional(
            "gain",
            ParamKind::Float,
            "0.1",
            "",
            "weight of each new outcome in the exponential smoothing, in (0, 1]",
        ),
        ParamInfo::optional(
            "initial",
            ParamKind::Float,
            "1",
            "",
            "accuracy assumed before any outcome is known, in [0, 1]",
        ),
    ],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(QUALITY, |p| {
        let threshold = p.float_in("threshold", 0.0, 1.0)?;
        let gain = p.float_in("gain", f64::MIN_POSITIVE, 1.0)?;
        let initial = p.float_in("initial", 0.0, 1.0)?;
        Ok(Built::Skeptic(Box::new(Quality::new(
            threshold, gain, initial,
        ))))
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

    /// One round: a 5 s prediction at `t`, then a request at `t + at`.
    fn round(q: &mut Quality, t: u64, at: u64) -> Option<Prediction> {
        let p = Prediction::new(s(t), Some(s(5)));
        let out = q.on_input(0, &p, &Context::at(s(t)));
        let r = Request::new(s(t + at), s(t + at + 1), Op::Read, 0, 512);
        let busy = Context {
            outstanding: 1,
            ..Context::at(r.arrival)
        };
        q.on_event(&Event::arrival(&r), &busy);
        q.on_event(&Event::completion(&r), &Context::at(r.completion));
        out
    }

    #[test]
    fn blocks_a_bad_input_and_recovers() {
        // gain 0.5, threshold 0.6: two violations in a row block it. An
        // outcome is known at the prediction's end, so it counts from the
        // next round on.
        let mut q = Quality::new(0.6, 0.5, 1.0);
        assert!(round(&mut q, 0, 2).is_some()); // violated by the request at 2 s
        assert_eq!(q.accuracy(), 1.0);
        assert!(round(&mut q, 10, 2).is_none()); // 0.5 < 0.6: dropped, still judged
        assert_eq!(q.accuracy(), 0.5);
        assert!(round(&mut q, 20, 7).is_none()); // 0.25; its request comes after its end
        assert_eq!(q.accuracy(), 0.625);
        assert!(round(&mut q, 30, 7).is_some());
        assert_eq!(q.accuracy(), 0.8125);
    }

    #[test]
    fn no_duration_predictions_are_violated_only_when_made_while_busy() {
        let mut q = Quality::new(0.9, 1.0, 1.0);
        let r = Request::new(s(10), s(11), Op::Read, 0, 512);
        let open = Prediction::new(s(0), None);
        assert!(q.on_input(0, &open, &Context::at(s(0))).is_some());
        q.on_event(
            &Event::arrival(&r),
            &Context {
                outstanding: 1,
                ..Context::at(s(10))
            },
        );
        assert_eq!(q.accuracy(), 1.0);
        // Made while the request is outstanding.
        let busy = Context {
            outstanding: 1,
            ..Context::at(Nanos::from_millis(10_500))
        };
        let p = Prediction::new(busy.now, None);
        assert!(q.on_input(0, &p, &busy).is_some());
        let r2 = Request::new(s(20), s(21), Op::Read, 0, 512);
        q.on_event(&Event::completion(&r), &Context::at(s(11)));
        q.on_event(
            &Event::arrival(&r2),
            &Context {
                outstanding: 1,
                ..Context::at(s(20))
            },
        );
        assert_eq!(q.accuracy(), 0.0);
        assert!(q.on_input(0, &p, &Context::at(s(30))).is_none());
    }
}
