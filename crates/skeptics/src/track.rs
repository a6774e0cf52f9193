//! Book-keeping shared by the skeptics: which input predictions are still
//! live, how a prediction turned out, and the weighted cover vote the
//! combiners use.
//!
//! # When an input prediction is live
//!
//! An input prediction `[start, end)` (`end` = never for "until busy") is
//! live from the moment it is received until the first of:
//!
//! - its end;
//! - a newer prediction from the same input (it replaces it, as the
//!   actuator replaces a running prediction with a newer one);
//! - an arrival at or after its start: the device is busy again, so the
//!   idle period the prediction was about is over (this is also where a
//!   "no duration" prediction ends). A prediction whose start is still in
//!   the future survives arrivals before its start.
//!
//! Skeptics only ever shorten or drop what they receive, never lengthen
//! it, which is how they keep the crate's one invariant: every emitted
//! prediction is the same as, or a sub-interval of, a prediction one of
//! their inputs made.

use lull_core::component::{Context, Prediction};
use lull_core::event::Event;
use lull_core::learned::LearnedError;
use lull_core::time::Nanos;

/// The prediction `[start, end)`.
pub(crate) fn from_span(start: Nanos, end: Nanos) -> Prediction {
    let duration = (end != Nanos::MAX).then(|| end - start);
    Prediction::new(start, duration)
}

/// Length of `[a0, a1) ∩ [b0, b1)`.
pub(crate) fn overlap(a: (Nanos, Nanos), b: (Nanos, Nanos)) -> Nanos {
    let lo = a.0.max(b.0);
    let hi = a.1.min(b.1);
    hi - lo
}

/// The latest prediction of each input, while it is live (see the module
/// docs).
#[derive(Clone, Debug)]
pub(crate) struct LiveSet {
    live: Vec<Option<Prediction>>,
}

impl LiveSet {
    pub(crate) fn new(n: usize) -> Self {
        LiveSet {
            live: vec![None; n],
        }
    }
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }
    pub(crate) fn get(&self, i: usize) -> Option<&Prediction> {
        self.live.get(i).and_then(Option::as_ref)
    }
    pub(crate) fn slots(&self) -> &[Option<Prediction>] {
        &self.live
    }
    /// Drops predictions that have run out by `now`.
    pub(crate) fn expire(&mut self, now: Nanos) {
        for slot in &mut self.live {
            if slot.is_some_and(|p| p.end() <= now) {
                *slot = None;
            }
        }
    }
    /// An arrival at `now` ends every prediction that has begun.
    pub(crate) fn arrival(&mut self, now: Nanos) {
        for slot in &mut self.live {
            if slot.is_some_and(|p| p.start <= now) {
                *slot = None;
            }
        }
    }
    /// Input `i` made `p` (replacing its previous one). Returns false for
    /// an input index out of range (ignored).
    pub(crate) fn set(&mut self, i: usize, p: Prediction) -> bool {
        match self.live.get_mut(i) {
            Some(slot) => {
                *slot = (p.duration != Some(Nanos::ZERO)).then_some(p);
                true
            }
            None => false,
        }
    }
    /// Removes and returns input `i`'s prediction.
    pub(crate) fn take(&mut self, i: usize) -> Option<Prediction> {
        self.live.get_mut(i).and_then(Option::take)
    }
}

/// Relative tolerance when comparing sums of weights with a threshold, so
/// `0.1 + 0.2` reaches `0.3`.
const TOLERANCE: f64 = 1e-9;

/// The weighted cover vote: the earliest instant `t ≥ now` at which the
/// live predictions covering `t` carry a total weight of at least
/// `threshold`, and the prediction `[t, end)` during which a set of them
/// that reaches the threshold all keep covering.
///
/// The candidates for `t` are `now` and the (future) starts of the live
/// predictions. At `t` the covering predictions are taken longest first
/// until their weights reach the threshold; `end` is the end of the last
/// one taken. Every prediction taken covers all of `[t, end)`, so the
/// result is a sub-interval of each of them, and the weight that supports
/// it is at least `threshold`. `threshold` must be greater than 0.
pub(crate) fn cover_vote(
    live: &[Option<Prediction>],
    weight: impl Fn(usize) -> f64,
    threshold: f64,
    now: Nanos,
) -> Option<Prediction> {
    let need = threshold * (1.0 - TOLERANCE);
    let mut candidates: Vec<Nanos> = live.iter().flatten().map(|p| p.start.max(now)).collect();
    candidates.sort_unstable();
    candidates.dedup();
    let mut covering: Vec<(Nanos, f64)> = Vec::with_capacity(live.len());
    for t in candidates {
        covering.clear();
        covering.extend(
            live.iter()
                .enumerate()
                .filter_map(|(i, p)| p.map(|p| (i, p)))
                .filter(|(_, p)| p.covers(t))
                .map(|(i, p)| (p.end(), weight(i)))
                .filter(|&(_, w)| w > 0.0),
        );
        let total: f64 = covering.iter().map(|&(_, w)| w).sum();
        if total < need {
            continue;
        }
        // Longest first; the end is where the threshold is reached.
        covering.sort_unstable_by_key(|&(end, _)| std::cmp::Reverse(end));
        let mut sum = 0.0;
        for &(end, w) in &covering {
            sum += w;
            if sum >= need {
                return (end > t).then(|| from_span(t, end));
            }
        }
    }
    None
}

/// How a single prediction of the input turned out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// When it began.
    pub(crate) start: Nanos,
    /// Where its declared time ended: its own end, or where a newer
    /// prediction of the input replaced it, or (for "until busy") the
    /// arrival that ended it.
    pub(crate) end: Nanos,
    /// Requests that overlapped `[start, end)`: those outstanding when it
    /// began plus the arrivals inside it.
    pub(crate) violations: u32,
}

impl Outcome {
    /// Declared time, seconds.
    pub(crate) fn declared_s(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
    }
}

#[derive(Clone, Copy, Debug)]
struct Open {
    p: Prediction,
    started: bool,
    violations: u32,
}

/// Judges a single input's predictions the way SPEC §4.1 measures them
/// with the actuator following predicted ends (the paper's method): a
/// prediction is violated by each request that overlaps `[start, end)`.
/// A "no duration" prediction lasts until the next arrival, which ends it
/// without violating it.
///
/// The skeptic calls [`Judge::on_event`] for every event and
/// [`Judge::on_input`] for every input prediction, whether it passes it on
/// or not; each call reports the predictions whose outcome became known.
#[derive(Clone, Debug, Default)]
pub(crate) struct Judge {
    open: Option<Open>,
    outstanding: u32,
}

impl Judge {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// How many values [`Judge::save`] writes.
    pub(crate) const SAVED: usize = 6;

    /// The prediction being judged and the outstanding count, for a
    /// learned state ([`lull_core::learned`]): its start relative to
    /// `now` (signed nanoseconds), its duration (`-1`: until busy).
    pub(crate) fn save(&self, now: Nanos, out: &mut Vec<f64>) {
        out.push(f64::from(self.outstanding));
        match &self.open {
            Some(o) => {
                out.push(1.0);
                out.push((i128::from(o.p.start.0) - i128::from(now.0)) as f64);
                out.push(o.p.duration.map_or(-1.0, |d| d.0 as f64));
                out.push(f64::from(u8::from(o.started)));
                out.push(f64::from(o.violations));
            }
            None => out.extend([0.0; 5]),
        }
    }

    /// Takes back what [`Judge::save`] wrote, at `now`. A prediction that
    /// began before this clock's zero (a daemon restored at the start of
    /// its new run, while the old one was judging a prediction) is
    /// forgotten, as [`lull_core::learned::from_ago`] forgets such times:
    /// its outcome was the old run's, and the state around it is kept.
    pub(crate) fn restore(&mut self, v: &[f64], now: Nanos) -> Result<(), LearnedError> {
        let count = |x: f64| (x >= 0.0 && x <= f64::from(u32::MAX)).then_some(x as u32);
        let bad = || LearnedError::new("a judged prediction out of range");
        self.outstanding = count(v[0]).ok_or_else(bad)?;
        self.open = if v[1] == 0.0 {
            None
        } else {
            if !v[2].is_finite() || v[2].abs() >= u64::MAX as f64 {
                return Err(bad());
            }
            let start = i128::from(now.0) + v[2] as i128;
            let duration = (v[3] >= 0.0).then(|| Nanos(v[3] as u64));
            let violations = count(v[5]).ok_or_else(bad)?;
            match u64::try_from(start) {
                Ok(start) => Some(Open {
                    p: Prediction::new(Nanos(start), duration),
                    started: v[4] != 0.0,
                    violations,
                }),
                Err(_) if start < 0 => None,
                Err(_) => return Err(bad()),
            }
        };
        Ok(())
    }

    /// Marks the open prediction as begun if it began before `now` with
    /// no event since (the outstanding count then is the last one known).
    fn touch(&mut self, now: Nanos) {
        let before = self.outstanding;
        if let Some(o) = &mut self.open {
            if !o.started && o.p.start < now {
                o.started = true;
                o.violations += before;
            }
        }
    }

    /// Reports the open prediction if it has run out by `now`.
    fn settle(&mut self, now: Nanos, report: &mut impl FnMut(Outcome)) {
        self.touch(now);
        if let Some(o) = self.open.filter(|o| o.p.end() <= now) {
            self.open = None;
            if o.started {
                report(Outcome {
                    start: o.p.start,
                    end: o.p.end(),
                    violations: o.violations,
                });
            }
        }
    }

    /// An event; reports the outcomes it settles.
    pub(crate) fn on_event(&mut self, ev: &Event, ctx: &Context, mut report: impl FnMut(Outcome)) {
        let now = ctx.now;
        self.settle(now, &mut report);
        let before = self.outstanding;
        if let Some(o) = &mut self.open {
            if !o.started && o.p.start <= now {
                // A request completing exactly at the start does not
                // overlap it; one outstanding before this event does.
                let at_start = if ev.is_completion() && o.p.start == now {
                    ctx.outstanding
                } else {
                    before
                };
                o.started = true;
                o.violations += at_start;
            }
        }
        if ev.is_arrival() {
            if let Some(o) = self.open.filter(|o| o.started) {
                if o.p.duration.is_none() {
                    self.open = None;
                    report(Outcome {
                        start: o.p.start,
                        end: now,
                        violations: o.violations,
                    });
                } else if let Some(o) = &mut self.open {
                    o.violations += 1;
                }
            }
        }
        self.outstanding = ctx.outstanding;
    }

    /// The input made `p`; reports the outcome of the prediction it
    /// replaces (truncated at `now`; one that had not begun is forgotten).
    pub(crate) fn on_input(
        &mut self,
        p: &Prediction,
        ctx: &Context,
        mut report: impl FnMut(Outcome),
    ) {
        let now = ctx.now;
        self.settle(now, &mut report);
        self.outstanding = ctx.outstanding;
        if let Some(o) = self.open.take() {
            if o.started && o.p.start < now {
                report(Outcome {
                    start: o.p.start,
                    end: o.p.end().min(now),
                    violations: o.violations,
                });
            }
        }
        if p.duration == Some(Nanos::ZERO) {
            return;
        }
        let started = p.start <= now;
        self.open = Some(Open {
            p: *p,
            started,
            violations: if started { ctx.outstanding } else { 0 },
        });
    }

    /// Settles what has run out by `now` (for stimuli other than events).
    pub(crate) fn tick(&mut self, now: Nanos, mut report: impl FnMut(Outcome)) {
        self.settle(now, &mut report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request};

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }
    fn p(start: u64, d: Option<u64>) -> Prediction {
        Prediction::new(s(start), d.map(s))
    }

    #[test]
    fn cover_vote_finds_the_earliest_supported_interval() {
        let live = [Some(p(0, Some(10))), Some(p(2, Some(3))), None];
        // One vote: now, the longest covering prediction.
        assert_eq!(cover_vote(&live, |_| 1.0, 1.0, s(1)), Some(p(1, Some(9))));
        // Two votes: from 2 s, while both cover.
        assert_eq!(cover_vote(&live, |_| 1.0, 2.0, s(1)), Some(p(2, Some(3))));
        // Three votes: never.
        assert_eq!(cover_vote(&live, |_| 1.0, 3.0, s(1)), None);
        // Weights: the short one alone is enough.
        assert_eq!(
            cover_vote(&live, |i| [0.5, 2.0, 9.0][i], 1.0, s(1)),
            Some(p(2, Some(3)))
        );
        // Until-busy predictions give until-busy results.
        let live = [Some(p(0, None)), Some(p(0, None))];
        assert_eq!(cover_vote(&live, |_| 1.0, 2.0, s(4)), Some(p(4, None)));
        // Tolerance: 0.1 + 0.2 reaches 0.3.
        let live = [Some(p(0, None)), Some(p(0, None))];
        assert!(cover_vote(&live, |i| [0.1, 0.2][i], 0.3, s(0)).is_some());
    }

    /// A judged prediction saved by one run and restored at the zero of
    /// the next one's clock began before it: forgotten, not an error that
    /// would throw away everything the network learned (found by `lull
    /// rank --warm-up`, where `quality` failed on one day in thirty).
    #[test]
    fn a_prediction_from_before_the_clock_s_zero_is_forgotten() {
        let mut j = Judge::new();
        j.on_input(&p(100, Some(5)), &Context::at(s(100)), |_| {});
        let mut v = Vec::new();
        j.save(s(102), &mut v);
        assert!(v[2] < 0.0, "began 2 s before the save");
        // At the same clock: exactly as it was.
        let mut same = Judge::new();
        same.restore(&v, s(102)).unwrap();
        assert_eq!(same.open.map(|o| o.p), Some(p(100, Some(5))));
        // At a new clock's zero: forgotten.
        let mut fresh = Judge::new();
        fresh.restore(&v, Nanos::ZERO).unwrap();
        assert!(fresh.open.is_none());
        // Nonsense is still refused.
        for bad in [f64::NAN, f64::INFINITY, 1e30] {
            let mut w = v.clone();
            w[2] = bad;
            assert!(Judge::new().restore(&w, s(102)).is_err(), "{bad}");
        }
    }

    #[test]
    fn judge_counts_arrivals_inside_and_outstanding_at_start() {
        let mut j = Judge::new();
        let mut got = Vec::new();
        let req = Request::new(s(12), s(13), Op::Read, 0, 512);
        let mut ctx = Context::at(s(10));
        j.on_input(&p(10, Some(5)), &ctx, |o| got.push(o));
        ctx.now = s(12);
        ctx.outstanding = 1;
        j.on_event(&Event::arrival(&req), &ctx, |o| got.push(o));
        ctx.now = s(13);
        ctx.outstanding = 0;
        j.on_event(&Event::completion(&req), &ctx, |o| got.push(o));
        assert!(got.is_empty());
        j.tick(s(15), |o| got.push(o));
        assert_eq!(
            got,
            [Outcome {
                start: s(10),
                end: s(15),
                violations: 1
            }]
        );
        // Made while a request is outstanding: violated from the start.
        got.clear();
        let ctx = Context {
            outstanding: 2,
            ..Context::at(s(20))
        };
        j.on_input(&p(20, None), &ctx, |o| got.push(o));
        let req = Request::new(s(30), s(31), Op::Read, 0, 512);
        let ctx = Context {
            outstanding: 1,
            ..Context::at(s(30))
        };
        j.on_event(&Event::arrival(&req), &ctx, |o| got.push(o));
        assert_eq!(
            got,
            [Outcome {
                start: s(20),
                end: s(30),
                violations: 2
            }]
        );
    }
}
