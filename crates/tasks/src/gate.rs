//! The checks a standby passes between the network's decision and the
//! drive: the daemon's, made available to a replay.
//!
//! # Why here
//!
//! A network decides *when* the disk may spin down; the daemon then
//! refuses some of those decisions for the drive's sake. Two of its
//! refusals depend only on the decision and the clock, not on the
//! hardware:
//!
//! - **Break-even.** A start whose predicted idle time is below the
//!   drive's break-even time `B` cannot save energy by the network's own
//!   estimate, so it is not sent.
//! - **Wear budget** (`max_spindowns_per_day`). A token bucket
//!   ([`WearBudget`]) holds at most a sixth of the daily budget (at least
//!   one) and refills at the daily rate; a spin-down takes a token.
//!
//! The daemon's controller (lull-live) makes both checks through
//! [`StandbyGate::admit`], and so does [`Spindown`](crate::Spindown) when a
//! replay hands it the same gate ([`Spindown::with_gate`](crate::Spindown::with_gate)),
//! so `lull replay` of a daemon's activity log spins the disk down exactly
//! where the daemon did, wear budget included. The bucket runs on the
//! wall clock at the *engine's* instant of the decision (the clock at the
//! engine's time zero plus that instant, in whole seconds): both sides know
//! it exactly, where the daemon's own wake-up comes up to a poll later.
//!
//! The checks that depend on the hardware (the disk is unplugged, no
//! transport reaches it, a standby failed and its retry has not come)
//! stay in the controller: a replay has no hardware to ask.
//!
//! # Decisions the poll overtook
//!
//! The daemon learns of I/O a poll at a time, and the engine decides
//! within the poll's interval, at instants already past when the poll is
//! read: a timer's deadline that fell before the first request of the
//! poll, or a gap between two requests the poll's counts were spread
//! into. When the same poll brought I/O at or after such a decision's
//! instant, the idle period it was for ended before the daemon could act:
//! sending the standby then would spin the disk down right after I/O it
//! has just seen, and spend a wear token on it. The controller skips such
//! a start before the other checks; a replay of the log skips it too,
//! knowing each poll that brought I/O from the log ([`BusyPolls`]).

use lull_core::time::{Nanos, UnixTime};

/// Whether a poll that covered `(since, …]` and brought an arrival at
/// `last` (its latest) overtook a decision at `at`: the rule of
/// [`BusyPolls::overtakes`], for one poll (the controller's, as it reads
/// it).
pub fn overtook(since: Nanos, last: Nanos, at: Nanos) -> bool {
    since < at && at <= last
}

/// The latest deadline a daemon could act on in the idle period from
/// `start` to `end`, ended by an arrival of a poll that covered
/// `(since, …]`: [`BusyPolls::act_end`] for that poll (the shadow's, as
/// it books the period).
pub fn acts_until(since: Nanos, start: Nanos, end: Nanos) -> Nanos {
    if since < end { since.max(start) } else { end }
}

/// The polls of a daemon's log that brought I/O: for each, the previous
/// poll's instant and the latest arrival the poll's counts were spread
/// into, in time order. A decision at an instant `at` with
/// `since < at <= last_arrival` for one of them was overtaken by that
/// poll's I/O ([module docs](self)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BusyPolls {
    /// `(since, last_arrival)` of each poll, ascending.
    polls: Vec<(Nanos, Nanos)>,
}

impl BusyPolls {
    /// No polls.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a poll that covered `(since, …]` and brought an arrival at
    /// `last_arrival` (its latest). One whose arrivals are all at or
    /// before `since` (a first sample's, I/O in flight since the previous
    /// poll) can overtake nothing and is not kept. Polls come in time
    /// order; one out of order (a clock set back between runs) is kept in
    /// order by dropping those it overlaps.
    pub fn push(&mut self, since: Nanos, last_arrival: Nanos) {
        if last_arrival <= since {
            return;
        }
        while self.polls.last().is_some_and(|&(_, l)| l >= last_arrival) {
            self.polls.pop();
        }
        self.polls.push((since, last_arrival));
    }

    /// Whether a decision at `at` was overtaken: a poll covering `at`
    /// brought an arrival at `at` or later.
    pub fn overtakes(&self, at: Nanos) -> bool {
        let i = self.polls.partition_point(|&(_, last)| last < at);
        self.polls
            .get(i)
            .is_some_and(|&(since, last)| overtook(since, last, at))
    }

    /// The latest deadline a daemon could act on in the idle period from
    /// `start` to `end` (the arrival that ended it): `end`, or the
    /// previous poll's instant when the poll that brought that arrival
    /// overtook the deadlines after it (never before `start`: a period
    /// that began within that poll leaves only a timeout of zero, below
    /// any daemon's poll).
    pub fn act_end(&self, start: Nanos, end: Nanos) -> Nanos {
        let i = self.polls.partition_point(|&(_, last)| last < end);
        self.polls
            .get(i)
            .map_or(end, |&(since, _)| acts_until(since, start, end))
    }

    /// How many polls.
    pub fn len(&self) -> usize {
        self.polls.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.polls.is_empty()
    }
}

/// What a daemon's log says of the standbys it sent, beyond the network's
/// decisions and the checks a replay makes itself: where it sent none
/// whatever the network decided (it withheld them: the disk left alone,
/// unplugged, or backing off after failures), each stretch with its
/// reason, and which of those it sent failed (the drive did not sleep). A
/// replay of the log refuses the starts in a withheld stretch and keeps
/// the disk spinning after a failed one ([`crate::Spindown::with_daemon_standbys`]),
/// as the daemon did, so that it does not report savings of spin-downs
/// that never happened.
///
/// It also holds the drive's power states the daemon learned
/// ([`DaemonStandbys::push_power`]): a drive found in standby while idle
/// (as lull left it before a restart or reload, or spun down by something
/// else) sleeps from then in the replay too, and one found spinning that
/// the replay has asleep spins up then. Without them a restart while the
/// drive slept cost lull's figures the whole night's sleep: the new run
/// withholds its standbys ("in standby already"), so the replay, and the
/// daemon's shadow evaluation, had the drive spinning until the next I/O.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DaemonStandbys {
    /// `(from, until, why)`: from `from` (inclusive) to `until`
    /// (exclusive), ascending and disjoint.
    withheld: Vec<(Nanos, Nanos, String)>,
    /// The decision instants of the standbys that failed, ascending.
    failed: Vec<Nanos>,
    /// The power states learned, `(when, in standby)`, in time order.
    power: Vec<(Nanos, bool)>,
}

impl DaemonStandbys {
    /// Nothing withheld, nothing failed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a stretch `[from, until)` withheld for `why`. Stretches come
    /// in time order; an empty one, or one that starts before the end of
    /// the last (a clock set back between runs), is cut to what follows it.
    pub fn push_withheld(&mut self, from: Nanos, until: Nanos, why: impl Into<String>) {
        let from = self.withheld.last().map_or(from, |l| from.max(l.1));
        if until > from {
            self.withheld.push((from, until, why.into()));
        }
    }

    /// Why the daemon withheld a standby decided at `at`, if it did.
    pub fn withheld_at(&self, at: Nanos) -> Option<&str> {
        let i = self.withheld.partition_point(|s| s.1 <= at);
        self.withheld
            .get(i)
            .filter(|s| s.0 <= at)
            .map(|s| s.2.as_str())
    }

    /// The withheld stretches, `(from, until, why)`, in time order.
    pub fn withheld(&self) -> &[(Nanos, Nanos, String)] {
        &self.withheld
    }

    /// Adds the decision instant of a standby that failed (in time order;
    /// one at or before the last is dropped).
    pub fn push_failed(&mut self, at: Nanos) {
        if self.failed.last().is_none_or(|&l| at > l) {
            self.failed.push(at);
        }
    }

    /// Whether the standby decided at `at` failed.
    pub fn failed_at(&self, at: Nanos) -> bool {
        self.failed.binary_search(&at).is_ok()
    }

    /// The decision instants of the failed standbys, in time order.
    pub fn failed(&self) -> &[Nanos] {
        &self.failed
    }

    /// Adds a power state the daemon learned at `at` (`true`: in
    /// standby), in time order; one before the last is dropped.
    pub fn push_power(&mut self, at: Nanos, standby: bool) {
        if self.power.last().is_none_or(|&(l, _)| at >= l) {
            self.power.push((at, standby));
        }
    }

    /// The power states learned, `(when, in standby)`, in time order.
    pub fn power(&self) -> &[(Nanos, bool)] {
        &self.power
    }

    /// Whether the log says nothing of withheld or failed standbys (the
    /// measures that count them are reported otherwise).
    pub fn is_empty(&self) -> bool {
        self.withheld.is_empty() && self.failed.is_empty()
    }
}

/// `max_spindowns_per_day` as a token bucket under a daily cap.
///
/// The bucket paces: it holds at most a sixth of the daily budget (at
/// least one) and refills at the daily rate, so a budget of 48 allows a
/// burst of 8 and then one spin-down every 30 minutes, instead of being
/// spent by morning. The cap is the hard limit: no day (a UTC day of the
/// wall clock, or of the timeline from its zero when the clock is not
/// known) holds more than `per_day` spin-downs. A bucket alone let a day
/// take its refill plus the burst, 56 for a budget of 48.
///
/// The daemon keeps it in its state file, so a restart neither refills
/// nor empties it.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WearBudget {
    /// Tokens left (a spin-down costs one).
    pub tokens: f64,
    /// When `tokens` was last brought up to date (Unix seconds).
    pub at_unix: u64,
    /// The day (Unix seconds / 86 400) of [`WearBudget::spent`].
    #[cfg_attr(feature = "serde", serde(default))]
    pub day: u64,
    /// Spin-downs charged on [`WearBudget::day`] (0 in a state file
    /// written before the cap: its day starts uncounted).
    #[cfg_attr(feature = "serde", serde(default))]
    pub spent: u32,
}

/// Seconds in a day.
const DAY_S: u64 = 86_400;

impl WearBudget {
    /// The bucket's size for `per_day`.
    pub fn capacity(per_day: u32) -> f64 {
        if per_day == 0 {
            0.0
        } else {
            (f64::from(per_day) / 6.0).ceil().max(1.0)
        }
    }

    /// A full bucket at `now_unix`, nothing spent that day.
    pub fn full(per_day: u32, now_unix: u64) -> Self {
        WearBudget {
            tokens: Self::capacity(per_day),
            at_unix: now_unix,
            day: now_unix / DAY_S,
            spent: 0,
        }
    }

    /// Refills for the time since the last update (none if the clock went
    /// back), capped at the capacity.
    pub fn refill(&mut self, per_day: u32, now_unix: u64) {
        let dt = now_unix.saturating_sub(self.at_unix) as f64;
        self.tokens = (self.tokens + dt * f64::from(per_day) / 86_400.0)
            .min(Self::capacity(per_day))
            .max(0.0);
        self.at_unix = self.at_unix.max(now_unix);
    }

    /// Spin-downs charged on the day of `now_unix` (0 on a later day).
    pub fn spent_on(&self, now_unix: u64) -> u32 {
        if now_unix / DAY_S == self.day {
            self.spent
        } else {
            0
        }
    }

    /// Gives back the token `charge` took, for a standby that failed (the
    /// drive did not spin down, so it wore nothing). Exact when nothing
    /// touched the bucket since (as in the daemon, where the failure is
    /// the next thing that happens to it, and in a replay, which knows
    /// the failure at once): the tokens are what they were before the
    /// charge, so the daemon and a replay of its log, refunding at other
    /// instants, hold the same bucket to the bit. Otherwise one token back,
    /// within the capacity. The day's count is given back too.
    pub fn refund(&mut self, charge: Charge) {
        if self.at_unix == charge.at_unix {
            self.tokens = charge.tokens_before;
        } else {
            self.tokens = (self.tokens + 1.0).min(charge.capacity);
        }
        if self.day == charge.day {
            self.spent = self.spent.saturating_sub(1);
        }
    }

    /// The first Unix second from `from_unix` on at which [`WearBudget::take`]
    /// succeeds, computed with the same arithmetic; `None` with a budget
    /// of 0 (never).
    pub fn next_token_unix(&self, per_day: u32, from_unix: u64) -> Option<u64> {
        if per_day == 0 {
            return None;
        }
        let ok = |u: u64| self.clone().take(per_day, u).is_ok();
        if ok(from_unix) {
            return Some(from_unix);
        }
        // The day's cap reached: nothing before the next day starts.
        let from = if self.spent_on(from_unix) >= per_day {
            (from_unix / DAY_S + 1) * DAY_S
        } else {
            from_unix
        };
        if ok(from) {
            return Some(from);
        }
        // The estimate, then corrected to the exact second: the refill
        // rounds as `refill` does.
        let need = ((1.0 - self.tokens).max(0.0) * 86_400.0 / f64::from(per_day)).ceil();
        let mut u = self
            .at_unix
            .max(from)
            .saturating_add(need.min(1e12) as u64)
            .max(from + 1);
        while u > from + 1 && ok(u - 1) {
            u -= 1;
        }
        while !ok(u) {
            u += 1;
        }
        Some(u)
    }

    /// Takes a token if there is one at `now_unix` and the day's cap
    /// allows it; otherwise returns the seconds until it will.
    pub fn take(&mut self, per_day: u32, now_unix: u64) -> Result<(), f64> {
        self.refill(per_day, now_unix);
        if per_day == 0 {
            return Err(f64::INFINITY);
        }
        let today = now_unix / DAY_S;
        let spent = self.spent_on(now_unix);
        if spent >= per_day {
            let next_day = (today + 1) * DAY_S;
            return Err((next_day - now_unix) as f64);
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            // A clock set back to an earlier day counts in that day anew.
            self.day = today;
            self.spent = spent + 1;
            Ok(())
        } else {
            Err((1.0 - self.tokens) * 86_400.0 / f64::from(per_day))
        }
    }
}

/// The token [`StandbyGate::admit_charge`] took from a wear budget, to
/// give back with [`WearBudget::refund`] if the standby fails.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Charge {
    tokens_before: f64,
    at_unix: u64,
    capacity: f64,
    day: u64,
}

/// Which of the daemon's checks a standby passes ([module docs](self)).
/// The default checks nothing: the lab's spin-down, SPEC §4.2 as written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StandbyGate {
    /// Refuse a start whose predicted idle time is below this break-even
    /// time (`None`: no check; a start predicted to last until the disk is
    /// busy always passes).
    pub break_even: Option<Nanos>,
    /// The wear budget, spin-downs a day (`None`: unlimited; 0 never spins
    /// down).
    pub max_spindowns_per_day: Option<u32>,
}

/// Why [`StandbyGate::admit`] refused a standby.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Refusal {
    /// The wear budget has no spin-down left now.
    Wear {
        /// The budget, spin-downs a day.
        per_day: u32,
        /// Seconds until the next token (infinite when `per_day` is 0).
        wait_s: f64,
    },
    /// The predicted idle time is below the drive's break-even time.
    ShortPrediction {
        /// The predicted idle time.
        budget: Nanos,
        /// The break-even time.
        break_even: Nanos,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Refusal::Wear { per_day: 0, .. } => write!(f, "max_spindowns_per_day = 0"),
            Refusal::Wear { per_day, wait_s } => write!(
                f,
                "wear budget ({per_day} spin-downs a day, spread over the day) has its next spin-down in {}",
                Nanos::from_secs_f64(wait_s.ceil()).approx()
            ),
            Refusal::ShortPrediction { budget, break_even } => write!(
                f,
                "predicted idle {} is below the break-even {:.1} s",
                budget.approx(),
                break_even.as_secs_f64()
            ),
        }
    }
}

impl StandbyGate {
    /// Whether nothing is checked.
    pub fn is_open(&self) -> bool {
        self.break_even.is_none() && self.max_spindowns_per_day.is_none()
    }

    /// Whether a standby decided at wall-clock instant `at` (the engine's
    /// zero plus the command's time: `zero + at`; the bucket counts whole
    /// seconds) with predicted idle time `budget` may be sent. The wear
    /// budget is checked first (`bucket` is created full at the first
    /// check), then the prediction; the token is taken only when both
    /// pass.
    pub fn admit(
        &self,
        bucket: &mut Option<WearBudget>,
        at: UnixTime,
        budget: Option<Nanos>,
    ) -> Result<(), Refusal> {
        self.admit_charge(bucket, at, budget).map(|_| ())
    }

    /// [`StandbyGate::admit`], which also returns the token it took (none
    /// without a wear budget), for [`WearBudget::refund`] when the standby
    /// then fails.
    pub fn admit_charge(
        &self,
        bucket: &mut Option<WearBudget>,
        at: UnixTime,
        budget: Option<Nanos>,
    ) -> Result<Option<Charge>, Refusal> {
        let unix = at.as_secs();
        if let Some(per_day) = self.max_spindowns_per_day {
            let b = bucket.get_or_insert_with(|| WearBudget::full(per_day, unix));
            let mut peek = b.clone();
            if let Err(wait_s) = peek.take(per_day, unix) {
                return Err(Refusal::Wear { per_day, wait_s });
            }
        }
        if let (Some(break_even), Some(budget)) = (self.break_even, budget) {
            if budget < break_even {
                return Err(Refusal::ShortPrediction { budget, break_even });
            }
        }
        let mut charge = None;
        if let (Some(per_day), Some(b)) = (self.max_spindowns_per_day, bucket.as_mut()) {
            b.refill(per_day, unix);
            let before = Charge {
                tokens_before: b.tokens,
                at_unix: b.at_unix,
                capacity: WearBudget::capacity(per_day),
                day: unix / DAY_S,
            };
            if b.take(per_day, unix).is_ok() {
                charge = Some(before);
            }
        }
        Ok(charge)
    }
}

/// One daemon run's checks, in a replay of a log of several runs
/// ([`crate::Spindown::with_gate_runs`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateRun {
    /// Where the run begins on the replay's timeline.
    pub from: Nanos,
    /// A dry run: it kept its own state file, so its own wear bucket.
    pub dry_run: bool,
    /// The run's own wear budget (its session's), when it recorded one;
    /// otherwise the gate's applies.
    pub max_spindowns_per_day: Option<u32>,
}

impl GateRun {
    /// The run of `runs` (ascending by [`GateRun::from`]) that instant
    /// `at` falls in, if any.
    pub fn at(runs: &[GateRun], at: Nanos) -> Option<GateRun> {
        let i = runs.partition_point(|r| r.from <= at);
        i.checked_sub(1).map(|i| runs[i])
    }

    /// The wear bucket (0 the real daemon's, 1 a dry run's) and budget a
    /// decision at `at` is checked with: its run's in `runs`, the run's
    /// own budget when its session recorded one, else `per_day`.
    pub fn budget_at(runs: &[GateRun], at: Nanos, per_day: Option<u32>) -> (usize, Option<u32>) {
        match GateRun::at(runs, at) {
            Some(r) => (usize::from(r.dry_run), r.max_spindowns_per_day.or(per_day)),
            None => (0, per_day),
        }
    }
}

/// Fixed timers held to the daemon's wear budget, period by period: the
/// references a daemon's spin-downs are judged against (the best fixed
/// timeout in hindsight, the clairvoyant per-window timer), which must
/// keep the budget the daemon kept. Without it, on a busy disk the best
/// fixed timeout of a short drive spins down hundreds of times a day
/// while the daemon, held to 48, can not; lull would be judged against a
/// policy it was not allowed to run.
///
/// Each timer has a bucket per daemon mode (real, dry run), as each mode
/// keeps its state file, refilled and charged as [`StandbyGate::admit`]
/// charges the daemon's: the bucket is full at its first check, and a
/// timer that fires in a period takes a token at its deadline (the
/// period's start plus its timeout, whole Unix seconds) or, finding none,
/// at the first instant of the period it has one again, as the daemon
/// retries a refused standby ([`StandbyGate::wear_retry`]); it leaves the
/// disk spinning through a period that ends first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BudgetedTimers {
    buckets: [Vec<Option<WearBudget>>; 2],
}

impl BudgetedTimers {
    /// Timers with empty histories.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether timer `i` (each timeout keeps its index in every call),
    /// whose timeout is `timeout`, spins the disk down in the idle period
    /// from `start` in which a timeout of at most `act` fires (its length,
    /// or less where a poll overtook the deadlines at its end:
    /// [`BusyPolls::act_end`]), held to `budget` (without one, every
    /// timeout of at most `act` fires, as the references are judged
    /// without a budget), taking its token if it does.
    pub fn fires(
        &mut self,
        i: usize,
        timeout: Nanos,
        start: Nanos,
        act: Nanos,
        budget: TimerBudget,
    ) -> bool {
        self.fires_after(i, timeout, start, act, budget).is_some()
    }

    /// [`BudgetedTimers::fires`], saying how long after `start` the timer
    /// spins the disk down: at its timeout, or, the budget empty then, at
    /// the first instant it has a token again if that comes within `act`
    /// (the daemon tries a refused standby again there,
    /// [`StandbyGate::wear_retry`], and its references do the same).
    pub fn fires_after(
        &mut self,
        i: usize,
        timeout: Nanos,
        start: Nanos,
        act: Nanos,
        budget: TimerBudget,
    ) -> Option<Nanos> {
        if timeout > act {
            return None;
        }
        let Some(per_day) = budget.per_day.filter(|&n| n > 0) else {
            return Some(timeout);
        };
        let buckets = &mut self.buckets[budget.mode.min(1)];
        if buckets.len() <= i {
            buckets.resize(i + 1, None);
        }
        // The gate's own check, so the buckets are charged as the
        // daemon's is (a refusal leaves one as it was).
        let gate = StandbyGate {
            break_even: None,
            max_spindowns_per_day: Some(per_day),
        };
        let at = start + timeout;
        if gate
            .admit(&mut buckets[i], unix_time(budget.clock, at), None)
            .is_ok()
        {
            return Some(timeout);
        }
        let retry = gate.wear_retry(&buckets[i], at, budget.clock)?;
        if retry - start > act {
            return None;
        }
        gate.admit(&mut buckets[i], unix_time(budget.clock, retry), None)
            .is_ok()
            .then_some(retry - start)
    }

    /// Bytes of memory it holds.
    pub fn footprint(&self) -> usize {
        self.buckets
            .iter()
            .map(|b| b.capacity() * std::mem::size_of::<Option<WearBudget>>())
            .sum()
    }
}

/// The wear budget a [`BudgetedTimers`] timer is held to at a deadline:
/// the daemon run's it falls in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerBudget {
    /// Spin-downs a day (`None` or 0: no budget).
    pub per_day: Option<u32>,
    /// The bucket: 0 the real daemon's, 1 a dry run's.
    pub mode: usize,
    /// The wall clock at time 0, for the refill ([`unix_secs`]).
    pub clock: Option<Nanos>,
}

/// The wall clock at engine instant `at`, whole Unix seconds: `clock` is
/// the wall clock at the engine's time zero (relative time from 0 when it
/// is not known).
pub fn unix_secs(clock: Option<Nanos>, at: Nanos) -> u64 {
    clock.unwrap_or(Nanos::ZERO).0.saturating_add(at.0) / 1_000_000_000
}

/// [`unix_secs`] as a [`UnixTime`], to the nanosecond: the wall-clock
/// instant of engine time `at` (from the epoch when `clock` is not known).
pub fn unix_time(clock: Option<Nanos>, at: Nanos) -> UnixTime {
    UnixTime::since_epoch(clock.unwrap_or(Nanos::ZERO) + at)
}

/// The first instant (on the timeline whose zero is the wall clock
/// `clock`) in the Unix second `unix`: [`unix_secs`] of it is `unix`.
pub fn instant_of_unix(clock: Option<Nanos>, unix: u64) -> Nanos {
    Nanos(
        unix.saturating_mul(1_000_000_000)
            .saturating_sub(clock.unwrap_or(Nanos::ZERO).0),
    )
}

impl StandbyGate {
    /// When a standby the wear budget refused at `at` may go after all:
    /// the first instant after `at` whose Unix second lets `bucket` give a
    /// token ([`WearBudget::next_token_unix`]); `None` without a budget, or
    /// with one of 0. The daemon and a replay of its log retry there,
    /// within the same idle period: a refusal at an evening's last idle
    /// period start left the disk spinning all night, the bucket refilled
    /// within the hour.
    pub fn wear_retry(
        &self,
        bucket: &Option<WearBudget>,
        at: Nanos,
        clock: Option<Nanos>,
    ) -> Option<Nanos> {
        let per_day = self.max_spindowns_per_day?;
        let unix = bucket
            .as_ref()?
            .next_token_unix(per_day, unix_secs(clock, at))?;
        Some(instant_of_unix(clock, unix).max(at + Nanos(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withheld_holds_from_its_start_to_before_its_end() {
        let t = Nanos::from_secs;
        let mut l = DaemonStandbys::new();
        assert!(l.is_empty() && l.withheld_at(t(5)).is_none());
        l.push_withheld(t(10), t(20), "no transport");
        l.push_withheld(t(30), t(40), "no rotation");
        // Out of order (a clock set back): cut to what follows the last.
        l.push_withheld(t(35), t(50), "again");
        // Empty: dropped.
        l.push_withheld(t(60), t(60), "never");
        assert_eq!(l.withheld().len(), 3);
        assert_eq!(l.withheld_at(t(9)), None);
        assert_eq!(l.withheld_at(t(10)), Some("no transport"));
        assert_eq!(l.withheld_at(t(19)), Some("no transport"));
        assert_eq!(l.withheld_at(t(20)), None);
        assert_eq!(l.withheld_at(t(30)), Some("no rotation"));
        assert_eq!(l.withheld_at(t(40)), Some("again"));
        assert_eq!(l.withheld_at(t(49)), Some("again"));
        assert_eq!(l.withheld_at(t(50)), None);
        assert_eq!(l.withheld_at(t(60)), None);
        l.push_failed(t(70));
        l.push_failed(t(70));
        l.push_failed(t(65));
        l.push_failed(t(90));
        assert_eq!(l.failed(), [t(70), t(90)]);
        assert!(l.failed_at(t(70)) && !l.failed_at(t(71)));
    }

    #[test]
    fn budgeted_timers_keep_the_gates_budget() {
        let t = |s: u64| Nanos::from_secs(s);
        let timeouts = [t(1), t(10), t(100)];
        let clock = Some(Nanos::from_secs(1_700_000_000));
        let budget = |mode: usize, per_day: Option<u32>| TimerBudget {
            per_day,
            mode,
            clock,
        };
        // The timeouts that fire in the period from `start` lasting `len`.
        let period = |timers: &mut BudgetedTimers, start, len, b| -> Vec<usize> {
            (0..timeouts.len())
                .filter(|&i| timers.fires(i, timeouts[i], start, len, b))
                .collect()
        };
        let mut timers = BudgetedTimers::new();
        let mut fired = [0u32; 3];
        // 6 a day: a burst of 1, then one every 4 h. Periods of 50 s
        // every minute: 1 s and 10 s fire in the first only.
        for k in 0..10 {
            for i in period(&mut timers, t(60 * k), t(50), budget(0, Some(6))) {
                fired[i] += 1;
            }
        }
        assert_eq!(fired, [1, 1, 0]);
        // The dry run's bucket is its own.
        assert_eq!(
            period(&mut timers, t(700), t(50), budget(1, Some(6))),
            [0, 1]
        );
        // Four hours on, each real-mode timer has a token again.
        assert_eq!(
            period(&mut timers, t(4 * 3600 + 60), t(200), budget(0, Some(6))),
            [0, 1, 2]
        );
        // No budget (or 0): every timeout at most the period fires.
        for per_day in [None, Some(0)] {
            let f = period(&mut timers, t(5 * 3600), t(10), budget(0, per_day));
            assert_eq!(f, [0, 1], "{per_day:?}");
        }
        // The same as the gate admits a timer's standby, decision by
        // decision, and the daemon tries a refused one again when a token
        // comes within the period.
        let gate = StandbyGate {
            break_even: None,
            max_spindowns_per_day: Some(48),
        };
        let (mut bucket, mut timers) = (None, BudgetedTimers::new());
        let mut retried = 0;
        for k in 0..200u64 {
            let start = t(k * 97);
            let deadline = start + t(10);
            let mut admitted = gate
                .admit(&mut bucket, unix_time(clock, deadline), None)
                .ok()
                .map(|_| t(10));
            if admitted.is_none() {
                let retry = gate
                    .wear_retry(&bucket, deadline, clock)
                    .filter(|&r| r - start <= t(60));
                if let Some(r) = retry {
                    assert!(r > deadline && unix_secs(clock, r) > unix_secs(clock, deadline));
                    assert!(gate.admit(&mut bucket, unix_time(clock, r), None).is_ok());
                    admitted = Some(r - start);
                    retried += 1;
                }
            }
            let fired = timers.fires_after(0, t(10), start, t(60), budget(0, Some(48)));
            assert_eq!(fired, admitted, "period {k}");
        }
        assert!(retried > 0, "a token came within some period");
    }

    /// A timer the budget refuses at its deadline spins down at the first
    /// whole second a token is there, if the period lasts that long: 6 a
    /// day is a token every 4 hours.
    #[test]
    fn a_refused_timer_fires_when_a_token_comes_within_its_period() {
        let t = |s: u64| Nanos::from_secs(s);
        let clock = Some(Nanos::from_secs(1_700_000_000));
        let b = TimerBudget {
            per_day: Some(6),
            mode: 0,
            clock,
        };
        let mut timers = BudgetedTimers::new();
        assert_eq!(timers.fires_after(0, t(10), t(0), t(50), b), Some(t(10)));
        // Refused at 70 s; the token comes 4 h after the first one's.
        assert_eq!(timers.fires_after(0, t(10), t(60), t(3600), b), None);
        let after = timers
            .fires_after(0, t(10), t(7200), t(5 * 3600), b)
            .unwrap();
        assert_eq!(t(7200) + after, t(10 + 4 * 3600));
        let mut bucket = None;
        let gate = StandbyGate {
            break_even: None,
            max_spindowns_per_day: Some(6),
        };
        assert!(
            gate.admit(&mut bucket, UnixTime::from_secs(1_700_000_010), None)
                .is_ok()
        );
        assert_eq!(
            gate.wear_retry(&bucket, t(70), clock),
            Some(t(10 + 4 * 3600))
        );
        // A budget of 0 never retries.
        let zero = StandbyGate {
            break_even: None,
            max_spindowns_per_day: Some(0),
        };
        assert_eq!(
            zero.wear_retry(&Some(WearBudget::full(0, 0)), t(5), clock),
            None
        );
    }

    #[test]
    fn the_wear_budget_spreads_over_the_day() {
        let t0 = 1_700_000_000;
        let mut b = WearBudget::full(48, t0);
        // A burst of 8 (a sixth of the day's budget), then nothing…
        for _ in 0..8 {
            assert!(b.take(48, t0).is_ok());
        }
        let wait = b.take(48, t0).unwrap_err();
        assert!((wait - 1800.0).abs() < 1e-6, "{wait}");
        // …until half an hour later.
        assert!(b.take(48, t0 + 1799).is_err());
        assert!(b.take(48, t0 + 1800).is_ok());
        // A clock that goes back refills nothing.
        assert!(b.take(48, t0).is_err());
        // Zero never spins down; one a day allows one.
        let mut z = WearBudget::full(0, t0);
        assert!(z.take(0, t0 + 86_400 * 10).is_err());
        let mut one = WearBudget::full(1, t0);
        assert!(one.take(1, t0).is_ok());
        assert!(one.take(1, t0 + 86_399).is_err());
        assert!(one.take(1, t0 + 86_400).is_ok());
    }

    proptest::proptest! {
        #![proptest_config(lull_testkit::cases(256))]
        /// However the requests fall, no window of time sees more
        /// spin-downs than the bucket's size plus the daily rate over it.
        #[test]
        fn the_wear_budget_never_exceeds_its_rate(
            per_day in 1u32..200,
            gaps in proptest::collection::vec(0u64..20_000, 1..300),
        ) {
            let t0 = 1_000_000u64;
            let mut b = WearBudget::full(per_day, t0);
            let mut t = t0;
            let mut taken = Vec::new();
            for g in gaps {
                t += g;
                if b.take(per_day, t).is_ok() {
                    taken.push(t);
                }
            }
            let cap = WearBudget::capacity(per_day);
            for (i, &a) in taken.iter().enumerate() {
                for (j, &z) in taken.iter().enumerate().skip(i) {
                    let allowed = cap + (z - a) as f64 * f64::from(per_day) / 86_400.0;
                    proptest::prop_assert!((j - i + 1) as f64 <= allowed + 1e-9);
                }
            }
        }
    }

    #[test]
    fn the_gate_checks_wear_then_the_prediction_and_spends_a_token_only_when_both_pass() {
        let gate = StandbyGate {
            break_even: Some(Nanos::from_secs(3)),
            max_spindowns_per_day: Some(6),
        };
        let mut bucket = None;
        // Short: refused, and the bucket (created full: one token) keeps it.
        let short = gate.admit(
            &mut bucket,
            UnixTime::from_secs(100),
            Some(Nanos::from_secs(2)),
        );
        assert!(matches!(short, Err(Refusal::ShortPrediction { .. })));
        assert_eq!(bucket.as_ref().unwrap().tokens, 1.0);
        // Until busy: passes and takes it.
        assert_eq!(
            gate.admit(&mut bucket, UnixTime::from_secs(100), None),
            Ok(())
        );
        assert_eq!(bucket.as_ref().unwrap().tokens, 0.0);
        // Empty: the wear budget says when the next comes (6 a day: 4 h).
        match gate.admit(
            &mut bucket,
            UnixTime::from_secs(101),
            Some(Nanos::from_secs(10)),
        ) {
            Err(r @ Refusal::Wear { per_day: 6, wait_s }) => {
                assert_eq!(wait_s.ceil(), 14_399.0);
                // Read as the status and the log show durations.
                assert_eq!(
                    r.to_string(),
                    "wear budget (6 spin-downs a day, spread over the day) has its next spin-down in 4h"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            gate.admit(&mut bucket, UnixTime::from_secs(100 + 14_400), None),
            Ok(())
        );
        // An open gate passes everything and keeps no bucket.
        let mut none = None;
        assert!(StandbyGate::default().is_open());
        assert_eq!(
            StandbyGate::default().admit(&mut none, UnixTime::from_secs(0), Some(Nanos::NANO)),
            Ok(())
        );
        assert!(none.is_none());
    }

    /// A refund puts back the bucket a charge took from, bit for bit, at
    /// whatever instant it comes when nothing touched the bucket since;
    /// later, one token within the capacity.
    #[test]
    fn a_refund_gives_back_exactly_what_the_charge_took() {
        let gate = StandbyGate {
            break_even: None,
            max_spindowns_per_day: Some(48),
        };
        let mut bucket = Some(WearBudget {
            tokens: 0.3 + 0.7 / 3.0,
            at_unix: 0,
            day: 0,
            spent: 0,
        });
        // 1 234 s refill 0.685… tokens: 1.219… before the charge.
        let charge = gate
            .admit_charge(&mut bucket, UnixTime::from_secs(1_234), None)
            .unwrap()
            .unwrap();
        let mut before = WearBudget {
            tokens: 0.3 + 0.7 / 3.0,
            at_unix: 0,
            day: 0,
            spent: 0,
        };
        before.refill(48, 1_234);
        let b = bucket.as_mut().unwrap();
        assert!(b.tokens < before.tokens);
        b.refund(charge);
        assert_eq!(*b, before);
        // After a refill: one token back, within the capacity (8).
        let charge = gate
            .admit_charge(&mut bucket, UnixTime::from_secs(1_300), None)
            .unwrap()
            .unwrap();
        let b = bucket.as_mut().unwrap();
        b.refill(48, 100_000);
        assert_eq!(b.tokens, 8.0);
        b.refund(charge);
        assert_eq!(b.tokens, 8.0);
        // No budget, no charge.
        let mut none = None;
        assert_eq!(
            StandbyGate::default().admit_charge(&mut none, UnixTime::from_secs(0), None),
            Ok(None)
        );
    }

    #[test]
    fn a_decision_is_overtaken_only_by_its_own_poll_s_later_io() {
        let s = Nanos::from_secs;
        let ms = Nanos::from_millis;
        let mut b = BusyPolls::new();
        assert!(b.is_empty() && !b.overtakes(s(1)));
        // The poll at 3 s (since 2 s) brought arrivals up to 2.9 s; the
        // poll at 6 s (since 5 s) one at 5.5 s.
        b.push(s(2), ms(2900));
        b.push(s(5), ms(5500));
        assert_eq!(b.len(), 2);
        // A period ending at 2.5 s acts up to 2 s; one from 2.2 s, within
        // the poll, on nothing after its start; one ending at 4 s (no
        // poll brought it) up to its end.
        assert_eq!(b.act_end(s(1), ms(2500)), s(2));
        assert_eq!(b.act_end(ms(2200), ms(2500)), ms(2200));
        assert_eq!(b.act_end(s(3), s(4)), s(4));
        for (at, overtaken) in [
            (s(2), false), // the previous poll's instant: acted on then
            (ms(2001), true),
            (ms(2900), true), // an arrival at the same instant comes after
            (ms(2901), false),
            (s(3), false),
            (s(4), false), // a quiet poll's interval
            (ms(5200), true),
            (ms(5600), false),
            (s(9), false),
        ] {
            assert_eq!(b.overtakes(at), overtaken, "{at:?}");
        }
    }

    #[test]
    fn unix_seconds_count_from_the_clock_at_time_zero() {
        let clock = Some(Nanos(1_700_000_000_500_000_000));
        assert_eq!(unix_secs(clock, Nanos::from_millis(499)), 1_700_000_000);
        assert_eq!(unix_secs(clock, Nanos::from_millis(500)), 1_700_000_001);
        assert_eq!(unix_secs(None, Nanos::from_secs(5)), 5);
    }
}
