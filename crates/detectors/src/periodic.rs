//! `periodic(...)`: learns the period and phase of recurring arrivals (a
//! checkpoint every 5 minutes, an hourly cron job, a SMART poll) online,
//! predicts the next periodic arrival and bounds the remaining idle time
//! by it (new in lull, issue 29).
//!
//! **What it sees.** Only the arrivals that end an idle period of at least
//! `min` (default `B/32`), like [`long-idle`](crate::long_idle): the
//! engine may skip shorter periods, and a periodic job's first request
//! after a quiet stretch is exactly such an arrival. Arrivals inside busy
//! stretches are not seen (nor needed: a job that lands in busy time ends
//! no idle period).
//!
//! **Estimator: recurring intervals, then phase-locked sources.** Each
//! seen arrival `a` after a gap of at least `B/4` is compared with the
//! last [`ANCHORS`] such arrivals;
//! every interval `a − x` of at least `B/4` goes into a small hashed
//! histogram of intervals, keyed by `log2(interval/B)` in steps of 1/32
//! of an octave (about 2 %), each count kept for 64 seen arrivals. An
//! interval seen again (count ≥ 1.5 over its key and the two next to it)
//! becomes a candidate **source**: period = the interval, next
//! arrival expected one period after `a`. Each of the [`SOURCES`] sources
//! then confirms or refutes itself by phase: an arrival within ±period/128
//! of its expected time is a **hit** (confidence `c ← c + (1 − c)/3`, and
//! a second-order loop pulls the phase half and the period an eighth of
//! the way to the error); an expected time that the device spent entirely
//! idle (its whole window inside a seen idle period) is a **miss**
//! (`c ← c/2`); a window in busy time, or in a period too short to see,
//! says nothing and the phase just steps on by a period. A source is
//! **confident** at `c ≥ ½` after at least three hits, if its window is
//! at most an eighth of the mean interval between the arrivals no
//! confident source expected (else chance arrivals would land in it too
//! often to tell). An arrival a confident source expected is explained:
//! it makes no intervals, so a 5-minute job does not hide an hourly one.
//! A new candidate replaces the least confident source only if that one
//! is below ⅓.
//!
//! Why not the paper's DPLL ([`dpll`](crate::dpll)): the DPLL needs its
//! period as a parameter (a wall-clock constant such as 30 s, the host's
//! not the disk's), tracks one source, and adjusts its phase from every
//! arrival, so a quiet regime's random arrivals drag it off. Here the
//! periods are learned from the trace (so everything scales with `B` and
//! the trace's times: no constant of its own), several sources are kept
//! at once (a 5-minute daemon and an hourly job), a source's phase moves
//! only on arrivals inside its own narrow window, and a source that stops
//! loses its confidence after a miss or two. An autocorrelation of the
//! arrival process or a histogram of arrival times modulo every candidate
//! period would cost O(periods × bins) per arrival; the interval histogram
//! costs O([`ANCHORS`] + [`SOURCES`]) per seen arrival, fixed memory,
//! integer time arithmetic (deterministic, exact under scaling by powers
//! of two).
//!
//! **Prediction.** At time `now` in an idle period, the next expected
//! arrival of the confident sources (the earliest window start at or after
//! `now`): the remaining idle time is at most that, unless the source
//! misses.
//!
//! **The detector `periodic()`.** At `min` into an idle period: if a
//! confident source's next arrival is more than `B` away and the sources
//! have, so far, been the ones ending the idle periods that follow them
//! (their discounted share of predicted-and-long outcomes, see
//! [`PeriodicStart`]), it declares at once; otherwise it waits for the
//! timeout of Helmbold et al.'s [`share`](crate::share), which it also
//! learns, but never lets that timeout fire within `B` before a confident
//! predicted arrival (it waits until the arrival's window has passed
//! instead, once per idle period). `auto` ([`long-idle`](crate::long_idle))
//! uses the same estimator and the same gate ([`gate`]); it acts at once
//! by its own model. Feeding the time to the next predicted arrival into
//! that model as well (a context cell of its own) was measured and not
//! kept: no workload gained beyond noise and `db-checkpoint` on the NAS
//! drive lost (median excess over the best fixed timeout 1.023 → 1.049,
//! docs/results.md, "Periodic structure and the clairvoyant per-window
//! timer").

use lull_core::component::{Context, Start, StartDetector};
use lull_core::learned::{Learned, LearnedError, ago, from_ago};
use lull_core::registry::{Built, ComponentInfo, GaugeInfo, GaugeUnit, Registry, Role};
use lull_core::time::Nanos;

use crate::share::{EXPERT_PARAMS, FALLBACK_GAUGES, ShareExperts};
use crate::timer::Alarm;

/// Seen arrivals each new one is compared with.
pub const ANCHORS: usize = 8;
/// Periodic sources tracked at once.
pub const SOURCES: usize = 4;
/// Entries of the hashed interval histogram.
const HIST: usize = 64;
/// Histogram keys per octave of interval length.
const STEPS_PER_OCTAVE: f64 = 32.0;
/// Seen arrivals a histogram count is kept for (an older count is 0).
const HIST_WINDOW: u64 = 64;
/// Count (over a key and its neighbours) that makes a candidate.
const RECUR: f64 = 1.5;
/// Confidence from which a source with two hits is acted on.
pub const CONFIDENT: f64 = 0.5;
/// Confidence of a new candidate (its interval recurred once).
const CANDIDATE: f64 = 1.0 / 3.0;
/// Window half-width as a fraction of the period (1/128).
const TOL_SHIFT: u32 = 7;
/// Per-arrival discount of the mean interval between seen arrivals.
const GAP_DISCOUNT: f64 = 0.98;

/// One periodic source: its period, the expected time of its next arrival,
/// and how far it is believed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Source {
    /// The period.
    pub period: Nanos,
    /// The expected time of the next arrival.
    pub next: Nanos,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Arrivals that landed in its window.
    pub hits: u32,
}

impl Source {
    fn tol(&self) -> Nanos {
        Nanos(self.period.0 >> TOL_SHIFT)
    }
    /// Whether predictions are made from it, when seen arrivals are
    /// `mean_gap` apart on average: confident, three hits, and a window
    /// narrow enough (an eighth of the mean gap) that chance arrivals
    /// rarely land in it.
    pub fn confident(&self, mean_gap: f64) -> bool {
        self.confidence >= CONFIDENT
            && self.hits >= 3
            && (2 * self.tol().0) as f64 * 8.0 <= mean_gap
    }
    /// Its first expected arrival whose window has not passed by `now`.
    fn next_after(&self, now: Nanos) -> Nanos {
        let tol = self.tol();
        if self.next + tol >= now || self.period.0 == 0 {
            return self.next;
        }
        let k = (now.0 - tol.0 - self.next.0) / self.period.0 + 1;
        Nanos(self.next.0.saturating_add(k.saturating_mul(self.period.0)))
    }
}

/// The online estimator of periodic sources (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct PeriodicEstimator {
    breakeven: Nanos,
    /// `1/B` in 1/ns: interval keys multiply by it (a division per
    /// interval was the estimator's largest cost).
    inv_b: f64,
    /// Recent seen arrivals, a ring; `None` is empty.
    anchors: [Option<Nanos>; ANCHORS],
    head: usize,
    /// The last unexplained seen arrival.
    last_free: Option<Nanos>,
    /// Hashed histogram: (key, discounted count, arrival stamp of the count).
    hist: Box<[(i64, f64, u64); HIST]>,
    /// Seen arrivals so far (the histogram's clock).
    arrivals: u64,
    sources: [Option<Source>; SOURCES],
    /// Discounted sum of the intervals between unexplained seen arrivals
    /// (nanoseconds; those no confident source expected: the ones that
    /// could land in a window by chance), and of their count: their mean
    /// without the bias of a start from zero.
    gap_sum: [f64; 2],
    hits: u64,
    misses: u64,
    /// The wall clock at time 0 ([`Context::clock`]), as last told by
    /// [`set_clock`](Self::set_clock).
    clock: Option<Nanos>,
    /// A restore's pending re-phase ([`set_clock`](Self::set_clock)).
    resume: Option<Resume>,
}

/// What a restore leaves for the first [`PeriodicEstimator::set_clock`]:
/// the restoring clock's time of the restore, and each source's next
/// arrival relative to the save (signed, unclamped). The save's wall time
/// is the restored `clock` (the one the save implies) plus `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Resume {
    at: Nanos,
    next: [i128; SOURCES],
}

/// What [`PeriodicEstimator::observe`] saw at one arrival.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observed {
    /// A confident source expected this arrival (it landed in its window).
    pub expected: bool,
}

impl PeriodicEstimator {
    /// An estimator for a device of break-even `breakeven` (periods are
    /// looked for from `B/4` up).
    pub fn new(breakeven: Nanos) -> Self {
        PeriodicEstimator {
            breakeven,
            inv_b: 1.0 / breakeven.0.max(1) as f64,
            anchors: [None; ANCHORS],
            head: 0,
            last_free: None,
            hist: Box::new([(i64::MIN, 0.0, 0); HIST]),
            arrivals: 0,
            sources: [None; SOURCES],
            gap_sum: [0.0; 2],
            hits: 0,
            misses: 0,
            clock: None,
            resume: None,
        }
    }

    /// Tells it the wall clock at time 0 (the engine's
    /// [`Context::clock`]; call it at every idle period's start, it costs
    /// a branch: a restored estimator is outside any idle period, so its
    /// first call comes before it predicts or observes). The first call after a restore carries the
    /// sources' phases over the time the saver was away: a job run by the
    /// wall clock (cron, a checkpoint timer) kept its phase while the
    /// daemon was down, so a source's next arrival is the first
    /// recurrence, at or after the restore, of the one it expected at the
    /// save. Without a wall clock on both sides the phases stay as
    /// restored (relative to the save, as if no time had passed).
    pub fn set_clock(&mut self, clock: Option<Nanos>) {
        let implied = std::mem::replace(&mut self.clock, clock);
        if let (Some(r), Some(now), Some(saved)) = (self.resume.take(), clock, implied) {
            // The same instant `r.at` on both clocks: they differ by the
            // time away.
            self.rephase(r, now.0.saturating_sub(saved.0));
        }
    }

    fn rephase(&mut self, r: Resume, away: u64) {
        if away == 0 {
            return;
        }
        let at = i128::from(r.at.0);
        for (slot, rel) in self.sources.iter_mut().zip(r.next) {
            let Some(s) = slot else { continue };
            let p = i128::from(s.period.0.max(1));
            let t = at + rel - i128::from(away);
            let t = if t >= at {
                t
            } else {
                t + (at - t + p - 1) / p * p
            };
            s.next = Nanos(t.clamp(0, i128::from(u64::MAX)) as u64);
        }
    }

    /// The discounted mean interval between seen arrivals, nanoseconds.
    fn mean_gap(&self) -> f64 {
        if self.gap_sum[1] > 0.0 {
            self.gap_sum[0] / self.gap_sum[1]
        } else {
            0.0
        }
    }

    /// The sources, confident or not.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        self.sources.iter().flatten()
    }

    /// Hits and misses of confident sources so far.
    pub fn hits_misses(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// The histogram key of an interval: `log2(interval/B)` in steps of
    /// 1/32 octave, from the exponent and mantissa of the ratio (linear
    /// within an octave: exact at powers of two, monotonic, and far
    /// cheaper than a logarithm).
    fn key(&self, interval: Nanos) -> i64 {
        let r = interval.0 as f64 * self.inv_b;
        let bits = r.max(f64::MIN_POSITIVE).to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
        let mantissa = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
        // Rounded half up by truncation: `(mantissa − 1)·32 + ½` is exact
        // (5 integer and 47 fraction bits), and `f64::round` is a libm call.
        exp * STEPS_PER_OCTAVE as i64 + ((mantissa - 1.0) * STEPS_PER_OCTAVE + 0.5) as i64
    }

    fn slot(key: i64) -> usize {
        key.rem_euclid(HIST as i64) as usize
    }

    /// The count of `key` now: 0 once [`HIST_WINDOW`] arrivals old.
    fn count(&self, key: i64) -> f64 {
        let (k, c, at) = self.hist[Self::slot(key)];
        if k != key || self.arrivals.saturating_sub(at) > HIST_WINDOW {
            return 0.0;
        }
        c
    }

    /// Adds one to `key`'s count; returns the new count over the key and
    /// its two neighbours.
    fn bump(&mut self, key: i64) -> f64 {
        let now = self.arrivals;
        let e = &mut self.hist[Self::slot(key)];
        // The slot's live count, whichever key holds it.
        let old = if now.saturating_sub(e.2) > HIST_WINDOW {
            0.0
        } else {
            e.1
        };
        let c = if e.0 == key { old + 1.0 } else { 1.0 };
        // A colliding key is replaced when its count is no more than the
        // new one's (or has expired).
        if e.0 == key || c >= old {
            *e = (key, c, now);
        }
        c + self.count(key - 1) + self.count(key + 1)
    }

    /// Learns from an arrival at `at` that ended an idle period that began
    /// at `began`.
    pub fn observe(&mut self, began: Nanos, at: Nanos) -> Observed {
        let mut seen = Observed::default();
        self.arrivals += 1;
        let mean_gap = self.mean_gap();
        // 1. Settle every source's windows up to this arrival.
        for slot in self.sources.iter_mut() {
            let Some(s) = slot else { continue };
            let tol = s.tol();
            let confident = s.confident(mean_gap);
            if s.next + tol < at {
                // Windows [next + k·P ± tol] wholly before `at`: those wholly
                // inside [began, at) were idle throughout, a miss each.
                let p = s.period.0.max(1);
                let passed = (at.0 - tol.0 - 1 - s.next.0) / p + 1;
                let first_inside = if began.0 + tol.0 > s.next.0 {
                    (began.0 + tol.0 - s.next.0).div_ceil(p)
                } else {
                    0
                };
                let missed = passed.saturating_sub(first_inside);
                if missed > 0 {
                    s.confidence *= 0.5f64.powi(missed.min(64) as i32);
                    if confident {
                        self.misses += missed;
                    }
                }
                s.next = Nanos(s.next.0.saturating_add(passed.saturating_mul(p)));
            }
            if s.next.0 <= at.0 + tol.0 && at.0 + tol.0 <= s.next.0 + 2 * tol.0 {
                // A hit: phase and period pulled towards the arrival.
                let err = at.0 as i128 - s.next.0 as i128;
                let period = (s.period.0 as i128 + err / 8).max(1) as u64;
                let next = s.next.0 as i128 + err / 2 + period as i128;
                s.period = Nanos(period);
                s.next = Nanos(next.max(at.0 as i128 + 1) as u64);
                s.confidence += (1.0 - s.confidence) / 3.0;
                s.hits = s.hits.saturating_add(1);
                if confident {
                    self.hits += 1;
                    seen.expected = true;
                }
            }
            if s.confidence < 1e-3 {
                *slot = None;
            }
        }
        // 2. Intervals to the recent unexplained arrivals: recurring ones
        // become candidates. An arrival a confident source expected is
        // explained and no anchor (so a 5-minute job does not hide an
        // hourly one).
        if seen.expected {
            return seen;
        }
        if let Some(x) = self.last_free {
            let g = (at - x.min(at)).0 as f64;
            self.gap_sum = [
                GAP_DISCOUNT * self.gap_sum[0] + g,
                GAP_DISCOUNT * self.gap_sum[1] + 1.0,
            ];
        }
        self.last_free = Some(at);
        // Only an arrival after a gap of B/4 or more is an anchor: a
        // periodic job in a quiet stretch is one, and the many arrivals
        // inside busy stretches would only cost time.
        let floor = Nanos(self.breakeven.0 / 4);
        if at - began.min(at) < floor {
            return seen;
        }
        for j in 0..ANCHORS {
            let Some(x) = self.anchors[(self.head + ANCHORS - 1 - j) % ANCHORS] else {
                break;
            };
            let interval = at - x.min(at);
            if interval < floor {
                continue;
            }
            let recur = self.bump(self.key(interval));
            // `spawn` keeps every source of at least a candidate's
            // confidence: test that first, and `tracks` (a division per
            // source) only when a slot could take the new one.
            if recur >= RECUR && self.can_spawn() && !self.tracks(interval) {
                self.spawn(interval, at);
            }
        }
        self.anchors[self.head] = Some(at);
        self.head = (self.head + 1) % ANCHORS;
        seen
    }

    /// Whether a source already has `interval` as its period or a small
    /// multiple of it.
    fn tracks(&self, interval: Nanos) -> bool {
        self.sources().any(|s| {
            let p = s.period.0.max(1);
            let m = (interval.0 + p / 2) / p;
            (1..=8).contains(&m) && interval.0.abs_diff(m * p) <= m * s.tol().0
        })
    }

    /// Whether [`spawn`](Self::spawn) would place a new candidate: a slot
    /// is empty or holds a source below a candidate's confidence.
    fn can_spawn(&self) -> bool {
        self.sources
            .iter()
            .any(|s| s.is_none_or(|s| s.confidence < CANDIDATE))
    }

    fn spawn(&mut self, period: Nanos, at: Nanos) {
        let new = Source {
            period,
            next: at + period,
            confidence: CANDIDATE,
            hits: 1,
        };
        let conf = |i: usize| self.sources[i].map_or(-1.0, |s| s.confidence);
        let worst = (0..SOURCES)
            .min_by(|&i, &j| conf(i).total_cmp(&conf(j)))
            .unwrap_or(0);
        match &self.sources[worst] {
            Some(s) if s.confidence >= CANDIDATE => {}
            _ => self.sources[worst] = Some(new),
        }
    }

    /// The earliest expected arrival of a confident source whose window
    /// has not passed by `now`, as (window start, confidence, period).
    pub fn predict(&self, now: Nanos) -> Option<(Nanos, f64, Nanos)> {
        let mean_gap = self.mean_gap();
        self.sources()
            .filter(|s| s.confident(mean_gap))
            .map(|s| {
                let next = s.next_after(now);
                (next.saturating_sub(s.tol()), s.confidence, s.period)
            })
            .min_by_key(|&(t, _, _)| t)
    }

    /// The window end of the prediction [`predict`](Self::predict) made.
    pub fn window_end(start: Nanos, period: Nanos) -> Nanos {
        start + Nanos(2 * (period.0 >> TOL_SHIFT))
    }

    /// How many values [`save_values`](Self::save_values) writes.
    pub const SAVED_LEN: usize = Self::SAVED_LEN_V1 + 2;
    /// How many it wrote before the wall time of the save was kept (the
    /// layout [`restore_values`](Self::restore_values) still reads, so an
    /// upgraded daemon keeps what it learned).
    pub const SAVED_LEN_V1: usize = ANCHORS + 3 * HIST + 1 + 4 * SOURCES + 5;

    /// Appends what it learned to `out`, times as ages at `now`.
    pub fn save_values(&self, now: Nanos, out: &mut Vec<f64>) {
        // The ring oldest first.
        for j in 0..ANCHORS {
            out.push(ago(now, self.anchors[(self.head + j) % ANCHORS]));
        }
        for &(k, c, at) in self.hist.iter() {
            // Keys are small (|log2| ≤ 64 octaves × 32); empty is NaN-free -1e9.
            out.push(if k == i64::MIN { -1e9 } else { k as f64 });
            out.push(c);
            out.push((self.arrivals - at.min(self.arrivals)) as f64);
        }
        out.push(self.arrivals as f64);
        for s in &self.sources {
            match s {
                Some(s) => {
                    out.push(s.period.0 as f64);
                    // Signed: the next arrival may be due already.
                    out.push(s.next.0 as f64 - now.0 as f64);
                    out.push(s.confidence);
                    out.push(f64::from(s.hits));
                }
                None => out.extend([0.0; 4]),
            }
        }
        out.push(self.hits as f64);
        out.push(self.misses as f64);
        out.extend_from_slice(&self.gap_sum);
        out.push(ago(now, self.last_free));
        // The save's wall time in whole seconds and nanoseconds (exact in
        // an f64; -1 unknown), for the re-phase after a restore.
        let wall = self.clock.map(|c| c.0.saturating_add(now.0));
        out.extend(wall.map_or([-1.0; 2], |w| {
            [(w / 1_000_000_000) as f64, (w % 1_000_000_000) as f64]
        }));
    }

    /// Restores what [`save_values`](Self::save_values) wrote
    /// ([`SAVED_LEN`](Self::SAVED_LEN) values, or
    /// [`SAVED_LEN_V1`](Self::SAVED_LEN_V1) from an older build). Saved
    /// times before the restoring clock's zero are forgotten, as if long
    /// ago (the anchors of a daemon that restarted); the sources' phases
    /// are carried over the time away at the next
    /// [`set_clock`](Self::set_clock).
    pub fn restore_values(&mut self, v: &[f64], now: Nanos) -> Result<(), LearnedError> {
        let bad = || LearnedError::new("periodic: a time, count or confidence out of range");
        let (v, wall) = match v.len() {
            Self::SAVED_LEN => v.split_at(Self::SAVED_LEN_V1),
            Self::SAVED_LEN_V1 => (v, &[-1.0, -1.0][..]),
            _ => return Err(bad()),
        };
        if v.iter().chain(wall).any(|x| !x.is_finite()) {
            return Err(bad());
        }
        let saved_wall = match (wall[0], wall[1]) {
            (s, n) if s < 0.0 && n < 0.0 => None,
            (s, n)
                if (0.0..1e10).contains(&s)
                    && (0.0..1e9).contains(&n)
                    && s.fract() == 0.0
                    && n.fract() == 0.0 =>
            {
                Some(s as u64 * 1_000_000_000 + n as u64)
            }
            _ => return Err(bad()),
        };
        let (ring, rest) = v.split_at(ANCHORS);
        let (hist, rest) = rest.split_at(3 * HIST);
        let arrivals = rest[0];
        let (srcs, counts) = rest[1..].split_at(4 * SOURCES);
        let gap_sum = [counts[2], counts[3]];
        let last_free = counts[4];
        if !(0.0..=9e15).contains(&arrivals)
            || counts[..2].iter().any(|&c| !(0.0..=9e15).contains(&c))
            || gap_sum.iter().any(|&g| !(0.0..=1e30).contains(&g))
        {
            return Err(bad());
        }
        let arrivals = arrivals as u64;
        let mut h = Box::new([(i64::MIN, 0.0, 0u64); HIST]);
        for (e, x) in h.iter_mut().zip(hist.chunks_exact(3)) {
            let (k, c, age) = (x[0], x[1], x[2]);
            if !((0.0..=1e6).contains(&c) && (0.0..=arrivals as f64).contains(&age)) {
                return Err(bad());
            }
            *e = if k == -1e9 {
                (i64::MIN, 0.0, 0)
            } else if k.abs() <= 1e6 && k.fract() == 0.0 {
                (k as i64, c, arrivals - age as u64)
            } else {
                return Err(bad());
            };
        }
        let mut sources = [None; SOURCES];
        let mut rel = [0i128; SOURCES];
        for ((slot, r), x) in sources.iter_mut().zip(&mut rel).zip(srcs.chunks_exact(4)) {
            let (p, next, c, hits) = (x[0], x[1], x[2], x[3]);
            if p == 0.0 && c == 0.0 {
                continue;
            }
            if !((1.0..=1e18).contains(&p)
                && (0.0..=1.0).contains(&c)
                && (0.0..=1e9).contains(&hits))
                || next.abs() > 1e18
            {
                return Err(bad());
            }
            *r = next as i128;
            let next = (now.0 as f64 + next).clamp(0.0, 2e18);
            *slot = Some(Source {
                period: Nanos(p as u64),
                next: Nanos(next as u64),
                confidence: c,
                hits: hits as u32,
            });
        }
        let mut anchors = [None; ANCHORS];
        for (a, &x) in anchors.iter_mut().zip(ring) {
            *a = from_ago(now, x);
        }
        self.anchors = anchors;
        self.head = 0;
        self.hist = h;
        self.arrivals = arrivals;
        self.sources = sources;
        (self.hits, self.misses) = (counts[0] as u64, counts[1] as u64);
        self.gap_sum = gap_sum;
        self.last_free = from_ago(now, last_free);
        // Until told otherwise, the wall clock the save implies (so a save
        // before the next `set_clock` writes back what was restored).
        self.clock = saved_wall.map(|w| Nanos(w.saturating_sub(now.0)));
        self.resume = saved_wall.map(|_| Resume { at: now, next: rel });
        Ok(())
    }

    /// Gauges under `prefix`.
    pub fn gauges(&self, prefix: &str, now: Nanos) -> Vec<(String, f64)> {
        let confident: Vec<&Source> = self
            .sources()
            .filter(|s| s.confident(self.mean_gap()))
            .collect();
        let best = confident
            .iter()
            .max_by(|a, b| a.confidence.total_cmp(&b.confidence));
        // No confident source: the three read "none" (`f64::MAX`, the
        // gauges' convention for a value that does not exist).
        let next = self
            .predict(now)
            .map_or(f64::MAX, |(t, _, _)| (t.saturating_sub(now)).as_secs_f64());
        vec![
            (format!("{prefix}sources"), confident.len() as f64),
            (
                format!("{prefix}period_s"),
                best.map_or(f64::MAX, |s| s.period.as_secs_f64()),
            ),
            (
                format!("{prefix}confidence"),
                best.map_or(f64::MAX, |s| s.confidence),
            ),
            (format!("{prefix}next_in_s"), next),
            (format!("{prefix}hits"), self.hits as f64),
            (format!("{prefix}misses"), self.misses as f64),
        ]
    }
}

/// Gauge entries of a [`PeriodicEstimator`] under `prefix` (the names
/// [`PeriodicEstimator::gauges`] reports).
macro_rules! periodic_gauges {
    ($p:literal) => {
        [
            GaugeInfo::new(
                concat!($p, "sources"),
                "confident periodic sources",
                GaugeUnit::Count,
            ),
            GaugeInfo::new(
                concat!($p, "period_s"),
                "period of the most confident source",
                GaugeUnit::Seconds,
            )
            .none_is("none"),
            GaugeInfo::new(
                concat!($p, "confidence"),
                "its confidence",
                GaugeUnit::Ratio,
            )
            .none_is("none"),
            GaugeInfo::new(
                concat!($p, "next_in_s"),
                "time to the next predicted periodic arrival",
                GaugeUnit::Seconds,
            )
            .none_is("none"),
            GaugeInfo::new(
                concat!($p, "hits"),
                "periodic arrivals that came as predicted",
                GaugeUnit::Times,
            ),
            GaugeInfo::new(
                concat!($p, "misses"),
                "predicted periodic arrivals that did not come",
                GaugeUnit::Times,
            ),
        ]
    };
}
pub(crate) use periodic_gauges;

/// The gate both `periodic()` and `long-idle` apply to a start planned at
/// `at` in an idle period, given the estimator's prediction at `now`:
/// `Some(later)` when a confident periodic arrival is expected within `B`
/// after `at` (the start would not pay), `later` being the end of that
/// arrival's window (if the device is still idle then, the source missed).
pub fn gate(est: &PeriodicEstimator, breakeven: Nanos, now: Nanos, at: Nanos) -> Option<Nanos> {
    gate_on(est.predict(now), breakeven, at)
}

/// [`gate`] on a prediction already made (`est.predict(now)`), for a
/// caller that gates more than one start at the same `now`.
pub fn gate_on(
    prediction: Option<(Nanos, f64, Nanos)>,
    breakeven: Nanos,
    at: Nanos,
) -> Option<Nanos> {
    let (start, _, period) = prediction?;
    let end = PeriodicEstimator::window_end(start, period);
    (at < end && start < at + breakeven).then_some(end)
}

/// Discount of [`PeriodicStart`]'s outcome counts.
const OUTCOME_DISCOUNT: f64 = 0.98;

/// `periodic(...)`: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct PeriodicStart {
    est: PeriodicEstimator,
    fallback: ShareExperts,
    breakeven: Nanos,
    armed: Alarm,
    began: Option<Nanos>,
    decided: bool,
    gated: bool,
    /// Whether the current period's decision saw a prediction beyond B.
    predicted_long: bool,
    /// Discounted (long, all) outcomes of periods predicted beyond B.
    outcomes: [f64; 2],
    at_once: u64,
}

impl PeriodicStart {
    /// A detector with `fallback`'s timeout when no periodic source decides.
    pub fn new(fallback: ShareExperts, breakeven: Nanos) -> Self {
        PeriodicStart {
            est: PeriodicEstimator::new(breakeven),
            fallback,
            breakeven,
            armed: Alarm::default(),
            began: None,
            decided: false,
            gated: false,
            predicted_long: false,
            outcomes: [0.0; 2],
            at_once: 0,
        }
    }
    /// The estimator.
    pub fn estimator(&self) -> &PeriodicEstimator {
        &self.est
    }
    /// The share of long periods among those predicted beyond `B`, with
    /// one period of prior each way.
    fn share_long(&self) -> f64 {
        (self.outcomes[0] + 1.0) / (self.outcomes[1] + 2.0)
    }
}

/// The layout of `periodic`'s state: 2 keeps the save's wall time
/// ([`PeriodicEstimator::set_clock`]); 1 is still read.
const STATE_VERSION: u32 = 2;

impl StartDetector for PeriodicStart {
    fn wants_events(&self) -> bool {
        false
    }
    fn quiet_below(&self) -> Nanos {
        if self.armed.deadline().is_none() {
            self.fallback.min_timeout()
        } else {
            Nanos::ZERO
        }
    }
    fn gauges(&self) -> Vec<(String, f64)> {
        let mut g = self.est.gauges("", self.began.unwrap_or(Nanos::ZERO));
        g.push(("share_long".into(), self.share_long()));
        g.push(("at_once".into(), self.at_once as f64));
        g.extend(self.fallback.gauges("fallback_"));
        g
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.est.set_clock(ctx.clock);
        self.began = Some(ctx.now);
        self.decided = false;
        self.gated = false;
        self.predicted_long = false;
        self.armed.arm(ctx.now + self.fallback.min_timeout());
        None
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.armed.disarm();
        self.began = None;
        let period = ctx.now - began;
        if period < self.fallback.min_timeout() {
            return;
        }
        if self.predicted_long {
            let long = period >= self.breakeven;
            self.outcomes = [
                OUTCOME_DISCOUNT * self.outcomes[0] + f64::from(u8::from(long)),
                OUTCOME_DISCOUNT * self.outcomes[1] + 1.0,
            ];
        }
        self.est.observe(began, ctx.now);
        self.fallback.observe(period);
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.armed.deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        if self.armed.deadline().is_none_or(|t| t > ctx.now) {
            return None;
        }
        let began = self.began.unwrap_or(ctx.now);
        let prediction = self.est.predict(ctx.now);
        if !self.decided {
            self.decided = true;
            if let Some((start, _, _)) = prediction {
                if start >= ctx.now + self.breakeven {
                    self.predicted_long = true;
                    if self.share_long() > 0.5 {
                        self.at_once += 1;
                        return self.armed.fire(ctx.now);
                    }
                }
            }
        }
        let at = (began + self.fallback.timeout()).max(ctx.now);
        if !self.gated {
            if let Some(later) = gate_on(prediction, self.breakeven, at) {
                self.gated = true;
                self.armed.arm(later);
                return None;
            }
        }
        self.armed.arm(at);
        if at <= ctx.now {
            return self.armed.fire(ctx.now);
        }
        None
    }
    fn save(&self, now: Nanos) -> Option<Learned> {
        let mut v = Vec::with_capacity(PeriodicEstimator::SAVED_LEN + 3);
        self.est.save_values(now, &mut v);
        v.extend_from_slice(&self.outcomes);
        v.push(self.at_once as f64);
        self.fallback.save_values(&mut v);
        Some(Learned::new(PERIODIC.name, STATE_VERSION, v))
    }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> {
        let (version, n) = match l.version {
            1 => (1, PeriodicEstimator::SAVED_LEN_V1),
            _ => (STATE_VERSION, PeriodicEstimator::SAVED_LEN),
        };
        let v = l.expect(PERIODIC.name, version, n + 3 + self.fallback.saved_len())?;
        let (o, at_once) = ([v[n], v[n + 1]], v[n + 2]);
        if o.iter()
            .chain([&at_once])
            .any(|&x| !(0.0..=9e15).contains(&x))
            || o[0] > o[1]
        {
            return Err(LearnedError::new("periodic: a count out of range"));
        }
        let mut est = self.est.clone();
        est.restore_values(&v[..n], now)?;
        self.fallback.restore_values(&v[n + 3..])?;
        self.est = est;
        self.outcomes = o;
        self.at_once = at_once as u64;
        Ok(())
    }
}

const PERIODIC_GAUGES: [GaugeInfo; 12] = {
    let [a, b, c, d, e, f] = periodic_gauges!("");
    let [f1, f2, f3, f4] = FALLBACK_GAUGES;
    [
        a,
        b,
        c,
        d,
        e,
        f,
        GaugeInfo::new(
            "share_long",
            "share of long periods when predicted beyond B",
            GaugeUnit::Ratio,
        ),
        GaugeInfo::new("at_once", "acted at once", GaugeUnit::Times),
        f1,
        f2,
        f3,
        f4,
    ]
};

/// Catalogue entry of `periodic`.
pub const PERIODIC: ComponentInfo = ComponentInfo {
    name: "periodic",
    role: Role::StartDetector,
    summary: "learns the periods and phases of recurring arrivals; acts at once when the next one is more than B away, never within B of one; otherwise the share timeout",
    source: "new (issue 29): recurring-interval histogram and phase-locked sources, instead of §3.1.1's DPLL with a given period; share fallback (Helmbold et al. 2000)",
    // Its parameters are the share fallback's, no more.
    params: &EXPERT_PARAMS,
    inputs: None,
    offline: false,
    gauges: &PERIODIC_GAUGES,
};

pub(crate) fn register(r: &mut Registry) {
    r.register(PERIODIC, |p| {
        let fallback = ShareExperts::from_params(p)?;
        let b = p.require_breakeven("min")?;
        Ok(Built::Start(Box::new(PeriodicStart::new(fallback, b))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Nanos = Nanos(10_000_000_000);

    fn s(x: f64) -> Nanos {
        Nanos::from_secs_f64(x)
    }

    /// Feeds arrivals (seconds), each ending an idle period that began
    /// `idle` seconds before it (or at the previous arrival, if later).
    fn feed(e: &mut PeriodicEstimator, arrivals: &[f64], idle: f64) -> usize {
        let mut expected = 0;
        let mut last = 0.0f64;
        for &a in arrivals {
            let began = (a - idle).max(last + 0.001);
            expected += usize::from(e.observe(s(began), s(a)).expected);
            last = a;
        }
        expected
    }

    fn next_in(e: &PeriodicEstimator, now: f64) -> Option<f64> {
        e.predict(s(now)).map(|(t, _, _)| t.as_secs_f64() - now)
    }

    #[test]
    fn an_exact_period_is_learned_and_predicted() {
        let mut e = PeriodicEstimator::new(B);
        let arrivals: Vec<f64> = (1..=10).map(|k| 300.0 * k as f64).collect();
        let expected = feed(&mut e, &arrivals, 299.0);
        // Seen twice at the third arrival, confident at the fifth.
        assert_eq!(expected, 5);
        let (start, c, p) = e.predict(s(3000.5)).unwrap();
        assert!((p.as_secs_f64() - 300.0).abs() < 1e-6, "{p}");
        assert!(c > 0.9, "{c}");
        // The window opens 300/128 s before the expected arrival at 3300 s.
        assert!((start.as_secs_f64() - (3300.0 - 300.0 / 128.0)).abs() < 1e-6);
        assert!((next_in(&e, 3100.0).unwrap() - 197.656_25).abs() < 1e-6);
    }

    #[test]
    fn jitter_is_tracked_without_losing_lock() {
        let mut e = PeriodicEstimator::new(B);
        // ±0.4 s of deterministic jitter on a 120 s period (the window
        // is ±0.94 s), and an unrelated arrival between each pair.
        let mut arrivals = Vec::new();
        for k in 1..=40u64 {
            let j = ((k * 7919) % 9) as f64 / 10.0 - 0.4;
            arrivals.push(120.0 * k as f64 + j);
            arrivals.push(120.0 * k as f64 + 37.0 + ((k * 131) % 50) as f64);
        }
        let expected = feed(&mut e, &arrivals, 30.0);
        assert!(expected >= 30, "{expected}");
        let (_, c, p) = e.predict(s(4810.0)).unwrap();
        assert!((p.as_secs_f64() - 120.0).abs() < 0.5, "{p}");
        assert!(c > 0.8, "{c}");
        // A miss or two while the period estimate settles.
        assert!(e.hits_misses().1 <= 4, "{:?}", e.hits_misses());
    }

    #[test]
    fn two_sources_are_tracked_at_once() {
        let mut e = PeriodicEstimator::new(B);
        // Every 300 s from 13 s, and every 3600 s from 1020 s (not on a
        // 300 s tick): the hourly one is seen too.
        let mut arrivals: Vec<f64> = (0..144).map(|k| 13.0 + 300.0 * k as f64).collect();
        arrivals.extend((0..12).map(|k| 1020.0 + 3600.0 * k as f64));
        arrivals.sort_by(f64::total_cmp);
        feed(&mut e, &arrivals, 100.0);
        let mut periods: Vec<f64> = e
            .sources()
            .filter(|s| s.confident(e.mean_gap()))
            .map(|s| s.period.as_secs_f64().round())
            .collect();
        periods.sort_by(f64::total_cmp);
        assert!(periods.contains(&300.0), "{periods:?}");
        assert!(
            periods.contains(&3600.0),
            "{periods:?} {:?}",
            e.sources().collect::<Vec<_>>()
        );
        // After the last arrival (42913 s), the 300 s one is next; the
        // hourly one expects 44220 s.
        let next = next_in(&e, 42_914.0).unwrap();
        assert!((next - (299.0 - 300.0 / 128.0)).abs() < 0.01, "{next}");
        let hourly = e
            .sources()
            .find(|s| s.period.as_secs_f64().round() == 3600.0);
        assert!((hourly.unwrap().next.as_secs_f64() - 44_220.0).abs() < 0.01);
    }

    #[test]
    fn a_source_that_stops_loses_its_confidence() {
        let mut e = PeriodicEstimator::new(B);
        let arrivals: Vec<f64> = (1..=10).map(|k| 60.0 * k as f64).collect();
        feed(&mut e, &arrivals, 59.0);
        assert!(e.predict(s(601.0)).is_some());
        // Silence for 10 periods, then an arrival: the windows in between
        // were idle throughout, misses all.
        e.observe(s(600.1), s(1234.0));
        assert!(e.predict(s(1235.0)).is_none());
        assert!(e.hits_misses().1 >= 9, "{:?}", e.hits_misses());
    }

    #[test]
    fn windows_in_busy_time_say_nothing() {
        let mut e = PeriodicEstimator::new(B);
        let arrivals: Vec<f64> = (1..=10).map(|k| 60.0 * k as f64).collect();
        feed(&mut e, &arrivals, 59.0);
        // The next idle period begins after 660 s: the window at 660 s
        // lay in busy time.
        e.observe(s(665.0), s(720.0));
        assert!(e.predict(s(721.0)).is_some());
        assert_eq!(e.hits_misses().1, 0);
    }

    #[test]
    fn random_arrivals_make_no_confident_source() {
        let mut e = PeriodicEstimator::new(B);
        let mut t = 0.0;
        let mut x = 12345u64;
        let mut confident = 0;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let gap = -30.0 * u.ln() + 1.0;
            t += gap;
            e.observe(s(t - gap + 0.01), s(t));
            confident += usize::from(e.predict(s(t)).is_some());
        }
        assert!(confident < 250, "{confident} of 5000");
    }

    /// An estimator that learned a job every 300 s (told the wall clock
    /// `clock`), and what it saved at 3001 s.
    fn saved_five_minute_job(clock: Option<Nanos>) -> (PeriodicEstimator, Vec<f64>) {
        let mut e = PeriodicEstimator::new(B);
        e.set_clock(clock);
        let arrivals: Vec<f64> = (1..=10).map(|k| 300.0 * k as f64).collect();
        feed(&mut e, &arrivals, 299.0);
        let mut v = Vec::new();
        e.save_values(s(3001.0), &mut v);
        assert_eq!(v.len(), PeriodicEstimator::SAVED_LEN);
        (e, v)
    }

    #[test]
    fn the_state_survives_a_restore() {
        let (e, v) = saved_five_minute_job(None);
        let mut f = PeriodicEstimator::new(B);
        f.restore_values(&v, s(3001.0)).unwrap();
        assert_eq!(f.predict(s(3100.0)), e.predict(s(3100.0)));
        let mut v2 = Vec::new();
        f.save_values(s(3001.0), &mut v2);
        assert_eq!(v, v2);
    }

    #[test]
    fn a_restored_source_keeps_its_wall_clock_phase_over_the_time_away() {
        // A 300 s job on the wall clock; the daemon (clock zero at Unix
        // time 1e9 s) saves at 3001 s and restarts 1000.5 s later, its new
        // clock's zero being the restart.
        let wall0 = s(1e9);
        let (_, v) = saved_five_minute_job(Some(wall0));
        let mut f = PeriodicEstimator::new(B);
        f.restore_values(&v, Nanos::ZERO).unwrap();
        f.set_clock(Some(wall0 + s(3001.0 + 1000.5)));
        // The job's next run is at 4200 s on the old clock: 198.5 s after
        // the restart on the new one. As restored without the re-phase, it
        // was 299 s after it (at 3300 s on the old clock, as if no time had
        // passed).
        let (start, _, p) = f.predict(Nanos::ZERO).expect("a confident source");
        let end = PeriodicEstimator::window_end(start, p).as_secs_f64();
        let mid = (start.as_secs_f64() + end) / 2.0;
        assert!((mid - 198.5).abs() < 0.01, "{mid}");
        // Without a wall clock on either side: as restored.
        let mut g = PeriodicEstimator::new(B);
        g.restore_values(&v, Nanos::ZERO).unwrap();
        g.set_clock(None);
        let (start, _, p) = g.predict(Nanos::ZERO).unwrap();
        let mid = (start + PeriodicEstimator::window_end(start, p)).as_secs_f64() / 2.0;
        assert!((mid - 299.0).abs() < 0.01, "{mid}");
    }

    #[test]
    fn times_before_the_restoring_clock_are_forgotten_not_piled_on_its_zero() {
        // Restored at a new clock's zero, the eight anchors (all in the
        // past) are dropped: piled on zero they would recur at once and
        // the first arrival after the restart would spawn a source of
        // period "time since the restart".
        let mut e = PeriodicEstimator::new(B);
        let arrivals: Vec<f64> = (1..=8).map(|k| 1000.0 + 37.0 * (k * k) as f64).collect();
        feed(&mut e, &arrivals, 30.0);
        let mut v = Vec::new();
        e.save_values(s(4000.0), &mut v);
        let mut f = PeriodicEstimator::new(B);
        f.restore_values(&v, Nanos::ZERO).unwrap();
        let before = f.sources().count();
        f.observe(s(100.0), s(777.0));
        assert_eq!(f.sources().count(), before);
        assert!(f.sources().all(|x| x.period != s(777.0)));
        let mut w = Vec::new();
        f.save_values(s(777.0), &mut w);
        let anchors = &w[..ANCHORS];
        assert_eq!(
            anchors.iter().filter(|&&a| a >= 0.0).count(),
            1,
            "{anchors:?}"
        );
    }

    #[test]
    fn the_layout_before_the_wall_time_is_still_read() {
        let (e, mut v) = saved_five_minute_job(None);
        v.truncate(PeriodicEstimator::SAVED_LEN_V1);
        let mut f = PeriodicEstimator::new(B);
        f.restore_values(&v, s(3001.0)).unwrap();
        assert_eq!(f.predict(s(3100.0)), e.predict(s(3100.0)));
        v.pop();
        assert!(f.restore_values(&v, s(3001.0)).is_err());
    }
}
