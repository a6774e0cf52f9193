//! The effectors: one actor per disk (and per job of a `jobs` disk) that
//! executes the controller's orders on tokio — standby through the disk's
//! transport, `syncfs`, commands spawned, paused and resumed — and reports
//! each outcome back to the poll loop. A drive that takes 30 s to answer
//! stalls its own actor, never the loop or another disk.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::sync::mpsc;

use crate::config::TaskConfig;
use crate::controller::{Order, Outcome};
use crate::drive::{self, PowerState};
use crate::process::{self, signal_group};
use crate::transport::{Chooser, Standby};

/// What an actor reports: its disk, its generation (a report of an older
/// generation counts in the state, not in the live disk), the job, and
/// the outcome.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) key: String,
    pub(crate) generation: u64,
    /// The job's name, for a job's actor (`task = "jobs"`).
    pub(crate) job: Option<String>,
    pub(crate) outcome: Outcome,
}

/// Executes one disk's orders.
pub(crate) struct Actor {
    pub(crate) key: String,
    pub(crate) generation: u64,
    /// The job it runs the command of (`task = "jobs"`).
    pub(crate) job: Option<String>,
    pub(crate) task: TaskConfig,
    pub(crate) dry_run: bool,
    pub(crate) reports: mpsc::UnboundedSender<Report>,
    /// How standby reaches the drive (`task = "standby"` only).
    pub(crate) transport: Option<Chooser>,
}

struct Running {
    child: tokio::process::Child,
    pid: u32,
    paused: bool,
}

async fn wait_child(c: &mut Option<Running>) -> std::io::Result<std::process::ExitStatus> {
    match c {
        Some(r) => r.child.wait().await,
        None => std::future::pending().await,
    }
}

impl Actor {
    fn report(&self, outcome: Outcome) {
        let _ = self.reports.send(Report {
            key: self.key.clone(),
            generation: self.generation,
            job: self.job.clone(),
            outcome,
        });
    }

    pub(crate) async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Order>) {
        let mut child: Option<Running> = None;
        let mut last_exit: Option<tokio::time::Instant> = None;
        if !self.dry_run
            && let Some(t) = self.transport.as_mut()
        {
            t.prepare().await;
            self.report_transport();
        }
        loop {
            tokio::select! {
                order = rx.recv() => match order {
                    None | Some(Order::Shutdown) => break,
                    Some(Order::Start { dev, devs }) => {
                        self.start(&mut child, last_exit, &dev, devs).await
                    }
                    Some(Order::Stop) => self.stop(&mut child),
                    Some(Order::CheckPower { dev }) => self.check_power(&dev).await,
                    Some(Order::Replugged { dev }) => {
                        if let Some(t) = self.transport.as_mut() {
                            t.forget();
                            if !self.dry_run {
                                t.resolve(&dev).await;
                                self.report_transport();
                            }
                        }
                    }
                },
                status = wait_child(&mut child) => {
                    let pid = child.take().map_or(0, |r| r.pid);
                    last_exit = Some(tokio::time::Instant::now());
                    let (status, ok) = match status {
                        Ok(s) => (s.to_string(), s.success()),
                        Err(e) => (format!("wait failed: {e}"), false),
                    };
                    self.report(Outcome::CommandExited(pid, status, ok));
                }
            }
        }
        if let Some(mut r) = child.take() {
            // SIGCONT first: a stopped process cannot act on SIGTERM.
            let _ = signal_group(r.pid, Signal::SIGCONT);
            let _ = signal_group(r.pid, Signal::SIGTERM);
            let status = match tokio::time::timeout(Duration::from_secs(10), r.child.wait()).await {
                Ok(Ok(s)) => s.to_string(),
                Ok(Err(e)) => format!("wait failed: {e}"),
                Err(_) => {
                    let _ = signal_group(r.pid, Signal::SIGKILL);
                    let _ = r.child.wait().await;
                    "killed after 10 s (SIGTERM ignored)".to_string()
                }
            };
            self.report(Outcome::CommandStopped(r.pid, status));
        }
    }

    /// Sends a transport probe's result to the loop (for the state file).
    fn report_transport(&mut self) {
        if let Some(m) = self.transport.as_mut().and_then(|t| t.take_memo()) {
            self.report(Outcome::Transport(m));
        }
    }

    /// Reports the power state through the disk's transport (none with
    /// `hdparm`: a process per check would cost more than it tells).
    async fn check_power(&mut self, dev: &Path) {
        let Some(t) = self.transport.as_mut() else {
            return;
        };
        let r = t.power(dev).await;
        self.report_transport();
        match r {
            None | Some(Ok(PowerState::Unknown)) => {}
            Some(Ok(ps)) => self.report(Outcome::Power(ps)),
            Some(Err(e)) => tracing::debug!("disk {}: power state: {e}", self.key),
        }
    }

    async fn start(
        &mut self,
        child: &mut Option<Running>,
        last_exit: Option<tokio::time::Instant>,
        dev: &Path,
        devs: Vec<(u32, u32)>,
    ) {
        let task = self.task.clone();
        match &task {
            TaskConfig::Standby { .. } => {
                if self.dry_run {
                    self.report(Outcome::DryRun(format!("spin {} down", dev.display())));
                    return;
                }
                let Some(t) = self.transport.as_mut() else {
                    return;
                };
                let r = t.standby(dev).await;
                self.report_transport();
                self.report(match r {
                    Ok(Standby::SpunDown(how)) => Outcome::SpunDown(how),
                    Ok(Standby::Unconfirmed(how)) => {
                        Outcome::SpunDown(format!("{how}; the drive still reports itself active"))
                    }
                    Ok(Standby::Already) => Outcome::AlreadyStandby,
                    Ok(Standby::LeftAlone) => {
                        Outcome::Skipped("standby skipped: no transport reaches the drive".into())
                    }
                    Err(e) => Outcome::Failed(format!("standby failed: {e}")),
                });
            }
            TaskConfig::Flush => {
                if self.dry_run {
                    self.report(Outcome::DryRun("syncfs its file systems".into()));
                    return;
                }
                match drive::flush(devs).await {
                    Ok(m) => self.report(Outcome::Flushed(m)),
                    Err(e) => self.report(Outcome::Failed(e)),
                }
            }
            // The disk's own actor does nothing: each job has its own.
            TaskConfig::Jobs { .. } => {}
            TaskConfig::Command { argv, interval } => {
                if let Some(r) = child {
                    if r.paused {
                        match signal_group(r.pid, Signal::SIGCONT) {
                            Ok(()) => {
                                r.paused = false;
                                self.report(Outcome::CommandResumed(r.pid));
                            }
                            Err(e) => self.report(Outcome::Failed(e)),
                        }
                    }
                    return;
                }
                if let Some(t) = last_exit {
                    let since = t.elapsed();
                    let wait = Duration::from_nanos(interval.0);
                    if since < wait {
                        self.report(Outcome::Skipped(format!(
                            "command not started: it ran {} s ago, interval is {interval}",
                            since.as_secs()
                        )));
                        return;
                    }
                }
                if self.dry_run {
                    self.report(Outcome::DryRun(format!("run {argv:?}")));
                    return;
                }
                let spawned = tokio::process::Command::new(&argv[0])
                    .args(&argv[1..])
                    .stdin(std::process::Stdio::null())
                    .process_group(0)
                    .spawn();
                match spawned {
                    Ok(c) => {
                        let pid = c.id().unwrap_or(0);
                        let start = process::stat(pid).map(|s| s.start_ticks);
                        *child = Some(Running {
                            child: c,
                            pid,
                            paused: false,
                        });
                        self.report(Outcome::CommandStarted(pid, start));
                    }
                    Err(e) => self.report(Outcome::Failed(format!("cannot run {}: {e}", argv[0]))),
                }
            }
        }
    }

    fn stop(&self, child: &mut Option<Running>) {
        if let Some(r) = child
            && !r.paused
        {
            match signal_group(r.pid, Signal::SIGSTOP) {
                Ok(()) => {
                    r.paused = true;
                    self.report(Outcome::CommandPaused(r.pid));
                }
                Err(e) => self.report(Outcome::Failed(e)),
            }
        }
    }
}
