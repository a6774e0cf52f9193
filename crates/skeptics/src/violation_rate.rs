//! `violation-rate(max, gain)`: the paper's SkepticRate (§5.5).

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{Arity, Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

use crate::track::{Judge, Outcome};

/// `violation-rate(max, gain)`: "maintained a moving-average estimate of
/// the recent violation rate of the incoming prediction stream, and only
/// passed predictions when the rate estimate was below some threshold. We
/// used a threshold of 0.7 violations/second" (SkepticRate, §5.5).
///
/// The violation rate is SPEC §4.1's: violations per second of declared
/// time. Each input prediction is judged as [`Quality`](crate::quality::Quality)
/// judges it (over `[start, end)`, its own end or where a newer prediction
/// replaced it; "until busy" up to the next arrival), giving `v` requests
/// that overlapped it and `d` seconds of declared time. When its outcome
/// is known the skeptic updates two exponential moving averages,
/// `V ← (1 − gain)·V + gain·v` and `D ← (1 − gain)·D + gain·d`, and the
/// rate estimate is `V / D` (0 before any outcome; infinite when `D` is 0
/// and `V` is not).
///
/// A prediction passes, unchanged, when the estimate is below `max`
/// (strictly) at the moment it arrives. Every input prediction is judged,
/// the dropped ones too, so the estimate follows the input even while it
/// is blocked.
#[derive(Clone, Debug)]
pub struct ViolationRate {
    max: f64,
    gain: f64,
    violations: f64,
    declared_s: f64,
    judge: Judge,
}

impl ViolationRate {
    /// Passes while the smoothed rate is below `max` violations/s; `gain`
    /// in (0, 1] is the weight of each new outcome.
    pub fn new(max: f64, gain: f64) -> Self {
        ViolationRate {
            max,
            gain,
            violations: 0.0,
            declared_s: 0.0,
            judge: Judge::new(),
        }
    }
    /// The current estimate, violations per second of declared time.
    pub fn rate(&self) -> f64 {
        rate(self.violations, self.declared_s)
    }
}

fn rate(v: f64, d: f64) -> f64 {
    if d > 0.0 {
        v / d
    } else if v > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

struct Averages<'a> {
    v: &'a mut f64,
    d: &'a mut f64,
    gain: f64,
}

impl Averages<'_> {
    fn learn(&mut self, o: Outcome) {
        *self.v = (1.0 - self.gain) * *self.v + self.gain * f64::from(o.violations);
        *self.d = (1.0 - self.gain) * *self.d + self.gain * o.declared_s();
    }
}

impl ViolationRate {
    fn split(&mut self) -> (&mut Judge, Averages<'_>) {
        (
            &mut self.judge,
            Averages {
                v: &mut self.violations,
                d: &mut self.declared_s,
                gain: self.gain,
            },
        )
    }
}

impl Skeptic for ViolationRate {
    fn save(&self, now: Nanos) -> Option<Learned> {
        let mut v = vec![self.violations, self.declared_s];
        self.judge.save(now, &mut v);
        Some(Learned::new(VIOLATION_RATE.name, 1, v))
    }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect(VIOLATION_RATE.name, 1, 2 + Judge::SAVED)?;
        if v[..2].iter().any(|&x| !(x >= 0.0 && x.is_finite())) {
            return Err(LearnedError::new(format!(
                "{}: a negative or infinite rate",
                VIOLATION_RATE.name
            )));
        }
        self.judge.restore(&v[2..], now)?;
        (self.violations, self.declared_s) = (v[0], v[1]);
        Ok(())
    }
    fn on_input(&mut self, _input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> {
        let (judge, mut avg) = self.split();
        judge.on_input(p, ctx, |o| avg.learn(o));
        (self.rate() < self.max).then_some(*p)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> {
        let (judge, mut avg) = self.split();
        judge.on_event(ev, ctx, |o| avg.learn(o));
        None
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Prediction> {
        let (judge, mut avg) = self.split();
        judge.tick(ctx.now, |o| avg.learn(o));
        None
    }
}

/// Catalogue entry of `violation-rate`.
pub const VIOLATION_RATE: ComponentInfo = ComponentInfo {
    name: "violation-rate",
    role: Role::Skeptic,
    summary: "passes predictions while the moving-average violation rate of its input is below max (SkepticRate)",
    source: "§5.5 SkepticRate",
    params: &[
        ParamInfo::optional(
            "max",
            ParamKind::Float,
            "0.7",
            "violations/s",
            "predictions pass while the estimated violation rate is below this (> 0)",
        ),
        ParamInfo::optional(
            "gain",
            ParamKind::Float,
            "0.1",
            "",
            "weight of each new outcome in the moving averages, in (0, 1]",
        ),
    ],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(VIOLATION_RATE, |p| {
        let max = p.positive_float("max")?;
        let gain = p.float_in("gain", f64::MIN_POSITIVE, 1.0)?;
        Ok(Built::Skeptic(Box::new(ViolationRate::new(max, gain))))
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

    /// A 2 s prediction at `t` and `n` one-nanosecond requests inside it.
    fn round(vr: &mut ViolationRate, t: u64, n: u64) -> Option<Prediction> {
        let p = Prediction::new(s(t), Some(s(2)));
        let out = vr.on_input(0, &p, &Context::at(s(t)));
        for k in 0..n {
            let at = s(t) + Nanos::from_millis(100 * (k + 1));
            let r = Request::new(at, at + Nanos::NANO, Op::Write, 0, 512);
            let busy = Context {
                outstanding: 1,
                ..Context::at(at)
            };
            vr.on_event(&Event::arrival(&r), &busy);
            vr.on_event(&Event::completion(&r), &Context::at(r.completion));
        }
        out
    }

    #[test]
    fn blocks_above_max_and_passes_again_below() {
        // gain 1: the estimate is the last outcome's rate.
        let mut vr = ViolationRate::new(0.7, 1.0);
        assert!(round(&mut vr, 0, 3).is_some()); // 3 violations in 2 s: 1.5/s
        assert!(round(&mut vr, 10, 1).is_none()); // 1.5 ≥ 0.7: dropped
        assert_eq!(vr.rate(), 1.5);
        assert!(round(&mut vr, 20, 0).is_some()); // 1 in 2 s = 0.5 < 0.7
        assert_eq!(vr.rate(), 0.5);
        // Smoothing: gain 0.5 averages violations and declared time.
        let mut vr = ViolationRate::new(0.7, 0.5);
        round(&mut vr, 0, 4); // 4 violations in 2 s, known at its end
        round(&mut vr, 10, 0); // settles the first: V = 2, D = 1
        assert_eq!(vr.rate(), 2.0);
        round(&mut vr, 20, 0); // settles the second: V = 1, D = 1.5
        assert!((vr.rate() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn the_default_threshold_is_the_papers() {
        assert_eq!(VIOLATION_RATE.params[0].default, Some("0.7"));
    }
}
