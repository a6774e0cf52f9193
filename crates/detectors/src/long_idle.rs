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
//! in a replay (so the replay may skip such periods, exactly).
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
//! Its gauges report the last probability, how often it acted at once and
//! how often that was right, the fallback's timeout and leader, and the
//! periodic sources (`periodic_*`).

use lull_core::component::{Context, Start, StartDetector};
use lull_core::learned::{Learned, LearnedError, ago, from_ago};
use lull_core::registry::{
    Built, ComponentInfo, GaugeInfo, GaugeUnit, ParamInfo, ParamKind, Registry, Role,
};
use lull_core::time::Nanos;

use crate::periodic::{PeriodicEstimator, gate, periodic_gauges};
use crate::share::{EXPERT_PARAMS, FALLBACK_GAUGES, ShareExperts};
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

/// The layout version of `long-idle`'s saved state.
const STATE_VERSION: u32 = 2;

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
            + PeriodicEstimator::SAVED_LEN
            + self.fallback.saved_len()
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
}

impl LongIdle {
    /// A detector falling back on `fallback`, acting at once when the
    /// expected saving beats `margin` times the expected waste (`None`:
    /// a learned margin), learning at `rate`.
    pub fn new(fallback: ShareExperts, breakeven: Nanos, margin: Option<f64>, rate: f64) -> Self {
        LongIdle {
            fallback,
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
        }
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
        if self.armed.deadline().is_none() {
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
        ];
        g.extend(self.fallback.gauges("fallback_"));
        g.extend(
            self.periodic
                .gauges("periodic_", self.began.unwrap_or(Nanos::ZERO)),
        );
        g
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.began = Some(ctx.now);
        self.features = None;
        self.cell = None;
        self.decided = false;
        self.acted = false;
        self.armed.arm(ctx.now + self.decision_delay());
        None
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        self.armed.disarm();
        self.began = None;
        let period = ctx.now - began;
        if period < self.decision_delay() {
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
        self.fallback.observe(period);
        let b = self.breakeven.as_secs_f64();
        self.last_ratio = period.as_secs_f64() / b;
        self.recent = [fast_ln_1p(self.last_ratio), self.recent[0], self.recent[1]];
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
        let mut at = (began + self.fallback.timeout()).max(ctx.now);
        // Expected saving of acting now against its expected waste.
        self.wait_s = (at - ctx.now).as_secs_f64();
        // A confident periodic arrival within B: acting now cannot pay.
        let gated_now = gate(&self.periodic, self.breakeven, ctx.now, ctx.now).is_some();
        if !gated_now && self.acts(self.margin(), self.last_p, self.wait_s) {
            self.at_once += 1;
            self.acted = true;
            return self.armed.fire(ctx.now);
        }
        // Nor does the fallback's start within B before one: put it off
        // past the arrival's window, once (if still idle, it missed).
        if let Some(later) = gate(&self.periodic, self.breakeven, ctx.now, at) {
            at = later;
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
        self.periodic.save_values(now, &mut v);
        self.fallback.save_values(&mut v);
        Some(Learned::new(LONG_IDLE.name, STATE_VERSION, v))
    }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect(LONG_IDLE.name, STATE_VERSION, self.saved_len())?;
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
        let periodic = take(PeriodicEstimator::SAVED_LEN);
        let fallback = take(self.fallback.saved_len());
        if w.iter()
            .chain(&gains)
            .chain(&recent)
            .chain(&ratios)
            .any(|x| !x.is_finite())
            || cells.iter().any(|&c| !(c >= 0.0 && c.is_finite()))
            || counts.iter().any(|&c| c < 0.0)
            || !(0.0..=1.0).contains(&last_p)
        {
            return Err(LearnedError::new(
                "long-idle: a weight, count or probability out of range",
            ));
        }
        let mut est = self.periodic.clone();
        est.restore_values(&periodic, now)?;
        self.fallback.restore_values(&fallback)?;
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
        Ok(())
    }
}

const LONG_IDLE_PARAMS: [ParamInfo; 9] = [
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
    EXPERT_PARAMS[5],
    EXPERT_PARAMS[6],
];

const LONG_IDLE_GAUGES: [GaugeInfo; 14] = {
    let [a, b, c, d, e, f] = periodic_gauges!("periodic_");
    let [f1, f2, f3, f4] = FALLBACK_GAUGES;
    [
        GaugeInfo::new("p_long", "chance the idle period is long", GaugeUnit::Ratio),
        GaugeInfo::new("margin", "at-once margin", GaugeUnit::Number),
        GaugeInfo::new("at_once", "acted at once", GaugeUnit::Times),
        GaugeInfo::new("at_once_right", "rightly", GaugeUnit::Times),
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
        let b = p.require_breakeven("min")?;
        let margin = p.float_in("margin", 0.0, 1e6)?;
        let margin = (margin > 0.0).then_some(margin);
        let rate = p.float_in("rate", f64::MIN_POSITIVE, 10.0)?;
        Ok(Built::Start(Box::new(LongIdle::new(
            fallback, b, margin, rate,
        ))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_log_is_close_and_monotonic() {
        let mut last = -1.0;
        for i in 0..10_000 {
            let x = i as f64 * 0.37;
            let f = fast_ln_1p(x);
            assert!((f - x.ln_1p()).abs() < 0.06, "{x}: {f} vs {}", x.ln_1p());
            assert!(f >= last);
            last = f;
        }
        assert_eq!(fast_ln_1p(0.0), 0.0);
        assert!((fast_ln_1p(3.0) - 4f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn bins_are_powers_of_two_of_b() {
        assert_eq!(bin(0.0), 0);
        assert_eq!(bin(0.01), 0);
        assert_eq!(bin(1.0 / 16.0), 1);
        assert_eq!(bin(1.0), 5);
        assert_eq!(bin(1.9), 5);
        assert_eq!(bin(2.0), 6);
        assert_eq!(bin(16.0), 9);
        assert_eq!(bin(1e9), 9);
    }

    /// Drives `d` through one idle period of `len` starting at `at`; returns
    /// the probability it decided with (if the period reached a decision).
    fn period(d: &mut LongIdle, at: Nanos, len: Nanos) -> Option<f64> {
        d.on_idle_begin(&Context::at(at));
        let mut p = None;
        let decide = at + d.decision_delay();
        if len > d.decision_delay() {
            d.on_deadline(&Context::at(decide));
            p = Some(d.last_p);
        }
        d.on_idle_end(&Context::at(at + len), at);
        p
    }

    #[test]
    fn the_context_cell_learns_what_follows_what() {
        // B = 10 s. Every cycle: an 8 s gap, then (right after it) a long
        // 200 s gap; then twenty 2 s gaps, each right after another. The
        // long gap and the short ones share the busy-stretch bin and the
        // hour (no clock), and only the last length tells them apart.
        let b = Nanos::from_secs(10);
        let experts = ShareExperts::new(
            32,
            Nanos::from_secs_f64(10.0 / 32.0),
            Nanos::from_secs(80),
            b,
            4.0,
            0.08,
            0.0,
        );
        let mut d = LongIdle::new(experts, b, None, 0.1);
        let mut t = Nanos::ZERO;
        let busy = Nanos::from_millis(10);
        let (mut after_medium, mut after_short) = (0.0, 0.0);
        for _ in 0..40 {
            for (len, slot) in [(8.0, None), (200.0, Some(0)), (2.0, None)]
                .into_iter()
                .chain(std::iter::repeat_n((2.0, Some(1)), 19))
            {
                let len = Nanos::from_secs_f64(len);
                let p = period(&mut d, t, len);
                if let (Some(p), Some(k)) = (p, slot) {
                    *[&mut after_medium, &mut after_short][k] = p;
                }
                t = t + len + busy;
            }
        }
        let [long, all] = d.cells[cell(0.8, 0.001)];
        assert!(long > 0.9 * all && all > 10.0, "{long}/{all}");
        let [long, all] = d.cells[cell(0.2, 0.001)];
        assert!(long < 0.01 * all && all > 100.0, "{long}/{all}");
        assert!(after_medium > 0.9, "{after_medium}");
        assert!(after_short < 0.1, "{after_short}");
    }

    #[test]
    fn the_logistic_model_learns_a_separable_rule() {
        let mut m = Logistic::new(0.5, 0.0);
        let bias = |first: f64| {
            let mut dense = [0.0; DENSE];
            dense[0] = first;
            dense[DENSE - 1] = 1.0;
            Features {
                dense,
                bins: [0; GROUPS],
                offset: 0.0,
            }
        };
        let (long, short) = (bias(1.0), bias(0.0));
        assert_eq!(m.predict(&long), 0.5);
        for _ in 0..200 {
            m.learn(&long, 1.0);
            m.learn(&short, 0.0);
        }
        assert!(m.predict(&long) > 0.9, "{}", m.predict(&long));
        assert!(m.predict(&short) < 0.1, "{}", m.predict(&short));
    }
}
