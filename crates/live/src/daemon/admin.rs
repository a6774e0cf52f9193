//! The admin surface: a reload on SIGHUP (a file that fails any check is
//! rejected and the running configuration kept) and the metrics endpoint.

use tracing::{error, info, warn};

use super::{Daemon, DaemonError, lock_state};
use crate::config::Config;
use crate::metrics;
use crate::preflight::preflight;

impl Daemon {
    /// Listens on `metrics.listen` (or stops listening) as the
    /// configuration says.
    pub(super) async fn start_metrics_server(&mut self) -> Result<(), DaemonError> {
        let want = self.cfg.metrics.listen;
        if self.metrics_server.as_ref().map(|(a, _)| *a) == want {
            return Ok(());
        }
        if let Some((_, h)) = self.metrics_server.take() {
            h.abort();
        }
        if let Some(addr) = want {
            let l = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                DaemonError::Runtime(format!("metrics endpoint {addr}: cannot listen: {e}"))
            })?;
            if !addr.ip().is_loopback() {
                warn!("metrics endpoint {addr} is reachable from other hosts");
            }
            info!("metrics at http://{addr}/metrics");
            let h = tokio::spawn(metrics::serve(l, self.persist.metrics.subscribe()));
            self.metrics_server = Some((addr, h));
        }
        self.persist.serving = self.metrics_server.is_some();
        Ok(())
    }

    /// Loads the configuration again (SIGHUP).
    pub(super) async fn reload(&mut self) {
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Reloading]);
        let loaded = Config::load(&self.opts.config, &self.opts.registry)
            .map_err(|e| e.to_string())
            .and_then(|c| {
                preflight(&c, self.opts.dry_run)
                    .map(|pre| {
                        for w in pre.logged {
                            warn!("{w}");
                        }
                        for pid in pre.spinners_warned {
                            if !self.spinners_warned.contains(&pid) {
                                self.spinners_warned.push(pid);
                            }
                        }
                        c
                    })
                    .map_err(|e| e.to_string())
            })
            .and_then(|c| {
                // A state file elsewhere is locked before it is used: one
                // another daemon holds rejects the file.
                if c.state_file == self.cfg.state_file {
                    return Ok((c, None));
                }
                match lock_state(&c, self.opts.dry_run) {
                    Ok(l) => Ok((c, Some(l))),
                    // Another name of the file this daemon holds.
                    Err(DaemonError::Held(Some(pid), _)) if pid == std::process::id() => {
                        Ok((c, None))
                    }
                    Err(e) => Err(e.to_string()),
                }
            });
        match loaded {
            Err(e) => error!("config reload rejected, keeping the running configuration: {e}"),
            Ok((new, lock)) => {
                let old_listen = self.cfg.metrics.listen;
                let state_moved = new.state_file != self.cfg.state_file;
                let shared = shared_settings_changed(&self.cfg, &new);
                if let Some(lock) = lock {
                    self.lock = lock;
                }
                self.cfg = new;
                self.hooks.set_timeout(self.cfg.hook_timeout);
                let mut gone = Vec::new();
                for mut d in std::mem::take(&mut self.disks) {
                    let same = self
                        .cfg
                        .disks
                        .iter()
                        .find(|c| c.same_settings(d.ctl.config()));
                    match same.filter(|_| shared.is_empty()) {
                        Some(c) => {
                            // Same settings, maybe another line: keep its
                            // engine, its command and what it learned.
                            d.ctl.set_config(c);
                            self.disks.push(d);
                        }
                        None if same.is_some() => {
                            // Its controller and actors took these at their
                            // start: they start again with the new ones, as
                            // at a restart (what it learned is kept).
                            info!(
                                "disk {}: {} changed; its controller starts again",
                                d.ctl.key(),
                                shared.join(", ")
                            );
                            gone.push(d);
                        }
                        None => {
                            info!("disk {}: configuration changed or removed", d.ctl.key());
                            gone.push(d);
                        }
                    }
                }
                self.retire_all(gone).await;
                self.resolve_now = true; // Re-resolve at the next poll.
                self.diskstats_file = None; // Its path may have changed.
                self.path_sig = 0;
                self.missing.clear();
                self.refused.clear();
                if old_listen != self.cfg.metrics.listen
                    && let Err(e) = self.start_metrics_server().await
                {
                    error!("{e}");
                }
                if state_moved {
                    self.persist.mark(true, false);
                }
                info!(
                    "configuration reloaded: {}, poll {}",
                    super::entries(self.cfg.disks.len()),
                    self.cfg.poll_text()
                );
            }
        }
        // The config code ran again: out of the resident set again.
        self.release_code_soon();
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
    }
}

/// The top-level keys every disk's controller and actors take when they
/// start, named where `new` differs from `old`: the poll (the activity
/// log's session and the shadow's floor), `power_check`, the `hdparm`
/// program and the activity log's settings. A reload that changes one
/// starts every disk again, as a restart would; the other top-level keys
/// (hooks, `hook_timeout`, `state_interval`, metrics, the state file) are
/// read where they are used.
pub(super) fn shared_settings_changed(old: &Config, new: &Config) -> Vec<&'static str> {
    let mut changed = Vec::new();
    if old.poll != new.poll {
        changed.push("poll");
    }
    if old.power_check != new.power_check {
        changed.push("power_check");
    }
    if old.hdparm != new.hdparm {
        changed.push("hdparm");
    }
    if old.activity != new.activity {
        changed.push("the activity log's settings");
    }
    changed
}
