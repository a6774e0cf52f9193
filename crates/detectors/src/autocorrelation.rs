//! `autocorrelation(bin, horizon, history, recompute, threshold)`: a
//! duration predictor from the autocorrelation of the arrival process
//! (§3.1.2 "autocorrelation").
//!
//! Time is cut into bins of `bin`; a bin is *occupied* when a request
//! arrived in it. Over the last `history` of bins the predictor estimates,
//! for every lag `τ = 1 … horizon/bin`,
//!
//! `g(τ) = P(bin t+τ occupied | bin t occupied)`
//!
//! = (occupied pairs at distance τ) / (occupied bins with `t+τ` inside the
//! history): the normalised autocorrelation of the occupancy series. It is
//! expensive, so it is recomputed at most every `recompute` (at the next
//! call after that), not continuously; computing it costs
//! `O(horizon/bin × history/bin / 64)` word operations.
//!
//! The prediction counts from the bin of the last arrival `b`: the idle
//! period is predicted to last until the first bin `b + τ` not yet begun
//! whose `g(τ) ≥ threshold` ("the period during which the probability of
//! arrival is below some threshold"), or to the end of the horizon when
//! there is none.
//!
//! - `duration(now)`: the time from `now` to that bin's start (zero — no
//!   prediction — when an arrival is already likely in the current bin).
//! - `continuance(now)`: the same from the later `now`; `None` when past
//!   the horizon or when an arrival is likely now.

use std::collections::VecDeque;

use lull_core::component::{Context, DurationPredictor};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError, ago, from_ago};
use lull_core::registry::{Built, ComponentInfo, ParamError, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

/// The autocorrelation duration predictor; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Autocorrelation {
    bin: Nanos,
    lags: usize,
    hist: usize,
    recompute: Nanos,
    threshold: f64,
    bins: VecDeque<bool>,
    /// Bin index of the back of `bins`.
    cur: Option<u64>,
    last_arrival_bin: Option<u64>,
    /// `g[τ - 1]` for τ = 1..=lags.
    g: Vec<f64>,
    computed_at: Option<Nanos>,
}

impl Autocorrelation {
    /// Bins of `bin`, lags up to `horizon`, `history` remembered,
    /// recomputed every `recompute`, arrival probability `threshold`.
    pub fn new(
        bin: Nanos,
        horizon: Nanos,
        history: Nanos,
        recompute: Nanos,
        threshold: f64,
    ) -> Self {
        let lags = (horizon.0 / bin.0).max(1) as usize;
        let hist = ((history.0 / bin.0) as usize).max(lags + 1);
        Autocorrelation {
            bin,
            lags,
            hist,
            recompute,
            threshold,
            bins: VecDeque::with_capacity(hist),
            cur: None,
            last_arrival_bin: None,
            g: vec![0.0; lags],
            computed_at: None,
        }
    }
    /// The estimated conditional arrival probability at each lag (from 1
    /// bin), as of the last computation.
    pub fn correlogram(&self) -> &[f64] {
        &self.g
    }

    fn advance(&mut self, b: u64) {
        match self.cur {
            None => {
                self.bins.push_back(false);
                self.cur = Some(b);
            }
            Some(c) if b > c => {
                let k = (b - c).min(self.hist as u64);
                for _ in 0..k {
                    if self.bins.len() == self.hist {
                        self.bins.pop_front();
                    }
                    self.bins.push_back(false);
                }
                self.cur = Some(b);
            }
            _ => {}
        }
    }

    fn compute(&mut self) {
        let h = self.bins.len();
        let words = h.div_ceil(64) + 1;
        let mut w = vec![0u64; words];
        let mut prefix = vec![0u32; h + 1];
        for (i, &x) in self.bins.iter().enumerate() {
            if x {
                w[i / 64] |= 1 << (i % 64);
            }
            prefix[i + 1] = prefix[i] + u32::from(x);
        }
        for tau in 1..=self.lags {
            if tau >= h {
                self.g[tau - 1] = 0.0;
                continue;
            }
            let (q, r) = (tau / 64, tau % 64);
            let mut num = 0u32;
            for i in 0..words {
                let lo = w.get(i + q).copied().unwrap_or(0);
                let hi = w.get(i + q + 1).copied().unwrap_or(0);
                let shifted = if r == 0 {
                    lo
                } else {
                    (lo >> r) | (hi << (64 - r))
                };
                num += (w[i] & shifted).count_ones();
            }
            let den = prefix[h - tau];
            self.g[tau - 1] = if den == 0 {
                0.0
            } else {
                f64::from(num) / f64::from(den)
            };
        }
    }

    fn predict(&mut self, now: Nanos) -> Option<Nanos> {
        if self.computed_at.is_none_or(|c| now >= c + self.recompute) {
            self.compute();
            self.computed_at = Some(now);
        }
        let lb = self.last_arrival_bin?;
        let lag0 = (now.0 / self.bin.0).saturating_sub(lb) as usize;
        if lag0 > self.lags {
            return None;
        }
        let tau = (lag0.max(1)..=self.lags)
            .find(|&t| self.g[t - 1] >= self.threshold)
            .unwrap_or(self.lags + 1);
        let end = Nanos((lb + tau as u64).saturating_mul(self.bin.0));
        (end > now).then(|| end - now)
    }
}

impl DurationPredictor for Autocorrelation {
    fn on_event(&mut self, ev: &Event, _ctx: &Context) {
        if ev.is_arrival() {
            let b = ev.time.0 / self.bin.0;
            self.advance(b);
            if let Some(back) = self.bins.back_mut() {
                *back = true;
            }
            self.last_arrival_bin = Some(b);
        }
    }
    fn duration(&mut self, now: Nanos) -> Option<Nanos> {
        Some(self.predict(now).unwrap_or(Nanos::ZERO))
    }
    fn continuance(&mut self, now: Nanos, _elapsed: Nanos) -> Option<Nanos> {
        self.predict(now)
    }
    fn save(&self, now: Nanos) -> Option<Learned> {
        // Bin indices relative to the bin of `now`, so that they mean the
        // same on another clock.
        let now_bin = now.0 / self.bin.0;
        let off = |b: Option<u64>| b.map_or(-1.0, |b| now_bin.saturating_sub(b) as f64);
        let mut v = self.g.clone();
        v.push(ago(now, self.computed_at));
        v.push(off(self.cur));
        v.push(off(self.last_arrival_bin));
        v.push(self.bins.len() as f64);
        v.extend(self.bins.iter().map(|&b| f64::from(u8::from(b))));
        Some(Learned::new(AUTOCORRELATION.name, 1, v))
    }
    fn restore(&mut self, l: &Learned, now: Nanos) -> Result<(), LearnedError> {
        let lags = self.g.len();
        let n = l.values.get(lags + 3).copied().unwrap_or(-1.0);
        if !(n >= 0.0 && n <= self.hist as f64) {
            return Err(LearnedError::new(format!(
                "{}: a history of {n} bins where it keeps {}",
                AUTOCORRELATION.name, self.hist
            )));
        }
        let v = l.expect(AUTOCORRELATION.name, 1, lags + 4 + n as usize)?;
        let now_bin = now.0 / self.bin.0;
        let back = |x: f64| (x >= 0.0).then(|| now_bin.saturating_sub(x as u64));
        self.g.copy_from_slice(&v[..lags]);
        self.computed_at = from_ago(now, v[lags]);
        self.cur = back(v[lags + 1]);
        self.last_arrival_bin = back(v[lags + 2]);
        self.bins = v[lags + 4..].iter().map(|&b| b != 0.0).collect();
        Ok(())
    }
}

/// Catalogue entry of `autocorrelation`.
pub const AUTOCORRELATION: ComponentInfo = ComponentInfo {
    name: "autocorrelation",
    role: Role::DurationPredictor,
    summary: "predicts the span after the last arrival where the arrival probability (from the autocorrelation of the arrival process) stays below a threshold",
    source: "§3.1.2 autocorrelation",
    params: &[
        ParamInfo::optional(
            "bin",
            ParamKind::Duration,
            "100ms",
            "s",
            "time resolution (> 0)",
        ),
        ParamInfo::optional(
            "horizon",
            ParamKind::Duration,
            "30s",
            "s",
            "longest lag, the longest prediction (>= bin, at most 100000 bins)",
        ),
        ParamInfo::optional(
            "history",
            ParamKind::Duration,
            "10m",
            "s",
            "arrival history the autocorrelation is computed over (> horizon, at most 10000000 bins)",
        ),
        ParamInfo::optional(
            "recompute",
            ParamKind::Duration,
            "1m",
            "s",
            "how often the autocorrelation is recomputed (> 0)",
        ),
        ParamInfo::optional(
            "threshold",
            ParamKind::Float,
            "0.1",
            "probability",
            "arrival probability that ends the prediction (0 < threshold <= 1)",
        ),
    ],
    inputs: None,
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(AUTOCORRELATION, |p| {
        let bin = p.positive_duration("bin")?;
        let horizon = p.positive_duration("horizon")?;
        if horizon < bin || horizon.0 / bin.0 > 100_000 {
            return Err(ParamError::new(
                "horizon",
                format!("{horizon} must be at least bin={bin} and at most 100000 bins"),
            ));
        }
        let history = p.positive_duration("history")?;
        if history <= horizon || history.0 / bin.0 > 10_000_000 {
            return Err(ParamError::new(
                "history",
                format!("{history} must exceed horizon={horizon} and be at most 10000000 bins"),
            ));
        }
        let threshold = p.float("threshold")?;
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(ParamError::new(
                "threshold",
                format!("{threshold} is outside (0, 1]"),
            ));
        }
        Ok(Built::Duration(Box::new(Autocorrelation::new(
            bin,
            horizon,
            history,
            p.positive_duration("recompute")?,
            threshold,
        ))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request};

    #[test]
    fn predicts_until_the_next_periodic_arrival() {
        let ms = Nanos::from_millis;
        let mut a = Autocorrelation::new(ms(100), ms(5000), ms(60_000), ms(60_000), 0.5);
        // One arrival every second, at k s + 20 ms.
        for k in 0..=100u64 {
            let r = Request::new(ms(1000 * k + 20), ms(1000 * k + 30), Op::Read, 0, 512);
            a.on_event(&Event::arrival(&r), &Context::at(r.arrival));
        }
        // The last arrival is in bin 1000; lag 10 has probability 1, the
        // others 0: idle until 101.0 s.
        assert_eq!(a.duration(ms(100_050)), Some(ms(950)));
        assert!((a.correlogram()[9] - 1.0).abs() < 1e-12);
        assert_eq!(a.correlogram()[4], 0.0);
        assert_eq!(a.continuance(ms(100_500), ms(450)), Some(ms(500)));
        // Past the likely arrival: no more prediction.
        assert_eq!(a.continuance(ms(101_000), ms(950)), None);
    }
}
