//! Several `command` jobs sharing one disk's idle time by reservation
//! (issue 19): the daemon side of `lull_detectors::{reserve, schedule}`.
//!
//! A disk with `task = "jobs"` has one [`JobsRun`]. It is sans-IO like the
//! engine: the daemon tells it when the disk's idle periods begin and end
//! (the engine's task start and stop intents, so the disk's network and
//! stop policy decide *when* idle time is usable) and the time of every
//! poll; it answers with [`Switch`]es, which job's command to resume and
//! which to pause. The commands themselves are run by the same actor code
//! as the `command` task (one actor per job), so SIGCONT/SIGSTOP, the
//! process group and the clean stop are the same.
//!
//! **Admission without history.** A daemon that has just started knows
//! nothing of the disk's idle time, and a forecast needs days of it. So the
//! jobs are admitted, in file order, against an *assumed* capacity: the
//! disk's `assume_idle` (default 30 min) of usable idle time in every hour,
//! for every step length, minus `best_effort`. A refused job is logged with
//! its shortfall and never runs; an admitted job that the disk's real idle
//! time cannot serve shows up as missed windows (logged, and counted in
//! `lull_job_deadlines_missed_total`). Admission is decided again when the
//! disk's configuration changes (a reload with other settings).
//!
//! **Re-checked on what was observed.** The idle periods the jobs were
//! offered feed an [`IdleForecast`] (per hour of day, after the network's
//! wait); after every full day of observation the jobs are submitted again,
//! in order, against that forecast, and the log says for each whether it
//! still fits, would now be refused (with the shortfall) or would now fit;
//! `lull_job_fits_observed` exports it. Who runs does not change until the
//! admin acts (`assume_idle`, `reserve`, then a reload): a grant the daemon
//! withdrew by itself at night would surprise more than a warning.
//!
//! **Who runs.** [`Scheduler`]: jobs behind their reservation by earliest
//! deadline then largest lag, then jobs with `extra`, otherwise nobody.
//! The scheduler's own wait is zero, since the network's start detector
//! has already waited; a job with a non-interruptible step still waits
//! one step into the idle period, and finishes a step that an arrival
//! interrupts (the command keeps running until the step ends).
//!
//! **A command that exits** has done its work for its window (an `fstrim`
//! that trims in milliseconds, a scrub that completed its pass): the rest
//! of the idle period goes to the next job at once, the job is credited
//! only the time its command ran, and it runs again in its next window,
//! which counts as met. It used to be credited its whole step while
//! nothing ran: on a loop device an `fstrim` job that exited in 10 ms
//! was counted 96 s of idle time in 90 s, and the scrub beside it never
//! ran.

use lull_core::time::Nanos;
use lull_reserve::forecast::{HOURS_PER_DAY, IdleForecast};
use lull_reserve::plan::JobSpec;
use lull_reserve::reserve::{Admission, Capacity, Decision, Request, ReserveError};
use lull_reserve::schedule::{Job, Scheduler};
use tracing::{debug, info, warn};

use crate::config::JobConfig;

/// What the daemon must do to a job's command (indices are the jobs'
/// positions in the configuration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Start or resume it.
    Start(usize),
    /// Pause it.
    Stop(usize),
}

/// A job's metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct JobGauge {
    /// Its name.
    pub name: String,
    /// Whether admission control admitted it.
    pub admitted: bool,
    /// Time its command was running (resumed), seconds.
    pub idle_s: f64,
    /// Complete windows in which it got less than its reservation.
    pub missed: u64,
    /// Whether it fits the idle time observed (after a full day).
    pub fits_observed: Option<bool>,
}

/// The jobs of one disk: see the [module docs](self).
#[derive(Debug)]
pub struct JobsRun {
    key: String,
    names: Vec<String>,
    /// Scheduler index → configuration index.
    admitted: Vec<usize>,
    sch: Scheduler,
    /// The job whose command runs, and since when.
    current: Option<(usize, Nanos)>,
    idle_s: Vec<f64>,
    missed: Vec<u64>,
    idle: bool,
    specs: Vec<JobSpec>,
    best_effort: f64,
    forecast: IdleForecast,
    /// When the current idle period began (for the forecast).
    idle_began: Option<Nanos>,
    /// Days of observation already re-checked.
    days_checked: u64,
    /// Per configured job, the last re-check's answer.
    fits_observed: Vec<Option<bool>>,
}

/// One line for a refusal: each request's shortfall.
fn refusal_text(shortfalls: &[(Request, lull_reserve::reserve::Shortfall)]) -> String {
    shortfalls
        .iter()
        .map(|(r, s)| {
            format!(
                "{r} is short by {} a day (worst: {} in the window from {:02}:00)",
                s.per_day.approx(),
                s.worst.approx(),
                s.worst_window_hour
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The step lengths of `jobs`' requests, and zero.
fn steps(jobs: &[JobConfig]) -> Vec<Nanos> {
    let mut steps = vec![Nanos::ZERO];
    steps.extend(
        jobs.iter()
            .flat_map(|j| j.spec.ranked.iter().map(|r| r.step)),
    );
    steps
}

/// Submits `specs` in order to a controller planning on `capacity`.
fn submit_all(
    specs: &[JobSpec],
    capacity: Capacity,
    best_effort: f64,
) -> Vec<Result<Decision, ReserveError>> {
    match Admission::new(capacity, best_effort) {
        Err(e) => specs.iter().map(|_| Err(e.clone())).collect(),
        Ok(mut adm) => specs
            .iter()
            .map(|j| adm.submit(&j.name, &j.ranked))
            .collect(),
    }
}

/// Admission control for `jobs` (in order) against `assume_idle` of usable
/// idle time per hour, for every step, less the `best_effort` share: each
/// job's decision, or why it could not be considered.
pub fn admission(
    jobs: &[JobConfig],
    best_effort: f64,
    assume_idle: Nanos,
) -> Vec<Result<Decision, ReserveError>> {
    let specs: Vec<JobSpec> = jobs.iter().map(|j| j.spec.clone()).collect();
    submit_all(
        &specs,
        Capacity::uniform(&steps(jobs), assume_idle),
        best_effort,
    )
}

/// One line saying what admission decided for `job`.
pub fn decision_text(job: &JobConfig, d: &Result<Decision, ReserveError>) -> String {
    match d {
        Ok(Decision::Granted { rank, request }) => format!(
            "job {} admitted with {request} (choice {} of {})",
            job.name,
            rank + 1,
            job.spec.ranked.len()
        ),
        Ok(Decision::Refused { shortfalls }) => format!(
            "job {} refused, it does not fit beside the jobs admitted before it: {}",
            job.name,
            refusal_text(shortfalls)
        ),
        Err(e) => format!("job {} refused: {e}", job.name),
    }
}

impl JobsRun {
    /// Admits `jobs` (in order, see [`admission`]), logs each decision,
    /// and starts the scheduler at `now` (wall clock `clock` at time 0).
    pub fn admit(
        key: &str,
        jobs: &[JobConfig],
        best_effort: f64,
        assume_idle: Nanos,
        now: Nanos,
        clock: Nanos,
    ) -> JobsRun {
        let mut admitted = Vec::new();
        let mut sched = Vec::new();
        let plan = format!(
            "planning on {assume_idle} of idle time per hour, {:.0} % kept for unreserved work",
            best_effort * 100.0
        );
        for (i, (j, d)) in jobs
            .iter()
            .zip(admission(jobs, best_effort, assume_idle))
            .enumerate()
        {
            let text = decision_text(j, &d);
            if let Ok(Decision::Granted { request, .. }) = d {
                info!("disk {key}: {text}; {plan}");
                admitted.push(i);
                sched.push(Job {
                    name: j.name.clone(),
                    request,
                    extra: j.spec.extra,
                });
            } else {
                warn!("disk {key}: {text}; {plan}");
            }
        }
        let mut forecast = IdleForecast::new(Nanos::ZERO, &steps(jobs));
        forecast.begin(now, Some(clock));
        JobsRun {
            specs: jobs.iter().map(|j| j.spec.clone()).collect(),
            best_effort,
            forecast,
            idle_began: None,
            days_checked: 0,
            fits_observed: vec![None; jobs.len()],
            key: key.to_string(),
            names: jobs.iter().map(|j| j.name.clone()).collect(),
            idle_s: vec![0.0; sched.len()],
            missed: vec![0; sched.len()],
            admitted,
            sch: Scheduler::new(sched, Nanos::ZERO, now, Some(clock)),
            current: None,
            idle: false,
        }
    }

    /// The name of job `i` (configuration index).
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// The configuration index of the job named `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Whether a job's command runs.
    pub fn running(&self) -> bool {
        self.current.is_some()
    }

    /// The engine started the task at `now`: an idle period began.
    pub fn on_idle_begin(&mut self, now: Nanos) -> Vec<Switch> {
        if !self.idle {
            self.idle = true;
            self.idle_began = Some(now);
            self.sch.on_idle_begin(now);
        }
        self.advance(now)
    }

    /// The engine stopped the task at `now`: the idle period is over.
    pub fn on_idle_end(&mut self, now: Nanos) -> Vec<Switch> {
        if self.idle {
            self.idle = false;
            if let Some(b) = self.idle_began.take() {
                self.forecast.observe(b, now);
            }
            // At every idle period a step outlasts: the daemon's
            // per-period lines are at debug level, and
            // `JobReport::overruns` counts them.
            if let Some(o) = self.sch.on_idle_end(now) {
                debug!(
                    "disk {}: job {} finishes its step ({} more) although the disk is busy",
                    self.key,
                    self.names[self.admitted[o.job]],
                    o.until.saturating_sub(now).approx()
                );
            }
        }
        self.advance(now)
    }

    /// Job `i`'s command (configuration index) exited at `now`: its work
    /// for its window is done. It is credited the time its command ran,
    /// not the rest of its step, which goes to the next job at once; it
    /// runs again in its next window (`Scheduler::on_job_done`). Its
    /// command is gone, so no pause is ordered for it.
    pub fn on_job_done(&mut self, i: usize, now: Nanos) -> Vec<Switch> {
        let Some(j) = self.admitted.iter().position(|&a| a == i) else {
            return Vec::new();
        };
        if let Some((c, since)) = self.current.filter(|&(c, _)| c == j) {
            self.idle_s[c] += now.saturating_sub(since).as_secs_f64();
            self.current = None;
        }
        self.sch.on_job_done(j, now);
        self.advance(now)
    }

    /// When [`JobsRun::advance`] has something to do next.
    pub fn next_deadline(&self) -> Option<Nanos> {
        self.sch.next_deadline()
    }

    /// Runs the scheduler's deadlines up to `now`, logs windows newly
    /// missed, and says which commands to switch.
    pub fn advance(&mut self, now: Nanos) -> Vec<Switch> {
        // Each deadline either ends a step, closes a window or hands out a
        // step, so this ends; the bound is a guard, not a limit.
        for _ in 0..10_000 {
            match self.sch.next_deadline() {
                Some(d) if d <= now => {
                    self.sch.on_deadline(d);
                }
                _ => break,
            }
        }
        if self.sch.running().is_none() {
            // Closes the windows that ended while the disk was busy (the
            // scheduler only advances its clock when called).
            self.sch.finish(now);
        }
        for (j, r) in self.sch.reports().iter().enumerate() {
            let missed = r.windows - r.met;
            if missed > self.missed[j] {
                warn!(
                    "disk {}: job {} is late: it got less than its reservation {} in {} window(s) so far (worst shortfall {})",
                    self.key, r.name, r.request, missed, r.worst_shortfall
                );
                self.missed[j] = missed;
            }
        }
        if self.idle_began.is_none() {
            // Outside idle periods the forecast can close its hours.
            self.forecast.finish(now);
            self.recheck();
        }
        let want = self.sch.running().map(|s| s.job);
        if want == self.current.map(|c| c.0) {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(2);
        if let Some((j, since)) = self.current.take() {
            self.idle_s[j] += now.saturating_sub(since).as_secs_f64();
            out.push(Switch::Stop(self.admitted[j]));
        }
        if let Some(j) = want {
            self.current = Some((j, now));
            out.push(Switch::Start(self.admitted[j]));
        }
        out
    }

    /// After each full day observed, submits the jobs again against the
    /// observed forecast and logs how that differs from the grants.
    fn recheck(&mut self) {
        let days = self.forecast.hours_sampled() / HOURS_PER_DAY as u64;
        if days <= self.days_checked {
            return;
        }
        self.days_checked = days;
        let decisions = submit_all(&self.specs, self.forecast.capacity(0.0), self.best_effort);
        for (i, d) in decisions.iter().enumerate() {
            let fits = matches!(d, Ok(Decision::Granted { .. }));
            let admitted = self.admitted.contains(&i);
            let name = &self.names[i];
            let key = &self.key;
            match (admitted, d) {
                (true, Ok(Decision::Refused { shortfalls })) => warn!(
                    "disk {key}: job {name} does not fit the idle time observed over {days} day(s): {}; it keeps its grant until the configuration changes (lower its reserve or assume_idle and reload)",
                    refusal_text(shortfalls)
                ),
                (false, Ok(Decision::Granted { request, .. })) => info!(
                    "disk {key}: job {name}, refused at start, would fit the idle time observed over {days} day(s) with {request} (raise assume_idle and reload to admit it)"
                ),
                _ => info!(
                    "disk {key}: job {name}: the idle time observed over {days} day(s) agrees with its admission ({})",
                    if fits { "fits" } else { "refused" }
                ),
            }
            self.fits_observed[i] = Some(fits);
        }
    }

    /// Per configured job, at `now`.
    pub fn gauges(&self, now: Nanos) -> Vec<JobGauge> {
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let s = self.admitted.iter().position(|&a| a == i);
                let running = match (s, self.current) {
                    (Some(j), Some((c, since))) if c == j => {
                        now.saturating_sub(since).as_secs_f64()
                    }
                    _ => 0.0,
                };
                JobGauge {
                    name: name.clone(),
                    admitted: s.is_some(),
                    idle_s: s.map_or(0.0, |j| self.idle_s[j]) + running,
                    missed: s.map_or(0, |j| self.missed[j]),
                    fits_observed: self.fits_observed[i],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_reserve::plan::parse_job;

    fn job(text: &str) -> JobConfig {
        let spec = parse_job(text, None).unwrap();
        JobConfig {
            name: spec.name.clone(),
            argv: vec!["/bin/true".into()],
            reserve: text.split_once(':').map_or("", |(_, r)| r).to_string(),
            spec,
        }
    }

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    #[test]
    fn admission_refuses_what_does_not_fit_the_assumed_capacity() {
        // 10 min of idle time an hour, 10 % kept: 9 min can be reserved.
        let jobs = [job("a:5m/hour"), job("b:5m/hour,3m/hour"), job("c:2m/hour")];
        let r = JobsRun::admit("d", &jobs, 0.1, s(600), s(0), s(0));
        let g = r.gauges(s(0));
        assert!(g[0].admitted);
        // b gets its second choice; c no longer fits (5 + 3 + 2 > 9).
        assert!(g[1].admitted);
        assert!(!g[2].admitted);
        assert_eq!(r.sch.reports()[1].request.amount, s(180));
    }

    #[test]
    fn a_refusal_says_its_shortfall_as_people_read_durations() {
        // 40 min an hour, 10 % kept: 14.4 h a day; 20 h is 5.6 h short.
        let jobs = [job("backup:20h/day")];
        let d = admission(&jobs, 0.1, s(2400));
        assert_eq!(
            decision_text(&jobs[0], &d[0]),
            "job backup refused, it does not fit beside the jobs admitted before it: 20h/day is short by 5h36m a day (worst: 5h36m in the window from 00:00)"
        );
    }

    #[test]
    fn both_jobs_get_idle_time_and_switches_alternate() {
        let jobs = [job("a:1m/hour"), job("b:1m/hour")];
        let mut r = JobsRun::admit("d", &jobs, 0.1, s(1800), s(0), s(0));
        let mut switches = r.on_idle_begin(s(10));
        // Polls every second for five minutes of idle time.
        for t in 11..310 {
            switches.extend(r.advance(s(t)));
        }
        switches.extend(r.on_idle_end(s(310)));
        assert_eq!(
            switches,
            vec![
                Switch::Start(0),
                Switch::Stop(0),
                Switch::Start(1),
                Switch::Stop(1)
            ]
        );
        let g = r.gauges(s(400));
        assert_eq!(g[0].idle_s, 60.0);
        assert_eq!(g[1].idle_s, 60.0);
        assert!(!r.running());
    }

    #[test]
    fn an_arrival_pauses_the_running_job_and_a_missed_window_is_counted() {
        let jobs = [job("a:10m/hour")];
        let mut r = JobsRun::admit("d", &jobs, 0.0, s(3600), s(0), s(0));
        assert_eq!(r.on_idle_begin(s(0)), vec![Switch::Start(0)]);
        assert!(r.running());
        assert_eq!(r.on_idle_end(s(60)), vec![Switch::Stop(0)]);
        // The hour ends with 1 min of 10 obtained: one missed window.
        assert!(r.advance(s(3601)).is_empty());
        let g = r.gauges(s(3601));
        assert_eq!(g[0].missed, 1);
        assert_eq!(g[0].idle_s, 60.0);
    }

    #[test]
    fn a_day_of_observed_idle_time_rechecks_the_grants() {
        // Assumed: 30 min an hour. Observed: 2 min an hour, of which 10 %
        // is kept: a (5 min) no longer fits, b (1 min) does.
        let jobs = [job("a:5m/hour"), job("b:1m/hour")];
        let mut r = JobsRun::admit("d", &jobs, 0.1, s(1800), s(0), s(0));
        assert!(r.gauges(s(0)).iter().all(|g| g.admitted));
        for h in 0..24 {
            let t = h * 3600;
            r.on_idle_begin(s(t));
            r.advance(s(t + 60));
            r.on_idle_end(s(t + 120));
            r.advance(s(t + 1800));
            assert!(
                r.gauges(s(t)).iter().all(|g| g.fits_observed.is_none()),
                "no verdict before a full day ({h} h)"
            );
        }
        r.advance(s(86_400));
        let g = r.gauges(s(86_400));
        assert_eq!(g[0].fits_observed, Some(false));
        assert_eq!(g[1].fits_observed, Some(true));
        // Grants are kept. Overcommitted, a (furthest behind) takes every
        // idle minute and still misses, and b starves: both are late
        // every hour, which is what the warning is for.
        assert!(g[0].admitted && g[1].admitted);
        assert_eq!((g[0].missed, g[1].missed), (24, 24));
        assert_eq!(g[0].idle_s, 24.0 * 120.0);
    }
}
