//! A write-back cache in front of a NAS disk, with lull deciding both when
//! to flush and when to spin the disk down: the embedding of issue 77,
//! written from docs/embedding.md.
//!
//! `cargo run -p lull --example writeback_spindown`
//!
//! Two engines, one per decision, each with its own B:
//!
//! - **Flush** ([`Work::Io`], B = one access, 17.7 ms): sees the
//!   application's requests. Once they pause for B (`auto` for I/O is
//!   `timer(B) + no-duration`), the cache writes its dirty blocks, if the
//!   disk is spinning. A sleeping disk is not woken to flush: dirty data
//!   waits for the next read that wakes it, or for [`MAX_DIRTY_AGE`].
//! - **Spin-down** ([`Work::Standby`], B = 72 s): sees the disk's own
//!   requests (read misses and flushes), by id ([`Engine::arrive`],
//!   [`Engine::complete`]); their completions come back from the "device
//!   thread" up to 2 ms late, which the engine takes at its own time and
//!   counts. Its [`Spindown`](lull::tasks::Spindown) task applies the
//!   daemon's wear budget, so the disk is spun down when the task says it
//!   is asleep.
//!
//! At the end the run is judged against the references of
//! docs/embedding.md, "Judging your own results": the oracle and the best
//! fixed timeout in hindsight. Time is simulated; a real cache passes its
//! monotonic clock.

use std::collections::BTreeMap;

use lull::prelude::*;
use lull::tasks::spindown::{BestFixed, SpindownReport};

/// The longest dirty data may wait for a sleeping disk.
pub const MAX_DIRTY_AGE: Nanos = Nanos::from_mins(10);

/// How long one access takes on the simulated disk.
const SERVICE: Nanos = Nanos::from_millis(12);

/// What the run did, and how it compares.
#[derive(Debug)]
pub struct Outcome {
    /// Writes the application made.
    pub writes: u64,
    /// Reads that had to go to the disk.
    pub read_misses: u64,
    /// Blocks written to the disk, in idle time or at shutdown.
    pub flushed: u64,
    /// Flushes forced by [`MAX_DIRTY_AGE`] (each woke the disk).
    pub forced_flushes: u64,
    /// Blocks whose data on the disk differs from the last write.
    pub mismatched_blocks: u64,
    /// What the spin-downs cost and saved ([`SpindownReport`]).
    pub report: SpindownReport,
    /// The best fixed timeout for the disk's own idle periods.
    pub best_fixed: BestFixed,
    /// [`BestFixed::excess_ratio`] of this run (below 1: better than any
    /// fixed timeout).
    pub excess_ratio: f64,
    /// Completions the spin-down engine took late.
    pub late_completions: u64,
    /// Disk requests outstanding at the end (0: no completion was lost).
    pub outstanding: u32,
}

/// The disk: its blocks, its power state, its own requests.
#[derive(Debug, Default)]
struct Disk {
    blocks: BTreeMap<u64, u64>,
    asleep: bool,
    requests: Vec<Request>,
}

/// The cache and its two engines.
#[derive(Debug)]
struct Cache {
    flush: LiveEngine,
    spin: SpindownEngine,
    dirty: BTreeMap<u64, u64>,
    dirty_since: Option<Nanos>,
    disk: Disk,
    flushed: u64,
    forced: u64,
    late: u64,
}

impl Cache {
    /// One disk access at `at`; returns when it completes. A sleeping disk
    /// spins up first (the [`Spindown`](lull::tasks::Spindown) task books
    /// the wait).
    fn disk_io(&mut self, at: Nanos, op: Op, block: u64) -> Nanos {
        self.spin_until(at);
        let id = self.spin.arrive(at, op, block * 8, 4096).expect("running");
        self.disk.asleep = false;
        let done = at + SERVICE;
        self.disk
            .requests
            .push(Request::new(at, done, op, block * 8, 4096));
        // The device thread reports the completion up to 2 ms late.
        self.late = (self.late * 7 + 3) % 2_000;
        self.spin_until(done + Nanos::from_micros(self.late));
        self.spin.complete(id, done).expect("its own id");
        done
    }

    /// Runs the spin-down engine to `now`, and the disk with it.
    fn spin_until(&mut self, now: Nanos) {
        while let Some(d) = self.spin.next_deadline().filter(|&d| d <= now) {
            self.spin_step(d);
        }
        self.spin_step(now);
    }

    fn spin_step(&mut self, t: Nanos) {
        match self.spin.advance(t) {
            Ok(()) => {}
            Err(e @ EngineError::Overdue { .. }) => panic!("{e}"),
            Err(e) => panic!("spin-down engine: {e}"),
        }
        // The commands are the task's to act on: it applied the wear
        // budget, and says whether the disk sleeps.
        self.spin.task_mut().drain().for_each(drop);
        if self.spin.task().inner().is_asleep() {
            self.disk.asleep = true;
        }
    }

    /// Runs the flush engine to `now`; flushes when it says the
    /// application is quiet and the disk spins, or when dirty data is too
    /// old.
    fn flush_until(&mut self, now: Nanos) {
        while let Some(d) = self.flush.next_deadline().filter(|&d| d <= now) {
            self.flush_step(d);
        }
        self.flush_step(now);
    }

    fn flush_step(&mut self, t: Nanos) {
        self.flush.advance(t).expect("in order");
        self.spin_until(t);
        let quiet = self.flush.task_running();
        self.flush.task_mut().drain().for_each(drop);
        let old = self.dirty_since.is_some_and(|s| t - s >= MAX_DIRTY_AGE);
        if (quiet && !self.disk.asleep) || old {
            self.forced += u64::from(old && self.disk.asleep);
            self.write_back(t);
        }
    }

    /// Writes every dirty block, one access after another.
    fn write_back(&mut self, mut t: Nanos) {
        for (block, version) in std::mem::take(&mut self.dirty) {
            t = self.disk_io(t, Op::Write, block);
            self.disk.blocks.insert(block, version);
            self.flushed += 1;
        }
        self.dirty_since = None;
    }

    /// One application request at `at`.
    fn request(&mut self, at: Nanos, op: Op, block: u64, version: u64) {
        self.flush_until(at);
        let id = self.flush.arrive(at, op, block * 8, 4096).expect("running");
        if op == Op::Write {
            self.dirty.insert(block, version);
            self.dirty_since.get_or_insert(at);
            self.flush.complete(id, at).expect("its own id");
        } else if self.dirty.contains_key(&block) {
            self.flush.complete(id, at).expect("its own id");
        } else {
            let done = self.disk_io(at, op, block);
            self.flush.complete(id, done).expect("its own id");
        }
    }
}

/// A day of a small office: sessions of requests a few seconds apart,
/// quiet spells from a minute to two hours (a fixed seed).
fn day() -> Vec<(Nanos, Op, u64)> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let (mut t, end, mut out) = (Nanos::from_hours(7), Nanos::from_hours(20), Vec::new());
    while t < end {
        for _ in 0..5 + next(40) {
            let op = if next(3) == 0 { Op::Read } else { Op::Write };
            out.push((t, op, next(256)));
            t += Nanos::from_millis(200 + next(5_000));
        }
        t += Nanos::from_secs(60 + next(7_200));
    }
    out
}

/// Runs the day and judges it.
pub fn run() -> Outcome {
    let flush = lull::for_drive("wd-red-plus", Work::Io).expect("a preset");
    let standby = lull::for_drive("wd-red-plus", Work::Standby).expect("a preset");
    let mut cache = Cache {
        flush: flush.engine("auto").expect("auto builds"),
        spin: standby
            .spindown_engine("auto", Some(48))
            .expect("a setup for standby")
            .with_overdue_after(Nanos::from_mins(10)),
        dirty: BTreeMap::new(),
        dirty_since: None,
        disk: Disk::default(),
        flushed: 0,
        forced: 0,
        late: 0,
    };
    // Both start on a quiet disk ("Starting and restarting").
    cache.flush.assume_idle();
    cache.spin.assume_idle();
    let (mut writes, mut last) = (0, BTreeMap::new());
    for (i, (at, op, block)) in day().into_iter().enumerate() {
        if op == Op::Write {
            writes += 1;
            last.insert(block, i as u64);
        }
        cache.request(at, op, block, i as u64);
    }
    // Shutdown after the last request: write what is dirty, and end the
    // spin-down run there. The measures span the disk's first arrival to
    // its last completion (SPEC §4.2): a run finished hours later would
    // book the quiet tail as sleep the oracle does not count.
    let now = cache.spin.now();
    cache.write_back(now);
    let end = cache.spin.now();
    let late_completions = cache.spin.lateness().completions;
    let outstanding = cache.spin.outstanding();
    cache.spin.finish(end).expect("finished once");
    let report = cache.spin.task().inner().report();
    // The references, over the disk's own idle periods.
    let timeline = Timeline::from_requests(&cache.disk.requests);
    let model = standby.power().expect("a power model");
    let best_fixed = BestFixed::from_idle_periods(
        timeline.idle_periods().map(|p| p.len()),
        timeline.span(),
        model,
    );
    let excess_ratio = best_fixed.excess_ratio(report.energy_j, report.oracle_energy_j);
    let mismatched_blocks = last
        .iter()
        .filter(|(b, v)| cache.disk.blocks.get(b) != Some(v))
        .count() as u64;
    Outcome {
        writes,
        read_misses: cache
            .disk
            .requests
            .iter()
            .filter(|r| r.op == Op::Read)
            .count() as u64,
        flushed: cache.flushed,
        forced_flushes: cache.forced,
        mismatched_blocks,
        report,
        best_fixed,
        excess_ratio,
        late_completions,
        outstanding,
    }
}

#[allow(dead_code)]
fn main() {
    let o = run();
    let r = &o.report;
    println!(
        "{} writes, {} flushed ({} forced), {} read misses",
        o.writes, o.flushed, o.forced_flushes, o.read_misses
    );
    println!(
        "{} spin-downs: {:.0} J against {:.0} J always on, {:.0} J for the oracle",
        r.spinups, r.energy_j, r.baseline_energy_j, r.oracle_energy_j
    );
    println!(
        "best fixed timeout {} ({:.0} J); excess ratio {:.2}",
        o.best_fixed.timeout().approx(),
        o.best_fixed.energy_j,
        o.excess_ratio
    );
    println!(
        "{} completions taken late, {} outstanding",
        o.late_completions, o.outstanding
    );
}
