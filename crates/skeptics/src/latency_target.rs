//! `latency-target(target, percentile, …)`: picks, per foreground load
//! level, the most aggressive background policy that meets a foreground
//! latency target (the hybrid priority middleware of
//! `papers/background-priority-middleware.txt`, §2.1, §3, §4.1).
//!
//! # Policies
//!
//! The paper switches among four monolithic policies, ranked from the most
//! to the least aggressive: *nice 0* (background runs like foreground),
//! *allnice* (background at the lowest priority), *smart+* (lowest
//! priority and suspended while foreground load spikes) and *FG-only*
//! (background suspended). A skeptic controls when idle time is handed to
//! the task, not CPU priorities, so the four become ([`Policy`]):
//!
//! - `free`: every input prediction passes unchanged;
//! - `throttle`: predictions pass cut to at most `slice` (a "no duration"
//!   prediction becomes one of `slice`): the task gets a slice of each
//!   idle period, like a low-priority process gets leftover cycles;
//! - `spike`: as `throttle`, but nothing passes while the foreground
//!   arrival rate over the last `spike-window` exceeds `spike` times its
//!   long-run rate (the smart policy's "suspended briefly if load
//!   spikes");
//! - `fg-only`: nothing passes.
//!
//! # Load levels and learning (§3.1, §3.2)
//!
//! Time is cut into windows of `window` (the paper sampled load every
//! 10 s). A window's *load* is its foreground arrival rate, and its *level*
//! the first of the ascending edges `levels` (IO/s) that the rate does not
//! exceed (rates above the last edge form one more, top level). Foreground
//! latency is what the skeptic sees: completion − arrival of each
//! completion event (`Event::pair` is the arrival).
//!
//! Learning is online: the latencies of the requests that complete in a
//! window are added to a histogram kept for (the window's measured level,
//! the policy in force); histograms are aged by halving every count once
//! one holds 4096 samples, so old behaviour fades. A (level, policy) pair
//! *meets the target* when its histogram's `percentile`-th percentile
//! (conservatively, the upper edge of the bin holding it; bins are a
//! quarter octave wide) is at most `target`; it is *known* once it holds
//! `min-samples` latencies.
//!
//! # Decision
//!
//! At the end of each window the skeptic assumes the load persists and
//! picks the policy for the next one from the level just measured. Going
//! from the least aggressive policy up, a policy is *known* at that level
//! from the first level at or above it holding enough samples for it:
//! **unseen load levels are rounded up** to the nearest higher level that
//! was learned, as the paper does ("the decision is done based on the next
//! higher load tested"), since a higher load cannot give lower latency.
//! The choice is the most aggressive policy in the unbroken run of known
//! ones that meet the target; if the next more aggressive policy is not
//! known at all, it is tried instead (one step of exploration, which the
//! paper did offline and an online learner must do itself); a known policy
//! that misses stops the climb. The first window runs `spike`, the most
//! cautious policy that still gives the task time to learn from.
//!
//! When a window closes with a policy stricter than the one before, or a
//! spike begins under `spike`, while a passed prediction may still be in
//! use, the skeptic withdraws it (a zero-duration prediction) at that
//! stimulus.

use std::collections::VecDeque;

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{
    Arity, Built, ComponentInfo, ParamError, ParamInfo, ParamKind, Registry, Role,
};
use lull_core::time::Nanos;

/// A background policy, from the most to the least aggressive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// Every prediction passes (nice 0).
    Free,
    /// Predictions pass cut to a slice (allnice).
    Throttle,
    /// Throttled, and suspended during load spikes (smart+).
    Spike,
    /// Nothing passes (FG-only).
    FgOnly,
}

impl Policy {
    /// Every policy, most aggressive first.
    pub const RANKED: [Policy; 4] = [
        Policy::Free,
        Policy::Throttle,
        Policy::Spike,
        Policy::FgOnly,
    ];
    /// Its name.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Free => "free",
            Policy::Throttle => "throttle",
            Policy::Spike => "spike",
            Policy::FgOnly => "fg-only",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

const BINS: usize = 4 * 40;
const AGE_AT: u64 = 4096;

/// A histogram of latencies in quarter-octave bins from 1 µs.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BINS],
            total: 0,
        }
    }
}

impl Histogram {
    fn bin(lat: Nanos) -> usize {
        let us = lat.as_secs_f64() * 1e6;
        if us <= 1.0 {
            0
        } else {
            ((us.log2() * 4.0).ceil() as usize).min(BINS - 1)
        }
    }
    fn upper(bin: usize) -> Nanos {
        Nanos::from_secs_f64(2f64.powf(bin as f64 / 4.0) * 1e-6)
    }
    /// Adds one latency.
    pub fn add(&mut self, lat: Nanos) {
        self.counts[Self::bin(lat)] += 1;
        self.total += 1;
    }
    /// How many latencies it holds.
    pub fn total(&self) -> u64 {
        self.total
    }
    fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        if self.total > AGE_AT {
            for c in &mut self.counts {
                *c /= 2;
            }
            self.total = self.counts.iter().sum();
        }
    }
    /// The `pct`-th percentile (0–100], rounded up to its bin's upper
    /// edge; `None` when empty.
    pub fn percentile(&self, pct: f64) -> Option<Nanos> {
        if self.total == 0 {
            return None;
        }
        let want = ((pct / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return Some(Self::upper(i));
            }
        }
        Some(Self::upper(BINS - 1))
    }
    fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.total = 0;
    }
}

/// Settings of [`LatencyTarget`] (module docs; defaults in the catalogue
/// entry [`LATENCY_TARGET`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyConfig {
    /// The latency the percentile must not exceed.
    pub target: Nanos,
    /// The percentile, in (0, 100].
    pub percentile: f64,
    /// Window over which load is measured and policies are held.
    pub window: Nanos,
    /// Ascending upper edges of the load levels, IO/s.
    pub levels: Vec<f64>,
    /// Longest prediction passed under `throttle` and `spike`.
    pub slice: Nanos,
    /// Spike factor: short-term rate over long-run rate.
    pub spike: f64,
    /// Span of the short-term rate.
    pub spike_window: Nanos,
    /// Samples before a (level, policy) pair counts as known.
    pub min_samples: u64,
}

/// `latency-target(target, percentile, …)`: module docs.
#[derive(Clone, Debug)]
pub struct LatencyTarget {
    cfg: LatencyConfig,
    /// Per level, per policy other than fg-only.
    learned: Vec<[Histogram; 3]>,
    policy: Policy,
    window_end: Option<Nanos>,
    arrivals: u64,
    current: Histogram,
    long_rate: Option<f64>,
    recent: VecDeque<Nanos>,
    spiking: bool,
    /// End of the last passed prediction (`Nanos::MAX`: until busy).
    passed_until: Option<Nanos>,
    windows: [u64; 4],
}

impl LatencyTarget {
    /// A skeptic with `cfg`.
    pub fn new(cfg: LatencyConfig) -> Self {
        let levels = cfg.levels.len() + 1;
        LatencyTarget {
            cfg,
            learned: (0..levels).map(|_| Default::default()).collect(),
            policy: Policy::Spike,
            window_end: None,
            arrivals: 0,
            current: Histogram::default(),
            long_rate: None,
            recent: VecDeque::new(),
            spiking: false,
            passed_until: None,
            windows: [0; 4],
        }
    }
    /// The policy in force.
    pub fn policy(&self) -> Policy {
        self.policy
    }
    /// How many windows each policy (in [`Policy::RANKED`] order) ran.
    pub fn windows(&self) -> [u64; 4] {
        self.windows
    }
    /// The level of a load of `rate` IO/s.
    pub fn level(&self, rate: f64) -> usize {
        self.cfg
            .levels
            .iter()
            .position(|&e| rate <= e)
            .unwrap_or(self.cfg.levels.len())
    }
    /// What was learned for `policy` at `level`.
    pub fn learned(&self, level: usize, policy: Policy) -> Option<&Histogram> {
        (policy != Policy::FgOnly).then(|| &self.learned[level][policy.index()])
    }
    /// Whether `policy` is known to meet the target at `level`, rounding
    /// unseen levels up; `None` when no level at or above holds enough
    /// samples.
    pub fn meets(&self, level: usize, policy: Policy) -> Option<bool> {
        if policy == Policy::FgOnly {
            return Some(true);
        }
        self.learned[level.min(self.learned.len() - 1)..]
            .iter()
            .map(|h| &h[policy.index()])
            .find(|h| h.total() >= self.cfg.min_samples)
            .map(|h| {
                h.percentile(self.cfg.percentile)
                    .is_some_and(|p| p <= self.cfg.target)
            })
    }
    /// The policy for a window at `level` (module docs).
    pub fn decide(&self, level: usize) -> Policy {
        let mut best = Policy::FgOnly;
        for p in [Policy::Spike, Policy::Throttle, Policy::Free] {
            match self.meets(level, p) {
                Some(true) => best = p,
                Some(false) => break,
                None => {
                    best = p;
                    break;
                }
            }
        }
        best
    }

    /// Closes the windows that ended by `now`; returns whether the policy
    /// became stricter.
    fn tick(&mut self, now: Nanos) -> bool {
        let w = self.cfg.window;
        let end = *self.window_end.get_or_insert(now + w);
        if now < end {
            return false;
        }
        let before = self.policy;
        let rate = self.arrivals as f64 / w.as_secs_f64();
        let mut level = self.level(rate);
        if self.policy != Policy::FgOnly {
            let current = std::mem::take(&mut self.current);
            self.learned[level][self.policy.index()].merge(&current);
        }
        self.current.clear();
        self.windows[self.policy.index()] += 1;
        self.long_rate = Some(self.long_rate.map_or(rate, |r| 0.9 * r + 0.1 * rate));
        let empty = (now - end).as_nanos() / w.as_nanos();
        if empty > 0 {
            // Windows with no arrival at all: load level 0.
            level = self.level(0.0);
            self.long_rate = self
                .long_rate
                .map(|r| r * 0.9f64.powf(empty.min(1000) as f64));
        }
        self.window_end = Some(end + Nanos(w.as_nanos().saturating_mul(empty + 1)));
        self.arrivals = 0;
        self.policy = self.decide(level);
        self.policy > before
    }

    fn live(&self, now: Nanos) -> bool {
        self.passed_until.is_some_and(|e| e > now)
    }

    fn withdraw(&mut self, now: Nanos) -> Option<Prediction> {
        if self.live(now) {
            self.passed_until = None;
            Some(Prediction::new(now, Some(Nanos::ZERO)))
        } else {
            None
        }
    }

    fn spike_now(&mut self, now: Nanos) -> bool {
        let span = self.cfg.spike_window;
        while self.recent.front().is_some_and(|&t| t + span <= now) {
            self.recent.pop_front();
        }
        let short = self.recent.len() as f64 / span.as_secs_f64();
        let floor = 1.0 / span.as_secs_f64();
        short > self.cfg.spike * self.long_rate.unwrap_or(0.0).max(floor)
    }
}

impl LatencyTarget {
    /// How many values its saved state has.
    fn saved_len(&self) -> usize {
        self.learned.len() * 3 * (BINS + 1) + 2 + 4
    }
}

impl Skeptic for LatencyTarget {
    fn save(&self, _now: Nanos) -> Option<Learned> {
        // What it learned of the disk: the latency histograms per load
        // level and policy, the long-run arrival rate, the windows each
        // policy ran. The window in progress starts again.
        let mut v = Vec::with_capacity(self.saved_len());
        for h in self.learned.iter().flatten() {
            v.extend(h.counts.iter().map(|&c| c as f64));
            v.push(h.total as f64);
        }
        v.push(f64::from(u8::from(self.long_rate.is_some())));
        v.push(self.long_rate.unwrap_or(0.0));
        v.extend(self.windows.iter().map(|&w| w as f64));
        Some(Learned::new(LATENCY_TARGET.name, 1, v))
    }
    fn restore(&mut self, l: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect(LATENCY_TARGET.name, 1, self.saved_len())?;
        if v.iter().any(|&x| !(x >= 0.0 && x.is_finite())) {
            return Err(LearnedError::new(format!(
                "{}: a negative or infinite count or rate",
                LATENCY_TARGET.name
            )));
        }
        let mut it = v.iter().map(|&x| x as u64);
        for h in self.learned.iter_mut().flatten() {
            for c in h.counts.iter_mut() {
                *c = it.next().unwrap_or(0);
            }
            h.total = it.next().unwrap_or(0);
        }
        let n = self.learned.len() * 3 * (BINS + 1);
        self.long_rate = (v[n] != 0.0).then_some(v[n + 1]);
        for (w, x) in self.windows.iter_mut().zip(&v[n + 2..]) {
            *w = *x as u64;
        }
        Ok(())
    }
    fn on_input(&mut self, _input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> {
        let now = ctx.now;
        let stricter = self.tick(now);
        if p.end() <= now {
            return self.withdraw(now);
        }
        let cut = |p: &Prediction, slice: Nanos| {
            Prediction::new(p.start, Some(p.duration.map_or(slice, |d| d.min(slice))))
        };
        let spiking = self.policy == Policy::Spike && self.spike_now(now);
        let out = match self.policy {
            Policy::Free => Some(*p),
            Policy::Throttle => Some(cut(p, self.cfg.slice)),
            Policy::Spike if !spiking => Some(cut(p, self.cfg.slice)),
            Policy::Spike | Policy::FgOnly => None,
        };
        match out {
            Some(o) => {
                self.passed_until = Some(o.end());
                Some(o)
            }
            None if stricter => self.withdraw(now),
            None => None,
        }
    }

    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> {
        let now = ctx.now;
        let stricter = self.tick(now);
        if ev.is_arrival() {
            self.arrivals += 1;
            self.recent.push_back(now);
        } else {
            self.current.add(now.saturating_sub(ev.pair));
        }
        let suspend = match self.policy {
            Policy::FgOnly => stricter,
            Policy::Spike => {
                let was = self.spiking;
                self.spiking = self.spike_now(now);
                stricter || (self.spiking && !was)
            }
            _ => stricter,
        };
        if suspend { self.withdraw(now) } else { None }
    }
}

/// Catalogue entry of `latency-target`.
pub const LATENCY_TARGET: ComponentInfo = ComponentInfo {
    name: "latency-target",
    role: Role::Skeptic,
    summary: "per load level learned online, passes predictions under the most aggressive of free / throttle / spike / fg-only that meets a foreground latency percentile target",
    source: "§3.2 skeptic; hybrid background priority middleware, §2.1 policies, §3 load levels and decision map, §4.1 rounding unseen loads up",
    params: &[
        ParamInfo::optional(
            "target",
            ParamKind::Duration,
            "100ms",
            "s",
            "foreground latency (completion − arrival) the percentile must not exceed",
        ),
        ParamInfo::optional(
            "percentile",
            ParamKind::Float,
            "90",
            "%",
            "which percentile of foreground latency is held to the target, in (0, 100]",
        ),
        ParamInfo::optional(
            "window",
            ParamKind::Duration,
            "10s",
            "s",
            "window over which load is measured and a policy is held (> 0)",
        ),
        ParamInfo::optional(
            "levels",
            ParamKind::FloatList,
            "[0.5, 1, 2, 5, 10, 20, 50, 100, 200]",
            "IO/s",
            "ascending upper edges of the load levels (arrival rate per window); rates above the last form a top level",
        ),
        ParamInfo::optional(
            "slice",
            ParamKind::Duration,
            "100ms",
            "s",
            "under throttle and spike, predictions are cut to at most this (> 0)",
        ),
        ParamInfo::optional(
            "spike",
            ParamKind::Float,
            "2",
            "",
            "under spike, nothing passes while the short-term arrival rate exceeds this many times the long-run rate (> 0)",
        ),
        ParamInfo::optional(
            "spike-window",
            ParamKind::Duration,
            "1s",
            "s",
            "span of the short-term arrival rate (> 0)",
        ),
        ParamInfo::optional(
            "min-samples",
            ParamKind::Int,
            "20",
            "latencies",
            "latencies a (level, policy) pair needs before its percentile is trusted (≥ 1)",
        ),
    ],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(LATENCY_TARGET, |p| {
        let levels = p.floats("levels")?.to_vec();
        if levels.windows(2).any(|w| w[0] >= w[1]) || levels.iter().any(|&x| x < 0.0) {
            return Err(ParamError::new(
                "levels",
                "edges must be ≥ 0 and strictly ascending",
            ));
        }
        let cfg = LatencyConfig {
            target: p.positive_duration("target")?,
            percentile: p.float_in("percentile", f64::MIN_POSITIVE, 100.0)?,
            window: p.positive_duration("window")?,
            levels,
            slice: p.positive_duration("slice")?,
            spike: p.positive_float("spike")?,
            spike_window: p.positive_duration("spike-window")?,
            min_samples: p.int_in("min-samples", 1, u64::MAX)?,
        };
        Ok(Built::Skeptic(Box::new(LatencyTarget::new(cfg))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request};

    fn ms(x: u64) -> Nanos {
        Nanos::from_millis(x)
    }

    fn cfg() -> LatencyConfig {
        LatencyConfig {
            target: ms(20),
            percentile: 80.0,
            window: ms(1000),
            levels: vec![5.0, 20.0],
            slice: ms(100),
            spike: 2.0,
            spike_window: ms(1000),
            min_samples: 4,
        }
    }

    /// One window starting at `t` ms: `n` requests, each taking `lat` ms.
    fn window(lt: &mut LatencyTarget, t: u64, n: u64, lat: u64) {
        for k in 0..n {
            let a = t + k * (900 / n);
            let r = Request::new(ms(a), ms(a + lat), Op::Read, 0, 4096);
            let busy = Context {
                outstanding: 1,
                ..Context::at(ms(a))
            };
            lt.on_event(&Event::arrival(&r), &busy);
            lt.on_event(&Event::completion(&r), &Context::at(ms(a + lat)));
        }
    }

    #[test]
    fn histogram_percentiles_round_up_to_the_bin() {
        let mut h = Histogram::default();
        for x in [1, 2, 3, 4, 100] {
            h.add(ms(x));
        }
        let p80 = h.percentile(80.0).unwrap();
        assert!(
            p80 >= ms(4) && p80 < Nanos::from_secs_f64(0.004 * 1.19),
            "{p80}"
        );
        assert!(h.percentile(100.0).unwrap() >= ms(100));
    }

    #[test]
    fn policies_climb_while_the_target_is_met_and_stop_at_a_miss() {
        let mut lt = LatencyTarget::new(cfg());
        lt.on_event(
            &Event::arrival(&Request::new(ms(0), ms(0), Op::Read, 0, 1)),
            &Context::at(ms(0)),
        );
        assert_eq!(lt.policy(), Policy::Spike);
        // Light load (level 0), latencies 5 ms: spike meets, then throttle
        // is explored and meets, then free.
        window(&mut lt, 10, 4, 5);
        window(&mut lt, 1000, 4, 5);
        assert_eq!(lt.policy(), Policy::Throttle);
        window(&mut lt, 2000, 4, 5);
        assert_eq!(lt.policy(), Policy::Free);
        // Free misses at level 0 (50 ms): back to throttle.
        window(&mut lt, 3000, 4, 50);
        window(&mut lt, 4000, 4, 5);
        assert_eq!(lt.meets(0, Policy::Free), Some(false));
        assert_eq!(lt.policy(), Policy::Throttle);
        assert_eq!(lt.decide(0), Policy::Throttle);
    }

    #[test]
    fn unseen_levels_round_up_and_unknown_top_levels_are_explored_one_step() {
        let mut lt = LatencyTarget::new(cfg());
        // Teach level 1 (5–20 IO/s): spike and throttle meet, free misses.
        let mut h_ok = Histogram::default();
        let mut h_bad = Histogram::default();
        for _ in 0..10 {
            h_ok.add(ms(5));
            h_bad.add(ms(50));
        }
        lt.learned[1][Policy::Spike.index()].merge(&h_ok);
        lt.learned[1][Policy::Throttle.index()].merge(&h_ok);
        lt.learned[1][Policy::Free.index()].merge(&h_bad);
        // Level 0 was never seen: rounded up to level 1.
        assert_eq!(lt.meets(0, Policy::Free), Some(false));
        assert_eq!(lt.decide(0), Policy::Throttle);
        // Level 2 (top) has nothing learned, nothing above: explore spike.
        assert_eq!(lt.meets(2, Policy::Spike), None);
        assert_eq!(lt.decide(2), Policy::Spike);
        // Spike known to miss at level 2: foreground only.
        lt.learned[2][Policy::Spike.index()].merge(&h_bad);
        assert_eq!(lt.decide(2), Policy::FgOnly);
    }

    #[test]
    fn policies_shape_what_passes() {
        let mut lt = LatencyTarget::new(cfg());
        let ctx = Context::at(ms(0));
        let long = Prediction::new(ms(0), Some(ms(5000)));
        let open = Prediction::new(ms(0), None);
        // Spike (the first policy) with no spike: cut to the slice.
        assert_eq!(
            lt.on_input(0, &long, &ctx),
            Some(Prediction::new(ms(0), Some(ms(100))))
        );
        assert_eq!(
            lt.on_input(0, &open, &ctx),
            Some(Prediction::new(ms(0), Some(ms(100))))
        );
        lt.policy = Policy::Free;
        assert_eq!(lt.on_input(0, &open, &ctx), Some(open));
        lt.policy = Policy::FgOnly;
        // Nothing passes; the live "until busy" one is not withdrawn
        // without a stricter switch.
        assert_eq!(lt.on_input(0, &long, &ctx), None);
        // A spike under `spike` withdraws a live prediction.
        lt.policy = Policy::Spike;
        lt.long_rate = Some(1.0);
        assert!(lt.on_input(0, &long, &ctx).is_some());
        let mut withdrawn = false;
        for k in 0..4 {
            let r = Request::new(ms(10 * k), ms(10 * k + 1), Op::Read, 0, 1);
            let out = lt.on_event(&Event::arrival(&r), &Context::at(ms(10 * k)));
            withdrawn |= out == Some(Prediction::new(ms(10 * k), Some(Nanos::ZERO)));
        }
        assert!(withdrawn);
        assert_eq!(lt.on_input(0, &long, &Context::at(ms(40))), None);
    }
}
