//! `follow-share(eta, alpha, breakeven, follow, majority)`: learns which
//! input stream to trust with Herbster and Warmuth's fixed-share
//! multiplicative weights (§3.2, §6 acknowledgments, \[CesaBianchi94\]).
//!
//! This is the combiner over arbitrary prediction streams. Helmbold et
//! al.'s spin-down algorithm, whose experts are timeouts and whose decision
//! is their weighted average, is the start detector `share` in
//! `lull-detectors`.

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{
    Arity, Built, ComponentInfo, GaugeInfo, GaugeUnit, ParamInfo, ParamKind, Registry, Role,
};
use lull_core::time::Nanos;

use crate::track::{LiveSet, cover_vote, overlap};

/// What a [`Share`] skeptic emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// The predictions of the input with the largest weight (ties: the
    /// first input), unchanged.
    Best,
    /// The weighted cover vote (see [`WeightedVote`](crate::vote::WeightedVote))
    /// with the current weights and a threshold of `majority` of the total
    /// weight: the weighted-majority algorithm.
    Majority,
}

/// `follow-share(eta, alpha, breakeven, follow, majority)`: fixed-share
/// multiplicative weights over its inputs (Herbster & Warmuth, *Tracking
/// the best expert*, 1998), so it learns which input to trust and follows
/// another when the workload changes ("the weights can be varied according
/// to the accuracy of each predictor. This approach has been shown to
/// yield near-optimal prediction in many cases", §3.2).
///
/// **Trials.** Each actual idle period `[b, b + L)` is a trial. During it
/// the skeptic records, for each input, the first instant `b + t` of the
/// period that one of its predictions covered (a prediction covers
/// `[start, end)` clipped to the idle period, cut short where a newer
/// prediction of the same input replaced it; predictions made while the
/// device was busy count from `b` on). As in lull's spindown model, the end
/// of a prediction does not wake the disk: only a request does, so from its
/// first covered instant on an input counts as covering the rest of the
/// period, `c = L − t`.
///
/// **Loss** (energy-like, ski rental with break-even `B` = `breakeven`).
/// Think of spinning a disk down while a prediction covers the period:
/// each idle second not covered costs 1, and covering any of the period
/// costs `B` once (spinning down and up again). So an input costs
///
/// - `L` if it covered nothing (it never fired, or fired too late),
/// - `L − c + B = t + B` if it covered from `t` on.
///
/// The offline optimum is `min(L, B)`. The loss of the input is its regret
/// in units of break-even, capped at 1:
/// `loss = min(1, (cost − min(L, B)) / B)` (see [`ski_rental_loss`]). It is
/// 0 for the best possible behaviour and 1 for anything a full break-even
/// worse (a timer waiting past `B` in a long period, spinning down at the
/// start of a period shorter than `B`, …).
///
/// **Update.** At the end of each idle period, with weights `w` summing to
/// 1 over `n` inputs: `v_i = w_i·e^(−η·loss_i)`, normalized to sum 1, then
/// the fixed share `w_i = (1 − α)·v_i + α·(1 − v_i)/(n − 1)`: each input
/// gives away a fraction `α` of its weight, shared among the others, so no
/// weight falls so low that the input could not take the lead again within
/// a few periods when it becomes the best. Weights start uniform.
///
/// **Output.** With `follow=best` (the default) it passes, unchanged, the
/// predictions of the input that has the largest weight when they arrive;
/// with `follow=majority` it emits the weighted cover vote of the live
/// input predictions (as `weighted-vote`) with the current weights and a
/// threshold of `majority` (a fraction of the total weight). Either way,
/// every emitted prediction is one of its inputs' or a sub-interval of one.
///
/// Input predictions stay live as in the other combiners: until their
/// end, a newer prediction of the same input, or an arrival at or after
/// their start.
#[derive(Clone, Debug)]
pub struct Share {
    eta: f64,
    alpha: f64,
    breakeven: Nanos,
    follow: Follow,
    majority: f64,
    weights: Vec<f64>,
    losses: Vec<f64>,
    live: LiveSet,
    /// Per input, the first covered instant of the current idle period.
    first: Vec<Option<Nanos>>,
    idle_since: Option<Nanos>,
    periods: u64,
    last: Option<Prediction>,
}

/// The loss of one input for one idle period of length `period` of which
/// its predictions covered `covered`, with break-even `breakeven` (> 0):
/// `min(1, (cost − min(L, B)) / B)` where the cost is `L` if nothing was
/// covered and `L − covered + B` otherwise. See [`Share`].
pub fn ski_rental_loss(period: Nanos, covered: Nanos, breakeven: Nanos) -> f64 {
    let l = period.as_secs_f64();
    let c = covered.min(period).as_secs_f64();
    let b = breakeven.as_secs_f64().max(f64::MIN_POSITIVE);
    let cost = if c > 0.0 { l - c + b } else { l };
    ((cost - l.min(b)) / b).clamp(0.0, 1.0)
}

impl Share {
    /// Fixed share over `inputs` inputs with learning rate `eta` (> 0),
    /// share `alpha` (in [0, 0.5]) and break-even `breakeven` (> 0),
    /// following the best input.
    pub fn new(inputs: usize, eta: f64, alpha: f64, breakeven: Nanos) -> Self {
        let n = inputs.max(1);
        Share {
            eta,
            alpha,
            breakeven,
            follow: Follow::Best,
            majority: 0.5,
            weights: vec![1.0 / n as f64; inputs],
            losses: vec![0.0; inputs],
            live: LiveSet::new(inputs),
            first: vec![None; inputs],
            idle_since: None,
            periods: 0,
            last: None,
        }
    }
    /// Emits the weighted cover vote with a threshold of `majority` (in
    /// (0, 1]) of the total weight instead of following the best input.
    pub fn with_majority(mut self, majority: f64) -> Self {
        self.follow = Follow::Majority;
        self.majority = majority;
        self
    }
    /// The current weights, one per input, summing to 1.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }
    /// The losses of the last finished idle period, one per input.
    pub fn last_losses(&self) -> &[f64] {
        &self.losses
    }
    /// The input with the largest weight (ties: the first).
    pub fn leader(&self) -> usize {
        let mut best = 0;
        for (i, &w) in self.weights.iter().enumerate() {
            if w > self.weights[best] {
                best = i;
            }
        }
        best
    }
    /// How many idle periods it has learned from.
    pub fn periods(&self) -> u64 {
        self.periods
    }
    /// What it emits.
    pub fn follow(&self) -> Follow {
        self.follow
    }

    /// Credits input `i` with the idle time `p` covered up to `until`: the
    /// first covered instant of the period is what counts.
    fn credit(&mut self, i: usize, p: &Prediction, until: Nanos) {
        if let Some(b) = self.idle_since {
            let end = p.end().min(until);
            if overlap((p.start, end), (b, Nanos::MAX)) > Nanos::ZERO {
                let at = p.start.max(b);
                self.first[i] = Some(self.first[i].map_or(at, |f| f.min(at)));
            }
        }
    }

    /// Retires the predictions that ran out by `now`, crediting them.
    fn expire(&mut self, now: Nanos) {
        for i in 0..self.live.len() {
            if let Some(p) = self.live.get(i).copied().filter(|p| p.end() <= now) {
                self.live.take(i);
                self.credit(i, &p, p.end());
            }
        }
    }

    /// The idle period that began at `began` ended at `now`: scores every
    /// input and updates the weights.
    fn end_period(&mut self, began: Nanos, now: Nanos) {
        self.idle_since = Some(began);
        for i in 0..self.live.len() {
            if let Some(p) = self.live.get(i).copied().filter(|p| p.start <= now) {
                self.live.take(i);
                self.credit(i, &p, now);
            }
        }
        let period = now - began;
        for (loss, f) in self.losses.iter_mut().zip(&self.first) {
            let covered = f.map_or(Nanos::ZERO, |f| now - f.min(now));
            *loss = ski_rental_loss(period, covered, self.breakeven);
        }
        self.update();
        self.first.iter_mut().for_each(|f| *f = None);
        self.idle_since = None;
        self.periods += 1;
        self.last = None;
    }

    fn update(&mut self) {
        let n = self.weights.len();
        if n == 0 {
            return;
        }
        for (w, loss) in self.weights.iter_mut().zip(&self.losses) {
            *w *= (-self.eta * loss).exp();
        }
        let total: f64 = self.weights.iter().sum();
        if total > 0.0 && total.is_finite() {
            self.weights.iter_mut().for_each(|w| *w /= total);
        } else {
            self.weights.iter_mut().for_each(|w| *w = 1.0 / n as f64);
        }
        if n > 1 {
            let (a, k) = (self.alpha, (n - 1) as f64);
            for w in &mut self.weights {
                *w = (1.0 - a) * *w + a * (1.0 - *w) / k;
            }
        }
    }
}

impl Skeptic for Share {
    fn gauges(&self) -> Vec<(String, f64)> {
        let mut g: Vec<(String, f64)> = self
            .weights
            .iter()
            .enumerate()
            .map(|(i, &w)| (format!("weight_{i}"), w))
            .collect();
        g.push(("leader".into(), self.leader() as f64));
        g
    }
    fn save(&self, _now: Nanos) -> Option<Learned> {
        let mut v = self.weights.clone();
        v.extend_from_slice(&self.losses);
        v.push(self.periods as f64);
        Some(Learned::new(FOLLOW_SHARE.name, 1, v))
    }
    fn restore(&mut self, l: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        let n = self.weights.len();
        let v = l.expect(FOLLOW_SHARE.name, 1, 2 * n + 1)?;
        let (w, rest) = v.split_at(n);
        let sum: f64 = w.iter().sum();
        if w.iter().any(|&x| !(0.0..=1.0).contains(&x))
            || (sum - 1.0).abs() > 1e-6
            || rest.iter().any(|&x| !(x >= 0.0 && x.is_finite()))
        {
            return Err(LearnedError::new(format!(
                "{}: weights that are not a distribution, or a negative loss",
                FOLLOW_SHARE.name
            )));
        }
        self.weights.copy_from_slice(w);
        self.losses.copy_from_slice(&rest[..n]);
        self.periods = rest[n] as u64;
        Ok(())
    }
    fn on_input(&mut self, input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> {
        let now = ctx.now;
        self.expire(now);
        if input >= self.live.len() {
            return None;
        }
        if let Some(old) = self.live.take(input) {
            self.credit(input, &old, now);
        }
        self.live.set(input, *p);
        match self.follow {
            Follow::Best => {
                (input == self.leader() && p.duration != Some(Nanos::ZERO)).then_some(*p)
            }
            Follow::Majority => {
                let w = &self.weights;
                let out = cover_vote(self.live.slots(), |i| w[i], self.majority, now)?;
                if self.last == Some(out) {
                    return None;
                }
                self.last = Some(out);
                Some(out)
            }
        }
    }

    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> {
        self.expire(ctx.now);
        if ev.is_arrival() {
            match self.idle_since {
                // The driver did not announce the end of the idle period.
                Some(b) => self.end_period(b, ctx.now),
                None => self.live.arrival(ctx.now),
            }
            self.last = None;
        }
        None
    }

    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Prediction> {
        self.expire(ctx.now);
        self.idle_since = Some(ctx.now);
        None
    }

    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.expire(ctx.now);
        self.end_period(began, ctx.now);
    }
}

/// Catalogue entry of `follow-share`.
pub const FOLLOW_SHARE: ComponentInfo = ComponentInfo {
    name: "follow-share",
    role: Role::Skeptic,
    summary: "fixed-share multiplicative weights over its inputs, scored per idle period with a ski-rental loss; follows the best-weighted input",
    source: "§3.2 skeptics: weights varied by accuracy [CesaBianchi94]; Herbster & Warmuth fixed share",
    params: &[
        ParamInfo::optional(
            "eta",
            ParamKind::Float,
            "2",
            "",
            "learning rate η > 0: an input's weight is multiplied by e^(−η·loss) per idle period (loss in [0, 1])",
        ),
        ParamInfo::optional(
            "alpha",
            ParamKind::Float,
            "0.01",
            "",
            "share α in [0, 0.5]: the fraction of its weight each input gives to the others per idle period",
        ),
        ParamInfo::optional(
            "breakeven",
            ParamKind::Duration,
            "B",
            "s",
            "break-even time of the ski-rental loss (> 0; default: the device's B)",
        ),
        ParamInfo::optional(
            "follow",
            ParamKind::Choice(&["best", "majority"]),
            "best",
            "",
            "emit the best-weighted input's predictions, or the weighted-majority cover vote",
        ),
        ParamInfo::optional(
            "majority",
            ParamKind::Float,
            "0.5",
            "",
            "with follow=majority: the fraction of the total weight that must agree, in (0, 1]",
        ),
    ],
    inputs: Some(Arity::MANY),
    offline: false,
    gauges: &[
        GaugeInfo::new("weight_*", "weight of input", GaugeUnit::Ratio),
        GaugeInfo::new("leader", "leading input", GaugeUnit::Count),
    ],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(FOLLOW_SHARE, |p| {
        let eta = p.positive_float("eta")?;
        if eta > 1e6 {
            return Err(lull_core::registry::ParamError::new(
                "eta",
                format!("{eta} is too large (at most 1e6)"),
            ));
        }
        let alpha = p.float_in("alpha", 0.0, 0.5)?;
        let breakeven = p.positive_duration("breakeven")?;
        let majority = p.float_in("majority", f64::MIN_POSITIVE, 1.0)?;
        let share = Share::new(p.inputs(), eta, alpha, breakeven);
        Ok(Built::Skeptic(Box::new(match p.choice("follow")? {
            "majority" => share.with_majority(majority),
            _ => share,
        })))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request};

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    #[test]
    fn the_loss_is_ski_rental_regret() {
        let b = s(3);
        // Long period (10 s): opt = B.
        assert_eq!(ski_rental_loss(s(10), s(10), b), 0.0); // fired at once
        assert!((ski_rental_loss(s(10), s(9), b) - 1.0 / 3.0).abs() < 1e-12); // at 1 s
        assert_eq!(ski_rental_loss(s(10), s(5), b), 1.0); // at 5 s: capped
        assert_eq!(ski_rental_loss(s(10), Nanos::ZERO, b), 1.0); // never: L − B = 7
        // Short period (2 s): opt = L.
        assert_eq!(ski_rental_loss(s(2), Nanos::ZERO, b), 0.0);
        assert!((ski_rental_loss(s(2), s(1), b) - 2.0 / 3.0).abs() < 1e-12); // 1 + 3 − 2
        // A prediction covering only the last second (fired 9 s in): 9 + 3 − 3.
        assert_eq!(ski_rental_loss(s(10), s(1), b), 1.0);
    }

    /// One idle period [t, t + len) in which input `i` (of 2) predicts
    /// "until busy" `after[i]` into it (`None`: never).
    fn period(k: &mut Share, t: u64, len: u64, after: [Option<u64>; 2]) -> Vec<Option<Prediction>> {
        k.on_idle_begin(&Context::at(s(t)));
        let mut out = Vec::new();
        let mut fires: Vec<(u64, usize)> = after
            .iter()
            .enumerate()
            .filter_map(|(i, a)| a.filter(|&a| a < len).map(|a| (a, i)))
            .collect();
        fires.sort();
        for (a, i) in fires {
            let p = Prediction::new(s(t + a), None);
            out.push(k.on_input(i, &p, &Context::at(s(t + a))));
        }
        let end = Context {
            outstanding: 1,
            ..Context::at(s(t + len))
        };
        k.on_idle_end(&end, s(t));
        let r = Request::new(s(t + len), s(t + len) + Nanos::NANO, Op::Read, 0, 512);
        k.on_event(&Event::arrival(&r), &end);
        out
    }

    #[test]
    fn weights_follow_the_losses_and_the_leader_is_followed() {
        let mut k = Share::new(2, 1.0, 0.0, s(3));
        assert_eq!(k.weights(), [0.5, 0.5]);
        // Input 0 fires at 0 s, input 1 at 5 s, in a 10 s period.
        let out = period(&mut k, 0, 10, [Some(0), Some(5)]);
        // Input 0 leads at first (tie): its prediction passes, input 1's not.
        assert_eq!(out, [Some(Prediction::new(s(0), None)), None]);
        assert_eq!(k.last_losses(), [0.0, 1.0]);
        let e = (-1.0f64).exp();
        assert!((k.weights()[0] - 1.0 / (1.0 + e)).abs() < 1e-12);
        assert_eq!(k.leader(), 0);
        // Short periods (1 s): firing at once costs, waiting costs nothing.
        for i in 0..3 {
            period(&mut k, 100 + 10 * i, 1, [Some(0), Some(5)]);
        }
        // Input 0: 1 − 1 + 3 = 3 against an optimum of 1: (3 − 1) / 3.
        assert!((k.last_losses()[0] - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(k.last_losses()[1], 0.0);
        assert_eq!(k.leader(), 1);
        let out = period(&mut k, 200, 10, [Some(0), Some(5)]);
        assert_eq!(out, [None, Some(Prediction::new(s(205), None))]);
        assert_eq!(k.periods(), 5);
    }

    #[test]
    fn fixed_share_keeps_every_weight_above_the_floor() {
        let alpha = 0.05;
        let mut k = Share::new(3, 5.0, alpha, s(3));
        for i in 0..50 {
            period(&mut k, 20 * i, 10, [Some(0), None]);
        }
        let sum: f64 = k.weights().iter().sum();
        assert!((sum - 1.0).abs() < 1e-9);
        for &w in k.weights() {
            assert!(w >= alpha / 2.0 * 0.999, "{:?}", k.weights());
        }
        assert_eq!(k.leader(), 0);
    }

    #[test]
    fn majority_emits_where_most_weight_agrees() {
        let mut k = Share::new(3, 1.0, 0.0, s(3)).with_majority(0.5);
        let ctx = Context::at(s(0));
        k.on_idle_begin(&ctx);
        // One third of the weight is not a majority.
        assert_eq!(
            k.on_input(0, &Prediction::new(s(0), Some(s(8))), &ctx),
            None
        );
        // Two thirds: while both cover.
        assert_eq!(
            k.on_input(2, &Prediction::new(s(0), Some(s(5))), &ctx),
            Some(Prediction::new(s(0), Some(s(5))))
        );
    }
}
