//! The model-timing driver (SPEC §4.3): replays arrivals at their trace
//! times on a simulated disk, so that idle tasks which add or move I/O
//! (writeback, cleaning) perturb the foreground honestly.
//!
//! # Design
//!
//! - **One disk, one FIFO queue.** A [`Disk`] (service-time model with a
//!   head position) serves one request at a time in arrival order;
//!   foreground requests and the task's I/O share the queue with identical
//!   priority, as in the paper ("we'll explore the effect of scheduling
//!   the reads and writes with identical priority", §2.5.2). Recorded
//!   completion times are ignored.
//! - **The engine sees the foreground as the host sees it.** Every
//!   arrival is pushed to the [`Engine`] at its trace time; a request the
//!   task absorbed (a delayed write) completes at the same instant; every
//!   other request completes when the disk finishes it. The task's own
//!   I/O is invisible to the engine: it is the idle-time work, not load.
//!   When a completion empties the device, the engine gets the next
//!   arrival as lookahead, so the offline oracle works under model timing
//!   too.
//! - **The task is the engine's task.** The engine owns a
//!   `Box<dyn BackgroundTask>` and starts, renews and stops it as usual;
//!   after every step of the loop the driver asks it, through
//!   [`Engine::task_mut`], for the I/O it wants to issue
//!   ([`BackgroundTask::poll`]) and feeds it completions. So the rules of
//!   each task (sizes, limits, cycles) live in `lull-tasks` and the
//!   queueing lives here.
//! - **The loop** takes the earliest of: the disk's next completion, the
//!   next trace arrival, the engine's next deadline. At one instant it
//!   follows the ordering rule of `lull_core::event`: completions, then
//!   deadlines, then arrivals (pushing an arrival lets the engine run
//!   deadlines due at that instant first, and an idle period is never
//!   announced at an instant an arrival shares).
//! - **Granularity** (§2.4). The driver never aborts an I/O the device
//!   has started. When the engine stops a task that declares itself
//!   interruptible, its I/O still waiting in the queue is taken back
//!   ([`BackgroundTask::on_io_cancelled`]); a non-interruptible task's
//!   queued I/O runs (writeback's ≤ 8 KiB, a cleaning cycle's write).
//! - **Baseline.** The same requests are first run with no task: all of
//!   them go straight to the disk. Its mean read latency and mean latency
//!   are handed to the task ([`BackgroundTask::set_baseline`]) for
//!   `baseline_read_latency_ms` and `mean_added_delay_ms`.
//! - **The end** is the last foreground completion; the run's measures
//!   span `[first arrival, end]`. Task I/O still in the disk then is not
//!   timed; data the task still holds is drained ([`BackgroundTask::drain`])
//!   and returned in [`ModelOutcome::drained`] so tests can account for
//!   every byte.

use std::collections::VecDeque;

use lull_core::actuator::{PolicyActuator, StopPolicy};
use lull_core::component::Detector;
use lull_core::engine::{Engine, EngineError, LogEntry, RunReport};
use lull_core::event::{Event, EventKind, Timeline};
use lull_core::request::{Op, Request};
use lull_core::time::Nanos;
use lull_tasks::background::{Admission, BackgroundTask, Baseline, DeviceIo};
use lull_tasks::device::{Disk, ServiceModel};

/// Who a device request was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The foreground request with this index (arrival order).
    Foreground(usize),
    /// The task.
    Task(DeviceIo),
}

/// One request the disk served (kept when [`ModelOptions::device_log`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceRecord {
    /// Whose.
    pub source: Source,
    /// Read, write, flush, discard.
    pub op: Op,
    /// First sector.
    pub sector: u64,
    /// Bytes.
    pub bytes: u32,
    /// When the disk began it.
    pub start: Nanos,
    /// When the disk finished it.
    pub done: Nanos,
}

/// Options of a model-timing run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelOptions {
    /// Keep the engine's action log.
    pub log: bool,
    /// Keep every request the disk served.
    pub device_log: bool,
    /// The wall clock at time 0 (Unix nanoseconds), if the trace said
    /// (see [`lull_core::component::Context::clock`]).
    pub clock: Option<Nanos>,
}

/// A finished model-timing run.
#[derive(Clone, Debug)]
pub struct ModelOutcome {
    /// Internal and task measures.
    pub report: RunReport,
    /// The engine's action log (empty unless asked for).
    pub log: Vec<LogEntry>,
    /// What the disk served (empty unless asked for).
    pub device_log: Vec<DeviceRecord>,
    /// Task I/O not issued by the end (writeback's queue), untimed.
    pub drained: Vec<DeviceIo>,
    /// The baseline run's latencies.
    pub baseline: Baseline,
}

#[derive(Clone, Copy, Debug)]
struct Job {
    source: Source,
    op: Op,
    sector: u64,
    bytes: u32,
    est: Nanos,
}

/// The disk and its FIFO queue.
#[derive(Debug)]
struct DeviceSim {
    disk: Disk,
    queue: VecDeque<Job>,
    queued_est: Nanos,
    current: Option<(Job, Nanos, Nanos)>,
    log: Option<Vec<DeviceRecord>>,
}

impl DeviceSim {
    fn new(model: ServiceModel, log: bool) -> Self {
        DeviceSim {
            disk: Disk::new(model),
            queue: VecDeque::new(),
            queued_est: Nanos::ZERO,
            current: None,
            log: log.then(Vec::new),
        }
    }

    fn submit(&mut self, source: Source, op: Op, sector: u64, bytes: u32, now: Nanos) {
        let est = self.disk.estimate(sector, u64::from(bytes));
        self.queue.push_back(Job {
            source,
            op,
            sector,
            bytes,
            est,
        });
        self.queued_est += est;
        if self.current.is_none() {
            self.start_next(now);
        }
    }

    fn start_next(&mut self, now: Nanos) {
        if let Some(job) = self.queue.pop_front() {
            self.queued_est = self.queued_est - job.est;
            let service = self.disk.serve(job.sector, u64::from(job.bytes));
            self.current = Some((job, now, now + service));
        }
    }

    fn next_done(&self) -> Option<Nanos> {
        self.current.map(|c| c.2)
    }

    fn complete(&mut self) -> (Job, Nanos) {
        let (job, start, done) = self.current.take().expect("a request in service");
        if let Some(log) = &mut self.log {
            log.push(DeviceRecord {
                source: job.source,
                op: job.op,
                sector: job.sector,
                bytes: job.bytes,
                start,
                done,
            });
        }
        self.start_next(done);
        (job, done)
    }

    /// When the disk would finish what is queued now.
    fn free_at(&self, now: Nanos) -> Nanos {
        self.current.map_or(now, |c| c.2.max(now)) + self.queued_est
    }

    /// Takes the task's waiting I/O out of the queue.
    fn cancel_task_jobs(&mut self) -> Vec<DeviceIo> {
        let mut out = Vec::new();
        let mut kept = VecDeque::with_capacity(self.queue.len());
        for job in self.queue.drain(..) {
            match job.source {
                Source::Task(io) => {
                    self.queued_est = self.queued_est - job.est;
                    out.push(io);
                }
                Source::Foreground(_) => kept.push_back(job),
            }
        }
        self.queue = kept;
        out
    }
}

/// The foreground requests of a timeline, in arrival order (recorded
/// completions are kept but the model ignores them).
pub fn requests_of(timeline: &Timeline) -> Vec<Request> {
    timeline
        .events()
        .iter()
        .filter(|e| e.is_arrival())
        .map(|e| Request::new(e.time, e.pair, e.op, e.sector, e.bytes).on_device(e.device))
        .collect()
}

/// Runs `requests` (sorted by arrival) on a disk with `model` and no task:
/// the baseline latencies, and each request's modelled completion.
pub fn baseline(requests: &[Request], model: &ServiceModel) -> (Baseline, Vec<Nanos>) {
    let mut disk = Disk::new(model.clone());
    let mut free = Nanos::ZERO;
    let (mut all, mut reads, mut n_reads) = (0.0, 0.0, 0u64);
    let mut done = Vec::with_capacity(requests.len());
    for r in requests {
        let start = free.max(r.arrival);
        free = start + disk.serve(r.sector, u64::from(r.bytes));
        let lat = (free - r.arrival).as_secs_f64();
        all += lat;
        if r.op == Op::Read {
            reads += lat;
            n_reads += 1;
        }
        done.push(free);
    }
    let n = requests.len().max(1) as f64;
    (
        Baseline {
            mean_read_latency_s: if n_reads > 0 {
                reads / n_reads as f64
            } else {
                0.0
            },
            mean_latency_s: all / n,
        },
        done,
    )
}

fn event(r: &Request, kind: EventKind, time: Nanos) -> Event {
    Event {
        time,
        pair: r.arrival,
        sector: r.sector,
        bytes: r.bytes,
        kind,
        op: r.op,
        device: r.device,
    }
}

/// Runs `requests` (sorted by arrival) under model timing with `detector`,
/// stop `policy` and `task` on a disk with `model`.
pub fn run_model<D: Detector>(
    requests: &[Request],
    detector: D,
    policy: StopPolicy,
    task: Box<dyn BackgroundTask>,
    model: &ServiceModel,
    opts: ModelOptions,
) -> Result<ModelOutcome, EngineError> {
    debug_assert!(requests.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    let (base, _) = baseline(requests, model);
    let mut engine: Engine<D, PolicyActuator, Box<dyn BackgroundTask>> =
        Engine::with_policy(detector, policy, task);
    if let Some(clock) = opts.clock {
        engine = engine.with_clock(clock);
    }
    if opts.log {
        engine = engine.with_log();
    }
    engine.task_mut().set_baseline(base);
    let interruptible = engine.task().granularity().interruptible;
    let mut dev = DeviceSim::new(model.clone(), opts.device_log);
    let mut out: Vec<DeviceIo> = Vec::new();
    let mut next = 0usize;
    let mut outstanding = 0u32;
    let mut end = Nanos::ZERO;
    while next < requests.len() || outstanding > 0 {
        let t_dev = dev.next_done();
        let t_arr = requests.get(next).map(|r| r.arrival);
        let t_dl = engine.next_deadline().map(|d| d.max(engine.now()));
        let now;
        if let Some(td) =
            t_dev.filter(|&td| t_arr.is_none_or(|a| td <= a) && t_dl.is_none_or(|d| td <= d))
        {
            now = td;
            let (job, done) = dev.complete();
            match job.source {
                Source::Foreground(i) => {
                    let r = &requests[i];
                    engine.task_mut().on_foreground_done(r.op, r.arrival, done);
                    outstanding -= 1;
                    end = end.max(done);
                    let lookahead = if outstanding == 0 {
                        requests.get(next).map(|r| r.arrival)
                    } else {
                        None
                    };
                    engine
                        .push_with_lookahead(&event(r, EventKind::Completion, done), lookahead)?;
                }
                Source::Task(io) => engine.task_mut().on_io_done(&io, done),
            }
        } else if let Some(ta) = t_arr.filter(|&a| t_dl.is_none_or(|d| a <= d)) {
            now = ta;
            let i = next;
            next += 1;
            let r = &requests[i];
            let admission = engine.task_mut().on_arrival(r, now, &mut out);
            for io in out.drain(..) {
                dev.submit(Source::Task(io), io.op, io.sector, io.bytes, now);
            }
            if admission == Admission::Device {
                dev.submit(Source::Foreground(i), r.op, r.sector, r.bytes, now);
            }
            outstanding += 1;
            engine.push(&event(r, EventKind::Arrival, now))?;
            if admission == Admission::Absorbed {
                outstanding -= 1;
                end = end.max(now);
                let lookahead = if outstanding == 0 {
                    requests.get(next).map(|r| r.arrival)
                } else {
                    None
                };
                engine.push_with_lookahead(&event(r, EventKind::Completion, now), lookahead)?;
            }
        } else if let Some(td) = t_dl {
            now = td;
            engine.advance(td)?;
        } else {
            // Nothing can happen any more (cannot occur: an outstanding
            // request is always in the disk).
            break;
        }
        if interruptible && !engine.task_running() {
            for io in dev.cancel_task_jobs() {
                engine.task_mut().on_io_cancelled(&io, now);
            }
        }
        let free = dev.free_at(now);
        engine.task_mut().poll(now, free, &dev.disk, &mut out);
        for io in out.drain(..) {
            dev.submit(Source::Task(io), io.op, io.sector, io.bytes, now);
        }
    }
    let report = engine.finish(end)?;
    let mut drained = Vec::new();
    engine.task_mut().drain(&mut drained);
    Ok(ModelOutcome {
        report,
        log: engine.log().to_vec(),
        device_log: dev.log.unwrap_or_default(),
        drained,
        baseline: base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_is_fifo() {
        let m = ServiceModel::default_model();
        let ms = Nanos::from_millis;
        // Two reads at 0 ms far apart on the disk: the second waits for the first.
        let reqs = [
            Request::new(ms(0), ms(0), Op::Read, 0, 4096),
            Request::new(ms(0), ms(0), Op::Read, 1_000_000, 4096),
        ];
        let (b, done) = baseline(&reqs, &m);
        let s1 = m.service(0, 0, 4096);
        let s2 = m.service(8, 1_000_000, 4096);
        assert_eq!(done, vec![s1, s1 + s2]);
        let want = (s1.as_secs_f64() + (s1 + s2).as_secs_f64()) / 2.0;
        assert!((b.mean_read_latency_s - want).abs() < 1e-12);
    }
}
