//! The daemon: one poll loop, one engine per disk, one actor per disk.
//!
//! # Shape
//!
//! - **The poll loop** (one task on a current-thread tokio runtime) sleeps
//!   until the next poll or the earliest engine deadline, whichever comes
//!   first, reads diskstats, pushes each disk's events into its engine,
//!   calls `advance(now)`, and drains the intents the engine's
//!   [`LiveTask`] recorded. Every wake-up is a poll,
//!   so events are always pushed in time order (the engine never ran ahead
//!   of the counters) and a deadline is judged on fresh counters.
//! - **An actor per disk** executes intents: spawns, pauses and resumes the
//!   command, runs `hdparm`/SG_IO/`syncfs`, and reports outcomes back on a
//!   channel. The loop never waits for a drive.
//! - **Policy before action**: the wear budget (a token bucket spread over
//!   the day, persisted in the state file so restarts neither refill nor
//!   empty it: [`crate::state::WearBudget`]) and the break-even check of
//!   the disk's power model are applied by the loop before a standby order
//!   is sent; over SG_IO the actor also asks the drive's power state first
//!   (CHECK POWER MODE never wakes it) and skips a disk already in standby,
//!   and the loop asks it again every `power_check` to see spin-ups and
//!   spin-downs the daemon did not cause.
//! - **Time** is `CLOCK_BOOTTIME` since start: monotonic, immune to
//!   wall-clock jumps, and it keeps counting in suspend, so a poll that
//!   comes much later than planned is recognised and handled as described
//!   in [`crate::source`].
//! - **Signals**: SIGHUP reloads (a config that does not validate is
//!   rejected with its error and the running one kept); SIGTERM/SIGINT stop
//!   commands cleanly (SIGCONT, then SIGTERM to the process group, SIGKILL
//!   after 10 s), save the state and exit. systemd is told READY, WATCHDOG
//!   (at half `WatchdogSec`, from the loop itself, so a stuck loop is
//!   restarted), RELOADING and STOPPING.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lull_core::actuator::PolicyActuator;
use lull_core::engine::Engine;
use lull_core::event::Event;
use lull_core::network::Network;
use lull_core::registry::Registry;
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

use crate::config::{Backend, Config, ConfigError, DiskConfig, TaskConfig};
use crate::devices::{Resolved, resolve};
use crate::diskstats::parse;
use crate::drive::{self, PowerState};
use crate::hooks::{HookEvent, HookRunner};
use crate::jobs::{JobsRun, Switch};
use crate::metrics::{self, DiskGauges};
use crate::process;
use crate::source::{DiskTracker, Family, Sample};
use crate::state::{State, Wake, WearBudget, keep_last_day, write_atomically};
use crate::task::{Intent, LiveTask};
use crate::timer::{PollTimer, boottime};
use crate::transport::Standby;
use crate::wakeup;

/// How the daemon is started.
#[derive(Debug)]
pub struct Options {
    /// The config file.
    pub config: PathBuf,
    /// Decide and log, but touch no drive, run no command, write no state.
    pub dry_run: bool,
    /// The components networks are built from.
    pub registry: Registry,
}

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The configuration is invalid (exit code 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Something failed at run time (exit code 1).
    #[error("{0}")]
    Runtime(String),
}

/// What [`preflight`] found: where each disk entry resolves now, and
/// warnings that do not stop a start.
#[derive(Debug, Default)]
pub struct Preflight {
    /// Per `[[disk]]`, in file order: the devices it resolves to now.
    pub found: Vec<Vec<Resolved>>,
    /// Things a start tolerates but an admin should know.
    pub warnings: Vec<String>,
}

/// The checks a start (and a reload) runs beyond the file's own
/// validation, which `--check` runs too: the state file's directory exists
/// and is writable (not in a dry run, which writes no state) and the
/// state file is readable; the metrics textfile's directory exists and is
/// writable; no two entries resolve to the same device now (`loop0` and
/// `/dev/loop0`: which task would it get?).
pub fn preflight(cfg: &Config, dry_run: bool) -> Result<Preflight, ConfigError> {
    let err = |key: &str, message: String| ConfigError {
        file: cfg.path.clone(),
        line: None,
        key: Some(key.to_string()),
        message,
    };
    let mut out = Preflight::default();
    if !dry_run {
        dir_writable(&cfg.state_file).map_err(|m| err("state_file", m))?;
        match State::load(&cfg.state_file) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => out.warnings.push(format!(
                "{e}; a start keeps it as {}.corrupt-<unix time> and begins with empty counters",
                cfg.state_file.display()
            )),
            Err(e) => {
                return Err(err(
                    "state_file",
                    format!("{}: cannot read: {e}", cfg.state_file.display()),
                ));
            }
        }
    }
    if let Some(tf) = &cfg.metrics.textfile {
        dir_writable(tf).map_err(|m| err("metrics.textfile", m))?;
    }
    let sample = std::fs::read_to_string(&cfg.diskstats)
        .ok()
        .and_then(|t| parse(&t).ok())
        .map(Sample::new);
    if sample.is_none() {
        out.warnings.push(format!(
            "{} cannot be read now: no disk is resolved",
            cfg.diskstats.display()
        ));
    }
    for (i, d) in cfg.disks.iter().enumerate() {
        let found = sample
            .as_ref()
            .map(|s| resolve(&d.device, s.names()))
            .unwrap_or_default();
        for r in &found {
            if let Some((j, _)) = out
                .found
                .iter()
                .enumerate()
                .find(|(_, f)| f.iter().any(|o| o.kernel == r.kernel))
            {
                let prev = &cfg.disks[j];
                return Err(ConfigError {
                    file: cfg.path.clone(),
                    line: Some(d.line),
                    key: Some(format!("disk[{i}].device")),
                    message: format!(
                        "`{}` is {} now, which disk[{j}] (`{}`, line {}) already names; a disk can have one entry",
                        d.device, r.kernel, prev.device, prev.line
                    ),
                });
            }
        }
        out.found.push(found);
    }
    Ok(out)
}

/// The directory `path` is in exists and the daemon may create files in it.
fn dir_writable(path: &Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let m = std::fs::metadata(dir).map_err(|e| format!("directory {}: {e}", dir.display()))?;
    if !m.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    // Try it: permission bits say nothing for root, and a read-only
    // mount or an immutable directory only shows when writing.
    let probe = dir.join(format!(".lull-check.{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| format!("cannot create files in {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Validates `path` as a start would ([`Config::load`], then
/// [`preflight`]) and describes what the daemon would watch, without
/// starting it.
pub fn check(path: &Path, registry: &Registry) -> Result<String, ConfigError> {
    let cfg = Config::load(path, registry)?;
    let pre = preflight(&cfg, false)?;
    let mut out = format!(
        "{}: ok; poll {}, state file {}\n",
        path.display(),
        cfg.poll,
        cfg.state_file.display()
    );
    for (d, found) in cfg.disks.iter().zip(&pre.found) {
        let now = if found.is_empty() {
            "not present now (the daemon waits for it)".to_string()
        } else {
            found
                .iter()
                .map(|r| r.kernel.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "disk[{}] {} (line {}): {}; task {}, network {}, policy {}, break-even {}\n",
            d.index,
            d.device,
            d.line,
            now,
            d.task.name(),
            d.network,
            d.policy,
            d.breakeven
        ));
        if let TaskConfig::Jobs {
            jobs,
            best_effort,
            assume_idle,
        } = &d.task
        {
            let decisions = crate::jobs::admission(jobs, *best_effort, *assume_idle);
            for (j, dec) in jobs.iter().zip(&decisions) {
                out.push_str(&format!(
                    "  {} (planning on {assume_idle} of idle time per hour)\n",
                    crate::jobs::decision_text(j, dec)
                ));
            }
        }
    }
    for w in &pre.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    Ok(out)
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(opts: Options) -> Result<(), DaemonError> {
    let cfg = Config::load(&opts.config, &opts.registry)?;
    preflight(&cfg, opts.dry_run)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(4)
        // SG_IO and syncfs run on the blocking pool, rarely: let its
        // threads go soon after (the daemon is one thread when idle).
        .thread_keep_alive(Duration::from_secs(1))
        .build()
        .map_err(|e| DaemonError::Runtime(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        let mut d = Daemon::new(opts, cfg).await?;
        d.run().await
    })
}

/// Commands a previous run of the daemon started and did not stop (it was
/// killed with SIGKILL, or crashed) may still run: a command that ignores
/// SIGHUP survives its daemon. Stop those that are still ours (same pid
/// and start time, see [`crate::process`]) so a command never runs twice;
/// forget the others.
async fn stop_orphans(state: &mut State, cfg: &Config) {
    let argvs: Vec<Vec<String>> = cfg
        .disks
        .iter()
        .flat_map(|d| match &d.task {
            TaskConfig::Command { argv, .. } => vec![argv.clone()],
            TaskConfig::Jobs { jobs, .. } => jobs.iter().map(|j| j.argv.clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    for (key, st) in &mut state.disks {
        let mut old: Vec<(String, u32, Option<u64>)> = std::mem::take(&mut st.job_pids)
            .into_iter()
            .map(|(job, p)| (format!("job {job}: command"), p.pid, p.start))
            .collect();
        if let Some(pid) = st.command_pid.take() {
            old.push(("command".into(), pid, st.command_start.take()));
        }
        for (what, pid, start) in old {
            if process::is_our_command(pid, start, &argvs) {
                warn!(
                    "disk {key}: {what} pid {pid} of a previous run still runs (the daemon was killed?); stopping it so it does not run twice"
                );
                let how = process::terminate_group(pid, start, Duration::from_secs(10)).await;
                info!("disk {key}: old {what} pid {pid} {how}");
                st.last_decision = format!("old {what} pid {pid} stopped at start ({how})");
                st.last_decision_unix = unix_now();
            } else {
                info!("disk {key}: {what} pid {pid} of a previous run is gone");
            }
        }
    }
}

/// Builds a disk's network for its device: durations relative to the
/// break-even time (`timer(4B)`) and B-scaled defaults resolve against the
/// disk's own B ([`crate::config::task_breakeven`]), and `auto` follows the
/// task ([`crate::config::disk_registry`]).
fn build_network(registry: &Registry, cfg: &DiskConfig) -> Result<Network, String> {
    let registry = crate::config::disk_registry(registry, &cfg.task, cfg.breakeven);
    NetworkSpec::parse(&cfg.network, Some(&registry))
        .map_err(|e| e.to_string())
        .and_then(|s| s.build(&registry).map_err(|e| e.to_string()))
}

/// The device numbers of a disk, its partitions and holders.
fn sample_devs(d: &Disk, sample: &Sample) -> Vec<(u32, u32)> {
    std::iter::once(&d.tracker.family().disk)
        .chain(&d.tracker.family().partitions)
        .chain(&d.tracker.family().holders)
        .filter_map(|n| sample.dev(n))
        .collect()
}

/// Names, best effort, what woke `d` ([`crate::wakeup`]), counts it in
/// `st`, records it as the disk's last wake (`cause`, a [`Wake`]
/// constant), and returns the log text (`", woken by smbd (pid 12, …)"`)
/// and, when known, the suspects for `LULL_WOKEN_BY` (`"smbd (pid 12,
/// …)"`, the most likely first; `unknown` when they are gone).
fn woken_by(
    d: &mut Disk,
    st: &mut crate::state::DiskState,
    cause: &str,
) -> (String, Option<String>) {
    let mut wake = Wake {
        unix: unix_now(),
        cause: cause.to_string(),
        by: Vec::new(),
    };
    let Some(before) = d.sleep_snapshot.take() else {
        st.last_wake = Some(wake);
        return (String::new(), None);
    };
    let grown = wakeup::grew(&before, &wakeup::snapshot());
    let who = wakeup::suspects(&grown, |pid| wakeup::uses_devices(pid, &d.devs));
    let comm = who.first().map_or("unknown", |w| w.0.as_str());
    *st.wakeups.entry(comm.to_string()).or_default() += 1;
    let out = if who.is_empty() {
        wake.by.push("unknown".to_string());
        (
            ", woken by a process that is gone (or by the kernel)".to_string(),
            Some("unknown".to_string()),
        )
    } else {
        wake.by = who.iter().map(|w| w.0.clone()).collect();
        let list: Vec<&str> = who.iter().map(|w| w.1.as_str()).collect();
        let list = list.join(", ");
        (format!(", woken by {list}"), Some(list))
    };
    st.last_wake = Some(wake);
    out
}

/// Starts `d`'s hook for `ev`, if it has one, with the disk's
/// environment (`LULL_DEVICE`, `LULL_TASK`, `LULL_IDLE_S` while an idle
/// period runs, `LULL_STANDBY_S` while in standby, `LULL_UNIX_TIME`) and
/// what `extra` makes, called only then: a disk without that hook formats
/// nothing (a wake is on the poll path).
fn fire_hook(
    runner: &HookRunner,
    d: &Disk,
    now: Nanos,
    ev: HookEvent,
    extra: impl FnOnce() -> Vec<(&'static str, String)>,
) {
    let Some(argv) = d.cfg.hooks.get(ev) else {
        return;
    };
    let secs = |since: Nanos| format!("{:.3}", (now - since).as_secs_f64());
    let mut env = vec![
        ("LULL_DEVICE", format!("/dev/{}", d.kernel)),
        ("LULL_TASK", d.cfg.task.name().to_string()),
        ("LULL_UNIX_TIME", unix_now().to_string()),
    ];
    if let Some(t) = d.idle_since {
        env.push(("LULL_IDLE_S", secs(t)));
    }
    if let Some(t) = d.standby_since {
        env.push(("LULL_STANDBY_S", secs(t)));
    }
    // `extra` comes last: it overrides (the length of the idle period or
    // the standby that just ended).
    env.extend(extra());
    runner.fire(&d.key, ev, argv, env);
}

/// Reads diskstats at `path` into the start of `buf` and returns its
/// length, with reads as large as the buffer, so a poll is one `read` and
/// the end-of-file one, not the doubling probe reads `read_to_string`
/// does on a file whose size the kernel reports as 0. `buf` keeps its
/// length (zeroed once, grown when the file outgrows it). A procfs file is
/// kept open in `file` and read again from offset 0 (the kernel
/// regenerates it: no `open` and `close` per poll); any other file is
/// opened each time.
///
/// From the kept procfs file, a first read shorter than
/// [`SEQ_SHORT_READ`] is the whole file, and the end-of-file read is
/// skipped: the kernel's `seq_file` fills a read until the caller's buffer
/// is full, the file ends, or its own buffer (at least a page, 4 KiB) has
/// no room for the next line, and a diskstats line is under 512 bytes
/// (a 32-byte name and 20 numbers); so a read stops short of 4 KiB − 512
/// bytes only at the end. That read matters: to
/// find where it left off, diskstats walks the kernel's list of block
/// devices from the start, which costs about as much as the read that
/// produced the lines (`perf`, issue 18).
fn read_diskstats(
    file: &mut Option<std::fs::File>,
    path: &Path,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let (f, kept) = match file.take() {
        Some(f) => (f, true),
        None => (std::fs::File::open(path)?, false),
    };
    let mut len = 0;
    let result = loop {
        if buf.len() - len < 4096 {
            buf.resize(buf.len() + (16 << 10), 0);
        }
        match f.read_at(&mut buf[len..], len as u64) {
            Ok(0) => break Ok(len),
            Ok(n) if kept && len == 0 && n < SEQ_SHORT_READ => break Ok(n),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    let procfs = || {
        nix::sys::statfs::fstatfs(&f)
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::PROC_SUPER_MAGIC)
    };
    if result.is_ok() && (kept || procfs()) {
        *file = Some(f);
    }
    result
}

/// A first read of `/proc/diskstats` shorter than this is the whole file
/// ([`read_diskstats`]).
const SEQ_SHORT_READ: usize = 4096 - 512;

/// How long after rare work its code pages are released.
const RELEASE_DELAY: Nanos = Nanos::from_secs(5);

/// Takes the code and read-only data pages of the daemon and its
/// libraries out of its resident set (they stay in the page cache), and
/// gives the heap's free pages back, so what stays resident is what the
/// poll loop uses.
///
/// Why: most of the binary's code runs once, at start-up or at a reload
/// (reading and checking the config, building the networks), and the
/// kernel maps file pages in 64 KiB chunks around each page touched
/// (fault-around): without this, 4.2 MiB of the daemon's 4.8 MiB RSS are
/// such file-backed pages. A page dropped here and needed again is mapped
/// back from the page cache by a minor fault.
///
/// Only private, file-backed, read-only mappings (`r-xp` and `r--p` in
/// `/proc/self/smaps`) that hold no page of their own (`Anonymous: 0 kB`)
/// are dropped: every page of such a mapping is the file's, so nothing is
/// lost. A mapping that was ever written, such as the relocated
/// `.data.rel.ro` that the loader makes read-only afterwards, holds
/// private copies and is left alone. Returns the bytes advised.
fn release_code_pages() -> usize {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mut bytes = 0;
    // The mapping being read, while it may be dropped: (start, end).
    let mut candidate: Option<(usize, usize)> = None;
    let mut release = |range: Option<(usize, usize)>| {
        let Some((a, b)) = range else { return };
        // SAFETY: `MADV_DONTNEED` on a private, read-only file mapping
        // with no private (anonymous) page only unmaps the file's own
        // pages from this process; the next access maps the same contents
        // back from the file. No memory is freed or changed.
        #[allow(unsafe_code)]
        let r = unsafe { libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_DONTNEED) };
        if r == 0 {
            bytes += b - a;
        }
    };
    for l in smaps.lines() {
        if let Some(kb) = l.strip_prefix("Anonymous:") {
            if kb.trim().trim_end_matches("kB").trim() != "0" {
                candidate = None;
            }
            continue;
        }
        let mut f = l.split_ascii_whitespace();
        let Some(range) = f.next() else { continue };
        if range.ends_with(':') {
            continue; // another of the mapping's fields
        }
        // A mapping's header (an anonymous one has no path): the mapping
        // before it is complete.
        release(candidate.take());
        let (Some(perms), Some(_off), Some(_dev), Some(inode), Some(path)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        if !matches!(perms, "r-xp" | "r--p") || inode == "0" || !path.starts_with('/') {
            continue;
        }
        if let Some((a, b)) = range.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            candidate = Some((a, b));
        }
    }
    release(candidate);
    trim_heap();
    bytes
}

/// Gives the heap's free pages back to the kernel (glibc keeps them
/// mapped after the start-up's allocations are freed).
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` only releases memory the allocator holds
        // free; it is thread-safe and takes no pointer.
        #[allow(unsafe_code)]
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// How recently a directory of by-path entries must have changed for
/// [`Daemon::path_signature`] to resolve them in full rather than trust the
/// directory's modification time.
const RECENT_DIR_CHANGE: Duration = Duration::from_secs(2);

/// When the engine decided.
fn intent_time(i: &Intent) -> Nanos {
    match *i {
        Intent::Start { at, .. } | Intent::Stop { at } => at,
    }
}

/// The wall clock now, as nanoseconds since the Unix epoch.
fn unix_now_ns() -> Nanos {
    Nanos(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
    )
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// An order for a disk's actor.
#[derive(Debug)]
enum Order {
    /// Spin `dev` down (standby) / flush the file systems on `devs`
    /// (major, minor) / start or resume the command. The device comes with
    /// the order because a by-id link may point to another kernel name
    /// after a re-plug.
    Start {
        /// The disk's device node now.
        dev: PathBuf,
        /// Device numbers of the disk, its partitions and holders.
        devs: Vec<(u32, u32)>,
    },
    /// Pause the command (nothing for standby and flush).
    Stop,
    /// Read the power state with CHECK POWER MODE (SG_IO backends only:
    /// no process per check).
    CheckPower {
        /// The disk's device node now.
        dev: PathBuf,
    },
    /// The disk is back after it vanished, or its by-id link points to
    /// another kernel device: probe its transport again
    /// ([`crate::transport`]).
    Replugged {
        /// The disk's device node now.
        dev: PathBuf,
    },
    /// Stop the command for good and end.
    Shutdown,
}

/// What an actor did.
#[derive(Debug)]
enum Outcome {
    SpunDown(String),
    AlreadyStandby,
    Flushed(Vec<PathBuf>),
    /// The command's pid and start time (clock ticks after boot).
    CommandStarted(u32, Option<u64>),
    CommandResumed(u32),
    CommandPaused(u32),
    CommandExited(u32, String),
    /// The daemon stopped the command (it is stopping or the disk's
    /// configuration changed): not a run to its end.
    CommandStopped(u32, String),
    Skipped(String),
    /// CHECK POWER MODE's answer.
    Power(PowerState),
    /// `backend = "auto"` probed the disk's transport (for the state file).
    Transport(crate::state::TransportMemo),
    DryRun(String),
    Failed(String),
}

#[derive(Debug)]
struct Report {
    key: String,
    generation: u64,
    /// The job's name, for a job's actor (`task = "jobs"`).
    job: Option<String>,
    outcome: Outcome,
}

/// The jobs of a `task = "jobs"` disk: their scheduler and one actor per
/// job (running its command like the `command` task's actor).
struct DiskJobs {
    run: JobsRun,
    actors: Vec<(mpsc::UnboundedSender<Order>, JoinHandle<()>)>,
}

struct Disk {
    key: String,
    cfg: DiskConfig,
    generation: u64,
    kernel: String,
    tracker: DiskTracker,
    engine: Engine<Network, PolicyActuator, LiveTask>,
    orders: mpsc::UnboundedSender<Order>,
    actor: JoinHandle<()>,
    standby_since: Option<Nanos>,
    /// A flush runs: its own writes are not foreground I/O.
    flushing: bool,
    /// The flush finished: the next poll's deltas are still its own.
    absorb_next: bool,
    /// The engine started the task but it is not running: the start was
    /// refused (wear budget, break-even, interval), failed, or the command
    /// exited. Cleared at the next start.
    not_running: bool,
    /// When the power state was last asked.
    last_power_check: Nanos,
    /// Every process's I/O counters when the disk was found asleep, to
    /// tell what woke it ([`crate::wakeup`]).
    sleep_snapshot: Option<wakeup::Snapshot>,
    /// Device numbers of the disk, its partitions and holders, as of the
    /// last wake-up or power check.
    devs: Vec<(u32, u32)>,
    /// Standby failures in a row.
    failures: u32,
    /// No standby attempt before this (after repeated failures).
    retry_at: Option<Nanos>,
    /// `task = "jobs"`: the jobs sharing the disk's idle time.
    jobs: Option<DiskJobs>,
    /// The first poll of the current idle period (`None`: busy).
    idle_since: Option<Nanos>,
    /// The task started in this idle period: I/O ending it fires
    /// `on_wake`.
    acted: bool,
    /// The length of the last idle period, once I/O ended it (for
    /// `on_task_stop`'s `LULL_IDLE_S`).
    last_idle: Option<Nanos>,
    /// Whether the state file's entry says present (`None`: not known to
    /// match, as for a new disk or a new kernel name), so that a poll
    /// with nothing to record does not look the entry up by name.
    recorded: Option<bool>,
}

struct Daemon {
    opts: Options,
    cfg: Config,
    state: State,
    dirty: bool,
    /// When the state and metrics were last written (`None`: never, so
    /// the first poll writes them and a scrape right after the start sees
    /// metrics).
    last_save: Option<Nanos>,
    disks: Vec<Disk>,
    base: Nanos,
    /// The wall clock at `base` (Unix nanoseconds): engines are told it, so
    /// time-of-day skeptics see real hours across restarts.
    clock: Nanos,
    last_poll: Nanos,
    /// When to take the code pages out of the resident set
    /// ([`Daemon::release_code_soon`]).
    release_code_at: Option<Nanos>,
    /// When they were last released.
    last_release: Option<Nanos>,
    /// Resolve the disks at the next poll (at start and after a reload).
    resolve_now: bool,
    /// The last diskstats sample, updated in place at every poll.
    sample: Sample,
    /// `/proc/diskstats`, kept open and read again from its start at each
    /// poll (a procfs file regenerates; a regular file, as in tests, is
    /// opened afresh at each poll, since it may be replaced).
    diskstats_file: Option<std::fs::File>,
    polls: u64,
    generation: u64,
    reports_tx: mpsc::UnboundedSender<Report>,
    reports_rx: mpsc::UnboundedReceiver<Report>,
    metrics_tx: watch::Sender<Arc<str>>,
    metrics_server: Option<(std::net::SocketAddr, JoinHandle<()>)>,
    events: Vec<Event>,
    missing: HashSet<String>,
    read_error_logged: bool,
    /// Where the by-path and glob entries resolved at the last poll: they
    /// are re-resolved every poll, because udev creates a by-id link after
    /// the kernel device appears.
    path_sig: u64,
    /// The last error writing the metrics textfile (logged once per change).
    textfile_error: Option<String>,
    /// Reused for every read of diskstats.
    read_buf: Vec<u8>,
    /// When the state file was last written.
    last_state_save: Option<Nanos>,
    /// Write the state file at the next save (a command's pid changed).
    urgent: bool,
    /// The state changed since the state file was last written.
    state_dirty: bool,
    /// Runs the disks' hooks and counts them.
    hooks: HookRunner,
}

impl Daemon {
    async fn new(opts: Options, cfg: Config) -> Result<Daemon, DaemonError> {
        let state = if opts.dry_run {
            State::default()
        } else {
            let mut s = match State::load(&cfg.state_file) {
                Ok(s) => s,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    match State::keep_corrupt(&cfg.state_file, unix_now()) {
                        Ok(kept) => warn!(
                            "{e}; kept it as {} and starting with empty counters",
                            kept.display()
                        ),
                        Err(k) => {
                            return Err(DaemonError::Runtime(format!(
                                "{e}; cannot keep it aside ({k}), so it is not overwritten: move it away"
                            )));
                        }
                    }
                    State::default()
                }
                Err(e) => {
                    return Err(DaemonError::Runtime(format!(
                        "state file {}: cannot read: {e}",
                        cfg.state_file.display()
                    )));
                }
            };
            stop_orphans(&mut s, &cfg).await;
            s.save(&cfg.state_file).map_err(|e| {
                DaemonError::Runtime(format!(
                    "state file {}: cannot write: {e}",
                    cfg.state_file.display()
                ))
            })?;
            s
        };
        let (reports_tx, reports_rx) = mpsc::unbounded_channel();
        let (metrics_tx, _) = watch::channel(Arc::<str>::from(""));
        let hooks = HookRunner::new(cfg.hook_timeout, opts.dry_run);
        let mut d = Daemon {
            hooks,
            opts,
            cfg,
            state,
            dirty: true,
            last_save: None,
            disks: Vec::new(),
            base: boottime(),
            clock: unix_now_ns(),
            last_poll: Nanos::ZERO,
            resolve_now: true,
            release_code_at: None,
            last_release: None,
            sample: Sample::default(),
            diskstats_file: None,
            polls: 0,
            generation: 0,
            reports_tx,
            reports_rx,
            metrics_tx,
            metrics_server: None,
            events: Vec::with_capacity(256),
            missing: HashSet::new(),
            read_error_logged: false,
            path_sig: 0,
            textfile_error: None,
            read_buf: Vec::new(),
            last_state_save: None,
            urgent: false,
            state_dirty: true,
        };
        d.start_metrics_server().await?;
        Ok(d)
    }

    fn now(&self) -> Nanos {
        boottime() - self.base
    }

    async fn start_metrics_server(&mut self) -> Result<(), DaemonError> {
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
            let h = tokio::spawn(metrics::serve(l, self.metrics_tx.subscribe()));
            self.metrics_server = Some((addr, h));
        }
        Ok(())
    }

    async fn run(&mut self) -> Result<(), DaemonError> {
        let sig = |k| signal(k).map_err(|e| DaemonError::Runtime(format!("signals: {e}")));
        let mut hup = sig(SignalKind::hangup())?;
        let mut term = sig(SignalKind::terminate())?;
        let mut int = sig(SignalKind::interrupt())?;
        // Signals are awaited by a task of their own, which forwards them:
        // the poll loop's `select!` then makes no signal futures at each
        // poll (they would be built and polled anew every second).
        let (signals_tx, mut signals) = mpsc::unbounded_channel();
        let signal_task = tokio::spawn(async move {
            loop {
                let s = tokio::select! {
                    _ = hup.recv() => Signal::SIGHUP,
                    _ = term.recv() => Signal::SIGTERM,
                    _ = int.recv() => Signal::SIGINT,
                };
                if signals_tx.send(s).is_err() {
                    break;
                }
            }
        });
        let watchdog = sd_notify::watchdog_enabled().map(|d| d / 2);
        let mut dog = tokio::time::interval(watchdog.unwrap_or(Duration::from_secs(3600)));
        dog.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

        info!(
            "lull daemon started: {} disk entries, poll {}{}",
            self.cfg.disks.len(),
            self.cfg.poll,
            if self.opts.dry_run {
                ", dry run: no drive is touched, no command runs"
            } else {
                ""
            }
        );
        self.last_poll = self.now();
        self.poll(self.last_poll, false);
        self.release_code_soon();
        let _ = sd_notify::notify(&[
            sd_notify::NotifyState::Ready,
            sd_notify::NotifyState::Status(&format!("watching {} disks", self.disks.len())),
        ]);
        let timer = PollTimer::new()
            .map_err(|e| DaemonError::Runtime(format!("cannot create the poll timer: {e}")))?;
        loop {
            let now = self.now();
            let next_poll = self.last_poll + self.cfg.poll;
            let wake = self
                .disks
                .iter()
                .flat_map(|d| {
                    let jobs = d.jobs.as_ref().and_then(|j| j.run.next_deadline());
                    d.engine.next_deadline().into_iter().chain(jobs)
                })
                .min()
                .map_or(next_poll, |t| t.min(next_poll))
                .max(now + Nanos::from_millis(1));
            let slack = self.cfg.poll.max(Nanos::from_secs(2));
            if let Err(e) = timer.set(self.base + wake) {
                return Err(DaemonError::Runtime(format!("poll timer: {e}")));
            }
            tokio::select! {
                // In this order: no random draw per wake-up.
                biased;
                r = timer.wait() => {
                    // The clock the timer read: one reading for the poll.
                    let now = match r {
                        Ok(t) => t - self.base,
                        Err(e) => return Err(DaemonError::Runtime(format!("poll timer: {e}"))),
                    };
                    self.poll(now, now > wake + slack);
                }
                Some(s) = signals.recv() => {
                    if s == Signal::SIGHUP {
                        self.reload().await;
                    } else {
                        info!("{s}: stopping");
                        break;
                    }
                }
                Some(r) = self.reports_rx.recv() => self.on_report(r),
                _ = dog.tick(), if watchdog.is_some() => {
                    let _ = sd_notify::notify(&[sd_notify::NotifyState::Watchdog]);
                }
            }
        }
        signal_task.abort();
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
        let disks = std::mem::take(&mut self.disks);
        self.retire_all(disks).await;
        self.save(true);
        info!("stopped");
        Ok(())
    }

    async fn reload(&mut self) {
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Reloading]);
        let loaded = Config::load(&self.opts.config, &self.opts.registry)
            .and_then(|c| preflight(&c, self.opts.dry_run).map(|_| c));
        match loaded {
            Err(e) => error!("config reload rejected, keeping the running configuration: {e}"),
            Ok(new) => {
                let old_listen = self.cfg.metrics.listen;
                let state_moved = new.state_file != self.cfg.state_file;
                self.cfg = new;
                self.hooks.set_timeout(self.cfg.hook_timeout);
                let mut gone = Vec::new();
                for mut d in std::mem::take(&mut self.disks) {
                    match self.cfg.disks.iter().find(|c| c.same_settings(&d.cfg)) {
                        Some(c) => {
                            // Same settings, maybe another line: keep its
                            // engine, its command and what it learned.
                            d.cfg = c.clone();
                            self.disks.push(d);
                        }
                        None => {
                            info!("disk {}: configuration changed or removed", d.key);
                            gone.push(d);
                        }
                    }
                }
                self.retire_all(gone).await;
                self.resolve_now = true; // Re-resolve at the next poll.
                self.diskstats_file = None; // Its path may have changed.
                self.path_sig = 0;
                self.missing.clear();
                if old_listen != self.cfg.metrics.listen {
                    if let Err(e) = self.start_metrics_server().await {
                        error!("{e}");
                    }
                }
                if state_moved {
                    self.dirty = true;
                }
                info!(
                    "configuration reloaded: {} disk entries",
                    self.cfg.disks.len()
                );
            }
        }
        // The config code ran again: out of the resident set again.
        self.release_code_soon();
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
    }

    /// Stops the disks' actors (and their commands, all at once) and books
    /// what they report.
    async fn retire_all(&mut self, disks: Vec<Disk>) {
        for d in &disks {
            let _ = d.orders.send(Order::Shutdown);
            for (tx, _) in d.jobs.iter().flat_map(|j| &j.actors) {
                let _ = tx.send(Order::Shutdown);
            }
        }
        for d in disks {
            let jobs = d.jobs.into_iter().flat_map(|j| j.actors).map(|a| a.1);
            for actor in std::iter::once(d.actor).chain(jobs) {
                if tokio::time::timeout(Duration::from_secs(15), actor)
                    .await
                    .is_err()
                {
                    warn!("disk {}: an actor did not stop in 15 s", d.key);
                }
            }
        }
        while let Ok(r) = self.reports_rx.try_recv() {
            self.on_report(r);
        }
    }

    fn new_disk(&mut self, cfg: &DiskConfig, r: &Resolved, family: Family) -> Option<Disk> {
        let network = match build_network(&self.opts.registry, cfg) {
            Ok(n) => n,
            Err(e) => {
                error!("disk {}: network {}: {e}", r.key, cfg.network);
                return None;
            }
        };
        self.generation += 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let transport = match cfg.task {
            TaskConfig::Standby { backend, .. } => Some(crate::transport::Chooser::new(
                &r.key,
                backend,
                PathBuf::from("/dev").join(&r.kernel),
                self.state
                    .disks
                    .get(&r.key)
                    .and_then(|s| s.transport.clone()),
            )),
            _ => None,
        };
        let actor = Actor {
            key: r.key.clone(),
            generation: self.generation,
            job: None,
            task: cfg.task.clone(),
            dry_run: self.opts.dry_run,
            reports: self.reports_tx.clone(),
            transport,
        };
        let handle = tokio::spawn(actor.run(rx));
        let jobs = match &cfg.task {
            TaskConfig::Jobs {
                jobs,
                best_effort,
                assume_idle,
            } => Some(DiskJobs {
                run: JobsRun::admit(
                    &r.key,
                    jobs,
                    *best_effort,
                    *assume_idle,
                    self.now(),
                    self.clock,
                ),
                actors: jobs
                    .iter()
                    .map(|job| {
                        let (tx, rx) = mpsc::unbounded_channel();
                        let actor = Actor {
                            key: r.key.clone(),
                            generation: self.generation,
                            job: Some(job.name.clone()),
                            task: TaskConfig::Command {
                                argv: job.argv.clone(),
                                interval: Nanos::ZERO,
                            },
                            dry_run: self.opts.dry_run,
                            reports: self.reports_tx.clone(),
                            transport: None,
                        };
                        (tx, tokio::spawn(actor.run(rx)))
                    })
                    .collect(),
            }),
            _ => None,
        };
        Some(Disk {
            key: r.key.clone(),
            cfg: cfg.clone(),
            generation: self.generation,
            kernel: r.kernel.clone(),
            tracker: DiskTracker::new(family),
            engine: Engine::new(
                network,
                PolicyActuator::new(cfg.policy),
                LiveTask::new(cfg.task.name()),
            )
            .with_clock(self.clock),
            orders: tx,
            actor: handle,
            standby_since: None,
            flushing: false,
            absorb_next: false,
            not_running: false,
            last_power_check: self.now(),
            sleep_snapshot: None,
            devs: Vec::new(),
            failures: 0,
            retry_at: None,
            jobs,
            idle_since: None,
            acted: false,
            last_idle: None,
            recorded: None,
        })
    }

    /// Rare work ran (start-up, a reload, an actor's report, disks
    /// resolved): its code pages leave the resident set a few seconds later,
    /// when what it set off (hooks, commands, logging) is likely done
    /// ([`release_code_pages`]), and at most once a minute: under steady
    /// activity (a spin-down attempt every few seconds) the pages would only
    /// come back, at the cost of page faults.
    fn release_code_soon(&mut self) {
        if self.release_code_at.is_none() {
            let at = self.now() + RELEASE_DELAY;
            let not_before = self
                .last_release
                .map_or(Nanos::ZERO, |t| t + Nanos::from_secs(60));
            self.release_code_at = Some(at.max(not_before));
        }
    }

    fn resolve_all(&mut self, sample: &Sample) {
        self.release_code_soon();
        let cfgs = self.cfg.disks.clone();
        for c in &cfgs {
            let found = resolve(&c.device, sample.names());
            if found.is_empty()
                && !self.disks.iter().any(|d| d.cfg == *c)
                && self.missing.insert(c.device.clone())
            {
                warn!(
                    "disk {} (config line {}): not present; waiting for it to appear",
                    c.device, c.line
                );
                let st = self.state.disk(&c.device);
                st.present = false;
                self.dirty = true;
            }
            for r in found {
                let family = Family::discover(&r.kernel, &self.cfg.sysfs, sample.names());
                if let Some(d) = self
                    .disks
                    .iter_mut()
                    .find(|d| d.key == r.key && d.cfg == *c)
                {
                    if d.kernel != r.kernel {
                        info!("disk {} is now {}", d.key, r.kernel);
                        d.kernel = r.kernel.clone();
                        d.recorded = None;
                        let dev = PathBuf::from("/dev").join(&d.kernel);
                        let _ = d.orders.send(Order::Replugged { dev });
                        d.tracker = DiskTracker::new(family);
                    } else if *d.tracker.family() != family {
                        d.tracker.set_family(family);
                    }
                    continue;
                }
                if let Some(other) = self.disks.iter().find(|d| d.kernel == r.kernel) {
                    warn!(
                        "disk {} (config line {}) is {}, which {} already covers; ignoring it",
                        r.key, c.line, r.kernel, other.key
                    );
                    continue;
                }
                self.missing.remove(&c.device);
                if let Some(d) = self.new_disk(c, &r, family) {
                    info!(
                        "disk {} ({}): task {}, network {}, policy {}, break-even {}",
                        d.key,
                        d.kernel,
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
    fn path_signature(&self, sample: &Sample) -> u64 {
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

    /// Ends a poll whose diskstats could not be read or parsed: the error
    /// is logged once until a poll succeeds.
    fn poll_failed(&mut self, now: Nanos, e: impl std::fmt::Display) {
        if !self.read_error_logged {
            error!("{}: {e}", self.cfg.diskstats.display());
            self.read_error_logged = true;
        }
        self.last_poll = now;
    }

    /// Reads diskstats at `now` and runs every disk's tracker, engine
    /// and decisions on it.
    fn poll(&mut self, now: Nanos, late: bool) {
        let mut buf = std::mem::take(&mut self.read_buf);
        let read = read_diskstats(&mut self.diskstats_file, &self.cfg.diskstats, &mut buf)
            .and_then(|len| {
                std::str::from_utf8(&buf[..len])
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            });
        let text = match read {
            Ok(t) => t,
            Err(e) => {
                self.read_buf = buf;
                return self.poll_failed(now, e);
            }
        };
        // Counters are parsed for the watched devices only (all of them
        // when the disks are to be resolved again: a new disk's too).
        let mut sample = std::mem::take(&mut self.sample);
        let parsed = sample.update(text, self.resolve_now);
        if let Err(e) = parsed {
            self.sample = sample;
            self.read_buf = buf;
            return self.poll_failed(now, e);
        }
        self.read_error_logged = false;
        if late {
            warn!(
                "poll {} late (suspend, or the daemon was stopped): the gap counts as busy, not idle",
                now - self.last_poll
            );
        }
        let path_sig = self.path_signature(&sample);
        if self.resolve_now || sample.names_changed() || path_sig != self.path_sig {
            self.resolve_now = false;
            self.path_sig = path_sig;
            self.resolve_all(&sample);
            // Disks found now watch devices whose counters were skipped.
            sample.fill(text);
            let mut wanted: Vec<&str> = self
                .disks
                .iter()
                .flat_map(|d| {
                    let f = d.tracker.family();
                    std::iter::once(&f.disk)
                        .chain(&f.partitions)
                        .chain(&f.holders)
                        .map(String::as_str)
                })
                .collect();
            wanted.sort_unstable();
            sample.set_wanted(|n| wanted.binary_search(&n).is_ok());
        }
        self.read_buf = buf;
        let mut events = std::mem::take(&mut self.events);
        for i in 0..self.disks.len() {
            events.clear();
            let d = &mut self.disks[i];
            let absorb = d.flushing || std::mem::take(&mut d.absorb_next);
            let absorbed = if absorb && !late {
                d.tracker.absorb(now, &sample)
            } else {
                None
            };
            let o = match absorbed {
                Some(o) => o,
                None => d.tracker.poll(now, &sample, late, &mut events),
            };
            // The state entry is looked up (by name) only when there is
            // something to record in it.
            if d.recorded != Some(o.present) {
                let st = self.state.disk(&d.key);
                if st.present != o.present || st.kernel_name != d.kernel {
                    st.present = o.present;
                    st.kernel_name = d.kernel.clone();
                    self.dirty = true;
                }
                d.recorded = Some(o.present);
            }
            if o.vanished {
                warn!("disk {} ({}) vanished", d.key, d.kernel);
                d.standby_since = None;
            }
            if o.appeared {
                info!("disk {} ({}) is back", d.key, d.kernel);
                let dev = PathBuf::from("/dev").join(&d.kernel);
                let _ = d.orders.send(Order::Replugged { dev });
            }
            if o.idle_started {
                self.state.disk(&d.key).idle_starts += 1;
                self.dirty = true;
                d.idle_since = Some(now);
            }
            if o.active && !absorb {
                let idle = d.idle_since.map(|since| now - since);
                let mut wakers = None;
                let mut spun_up = false;
                if let Some(since) = d.standby_since {
                    let st = self.state.disk(&d.key);
                    st.spinups += 1;
                    st.standby_s += (now - since).as_secs_f64();
                    d.devs = sample_devs(d, &sample);
                    let (who, names) = woken_by(d, st, Wake::SPINUP);
                    info!(
                        "disk {}: busy again after {} in standby{who}",
                        d.key,
                        now - since
                    );
                    self.dirty = true;
                    // Written at once, so `lull status` names the wakers
                    // (spin-ups are rare: the wear budget bounds them).
                    self.urgent = true;
                    wakers = names;
                    spun_up = true;
                }
                let env = || {
                    let mut env = Vec::new();
                    if let Some(idle) = idle {
                        env.push(("LULL_IDLE_S", format!("{:.3}", idle.as_secs_f64())));
                    }
                    if let Some(n) = &wakers {
                        env.push(("LULL_WOKEN_BY", n.clone()));
                    }
                    env
                };
                if spun_up {
                    fire_hook(&self.hooks, d, now, HookEvent::Spinup, env);
                }
                if d.acted || spun_up {
                    if !spun_up {
                        self.state.disk(&d.key).last_wake = Some(Wake {
                            unix: unix_now(),
                            cause: Wake::IO.to_string(),
                            by: Vec::new(),
                        });
                        self.dirty = true;
                    }
                    fire_hook(&self.hooks, d, now, HookEvent::Wake, env);
                }
                d.acted = false;
                d.last_idle = d.idle_since.take().map(|t| now - t);
                d.standby_since = None;
            }
            if let TaskConfig::Standby { backend, .. } = d.cfg.task {
                let pc = self.cfg.power_check;
                if pc > Nanos::ZERO
                    && backend != Backend::Hdparm
                    && !self.opts.dry_run
                    && o.present
                    && now - d.last_power_check >= pc
                {
                    d.last_power_check = now;
                    d.devs = sample_devs(d, &sample);
                    let dev = PathBuf::from("/dev").join(&d.kernel);
                    let _ = d.orders.send(Order::CheckPower { dev });
                }
            }
            let mut failed = None;
            for ev in events.iter() {
                if let Err(e) = d.engine.push(ev) {
                    failed = Some(e);
                    break;
                }
            }
            if failed.is_none() {
                failed = d.engine.advance(now).err();
            }
            if let Some(e) = failed {
                error!(
                    "disk {}: engine error, restarting its detectors: {e}",
                    d.key
                );
                self.state.disk(&d.key).errors += 1;
                if let Ok(n) = build_network(&self.opts.registry, &d.cfg) {
                    d.engine = Engine::new(
                        n,
                        PolicyActuator::new(d.cfg.policy),
                        LiveTask::new(d.cfg.task.name()),
                    )
                    .with_clock(self.clock);
                }
                // The new engine starts outside any idle period: so do
                // the jobs, until it sees the next one.
                if let Some(j) = d.jobs.as_mut() {
                    let switches = j.run.on_idle_end(now);
                    self.switch_jobs(i, switches);
                }
            }
            let d = &mut self.disks[i];
            if d.engine.task().pending() {
                let intents: Vec<Intent> = d.engine.task_mut().drain().collect();
                for intent in intents {
                    self.on_intent(i, intent, &sample);
                }
            }
            if let Some(j) = self.disks[i].jobs.as_mut() {
                let switches = j.run.advance(now);
                // A running job's idle seconds grow: keep its metric
                // current (the metrics follow `dirty`, once a second).
                self.dirty |= j.run.running() || !switches.is_empty();
                self.switch_jobs(i, switches);
            }
        }
        self.events = events;
        self.sample = sample;
        if self.release_code_at.is_some_and(|t| now >= t) {
            self.release_code_at = None;
            self.last_release = Some(now);
            let kib = release_code_pages() >> 10;
            tracing::debug!("{kib} KiB of code mappings released from the resident set");
        }
        self.last_poll = now;
        self.polls += 1;
        self.save_at(now, false);
    }

    fn decide(&mut self, i: usize, text: String) {
        let d = &self.disks[i];
        let st = self.state.disk(&d.key);
        st.last_decision = text;
        st.last_decision_unix = unix_now();
        self.dirty = true;
    }

    fn on_intent(&mut self, i: usize, intent: Intent, sample: &Sample) {
        let key = self.disks[i].key.clone();
        match intent {
            Intent::Stop { .. } => {
                let now = self.now();
                let d = &self.disks[i];
                // Stopped by I/O: the idle period just ended.
                let extra = || match (d.idle_since, d.last_idle) {
                    (None, Some(len)) => vec![("LULL_IDLE_S", format!("{:.3}", len.as_secs_f64()))],
                    _ => Vec::new(),
                };
                fire_hook(&self.hooks, d, now, HookEvent::TaskStop, extra);
                self.state.disk(&key).task_stops += 1;
                self.disks[i].not_running = false;
                let task = self.disks[i].cfg.task.name();
                info!("disk {key}: busy, stop {task}");
                self.decide(i, format!("stop {task}: disk busy or prediction over"));
                if let Some(j) = self.disks[i].jobs.as_mut() {
                    let at = intent_time(&intent);
                    let switches = j.run.on_idle_end(at);
                    self.switch_jobs(i, switches);
                    return;
                }
                // Only a command has something to stop (it is paused); a
                // standby or a flush ends by itself.
                if matches!(self.disks[i].cfg.task, TaskConfig::Command { .. }) {
                    let _ = self.disks[i].orders.send(Order::Stop);
                }
            }
            Intent::Start { budget, .. } => {
                self.state.disk(&key).task_starts += 1;
                // Refused until sent to the actor below.
                self.disks[i].not_running = true;
                // Formatted only for a decision that names it.
                let budget_text = || budget.map_or("until busy".to_string(), |b| b.to_string());
                let d = &self.disks[i];
                match &d.cfg.task {
                    TaskConfig::Standby {
                        max_spindowns_per_day,
                        backend,
                    } => {
                        let per_day = *max_spindowns_per_day;
                        if crate::transport::left_alone(*backend, self.state.disks.get(&key)) {
                            // Reported once, at the probe.
                            let why = "skip standby: no transport reaches the drive".to_string();
                            tracing::debug!("disk {key}: {why}");
                            self.decide(i, why);
                            return;
                        }
                        if let Some(at) = d.retry_at.filter(|&at| at > self.now()) {
                            let why = format!(
                                "skip standby: it failed {} times in a row; next try in {}",
                                d.failures,
                                at - self.now()
                            );
                            tracing::debug!("disk {key}: {why}");
                            self.decide(i, why);
                            return;
                        }
                        let now_unix = unix_now();
                        let st = self.state.disk(&key);
                        let bucket = st
                            .wear
                            .get_or_insert_with(|| WearBudget::full(per_day, now_unix));
                        // Peek: the token is taken once the checks below pass.
                        let mut peek = bucket.clone();
                        if let Err(wait) = peek.take(per_day, now_unix) {
                            let why = if wait.is_finite() {
                                format!(
                                    "skip standby: wear budget ({per_day} spin-downs a day, spread over the day) has its next spin-down in {} s",
                                    wait.ceil()
                                )
                            } else {
                                "skip standby: max_spindowns_per_day = 0".to_string()
                            };
                            info!("disk {key}: {why}");
                            self.decide(i, why);
                            return;
                        }
                        if let (Some(p), Some(b)) = (&self.disks[i].cfg.power, budget) {
                            let be = p.break_even();
                            if b.as_secs_f64() < be {
                                let why = format!(
                                    "skip standby: predicted idle {b} is below the break-even {be:.1} s of {}",
                                    p.name
                                );
                                info!("disk {key}: {why}");
                                self.decide(i, why);
                                return;
                            }
                        }
                        let st = self.state.disk(&key);
                        if let Some(b) = st.wear.as_mut() {
                            let _ = b.take(per_day, now_unix);
                        }
                        keep_last_day(&mut st.spindown_attempts_unix, now_unix);
                        st.spindown_attempts_unix.push(now_unix);
                        // Written at once: the wear budget must survive a
                        // crash, and `lull status` shows the attempt
                        // (rare: the budget bounds them).
                        self.urgent = true;
                        let budget_text = budget_text();
                        info!("disk {key}: idle, standby (predicted idle {budget_text})");
                        self.decide(i, format!("standby (predicted idle {budget_text})"));
                    }
                    TaskConfig::Flush => {
                        let devs: Vec<(u32, u32)> = std::iter::once(&d.tracker.family().disk)
                            .chain(&d.tracker.family().partitions)
                            .chain(&d.tracker.family().holders)
                            .filter_map(|n| sample.dev(n))
                            .collect();
                        info!("disk {key}: idle, flush");
                        self.decide(i, "flush".into());
                        self.task_start_hook(i, budget);
                        let d = &mut self.disks[i];
                        d.not_running = false;
                        d.flushing = !self.opts.dry_run;
                        let dev = PathBuf::from("/dev").join(&d.kernel);
                        let _ = d.orders.send(Order::Start { dev, devs });
                        return;
                    }
                    TaskConfig::Command { .. } => {
                        let budget_text = budget_text();
                        info!("disk {key}: idle, run command (predicted idle {budget_text})");
                        self.decide(i, format!("run command (predicted idle {budget_text})"));
                    }
                    TaskConfig::Jobs { .. } => {
                        let budget_text = budget_text();
                        info!("disk {key}: idle, jobs may run (predicted idle {budget_text})");
                        self.decide(
                            i,
                            format!("idle: jobs may run (predicted idle {budget_text})"),
                        );
                        self.task_start_hook(i, budget);
                        self.disks[i].not_running = false;
                        if let Some(j) = self.disks[i].jobs.as_mut() {
                            let switches = j.run.on_idle_begin(intent_time(&intent));
                            self.switch_jobs(i, switches);
                        }
                        return;
                    }
                }
                self.task_start_hook(i, budget);
                self.disks[i].not_running = false;
                let dev = PathBuf::from("/dev").join(&self.disks[i].kernel);
                let _ = self.disks[i].orders.send(Order::Start {
                    dev,
                    devs: Vec::new(),
                });
            }
        }
    }

    /// Runs disk `i`'s `on_task_start` hook (`LULL_BUDGET_S`: the
    /// predicted idle time, when the network predicts one).
    fn task_start_hook(&mut self, i: usize, budget: Option<Nanos>) {
        self.disks[i].acted = true;
        let extra = || {
            budget
                .map(|b| vec![("LULL_BUDGET_S", format!("{:.3}", b.as_secs_f64()))])
                .unwrap_or_default()
        };
        fire_hook(
            &self.hooks,
            &self.disks[i],
            self.now(),
            HookEvent::TaskStart,
            extra,
        );
    }

    /// Sends the jobs' actors the orders `switches` calls for.
    fn switch_jobs(&mut self, i: usize, switches: Vec<Switch>) {
        let d = &self.disks[i];
        let Some(j) = d.jobs.as_ref() else {
            return;
        };
        for s in switches {
            let (job, order) = match s {
                Switch::Start(job) => {
                    info!("disk {}: job {} runs", d.key, j.run.name(job));
                    let dev = PathBuf::from("/dev").join(&d.kernel);
                    (
                        job,
                        Order::Start {
                            dev,
                            devs: Vec::new(),
                        },
                    )
                }
                Switch::Stop(job) => {
                    info!("disk {}: job {} pauses", d.key, j.run.name(job));
                    (job, Order::Stop)
                }
            };
            let _ = j.actors[job].0.send(order);
        }
    }

    /// What a job's actor reports: logged with the job's name; failures
    /// count as the disk's errors; a running command's pid and start time
    /// are kept in the state file (written at once), so that a daemon
    /// killed with SIGKILL stops it at its next start.
    fn on_job_report(&mut self, key: &str, name: String, outcome: Outcome) {
        let st = self.state.disk(key);
        if let Outcome::CommandStarted(pid, start) = outcome {
            st.job_pids
                .insert(name.clone(), crate::state::JobProcess { pid, start });
            self.urgent = true;
            self.dirty = true;
        }
        if let Outcome::CommandExited(..) | Outcome::CommandStopped(..) = outcome {
            st.job_pids.remove(&name);
            self.urgent = true;
            self.dirty = true;
        }
        let text = match outcome {
            Outcome::CommandStarted(pid, _) => format!("command started, pid {pid}"),
            Outcome::CommandResumed(pid) => format!("command resumed (SIGCONT), pid {pid}"),
            Outcome::CommandPaused(pid) => format!("command paused (SIGSTOP), pid {pid}"),
            Outcome::CommandExited(pid, status) => {
                format!("command pid {pid} exited: {status} (it runs again at its next turn)")
            }
            Outcome::CommandStopped(pid, status) => {
                format!("command pid {pid} stopped by the daemon: {status}")
            }
            Outcome::DryRun(what) => format!("dry run: would {what}"),
            Outcome::Skipped(why) => why,
            Outcome::Failed(why) => {
                self.state.disk(key).errors += 1;
                self.dirty = true;
                error!("disk {key}: job {name}: {why}");
                return;
            }
            other => format!("{other:?}"),
        };
        info!("disk {key}: job {name}: {text}");
    }

    fn on_report(&mut self, r: Report) {
        self.release_code_soon();
        if let Some(name) = r.job {
            return self.on_job_report(&r.key, name, r.outcome);
        }
        let now = self.now();
        // A retired disk's report still counts; only the live fields of
        // the disk need the current actor's generation.
        let mut disk = self
            .disks
            .iter_mut()
            .find(|d| d.key == r.key && d.generation == r.generation);
        let key = r.key;
        let st = self.state.disk(&key);
        self.dirty = true;
        let text = match r.outcome {
            Outcome::SpunDown(how) => {
                st.spindowns += 1;
                if let Some(d) = disk.as_mut() {
                    d.failures = 0;
                    d.retry_at = None;
                    d.standby_since = Some(now);
                    d.sleep_snapshot = Some(wakeup::snapshot());
                    let env = vec![("LULL_RESULT", "ok".to_string())];
                    fire_hook(&self.hooks, d, now, HookEvent::Spindown, || env);
                }
                info!("disk {key}: in standby ({how})");
                format!("standby done ({how})")
            }
            Outcome::AlreadyStandby => {
                info!("disk {key}: already in standby");
                if let Some(d) = disk.as_mut() {
                    if d.standby_since.is_none() {
                        d.standby_since = Some(now);
                        d.sleep_snapshot = Some(wakeup::snapshot());
                    }
                    let env = vec![("LULL_RESULT", "already".to_string())];
                    fire_hook(&self.hooks, d, now, HookEvent::Spindown, || env);
                }
                "standby: the drive was already in standby".into()
            }
            Outcome::Flushed(mounts) => {
                if let Some(d) = disk.as_mut() {
                    d.flushing = false;
                    d.absorb_next = true;
                }
                let list: Vec<String> = mounts.iter().map(|m| m.display().to_string()).collect();
                info!(
                    "disk {key}: flushed {}",
                    if list.is_empty() {
                        "(no mounted file system)".into()
                    } else {
                        list.join(", ")
                    }
                );
                format!("flush done ({} file systems)", mounts.len())
            }
            Outcome::CommandStarted(pid, start) => {
                self.urgent = true;
                st.command_pid = Some(pid);
                st.command_start = start;
                info!("disk {key}: command started, pid {pid}");
                format!("command started (pid {pid})")
            }
            Outcome::CommandResumed(pid) => {
                info!("disk {key}: command resumed (SIGCONT), pid {pid}");
                format!("command resumed (pid {pid})")
            }
            Outcome::CommandPaused(pid) => {
                info!("disk {key}: command paused (SIGSTOP), pid {pid}");
                format!("command paused (pid {pid})")
            }
            Outcome::CommandExited(pid, status) => {
                self.urgent = true;
                st.command_pid = None;
                st.command_start = None;
                st.command_exits += 1;
                if let Some(d) = disk.as_mut() {
                    d.not_running = true;
                }
                info!("disk {key}: command pid {pid} exited: {status}");
                format!("command exited: {status}")
            }
            Outcome::CommandStopped(pid, status) => {
                self.urgent = true;
                st.command_pid = None;
                st.command_start = None;
                if let Some(d) = disk.as_mut() {
                    d.not_running = true;
                }
                info!("disk {key}: command pid {pid} stopped by the daemon: {status}");
                format!("command stopped by the daemon: {status}")
            }
            Outcome::Skipped(why) => {
                if let Some(d) = disk.as_mut() {
                    d.not_running = true;
                }
                info!("disk {key}: {why}");
                why
            }
            Outcome::Power(ps) => {
                let Some(d) = disk else {
                    return;
                };
                match (ps, d.standby_since) {
                    (PowerState::Active, Some(since)) => {
                        // Awake, though diskstats saw nothing: woken by a
                        // command the kernel does not count (SMART), or
                        // spun down and up by someone else.
                        st.spinups += 1;
                        st.foreign_spinups += 1;
                        st.standby_s += (now - since).as_secs_f64();
                        let (who, names) = woken_by(d, st, Wake::FOREIGN);
                        self.urgent = true;
                        info!(
                            "disk {key}: spun up by something else after {} in standby (CHECK POWER MODE: active, no I/O counted){who}",
                            now - since
                        );
                        let mut env = vec![(
                            "LULL_STANDBY_S",
                            format!("{:.3}", (now - since).as_secs_f64()),
                        )];
                        if let Some(n) = names {
                            env.push(("LULL_WOKEN_BY", n));
                        }
                        d.standby_since = None;
                        fire_hook(&self.hooks, d, now, HookEvent::Spinup, || env);
                        "spun up by something else".into()
                    }
                    (PowerState::Standby, None) => {
                        d.standby_since = Some(now);
                        d.sleep_snapshot = Some(wakeup::snapshot());
                        info!("disk {key}: found in standby (spun down by something else)");
                        "found in standby (spun down by something else)".into()
                    }
                    // Nothing new: no decision to record.
                    _ => return,
                }
            }
            Outcome::Transport(memo) => {
                // Logged by the actor; saved at once, so a restart does not
                // probe again.
                st.transport = Some(memo);
                self.urgent = true;
                return;
            }
            Outcome::DryRun(what) => {
                info!("disk {key}: dry run: would {what}");
                format!("dry run: would {what}")
            }
            Outcome::Failed(why) => {
                st.errors += 1;
                error!("disk {key}: {why}");
                if let Some(d) = disk.as_mut() {
                    d.flushing = false;
                    d.not_running = true;
                    if matches!(d.cfg.task, TaskConfig::Standby { .. }) {
                        let env = vec![
                            ("LULL_RESULT", "failed".to_string()),
                            ("LULL_ERROR", why.clone()),
                        ];
                        fire_hook(&self.hooks, d, now, HookEvent::Spindown, || env);
                        // A disk that cannot spin down (a virtual disk, an
                        // NVMe drive caught by a glob) is not retried at
                        // every idle period: after 3 failures in a row,
                        // 1 min, doubling to at most 1 h.
                        d.failures += 1;
                        if d.failures >= 3 {
                            let wait = Nanos::from_secs(60 << (d.failures - 3).min(6))
                                .min(Nanos::from_secs(3600));
                            d.retry_at = Some(now + wait);
                            warn!(
                                "disk {key}: standby failed {} times in a row; next try in {wait}",
                                d.failures
                            );
                        }
                    }
                }
                format!("error: {why}")
            }
        };
        let st = self.state.disk(&key);
        st.last_decision = text;
        st.last_decision_unix = unix_now();
    }

    fn gauges(&self) -> Vec<DiskGauges> {
        let now = self.now();
        self.disks
            .iter()
            .map(|d| {
                let st = self.state.disks.get(&d.key);
                let energy_saved_j = d.cfg.power.as_ref().zip(st).map(|(p, st)| {
                    let standby =
                        st.standby_s + d.standby_since.map_or(0.0, |s| (now - s).as_secs_f64());
                    (p.p_active - p.p_sleep) * standby - p.spinup_energy() * st.spinups as f64
                });
                DiskGauges {
                    key: d.key.clone(),
                    task: d.cfg.task.name(),
                    running: match &d.jobs {
                        Some(j) => j.run.running(),
                        None => d.engine.task_running() && !d.not_running,
                    },
                    in_standby: d.standby_since.is_some(),
                    energy_saved_j,
                    nodes: d.engine.detector().node_gauges(),
                    jobs: d.jobs.as_ref().map_or_else(Vec::new, |j| j.run.gauges(now)),
                }
            })
            .collect()
    }

    /// Saves the state (at most once a second unless `force`) and
    /// refreshes the metrics.
    fn save(&mut self, force: bool) {
        self.save_at(self.now(), force);
    }

    /// Writes the metrics and the state file if due at `now` (or `force`).
    fn save_at(&mut self, now: Nanos, force: bool) {
        // The state file is fsynced, which costs more than the rest of a
        // poll, on the system disk: counters that changed are written
        // every `state_interval` (default 1 min, never more often than
        // polls), and at once when something urgent changed (a command's
        // pid, which a restart after SIGKILL needs; a spin-down, spin-up
        // or wake, which `lull status` shows), and at stop. A crash loses
        // at most that much of the counters.
        // The metrics (no fsync) follow every change, at most once a second.
        let state_every = self.cfg.state_interval.max(self.cfg.poll);
        // Metrics are rendered only for someone: a textfile or an endpoint.
        let wants_metrics = self.cfg.metrics.textfile.is_some() || self.metrics_server.is_some();
        // A hook that ended changed its counters.
        self.dirty |= self.hooks.take_changed();
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
            return;
        }
        // Standby time so far counts, so a crash loses little of it.
        let mut snapshot = self.state.clone();
        for d in &self.disks {
            if let Some(since) = d.standby_since {
                snapshot.disk(&d.key).standby_s += (now - since).as_secs_f64();
            }
        }
        let text: Arc<str> = if wants_metrics {
            let mut text =
                metrics::render(&snapshot, &self.gauges(), self.polls, self.opts.dry_run);
            crate::hooks::render(&self.hooks.counts(), &mut text);
            Arc::from(text)
        } else {
            Arc::from("")
        };
        if let Some(tf) = &self.cfg.metrics.textfile {
            // Logged once per change of state, not at every save.
            match write_atomically(tf, text.as_bytes(), false) {
                Err(e) => {
                    let e = e.to_string();
                    if self.textfile_error.as_deref() != Some(e.as_str()) {
                        warn!(
                            "metrics textfile {}: {e} (said once until it changes)",
                            tf.display()
                        );
                        self.textfile_error = Some(e);
                    }
                }
                Ok(()) => {
                    if self.textfile_error.take().is_some() {
                        info!("metrics textfile {}: written again", tf.display());
                    }
                }
            }
        }
        self.metrics_tx.send_replace(text);
        if !self.opts.dry_run && (force || state_due) {
            self.last_state_save = Some(now);
            self.state_dirty = false;
            self.urgent = false;
            if let Err(e) = snapshot.save(&self.cfg.state_file) {
                error!(
                    "state file {}: cannot write: {e}",
                    self.cfg.state_file.display()
                );
            }
        }
        self.dirty = false;
        self.last_save = Some(now);
    }
}

/// Executes one disk's orders.
struct Actor {
    key: String,
    generation: u64,
    /// The job it runs the command of (`task = "jobs"`).
    job: Option<String>,
    task: TaskConfig,
    dry_run: bool,
    reports: mpsc::UnboundedSender<Report>,
    /// How standby reaches the drive (`task = "standby"` only).
    transport: Option<crate::transport::Chooser>,
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

pub(crate) fn signal_group(pid: u32, sig: Signal) -> Result<(), String> {
    let pid = i32::try_from(pid).map_err(|_| "pid out of range".to_string())?;
    killpg(Pid::from_raw(pid), sig).map_err(|e| format!("{sig} to process group {pid}: {e}"))
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

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Order>) {
        let mut child: Option<Running> = None;
        let mut last_exit: Option<tokio::time::Instant> = None;
        if !self.dry_run {
            if let Some(t) = self.transport.as_mut() {
                t.prepare().await;
                self.report_transport();
            }
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
                    let status = match status {
                        Ok(s) => s.to_string(),
                        Err(e) => format!("wait failed: {e}"),
                    };
                    self.report(Outcome::CommandExited(pid, status));
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
        if let Some(r) = child {
            if !r.paused {
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
}

#[cfg(test)]
mod tests {
    /// The resident file-backed pages of this process (`RssFile`), KiB.
    fn rss_file_kib() -> Option<u64> {
        std::fs::read_to_string("/proc/self/status")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("RssFile:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }

    #[test]
    fn diskstats_is_kept_open_on_procfs_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diskstats");
        std::fs::write(&path, "8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        let (mut file, mut buf) = (None, Vec::new());
        let n = super::read_diskstats(&mut file, &path, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n");
        assert!(file.is_none(), "a regular file is opened afresh");
        // Replaced (as tests and `write_atomically` do): the new content.
        let tmp = dir.path().join("new");
        std::fs::write(&tmp, "8 16 sdb 1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        let n = super::read_diskstats(&mut file, &path, &mut buf).unwrap();
        assert!(buf[..n].starts_with(b"8 16 sdb"));
        // A file larger than the buffer is read whole.
        let big: String = (0..2000)
            .map(|i| format!("8 {i} sd{i} 1 2 3 4 5 6 7 8 9 10 11\n"))
            .collect();
        std::fs::write(&path, &big).unwrap();
        let n = super::read_diskstats(&mut file, &path, &mut buf).unwrap();
        assert_eq!(&buf[..n], big.as_bytes());
        // /proc/diskstats stays open and reads the same devices each time.
        let proc = std::path::Path::new("/proc/diskstats");
        let Ok(want) = std::fs::read_to_string(proc) else {
            println!("skipping the procfs part: no /proc/diskstats");
            return;
        };
        let names = |t: &str| -> Vec<String> {
            t.lines()
                .filter_map(|l| l.split_ascii_whitespace().nth(2).map(str::to_string))
                .collect()
        };
        for round in 0..3 {
            let n = super::read_diskstats(&mut file, proc, &mut buf).unwrap();
            let got = std::str::from_utf8(&buf[..n]).unwrap();
            assert_eq!(names(got), names(&want), "read {round}");
            assert!(got.ends_with('\n'));
            assert!(file.is_some(), "procfs: kept open");
        }
    }

    #[test]
    fn code_pages_are_released_and_the_code_still_runs() {
        let before = rss_file_kib();
        let n = super::release_code_pages();
        assert!(n > 0, "the test binary has code mappings");
        let after = rss_file_kib();
        // Code runs after it (mapped back on use): formatting, allocating,
        // hashing, a thread.
        let v: Vec<String> = (0..1000).map(|i| format!("{i}")).collect();
        let set: std::collections::HashSet<&String> = v.iter().collect();
        let t = std::thread::spawn(|| 6 * 7).join().unwrap();
        assert_eq!((v[42].as_str(), set.len(), t), ("42", 1000, 42));
        // Relocated read-only data (pointers the loader wrote, in a
        // mapping made read-only afterwards) kept its contents.
        type Op = (&'static str, fn(u32) -> u32);
        static TABLE: [Op; 2] = [("double", |x| x * 2), ("square", |x| x * x)];
        let table = std::hint::black_box(&TABLE);
        assert_eq!(
            (table[1].0, (table[1].1)(7), (table[0].1)(7)),
            ("square", 49, 14)
        );
        if let (Some(b), Some(a)) = (before, after) {
            assert!(a < b, "RssFile {b} KiB before, {a} KiB after");
        }
    }
}
