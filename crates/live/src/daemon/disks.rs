//! The shell's disk table: a watched disk's controller with its actors,
//! carrying out what the controller asks, and the disks resolved from the
//! configuration (kernel names, by-id and by-path links, globs) as they
//! appear, move and go.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use lull_core::time::Nanos;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

use super::Daemon;
use crate::actor::Actor;
use crate::config::{DiskConfig, TaskConfig};
use crate::controller::{DiskController, HookEnv, Order, Output};
use crate::devices::{Resolved, resolve};
use crate::hooks::{HookEvent, HookRunner};
use crate::source::{Family, Sample};

/// How recently a directory of by-path entries must have changed for
/// [`Daemon::path_signature`] to resolve them in full rather than trust the
/// directory's modification time.
const RECENT_DIR_CHANGE: Duration = Duration::from_secs(2);

/// A watched disk: its controller and the shell's side of it (the
/// actors' channels and tasks).
pub(super) struct Disk {
    pub(super) ctl: DiskController,
    pub(super) orders: mpsc::UnboundedSender<Order>,
    pub(super) actor: JoinHandle<()>,
    /// `task = "jobs"`: one actor per job.
    pub(super) jobs: Vec<(mpsc::UnboundedSender<Order>, JoinHandle<()>)>,
}

impl Disk {
    /// Carries out what the controller asked for; returns the state
    /// changes to record (changed, urgent).
    pub(super) fn carry_out(&mut self, hooks: &HookRunner, out: &mut Vec<Output>) -> (bool, bool) {
        for o in out.drain(..) {
            match o {
                Output::Order { job: None, order } => {
                    let _ = self.orders.send(order);
                }
                Output::Order {
                    job: Some(j),
                    order,
                } => {
                    if let Some((tx, _)) = self.jobs.get(j) {
                        let _ = tx.send(order);
                    }
                }
                Output::Hook { event, env } => self.fire(hooks, event, env),
                Output::Decided(_) => {}
            }
        }
        self.ctl.take_changes()
    }

    /// Runs the disk's hook for `event`, if it has one.
    fn fire(&self, hooks: &HookRunner, event: HookEvent, env: HookEnv) {
        if let Some(argv) = self.ctl.config().hooks.get(event) {
            hooks.fire(self.ctl.key(), event, argv, env);
        }
    }
}

impl Daemon {
    /// Stops the disks' actors (and their commands, all at once), books
    /// what they report, and keeps their state entries.
    pub(super) async fn retire_all(&mut self, disks: Vec<Disk>) {
        let mut actors = Vec::new();
        for mut d in disks {
            let _ = d.orders.send(Order::Shutdown);
            for (tx, _) in &d.jobs {
                let _ = tx.send(Order::Shutdown);
            }
            let jobs = std::mem::take(&mut d.jobs).into_iter().map(|a| a.1);
            let key = d.ctl.key().to_string();
            let own = std::mem::replace(&mut d.actor, tokio::spawn(async {}));
            actors.extend(std::iter::once(own).chain(jobs).map(|a| (key.clone(), a)));
            self.retiring.push(d);
        }
        for (key, actor) in actors {
            if tokio::time::timeout(Duration::from_secs(15), actor)
                .await
                .is_err()
            {
                warn!("disk {key}: an actor did not stop in 15 s");
            }
        }
        while let Ok(r) = self.reports_rx.try_recv() {
            self.on_report(r);
        }
        for d in std::mem::take(&mut self.retiring) {
            let key = d.ctl.key().to_string();
            self.state.disks.insert(key, d.ctl.into_state());
        }
    }

    fn new_disk(&mut self, cfg: &DiskConfig, r: &Resolved, family: Family) -> Option<Disk> {
        let st = self.state.disks.remove(&r.key).unwrap_or_default();
        self.generation += 1;
        let now = self.now();
        let ctl = match DiskController::new(
            &self.opts.registry,
            cfg,
            &r.key,
            &r.kernel,
            family,
            self.generation,
            st.clone(),
            self.settings(),
            now,
        ) {
            Ok(c) => c,
            Err(e) => {
                error!("disk {}: network {}: {e}", r.key, cfg.network);
                self.state.disks.insert(r.key.clone(), st);
                return None;
            }
        };
        let actor = |job: Option<&crate::config::JobConfig>| {
            let (tx, rx) = mpsc::unbounded_channel();
            let transport = match (job, &cfg.task) {
                (None, TaskConfig::Standby { backend, .. }) => {
                    Some(crate::transport::Chooser::new(
                        &r.key,
                        *backend,
                        PathBuf::from("/dev").join(&r.kernel),
                        st.transport.clone(),
                    ))
                }
                _ => None,
            };
            let task = match job {
                Some(job) => TaskConfig::Command {
                    argv: job.argv.clone(),
                    interval: Nanos::ZERO,
                },
                None => cfg.task.clone(),
            };
            let actor = Actor {
                key: r.key.clone(),
                generation: self.generation,
                job: job.map(|j| j.name.clone()),
                task,
                dry_run: self.opts.dry_run,
                reports: self.reports_tx.clone(),
                transport,
            };
            (tx, tokio::spawn(actor.run(rx)))
        };
        let (orders, handle) = actor(None);
        let jobs = match &cfg.task {
            TaskConfig::Jobs { jobs, .. } => jobs.iter().map(|j| actor(Some(j))).collect(),
            _ => Vec::new(),
        };
        Some(Disk {
            ctl,
            orders,
            actor: handle,
            jobs,
        })
    }

    pub(super) fn resolve_all(&mut self, sample: &Sample) {
        self.release_code_soon();
        let cfgs = self.cfg.disks.clone();
        for c in &cfgs {
            let found = resolve(&c.device, sample.names());
            if found.is_empty()
                && !self.disks.iter().any(|d| d.ctl.config() == c)
                && self.missing.insert(c.device.clone())
            {
                warn!(
                    "disk {} (config line {}): not present; waiting for it to appear",
                    c.device, c.line
                );
                let st = self.state.disk(&c.device);
                st.present = false;
                self.persist.mark(true, false);
            }
            for r in found {
                let family = Family::discover(&r.kernel, &self.cfg.sysfs, sample.names());
                if let Some(d) = self
                    .disks
                    .iter_mut()
                    .find(|d| d.ctl.key() == r.key && d.ctl.config() == c)
                {
                    if d.ctl.kernel() != r.kernel {
                        let mut out = std::mem::take(&mut self.out);
                        d.ctl.replugged(&r.kernel, family, &mut out);
                        let (dirty, urgent) = d.carry_out(&self.hooks, &mut out);
                        self.persist.mark(dirty, urgent);
                        self.out = out;
                    } else {
                        d.ctl.set_family(family);
                    }
                    continue;
                }
                if let Some(other) = self.disks.iter().find(|d| d.ctl.kernel() == r.kernel) {
                    warn!(
                        "disk {} (config line {}) is {}, which {} already covers; ignoring it",
                        r.key,
                        c.line,
                        r.kernel,
                        other.ctl.key()
                    );
                    continue;
                }
                self.missing.remove(&c.device);
                if let Some(d) = self.new_disk(c, &r, family) {
                    info!(
                        "disk {} ({}): task {}, network {}, policy {}, break-even {}",
                        d.ctl.key(),
                        d.ctl.kernel(),
                        c.task.name(),
                        c.network,
                        c.policy,
                        c.breakeven
                    );
                    self.disks.push(d);
                }
            }
        }
    }

    /// Where the entries written as `/dev/…` paths or path globs resolve
    /// now: compared at every poll, so a by-id link udev creates or moves
    /// after the kernel device appeared is followed at the next poll.
    /// Kernel-name entries depend only on the names, which the caller
    /// hashes.
    ///
    /// A link can only appear, move or go with a change of its directory,
    /// so the signature is the directories' identity and modification
    /// time (one `stat` per directory, where resolving costs a `readlink`
    /// per path component and disk). While a directory changed within the
    /// last [`RECENT_DIR_CHANGE`] the entries are resolved in full instead:
    /// file times are kept at the kernel's clock tick, and a second change
    /// within the tick of the first would leave the time as it was.
    pub(super) fn path_signature(&self, sample: &Sample) -> u64 {
        use std::os::unix::fs::MetadataExt;
        let paths = || self.cfg.disks.iter().filter(|c| c.device.starts_with('/'));
        if paths().next().is_none() {
            return 1;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let mut settled = true;
        let mut dirs: Vec<&Path> = paths()
            .filter_map(|c| Path::new(&c.device).parent())
            .collect();
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            // A glob in the directory part: no one directory to watch.
            settled &= !crate::devices::is_glob(&dir.to_string_lossy());
            match std::fs::metadata(dir) {
                Ok(m) => {
                    settled &= now - m.mtime() > RECENT_DIR_CHANGE.as_secs() as i64;
                    (dir, m.dev(), m.ino(), m.mtime(), m.mtime_nsec()).hash(&mut h);
                }
                Err(_) => dir.hash(&mut h),
            }
        }
        if !settled {
            for c in paths() {
                for r in resolve(&c.device, sample.names()) {
                    r.key.hash(&mut h);
                    r.kernel.hash(&mut h);
                }
            }
        }
        h.finish() | 1
    }
}
