//! The actuator (§3.3): turns the network's prediction stream into
//! start and stop commands for one idle task.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::component::{Context, Prediction, earliest};
use crate::event::Event;
use crate::time::Nanos;

/// What the actuator tells the idle task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Command {
    /// Start the task; the network expects `budget` of idle time (`None`:
    /// until busy).
    Start {
        /// Predicted idle time left.
        budget: Option<Nanos>,
    },
    /// A new prediction arrived while the task runs (a continuance, say):
    /// the task may size its remaining work to `budget`.
    Renew {
        /// Predicted idle time left.
        budget: Option<Nanos>,
    },
    /// Stop the task.
    Stop,
}

/// When to stop an idle task (§3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StopPolicy {
    /// At the end of the predicted duration, however busy the device
    /// becomes. The paper's method for internal measures.
    PredictedEnd,
    /// When the device becomes busy (the next arrival), ignoring the
    /// predicted duration.
    WhenBusy,
    /// At the earlier of the two: the most conservative policy.
    #[default]
    EarlierOf,
    /// At the later of the two: the task always runs at least as long as
    /// predicted, and on while the device stays idle.
    LaterOf,
}

impl StopPolicy {
    /// Every policy, in the order of the paper.
    pub const ALL: [StopPolicy; 4] = [
        StopPolicy::PredictedEnd,
        StopPolicy::WhenBusy,
        StopPolicy::EarlierOf,
        StopPolicy::LaterOf,
    ];
    /// The canonical name (`predicted-end`, …).
    pub const fn name(self) -> &'static str {
        match self {
            StopPolicy::PredictedEnd => "predicted-end",
            StopPolicy::WhenBusy => "when-busy",
            StopPolicy::EarlierOf => "earlier-of",
            StopPolicy::LaterOf => "later-of",
        }
    }
}

impl fmt::Display for StopPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown stop-policy name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const KNOWN: [&str; 4] = ["predicted-end", "when-busy", "earlier-of", "later-of"];
        write!(
            f,
            "unknown stop policy {:?}{} (expected one of: {})",
            self.0,
            crate::suggest::did_you_mean(&self.0, KNOWN),
            KNOWN.join(", ")
        )
    }
}

impl std::error::Error for UnknownPolicy {}

impl FromStr for StopPolicy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StopPolicy::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| UnknownPolicy(s.to_string()))
    }
}

/// Turns predictions into commands. Object safe, so other policies (a
/// preemption-interval gate, say) can stand in for [`PolicyActuator`].
pub trait Actuator: Send + fmt::Debug {
    /// The sink of the network emitted `p`.
    fn on_prediction(&mut self, p: &Prediction, ctx: &Context) -> Option<Command>;
    /// A request arrived or completed (called before the network sees it).
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Command>;
    /// Whether `on_event` is needed while the task is stopped; `false` lets
    /// the engine skip the call on the hot path. Asked once, when the
    /// engine is built.
    fn wants_events_when_stopped(&self) -> bool {
        true
    }
    /// Whether `on_event` would, right now, change nothing and return no
    /// command for any event (a running `predicted-end` actuator waiting
    /// for its deadline). A replay may then skip the foreground events of
    /// a busy run. Asked again each time it matters; `false`, the default,
    /// promises nothing.
    fn ignores_events(&self) -> bool {
        false
    }
    /// When the actuator wants `on_deadline` called next.
    fn next_deadline(&self) -> Option<Nanos>;
    /// A deadline is due at `ctx.now`.
    fn on_deadline(&mut self, ctx: &Context) -> Option<Command>;
}

impl<T: Actuator + ?Sized> Actuator for Box<T> {
    fn on_prediction(&mut self, p: &Prediction, ctx: &Context) -> Option<Command> {
        (**self).on_prediction(p, ctx)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Command> {
        (**self).on_event(ev, ctx)
    }
    fn wants_events_when_stopped(&self) -> bool {
        (**self).wants_events_when_stopped()
    }
    fn ignores_events(&self) -> bool {
        (**self).ignores_events()
    }
    fn next_deadline(&self) -> Option<Nanos> {
        (**self).next_deadline()
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Command> {
        (**self).on_deadline(ctx)
    }
}

/// The actuator of §3.3 with one of the four [`StopPolicy`]s.
///
/// Rules, for every policy:
/// - A prediction whose start lies in the future is held until then (a
///   newer prediction replaces it); a pending start survives arrivals, since
///   a periodic detector predicts the gap after a burst it expects.
/// - A prediction that has already ended (a zero duration) starts nothing
///   and cancels a start held for later; while the task runs it
///   *withdraws* the idle period: the predicted end becomes now, so
///   `predicted-end` and `earlier-of` stop at once, `later-of` runs on
///   until busy and `when-busy` ignores it. Skeptics and rate detectors
///   use this to take back what they emitted.
/// - A prediction that arrives while the task runs replaces the predicted
///   end (continuances extend a run this way) and is passed on as
///   [`Command::Renew`].
/// - A prediction with no duration (`None`) means "until busy" under every
///   policy, `predicted-end` included: "forever" would declare the rest of
///   the trace idle.
/// - "Becomes busy" is the next arrival after the task started, or after
///   the newest prediction renewed it.
#[derive(Clone, Debug)]
pub struct PolicyActuator {
    policy: StopPolicy,
    running: bool,
    /// Predicted end of the running task; `None` = until busy.
    end: Option<Nanos>,
    /// Under `later-of`: an arrival came while the task ran.
    busy_seen: bool,
    pending: Option<Prediction>,
}

impl PolicyActuator {
    /// An actuator with `policy`.
    pub const fn new(policy: StopPolicy) -> Self {
        PolicyActuator {
            policy,
            running: false,
            end: None,
            busy_seen: false,
            pending: None,
        }
    }
    /// Its policy.
    pub const fn policy(&self) -> StopPolicy {
        self.policy
    }
    /// Whether it has the task running.
    pub const fn is_running(&self) -> bool {
        self.running
    }

    fn begin(&mut self, p: &Prediction, now: Nanos) -> Option<Command> {
        let mut end = p.duration.map(|d| p.start + d);
        if end.is_some_and(|e| e <= now) {
            if !self.running {
                return None;
            }
            // A prediction that ends now withdraws the idle period: the
            // policy decides at once what that means for the running task.
            end = Some(now);
        }
        let budget = end.map(|e| e - now);
        self.end = end;
        // "Becomes busy" is judged against the newest prediction.
        self.busy_seen = false;
        if self.running {
            Some(Command::Renew { budget })
        } else {
            self.running = true;
            Some(Command::Start { budget })
        }
    }

    fn stop(&mut self) -> Option<Command> {
        if self.running {
            self.running = false;
            self.end = None;
            self.busy_seen = false;
            Some(Command::Stop)
        } else {
            None
        }
    }
}

impl Actuator for PolicyActuator {
    fn on_prediction(&mut self, p: &Prediction, ctx: &Context) -> Option<Command> {
        if p.duration == Some(Nanos::ZERO) {
            if p.start > ctx.now {
                return None;
            }
            // A withdrawal also takes back a start still held for later.
            self.pending = None;
        }
        if p.start > ctx.now {
            self.pending = Some(*p);
            return None;
        }
        self.begin(p, ctx.now)
    }

    fn wants_events_when_stopped(&self) -> bool {
        false
    }
    fn ignores_events(&self) -> bool {
        // Mirrors `on_event`: only arrivals while running can act.
        match (self.running, self.policy, self.end) {
            (false, _, _) => true,
            (true, StopPolicy::PredictedEnd, Some(_)) => true,
            (true, StopPolicy::LaterOf, Some(_)) => self.busy_seen,
            _ => false,
        }
    }

    fn on_event(&mut self, ev: &Event, _ctx: &Context) -> Option<Command> {
        if !self.running || !ev.is_arrival() {
            return None;
        }
        match (self.policy, self.end) {
            (_, None) | (StopPolicy::WhenBusy | StopPolicy::EarlierOf, _) => self.stop(),
            (StopPolicy::LaterOf, Some(_)) => {
                self.busy_seen = true;
                None
            }
            (StopPolicy::PredictedEnd, Some(_)) => None,
        }
    }

    fn next_deadline(&self) -> Option<Nanos> {
        let stop = match self.policy {
            _ if !self.running => None,
            StopPolicy::WhenBusy => None,
            _ => self.end,
        };
        earliest(stop, self.pending.map(|p| p.start))
    }

    fn on_deadline(&mut self, ctx: &Context) -> Option<Command> {
        let now = ctx.now;
        if self.running && self.policy != StopPolicy::WhenBusy && self.end.is_some_and(|e| e <= now)
        {
            let keep_going = self.policy == StopPolicy::LaterOf && !self.busy_seen && ctx.is_idle();
            if keep_going {
                // Later-of: the prediction ran out but the device is still
                // idle; run on until the next arrival.
                self.end = None;
            } else {
                return self.stop();
            }
        }
        if let Some(p) = self.pending.filter(|p| p.start <= now) {
            self.pending = None;
            return self.begin(&p, now);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Op, Request};

    fn arrival(t: u64) -> Event {
        Event::arrival(&Request::new(Nanos(t), Nanos(t + 1), Op::Read, 0, 512))
    }

    #[test]
    fn a_withdrawal_cancels_a_start_held_for_later() {
        let mut a = PolicyActuator::new(StopPolicy::PredictedEnd);
        let ctx = Context::at(Nanos(10));
        let later = Prediction::new(Nanos(50), Some(Nanos(100)));
        assert_eq!(a.on_prediction(&later, &ctx), None);
        assert_eq!(a.next_deadline(), Some(Nanos(50)));
        let withdraw = Prediction::new(Nanos(10), Some(Nanos::ZERO));
        assert_eq!(a.on_prediction(&withdraw, &ctx), None);
        assert_eq!(a.next_deadline(), None, "nothing left to start");
        assert_eq!(a.on_deadline(&Context::at(Nanos(50))), None);
        assert!(!a.is_running());
    }

    #[test]
    fn a_zero_duration_prediction_withdraws_a_running_task() {
        for (policy, stops) in [
            (StopPolicy::PredictedEnd, true),
            (StopPolicy::EarlierOf, true),
            (StopPolicy::LaterOf, false),
            (StopPolicy::WhenBusy, false),
        ] {
            let mut a = PolicyActuator::new(policy);
            a.on_prediction(
                &Prediction::new(Nanos(0), Some(Nanos(50))),
                &Context::at(Nanos(0)),
            );
            let ctx = Context::at(Nanos(10));
            assert_eq!(
                a.on_prediction(&Prediction::new(Nanos(10), Some(Nanos::ZERO)), &ctx),
                Some(Command::Renew {
                    budget: Some(Nanos::ZERO)
                })
            );
            let due = a.next_deadline().is_some_and(|d| d <= Nanos(10));
            let cmd = if due { a.on_deadline(&ctx) } else { None };
            assert_eq!(cmd == Some(Command::Stop), stops, "{policy}");
        }
    }

    #[test]
    fn policies_parse_and_print() {
        for p in StopPolicy::ALL {
            assert_eq!(p.name().parse::<StopPolicy>().unwrap(), p);
        }
        assert!("sometimes".parse::<StopPolicy>().is_err());
        assert_eq!(StopPolicy::default(), StopPolicy::EarlierOf);
    }

    #[test]
    fn earlier_of_stops_at_arrival_or_end() {
        let mut a = PolicyActuator::new(StopPolicy::EarlierOf);
        let ctx = Context::at(Nanos(10));
        let c = a.on_prediction(&Prediction::new(Nanos(10), Some(Nanos(5))), &ctx);
        assert_eq!(
            c,
            Some(Command::Start {
                budget: Some(Nanos(5))
            })
        );
        assert_eq!(a.next_deadline(), Some(Nanos(15)));
        assert_eq!(
            a.on_event(&arrival(12), &Context::at(Nanos(12))),
            Some(Command::Stop)
        );
        assert_eq!(a.next_deadline(), None);
    }

    #[test]
    fn later_of_runs_on_while_idle() {
        let mut a = PolicyActuator::new(StopPolicy::LaterOf);
        a.on_prediction(
            &Prediction::new(Nanos(0), Some(Nanos(5))),
            &Context::at(Nanos(0)),
        );
        assert_eq!(a.on_deadline(&Context::at(Nanos(5))), None);
        assert!(a.is_running());
        assert_eq!(
            a.on_event(&arrival(9), &Context::at(Nanos(9))),
            Some(Command::Stop)
        );
    }

    #[test]
    fn predicted_end_ignores_arrivals() {
        let mut a = PolicyActuator::new(StopPolicy::PredictedEnd);
        a.on_prediction(
            &Prediction::new(Nanos(0), Some(Nanos(5))),
            &Context::at(Nanos(0)),
        );
        assert_eq!(a.on_event(&arrival(2), &Context::at(Nanos(2))), None);
        assert_eq!(a.on_deadline(&Context::at(Nanos(5))), Some(Command::Stop));
    }

    #[test]
    fn future_predictions_wait_and_zero_ones_are_ignored() {
        let mut a = PolicyActuator::new(StopPolicy::EarlierOf);
        let ctx = Context::at(Nanos(0));
        assert_eq!(
            a.on_prediction(&Prediction::new(Nanos(0), Some(Nanos::ZERO)), &ctx),
            None
        );
        assert_eq!(
            a.on_prediction(&Prediction::new(Nanos(7), Some(Nanos(3))), &ctx),
            None
        );
        assert_eq!(a.next_deadline(), Some(Nanos(7)));
        assert_eq!(
            a.on_deadline(&Context::at(Nanos(7))),
            Some(Command::Start {
                budget: Some(Nanos(3))
            })
        );
    }
}
