//! What the controller does with the engine's decisions: policy before
//! action. A standby start passes the transport, the retry back-off, the
//! wear budget and the break-even check before an order leaves (the
//! policy is [`StandbyPolicy`](super::standby::StandbyPolicy)'s; its
//! lines, records and orders are here); a flush, a command or a jobs disk
//! starts at once.

use lull_activity::Record;
use lull_core::time::Nanos;
use tracing::{debug, info};

use super::{DiskController, Now, Order, Output};
use crate::config::TaskConfig;
use crate::hooks::HookEvent;
use crate::source::Sample;
use lull_tasks::gate::Refusal;

use super::standby::{Refused, Withheld};
use crate::config::Backend;
use crate::task::Intent;

/// When the engine decided.
fn intent_time(i: &Intent) -> Nanos {
    match *i {
        Intent::Start { at, .. } | Intent::Stop { at } => at,
    }
}

impl DiskController {
    /// Acts on one of the engine's intents.
    pub(super) fn on_intent(
        &mut self,
        now: Now,
        intent: Intent,
        sample: &Sample,
        out: &mut Vec<Output>,
    ) {
        match intent {
            Intent::Stop { .. } => self.on_stop(now, intent_time(&intent), out),
            Intent::Start { budget, retry, .. } => {
                // A retry is the same start, not another.
                if !retry {
                    self.st.task_starts += 1;
                }
                self.on_start(now, intent_time(&intent), budget, sample, out)
            }
        }
    }

    fn on_stop(&mut self, now: Now, at: Nanos, out: &mut Vec<Output>) {
        let key = self.key.clone();
        // Stopped by I/O: the idle period just ended.
        let (idle_since, last_idle) = (self.idle_since, self.last_idle);
        let extra = || match (idle_since, last_idle) {
            (None, Some(len)) => vec![("LULL_IDLE_S", format!("{:.3}", len.as_secs_f64()))],
            _ => Vec::new(),
        };
        self.hook(now, HookEvent::TaskStop, extra, out);
        self.st.task_stops += 1;
        // A start that was refused (its skip is logged) stopped nothing a
        // reader of the log needs told of.
        let ran = !self.not_running;
        self.not_running = false;
        let task = self.cfg.task.name();
        // The disk vanished: that ended the idle period, not I/O.
        let gone = !self.st.present;
        let why = if gone { "gone" } else { "busy" };
        if !ran {
            debug!("disk {key}: {why}, stop {task} (it did not run)");
        } else if gone {
            info!("disk {key}: gone, stop {task}");
        } else if matches!(self.cfg.task, TaskConfig::Standby { .. })
            || self.reporter.quiet_routine()
        {
            routine!(self, "disk {key}: busy, stop {task}");
        } else {
            info!(
                "disk {key}: busy, stop {task} (each idle period's {task} is logged at debug level from here on; lull status and lull_task_starts_total count them)"
            );
            self.reporter.quiet_from_now();
        }
        // The last decision stays the reason a refused or failed start did
        // not run (no transport, the wear budget, …): a stop of nothing
        // would hide it at the first I/O.
        if ran && !gone {
            self.decide(now, format!("stop {task}: disk busy or prediction over"));
        }
        if let Some(j) = self.jobs.as_mut() {
            let switches = j.run.on_idle_end(at);
            self.switch_jobs(switches, out);
            return;
        }
        // Only a command has something to stop (it is paused); a standby
        // or a flush ends by itself; a start that was skipped left nothing
        // running.
        if ran && matches!(self.cfg.task, TaskConfig::Command { .. }) {
            out.push(Output::Order {
                job: None,
                order: Order::Stop,
            });
        }
    }

    fn on_start(
        &mut self,
        now: Now,
        at: Nanos,
        budget: Option<Nanos>,
        sample: &Sample,
        out: &mut Vec<Output>,
    ) {
        let key = self.key.clone();
        self.dirty = true;
        // Refused until an order leaves below.
        self.not_running = true;
        if self.standby.overtaken(at) {
            self.skip_overtaken(now);
            return;
        }
        // Formatted only for a decision that names it.
        let budget_text = || budget.map_or("until busy".to_string(), |b| b.approx().to_string());
        match &self.cfg.task {
            TaskConfig::Standby {
                max_spindowns_per_day,
                backend,
                ..
            } => {
                let (per_day, backend) = (*max_spindowns_per_day, *backend);
                if !self.start_standby(now, at, (per_day, backend), budget, out) {
                    return;
                }
            }
            TaskConfig::Flush => {
                let devs = self.sample_devs(sample);
                routine!(self, "disk {key}: idle, flush");
                self.decide(now, "flush".into());
                self.task_start_hook(now, budget, out);
                self.not_running = false;
                self.own_io.flush_started(self.settings.dry_run);
                out.push(Output::Order {
                    job: None,
                    order: Order::Start {
                        dev: self.dev(),
                        devs,
                    },
                });
                return;
            }
            TaskConfig::Command { .. } => {
                if let Some((failures, until)) = self.standby.backing_off(now.mono) {
                    let why = format!(
                        "skip command: it failed {failures} times in a row; next try in {}",
                        (until - now.mono).approx()
                    );
                    // Said at the failure that began the back-off.
                    debug!("disk {key}: {why}");
                    self.decide(now, why);
                    return;
                }
                let budget_text = budget_text();
                routine!(
                    self,
                    "disk {key}: idle, run command (predicted idle {budget_text})"
                );
                self.decide(now, format!("run command (predicted idle {budget_text})"));
            }
            TaskConfig::Jobs { .. } => {
                self.start_jobs(now, at, budget, out);
                return;
            }
        }
        self.task_start_hook(now, budget, out);
        self.not_running = false;
        out.push(Output::Order {
            job: None,
            order: Order::Start {
                dev: self.dev(),
                devs: Vec::new(),
            },
        });
    }

    /// Skips a start the poll overtook ([`StandbyPolicy::overtaken`](super::standby::StandbyPolicy::overtaken)): the
    /// poll that let the engine decide also brought I/O at or after the
    /// decision's instant. The idle period ended before the daemon could
    /// act, and whatever the task is, starting it now would run it (a
    /// standby, a flush, a command resumed and paused at once) after I/O
    /// the daemon has just seen. A replay of the log skips a standby
    /// alike (`Spindown::with_busy_polls`); no token is spent.
    fn skip_overtaken(&mut self, now: Now) {
        // One text per task: a new skip reason is written to the state at
        // once.
        let why = format!(
            "skip {}: the poll that showed the idle period also showed its end",
            self.cfg.task.name()
        );
        debug!("disk {}: {why}", self.key);
        self.decide(now, why);
    }

    /// A `jobs` disk's idle period began (the engine's start at `at`):
    /// its jobs may run.
    fn start_jobs(&mut self, now: Now, at: Nanos, budget: Option<Nanos>, out: &mut Vec<Output>) {
        let budget_text = budget.map_or("until busy".to_string(), |b| b.approx().to_string());
        routine!(
            self,
            "disk {}: idle, jobs may run (predicted idle {budget_text})",
            self.key
        );
        self.decide(
            now,
            format!("idle: jobs may run (predicted idle {budget_text})"),
        );
        self.task_start_hook(now, budget, out);
        self.not_running = false;
        if let Some(j) = self.jobs.as_mut() {
            let switches = j.run.on_idle_begin(at);
            self.switch_jobs(switches, out);
        }
    }

    /// Whether the standby the engine decided at `at` goes out (`per_day`:
    /// the wear budget, `backend`: how it is sent): its attempt is
    /// written at once, logged, and recorded at the engine's instant. A
    /// standby refused says why in the last decision.
    fn start_standby(
        &mut self,
        now: Now,
        at: Nanos,
        (per_day, backend): (u32, Backend),
        budget: Option<Nanos>,
        out: &mut Vec<Output>,
    ) -> bool {
        if let Some(why) = self.standby_refused(now, at, per_day, backend, budget, out) {
            self.decide(now, why);
            return false;
        }
        // Written at once: the wear budget must survive a crash, and
        // `lull status` shows the attempt (rare: the budget bounds them).
        self.urgent = true;
        let budget_text = budget.map_or("until busy".to_string(), |b| b.approx().to_string());
        info!(
            "disk {}: idle, standby (predicted idle {budget_text})",
            self.key
        );
        self.decide(now, format!("standby (predicted idle {budget_text})"));
        // At the engine's instant, as a replay of the log has it.
        self.activity(Record::Standby(at), out);
        true
    }

    /// Why a standby the engine decided must not be sent, if it must not:
    /// the policy withholds it (no transport reaches the drive, it failed
    /// repeatedly and its retry time has not come, …:
    /// [`StandbyPolicy::withheld`](super::standby::StandbyPolicy::withheld)), or the gate refuses it (the wear
    /// budget has no spin-down left now, or the predicted idle time is
    /// below the drive's break-even time: [`StandbyPolicy::admit`](super::standby::StandbyPolicy::admit), as a
    /// replay makes them, at the engine's instant `at`). A standby that
    /// passes has taken its token.
    fn standby_refused(
        &mut self,
        now: Now,
        at: Nanos,
        per_day: u32,
        backend: Backend,
        budget: Option<Nanos>,
        out: &mut Vec<Output>,
    ) -> Option<String> {
        let in_standby = self.in_standby();
        let withheld = self
            .standby
            .withheld(now.mono, &self.st, &self.cfg, backend, in_standby);
        // What withholds the standby, before the checks a replay makes
        // itself: the log says when it changes, at the decision that
        // found it, so a replay withholds what was withheld here
        // (`Spindown::with_daemon_standbys`).
        let said = withheld.as_ref().map(Withheld::reason).unwrap_or_default();
        if self.reporter.new_withheld(&said) {
            self.activity(Record::Withheld { t: at, why: said }, out);
        }
        if let Some(w) = withheld {
            return Some(self.skip_withheld(now, &w));
        }
        let gate = self.cfg.profile.standby_gate(Some(per_day));
        let clock = self.settings.clock;
        match self
            .standby
            .admit(gate, (now, at), budget, clock, &mut self.st)
        {
            Ok(()) => {
                self.reporter.refusals_over();
                None
            }
            Err(refused) => Some(self.skip_refused(at, budget, refused)),
        }
    }

    /// The decision's text for a standby `w` withholds, logged.
    fn skip_withheld(&self, now: Now, w: &Withheld) -> String {
        let why = match w.next_try() {
            Some(at) => format!(
                "skip standby: {}; next try in {}",
                w.reason(),
                (at - now.mono).approx()
            ),
            None => format!("skip standby: {}", w.reason()),
        };
        if *w == Withheld::Absent {
            // Unplugged: the device node is gone (or is another disk's
            // soon); the engine's timer ran on while it was away.
            info!("disk {}: {why}", self.key);
        } else {
            // Reported once, when the disk was found, at the probe or
            // at the failure that began the back-off.
            debug!("disk {}: {why}", self.key);
        }
        why
    }

    /// The decision's text for a standby decided at `at` (predicted idle
    /// time `budget`) that the gate refused: a wear refusal is tried
    /// again when a token is there; logged at info level once until a
    /// standby goes.
    fn skip_refused(&mut self, at: Nanos, budget: Option<Nanos>, refused: Refused) -> String {
        let Refused { refusal, retry } = refused;
        if let Some(when) = retry {
            self.engine.task_mut().retry_at(when, at, budget);
        }
        let drive = match (&refusal, self.cfg.power()) {
            (Refusal::ShortPrediction { .. }, Some(p)) => format!(" of {}", p.name),
            _ => String::new(),
        };
        let why = format!("skip standby: {refusal}{drive}");
        // Said once until a standby goes: with the budget spent, or
        // where `auto` often predicts less than B, every idle period
        // would add a line to the journal (hd-idle's is quiet).
        let kind = match refusal {
            Refusal::Wear { .. } => "wear",
            Refusal::ShortPrediction { .. } => "short",
        };
        if !self.reporter.new_refusal(kind) {
            debug!("disk {}: {why}", self.key);
        } else {
            info!(
                "disk {}: {why} (more of these are logged at debug level until a standby goes)",
                self.key
            );
        }
        why
    }

    /// The disk's `on_task_start` hook (`LULL_BUDGET_S`: the predicted idle
    /// time, when the network predicts one).
    fn task_start_hook(&mut self, now: Now, budget: Option<Nanos>, out: &mut Vec<Output>) {
        self.acted = true;
        let extra = || {
            budget
                .map(|b| vec![("LULL_BUDGET_S", format!("{:.3}", b.as_secs_f64()))])
                .unwrap_or_default()
        };
        self.hook(now, HookEvent::TaskStart, extra, out);
    }
}
