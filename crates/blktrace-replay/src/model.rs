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
//!   the reads and writes with identical priority", §2.5.2). A task
//!   may ask for read priority instead ([`BackgroundTask::read_priority`],
//!   the improved `writeback`): then a foreground read passes the task's
//!   I/O waiting in the queue, never a foreground request. Recorded
//!   completion times are ignored.
//! - **Saturation.** [`saturation`] says whether the disk can serve the
//!   trace at all (peak utilization over [`SATURATION_WINDOW`], longest
//!   queueing delay), from the same FIFO schedule as the baseline; the
//!   replay driver refuses a saturated trace unless told otherwise.
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
use std::fmt;

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
    /// The detector's [gauges](Detector::gauges) at the end: what it
    /// learned.
    pub gauges: Vec<(String, f64)>,
}

#[derive(Clone, Copy, Debug)]
struct Job {
    source: Source,
    op: Op,
    sector: u64,
    bytes: u32,
    est: Nanos,
    /// Submission order.
    seq: u64,
}

/// The disk and its queue: FIFO, or FIFO with foreground reads ahead of
/// the task's waiting I/O when the task asks for it
/// ([`BackgroundTask::read_priority`]).
#[derive(Debug)]
struct DeviceSim {
    disk: Disk,
    /// Foreground reads, in order (only used with read priority).
    reads: VecDeque<Job>,
    /// Everything else (everything, without read priority), in order.
    rest: VecDeque<Job>,
    /// Submission numbers of the foreground requests in `rest`: a read
    /// never passes one of them (it may read what they write).
    rest_foreground: VecDeque<u64>,
    read_priority: bool,
    seq: u64,
    queued_est: Nanos,
    current: Option<(Job, Nanos, Nanos)>,
    log: Option<Vec<DeviceRecord>>,
}

impl DeviceSim {
    fn new(model: ServiceModel, log: bool, read_priority: bool) -> Self {
        DeviceSim {
            disk: Disk::new(model),
            reads: VecDeque::new(),
            rest: VecDeque::new(),
            rest_foreground: VecDeque::new(),
            read_priority,
            seq: 0,
            queued_est: Nanos::ZERO,
            current: None,
            log: log.then(Vec::new),
        }
    }

    /// Nothing in service and nothing waiting.
    fn idle(&self) -> bool {
        self.current.is_none() && self.rest.is_empty()
    }

    fn submit(&mut self, source: Source, op: Op, sector: u64, bytes: u32, now: Nanos) {
        let est = self.disk.estimate(sector, u64::from(bytes));
        let job = Job {
            source,
            op,
            sector,
            bytes,
            est,
            seq: self.seq,
        };
        self.seq += 1;
        let foreground = matches!(source, Source::Foreground(_));
        if self.read_priority && foreground && op == Op::Read {
            self.reads.push_back(job);
        } else {
            if foreground {
                self.rest_foreground.push_back(job.seq);
            }
            self.rest.push_back(job);
        }
        self.queued_est += est;
        if self.current.is_none() {
            self.start_next(now);
        }
    }

    /// The next job: the oldest read if no foreground request queued
    /// before it is still waiting, else the head of the FIFO.
    fn pop_next(&mut self) -> Option<Job> {
        let read_first = self
            .reads
            .front()
            .is_some_and(|r| self.rest_foreground.front().is_none_or(|&f| f > r.seq));
        let job = if read_first {
            self.reads.pop_front()
        } else {
            self.rest.pop_front()
        }?;
        if self.rest_foreground.front() == Some(&job.seq) {
            self.rest_foreground.pop_front();
        }
        Some(job)
    }

    fn start_next(&mut self, now: Nanos) {
        if let Some(job) = self.pop_next() {
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
        let mut kept = VecDeque::with_capacity(self.rest.len());
        for job in self.rest.drain(..) {
            match job.source {
                Source::Task(io) => {
                    self.queued_est = self.queued_est - job.est;
                    out.push(io);
                }
                Source::Foreground(_) => kept.push_back(job),
            }
        }
        self.rest = kept;
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
    let runs = fifo(requests, model);
    let (mut all, mut reads, mut n_reads) = (0.0, 0.0, 0u64);
    for (r, run) in requests.iter().zip(&runs) {
        let lat = (run.done - r.arrival).as_secs_f64();
        all += lat;
        if r.op == Op::Read {
            reads += lat;
            n_reads += 1;
        }
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
        runs.iter().map(|r| r.done).collect(),
    )
}

/// One request of the baseline: when the disk began and finished it.
#[derive(Clone, Copy, Debug)]
struct Run {
    start: Nanos,
    done: Nanos,
}

/// The baseline schedule: one disk, FIFO, no task.
fn fifo(requests: &[Request], model: &ServiceModel) -> Vec<Run> {
    let mut disk = Disk::new(model.clone());
    let mut free = Nanos::ZERO;
    requests
        .iter()
        .map(|r| {
            let start = free.max(r.arrival);
            free = start + disk.serve(r.sector, u64::from(r.bytes));
            Run { start, done: free }
        })
        .collect()
}

/// The window over which [`saturation`] measures the load by default: one
/// minute. Long enough that a burst which a disk serves in a few seconds
/// does not count (a busy second is not a saturated disk), short enough
/// that a stretch the disk cannot keep up with is seen even in a trace of
/// a few minutes, and in the range of the write-back intervals (5–30 s)
/// and idle periods that idle-time tasks live on: a disk busy for a whole
/// minute offers them nothing to use.
pub const SATURATION_WINDOW: Nanos = Nanos::from_secs(60);

/// Whether the modelled disk can serve a trace at all, from the baseline
/// run (one disk, FIFO, no task). Model-timing measures of a trace the
/// disk cannot serve are noise: the queue grows for as long as the trace
/// lasts, latencies are minutes or hours, and any task's "improvement" is
/// a difference between two unbounded numbers.
///
/// Two figures, each with its threshold ([`Saturation::is_saturated`]):
///
/// - **peak utilization**: the most service time that arrives in any
///   window of [`Saturation::window`] (starting at an arrival), divided by
///   the window. At 1 or more the requests of that window need the disk
///   for at least the whole window: it has no idle time in it and, above
///   1, falls behind.
/// - **queue growth**: the longest a request waited in the queue before
///   the disk began it. At a whole window or more the disk was at least
///   that far behind the trace.
///
/// `lull replay` refuses a saturated trace under model timing (exit 2)
/// unless `--allow-saturated`; `lull rank` can call [`saturation`] once
/// per trace and device and mark the trace instead of ranking its runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Saturation {
    /// The window of `peak_utilization`.
    pub window: Nanos,
    /// Busy time over the whole span (first arrival to last completion).
    pub utilization: f64,
    /// Service time arriving in the busiest window, over the window.
    pub peak_utilization: f64,
    /// Where the busiest window starts (trace time).
    pub peak_at: Nanos,
    /// The longest queueing delay of a request.
    pub max_wait: Nanos,
    /// When that request arrived.
    pub max_wait_at: Nanos,
    /// The span of the trace, first arrival to last completion.
    pub span: Nanos,
}

impl Saturation {
    /// Whether the disk cannot serve the trace: peak utilization ≥ 1, or a
    /// request waited a whole window or longer.
    pub fn is_saturated(&self) -> bool {
        self.peak_utilization >= 1.0 || self.max_wait >= self.window
    }
}

impl fmt::Display for Saturation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "utilization {:.2} over the busiest {:.0} s window (at {:.1} s), {:.2} overall; \
             longest queueing delay {:.1} s (request at {:.1} s)",
            self.peak_utilization,
            self.window.as_secs_f64(),
            self.peak_at.as_secs_f64(),
            self.utilization,
            self.max_wait.as_secs_f64(),
            self.max_wait_at.as_secs_f64()
        )
    }
}

/// The [`Saturation`] of `requests` (sorted by arrival) on a disk with
/// `model`, with windows of `window` (the span of the trace if it is
/// shorter; [`SATURATION_WINDOW`] is the default).
pub fn saturation(requests: &[Request], model: &ServiceModel, window: Nanos) -> Saturation {
    let runs = fifo(requests, model);
    let first = requests.first().map_or(Nanos::ZERO, |r| r.arrival);
    let end = runs.iter().map(|r| r.done).max().unwrap_or(first);
    let span = end.saturating_sub(first);
    let window = window.min(span).max(Nanos::NANO);
    let service: Vec<Nanos> = runs.iter().map(|r| r.done - r.start).collect();
    let busy: f64 = service.iter().map(|s| s.as_secs_f64()).sum();
    // Sliding window [arrival_i, arrival_i + window): two pointers.
    let (mut peak, mut peak_at, mut sum, mut j) = (0.0f64, first, 0.0f64, 0usize);
    for (i, r) in requests.iter().enumerate() {
        let limit = r.arrival.saturating_add(window);
        while j < requests.len() && requests[j].arrival < limit {
            sum += service[j].as_secs_f64();
            j += 1;
        }
        if sum > peak {
            peak = sum;
            peak_at = r.arrival;
        }
        sum -= service[i].as_secs_f64();
    }
    let (max_wait, max_wait_at) = requests
        .iter()
        .zip(&runs)
        .map(|(r, run)| (run.start - r.arrival, r.arrival))
        .max_by_key(|w| w.0)
        .unwrap_or((Nanos::ZERO, first));
    Saturation {
        window,
        utilization: if span > Nanos::ZERO {
            busy / span.as_secs_f64()
        } else {
            0.0
        },
        peak_utilization: peak / window.as_secs_f64(),
        peak_at,
        max_wait,
        max_wait_at,
        span,
    }
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
        engine = engine.with_clock(lull_core::time::UnixTime::since_epoch(clock));
    }
    if opts.log {
        engine = engine.with_log();
    }
    engine.task_mut().set_baseline(base);
    let interruptible = engine.task().granularity().interruptible;
    let read_priority = engine.task().read_priority();
    let mut dev = DeviceSim::new(model.clone(), opts.device_log, read_priority);
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
            engine.task_mut().device_idle(dev.idle());
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
        gauges: engine.detector().gauges(),
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
