//! `lull plan` as a library (issue 19): forecast a trace's idle capacity,
//! admit jobs' reservations against it, and replay the trace scheduling the
//! admitted jobs in its idle periods.
//!
//! Three passes over one [`Timeline`], all sans-IO and deterministic:
//!
//! 1. **Forecast**: every idle period goes to an [`IdleForecast`] with the
//!    jobs' step lengths (and zero, the interruptible ladder rung that
//!    measures the whole usable idle time). This is the *measured* idle
//!    capacity: the planner sees the whole trace first, as an admin who
//!    plans from last week's history would.
//! 2. **Admission**: jobs are submitted in the order given (their rank),
//!    each with its ranked list of requests, to an [`Admission`]
//!    controller planning on `mean − k·sd` per hour (`k = sigmas`) minus
//!    the best-effort share.
//! 3. **Schedule**: the timeline is replayed through a [`Scheduler`] with
//!    the admitted jobs. Foreground timing is the trace's: jobs run only in
//!    idle time, and a non-interruptible step that is still running at an
//!    arrival delays every request that arrives before it ends, each by
//!    the time left of the step (the requests are then served in their
//!    recorded order; queueing behind one another is not modelled, so this
//!    is a lower bound on the delay).
//!
//! Job syntax ([`parse_job`]): `NAME:REQ[,REQ...]` with
//! `REQ = AMOUNT/PERIOD[:step=S][:extra]`, for example
//! `scrub:2h/day:step=60s,1h/day:step=60s` (two hours a night in
//! one-minute steps, or one hour if two do not fit) or `trim:5m/hour`.
//! `PERIOD` is `hour`, `day` or a whole number of hours dividing a day
//! (`6h`); durations may be relative to the device's break-even time
//! (`step=B`); `extra` lets the job take unreserved idle time once every
//! reservation is met.

use lull_core::event::Timeline;
use lull_core::time::{Nanos, parse_duration_in};

use crate::forecast::{Estimate, HOUR, HOURS_PER_DAY, IdleForecast};
use crate::reserve::{Admission, Decision, Request, ReserveError};
use crate::schedule::{Job, JobReport, Scheduler};

/// A job as submitted: its name, ranked requests and whether it wants
/// unreserved time too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// Its name.
    pub name: String,
    /// Acceptable requests, best first.
    pub ranked: Vec<Request>,
    /// Takes unreserved idle time once every reservation is met.
    pub extra: bool,
}

/// Parses a job (see the [module docs](self)); `breakeven` resolves `B`
/// in durations.
pub fn parse_job(text: &str, breakeven: Option<Nanos>) -> Result<JobSpec, String> {
    let (name, rest) = text.split_once(':').ok_or_else(|| {
        format!("job {text:?}: write NAME:AMOUNT/PERIOD[:step=S], e.g. scrub:2h/day:step=60s")
    })?;
    if name.is_empty() {
        return Err(format!("job {text:?}: the name is empty"));
    }
    let mut ranked = Vec::new();
    let mut extra = false;
    for req in rest.split(',') {
        let mut parts = req.split(':');
        let head = parts.next().unwrap_or_default();
        let (amount, period) = head.split_once('/').ok_or_else(|| {
            format!("job {name}: request {req:?} needs AMOUNT/PERIOD, e.g. 2h/day")
        })?;
        let amount =
            parse_duration_in(amount, breakeven).map_err(|e| format!("job {name}: amount: {e}"))?;
        let period_hours = match period {
            "hour" => 1,
            "day" => 24,
            p => {
                let d = parse_duration_in(p, breakeven)
                    .map_err(|e| format!("job {name}: period: {e}"))?;
                let h = HOUR.as_nanos();
                if d.as_nanos() % h != 0 || d.as_nanos() == 0 || 24 % (d.as_nanos() / h) != 0 {
                    return Err(format!(
                        "job {name}: period {p}: must be hour, day or a whole number of hours dividing a day"
                    ));
                }
                (d.as_nanos() / h) as u32
            }
        };
        let mut step = Nanos::ZERO;
        let mut step_given = false;
        for opt in parts {
            if opt == "extra" {
                extra = true;
            } else if let Some(s) = opt.strip_prefix("step=") {
                step = parse_duration_in(s, breakeven)
                    .map_err(|e| format!("job {name}: step: {e}"))?;
                step_given = true;
            } else {
                return Err(format!(
                    "job {name}: unknown option {opt:?} (step=S or extra)"
                ));
            }
        }
        // Checked here, where the job is named (the admission test would
        // refuse them too, without the job's name).
        let period = HOUR * u64::from(period_hours);
        if amount == Nanos::ZERO || amount > period {
            return Err(format!(
                "job {name}: request {req:?}: the amount must be more than zero and at most the period ({})",
                period.approx()
            ));
        }
        if step_given && step == Nanos::ZERO {
            return Err(format!(
                "job {name}: step=0s: a step must be longer than zero (leave step out for a job that can stop at any moment)"
            ));
        }
        if step > amount {
            return Err(format!(
                "job {name}: request {req:?}: the step ({}) is longer than the amount ({}): no step fits",
                step.approx(),
                amount.approx()
            ));
        }
        ranked.push(Request {
            period_hours,
            amount,
            step,
        });
    }
    Ok(JobSpec {
        name: name.to_string(),
        ranked,
        extra,
    })
}

/// Settings of a plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanOptions {
    /// How long the device must have been idle before a job starts.
    pub wait: Nanos,
    /// Share of the forecast idle time kept for unreserved work.
    pub best_effort: f64,
    /// Plan on `mean − sigmas·sd` per hour.
    pub sigmas: f64,
    /// Where the observation ends (default: the timeline's last
    /// completion); a built-in workload of 24 h ends at 24 h, so its last
    /// hour and window count.
    pub end: Option<Nanos>,
}

/// The decision taken for one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobDecision {
    /// The job as submitted.
    pub spec: JobSpec,
    /// Admitted or refused.
    pub decision: Decision,
}

/// Foreground delay caused by one job's steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delay {
    /// Requests that arrived while one of its steps ran.
    pub requests: u64,
    /// Their total delay.
    pub total: Nanos,
    /// The longest.
    pub max: Nanos,
}

/// The outcome of [`plan`].
#[derive(Clone, Debug)]
pub struct PlanReport {
    /// The forecast learned in the first pass.
    pub forecast: IdleForecast,
    /// Per job, in submission order.
    pub decisions: Vec<JobDecision>,
    /// Per admitted job, in admission order: what the schedule gave it.
    pub jobs: Vec<JobReport>,
    /// Per admitted job: the foreground delay its steps caused.
    pub delays: Vec<Delay>,
    /// Days observed (the end over 24 h).
    pub days: f64,
}

impl PlanReport {
    /// The measured usable idle time of a whole day for jobs of `step`.
    pub fn day_capacity(&self, step: Nanos) -> Option<Estimate> {
        self.forecast.window(step, 0, HOURS_PER_DAY)
    }
}

/// Calls the scheduler's deadlines while `due` says they are.
fn drive(sch: &mut Scheduler, due: impl Fn(Nanos) -> bool) {
    while let Some(d) = sch.next_deadline().filter(|&d| due(d)) {
        sch.on_deadline(d);
    }
}

/// The first pass alone: the usable idle time of `timeline` per hour of
/// day for jobs of the given steps (zero is always included), observed
/// from time 0 to `end`.
pub fn measure(timeline: &Timeline, steps: &[Nanos], wait: Nanos, end: Nanos) -> IdleForecast {
    let mut ladder = vec![Nanos::ZERO];
    ladder.extend_from_slice(steps);
    let mut forecast = IdleForecast::new(wait, &ladder);
    forecast.begin(Nanos::ZERO, timeline.clock());
    for p in timeline.idle_periods() {
        forecast.observe(p.start, p.end);
    }
    forecast.finish(end);
    forecast
}

/// Runs the three passes of the [module docs](self).
pub fn plan(
    timeline: &Timeline,
    jobs: &[JobSpec],
    opts: &PlanOptions,
) -> Result<PlanReport, ReserveError> {
    let clock = timeline.clock();
    let end = opts
        .end
        .unwrap_or_else(|| timeline.end().unwrap_or(Nanos::ZERO))
        .max(timeline.end().unwrap_or(Nanos::ZERO));
    let mut steps = vec![Nanos::ZERO];
    steps.extend(jobs.iter().flat_map(|j| j.ranked.iter().map(|r| r.step)));
    let forecast = measure(timeline, &steps, opts.wait, end);

    let mut admission = Admission::new(forecast.capacity(opts.sigmas), opts.best_effort)?;
    let mut decisions = Vec::with_capacity(jobs.len());
    for j in jobs {
        let decision = admission.submit(&j.name, &j.ranked)?;
        decisions.push(JobDecision {
            spec: j.clone(),
            decision,
        });
    }
    let admitted: Vec<Job> = admission
        .admitted()
        .iter()
        .map(|a| Job {
            name: a.name.clone(),
            request: a.request,
            extra: jobs.iter().any(|j| j.name == a.name && j.extra),
        })
        .collect();

    let arrivals: Vec<Nanos> = timeline
        .events()
        .iter()
        .filter(|e| e.is_arrival())
        .map(|e| e.time)
        .collect();
    let mut delays = vec![Delay::default(); admitted.len()];
    let mut sch = Scheduler::new(admitted, opts.wait, Nanos::ZERO, clock);
    for p in timeline.idle_periods() {
        drive(&mut sch, |d| d <= p.start);
        sch.on_idle_begin(p.start);
        drive(&mut sch, |d| d < p.end);
        if let Some(o) = sch.on_idle_end(p.end) {
            let lo = arrivals.partition_point(|&t| t < p.end);
            let hi = arrivals.partition_point(|&t| t < o.until);
            let d = &mut delays[o.job];
            for &t in &arrivals[lo..hi] {
                let wait = o.until - t;
                d.requests += 1;
                d.total += wait;
                d.max = d.max.max(wait);
            }
        }
    }
    drive(&mut sch, |d| d <= end);
    sch.finish(end);
    Ok(PlanReport {
        forecast,
        decisions,
        jobs: sch.reports(),
        delays,
        days: end.as_secs_f64() / 86_400.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request as Io};

    #[test]
    fn parses_jobs() {
        let j = parse_job(
            "scrub:2h/day:step=60s,1h/day:step=B",
            Some(Nanos::from_secs(8)),
        )
        .unwrap();
        assert_eq!(j.name, "scrub");
        assert_eq!(
            j.ranked,
            vec![
                Request {
                    period_hours: 24,
                    amount: Nanos::from_secs(7200),
                    step: Nanos::from_secs(60)
                },
                Request {
                    period_hours: 24,
                    amount: Nanos::from_secs(3600),
                    step: Nanos::from_secs(8)
                },
            ]
        );
        // Named with the job, not left to the admission test.
        for (bad, says) in [
            (
                "scrub:0s/day",
                "job scrub: request \"0s/day\": the amount must be more than zero",
            ),
            ("scrub:25h/day", "at most the period (24h)"),
            ("trim:90m/hour", "at most the period (1h)"),
            (
                "scrub:2h/day:step=0s",
                "job scrub: step=0s: a step must be longer than zero",
            ),
            (
                "scrub:2h/day:step=3h",
                "the step (3h) is longer than the amount (2h): no step fits",
            ),
        ] {
            let e = parse_job(bad, None).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let t = parse_job("trim:5m/hour:extra", None).unwrap();
        assert!(t.extra);
        assert_eq!(t.ranked[0].period_hours, 1);
        assert_eq!(
            parse_job("x:1m/6h", None).unwrap().ranked[0].period_hours,
            6
        );
        for bad in [
            "scrub",
            ":1h/day",
            "a:1h",
            "a:1h/5h",
            "a:1h/day:stp=1s",
            "a:xx/day",
        ] {
            assert!(parse_job(bad, None).is_err(), "{bad}");
        }
    }

    /// Two days; each has one busy request per minute from 08:00 to 18:00
    /// and nothing else, and the trace runs from midnight to midnight.
    fn office_days() -> Timeline {
        let ms = Nanos::from_millis;
        let mut reqs = vec![
            Io::new(Nanos::ZERO, ms(10), Op::Read, 0, 4096),
            Io::new(ms(172_799_000), ms(172_799_010), Op::Read, 0, 4096),
        ];
        for day in 0..2u64 {
            for m in 0..600u64 {
                let t = Nanos::from_secs(day * 86_400 + 8 * 3600 + m * 60);
                reqs.push(Io::new(t, t + ms(10), Op::Read, 0, 4096));
            }
        }
        Timeline::from_requests(&reqs)
    }

    #[test]
    fn no_step_starts_while_a_request_is_outstanding_and_delays_are_counted() {
        let tl = office_days();
        let jobs = vec![
            parse_job("scrub:3h/day:step=45s", None).unwrap(),
            parse_job("trim:5m/hour", None).unwrap(),
        ];
        let opts = PlanOptions {
            wait: Nanos::from_secs(5),
            best_effort: 0.1,
            sigmas: 0.0,
            end: Some(Nanos::from_secs(2 * 86_400)),
        };
        let r = plan(&tl, &jobs, &opts).unwrap();
        // Trim needs 5 min in every hour; the office hours have 60 s
        // gaps with 55 s usable after the 5 s wait: 55 min per hour.
        assert!(
            r.decisions
                .iter()
                .all(|d| matches!(d.decision, Decision::Granted { .. })),
            "{:?}",
            r.decisions
        );
        for j in &r.jobs {
            assert_eq!(j.met, j.windows, "{j:?}");
        }
        // The scrub waits 45 s into a gap, so it never starts in the
        // office gaps, and its 3 h fit in the night: no delay.
        assert_eq!(r.delays.iter().map(|d| d.requests).sum::<u64>(), 0);
    }

    #[test]
    fn an_overrunning_step_delays_the_next_requests() {
        let tl = office_days();
        let jobs = vec![parse_job("big:20h/day:step=100s", None).unwrap()];
        let opts = PlanOptions {
            wait: Nanos::from_secs(5),
            best_effort: 0.0,
            sigmas: 0.0,
            end: Some(Nanos::from_secs(2 * 86_400)),
        };
        let r = plan(&tl, &jobs, &opts).unwrap();
        // It fits only in the 14 night hours with 100 s steps: refused.
        let Decision::Refused { shortfalls } = &r.decisions[0].decision else {
            panic!("{:?}", r.decisions[0])
        };
        assert!(shortfalls[0].1.per_day > Nanos::ZERO);
        // A 13-hour scrub with 100 s steps fits, and its last step of each
        // night runs into 08:00.
        let jobs = vec![parse_job("scrub:13h/day:step=100s", None).unwrap()];
        let r = plan(&tl, &jobs, &opts).unwrap();
        assert!(matches!(r.decisions[0].decision, Decision::Granted { .. }));
        assert!(r.delays[0].requests >= 1, "{:?}", r.delays);
        assert!(r.delays[0].max <= Nanos::from_secs(100));
    }
}
