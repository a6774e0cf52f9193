//! `dpll(period, …)`: a digital phase-locked loop that locks onto periodic
//! work, such as the 30 s Unix sync daemon, and predicts the gaps between
//! its bursts (§3.1.1 "periodic", Table 4 `PLL`; Lindsey 1981, Massalin
//! 1989).
//!
//! **Bursts.** An arrival is a burst *onset* when no request arrived in the
//! `gap` before it; the burst goes on while arrivals follow each other
//! within `gap`. Its length runs from the onset to the last time the device
//! emptied during it.
//!
//! **The loop.** The DPLL keeps the expected time `next` of the next onset
//! and a period estimate `p` (starting at `period`). At an onset `t` the
//! phase error is `e = t − next`.
//!
//! - *Acquisition* (unlocked): `next` is first rolled forward by whole
//!   periods to the nearest expected onset, then the loop snaps to the onset
//!   (`next = t + p`). An onset with `|e| ≤ tolerance` counts as in phase
//!   (and corrects the period, `p += beta·e`); any other resets the count;
//!   after `lock` in-phase onsets in a row the loop is **locked**.
//! - *Tracking* (locked): only onsets with `|e| ≤ tolerance` are taken as
//!   the periodic work (others are foreign traffic and ignored); they
//!   correct the phase by `alpha·e` and the period by `beta·e`. When an
//!   expected onset passes (`now > next + tolerance`) without one, `next`
//!   advances by `p` and a miss is counted; `lock` misses in a row lose the
//!   lock, and acquisition starts again (so a phase shift is followed by
//!   re-locking).
//!
//! The period estimate stays within `[period/2, 3·period/2]`.
//!
//! With a steady period the loop locks at the onset of the `(lock + 1)`-th
//! burst; after a phase shift larger than `tolerance` it re-locks within
//! `2·lock + 1` bursts.
//!
//! **Predictions.** While locked, whenever the device empties outside the
//! current periodic burst (at or after `onset + last burst length`) and
//! before `next − guard`, it declares an idle period starting then, with
//! the time left until `next − guard` as its duration hint (used when it is
//! paired with `no-duration`, the default). So it requires full idleness:
//! it only declares when the device has just emptied.

use lull_core::component::{Context, Start, StartDetector};
use lull_core::event::Event;
use lull_core::registry::{Built, ComponentInfo, ParamError, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

/// The digital phase-locked loop; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Dpll {
    nominal: Nanos,
    gap: Nanos,
    guard: Nanos,
    tolerance: Nanos,
    lock: u32,
    alpha: f64,
    beta: f64,
    p: Nanos,
    next: Option<Nanos>,
    locked: bool,
    good: u32,
    misses: u32,
    last_arrival: Option<Nanos>,
    /// Onset of the current cluster of arrivals, and whether it is the
    /// periodic burst.
    cluster: Option<(Nanos, bool)>,
    /// Last time the device emptied within the current cluster.
    cluster_end: Nanos,
    burst_len: Nanos,
}

/// Settings of a [`Dpll`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DpllConfig {
    /// Nominal period.
    pub period: Nanos,
    /// Quiet time that separates bursts.
    pub gap: Nanos,
    /// Margin left before the next expected burst.
    pub guard: Nanos,
    /// Largest phase error of an in-phase onset.
    pub tolerance: Nanos,
    /// In-phase onsets to lock; misses to lose the lock.
    pub lock: u32,
    /// Phase gain while locked (0 < alpha ≤ 1).
    pub alpha: f64,
    /// Period gain (0 ≤ beta ≤ 1).
    pub beta: f64,
}

impl DpllConfig {
    /// The defaults of the catalogue for a nominal `period`.
    pub fn new(period: Nanos) -> Self {
        DpllConfig {
            period,
            gap: Nanos::from_secs(1),
            guard: Nanos::from_secs(1),
            tolerance: Nanos::from_secs(1),
            lock: 3,
            alpha: 0.5,
            beta: 0.1,
        }
    }
}

impl Dpll {
    /// A DPLL with `cfg`.
    pub fn new(cfg: DpllConfig) -> Self {
        Dpll {
            nominal: cfg.period,
            gap: cfg.gap,
            guard: cfg.guard,
            tolerance: cfg.tolerance,
            lock: cfg.lock.max(1),
            alpha: cfg.alpha,
            beta: cfg.beta,
            p: cfg.period,
            next: None,
            locked: false,
            good: 0,
            misses: 0,
            last_arrival: None,
            cluster: None,
            cluster_end: Nanos::ZERO,
            burst_len: Nanos::ZERO,
        }
    }
    /// Whether the loop is locked.
    pub fn is_locked(&self) -> bool {
        self.locked
    }
    /// The expected time of the next burst onset.
    pub fn next_burst(&self) -> Option<Nanos> {
        self.next
    }
    /// The period estimate.
    pub fn period(&self) -> Nanos {
        self.p
    }

    fn roll_misses(&mut self, now: Nanos) {
        if !self.locked {
            return;
        }
        while let Some(n) = self.next {
            if now <= n + self.tolerance {
                break;
            }
            self.next = Some(n + self.p);
            self.misses += 1;
            if self.misses >= self.lock {
                self.locked = false;
                self.good = 0;
                self.misses = 0;
                break;
            }
        }
    }

    fn adjust_period(&mut self, e: i128) {
        let p = self.p.0 as f64 + self.beta * e as f64;
        let lo = self.nominal.0 as f64 * 0.5;
        let hi = self.nominal.0 as f64 * 1.5;
        self.p = Nanos(p.clamp(lo, hi).round() as u64);
    }

    /// An onset at `t`; returns whether it is taken as the periodic burst.
    fn onset(&mut self, t: Nanos) -> bool {
        let Some(mut next) = self.next else {
            self.next = Some(t + self.p);
            return true;
        };
        let tol = self.tolerance.0 as i128;
        if self.locked {
            let e = t.0 as i128 - next.0 as i128;
            if e.abs() > tol {
                return false;
            }
            self.good += 1;
            self.misses = 0;
            self.adjust_period(e);
            let corrected = next.0 as i128 + (self.alpha * e as f64).round() as i128;
            self.next = Some(Nanos(corrected.max(0) as u64) + self.p);
            true
        } else {
            let half = Nanos(self.p.0 / 2);
            while next + half < t {
                next += self.p;
            }
            let e = t.0 as i128 - next.0 as i128;
            if e.abs() <= tol {
                // Near lock: the error is a period error too.
                self.good += 1;
                self.adjust_period(e);
            } else {
                // Far off: only the phase is snapped.
                self.good = 0;
            }
            self.next = Some(t + self.p);
            if self.good >= self.lock {
                self.locked = true;
                self.misses = 0;
            }
            true
        }
    }
}

impl StartDetector for Dpll {
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Start> {
        self.roll_misses(ctx.now);
        if ev.is_arrival() {
            let is_onset = self.last_arrival.is_none_or(|a| a + self.gap <= ev.time);
            self.last_arrival = Some(ev.time);
            if is_onset {
                if let Some((start, true)) = self.cluster {
                    if self.cluster_end > start {
                        self.burst_len = self.cluster_end - start;
                    }
                }
                let periodic = self.onset(ev.time);
                self.cluster = Some((ev.time, periodic));
                self.cluster_end = ev.time;
            }
        }
        None
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        let t = ctx.now;
        self.roll_misses(t);
        self.cluster_end = t;
        if !self.locked {
            return None;
        }
        if let Some((start, true)) = self.cluster {
            if t < start + self.burst_len {
                return None;
            }
        }
        let until = self.next? - self.guard;
        (until > t).then(|| Start {
            at: t,
            duration_hint: Some(until - t),
            end: false,
        })
    }
}

/// Catalogue entry of `dpll`.
pub const DPLL: ComponentInfo = ComponentInfo {
    name: "dpll",
    role: Role::StartDetector,
    summary: "digital phase-locked loop on periodic bursts (e.g. a 30 s sync daemon); predicts the gaps between them",
    source: "§3.1.1 periodic, Table 4 PLL",
    params: &[
        ParamInfo::optional(
            "period",
            ParamKind::Duration,
            "30s",
            "s",
            "nominal period of the periodic work (> 0)",
        ),
        ParamInfo::optional(
            "gap",
            ParamKind::Duration,
            "1s",
            "s",
            "quiet time separating bursts (> 0, < period/2)",
        ),
        ParamInfo::optional(
            "guard",
            ParamKind::Duration,
            "1s",
            "s",
            "margin left before the next expected burst",
        ),
        ParamInfo::optional(
            "tolerance",
            ParamKind::Duration,
            "1s",
            "s",
            "largest phase error of an in-phase burst (> 0, < period/2)",
        ),
        ParamInfo::optional(
            "lock",
            ParamKind::Int,
            "3",
            "bursts",
            "in-phase bursts to lock, missed bursts to unlock (1 to 1000)",
        ),
        ParamInfo::optional(
            "alpha",
            ParamKind::Float,
            "0.5",
            "",
            "phase gain while locked (0 < alpha <= 1)",
        ),
        ParamInfo::optional(
            "beta",
            ParamKind::Float,
            "0.1",
            "",
            "period gain (0 <= beta <= 1)",
        ),
    ],
    inputs: None,
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(DPLL, |p| {
        let period = p.positive_duration("period")?;
        let half = Nanos(period.0 / 2);
        let gap = p.positive_duration("gap")?;
        if gap >= half {
            return Err(ParamError::new(
                "gap",
                format!("{gap} is not below period/2 = {half}"),
            ));
        }
        let tolerance = p.positive_duration("tolerance")?;
        if tolerance >= half {
            return Err(ParamError::new(
                "tolerance",
                format!("{tolerance} is not below period/2 = {half}"),
            ));
        }
        let alpha = p.float("alpha")?;
        if !(alpha > 0.0 && alpha <= 1.0) {
            return Err(ParamError::new(
                "alpha",
                format!("{alpha} is outside (0, 1]"),
            ));
        }
        let cfg = DpllConfig {
            period,
            gap,
            guard: p.duration("guard")?,
            tolerance,
            lock: p.int_in("lock", 1, 1000)? as u32,
            alpha,
            beta: p.float_in("beta", 0.0, 1.0)?,
        };
        Ok(Built::Start(Box::new(Dpll::new(cfg))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duration::NoDuration;
    use crate::testutil::{run, s, trace};

    /// Three requests per burst: at b, b+0.1, b+0.2, 50 ms each.
    fn bursts(onsets: &[f64]) -> Vec<(f64, f64)> {
        onsets
            .iter()
            .flat_map(|&b| (0..3).map(move |i| (b + 0.1 * i as f64, b + 0.1 * i as f64 + 0.05)))
            .collect()
    }

    #[test]
    fn locks_on_a_30s_burst_and_relocks_after_a_phase_shift() {
        // Bursts every 30 s from 5 s; from burst 10 on they come 10 s late.
        let onsets: Vec<f64> = (0..20)
            .map(|k| 5.0 + 30.0 * k as f64 + if k >= 10 { 10.0 } else { 0.0 })
            .collect();
        let t = trace(&bursts(&onsets));
        let (preds, _) = run(Dpll::new(DpllConfig::new(s(30.0))), NoDuration, &t);
        let mut want = Vec::new();
        // Locked at the onset of the 4th burst (lock + 1 = 4): from then on
        // one prediction per gap, from the burst's end (onset + 0.25 s) to
        // 1 s (guard) before the next onset.
        for b in &onsets[3..10] {
            want.push((s(b + 0.25), Some(s(28.75))));
        }
        // Bursts 10 and 11 come out of phase: foreign traffic while still
        // locked; each time the device empties it predicts until 1 s before
        // the expected (unshifted) onset.
        for (k, next) in [(10usize, 335.0), (11, 365.0)] {
            for i in 0..3 {
                let at = onsets[k] + 0.1 * i as f64 + 0.05;
                want.push((s(at), Some(s(next - 1.0) - s(at))));
            }
        }
        // Burst 12 makes the third miss: unlocked, the loop snaps to it, and
        // is locked again at burst 15, 5 bursts after the shift (<= 2*lock+1).
        for b in &onsets[15..] {
            want.push((s(b + 0.25), Some(s(28.75))));
        }
        let got: Vec<_> = preds
            .iter()
            .map(|&(at, start, d)| {
                assert_eq!(at, start, "the DPLL declares at the moment it decides");
                (start, d)
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn never_locks_on_aperiodic_bursts() {
        let onsets = [5.0, 17.0, 52.0, 60.0, 99.0, 140.0, 151.0];
        let t = trace(&bursts(&onsets));
        let (preds, e) = run(Dpll::new(DpllConfig::new(s(30.0))), NoDuration, &t);
        assert!(preds.is_empty(), "{preds:?}");
        assert!(!e.detector().start_detector().is_locked());
    }
}
