//! The offline oracle (§3.1.4): the reference for every measure.

use lull_core::component::{Context, Start, StartDetector};
use lull_core::registry::{Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

/// `oracle(min)`: knows the future. At the start of every idle period of at
/// least `min` it declares the whole period, with its exact length as the
/// duration hint (used when paired with `no-duration`, the default).
///
/// It needs the lookahead that only the replay driver provides
/// ([`Context::lookahead`]); in a live setting it never fires, and the
/// daemon refuses it.
#[derive(Clone, Copy, Debug)]
pub struct Oracle {
    min: Nanos,
}

impl Oracle {
    /// Declares every idle period of at least `min`.
    pub fn new(min: Nanos) -> Self {
        Oracle { min }
    }
}

impl StartDetector for Oracle {
    fn wants_events(&self) -> bool {
        false
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        let end = ctx.lookahead?;
        let len = end - ctx.now;
        (len > Nanos::ZERO && len >= self.min).then_some(Start {
            at: ctx.now,
            duration_hint: Some(len),
            end: false,
        })
    }
}

/// Catalogue entry of `oracle`.
pub const ORACLE: ComponentInfo = ComponentInfo {
    name: "oracle",
    role: Role::StartDetector,
    summary: "offline: declares each idle period at its start, with its exact length",
    source: "§3.1.4 offline predictors",
    params: &[ParamInfo::optional(
        "min",
        ParamKind::Duration,
        "0s",
        "s",
        "only declare idle periods at least this long",
    )],
    inputs: None,
    offline: true,
    gauges: &[],
};

/// Catalogue entry of `oracle` for spin-down ([`use_spindown_oracle`]):
/// `min` defaults to the drive's break-even time `B`.
pub const ORACLE_SPINDOWN: ComponentInfo = ComponentInfo {
    params: &[ParamInfo::optional(
        "min",
        ParamKind::Duration,
        "B",
        "s",
        "only declare idle periods at least this long (for spin-down, B: a shorter one costs energy)",
    )],
    ..ORACLE
};

pub(crate) fn register(r: &mut Registry) {
    r.register(ORACLE, |p| {
        Ok(Built::Start(Box::new(Oracle::new(p.duration("min")?))))
    });
}

/// Makes `oracle`'s `min` default to the break-even time `B` in
/// `registry`, for the spin-down task: the offline optimum spins down
/// only in the idle periods longer than `B` (SPEC §4.2's oracle energy),
/// and `oracle()` with its default of 0 spun down in every gap, paying a
/// spin-up for each (`lull replay --net oracle --task spindown` spent
/// twice the oracle energy on the workstation workload). An explicit
/// `min` is kept.
pub fn use_spindown_oracle(registry: &mut Registry) {
    registry.register(ORACLE_SPINDOWN, |p| {
        Ok(Built::Start(Box::new(Oracle::new(p.duration("min")?))))
    });
}
