//! Events and the [`Timeline`]: a trace turned into the ordered event array
//! the engine replays.
//!
//! # The ordering rule
//!
//! Every request gives two events, an [`EventKind::Arrival`] at `arrival`
//! and an [`EventKind::Completion`] at its effective completion. Events are
//! ordered by `(time, sequence)`, where the sequence puts, at one instant:
//!
//! 1. completions (in request order),
//! 2. timer deadlines already due (the engine's, not in the array),
//! 3. arrivals (in request order),
//! 4. the start of an idle period, announced only once it is known that no
//!    arrival shares the instant, and deadlines it sets for that instant.
//!
//! So a request completing at the very instant another arrives leaves no
//! idle period between them, and a timeout that expires at the instant a
//! request arrives has expired: "by `t`" means before anything new at `t`.
//! The engine documents the deadline side of the rule.

use serde::{Deserialize, Serialize};

use crate::request::{DeviceId, Op, Request};
use crate::time::Nanos;

/// Whether a request arrived or completed.
///
/// The discriminants encode the ordering rule: completions sort before
/// arrivals at the same instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum EventKind {
    /// A request finished.
    Completion = 0,
    /// A request reached the device.
    Arrival = 1,
}

/// One arrival or completion of a foreground request.
///
/// 32 bytes, so a sweep can hold a whole trace in memory once and replay it
/// for every network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Event {
    /// When it happened.
    pub time: Nanos,
    /// The other end of the same request: for an arrival its completion,
    /// for a completion its arrival. Only offline components (the oracle)
    /// and the measures may use it: an online detector that reads an
    /// arrival's completion is cheating.
    pub pair: Nanos,
    /// First 512-byte sector of the request.
    pub sector: u64,
    /// Length of the request in bytes.
    pub bytes: u32,
    /// Arrival or completion.
    pub kind: EventKind,
    /// Read, write, flush or discard.
    pub op: Op,
    /// The device of the request.
    pub device: DeviceId,
}

impl Event {
    /// The arrival event of a request.
    pub fn arrival(r: &Request) -> Event {
        Event {
            time: r.arrival,
            pair: r.effective_completion(),
            sector: r.sector,
            bytes: r.bytes,
            kind: EventKind::Arrival,
            op: r.op,
            device: r.device,
        }
    }
    /// The completion event of a request.
    pub fn completion(r: &Request) -> Event {
        Event {
            time: r.effective_completion(),
            pair: r.arrival,
            sector: r.sector,
            bytes: r.bytes,
            kind: EventKind::Completion,
            op: r.op,
            device: r.device,
        }
    }
    /// The arrival of a request whose completion is not known yet, as a
    /// live embedder sees it: `pair` is [`Nanos::MAX`] (only offline
    /// components read it). Push [`Event::completion_at`] when it
    /// completes.
    pub fn arrival_at(time: Nanos, op: Op, sector: u64, bytes: u32) -> Event {
        Event {
            time,
            pair: Nanos::MAX,
            sector,
            bytes,
            kind: EventKind::Arrival,
            op,
            device: DeviceId::default(),
        }
    }
    /// The completion, at `time`, of the request that arrived at `arrived`
    /// ([`Event::arrival_at`]).
    pub fn completion_at(time: Nanos, arrived: Nanos, op: Op, sector: u64, bytes: u32) -> Event {
        Event {
            time,
            pair: arrived,
            sector,
            bytes,
            kind: EventKind::Completion,
            op,
            device: DeviceId::default(),
        }
    }
    /// Whether this is an arrival.
    pub fn is_arrival(&self) -> bool {
        self.kind == EventKind::Arrival
    }
    /// Whether this is a completion.
    pub fn is_completion(&self) -> bool {
        self.kind == EventKind::Completion
    }
}

/// One idle period: a maximal gap between busy intervals, `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdlePeriod {
    /// The completion that emptied the device.
    pub start: Nanos,
    /// The next arrival.
    pub end: Nanos,
}

impl IdlePeriod {
    /// `end - start`.
    pub fn len(&self) -> Nanos {
        self.end - self.start
    }
    /// Whether the period has no length (never, for periods the timeline
    /// reports).
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// A trace's requests as the ordered event array the engine replays.
///
/// Built once per trace and shared, read-only, by every network of a sweep.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    events: Vec<Event>,
    /// For each event, how many requests are outstanding after it.
    idle_after: Vec<bool>,
    /// The index of every event after which an idle period of positive
    /// length begins (the ends of the busy runs), for the replay's batch
    /// path; `None` past `u32::MAX` events.
    run_ends: Option<Vec<u32>>,
    requests: usize,
    clock: Option<Nanos>,
}

impl Timeline {
    /// Orders the requests' arrivals and completions by the rule in the
    /// module docs. The requests need not be sorted.
    pub fn from_requests(requests: &[Request]) -> Timeline {
        let mut arrivals: Vec<u32> = (0..requests.len() as u32).collect();
        arrivals.sort_by_key(|&i| (requests[i as usize].arrival, i));
        let mut completions = arrivals.clone();
        completions.sort_by_key(|&i| (requests[i as usize].effective_completion(), i));
        let mut events = Vec::with_capacity(requests.len() * 2);
        let (mut a, mut c) = (0, 0);
        while a < arrivals.len() || c < completions.len() {
            let take_completion = match (arrivals.get(a), completions.get(c)) {
                (Some(&ai), Some(&ci)) => {
                    requests[ci as usize].effective_completion() <= requests[ai as usize].arrival
                }
                (None, Some(_)) => true,
                _ => false,
            };
            if take_completion {
                events.push(Event::completion(&requests[completions[c] as usize]));
                c += 1;
            } else {
                events.push(Event::arrival(&requests[arrivals[a] as usize]));
                a += 1;
            }
        }
        Timeline::from_sorted_events(events)
    }

    /// Wraps events already in `(time, kind)` order with every completion
    /// after its arrival (as [`Timeline::from_requests`] makes them).
    ///
    /// # Panics
    /// If the events are out of order or a completion has no outstanding
    /// request: that is a bug in the caller, not bad input.
    pub fn from_sorted_events(events: Vec<Event>) -> Timeline {
        let mut outstanding: u64 = 0;
        let mut idle_after = Vec::with_capacity(events.len());
        let mut prev: Option<(Nanos, EventKind)> = None;
        let mut requests = 0;
        let mut run_ends: Vec<u32> = Vec::new();
        for (i, ev) in events.iter().enumerate() {
            if let Some(p) = prev {
                assert!(p <= (ev.time, ev.kind), "timeline events out of order");
            }
            let prev_time = prev.map(|p| p.0);
            prev = Some((ev.time, ev.kind));
            match ev.kind {
                EventKind::Arrival => {
                    outstanding += 1;
                    requests += 1;
                }
                EventKind::Completion => {
                    outstanding = outstanding
                        .checked_sub(1)
                        .expect("completion without an outstanding request");
                }
            }
            // A completion that empties the device ends a busy run unless
            // the next arrival comes at the same instant.
            if idle_after.last() == Some(&true) && prev_time == Some(ev.time) {
                run_ends.pop();
            }
            if outstanding == 0 {
                run_ends.push(i as u32);
            }
            idle_after.push(outstanding == 0);
        }
        let run_ends = u32::try_from(events.len()).is_ok().then_some(run_ends);
        Timeline {
            events,
            idle_after,
            run_ends,
            requests,
            clock: None,
        }
    }

    /// The indices of the events that end a busy run: the completions
    /// after which an idle period of positive length begins, and the last
    /// event. `None` when the timeline is too long to index with `u32`.
    pub(crate) fn run_ends(&self) -> Option<&[u32]> {
        self.run_ends.as_deref()
    }

    /// Records the wall clock at time 0 (Unix nanoseconds) for traces with
    /// absolute timestamps; [`crate::engine::replay`] tells the components
    /// (see [`crate::component::Context::clock`]).
    pub fn with_clock(mut self, clock: Option<Nanos>) -> Self {
        self.clock = clock;
        self
    }
    /// The wall clock at time 0, if the trace said.
    pub fn clock(&self) -> Option<Nanos> {
        self.clock
    }

    /// The events in replay order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }
    /// Whether no request is outstanding right after event `i`.
    pub fn idle_after(&self, i: usize) -> bool {
        self.idle_after[i]
    }
    /// Number of requests.
    pub fn requests(&self) -> usize {
        self.requests
    }
    /// Whether there are no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
    /// First arrival.
    pub fn start(&self) -> Option<Nanos> {
        self.events.first().map(|e| e.time)
    }
    /// Last completion.
    pub fn end(&self) -> Option<Nanos> {
        self.events.last().map(|e| e.time)
    }
    /// `end - start`: the span over which measures are taken.
    pub fn span(&self) -> Nanos {
        match (self.start(), self.end()) {
            (Some(s), Some(e)) => e - s,
            _ => Nanos::ZERO,
        }
    }
    /// The idle periods, in order: every gap of non-zero length between
    /// busy intervals inside `[first arrival, last completion)`.
    pub fn idle_periods(&self) -> impl Iterator<Item = IdlePeriod> + '_ {
        self.events.iter().enumerate().filter_map(move |(i, ev)| {
            if !self.idle_after[i] {
                return None;
            }
            let next = self.events.get(i + 1)?;
            (next.time > ev.time).then_some(IdlePeriod {
                start: ev.time,
                end: next.time,
            })
        })
    }
    /// Total length of the idle periods (the `actual` measure).
    pub fn idle_time(&self) -> Nanos {
        self.idle_periods()
            .fold(Nanos::ZERO, |acc, p| acc + p.len())
    }
    /// The busy intervals, in order: maximal runs with a request
    /// outstanding.
    pub fn busy_periods(&self) -> Vec<(Nanos, Nanos)> {
        let mut out: Vec<(Nanos, Nanos)> = Vec::new();
        let mut begin: Option<Nanos> = None;
        for (i, ev) in self.events.iter().enumerate() {
            if begin.is_none() && ev.is_arrival() {
                begin = Some(ev.time);
            }
            if self.idle_after[i] {
                if let Some(b) = begin.take() {
                    match out.last_mut() {
                        // A zero-length gap joins two busy runs.
                        Some(last) if last.1 == b => last.1 = ev.time,
                        _ => out.push((b, ev.time)),
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(a: u64, c: u64) -> Request {
        Request::new(Nanos::from_secs(a), Nanos::from_secs(c), Op::Read, 0, 4096)
    }

    #[test]
    fn busy_runs_end_only_where_an_idle_period_of_positive_length_begins() {
        // Events: A0 C1 A1 C2 A3 C4. The completion at 1 s meets the next
        // arrival at the same instant, so the first run lasts until 2 s.
        let t = Timeline::from_requests(&[req(0, 1), req(1, 2), req(3, 4)]);
        assert_eq!(t.run_ends(), Some(&[3u32, 5][..]));
        assert_eq!(Timeline::default().run_ends(), None);
        assert_eq!(
            Timeline::from_requests(&[]).run_ends(),
            Some(&[][..]),
            "an empty trace has no runs"
        );
    }

    #[test]
    fn completions_sort_before_arrivals_at_one_instant() {
        let t = Timeline::from_requests(&[req(0, 1), req(1, 2)]);
        let kinds: Vec<_> = t.events().iter().map(|e| (e.time.0, e.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (0, EventKind::Arrival),
                (1_000_000_000, EventKind::Completion),
                (1_000_000_000, EventKind::Arrival),
                (2_000_000_000, EventKind::Completion),
            ]
        );
        assert_eq!(
            t.idle_periods().count(),
            0,
            "a zero-length gap is no idle period"
        );
        assert_eq!(t.busy_periods(), vec![(Nanos::ZERO, Nanos::from_secs(2))]);
    }

    #[test]
    fn idle_periods_and_busy_periods_partition_the_span() {
        // Overlapping requests, then a gap of 5 s, then one more.
        let t = Timeline::from_requests(&[req(0, 3), req(1, 2), req(8, 9)]);
        let idle: Vec<_> = t.idle_periods().collect();
        assert_eq!(
            idle,
            vec![IdlePeriod {
                start: Nanos::from_secs(3),
                end: Nanos::from_secs(8)
            }]
        );
        let busy = t.busy_periods();
        let busy_total: u64 = busy.iter().map(|(b, e)| (*e - *b).0).sum();
        assert_eq!(busy_total + t.idle_time().0, t.span().0);
    }

    #[test]
    fn zero_length_requests_last_one_nanosecond() {
        let t = Timeline::from_requests(&[req(1, 1)]);
        assert_eq!(t.span(), Nanos(1));
        assert_eq!(t.requests(), 1);
    }
}
