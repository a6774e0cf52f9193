//! The admin surface: a reload on SIGHUP (a file that fails any check is
//! rejected and the running configuration kept) and the metrics endpoint.

use tracing::{error, info, warn};

use super::{Daemon, DaemonError, lock_state, mark_unconfigured};
use crate::config::{Config, DiskConfig, TaskConfig};
use crate::metrics;
use crate::persist::REMOVED_AT_RELOAD;
use crate::preflight::preflight;
use crate::state::WearBudget;
use crate::timer::unix_now;
use crate::units::secs;

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
                            // Said in one line: what changed, or that it
                            // is gone (a trial's log said only "changed or
                            // removed").
                            let key = d.ctl.key();
                            match self.cfg.entry_for(key) {
                                Some(e) => {
                                    let mut changes = d.ctl.config().changes_to(e);
                                    changes.extend(shared.iter().map(|k| k.to_string()));
                                    info!(
                                        "disk {key}: configuration changed{}; its controller starts again",
                                        if changes.is_empty() {
                                            String::new()
                                        } else {
                                            format!(" ({})", changes.join(", "))
                                        }
                                    );
                                    let wear = d.ctl.state().wear.as_ref();
                                    if let Some(line) =
                                        budget_change(d.ctl.config(), e, wear, unix_now())
                                    {
                                        info!("disk {key}: {line}");
                                    }
                                }
                                None => info!(
                                    "disk {key}: removed from the configuration: no longer watched (its state-file entry is kept; lull status shows it as not watched, and the metrics no longer export it)"
                                ),
                            }
                            gone.push(d);
                        }
                    }
                }
                // A disk idle at the reload goes on where its controller
                // stood (the one started in its place continues it).
                self.handover.clear();
                let now = self.now();
                for d in &gone {
                    let key = d.ctl.key().to_string();
                    if self.cfg.entry_for(&key).is_some()
                        && let Some(t) = d.ctl.handover()
                    {
                        let kernel = d.ctl.kernel().to_string();
                        let began = d.ctl.state().idle_since_unix;
                        self.handover.insert(key, (t, kernel, now, began));
                    }
                }
                self.retire_all(gone).await;
                // The entries of disks the file no longer names (retired
                // above, or waited for and never found) say since when.
                if !mark_unconfigured(&mut self.state, &self.cfg, REMOVED_AT_RELOAD, unix_now())
                    .is_empty()
                {
                    self.persist.mark(true, true);
                }
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

/// The line a reload logs for a `standby` disk whose
/// `max_spindowns_per_day` changed from `old` to `new`
/// ([`budget_line`]). `None` when the budget did not change, or the disk
/// is not a `standby` disk in both.
pub(super) fn budget_change(
    old: &DiskConfig,
    new: &DiskConfig,
    bucket: Option<&WearBudget>,
    now_unix: u64,
) -> Option<String> {
    let (
        TaskConfig::Standby {
            max_spindowns_per_day: from,
            ..
        },
        TaskConfig::Standby {
            max_spindowns_per_day: to,
            ..
        },
    ) = (&old.task, &new.task)
    else {
        return None;
    };
    budget_line(*from, *to, bucket, now_unix)
}

/// What a change of a disk's wear budget from `from` to `to` spin-downs a
/// day does: the token bucket (`bucket`, the state file's) keeps its
/// level, refilling at the new rate from its last update and held to the
/// new size, so a raised budget gives no burst at once (a trial's status
/// read "none left now" right after raising it, with nothing saying
/// why). Said at a reload that changed it, and at a start after it
/// changed while the daemon was stopped. `None` when it did not change.
pub(super) fn budget_line(
    from: u32,
    to: u32,
    bucket: Option<&WearBudget>,
    now_unix: u64,
) -> Option<String> {
    if from == to {
        return None;
    }
    if to == 0 {
        return Some(format!(
            "wear budget {from} → 0 a day: no spin-down from now on"
        ));
    }
    let capacity = WearBudget::capacity(to);
    let Some(bucket) = bucket else {
        return Some(format!(
            "wear budget {from} → {to} a day; its bucket, never drawn on, is full at the new size ({capacity} of {capacity})"
        ));
    };
    let mut level = bucket.clone();
    level.refill(to, now_unix);
    let now = level.tokens.floor();
    let next = match level.clone().take(to, now_unix) {
        Err(wait) if now < 1.0 && wait.is_finite() => format!(", the next in {}", secs(wait)),
        _ => String::new(),
    };
    Some(format!(
        "wear budget {from} → {to} a day; the bucket keeps its level ({now} of {capacity} now{next}), refilling at the new rate, one spin-down every {}",
        secs(86_400.0 / f64::from(to))
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn standby(per_day: u32) -> DiskConfig {
        let text = format!(
            "[[disk]]\ndevice = \"loop0\"\nnetwork = \"timer(20s)\"\nmax_spindowns_per_day = {per_day}\n"
        );
        Config::parse(
            std::path::Path::new("t.toml"),
            &text,
            &crate::default_registry(),
        )
        .unwrap()
        .disks
        .remove(0)
    }

    /// A trial (nas-26): after a reload raised the budget from 24 to 480
    /// a day, the status read "none left now", with nothing saying that
    /// the bucket keeps its level. The reload's line says it.
    #[test]
    fn a_changed_wear_budget_says_that_the_bucket_keeps_its_level() {
        let now = 1_800_000_000;
        assert_eq!(budget_change(&standby(24), &standby(24), None, now), None);
        // Empty a moment ago: refilling at 480 a day, one every 3 minutes.
        let empty = WearBudget {
            tokens: 0.0,
            at_unix: now - 60,
            day: 0,
            spent: 0,
        };
        assert_eq!(
            budget_change(&standby(24), &standby(480), Some(&empty), now).as_deref(),
            Some(
                "wear budget 24 → 480 a day; the bucket keeps its level (0 of 80 now, the next in 2m), refilling at the new rate, one spin-down every 3m"
            )
        );
        // A full bucket lowered: held to the new size.
        let full = WearBudget::full(480, now);
        assert_eq!(
            budget_change(&standby(480), &standby(24), Some(&full), now).as_deref(),
            Some(
                "wear budget 480 → 24 a day; the bucket keeps its level (4 of 4 now), refilling at the new rate, one spin-down every 1h"
            )
        );
        assert_eq!(
            budget_change(&standby(24), &standby(48), None, now).as_deref(),
            Some(
                "wear budget 24 → 48 a day; its bucket, never drawn on, is full at the new size (8 of 8)"
            )
        );
        assert_eq!(
            budget_change(&standby(24), &standby(0), Some(&empty), now).as_deref(),
            Some("wear budget 24 → 0 a day: no spin-down from now on")
        );
    }
}
