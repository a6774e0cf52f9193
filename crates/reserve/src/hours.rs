//! The time grid every part of the reservation subsystem shares: hours of
//! the day, and how long a job waits into an idle period before a step.
//! A leaf: it imports nothing of the crate, so the forecast, admission and
//! scheduler can all use it without importing each other in a cycle.

use lull_core::time::Nanos;

/// One hour.
pub const HOUR: Nanos = Nanos::from_secs(3600);
/// Hour-of-day slots.
pub const HOURS_PER_DAY: usize = 24;

/// How long a job of step `step` waits into an idle period before its
/// first step: `wait`, or one step if that is longer. Idle periods are
/// heavy-tailed, so one that has already lasted a step is likely to last
/// another: a 60 s step started 3 s into a gap would mostly run into the
/// next arrival. The [forecast](crate::forecast) and the [scheduler](crate::schedule)
/// count with the same wait.
pub fn start_wait(wait: Nanos, step: Nanos) -> Nanos {
    wait.max(step)
}
