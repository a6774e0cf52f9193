//! The oracle held to a wear budget: the least energy any policy can
//! spend when no day holds more than `N` spin-downs.
//!
//! # Why a second oracle
//!
//! The plain oracle spins down in every idle period longer than the
//! break-even time `B`. Behind the daemon's wear budget no policy can: on
//! a busy day there are hundreds of such periods and 48 tokens. Judged
//! against the plain oracle, every budgeted policy looks poor, and the
//! figure says nothing about which periods it spent its tokens on. This
//! oracle knows the future and the budget: it spends each day's `N`
//! spin-downs on the periods where they save the most.
//!
//! # Exact, in one pass
//!
//! A day is a UTC day of the wall clock (or of the timeline from its zero
//! when the clock is not known), as the gate's daily cap counts it
//! ([`WearBudget`](crate::gate::WearBudget)). Sleeping through a period
//! from its start to its end saves `(p_active − p_sleep)·len − p_spinup·t_spinup`,
//! positive only beyond `B`. A period that crosses midnight may be slept
//! from its start (counted on its first day) or from a later midnight
//! (counted on that day, saving less): the choice matters when its first
//! day is full.
//!
//! Periods are disjoint and in time order, so the days they are counted
//! on never go back. A dynamic program over the periods keeps, for the
//! last day touched, the best saving with `c` spin-downs used on it
//! (`c ≤ N`); a period that reaches a later day folds those into one value,
//! since the later day's count starts at zero. O(periods · N), exact
//! (`tests/budget_oracle.rs` checks it against every choice on small
//! days).
//!
//! It bounds every policy behind the gate from below: the gate's daily
//! cap is one of its checks, and a policy can sleep no longer in a period
//! than from the instant it may spin down to the period's end.

use lull_core::time::Nanos;

use crate::power::PowerModel;

/// Seconds in a day.
const DAY_S: u64 = 86_400;

/// The oracle under a wear budget ([module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetOracle {
    /// The budget, spin-downs a day.
    pub per_day: u32,
    /// Its energy over the span, joules.
    pub energy_j: f64,
    /// Its spin-ups.
    pub spinups: u64,
}

/// A state of the dynamic program: the saving in joules and the
/// spin-downs spent for it (the budgeted clairvoyant's too).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Best {
    pub(crate) saved: f64,
    pub(crate) spinups: u64,
}

impl Best {
    pub(crate) const NONE: Best = Best {
        saved: f64::NEG_INFINITY,
        spinups: 0,
    };
    pub(crate) const ZERO: Best = Best {
        saved: 0.0,
        spinups: 0,
    };

    fn plus(self, saved: f64) -> Best {
        Best {
            saved: self.saved + saved,
            spinups: self.spinups + 1,
        }
    }

    /// The better of two: more saved, then fewer spin-ups.
    pub(crate) fn max(self, o: Best) -> Best {
        if o.saved > self.saved || (o.saved == self.saved && o.spinups < self.spinups) {
            o
        } else {
            self
        }
    }
}

impl BudgetOracle {
    /// The oracle of the idle periods `periods` (`(start, end)` on the
    /// timeline, in time order and disjoint) within a span of `span_s`
    /// seconds on a drive with `model`, held to `per_day` spin-downs a day;
    /// `clock` is the wall clock at the timeline's zero (days then start
    /// at UTC midnight), `None` for days from the timeline's zero.
    pub fn from_idle_periods(
        periods: impl IntoIterator<Item = (Nanos, Nanos)>,
        span_s: f64,
        model: &PowerModel,
        per_day: u32,
        clock: Option<Nanos>,
    ) -> BudgetOracle {
        let base = model.energy_s(span_s, 0.0, 0);
        let save = model.p_active - model.p_sleep;
        let up = model.spinup_energy();
        let cap = per_day as usize;
        let zero = clock.unwrap_or(Nanos::ZERO).0;
        let day_of = |t: Nanos| zero.saturating_add(t.0) / 1_000_000_000 / DAY_S;
        // The instant (on the timeline) day `d` starts.
        let day_start = |d: u64| {
            Nanos(
                (d * DAY_S)
                    .saturating_mul(1_000_000_000)
                    .saturating_sub(zero),
            )
        };
        // The saving of sleeping from `from` to `end`.
        let saving = |from: Nanos, end: Nanos| save * (end - from.min(end)).as_secs_f64() - up;
        // dp[c]: the best with c spin-downs counted on `day`.
        let mut dp = vec![Best::NONE; cap + 1];
        dp[0] = Best::ZERO;
        let mut day = 0u64;
        let fold = |dp: &mut Vec<Best>| {
            let best = dp.iter().fold(Best::NONE, |a, &b| a.max(b));
            dp.iter_mut().for_each(|b| *b = Best::NONE);
            dp[0] = best;
            best
        };
        if cap > 0 {
            for (start, end) in periods {
                if end <= start || saving(start, end) <= 0.0 {
                    // No saving from any instant of it: it can be skipped,
                    // and a later period folds the days it spans.
                    continue;
                }
                let (first, last) = (day_of(start), day_of(end - Nanos(1)));
                if first > day {
                    fold(&mut dp);
                    day = first;
                }
                let v_first = saving(start, end);
                if last == first {
                    for c in (0..cap).rev() {
                        let took = dp[c].plus(v_first);
                        dp[c + 1] = dp[c + 1].max(took);
                    }
                    continue;
                }
                // It reaches later days: counted on its first, or from
                // the next midnight, or from the last day's midnight.
                let on_first = dp[..cap]
                    .iter()
                    .fold(Best::NONE, |a, b| a.max(b.plus(v_first)));
                let any = fold(&mut dp);
                let mut carried = any.max(on_first);
                if first + 1 < last {
                    let v = saving(day_start(first + 1), end);
                    if v > 0.0 {
                        carried = carried.max(any.plus(v));
                    }
                }
                dp[0] = carried;
                let v_last = saving(day_start(last), end);
                if v_last > 0.0 {
                    dp[1] = any.plus(v_last);
                }
                day = last;
            }
        }
        let best = dp.iter().fold(Best::ZERO, |a, &b| a.max(b));
        BudgetOracle {
            per_day,
            energy_j: base - best.saved,
            spinups: best.spinups,
        }
    }
}
