//! `long-idle(confidence, rate, ...)`: a learning long-idle detector (new in
//! lull, beyond the paper).
//!
//! A fixed or adaptive timeout pays its whole wait in every long idle
//! period: with a timeout `T`, a disk that will be idle for an hour still
//! spins for `T` first. Storage workloads are not i.i.d., though: a long
//! period tends to follow another (nights, away spells), to come after a
//! burst of a typical size, at a typical hour. `long-idle` learns that
//! online and, when it is confident that the period that just began will
//! outlast the break-even time `B`, acts at once; when it is not, it falls
//! back on the learned timeout of Helmbold et al.'s [`share`](crate::share).
//!
//! **When it decides.** Every idle period, `min` (default `B/32`, the
//! shortest expert timeout of the fallback) after the device empties. A
//! period shorter than that ends before any decision and is ignored
//! entirely: it neither teaches nor counts in the history, in the daemon as
//! in a replay (so the replay may skip such periods, exactly).
//!
//! **Features** at the decision, all from what lull already sees (no
//! per-request work: the detector needs no events):
//! - the last three idle lengths (of periods of at least `min`), as
//!   `ln(1 + s/B)`;
//! - the time since the previous such period ended (the length of the
//!   busy stretch before this gap), as `ln(1 + t/B)`;
//! - the time since the last period longer than `B` ended, likewise;
//! - the share of long periods among the recent ones (a moving average);
//! - the hour of day as `sin`/`cos` when the wall clock is known
//!   ([`Context::clock`]; 0 otherwise);
//! - a bias.
//!
//! **Model.** Online logistic regression, one stochastic-gradient step per
//! idle period with the label "lasted at least `B`", learning rate `rate`
//! and a light L2 penalty. O(1) per idle period, fixed memory,
//! deterministic.
//!
//! **Decision.** If the predicted probability of a long period is at least
//! `confidence`, it declares the period at once (at `min`); otherwise it
//! waits for the `share` timeout counted from the start of the period.
//! A long period that was acted on at once costs nothing over the optimum
//! but the `min` wait; a short one costs a spin-down cycle, which is why
//! `confidence` is high by default. The fallback keeps learning from every
//! period, whatever was decided.
//!
//! Its gauges report the last probability, how often it acted at once and
//! how often that was right, and the fallback's timeout and leader.

use lull_core::component::{Context, Start, StartDetector};
use lull_core::registry::{Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

use crate::share::{EXPERT_PARAMS, ShareExperts};
use crate::timer::Alarm;

const FEATURES: usize = 9;
const NS_PER_HOUR: u64 = 3_600_000_000_000;

/// The online logistic model of [`LongIdle`].
#[derive(Clone, Debug, PartialEq)]
pub struct Logistic {
    w: [f64; FEATURES],
    rate: f64,
    l2: f64,
}

impl Logistic {
    /// A model with all weights zero (probability ½ for everything).
    pub fn new(rate: f64, l2: f64) -> Self {
        Logistic {
            w: [0.0; FEATURES],
            rate,
            l2,
        }
    }
    /// The probability of a long period given features `x`.
    pub fn predict(&self, x: &[f64; FEATURES]) -> f64 {
        let z: f64 = self.w.iter().zip(x).map(|(w, x)| w * x).sum();
        1.0 / (1.0 + (-z.clamp(-40.0, 40.0)).exp())
    }
    /// One gradient step towards label `y` (1 long, 0 short).
    pub fn learn(&mut self, x: &[f64; FEATURES], y: f64) {
        self.learn_from(x, self.predict(x), y);
    }
    /// [`Logistic::learn`] with the model's probability `p` for `x` known.
    pub fn learn_from(&mut self, x: &[f64; FEATURES], p: f64, y: f64) {
        let g = p - y;
        for (w, x) in self.w.iter_mut().zip(x) {
            *w -= self.rate * (g * x + self.l2 * *w);
        }
    }
    /// The weights, bias last.
    pub fn weights(&self) -> &[f64; FEATURES] {
        &self.w
    }
}

/// `long-idle(...)`: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct LongIdle {
    fallback: ShareExperts,
    model: Logistic,
    breakeven: Nanos,
    confidence: f64,
    armed: Alarm,
    /// The current period: when it began, and the features it was judged on.
    began: Option<Nanos>,
    features: Option<[f64; FEATURES]>,
    /// Whether the decision point of the current period has passed.
    decided: bool,
    last_p: f64,
    /// The last three idle lengths over B, `ln(1 + s/B)`, newest first.
    recent: [f64; 3],
    last_end: Option<Nanos>,
    last_long_end: Option<Nanos>,
    long_share: f64,
    at_once: u64,
    at_once_right: u64,
}

impl LongIdle {
    /// A detector falling back on `fallback`, acting at once when the
    /// model's probability is at least `confidence`, learning at `rate`.
    pub fn new(fallback: ShareExperts, breakeven: Nanos, confidence: f64, rate: f64) -> Self {
        LongIdle {
            fallback,
            model: Logistic::new(rate, 1e-4),
            breakeven,
            confidence,
            armed: Alarm::default(),
            began: None,
            features: None,
            decided: false,
            last_p: 0.0,
            recent: [0.0; 3],
            last_end: None,
            last_long_end: None,
            long_share: 0.0,
            at_once: 0,
            at_once_right: 0,
        }
    }

    /// The fallback's experts.
    pub fn fallback(&self) -> &ShareExperts {
        &self.fallback
    }
    /// The logistic model.
    pub fn model(&self) -> &Logistic {
        &self.model
    }
    /// How often it acted at once, and how often the period then did
    /// outlast the break-even time.
    pub fn at_once(&self) -> (u64, u64) {
        (self.at_once, self.at_once_right)
    }

    fn decision_delay(&self) -> Nanos {
        self.fallback.min_timeout()
    }

    fn features(&self, ctx: &Context) -> [f64; FEATURES] {
        let b = self.breakeven.as_secs_f64();
        let since = |t: Option<Nanos>| {
            t.map_or(5.0, |t| {
                (1.0 + (ctx.now - t.min(ctx.now)).as_secs_f64() / b).ln()
            })
        };
        let (sin, cos) = match ctx.clock {
            Some(c) => {
                let h = ((c.0 + ctx.now.0) % (24 * NS_PER_HOUR)) as f64 / NS_PER_HOUR as f64;
                let a = h / 24.0 * std::f64::consts::TAU;
                (a.sin(), a.cos())
            }
            None => (0.0, 0.0),
        };
        [
            self.recent[0],
            self.recent[1],
            self.recent[2],
            since(self.last_end),
            since(self.last_long_end),
            self.long_share,
            sin,
            cos,
            1.0,
        ]
    }
}

impl StartDetector for LongIdle {
    fn wants_events(&self) -> bool {
        false
    }
    fn quiet_below(&self) -> Nanos {
        // A period shorter than the decision delay ends before anything is
        // decided, and is ignored (see on_idle_end).
        if self.armed.deadline().is_none() {
            self.decision_delay()
        } else {
            Nanos::ZERO
        }
    }
    fn gauges(&self) -> Vec<(String, f64)> {
        let mut g = vec![
            ("p_long".into(), self.last_p),
            ("at_once".into(), self.at_once as f64),
            ("at_once_right".into(), self.at_once_right as f64),
        ];
        g.extend(self.fallback.gauges("fallback_"));
        g
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.began = Some(ctx.now);
        self.features = None;
        self.decided = false;
        self.armed.arm(ctx.now + self.decision_delay());
        None
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.armed.disarm();
        self.began = None;
        let period = ctx.now - began;
        if period < self.decision_delay() {
            return;
        }
        let long = period >= self.breakeven;
        if let Some(x) = self.features.take() {
            // The features have not changed since the decision: reuse its
            // probability for the gradient step.
            self.model
                .learn_from(&x, self.last_p, if long { 1.0 } else { 0.0 });
        }
        self.fallback.observe(period);
        let b = self.breakeven.as_secs_f64();
        self.recent = [
            (1.0 + period.as_secs_f64() / b).ln(),
            self.recent[0],
            self.recent[1],
        ];
        self.last_end = Some(ctx.now);
        if long {
            self.last_long_end = Some(ctx.now);
        }
        self.long_share = 0.8 * self.long_share + if long { 0.2 } else { 0.0 };
        if self.decided && self.last_p >= self.confidence {
            self.at_once_right += u64::from(long);
        }
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.armed.deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        let due = self.armed.deadline().is_some_and(|t| t <= ctx.now);
        if !due {
            return None;
        }
        if self.decided {
            return self.armed.fire(ctx.now);
        }
        self.decided = true;
        let x = self.features(ctx);
        self.last_p = self.model.predict(&x);
        self.features = Some(x);
        if self.last_p >= self.confidence {
            self.at_once += 1;
            return self.armed.fire(ctx.now);
        }
        let began = self.began.unwrap_or(ctx.now);
        let at = (began + self.fallback.timeout()).max(ctx.now);
        self.armed.arm(at);
        if at <= ctx.now {
            return self.armed.fire(ctx.now);
        }
        None
    }
}

const LONG_IDLE_PARAMS: [ParamInfo; 9] = [
    ParamInfo::optional(
        "confidence",
        ParamKind::Float,
        "0.8",
        "",
        "act at once when the predicted probability that the period outlasts B is at least this (in (0, 1])",
    ),
    ParamInfo::optional(
        "rate",
        ParamKind::Float,
        "0.1",
        "",
        "learning rate of the logistic model (> 0)",
    ),
    EXPERT_PARAMS[0],
    EXPERT_PARAMS[1],
    EXPERT_PARAMS[2],
    EXPERT_PARAMS[3],
    EXPERT_PARAMS[4],
    EXPERT_PARAMS[5],
    EXPERT_PARAMS[6],
];

/// Catalogue entry of `long-idle`.
pub const LONG_IDLE: ComponentInfo = ComponentInfo {
    name: "long-idle",
    role: Role::StartDetector,
    summary: "learns online whether an idle period will outlast break-even and acts at once when confident; otherwise waits for the share timeout",
    source: "§3.1.1 timer-based, extended: online logistic model over idle history and time of day, share fallback (Helmbold et al. 2000)",
    params: &LONG_IDLE_PARAMS,
    inputs: None,
    offline: false,
};

pub(crate) fn register(r: &mut Registry) {
    r.register(LONG_IDLE, |p| {
        let fallback = ShareExperts::from_params(p)?;
        let b = p.require_breakeven("min")?;
        let confidence = p.float_in("confidence", f64::MIN_POSITIVE, 1.0)?;
        let rate = p.float_in("rate", f64::MIN_POSITIVE, 10.0)?;
        Ok(Built::Start(Box::new(LongIdle::new(
            fallback, b, confidence, rate,
        ))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logistic_model_learns_a_separable_rule() {
        let mut m = Logistic::new(0.5, 0.0);
        let long = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let short = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        assert_eq!(m.predict(&long), 0.5);
        for _ in 0..200 {
            m.learn(&long, 1.0);
            m.learn(&short, 0.0);
        }
        assert!(m.predict(&long) > 0.9, "{}", m.predict(&long));
        assert!(m.predict(&short) < 0.1, "{}", m.predict(&short));
    }
}
