//! `random-timer(breakeven, seed)`: the randomized ski-rental timeout
//! (Karlin, Manasse, McGeoch and Owicki, 1990), e/(e−1)-competitive
//! against the offline optimum for spin-down (§2.2 power down, §3.1.1
//! timer-based with a *variable* period).
//!
//! At the start of every idle period the timeout `x` is drawn afresh from
//! the density `p(x) = e^{x/B} / (B (e − 1))` on `[0, B]`, where `B` is the
//! break-even time, by inverting its distribution function:
//! `x = B · ln(1 + u (e − 1))` with `u` uniform in `[0, 1)`. It then acts
//! as `timer(x)`. The generator is PCG-64 seeded with `seed`, so a run is
//! reproducible; one number is drawn per idle period.
//!
//! Requires full idleness: it only declares while no request is
//! outstanding.

use lull_core::component::{Context, Start, StartDetector};
use lull_core::registry::{Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::timer::Alarm;

/// The randomized ski-rental timer; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct RandomTimer {
    breakeven: Nanos,
    rng: Pcg64,
    armed: Alarm,
    last: Option<Nanos>,
}

impl RandomTimer {
    /// Draws timeouts in `[0, breakeven]` from a PCG-64 seeded with `seed`.
    pub fn new(breakeven: Nanos, seed: u64) -> Self {
        RandomTimer {
            breakeven,
            rng: Pcg64::seed_from_u64(seed),
            armed: Alarm::default(),
            last: None,
        }
    }
    /// The timeout drawn for the current (or last) idle period.
    pub fn last_timeout(&self) -> Option<Nanos> {
        self.last
    }
    /// Draws the next timeout.
    pub fn draw(&mut self) -> Nanos {
        let u: f64 = self.rng.random();
        let x = (1.0 + u * (std::f64::consts::E - 1.0)).ln();
        self.breakeven.mul_f64(x).min(self.breakeven)
    }
}

impl StartDetector for RandomTimer {
    // The alarm is armed only inside an idle period, so the arrival that
    // ends it is the only one that matters: no need to see every event.
    fn wants_events(&self) -> bool {
        false
    }
    fn on_idle_end(&mut self, _ctx: &Context, _began: Nanos) {
        self.armed.disarm();
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        let x = self.draw();
        self.last = Some(x);
        self.armed.arm(ctx.now + x);
        None
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.armed.deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        self.armed.fire(ctx.now)
    }
}

/// Catalogue entry of `random-timer`.
pub const RANDOM_TIMER: ComponentInfo = ComponentInfo {
    name: "random-timer",
    role: Role::StartDetector,
    summary: "randomized ski-rental timeout, drawn per idle period; e/(e-1)-competitive",
    source: "§3.1.1 timer-based (variable period); Karlin et al. randomized ski rental",
    params: &[
        ParamInfo::optional(
            "breakeven",
            ParamKind::Duration,
            "B",
            "s",
            "break-even time of the idle task (> 0; default: the device's B); timeouts lie in [0, breakeven]",
        ),
        ParamInfo::optional(
            "seed",
            ParamKind::Int,
            "0",
            "",
            "seed of the PCG-64 generator",
        ),
    ],
    inputs: None,
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(RANDOM_TIMER, |p| {
        Ok(Built::Start(Box::new(RandomTimer::new(
            p.positive_duration("breakeven")?,
            p.int("seed")?,
        ))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_bounded_reproducible_and_follow_the_density() {
        let b = Nanos::from_secs(3);
        let mut a = RandomTimer::new(b, 7);
        let mut c = RandomTimer::new(b, 7);
        let n = 20_000;
        let xs: Vec<Nanos> = (0..n).map(|_| a.draw()).collect();
        let ys: Vec<Nanos> = (0..n).map(|_| c.draw()).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|&x| x <= b));
        // E[x] = B / (e - 1) for p(x) = e^(x/B) / (B (e - 1)).
        let mean = xs.iter().map(|x| x.as_secs_f64()).sum::<f64>() / n as f64;
        let want = 3.0 / (std::f64::consts::E - 1.0);
        assert!((mean - want).abs() < 0.02 * want, "{mean} vs {want}");
        // The density rises: more mass in the upper half than the lower.
        let upper = xs.iter().filter(|x| x.as_secs_f64() > 1.5).count();
        assert!(upper > n / 2);
        assert_ne!(RandomTimer::new(b, 8).draw(), RandomTimer::new(b, 7).draw());
    }
}
