//! MS Manners: progress-based regulation of a background task (Douceur &
//! Bolosky, *Progress-based regulation of low-importance processes*, 1999;
//! `papers/ms-manners.txt`).
//!
//! A background task that slows down is probably slowing the foreground
//! down too ("when process B is retarding the progress of process A,
//! process A is also retarding the progress of process B", §1). So the
//! task measures its own progress, compares it with a target calibrated
//! from its own past, and suspends itself when it is degraded.
//!
//! [`Manners`] is the sans-IO regulator: the task reports each operation
//! ([`Manners::record`]: `work` units done in `elapsed`), and asks
//! [`Manners::may_run`] before issuing more. [`Regulated`] wraps a
//! model-timing [`BackgroundTask`] with it (`--task cleaning+manners`,
//! `writeback+manners` in `lull replay`); a live task (the daemon's
//! `command`) can drive [`Manners`] directly with its own progress counts.
//!
//! # Algorithm
//!
//! - **Samples** (§3, §5). One sample per completed operation: work `x`
//!   (for the simulated tasks, the bytes of one idle-time I/O: cleaning
//!   reads and writes, writeback writes) and time `y` (issue to
//!   completion, seconds, so queueing behind foreground requests counts).
//!   Comparing `y` with the target time for `x` is comparing the progress
//!   rate `x / y` with the target rate at that size. Forced foreground
//!   work (writeback's overflow flushes) is not idle work and is not
//!   sampled.
//! - **Target** (§6). The quiescent operation time as a line
//!   `y = a + b·x`, fitted by least squares from the six sufficient
//!   statistics `Σx, Σy, Σxx, Σyy, Σxy, n`, aged exponentially: each
//!   sample does `S ← ξ·S + s` with `ξ = 1 − 1/n′` (equation 5: the
//!   effective sample size is `n′`, `steady-samples`). Initialisation
//!   collects `n″` samples (`init-samples`) with `ξ = 1` and weights them by
//!   `n′/n″`. With all `x` equal the line is flat (`b = 0`).
//! - **Comparison** (§5). A paired-sample sign test: each sample is
//!   compared with the target for its own `x`; of the last `n` samples
//!   (`n` grows by one per sample up to `limit`, 10), `r` were slower.
//!   Under "normal" `r ~ Binomial(n, ½)`. *Degraded* when
//!   `P(R ≥ r) ≤ α`, *normal* when `P(R ≤ r) ≤ β`, otherwise *deferred*
//!   (with α = 0.05 the least `n` that can judge degraded is 5, as in the
//!   paper). A decisive judgement starts a new sample set.
//! - **Action** (§3, §5). Degraded: suspend for the current suspension
//!   time, then double it, never beyond `cap` (binary exponential
//!   back-off). Normal: reset the suspension time to `base`. Deferred:
//!   carry on. While suspended the task issues nothing; it resumes at the
//!   end of the suspension (the paper's "another time slice") and its next
//!   samples judge again.
//! - **Calibration rate and probation** (§6). During initialisation the
//!   task runs at the calibration duty cycle (`calibration-duty`, 20 %:
//!   after each operation of `y` it pauses `y·(1/duty − 1)`); during the
//!   probation period that follows (`probation`) degraded still suspends
//!   but normal does not lift the calibration cap; then it works at full
//!   rate. The target keeps learning from every sample (temporal
//!   filtering); the paper's conditional subsampling only matters when the
//!   cap on suspension is lowered for urgency, which this regulator does
//!   not do.
//!
//! Defaults are the paper's (§7) except the initial sample count: 100
//! rather than 1000, since a simulated task makes far fewer operations in
//! a trace of an hour than the Groveler made in a day; and the probation
//! period: 0 as in the paper's experiments (§8), not 24 h.

use lull_core::component::{Context, earliest};
use lull_core::event::Event;
use lull_core::request::{Op, Request};
use lull_core::task::{Granularity, IdleTask, Measure};
use lull_core::time::Nanos;

use crate::background::{Admission, BackgroundTask, Baseline, DeviceIo, IoClass};
use crate::device::Disk;

/// Settings of [`Manners`] (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MannersConfig {
    /// Type-I error probability α: degraded when `P(R ≥ r) ≤ α` (0.05).
    pub alpha: f64,
    /// Type-II error probability β: normal when `P(R ≤ r) ≤ β` (0.2).
    pub beta: f64,
    /// Largest sign-test sample (10).
    pub limit: usize,
    /// First suspension (5 s). Wall-clock by nature, like `cap`: how long
    /// a background task keeps out of a user's way after it was seen to
    /// slow the foreground (MS Manners's own figures), not a multiple of
    /// the drive's break-even time; it does not scale with `B`.
    pub base: Nanos,
    /// Longest suspension (5 min; wall-clock by nature, see `base`).
    pub cap: Nanos,
    /// Steady-state effective sample size of the target, `n′` (5000).
    pub steady_samples: f64,
    /// Samples collected before regulation begins, `n″` (100).
    pub init_samples: u64,
    /// Duty cycle during calibration and probation (0.2).
    pub calibration_duty: f64,
    /// Probation after initialisation (0).
    pub probation: Nanos,
}

impl Default for MannersConfig {
    fn default() -> Self {
        MannersConfig {
            alpha: 0.05,
            beta: 0.2,
            limit: 10,
            base: Nanos::from_secs(5),
            cap: Nanos::from_secs(300),
            steady_samples: 5000.0,
            init_samples: 100,
            calibration_duty: 0.2,
            probation: Nanos::ZERO,
        }
    }
}

/// The outcome of a sign test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Slower than the target: suspend.
    Degraded,
    /// As fast as the target: full rate, suspension reset.
    Normal,
    /// Not enough evidence either way (also every sample of calibration).
    Deferred,
}

/// Where the regulator is in its life (§6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Collecting the initial samples at the calibration rate.
    Calibrating,
    /// Regulating, but never above the calibration rate, until the time.
    Probation(Nanos),
    /// Regulating at full rate.
    Working,
}

/// Exponentially aged sufficient statistics of a least-squares line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Regression {
    sx: f64,
    sy: f64,
    sxx: f64,
    syy: f64,
    sxy: f64,
    n: f64,
}

impl Regression {
    /// `S ← ξ·S + s` for every statistic (equation 4).
    pub fn add(&mut self, xi: f64, x: f64, y: f64) {
        self.sx = xi * self.sx + x;
        self.sy = xi * self.sy + y;
        self.sxx = xi * self.sxx + x * x;
        self.syy = xi * self.syy + y * y;
        self.sxy = xi * self.sxy + x * y;
        self.n = xi * self.n + 1.0;
    }
    fn scale(&mut self, k: f64) {
        for s in [
            &mut self.sx,
            &mut self.sy,
            &mut self.sxx,
            &mut self.syy,
            &mut self.sxy,
            &mut self.n,
        ] {
            *s *= k;
        }
    }
    /// The effective sample count.
    pub fn n(&self) -> f64 {
        self.n
    }
    /// `(a, b)` of `y = a + b·x`; flat when the `x` do not vary.
    pub fn line(&self) -> (f64, f64) {
        if self.n <= 0.0 {
            return (0.0, 0.0);
        }
        let den = self.n * self.sxx - self.sx * self.sx;
        let b = if den > 1e-9 * self.n * self.sxx.max(f64::MIN_POSITIVE) {
            (self.n * self.sxy - self.sx * self.sy) / den
        } else {
            0.0
        };
        ((self.sy - b * self.sx) / self.n, b)
    }
    /// The target `y` for work `x`.
    pub fn target(&self, x: f64) -> f64 {
        let (a, b) = self.line();
        a + b * x
    }
}

/// `P(R ≥ r)` and `P(R ≤ r)` for `R ~ Binomial(n, ½)`.
pub fn sign_tails(n: usize, r: usize) -> (f64, f64) {
    let mut pmf = Vec::with_capacity(n + 1);
    let mut c = 1.0f64;
    for k in 0..=n {
        pmf.push(c * 0.5f64.powi(n as i32));
        c = c * (n - k) as f64 / (k + 1) as f64;
    }
    let upper = pmf[r.min(n)..].iter().sum();
    let lower = pmf[..=r.min(n)].iter().sum();
    (upper, lower)
}

/// The MS Manners regulator (module docs).
#[derive(Clone, Debug)]
pub struct Manners {
    cfg: MannersConfig,
    xi: f64,
    target: Regression,
    phase: Phase,
    init: u64,
    slower: Vec<bool>,
    next_suspension: Nanos,
    suspended_until: Option<Nanos>,
    paused_until: Option<Nanos>,
    suspensions: u64,
    /// The time suspended so far: the union of the suspensions, as the
    /// task was held (a judgement while suspended extends the suspension,
    /// it does not add a second one beside it).
    suspended: Nanos,
    longest: Nanos,
    degraded: u64,
    normal: u64,
}

impl Manners {
    /// A regulator with `cfg` (`base` is held to at most `cap`).
    pub fn new(cfg: MannersConfig) -> Self {
        let cfg = MannersConfig {
            base: cfg.base.min(cfg.cap),
            limit: cfg.limit.max(1),
            ..cfg
        };
        Manners {
            xi: 1.0 - 1.0 / cfg.steady_samples.max(1.0),
            target: Regression::default(),
            phase: Phase::Calibrating,
            init: 0,
            slower: Vec::with_capacity(cfg.limit),
            next_suspension: cfg.base,
            suspended_until: None,
            paused_until: None,
            suspensions: 0,
            suspended: Nanos::ZERO,
            longest: Nanos::ZERO,
            degraded: 0,
            normal: 0,
            cfg,
        }
    }
    /// Its settings.
    pub fn config(&self) -> &MannersConfig {
        &self.cfg
    }
    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// The calibrated target line.
    pub fn target(&self) -> &Regression {
        &self.target
    }
    /// Whether the task may issue work at `now`.
    pub fn may_run(&self, now: Nanos) -> bool {
        self.resume_at().is_none_or(|t| t <= now)
    }
    /// When a suspension or calibration pause ends, if one was ordered.
    pub fn resume_at(&self) -> Option<Nanos> {
        match (self.suspended_until, self.paused_until) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
    /// The suspension the next degraded judgement orders.
    pub fn next_suspension(&self) -> Nanos {
        self.next_suspension
    }
    /// Suspensions ordered.
    pub fn suspensions(&self) -> u64 {
        self.suspensions
    }
    /// The time the task was held suspended: the union of the
    /// suspensions ordered (one ordered while another runs extends it),
    /// up to [`Manners::finish`]'s end when it was called. Never more
    /// than the time from the first suspension to that end.
    pub fn suspended(&self) -> Nanos {
        self.suspended
    }

    /// The trace ends at `end`: a suspension that runs past it counts to
    /// there.
    pub fn finish(&mut self, end: Nanos) {
        if let Some(until) = self.suspended_until.filter(|&u| u > end) {
            self.suspended = self.suspended.saturating_sub(until - end);
            self.suspended_until = Some(end);
        }
    }
    /// The longest suspension ordered (never above the cap).
    pub fn longest_suspension(&self) -> Nanos {
        self.longest
    }
    /// Degraded and normal judgements so far.
    pub fn judgements(&self) -> (u64, u64) {
        (self.degraded, self.normal)
    }

    fn limited(&self, now: Nanos) -> bool {
        match self.phase {
            Phase::Calibrating => true,
            Phase::Probation(until) => now < until,
            Phase::Working => false,
        }
    }

    /// The task did `work` units in `elapsed`, finishing at `now`.
    pub fn record(&mut self, now: Nanos, work: f64, elapsed: Nanos) -> Judgement {
        let (x, y) = (work, elapsed.as_secs_f64());
        if let Phase::Probation(until) = self.phase {
            if now >= until {
                self.phase = Phase::Working;
            }
        }
        let judgement = if self.phase == Phase::Calibrating {
            self.target.add(1.0, x, y);
            self.init += 1;
            if self.init >= self.cfg.init_samples.max(1) {
                self.target
                    .scale(self.cfg.steady_samples / self.init as f64);
                self.phase = if self.cfg.probation > Nanos::ZERO {
                    Phase::Probation(now + self.cfg.probation)
                } else {
                    Phase::Working
                };
            }
            Judgement::Deferred
        } else {
            let slower = y > self.target.target(x);
            self.target.add(self.xi, x, y);
            if self.slower.len() == self.cfg.limit {
                self.slower.remove(0);
            }
            self.slower.push(slower);
            let n = self.slower.len();
            let r = self.slower.iter().filter(|&&s| s).count();
            let (upper, lower) = sign_tails(n, r);
            if upper <= self.cfg.alpha {
                Judgement::Degraded
            } else if lower <= self.cfg.beta {
                Judgement::Normal
            } else {
                Judgement::Deferred
            }
        };
        match judgement {
            Judgement::Degraded => {
                let d = self.next_suspension.min(self.cfg.cap);
                let until = now + d;
                // The time added to the union: from where the suspension
                // in force ends (or now), less what a shorter new one
                // cuts off the one in force.
                let held = self.suspended_until.filter(|&u| u > now);
                match held {
                    Some(u) if u > until => {
                        self.suspended = self.suspended.saturating_sub(u - until)
                    }
                    Some(u) => self.suspended += until - u,
                    None => self.suspended += d,
                }
                self.suspended_until = Some(until);
                self.suspensions += 1;
                self.longest = self.longest.max(d);
                self.next_suspension =
                    Nanos(self.next_suspension.as_nanos().saturating_mul(2)).min(self.cfg.cap);
                self.degraded += 1;
                self.slower.clear();
            }
            Judgement::Normal => {
                self.next_suspension = self.cfg.base;
                self.normal += 1;
                self.slower.clear();
            }
            Judgement::Deferred => {}
        }
        if self.limited(now) {
            let duty = self.cfg.calibration_duty.clamp(1e-3, 1.0);
            self.paused_until = Some(now + Nanos::from_secs_f64(y * (1.0 / duty - 1.0)));
        } else {
            self.paused_until = None;
        }
        judgement
    }
}

/// A [`BackgroundTask`] regulated by [`Manners`]: its idle-time I/O
/// completions are the samples, and while suspended (or pausing at the
/// calibration rate) it is not polled, so it issues nothing. The task's
/// start, stop and forced work are untouched: the actuator still decides
/// when idle time is offered, Manners decides whether to use it.
#[derive(Debug)]
pub struct Regulated<T> {
    inner: T,
    manners: Manners,
    issued: Vec<(DeviceIo, Nanos)>,
    wake: Option<Nanos>,
    done_bytes: u64,
}

impl<T: BackgroundTask> Regulated<T> {
    /// `inner` regulated with `cfg`.
    pub fn new(inner: T, cfg: MannersConfig) -> Self {
        Regulated {
            inner,
            manners: Manners::new(cfg),
            issued: Vec::new(),
            wake: None,
            done_bytes: 0,
        }
    }
    /// The wrapped task.
    pub fn inner(&self) -> &T {
        &self.inner
    }
    /// The regulator.
    pub fn manners(&self) -> &Manners {
        &self.manners
    }
}

impl<T: BackgroundTask> IdleTask for Regulated<T> {
    fn name(&self) -> &'static str {
        match self.inner.name() {
            "cleaning" => "cleaning+manners",
            "writeback" => "writeback+manners",
            other => other,
        }
    }
    fn granularity(&self) -> Granularity {
        self.inner.granularity()
    }
    fn start(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.inner.start(ctx, budget)
    }
    fn renew(&mut self, ctx: &Context, budget: Option<Nanos>) {
        self.inner.renew(ctx, budget)
    }
    fn stop(&mut self, ctx: &Context) {
        self.inner.stop(ctx)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) {
        self.inner.on_event(ev, ctx)
    }
    fn next_deadline(&self) -> Option<Nanos> {
        earliest(self.inner.next_deadline(), self.wake)
    }
    fn on_deadline(&mut self, ctx: &Context) {
        if self.wake.is_some_and(|w| w <= ctx.now) {
            self.wake = None;
        }
        if self.inner.next_deadline().is_some_and(|d| d <= ctx.now) {
            self.inner.on_deadline(ctx);
        }
    }
    fn finish(&mut self, end: Nanos) {
        self.manners.finish(end);
        self.inner.finish(end)
    }
    fn measures(&self) -> Vec<Measure> {
        let m = &self.manners;
        let mut v = self.inner.measures();
        v.extend([
            ("background_bytes", self.done_bytes as f64),
            ("manners_suspensions", m.suspensions() as f64),
            ("manners_suspended_s", m.suspended().as_secs_f64()),
            (
                "manners_longest_suspension_s",
                m.longest_suspension().as_secs_f64(),
            ),
            ("manners_degraded", m.judgements().0 as f64),
            ("manners_normal", m.judgements().1 as f64),
        ]);
        v
    }
}

impl<T: BackgroundTask> BackgroundTask for Regulated<T> {
    fn on_arrival(&mut self, req: &Request, now: Nanos, out: &mut Vec<DeviceIo>) -> Admission {
        self.inner.on_arrival(req, now, out)
    }
    fn device_idle(&mut self, idle: bool) {
        self.inner.device_idle(idle);
    }
    fn poll(&mut self, now: Nanos, device_free_at: Nanos, disk: &Disk, out: &mut Vec<DeviceIo>) {
        if !self.manners.may_run(now) {
            return;
        }
        let before = out.len();
        self.inner.poll(now, device_free_at, disk, out);
        for io in &out[before..] {
            if io.class == IoClass::Idle {
                self.issued.push((*io, now));
            }
        }
    }
    fn on_io_done(&mut self, io: &DeviceIo, now: Nanos) {
        self.inner.on_io_done(io, now);
        if let Some(i) = self.issued.iter().position(|(x, _)| x == io) {
            let (_, at) = self.issued.swap_remove(i);
            self.done_bytes += u64::from(io.bytes);
            self.manners
                .record(now, f64::from(io.bytes), now.saturating_sub(at));
            self.wake = self.manners.resume_at().filter(|&t| t > now);
        }
    }
    fn on_io_cancelled(&mut self, io: &DeviceIo, now: Nanos) {
        if let Some(i) = self.issued.iter().position(|(x, _)| x == io) {
            self.issued.swap_remove(i);
        }
        self.inner.on_io_cancelled(io, now)
    }
    fn on_foreground_done(&mut self, op: Op, arrival: Nanos, done: Nanos) {
        self.inner.on_foreground_done(op, arrival, done)
    }
    fn set_baseline(&mut self, baseline: Baseline) {
        self.inner.set_baseline(baseline)
    }
    fn drain(&mut self, out: &mut Vec<DeviceIo>) {
        self.inner.drain(out)
    }
    fn read_priority(&self) -> bool {
        self.inner.read_priority()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Nanos {
        Nanos::from_millis(x)
    }

    fn cfg() -> MannersConfig {
        MannersConfig {
            init_samples: 4,
            steady_samples: 100.0,
            base: ms(1000),
            cap: ms(3000),
            ..MannersConfig::default()
        }
    }

    #[test]
    fn sign_test_thresholds_match_the_paper() {
        // α = 0.05: at least five samples, all slower, to judge degraded.
        assert!(sign_tails(4, 4).0 > 0.05);
        assert!(sign_tails(5, 5).0 <= 0.05);
        // β = 0.2: three faster samples suffice for normal.
        assert!(sign_tails(2, 0).1 > 0.2);
        assert!(sign_tails(3, 0).1 <= 0.2);
        let (u, l) = sign_tails(10, 5);
        assert!((u - 0.623046875).abs() < 1e-12 && (l - 0.623046875).abs() < 1e-12);
    }

    #[test]
    fn the_target_is_an_aged_least_squares_line() {
        let mut r = Regression::default();
        for x in [1.0, 2.0, 3.0, 4.0] {
            r.add(1.0, x, 0.5 + 2.0 * x);
        }
        let (a, b) = r.line();
        assert!((a - 0.5).abs() < 1e-9 && (b - 2.0).abs() < 1e-9);
        // Flat when x never varies.
        let mut f = Regression::default();
        f.add(0.9, 8.0, 1.0);
        f.add(0.9, 8.0, 3.0);
        assert_eq!(f.line().1, 0.0);
        assert!((f.target(8.0) - (0.9 + 3.0) / 1.9).abs() < 1e-12);
    }

    /// Calibrate on 10 ms operations, then slow ones suspend with doubling
    /// back-off up to the cap, and fast ones reset it.
    #[test]
    fn the_state_machine_on_a_hand_made_sequence() {
        let mut m = Manners::new(cfg());
        let mut t = ms(0);
        for i in 0..4 {
            t += ms(10);
            assert_eq!(m.record(t, 4096.0, ms(10)), Judgement::Deferred);
            if i < 3 {
                // Calibration rate 20 %: pause 4× the operation.
                assert_eq!(m.resume_at(), Some(t + ms(40)));
                assert!(!m.may_run(t));
            }
        }
        assert_eq!(m.phase(), Phase::Working);
        assert!((m.target().target(4096.0) - 0.010).abs() < 1e-12);
        // Four slow samples: deferred; the fifth judges degraded.
        for _ in 0..4 {
            t += ms(50);
            assert_eq!(m.record(t, 4096.0, ms(50)), Judgement::Deferred);
            assert!(m.may_run(t));
        }
        let mut suspensions = vec![];
        for _ in 0..4 {
            // Five slow samples in a row each time (the set restarts).
            let mut j = Judgement::Deferred;
            for _ in 0..5 {
                t += ms(50);
                j = m.record(t, 4096.0, ms(50));
                if j == Judgement::Degraded {
                    break;
                }
            }
            assert_eq!(j, Judgement::Degraded);
            assert!(!m.may_run(t));
            suspensions.push(m.resume_at().unwrap() - t);
            t = m.resume_at().unwrap();
        }
        assert_eq!(suspensions, vec![ms(1000), ms(2000), ms(3000), ms(3000)]);
        // Three fast samples: normal, the back-off resets.
        let mut j = Judgement::Deferred;
        for _ in 0..3 {
            t += ms(1);
            j = m.record(t, 4096.0, ms(1));
        }
        assert_eq!(j, Judgement::Normal);
        assert_eq!(m.next_suspension(), ms(1000));
        assert_eq!(m.judgements(), (4, 1));
        assert_eq!(m.longest_suspension(), ms(3000));
    }

    #[test]
    fn probation_keeps_the_calibration_rate_until_it_ends() {
        let mut m = Manners::new(MannersConfig {
            probation: ms(1000),
            ..cfg()
        });
        let mut t = ms(0);
        for _ in 0..4 {
            t += ms(10);
            m.record(t, 1.0, ms(10));
        }
        assert_eq!(m.phase(), Phase::Probation(ms(1040)));
        for _ in 0..3 {
            t += ms(10);
            m.record(t, 1.0, ms(5));
        }
        assert!(!m.may_run(t), "normal, but still capped at 20 %");
        t = ms(2000);
        m.record(t, 1.0, ms(5));
        assert_eq!(m.phase(), Phase::Working);
        assert!(m.may_run(t));
    }
}
