//! Internal measures (§5.3.1 of the paper; SPEC §4.1).
//!
//! Declared idle intervals are the `[start, stop)` runs of the idle task,
//! clipped to the span of the requests, `[first arrival, last
//! completion)`, where idle periods are (SPEC §2): time declared before
//! the first request or after the last is no idle period's, and counts
//! nowhere. Against the requests `[arrival, completion)`:
//!
//! - `actual_s`: total length of the idle periods (what an offline detector
//!   could declare);
//! - `predicted_s`: total declared time;
//! - `overflow_s`: declared time during which the device was busy;
//! - `violations`: requests that overlap at least one declared interval,
//!   each counted once; `violation_rate` = violations / `predicted_s`;
//! - `efficiency` = (predicted − overflow) / actual, the share of idle time
//!   that was declared; `incompetence` = overflow / actual.
//!
//! Degenerate cases are defined so that every measure is finite: with no
//! declared time the violation rate is 0; on a trace with no idle time
//! (`actual_s` = 0) efficiency is 1 (nothing was missed) and incompetence is
//! overflow / span (0 for an empty span).
//!
//! The engine computes them online in O(1) per event with
//! [`MeasureAccumulator`]; [`internal_measures`] is the straightforward
//! offline definition, kept as the reference the engine is tested against.

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventKind, Timeline};
use crate::time::Nanos;

/// The internal measures of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InternalMeasures {
    /// Total idle-period time, seconds.
    pub actual_s: f64,
    /// Total declared idle time, seconds.
    pub predicted_s: f64,
    /// Declared time that was busy, seconds.
    pub overflow_s: f64,
    /// Requests overlapping a declared interval.
    pub violations: u64,
    /// Violations per second of declared time.
    pub violation_rate: f64,
    /// (predicted − overflow) / actual, in [0, 1].
    pub efficiency: f64,
    /// overflow / actual, ≥ 0.
    pub incompetence: f64,
}

impl InternalMeasures {
    /// Derives the ratios from the primitive totals (nanoseconds).
    pub fn from_totals(
        actual: Nanos,
        predicted: Nanos,
        overflow: Nanos,
        violations: u64,
        span: Nanos,
    ) -> Self {
        let actual_s = actual.as_secs_f64();
        let predicted_s = predicted.as_secs_f64();
        let overflow_s = overflow.as_secs_f64();
        let violation_rate = if predicted.0 == 0 {
            0.0
        } else {
            violations as f64 / predicted_s
        };
        let (efficiency, incompetence) = if actual.0 == 0 {
            let inc = if span.0 == 0 {
                0.0
            } else {
                overflow_s / span.as_secs_f64()
            };
            (1.0, inc)
        } else {
            // Computed on integers so the paper's identities hold exactly.
            let useful = predicted.0.saturating_sub(overflow.0);
            // No clamp: declared idle time never exceeds the actual idle
            // time, and the property tests check that on the quantities.
            (
                useful as f64 / actual.0 as f64,
                overflow.0 as f64 / actual.0 as f64,
            )
        };
        InternalMeasures {
            actual_s,
            predicted_s,
            overflow_s,
            violations,
            violation_rate,
            efficiency,
            incompetence,
        }
    }

    /// The measures as `(name, value)` pairs in SPEC order.
    pub fn pairs(&self) -> [(&'static str, f64); 7] {
        [
            ("actual_s", self.actual_s),
            ("predicted_s", self.predicted_s),
            ("overflow_s", self.overflow_s),
            ("violations", self.violations as f64),
            ("violation_rate", self.violation_rate),
            ("efficiency", self.efficiency),
            ("incompetence", self.incompetence),
        ]
    }
}

/// Online computation of the internal measures, fed by the engine.
///
/// Exact, with O(1) state: a request outstanding when a declared interval
/// starts is a violation unless it was already counted, and it was counted
/// exactly when it arrived before the end of the previous interval (it then
/// overlapped that interval). So it suffices to count the outstanding
/// requests that arrived since the last interval ended, which a completion
/// can settle because it carries its arrival time.
///
/// Declared time counts only inside `[first arrival, last completion)`,
/// as [`internal_measures`] clips it: an online run does not know which
/// completion is the last, so time declared while the device is idle
/// after a completion is held back ([`MeasureAccumulator::measures`]
/// leaves it out) until the next arrival shows it was inside an idle
/// period, and time declared before the first arrival (an engine told
/// [`assume_idle`](crate::engine::Engine::assume_idle)) never counts. Its
/// measures at any moment are therefore those of the requests seen so
/// far, with the outstanding ones busy up to the last time seen: an
/// embedder that declares idle time past its last request (up to
/// [`finish`](crate::engine::Engine::finish)) still gets an efficiency in
/// `[0, 1]`, and a replay, which ends at the last completion, gets the
/// same numbers as by the definition.
///
/// Intervals are half-open in time, while the engine orders events within
/// an instant, so two ties need care. A request that arrives at the very
/// instant the task is stopped (after it, in the engine's order) does not
/// overlap `[start, stop)`: its violation is taken back and it waits,
/// uncounted, for the next interval. An interval that stops at the instant
/// it started is empty and overlaps nothing: it is undone as if it had
/// never started.
#[derive(Clone, Debug, Default)]
pub struct MeasureAccumulator {
    first: Option<Nanos>,
    last: Nanos,
    outstanding: u32,
    zero_since: Option<Nanos>,
    running_since: Option<Nanos>,
    /// Outstanding requests arrived at or after `count_from` are not yet
    /// counted as violations (all of them while no interval is open).
    count_from: Nanos,
    uncounted: u32,
    actual: Nanos,
    /// Declared time known to lie inside `[first arrival, last
    /// completion)`, or busy.
    predicted: Nanos,
    /// Declared time while the device is idle since its last completion
    /// (or before its first arrival): counted into `predicted` at the next
    /// arrival after a completion, dropped at the first arrival.
    held: Nanos,
    overflow: Nanos,
    violations: u64,
    /// Violations before the open interval started.
    violations_at_start: u64,
    /// Requests the open interval counted (uncounted at its start or
    /// arrived since) that have completed.
    settled_while_running: u32,
    /// Arrivals counted at the latest instant of the open interval.
    arrivals_at: (Nanos, u32),
}

impl MeasureAccumulator {
    /// A fresh accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accounts for time up to `now`: declared time while busy is
    /// predicted and overflow, declared time while idle is held until the
    /// next arrival says whether it counts.
    pub fn advance(&mut self, now: Nanos) {
        if self.running_since.is_some() {
            let d = now - self.last;
            if self.outstanding > 0 {
                self.overflow += d;
                self.predicted += d;
            } else {
                self.held += d;
            }
        }
        self.last = self.last.max(now);
    }

    /// A foreground event at `ev.time` (call [`Self::advance`] first).
    pub fn on_event(&mut self, ev: &Event) {
        match ev.kind {
            EventKind::Arrival => {
                if self.first.is_none() {
                    self.first = Some(ev.time);
                    self.last = ev.time;
                    // Declared before the first arrival: outside the span.
                    self.held = Nanos::ZERO;
                }
                if let Some(z) = self.zero_since.take() {
                    self.actual += ev.time - z;
                    // The idle period ended in an arrival: it was one.
                    self.predicted += std::mem::take(&mut self.held);
                }
                if self.running_since.is_some() {
                    self.violations += 1;
                    match &mut self.arrivals_at {
                        (at, n) if *at == ev.time => *n += 1,
                        a => *a = (ev.time, 1),
                    }
                } else {
                    self.uncounted += 1;
                }
                self.outstanding += 1;
            }
            EventKind::Completion => {
                self.outstanding = self.outstanding.saturating_sub(1);
                if ev.pair >= self.count_from {
                    if self.running_since.is_some() {
                        self.settled_while_running += 1;
                    } else {
                        self.uncounted = self.uncounted.saturating_sub(1);
                    }
                }
                if self.outstanding == 0 {
                    self.zero_since = Some(ev.time);
                }
            }
        }
    }

    /// The task started at `now`.
    pub fn start(&mut self, now: Nanos) {
        if self.running_since.is_none() {
            self.advance(now);
            self.running_since = Some(now);
            self.violations_at_start = self.violations;
            self.violations += u64::from(self.uncounted);
            self.uncounted = 0;
            self.settled_while_running = 0;
            self.arrivals_at = (now, 0);
        }
    }

    /// The task stopped at `now`.
    pub fn stop(&mut self, now: Nanos) {
        self.advance(now);
        let Some(s) = self.running_since.take() else {
            return;
        };
        if s == now {
            // Empty: undo it. What it counted is uncounted again, less
            // what has completed since; `count_from` stays.
            let counted = self.violations - self.violations_at_start;
            self.violations = self.violations_at_start;
            self.uncounted = u32::try_from(counted)
                .unwrap_or(u32::MAX)
                .saturating_sub(self.settled_while_running);
            return;
        }
        self.count_from = now;
        // Arrivals at the stop instant do not overlap [s, now).
        let (at, n) = self.arrivals_at;
        if at == now {
            self.violations -= u64::from(n);
            self.uncounted += n;
        }
    }

    /// Jumps to `end`, the last completion of a busy run, over events
    /// that did not start or stop the task: `idle` is the idle time and
    /// `overflow` the busy declared time in between, `violations` the
    /// requests that arrived while the task ran, `settled` the requests
    /// that completed while it ran. Every request outstanding now or
    /// arriving before `end` completes by `end`, so the counts return to
    /// zero and the device is idle from `end`: exactly what
    /// [`MeasureAccumulator::on_event`] and [`MeasureAccumulator::advance`]
    /// would leave after each of those events in turn.
    pub(crate) fn fast_forward(
        &mut self,
        end: Nanos,
        idle: Nanos,
        overflow: Nanos,
        violations: u64,
        settled: u32,
    ) {
        debug_assert!(self.outstanding > 0 || self.zero_since.is_some());
        debug_assert!(self.running_since.is_none() || self.uncounted == 0);
        debug_assert!(self.uncounted <= self.outstanding);
        // Nothing is held at the start or the end of a busy run.
        debug_assert!(self.held == Nanos::ZERO);
        if self.running_since.is_some() {
            // Every instant up to `end` is busy or in an idle period that
            // an arrival ended.
            self.predicted += end - self.last;
        }
        self.actual += idle;
        self.overflow += overflow;
        self.violations += violations;
        if self.running_since.is_some() {
            self.settled_while_running += settled;
            // The task stops after `end`, never at a skipped arrival.
            self.arrivals_at = (end, 0);
        }
        self.last = self.last.max(end);
        self.outstanding = 0;
        self.uncounted = 0;
        self.zero_since = Some(end);
    }

    /// Whether a declared interval is open.
    pub fn is_running(&self) -> bool {
        self.running_since.is_some()
    }

    /// The measures of the requests seen so far, by the definition
    /// ([`internal_measures`]): over `[first arrival, last completion)`,
    /// or up to the last time seen while requests are outstanding (an
    /// open interval counts up to there). Time declared since the last
    /// completion is not in them yet (see the type's docs).
    pub fn measures(&self) -> InternalMeasures {
        let end = match self.zero_since {
            Some(z) if self.outstanding == 0 => z,
            _ => self.last,
        };
        let span = self.first.map_or(Nanos::ZERO, |f| end - f);
        InternalMeasures::from_totals(
            self.actual,
            self.predicted,
            self.overflow,
            self.violations,
            span,
        )
    }
}

/// The internal measures of declared intervals against a timeline, by the
/// definition (two-pointer sweeps; O(n + m)). Intervals must be sorted and
/// disjoint; parts outside `[first arrival, last completion)` are clipped.
pub fn internal_measures(timeline: &Timeline, declared: &[(Nanos, Nanos)]) -> InternalMeasures {
    let (Some(lo), Some(hi)) = (timeline.start(), timeline.end()) else {
        return InternalMeasures::from_totals(
            Nanos::ZERO,
            Nanos::ZERO,
            Nanos::ZERO,
            0,
            Nanos::ZERO,
        );
    };
    let declared: Vec<(Nanos, Nanos)> = declared
        .iter()
        .map(|&(s, e)| (s.max(lo), e.min(hi)))
        .filter(|(s, e)| s < e)
        .collect();
    let predicted = declared.iter().fold(Nanos::ZERO, |a, (s, e)| a + (*e - *s));

    let busy = timeline.busy_periods();
    let mut overflow = Nanos::ZERO;
    let mut j = 0;
    for &(s, e) in &declared {
        while j < busy.len() && busy[j].1 <= s {
            j += 1;
        }
        let mut k = j;
        while k < busy.len() && busy[k].0 < e {
            overflow += busy[k].1.min(e) - busy[k].0.max(s);
            k += 1;
        }
    }

    // Requests by arrival, with their effective completions.
    let mut violations = 0;
    let mut i = 0;
    for ev in timeline.events().iter().filter(|e| e.is_arrival()) {
        let (a, c) = (ev.time, ev.pair);
        while i < declared.len() && declared[i].1 <= a {
            i += 1;
        }
        if i < declared.len() && declared[i].0 < c {
            violations += 1;
        }
    }
    InternalMeasures::from_totals(
        timeline.idle_time(),
        predicted,
        overflow,
        violations,
        timeline.span(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Op, Request};

    fn timeline(reqs: &[(u64, u64)]) -> Timeline {
        let reqs: Vec<_> = reqs
            .iter()
            .map(|&(a, c)| Request::new(Nanos(a), Nanos(c), Op::Write, 0, 512))
            .collect();
        Timeline::from_requests(&reqs)
    }

    #[test]
    fn offline_definition_on_a_hand_trace() {
        // Busy [0,10) [20,30) [50,60); idle 10..20 and 30..50: actual 30.
        let t = timeline(&[(0, 10), (20, 30), (50, 60)]);
        // Declared [12,25): 8 idle + 5 busy, overlaps request 2.
        // Declared [40,55): 10 idle + 5 busy, overlaps request 3.
        let m = internal_measures(&t, &[(Nanos(12), Nanos(25)), (Nanos(40), Nanos(55))]);
        assert_eq!(m.actual_s, 30e-9);
        assert_eq!(m.predicted_s, 28e-9);
        assert_eq!(m.overflow_s, 10e-9);
        assert_eq!(m.violations, 2);
        assert!((m.efficiency - 18.0 / 30.0).abs() < 1e-12);
        assert!((m.incompetence - 10.0 / 30.0).abs() < 1e-12);
    }

    #[test]
    fn a_request_overlapping_two_intervals_counts_once() {
        let t = timeline(&[(0, 100)]);
        let m = internal_measures(&t, &[(Nanos(10), Nanos(20)), (Nanos(30), Nanos(40))]);
        assert_eq!(m.violations, 1);
        let mut acc = MeasureAccumulator::new();
        let evs = t.events();
        acc.advance(evs[0].time);
        acc.on_event(&evs[0]);
        acc.start(Nanos(10));
        acc.stop(Nanos(20));
        acc.start(Nanos(30));
        acc.stop(Nanos(40));
        acc.advance(evs[1].time);
        acc.on_event(&evs[1]);
        assert_eq!(acc.measures().violations, 1);
        assert_eq!(acc.measures().overflow_s, 20e-9);
    }

    /// Requests [0, 5), A = [50, 60) and B = [50, 70), declared [10, 50)
    /// and [55, 65). The first stop comes at 50 after A arrived (the
    /// engine ordered A first): A does not overlap [10, 50) and is counted
    /// by the second interval, as B is; 2 violations, not 3.
    #[test]
    fn an_arrival_at_the_stop_instant_is_not_a_violation_of_that_interval() {
        let t = timeline(&[(0, 5), (50, 60), (50, 70)]);
        let declared = [(Nanos(10), Nanos(50)), (Nanos(55), Nanos(65))];
        assert_eq!(internal_measures(&t, &declared).violations, 2);
        // Events: A0 C5 A50 A50 C60 C70.
        let evs = t.events();
        let mut acc = MeasureAccumulator::new();
        let push = |acc: &mut MeasureAccumulator, ev: &Event| {
            acc.advance(ev.time);
            acc.on_event(ev);
        };
        push(&mut acc, &evs[0]);
        push(&mut acc, &evs[1]);
        acc.start(Nanos(10));
        push(&mut acc, &evs[2]);
        acc.stop(Nanos(50));
        push(&mut acc, &evs[3]);
        acc.start(Nanos(55));
        push(&mut acc, &evs[4]);
        acc.stop(Nanos(65));
        push(&mut acc, &evs[5]);
        assert_eq!(acc.measures(), internal_measures(&t, &declared));
        assert_eq!(acc.measures().violations, 2);
    }

    /// Request [0, 100); an empty interval at 20 (started and stopped at
    /// one instant) overlaps nothing, and the request is counted once by
    /// [30, 40).
    #[test]
    fn an_interval_stopped_where_it_started_is_undone() {
        let t = timeline(&[(0, 100)]);
        let evs = t.events();
        let mut acc = MeasureAccumulator::new();
        acc.advance(evs[0].time);
        acc.on_event(&evs[0]);
        acc.start(Nanos(20));
        acc.stop(Nanos(20));
        assert_eq!(acc.measures().violations, 0);
        acc.start(Nanos(30));
        acc.stop(Nanos(40));
        acc.advance(evs[1].time);
        acc.on_event(&evs[1]);
        let declared = [(Nanos(20), Nanos(20)), (Nanos(30), Nanos(40))];
        assert_eq!(acc.measures(), internal_measures(&t, &declared));
        assert_eq!(acc.measures().violations, 1);
    }

    #[test]
    fn no_idle_time_is_finite() {
        let t = timeline(&[(0, 10)]);
        let m = internal_measures(&t, &[(Nanos(0), Nanos(5))]);
        assert_eq!(m.efficiency, 1.0);
        assert_eq!(m.incompetence, 0.5);
        assert!(m.violation_rate.is_finite());
    }
}
