//! Disk power-down (§2.5.1, §4.2): the `spindown` task under trace timing.
//!
//! The initial step spins the disk down, the idle step keeps it asleep,
//! the recovery step spins it up when the next request arrives (Table 1).
//! The task follows SPEC §4.2 to the letter:
//!
//! - **Trace timing.** Requests keep their recorded times; the task only
//!   books energy and delay.
//! - **Sleep.** The disk sleeps from the moment the task starts inside an
//!   idle gap until the next arrival; spin-down time counts as sleep. A
//!   `Stop` from the actuator (the predicted end passed) does *not* spin
//!   the disk up: as in the paper, only a request does. A task started
//!   while requests are outstanding (a rate detector may do that) spins
//!   the disk down when the device next empties, if it is still running
//!   then; one start gives at most one spin-down.
//! - **Energy** over the span `[first arrival, last completion]`:
//!   `p_active·(span − sleep) + p_sleep·sleep + p_spinup·t_spinup·spinups`.
//! - **Delay.** The request that wakes the disk waits
//!   `t_spinup + max(0, t_spindown − slept)` (the disk must finish spinning
//!   down before it can spin up). Requests that arrive while the disk is
//!   still spinning up wait for it too, by the rest of the spin-up; they
//!   count in `delayed_ops` and `added_latency_s` (the paper's "operations
//!   that had to be delayed because the disk wasn't ready"). Trace timing
//!   does not shift later requests.
//! - **Oracle.** `oracle_energy_j` spins down at the start of every idle
//!   period longer than the break-even time and up at its end. The task
//!   computes it from the events it sees (every arrival and completion
//!   passes through [`IdleTask::on_event`]), counting outstanding requests
//!   exactly as [`lull_core::event::Timeline::idle_periods`] does, so it
//!   needs no lookahead and no second pass. Any detector's energy is at
//!   least the oracle's: its sleeps lie inside idle periods, at most one
//!   per period, and within one period the saving
//!   `(p_active − p_sleep)·slept − p_spinup·t_spinup` is largest when the
//!   sleep spans the whole period and positive only beyond break-even.
//!
//! - **Best fixed timeout in hindsight.** The reference every adaptive
//!   policy must beat (hd-idle and `hdparm -S` use one timeout). Given the
//!   idle periods of a trace, [`BestFixed::from_idle_periods`] finds the
//!   timeout whose energy is least, exactly: a timer `t` sleeps `L − t` in
//!   every period `L ≥ t` and spins up once at its end, so between two
//!   consecutive period lengths the energy grows with `t`, and the minimum
//!   lies just above one of them (or at 0). Every candidate is evaluated
//!   with suffix sums over the sorted lengths, O(n log n) in all. The task
//!   reports it when handed one ([`Spindown::with_best_fixed`]), with
//!   `excess_vs_best_fixed = (energy − oracle) / (best_fixed − oracle)`:
//!   below 1, the network beat every fixed timeout on this trace.
//! - **Clairvoyant per-window timer.** A stronger reference: in hindsight
//!   the best fixed timeout of each 10-minute window, for the idle
//!   periods that end in it ([`WindowClairvoyant`], exact per window).
//!   It spends no more than the best fixed timeout and no less than the
//!   oracle; `gain_vs_clairvoyant = (best_fixed − energy) / (best_fixed −
//!   clairvoyant)` is the share of what it adds over the best fixed
//!   timeout that the network captures.
//!
//! - **The daemon's checks** ([`crate::gate`], off by default). With
//!   [`Spindown::with_gate`] a start the daemon would not have sent (the
//!   wear budget is spent, or the predicted idle time is below the
//!   break-even time) leaves the disk spinning, so a replay of a daemon's
//!   activity log spins down where the daemon did.
//!
//! Granularity (§2.4): interruptible at any time (a sleeping disk can be
//! woken whenever), no work lost; the cost of an interruption is the
//! spin-up energy and delay, which the measures carry.

use lull_core::component::Context;
use lull_core::event::{Event, EventKind};
use lull_core::task::{Granularity, IdleTask, Measure};
use lull_core::time::{Nanos, UnixTime};

use crate::budget_clairvoyant::{BudgetClairvoyant, Timeouts};
use crate::budget_oracle::BudgetOracle;
use crate::gate::{
    BudgetedTimers, BusyPolls, DaemonStandbys, GateRun, Refusal, StandbyGate, TimerBudget,
    WearBudget, unix_secs,
};
use crate::power::PowerModel;

/// The `spindown` task: a disk that sleeps in predicted idle time.
#[derive(Clone, Debug)]
pub struct Spindown {
    model: PowerModel,
    first: Option<Nanos>,
    end: Option<Nanos>,
    outstanding: u32,
    running: bool,
    /// Started while busy: spin down when the device empties.
    armed: bool,
    /// Asleep (or spinning down) since.
    asleep_since: Option<Nanos>,
    /// Spinning up until.
    ready_at: Nanos,
    sleep: Nanos,
    spinups: u64,
    delayed_ops: u64,
    added_latency_s: f64,
    idle_since: Option<Nanos>,
    oracle_sleep: Nanos,
    oracle_spinups: u64,
    best_fixed: Option<BestFixed>,
    /// The daemon's checks, when a replay asks for them.
    gate: StandbyGate,
    /// The wear budget's bucket of each daemon mode (the real daemon's,
    /// a dry run's), and the runs of a daemon's log, in order.
    buckets: [Option<WearBudget>; 2],
    runs: Vec<GateRun>,
    /// Starts the gate refused: wear budget, short prediction.
    refused: [u64; 2],
    /// A daemon log's polls that brought I/O, when a replay of the log
    /// asks for them: starts they overtook are skipped.
    busy_polls: Option<std::sync::Arc<BusyPolls>>,
    /// Starts skipped because their poll's I/O overtook them.
    overtaken: u64,
    /// What a daemon's log says it did with its standbys, when a replay of
    /// the log asks for it.
    daemon_standbys: Option<std::sync::Arc<DaemonStandbys>>,
    /// Starts the daemon withheld, and those whose standby failed.
    withheld: u64,
    failed: u64,
    /// The daemon's learned power states ([`DaemonStandbys::power`])
    /// taken up so far.
    power_next: usize,
    /// A start the wear budget refused, tried again at the first instant
    /// a token is there (with the end of the idle time it predicted), as
    /// the daemon does, until the idle period ends.
    retry: Option<(Nanos, Option<Nanos>)>,
    /// Starts tried again once the wear budget had a token.
    retried: u64,
}

/// The best fixed timeout in hindsight for one trace and drive; see the
/// module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BestFixed {
    /// The timeout, seconds. When never spinning down is best, just above
    /// the longest idle period (a timeout that never fires on this trace).
    pub timeout_s: f64,
    /// Its energy over the span, joules.
    pub energy_j: f64,
    /// Its spin-ups.
    pub spinups: u64,
    /// The clairvoyant timer chosen per window, when computed
    /// ([`WindowClairvoyant::from_idle_periods`]; `lull replay` and `lull
    /// rank` compute it for every trace).
    pub window_clairvoyant: Option<WindowClairvoyant>,
    /// The oracle held to the same wear budget, when the references are
    /// ([`BestFixed::under_wear_budget`]): the floor of every policy
    /// behind the gate ([`BudgetOracle`]).
    pub budget_oracle: Option<BudgetOracle>,
}

/// The clairvoyant per-window timer: in hindsight, the best fixed timeout
/// of each window (10 minutes by default), each window's timeout applying
/// to the idle periods that end in it. A stronger reference than one
/// timeout for the whole trace: on persistent regimes a learner can
/// approach it, a fixed timeout cannot. Exact, from the idle periods
/// ([`BestFixed::from_idle_periods`] per window).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowClairvoyant {
    /// The window, seconds.
    pub window_s: f64,
    /// Its energy over the span, joules.
    pub energy_j: f64,
    /// Its spin-ups.
    pub spinups: u64,
}

impl WindowClairvoyant {
    /// The default window: 10 minutes.
    pub const WINDOW: Nanos = Nanos::from_secs(600);

    /// The clairvoyant of the idle periods `periods` (`(start, end)` on
    /// the trace's timeline, in order) within a span of `span` on a drive
    /// with `model`, with windows of `window` aligned to the wall clock
    /// when the timeline's `clock` (Unix nanoseconds at its time 0) is
    /// known, else to time 0.
    pub fn from_idle_periods(
        periods: impl IntoIterator<Item = (Nanos, Nanos)>,
        span: Nanos,
        model: &PowerModel,
        window: Nanos,
        clock: Nanos,
    ) -> WindowClairvoyant {
        let span_s = span.as_secs_f64();
        Self::from_idle_periods_from(periods, span_s, model, window, clock, Nanos::ZERO)
    }

    /// The window ([`WindowClairvoyant::window_s`] as a duration).
    pub fn window(&self) -> Nanos {
        Nanos::from_secs_f64(self.window_s)
    }

    /// [`WindowClairvoyant::from_idle_periods`], the span in seconds (the
    /// lab's arithmetic), choosing each window's
    /// timeout among those of at least `floor`
    /// ([`BestFixed::from_idle_periods_from`]).
    pub fn from_idle_periods_from(
        periods: impl IntoIterator<Item = (Nanos, Nanos)>,
        span_s: f64,
        model: &PowerModel,
        window: Nanos,
        clock: Nanos,
        floor: Nanos,
    ) -> WindowClairvoyant {
        Self::from_act_periods_from(
            periods.into_iter().map(|(s, e)| (s, e, e)),
            span_s,
            model,
            window,
            clock,
            floor,
        )
    }

    /// [`WindowClairvoyant::from_idle_periods_from`] of periods
    /// `(start, act_end, end)`: a timer fires in one only when its deadline
    /// is at most `act_end` ([`BestFixed::from_act_periods_from`]).
    pub fn from_act_periods_from(
        periods: impl IntoIterator<Item = (Nanos, Nanos, Nanos)>,
        span_s: f64,
        model: &PowerModel,
        window: Nanos,
        clock: Nanos,
        floor: Nanos,
    ) -> WindowClairvoyant {
        let w = window.0.max(1);
        let (mut saved, mut spinups) = (0.0, 0u64);
        let mut lens: Vec<(Nanos, Nanos)> = Vec::new();
        let mut current: Option<u64> = None;
        let mut close = |lens: &mut Vec<(Nanos, Nanos)>| {
            // Span 0: the energy is minus what the window's best saves.
            let b = BestFixed::from_act_periods_from(lens.drain(..), 0.0, model, floor);
            saved -= b.energy_j;
            spinups += b.spinups;
        };
        for (start, act_end, end) in periods {
            let k = clock.0.saturating_add(end.0) / w;
            if current.is_some_and(|c| c != k) {
                close(&mut lens);
            }
            current = Some(k);
            lens.push((act_end.clamp(start, end) - start, end - start));
        }
        close(&mut lens);
        WindowClairvoyant {
            window_s: window.as_secs_f64(),
            energy_j: model.energy_s(span_s, 0.0, 0) - saved,
            spinups,
        }
    }

    /// `(best fixed − energy) / (best fixed − clairvoyant)`: the share of
    /// what the clairvoyant per-window timer adds over the best fixed
    /// timeout that a policy spending `energy_j` captures (1: all of it;
    /// above 1: more; below 0: worse than the best fixed timeout). Where
    /// the clairvoyant adds nothing (within [`BestFixed::OPTIMAL`]): 1 for
    /// a policy as good as the best fixed timeout (all of nothing), not a
    /// number for one worse or better (a share of nothing; the oracle, or
    /// a learner that beats every fixed timeout, read 1 as if they merely
    /// matched it: `excess_vs_best_fixed` tells those apart).
    pub fn gain(&self, best_fixed_energy_j: f64, energy_j: f64) -> f64 {
        let room = best_fixed_energy_j - self.energy_j;
        let gained = best_fixed_energy_j - energy_j;
        let tol = BestFixed::OPTIMAL * self.energy_j.abs().max(1e-9);
        if room > tol {
            gained / room
        } else if gained.abs() <= tol {
            1.0
        } else {
            f64::NAN
        }
    }
}

impl BestFixed {
    /// How close to the oracle's energy (a fraction of it) counts as
    /// optimal in [`BestFixed::excess_ratio`]: 0.01 %.
    pub const OPTIMAL: f64 = 1e-4;

    /// The best fixed timeout for idle periods of lengths `periods` within
    /// a span of `span` (first arrival to last completion) on a drive
    /// with `model`.
    ///
    /// A timer with timeout `t` fires in every period `L ≥ t` (a deadline
    /// due at the instant of an arrival goes first) and so sleeps `L − t`
    /// and spins up once. The timeouts tried are 0 and one nanosecond
    /// above each distinct period length (the last of which never fires);
    /// ties keep the shortest timeout.
    pub fn from_idle_periods(
        periods: impl IntoIterator<Item = Nanos>,
        span: Nanos,
        model: &PowerModel,
    ) -> BestFixed {
        Self::from_idle_periods_from(periods, span.as_secs_f64(), model, Nanos::ZERO)
    }

    /// The timeout ([`BestFixed::timeout_s`] as a duration).
    pub fn timeout(&self) -> Nanos {
        Nanos::from_secs_f64(self.timeout_s)
    }

    /// [`BestFixed::from_idle_periods`], the span in seconds (the lab's
    /// arithmetic), over the timeouts of at least `floor` only: the fixed timeouts a daemon that looks at the disk
    /// every `floor` can run (`lull replay` of its activity log, whose
    /// idle periods shorter than a poll are the log's reconstruction, not
    /// the disk's). The timeouts tried are `floor` and one nanosecond above
    /// each distinct period length from `floor` on; a zero `floor` is
    /// [`BestFixed::from_idle_periods`] to the bit.
    pub fn from_idle_periods_from(
        periods: impl IntoIterator<Item = Nanos>,
        span_s: f64,
        model: &PowerModel,
        floor: Nanos,
    ) -> BestFixed {
        Self::from_act_periods_from(periods.into_iter().map(|p| (p, p)), span_s, model, floor)
    }

    /// [`BestFixed::from_idle_periods_from`] of periods `(act, len)`: a
    /// timer fires in one only when its timeout is at most `act` (at most
    /// `len`), and then sleeps `len − t`. A daemon's activity log has
    /// `act < len` where the poll that showed the period's end covered
    /// deadlines before that end: the daemon learned of them with the I/O
    /// that ended the period and sent no standby
    /// ([`crate::gate::BusyPolls::act_end`]). With `act = len` throughout,
    /// [`BestFixed::from_idle_periods_from`] to the bit.
    pub fn from_act_periods_from(
        periods: impl IntoIterator<Item = (Nanos, Nanos)>,
        span_s: f64,
        model: &PowerModel,
        floor: Nanos,
    ) -> BestFixed {
        // Sorted by the longest timeout that fires in each.
        let mut l: Vec<(Nanos, Nanos)> = periods
            .into_iter()
            .filter(|p| p.1 > Nanos::ZERO)
            .map(|(a, len)| (a.min(len), len))
            .collect();
        l.sort_unstable();
        let save = model.p_active - model.p_sleep;
        let up = model.spinup_energy();
        let base = model.energy_s(span_s, 0.0, 0);
        // Suffix sums: periods from index i on fire for t ≤ l[i].0.
        let mut suffix = 0.0;
        let mut best = BestFixed {
            timeout_s: l
                .iter()
                .map(|p| p.0)
                .max()
                .map_or(0.0, |m| (m + Nanos::NANO).as_secs_f64()),
            energy_j: base,
            spinups: 0,
            window_clairvoyant: None,
            budget_oracle: None,
        };
        // Walk from the longest down; at index i (first of a run of equal
        // firing lengths) the firing set is l[i..].
        let n = l.len();
        let mut i = n;
        while i > 0 {
            let j = i;
            let v = l[i - 1].0;
            while i > 0 && l[i - 1].0 == v {
                i -= 1;
                suffix += l[i].1.as_secs_f64();
            }
            let fire = (n - i) as u64;
            if v < floor {
                // These periods are below every timeout allowed.
                break;
            }
            // t just above the next shorter firing length (or 0): fires
            // l[i..].
            let mut t = if i == 0 {
                Nanos::ZERO
            } else {
                l[i - 1].0 + Nanos::NANO
            };
            // Below the floor, the floor fires the same periods (those
            // shorter than it are all shorter than v), and is the last try.
            let last = t < floor;
            if last {
                t = floor;
            }
            let ts = t.as_secs_f64();
            let energy = base - save * (suffix - ts * fire as f64) + up * fire as f64;
            if energy <= best.energy_j {
                // `<=`: walking down, a tie goes to the shorter timeout.
                best = BestFixed {
                    timeout_s: ts,
                    energy_j: energy,
                    spinups: fire,
                    window_clairvoyant: None,
                    budget_oracle: None,
                };
            }
            debug_assert!(j > i, "each step consumes a run of equal lengths");
            if last {
                break;
            }
        }
        best
    }

    /// The best fixed timeout of `timeouts` (ascending: those a daemon
    /// polling as the log's did could run), and the clairvoyant
    /// per-10-minute timer ([`WindowClairvoyant::WINDOW`]) choosing among
    /// them, each timeout held to the daemon's wear budget
    /// ([`BudgetedTimers`]): the references of a replay made with the
    /// daemon's checks, which keep the budget the daemon kept. `periods`
    /// are `(start, act_end, end)` on the timeline, in order (a timer
    /// fires in one only when its deadline is at most `act_end`, as in
    /// [`BestFixed::from_act_periods_from`]); each timer is checked
    /// with the budget of the run ([`GateRun::at`] its deadline) in
    /// `runs`, else `per_day`, in that run's bucket. `clock` is the wall
    /// clock at time 0, for the budget's refill and the windows.
    ///
    /// Of the timeouts, not every real number: the least energy of the
    /// list, "never" when none saves anything (`timeout_s` then just above
    /// the longest period, as [`BestFixed::from_idle_periods`] says it),
    /// ties to the shorter. A budget can also hold a timeout back from a
    /// period it would lose in, so the best under one may spend less than
    /// the exact best without one.
    ///
    /// The clairvoyant per-window timer is one policy held to the daily
    /// cap (`per_day`, else the first run's), choosing among the same
    /// timeouts ([`BudgetClairvoyant`]): its windows share each day's
    /// spin-downs, counted on the day each timer fires.
    pub fn under_wear_budget(
        periods: impl IntoIterator<Item = (Nanos, Nanos, Nanos)>,
        span_s: f64,
        model: &PowerModel,
        timeouts: &[Nanos],
        runs: &[GateRun],
        per_day: Option<u32>,
        clock: Option<Nanos>,
    ) -> BestFixed {
        let window = WindowClairvoyant::WINDOW;
        let k = timeouts.len();
        let save = model.p_active - model.p_sleep;
        let up = model.spinup_energy();
        let base = model.energy_s(span_s, 0.0, 0);
        let mut timers = BudgetedTimers::new();
        let (mut fired, mut slept) = (vec![0u64; k], vec![0.0f64; k]);
        let mut longest = Nanos::ZERO;
        let mut all = Vec::new();
        for (start, act_end, end) in periods {
            all.push((start, act_end, end));
            let len = end - start;
            let act = act_end.clamp(start, end) - start;
            longest = longest.max(act);
            // The run its timers decide in: each deadline may fall in
            // another, so the run is looked up per timeout.
            for (i, &c) in timeouts.iter().enumerate() {
                if c > len {
                    break;
                }
                let (mode, per_day) = GateRun::budget_at(runs, start + c, per_day);
                let budget = TimerBudget {
                    per_day,
                    mode,
                    clock,
                };
                if let Some(after) = timers.fires_after(i, c, start, act, budget) {
                    let s = (len - after).as_secs_f64();
                    fired[i] += 1;
                    slept[i] += s;
                }
            }
        }
        let mut best = BestFixed {
            timeout_s: (longest + Nanos::NANO).as_secs_f64(),
            energy_j: base,
            spinups: 0,
            window_clairvoyant: None,
            budget_oracle: None,
        };
        for i in 0..k {
            let energy = base - save * slept[i] + up * fired[i] as f64;
            if energy < best.energy_j {
                best = BestFixed {
                    timeout_s: timeouts[i].as_secs_f64(),
                    energy_j: energy,
                    spinups: fired[i],
                    window_clairvoyant: None,
                    budget_oracle: None,
                };
            }
        }
        // The daily cap the oracle and the clairvoyant keep: the budget
        // asked for, else the first run's own (a log of runs with other
        // budgets is judged by its first).
        let cap = per_day.or_else(|| runs.iter().find_map(|r| r.max_spindowns_per_day));
        if let Some(n) = cap {
            // The best fixed timeout's list, so the two differ only in
            // switching between windows.
            let among = Timeouts::Among(timeouts);
            let (saved, spinups) =
                BudgetClairvoyant::of_periods(all.iter().copied(), model, window, clock, among, n);
            best.window_clairvoyant = Some(WindowClairvoyant {
                window_s: window.as_secs_f64(),
                energy_j: base - saved,
                spinups,
            });
            best.budget_oracle = Some(BudgetOracle::from_idle_periods(
                all.iter().map(|&(s, _, e)| (s, e)),
                span_s,
                model,
                n,
                clock,
            ));
        }
        best
    }

    /// `(energy − oracle) / (best fixed − oracle)`: how much of the best
    /// fixed timeout's excess over the oracle a policy spending `energy_j`
    /// still has (below 1: it beat every fixed timeout).
    ///
    /// Not a number when the best fixed timeout is already optimal, to
    /// within [`BestFixed::OPTIMAL`] of the oracle's energy, and the policy
    /// is not: the ratio would only measure how small that remainder is (a
    /// night of long gaps, where spinning down at once is optimal, gives
    /// ratios in the thousands). 1 when both are optimal, and 0 for a
    /// policy that spends no more than the oracle (the oracle itself):
    /// it has none of the best fixed timeout's excess, however small.
    pub fn excess_ratio(&self, energy_j: f64, oracle_energy_j: f64) -> f64 {
        let room = self.energy_j - oracle_energy_j;
        let excess = energy_j - oracle_energy_j;
        let tol = Self::OPTIMAL * oracle_energy_j.abs().max(1e-9);
        if room > tol {
            excess / room
        } else if excess <= 0.0 && room > 0.0 {
            0.0
        } else if excess <= tol {
            1.0
        } else {
            f64::NAN
        }
    }
}

/// Where a reference ratio divides by little: the margins, in percent of
/// the never-spin-down energy `baseline_j`, of the best fixed timeout over
/// the oracle (`excess_vs_best_fixed`'s denominator) and of the
/// per-window clairvoyant timer over the best fixed timeout
/// (`gain_vs_clairvoyant`'s), each given only when under
/// [`SMALL_MARGIN_PCT`]. On a short or regular trace the best fixed timeout
/// can come within a hair of the oracle, and an `excess_vs_best_fixed` of
/// 250 is then a ratio of two small numbers, not a disaster: `lull replay`
/// and `lull status` say so beside the ratios.
pub fn small_margins(
    baseline_j: f64,
    oracle_j: f64,
    best_fixed_j: f64,
    clairvoyant_j: Option<f64>,
) -> [Option<f64>; 2] {
    if baseline_j.is_nan() || baseline_j <= 0.0 {
        return [None, None];
    }
    // Neither margin is below 0 but by rounding (the clairvoyant was once
    // 7e-15 J above the best fixed timeout, printed "-0.00 %").
    let pct = |e: f64| (100.0 * e / baseline_j).max(0.0);
    let small = |p: f64| (p < SMALL_MARGIN_PCT).then_some(p);
    [
        small(pct(best_fixed_j - oracle_j)),
        clairvoyant_j.and_then(|c| small(pct(best_fixed_j - c))),
    ]
}

/// Below this margin (percent of the never-spin-down energy) a reference
/// ratio's denominator is called small ([`small_margins`]).
pub const SMALL_MARGIN_PCT: f64 = 1.0;

impl Spindown {
    /// A spindown task for a drive with `model`.
    pub fn new(model: PowerModel) -> Self {
        Spindown {
            model,
            first: None,
            end: None,
            outstanding: 0,
            running: false,
            armed: false,
            asleep_since: None,
            ready_at: Nanos::ZERO,
            sleep: Nanos::ZERO,
            spinups: 0,
            delayed_ops: 0,
            added_latency_s: 0.0,
            idle_since: None,
            oracle_sleep: Nanos::ZERO,
            oracle_spinups: 0,
            best_fixed: None,
            gate: StandbyGate::default(),
            buckets: [None, None],
            runs: Vec::new(),
            refused: [0; 2],
            busy_polls: None,
            overtaken: 0,
            daemon_standbys: None,
            withheld: 0,
            failed: 0,
            power_next: 0,
            retry: None,
            retried: 0,
        }
    }

    /// Takes up the power states the daemon learned before `now`
    /// ([`DaemonStandbys::push_power`]), in order, as the disk stood then:
    /// found in standby while idle, it sleeps from then (a standby the
    /// daemon took up after a restart or reload, or one something else
    /// made; no spin-down is counted, none was sent); found spinning while
    /// the replay has it asleep, it spins up then. Between two calls of the
    /// task nothing else changes, so taking them up late is exact. A state
    /// at the instant of an arrival is taken up after it.
    fn take_up_power(&mut self, now: Nanos) {
        let Some(d) = self.daemon_standbys.clone() else {
            return;
        };
        while let Some(&(t, standby)) = d.power().get(self.power_next) {
            if t >= now {
                break;
            }
            self.power_next += 1;
            let idle = self.outstanding == 0 && self.idle_since.is_some_and(|s| s <= t);
            match (standby, self.asleep_since) {
                (true, None) if idle => {
                    self.asleep_since = Some(t);
                    self.armed = false;
                }
                (false, Some(a)) if a <= t => {
                    let slept = (t - a).as_secs_f64();
                    self.sleep += t - a;
                    self.spinups += 1;
                    self.ready_at = t + Nanos::from_secs_f64(self.model.wake_delay_s(slept));
                    self.asleep_since = None;
                }
                _ => {}
            }
        }
    }

    /// Whether power states the daemon learned are still to be taken up.
    fn power_pending(&self) -> bool {
        self.daemon_standbys
            .as_ref()
            .is_some_and(|d| self.power_next < d.power().len())
    }

    /// Whether a start decided at `ctx.now` spins the disk down, in the
    /// daemon's order: not when its poll's I/O overtook it, nor where the
    /// daemon withheld its standbys, nor when the gate refuses it (wear
    /// budget, break-even), nor when the standby the daemon sent failed
    /// (its token spent). Each refusal is counted in its measure.
    fn admits(&mut self, ctx: &Context, budget: Option<Nanos>) -> bool {
        if self
            .busy_polls
            .as_ref()
            .is_some_and(|p| p.overtakes(ctx.now))
        {
            self.overtaken += 1;
            return false;
        }
        if self
            .daemon_standbys
            .as_ref()
            .is_some_and(|d| d.withheld_at(ctx.now).is_some())
        {
            self.withheld += 1;
            return false;
        }
        let mut charged = None;
        if !self.gate.is_open() {
            let unix = unix_secs(ctx.clock, ctx.now);
            let (mode, max_spindowns_per_day) =
                GateRun::budget_at(&self.runs, ctx.now, self.gate.max_spindowns_per_day);
            let gate = StandbyGate {
                max_spindowns_per_day,
                ..self.gate
            };
            match gate.admit_charge(&mut self.buckets[mode], UnixTime::from_secs(unix), budget) {
                Err(why) => {
                    self.refused[usize::from(matches!(why, Refusal::ShortPrediction { .. }))] += 1;
                    if matches!(why, Refusal::Wear { .. }) {
                        // Tried again when a token is there, as the daemon
                        // does, while the idle period lasts.
                        self.retry = gate
                            .wear_retry(&self.buckets[mode], ctx.now, ctx.clock)
                            .map(|r| (r, budget.map(|b| ctx.now + b)));
                    }
                    return false;
                }
                Ok(charge) => charged = charge.map(|c| (mode, c)),
            }
        }
        if self
            .daemon_standbys
            .as_ref()
            .is_some_and(|d| d.failed_at(ctx.now))
        {
            // Sent, and the drive did not sleep: it wore nothing, and the
            // daemon gave the token back.
            if let Some((mode, charge)) = charged {
                if let Some(b) = self.buckets[mode].as_mut() {
                    b.refund(charge);
                }
            }
            self.failed += 1;
            return false;
        }
        true
    }

    /// Makes the daemon's checks before each spin-down ([`StandbyGate`]:
    /// the wear budget and the break-even check, on the wall clock of the
    /// engine's [`Context::clock`]), so that a replay of a daemon's log
    /// spins down where the daemon did. A refused start leaves the disk
    /// spinning; the measures then count the refusals
    /// (`refused_wear_budget`, `refused_below_break_even`).
    pub fn with_gate(mut self, gate: StandbyGate) -> Self {
        self.gate = gate;
        self
    }

    /// Skips each start that a poll of a daemon's log overtook (`polls`:
    /// its I/O came at or after the start's instant, so the daemon, which
    /// reads the disk's counters a poll at a time, learned of the idle
    /// period only after it had ended; [`crate::gate`], "Decisions the
    /// poll overtook"), as the daemon skipped it. Counted in the measure
    /// `overtaken_by_poll`; no token of the wear budget is spent on it.
    pub fn with_busy_polls(mut self, polls: std::sync::Arc<BusyPolls>) -> Self {
        self.busy_polls = Some(polls);
        self
    }

    /// Does with each start what a daemon's log says it did
    /// ([`DaemonStandbys`]): one that falls where the daemon withheld its
    /// standbys (the disk left alone, unplugged, or backing off after
    /// failures) is refused before the wear budget is asked, as the daemon
    /// checks in that order (no token is spent on it); one whose standby
    /// failed leaves the disk spinning and gives its token back, as the
    /// daemon does. Counted in the measures `withheld_by_daemon` and
    /// `failed_standbys` when the log says anything of either.
    pub fn with_daemon_standbys(mut self, standbys: std::sync::Arc<DaemonStandbys>) -> Self {
        self.daemon_standbys = Some(standbys);
        self
    }

    /// Makes each start's checks as the daemon run it falls in made them
    /// (`runs`, ascending by [`GateRun::from`]): with that run's wear
    /// budget when its session recorded one, and a wear bucket per mode,
    /// as the daemon keeps one in each state file. A replay of a log that
    /// switches from `lulld --dry-run` to the real daemon then does not
    /// charge the real daemon's budget with the dry run's spin-downs, and
    /// one whose budget was changed between runs checks each run against
    /// its own. Without it, one bucket and the gate's budget serve
    /// throughout.
    pub fn with_gate_runs(mut self, runs: Vec<GateRun>) -> Self {
        self.runs = runs;
        self
    }

    /// Also reports the best fixed timeout of the trace, `best` (computed
    /// once per trace with [`BestFixed::from_idle_periods`]), and every
    /// run's excess relative to it.
    pub fn with_best_fixed(mut self, best: BestFixed) -> Self {
        self.best_fixed = Some(best);
        self
    }

    /// The power model.
    pub fn model(&self) -> &PowerModel {
        &self.model
    }

    /// Whether the disk is asleep (or spinning down) now.
    pub fn is_asleep(&self) -> bool {
        self.asleep_since.is_some()
    }

    fn span(&self) -> f64 {
        match (self.first, self.end) {
            (Some(f), Some(e)) => (e - f).as_secs_f64(),
            _ => 0.0,
        }
    }

    /// An arrival at `t` ends the idle period begun at `idle_since`: the
    /// oracle slept through it if it was longer than break-even.
    fn book_oracle_gap(&mut self, t: Nanos) {
        if let Some(s) = self.idle_since.take() {
            let gap = t - s;
            if gap.as_secs_f64() > self.model.break_even_s() {
                self.oracle_sleep += gap;
                self.oracle_spinups += 1;
            }
        }
    }

    fn sleep_now(&mut self, now: Nanos) {
        if self.first.is_some() && self.asleep_since.is_none() {
            // SPEC §4.2 as written: asleep from the start of the task, even
            // if (under trace timing) the last spin-up had not finished.
            self.asleep_since = Some(now);
        }
    }

    /// The report as a struct (the same numbers as [`IdleTask::measures`]).
    pub fn report(&self) -> SpindownReport {
        let m = &self.model;
        let span = self.span();
        let sleep = self.sleep.as_secs_f64().min(span);
        let energy = m.energy_s(span, sleep, self.spinups);
        let baseline = m.energy_s(span, 0.0, 0);
        let oracle = m.energy_s(span, self.oracle_sleep.as_secs_f64(), self.oracle_spinups);
        let pct = |e: f64| {
            if baseline > 0.0 {
                100.0 * (baseline - e) / baseline
            } else {
                0.0
            }
        };
        SpindownReport {
            energy_j: energy,
            baseline_energy_j: baseline,
            oracle_energy_j: oracle,
            energy_saved_pct: pct(energy),
            oracle_saved_pct: pct(oracle),
            competitive_ratio: if oracle > 0.0 { energy / oracle } else { 1.0 },
            spinups: self.spinups,
            delayed_ops: self.delayed_ops,
            added_latency_s: self.added_latency_s,
            sleep_s: sleep,
            best_fixed: self.best_fixed,
        }
    }
}

/// The external measures of [`Spindown`] (SPEC §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpindownReport {
    /// Energy over the span, joules.
    pub energy_j: f64,
    /// Energy had the disk never spun down.
    pub baseline_energy_j: f64,
    /// Energy of the offline oracle.
    pub oracle_energy_j: f64,
    /// `100·(baseline − energy)/baseline`.
    pub energy_saved_pct: f64,
    /// `100·(baseline − oracle)/baseline`.
    pub oracle_saved_pct: f64,
    /// `energy / oracle` (1 when both are zero).
    pub competitive_ratio: f64,
    /// Spin-ups.
    pub spinups: u64,
    /// Requests that waited for the disk.
    pub delayed_ops: u64,
    /// Their total wait, seconds.
    pub added_latency_s: f64,
    /// Time asleep, seconds (not a SPEC key; for tests and docs).
    pub sleep_s: f64,
    /// The best fixed timeout of the trace, when the task was given it.
    pub best_fixed: Option<BestFixed>,
}

impl IdleTask for Spindown {
    fn name(&self) -> &'static str {
        "spindown"
    }

    fn granularity(&self) -> Granularity {
        Granularity {
            interruptible: true,
            step: None,
            loses_work_on_interrupt: false,
        }
    }

    fn start(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.take_up_power(ctx.now);
        if !self.admits(ctx, budget) {
            self.running = false;
            self.armed = false;
            return;
        }
        self.running = true;
        if ctx.outstanding == 0 {
            self.sleep_now(ctx.now);
        } else if self.asleep_since.is_none() {
            self.armed = true;
        }
    }

    fn stop(&mut self, _ctx: &Context) {
        // Only a request wakes the disk; the stop just ends the run.
        self.running = false;
        self.armed = false;
        self.retry = None;
    }

    fn next_deadline(&self) -> Option<Nanos> {
        self.retry.map(|(r, _)| r)
    }

    fn on_deadline(&mut self, ctx: &Context) {
        match self.retry {
            Some((r, end)) if ctx.now >= r => {
                self.retry = None;
                // The idle time it predicted, less what has gone by.
                let budget = end.map(|e| e.saturating_sub(ctx.now));
                self.retried += 1;
                self.start(ctx, budget);
            }
            _ => {}
        }
    }

    fn skips_runs(&self, now: Nanos) -> bool {
        // Spun up, ready, not about to spin down: a busy run only books
        // the oracle's view of the gap before it. A power state the daemon
        // learned may put the disk to sleep before a run: its arrivals
        // must be seen then.
        !self.running
            && !self.armed
            && self.asleep_since.is_none()
            && self.ready_at <= now
            && !self.power_pending()
            && self.retry.is_none()
    }

    fn skip_run(&mut self, start: Option<Nanos>, end: Nanos) {
        if let Some(a) = start {
            self.first.get_or_insert(a);
            self.book_oracle_gap(a);
        }
        // Every request of the run has completed: idle from its end.
        self.outstanding = 0;
        self.idle_since = Some(end);
    }

    fn on_event(&mut self, ev: &Event, _ctx: &Context) {
        let t = ev.time;
        self.take_up_power(t);
        match ev.kind {
            EventKind::Arrival => {
                if self.first.is_none() {
                    self.first = Some(t);
                }
                self.book_oracle_gap(t);
                match self.asleep_since.take() {
                    Some(a) if t >= a => {
                        let slept = (t - a).as_secs_f64();
                        self.sleep += t - a;
                        self.spinups += 1;
                        let delay = self.model.wake_delay_s(slept);
                        self.ready_at = t + Nanos::from_secs_f64(delay);
                        self.delayed_ops += 1;
                        self.added_latency_s += delay;
                    }
                    // Unreachable with events in time order.
                    Some(_) => {}
                    None if self.ready_at > t => {
                        self.delayed_ops += 1;
                        self.added_latency_s += (self.ready_at - t).as_secs_f64();
                    }
                    None => {}
                }
                self.outstanding += 1;
            }
            EventKind::Completion => {
                self.outstanding = self.outstanding.saturating_sub(1);
                if self.outstanding == 0 {
                    self.idle_since = Some(t);
                    if self.running && self.armed {
                        self.armed = false;
                        self.sleep_now(t);
                    }
                }
            }
        }
    }

    fn finish(&mut self, end: Nanos) {
        self.take_up_power(end);
        self.end = Some(end);
        if let Some(a) = self.asleep_since.take() {
            // Only reachable with events after the end; clip to the span.
            self.sleep += end - a;
        }
    }

    fn measures(&self) -> Vec<Measure> {
        let r = self.report();
        let mut v = vec![
            ("energy_j", r.energy_j),
            ("baseline_energy_j", r.baseline_energy_j),
            ("oracle_energy_j", r.oracle_energy_j),
            ("energy_saved_pct", r.energy_saved_pct),
            ("oracle_saved_pct", r.oracle_saved_pct),
            ("competitive_ratio", r.competitive_ratio),
            ("spinups", r.spinups as f64),
            ("delayed_ops", r.delayed_ops as f64),
            ("added_latency_s", r.added_latency_s),
        ];
        if let Some(b) = r.best_fixed {
            v.push(("best_fixed_timeout_s", b.timeout_s));
            v.push(("best_fixed_energy_j", b.energy_j));
            v.push((
                "excess_vs_best_fixed",
                b.excess_ratio(r.energy_j, r.oracle_energy_j),
            ));
            if let Some(c) = b.window_clairvoyant {
                v.push(("window_clairvoyant_energy_j", c.energy_j));
                v.push(("gain_vs_clairvoyant", c.gain(b.energy_j, r.energy_j)));
            }
            if let Some(o) = b.budget_oracle {
                v.push(("budget_oracle_energy_j", o.energy_j));
                v.push(("budget_oracle_spinups", o.spinups as f64));
                v.push((
                    "budget_excess_vs_best_fixed",
                    b.excess_ratio(r.energy_j, o.energy_j),
                ));
            }
        }
        if !self.gate.is_open() {
            v.push(("refused_wear_budget", self.refused[0] as f64));
            v.push(("refused_below_break_even", self.refused[1] as f64));
            v.push(("retried_after_wear_budget", self.retried as f64));
        }
        if self.busy_polls.is_some() {
            v.push(("overtaken_by_poll", self.overtaken as f64));
        }
        if self.daemon_standbys.as_ref().is_some_and(|d| !d.is_empty()) {
            v.push(("withheld_by_daemon", self.withheld as f64));
            v.push(("failed_standbys", self.failed as f64));
        }
        v
    }
}
