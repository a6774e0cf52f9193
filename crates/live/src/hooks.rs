//! Event hooks: programs the daemon runs when a disk spins down or up,
//! wakes, or its idle task starts or stops (to switch a fan or a relay,
//! tell a home-automation server, refresh a dashboard).
//!
//! A hook is an argv list (no shell), checked at load time like the
//! `command` task's program ([`crate::config`]). It runs in its own process
//! group with the event in `LULL_*` environment variables, and is waited
//! for on its own tokio task, so a slow or hung hook never delays a
//! decision. A hook still running at `hook_timeout` gets SIGTERM, and
//! SIGKILL if it is still there after a grace time. When the daemon stops,
//! a hook still running may finish, up to its timeout and at most
//! [`STOP_WAIT`] longer, then gets the same two signals: a hook is never
//! left behind, running on with no daemon to enforce its timeout (under
//! systemd the unit's cgroup is killed at `TimeoutStopSec`; in a shell or
//! another supervisor nothing would end it). Every run is counted
//! (`lull_hook_runs_total{disk,event}`); a spawn error, a non-zero exit or
//! a timeout is logged and counted (`lull_hook_failures_total`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::snapshot::HookSnapshot;
use lull_core::time::Nanos;
use tokio::sync::watch;
use tracing::{info, warn};

pub use lull_controller::hooks::{HookEvent, Hooks};

/// How long the daemon's stop waits for a running hook to finish (within
/// its own timeout) before it signals it: with the commands' stop (SIGKILL
/// after 10 s) it stays under the packaged unit's `TimeoutStopSec=30s`.
pub const STOP_WAIT: Duration = Duration::from_secs(10);

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
    /// How many hooks are running now.
    running: Arc<watch::Sender<usize>>,
    /// Set when the daemon stops: running hooks end.
    stopping: Arc<watch::Sender<bool>>,
    /// [`STOP_WAIT`] (shorter in tests).
    stop_wait: Duration,
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
            running: Arc::new(watch::Sender::new(0)),
            stopping: Arc::new(watch::Sender::new(false)),
            stop_wait: STOP_WAIT,
        }
    }

    /// At the daemon's stop: lets each running hook finish, up to its
    /// timeout but at most [`STOP_WAIT`] more, then sends it SIGTERM and,
    /// after the grace time (a tenth of the timeout, within 100 ms and
    /// 5 s), SIGKILL; returns when none runs. A hook fired after this call
    /// gets the same treatment.
    pub async fn stop(&self) {
        self.stopping.send_replace(true);
        let mut running = self.running.subscribe();
        let _ = running.wait_for(|&n| n == 0).await;
    }

    /// The grace time a hook gets between its timeout (or the daemon's
    /// stop) and SIGTERM, and between SIGTERM and SIGKILL.
    fn grace(&self) -> Duration {
        (Duration::from_nanos(self.timeout.0) / 10)
            .clamp(Duration::from_millis(100), Duration::from_secs(5))
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

    /// The counts so far of the disks `exported` accepts, by disk and
    /// event, as the daemon's snapshot holds them.
    pub fn snapshot(&self, exported: &dyn Fn(&str) -> bool) -> Vec<HookSnapshot> {
        self.counts()
            .into_iter()
            .filter(|((disk, _), _)| exported(disk))
            .map(|((disk, ev), c)| HookSnapshot {
                disk,
                event: ev.name().to_string(),
                runs: c.runs,
                failures: c.failures,
            })
            .collect()
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
        self.running.send_modify(|n| *n += 1);
        tokio::spawn(async move {
            let failure = this.run(cmd).await;
            match failure {
                None => info!("disk {disk}: hook {} ({prog}) done", ev.key()),
                Some(why) => {
                    warn!("disk {disk}: hook {} ({prog}) failed: {why}", ev.key());
                    this.count(&disk, ev, |c| c.failures += 1);
                }
            }
            // Counted first: the stop's state save sees the failure.
            this.running.send_modify(|n| *n -= 1);
        });
    }

    /// Runs `cmd` to its end, its timeout or the daemon's stop; `Some(why)`
    /// when it failed.
    async fn run(&self, mut cmd: tokio::process::Command) -> Option<String> {
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Some(format!("cannot start: {e}")),
        };
        let deadline = tokio::time::Instant::now() + Duration::from_nanos(self.timeout.0);
        let grace = self.grace();
        let mut stopping = self.stopping.subscribe();
        let waited = tokio::select! {
            w = tokio::time::timeout_at(deadline, child.wait()) => Some(w.ok()),
            // Not `biased`: a hook that ended as the stop came is either.
            _ = stopping.wait_for(|&s| s) => None,
        };
        let waited = match waited {
            Some(w) => w,
            // The daemon stops: the hook may finish, up to its timeout but
            // no more than `STOP_WAIT` from now.
            None => {
                let until = deadline.min(tokio::time::Instant::now() + self.stop_wait);
                match tokio::time::timeout_at(until, child.wait()).await {
                    Ok(w) => Some(w),
                    Err(_) if until < deadline => {
                        let how = Self::terminate(&mut child, grace).await;
                        return Some(format!("still running when the daemon stopped: {how}"));
                    }
                    Err(_) => None,
                }
            }
        };
        match waited {
            Some(Ok(s)) if s.success() => None,
            Some(Ok(s)) => Some(format!("exited with {s}")),
            Some(Err(e)) => Some(format!("cannot wait for it: {e}")),
            None => {
                let how = Self::terminate(&mut child, grace).await;
                Some(format!("timed out after {}: {how}", self.timeout))
            }
        }
    }

    /// SIGTERM to the hook's process group, and SIGKILL after `grace` if it
    /// is still there; says which ended it.
    async fn terminate(child: &mut tokio::process::Child, grace: Duration) -> String {
        // `None` once reaped: then there is nothing to signal (and
        // `killpg(0)` would signal the daemon's own group).
        let Some(pid) = child.id() else {
            return "ended".to_string();
        };
        let _ = crate::process::signal_group(pid, nix::sys::signal::Signal::SIGTERM);
        match tokio::time::timeout(grace, child.wait()).await {
            Ok(_) => "ended after SIGTERM".to_string(),
            Err(_) => {
                let _ = crate::process::signal_group(pid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait().await;
                format!("SIGKILL after {} ms of SIGTERM", grace.as_millis())
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
    fn a_stop_lets_hooks_finish_then_ends_them() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // A timeout of 20 s (a grace time of 2 s), the stop's wait cut to
        // 300 ms.
        let mut r = HookRunner::new(Nanos::from_secs(20), false);
        r.stop_wait = Duration::from_millis(300);
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let script = format!("trap '' TERM; echo $$ >> {pids:?}; while :; do sleep 1; done");
        rt.block_on(async {
            // One finishes within the wait, one ends on SIGTERM, one only
            // on SIGKILL.
            r.fire("a", HookEvent::Wake, &v(&["/bin/sleep", "0.1"]), Vec::new());
            r.fire(
                "a",
                HookEvent::Spindown,
                &v(&["/bin/sleep", "3600"]),
                Vec::new(),
            );
            r.fire(
                "b",
                HookEvent::TaskStart,
                &v(&["/bin/sh", "-c", &script]),
                Vec::new(),
            );
            let t = tokio::time::Instant::now();
            while !std::fs::read_to_string(&pids).is_ok_and(|p| p.ends_with('\n')) {
                assert!(
                    t.elapsed() < Duration::from_secs(10),
                    "the hook did not start"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let t = tokio::time::Instant::now();
            r.stop().await;
            // The wait, then the grace time between the signals: not the
            // hooks' 20 s.
            let took = t.elapsed();
            assert!(took >= Duration::from_millis(2300), "{took:?}");
            assert!(took < Duration::from_secs(10), "{took:?}");
            assert_eq!(*r.running.borrow(), 0);
        });
        let pid: i32 = std::fs::read_to_string(&pids)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err();
        assert!(gone, "hook {pid} still runs after the stop");
        let c = r.counts();
        assert_eq!(c[&("a".to_string(), HookEvent::Wake)].failures, 0);
        assert_eq!(c[&("a".to_string(), HookEvent::Spindown)].failures, 1);
        assert_eq!(c[&("b".to_string(), HookEvent::TaskStart)].failures, 1);

        // A hook whose timeout comes first ends at it, as without a stop.
        let r = HookRunner::new(Nanos::from_millis(500), false);
        rt.block_on(async {
            r.fire(
                "c",
                HookEvent::Wake,
                &v(&["/bin/sleep", "3600"]),
                Vec::new(),
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
            let t = tokio::time::Instant::now();
            r.stop().await;
            assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        });
        assert_eq!(r.counts()[&("c".to_string(), HookEvent::Wake)].failures, 1);
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
        let out = crate::metrics::render_snapshot(&crate::snapshot::DaemonSnapshot {
            hooks: r.snapshot(&|_| true),
            ..Default::default()
        });
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
