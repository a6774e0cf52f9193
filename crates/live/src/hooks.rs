//! Event hooks: programs the daemon runs when a disk spins down or up,
//! wakes, or its idle task starts or stops (to switch a fan or a relay,
//! tell a home-automation server, refresh a dashboard).
//!
//! A hook is an argv list (no shell), checked at load time like the
//! `command` task's program ([`crate::config`]). It runs in its own process
//! group with the event in `LULL_*` environment variables, and is waited
//! for on its own tokio task, so a slow or hung hook never delays a
//! decision. A hook still running at `hook_timeout` gets SIGTERM, and
//! SIGKILL if it is still there after a grace time. Every run is counted
//! (`lull_hook_runs_total{disk,event}`); a spawn error, a non-zero exit or
//! a timeout is logged and counted (`lull_hook_failures_total`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lull_core::time::Nanos;
use tracing::{info, warn};

/// What happened to a disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookEvent {
    /// A spin-down was attempted (after its outcome: `LULL_RESULT`).
    Spindown,
    /// A disk in standby was found spinning again.
    Spinup,
    /// An idle period ended: the disk is in use again.
    Wake,
    /// The idle task started (or resumed).
    TaskStart,
    /// The idle task stopped (or paused).
    TaskStop,
}

impl HookEvent {
    /// Every event, in config-key order.
    pub const ALL: [HookEvent; 5] = [
        HookEvent::Spindown,
        HookEvent::Spinup,
        HookEvent::Wake,
        HookEvent::TaskStart,
        HookEvent::TaskStop,
    ];
    /// The name in `LULL_EVENT` and the metrics' `event` label.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::Spindown => "spindown",
            HookEvent::Spinup => "spinup",
            HookEvent::Wake => "wake",
            HookEvent::TaskStart => "task_start",
            HookEvent::TaskStop => "task_stop",
        }
    }
    /// The config key (`on_spindown`…).
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::Spindown => "on_spindown",
            HookEvent::Spinup => "on_spinup",
            HookEvent::Wake => "on_wake",
            HookEvent::TaskStart => "on_task_start",
            HookEvent::TaskStop => "on_task_stop",
        }
    }
}

/// The hooks of a disk (or the global defaults): one argv per event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hooks {
    /// Indexed like [`HookEvent::ALL`].
    pub argv: [Option<Vec<String>>; 5],
}

impl Hooks {
    /// The hook for `ev`.
    pub fn get(&self, ev: HookEvent) -> Option<&Vec<String>> {
        self.argv[ev as usize].as_ref()
    }
    /// These hooks, with `defaults` for the events they leave unset.
    pub fn or(mut self, defaults: &Hooks) -> Hooks {
        for (a, d) in self.argv.iter_mut().zip(&defaults.argv) {
            if a.is_none() {
                a.clone_from(d);
            }
        }
        self
    }
}

/// Runs and failures of one disk's hooks for one event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Hooks started (or that failed to start).
    pub runs: u64,
    /// Spawn errors, non-zero exits and timeouts.
    pub failures: u64,
}

/// Starts hooks and counts how they end; cheap to clone.
#[derive(Clone, Debug)]
pub struct HookRunner {
    timeout: Nanos,
    dry_run: bool,
    counts: Arc<Mutex<BTreeMap<(String, HookEvent), Counts>>>,
    changed: Arc<AtomicBool>,
}

impl HookRunner {
    /// A runner killing hooks after `timeout`; a `dry_run` one only logs
    /// the hooks it would run.
    pub fn new(timeout: Nanos, dry_run: bool) -> HookRunner {
        HookRunner {
            timeout,
            dry_run,
            counts: Arc::default(),
            changed: Arc::default(),
        }
    }

    /// Sets the timeout (at a reload).
    pub fn set_timeout(&mut self, timeout: Nanos) {
        self.timeout = timeout;
    }

    /// Whether a count changed since the last call (the metrics are due).
    pub fn take_changed(&self) -> bool {
        self.changed.swap(false, Ordering::Relaxed)
    }

    fn count(&self, disk: &str, ev: HookEvent, f: impl FnOnce(&mut Counts)) {
        let mut m = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        f(m.entry((disk.to_string(), ev)).or_default());
        self.changed.store(true, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn counts(&self) -> BTreeMap<(String, HookEvent), Counts> {
        self.counts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Starts `argv` for `ev` on `disk` with `env` (`LULL_DISK` and
    /// `LULL_EVENT` are added) and returns at once; must be called inside
    /// a tokio runtime.
    pub fn fire(
        &self,
        disk: &str,
        ev: HookEvent,
        argv: &[String],
        env: Vec<(&'static str, String)>,
    ) {
        let Some((prog, args)) = argv.split_first() else {
            return;
        };
        if self.dry_run {
            info!("disk {disk}: dry run: would run hook {} {argv:?}", ev.key());
            return;
        }
        self.count(disk, ev, |c| c.runs += 1);
        let mut cmd = tokio::process::Command::new(prog);
        cmd.args(args)
            .env("LULL_DISK", disk)
            .env("LULL_EVENT", ev.name())
            .envs(env)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .kill_on_drop(false);
        let this = self.clone();
        let disk = disk.to_string();
        let prog = prog.clone();
        tokio::spawn(async move {
            let failure = this.run(cmd).await;
            match failure {
                None => info!("disk {disk}: hook {} ({prog}) done", ev.key()),
                Some(why) => {
                    warn!("disk {disk}: hook {} ({prog}) failed: {why}", ev.key());
                    this.count(&disk, ev, |c| c.failures += 1);
                }
            }
        });
    }

    /// Runs `cmd` to its end or its timeout; `Some(why)` when it failed.
    async fn run(&self, mut cmd: tokio::process::Command) -> Option<String> {
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Some(format!("cannot start: {e}")),
        };
        let timeout = Duration::from_nanos(self.timeout.0);
        match tokio::time::timeout(timeout, child.wait()).await {
            Ok(Ok(s)) if s.success() => None,
            Ok(Ok(s)) => Some(format!("exited with {s}")),
            Ok(Err(e)) => Some(format!("cannot wait for it: {e}")),
            Err(_) => {
                let pid = child.id().unwrap_or(0);
                // The grace time scales with the timeout (a tenth), within
                // 100 ms and 5 s.
                let grace =
                    (timeout / 10).clamp(Duration::from_millis(100), Duration::from_secs(5));
                let _ = crate::process::signal_group(pid, nix::sys::signal::Signal::SIGTERM);
                let how = match tokio::time::timeout(grace, child.wait()).await {
                    Ok(_) => "ended after SIGTERM".to_string(),
                    Err(_) => {
                        let _ =
                            crate::process::signal_group(pid, nix::sys::signal::Signal::SIGKILL);
                        let _ = child.wait().await;
                        format!("SIGKILL after {} ms of SIGTERM", grace.as_millis())
                    }
                };
                Some(format!("timed out after {}: {how}", self.timeout))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn failures_are_counted_by_disk_and_event() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = HookRunner::new(Nanos::from_millis(300), false);
        rt.block_on(async {
            r.fire("a", HookEvent::Wake, &v(&["/bin/true"]), Vec::new());
            r.fire("a", HookEvent::Wake, &v(&["/bin/false"]), Vec::new());
            r.fire(
                "a",
                HookEvent::Spindown,
                &v(&["/nonexistent/hook"]),
                Vec::new(),
            );
            // Ignores SIGTERM: killed with SIGKILL after the grace time.
            r.fire(
                "b",
                HookEvent::TaskStart,
                &v(&["/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done"]),
                Vec::new(),
            );
            let t = tokio::time::Instant::now();
            while r.counts().values().map(|c| c.failures).sum::<u64>() < 3 {
                assert!(t.elapsed() < Duration::from_secs(10), "{:?}", r.counts());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let c = r.counts();
        let get = |d: &str, e| c[&(d.to_string(), e)];
        assert_eq!(
            get("a", HookEvent::Wake),
            Counts {
                runs: 2,
                failures: 1
            }
        );
        assert_eq!(
            get("a", HookEvent::Spindown),
            Counts {
                runs: 1,
                failures: 1
            }
        );
        assert_eq!(
            get("b", HookEvent::TaskStart),
            Counts {
                runs: 1,
                failures: 1
            }
        );
        assert!(r.take_changed() && !r.take_changed());
        let mut out = String::new();
        crate::metrics::render_hooks(&c, &mut out);
        assert!(
            out.contains("lull_hook_runs_total{disk=\"a\",event=\"wake\"} 2"),
            "{out}"
        );
        assert!(
            out.contains("lull_hook_failures_total{disk=\"b\",event=\"task_start\"} 1"),
            "{out}"
        );
    }

    #[test]
    fn disk_hooks_fall_back_to_the_global_ones() {
        let mut g = Hooks::default();
        g.argv[HookEvent::Wake as usize] = Some(v(&["/g"]));
        g.argv[HookEvent::Spinup as usize] = Some(v(&["/g"]));
        let mut d = Hooks::default();
        d.argv[HookEvent::Wake as usize] = Some(v(&["/d"]));
        let m = d.or(&g);
        assert_eq!(m.get(HookEvent::Wake), Some(&v(&["/d"])));
        assert_eq!(m.get(HookEvent::Spinup), Some(&v(&["/g"])));
        assert_eq!(m.get(HookEvent::TaskStop), None);
    }
}
