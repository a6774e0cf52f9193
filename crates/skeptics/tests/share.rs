//! `share` learns which input to trust: over timers from 0.1 s to 30 s on
//! a request stream whose best timeout changes halfway, it converges to
//! the better input in each half.

use lull_core::prelude::*;
use lull_detectors::duration::NoDuration;
use lull_detectors::timer::Timer;
use lull_skeptics::share::Share;

const TIMEOUTS_MS: [u64; 5] = [100, 1_000, 3_000, 10_000, 30_000];
const BREAKEVEN: Nanos = Nanos::from_secs(5);
const PERIODS_PER_HALF: usize = 80;
/// Periods into each half after which the best input must hold more than
/// half the weight, for the rest of the half.
const SETTLE: usize = 16;

/// A hand-wired network: five `timer(t) + no-duration` predictors feeding
/// one `Share`, so the test can read the weights through
/// `Engine::detector`. It delivers stimuli the way `Network` does: the
/// predictors first, then the skeptic sees the stimulus, then the
/// predictions in input order.
#[derive(Debug)]
struct Lab {
    predictors: Vec<Predictor<Timer, NoDuration>>,
    share: Share,
    inputs: Vec<(usize, Prediction)>,
    buf: Vec<Prediction>,
}

impl Lab {
    fn new(eta: f64, alpha: f64) -> Self {
        Lab {
            predictors: TIMEOUTS_MS
                .iter()
                .map(|&t| Predictor::new(Timer::new(Nanos::from_millis(t)), NoDuration))
                .collect(),
            share: Share::new(TIMEOUTS_MS.len(), eta, alpha, BREAKEVEN),
            inputs: Vec::new(),
            buf: Vec::new(),
        }
    }
    fn collect(&mut self, i: usize) {
        for p in self.buf.drain(..) {
            self.inputs.push((i, p));
        }
    }
    fn deliver(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        for (i, p) in self.inputs.drain(..) {
            out.extend(self.share.on_input(i, &p, ctx));
        }
    }
}

impl Detector for Lab {
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        for i in 0..self.predictors.len() {
            self.predictors[i].on_event(ev, ctx, &mut self.buf);
            self.collect(i);
        }
        out.extend(self.share.on_event(ev, ctx));
        self.deliver(ctx, out);
    }
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        for i in 0..self.predictors.len() {
            self.predictors[i].on_idle_begin(ctx, &mut self.buf);
            self.collect(i);
        }
        out.extend(self.share.on_idle_begin(ctx));
        self.deliver(ctx, out);
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        for p in &mut self.predictors {
            p.on_idle_end(ctx, began);
        }
        self.share.on_idle_end(ctx, began);
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.predictors
            .iter()
            .filter_map(|p| p.next_deadline())
            .min()
    }
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        for i in 0..self.predictors.len() {
            if self.predictors[i]
                .next_deadline()
                .is_some_and(|d| d <= ctx.now)
            {
                self.predictors[i].on_deadline(ctx, &mut self.buf);
                self.collect(i);
            }
        }
        self.deliver(ctx, out);
    }
}

/// 10 ms requests separated by `gaps`.
fn trace(gaps: &[Nanos]) -> Vec<Request> {
    let service = Nanos::from_millis(10);
    let mut t = Nanos::ZERO;
    let mut v = Vec::new();
    for &g in gaps {
        v.push(Request::new(t, t + service, Op::Read, 0, 4096));
        t = t + service + g;
    }
    v.push(Request::new(t, t + service, Op::Read, 0, 4096));
    v
}

/// First half: 60 s gaps, where the earliest timer (0.1 s) is best. Second
/// half: three 2 s gaps (shorter than the 5 s break-even: spinning down
/// costs) then a 20 s one, where timer(3 s) is best: it never fires in the
/// short gaps and fires early in the long one.
fn workload() -> Vec<Nanos> {
    let s = Nanos::from_secs;
    let mut gaps = vec![s(60); PERIODS_PER_HALF];
    gaps.extend((0..PERIODS_PER_HALF).map(|i| if i % 4 == 3 { s(20) } else { s(2) }));
    gaps
}

/// Runs the workload and returns the weights after each idle period.
fn weight_history(eta: f64, alpha: f64) -> Vec<Vec<f64>> {
    let timeline = Timeline::from_requests(&trace(&workload()));
    let mut engine = Engine::with_policy(Lab::new(eta, alpha), StopPolicy::EarlierOf, NoTask);
    let mut history = Vec::new();
    for ev in timeline.events() {
        let before = engine.detector().share.periods();
        engine.push(ev).unwrap();
        if engine.detector().share.periods() > before {
            history.push(engine.detector().share.weights().to_vec());
        }
    }
    history
}

#[test]
fn share_converges_to_the_best_input_in_each_half() {
    let history = weight_history(2.0, 0.01);
    assert_eq!(history.len(), 2 * PERIODS_PER_HALF);
    for (half, best) in [(0, 0usize), (1, 2usize)] {
        for k in SETTLE..PERIODS_PER_HALF {
            let w = &history[half * PERIODS_PER_HALF + k];
            assert!(
                w[best] > 0.5,
                "half {half}, period {k}: timer({} ms) should hold > 0.5 of the weight: {w:?}",
                TIMEOUTS_MS[best]
            );
            let sum: f64 = w.iter().sum();
            assert!((sum - 1.0).abs() < 1e-9, "weights sum to {sum}");
        }
    }
    // By the end of each half the best input holds almost everything.
    assert!(history[PERIODS_PER_HALF - 1][0] > 0.95);
    assert!(history[2 * PERIODS_PER_HALF - 1][2] > 0.9);
}

#[test]
fn without_sharing_the_switch_is_slower() {
    // α = 0 is plain exponential weights: after a long first half the old
    // leader keeps its weight longer when the workload changes.
    let fixed = weight_history(2.0, 0.01);
    let plain = weight_history(2.0, 0.0);
    let switch = |h: &[Vec<f64>]| {
        (PERIODS_PER_HALF..h.len())
            .find(|&k| h[k][2] > 0.5)
            .map(|k| k - PERIODS_PER_HALF)
    };
    let (a, b) = (
        switch(&fixed).unwrap(),
        switch(&plain).unwrap_or(usize::MAX),
    );
    assert!(
        a < b,
        "fixed share switched after {a} periods, plain after {b}"
    );
}

/// The same network built from a spec: once it has learned, `share`
/// emits what the best timer predicts, so its predictions start 0.1 s into
/// the 60 s gaps in the first half and 3 s into the 20 s gaps (and never
/// in the 2 s gaps) at the end of the second.
#[test]
fn share_in_a_spec_network_follows_the_best_timer() {
    let mut registry = Registry::new();
    lull_detectors::register(&mut registry);
    lull_skeptics::register(&mut registry);
    let spec = "follow-share(eta=2, alpha=0.01, breakeven=5s; timer(100ms), timer(1s), timer(3s), timer(10s), timer(30s))";
    let network = build_network(spec, &registry).unwrap();
    let requests = trace(&workload());
    let timeline = Timeline::from_requests(&requests);
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, NoTask).with_log();
    replay(&timeline, &mut engine).unwrap();
    // The idle period each prediction falls in, and how far into it.
    let periods: Vec<IdlePeriod> = timeline.idle_periods().collect();
    let mut offsets = vec![Vec::new(); periods.len()];
    for e in engine.log() {
        if let LogEntry::Prediction { prediction, .. } = e {
            let k = periods
                .iter()
                .position(|p| p.start <= prediction.start && prediction.start < p.end)
                .expect("every prediction falls in an idle period");
            offsets[k].push(prediction.start - periods[k].start);
        }
    }
    let ms = Nanos::from_millis;
    for (k, o) in offsets
        .iter()
        .enumerate()
        .take(PERIODS_PER_HALF)
        .skip(SETTLE)
    {
        assert_eq!(o, &[ms(100)], "first half, period {k}");
    }
    for (k, o) in offsets
        .iter()
        .enumerate()
        .skip(PERIODS_PER_HALF + 2 * SETTLE)
    {
        let expect: &[Nanos] = if periods[k].len() > Nanos::from_secs(10) {
            &[ms(3000)]
        } else {
            &[]
        };
        assert_eq!(o, expect, "second half, period {k}");
    }
}
