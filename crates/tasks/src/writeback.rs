//! Delayed writeback (§2.5.2, §4.3): the `writeback` task.
//!
//! The paper's "write delay" driver, as SPEC §4.3 states it:
//!
//! - Reads go straight to the device. Writes wait in a FIFO queue
//!   ([`WriteQueue`]) and complete at once for the host (the queue stands
//!   for non-volatile write-behind memory).
//! - In predicted idle time the task writes the queue out in order, only
//!   as much as the service model says fits before the predicted end
//!   (with no duration: until the actuator stops it), with at most 8 KiB
//!   outstanding so that a read arriving during the flush waits for at
//!   most 8 KiB. A queued write longer than that goes out in 8 KiB pieces.
//! - The queue is capped at 16 MiB: a write that would overflow it first
//!   forces a foreground flush of at least 8 MiB (whole queued writes, in
//!   order) and of enough to make room. A single write larger than the
//!   cap is written through. So the queue never exceeds its cap.
//! - Like the paper's model the task neither merges overlapping writes nor
//!   serves reads from the queue, so the timing is the paper's. The data
//!   is still right: the queue is FIFO, pieces leave in order and the
//!   device queue is FIFO, so two writes to one sector reach the disk in
//!   the order they were written, each byte exactly once; and a read
//!   that must see the newest data takes it from the queue where the
//!   queue has it ([`WriteQueue::latest`]), from the disk elsewhere.
//!
//! Granularity (Table 2): not interruptible (an issued write runs to
//! completion; the step is one 8 KiB write), no work lost, no initial or
//! recovery step.
//!
//! Measures: `read_latency_ms` (mean, with the task),
//! `baseline_read_latency_ms` (the same trace with no write delay),
//! `latency_improvement_pct`, `mean_queue_bytes` (time-weighted over the
//! span), `max_queue_bytes`, `forced_flushes`.

use std::collections::VecDeque;

use lull_core::component::Context;
use lull_core::request::{Op, Request};
use lull_core::task::{Granularity, IdleTask, Measure};
use lull_core::time::Nanos;

use crate::background::{Admission, BackgroundTask, Baseline, DeviceIo, IoClass, Level, Mean};
use crate::device::{Disk, ServiceModel};

/// Sizes of the writeback task (SPEC §4.3 defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WritebackConfig {
    /// Most bytes of idle-time writes outstanding at the device (8 KiB).
    pub max_outstanding: u32,
    /// Queue cap (16 MiB).
    pub queue_cap: u64,
    /// Least a forced flush writes (8 MiB).
    pub forced_flush: u64,
}

impl Default for WritebackConfig {
    fn default() -> Self {
        WritebackConfig {
            max_outstanding: 8 << 10,
            queue_cap: 16 << 20,
            forced_flush: 8 << 20,
        }
    }
}

/// A queued write, or what is left of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedWrite {
    /// The label of the foreground write.
    pub tag: u64,
    /// First sector not yet written out.
    pub sector: u64,
    /// Bytes not yet written out.
    pub bytes: u32,
}

/// The FIFO write-delay queue.
#[derive(Clone, Debug, Default)]
pub struct WriteQueue {
    entries: VecDeque<QueuedWrite>,
    bytes: u64,
}

impl WriteQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }
    /// Bytes queued.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// Number of queued writes (a partly written one counts).
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// Appends a write.
    pub fn push(&mut self, tag: u64, sector: u64, bytes: u32) {
        if bytes > 0 {
            self.entries.push_back(QueuedWrite { tag, sector, bytes });
            self.bytes += u64::from(bytes);
        }
    }
    /// The next piece of at most `max` bytes (at least one sector, split on
    /// sector boundaries), without removing it.
    pub fn peek_chunk(&self, max: u32) -> Option<QueuedWrite> {
        let front = *self.entries.front()?;
        let max = (max / 512).max(1) * 512;
        Some(QueuedWrite {
            bytes: front.bytes.min(max),
            ..front
        })
    }
    /// Removes and returns the next piece of at most `max` bytes.
    pub fn pop_chunk(&mut self, max: u32) -> Option<QueuedWrite> {
        let chunk = self.peek_chunk(max)?;
        let front = self.entries.front_mut().expect("peeked");
        if chunk.bytes == front.bytes {
            self.entries.pop_front();
        } else {
            front.sector += u64::from(chunk.bytes / 512);
            front.bytes -= chunk.bytes;
        }
        self.bytes -= u64::from(chunk.bytes);
        Some(chunk)
    }
    /// Removes and returns what is left of the oldest write.
    pub fn pop_entry(&mut self) -> Option<QueuedWrite> {
        let e = self.entries.pop_front()?;
        self.bytes -= u64::from(e.bytes);
        Some(e)
    }
    /// The newest queued write holding `sector`, if any: where a read of
    /// that sector must take its data from.
    pub fn latest(&self, sector: u64) -> Option<u64> {
        self.entries
            .iter()
            .rev()
            .find(|e| sector >= e.sector && sector < e.sector + u64::from(e.bytes).div_ceil(512))
            .map(|e| e.tag)
    }
}

/// The `writeback` task.
#[derive(Clone, Debug)]
pub struct Writeback {
    cfg: WritebackConfig,
    step: Nanos,
    queue: WriteQueue,
    running: bool,
    /// Predicted end of the idle period; `None`: until stopped.
    deadline: Option<Nanos>,
    outstanding: u32,
    level: Level,
    reads: Mean,
    forced_flushes: u64,
    baseline: Baseline,
    tags: u64,
}

impl Writeback {
    /// A writeback task for a disk with `model` (used for the step length in
    /// [`IdleTask::granularity`]).
    pub fn new(cfg: WritebackConfig, model: &ServiceModel) -> Self {
        let step = model.service(
            0,
            model.capacity_sectors / 3,
            u64::from(cfg.max_outstanding),
        );
        Writeback {
            cfg,
            step,
            queue: WriteQueue::new(),
            running: false,
            deadline: None,
            outstanding: 0,
            level: Level::default(),
            reads: Mean::default(),
            forced_flushes: 0,
            baseline: Baseline::default(),
            tags: 0,
        }
    }
    /// The queue.
    pub fn queue(&self) -> &WriteQueue {
        &self.queue
    }
    /// The configuration.
    pub fn config(&self) -> WritebackConfig {
        self.cfg
    }
    /// Whether the actuator has the task running.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Offers a write labelled `tag`: queues it, forcing a flush into `out`
    /// first if it would overflow the cap. Returns whether it was queued
    /// (`false`: larger than the cap, write it through).
    pub fn enqueue(
        &mut self,
        tag: u64,
        sector: u64,
        bytes: u32,
        now: Nanos,
        out: &mut Vec<DeviceIo>,
    ) -> bool {
        let b = u64::from(bytes);
        if b > self.cfg.queue_cap {
            return false;
        }
        if self.queue.bytes() + b > self.cfg.queue_cap {
            self.forced_flushes += 1;
            let mut flushed = 0u64;
            while flushed < self.cfg.forced_flush || self.queue.bytes() + b > self.cfg.queue_cap {
                let Some(e) = self.queue.pop_entry() else {
                    break;
                };
                flushed += u64::from(e.bytes);
                out.push(DeviceIo {
                    op: Op::Write,
                    sector: e.sector,
                    bytes: e.bytes,
                    tag: e.tag,
                    class: IoClass::Forced,
                });
            }
        }
        self.queue.push(tag, sector, bytes);
        self.level.set(now, self.queue.bytes());
        true
    }
}

impl IdleTask for Writeback {
    fn name(&self) -> &'static str {
        "writeback"
    }
    fn granularity(&self) -> Granularity {
        Granularity {
            interruptible: false,
            step: Some(self.step),
            loses_work_on_interrupt: false,
        }
    }
    fn start(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.running = true;
        self.deadline = budget.map(|b| ctx.now + b);
    }
    fn renew(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.deadline = budget.map(|b| ctx.now + b);
    }
    fn stop(&mut self, _ctx: &Context) {
        // Writes already issued complete; nothing is lost.
        self.running = false;
        self.deadline = None;
    }
    fn finish(&mut self, end: Nanos) {
        self.level.finish(end);
    }
    fn measures(&self) -> Vec<Measure> {
        let lat = self.reads.get() * 1e3;
        let base = self.baseline.mean_read_latency_s * 1e3;
        vec![
            ("read_latency_ms", lat),
            ("baseline_read_latency_ms", base),
            (
                "latency_improvement_pct",
                if base > 0.0 {
                    100.0 * (base - lat) / base
                } else {
                    0.0
                },
            ),
            ("mean_queue_bytes", self.level.mean()),
            ("max_queue_bytes", self.level.max() as f64),
            ("forced_flushes", self.forced_flushes as f64),
        ]
    }
}

impl BackgroundTask for Writeback {
    fn on_arrival(&mut self, req: &Request, now: Nanos, out: &mut Vec<DeviceIo>) -> Admission {
        self.level.begin(now);
        let tag = self.tags;
        self.tags += 1;
        if req.op != Op::Write || !self.enqueue(tag, req.sector, req.bytes, now, out) {
            return Admission::Device;
        }
        Admission::Absorbed
    }

    fn poll(&mut self, now: Nanos, device_free_at: Nanos, disk: &Disk, out: &mut Vec<DeviceIo>) {
        if !self.running {
            return;
        }
        let mut free = device_free_at.max(now);
        let mut head = disk.clone();
        while let Some(c) = self.queue.peek_chunk(self.cfg.max_outstanding) {
            if self.outstanding + c.bytes > self.cfg.max_outstanding {
                break;
            }
            let done = free + head.serve(c.sector, u64::from(c.bytes));
            if self.deadline.is_some_and(|d| done > d) {
                break;
            }
            let c = self
                .queue
                .pop_chunk(self.cfg.max_outstanding)
                .expect("peeked");
            self.outstanding += c.bytes;
            free = done;
            out.push(DeviceIo {
                op: Op::Write,
                sector: c.sector,
                bytes: c.bytes,
                tag: c.tag,
                class: IoClass::Idle,
            });
        }
        self.level.set(now, self.queue.bytes());
    }

    fn on_io_done(&mut self, io: &DeviceIo, _now: Nanos) {
        if io.class == IoClass::Idle {
            self.outstanding = self.outstanding.saturating_sub(io.bytes);
        }
    }

    fn on_foreground_done(&mut self, op: Op, arrival: Nanos, done: Nanos) {
        if op == Op::Read {
            self.reads.add((done - arrival).as_secs_f64());
        }
    }

    fn set_baseline(&mut self, baseline: Baseline) {
        self.baseline = baseline;
    }

    fn drain(&mut self, out: &mut Vec<DeviceIo>) {
        while let Some(e) = self.queue.pop_entry() {
            out.push(DeviceIo {
                op: Op::Write,
                sector: e.sector,
                bytes: e.bytes,
                tag: e.tag,
                class: IoClass::Forced,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_split_on_sectors_and_keep_order() {
        let mut q = WriteQueue::new();
        q.push(1, 100, 20_000);
        q.push(2, 0, 512);
        let a = q.pop_chunk(8192).unwrap();
        assert_eq!((a.tag, a.sector, a.bytes), (1, 100, 8192));
        let b = q.pop_chunk(8192).unwrap();
        assert_eq!((b.tag, b.sector, b.bytes), (1, 116, 8192));
        let c = q.pop_chunk(8192).unwrap();
        assert_eq!((c.tag, c.sector, c.bytes), (1, 132, 20_000 - 16_384));
        assert_eq!(q.pop_chunk(8192).unwrap().tag, 2);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn forced_flush_keeps_the_cap() {
        let cfg = WritebackConfig {
            max_outstanding: 8192,
            queue_cap: 64 << 10,
            forced_flush: 32 << 10,
        };
        let mut w = Writeback::new(cfg, &ServiceModel::default_model());
        let mut out = Vec::new();
        for i in 0..16u64 {
            assert!(w.enqueue(i, i * 8, 4096, Nanos(i), &mut out));
            assert!(w.queue().bytes() <= cfg.queue_cap);
        }
        // 16 × 4 KiB = 64 KiB fills the cap exactly; the 17th forces 32 KiB out.
        assert!(out.is_empty());
        assert!(w.enqueue(16, 0, 4096, Nanos(16), &mut out));
        assert_eq!(out.len(), 8);
        assert_eq!(w.queue().bytes(), 36 << 10);
        assert_eq!(w.forced_flushes, 1);
        assert!(out.iter().enumerate().all(|(i, io)| io.tag == i as u64));
        // Larger than the cap: written through.
        assert!(!w.enqueue(17, 0, 1 << 20, Nanos(17), &mut out));
    }

    #[test]
    fn flush_fits_the_predicted_duration_and_outstanding_limit() {
        let model = ServiceModel::default_model();
        let disk = Disk::new(model.clone());
        let mut w = Writeback::new(WritebackConfig::default(), &model);
        let mut out = Vec::new();
        for i in 0..10u64 {
            w.enqueue(i, 1000 + i * 8, 4096, Nanos::ZERO, &mut out);
        }
        // Not running: nothing goes out.
        w.poll(Nanos::ZERO, Nanos::ZERO, &disk, &mut out);
        assert!(out.is_empty());
        // 8 KiB outstanding at most: two 4 KiB writes.
        w.start(&Context::at(Nanos::ZERO), None);
        w.poll(Nanos::ZERO, Nanos::ZERO, &disk, &mut out);
        assert_eq!(out.len(), 2);
        // A budget shorter than one write's service time: nothing.
        let mut w2 = Writeback::new(WritebackConfig::default(), &model);
        w2.enqueue(0, 5000, 4096, Nanos::ZERO, &mut out);
        out.clear();
        w2.start(&Context::at(Nanos::ZERO), Some(Nanos::from_millis(1)));
        w2.poll(Nanos::ZERO, Nanos::ZERO, &disk, &mut out);
        assert!(out.is_empty());
    }
}
