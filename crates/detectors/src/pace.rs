//! Spending a wear budget where it saves the most: the pacer of
//! `long-idle(per-day=N)`, and so of `auto` behind a daemon's
//! `max_spindowns_per_day`.
//!
//! # The problem
//!
//! The daemon's gate lets at most `N` spin-downs a day through, as a
//! token bucket (a burst of `N/6`, then one every `24 h/N`) under a daily
//! cap (`lull_tasks::WearBudget`).
//! A detector that does not know it spends its tokens on the first periods
//! that pass its own test, mostly short ones on a busy disk, and has none
//! left when the long ones come: on a NAS day `auto` behind the gate lost
//! to a fixed timeout behind the same gate.
//!
//! # The method: follow the best budgeted policy
//!
//! Which periods deserve a token depends on what comes after them, which
//! an online detector does not know. What it does know, once each period
//! ends, is exactly what any timer-like policy would have done in it,
//! budget included. So the pacer keeps a set of **budgeted experts**, each
//! with its own copy of the gate's bucket and daily cap, and scores each on
//! every idle period by the spinning time it would have saved (sleep minus
//! `B` per spin-down, the energy model of SPEC §4.2 in units of `B`):
//!
//! - **timers** `timer(F)` for 44 timeouts `F` from `B/8` to about `200·B`,
//!   in quarter octaves: the family the best fixed timeout behind the gate is
//!   chosen from, in hindsight;
//! - **`long-idle` held to a floor**: `long-idle`'s own decision in the
//!   period (at once, or at its learned timeout), but not before `F`, for
//!   the same timeouts and for no floor at all (`long-idle` as it is).
//!
//! `long-idle`'s own decision is known for every period it decides in,
//! whatever the pacer did, and its learning does not depend on when the
//! disk spun down, so each expert's score is exact. The pacer acts on the
//! expert that has saved the most, with scores decayed with a time
//! constant of half a day: a NAS's busy day and its quiet one want other
//! timeouts (96 s and 12 s for the paper drive on two `home-nas` days),
//! and two days' memory followed the day before (tuning seeds 301–303:
//! 1.07 of the best budgeted fixed timeout's energy after a day of
//! learning, against 1.02 with six hours' memory).
//!
//! **Learning fast when long periods are few.** Every expert is scored on
//! every period, short ones included, so nothing waits for the rare long
//! period to learn. Before anything is learned the scores tie, and the
//! pacer acts on the **most cautious** expert within two break-evens of
//! the best score (the longest timeout; a floor before its timer). That is
//! ski rental's lesson under a budget: a token spent on a short period
//! cannot be had back, a token kept is spent later at worst. As the
//! cautious experts leave tokens unspent that shorter ones turn into
//! savings, the shorter ones pull ahead and are followed.
//!
//! **Why this and not a price.** The other candidate was a price per
//! spin-down in `share`'s loss, raised and lowered until the budget is just
//! met (a dual variable). A price fixes how many tokens are spent, not on
//! which periods, and it settles only after days; the bucket's burst and
//! refill, which decide which periods can get a token at all, are not in
//! it. The experts carry the gate itself, so a workload where tokens are
//! best spent at once (an office day of many long-enough periods) and one
//! where they are best saved for the night's long ones (a NAS) are told
//! apart by what each would have saved, and the pacer tracks the best
//! budgeted fixed timeout by construction. The gate stays the hard limit:
//! the pacer only decides which periods ask for a token.
//!
//! O(89) per learned period (two floats and a bucket update per expert),
//! fixed memory, deterministic; its state is saved with `long-idle`'s.

use lull_core::time::Nanos;

/// Timeouts of the experts: quarter octaves of `B` from `B/8`.
pub const PACE_TIMEOUTS: usize = 44;
/// Experts: a timer and a floored `long-idle` per timeout, and
/// `long-idle` as it is (the last).
const EXPERTS: usize = 2 * PACE_TIMEOUTS + 1;
/// Time constant of the scores' decay, seconds (half a day).
const DECAY_S: f64 = 12.0 * 3_600.0;
/// Seconds in a day.
const DAY_S: f64 = 86_400.0;
/// How close to the best score, in break-evens of spinning, an expert
/// must be to be acted on when it is more cautious.
const NEAR: f64 = 2.0;
/// The same as a share of the best score, where that is more.
const NEAR_SHARE: f64 = 0.01;
/// A saved age that stands for "never".
const NEVER: f64 = -1.0;
/// Values saved per expert.
const EXPERT_SAVED: usize = 4;

/// One budgeted expert's bucket, daily count and score.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Expert {
    /// Tokens in its bucket, at `at`.
    tokens: f64,
    /// When its bucket was last charged (engine seconds; NaN: never).
    at: f64,
    /// Spin-downs counted on the day of `at` (its UTC day, computed with
    /// the clock known now, so a restart that learns the clock later
    /// counts the same day).
    spent: f64,
    /// Decayed spinning time saved (seconds).
    score: f64,
}

/// What the pacer decided for a period ([`WearPace::decide`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Paced {
    /// `long-idle`'s own decision.
    AsIs,
    /// `long-idle`'s decision, but not before this long into the period.
    Floor(Nanos),
    /// A timer: this long into the period, whatever `long-idle` decided.
    Timer(Nanos),
}

/// The wear-budget pacer ([module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct WearPace {
    per_day: u32,
    breakeven: f64,
    /// The timers' timeouts and the floors, seconds, ascending.
    timeouts: [f64; PACE_TIMEOUTS],
    experts: [Expert; EXPERTS],
    /// When the scores were last decayed (engine seconds).
    decayed_at: Option<f64>,
    /// The wall clock at engine time 0, for the days.
    clock: Option<Nanos>,
    /// `long-idle`'s own decision in the current period, seconds into it
    /// (`None`: it has not decided, or will not fire).
    own: Option<f64>,
}

impl WearPace {
    /// How many values its saved state has.
    pub const SAVED_LEN: usize = EXPERTS * EXPERT_SAVED + 1;

    /// A pacer for `per_day` spin-downs a day (at least 1) on a drive with
    /// break-even `breakeven`, every expert's bucket full.
    pub fn new(per_day: u32, breakeven: Nanos) -> Self {
        let per_day = per_day.max(1);
        let fresh = Expert {
            tokens: Self::capacity(per_day),
            at: f64::NAN,
            spent: 0.0,
            score: 0.0,
        };
        WearPace {
            per_day,
            breakeven: breakeven.as_secs_f64(),
            timeouts: Self::timeouts(breakeven.as_secs_f64()),
            experts: [fresh; EXPERTS],
            decayed_at: None,
            clock: None,
            own: None,
        }
    }

    /// The budget, spin-downs a day.
    pub fn per_day(&self) -> u32 {
        self.per_day
    }

    /// The gate's bucket size for `per_day` (as `WearBudget::capacity`).
    fn capacity(per_day: u32) -> f64 {
        (f64::from(per_day) / 6.0).ceil().max(1.0)
    }

    /// The experts' timeouts, seconds: quarter octaves of `B` from `B/8`.
    fn timeouts(breakeven: f64) -> [f64; PACE_TIMEOUTS] {
        std::array::from_fn(|k| breakeven / 8.0 * 2f64.powf(k as f64 / 4.0))
    }

    /// Sets the wall clock at engine time 0 (days are UTC days of it).
    pub fn set_clock(&mut self, clock: Option<Nanos>) {
        self.clock = clock;
    }

    /// The expert acted on: of those within [`NEAR`] break-evens of the
    /// best score, the most cautious (module docs, "Learning fast").
    fn leader(&self) -> usize {
        let best = self
            .experts
            .iter()
            .map(|e| e.score)
            .fold(f64::NEG_INFINITY, f64::max);
        let near = best - (NEAR * self.breakeven).max(NEAR_SHARE * best.abs());
        // From the most cautious: floors and timers by timeout, longest
        // first (a floor never spins down before its timer), then
        // `long-idle` as it is.
        for k in (0..PACE_TIMEOUTS).rev() {
            for e in [PACE_TIMEOUTS + k, k] {
                if self.experts[e].score >= near {
                    return e;
                }
            }
        }
        EXPERTS - 1
    }

    /// The policy of expert `k`.
    fn policy(&self, k: usize) -> Paced {
        if k == EXPERTS - 1 {
            Paced::AsIs
        } else if k < PACE_TIMEOUTS {
            Paced::Timer(Nanos::from_secs_f64(self.timeouts[k]))
        } else {
            Paced::Floor(Nanos::from_secs_f64(self.timeouts[k - PACE_TIMEOUTS]))
        }
    }

    /// What the pacer does in a period that began now, before
    /// `long-idle` has decided: whether it may declare at the start
    /// (only as it is).
    pub fn leading(&self) -> Paced {
        self.policy(self.leader())
    }

    /// `long-idle` decided, `own` into the period (`None`: it will not
    /// fire); the pacer's decision for the period.
    pub fn decide(&mut self, own: Option<Nanos>) -> Paced {
        self.own = own.map(|o| o.as_secs_f64());
        self.leading()
    }

    /// The current period began `period` before `now` and ended now: every
    /// expert is scored on it.
    pub fn end(&mut self, now: Nanos, period: Nanos) {
        let end = now.as_secs_f64();
        let len = period.as_secs_f64();
        let start = end - len;
        if let Some(d) = self.decayed_at {
            let k = (-(end - d).max(0.0) / DECAY_S).exp();
            self.experts.iter_mut().for_each(|e| e.score *= k);
        }
        self.decayed_at = Some(end);
        let own = self.own.take();
        // Timers, by timeout: none from the first that outlasts the period.
        for k in 0..PACE_TIMEOUTS {
            let t = self.timeouts[k];
            if t >= len {
                break;
            }
            self.score(k, start + t, end);
        }
        // `long-idle` as it is and held to floors: only if it decided
        // within the period.
        if let Some(o) = own.filter(|&o| o < len) {
            self.score(EXPERTS - 1, start + o, end);
            for k in 0..PACE_TIMEOUTS {
                let after = o.max(self.timeouts[k]);
                if after >= len {
                    break;
                }
                self.score(PACE_TIMEOUTS + k, start + after, end);
            }
        }
    }

    /// Expert `k` asks for a token at `at` in a period ending at `end`,
    /// and is scored on what it saves if it gets one in time.
    fn score(&mut self, k: usize, at: f64, end: f64) {
        if let Some(at) = self.take(k, at, end) {
            self.experts[k].score += (end - at) - self.breakeven;
        }
    }

    /// Expert `k` asks for a token at `at` (engine seconds) in a period
    /// ending at `end`: when it gets one (at `at`, or when its bucket has
    /// one again, as the daemon retries), if before `end`.
    fn take(&mut self, k: usize, at: f64, end: f64) -> Option<f64> {
        let rate = f64::from(self.per_day) / DAY_S;
        let cap = Self::capacity(self.per_day);
        let per_day = f64::from(self.per_day);
        let clock = self.clock.map_or(0.0, |c| c.as_secs_f64());
        let day_at = |t: f64| ((clock + t) / DAY_S).floor();
        let e = &mut self.experts[k];
        let since = if e.at.is_nan() {
            0.0
        } else {
            (at - e.at).max(0.0)
        };
        let tokens = (e.tokens + since * rate).min(cap);
        let mut at = at;
        if tokens < 1.0 {
            at += (1.0 - tokens) / rate;
        }
        let last_day = day_at(e.at);
        if day_at(at) == last_day && e.spent >= per_day {
            // The day's cap: from the next midnight.
            at = (last_day + 1.0) * DAY_S - clock;
        }
        if at >= end {
            return None;
        }
        let since = if e.at.is_nan() {
            0.0
        } else {
            (at - e.at).max(0.0)
        };
        e.tokens = ((e.tokens + since * rate).min(cap) - 1.0).max(0.0);
        e.spent = if day_at(at) == last_day {
            e.spent + 1.0
        } else {
            1.0
        };
        e.at = at;
        Some(at)
    }

    /// The leader's score over `long-idle`'s as it is (seconds of spinning
    /// saved, decayed), for a gauge.
    pub fn lead(&self) -> f64 {
        self.experts[self.leader()].score - self.experts[EXPERTS - 1].score
    }

    /// The leader's timeout or floor, seconds (0: `long-idle` as it is).
    pub fn leader_timeout_s(&self) -> f64 {
        match self.leading() {
            Paced::AsIs => 0.0,
            Paced::Floor(f) | Paced::Timer(f) => f.as_secs_f64(),
        }
    }

    /// Appends the saved state: times relative to `now`.
    pub fn save_values(&self, now: Nanos, v: &mut Vec<f64>) {
        let now = now.as_secs_f64();
        // Times as ages, so that a state taken up on another timeline (a
        // warm-up's) keeps them as long ago; -1 for never (the state file
        // is JSON, which has no NaN).
        let age = |t: f64| {
            if t.is_nan() {
                NEVER
            } else {
                (now - t).max(0.0)
            }
        };
        for e in &self.experts {
            v.extend([e.tokens, age(e.at), e.spent, e.score]);
        }
        v.push(self.decayed_at.map_or(NEVER, age));
    }

    /// Restores [`WearPace::save_values`]' state at `now`.
    pub fn restore_values(&mut self, v: &[f64], now: Nanos) -> Result<(), String> {
        if v.len() != Self::SAVED_LEN {
            return Err("long-idle: the wear pacer's state has the wrong length".into());
        }
        let now = now.as_secs_f64();
        let mut experts = self.experts;
        for (e, x) in experts.iter_mut().zip(v.chunks_exact(EXPERT_SAVED)) {
            let age_ok = x[1] == NEVER || (x[1].is_finite() && x[1] >= 0.0);
            if !(x[0].is_finite() && x[0] >= 0.0 && age_ok && x[2] >= 0.0 && x[3].is_finite()) {
                return Err("long-idle: the wear pacer's state out of range".into());
            }
            *e = Expert {
                tokens: x[0].min(Self::capacity(self.per_day)),
                at: if x[1] == NEVER { f64::NAN } else { now - x[1] },
                spent: x[2],
                score: x[3],
            };
        }
        self.experts = experts;
        let d = v[EXPERTS * EXPERT_SAVED];
        if !(d == NEVER || (d.is_finite() && d >= 0.0)) {
            return Err("long-idle: the wear pacer's state out of range".into());
        }
        self.decayed_at = (d != NEVER).then_some(now - d);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> Nanos {
        Nanos::from_secs_f64(x)
    }

    #[test]
    fn it_starts_cautious_and_follows_what_saved_the_most() {
        let mut p = WearPace::new(48, s(3.0));
        // Nothing learned: the most cautious expert.
        let longest = s(3.0 / 8.0 * 2f64.powf((PACE_TIMEOUTS - 1) as f64 / 4.0));
        assert_eq!(p.leading(), Paced::Floor(longest));
        // Periods of 5 s every 10 s, long-idle deciding at 1 s: a token
        // saves 5 s − B − the wait, most for the shortest timer (B/8).
        // The leader is the most cautious within 2·B of it.
        let mut t = 0.0;
        for _ in 0..2000 {
            t += 10.0;
            p.decide(Some(s(1.0)));
            p.end(s(t), s(5.0));
        }
        match p.leading() {
            Paced::Timer(f) => assert!(f < s(1.0), "{f:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_budget_keeps_its_tokens_for_the_long_periods() {
        // 12 a day (a bucket of 2): each hour, 30 periods of 4 s then one
        // of 600 s. Long-idle fires at once in every one: its tokens go
        // to the short ones. A timer above 4 s waits for the long ones.
        let mut p = WearPace::new(12, s(3.0));
        let mut t = 0.0;
        for _ in 0..96 {
            for _ in 0..30 {
                t += 10.0;
                p.decide(Some(s(0.0)));
                p.end(s(t), s(4.0));
            }
            t += 700.0;
            p.decide(Some(s(0.0)));
            p.end(s(t), s(600.0));
            t += 2000.0;
        }
        match p.leading() {
            Paced::Timer(f) | Paced::Floor(f) => assert!(f > s(4.0), "{f:?}"),
            Paced::AsIs => panic!("as is"),
        }
        // Its state survives a save and restore.
        let mut v = Vec::new();
        p.save_values(s(t), &mut v);
        // Finite throughout: the daemon's state file is JSON.
        assert!(v.iter().all(|x| x.is_finite()));
        let mut fresh = Vec::new();
        WearPace::new(12, s(3.0)).save_values(s(0.0), &mut fresh);
        assert!(fresh.iter().all(|x| x.is_finite()));
        let mut q = WearPace::new(12, s(3.0));
        q.restore_values(&v, s(t)).unwrap();
        assert_eq!(q.leading(), p.leading());
    }
}
