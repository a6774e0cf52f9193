//! The shell's disk table: a watched disk's controller with its actors,
//! carrying out what the controller asks, and the disks resolved from the
//! configuration (kernel names, by-id and by-path links, globs) as they
//! appear, move and go.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use lull_core::time::Nanos;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, error, info, warn};

use super::Daemon;
use crate::actor::Actor;
use crate::config::{DiskConfig, TaskConfig};
use crate::controller::{DiskController, HookEnv, NewDisk, Now, Order, Output};
use crate::devices::{Resolved, partition_message, partition_of, resolve};
use crate::hooks::{HookEvent, HookRunner};
use crate::identify::Identity;
use crate::instance::{InstanceLock, LockError, disk_lock_dir};
use crate::source::{Family, Sample};
use crate::state::DriveRecord;

/// How many polls until a disk another daemon claimed is tried again (a
/// minute at the default poll), and the longest wait.
const CLAIM_RETRY_POLLS: u64 = 60;
const CLAIM_RETRY_MAX: Nanos = Nanos::from_secs(600);

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
    /// Its activity log (`None`: `activity_log = false`).
    pub(super) log: Option<crate::activity::Writer>,
    /// Whether an order already found its actor gone (said once).
    pub(super) lost_orders: bool,
}

/// Sends `order` to an actor (`None`: a job that has none); returns
/// whether this is the first order found undeliverable (`lost` then
/// records it, so the shell says it once). An actor ends only on shutdown
/// or a panic: an order it can no longer take is carried out by nobody.
fn deliver(tx: Option<&mpsc::UnboundedSender<Order>>, order: Order, lost: &mut bool) -> bool {
    let sent = tx.is_some_and(|tx| tx.send(order).is_ok());
    let first = !sent && !*lost;
    *lost |= !sent;
    first
}

/// A signal that the actors in `after` have all ended (`None`: there are
/// none to wait for).
fn when_ended(after: Vec<JoinHandle<()>>) -> Option<watch::Receiver<bool>> {
    if after.is_empty() {
        return None;
    }
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        for h in after {
            let _ = h.await;
        }
        let _ = tx.send(true);
    });
    Some(rx)
}

/// Appends the activity records among `out` to `log` (not flushed).
fn push_records(log: &mut crate::activity::Writer, out: &[Output]) {
    for o in out {
        if let Output::Activity(rec) = o {
            log.push(rec);
        }
    }
}

/// Runs `work` once `ready` ([`when_ended`]) says so; orders sent before
/// then wait in the actor's channel, in order.
async fn after_ready(ready: Option<watch::Receiver<bool>>, work: impl Future<Output = ()>) {
    if let Some(mut r) = ready {
        // A sender gone without saying so releases the wait too.
        let _ = r.wait_for(|&done| done).await;
    }
    work.await;
}

impl Disk {
    /// Tells its actors (its own and its jobs') to shut down; returns
    /// their tasks, to wait on.
    fn shut_down(&mut self) -> Vec<JoinHandle<()>> {
        let _ = self.orders.send(Order::Shutdown);
        for (tx, _) in &self.jobs {
            let _ = tx.send(Order::Shutdown);
        }
        let own = std::mem::replace(&mut self.actor, tokio::spawn(async {}));
        let jobs = std::mem::take(&mut self.jobs).into_iter().map(|(_, h)| h);
        std::iter::once(own).chain(jobs).collect()
    }

    /// Carries out what the controller asked for; returns the state
    /// changes to record (changed, urgent).
    pub(super) fn carry_out(&mut self, hooks: &HookRunner, out: &mut Vec<Output>) -> (bool, bool) {
        for o in out.drain(..) {
            match o {
                Output::Order { job, order } => {
                    let tx = match job {
                        None => Some(&self.orders),
                        Some(j) => self.jobs.get(j).map(|(tx, _)| tx),
                    };
                    if deliver(tx, order, &mut self.lost_orders) {
                        error!(
                            disk = self.ctl.kernel(),
                            job = ?job,
                            "an order found no actor to carry it out (its task ended); \
                             this disk's orders are lost until the daemon restarts"
                        );
                    }
                }
                Output::Hook { event, env } => self.fire(hooks, event, env),
                Output::Decided(_) => {}
                Output::Activity(rec) => {
                    if let Some(log) = self.log.as_mut() {
                        log.push(&rec);
                    }
                }
            }
        }
        if let Some(log) = self.log.as_mut() {
            log.flush();
        }
        self.ctl.take_changes()
    }

    /// The disk's gauges at `now` for the metrics: the controller's, but
    /// for an absent disk, in the power state "absent" since it vanished
    /// (a trial's status read "absent for at least 1m5s", counted from
    /// the last decision, 15 s after the vanish).
    pub(super) fn gauges(&self, now: Nanos) -> crate::metrics::DiskGauges {
        let mut g = self.ctl.gauges(now);
        if let Some(t) = self.ctl.state().vanished_unix {
            g.in_standby = false;
            g.power_since_unix = Some(t);
        }
        g
    }

    /// The state file was written: the log says which learned state it
    /// holds ([`crate::controller::DiskController::state_written`]).
    pub(super) fn state_written(&mut self) {
        let Some(log) = self.log.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        self.ctl.state_written(&mut out);
        if !out.is_empty() {
            push_records(log, &out);
            log.flush();
        }
    }

    /// The daemon stops watching the disk at `now`: the log says so.
    pub(super) fn end(&mut self, now: Now) {
        let mut out = Vec::new();
        self.ctl.finish(now, &mut out);
        if let Some(log) = self.log.as_mut() {
            push_records(log, &out);
            log.flush();
        }
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
        let now = self.stamp(self.now());
        for mut d in disks {
            d.end(now);
            let key = d.ctl.key().to_string();
            actors.extend(d.shut_down().into_iter().map(|a| (key.clone(), a)));
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

    /// What the drive at `r` is: asked through its device node, or at
    /// the daemon's first poll taken from the state file when it was
    /// asked on the same device (numbers and kernel name) before, by a
    /// lull that asked what this one asks, so a restart sends the drive
    /// nothing. `None` while the drive has not answered
    /// ([`super::identifying`]): the poll goes on without it.
    fn identity(&mut self, r: &Resolved) -> Option<Identity> {
        if let Some(i) = self.fresh_identity.take() {
            return Some(i);
        }
        let dev = PathBuf::from("/dev").join(&r.kernel);
        let (numbers, kernel) = crate::transport::identity(&dev);
        if self.polls == 0 {
            let remembered = self
                .state
                .disks
                .get(&r.key)
                .and_then(|d| d.identity.as_ref())
                .filter(|i| {
                    i.device == numbers
                        && i.kernel == kernel
                        && !numbers.is_empty()
                        && i.layout >= crate::identify::IDENTITY_LAYOUT
                });
            if let Some(i) = remembered {
                // Remembered before lull read sysfs for a drive without a
                // serial number: its name is read now, without asking
                // the drive.
                let mut i = i.clone();
                crate::identify::NameFromSysfs::name_from_sysfs(&mut i, &self.cfg.sysfs, &r.kernel);
                return Some(i);
            }
        }
        self.identifying
            .identity(&r.key, &r.kernel, &self.cfg.sysfs)
    }

    /// [`Identity::drop_shared_serial`] among the disks watched now but
    /// disk `except`, with a warning when it forgets.
    fn unique_serial(&self, identity: &mut Identity, r: &Resolved, except: Option<usize>) {
        let serial = identity.serial.clone();
        let watched = self
            .disks
            .iter()
            .enumerate()
            .filter(|(j, _)| Some(*j) != except)
            .filter_map(|(_, d)| Some((d.ctl.kernel(), d.ctl.state().identity.as_ref()?)));
        if let Some(twin) = identity.drop_shared_serial(&r.kernel, watched) {
            warn!(
                "disk {} ({}): {}",
                r.key,
                r.kernel,
                crate::identify::shared_serial_text(twin, serial.as_deref().unwrap_or_default())
            );
        }
    }

    /// `cfg` resolved for the drive `identity` says it is (see
    /// [`DiskConfig::for_drive`]), logged; the configuration as parsed
    /// when the network or a job does not fit that drive's B.
    fn for_drive(&self, cfg: &DiskConfig, r: &Resolved, identity: &Identity) -> DiskConfig {
        let facts = identity.facts();
        if let (Some(preset), Some(false)) = (&cfg.preset, facts.spins()) {
            warn!(
                "disk {}: preset {preset} is obeyed, but the drive reports that it does not rotate ({})",
                r.key,
                facts.describe()
            );
        }
        let sectors = crate::identify::sysfs_sectors(&self.cfg.sysfs, &r.kernel);
        cfg.for_identified(&facts, sectors, &self.opts.registry)
            .unwrap_or_else(|e| {
                error!(
                    "disk {}: the configuration does not fit the identified drive ({e}); using {}",
                    r.key,
                    cfg.profile.preset()
                );
                cfg.clone()
            })
    }

    /// A controller and actors for the drive found at `r`, which says it
    /// is `identity`; its actors take
    /// orders only once those in `after` (the actors of the drive it
    /// replaces at the same name) have ended, so an old command still
    /// stopping and the new drive's preparation never overlap.
    fn new_disk(
        &mut self,
        entry: &DiskConfig,
        r: &Resolved,
        family: Family,
        after: Vec<JoinHandle<()>>,
        mut identity: Identity,
    ) -> Option<Disk> {
        self.unique_serial(&mut identity, r, None);
        let cfg = &self.for_drive(entry, r, &identity);
        let (mut st, note) = self.state.take_for(&r.key, Some(&identity));
        if let Some(n) = note {
            info!("disk {}: {n}", r.key);
        }
        for n in self.state.forget_parked(crate::timer::unix_now()) {
            info!("{n}");
        }
        st.drive = Some(DriveRecord {
            preset: cfg.profile.preset().to_string(),
            preset_source: cfg.profile.source().to_string(),
            why: cfg.profile.why().to_string(),
            breakeven_s: cfg.breakeven().as_secs_f64(),
            left_alone: cfg.left_alone.clone(),
        });
        if let Some(why) = &cfg.left_alone {
            warn!("disk {} ({}): left alone: {why}", r.key, r.kernel);
        } else if let Some(own) = cfg.own_standby_warning(&identity) {
            warn!("disk {} ({}): {own}", r.key, r.kernel);
        }
        if let Some(w) = self.cfg.poll_warning(cfg) {
            warn!("disk {} ({}): {w}", r.key, r.kernel);
        }
        st.identity = Some(identity);
        self.persist.mark(true, false);
        self.generation += 1;
        let now = self.now();
        let mut ctl = match DiskController::create(NewDisk {
            registry: &self.opts.registry,
            cfg,
            key: &r.key,
            kernel: &r.kernel,
            family,
            generation: self.generation,
            state: st.clone(),
            settings: self.settings(),
            now,
        }) {
            Ok(c) => c,
            Err(e) => {
                error!("disk {}: network {}: {e}", r.key, cfg.network);
                self.state.disks.insert(r.key.clone(), st);
                return None;
            }
        };
        // Started by a reload in the place of a controller that left the
        // disk idle: it continues that one's run, within two polls.
        if let Some((tracker, kernel, at, began)) = self.handover.remove(&r.key)
            && kernel == r.kernel
            && now.saturating_sub(at) <= self.cfg.poll + self.cfg.poll
        {
            ctl.continue_from(tracker, now, began);
        }
        let activity = &self.cfg.activity;
        if activity.enabled && ctl.has_shadow() {
            // Streamed: a segment at a time, never the whole log in memory.
            let drive = ctl.drive_id();
            // The wear budget of the last run in this mode (a dry run's
            // bucket is its own), and that run's time zero.
            let settings = self.settings();
            let mut last_run = None;
            let n = crate::activity::read_back(activity, &r.key, drive, |rec| {
                if let lull_activity::Record::Session(s) = &rec
                    && s.dry_run == settings.dry_run
                {
                    last_run = Some((s.clock, s.max_spindowns_per_day));
                }
                ctl.restore_record(&rec)
            });
            ctl.restore(std::iter::empty());
            // A budget changed while the daemon was stopped: said as a
            // reload says it (a reload's run shares this daemon's time
            // zero, and its own line said it already).
            if let (
                Some((clock, Some(from))),
                TaskConfig::Standby {
                    max_spindowns_per_day: to,
                    ..
                },
            ) = (last_run, &cfg.task)
            {
                let line = super::admin::budget_line(
                    from,
                    *to,
                    ctl.state().wear.as_ref(),
                    crate::timer::unix_now(),
                );
                if let Some(line) = line.filter(|_| clock != settings.clock) {
                    info!("disk {}: since the daemon's last run, {line}", r.key);
                }
            }
            if n > 0 {
                debug!(
                    "disk {}: shadow evaluation resumed from {n} activity records",
                    r.key
                );
            }
        }
        // A dry run records too: what lull would have done, beside what
        // hd-idle did, is the question a dry run asks.
        let log = activity
            .enabled
            .then(|| crate::activity::Writer::new(activity, &r.key));
        let ready = when_ended(after);
        let actor = |job: Option<&crate::config::JobConfig>| {
            let (tx, rx) = mpsc::unbounded_channel();
            let transport = match (job, &cfg.task) {
                (None, TaskConfig::Standby { backend, .. }) => {
                    Some(crate::transport::Chooser::new(
                        &r.key,
                        *backend,
                        PathBuf::from("/dev").join(&r.kernel),
                        st.transport.clone(),
                        crate::drive::hdparm_program(self.cfg.hdparm.as_deref()),
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
            (tx, tokio::spawn(after_ready(ready.clone(), actor.run(rx))))
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
            log,
            lost_orders: false,
        })
    }

    /// Whether disk `i`, now found at `r`, is another drive than the one
    /// its controller was set up for: its device node is not the one it
    /// was identified on (it vanished and something appeared under the
    /// name, or a link moved), and asking it gives another serial number.
    /// The new identity is kept for [`Daemon::swap_drive`].
    fn another_drive(&mut self, i: usize, r: &Resolved) -> bool {
        let known = self.disks[i]
            .ctl
            .state()
            .identity
            .clone()
            .unwrap_or_default();
        let (numbers, kernel) = crate::transport::identity(&PathBuf::from("/dev").join(&r.kernel));
        if numbers.is_empty() || (known.device == numbers && known.kernel == kernel) {
            return false;
        }
        let mut now = crate::identify::identify_disk(&r.kernel, &self.cfg.sysfs);
        self.unique_serial(&mut now, r, Some(i));
        let other = now.serial.is_some() && now.serial != known.serial;
        self.fresh_identity = other.then_some(now);
        other
    }

    /// Disk `i` is now another drive: its controller's state goes back to
    /// the state file (under the old drive's serial number, where it
    /// waits for that drive), and a controller for the new drive starts,
    /// with that drive's own state if it was seen before.
    fn swap_drive(&mut self, i: usize, entry: &DiskConfig, r: &Resolved, family: Family) {
        let mut old = self.disks.remove(i);
        let key = old.ctl.key().to_string();
        let st = old.ctl.state().clone();
        let serial = st.identity.as_ref().and_then(|i| i.serial.clone());
        info!(
            "disk {key}: {} is another drive now (serial {}, was {}): each keeps its own state",
            r.kernel,
            self.fresh_identity
                .as_ref()
                .and_then(|i| i.serial.as_deref())
                .unwrap_or("?"),
            serial.as_deref().unwrap_or("unknown")
        );
        let aside = serial.map_or_else(
            || format!("{key}~{}", self.generation),
            |s| format!("serial:{s}"),
        );
        self.state.disks.insert(aside, st);
        // The old actors stop their commands (up to 10 s each); the new
        // drive's wait for them, without holding up the loop.
        let after = old.shut_down();
        // The new drive's identity, asked by `another_drive`.
        if let Some(identity) = self.identity(r)
            && let Some(d) = self.new_disk(entry, r, family, after, identity)
        {
            self.disks.push(d);
        }
    }

    pub(super) fn resolve_all(&mut self, sample: &Sample) {
        self.release_code_soon();
        let cfgs = self.cfg.disks.clone();
        // Where the path entries lead now (key, kernel name).
        let mut leads: Vec<(String, String)> = Vec::new();
        for c in &cfgs {
            let found = resolve(&c.device, sample.names());
            if c.device.starts_with('/') {
                leads.extend(found.iter().map(|r| (r.key.clone(), r.kernel.clone())));
            }
            if found.is_empty()
                && !self.disks.iter().any(|d| d.ctl.config().is_entry(c))
                && self.missing.insert(c.device.clone())
            {
                let hint = crate::preflight::absent_hint(
                    &c.device,
                    &crate::preflight::whole_disks(sample),
                )
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
                warn!(
                    "disk {} (config line {}): not present; waiting for it to appear{hint}",
                    c.device, c.line
                );
                let st = self.state.disk(&c.device);
                st.present = false;
                self.persist.mark(true, false);
            }
            for r in found {
                if let Some(disk) = partition_of(&r.kernel, sample.names()) {
                    // A reload or start refuses it; this is an entry whose
                    // path came to name a partition while the daemon ran.
                    if self.refused.insert((c.device.clone(), r.kernel.clone())) {
                        error!(
                            "disk {} (config line {}): {}; leaving it alone",
                            c.device,
                            c.line,
                            partition_message(&c.device, &r.kernel, &disk)
                        );
                    }
                    continue;
                }
                let family = Family::discover(&r.kernel, &self.cfg.sysfs, sample.names());
                if let Some(i) = self
                    .disks
                    .iter()
                    .position(|d| d.ctl.key() == r.key && d.ctl.config().is_entry(c))
                {
                    if self.another_drive(i, &r) {
                        self.swap_drive(i, c, &r, family);
                        continue;
                    }
                    let d = &mut self.disks[i];
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
                if !self.claim(c, &r, sample) {
                    continue;
                }
                self.missing.remove(&c.device);
                // A drive that has not answered yet is taken up at a
                // later poll; its claim is kept meanwhile.
                let Some(identity) = self.identity(&r) else {
                    continue;
                };
                if let Some(d) = self.new_disk(c, &r, family, Vec::new(), identity) {
                    let dc = d.ctl.config();
                    // A B from a preset whose figures are not verified
                    // says so, by the test `--check` and status use.
                    let caveat = lull_tasks::PowerModel::caveat_for(
                        dc.profile.preset(),
                        dc.breakeven().as_secs_f64(),
                    )
                    .map(|why| format!(" (unverified: {why})"))
                    .unwrap_or_default();
                    info!(
                        "disk {} ({}): task {}, network {}, policy {}, drive {} ({}: {}), break-even {}{caveat}",
                        d.ctl.key(),
                        d.ctl.kernel(),
                        dc.task.name(),
                        dc.network,
                        dc.policy,
                        dc.profile.preset(),
                        dc.profile.source(),
                        dc.profile.why(),
                        dc.breakeven().approx()
                    );
                    self.disks.push(d);
                }
            }
        }
        for d in &mut self.disks {
            if d.ctl.config().device.starts_with('/') {
                let leads_to_it = leads
                    .iter()
                    .any(|(k, n)| k == d.ctl.key() && n == d.ctl.kernel());
                if d.ctl.detach(!leads_to_it) {
                    debug!(
                        "disk {}: its path no longer leads to {}; absent until it does",
                        d.ctl.key(),
                        d.ctl.kernel()
                    );
                }
            }
        }
        // The answers of drives still being asked are taken at the next
        // poll; the questions about disks no entry names are dropped.
        let cfg = &self.cfg;
        self.identifying.retain(|k| cfg.entry_for(k).is_some());
        if self.identifying.waiting() {
            self.resolve_now = true;
        }
        self.keep_claims(sample);
    }

    /// Claims the disk `r` resolves to for this daemon
    /// ([`crate::instance::disk_lock_dir`]) before it is watched; `false`
    /// when another daemon holds it (logged once): the disk is left alone.
    /// A dry run claims nothing; a daemon that may not make the lock
    /// directory acts without claims, and says so once.
    fn claim(&mut self, c: &DiskConfig, r: &Resolved, sample: &Sample) -> bool {
        if self.opts.dry_run {
            return true;
        }
        let Some(dev) = sample.dev(&r.kernel) else {
            return true;
        };
        if self.claims.contains_key(&dev) {
            return true;
        }
        let dir = disk_lock_dir(&self.cfg.diskstats);
        match InstanceLock::acquire_disk(&dir, dev) {
            Ok(l) => {
                self.claims.insert(dev, l);
                true
            }
            Err(LockError::Held { pid, path }) => {
                // Tried again soon: the other daemon may stop.
                let wait = Nanos(self.cfg.poll.0.saturating_mul(CLAIM_RETRY_POLLS));
                let retry = self.now() + wait.min(CLAIM_RETRY_MAX);
                self.retry_claims_at.get_or_insert(retry);
                if self.refused.insert((c.device.clone(), r.kernel.clone())) {
                    error!(
                        "disk {} (config line {}): another lulld{} acts on {} (it holds {}); leaving it alone, and trying again every 60 polls: two daemons would both spin it down and each count the other's doings as its workload",
                        c.device,
                        c.line,
                        crate::instance::holder_text(pid),
                        r.kernel,
                        path.display()
                    );
                }
                false
            }
            Err(e @ LockError::Io { .. }) => {
                if !self.claims_off {
                    self.claims_off = true;
                    warn!(
                        "{e}; acting on the disks without claiming them, so a second daemon with another state file would not be kept off them"
                    );
                }
                true
            }
        }
    }

    /// Drops the claims of disks this daemon no longer watches (gone,
    /// retired), so another daemon may take them; claims a disk that
    /// came back under other device numbers (a replug), best effort.
    fn keep_claims(&mut self, sample: &Sample) {
        if self.opts.dry_run {
            return;
        }
        let devs: Vec<(u32, u32)> = self
            .disks
            .iter()
            .chain(&self.retiring)
            .map(|d| d.ctl.kernel())
            .chain(self.identifying.kernels())
            .filter_map(|k| sample.dev(k))
            .collect();
        self.claims.retain(|dev, _| devs.contains(dev));
        let dir = disk_lock_dir(&self.cfg.diskstats);
        for dev in devs {
            if !self.claims.contains_key(&dev)
                && !self.claims_off
                && let Ok(l) = InstanceLock::acquire_disk(&dir, dev)
            {
                self.claims.insert(dev, l);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_replacement_actor_starts_after_the_old_ones_end() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        let (end_old, ended) = tokio::sync::oneshot::channel::<()>();
        let old = tokio::spawn(async move {
            let _ = ended.await;
        });
        let done = tokio::spawn(async {});
        let started = Arc::new(AtomicBool::new(false));
        let s = started.clone();
        let new = tokio::spawn(after_ready(when_ended(vec![done, old]), async move {
            s.store(true, SeqCst);
        }));
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        assert!(!started.load(SeqCst), "started while an old actor ran");
        end_old.send(()).unwrap();
        new.await.unwrap();
        assert!(started.load(SeqCst));
        // Nothing to wait for: at once.
        assert!(when_ended(Vec::new()).is_none());
        let s = started.clone();
        s.store(false, SeqCst);
        after_ready(None, async move { s.store(true, SeqCst) }).await;
        assert!(started.load(SeqCst));
    }

    #[test]
    fn an_order_without_an_actor_is_reported_once() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut lost = false;
        assert!(!deliver(Some(&tx), Order::Shutdown, &mut lost));
        assert!(matches!(rx.try_recv(), Ok(Order::Shutdown)));
        assert!(!lost);
        drop(rx);
        assert!(deliver(Some(&tx), Order::Shutdown, &mut lost));
        assert!(lost);
        assert!(!deliver(Some(&tx), Order::Shutdown, &mut lost));
        let mut lost = false;
        assert!(deliver(None, Order::Shutdown, &mut lost));
    }
}
