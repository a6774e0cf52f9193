//! Persistence: when the state file and the metrics are written.
//!
//! The state file is fsynced, which costs more than the rest of a poll, on
//! the system disk: counters that changed are written every
//! `state_interval` (default 1 min, never more often than polls), and at
//! once when something urgent changed (a command's pid, which a restart
//! after SIGKILL needs; a spin-down, spin-up or wake, which `lull status`
//! shows), and at stop. A crash loses at most that much of the counters.
//! The metrics (no fsync) follow every change, at most once a second, and
//! are rendered only for someone: a textfile or an endpoint.

use std::sync::Arc;

use lull_core::time::Nanos;
use tokio::sync::watch;
use tracing::{error, info, warn};

use crate::config::Config;
use crate::hooks::HookRunner;
use crate::metrics::{self, DiskGauges};
use crate::state::{State, write_atomically};

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
    /// The rendered metrics, for the endpoint.
    pub(crate) metrics: watch::Sender<Arc<str>>,
    /// A metrics endpoint listens.
    pub(crate) serving: bool,
    /// A dry run writes its own state file
    /// ([`Config::dry_run_state_file`]), and a failure to write it is
    /// said once, not at every save: a dry run must not need the real
    /// daemon's rights.
    dry_run: bool,
    /// The last error writing a dry run's state file.
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
            metrics: watch::channel(Arc::<str>::from("")).0,
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
            && self.dirty
            && self
                .last_save
                .is_none_or(|t| now - t >= Nanos::from_secs(1));
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
        let text: Arc<str> = if wants_metrics {
            let mut text = metrics::render(&snap.state, &snap.gauges, snap.polls, dry_run);
            metrics::render_hooks(&hooks.counts(), &mut text);
            Arc::from(text)
        } else {
            Arc::from("")
        };
        if let Some(tf) = &cfg.metrics.textfile {
            // Logged once per change of state, not at every save.
            match write_atomically(tf, text.as_bytes(), false) {
                Err(e) => said_once(&mut self.textfile_error, e.to_string(), |e| {
                    warn!(
                        "metrics textfile {}: {e} (said once until it changes)",
                        tf.display()
                    )
                }),
                Ok(()) => {
                    if self.textfile_error.take().is_some() {
                        info!("metrics textfile {}: written again", tf.display());
                    }
                }
            }
        }
        self.metrics.send_replace(text);
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
                Err(e) => error!("state file {}: cannot write: {e}", path.display()),
                Ok(()) => {
                    self.state_error = None;
                    written = true;
                }
            }
        }
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
