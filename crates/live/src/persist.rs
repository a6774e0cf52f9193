//! Persistence: when the state file and the metrics are written.
//!
//! The state file is fsynced, which costs more than the rest of a poll, on
//! the system disk: counters that changed are written every
//! `state_interval` (default 1 min, never more often than polls), and at
//! once when something urgent changed (a command's pid, which a restart
//! after SIGKILL needs; a spin-down, spin-up or wake, which `lull status`
//! shows), and at stop. A crash loses at most that much of the counters.
//! The metrics (no fsync) follow every change, at most once a second but
//! at once for an urgent one, and
//! at least every [`METRICS_REFRESH`] with no change, and are rendered only
//! for someone: a textfile or an endpoint. The refresh is for the figures
//! that move on a quiet disk: `lull_polls_total` (a monitor's "is lull
//! still polling" check), the shadow's watched time, and the textfile's
//! age, which node_exporter's staleness checks read.

use std::sync::Arc;

use lull_core::time::Nanos;
use tokio::sync::watch;
use tracing::{error, info, warn};

use crate::config::Config;
use crate::hooks::HookRunner;
use crate::metrics::{self, DiskGauges};
use crate::snapshot::DaemonSnapshot;
use crate::state::{State, write_atomically};

/// The longest the metrics go unrendered while something wants them.
pub(crate) const METRICS_REFRESH: Nanos = Nanos::from_secs(60);

/// What changed since the last write, and when the last writes were.
#[derive(Debug)]
pub(crate) struct Persist {
    /// Something the metrics show changed.
    dirty: bool,
    /// When the metrics were last rendered (`None`: never, so the first
    /// poll writes them and a scrape right after the start sees metrics).
    last_save: Option<Nanos>,
    /// When the state file was last written.
    last_state_save: Option<Nanos>,
    /// Write the state file at the next save.
    urgent: bool,
    /// The state changed since the state file was last written.
    state_dirty: bool,
    /// The last error writing the metrics textfile (logged once per
    /// change).
    textfile_error: Option<String>,
    /// The rendered metrics and snapshot, for the endpoint.
    pub(crate) metrics: watch::Sender<Arc<metrics::Exported>>,
    /// A metrics endpoint listens.
    pub(crate) serving: bool,
    /// A dry run writes its own state file
    /// ([`Config::dry_run_state_file`]), and a failure to write it is
    /// said once, not at every save: a dry run must not need the real
    /// daemon's rights.
    dry_run: bool,
    /// The last error writing the state file (a dry run's or the
    /// daemon's), logged once per change.
    state_error: Option<String>,
}

/// What a save writes, made only when one is due.
pub(crate) struct Snapshot {
    /// The state file's contents.
    pub(crate) state: State,
    /// The disks' gauges.
    pub(crate) gauges: Vec<DiskGauges>,
    /// Polls since the start.
    pub(crate) polls: u64,
}

impl Persist {
    /// Nothing written yet; everything due at the first save.
    pub(crate) fn new(dry_run: bool) -> Persist {
        Persist {
            dirty: true,
            last_save: None,
            last_state_save: None,
            urgent: false,
            state_dirty: true,
            textfile_error: None,
            metrics: watch::channel(Arc::default()).0,
            serving: false,
            dry_run,
            state_error: None,
        }
    }

    /// Records a change: `urgent` ones reach the state file at the next
    /// save.
    pub(crate) fn mark(&mut self, dirty: bool, urgent: bool) {
        self.dirty |= dirty;
        self.urgent |= urgent;
    }

    /// Writes the metrics and the state file if due at `now` (or `force`),
    /// from what `snapshot` makes (called only then). Returns whether the
    /// state file was written.
    pub(crate) fn save(
        &mut self,
        now: Nanos,
        force: bool,
        cfg: &Config,
        hooks: &HookRunner,
        snapshot: impl FnOnce() -> Snapshot,
    ) -> bool {
        let dry_run = self.dry_run;
        let state_every = cfg.state_interval.max(cfg.poll);
        let wants_metrics = cfg.metrics.textfile.is_some() || self.serving;
        // A hook that ended changed its counters.
        self.dirty |= hooks.take_changed();
        let metrics_due = wants_metrics
            && self.last_save.is_none_or(|t| {
                let age = now - t;
                // An urgent change (rare: spin-downs, spin-ups, commands)
                // is not held back by the once-a-second limit.
                (self.dirty && (self.urgent || age >= Nanos::from_secs(1)))
                    || age >= METRICS_REFRESH
            });
        self.state_dirty |= self.dirty;
        if !wants_metrics {
            self.dirty = false;
        }
        let state_due = self.state_dirty
            && (self.urgent || self.last_state_save.is_none_or(|t| now - t >= state_every));
        if !force && !metrics_due && !state_due {
            return false;
        }
        let snap = snapshot();
        let exported = if wants_metrics {
            // The disks watched (a controller's gauges) and those the
            // configuration waits for; not the entries kept of disks a
            // reload or restart removed, nor of drives that left.
            let exported = |k: &str| {
                snap.gauges.iter().any(|g| g.key == k)
                    || (cfg.entry_for(k).is_some() && !is_parked_key(k))
            };
            let mut daemon =
                DaemonSnapshot::build(&snap.state, &exported, &snap.gauges, snap.polls, dry_run);
            daemon.hooks = hooks.snapshot(&exported);
            Arc::new(metrics::Exported::of(&daemon))
        } else {
            Arc::default()
        };
        let mut written = false;
        if force || state_due {
            self.last_state_save = Some(now);
            self.state_dirty = false;
            self.urgent = false;
            let path = cfg.state_path(dry_run);
            match snap.state.save(&path) {
                Err(e) if dry_run => said_once(&mut self.state_error, e.to_string(), |e| {
                    warn!(
                        "dry run: state file {}: cannot write: {e}; what the networks learn is lost at a restart (said once until it changes)",
                        path.display()
                    )
                }),
                // Said once per change of error, and when writes work
                // again: an unwritable directory logged an ERROR at
                // every spin-down and spin-up (each written at once),
                // and nothing when it was fixed.
                Err(e) => said_once(&mut self.state_error, e.to_string(), |e| {
                    error!(
                        "state file {}: cannot write: {e}; the wear budget, the counters and what the networks learn are not saved until it can be (said once until it changes)",
                        path.display()
                    )
                }),
                Ok(()) => {
                    if self.state_error.take().is_some() {
                        info!("state file {}: written again", path.display());
                    }
                    written = true;
                }
            }
        }
        // The metrics after the state file: what they show of an urgent
        // change (a spin-down, a reload's removed disk) is then in the
        // state file already, which `lull status` reads beside them.
        if let (Some(tf), Some(jf)) = (&cfg.metrics.textfile, cfg.metrics.snapshot_file()) {
            // The JSON after the text: `lull status` reads the JSON only
            // when it is at least as new as the text, so an older
            // daemon's text is not read through a stale snapshot.
            let wrote = write_atomically(tf, exported.text.as_bytes(), false)
                .and_then(|()| write_atomically(&jf, exported.json.as_bytes(), false));
            // Logged once per change of state, not at every save.
            match wrote {
                Err(e) => said_once(&mut self.textfile_error, e.to_string(), |e| {
                    warn!(
                        "metrics textfile {} (and its snapshot {}): {e} (said once until it changes)",
                        tf.display(),
                        jf.display()
                    )
                }),
                Ok(()) => {
                    if self.textfile_error.take().is_some() {
                        info!("metrics textfile {}: written again", tf.display());
                    }
                }
            }
        }
        self.metrics.send_replace(exported);
        self.dirty = false;
        self.last_save = Some(now);
        written
    }
}

/// Says error `e` with `say` unless it is the one `last` holds (said
/// already), and keeps it there: a failing write is logged once per
/// change, not at every save.
pub(crate) fn said_once(last: &mut Option<String>, e: String, say: impl FnOnce(&str)) {
    if last.as_deref() != Some(e.as_str()) {
        say(&e);
        *last = Some(e);
    }
}

/// The last decision the daemon writes in the state-file entry of a disk
/// that a reload removed from the configuration, with the reload's time
/// (the metrics stop exporting the disk then): `lull status` shows such
/// an entry as not watched since that time.
pub const REMOVED_AT_RELOAD: &str = "removed from the configuration by a reload";

/// The last decision the daemon writes, with its start's time, in the
/// state-file entry of a disk that no `[[disk]]` covers when it starts
/// (removed from the file while the daemon was stopped), unless the entry
/// says so already: not watched since at least then.
pub const NOT_CONFIGURED_AT_START: &str = "not in the configuration at the daemon's start";

/// Whether state-file key `key` is a drive's entry waiting for its drive
/// ([`crate::state::PARKED_PREFIX`]), or one a swap of drives without
/// serial numbers set aside (`KEY~N`): no `[[disk]]` names those, and the
/// daemon does not mark them as removed.
pub fn is_parked_key(key: &str) -> bool {
    key.starts_with(crate::state::PARKED_PREFIX)
        || key
            .rsplit_once('~')
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config of one disk with `state_file` and `extra` (TOML keys),
    /// read as from `dir`, and a hook runner.
    fn daemon(
        dir: &std::path::Path,
        state_file: &std::path::Path,
        extra: &str,
    ) -> (Config, HookRunner) {
        let text = format!(
            "state_file = {state_file:?}\n{extra}[[disk]]\ndevice = \"sdz\"\nnetwork = \"timer(10s)\"\n"
        );
        let cfg = Config::parse(&dir.join("lull.toml"), &text, &crate::default_registry()).unwrap();
        (cfg, HookRunner::new(Nanos::from_secs(10), false))
    }

    /// The textfile follows changes at most once a second, and is
    /// rewritten at least once a minute with none (a quiet disk's
    /// `lull_polls_total` moves on).
    #[test]
    fn quiet_metrics_are_refreshed_once_a_minute() {
        let dir = tempfile::tempdir().unwrap();
        let tf = dir.path().join("lull.prom");
        let (cfg, hooks) = daemon(
            dir.path(),
            &dir.path().join("state.json"),
            &format!("[metrics]\ntextfile = {tf:?}\n"),
        );
        let mut p = Persist::new(false);
        // Saves at `at`, with `polls` to tell the renders apart; the
        // polls the textfile holds then.
        let save_at = |p: &mut Persist, at: Nanos, polls: u64| {
            p.save(at, false, &cfg, &hooks, || Snapshot {
                state: State::default(),
                gauges: Vec::new(),
                polls,
            });
            std::fs::read_to_string(&tf)
                .unwrap()
                .lines()
                .find_map(|l| l.strip_prefix("lull_polls_total ").map(str::to_string))
                .unwrap()
        };
        let save = |p: &mut Persist, t: u64| save_at(p, Nanos::from_secs(t), t);
        assert_eq!(save(&mut p, 1), "1");
        // Nothing changed: not rendered again until a minute has passed.
        assert_eq!(save(&mut p, 30), "1");
        assert_eq!(save(&mut p, 60), "1");
        assert_eq!(save(&mut p, 61), "61");
        // A change: at the next save a second on.
        p.mark(true, false);
        assert_eq!(save(&mut p, 62), "62");
        assert_eq!(save(&mut p, 63), "62");
        // Within the second, a change waits; an urgent one (a spin-down
        // done or failed, as its outcome comes in between two polls) does
        // not.
        let save_ms = |p: &mut Persist, t: u64| save_at(p, Nanos::from_millis(t), t);
        p.mark(true, false);
        assert_eq!(save_ms(&mut p, 64_000), "64000");
        p.mark(true, false);
        assert_eq!(save_ms(&mut p, 64_500), "64000");
        p.mark(true, true);
        assert_eq!(save_ms(&mut p, 64_600), "64600");
    }

    /// The metrics export the disks the configuration names, not the
    /// state-file entries kept of a disk a reload removed (a trial's went
    /// on reading `lull_disk_present 1`) or of a drive that left; the
    /// state file keeps them all.
    #[test]
    fn metrics_leave_out_the_disks_the_configuration_no_longer_names() {
        let dir = tempfile::tempdir().unwrap();
        let tf = dir.path().join("lull.prom");
        let sf = dir.path().join("state.json");
        let (cfg, hooks) = daemon(dir.path(), &sf, &format!("[metrics]\ntextfile = {tf:?}\n"));
        let mut state = State::default();
        for key in ["sdz", "loop1", "serial:X"] {
            state.disk(key).present = true;
        }
        let mut p = Persist::new(false);
        p.save(Nanos::from_secs(1), true, &cfg, &hooks, || Snapshot {
            state,
            gauges: Vec::new(),
            polls: 1,
        });
        let text = std::fs::read_to_string(&tf).unwrap();
        assert!(
            text.contains("lull_disk_present{disk=\"sdz\"} 1\n"),
            "{text}"
        );
        assert!(
            !text.contains("loop1") && !text.contains("serial:X"),
            "{text}"
        );
        let kept = State::load(&sf).unwrap();
        assert_eq!(kept.disks.len(), 3);
        // The state file first, then the metrics: they never show a
        // change the state file beside them does not hold yet.
        let at = |p: &std::path::Path| std::fs::metadata(p).unwrap().modified().unwrap();
        assert!(at(&sf) <= at(&tf));
        // The snapshot beside the textfile holds the same disks.
        let json = std::fs::read(cfg.metrics.snapshot_file().unwrap()).unwrap();
        let snap: DaemonSnapshot = serde_json::from_slice(&json).unwrap();
        let keys: Vec<&str> = snap.disks.iter().map(|d| d.disk.as_str()).collect();
        assert_eq!(keys, ["sdz"]);
        assert_eq!(snap.disks[0].present, Some(true));
    }

    /// A state file that cannot be written is said once while the error
    /// lasts, and its end is said too (kept here as the last error: the
    /// log lines follow it).
    #[test]
    fn a_failing_state_file_is_said_once_and_its_recovery_too() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("gone");
        let (cfg, hooks) = daemon(dir.path(), &sub.join("state.json"), "");
        let mut p = Persist::new(false);
        let save = |p: &mut Persist, t: u64| {
            p.mark(true, true);
            p.save(Nanos::from_secs(t), false, &cfg, &hooks, || Snapshot {
                state: State::default(),
                gauges: Vec::new(),
                polls: t,
            })
        };
        assert!(!save(&mut p, 1));
        let first = p.state_error.clone().expect("the error is kept");
        assert!(!save(&mut p, 2));
        assert_eq!(p.state_error.as_ref(), Some(&first));
        std::fs::create_dir(&sub).unwrap();
        assert!(save(&mut p, 3));
        assert_eq!(p.state_error, None);
        assert!(sub.join("state.json").exists());
    }
}
