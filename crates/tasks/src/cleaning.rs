//! Eager LFS segment cleaning (§2.5.3, §4.4): the `cleaning` task.
//!
//! The paper did not model a log-structured file system; it added the
//! traffic of a cleaner to the trace, and so does this task (SPEC §4.3):
//!
//! - Each byte the foreground writes creates one byte to clean
//!   (`unprocessed`).
//! - In predicted idle time the task runs *cleaning cycles*: read up to
//!   1 MiB consecutively from the cleaner's read position, then write it
//!   at the write position, then advance both. The cycle is sized from the
//!   predicted duration with the service model (`min(1 MiB, unprocessed,
//!   what fits)`), and begins only if at least 64 KiB fits. With no
//!   duration it is sized 1 MiB.
//! - Reads go out in 64 KiB pieces, one at a time. When the actuator stops
//!   the task mid-read, the piece in flight completes and the task then
//!   writes what it has read and stops (an *interrupted* cycle); a stop
//!   during the write is ignored: the write, one request, runs to the end.
//!   Written bytes leave `unprocessed`.
//! - The read region is the third quarter of the disk and the write region
//!   the last quarter, each used as a ring, so cleaning I/O moves the head
//!   away from where the foreground works, as a real cleaner's would.
//!
//! Granularity (Table 3, as §4.4 ran it): not interruptible (a cycle ends
//! with its write), no work lost (what was read is written), the step is
//! one full 1 MiB cycle on the device model.
//!
//! Measures: `mean_added_delay_ms` (mean foreground latency with the task
//! minus without any cleaning), `mean_unprocessed_bytes` (time-weighted
//! over the span), `max_unprocessed_bytes`, `cycles`, `interrupted_cycles`.

use lull_core::component::Context;
use lull_core::request::{Op, Request};
use lull_core::task::{Granularity, IdleTask, Measure};
use lull_core::time::Nanos;

use crate::background::{Admission, BackgroundTask, Baseline, DeviceIo, IoClass, Level, Mean};
use crate::device::{Disk, ServiceModel};

/// Sizes of the cleaning task (SPEC §4.3 defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CleaningConfig {
    /// Largest cycle (1 MiB).
    pub max_cycle: u64,
    /// Least that must fit in the predicted time to begin a cycle (64 KiB).
    pub min_fit: u64,
    /// Size of one read piece (64 KiB).
    pub read_piece: u32,
}

impl Default for CleaningConfig {
    fn default() -> Self {
        CleaningConfig {
            max_cycle: 1 << 20,
            min_fit: 64 << 10,
            read_piece: 64 << 10,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Reading {
        planned: u64,
        read: u64,
        in_flight: u32,
        interrupted: bool,
    },
    Writing {
        interrupted: bool,
    },
}

/// The `cleaning` task.
#[derive(Clone, Debug)]
pub struct Cleaning {
    cfg: CleaningConfig,
    step: Nanos,
    region: (u64, u64),
    read_pos: u64,
    write_pos: u64,
    running: bool,
    deadline: Option<Nanos>,
    phase: Phase,
    unprocessed: u64,
    level: Level,
    latency: Mean,
    baseline: Baseline,
    cycles: u64,
    interrupted_cycles: u64,
}

impl Cleaning {
    /// A cleaning task on a disk with `model` (its capacity places the
    /// cleaner's regions; its speed gives the step length).
    pub fn new(cfg: CleaningConfig, model: &ServiceModel) -> Self {
        let cap = model.capacity_sectors;
        let quarter = (cap / 4).max(1);
        let step = model.service(0, cap / 2, cfg.max_cycle) + model.service(0, cap, cfg.max_cycle);
        Cleaning {
            cfg,
            step,
            region: (quarter * 2, quarter),
            read_pos: quarter * 2,
            write_pos: quarter * 3,
            running: false,
            deadline: None,
            phase: Phase::Idle,
            unprocessed: 0,
            level: Level::default(),
            latency: Mean::default(),
            baseline: Baseline::default(),
            cycles: 0,
            interrupted_cycles: 0,
        }
    }

    /// Bytes still to clean.
    pub fn unprocessed(&self) -> u64 {
        self.unprocessed
    }
    /// Completed cycles.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
    /// Cycles cut short by a stop.
    pub fn interrupted_cycles(&self) -> u64 {
        self.interrupted_cycles
    }
    /// Whether a cycle is under way.
    pub fn in_cycle(&self) -> bool {
        self.phase != Phase::Idle
    }
    /// Whether the actuator has the task running.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Advances a position in a ring of `len` sectors starting at `base`.
    fn advance(pos: u64, base: u64, len: u64, bytes: u64) -> u64 {
        base + (pos - base + bytes.div_ceil(512)) % len
    }

    /// Estimated time of a cycle of `n` bytes from now on `disk`.
    fn cycle_time(&self, disk: &Disk, n: u64) -> Nanos {
        let m = disk.model();
        let piece = u64::from(self.cfg.read_piece);
        let pieces = n.div_ceil(piece).max(1);
        let first = disk.estimate(self.read_pos, piece.min(n));
        let rest = Nanos::from_secs_f64(
            (pieces - 1) as f64 * (m.overhead_ms + m.transfer_ms(piece)) / 1e3,
        );
        let write = m.service(self.read_pos + n.div_ceil(512), self.write_pos, n);
        first + rest + write
    }

    /// The size of the next cycle, or `None` if less than the minimum fits.
    fn plan(&self, now: Nanos, device_free_at: Nanos, disk: &Disk) -> Option<u64> {
        if self.unprocessed == 0 {
            return None;
        }
        let fit = match self.deadline {
            None => self.cfg.max_cycle,
            Some(d) => {
                let begin = device_free_at.max(now);
                let step = self.cfg.min_fit.max(1);
                let mut best = 0;
                let mut n = step;
                while n <= self.cfg.max_cycle {
                    if begin + self.cycle_time(disk, n) > d {
                        break;
                    }
                    best = n;
                    n += step;
                }
                best
            }
        };
        (fit >= self.cfg.min_fit).then(|| fit.min(self.unprocessed).min(self.cfg.max_cycle))
    }

    fn read_piece(&mut self, planned: u64, read: u64, out: &mut Vec<DeviceIo>) -> u32 {
        let bytes = (planned - read).min(u64::from(self.cfg.read_piece)) as u32;
        let (base, len) = self.region;
        out.push(DeviceIo {
            op: Op::Read,
            sector: Self::advance(self.read_pos, base, len, read),
            bytes,
            tag: self.cycles,
            class: IoClass::Idle,
        });
        bytes
    }
}

impl IdleTask for Cleaning {
    fn name(&self) -> &'static str {
        "cleaning"
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
        self.running = false;
        self.deadline = None;
        if let Phase::Reading {
            planned,
            read,
            in_flight,
            ref mut interrupted,
        } = self.phase
        {
            if read + u64::from(in_flight) < planned {
                *interrupted = true;
            }
        }
    }
    fn finish(&mut self, end: Nanos) {
        self.level.finish(end);
    }
    fn measures(&self) -> Vec<Measure> {
        let added = (self.latency.get() - self.baseline.mean_latency_s) * 1e3;
        vec![
            ("mean_added_delay_ms", added),
            ("mean_unprocessed_bytes", self.level.mean()),
            ("max_unprocessed_bytes", self.level.max() as f64),
            ("cycles", self.cycles as f64),
            ("interrupted_cycles", self.interrupted_cycles as f64),
        ]
    }
}

impl BackgroundTask for Cleaning {
    fn on_arrival(&mut self, req: &Request, now: Nanos, _out: &mut Vec<DeviceIo>) -> Admission {
        self.level.begin(now);
        if req.op == Op::Write {
            self.unprocessed += u64::from(req.bytes);
            self.level.set(now, self.unprocessed);
        }
        Admission::Device
    }

    fn poll(&mut self, now: Nanos, device_free_at: Nanos, disk: &Disk, out: &mut Vec<DeviceIo>) {
        loop {
            match self.phase {
                Phase::Idle => {
                    if !self.running {
                        return;
                    }
                    let Some(planned) = self.plan(now, device_free_at, disk) else {
                        return;
                    };
                    let in_flight = self.read_piece(planned, 0, out);
                    self.phase = Phase::Reading {
                        planned,
                        read: 0,
                        in_flight,
                        interrupted: false,
                    };
                    return;
                }
                Phase::Reading {
                    planned,
                    read,
                    in_flight,
                    interrupted,
                } => {
                    if in_flight > 0 {
                        return;
                    }
                    if self.running && read < planned {
                        let in_flight = self.read_piece(planned, read, out);
                        self.phase = Phase::Reading {
                            planned,
                            read,
                            in_flight,
                            interrupted,
                        };
                        return;
                    }
                    if read == 0 {
                        self.phase = Phase::Idle;
                        continue;
                    }
                    out.push(DeviceIo {
                        op: Op::Write,
                        sector: self.write_pos,
                        bytes: read as u32,
                        tag: self.cycles,
                        class: IoClass::Idle,
                    });
                    self.phase = Phase::Writing { interrupted };
                    return;
                }
                Phase::Writing { .. } => return,
            }
        }
    }

    fn on_io_done(&mut self, io: &DeviceIo, now: Nanos) {
        match (self.phase, io.op) {
            (
                Phase::Reading {
                    planned,
                    read,
                    interrupted,
                    ..
                },
                Op::Read,
            ) => {
                self.phase = Phase::Reading {
                    planned,
                    read: read + u64::from(io.bytes),
                    in_flight: 0,
                    interrupted,
                };
            }
            (Phase::Writing { interrupted }, Op::Write) => {
                let n = u64::from(io.bytes);
                let (base, len) = self.region;
                self.read_pos = Self::advance(self.read_pos, base, len, n);
                self.write_pos = Self::advance(self.write_pos, base + len, len, n);
                self.unprocessed = self.unprocessed.saturating_sub(n);
                self.level.set(now, self.unprocessed);
                self.cycles += 1;
                if interrupted {
                    self.interrupted_cycles += 1;
                }
                self.phase = Phase::Idle;
            }
            _ => {}
        }
    }

    fn on_foreground_done(&mut self, _op: Op, arrival: Nanos, done: Nanos) {
        self.latency.add((done - arrival).as_secs_f64());
    }

    fn set_baseline(&mut self, baseline: Baseline) {
        self.baseline = baseline;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(bytes: u32) -> Request {
        Request::new(Nanos::ZERO, Nanos::ZERO, Op::Write, 0, bytes)
    }

    /// Completes every I/O in `out` at once, in order, polling after each.
    fn run_cycles(c: &mut Cleaning, disk: &Disk, stop_after_reads: Option<usize>) -> usize {
        let mut out = Vec::new();
        let mut reads = 0;
        let mut ios = 0;
        c.poll(Nanos::ZERO, Nanos::ZERO, disk, &mut out);
        while let Some(io) = out.pop() {
            ios += 1;
            c.on_io_done(&io, Nanos::ZERO);
            if io.op == Op::Read {
                reads += 1;
                if Some(reads) == stop_after_reads {
                    c.stop(&Context::at(Nanos::ZERO));
                }
            }
            c.poll(Nanos::ZERO, Nanos::ZERO, disk, &mut out);
        }
        ios
    }

    #[test]
    fn cycles_clean_what_was_written() {
        let model = ServiceModel::preset("hp97560").unwrap();
        let disk = Disk::new(model.clone());
        let mut c = Cleaning::new(CleaningConfig::default(), &model);
        c.on_arrival(&write(3 << 20), Nanos::ZERO, &mut Vec::new());
        c.start(&Context::at(Nanos::ZERO), None);
        // 3 MiB: three 1 MiB cycles of 16 reads and one write each.
        let ios = run_cycles(&mut c, &disk, None);
        assert_eq!(ios, 3 * 17);
        assert_eq!(c.cycles(), 3);
        assert_eq!(c.unprocessed(), 0);
        assert_eq!(c.interrupted_cycles(), 0);
    }

    #[test]
    fn a_stop_mid_read_writes_what_was_read() {
        let model = ServiceModel::preset("hp97560").unwrap();
        let disk = Disk::new(model.clone());
        let mut c = Cleaning::new(CleaningConfig::default(), &model);
        c.on_arrival(&write(1 << 20), Nanos::ZERO, &mut Vec::new());
        c.start(&Context::at(Nanos::ZERO), None);
        // Stopped after 3 pieces: 3 reads then one write of 192 KiB.
        let ios = run_cycles(&mut c, &disk, Some(3));
        assert_eq!(ios, 4);
        assert_eq!(c.cycles(), 1);
        assert_eq!(c.interrupted_cycles(), 1);
        assert_eq!(c.unprocessed(), (1 << 20) - (192 << 10));
        assert!(!c.in_cycle());
    }

    #[test]
    fn a_stop_during_the_write_is_ignored() {
        let model = ServiceModel::preset("hp97560").unwrap();
        let disk = Disk::new(model.clone());
        let mut c = Cleaning::new(CleaningConfig::default(), &model);
        c.on_arrival(&write(128 << 10), Nanos::ZERO, &mut Vec::new());
        c.start(&Context::at(Nanos::ZERO), None);
        let mut out = Vec::new();
        c.poll(Nanos::ZERO, Nanos::ZERO, &disk, &mut out);
        for _ in 0..2 {
            let io = out.pop().unwrap();
            c.on_io_done(&io, Nanos::ZERO);
            c.poll(Nanos::ZERO, Nanos::ZERO, &disk, &mut out);
        }
        let w = out.pop().unwrap();
        assert_eq!((w.op, w.bytes), (Op::Write, 128 << 10));
        c.stop(&Context::at(Nanos::ZERO));
        c.on_io_done(&w, Nanos::ZERO);
        assert_eq!(c.cycles(), 1);
        assert_eq!(c.interrupted_cycles(), 0);
        assert_eq!(c.unprocessed(), 0);
    }

    #[test]
    fn no_cycle_unless_64k_fits() {
        let model = ServiceModel::preset("hp97560").unwrap();
        let disk = Disk::new(model.clone());
        let mut c = Cleaning::new(CleaningConfig::default(), &model);
        c.on_arrival(&write(1 << 20), Nanos::ZERO, &mut Vec::new());
        // 64 KiB read + write on the hp97560 take ≈ 2·(2.2 + 7.5 + 26.6) ms
        // plus seeks: far more than 20 ms.
        c.start(&Context::at(Nanos::ZERO), Some(Nanos::from_millis(20)));
        let mut out = Vec::new();
        c.poll(Nanos::ZERO, Nanos::ZERO, &disk, &mut out);
        assert!(out.is_empty());
        // With 500 ms it plans a partial cycle (1 MiB would take ≈ 2·426 ms
        // of transfer alone).
        c.renew(&Context::at(Nanos::ZERO), Some(Nanos::from_millis(500)));
        c.poll(Nanos::ZERO, Nanos::ZERO, &disk, &mut out);
        assert_eq!(out.len(), 1);
        match c.phase {
            Phase::Reading { planned, .. } => {
                assert!((64 << 10..1 << 20).contains(&planned), "{planned}")
            }
            p => panic!("{p:?}"),
        }
    }
}
