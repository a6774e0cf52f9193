//! Timer-based start detectors (§3.1.1).

use lull_core::component::{Context, Start, StartDetector};
use lull_core::registry::{Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

/// The one-shot alarm every timer-based detector shares: armed when the
/// device empties, disarmed by an arrival, fires at most once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Alarm(Option<Nanos>);

impl Alarm {
    /// Arms the alarm for `at` (replacing any earlier setting).
    pub fn arm(&mut self, at: Nanos) {
        self.0 = Some(at);
    }
    /// Disarms it.
    pub fn disarm(&mut self) {
        self.0 = None;
    }
    /// When it will go off, if armed.
    pub fn deadline(&self) -> Option<Nanos> {
        self.0
    }
    /// Goes off if due at `now`: disarms and declares idleness from `now`.
    pub fn fire(&mut self, now: Nanos) -> Option<Start> {
        match self.0 {
            Some(t) if t <= now => {
                self.0 = None;
                Some(Start::now(now))
            }
            _ => None,
        }
    }
}

/// `timer(t)`: declares an idle period once the device has been idle for
/// `t` (the paper's fixed-period timer, Table 4 "Timer").
///
/// When the device empties it arms a deadline `t` later; an arrival before
/// then disarms it. It fires at most once per idle period. `timer(0s)`
/// declares every idle period the instant it begins.
#[derive(Clone, Debug)]
pub struct Timer {
    timeout: Nanos,
    armed: Alarm,
}

impl Timer {
    /// A timer with timeout `timeout`.
    pub fn new(timeout: Nanos) -> Self {
        Timer {
            timeout,
            armed: Alarm::default(),
        }
    }
    /// Its timeout.
    pub fn timeout(&self) -> Nanos {
        self.timeout
    }
}

impl StartDetector for Timer {
    // The alarm is armed only inside an idle period, so the arrival that
    // ends it is the only one that matters: no need to see every event.
    fn wants_events(&self) -> bool {
        false
    }
    fn quiet_below(&self) -> Nanos {
        // Arming and disarming again leaves a disarmed alarm as it was; a
        // zero timeout goes off at once.
        if self.armed.deadline().is_none() {
            self.timeout
        } else {
            Nanos::ZERO
        }
    }
    fn on_idle_end(&mut self, _ctx: &Context, _began: Nanos) {
        self.armed.disarm();
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Start> {
        self.armed.arm(ctx.now + self.timeout);
        None
    }
    fn next_deadline(&self) -> Option<Nanos> {
        self.armed.deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        self.armed.fire(ctx.now)
    }
}

/// Catalogue entry of `timer`.
pub const TIMER: ComponentInfo = ComponentInfo {
    name: "timer",
    role: Role::StartDetector,
    summary: "declares idleness once the device has been idle for a fixed timeout",
    source: "§3.1.1 timer-based, Table 4 Timer",
    params: &[ParamInfo::required(
        "t",
        ParamKind::Duration,
        "s",
        "timeout after the device empties",
    )],
    inputs: None,
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(TIMER, |p| {
        Ok(Built::Start(Box::new(Timer::new(p.duration("t")?))))
    });
}
