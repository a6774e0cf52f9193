//! `long-idle(margin, rate, ...)`: a learning long-idle detector (new in
//! lull, beyond the paper).
//!
//! A fixed or adaptive timeout pays its whole wait in every long idle
//! period: with a timeout `T`, a disk that will be idle for an hour still
//! spins for `T` first. Storage workloads are not i.i.d., though: a long
//! period tends to follow another (nights, away spells), to come after a
//! burst of a typical size, at a typical hour. `long-idle` learns that
//! online and, when it is confident that the period that just began will
//! outlast the break-even time `B`, acts at once; when it is not, it falls
//! back on the learned timeout of Helmbold et al.'s [`share`](crate::share).
//!
//! **When it decides.** Every idle period, `min` (default `B/32`, the
//! shortest expert timeout of the fallback) after the device empties. A
//! period shorter than that ends before any decision and is ignored
//! entirely: it neither teaches nor counts in the history, in the daemon as
//! in a replay (so the replay may skip such periods, exactly). The one
//! exception is the trial of declaring at idle start (below), which sees
//! every period while it lasts and learns from the short ones only
//! whether that trial pays.
//!
//! **Features** at the decision, all from what lull already sees (no
//! per-request work: the detector needs no events):
//! - the last three idle lengths `s` (of periods of at least `min`), as
//!   `ln(1 + s/B)`;
//! - the time since the previous such period ended (the length of the
//!   busy stretch before this gap), and the time since the last period
//!   longer than `B` ended (the phase of a periodic job such as a
//!   checkpoint), each as `ln(1 + t/B)`;
//! - the same three quantities (last length, busy stretch, time since the
//!   last long period) once more as one-hot bins by powers of two of
//!   `t/B` (from below `B/16` to above `16·B`), so that a linear model can
//!   learn non-monotonic rules ("a gap that follows a 5-minute stretch
//!   after the last long one is long");
//! - the share of long periods among the recent ones (a moving average);
//! - the hour of day as `sin`/`cos` when the wall clock is known
//!   ([`Context::clock`]; 0 otherwise);
//! - a bias;
//! - a **context cell**: the pair (bin of the last length, bin of the
//!   busy stretch before this gap), 100 cells, each with discounted counts
//!   of long and short periods (discount 0.995 per update of the cell).
//!   Its log-odds, with half a period of prior each way and clamped to
//!   ±4, enter the model's with a fixed weight of ½, and the model learns
//!   the rest. It is the interaction a linear model cannot form: on a
//!   NAS, "a gap right after a 2-minute gap" (the hourly job before the
//!   next SMART poll) is long, "a gap right after a short one" (a user's
//!   visit) is not, and without the cell the many short daytime gaps
//!   drag the shared weights (bias, hour of day) down for both. On
//!   `home-nas` with `wd-red-plus` it took the median over six unseen
//!   days from 0.87 to 0.80 of the best fixed timeout's excess
//!   (docs/results.md); elsewhere it changed little.
//!
//! **Model.** Online logistic regression, one stochastic-gradient step per
//! idle period with the label "lasted at least `B`", learning rate `rate`
//! and a light L2 penalty. O(1) per idle period (a few dozen
//! multiplications), fixed memory, deterministic.
//!
//! **Decision, by expected cost.** With `p` the predicted probability of a
//! long period and `T` the fallback's remaining wait: acting at once costs
//! about a spin-down cycle, `B`, when the period turns out short (waiting
//! would have cost nothing) and saves about `T` of spinning when it turns
//! out long. So it acts at once when `p·T ≥ m·(1 − p)·B`.
//!
//! **The margin `m` is learned too**, because the model's probabilities
//! are only as good as the workload is predictable. For every decided
//! period the detector knows, once it ends, exactly what acting at once
//! would have gained over the fallback (both excesses are functions of the
//! period's length), whatever it did. It keeps that counterfactual gain,
//! discounted, for eight candidate margins from ¼ to "never", and acts with
//! the best one so far. On a workload where no prediction pays (the gaps
//! are not predictable from the features) "never" wins and `long-idle`
//! behaves as its fallback; where they are, it acts at once as often as
//! that paid off. `margin=M` fixes the margin instead.
//! The fallback keeps learning from every period, whatever was decided.
//!
//! **Periodic arrivals** (issue 29). It also learns the periodic sources
//! among the arrivals that end idle periods (a cron job, a checkpoint, a
//! SMART poll: [`periodic`](crate::periodic)) and never starts within `B`
//! before a confident predicted periodic arrival: not at once, and not at
//! the fallback's timeout, which it puts off past that arrival's window
//! instead (once per period: if the device is still idle then, the source
//! missed and the fallback's start is due). A spin-down that the next
//! periodic job wakes within `B` costs more than it saves. On a workload
//! without confident sources this changes nothing.
//!
//! **Independent gaps** (issue 29). Share's weighted *mean* hedges
//! between its experts, which tracks a workload that changes; on gaps
//! that carry no information (i.i.d. lengths) that hedge is pure regret,
//! and the experts' own estimate of the best fixed timeout is the thing
//! to act on. So the fallback scores both the weighted mean and the
//! weighted median on every period (`decision=learned`, the default;
//! [`Decision::Learned`]), and `long-idle` acts on the median only while
//! the median has lost less lately *and* the learned periods' lengths
//! look independent: their lag-1 serial correlation (of `ln(1 + s/B)`,
//! discounted 0.995 per period) is within ±0.15 (about three standard errors at that
//! discount) after 50 periods. Either
//! test alone was measured and not kept: the median wherever it scored
//! better cost `home-nas` on the NAS drive 0.74 → 0.92 of the best fixed
//! timeout's excess (its at-once decisions already take the predictable
//! long periods, and the mean serves the rest better); gating it on a
//! learned margin of "never" missed `iid-exp`, where acting at once does
//! pay.
//!
//! **A fallback per context** (issue 29). One learned timeout must serve
//! every idle period, yet what a period holds often depends on the one
//! before: on `workstation` with the paper drive's `B`, after a period of
//! at least `B/2` the best timeout is about `B/20`, after a shorter one
//! about `B/3`, and the one global timeout hedges between them. So the
//! fallback is also kept per context, [`CONTEXTS`] (8) bins of the
//! previous learned period's length by powers of two of `B` (below
//! `B/16` up to at least `4·B`): eight more sets of share's experts, each
//! learning from its own context's periods only and acting on its
//! weighted mean. In each context it scores the global fallback's
//! timeout and the context's own on every period there (the share loss,
//! discounted 0.99 per period of the context), and acts on the
//! context's once the context has had 20 periods and its own has lost
//! less; never while the gaps look independent (above), where the
//! previous length says nothing and a context would only add noise. The
//! at-once decision and its margins weigh whichever timeout is acted on.
//! On the six unseen days it took `workstation` on the paper drive from
//! 0.40 to 2.04 of what the clairvoyant per-window timer adds
//! (docs/results.md, "A fallback per context"), and helped `office`,
//! `sync30` and `db-checkpoint` there; it costs `home-nas` on the NAS
//! drive, where a context holds a few dozen periods a day, 0.06 of the
//! best fixed timeout's excess. Each learned period updates one
//! context's experts besides the global ones: about twice share's work.
//!
//! **At idle start.** Where the fallback's timeout is its shortest
//! expert's (spin down at the decision point), declaring at the moment
//! the device empties saves that wait in every long period and wastes a
//! cycle in every period shorter than it, which the engine lets the
//! detector skip, unseen. So it tries: after 16 learned periods in that
//! regime it declares at idle start and sees every period (`quiet_below`
//! 0), keeping the exact discounted gain against declaring at the
//! decision point (`+min` per period at least `min` long, `s − B` per
//! shorter one), with a credit of `B/2` to begin with. When the gain
//! turns negative the trial ends and the next waits twice as long (16,
//! 32, ... up to 4096 learned periods; back to 16 after a trial that
//! lasted 256 periods). The periodic gate holds here too. On memoryless
//! gaps of mean 10 s against the paper drive's `B` = 3 s (`iid-exp`),
//! where spinning down at once is the best fixed policy, it took `auto`
//! from 1.17 to 1.04 of the best fixed timeout's excess
//! (docs/results.md); where short gaps are common, a trial costs one
//! wasted cycle and they grow rare.
//!
//! **Under a wear budget** (issue 75). With `per-day=N`, or built for a
//! disk with a budget ([`Registry::with_wear_budget`]: the daemon's
//! `max_spindowns_per_day`, `--max-spindowns-per-day`), a pacer
//! ([`crate::pace`]) scores budgeted experts (timers, and this detector's
//! own decision held to a floor, each with its own copy of the gate's
//! bucket and daily cap) on every period, and the detector acts on the
//! leader: its own decision, its decision not before a floor (then never
//! at once: the model predicts "longer than `B`", not "longer than the
//! floor"), or a timer. Without a budget nothing changes.
//!
//! **A price per spin-up wait** (issue 75). A spin-down that saves a
//! joule can cost a request seconds of waiting behind the spin-up.
//! `delay-weight=w` prices that wait at `w` break-evens of spinning: every
//! decision of this detector (the model's label "long", the at-once cost,
//! the margins' gains, the periodic gate, the wear pacer's scores) counts
//! a spin-down as costing `B·(1 + w)` instead of `B`, and the fallback's
//! experts pay `w·B` per spin-up in their loss (as in `share`). A period
//! predicted to save less than the wait is worth is left alone: with no
//! saving in sight the disk stays up. `w = t_up/B` prices a second of
//! waiting as a second of spinning. The energy measured is still the
//! drive's own. The default, 0, is energy alone.
//!
//! Its gauges report the last probability, how often it acted at once and
//! how often that was right, how often it declared at idle start, the
//! serial correlation, how often a context's fallback decided, the
//! timeout it would act on now (the context's or the global one, for a
//! period that began now), the global fallback's timeout and leader, and
//! the periodic sources (`periodic_*`), and the wear budget's timeout or
//! floor (`budget_timeout_s`, 0 when it acts as it is).

use lull_core::component::{Context, Start, StartDetector};
use lull_core::learned::{Learned, LearnedError, ago, from_ago};
use lull_core::registry::{
    Built, ComponentInfo, GaugeInfo, GaugeUnit, ParamInfo, ParamKind, Registry, Role,
};
use lull_core::time::Nanos;

use crate::pace::{Paced, WearPace};
use crate::periodic::{PeriodicEstimator, gate, gate_on, periodic_gauges};
use crate::share::{
    Decision, EXPERT_PARAMS, FALLBACK_GAUGES, LEARNED_DECISION_PARAM, ShareExperts,
};
use crate::timer::Alarm;

/// Candidate margins of the learned decision rule (the last: never act).
const MARGINS: [f64; 8] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, f64::INFINITY];
/// Per-period discount of the margins' counterfactual gains.
const MARGIN_DISCOUNT: f64 = 0.995;

/// Dense features per idle period (bias last); the model has [`GROUPS`] more groups of [`BINS`] one-hot bins.
pub const DENSE: usize = 9;
/// Per-update discount of a context cell's counts (module docs).
const CELL_DISCOUNT: f64 = 0.995;
/// Weight of a context cell's log-odds in the model's (module docs).
const CELL_WEIGHT: f64 = 0.5;
/// Bins per binned feature.
pub const BINS: usize = 10;
/// Groups of binned features.
pub const GROUPS: usize = 3;
const FEATURES: usize = DENSE + GROUPS * BINS;
const NS_PER_HOUR: u64 = 3_600_000_000_000;

/// One idle period's features: the dense ones and, per binned group, the
/// index of its one active bin (the others are 0, so the model touches
/// only `DENSE + 3` weights per period).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Features {
    /// Dense features, bias last.
    pub dense: [f64; DENSE],
    /// The active bin of each group.
    pub bins: [usize; GROUPS],
    /// Log-odds added to the model's with weight 1: the context cell's
    /// own estimate, which the model corrects.
    pub offset: f64,
}

impl Features {
    /// The weight index of every non-zero feature, with its value.
    fn active(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.dense.iter().copied().enumerate().chain(
            self.bins
                .iter()
                .enumerate()
                .map(|(g, &b)| (DENSE + g * BINS + b.min(BINS - 1), 1.0)),
        )
    }
}

/// The online logistic model of [`LongIdle`].
#[derive(Clone, Debug, PartialEq)]
pub struct Logistic {
    w: [f64; FEATURES],
    rate: f64,
    l2: f64,
}

impl Logistic {
    /// A model with all weights zero (probability ½ for everything).
    pub fn new(rate: f64, l2: f64) -> Self {
        Logistic {
            w: [0.0; FEATURES],
            rate,
            l2,
        }
    }
    /// The probability of a long period given features `x`.
    pub fn predict(&self, x: &Features) -> f64 {
        let z: f64 = x.offset + x.active().map(|(i, v)| self.w[i] * v).sum::<f64>();
        1.0 / (1.0 + (-z.clamp(-40.0, 40.0)).exp())
    }
    /// One gradient step towards label `y` (1 long, 0 short).
    pub fn learn(&mut self, x: &Features, y: f64) {
        self.learn_from(x, self.predict(x), y);
    }
    /// [`Logistic::learn`] with the model's probability `p` for `x` known.
    /// Only the weights of non-zero features move (the L2 penalty too, as
    /// usual for sparse stochastic gradient steps).
    pub fn learn_from(&mut self, x: &Features, p: f64, y: f64) {
        let g = p - y;
        for (i, v) in x.active() {
            let w = &mut self.w[i];
            *w -= self.rate * (g * v + self.l2 * *w);
        }
    }
    /// The weights: the dense features' (bias last), then the bins'.
    pub fn weights(&self) -> &[f64; FEATURES] {
        &self.w
    }
}

/// The layout version of `long-idle`'s saved state: 5 adds the fallbacks
/// per context; 4 (which kept the periodic estimator's wall time of the
/// save) and 3 are still read, the contexts then starting afresh.
const STATE_VERSION: u32 = 5;

impl LongIdle {
    /// How many values its saved state has.
    fn saved_len(&self) -> usize {
        FEATURES
            + MARGINS.len()
            + 3
            + 2
            + 2 * BINS * BINS
            + 2
            + 2
            + 1
            + 4
            + 5
            + PeriodicEstimator::SAVED_LEN
            + self.fallback.saved_len()
            + self.contexts_saved_len()
    }

    /// How many values the contexts add to the saved state: the count of
    /// decisions on a context's fallback, then per context its experts'
    /// values (weighted mean: no rule losses), its two losses and its
    /// period count.
    fn contexts_saved_len(&self) -> usize {
        1 + CONTEXTS * (self.by_context[0].experts.saved_len() + 3)
    }
}

/// `long-idle(...)`: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct LongIdle {
    fallback: ShareExperts,
    model: Logistic,
    breakeven: Nanos,
    /// A fixed margin, or `None` to learn it.
    fixed_margin: Option<f64>,
    /// Discounted counterfactual gain of each candidate margin.
    margin_gain: [f64; MARGINS.len()],
    /// The fallback's remaining wait at the decision (seconds).
    wait_s: f64,
    /// Whether the current period was declared at once.
    acted: bool,
    armed: Alarm,
    /// The current period: when it began, and the features it was judged on.
    began: Option<Nanos>,
    features: Option<Features>,
    /// Whether the decision point of the current period has passed.
    decided: bool,
    last_p: f64,
    /// The last three idle lengths over B, `ln(1 + s/B)`, newest first.
    recent: [f64; 3],
    /// The last idle length over B, `s/B`.
    last_ratio: f64,
    last_end: Option<Nanos>,
    last_long_end: Option<Nanos>,
    long_share: f64,
    /// Discounted (long, all) counts per context cell: the pair (bin of
    /// the last length, bin of the busy stretch before this gap).
    cells: Box<[[f64; 2]; BINS * BINS]>,
    /// The cell of the current period's decision.
    cell: Option<usize>,
    /// Periodic sources, learned from the arrivals that end idle periods.
    periodic: PeriodicEstimator,
    at_once: u64,
    at_once_right: u64,
    /// Discounted count, Σy, Σy² and Σ y·y_prev of the learned periods'
    /// `y = ln(1 + s/B)` ([`LongIdle::serial_correlation`]).
    serial: [f64; 4],
    /// Spin-downs at idle start (module docs, "At idle start").
    zero: ZeroMode,
    /// The fallback kept per context ([`CONTEXTS`] bins of the previous
    /// learned period's length), each learning from its context's periods
    /// only (module docs, "A fallback per context").
    by_context: Box<[ContextFallback]>,
    /// Decisions made on a context's own fallback.
    context_decisions: u64,
    /// The wear budget's pacer, with `per-day` (module docs, "Under a
    /// wear budget").
    pace: Option<WearPace>,
}

/// One context's fallback and its score against the global one.
#[derive(Clone, Debug)]
struct ContextFallback {
    /// Share's experts, learning from this context's periods, acting on
    /// their weighted mean.
    experts: ShareExperts,
    /// Discounted losses ([`ShareExperts::loss`]) in this context's
    /// periods of the global fallback's timeout and of this one's.
    loss: [f64; 2],
    /// This context's learned periods.
    periods: f64,
}

/// Contexts of the per-context fallback: the previous learned period's
/// length by powers of two of `B`, from below `B/16` to at least `4·B`.
pub const CONTEXTS: usize = 8;
/// Learned periods of a context before its own fallback may be acted on.
pub const CONTEXT_AFTER: f64 = 20.0;
/// Per-period discount of a context's two losses.
pub const CONTEXT_DISCOUNT: f64 = 0.99;
/// The context of a period that follows one of `ratio·B`.
fn context(ratio: f64) -> usize {
    bin(ratio).min(CONTEXTS - 1)
}

/// The state of `long-idle`'s spin-downs at idle start (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ZeroMode {
    /// Whether it is on (every idle period is seen, none skipped).
    on: bool,
    /// Whether the current period was declared at its start.
    fired: bool,
    /// Discounted gain (seconds of spinning) of declaring at idle start
    /// over declaring at the decision point, in the periods it did.
    gain: f64,
    /// Learned periods before the next trial may begin.
    countdown: u32,
    /// The wait after the next failed trial (doubles, up to [`ZERO_MAX_WAIT`]).
    wait: u32,
    /// Periods declared at their start, in the current trial.
    streak: u32,
    /// Learned periods in a row, in the current trial, in which the
    /// fallback was not at once (so nothing was declared at the start).
    idle: u32,
    /// Spin-downs at idle start so far.
    count: u64,
}

/// Learned periods before the first trial, and after a trial that paid.
const ZERO_WAIT: u32 = 16;
/// The longest wait between trials.
const ZERO_MAX_WAIT: u32 = 4096;
/// A trial's initial credit, in break-evens: one period shorter than the
/// decision point (a wasted cycle, about `B`) ends it.
const ZERO_CREDIT: f64 = 0.5;
/// Per-period discount of the gain at idle start.
const ZERO_DISCOUNT: f64 = 0.995;
/// Periods declared at their start after which a trial has paid (the
/// wait goes back to [`ZERO_WAIT`]).
const ZERO_PAID: u32 = 256;

/// Per-period discount of the serial-correlation sums.
pub const SERIAL_DISCOUNT: f64 = 0.995;
/// Largest serial correlation (in magnitude) read as independent gaps.
pub const INDEPENDENT: f64 = 0.15;
/// Discounted periods before the gaps may be read as independent.
pub const INDEPENDENT_AFTER: f64 = 50.0;

impl LongIdle {
    /// A detector falling back on `fallback`, acting at once when the
    /// expected saving beats `margin` times the expected waste (`None`:
    /// a learned margin), learning at `rate`.
    pub fn new(fallback: ShareExperts, breakeven: Nanos, margin: Option<f64>, rate: f64) -> Self {
        LongIdle {
            model: Logistic::new(rate, 1e-4),
            breakeven,
            fixed_margin: margin,
            margin_gain: [0.0; MARGINS.len()],
            wait_s: 0.0,
            acted: false,
            armed: Alarm::default(),
            began: None,
            features: None,
            decided: false,
            last_p: 0.0,
            recent: [0.0; 3],
            last_ratio: 0.0,
            last_end: None,
            last_long_end: None,
            long_share: 0.0,
            cells: Box::new([[0.0; 2]; BINS * BINS]),
            cell: None,
            periodic: PeriodicEstimator::new(breakeven),
            at_once: 0,
            at_once_right: 0,
            serial: [0.0; 4],
            zero: ZeroMode {
                countdown: ZERO_WAIT,
                wait: ZERO_WAIT,
                ..ZeroMode::default()
            },
            by_context: vec![
                ContextFallback {
                    experts: fallback.clone().with_decision(Decision::Mean),
                    loss: [0.0; 2],
                    periods: 0.0,
                };
                CONTEXTS
            ]
            .into_boxed_slice(),
            context_decisions: 0,
            pace: None,
            fallback,
        }
    }

    /// The detector held to a wear budget of `per_day` spin-downs a day
    /// (module docs, "Under a wear budget"); `None` or 0: no budget.
    pub fn with_wear_budget(mut self, per_day: Option<u32>) -> Self {
        self.pace = per_day
            .filter(|&n| n > 0)
            .map(|n| WearPace::new(n, self.breakeven));
        self
    }

    /// The wear budget's pacer, when it has one.
    pub fn pace(&self) -> Option<&WearPace> {
        self.pace.as_ref()
    }

    /// The pacer's policy now ([`Paced::AsIs`] without a budget).
    pub fn paced(&self) -> Paced {
        self.pace.as_ref().map_or(Paced::AsIs, WearPace::leading)
    }

    /// The context's fallback that the current period's timeout comes
    /// from, if not the global one: the context of the previous learned
    /// period's length, once it has [`CONTEXT_AFTER`] periods and its own
    /// timeout has lost less there than the global one, and only while
    /// the gaps do not look [`independent`](Self::independent) (where
    /// the previous length tells nothing, a context is noise).
    pub fn context_fallback(&self) -> Option<&ShareExperts> {
        if self.independent() {
            return None;
        }
        let c = &self.by_context[context(self.last_ratio)];
        (c.periods >= CONTEXT_AFTER && c.loss[1] < c.loss[0]).then_some(&c.experts)
    }

    /// The timeout acted on in the current period: the context's
    /// fallback's ([`LongIdle::context_fallback`]) or the global
    /// fallback's ([`LongIdle::fallback_timeout`]).
    pub fn acting_timeout(&self) -> Nanos {
        self.acting().0
    }

    /// [`LongIdle::acting_timeout`], and whether it is a context's.
    fn acting(&self) -> (Nanos, bool) {
        match self.context_fallback() {
            Some(e) => (e.timeout(), true),
            None => (self.fallback_timeout(), false),
        }
    }

    /// Scores the current period's context's fallback against the global
    /// one on a learned period of length `period`, and teaches it.
    fn learn_context(&mut self, period: Nanos) {
        let s = period.as_secs_f64();
        let global = self.fallback.loss(self.fallback_timeout().as_secs_f64(), s);
        let c = &mut self.by_context[context(self.last_ratio)];
        let own = self.fallback.loss(c.experts.timeout().as_secs_f64(), s);
        c.loss = [
            CONTEXT_DISCOUNT * c.loss[0] + global,
            CONTEXT_DISCOUNT * c.loss[1] + own,
        ];
        c.periods += 1.0;
        c.experts.observe(period);
    }

    /// The fallback's experts.
    pub fn fallback(&self) -> &ShareExperts {
        &self.fallback
    }
    /// The logistic model.
    pub fn model(&self) -> &Logistic {
        &self.model
    }
    /// How often it acted at once, and how often the period then did
    /// outlast the break-even time.
    pub fn at_once(&self) -> (u64, u64) {
        (self.at_once, self.at_once_right)
    }

    fn decision_delay(&self) -> Nanos {
        self.fallback.min_timeout()
    }

    /// The margin acted on: the fixed one, or the candidate with the most
    /// counterfactual gain (ties: the more cautious).
    pub fn margin(&self) -> f64 {
        if let Some(m) = self.fixed_margin {
            return m;
        }
        let mut best = MARGINS.len() - 1;
        for j in (0..MARGINS.len()).rev() {
            if self.margin_gain[j] > self.margin_gain[best] {
                best = j;
            }
        }
        MARGINS[best]
    }

    /// Whether margin `m` acts at once with probability `p` and wait `wait`.
    fn acts(&self, m: f64, p: f64, wait: f64) -> bool {
        m.is_finite() && p * wait >= m * (1.0 - p) * self.breakeven.as_secs_f64()
    }

    /// What acting at the decision would have gained over the fallback in
    /// a period of `s` seconds (excesses over the optimum `min(s, B)`).
    fn gain(&self, s: f64) -> f64 {
        let b = self.breakeven.as_secs_f64();
        let d = self.decision_delay().as_secs_f64();
        let t = d + self.wait_s;
        let opt = s.min(b);
        let now = d + b - opt;
        let fallback = if t <= s {
            t + b - opt
        } else {
            (s - b).max(0.0)
        };
        fallback - now
    }

    /// The fallback's timeout acted on. With the `learned` decision (the
    /// default) it is the weighted median only while the gap lengths look
    /// [`independent`](Self::independent) and the median has lost less
    /// than the mean lately; otherwise the mean, whose hedge suits a
    /// workload whose gaps carry information (module docs).
    pub fn fallback_timeout(&self) -> Nanos {
        if self.fallback.decision() != Decision::Learned {
            return self.fallback.timeout();
        }
        let [mean, median] = self.fallback.rule_timeouts();
        if self.independent() && self.fallback.learned_rule() == Decision::Median {
            median
        } else {
            mean
        }
    }

    /// The lag-1 autocorrelation of the learned periods' lengths (as
    /// `ln(1 + s/B)`, discounted by [`SERIAL_DISCOUNT`] per period); 0
    /// before two periods.
    pub fn serial_correlation(&self) -> f64 {
        let [n, sx, sxx, sxy] = self.serial;
        if n < 2.0 {
            return 0.0;
        }
        let mean = sx / n;
        let var = sxx / n - mean * mean;
        if var <= 1e-12 {
            return 0.0;
        }
        ((sxy / n - mean * mean) / var).clamp(-1.0, 1.0)
    }

    /// Whether the gap lengths look independent: the serial correlation
    /// within [`INDEPENDENT`] of 0 after [`INDEPENDENT_AFTER`] (discounted)
    /// periods.
    pub fn independent(&self) -> bool {
        self.serial[0] >= INDEPENDENT_AFTER && self.serial_correlation().abs() < INDEPENDENT
    }

    /// How often it declared an idle period at its start.
    pub fn at_start(&self) -> u64 {
        self.zero.count
    }

    /// Whether the fallback would declare at the decision point itself
    /// (its timeout is its shortest expert's): the regime in which
    /// declaring at idle start instead is tried.
    fn fallback_at_once(&self) -> bool {
        self.acting_timeout() <= self.decision_delay()
    }

    /// Learns, at the end of a period of `s` seconds, what declaring at
    /// idle start gained, and starts or ends trials.
    fn learn_zero(&mut self, s: f64, learned: bool) {
        let b = self.breakeven.as_secs_f64();
        let d = self.decision_delay().as_secs_f64();
        let z = &mut self.zero;
        if z.fired {
            // Against declaring at the decision point: a period shorter
            // than it paid a cycle for nothing, a longer one saved `d`.
            let g = if s < d { s - b } else { d };
            z.gain = ZERO_DISCOUNT * z.gain + g;
            z.streak = z.streak.saturating_add(1);
            if z.streak >= ZERO_PAID {
                z.wait = ZERO_WAIT;
            }
        }
        if z.on && z.gain < 0.0 {
            // A trial that did not pay: the next waits twice as long.
            z.on = false;
            z.countdown = z.wait;
            z.wait = (2 * z.wait).min(ZERO_MAX_WAIT);
            return;
        }
        if !learned {
            return;
        }
        let at_once = self.fallback_at_once();
        let z = &mut self.zero;
        if z.on {
            if at_once {
                z.idle = 0;
            } else {
                // Out of the regime (it may come back: the fallback's
                // rule and the independence test flicker): the trial ends
                // after as many learned periods as begin one.
                z.idle += 1;
                if z.idle >= ZERO_WAIT {
                    z.on = false;
                    z.countdown = z.wait;
                }
            }
        } else {
            z.countdown = z.countdown.saturating_sub(1);
            if z.countdown == 0 && at_once {
                *z = ZeroMode {
                    on: true,
                    gain: ZERO_CREDIT * b,
                    streak: 0,
                    idle: 0,
                    ..*z
                };
            }
        }
    }

    /// The periodic estimator.
    pub fn periodic(&self) -> &PeriodicEstimator {
        &self.periodic
    }

    /// The features of the period deciding now, and its context cell.
    fn features(&self, ctx: &Context) -> (Features, usize) {
        let b = self.breakeven.as_secs_f64();
        // Time since `t` over B (None: long ago).
        let since =
            |t: Option<Nanos>| t.map_or(1e6, |t| (ctx.now - t.min(ctx.now)).as_secs_f64() / b);
        let (sin, cos) = match ctx.clock {
            Some(c) => {
                let h = ((c.0 + ctx.now.0) % (24 * NS_PER_HOUR)) as f64 / NS_PER_HOUR as f64;
                let a = h / 24.0 * std::f64::consts::TAU;
                (a.sin(), a.cos())
            }
            None => (0.0, 0.0),
        };
        let (busy, since_long) = (since(self.last_end), since(self.last_long_end));
        let last = self.last_ratio;
        let c = cell(last, busy);
        let [long, all] = self.cells[c];
        // The cell's share of long periods, with half a period of prior
        // each way, as log-odds: ln((l + ½)/(s + ½)) = ln(1 + 2l) − ln(1 + 2s).
        let odds = (fast_ln_1p(2.0 * long) - fast_ln_1p(2.0 * (all - long))).clamp(-4.0, 4.0);
        let x = Features {
            dense: [
                self.recent[0],
                self.recent[1],
                self.recent[2],
                fast_ln_1p(busy),
                fast_ln_1p(since_long),
                self.long_share,
                sin,
                cos,
                1.0,
            ],
            bins: [bin(last), bin(busy), bin(since_long)],
            offset: CELL_WEIGHT * odds,
        };
        (x, c)
    }
}

/// `ln(1 + x)` for `x ≥ 0`, piecewise linear between powers of two (the
/// exponent and mantissa of `1 + x`): within 0.06 of the true value, exact
/// at powers of two, monotonic and far cheaper than `ln_1p`; the model
/// needs a log-like scale, not the digits.
fn fast_ln_1p(x: f64) -> f64 {
    let y = 1.0 + x.max(0.0);
    let bits = y.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as f64 - 1023.0;
    let mantissa = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    (exp + mantissa - 1.0) * std::f64::consts::LN_2
}

/// The context cell of a gap: the bins of the last length and of the busy
/// stretch before it, jointly (an interaction a linear model cannot form).
fn cell(last: f64, busy: f64) -> usize {
    bin(last) * BINS + bin(busy)
}

/// The power-of-two bin of a ratio to B: below 1/16 is bin 0, at least 16
/// is bin 9.
fn bin(ratio: f64) -> usize {
    if ratio.is_nan() || ratio <= 0.0 {
        return 0;
    }
    // floor(log2(ratio)) from the exponent bits (ratio is positive; a
    // subnormal reads as very small, which is bin 0 anyway).
    let exp = ((ratio.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    (exp + 5).clamp(0, BINS as i64 - 1) as usize
}

impl StartDetector for LongIdle {
    fn wants_events(&self) -> bool {
        false
    }
    fn quiet_below(&self) -> Nanos {
        // A period shorter than the decision delay ends before anything is
        // decided, and is ignored (see on_idle_end).
        if self.armed.deadline().is_none() && !self.zero.on {
            self.decision_delay()
        } else {
            Nanos::ZERO
        }
    }
    fn gauges(&self) -> Vec<(String, f64)> {
        let mut g = vec![
            ("p_long".into(), self.last_p),
            ("margin".into(), self.margin().min(f64::MAX)),
            ("at_once".into(), self.at_once as f64),
            ("at_once_right".into(), self.at_once_right as f64),
            ("at_start".into(), self.zero.count as f64),
            ("serial_correlation".into(), self.serial_correlation()),
            ("by_context".into(), self.context_decisions as f64),
            (
                "acting_timeout_s".into(),
                self.acting_timeout().as_secs_f64(),
            ),
            (
                "budget_timeout_s".into(),
                self.pace.as_ref().map_or(0.0, WearPace::leader_timeout_s),
            ),
        ];
        g.extend(self.fallback.gauges("fallback_"));
        g.extend(
            self.periodic
                .gauges("periodic_", self.began.unwrap_or(Nanos::ZERO)),
        );
        g
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.periodic.set_clock(ctx.clock);
        self.began = Some(ctx.now);
        self.features = None;
        self.cell = None;
        self.decided = false;
        self.acted = false;
        self.zero.fired = false;
        if let Some(p) = self.pace.as_mut() {
            p.set_clock(ctx.clock);
        }
        if self.zero.on
            && self.paced() == Paced::AsIs
            && self.fallback_at_once()
            && gate(&self.periodic, self.breakeven, ctx.now, ctx.now).is_none()
        {
            // Declared at its start: nothing left to decide.
            self.zero.fired = true;
            self.zero.count += 1;
            if let Some(p) = self.pace.as_mut() {
                p.decide(Some(Nanos::ZERO));
            }
            return Some(Start::now(ctx.now));
        }
        self.armed.arm(ctx.now + self.decision_delay());
        None
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.armed.disarm();
        self.began = None;
        let period = ctx.now - began;
        let learned = period >= self.decision_delay();
        // (A period declared at its start began with the trial on, and
        // only this call turns it off.)
        if learned || self.zero.on {
            self.learn_zero(period.as_secs_f64(), learned);
        }
        if learned || self.zero.fired {
            if let Some(p) = self.pace.as_mut() {
                p.end(ctx.now, period);
            }
        }
        if !learned {
            return;
        }
        let long = period >= self.breakeven;
        if self.decided && self.fixed_margin.is_none() {
            let g = self.gain(period.as_secs_f64());
            let (p, wait) = (self.last_p, self.wait_s);
            for (j, &m) in MARGINS.iter().enumerate() {
                let acted = self.acts(m, p, wait);
                self.margin_gain[j] =
                    MARGIN_DISCOUNT * self.margin_gain[j] + if acted { g } else { 0.0 };
            }
        }
        if let Some(c) = self.cell.take() {
            let [l, a] = &mut self.cells[c];
            *l = CELL_DISCOUNT * *l + if long { 1.0 } else { 0.0 };
            *a = CELL_DISCOUNT * *a + 1.0;
        }
        self.periodic.observe(began, ctx.now);
        if let Some(x) = self.features.take() {
            // The features have not changed since the decision: reuse its
            // probability for the gradient step.
            self.model
                .learn_from(&x, self.last_p, if long { 1.0 } else { 0.0 });
        }
        // Before the global fallback learns: both are scored on the
        // timeouts this period was judged on.
        self.learn_context(period);
        self.fallback.observe(period);
        let b = self.breakeven.as_secs_f64();
        self.last_ratio = period.as_secs_f64() / b;
        let y = fast_ln_1p(self.last_ratio);
        let [n, sx, sxx, sxy] = self.serial;
        let d = SERIAL_DISCOUNT;
        // The first period has no predecessor: its pair counts y·y.
        let prev = if n > 0.0 { self.recent[0] } else { y };
        self.serial = [d * n + 1.0, d * sx + y, d * sxx + y * y, d * sxy + y * prev];
        self.recent = [y, self.recent[0], self.recent[1]];
        self.last_end = Some(ctx.now);
        if long {
            self.last_long_end = Some(ctx.now);
        }
        self.long_share = 0.8 * self.long_share + if long { 0.2 } else { 0.0 };
        if self.acted {
            self.at_once_right += u64::from(long);
        }
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.armed.deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        let due = self.armed.deadline().is_some_and(|t| t <= ctx.now);
        if !due {
            return None;
        }
        if self.decided {
            return self.armed.fire(ctx.now);
        }
        self.decided = true;
        let (x, c) = self.features(ctx);
        self.cell = Some(c);
        self.last_p = self.model.predict(&x);
        self.features = Some(x);
        let began = self.began.unwrap_or(ctx.now);
        let (timeout, by_context) = self.acting();
        self.context_decisions += u64::from(by_context);
        let mut at = (began + timeout).max(ctx.now);
        // Expected saving of acting now against its expected waste.
        self.wait_s = (at - ctx.now).as_secs_f64();
        // A confident periodic arrival within B: acting now cannot pay.
        let prediction = self.periodic.predict(ctx.now);
        let gated_now = gate_on(prediction, self.breakeven, ctx.now).is_some();
        let at_once = !gated_now && self.acts(self.margin(), self.last_p, self.wait_s);
        if !at_once {
            // Nor does the fallback's start within B before one: put it
            // off past the arrival's window, once (if still idle, it
            // missed).
            if let Some(later) = gate_on(prediction, self.breakeven, at) {
                at = later;
            }
        }
        let own = if at_once { ctx.now } else { at };
        // Under a wear budget, the pacer's expert decides (module docs,
        // "Under a wear budget"): its own decision, not before a floor,
        // or a timer.
        let paced = match self.pace.as_mut() {
            Some(p) => p.decide(Some(own - began)),
            None => Paced::AsIs,
        };
        let at = match paced {
            Paced::AsIs => own,
            Paced::Floor(f) => own.max(began + f),
            Paced::Timer(t) => (began + t).max(ctx.now),
        };
        if at_once && at == own {
            self.at_once += 1;
            self.acted = true;
        }
        self.armed.arm(at);
        if at <= ctx.now {
            return self.armed.fire(ctx.now);
        }
        None
    }
    fn save(&self, now: Nanos) -> Option<Learned> {
        let mut v = Vec::with_capacity(self.saved_len());
        v.extend_from_slice(&self.model.w);
        v.extend_from_slice(&self.margin_gain);
        v.extend_from_slice(&self.recent);
        v.push(self.last_ratio);
        v.push(self.long_share);
        v.extend(self.cells.iter().flatten());
        v.push(self.at_once as f64);
        v.push(self.at_once_right as f64);
        v.push(ago(now, self.last_end));
        v.push(ago(now, self.last_long_end));
        v.push(self.last_p);
        v.extend_from_slice(&self.serial);
        let z = &self.zero;
        v.extend([
            f64::from(u8::from(z.on)),
            z.gain,
            f64::from(z.countdown),
            f64::from(z.wait),
            z.count as f64,
        ]);
        self.periodic.save_values(now, &mut v);
        self.fallback.save_values(&mut v);
        v.push(self.context_decisions as f64);
        for c in self.by_context.iter() {
            c.experts.save_values(&mut v);
            v.extend_from_slice(&c.loss);
            v.push(c.periods);
        }
        if let Some(p) = &self.pace {
            p.save_values(now, &mut v);
        }
        Some(Learned::new(LONG_IDLE.name, STATE_VERSION, v))
    }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> {
        // Version 3 lacked the periodic estimator's two values of wall
        // time; 3 and 4 lacked the contexts.
        let contexts_len = self.contexts_saved_len();
        let (version, len, periodic_len) = match l.version {
            3 => (
                3,
                self.saved_len() - 2 - contexts_len,
                PeriodicEstimator::SAVED_LEN_V1,
            ),
            4 => (
                4,
                self.saved_len() - contexts_len,
                PeriodicEstimator::SAVED_LEN,
            ),
            _ => (
                STATE_VERSION,
                self.saved_len(),
                PeriodicEstimator::SAVED_LEN,
            ),
        };
        // The wear pacer's values follow, in a budgeted detector's state:
        // a detector with a pacer restores them, one without drops them,
        // and a pacer without saved values starts afresh.
        let pace_values = (version == STATE_VERSION && l.values.len() == len + WearPace::SAVED_LEN)
            .then(|| l.values[len..].to_vec());
        let trimmed;
        let l = match &pace_values {
            Some(_) => {
                trimmed = Learned::new(&l.kind, l.version, l.values[..len].to_vec());
                &trimmed
            }
            None => l,
        };
        let mut pace = self.pace.clone();
        if let (Some(p), Some(v)) = (pace.as_mut(), &pace_values) {
            p.restore_values(v, now).map_err(LearnedError::new)?;
        }
        let v = l.expect(LONG_IDLE.name, version, len)?;
        let mut it = v.iter().copied();
        let mut take = |n: usize| -> Vec<f64> { it.by_ref().take(n).collect() };
        let w = take(FEATURES);
        let gains = take(MARGINS.len());
        let recent = take(3);
        let ratios = take(2);
        let cells = take(2 * BINS * BINS);
        let counts = take(2);
        let ends = take(2);
        let last_p = take(1)[0];
        let serial = take(4);
        let zero = take(5);
        let periodic = take(periodic_len);
        let fallback = take(self.fallback.saved_len());
        let contexts = take(if version >= 5 { contexts_len } else { 0 });
        if w.iter()
            .chain(&gains)
            .chain(&recent)
            .chain(&ratios)
            .any(|x| !x.is_finite())
            || cells.iter().any(|&c| !(c >= 0.0 && c.is_finite()))
            || counts.iter().any(|&c| c < 0.0)
            || !(0.0..=1.0).contains(&last_p)
            || serial.iter().chain(&zero).any(|x| !x.is_finite())
            || serial[0] < 0.0
            || !(zero[0] == 0.0 || zero[0] == 1.0)
            || !(0.0..=f64::from(ZERO_MAX_WAIT)).contains(&zero[2])
            || !(1.0..=f64::from(ZERO_MAX_WAIT)).contains(&zero[3])
            || zero[4] < 0.0
        {
            return Err(LearnedError::new(
                "long-idle: a weight, count or probability out of range",
            ));
        }
        let mut est = self.periodic.clone();
        est.restore_values(&periodic, now)?;
        // Without contexts in the state (versions 3 and 4), they start afresh.
        let mut by_context: Box<[ContextFallback]> = self
            .by_context
            .iter()
            .map(|c| ContextFallback {
                experts: c.experts.fresh(),
                loss: [0.0; 2],
                periods: 0.0,
            })
            .collect();
        let mut context_decisions = 0;
        if let Some((&n, rest)) = contexts.split_first() {
            if !(n >= 0.0 && n < u64::MAX as f64) {
                return Err(LearnedError::new("long-idle: a negative count"));
            }
            context_decisions = n as u64;
            for (c, v) in by_context
                .iter_mut()
                .zip(rest.chunks_exact(rest.len() / CONTEXTS))
            {
                let (experts, rest) = v.split_at(v.len() - 3);
                if rest.iter().any(|&x| !(x >= 0.0 && x.is_finite())) {
                    return Err(LearnedError::new(
                        "long-idle: a context's loss or count out of range",
                    ));
                }
                c.experts.restore_values(experts)?;
                c.loss = [rest[0], rest[1]];
                c.periods = rest[2];
            }
        }
        self.fallback.restore_values(&fallback)?;
        self.by_context = by_context;
        self.context_decisions = context_decisions;
        self.periodic = est;
        self.model.w.copy_from_slice(&w);
        self.margin_gain.copy_from_slice(&gains);
        self.recent.copy_from_slice(&recent);
        (self.last_ratio, self.long_share) = (ratios[0], ratios[1]);
        for (cell, pair) in self.cells.iter_mut().zip(cells.chunks_exact(2)) {
            *cell = [pair[0], pair[1]];
        }
        (self.at_once, self.at_once_right) = (counts[0] as u64, counts[1] as u64);
        self.last_end = from_ago(now, ends[0]);
        self.last_long_end = from_ago(now, ends[1]);
        self.last_p = last_p;
        self.serial.copy_from_slice(&serial);
        self.zero = ZeroMode {
            on: zero[0] == 1.0,
            fired: false,
            gain: zero[1],
            countdown: zero[2] as u32,
            wait: zero[3] as u32,
            streak: 0,
            idle: 0,
            count: zero[4] as u64,
        };
        self.pace = pace;
        Ok(())
    }
}

const LONG_IDLE_PARAMS: [ParamInfo; 11] = [
    ParamInfo::optional(
        "margin",
        ParamKind::Float,
        "0",
        "",
        "act at once when p·T ≥ margin·(1 − p)·B (p: predicted probability of a long period, T: the fallback's remaining wait); > 0 fixes it, larger is more cautious; 0 (default) learns it",
    ),
    ParamInfo::optional(
        "rate",
        ParamKind::Float,
        "0.1",
        "",
        "learning rate of the logistic model (> 0)",
    ),
    EXPERT_PARAMS[0],
    EXPERT_PARAMS[1],
    EXPERT_PARAMS[2],
    EXPERT_PARAMS[3],
    EXPERT_PARAMS[4],
    ParamInfo::optional(
        "delay-weight",
        ParamKind::Float,
        "0",
        "B",
        "price of a spin-up wait, in break-evens (≥ 0): every decision counts a spin-down as costing B·(1 + delay-weight), so a period worth less is left alone (module docs, \"A price per spin-up wait\")",
    ),
    LEARNED_DECISION_PARAM,
    ParamInfo::optional(
        "per-day",
        ParamKind::Int,
        "0",
        "",
        "wear budget, spin-downs a day, spent where budgeted experts saved most (module docs); 0 (default): the disk's own (`max_spindowns_per_day`, `--max-spindowns-per-day`), else none",
    ),
    ParamInfo::optional(
        "pace",
        ParamKind::Bool,
        "true",
        "",
        "whether a wear budget paces the decisions; false: decide as without one (the gate alone holds the budget, as before issue 75)",
    ),
];

const LONG_IDLE_GAUGES: [GaugeInfo; 19] = {
    let [a, b, c, d, e, f] = periodic_gauges!("periodic_");
    let [f1, f2, f3, f4] = FALLBACK_GAUGES;
    [
        GaugeInfo::new("p_long", "chance the idle period is long", GaugeUnit::Ratio),
        GaugeInfo::new("margin", "at-once margin", GaugeUnit::Number),
        GaugeInfo::new("at_once", "acted at once", GaugeUnit::Times),
        GaugeInfo::new("at_once_right", "rightly", GaugeUnit::Times),
        GaugeInfo::new("at_start", "declared at idle start", GaugeUnit::Times),
        GaugeInfo::new(
            "serial_correlation",
            "serial correlation of idle lengths",
            GaugeUnit::Number,
        ),
        GaugeInfo::new(
            "by_context",
            "decided on its context's fallback",
            GaugeUnit::Times,
        ),
        GaugeInfo::new(
            "acting_timeout_s",
            "timeout acted on now",
            GaugeUnit::Seconds,
        ),
        GaugeInfo::new(
            "budget_timeout_s",
            "wear budget's timeout or floor (0: none)",
            GaugeUnit::Seconds,
        ),
        f1,
        f2,
        f3,
        f4,
        a,
        b,
        c,
        d,
        e,
        f,
    ]
};

/// Catalogue entry of `long-idle`.
pub const LONG_IDLE: ComponentInfo = ComponentInfo {
    name: "long-idle",
    role: Role::StartDetector,
    summary: "learns online whether an idle period will outlast break-even and acts at once when confident; otherwise waits for the share timeout",
    source: "§3.1.1 timer-based, extended: online logistic model over idle history and time of day, share fallback (Helmbold et al. 2000)",
    params: &LONG_IDLE_PARAMS,
    inputs: None,
    offline: false,
    gauges: &LONG_IDLE_GAUGES,
};

pub(crate) fn register(r: &mut Registry) {
    r.register(LONG_IDLE, |p| {
        let fallback = ShareExperts::from_params(p)?;
        // The break-even time its decisions weigh: a spin-up's wait
        // priced in (module docs, "A price per spin-up wait").
        let delay_weight = p.float_in("delay-weight", 0.0, 1e3)?;
        let b = p.require_breakeven("min")?.mul_f64(1.0 + delay_weight);
        let margin = p.float_in("margin", 0.0, 1e6)?;
        let margin = (margin > 0.0).then_some(margin);
        let rate = p.float_in("rate", f64::MIN_POSITIVE, 10.0)?;
        // 0: the disk's own budget, when the network is built for one.
        let pace = p.bool("pace")?;
        let per_day = match p.int_in("per-day", 0, 1_000_000)? as u32 {
            0 => p.wear_budget(),
            n => Some(n),
        }
        .filter(|_| pace);
        Ok(Built::Start(Box::new(
            LongIdle::new(fallback, b, margin, rate).with_wear_budget(per_day),
        )))
    });
}

#[cfg(test)]
mod tests;
