//! Idle-time reservations with admission control, after Domjan and Gross
//! (*Extending a best-effort operating system to provide QoS processor
//! management*, 2001), for a disk's idle time instead of a CPU (issue 19).
//!
//! # The paper's model, and ours
//!
//! | R-Scheduler (CPU) | here (idle time) |
//! |---|---|
//! | a request `R(I, C)`: `C` cycles within interval `I` | a [`Request`]: `amount` of usable idle time in every window of `period` hours (`2h/day`, `5m/hour`), with a minimum `step` |
//! | a ranked vector of requests; 0 or 1 granted | the same: [`Admission::submit`] grants the first request, in the job's order, that fits with those already admitted |
//! | feasibility by Simplex over the requests' intervals | an exact maximum flow over one day (below): the LP has a flow structure, so no general LP solver is needed |
//! | a pre-set fraction of the CPU (90 %) for R-processes | `1 − best_effort` of the forecast idle time; `best_effort` (default 10 %) is kept for unreserved work |
//! | the CPU delivers `C` cycles somewhere in `I` | the scheduler ([`crate::schedule`]) hands idle periods to jobs by deadline and lag |
//! | a blocked R-process catches up at the expense of best-effort processes, not other R-processes | a job that fell behind in its window catches up from the unreserved share; a job that met its reservation gets no more while another is behind |
//!
//! # Where it differs
//!
//! - **The resource is not there on demand.** A CPU has a known number of
//!   cycles per second; idle time is whatever the foreground leaves, known
//!   only as a forecast ([`crate::forecast`]). Admission is against the
//!   forecast (optionally `mean − k·sd`), so a grant is a promise under the
//!   forecast, not a guarantee; the paper's reservations are not strict
//!   guarantees either ("in practical settings the application almost
//!   always obtains the cycles requested").
//! - **Granularity matters.** A CPU slice can be preempted anywhere; a job
//!   with 60 s steps can only use idle periods with room for whole steps.
//!   So the capacity is per step length, and a job with long steps competes
//!   only for the long periods, which the short-step jobs can also use.
//! - **Recurring, aligned windows.** The paper's requests name one
//!   interval, "now" or later. Storage jobs recur (a scrub every night, a
//!   TRIM every hour), so a request is periodic with windows aligned to the
//!   wall clock (a `day` window is midnight to midnight, UTC), and the
//!   forecast is per hour of day; admission checks one representative day.
//! - **Preemption is by arrival, not by the scheduler.** Whatever the
//!   reservations, the foreground always wins: jobs run only in idle time
//!   and stop at the next arrival (after their current step).
//!
//! # The feasibility problem, exactly
//!
//! Let `U(t, σ)` be the forecast usable idle time in hour `t` of the day
//! for jobs of step `σ`, and `K(t, σ) = ⌊(1 − β)·U(t, σ)⌋` with `β` the
//! best-effort share. Admitted jobs `j` (step `s_j`, amount `C_j`, windows
//! of `p_j` hours) must be given `x(j, t) ≥ 0` with
//!
//! - `Σ_{t ∈ W} x(j, t) ≥ C_j` for every window `W` of job `j` in the day;
//! - for every hour `t` and every step `σ` among the jobs':
//!   `Σ_{j : s_j ≥ σ} x(j, t) ≤ K(t, σ)`: the jobs that can only use
//!   periods with room for steps of `σ` or more share the capacity for
//!   `σ`.
//!
//! The second family is, per hour, a chain of nested sets (jobs sorted by
//! decreasing step), so the whole system is a flow network: source → one
//! node per job window (capacity `C_j`) → that job's node in each hour of
//! the window → along the hour's chain, from the longest-step job's node
//! towards the sink, each edge carrying the total of the jobs above it
//! (capacity `K(t, s)`) → sink. The system is feasible iff the maximum flow
//! saturates every window edge (max-flow/min-cut; capacities are whole
//! nanoseconds, so the answer is exact, with no rounding). Edmonds–Karp
//! on a graph of at most `jobs × 48 + 2` nodes is instant.
//!
//! **A refusal's shortfall.** The flow of the admitted jobs is computed
//! first (it saturates them: they were admitted), then augmented along
//! paths from the new request's windows only. Augmenting paths never
//! decrease the flow leaving the source, so the admitted jobs stay
//! satisfied, and because the maximum flow value does not depend on the
//! order of augmentation, what the new request gets is the most it can get
//! without taking from anybody: `amount − flow` per window is the exact
//! shortfall. [`Shortfall`] reports the worst window and the day's total.
//!
//! **Which request is granted.** The first in the job's order whose
//! shortfall is zero: the paper's "best request that can still be
//! satisfied", with the application's ranking as "best".

use std::collections::VecDeque;
use std::fmt;

use lull_core::time::Nanos;

use crate::hours::{HOUR, HOURS_PER_DAY};

/// Usable idle time per hour of day for each step length: what admission
/// control plans on.
#[derive(Clone, Debug, PartialEq)]
pub struct Capacity {
    /// `(step, usable time per hour-of-day)`, sorted by step.
    table: Vec<(Nanos, [Nanos; HOURS_PER_DAY])>,
}

impl Capacity {
    /// A capacity table from `(step, per-hour usable time)` rows.
    pub fn new(mut table: Vec<(Nanos, [Nanos; HOURS_PER_DAY])>) -> Self {
        table.sort_by_key(|r| r.0);
        table.dedup_by_key(|r| r.0);
        Capacity { table }
    }
    /// The same usable time in every hour, for every step of `steps`.
    pub fn uniform(steps: &[Nanos], per_hour: Nanos) -> Self {
        Capacity::new(
            steps
                .iter()
                .map(|&s| (s, [per_hour; HOURS_PER_DAY]))
                .collect(),
        )
    }
    /// The usable time in hour `slot` for step `step`, if `step` is known.
    pub fn usable(&self, step: Nanos, slot: usize) -> Option<Nanos> {
        self.row(step).map(|r| r[slot % HOURS_PER_DAY])
    }
    /// The row of `step`.
    pub fn row(&self, step: Nanos) -> Option<&[Nanos; HOURS_PER_DAY]> {
        self.table
            .binary_search_by_key(&step, |r| r.0)
            .ok()
            .map(|i| &self.table[i].1)
    }
    /// The steps with a row.
    pub fn steps(&self) -> impl Iterator<Item = Nanos> + '_ {
        self.table.iter().map(|r| r.0)
    }
    /// The usable time of a whole window of `hours` from hour `first`.
    pub fn window(&self, step: Nanos, first: usize, hours: usize) -> Option<Nanos> {
        let row = self.row(step)?;
        Some(
            (0..hours)
                .map(|k| row[(first + k) % HOURS_PER_DAY])
                .fold(Nanos::ZERO, |a, b| a + b),
        )
    }
}

/// One acceptable reservation: `amount` of idle time in every window of
/// `period_hours` hours (aligned to midnight), in steps of `step` (zero:
/// interruptible).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The window length, hours; divides 24.
    pub period_hours: u32,
    /// Idle time wanted per window.
    pub amount: Nanos,
    /// The job's non-interruptible step (zero: stops at once).
    pub step: Nanos,
}

impl Request {
    /// The window length.
    pub fn period(&self) -> Nanos {
        Nanos::from_nanos(HOUR.as_nanos() * u64::from(self.period_hours))
    }
    /// Windows per day.
    pub fn windows_per_day(&self) -> usize {
        HOURS_PER_DAY / self.period_hours as usize
    }
    /// `amount` per window, as a fraction of the window.
    pub fn share(&self) -> f64 {
        self.amount.as_secs_f64() / self.period().as_secs_f64()
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per = match self.period_hours {
            1 => "hour".to_string(),
            24 => "day".to_string(),
            h => format!("{h}h"),
        };
        // Rounded for people (`step=2m25s`, not `144827586206ns`): a step
        // of `2B` is rarely a whole unit.
        write!(f, "{}/{per}", self.amount.approx())?;
        if self.step > Nanos::ZERO {
            write!(f, ":step={}", self.step.approx())?;
        }
        Ok(())
    }
}

/// Why a request cannot even be considered.
#[derive(Clone, Debug, PartialEq)]
pub enum ReserveError {
    /// The period is not a whole number of hours dividing a day.
    Period(u32),
    /// The amount is zero or more than the period.
    Amount(Request),
    /// The forecast has no row for this step.
    Step(Nanos),
    /// The best-effort share is not in `[0, 1)`.
    Share(f64),
    /// The job submitted no request.
    Empty,
}

impl fmt::Display for ReserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReserveError::Period(h) => write!(
                f,
                "period of {h} h: a period must be a whole number of hours that divides a day (hour, 2h, 3h, 4h, 6h, 8h, 12h, day)"
            ),
            ReserveError::Amount(r) => write!(
                f,
                "request {r}: the amount must be more than zero and at most the period"
            ),
            ReserveError::Step(s) => write!(f, "step {s}: the forecast was not kept for this step"),
            ReserveError::Share(b) => write!(f, "best-effort share {b}: must be in [0, 1)"),
            ReserveError::Empty => f.write_str("a job must submit at least one request"),
        }
    }
}

impl std::error::Error for ReserveError {}

/// How far a request is from fitting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortfall {
    /// The largest shortfall of any window.
    pub worst: Nanos,
    /// The hour of day at which that window begins.
    pub worst_window_hour: u32,
    /// The shortfall summed over the day's windows.
    pub per_day: Nanos,
}

impl Shortfall {
    /// Whether the request fits.
    pub fn is_zero(&self) -> bool {
        self.per_day == Nanos::ZERO
    }
}

/// The answer to [`Admission::submit`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Request number `rank` (0: the first choice) was admitted.
    Granted {
        /// Its position in the job's list.
        rank: usize,
        /// The request.
        request: Request,
    },
    /// None fits; the shortfall of each request, in the job's order.
    Refused {
        /// Per request.
        shortfalls: Vec<(Request, Shortfall)>,
    },
}

/// An admitted job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// Its name.
    pub name: String,
    /// The request granted.
    pub request: Request,
}

/// The admission controller: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Admission {
    capacity: Capacity,
    best_effort: f64,
    admitted: Vec<Admitted>,
}

impl Admission {
    /// A controller planning on `capacity`, keeping `best_effort` (a
    /// fraction) of it for unreserved work.
    pub fn new(capacity: Capacity, best_effort: f64) -> Result<Self, ReserveError> {
        if !(0.0..1.0).contains(&best_effort) {
            return Err(ReserveError::Share(best_effort));
        }
        Ok(Admission {
            capacity,
            best_effort,
            admitted: Vec::new(),
        })
    }
    /// The jobs admitted so far, in order.
    pub fn admitted(&self) -> &[Admitted] {
        &self.admitted
    }
    /// The capacity planned on.
    pub fn capacity(&self) -> &Capacity {
        &self.capacity
    }
    /// The best-effort share.
    pub fn best_effort(&self) -> f64 {
        self.best_effort
    }

    fn validate(&self, r: &Request) -> Result<(), ReserveError> {
        if r.period_hours == 0 || 24 % r.period_hours != 0 {
            return Err(ReserveError::Period(r.period_hours));
        }
        if r.amount == Nanos::ZERO || r.amount > r.period() {
            return Err(ReserveError::Amount(*r));
        }
        if self.capacity.row(r.step).is_none() {
            return Err(ReserveError::Step(r.step));
        }
        Ok(())
    }

    /// How far `r` is from fitting beside the admitted jobs (zero: it
    /// fits). Admits nothing.
    pub fn shortfall(&self, r: &Request) -> Result<Shortfall, ReserveError> {
        self.validate(r)?;
        let mut jobs: Vec<Request> = self.admitted.iter().map(|a| a.request).collect();
        jobs.push(*r);
        Ok(self.flow(&jobs))
    }

    /// Submits a job's ranked requests; admits and returns the first that
    /// fits, or refuses with every request's shortfall.
    pub fn submit(&mut self, name: &str, ranked: &[Request]) -> Result<Decision, ReserveError> {
        if ranked.is_empty() {
            return Err(ReserveError::Empty);
        }
        let mut shortfalls = Vec::with_capacity(ranked.len());
        for (rank, r) in ranked.iter().enumerate() {
            let s = self.shortfall(r)?;
            if s.is_zero() {
                self.admitted.push(Admitted {
                    name: name.to_string(),
                    request: *r,
                });
                return Ok(Decision::Granted { rank, request: *r });
            }
            shortfalls.push((*r, s));
        }
        Ok(Decision::Refused { shortfalls })
    }

    /// Withdraws the job named `name` (a finished or cancelled job frees
    /// its reservation, as an R-process yields unneeded cycles).
    pub fn withdraw(&mut self, name: &str) -> bool {
        let before = self.admitted.len();
        self.admitted.retain(|a| a.name != name);
        self.admitted.len() != before
    }

    /// The shortfall of the last job of `jobs` given that all the others
    /// are served first.
    fn flow(&self, jobs: &[Request]) -> Shortfall {
        let n = jobs.len();
        // Chain order per hour: jobs by decreasing step (stable).
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| jobs[b].step.cmp(&jobs[a].step));
        let mut pos = vec![0; n];
        for (k, &j) in order.iter().enumerate() {
            pos[j] = k;
        }
        // Nodes: 0 source, 1 sink, chain nodes 2 + t·n + k, then windows.
        let chain = |t: usize, k: usize| 2 + t * n + k;
        let mut g = Graph::new(2 + HOURS_PER_DAY * n);
        for t in 0..HOURS_PER_DAY {
            for k in 0..n {
                let s = jobs[order[k]].step;
                let u = self.capacity.usable(s, t).unwrap_or(Nanos::ZERO).as_nanos();
                let cap = ((1.0 - self.best_effort) * u as f64).floor() as i64;
                let to = if k + 1 < n { chain(t, k + 1) } else { 1 };
                g.add(chain(t, k), to, cap);
            }
        }
        // Window edges from the source; the new job's start at capacity 0.
        let mut new_edges = Vec::new();
        for (j, r) in jobs.iter().enumerate() {
            let p = r.period_hours as usize;
            for w in 0..r.windows_per_day() {
                let node = g.node();
                let cap = if j + 1 == n {
                    0
                } else {
                    r.amount.as_nanos() as i64
                };
                let e = g.add(0, node, cap);
                if j + 1 == n {
                    new_edges.push((e, w * p));
                }
                for t in w * p..(w + 1) * p {
                    g.add(node, chain(t, pos[j]), i64::MAX / 4);
                }
            }
        }
        g.max_flow(0, 1);
        let amount = jobs[n - 1].amount.as_nanos() as i64;
        for &(e, _) in &new_edges {
            g.cap[e] = amount;
        }
        g.max_flow(0, 1);
        let mut out = Shortfall {
            worst: Nanos::ZERO,
            worst_window_hour: 0,
            per_day: Nanos::ZERO,
        };
        for &(e, hour) in &new_edges {
            let short = Nanos::from_nanos((amount - g.flow[e]).max(0) as u64);
            out.per_day += short;
            if short > out.worst {
                out.worst = short;
                out.worst_window_hour = hour as u32;
            }
        }
        out
    }
}

/// A small flow network with Edmonds–Karp (shortest augmenting paths).
#[derive(Debug)]
struct Graph {
    adj: Vec<Vec<usize>>,
    to: Vec<usize>,
    cap: Vec<i64>,
    flow: Vec<i64>,
}

impl Graph {
    fn new(nodes: usize) -> Self {
        Graph {
            adj: vec![Vec::new(); nodes],
            to: Vec::new(),
            cap: Vec::new(),
            flow: Vec::new(),
        }
    }
    fn node(&mut self) -> usize {
        self.adj.push(Vec::new());
        self.adj.len() - 1
    }
    /// Adds `a → b` with capacity `c` (and its reverse residual edge);
    /// returns the forward edge's index. Edge `e ^ 1` is its reverse.
    fn add(&mut self, a: usize, b: usize, c: i64) -> usize {
        let e = self.to.len();
        self.to.push(b);
        self.cap.push(c);
        self.flow.push(0);
        self.adj[a].push(e);
        self.to.push(a);
        self.cap.push(0);
        self.flow.push(0);
        self.adj[b].push(e + 1);
        e
    }
    fn residual(&self, e: usize) -> i64 {
        self.cap[e] - self.flow[e]
    }
    /// Augments from the current flow to a maximum flow.
    fn max_flow(&mut self, s: usize, t: usize) {
        loop {
            let mut via = vec![usize::MAX; self.adj.len()];
            let mut seen = vec![false; self.adj.len()];
            seen[s] = true;
            let mut queue = VecDeque::from([s]);
            while let Some(v) = queue.pop_front() {
                if v == t {
                    break;
                }
                for &e in &self.adj[v] {
                    let w = self.to[e];
                    if !seen[w] && self.residual(e) > 0 {
                        seen[w] = true;
                        via[w] = e;
                        queue.push_back(w);
                    }
                }
            }
            if !seen[t] {
                return;
            }
            let mut push = i64::MAX;
            let mut v = t;
            while v != s {
                let e = via[v];
                push = push.min(self.residual(e));
                v = self.to[e ^ 1];
            }
            let mut v = t;
            while v != s {
                let e = via[v];
                self.flow[e] += push;
                self.flow[e ^ 1] -= push;
                v = self.to[e ^ 1];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(x: u64) -> Nanos {
        Nanos::from_secs(60 * x)
    }
    fn req(period_hours: u32, amount: Nanos, step: Nanos) -> Request {
        Request {
            period_hours,
            amount,
            step,
        }
    }

    /// 10 min usable per hour for fine jobs; for 60 s steps only the
    /// night hours 0–5 (10 min each).
    fn night() -> Capacity {
        let mut coarse = [Nanos::ZERO; HOURS_PER_DAY];
        for h in coarse.iter_mut().take(6) {
            *h = m(10);
        }
        Capacity::new(vec![
            (Nanos::ZERO, [m(10); HOURS_PER_DAY]),
            (Nanos::from_secs(60), coarse),
        ])
    }

    #[test]
    fn a_request_that_fits_is_granted_first_choice() {
        let mut a = Admission::new(night(), 0.0).unwrap();
        let d = a.submit("trim", &[req(1, m(5), Nanos::ZERO)]).unwrap();
        assert_eq!(
            d,
            Decision::Granted {
                rank: 0,
                request: req(1, m(5), Nanos::ZERO)
            }
        );
        assert_eq!(a.admitted().len(), 1);
    }

    #[test]
    fn a_request_that_fits_only_as_second_choice() {
        let mut a = Admission::new(night(), 0.0).unwrap();
        // 60 s steps: 60 min usable per day (hours 0-5). 2h does not fit,
        // 50 min does.
        let first = req(24, m(120), Nanos::from_secs(60));
        let second = req(24, m(50), Nanos::from_secs(60));
        let d = a.submit("scrub", &[first, second]).unwrap();
        assert_eq!(
            d,
            Decision::Granted {
                rank: 1,
                request: second
            }
        );
    }

    #[test]
    fn a_refusal_names_the_right_shortfall() {
        let mut a = Admission::new(night(), 0.0).unwrap();
        // trim takes 5 min of every hour: the night hours have 5 min left
        // each for the scrub, 30 min in all.
        assert!(matches!(
            a.submit("trim", &[req(1, m(5), Nanos::ZERO)]).unwrap(),
            Decision::Granted { .. }
        ));
        let d = a
            .submit("scrub", &[req(24, m(45), Nanos::from_secs(60))])
            .unwrap();
        let Decision::Refused { shortfalls } = d else {
            panic!("expected a refusal, got {d:?}")
        };
        assert_eq!(shortfalls.len(), 1);
        assert_eq!(shortfalls[0].1.per_day, m(15));
        assert_eq!(shortfalls[0].1.worst, m(15));
        assert_eq!(a.admitted().len(), 1);
    }

    #[test]
    fn the_long_step_job_gets_the_long_periods_even_if_it_comes_second() {
        // A fine job that could take the night hours is routed to the day
        // hours so that the 60 s-step job, admitted after it, fits.
        let mut a = Admission::new(night(), 0.0).unwrap();
        let fine = req(24, m(180), Nanos::ZERO); // 18 of 24 hours' worth
        assert!(matches!(
            a.submit("fine", &[fine]).unwrap(),
            Decision::Granted { .. }
        ));
        let coarse = req(24, m(60), Nanos::from_secs(60));
        assert!(matches!(
            a.submit("coarse", &[coarse]).unwrap(),
            Decision::Granted { .. }
        ));
        // Nothing is left now.
        let s = a.shortfall(&req(24, m(1), Nanos::ZERO)).unwrap();
        assert_eq!(s.per_day, m(1));
    }

    #[test]
    fn the_best_effort_share_is_respected() {
        let cap = Capacity::uniform(&[Nanos::ZERO], m(10));
        // 240 min a day; with 10 % kept back, 216 min can be reserved.
        let mut a = Admission::new(cap.clone(), 0.1).unwrap();
        let too_much = req(24, m(220), Nanos::ZERO);
        let Decision::Refused { shortfalls } = a.submit("a", &[too_much]).unwrap() else {
            panic!("must be refused")
        };
        assert_eq!(shortfalls[0].1.per_day, m(4));
        assert!(matches!(
            a.submit("a", &[req(24, m(216), Nanos::ZERO)]).unwrap(),
            Decision::Granted { .. }
        ));
        // Without the share, 220 min fits.
        let mut b = Admission::new(cap, 0.0).unwrap();
        assert!(matches!(
            b.submit("a", &[too_much]).unwrap(),
            Decision::Granted { .. }
        ));
    }

    #[test]
    fn hourly_windows_are_each_checked() {
        let mut row = [m(10); HOURS_PER_DAY];
        row[13] = m(2);
        let cap = Capacity::new(vec![(Nanos::ZERO, row)]);
        let a = Admission::new(cap, 0.0).unwrap();
        let s = a.shortfall(&req(1, m(5), Nanos::ZERO)).unwrap();
        assert_eq!((s.worst, s.worst_window_hour, s.per_day), (m(3), 13, m(3)));
        // Over a 2-hour window, hour 13's gap is made up by hour 12.
        let s = a.shortfall(&req(2, m(10), Nanos::ZERO)).unwrap();
        assert!(s.is_zero(), "{s:?}");
    }

    #[test]
    fn bad_requests_are_errors() {
        let mut a = Admission::new(night(), 0.0).unwrap();
        assert_eq!(
            a.submit("x", &[req(5, m(1), Nanos::ZERO)]),
            Err(ReserveError::Period(5))
        );
        assert_eq!(
            a.submit("x", &[req(1, m(61), Nanos::ZERO)]),
            Err(ReserveError::Amount(req(1, m(61), Nanos::ZERO)))
        );
        assert_eq!(
            a.submit("x", &[req(1, m(1), Nanos::from_secs(7))]),
            Err(ReserveError::Step(Nanos::from_secs(7)))
        );
        assert_eq!(a.submit("x", &[]), Err(ReserveError::Empty));
        assert!(Admission::new(night(), 1.0).is_err());
        assert!(!a.withdraw("x"));
        // A withdrawn job frees its reservation.
        let whole = req(24, m(60), Nanos::from_secs(60));
        assert!(matches!(
            a.submit("a", &[whole]).unwrap(),
            Decision::Granted { .. }
        ));
        assert!(!a.shortfall(&whole).unwrap().is_zero());
        assert!(a.withdraw("a"));
        assert!(a.shortfall(&whole).unwrap().is_zero());
    }
}
