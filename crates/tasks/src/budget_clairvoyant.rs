//! The per-window clairvoyant timer held to a wear budget as one policy:
//! a timeout chosen in hindsight for each 10-minute window, with no day
//! holding more than `N` spin-downs in all.
//!
//! # Why one policy
//!
//! Without a budget each window's best timeout is chosen on its own
//! ([`WindowClairvoyant`](crate::spindown::WindowClairvoyant)). Under one,
//! the windows of a day share its `N` spin-downs. A window that fires in
//! five periods leaves five fewer for the night. The reference a learner
//! behind the gate is measured against must make that choice too, or it
//! promises what no timer policy could do.
//!
//! # Exact, in one pass
//!
//! In a window, a timeout `t` fires in the periods whose latest actable
//! instant is at least `t`: the `f` longest, for some `f ≤ N` (`N` a day
//! where the window's periods reach over a midnight). Among the
//! timeouts that fire in those, the least saves the most (one nanosecond
//! above the next period's, or the floor). A longer one saves less but
//! may fire after a midnight, on a day with tokens left: so each midnight
//! inside a fired period adds the least timeout that crosses it. A choice
//! that saves no more than a kept one with no more spin-downs on any day
//! is dropped. The same holds for a list of timeouts ([`Timeouts`]): the
//! least of the list in each range. Few remain: a 10-minute window holds only a handful of
//! periods longer than B.
//!
//! A spin-down counts on the UTC day of the instant the timer fires, as
//! the gate's daily cap counts it ([`WearBudget`](crate::gate::WearBudget))
//! and as [`BudgetOracle`](crate::BudgetOracle) does. Instants never go
//! back, so a dynamic program over the windows keeps, for the last day,
//! the best saving with `c` spin-downs used on it (`c ≤ N`). A window's
//! periods end at or before its last arrival, and the next window's fire
//! after it: after each window every state moves to that arrival's day.
//! O(windows · N · choices), exact (`tests/budget_clairvoyant.rs` checks
//! it against every choice of timeouts on small days).

use lull_core::time::Nanos;

use crate::budget_oracle::Best;
use crate::power::PowerModel;

/// Seconds in a day.
const DAY_S: u64 = 86_400;

/// The timeouts a window may choose from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timeouts<'a> {
    /// Every timeout of at least this floor (the exact clairvoyant).
    From(Nanos),
    /// These only, ascending: the list the best fixed timeout behind the
    /// gate is chosen from, so the two differ only in switching.
    Among(&'a [Nanos]),
}

impl Timeouts<'_> {
    /// The least allowed timeout of at least `t`.
    pub fn at_least(&self, t: Nanos) -> Option<Nanos> {
        match *self {
            Timeouts::From(floor) => Some(t.max(floor)),
            Timeouts::Among(list) => list.get(list.partition_point(|&c| c < t)).copied(),
        }
    }
}

/// One choice of a window: the spin-downs it spends on each day and what
/// it saves.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowChoice {
    /// The timeout, nanoseconds from each period's start.
    pub timeout: Nanos,
    /// Spin-downs per day, in day order: `(UTC day number, count)`.
    pub days: Vec<(u64, u32)>,
    /// Joules saved against never spinning down in the window's periods.
    pub saved_j: f64,
}

impl WindowChoice {
    /// Its spin-downs.
    pub fn spinups(&self) -> u64 {
        self.days.iter().map(|&(_, n)| u64::from(n)).sum()
    }
}

/// One window's worthwhile choices ([module docs](self)) and the day of
/// its last arrival, where every state of the program moves after it.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowChoices {
    /// The UTC day of the window's last period end.
    pub day: u64,
    /// The choices that spend at least one spin-down, each saving more
    /// than every choice with fewer; not spinning down is implied.
    pub choices: Vec<WindowChoice>,
}

/// The day (from the Unix epoch, or from the timeline's zero when `clock`
/// is `None`) of instant `t` on a timeline whose zero is `clock`.
pub fn day_of(t: Nanos, clock: Option<Nanos>) -> u64 {
    clock.unwrap_or(Nanos::ZERO).0.saturating_add(t.0) / 1_000_000_000 / DAY_S
}

impl WindowChoices {
    /// The choices of one window's periods `(start, act_end, end)` (in
    /// time order; a timer fires in one only when its deadline is at most
    /// `act_end`) on a drive with `model`, choosing among `timeouts`,
    /// with at most `cap` spin-downs; `clock` as in [`day_of`].
    /// `None` for no periods.
    pub fn new(
        periods: &[(Nanos, Nanos, Nanos)],
        model: &PowerModel,
        timeouts: Timeouts<'_>,
        cap: u32,
        clock: Option<Nanos>,
    ) -> Option<WindowChoices> {
        if periods.is_empty() {
            return None;
        }
        debug_assert!(periods.windows(2).all(|w| w[0].2 <= w[1].0), "{periods:?}");
        // The latest timeout each period fires for, longest first.
        let mut acts: Vec<Nanos> = periods
            .iter()
            .map(|&(s, a, e)| a.clamp(s, e) - s)
            .filter(|&a| timeouts.at_least(Nanos::ZERO).is_some_and(|t| a >= t))
            .collect();
        acts.sort_unstable_by(|a, b| b.cmp(a));
        let mut choices: Vec<WindowChoice> = Vec::new();
        let mut offer = |c: WindowChoice| {
            // Kept when it saves something and no kept choice saves as
            // much with no more spin-downs on any day.
            let dominated = c.saved_j <= 0.0
                || choices
                    .iter()
                    .any(|k| k.saved_j >= c.saved_j && at_most(&k.days, &c.days));
            if !dominated {
                choices.push(c);
            }
        };
        // A window whose periods reach over a midnight may spend a day's
        // budget on each side of it.
        let first = periods.iter().map(|p| day_of(p.0, clock)).min();
        let final_ = periods.iter().map(|p| day_of(p.2, clock)).max();
        let days = final_
            .zip(first)
            .map_or(1, |(b, a)| b.saturating_sub(a) + 1);
        let most = (cap as usize).saturating_mul(days as usize);
        for f in 1..=acts.len().min(most) {
            // The least timeout that fires in the f longest only.
            let above = acts.get(f).map_or(Nanos::ZERO, |&next| next + Nanos::NANO);
            let Some(t0) = timeouts.at_least(above).filter(|&t| t <= acts[f - 1]) else {
                // Ties, or no allowed timeout fires in exactly f.
                continue;
            };
            offer(choice(periods, model, t0, clock));
            // A longer timeout fires in the same periods and saves less,
            // but may fire after a midnight, on a day with tokens left:
            // the least timeout that does so for each period.
            let day_ns = DAY_S * 1_000_000_000;
            let zero = clock.unwrap_or(Nanos::ZERO).0;
            let mut later: Vec<Nanos> = Vec::new();
            for &(s, a, e) in periods {
                let act = a.clamp(s, e) - s;
                if act < t0 {
                    continue;
                }
                // Each midnight after `s + t0` up to `s + act`, as a
                // timeout no longer than the f-th longest period's.
                let mut m = (zero.saturating_add((s + t0).0) / day_ns + 1) * day_ns;
                while let Some(t) = m
                    .checked_sub(zero)
                    .and_then(|u| timeouts.at_least(Nanos(u) - s))
                {
                    if t > act.min(acts[f - 1]) {
                        break;
                    }
                    later.push(t);
                    m += day_ns;
                }
            }
            later.sort_unstable();
            later.dedup();
            for t in later {
                offer(choice(periods, model, t, clock));
            }
        }
        Some(WindowChoices {
            day: final_.unwrap_or(0),
            choices,
        })
    }
}

/// The choice of timeout `t` over a window's `periods`.
fn choice(
    periods: &[(Nanos, Nanos, Nanos)],
    model: &PowerModel,
    t: Nanos,
    clock: Option<Nanos>,
) -> WindowChoice {
    let save = model.p_active - model.p_sleep;
    let up = model.spinup_energy();
    let mut days: Vec<(u64, u32)> = Vec::new();
    let mut saved = 0.0;
    for &(s, a, e) in periods {
        if a.clamp(s, e) - s < t {
            continue;
        }
        saved += save * (e - (s + t)).as_secs_f64() - up;
        let d = day_of(s + t, clock);
        match days.last_mut() {
            Some((day, n)) if *day == d => *n += 1,
            _ => days.push((d, 1)),
        }
    }
    WindowChoice {
        timeout: t,
        days,
        saved_j: saved,
    }
}

/// Whether spin-downs per day `a` are at most `b`'s on every day (both
/// in day order).
fn at_most(a: &[(u64, u32)], b: &[(u64, u32)]) -> bool {
    a.iter().all(|&(d, n)| {
        b.iter()
            .find(|&&(e, _)| e == d)
            .is_some_and(|&(_, m)| n <= m)
    })
}

/// The dynamic program over windows ([module docs](self)), fed one
/// window at a time in time order.
#[derive(Clone, Debug)]
pub struct BudgetClairvoyant {
    cap: u32,
    /// The day the states count on.
    day: u64,
    /// `dp[c]`: the best with `c` spin-downs on `day`.
    dp: Vec<Best>,
}

impl BudgetClairvoyant {
    /// A program held to `per_day` spin-downs a day.
    pub fn new(per_day: u32) -> BudgetClairvoyant {
        let mut dp = vec![Best::NONE; per_day as usize + 1];
        dp[0] = Best::ZERO;
        BudgetClairvoyant {
            cap: per_day,
            day: 0,
            dp,
        }
    }

    /// Adds the next window's choices.
    pub fn push(&mut self, w: &WindowChoices) {
        if w.choices.is_empty() {
            // Not spinning down: every state stays as it is, and the
            // next window's spin-downs are on this day or later.
            return;
        }
        let cap = self.cap as usize;
        let mut next = vec![Best::NONE; cap + 1];
        for (c, &b) in self.dp.iter().enumerate() {
            if b.saved == f64::NEG_INFINITY {
                continue;
            }
            let stay = if self.day < w.day { 0 } else { c };
            next[stay] = next[stay].max(b);
            for choice in &w.choices {
                let (mut day, mut n) = (self.day, c);
                let fits = choice.days.iter().all(|&(d, k)| {
                    if d > day {
                        (day, n) = (d, 0);
                    }
                    n += k as usize;
                    n <= cap
                });
                if !fits {
                    continue;
                }
                let n = if day < w.day { 0 } else { n };
                next[n] = next[n].max(Best {
                    saved: b.saved + choice.saved_j,
                    spinups: b.spinups + choice.spinups(),
                });
            }
        }
        self.dp = next;
        self.day = self.day.max(w.day);
    }

    /// The best so far: `(joules saved, spin-ups)`.
    pub fn best(&self) -> (f64, u64) {
        let b = self.dp.iter().fold(Best::ZERO, |a, &b| a.max(b));
        (b.saved, b.spinups)
    }

    /// The clairvoyant of the idle periods `periods` (`(start, act_end,
    /// end)` on the timeline, in order) in windows of `window` aligned to
    /// the wall clock `clock` at the timeline's zero (else to the zero),
    /// choosing among `timeouts`, held to `per_day` spin-downs a day:
    /// `(joules saved, spin-ups)`.
    pub fn of_periods(
        periods: impl IntoIterator<Item = (Nanos, Nanos, Nanos)>,
        model: &PowerModel,
        window: Nanos,
        clock: Option<Nanos>,
        timeouts: Timeouts<'_>,
        per_day: u32,
    ) -> (f64, u64) {
        let mut dp = BudgetClairvoyant::new(per_day);
        let w = window.0.max(1);
        let zero = clock.unwrap_or(Nanos::ZERO).0;
        let mut open: Vec<(Nanos, Nanos, Nanos)> = Vec::new();
        let mut current = None;
        let mut close = |open: &mut Vec<(Nanos, Nanos, Nanos)>| {
            if let Some(c) = WindowChoices::new(open, model, timeouts, per_day, clock) {
                dp.push(&c);
            }
            open.clear();
        };
        for p in periods {
            let k = zero.saturating_add(p.2.0) / w;
            if current.is_some_and(|c| c != k) {
                close(&mut open);
            }
            current = Some(k);
            open.push(p);
        }
        close(&mut open);
        dp.best()
    }
}
