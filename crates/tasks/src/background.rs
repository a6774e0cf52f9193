//! The interface between tasks that move I/O and a model-timing driver.
//!
//! [`IdleTask`] is what the engine sees: start, renew, stop, events. A task
//! that adds I/O also needs a device, which the engine does not have: the
//! driver (`lull_blktrace_replay::model`) owns the simulated disk and its
//! FIFO queue, and talks to the task through [`BackgroundTask`]:
//!
//! 1. each foreground arrival is offered to the task first
//!    ([`BackgroundTask::on_arrival`]): writeback absorbs writes into its
//!    queue (and may force a flush); other tasks let everything through;
//! 2. after every change of state (an engine call that may have started or
//!    stopped the task, a device completion, an arrival) the driver calls
//!    [`BackgroundTask::poll`], and the task returns the I/O it wants to
//!    issue now, sized against the service model and the predicted end of
//!    the idle period;
//! 3. the driver reports completions of the task's I/O
//!    ([`BackgroundTask::on_io_done`]) and of foreground requests
//!    ([`BackgroundTask::on_foreground_done`], for latency measures), and
//!    before the run the baseline it measured without the task
//!    ([`BackgroundTask::set_baseline`]).
//!
//! The task is thus a sans-IO state machine like every other lull
//! component: it never sees a clock or a queue, and unit tests drive it by
//! hand. Granularity is honoured by the driver: it never aborts an I/O a
//! non-interruptible task issued, and for an interruptible task it takes
//! back the task's I/O still waiting in the device queue when the task is
//! stopped ([`BackgroundTask::on_io_cancelled`]).

use lull_core::request::{Op, Request};
use lull_core::task::IdleTask;
use lull_core::time::Nanos;

use crate::device::Disk;

/// Why a task issues a device I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoClass {
    /// Idle-time work.
    Idle,
    /// Work forced outside predicted idle time (writeback's queue
    /// overflowed, or passed its high-water mark).
    Forced,
}

/// One device request issued by a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceIo {
    /// Read or write.
    pub op: Op,
    /// First sector.
    pub sector: u64,
    /// Length in bytes.
    pub bytes: u32,
    /// The task's own label (writeback: the index of the foreground write
    /// the data came from).
    pub tag: u64,
    /// Idle or forced.
    pub class: IoClass,
}

/// What happens to a foreground request offered to a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// It goes to the device as usual.
    Device,
    /// The task took it (a delayed write): it completes at once for the
    /// host and reaches the device later through the task.
    Absorbed,
}

/// Latencies measured on the same trace without the task.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Baseline {
    /// Mean read latency, seconds.
    pub mean_read_latency_s: f64,
    /// Mean latency of every request, seconds.
    pub mean_latency_s: f64,
}

/// An idle task that issues device I/O under model timing.
pub trait BackgroundTask: IdleTask {
    /// A foreground request arrives at `now`. The task may absorb it and may
    /// push I/O to issue at once (forced work) into `out`.
    fn on_arrival(&mut self, req: &Request, now: Nanos, out: &mut Vec<DeviceIo>) -> Admission;
    /// Whether the device is idle (nothing in service, nothing queued) as
    /// the next foreground request arrives: the driver says so just before
    /// [`BackgroundTask::on_arrival`]. Ignored unless a task asks for it
    /// (`writeback(absorb=busy)` writes through to an idle disk).
    fn device_idle(&mut self, _idle: bool) {}
    /// The task may issue I/O now. The device finishes what is already
    /// queued at `device_free_at`; `disk` estimates service times.
    fn poll(&mut self, now: Nanos, device_free_at: Nanos, disk: &Disk, out: &mut Vec<DeviceIo>);
    /// An I/O the task issued completed at `now`.
    fn on_io_done(&mut self, io: &DeviceIo, now: Nanos);
    /// An I/O the task issued was taken back before the device started it
    /// (interruptible tasks only). The default puts nothing back: override
    /// it in any task that declares itself interruptible.
    fn on_io_cancelled(&mut self, _io: &DeviceIo, _now: Nanos) {}
    /// A foreground request that went to the device completed.
    fn on_foreground_done(&mut self, op: Op, arrival: Nanos, done: Nanos);
    /// The baseline run's latencies.
    fn set_baseline(&mut self, baseline: Baseline);
    /// The run is over: hand out work still held (writeback's queue) so a
    /// driver can account for every byte. Not timed, not measured.
    fn drain(&mut self, _out: &mut Vec<DeviceIo>) {}
    /// Whether foreground reads go ahead of this task's I/O waiting in the
    /// device queue (the I/O in service always finishes first). `false`
    /// (the default, and the paper's model): one FIFO queue, identical
    /// priority. A task that answers `true` must serve reads of data it
    /// has issued but not yet seen completed from its own memory, since a
    /// read may now reach the disk before that write does
    /// (writeback's [`latest`](crate::writeback::Writeback::latest)).
    fn read_priority(&self) -> bool {
        false
    }
}

/// A time-weighted average of a level (queue bytes, unprocessed bytes).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Level {
    since: Option<Nanos>,
    last: Nanos,
    value: u64,
    area: f64,
    max: u64,
    end: Option<Nanos>,
}

impl Level {
    /// Starts the clock at the first arrival (later calls do nothing).
    pub(crate) fn begin(&mut self, now: Nanos) {
        if self.since.is_none() {
            self.since = Some(now);
            self.last = now;
        }
    }
    pub(crate) fn set(&mut self, now: Nanos, value: u64) {
        if self.since.is_some() && now > self.last {
            self.area += self.value as f64 * (now - self.last).as_secs_f64();
            self.last = now;
        }
        self.value = value;
        self.max = self.max.max(value);
    }
    pub(crate) fn finish(&mut self, end: Nanos) {
        let v = self.value;
        self.set(end, v);
        self.end = Some(end);
    }
    pub(crate) fn mean(&self) -> f64 {
        match (self.since, self.end) {
            (Some(s), Some(e)) if e > s => self.area / (e - s).as_secs_f64(),
            _ => self.value as f64,
        }
    }
    pub(crate) fn max(&self) -> u64 {
        self.max
    }
}

/// A running mean of latencies.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Mean {
    sum: f64,
    n: u64,
}

impl Mean {
    pub(crate) fn add(&mut self, x: f64) {
        self.sum += x;
        self.n += 1;
    }
    pub(crate) fn get(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_is_time_weighted() {
        let mut l = Level::default();
        let s = Nanos::from_secs;
        l.begin(s(0));
        l.set(s(0), 10);
        l.set(s(1), 30);
        l.finish(s(4));
        // 10 for 1 s, 30 for 3 s: (10 + 90) / 4 = 25.
        assert!((l.mean() - 25.0).abs() < 1e-9);
        assert_eq!(l.max(), 30);
    }
}
