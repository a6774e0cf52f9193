//! Shadow evaluation: what fixed timeouts, the best of them and the oracle
//! would have done on the disk, next to what lull did, over rolling
//! windows.
//!
//! # What is exact
//!
//! For spinning a disk down, a fixed timeout `c` is a function of the idle
//! periods alone: it sleeps `L − c` in every period `L ≥ c` and spins up
//! once at its end (`lull-tasks`' `spindown`, whose semantics this
//! follows). The oracle sleeps through every period longer than the
//! break-even time B. So per hour the shadow keeps, for every candidate
//! timeout of a fixed grid, the number of periods it fires in and the
//! exact sum of its sleep; for the oracle the same; for lull, the sleep
//! and spin-ups of its actual standby orders (from the moment it ordered
//! one to the next arrival, as a replay books them). Windows are sums of
//! the last 24 or 168 hours: memory is that of 168 buckets, whatever the
//! uptime (about 100 KB per disk with a week of buckets, plus one busy
//! poll's pending pieces, at most 33 KB; [`Shadow::footprint`]).
//!
//! The idle periods are those a replay of the activity log sees
//! ([`crate::read::Log::rebuild`]): the shadow follows the same pieces
//! ([`crate::poll`]), and a gap between two daemon runs counts as busy,
//! unless the later run continues the earlier one
//! ([`crate::record::Session::continues`]: a reload, or a restart that
//! found the disk untouched, while it was idle), when the gap is part
//! of the idle period that goes on through it. The time a disk was
//! unplugged counts as busy too, and is not counted as watched either:
//! no policy sleeps through it or spends anything in it.
//! A period is booked in the hour it ends (the arrival that ends it); the
//! period in progress is not booked yet.
//!
//! The **clairvoyant per-window timer** is the stronger reference: in
//! hindsight, the best candidate of each 10-minute window of the wall
//! clock, for the periods that end in it. The shadow keeps the open
//! window's per-candidate sums and books its best when a period ends in a
//! later window (the open one counts in reports as it stands).
//! `gain_vs_clairvoyant` is the share of what it adds over the best fixed
//! timeout that lull captured.
//!
//! The best fixed timeout and the clairvoyant are **held to the daemon's
//! wear budget**, as lull is. Each candidate books a second set of sums
//! from [`BudgetedTimers`] (a token bucket each, charged as the daemon's
//! gate charges its own, with each session's budget, a bucket per mode);
//! the best fixed timeout is chosen from those. The clairvoyant is one
//! policy held to each UTC day's budget ([`BudgetClairvoyant`]): each
//! closed window keeps its few worthwhile choices (how many spin-downs,
//! on which days, for what saving), and a report chooses over the windows
//! it spans, among the same candidates. A window closed
//! without a budget (before a reload set one) counts as not spinning
//! down.
//! Without it a busy disk's best fixed timeout spins down hundreds of
//! times a day where the daemon may spin down 48, and lull would be judged
//! against a policy it was not allowed to run. The named references
//! (hd-idle's 10 minutes, `hdparm -S`'s, the user's own timeout) are what
//! those tools do, without a budget, and the oracle is the bound: those
//! keep the plain sums. Beside the oracle stands the **budgeted oracle**
//! ([`BUDGET_ORACLE`]), the bound for anything behind the gate: each UTC
//! day's `N` spin-downs spent where they save the most
//! ([`BudgetOracle`], exact, as `lull replay` reports it). It needs the
//! periods themselves, not sums: the buckets keep those longer than B
//! (at most one per B of the week, a few kilobytes on a bursty disk).
//!
//! # What is approximate
//!
//! The best fixed timeout in hindsight is the best of the grid, not of
//! every real number: the grid is 0 and B·2^(k/2) for k = −12…14 (B/64 to
//! 128·B in steps of √2, [`grid`]) plus the references (1, 5, 10, 20, 30
//! and 60 minutes), 34 candidates; the daemon's shadow keeps those of at
//! least its poll and the poll itself ([`Shadow::with_floor`]: nothing
//! that polls can act sooner, and shorter idle periods are the log's
//! reconstruction), and compares with `BestFixed::from_idle_periods_from`
//! at the same floor. Its energy is never below the exact
//! best fixed timeout's (`BestFixed::from_idle_periods`, which `lull
//! replay` reports), and equal when that lies on the grid; the exact one
//! sits just above some idle period's length, and the grid's nearest
//! point above it loses what the periods between the two would have
//! slept (tested against the exact one in `tests/shadow.rs`).

use std::collections::VecDeque;

use lull_core::time::Nanos;
use lull_tasks::BudgetOracle;
use lull_tasks::budget_clairvoyant::{BudgetClairvoyant, Timeouts, WindowChoice, WindowChoices};
use lull_tasks::spindown::{BestFixed, WindowClairvoyant};
use lull_tasks::{BudgetedTimers, DriveProfile, PowerModel};

use crate::poll::{Gaps, Piece};
use crate::record::{Poll, PollKind, Record, Session};

/// The grid of candidate timeouts, as multiples of B: 0, and B·2^(k/2)
/// for k = −12…14 (B/64 to 128·B in steps of √2). Dense at the short end,
/// where a disk's bursts put many idle periods a poll or two long, so the
/// best of the grid is within a factor √2 of any timeout in that range.
pub fn grid() -> impl Iterator<Item = f64> {
    std::iter::once(0.0).chain((-12..=14).map(|k| 2f64.powf(f64::from(k) / 2.0)))
}

/// The fixed timeouts reported by name: hd-idle's default and common
/// `hdparm -S` values (`-S 12`: 1 min, `-S 60`: 5 min, `-S 241`: 30 min,
/// `-S 242`: 1 h), in seconds.
pub const REFERENCES: [(&str, u64); 5] = [
    ("hd-idle-10min", 600),
    ("hdparm-S12", 60),
    ("hdparm-S60", 300),
    ("hdparm-S241", 1800),
    ("hdparm-S242", 3600),
];

/// Extra grid points in seconds (the references and 20 minutes).
const EXTRA_S: [u64; 6] = [60, 300, 600, 1200, 1800, 3600];

/// The fixed timeouts a shadow judges for a drive whose break-even time is
/// `breakeven`, from `floor` on (the daemon's poll; zero: every one),
/// sorted and without repeats: [`grid`] × B, [`REFERENCES`] and 20
/// minutes, those below `floor` dropped and `floor` itself added when it
/// is not zero. [`Shadow`] judges these (with [`Shadow::with_floor`]),
/// and `lull rank --from-daemon` replays them under the daemon's wear
/// budget, so the two choose the best fixed timeout from one list.
pub fn fixed_timeouts(breakeven: Nanos, floor: Nanos) -> Vec<Nanos> {
    let mut candidates: Vec<Nanos> = grid()
        .map(|k| Nanos::from_secs_f64(breakeven.as_secs_f64() * k))
        .chain(EXTRA_S.iter().map(|&s| Nanos::from_secs(s)))
        .filter(|&c| c >= floor)
        .chain((floor > Nanos::ZERO).then_some(floor))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    candidates
}

/// How many references are reported by name at most: [`REFERENCES`] and
/// the user's own timeout.
const NAMED: usize = REFERENCES.len() + 1;

/// The windows reported: name and length in hours.
pub const WINDOWS: [(&str, u64); 2] = [("24h", 24), ("7d", 168)];

const HOUR: u64 = 3_600_000_000_000;

/// One hour's figures.
#[derive(Clone, Debug, Default, PartialEq)]
struct Bucket {
    /// Unix hour.
    hour: u64,
    /// Nanoseconds the daemon watched the disk in it, present.
    observed: u64,
    /// Of those, nanoseconds a dry run watched (lull's figures there are
    /// the spin-downs it would have made).
    dry_observed: u64,
    /// Idle periods that ended in it, of at least the floor (a poll:
    /// [`Shadow::with_floor`]).
    periods: u64,
    /// Per candidate, under the daemon's wear budget ([`BudgetedTimers`]):
    /// periods it fired in, and its sleep (ns). The best fixed timeout and
    /// the clairvoyant are chosen from these.
    fired: Vec<u32>,
    slept: Vec<u64>,
    /// The same without a budget for the named references (as
    /// [`Shadow::refs`] lists them): hd-idle and `hdparm -S` have none.
    ref_fired: [u32; NAMED],
    ref_slept: [u64; NAMED],
    oracle_slept: u64,
    oracle_spinups: u64,
    /// The periods the oracle sleeps through (longer than B), as Unix
    /// nanoseconds `(start, end)`, kept only under a wear budget: the
    /// budgeted oracle chooses among them ([`BudgetOracle`]).
    long: Vec<(u64, u64)>,
    lull_slept: u64,
    lull_spinups: u64,
    /// The clairvoyant per-window timer's sleep and spin-ups, for the
    /// windows closed in this hour.
    cv_slept: u64,
    cv_spinups: u64,
    /// Under a wear budget, the choices of each window closed in this
    /// hour, in order: the clairvoyant is then one policy held to each
    /// day's budget, chosen over the windows a report spans
    /// ([`BudgetClairvoyant`]).
    cv_choices: Vec<WindowChoices>,
}

/// The clairvoyant per-window timer's window: 10 minutes, on the wall
/// clock (it divides an hour, so each window lies in one bucket).
pub const CLAIRVOYANT_WINDOW: Nanos = Nanos::from_secs(600);

/// The shadow evaluation of one disk's spin-down task (module docs).
#[derive(Clone, Debug)]
pub struct Shadow {
    model: PowerModel,
    breakeven: Nanos,
    /// Candidate timeouts, ascending, distinct.
    candidates: Vec<Nanos>,
    buckets: VecDeque<Bucket>,
    /// The wall clock at the time zero of the shadow's timeline: the
    /// current run's, or that of the first run of those it continues.
    clock: Option<Nanos>,
    /// The current run's own clock ([`Session::clock`]).
    run_clock: Option<Nanos>,
    /// How much later the current run's instants are on the shadow's
    /// timeline than in its records: 0, or for a run that continues
    /// another daemon's (a restart while idle), the time between their
    /// time zeros.
    shift: Nanos,
    /// The shift is to be checked at the current run's first instant: a
    /// run never begins before the one it continues ended (a wall clock
    /// set back between them).
    align: bool,
    /// The current run's last instant.
    last: Option<Nanos>,
    /// The disk vanished from diskstats and is not back: the time until
    /// it is is not watched (`PollKind::Vanished`).
    absent: bool,
    /// The current run's pieces not yet booked (the last poll's).
    pending: Vec<Piece>,
    /// The instant of the poll before the one `pending` came from: a
    /// deadline after it that the poll's own I/O overtook was not acted on
    /// ([`lull_tasks::gate::BusyPolls`]).
    pending_since: Nanos,
    /// Where booking stands: the end of the busy time so far (`None`
    /// before the run's first request), and a held request open.
    gaps: Gaps,
    /// lull's standby: asleep since, or ordered while busy.
    asleep_since: Option<Nanos>,
    armed: bool,
    /// lull's sleep and spin-ups in the idle period in progress before a
    /// spin-up the daemon learned of without I/O ([`Record::Power`]),
    /// booked with the period.
    lull_woken: (Nanos, u64),
    /// The newest Unix hour seen: windows end with it.
    newest_hour: u64,
    /// The clairvoyant's open window (Unix window index) and, per
    /// candidate, the periods it fires in and its sleep in that window,
    /// under the wear budget.
    cv_window: Option<u64>,
    cv_fired: Vec<u64>,
    cv_slept: Vec<u64>,
    /// Under a wear budget, the open window's periods `(start, act_end,
    /// end)` of at least the floor, in Unix time, for its choices.
    cv_periods: Vec<(Nanos, Nanos, Nanos)>,
    /// The user's own fixed timeout, reported as [`YOUR_TIMEOUT`].
    yours: Option<Nanos>,
    /// The shortest timeout a fixed policy may use, and the shortest idle
    /// period counted ([`Shadow::with_floor`]).
    floor: Nanos,
    /// The candidates held to the daemon's wear budget, and the current
    /// run's budget (its session's; `None` or 0: none) and mode (0 the
    /// real daemon, 1 a dry run: a bucket each, as each keeps its state
    /// file).
    timers: BudgetedTimers,
    per_day: Option<u32>,
    mode: usize,
    /// The candidates reported by name, as indices: [`REFERENCES`] in
    /// order, then the user's own timeout if there is one. Judged without
    /// a budget, as those tools run them.
    refs: Vec<usize>,
}

/// The policy name of the oracle held to the wear budget: each UTC day's
/// spin-downs spent on the periods where they save the most
/// ([`BudgetOracle`]). Reported only under a budget.
pub const BUDGET_ORACLE: &str = "budget-oracle";

/// The policy name of the user's own fixed timeout
/// ([`Shadow::with_your_timeout`]).
pub const YOUR_TIMEOUT: &str = "your-timeout";

impl Shadow {
    /// A shadow for the drive of `profile`: its power model and its B for
    /// standby ([`DriveProfile::standby`]), as the daemon builds it.
    /// `None` for a drive without a power model or a standby B.
    pub fn for_profile(profile: &DriveProfile) -> Option<Shadow> {
        let b = profile.standby().ok()?;
        Some(Shadow::new(profile.power()?.clone(), b))
    }

    /// A shadow for a drive with `model` whose break-even time is
    /// `breakeven` (the disk's B, which scales the grid).
    pub fn new(model: PowerModel, breakeven: Nanos) -> Shadow {
        Shadow {
            model,
            breakeven,
            candidates: fixed_timeouts(breakeven, Nanos::ZERO),
            buckets: VecDeque::with_capacity(WINDOWS[1].1 as usize + 1),
            clock: None,
            run_clock: None,
            shift: Nanos::ZERO,
            align: false,
            last: None,
            absent: false,
            pending: Vec::new(),
            pending_since: Nanos::ZERO,
            gaps: Gaps::new(),
            asleep_since: None,
            armed: false,
            lull_woken: (Nanos::ZERO, 0),
            newest_hour: 0,
            cv_window: None,
            cv_fired: Vec::new(),
            cv_slept: Vec::new(),
            cv_periods: Vec::new(),
            yours: None,
            floor: Nanos::ZERO,
            timers: BudgetedTimers::new(),
            per_day: None,
            mode: 0,
            refs: Vec::new(),
        }
        .with_refs()
    }

    /// Finds the named references among the candidates again (the list
    /// changed).
    fn with_refs(mut self) -> Shadow {
        let at = |c: Nanos| self.candidates.binary_search(&c).ok();
        self.refs = REFERENCES
            .iter()
            .map(|&(_, secs)| Nanos::from_secs(secs))
            .chain(self.yours)
            .map(|c| at(c).expect("a named reference is a candidate"))
            .collect();
        self
    }

    /// Judges the fixed timeouts (the best fixed, the clairvoyant's) from
    /// `floor` on, and counts the idle periods of at least `floor`: the
    /// daemon's poll interval. A daemon that looks at the disk once a
    /// poll cannot act sooner, and the idle periods shorter than a poll
    /// are the activity log's reconstruction (a poll's requests spread
    /// evenly over it), not gaps the disk had: a best fixed timeout of
    /// 0.1 s on a 1 s poll would be judged on those and recommend what no
    /// polling daemon can run. The candidates below the floor go and the
    /// floor joins them; the oracle is unchanged (the bound). Call it
    /// before the first record, as [`Shadow::with_your_timeout`].
    pub fn with_floor(mut self, floor: Nanos) -> Shadow {
        let fresh = self.buckets.is_empty() && self.cv_window.is_none();
        debug_assert!(fresh, "with_floor after the first record");
        if !fresh || floor == Nanos::ZERO {
            return self;
        }
        let yours = self.yours;
        // The named references stay, below the floor too (a poll of
        // several minutes): reported, never chosen.
        let named = |c: Nanos| REFERENCES.iter().any(|&(_, s)| Nanos::from_secs(s) == c);
        self.candidates
            .retain(|&c| c >= floor || Some(c) == yours || named(c));
        if let Err(i) = self.candidates.binary_search(&floor) {
            self.candidates.insert(i, floor);
        }
        self.floor = floor;
        self.with_refs()
    }

    /// The shortest timeout judged and idle period counted
    /// ([`Shadow::with_floor`]; zero: every one).
    pub fn floor(&self) -> Nanos {
        self.floor
    }

    /// Also reports the fixed timeout `timeout` by the name
    /// [`YOUR_TIMEOUT`]: the one the user ran before (hd-idle's `-i`,
    /// `hdparm -S`), which lull's savings are best compared with. It joins
    /// the candidates, so it is exact like every reference; call it before
    /// the first record (a shadow that has booked time keeps its grid).
    pub fn with_your_timeout(mut self, timeout: Nanos) -> Shadow {
        let fresh = self.buckets.is_empty() && self.cv_window.is_none();
        debug_assert!(fresh, "with_your_timeout after the first record");
        if !fresh {
            return self;
        }
        if let Err(i) = self.candidates.binary_search(&timeout) {
            self.candidates.insert(i, timeout);
        }
        self.yours = Some(timeout);
        self.with_refs()
    }

    /// The user's own fixed timeout, if it reports one.
    pub fn your_timeout(&self) -> Option<Nanos> {
        self.yours
    }

    /// The candidate timeouts.
    pub fn candidates(&self) -> &[Nanos] {
        &self.candidates
    }

    /// The power model.
    pub fn model(&self) -> &PowerModel {
        &self.model
    }

    /// Takes one record, in log order.
    pub fn feed(&mut self, rec: &Record) {
        if let Record::Session(s) = rec {
            self.session(s);
            return;
        }
        let Some(t) = rec.time() else { return };
        self.align_to(t);
        if self.shift == Nanos::ZERO {
            self.take(rec);
        } else {
            self.take(&rec.shifted(self.shift));
        }
    }

    /// A run starts ([`Record::Session`]). One that continues the run
    /// before it (a reload while the disk was idle and watched, or a
    /// restart that found it untouched) goes on in its idle period: on
    /// the same timeline, its instants shifted by the time between the
    /// two runs' time zeros when it is another daemon's.
    fn session(&mut self, s: &Session) {
        match self.clock {
            Some(frame) if s.continues => {
                if self.run_clock != Some(s.clock) {
                    self.shift = Nanos(s.clock.0.saturating_sub(frame.0));
                    self.align = true;
                }
            }
            _ => {
                self.end_run();
                self.clock = Some(s.clock);
                self.shift = Nanos::ZERO;
                self.align = false;
            }
        }
        self.run_clock = Some(s.clock);
        self.per_day = s.max_spindowns_per_day;
        self.mode = usize::from(s.dry_run);
    }

    /// At a continuing run's first instant `t` (its own): it never
    /// begins before the last instant of the run it continues.
    fn align_to(&mut self, t: Nanos) {
        if std::mem::take(&mut self.align) {
            if let Some(last) = self.last.filter(|&l| self.shift + t < l) {
                self.shift = last - t;
            }
        }
    }

    /// Takes one timed record, its instants on the shadow's timeline.
    fn take(&mut self, rec: &Record) {
        match rec {
            Record::Session(_) => {}
            Record::Poll(p) => {
                self.settle();
                self.observe(p.t);
                match p.kind {
                    PollKind::Vanished => self.absent = true,
                    PollKind::Baseline => self.absent = false,
                    _ => {}
                }
                self.queue(p);
            }
            Record::Mark(t) | Record::End(t) => {
                self.settle();
                self.observe(*t);
            }
            Record::Standby(t) => {
                self.observe(*t);
                self.standby(*t);
            }
            Record::StandbyFailed(t) => {
                self.observe(*t);
                self.asleep_since = None;
                self.armed = false;
            }
            Record::Power { t, standby, found } => {
                self.observe(*t);
                if *found {
                    self.power(*t, *standby);
                }
            }
            // Withheld: the daemon decided then (the shadow's lull line
            // holds the standbys it sent, and it sent none there).
            Record::Withheld { t, .. } => self.observe(*t),
            // What the state file holds: nothing about the disk.
            Record::Learned { .. } => {}
        }
    }

    /// Books the pending pieces (the next poll, mark or session would):
    /// call it after a poll's records, before reading a report.
    pub fn settle(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for p in &pending {
            self.piece(*p);
        }
        self.pending = pending;
        self.pending.clear();
    }

    /// Books the pending pieces ([`Shadow::settle`]) and counts the time
    /// up to `t` as watched, as the next record would: the daemon calls it
    /// after each poll's records, quiet polls writing none (a mark a
    /// minute). Without it the time watched, and the energies over it,
    /// lag up to a mark behind the daemon; with it they end at the last
    /// poll. The next record books from `t` on, so the totals are those of
    /// a replay of the log once that record is written. An instant before
    /// the last one seen changes nothing. `t` is the current run's own, as
    /// its records' instants are.
    pub fn watched_to(&mut self, t: Nanos) {
        self.align_to(t);
        let t = t + self.shift;
        self.settle();
        if self.last.is_some_and(|l| t > l) {
            self.observe(t);
        }
    }

    fn queue(&mut self, p: &Poll) {
        self.pending_since = p.t0;
        let mut pending = std::mem::take(&mut self.pending);
        p.pieces(|piece| pending.push(piece));
        self.pending = pending;
    }

    /// Time the daemon watched, up to `t`, booked hour by hour (none
    /// while the disk is absent).
    fn observe(&mut self, t: Nanos) {
        let Some(clock) = self.clock else { return };
        let from = self.last.map_or(t, |l| l.min(t));
        self.last = Some(self.last.map_or(t, |l| l.max(t)));
        let from = if self.absent { t } else { from };
        let (mut a, b) = (clock.0.saturating_add(from.0), clock.0.saturating_add(t.0));
        if b == a {
            self.bucket(b / HOUR);
            return;
        }
        let dry = self.mode == 1;
        while a < b {
            let hour = a / HOUR;
            let cut = ((hour + 1) * HOUR).min(b);
            let bucket = self.bucket(hour);
            bucket.observed += cut - a;
            if dry {
                bucket.dry_observed += cut - a;
            }
            a = cut;
        }
    }

    /// The bucket of Unix hour `hour`, dropping those older than a week.
    fn bucket(&mut self, hour: u64) -> &mut Bucket {
        let k = self.candidates.len();
        if hour > self.newest_hour || self.buckets.is_empty() {
            self.newest_hour = self.newest_hour.max(hour);
            while self
                .buckets
                .front()
                .is_some_and(|b| b.hour + WINDOWS[1].1 <= self.newest_hour)
            {
                self.buckets.pop_front();
            }
        }
        // Buckets stay sorted by hour. A period books into its own hour
        // whenever it is booked: a record that moved the time watched on
        // first (a standby, a withheld one) must not move the period into
        // a later hour, or when the pending pieces are booked would change
        // the windows (soak seed 442256476608139856). An hour older than
        // the oldest bucket kept (a clock set back) books into that one.
        let hour = hour.max(self.buckets.front().map_or(0, |b| b.hour));
        let i = match self.buckets.binary_search_by_key(&hour, |b| b.hour) {
            Ok(i) => i,
            Err(i) => {
                self.buckets.insert(
                    i,
                    Bucket {
                        hour,
                        fired: vec![0; k],
                        slept: vec![0; k],
                        ..Bucket::default()
                    },
                );
                i
            }
        };
        &mut self.buckets[i]
    }

    fn unix_hour(&self, t: Nanos) -> u64 {
        self.clock.unwrap_or(Nanos::ZERO).0.saturating_add(t.0) / HOUR
    }

    /// lull ordered a standby at `t`: the pending pieces that arrived
    /// before it go first (a deadline due at an arrival's instant fires
    /// before it, as in the engine).
    fn standby(&mut self, t: Nanos) {
        let pending = std::mem::take(&mut self.pending);
        let split = pending
            .iter()
            .position(|p| piece_time(p) >= t)
            .unwrap_or(pending.len());
        for p in &pending[..split] {
            self.piece(*p);
        }
        self.pending = pending[split..].to_vec();
        if self.asleep_since.is_some() {
            return;
        }
        let idle = !self.gaps.open() && self.gaps.busy_until().is_some_and(|b| b <= t);
        if idle {
            // Ordered earlier while busy: asleep since the disk emptied.
            let since = if self.armed {
                self.gaps.busy_until()
            } else {
                None
            };
            self.armed = false;
            self.asleep_since = Some(since.unwrap_or(t));
        } else {
            self.armed = true;
        }
    }

    /// The drive's power state the daemon learned at `t`, as a replay of
    /// the log takes it up (`lull_tasks::Spindown::with_daemon_standbys`):
    /// found in standby while idle, lull's drive sleeps from then (a
    /// standby taken up after a restart or reload: the new run sends none,
    /// and without this its sleep until the next I/O went uncounted);
    /// found spinning while lull's line has it asleep, it spun up then. The
    /// pieces at or before `t` come first, as the replay's arrivals at `t`
    /// do.
    fn power(&mut self, t: Nanos, standby: bool) {
        let pending = std::mem::take(&mut self.pending);
        let split = pending
            .iter()
            .position(|p| piece_time(p) > t)
            .unwrap_or(pending.len());
        for p in &pending[..split] {
            self.piece(*p);
        }
        self.pending = pending[split..].to_vec();
        let idle = !self.gaps.open() && self.gaps.busy_until().is_some_and(|b| b <= t);
        if !idle {
            return;
        }
        if self.armed {
            // Ordered while busy: asleep since the disk emptied.
            self.armed = false;
            self.asleep_since = self.asleep_since.or(self.gaps.busy_until());
        }
        match (standby, self.asleep_since) {
            (true, None) => self.asleep_since = Some(t),
            (false, Some(a)) if a <= t => {
                self.lull_woken.0 += t - a;
                self.lull_woken.1 += 1;
                self.asleep_since = None;
            }
            _ => {}
        }
    }

    fn piece(&mut self, p: Piece) {
        let t = piece_time(&p);
        if let Some(len) = self.gaps.piece(p) {
            self.ended(t, len);
        }
    }

    /// The idle period of length `len` ended by an arrival at `t`, of the
    /// poll pending.
    fn ended(&mut self, t: Nanos, len: Nanos) {
        let from = t - len;
        if self.armed {
            self.armed = false;
            self.asleep_since.get_or_insert(from);
        }
        let (mut slept, mut spinups) = std::mem::take(&mut self.lull_woken);
        if let Some(a) = self.asleep_since.take() {
            slept += t - a.max(from);
            spinups += 1;
        }
        // A timer's deadline after the previous poll came with this
        // poll's I/O, too late to act on (`BusyPolls::act_end`, as a
        // replay of the log has it).
        let act = lull_tasks::gate::acts_until(self.pending_since, from, t) - from;
        self.book(t, len, act, (slept, spinups));
    }

    /// Books an idle period of length `len` ended at `t`, in which the
    /// timeouts of at most `act` fire, and in which lull slept `lull.0`
    /// and spun up `lull.1` times.
    fn book(&mut self, t: Nanos, len: Nanos, act: Nanos, lull: (Nanos, u64)) {
        let hour = self.unix_hour(t);
        self.open_window(t);
        // The bucket exists before the lists it is sized by are taken.
        self.bucket(hour);
        let oracle = len.as_secs_f64() > self.model.break_even_s();
        let candidates = std::mem::take(&mut self.candidates);
        let counted = len >= self.floor;
        let start = t - len;
        let budget = lull_tasks::TimerBudget {
            per_day: self.per_day,
            mode: self.mode,
            clock: self.clock,
        };
        let mut timers = std::mem::take(&mut self.timers);
        let (mut cv_fired, mut cv_slept) = (
            std::mem::take(&mut self.cv_fired),
            std::mem::take(&mut self.cv_slept),
        );
        let refs = std::mem::take(&mut self.refs);
        // Where the period ends in Unix time, when the budgeted oracle
        // needs it.
        let long_end = self
            .per_day
            .is_some_and(|n| n > 0)
            .then(|| self.clock.unwrap_or(Nanos::ZERO).0.saturating_add(t.0));
        let b = self.bucket(hour);
        b.periods += u64::from(counted);
        for (j, &i) in refs.iter().enumerate() {
            let c = candidates[i];
            if act >= c {
                b.ref_fired[j] = b.ref_fired[j].saturating_add(1);
                b.ref_slept[j] += (len - c).0;
            }
        }
        for (i, &c) in candidates.iter().enumerate() {
            if len < c {
                break;
            }
            if let Some(after) = timers.fires_after(i, c, start, act, budget) {
                b.fired[i] = b.fired[i].saturating_add(1);
                b.slept[i] += (len - after).0;
                cv_fired[i] += 1;
                cv_slept[i] += (len - after).0;
            }
        }
        if oracle {
            b.oracle_slept += len.0;
            b.oracle_spinups += 1;
            if let Some(end) = long_end {
                b.long.push((end - len.0.min(end), end));
            }
        }
        b.lull_slept += lull.0.0;
        b.lull_spinups += lull.1;
        if long_end.is_some() && act >= self.floor {
            // In Unix time: the window may hold periods of two runs,
            // each on its own timeline.
            let z = self.clock.unwrap_or(Nanos::ZERO);
            self.cv_periods.push((z + start, z + start + act, z + t));
        }
        self.candidates = candidates;
        self.refs = refs;
        (self.timers, self.cv_fired, self.cv_slept) = (timers, cv_fired, cv_slept);
    }

    /// The clairvoyant's window of a period ended at `t` (its share is
    /// booked with the period's): the open window closes when a period
    /// ends in a later one.
    fn open_window(&mut self, t: Nanos) {
        let k = self.candidates.len();
        let w = self.clock.unwrap_or(Nanos::ZERO).0.saturating_add(t.0) / CLAIRVOYANT_WINDOW.0;
        if self.cv_window.is_some_and(|c| c != w) {
            self.close_window();
        }
        if self.cv_window.is_none() {
            self.cv_window = Some(w);
            self.cv_fired = vec![0; k];
            self.cv_slept = vec![0; k];
        }
    }

    /// The open window's best candidate, in hindsight: (sleep, spin-ups),
    /// `(0, 0)` when no candidate saves anything.
    fn window_best(&self) -> (u64, u64) {
        let save = self.model.p_active - self.model.p_sleep;
        let up = self.model.spinup_energy();
        let mut best = (0.0, (0, 0));
        // The user's own timeout may lie below the floor: reported, not a
        // choice of the references.
        let from = self.candidates.partition_point(|&c| c < self.floor);
        for (&n, &slept) in self.cv_fired.iter().zip(&self.cv_slept).skip(from) {
            let saved = save * Nanos(slept).as_secs_f64() - up * n as f64;
            if saved > best.0 {
                best = (saved, (slept, n));
            }
        }
        best.1
    }

    /// Books the open window's best into the bucket of its hour.
    fn close_window(&mut self) {
        let Some(w) = self.cv_window.take() else {
            return;
        };
        let (slept, n) = self.window_best();
        let choices = self.window_choices();
        self.cv_periods.clear();
        let hour = w * CLAIRVOYANT_WINDOW.0 / HOUR;
        let b = match self.buckets.iter_mut().rev().find(|b| b.hour == hour) {
            Some(b) => b,
            None => self.bucket(hour),
        };
        b.cv_slept += slept;
        b.cv_spinups += n;
        b.cv_choices.extend(choices);
    }

    /// The open window's choices under the wear budget (`None` without
    /// one, or without periods).
    fn window_choices(&self) -> Option<WindowChoices> {
        let n = self.per_day.filter(|&n| n > 0)?;
        // The candidates the best fixed timeout is chosen from.
        let from = self.candidates.partition_point(|&c| c < self.floor);
        let among = Timeouts::Among(&self.candidates[from..]);
        let c = WindowChoices::new(&self.cv_periods, &self.model, among, n, None)?;
        // A window that would not spin down takes no memory.
        (!c.choices.is_empty()).then_some(c)
    }

    /// A run ends: what it left pending is booked, and the period in
    /// progress ends unbooked (the gap to the next run is busy).
    fn end_run(&mut self) {
        self.settle();
        if let Some(t) = self.last {
            // The gap between runs is one busy request: its arrival ends
            // the period in progress at the run's last instant (no poll
            // brought it: its timers act up to its end).
            self.pending_since = t;
            if let Some(len) = self.gaps.arrival(t) {
                self.ended(t, len);
            }
        }
        self.last = None;
        self.absent = false;
        self.gaps = Gaps::new();
        self.asleep_since = None;
        self.armed = false;
    }

    /// The figures over the windows, as of the newest hour seen.
    pub fn report(&self) -> ShadowReport {
        let windows = WINDOWS
            .iter()
            .map(|&(name, hours)| self.window(name, hours))
            .collect();
        ShadowReport {
            drive: self.model.name.clone(),
            breakeven_s: self.breakeven.as_secs_f64(),
            windows,
        }
    }

    fn window(&self, name: &str, hours: u64) -> WindowReport {
        let k = self.candidates.len();
        let (mut observed, mut dry, mut periods) = (0u64, 0u64, 0u64);
        let (mut fired, mut slept) = (vec![0u64; k], vec![0u64; k]);
        let r = self.refs.len();
        let (mut ref_fired, mut ref_slept) = (vec![0u64; r], vec![0u64; r]);
        let (mut o_slept, mut o_up, mut l_slept, mut l_up) = (0u64, 0u64, 0u64, 0u64);
        let (mut cv_slept, mut cv_up) = (0u64, 0u64);
        let mut long: Vec<(Nanos, Nanos)> = Vec::new();
        // Under a wear budget, the clairvoyant as one policy held to it.
        let mut held = self.per_day.filter(|&n| n > 0).map(BudgetClairvoyant::new);
        // The open window counts too.
        // (No let chain: this crate keeps the workspace's MSRV, 1.85.)
        let open_counts = self
            .cv_window
            .is_some_and(|w| w * CLAIRVOYANT_WINDOW.0 / HOUR + hours > self.newest_hour);
        if open_counts {
            (cv_slept, cv_up) = self.window_best();
        }
        for b in self
            .buckets
            .iter()
            .filter(|b| b.hour + hours > self.newest_hour)
        {
            observed += b.observed;
            dry += b.dry_observed;
            periods += b.periods;
            for i in 0..k {
                fired[i] += u64::from(b.fired[i]);
                slept[i] += b.slept[i];
            }
            for j in 0..r {
                ref_fired[j] += u64::from(b.ref_fired[j]);
                ref_slept[j] += b.ref_slept[j];
            }
            o_slept += b.oracle_slept;
            o_up += b.oracle_spinups;
            long.extend(b.long.iter().map(|&(a, e)| (Nanos(a), Nanos(e))));
            l_slept += b.lull_slept;
            l_up += b.lull_spinups;
            cv_slept += b.cv_slept;
            cv_up += b.cv_spinups;
            if let Some(h) = held.as_mut() {
                b.cv_choices.iter().for_each(|c| h.push(c));
            }
        }
        // The open window last, where it counts.
        if let Some(h) = held.as_mut() {
            if let Some(c) = self.window_choices().filter(|_| open_counts) {
                h.push(&c);
            }
        }
        let span = Nanos(observed).as_secs_f64();
        let m = &self.model;
        let figures = |policy: &str, timeout: Option<Nanos>, sleep: u64, spinups: u64| {
            // Sleep never exceeds the watched time (a clock set back).
            let sleep = Nanos(sleep).as_secs_f64().min(span);
            let energy = m.energy_s(span, sleep, spinups);
            PolicyFigures {
                policy: policy.to_string(),
                timeout_s: timeout.map(Nanos::as_secs_f64),
                saved_wh: (m.energy_s(span, 0.0, 0) - energy) / 3600.0,
                energy_j: energy,
                spinups,
            }
        };
        let mut best = 0;
        let mut best_energy = f64::INFINITY;
        // Chosen under the wear budget the daemon kept (the same as
        // without one when it had none).
        for i in self.candidates.partition_point(|&c| c < self.floor)..k {
            let e = m.energy_s(span, Nanos(slept[i]).as_secs_f64().min(span), fired[i]);
            if e < best_energy {
                best_energy = e;
                best = i;
            }
        }
        let mut policies = vec![figures("lull", None, l_slept, l_up)];
        // The named references (`refs`): REFERENCES, then the user's own.
        let names = REFERENCES
            .iter()
            .map(|&(name, _)| name)
            .chain(self.yours.map(|_| YOUR_TIMEOUT));
        for (j, name) in names.enumerate() {
            let c = self.candidates[self.refs[j]];
            policies.push(figures(name, Some(c), ref_slept[j], ref_fired[j]));
        }
        // Never spinning down is a fixed timeout too (one above every
        // period), and it wins a tie: a grid timeout that never fired
        // spends exactly as much, and is not a timeout to recommend.
        let best_fixed = if best_energy >= m.energy_s(span, 0.0, 0) {
            figures("best-fixed", None, 0, 0)
        } else {
            figures(
                "best-fixed",
                Some(self.candidates[best]),
                slept[best],
                fired[best],
            )
        };
        let clairvoyant = match held {
            Some(h) => {
                let (saved, spinups) = h.best();
                let energy = m.energy_s(span, 0.0, 0) - saved;
                PolicyFigures {
                    policy: "clairvoyant-10min".to_string(),
                    timeout_s: None,
                    saved_wh: saved / 3600.0,
                    energy_j: energy,
                    spinups,
                }
            }
            None => figures("clairvoyant-10min", None, cv_slept, cv_up),
        };
        let oracle = figures("oracle", None, o_slept, o_up);
        let budget_oracle = self.budget_oracle(long, span);
        let lull = policies[0].energy_j;
        let reference = BestFixed {
            timeout_s: best_fixed.timeout_s.unwrap_or(f64::INFINITY),
            energy_j: best_fixed.energy_j,
            spinups: best_fixed.spinups,
            window_clairvoyant: Some(WindowClairvoyant {
                window_s: CLAIRVOYANT_WINDOW.as_secs_f64(),
                energy_j: clairvoyant.energy_j,
                spinups: clairvoyant.spinups,
            }),
            budget_oracle,
        };
        let excess = reference.excess_ratio(lull, oracle.energy_j);
        let gain = reference
            .window_clairvoyant
            .map_or(f64::NAN, |c| c.gain(best_fixed.energy_j, lull));
        policies.push(best_fixed);
        policies.push(clairvoyant);
        if let Some(o) = budget_oracle {
            let base = m.energy_s(span, 0.0, 0);
            policies.push(PolicyFigures {
                policy: BUDGET_ORACLE.to_string(),
                timeout_s: None,
                saved_wh: (base - o.energy_j) / 3600.0,
                energy_j: o.energy_j,
                spinups: o.spinups,
            });
        }
        policies.push(oracle);
        WindowReport {
            window: name.to_string(),
            observed_s: span,
            dry_run_s: Nanos(dry).as_secs_f64().min(span),
            idle_periods: periods,
            baseline_energy_j: m.energy_s(span, 0.0, 0),
            policies,
            excess_vs_best_fixed: excess.is_finite().then_some(excess),
            gain_vs_clairvoyant: gain.is_finite().then_some(gain),
            wear_budget_per_day: self.per_day.filter(|&n| n > 0),
        }
    }

    /// The oracle held to the current wear budget over a window's `long`
    /// periods (Unix nanoseconds) and `span_s` seconds watched; `None`
    /// without a budget.
    fn budget_oracle(&self, mut long: Vec<(Nanos, Nanos)>, span_s: f64) -> Option<BudgetOracle> {
        let per_day = self.per_day.filter(|&n| n > 0)?;
        // In time order and disjoint, as the oracle takes them (a clock
        // set back booked a period out of order: the later one is kept).
        long.sort_unstable();
        let mut last = Nanos::ZERO;
        long.retain(|&(a, e)| {
            let keep = a >= last;
            if keep {
                last = e;
            }
            keep
        });
        // Unix times: days are UTC days from the clock's zero.
        Some(BudgetOracle::from_idle_periods(
            long,
            span_s,
            &self.model,
            per_day,
            Some(Nanos::ZERO),
        ))
    }

    /// Bytes of memory it holds (for the documented bound).
    pub fn footprint(&self) -> usize {
        let k = self.candidates.len();
        std::mem::size_of::<Self>()
            + self.buckets.capacity() * std::mem::size_of::<Bucket>()
            + self.buckets.len() * k * (4 + 8)
            + self
                .buckets
                .iter()
                .map(|b| b.long.capacity() * 16 + choices_footprint(&b.cv_choices))
                .sum::<usize>()
            + self.cv_periods.capacity() * 24
            + self.pending.capacity() * std::mem::size_of::<Piece>()
            + k * 8
            + (self.cv_fired.capacity() + self.cv_slept.capacity()) * 8
            + self.timers.footprint()
            + self.refs.capacity() * 8
    }

    /// The newest Unix hour it has seen.
    pub fn newest_hour(&self) -> u64 {
        self.newest_hour
    }
}

/// The heap bytes of a bucket's window choices.
#[allow(clippy::ptr_arg)] // its capacity is counted
fn choices_footprint(c: &Vec<WindowChoices>) -> usize {
    c.capacity() * std::mem::size_of::<WindowChoices>()
        + c.iter()
            .map(|w| {
                w.choices.capacity() * std::mem::size_of::<WindowChoice>()
                    + w.choices
                        .iter()
                        .map(|x| x.days.capacity() * 16)
                        .sum::<usize>()
            })
            .sum::<usize>()
}

fn piece_time(p: &Piece) -> Nanos {
    match *p {
        Piece::Request { start, .. } => start,
        Piece::Open { at } | Piece::Close { at, .. } => at,
    }
}

/// The shadow's figures for every window.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShadowReport {
    /// The power model's name.
    pub drive: String,
    /// The break-even time B, seconds.
    pub breakeven_s: f64,
    /// One entry per window (`24h`, `7d`).
    pub windows: Vec<WindowReport>,
}

/// One window's figures.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WindowReport {
    /// `24h` or `7d`.
    pub window: String,
    /// Seconds the daemon watched the disk in it, while it was present
    /// (the time it was unplugged is left out: nobody's energy).
    pub observed_s: f64,
    /// Of those, seconds a dry run (`lulld --dry-run`) watched: lull's
    /// figures there count the spin-downs it would have made, not ones
    /// it made. `lull status` says so when a window holds any.
    #[serde(default)]
    pub dry_run_s: f64,
    /// Idle periods that ended in it, of at least the floor (a poll:
    /// [`Shadow::with_floor`]).
    pub idle_periods: u64,
    /// Energy of a disk that never sleeps, joules.
    pub baseline_energy_j: f64,
    /// `lull`, the references ([`REFERENCES`]), [`YOUR_TIMEOUT`] when it
    /// has one, `best-fixed`, `clairvoyant-10min`, [`BUDGET_ORACLE`] under
    /// a wear budget, `oracle`.
    pub policies: Vec<PolicyFigures>,
    /// `(lull − oracle) / (best fixed − oracle)` in energy (below 1: lull
    /// beat every fixed timeout); `None` when the best fixed timeout is
    /// already optimal and lull is not.
    pub excess_vs_best_fixed: Option<f64>,
    /// `(best fixed − lull) / (best fixed − clairvoyant)` in energy: the
    /// share of what the clairvoyant per-10-minute timer adds over the
    /// best fixed timeout that lull captured; `None` when the clairvoyant
    /// adds nothing and lull is worse or better than the best fixed
    /// timeout (a share of nothing).
    #[serde(default)]
    pub gain_vs_clairvoyant: Option<f64>,
    /// The wear budget (spin-downs a day) the best fixed timeout and the
    /// clairvoyant were held to, as the daemon was: its last session's;
    /// `None` without one. hd-idle's and `hdparm -S`'s timeouts and the
    /// user's own are judged as those tools run them, without one; the
    /// oracle is the bound, without one.
    #[serde(default)]
    pub wear_budget_per_day: Option<u32>,
}

impl WindowReport {
    /// The figures of `policy`.
    pub fn policy(&self, policy: &str) -> Option<&PolicyFigures> {
        self.policies.iter().find(|p| p.policy == policy)
    }
}

/// One policy's figures over a window.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PolicyFigures {
    /// `lull`, `hd-idle-10min`, `hdparm-S12`, …, `best-fixed`, `oracle`.
    pub policy: String,
    /// Its timeout, for a fixed one.
    pub timeout_s: Option<f64>,
    /// Energy saved against a disk that never sleeps, watt-hours.
    pub saved_wh: f64,
    /// Energy over the window, joules.
    pub energy_j: f64,
    /// Spin-ups.
    pub spinups: u64,
}
