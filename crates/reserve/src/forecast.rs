//! Idle capacity forecast: how much *usable* idle time each hour of the day
//! is likely to bring, for a job of a given granularity (issue 19).
//!
//! A background job (a scrub, TRIM, a backup, LFS cleaning) can only use an
//! idle period if its steps fit in it (§2.4 of *Idleness is not sloth*): a
//! job whose non-interruptible steps take 30 s gains nothing from 2 s gaps,
//! and in a 70 s gap it completes two steps, not 70 s of work. So the
//! forecast is kept per *step length* `s`, on a ladder fixed when it is
//! built, and counts, for an idle period `[a, b)`:
//!
//! - nothing for the first `w = max(wait, s)` ([`start_wait`]: jobs are
//!   started only once the device has been idle for the start detector's
//!   timeout `wait` and for at least one step, see [`crate::schedule`]);
//! - then `k·s` with `k = ⌊(b − a − w)/s⌋` whole steps, as the interval
//!   `[a + w, a + w + k·s)`; a step of zero means an interruptible
//!   job, which can use all of `[a + wait, b)`.
//!
//! That is the time the job can use *without delaying any foreground
//! request*; a job that starts one more step than fits delays the next
//! arrival, which the lab counts separately.
//!
//! **Per hour of day.** The usable interval is split at hour boundaries and
//! summed per absolute hour; when an hour is over, its sum becomes one
//! sample of its hour-of-day slot (`0..24`). Hours are read on the wall
//! clock, [`Context::clock`] plus `now` (UTC), when the driver knows it;
//! otherwise hours count from time 0 of the trace or the daemon, which is
//! then "hour 0". Only hours observed from their beginning count, so a
//! daemon started at 14:20 has no sample for 14:00 until the next day.
//!
//! **Uncertainty.** Each slot keeps the running mean and variance of its
//! samples (Welford's algorithm): the estimate for a future hour is the
//! mean with its standard deviation across days; for a window of several
//! hours the means add and, taking the hours as independent, so do the
//! variances. A planner that wants a safety margin reserves against
//! `mean − k·sd` ([`Estimate::lower`]).
//!
//! **Cost.** Memory is `24 × steps` running statistics, whatever the length
//! of the trace; each idle period costs `O(steps × hours it spans)`.
//! Deterministic: no randomness, no clock of its own.
//!
//! [`Forecasting`] wraps any detector network so that the forecast learns
//! from the idle periods the network is told about, and shows through the
//! network's `gauges()`.

use lull_core::component::{Context, Detector, Prediction};
use lull_core::event::Event;
use lull_core::time::Nanos;

use crate::hours::start_wait;
pub use crate::hours::{HOUR, HOURS_PER_DAY};

/// Running mean and variance (Welford), O(1) memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Welford {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Welford {
    /// Adds a sample.
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// The mean (0 without samples).
    pub fn mean(&self) -> f64 {
        self.mean
    }
    /// The sample variance (0 with fewer than two samples).
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            self.m2 / (self.n - 1) as f64
        }
    }
}

/// Usable idle seconds expected in a future interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Expected usable idle time, seconds.
    pub mean_s: f64,
    /// Its standard deviation across the observed days, seconds.
    pub sd_s: f64,
    /// The fewest samples any hour of the interval has (0: no data).
    pub samples: u64,
}

impl Estimate {
    /// `mean − k·sd`, never below zero: the capacity to plan on with a
    /// margin of `k` standard deviations.
    pub fn lower(&self, k: f64) -> f64 {
        (self.mean_s - k * self.sd_s).max(0.0)
    }
}

/// The forecast: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct IdleForecast {
    wait: Nanos,
    steps: Vec<Nanos>,
    /// Per step, per hour-of-day slot.
    stats: Vec<[Welford; HOURS_PER_DAY]>,
    /// Per step, usable nanoseconds in the absolute hour `hour`.
    acc: Vec<u64>,
    /// The absolute hour (wall or relative) being accumulated.
    hour: Option<u64>,
    /// Hours that began before this (absolute, ns) are not sampled.
    observed_from: Option<u64>,
    clock: Option<Nanos>,
    idle_since: Option<Nanos>,
    periods: u64,
}

impl IdleForecast {
    /// A forecast for jobs with the given step lengths (zero: an
    /// interruptible job), which start only after `wait` of idleness.
    /// Steps are deduplicated and sorted.
    pub fn new(wait: Nanos, steps: &[Nanos]) -> Self {
        let mut steps = steps.to_vec();
        steps.sort_unstable();
        steps.dedup();
        IdleForecast {
            wait,
            stats: vec![[Welford::default(); HOURS_PER_DAY]; steps.len()],
            acc: vec![0; steps.len()],
            steps,
            hour: None,
            observed_from: None,
            clock: None,
            idle_since: None,
            periods: 0,
        }
    }

    /// The step ladder, ascending.
    pub fn steps(&self) -> &[Nanos] {
        &self.steps
    }
    /// The start wait.
    pub fn wait(&self) -> Nanos {
        self.wait
    }
    /// Idle periods observed.
    pub fn periods(&self) -> u64 {
        self.periods
    }
    /// Hours sampled so far (complete hours observed from their start).
    pub fn hours_sampled(&self) -> u64 {
        self.stats
            .first()
            .map_or(0, |row| row.iter().map(Welford::count).sum())
    }

    /// How many of the day's hours have at least one complete hour
    /// sampled: below [`HOURS_PER_DAY`], the hours never seen count as no
    /// idle time in a plan.
    pub fn hours_of_day_seen(&self) -> usize {
        self.stats
            .first()
            .map_or(0, |row| row.iter().filter(|w| w.count() > 0).count())
    }

    /// Starts observing at `now` with wall clock `clock` at time 0 (the
    /// first call to any observer does this implicitly).
    pub fn begin(&mut self, now: Nanos, clock: Option<Nanos>) {
        if self.observed_from.is_none() {
            self.clock = clock;
            let abs = self.abs(now);
            self.observed_from = Some(abs);
            self.hour = Some(abs / HOUR.as_nanos());
        }
    }

    fn abs(&self, t: Nanos) -> u64 {
        self.clock
            .unwrap_or(Nanos::ZERO)
            .as_nanos()
            .saturating_add(t.as_nanos())
    }

    /// The hour-of-day slot of relative time `t` (after [`Self::begin`]).
    pub fn slot_of(&self, t: Nanos) -> usize {
        ((self.abs(t) / HOUR.as_nanos()) % HOURS_PER_DAY as u64) as usize
    }

    /// The device became idle at `ctx.now`.
    pub fn on_idle_begin(&mut self, ctx: &Context) {
        self.begin(ctx.now, ctx.clock);
        self.idle_since = Some(ctx.now);
    }

    /// The idle period that began at `began` ended at `ctx.now`.
    pub fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.begin(began, ctx.clock);
        self.idle_since = None;
        self.observe(began, ctx.now);
    }

    /// Records one idle period `[start, end)` directly (a replay driver
    /// that walks a timeline's idle periods).
    pub fn observe(&mut self, start: Nanos, end: Nanos) {
        self.begin(start, None);
        self.periods += 1;
        let a = self.abs(start);
        let b = self.abs(end);
        let h = HOUR.as_nanos();
        // Per step, the usable interval [from, to).
        let spans: Vec<(u64, u64)> = self
            .steps
            .iter()
            .map(|&step| {
                let s = step.as_nanos();
                let w = start_wait(self.wait, step).as_nanos();
                let avail = (b.saturating_sub(a)).saturating_sub(w);
                let usable = avail.checked_div(s).map_or(avail, |k| k * s);
                (a + w, a + w + usable)
            })
            .collect();
        // Only the spans that hold usable time move the hour on: a step
        // longer than the period has an empty span at `a + wait`, maybe in
        // a later hour, and rolling to it early would credit the hour's
        // next periods to the wrong hour (or past the end) for every step,
        // so one job's step changed another's capacity.
        let live = || spans.iter().filter(|s| s.1 > s.0);
        let first = live().map(|s| s.0).min().unwrap_or(a);
        let last = live().map(|s| s.1).max().unwrap_or(a);
        if last > first {
            for hour in first / h..=(last - 1) / h {
                self.roll_to(hour);
                let (lo, hi) = (hour * h, (hour + 1) * h);
                for (i, &(from, to)) in spans.iter().enumerate() {
                    self.acc[i] += to.min(hi).saturating_sub(from.max(lo));
                }
            }
        }
        self.roll_to(b / h);
    }

    /// Closes every hour before absolute hour `hour`.
    fn roll_to(&mut self, hour: u64) {
        let Some(mut cur) = self.hour else {
            self.hour = Some(hour);
            return;
        };
        let h = HOUR.as_nanos();
        while cur < hour {
            let sampled = self.observed_from.is_some_and(|f| cur * h >= f);
            let slot = (cur % HOURS_PER_DAY as u64) as usize;
            for i in 0..self.steps.len() {
                if sampled {
                    self.stats[i][slot].push(self.acc[i] as f64 / 1e9);
                }
                self.acc[i] = 0;
            }
            cur += 1;
        }
        self.hour = Some(cur);
    }

    /// The observation ended at `end`: every hour completed by then is
    /// sampled (the partial last hour is not).
    pub fn finish(&mut self, end: Nanos) {
        self.begin(end, None);
        let e = self.abs(end);
        self.roll_to(e / HOUR.as_nanos());
    }

    fn index(&self, step: Nanos) -> Option<usize> {
        self.steps.binary_search(&step).ok()
    }

    /// The estimate for hour-of-day `slot` and a step on the ladder
    /// (`None` for a step not on it).
    pub fn hour(&self, step: Nanos, slot: usize) -> Option<Estimate> {
        let w = self.stats[self.index(step)?][slot % HOURS_PER_DAY];
        Some(Estimate {
            mean_s: w.mean(),
            sd_s: w.variance().sqrt(),
            samples: w.count(),
        })
    }

    /// The estimate for `hours` consecutive hours from slot `first`
    /// (wrapping at midnight), hours taken as independent.
    pub fn window(&self, step: Nanos, first: usize, hours: usize) -> Option<Estimate> {
        let i = self.index(step)?;
        let (mut mean, mut var, mut samples) = (0.0, 0.0, u64::MAX);
        for k in 0..hours {
            let w = self.stats[i][(first + k) % HOURS_PER_DAY];
            mean += w.mean();
            var += w.variance();
            samples = samples.min(w.count());
        }
        Some(Estimate {
            mean_s: mean,
            sd_s: var.sqrt(),
            samples: if hours == 0 { 0 } else { samples },
        })
    }

    /// The usable time per hour-of-day to plan on, `mean − k·sd` per hour,
    /// for every step of the ladder: the input of admission control.
    pub fn capacity(&self, k: f64) -> crate::reserve::Capacity {
        let table = self
            .steps
            .iter()
            .map(|&s| {
                let mut row = [Nanos::ZERO; HOURS_PER_DAY];
                for (slot, v) in row.iter_mut().enumerate() {
                    let e = self.hour(s, slot).unwrap_or_default();
                    *v = Nanos::from_secs_f64(e.lower(k));
                }
                (s, row)
            })
            .collect();
        crate::reserve::Capacity::new(table)
    }

    /// Per step: the whole day's estimate, and each hour's mean and
    /// standard deviation, in seconds.
    pub fn gauges(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        for &s in &self.steps {
            let tag = format!("forecast.step={}", s);
            if let Some(d) = self.window(s, 0, HOURS_PER_DAY) {
                out.push((format!("{tag}.day.mean_s"), d.mean_s));
                out.push((format!("{tag}.day.sd_s"), d.sd_s));
            }
            for slot in 0..HOURS_PER_DAY {
                if let Some(e) = self.hour(s, slot) {
                    out.push((format!("{tag}.h{slot:02}.mean_s"), e.mean_s));
                    out.push((format!("{tag}.h{slot:02}.sd_s"), e.sd_s));
                }
            }
        }
        out
    }
}

/// A detector network that also feeds an [`IdleForecast`] with the idle
/// periods it is told about; its gauges are the network's and the
/// forecast's. Predictions are the network's, unchanged.
#[derive(Debug)]
pub struct Forecasting<D> {
    inner: D,
    forecast: IdleForecast,
}

impl<D: Detector> Forecasting<D> {
    /// Wraps `inner`.
    pub fn new(inner: D, forecast: IdleForecast) -> Self {
        Forecasting { inner, forecast }
    }
    /// The forecast so far.
    pub fn forecast(&self) -> &IdleForecast {
        &self.forecast
    }
    /// The wrapped network.
    pub fn inner(&self) -> &D {
        &self.inner
    }
}

impl<D: Detector> Detector for Forecasting<D> {
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        self.inner.on_event(ev, ctx, out);
    }
    fn wants_events(&self) -> bool {
        self.inner.wants_events()
    }
    fn gauges(&self) -> Vec<(String, f64)> {
        let mut g = self.inner.gauges();
        g.extend(self.forecast.gauges());
        g
    }
    // Every idle period must reach the forecast: no quiet_below shortcut.
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.forecast.on_idle_begin(ctx);
        self.inner.on_idle_begin(ctx, out);
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.forecast.on_idle_end(ctx, began);
        self.inner.on_idle_end(ctx, began);
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.inner.next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        self.inner.on_deadline(ctx, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::prelude::*;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    #[test]
    fn counts_whole_steps_after_the_wait() {
        let mut f = IdleForecast::new(s(5), &[Nanos::ZERO, s(30)]);
        f.begin(Nanos::ZERO, None);
        // 100 s of idle: 95 usable for the fine job; the 30 s job waits
        // 30 s, then 2 steps of 30 s = 60 s.
        f.observe(s(10), s(110));
        // 20 s: 15 usable for the fine job, nothing for 30 s steps.
        f.observe(s(200), s(220));
        f.finish(s(3600));
        let fine = f.hour(Nanos::ZERO, 0).unwrap();
        let coarse = f.hour(s(30), 0).unwrap();
        assert_eq!(fine.mean_s, 110.0);
        assert_eq!(coarse.mean_s, 60.0);
        assert_eq!(fine.samples, 1);
        assert_eq!(f.hours_sampled(), 1);
        assert!(f.hour(s(7), 0).is_none());
    }

    #[test]
    fn splits_at_hour_boundaries_and_learns_across_days() {
        let mut f = IdleForecast::new(Nanos::ZERO, &[Nanos::ZERO]);
        f.begin(Nanos::ZERO, None);
        for day in 0..3u64 {
            let base = day * 86_400;
            // 01:30 to 02:10 every day, plus a longer 03:00 hour on day 2.
            f.observe(s(base + 5400), s(base + 7800));
            if day == 2 {
                f.observe(s(base + 10_800), s(base + 14_400));
            }
        }
        f.finish(s(3 * 86_400));
        let h1 = f.hour(Nanos::ZERO, 1).unwrap();
        let h2 = f.hour(Nanos::ZERO, 2).unwrap();
        let h3 = f.hour(Nanos::ZERO, 3).unwrap();
        assert_eq!((h1.mean_s, h1.sd_s, h1.samples), (1800.0, 0.0, 3));
        assert_eq!(h2.mean_s, 600.0);
        assert_eq!(h3.mean_s, 1200.0);
        // Samples 0, 0, 3600: sample variance (2·1200² + 2400²)/2.
        assert!((h3.sd_s - 4.32e6f64.sqrt()).abs() < 1e-6);
        let day = f.window(Nanos::ZERO, 0, 24).unwrap();
        assert_eq!(day.mean_s, 3600.0);
        assert_eq!(day.samples, 3);
    }

    proptest::proptest! {
        #![proptest_config(lull_testkit::cases(256))]
        /// A step's capacity is the trace's and the wait's alone: adding
        /// other steps to the ladder changes no hour of it (a trial saw
        /// the interruptible capacity fall by about a minute once a job
        /// with 60 s steps was planned beside it).
        #[test]
        fn a_steps_capacity_does_not_depend_on_the_other_steps(
            gaps in proptest::collection::vec((1u64..4_000, 0u64..900), 1..60),
            wait in 0u64..30,
            other in 1u64..600,
        ) {
            let observe = |steps: &[Nanos]| {
                let mut f = IdleForecast::new(s(wait), steps);
                f.begin(Nanos::ZERO, None);
                let mut t = 0;
                for &(busy, idle) in &gaps {
                    t += busy;
                    f.observe(s(t), s(t + idle));
                    t += idle;
                }
                f.finish(s(t + 1));
                (0..HOURS_PER_DAY)
                    .map(|h| f.hour(Nanos::ZERO, h).map(|e| (e.mean_s, e.samples)))
                    .collect::<Vec<_>>()
            };
            proptest::prop_assert_eq!(observe(&[Nanos::ZERO]), observe(&[Nanos::ZERO, s(other)]));
        }
    }

    #[test]
    fn several_steps_over_several_hours_land_in_their_own_hours() {
        let mut f = IdleForecast::new(Nanos::ZERO, &[Nanos::ZERO, s(1000)]);
        f.begin(Nanos::ZERO, None);
        // 00:50 to 03:10: 8400 s; the 1000 s job waits 1000 s, then 7
        // steps, to 03:00.
        f.observe(s(3000), s(11_400));
        f.finish(s(4 * 3600));
        let fine: Vec<f64> = (0..4)
            .map(|h| f.hour(Nanos::ZERO, h).unwrap().mean_s)
            .collect();
        let coarse: Vec<f64> = (0..4).map(|h| f.hour(s(1000), h).unwrap().mean_s).collect();
        assert_eq!(fine, vec![600.0, 3600.0, 3600.0, 600.0]);
        assert_eq!(coarse, vec![0.0, 3200.0, 3600.0, 200.0]);
    }

    #[test]
    fn uses_the_wall_clock_and_skips_partial_hours() {
        let mut f = IdleForecast::new(Nanos::ZERO, &[Nanos::ZERO]);
        // Time 0 is 13:30 UTC: the 13:00 hour is not fully observed.
        let clock = Nanos::from_secs(13 * 3600 + 1800);
        let ctx = Context {
            clock: Some(clock),
            ..Context::at(Nanos::ZERO)
        };
        f.on_idle_begin(&ctx);
        let end = Context {
            clock: Some(clock),
            ..Context::at(s(2400))
        };
        f.on_idle_end(&end, Nanos::ZERO);
        f.finish(s(3 * 3600));
        assert_eq!(f.hour(Nanos::ZERO, 13).unwrap().samples, 0);
        let h14 = f.hour(Nanos::ZERO, 14).unwrap();
        assert_eq!((h14.mean_s, h14.samples), (600.0, 1));
        assert_eq!(f.hour(Nanos::ZERO, 15).unwrap().mean_s, 0.0);
    }

    #[test]
    fn the_wrapper_feeds_the_forecast_and_shows_it_in_gauges() {
        let reg = lull_detectors::registry();
        let net = build_network("timer(1s) + no-duration", &reg).unwrap();
        let f = IdleForecast::new(Nanos::ZERO, &[Nanos::ZERO, s(10)]);
        let mut engine =
            Engine::with_policy(Forecasting::new(net, f), StopPolicy::WhenBusy, NoTask);
        let sec = Nanos::from_secs;
        let trace = [
            Request::new(sec(0), sec(1), Op::Read, 0, 4096),
            Request::new(sec(26), sec(27), Op::Read, 0, 4096),
        ];
        replay(&Timeline::from_requests(&trace), &mut engine).unwrap();
        let fc = engine.detector().forecast();
        assert_eq!(fc.periods(), 1);
        let g = engine.detector().gauges();
        assert!(g.iter().any(|(k, _)| k.starts_with("forecast.step=10s")));
    }
}
