//! A small write-back cache in front of a file that flushes dirty blocks
//! when a lull network predicts idle time.
//!
//! `cargo run -p lull --example writeback_cache`
//!
//! The cache is sans-IO towards lull: its own request path hands each
//! request to the engine as an arrival and a completion with the current
//! time, and the cache itself is the engine's idle task, so the actuator's
//! commands arrive as `start`/`stop` calls. While running it flushes one
//! block per step (a deadline it asks for), so an arriving request stops
//! flushing within one step and no flush competes with foreground I/O.
//! Time is simulated here so the example is fast and deterministic; a real
//! cache would pass its monotonic clock instead.
//!
//! The time scale comes from the drive: flushing is work that moves I/O
//! ([`Work::Io`]), whose break-even time B is the drive's random 8 KiB
//! access time (17.7 ms for `wd-red-plus`), and writing one block takes
//! about B. The network is `auto`, which for such work stands for
//! `timer(B) + no-duration()`: flush once the cache has been quiet for B,
//! until the next request.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use lull::prelude::*;

const BLOCK: usize = 4096;
const BLOCKS: u64 = 64;

/// What the cache did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Writes accepted from the application.
    pub writes: u64,
    /// Writes that replaced a still-dirty block (coalesced).
    pub coalesced: u64,
    /// Blocks written to the file in idle time.
    pub flushed_idle: u64,
    /// Blocks written to the file at shutdown.
    pub flushed_shutdown: u64,
    /// Idle periods in which flushing started.
    pub flush_runs: u64,
}

/// A write-back cache over a file, and lull's idle task.
#[derive(Debug)]
pub struct WriteBackCache {
    file: File,
    dirty: BTreeMap<u64, Vec<u8>>,
    step: Nanos,
    next_flush: Option<Nanos>,
    /// Counters.
    pub stats: Stats,
}

impl WriteBackCache {
    /// A cache over `file` that needs `step` to write one block.
    pub fn new(file: File, step: Nanos) -> Self {
        WriteBackCache {
            file,
            dirty: BTreeMap::new(),
            step,
            next_flush: None,
            stats: Stats::default(),
        }
    }
    /// Buffers a write.
    pub fn write(&mut self, block: u64, data: Vec<u8>) {
        self.stats.writes += 1;
        if self.dirty.insert(block, data).is_some() {
            self.stats.coalesced += 1;
        }
    }
    /// Reads through the cache.
    pub fn read(&self, block: u64) -> std::io::Result<Vec<u8>> {
        if let Some(d) = self.dirty.get(&block) {
            return Ok(d.clone());
        }
        let mut buf = vec![0; BLOCK];
        self.file.read_at(&mut buf, block * BLOCK as u64)?;
        Ok(buf)
    }
    fn flush_one(&mut self) -> std::io::Result<bool> {
        match self.dirty.pop_first() {
            Some((block, data)) => {
                self.file.write_all_at(&data, block * BLOCK as u64)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
    /// Flushes everything and syncs (at shutdown).
    pub fn shutdown(&mut self) -> std::io::Result<()> {
        while self.flush_one()? {
            self.stats.flushed_shutdown += 1;
        }
        self.file.sync_all()
    }
    /// Blocks still dirty.
    pub fn dirty_blocks(&self) -> usize {
        self.dirty.len()
    }
}

impl IdleTask for WriteBackCache {
    fn name(&self) -> &'static str {
        "writeback-cache"
    }
    fn start(&mut self, ctx: &Context, _budget: Option<Nanos>) {
        self.stats.flush_runs += 1;
        if !self.dirty.is_empty() {
            self.next_flush = Some(ctx.now + self.step);
        }
    }
    fn stop(&mut self, _ctx: &Context) {
        // The block in flight had not finished: it stays dirty.
        self.next_flush = None;
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.next_flush
    }
    fn on_deadline(&mut self, ctx: &Context) {
        match self.flush_one() {
            Ok(true) => {
                self.stats.flushed_idle += 1;
                self.next_flush = (!self.dirty.is_empty()).then(|| ctx.now + self.step);
            }
            Ok(false) => self.next_flush = None,
            Err(e) => panic!("flush failed: {e}"),
        }
    }
}

/// A tiny deterministic generator (xorshift), to keep the example free of
/// extra dependencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the run found.
#[derive(Debug)]
pub struct Outcome {
    /// Cache counters.
    pub stats: Stats,
    /// Blocks whose file content differs from the last write (must be 0).
    pub mismatched_blocks: usize,
    /// Reads that did not see the latest write (must be 0).
    pub stale_reads: u64,
    /// The engine's internal measures.
    pub measures: InternalMeasures,
    /// The break-even time B of the drive, for work that moves I/O.
    pub break_even: Nanos,
}

/// Runs a bursty application against the cache on a `wd-red-plus`, with
/// flushing driven by `auto` (for I/O work: `timer(B)`, no duration, so
/// flushing lasts until the next request).
pub fn run() -> std::io::Result<Outcome> {
    let path: PathBuf =
        std::env::temp_dir().join(format!("lull-writeback-{}.dat", std::process::id()));
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    file.set_len(BLOCKS * BLOCK as u64)?;

    let setup = lull::for_drive("wd-red-plus", Work::Io).expect("a built-in preset");
    let b = setup.break_even();
    let network = setup.build_network("auto").expect("valid spec");
    let cache = WriteBackCache::new(file, b);
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, cache);

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut expected: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut stale_reads = 0;
    let mut now = Nanos::ZERO;
    let service = Nanos::from_micros(50);
    for _burst in 0..300 {
        for _ in 0..1 + rng.below(20) {
            let block = rng.below(BLOCKS);
            let write = rng.below(10) < 7;
            let req = Request::new(
                now,
                now + service,
                if write { Op::Write } else { Op::Read },
                block * 8,
                BLOCK as u32,
            );
            engine.push(&Event::arrival(&req)).expect("in order");
            if write {
                let data = vec![(rng.next() & 0xff) as u8; BLOCK];
                expected.insert(block, data.clone());
                engine.task_mut().write(block, data);
            } else {
                let seen = engine.task().read(block)?;
                let want = expected
                    .get(&block)
                    .cloned()
                    .unwrap_or_else(|| vec![0; BLOCK]);
                stale_reads += u64::from(seen != want);
            }
            engine.push(&Event::completion(&req)).expect("in order");
            now += service + Nanos::from_millis(1);
        }
        // A quiet spell of 5 ms to 2 s.
        now += Nanos::from_millis(5 + rng.below(2_000));
    }
    let report = engine.finish(now).expect("finish");
    let cache = engine.task_mut();
    cache.shutdown()?;

    let mut mismatched_blocks = 0;
    for (block, want) in &expected {
        let mut buf = vec![0; BLOCK];
        cache.file.read_at(&mut buf, block * BLOCK as u64)?;
        mismatched_blocks += usize::from(&buf != want);
    }
    let stats = cache.stats.clone();
    std::fs::remove_file(&path)?;
    Ok(Outcome {
        stats,
        mismatched_blocks,
        stale_reads,
        measures: report.internal,
        break_even: b,
    })
}

#[allow(dead_code)]
fn main() -> std::io::Result<()> {
    let out = run()?;
    let s = &out.stats;
    println!(
        "{} writes ({} coalesced): {} blocks flushed in idle time over {} idle runs, {} at shutdown",
        s.writes, s.coalesced, s.flushed_idle, s.flush_runs, s.flushed_shutdown
    );
    println!(
        "mismatched blocks: {}, stale reads: {}, declared idle {:.1} s of {:.1} s, violations {}",
        out.mismatched_blocks,
        out.stale_reads,
        out.measures.predicted_s,
        out.measures.actual_s,
        out.measures.violations
    );
    Ok(())
}
