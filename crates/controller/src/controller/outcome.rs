//! What the controller does with an actor's report: counters and the last
//! decision in the state entry, the drive's standby state, hooks, and the
//! back-off of a standby that keeps failing.

use lull_activity::Record;
use tracing::{error, info, warn};

use super::{DiskController, Now, Outcome, Output, WakeWitness};
use crate::config::TaskConfig;
use crate::drive::PowerState;
use crate::hooks::HookEvent;
use crate::state::{JobProcess, Wake};

impl DiskController {
    /// Handles what the disk's actor reported at `now`. `current`: the
    /// actor is of this controller's generation; a report of an older one
    /// (an actor that outlived its configuration) still counts in the
    /// state entry, but changes nothing of the drive's live state and runs
    /// no hook.
    pub fn on_outcome(
        &mut self,
        now: Now,
        outcome: Outcome,
        current: bool,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) {
        let key = self.key.clone();
        self.dirty = true;
        let text = match outcome {
            Outcome::SpunDown(how) => self.spun_down(now, how, current, witness, out),
            Outcome::AlreadyStandby => self.already_in_standby(now, current, witness, out),
            Outcome::Flushed(mounts) => self.flushed(&mounts, current),
            command @ (Outcome::CommandStarted(..)
            | Outcome::CommandResumed(_)
            | Outcome::CommandPaused(_)
            | Outcome::CommandExited(..)
            | Outcome::CommandStopped(..)) => self.on_command_outcome(now, command, current),
            Outcome::Skipped(why) => {
                // A new reason is written at once (no transport reaches
                // the drive: `lull status` should say so now, not in a
                // minute); the same one again waits for `state_interval`.
                if self.reporter.new_skip(&why) {
                    self.urgent = true;
                }
                self.not_running |= current;
                info!("disk {key}: {why}");
                why
            }
            Outcome::Power(ps) => {
                if !current {
                    return;
                }
                match self.on_power(now, ps, witness, out) {
                    Some(text) => text,
                    // Nothing new: no decision to record.
                    None => return,
                }
            }
            Outcome::Transport(memo) => {
                // Logged by the actor; saved at once, so a restart does
                // not probe again.
                self.st.transport = Some(memo);
                self.urgent = true;
                return;
            }
            // The decision was written at once and reads "standby …";
            // an outcome that says the drive did not go is written at once
            // too, or `lull status` (from the state file) shows a standby
            // that never happened for up to `state_interval`.
            Outcome::DryRun(what) => {
                self.urgent = true;
                info!("disk {key}: dry run: would {what}");
                format!("dry run: would {what}")
            }
            Outcome::Failed(why) => {
                self.urgent = true;
                self.st.errors += 1;
                error!("disk {key}: {why}");
                if current {
                    self.on_failure(now, &why, out);
                }
                format!("error: {why}")
            }
        };
        self.st.last_decision = text;
        self.st.last_decision_unix = now.unix;
    }

    /// The flush is done: it synced the file systems mounted at `mounts`.
    /// The decision's text.
    fn flushed(&mut self, mounts: &[std::path::PathBuf], current: bool) -> String {
        if current {
            self.own_io.flush_done();
        }
        let list: Vec<String> = mounts.iter().map(|m| m.display().to_string()).collect();
        routine!(
            self,
            "disk {}: flushed {}",
            self.key,
            if list.is_empty() {
                "(no mounted file system)".into()
            } else {
                list.join(", ")
            }
        );
        format!("flush done ({} file systems)", mounts.len())
    }

    /// The standby went (`how`: the transport's words): counted, and,
    /// from this generation's actor, the drive is asleep, the policy's
    /// failures are over, and the hook runs. The decision's text.
    fn spun_down(
        &mut self,
        now: Now,
        how: String,
        current: bool,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) -> String {
        // Written at once, as the decision was: that write came before
        // the drive answered, so `lull status` (from the state file)
        // showed it active, one spin-down short, for up to
        // `state_interval` of its standby. Rare: the wear budget bounds
        // them.
        self.urgent = true;
        self.st.spindowns += 1;
        if current {
            let t = now.mono;
            self.activity(
                Record::Power {
                    t,
                    standby: true,
                    found: false,
                },
                out,
            );
            self.standby.succeeded();
            self.power
                .went_to_sleep(now, witness.snapshot(), &mut self.st);
            let env = || vec![("LULL_RESULT", "ok".to_string())];
            self.hook(now, HookEvent::Spindown, env, out);
        }
        info!("disk {}: in standby ({how})", self.key);
        format!("standby done ({how})")
    }

    /// The standby found the drive asleep already: since the previous
    /// run's spin-down (taken up), or spun down by something else. The
    /// decision's text.
    fn already_in_standby(
        &mut self,
        now: Now,
        current: bool,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) -> String {
        let key = self.key.clone();
        self.urgent = true;
        if self.power.left_in_standby() {
            // Asleep since the previous run's spin-down: nothing else
            // spun it down.
            if current {
                self.resume_standby(now, witness);
                let env = || vec![("LULL_RESULT", "already".to_string())];
                self.hook(now, HookEvent::Spindown, env, out);
            }
            info!("disk {key}: already in standby, as before the daemon's restart or reload");
            return "standby: the drive was still in standby, as before the daemon's restart or reload"
                .into();
        }
        let by = self.spun_down_by(witness);
        info!("disk {key}: already in standby{by}");
        if current {
            if !self.power.in_standby() {
                self.power
                    .went_to_sleep(now, witness.snapshot(), &mut self.st);
            }
            let env = || vec![("LULL_RESULT", "already".to_string())];
            self.hook(now, HookEvent::Spindown, env, out);
        }
        format!("standby: the drive was already in standby{by}")
    }

    /// What the disk's actor reported of its command at `now`: its run
    /// time (from a start or a resume to a pause, its exit or its stop),
    /// its pid in the state entry, and, for a command that keeps failing,
    /// the policy's back-off. The decision's text.
    fn on_command_outcome(&mut self, now: Now, outcome: Outcome, current: bool) -> String {
        let key = self.key.clone();
        let t = now.mono;
        match &outcome {
            Outcome::CommandStarted(..) | Outcome::CommandResumed(_) => {
                self.command_since.get_or_insert(t);
            }
            Outcome::CommandPaused(_)
            | Outcome::CommandExited(..)
            | Outcome::CommandStopped(..) => {
                if let Some(since) = self.command_since.take() {
                    self.st.command_s += (t - since).as_secs_f64();
                }
            }
            _ => {}
        }
        match outcome {
            Outcome::CommandStarted(pid, start) => {
                self.urgent = true;
                self.st.command_pid = Some(pid);
                self.st.command_start = start;
                info!("disk {key}: command started, pid {pid}");
                format!("command started (pid {pid})")
            }
            Outcome::CommandResumed(pid) => {
                routine!(self, "disk {key}: command resumed (SIGCONT), pid {pid}");
                format!("command resumed (pid {pid})")
            }
            Outcome::CommandPaused(pid) => {
                // It ran until the foreground came back: not failing.
                self.standby.ran();
                routine!(self, "disk {key}: command paused (SIGSTOP), pid {pid}");
                format!("command paused (pid {pid})")
            }
            Outcome::CommandExited(pid, status, ok) => {
                self.command_exited(now, (pid, status), ok, current)
            }
            Outcome::CommandStopped(pid, status) => {
                self.urgent = true;
                self.st.command_pid = None;
                self.st.command_start = None;
                self.not_running |= current;
                info!("disk {key}: command pid {pid} stopped by the daemon: {status}");
                format!("command stopped by the daemon: {status}")
            }
            // Not a command's outcome: [`DiskController::on_outcome`]
            // sends none here.
            other => format!("{other:?}"),
        }
    }

    /// The command `pid` exited with `status` (`ok`: well). A command
    /// that fails at once (a wrong path in a script, a missing mount) was
    /// started again at every idle period, and said so at info level, for
    /// ever: one that keeps failing backs off. The decision's text.
    fn command_exited(
        &mut self,
        now: Now,
        (pid, status): (u32, String),
        ok: bool,
        current: bool,
    ) -> String {
        self.urgent = true;
        self.st.command_pid = None;
        self.st.command_start = None;
        self.st.command_exits += 1;
        self.not_running |= current;
        if ok {
            self.standby.ran();
            info!("disk {}: command pid {pid} exited: {status}", self.key);
            format!("command exited: {status}")
        } else {
            self.st.errors += 1;
            warn!("disk {}: command pid {pid} failed: {status}", self.key);
            if current {
                self.back_off(now, "the command");
            }
            format!("command failed: {status}")
        }
    }

    /// CHECK POWER MODE's answer: a drive awake although lull spun it down
    /// and diskstats saw nothing, or asleep although lull did not spin it
    /// down. The decision's text, or `None` when nothing changed.
    fn on_power(
        &mut self,
        now: Now,
        ps: PowerState,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) -> Option<String> {
        let t = now.mono;
        match (ps, self.power.standby_since()) {
            (PowerState::Active, Some(since)) => {
                // Awake, though diskstats saw nothing: woken by a command
                // the kernel does not count (SMART), or spun down and up
                // by someone else. Its standby is booked (its time, a
                // spin-up).
                self.st.foreign_spinups += 1;
                self.urgent = true;
                let standby = (t - since).as_secs_f64();
                let slept = self.power.woke(now, &mut self.st);
                self.activity(
                    Record::Power {
                        t,
                        standby: false,
                        found: true,
                    },
                    out,
                );
                let env = || vec![("LULL_STANDBY_S", format!("{standby:.3}"))];
                let hooks = self
                    .hook_env(now, HookEvent::Spinup, env)
                    .into_iter()
                    .collect();
                let text = format!(
                    "disk {}: spun up by something else after {} in standby (CHECK POWER MODE: active, no I/O counted)",
                    self.key,
                    (t - since).approx()
                );
                self.woke(now, (Wake::FOREIGN, 0, slept), text, hooks, witness, out);
                Some("spun up by something else".into())
            }
            (PowerState::Standby, None) if self.power.left_in_standby() => {
                // Asleep since the previous run's spin-down: nothing else
                // spun it down, and its standby began then.
                self.take_up_standby(now, now, witness, out);
                let text = "still in standby, as before the daemon's restart or reload";
                info!("disk {}: {text}", self.key);
                Some(text.into())
            }
            (PowerState::Standby, None) => {
                // Written at once, as lull's own spin-downs are: `lull
                // status` showed the drive "active" for up to
                // `state_interval` (seen in the guest, beside an hd-idle
                // started after lull).
                self.urgent = true;
                self.activity(
                    Record::Power {
                        t,
                        standby: true,
                        found: true,
                    },
                    out,
                );
                // Asleep when first asked (not seen awake before): since
                // when, nobody saw.
                self.power
                    .found_asleep(now, witness.snapshot(), &mut self.st);
                // The drive's own APM or Standby_z timer may be that
                // something.
                let by = self.spun_down_by(witness);
                let apm = self
                    .st
                    .identity
                    .as_ref()
                    .and_then(crate::identify::Identity::self_standby_reason)
                    .map(|r| format!("{}{r}", if by.is_empty() { ": " } else { "; " }))
                    .unwrap_or_default();
                let text = format!("found in standby (spun down by something else{by}{apm})");
                info!("disk {}: {text}", self.key);
                Some(text)
            }
            (PowerState::Active, None) => {
                if self.power.answered_active(&mut self.st) {
                    // The standby the previous run left ended while no
                    // daemon watched: `lull status` says so at once.
                    self.urgent = true;
                    info!(
                        "disk {}: awake; it was in standby before the daemon's restart or reload",
                        self.key
                    );
                }
                None
            }
            _ => None,
        }
    }

    /// [`DiskController::resume_standby`] with the activity record that
    /// says the standby was found (at `now`), written at once: the log's
    /// replay and `lull status` have the drive asleep from then.
    pub(super) fn take_up_standby(
        &mut self,
        from: Now,
        now: Now,
        witness: &mut dyn WakeWitness,
        out: &mut Vec<Output>,
    ) {
        self.urgent = true;
        self.activity(
            Record::Power {
                t: now.mono,
                standby: true,
                found: true,
            },
            out,
        );
        self.resume_standby(from, witness);
    }

    /// Takes up the standby the daemon's previous run left the drive in
    /// ([`Power::took_up`](super::power::Power::took_up)): in standby
    /// from `from` on for this run's counters, since the previous run's
    /// spin-down for the power state's age; the wake that ends it is
    /// attributed from the processes' I/O counters now.
    /// A run that continues the previous one's idle period (the disk
    /// untouched while no daemon ran, [`DiskController::resume_idle`])
    /// also counts the standby through the time between the two
    /// ([`crate::state::DiskState::standby_s`]): the evidence (`lull
    /// status`'s saved lines) counts that period as one, asleep
    /// throughout, and the counter and `lull_energy_saved_joules` read a
    /// few seconds of standby beside hours of savings.
    ///
    /// `from` is when this run first knew the drive asleep: the moment
    /// of a power check's answer, or of the first poll when the state
    /// file is all there is; when I/O comes before a check's answer, the
    /// first poll that found the disk untouched.
    pub(super) fn resume_standby(&mut self, from: Now, witness: &mut dyn WakeWitness) {
        if let Some(stopped) = self.continued_stop_unix.take() {
            self.st.standby_s += from.unix.saturating_sub(stopped) as f64;
        }
        self.power.took_up(from, witness.snapshot());
    }

    /// The programs that spin this disk down beside lull, running now
    /// ([`WakeWitness::spinners`]), as `": hd-idle (pid 652)"` for a line
    /// saying the drive was found asleep (empty when there are none). The
    /// first time one is seen, its warning (what it spins down, and what
    /// to do) is logged, unless the witness gave none (the daemon's gives
    /// each program's once per process: its start's check may have): an
    /// hd-idle started after lull's start, which the start's check could
    /// not name.
    fn spun_down_by(&mut self, witness: &mut dyn WakeWitness) -> String {
        let spinners = witness.spinners(&self.kernel);
        for s in &spinners {
            if self.reporter.new_spinner(s.pid) && !s.warning.is_empty() {
                warn!("disk {}: {}", self.key, s.warning);
            }
        }
        if spinners.is_empty() {
            return String::new();
        }
        let names: Vec<String> = spinners
            .iter()
            .map(|s| format!("{} (pid {})", s.name, s.pid))
            .collect();
        format!(": {}", names.join(", "))
    }

    /// A standby, flush or command failed: the task is not running; a
    /// standby or a command that keeps failing backs off.
    fn on_failure(&mut self, now: Now, why: &str, out: &mut Vec<Output>) {
        self.own_io.flush_failed();
        self.not_running = true;
        if matches!(self.cfg.task, TaskConfig::Command { .. }) {
            self.back_off(now, "the command");
        }
        if !matches!(self.cfg.task, TaskConfig::Standby { .. }) {
            return;
        }
        let env = || {
            vec![
                ("LULL_RESULT", "failed".to_string()),
                ("LULL_ERROR", why.to_string()),
            ]
        };
        self.hook(now, HookEvent::Spindown, env, out);
        self.activity(Record::StandbyFailed(now.mono), out);
        // The drive did not spin down: its token and attempt go back.
        self.standby.refund(&mut self.st);
        // A disk that cannot spin down (a virtual disk, an NVMe drive
        // caught by a glob) is not retried at every idle period.
        self.back_off(now, "standby");
    }

    /// One more failure of `what` in a row
    /// ([`StandbyPolicy::failed`](super::standby::StandbyPolicy::failed)):
    /// the line that says when it backs off.
    fn back_off(&mut self, now: Now, what: &str) {
        if let Some((failures, wait)) = self.standby.failed(now.mono) {
            warn!(
                "disk {}: {what} failed {failures} times in a row; next try in {}",
                self.key,
                wait.approx()
            );
        }
    }

    /// What the actor of job `name` reported at `now`: logged with the
    /// job's name; failures count as the disk's errors; a running
    /// command's pid and start time are kept in the state entry (written
    /// at once), so that a daemon killed with SIGKILL stops it at its next
    /// start. A command that exited has done its work for its window: the
    /// rest of the idle period goes to the next job (its orders in `out`);
    /// `current` as for [`DiskController::on_outcome`] (an older
    /// generation's job schedules nothing).
    pub fn on_job_outcome(
        &mut self,
        now: Now,
        name: String,
        outcome: Outcome,
        current: bool,
        out: &mut Vec<Output>,
    ) {
        let exited = current && matches!(outcome, Outcome::CommandExited(..));
        let done = self
            .jobs
            .as_ref()
            .filter(|_| exited)
            .and_then(|j| j.run.position(&name));
        if let (Some(i), Some(j)) = (done, self.jobs.as_mut()) {
            let switches = j.run.on_job_done(i, now.mono);
            self.switch_jobs(switches, out);
        }
        let key = &self.key;
        if let Outcome::CommandStarted(pid, start) = outcome {
            self.st
                .job_pids
                .insert(name.clone(), JobProcess { pid, start });
            self.urgent = true;
            self.dirty = true;
        }
        if let Outcome::CommandExited(..) | Outcome::CommandStopped(..) = outcome {
            self.st.job_pids.remove(&name);
            self.urgent = true;
            self.dirty = true;
        }
        let routine = matches!(
            outcome,
            Outcome::CommandResumed(_) | Outcome::CommandPaused(_)
        );
        let text = match outcome {
            Outcome::CommandStarted(pid, _) => format!("command started, pid {pid}"),
            Outcome::CommandResumed(pid) => format!("command resumed (SIGCONT), pid {pid}"),
            Outcome::CommandPaused(pid) => format!("command paused (SIGSTOP), pid {pid}"),
            Outcome::CommandExited(pid, status, true) => format!(
                "command pid {pid} exited: {status} (its work for this window is done; it runs again in its next window)"
            ),
            Outcome::CommandExited(pid, status, false) => {
                self.st.errors += 1;
                self.dirty = true;
                warn!(
                    "disk {key}: job {name}: command pid {pid} failed: {status} (it runs again in its next window)"
                );
                return;
            }
            Outcome::CommandStopped(pid, status) => {
                format!("command pid {pid} stopped by the daemon: {status}")
            }
            Outcome::DryRun(what) => format!("dry run: would {what}"),
            Outcome::Skipped(why) => why,
            Outcome::Failed(why) => {
                self.st.errors += 1;
                self.dirty = true;
                error!("disk {key}: job {name}: {why}");
                return;
            }
            other => format!("{other:?}"),
        };
        if routine {
            routine!(self, "disk {key}: job {name}: {text}");
        } else {
            info!("disk {key}: job {name}: {text}");
        }
    }
}
