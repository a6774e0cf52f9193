//! What the controller does with the engine's decisions: policy before
//! action. A standby start passes the transport, the retry back-off, the
//! wear budget and the break-even check before an order leaves; a flush,
//! a command or a jobs disk starts at once.

use lull_activity::Record;
use lull_core::time::Nanos;
use tracing::{debug, info};

use super::{DiskController, Now, Order, Output};
use crate::config::TaskConfig;
use crate::hooks::HookEvent;
use crate::source::Sample;
use lull_tasks::gate::{Refusal, unix_secs};

use crate::state::keep_last_day;
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
        if self
            .overtaking
            .is_some_and(|(since, last)| lull_tasks::gate::overtook(since, last, at))
        {
            // The poll that let the engine decide also brought I/O at or
            // after the decision's instant: the idle period ended before
            // the daemon could act, and whatever the task is, starting it
            // now would run it (a standby, a flush, a command resumed and
            // paused at once) after I/O the daemon has just seen. A replay
            // of the log skips a standby alike
            // (`Spindown::with_busy_polls`); no token is spent. (One text
            // per task: a new skip reason is written to the state at once.)
            let why = format!(
                "skip {}: the poll that showed the idle period also showed its end",
                self.cfg.task.name()
            );
            debug!("disk {key}: {why}");
            self.decide(now, why);
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
                if let Some(why) = self.standby_refused(now, at, per_day, backend, budget, out) {
                    self.decide(now, why);
                    return;
                }
                keep_last_day(&mut self.st.spindown_attempts_unix, now.unix);
                self.st.spindown_attempts_unix.push(now.unix);
                // Written at once: the wear budget must survive a crash,
                // and `lull status` shows the attempt (rare: the budget
                // bounds them).
                self.urgent = true;
                let budget_text = budget_text();
                info!("disk {key}: idle, standby (predicted idle {budget_text})");
                self.decide(now, format!("standby (predicted idle {budget_text})"));
                // At the engine's instant, as a replay of the log has it.
                self.activity(Record::Standby(at), out);
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
                if let Some(at) = self.retry_at.filter(|&at| at > now.mono) {
                    let why = format!(
                        "skip command: it failed {} times in a row; next try in {}",
                        self.failures,
                        (at - now.mono).approx()
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
                let budget_text = budget_text();
                routine!(
                    self,
                    "disk {key}: idle, jobs may run (predicted idle {budget_text})"
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

    /// Why a standby the engine decided must not be sent, if it must not:
    /// no transport reaches the drive, it failed repeatedly and its retry
    /// time has not come, the wear budget has no spin-down left now, or the
    /// predicted idle time is below the drive's break-even time
    /// ([`StandbyGate`]: the last two as a replay makes them, at the
    /// engine's instant `at`). A standby that passes has taken its token.
    fn standby_refused(
        &mut self,
        now: Now,
        at: Nanos,
        per_day: u32,
        backend: crate::config::Backend,
        budget: Option<Nanos>,
        out: &mut Vec<Output>,
    ) -> Option<String> {
        // What withholds the standby, before the checks a replay makes
        // itself: the log says when it changes, at the decision that
        // found it, so a replay withholds what was withheld here
        // (`Spindown::with_daemon_standbys`). Stable texts: a countdown
        // would change at every decision.
        let retrying = self.retry_at.filter(|&at| at > now.mono);
        let (withheld, next_try) = if !self.st.present {
            (
                Some("the disk is not present (unplugged)".to_string()),
                None,
            )
        } else if let Some(why) = &self.cfg.left_alone {
            (Some(format!("left alone: {why}")), None)
        } else if crate::transport::left_alone(backend, self.st.transport.as_ref()) {
            (Some("no transport reaches the drive".to_string()), None)
        } else if self.in_standby() {
            // Asleep already (lull's standby from before a restart or
            // reload, or one found): a standby now would be counted and
            // charged for a drive that spins nothing down.
            (Some("the drive is in standby already".to_string()), None)
        } else {
            let why = retrying.map(|_| format!("it failed {} times in a row", self.failures));
            (why, retrying)
        };
        let said = withheld.as_deref().unwrap_or("");
        if self.reporter.new_withheld(said) {
            let why = said.to_string();
            self.activity(Record::Withheld { t: at, why }, out);
        }
        let key = &self.key;
        if let Some(why) = withheld {
            let why = match next_try {
                Some(at) => format!(
                    "skip standby: {why}; next try in {}",
                    (at - now.mono).approx()
                ),
                None => format!("skip standby: {why}"),
            };
            if !self.st.present {
                // Unplugged: the device node is gone (or is another disk's
                // soon); the engine's timer ran on while it was away.
                info!("disk {key}: {why}");
            } else {
                // Reported once, when the disk was found, at the probe or
                // at the failure that began the back-off.
                debug!("disk {key}: {why}");
            }
            return Some(why);
        }
        // The wear budget and the break-even check, as a replay of the
        // log makes them: at the wall clock of the engine's instant.
        let gate = self.cfg.profile.standby_gate(Some(per_day));
        let unix = unix_secs(Some(self.settings.clock), at);
        self.wear_charge = None;
        let admitted = gate.admit_charge(
            &mut self.st.wear,
            lull_core::time::UnixTime::from_secs(unix),
            budget,
        );
        if let Ok(charge) = admitted {
            self.wear_charge = charge;
        }
        if let Err(refusal) = admitted {
            if matches!(refusal, Refusal::Wear { .. }) {
                // Tried again when a token is there, while the idle period
                // lasts: a refusal at an evening's last idle period start
                // left the disk spinning all night (a trial's NAS), the
                // bucket refilled within the hour. A replay of the log
                // retries at the same instant (`Spindown`).
                if let Some(when) = gate.wear_retry(&self.st.wear, at, Some(self.settings.clock)) {
                    self.engine.task_mut().retry_at(when, at, budget);
                }
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
                debug!("disk {key}: {why}");
            } else {
                info!(
                    "disk {key}: {why} (more of these are logged at debug level until a standby goes)"
                );
            }
            return Some(why);
        }
        self.reporter.refusals_over();
        None
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
