//! Scheduling admitted jobs in idle time (issue 19): the actuator side of
//! [`crate::reserve`].
//!
//! A sans-IO state machine driven by the device's idle-period boundaries:
//! [`Scheduler::on_idle_begin`] when the device empties,
//! [`Scheduler::on_idle_end`] at the next arrival, and
//! [`Scheduler::on_deadline`] at the times [`Scheduler::next_deadline`]
//! asks for. It never reads a clock; the replay driver and (later) the
//! daemon drive it alike.
//!
//! **When jobs run.** Only in idle time: a job's step starts once the
//! device has been idle for [`start_wait`]`(wait, step)` — the longer of
//! `wait` (a timer start detector) and one step — the same wait the
//! [forecast](crate::forecast) discounts, never while a foreground request
//! is outstanding. At the next arrival an interruptible
//! job (step zero) stops at once; a job with a non-interruptible step
//! finishes it, and the arrival waits: [`Scheduler::on_idle_end`] reports
//! that overrun so the driver can count the delayed requests. No new step
//! starts before the device is idle again.
//!
//! **Whom the idle time goes to**, at every step boundary:
//!
//! 1. the admitted jobs *behind* their reservation — those that have
//!    obtained less than their amount in their current window and whose
//!    work for it is not done (below) — by
//!    earliest deadline (the window's end), then largest lag (the amount
//!    the window's elapsed fraction calls for minus what was obtained),
//!    then the order of admission;
//! 2. only when no job is behind, jobs that asked for more (`extra`), as
//!    unreserved work, the one with the least obtained relative to its
//!    amount first;
//! 3. otherwise nobody: the idle time is left to unreserved work.
//!
//! So a job that fell behind (short idle periods, a busy evening) catches
//! up at the expense of unreserved work, not of the other reservations,
//! as in Domjan and Gross's R-Scheduler, and a job that met its
//! reservation receives nothing more while another is behind (a property
//! test checks it). Earliest-deadline-first is the order that meets every
//! deadline whenever any order can, for work that can be split at step
//! boundaries on one resource; steps make it approximate by at most one
//! step per window.
//!
//! **Accounting.** A step's time is credited to the window in which it
//! started (interruptible chunks never cross their own window's end); a
//! window counts as met when its credit reaches the amount by its end.
//! Windows that began before the scheduler did are not counted.
//!
//! **A job that finishes early.** A real job's work can end before its
//! reservation does: an `fstrim` that trims in milliseconds, a scrub that
//! completes its pass. [`Scheduler::on_job_done`] says so: the step ends
//! there, the job is credited the time it ran (not the rest of the step,
//! which goes to the next job at once), and it gets no more idle time
//! until its next window, which counts as met (it needed no more) and is
//! counted in [`JobReport::finished`]. A replay never calls it: its jobs
//! are work that always wants more.

use lull_core::time::Nanos;

use crate::hours::{HOUR, HOURS_PER_DAY};
use crate::reserve::Request;

pub use crate::hours::start_wait;

/// An admitted job, as the scheduler sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Its name.
    pub name: String,
    /// The reservation granted.
    pub request: Request,
    /// Whether it takes unreserved idle time once its reservation is met
    /// and nobody is behind.
    pub extra: bool,
}

/// A step handed to a job: it runs over `[start, end)` unless an arrival
/// stops an interruptible job earlier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The job's index.
    pub job: usize,
    /// When it starts (the call's `now`).
    pub start: Nanos,
    /// When it is planned to end.
    pub end: Nanos,
    /// Whether it is unreserved work (the job's reservation was already
    /// met).
    pub extra: bool,
}

/// A non-interruptible step still running at an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overrun {
    /// The job's index.
    pub job: usize,
    /// When the step ends: arrivals before then wait for it.
    pub until: Nanos,
}

/// What happened to one job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobReport {
    /// Its name.
    pub name: String,
    /// The reservation.
    pub request: Request,
    /// Complete windows observed.
    pub windows: u64,
    /// Those in which it obtained its amount.
    pub met: u64,
    /// The largest shortfall of a missed window.
    pub worst_shortfall: Nanos,
    /// Idle time obtained in complete windows.
    pub obtained: Nanos,
    /// Of which beyond the amount (unreserved work, or a last step's
    /// overshoot).
    pub beyond: Nanos,
    /// Steps started.
    pub steps: u64,
    /// Steps that ran into an arrival.
    pub overruns: u64,
    /// Complete windows in which it finished its work before obtaining
    /// its amount ([`Scheduler::on_job_done`]); they count as met.
    pub finished: u64,
    /// Seconds of work per hour of day, summed over the run.
    pub per_hour_s: [f64; HOURS_PER_DAY],
}

impl JobReport {
    /// Idle time asked for over the complete windows.
    pub fn requested(&self) -> Nanos {
        Nanos::from_nanos(self.request.amount.as_nanos() * self.windows)
    }
}

#[derive(Clone, Debug)]
struct State {
    job: Job,
    /// Window bounds, absolute (clock + relative) nanoseconds.
    win_start: u64,
    win_end: u64,
    obtained: Nanos,
    /// Its work for the current window is done ([`Scheduler::on_job_done`]).
    done: bool,
    report: JobReport,
}

impl State {
    /// Behind its reservation: less than its amount in its window, and
    /// its work for the window not done.
    fn behind(&self) -> bool {
        !self.done && self.obtained < self.job.request.amount
    }
}

#[derive(Clone, Copy, Debug)]
struct Running {
    step: Step,
    interruptible: bool,
    /// Already reported as an overrun (a step can outlast several short
    /// idle periods; it delays the arrivals up to its end only once).
    overran: bool,
}

/// The scheduler: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Scheduler {
    jobs: Vec<State>,
    wait: Nanos,
    clock: u64,
    origin: u64,
    now: Nanos,
    idle_since: Option<Nanos>,
    running: Option<Running>,
    /// A dispatch decision is due once the wait is over.
    pending: bool,
}

impl Scheduler {
    /// A scheduler for `jobs` (in admission order) that starts steps after
    /// `wait` of idleness, from relative time `start`, with wall clock
    /// `clock` at time 0 (windows align to it; without it, to time 0).
    pub fn new(jobs: Vec<Job>, wait: Nanos, start: Nanos, clock: Option<Nanos>) -> Self {
        let clock = clock.map_or(0, |c| c.as_nanos());
        let origin = clock + start.as_nanos();
        let jobs = jobs
            .into_iter()
            .map(|job| {
                let p = job.request.period().as_nanos();
                let win_start = origin / p * p;
                State {
                    report: JobReport {
                        name: job.name.clone(),
                        request: job.request,
                        windows: 0,
                        met: 0,
                        worst_shortfall: Nanos::ZERO,
                        obtained: Nanos::ZERO,
                        beyond: Nanos::ZERO,
                        steps: 0,
                        overruns: 0,
                        finished: 0,
                        per_hour_s: [0.0; HOURS_PER_DAY],
                    },
                    job,
                    win_start,
                    win_end: win_start + p,
                    obtained: Nanos::ZERO,
                    done: false,
                }
            })
            .collect();
        Scheduler {
            jobs,
            wait,
            clock,
            origin,
            now: start,
            idle_since: None,
            running: None,
            pending: false,
        }
    }

    /// The job running now, if any.
    pub fn running(&self) -> Option<Step> {
        self.running.map(|r| r.step)
    }
    /// What job `j` has obtained in its current window.
    pub fn obtained(&self, j: usize) -> Nanos {
        self.jobs[j].obtained
    }
    /// Whether job `j` is behind: less than its amount in its window, and
    /// its work for the window not done ([`Scheduler::on_job_done`]).
    pub fn is_behind(&self, j: usize) -> bool {
        self.jobs[j].behind()
    }
    /// Number of jobs.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }
    /// Whether there are no jobs.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    fn abs(&self, t: Nanos) -> u64 {
        self.clock + t.as_nanos()
    }
    fn rel(&self, abs: u64) -> Nanos {
        Nanos::from_nanos(abs.saturating_sub(self.clock))
    }

    /// Closes the windows that ended by `now`.
    fn advance(&mut self, now: Nanos) {
        self.now = self.now.max(now);
        let t = self.abs(now);
        let origin = self.origin;
        for s in &mut self.jobs {
            while t >= s.win_end {
                if s.win_start >= origin {
                    let amount = s.job.request.amount;
                    let r = &mut s.report;
                    r.windows += 1;
                    r.obtained += s.obtained;
                    if s.obtained >= amount {
                        r.met += 1;
                        r.beyond += s.obtained - amount;
                    } else if s.done {
                        r.met += 1;
                        r.finished += 1;
                    } else {
                        r.worst_shortfall = r.worst_shortfall.max(amount - s.obtained);
                    }
                }
                let p = s.win_end - s.win_start;
                s.win_start = s.win_end;
                s.win_end += p;
                s.obtained = Nanos::ZERO;
                s.done = false;
            }
        }
    }

    /// Ends the running step at `end`, crediting its hours.
    fn close(&mut self, end: Nanos) {
        if let Some(r) = self.running.take() {
            let (a, b) = (self.abs(r.step.start), self.abs(end.max(r.step.start)));
            let h = HOUR.as_nanos();
            let per_hour = &mut self.jobs[r.step.job].report.per_hour_s;
            let mut t = a;
            while t < b {
                let cut = ((t / h + 1) * h).min(b);
                per_hour[((t / h) % HOURS_PER_DAY as u64) as usize] += (cut - t) as f64 / 1e9;
                t = cut;
            }
        }
    }

    /// The device became idle at `now`.
    pub fn on_idle_begin(&mut self, now: Nanos) {
        self.advance(now);
        self.idle_since = Some(now);
        self.pending = true;
    }

    /// A foreground request arrived at `now`, ending the idle period. An
    /// interruptible job stops at once; a non-interruptible step runs on,
    /// and is returned the first time it meets an arrival (every arrival
    /// until its end waits for it).
    pub fn on_idle_end(&mut self, now: Nanos) -> Option<Overrun> {
        self.advance(now);
        self.idle_since = None;
        let r = self.running?;
        // A step that ended by the arrival is over, whether or not it met
        // an earlier arrival: `running()` never shows a finished step.
        if r.step.end <= now {
            self.close(r.step.end);
            return None;
        }
        if r.overran {
            return None;
        }
        if r.interruptible {
            self.cut(r, now);
            None
        } else {
            self.jobs[r.step.job].report.overruns += 1;
            if let Some(run) = &mut self.running {
                run.overran = true;
            }
            Some(Overrun {
                job: r.step.job,
                until: r.step.end,
            })
        }
    }

    /// Job `j`'s work for its current window ended at `now` (its command
    /// exited): if it runs, its step ends here and it is credited only the
    /// time it ran; until its next window it gets no more idle time, and
    /// that window counts as met. Call [`Scheduler::on_deadline`] at `now`
    /// (it is due) to hand the rest of the idle period to the next job.
    pub fn on_job_done(&mut self, j: usize, now: Nanos) {
        self.advance(now);
        if self.jobs.get(j).is_none() {
            return;
        }
        self.jobs[j].done = true;
        if let Some(r) = self.running.filter(|r| r.step.job == j) {
            self.cut(r, now.max(r.step.start));
            self.pending = self.idle_since.is_some();
        }
    }

    /// Ends the running step `r` at `at` (by its end at the latest),
    /// taking back the credit of the part it did not run.
    fn cut(&mut self, r: Running, at: Nanos) {
        let end = at.min(r.step.end);
        let s = &mut self.jobs[r.step.job];
        s.obtained = s.obtained.saturating_sub(r.step.end - end);
        self.close(end);
    }

    /// When [`Scheduler::on_deadline`] is due next.
    pub fn next_deadline(&self) -> Option<Nanos> {
        if let Some(r) = self.running {
            return Some(r.step.end);
        }
        let since = self.idle_since?;
        if self.jobs.is_empty() {
            return None;
        }
        let min_wait = self.jobs.iter().map(|s| self.start_wait(s)).min()?;
        let mut next = None;
        if self.pending {
            next = Some((since + min_wait).max(self.now));
        }
        // A job whose own wait is not over yet, and the next window.
        for s in &self.jobs {
            let ready = since + self.start_wait(s);
            if ready > self.now {
                next = Some(next.map_or(ready, |n: Nanos| n.min(ready)));
            }
            let w = self.rel(s.win_end).max(self.now);
            next = Some(next.map_or(w, |n: Nanos| n.min(w)));
        }
        next
    }

    /// How long job `s` waits into an idle period before a step.
    fn start_wait(&self, s: &State) -> Nanos {
        start_wait(self.wait, s.job.request.step)
    }

    /// A deadline is due at `now`: ends a finished step and, if the device
    /// has been idle long enough, hands out the next one.
    pub fn on_deadline(&mut self, now: Nanos) -> Option<Step> {
        self.advance(now);
        if let Some(r) = self.running {
            if r.step.end > now {
                return None;
            }
            self.close(r.step.end);
        }
        let since = self.idle_since?;
        let min_wait = self.jobs.iter().map(|s| self.start_wait(s)).min()?;
        if now < since + min_wait {
            return None;
        }
        self.pending = false;
        let (j, extra) = self.choose(now, since)?;
        let next_window = self.jobs.iter().map(|s| s.win_end).min()?;
        let s = &mut self.jobs[j];
        let step = s.job.request.step;
        let interruptible = step == Nanos::ZERO;
        let len = if interruptible {
            let until_window = Nanos::from_nanos(next_window - (self.clock + now.as_nanos()));
            let need = if extra {
                until_window
            } else {
                s.job.request.amount - s.obtained
            };
            need.min(until_window)
        } else {
            step
        };
        if len == Nanos::ZERO {
            return None;
        }
        s.obtained += len;
        s.report.steps += 1;
        let st = Step {
            job: j,
            start: now,
            end: now + len,
            extra,
        };
        self.running = Some(Running {
            step: st,
            interruptible,
            overran: false,
        });
        Some(st)
    }

    /// The job to run next at `now`, and whether as unreserved work.
    fn choose(&self, now: Nanos, since: Nanos) -> Option<(usize, bool)> {
        let t = self.abs(now) as f64;
        let ready = |s: &State| since + self.start_wait(s) <= now;
        let lag = |s: &State| {
            let p = (s.win_end - s.win_start) as f64;
            let due = s.job.request.amount.as_nanos() as f64 * ((t - s.win_start as f64) / p);
            due - s.obtained.as_nanos() as f64
        };
        // A job whose work for the window is done is neither behind nor
        // offered unreserved time.
        let behind = self
            .jobs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.behind() && ready(s))
            .min_by(|(i, a), (k, b)| {
                a.win_end
                    .cmp(&b.win_end)
                    .then(lag(b).total_cmp(&lag(a)))
                    .then(i.cmp(k))
            });
        if let Some((j, _)) = behind {
            return Some((j, false));
        }
        if self.jobs.iter().any(State::behind) {
            // Somebody is behind but still waiting: no unreserved work.
            return None;
        }
        self.jobs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.job.extra && !s.done && ready(s))
            .min_by(|(i, a), (k, b)| {
                let ra = a.obtained.as_secs_f64() / a.job.request.amount.as_secs_f64();
                let rb = b.obtained.as_secs_f64() / b.job.request.amount.as_secs_f64();
                ra.total_cmp(&rb).then(i.cmp(k))
            })
            .map(|(j, _)| (j, true))
    }

    /// The run is over at `end`: closes the running step and every window
    /// that ended.
    pub fn finish(&mut self, end: Nanos) {
        if let Some(r) = self.running {
            self.close(r.step.end.min(end.max(r.step.start)));
        }
        self.advance(end);
    }

    /// Per job, in admission order.
    pub fn reports(&self) -> Vec<JobReport> {
        self.jobs.iter().map(|s| s.report.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }
    fn job(name: &str, hours: u32, amount: Nanos, step: Nanos, extra: bool) -> Job {
        Job {
            name: name.into(),
            request: Request {
                period_hours: hours,
                amount,
                step,
            },
            extra,
        }
    }

    /// Drives one idle period `[a, b)` and returns the steps handed out.
    fn period(sch: &mut Scheduler, a: Nanos, b: Nanos) -> (Vec<Step>, Option<Overrun>) {
        while let Some(d) = sch.next_deadline().filter(|&d| d <= a) {
            assert!(sch.on_deadline(d).is_none(), "no step while busy");
        }
        sch.on_idle_begin(a);
        let mut steps = Vec::new();
        while let Some(d) = sch.next_deadline().filter(|&d| d < b) {
            steps.extend(sch.on_deadline(d));
        }
        (steps, sch.on_idle_end(b))
    }

    #[test]
    fn earliest_deadline_first_then_stop_when_met() {
        let jobs = vec![
            job("daily", 24, s(600), Nanos::ZERO, false),
            job("hourly", 1, s(300), Nanos::ZERO, false),
        ];
        let mut sch = Scheduler::new(jobs, s(10), Nanos::ZERO, None);
        let (steps, over) = period(&mut sch, s(100), s(2000));
        assert!(over.is_none());
        // The hourly job's deadline comes first: 300 s from 110 s; then the
        // daily job gets 600 s; then nobody.
        assert_eq!(steps.len(), 2);
        assert_eq!(
            (steps[0].job, steps[0].start, steps[0].end),
            (1, s(110), s(410))
        );
        assert_eq!(
            (steps[1].job, steps[1].start, steps[1].end),
            (0, s(410), s(1010))
        );
        assert_eq!(sch.obtained(0), s(600));
        assert!(!sch.is_behind(0) && !sch.is_behind(1));
    }

    #[test]
    fn a_job_that_finishes_early_hands_the_rest_of_the_period_on() {
        // trim (hourly, 5 min) runs first and is done after 2 s; scrub
        // (10 min) gets the rest at once; trim gets nothing more this hour,
        // and its window counts as met, finished.
        let jobs = vec![
            job("trim", 1, s(300), Nanos::ZERO, true),
            job("scrub", 1, s(600), Nanos::ZERO, false),
        ];
        let mut sch = Scheduler::new(jobs, Nanos::ZERO, Nanos::ZERO, None);
        sch.on_idle_begin(s(10));
        let first = sch.on_deadline(sch.next_deadline().unwrap()).unwrap();
        assert_eq!((first.job, first.start), (1, s(10)), "scrub lags more");
        // Let scrub meet its amount, then trim runs.
        let d = sch.next_deadline().unwrap();
        assert_eq!(d, s(610));
        let trim = sch.on_deadline(d).unwrap();
        assert_eq!((trim.job, trim.start, trim.end), (0, s(610), s(910)));
        sch.on_job_done(0, s(612));
        assert!(sch.running().is_none());
        assert_eq!(sch.obtained(0), s(2), "credited the time it ran");
        assert!(!sch.is_behind(0));
        // Due at once; nobody is behind and trim's extra time is done.
        assert_eq!(sch.next_deadline(), Some(s(612)));
        assert!(sch.on_deadline(s(612)).is_none());
        assert!(sch.on_idle_end(s(1000)).is_none());
        // Later in the hour trim gets nothing, even as extra work.
        sch.on_idle_begin(s(2000));
        while let Some(d) = sch.next_deadline().filter(|&d| d < s(3000)) {
            assert!(sch.on_deadline(d).is_none(), "{d}");
        }
        sch.on_idle_end(s(3000));
        sch.finish(s(3600));
        let r = sch.reports();
        assert_eq!((r[0].windows, r[0].met, r[0].finished), (1, 1, 1));
        assert_eq!((r[1].windows, r[1].met, r[1].finished), (1, 1, 0));
        // In its next window it runs again (first: no lag yet, admission
        // order), and when it is done, scrub at once.
        sch.on_idle_begin(s(3600));
        let again = sch.on_deadline(sch.next_deadline().unwrap()).unwrap();
        assert_eq!(again.job, 0);
        sch.on_job_done(0, s(3601));
        let next = sch.on_deadline(sch.next_deadline().unwrap()).unwrap();
        assert_eq!((next.job, next.start), (1, s(3601)));
    }

    #[test]
    fn a_job_done_while_another_runs_changes_nothing_of_that_step() {
        let jobs = vec![
            job("a", 1, s(300), Nanos::ZERO, false),
            job("b", 1, s(300), Nanos::ZERO, false),
        ];
        let mut sch = Scheduler::new(jobs, Nanos::ZERO, Nanos::ZERO, None);
        sch.on_idle_begin(s(0));
        let a = sch.on_deadline(s(0)).unwrap();
        assert_eq!(a.job, 0);
        sch.on_job_done(1, s(5));
        assert_eq!(sch.running(), Some(a));
        assert_eq!(sch.next_deadline(), Some(s(300)));
        // After a, nobody: b is done for the hour.
        assert!(sch.on_deadline(s(300)).is_none());
        assert!(sch.running().is_none());
    }

    #[test]
    fn an_interruptible_job_stops_at_the_arrival() {
        let mut sch = Scheduler::new(
            vec![job("a", 24, s(600), Nanos::ZERO, false)],
            s(10),
            Nanos::ZERO,
            None,
        );
        let (steps, over) = period(&mut sch, s(0), s(100));
        assert_eq!(steps.len(), 1);
        assert!(over.is_none());
        assert_eq!(sch.obtained(0), s(90));
        assert!(sch.running().is_none());
    }

    #[test]
    fn a_stepped_job_overruns_and_reports_it() {
        let mut sch = Scheduler::new(
            vec![job("scrub", 24, s(240), s(60), false)],
            s(10),
            Nanos::ZERO,
            None,
        );
        let (steps, over) = period(&mut sch, s(0), s(100));
        // The 60 s step waits one step (more than the 10 s wait), starts
        // at 60 s and runs to 120 s.
        assert_eq!(steps.len(), 1);
        assert_eq!(
            over,
            Some(Overrun {
                job: 0,
                until: s(120)
            })
        );
        // No new step before the device is idle again, and then not before
        // it has been idle for a step.
        let (steps, _) = period(&mut sch, s(105), s(300));
        assert_eq!(steps[0].start, s(165));
        sch.finish(s(86_400));
        let r = &sch.reports()[0];
        // Four steps (60, 165, 225, 285 s); two ran into an arrival.
        assert_eq!((r.windows, r.met, r.overruns, r.steps), (1, 1, 2, 4));
    }

    /// The case proptest found (issue 25): a 60 s step that met one
    /// arrival ends exactly at the next; it is over then, not still
    /// running, and it delays nothing.
    #[test]
    fn a_step_ending_at_the_arrival_is_over() {
        let mut sch = Scheduler::new(
            vec![job("j1-1", 1, s(1), s(60), true)],
            Nanos::ZERO,
            Nanos::ZERO,
            None,
        );
        let (steps, over) = period(&mut sch, s(1), s(2222));
        let last = *steps.last().unwrap();
        assert_eq!((last.start, last.end), (s(2221), s(2281)));
        assert_eq!(over.map(|o| o.until), Some(s(2281)));
        // Busy 3 s, then idle until exactly the step's end.
        let (steps, over) = period(&mut sch, s(2225), s(2281));
        assert!(steps.is_empty() && over.is_none());
        assert_eq!(sch.running(), None, "a finished step is not running");
        sch.finish(s(3600));
        assert_eq!(sch.reports()[0].overruns, 1);
    }

    #[test]
    fn windows_are_judged_at_their_end() {
        let mut sch = Scheduler::new(
            vec![job("trim", 1, s(300), Nanos::ZERO, false)],
            Nanos::ZERO,
            Nanos::ZERO,
            None,
        );
        period(&mut sch, s(0), s(400)); // hour 0: met
        period(&mut sch, s(3600), s(3700)); // hour 1: 100 s, short by 200
        sch.finish(s(3 * 3600));
        let r = &sch.reports()[0];
        assert_eq!((r.windows, r.met), (3, 1));
        assert_eq!(r.worst_shortfall, s(300));
        assert_eq!(r.obtained, s(400));
        assert_eq!(r.per_hour_s[0], 300.0);
    }

    #[test]
    fn a_long_idle_period_serves_each_new_window() {
        let mut sch = Scheduler::new(
            vec![job("trim", 1, s(300), Nanos::ZERO, false)],
            Nanos::ZERO,
            Nanos::ZERO,
            None,
        );
        let (steps, _) = period(&mut sch, s(0), s(4 * 3600));
        assert_eq!(steps.len(), 4);
        assert_eq!(steps[2].start, s(7200));
    }

    #[test]
    fn extra_work_only_when_nobody_is_behind() {
        let jobs = vec![
            job("greedy", 24, s(100), Nanos::ZERO, true),
            job("slow", 24, s(1000), s(100), false),
        ];
        let mut sch = Scheduler::new(jobs, Nanos::ZERO, Nanos::ZERO, None);
        let (steps, _) = period(&mut sch, s(0), s(1500));
        let extra: Vec<_> = steps.iter().filter(|s| s.extra).collect();
        assert!(!extra.is_empty());
        // Every extra step came after both reservations were met.
        let met_at = s(1100);
        assert!(extra.iter().all(|s| s.start >= met_at && s.job == 0));
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    fn jobs() -> impl Strategy<Value = Vec<Job>> {
        let job = (
            prop::sample::select(vec![1u32, 2, 24]),
            1u64..1200,
            prop::sample::select(vec![0u64, 30, 60]),
            any::<bool>(),
        )
            .prop_map(|(h, amount, step, extra)| Job {
                name: format!("j{h}-{amount}"),
                request: Request {
                    period_hours: h,
                    amount: Nanos::from_secs(amount),
                    step: Nanos::from_secs(step),
                },
                extra,
            });
        prop::collection::vec(job, 1..5)
    }

    /// Alternating (busy, idle) lengths in seconds.
    fn periods() -> impl Strategy<Value = Vec<(u64, u64)>> {
        prop::collection::vec((1u64..600, 1u64..3000), 1..80)
    }

    proptest! {
        #![proptest_config(lull_testkit::cases(256))]
        #[test]
        fn reservations_are_shared_fairly_and_only_idle_time_is_used(
            jobs in jobs(),
            periods in periods(),
            wait in 0u64..20,
        ) {
            let n = jobs.len();
            let wait = Nanos::from_secs(wait);
            let mut sch = Scheduler::new(jobs, wait, Nanos::ZERO, None);
            let mut t = Nanos::ZERO;
            for (busy, idle) in periods {
                let a = t + Nanos::from_secs(busy);
                let b = a + Nanos::from_secs(idle);
                // While busy: deadlines only close steps, never start one.
                while let Some(d) = sch.next_deadline().filter(|&d| d <= a) {
                    prop_assert!(sch.on_deadline(d).is_none(), "a step started while busy at {d}");
                }
                sch.on_idle_begin(a);
                while let Some(d) = sch.next_deadline().filter(|&d| d < b) {
                    if let Some(st) = sch.on_deadline(d) {
                        // What the job had in its window before this step.
                        let before = sch.obtained(st.job) - (st.end - st.start);
                        // Only in idle time, after the job's wait.
                        let step = sch.jobs[st.job].job.request.step;
                        prop_assert!(st.start >= a + start_wait(wait, step) && st.start < b);
                        let amount = |j: usize| sch.jobs[j].job.request.amount;
                        if st.extra || before >= amount(st.job) {
                            // More than its reservation: nobody may be behind.
                            prop_assert!(st.extra);
                            for j in 0..n {
                                prop_assert!(
                                    !sch.is_behind(j),
                                    "job {} got extra time while job {j} is behind", st.job
                                );
                            }
                        }
                    }
                }
                let running = sch.running();
                let over = sch.on_idle_end(b);
                // At the arrival an interruptible job has stopped; a stepped
                // one may only finish the step it began in idle time.
                match (running, over) {
                    (Some(r), Some(o)) => {
                        prop_assert!(sch.jobs[r.job].job.request.step > Nanos::ZERO);
                        prop_assert!(r.start < b && o.until == r.end);
                    }
                    (_, None) => {
                        // Nothing runs on, or a step that already met an
                        // earlier arrival (reported then) is still going.
                        if let Some(r) = sch.running() {
                            prop_assert!(sch.jobs[r.job].job.request.step > Nanos::ZERO);
                            prop_assert!(r.end > b && r.start < a);
                        }
                    }
                    (None, Some(_)) => prop_assert!(false, "overrun without a running step"),
                }
                t = b;
            }
            sch.finish(t + Nanos::from_secs(1));
            for r in sch.reports() {
                prop_assert!(r.met <= r.windows);
            }
        }
    }
}
