//! The state file (SPEC §6.1): per-disk counters kept across restarts.
//!
//! A JSON object with one entry per disk, keyed by the disk's stable name
//! (the device as configured, or the glob match). Written atomically: a
//! temporary file in the same directory, `fsync`, `rename`, `fsync` of the
//! directory, so a crash or power cut leaves the old file or the new one,
//! never half of one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One disk's counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskState {
    /// Idle periods observed: a poll with activity followed by one without,
    /// and the disk's first poll of a run (or after it came back), where
    /// the engine sees a request complete and an idle period begin.
    pub idle_starts: u64,
    /// Times the idle task was started.
    pub task_starts: u64,
    /// Times it was stopped (the disk became busy, or the prediction ran out).
    pub task_stops: u64,
    /// Successful spin-downs.
    pub spindowns: u64,
    /// Activity seen on a disk lull had spun down.
    pub spinups: u64,
    /// Seconds spent in standby after lull's spin-downs.
    pub standby_s: f64,
    /// The last decision, in words.
    pub last_decision: String,
    /// When it was taken (Unix seconds).
    pub last_decision_unix: u64,
    /// When the current idle period began (Unix seconds), while the disk
    /// is idle; as of the last write of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_since_unix: Option<u64>,
    /// When the network decides next without new I/O (its earliest
    /// deadline, Unix seconds): a timer's spin-down, a prediction's end;
    /// as of the last write of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_decision_unix: Option<u64>,
    /// The kernel name the disk had last.
    pub kernel_name: String,
    /// Whether the disk was present at the last poll.
    pub present: bool,
    /// Errors while acting on the disk.
    pub errors: u64,
    /// The running command's process id, if any.
    pub command_pid: Option<u32>,
    /// Its start time (`/proc/PID/stat` clock ticks after boot): with the
    /// id, it names the process even after the id is reused.
    pub command_start: Option<u64>,
    /// Commands that ran to their end (not those the daemon stopped).
    pub command_exits: u64,
    /// Seconds a `command` disk's command ran, neither paused nor
    /// stopped: the idle time it was given (all time, kept across
    /// restarts).
    pub command_s: f64,
    /// The wear budget's token bucket ([`WearBudget`]).
    pub wear: Option<WearBudget>,
    /// Spin-ups the daemon did not cause seen by CHECK POWER MODE (the
    /// drive spun up while nothing counted in diskstats, or something
    /// else spun it down and up).
    pub foreign_spinups: u64,
    /// Disk wake-ups attributed to processes, by process name.
    pub wakeups: BTreeMap<String, u64>,
    /// When the wear budget was charged for a spin-down attempt (Unix
    /// seconds), those of the last 24 hours: what `lull status` shows as
    /// the day's spin-downs against `max_spindowns_per_day`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spindown_attempts_unix: Vec<u64>,
    /// The last wake of the disk and what caused it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_wake: Option<Wake>,
    /// `task = "jobs"`: the running commands, by job name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub job_pids: BTreeMap<String, JobProcess>,
    /// `backend = "auto"`: the transport its probe found (absent: not
    /// probed yet, as in state files older than the field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportMemo>,
    /// What the drive said it is ([`crate::identify`]): asked once per
    /// appearance, and the serial number the entry follows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// The drive the daemon resolved for the disk: what `lull status`
    /// shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive: Option<DriveRecord>,
    /// The shadow evaluation of the last 24 hours and 7 days (`standby`
    /// disks with a power model): what lull saved against fixed timeouts,
    /// the best fixed timeout and the oracle. Recomputed at each save from
    /// the activity log's records; what `lull status` shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow: Option<lull_activity::ShadowReport>,
    /// When the entry was moved aside to `serial:SERIAL` to wait for its
    /// drive (Unix seconds; [`State::forget_parked`]); cleared when the
    /// drive comes back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parked_unix: Option<u64>,
    /// What the disk's network has learned ([`lull_core::learned`]),
    /// restored at the next start when the network and the drive's B are
    /// the same; written at each idle period's end and at stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned: Option<lull_core::learned::Snapshot>,
    /// Since when (Unix seconds) the drive is in the standby the daemon
    /// knows of (its own spin-down, or found so), while it lasts: a
    /// daemon restarted while the drive sleeps knows that its previous
    /// run left it so, and does not take it for a drive spun down by
    /// something else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standby_unix: Option<u64>,
    /// The whole disk's completed I/O in diskstats (reads, writes,
    /// discards and flushes) while it was in that standby: a later run
    /// that finds the counters moved knows the drive did I/O while no
    /// daemon watched (a disk a reload removed and another added back, a
    /// daemon stopped for a while), so it was woken, and does not take
    /// the standby up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standby_io: Option<u64>,
    /// Since when (Unix seconds) the disk is absent from `/proc/diskstats`:
    /// the first poll that missed it (a daemon that started without it:
    /// its first poll), while it stays away; kept across a restart, so
    /// `lull status` without metrics says how long a disk has been gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vanished_unix: Option<u64>,
    /// The disk was watched and idle when the daemon last stopped cleanly
    /// (nothing in flight, its task not halfway through): the next run
    /// in the same boot that finds its completed I/O unchanged continues
    /// that idle period instead of starting from a baseline
    /// (at its first [`crate::controller::DiskController::on_poll`]). Taken at the
    /// next start, used or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_at_stop: Option<IdleAtStop>,
}

/// The decision a standby the last run left ends with when the machine
/// rebooted since ([`State::forget_standby_before`]).
pub const SPUN_UP_AT_BOOT: &str =
    "spun up at boot: the machine rebooted since the standby the last run left";

/// The running kernel's boot id (`/proc/sys/kernel/random/boot_id`), or
/// `None` when it cannot be read.
pub fn boot_id() -> Option<u128> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .and_then(|s| parse_boot_id(&s))
}

/// A boot id as the kernel writes it (a UUID: 32 hex digits, dashes
/// anywhere, a newline) as a number; `None` for anything else.
pub fn parse_boot_id(text: &str) -> Option<u128> {
    let hex: String = text.trim().chars().filter(|&c| c != '-').collect();
    (hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u128::from_str_radix(&hex, 16).ok())
        .flatten()
}

/// Where a disk stood when the daemon stopped while it was idle
/// ([`DiskState::idle_at_stop`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IdleAtStop {
    /// The kernel's boot id then (`/proc/sys/kernel/random/boot_id`,
    /// 32 hex digits): counters from another boot start from zero, and
    /// a disk read the same way at each boot can show the same count.
    pub boot_id: String,
    /// The whole disk's completed I/O then (reads, writes, discards and
    /// flushes, as [`DiskState::standby_io`]).
    pub io: u64,
    /// Its kernel name then.
    pub kernel: String,
    /// When its idle period began (Unix seconds; `None` from an older
    /// lull): the next run shows it idle since then.
    pub idle_since_unix: Option<u64>,
    /// When the daemon stopped (Unix seconds; `None` from an older lull):
    /// a next run that continues the idle period with the drive still in
    /// lull's standby counts the standby through the time between
    /// ([`DiskState::standby_s`]), as the evidence counts it.
    pub stopped_unix: Option<u64>,
}

pub use crate::identify::Identity;

/// The drive a disk was resolved to, as the state file records it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DriveRecord {
    /// The preset.
    pub preset: String,
    /// Where it came from: `config`, `identified`, `class` or `default`.
    pub preset_source: String,
    /// Why, in words.
    pub why: String,
    /// The break-even time B of the disk's task, in seconds.
    pub breakeven_s: f64,
    /// Why the daemon never spins it down, if it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_alone: Option<String>,
}

pub use crate::transport::TransportMemo;

/// A wake of a disk: I/O that ended an idle period in which the idle task
/// acted, or a spin-up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Wake {
    /// When the daemon saw it (Unix seconds).
    pub unix: u64,
    /// What it was: [`Wake::SPINUP`], [`Wake::FOREIGN`] or [`Wake::IO`].
    pub cause: String,
    /// The processes that most likely caused it, most likely first
    /// (the shell's `wakeup::suspects`): `unknown` when they are gone, `NAME?`
    /// when one did I/O but holds no file on the disk. Empty when no
    /// attribution was made (the disk was not in standby, so there was no
    /// snapshot to compare with).
    pub by: Vec<String>,
}

impl Wake {
    /// I/O on a disk in standby (lull's spin-down, or found asleep).
    pub const SPINUP: &'static str = "spinup";
    /// CHECK POWER MODE found a standby disk active, with no I/O counted.
    pub const FOREIGN: &'static str = "foreign-spinup";
    /// I/O ended an idle period in which the idle task started, on a disk
    /// that was not in standby (a failed or skipped spin-down, a flush, a
    /// command).
    pub const IO: &'static str = "io";

    /// Whether a wake of `cause` ended a standby (a power change, where
    /// [`Wake::IO`] is not one).
    pub fn from_standby(cause: &str) -> bool {
        cause == Wake::SPINUP || cause == Wake::FOREIGN
    }
}

/// Forgets the times in `times` (Unix seconds, ascending) older than a day
/// before `now_unix`.
pub fn keep_last_day(times: &mut Vec<u64>, now_unix: u64) {
    let from = now_unix.saturating_sub(86_400);
    times.retain(|&t| t > from);
}

/// A job's running command, named like [`DiskState::command_pid`] by its
/// pid and start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobProcess {
    /// Process id.
    pub pid: u32,
    /// Start time, clock ticks after boot.
    pub start: Option<u64>,
}

pub use lull_tasks::gate::WearBudget;

/// The key prefix of a drive's entry while the drive is away
/// ([`State::take_for`]).
pub const PARKED_PREFIX: &str = "serial:";
/// Days a drive's state waits under [`PARKED_PREFIX`] for the drive.
pub const PARKED_DAYS: u64 = 365;
/// At most this many absent drives' states are kept.
pub const PARKED_MAX: usize = 64;

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct State {
    /// By disk.
    pub disks: BTreeMap<String, DiskState>,
}

impl State {
    /// Reads `path`; a missing file is an empty state. A file that does
    /// not parse is an `InvalidData` error (the caller keeps it aside with
    /// [`State::keep_corrupt`] and starts afresh).
    pub fn load(path: &Path) -> std::io::Result<State> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: not a lull state file: {e}", path.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(e),
        }
    }

    /// Forgets the standbys that began before the machine booted at
    /// `booted_unix` ([`DiskState::standby_unix`]): a reboot ends them
    /// (drives spin up at power-on, and the kernel starts them), so a
    /// daemon started after one must not take its drives for asleep.
    /// The end is the disk's last decision ([`SPUN_UP_AT_BOOT`], at the
    /// boot): every power change the daemon knows of is a decision or a
    /// wake, and `lull status` bounds the time in a state by the later of
    /// the two; the standby's words ("standby done") would otherwise stand
    /// for a drive awake since the boot. Returns the disks whose standby
    /// it forgot.
    pub fn forget_standby_before(&mut self, booted_unix: u64) -> Vec<String> {
        let mut forgot = Vec::new();
        for (key, d) in &mut self.disks {
            if d.standby_unix.is_some_and(|t| t < booted_unix) {
                d.standby_unix = None;
                d.last_decision = SPUN_UP_AT_BOOT.to_string();
                d.last_decision_unix = booted_unix;
                forgot.push(key.clone());
            }
        }
        forgot
    }

    /// Takes from a dry run's state file at `dry_run` what its networks
    /// learned, for each disk whose own entry has nothing learned yet: a
    /// week of `lulld --dry-run` beside hd-idle trains `auto` on the disk,
    /// and the switch keeps it. Only the learned state is taken (the dry
    /// run's counters are what lull *would* have done); it goes into the
    /// network only if it fits (same network and B), as any restore.
    /// Returns the disks it took.
    pub fn carry_over_learned(&mut self, dry_run: &Path) -> Vec<String> {
        let Ok(dry) = State::load(dry_run) else {
            return Vec::new();
        };
        let mut taken = Vec::new();
        for (key, d) in dry.disks {
            let Some(learned) = d.learned else { continue };
            let own = self.disks.entry(key.clone()).or_default();
            if own.learned.is_none() {
                tracing::info!(
                    "disk {key}: takes what the dry run ({}) learned: {} idle periods",
                    dry_run.display(),
                    learned.idle_periods
                );
                own.learned = Some(learned);
                if own.identity.is_none() {
                    own.identity = d.identity;
                }
                taken.push(key);
            }
        }
        taken
    }

    /// Moves a state file that does not parse to
    /// `NAME.corrupt-UNIXTIME` beside it, so starting afresh loses nothing
    /// an admin may want to look at. Returns the new path.
    pub fn keep_corrupt(path: &Path, now_unix: u64) -> std::io::Result<PathBuf> {
        let name = path
            .file_name()
            .map_or_else(|| "state".into(), |n| n.to_string_lossy().into_owned());
        let to = path.with_file_name(format!("{name}.corrupt-{now_unix}"));
        std::fs::rename(path, &to)?;
        Ok(to)
    }

    /// Writes the state to `path` atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        json.push(b'\n');
        write_atomically(path, &json, true)
    }

    /// The entry for the disk `key` whose drive is `identity`, taken out
    /// of the map, and a note when it is not simply the entry of `key`:
    ///
    /// - an entry of `key` that belongs to another drive (another serial
    ///   number) is moved aside to `serial:SERIAL`, where it waits for its
    ///   drive;
    /// - the entry with the drive's serial number is taken, the key's own
    ///   first, else wherever it is (the drive came back under another
    ///   kernel name);
    /// - else the entry of `key` if it names no drive (a state file older
    ///   than identification), else a fresh one.
    pub fn take_for(
        &mut self,
        key: &str,
        identity: Option<&Identity>,
    ) -> (DiskState, Option<String>) {
        let Some(serial) = identity.and_then(|i| i.serial.as_deref()) else {
            return (self.disks.remove(key).unwrap_or_default(), None);
        };
        let serial_of = |d: &DiskState| d.identity.as_ref().and_then(|i| i.serial.clone());
        let mut note = None;
        if let Some(other) = self.disks.get(key).and_then(serial_of)
            && other != serial
        {
            let aside = format!("{PARKED_PREFIX}{other}");
            if let Some(d) = self.disks.remove(key) {
                note = Some(format!(
                    "{key} is now drive {serial}; the state of drive {other} is kept as {aside:?} until it is back"
                ));
                self.disks.insert(aside, d);
            }
        }
        // The key's own entry first: two enclosures whose bridges give
        // every unit one serial string (sysfs's name for a drive without
        // its own) must not take each other's state.
        let found = std::iter::once(key)
            .filter(|k| self.disks.get(*k).and_then(serial_of).as_deref() == Some(serial))
            .map(str::to_string)
            .next()
            .or_else(|| {
                self.disks
                    .iter()
                    .find(|(_, d)| serial_of(d).as_deref() == Some(serial))
                    .map(|(k, _)| k.clone())
            });
        match found {
            Some(k) => {
                let mut d = self.disks.remove(&k).unwrap_or_default();
                d.parked_unix = None;
                if k != key {
                    let moved = format!("drive {serial} was {k:?}: its state follows it to {key}");
                    note = Some(match note {
                        Some(n) => format!("{n}; {moved}"),
                        None => moved,
                    });
                }
                (d, note)
            }
            None => (self.disks.remove(key).unwrap_or_default(), note),
        }
    }

    /// Forgets the states of drives that waited under `serial:SERIAL` (see
    /// [`State::take_for`]) for more than [`PARKED_DAYS`], and beyond the
    /// [`PARKED_MAX`] that waited least, so that a machine that sees many
    /// drives pass (a backup rotation, a recovery bench) does not keep
    /// and rewrite every one it ever met. An entry parked without a date
    /// (moved aside just now, or by a daemon older than the date) is dated
    /// `now_unix`. A clock before 2020 is not believed (a board without a
    /// real-time clock, before NTP): nothing is dated or forgotten by age
    /// then, and dates from such a clock are taken again. Returns a line
    /// for each drive forgotten.
    pub fn forget_parked(&mut self, now_unix: u64) -> Vec<String> {
        const BELIEVED: u64 = 1_577_836_800; // 2020-01-01
        let clock = now_unix >= BELIEVED;
        let mut parked: Vec<(u64, String)> = self
            .disks
            .iter_mut()
            .filter(|(k, _)| k.starts_with(PARKED_PREFIX))
            .map(|(k, d)| {
                if clock && d.parked_unix.is_none_or(|t| t < BELIEVED) {
                    d.parked_unix = Some(now_unix);
                }
                (d.parked_unix.unwrap_or(now_unix), k.clone())
            })
            .collect();
        // Longest parked first; ties by key, for a deterministic choice.
        parked.sort();
        let over = parked.len().saturating_sub(PARKED_MAX);
        let mut said = Vec::new();
        for (i, (since, key)) in parked.into_iter().enumerate() {
            let days = now_unix.saturating_sub(since) / 86_400;
            let why = if clock && days > PARKED_DAYS {
                format!("not seen for {days} days")
            } else if i < over {
                format!(
                    "more than {PARKED_MAX} absent drives are kept, and it left longest ago ({days} days)"
                )
            } else {
                continue;
            };
            self.disks.remove(&key);
            let drive = &key[PARKED_PREFIX.len()..];
            said.push(format!("the state of drive {drive} is forgotten: {why}"));
        }
        said
    }

    /// The entry of `key`, created if needed.
    pub fn disk(&mut self, key: &str) -> &mut DiskState {
        // Called for every disk at every poll: allocate only when new.
        if !self.disks.contains_key(key) {
            self.disks.insert(key.to_string(), DiskState::default());
        }
        self.disks.get_mut(key).expect("inserted above")
    }
}

/// Writes `bytes` to `path` through a temporary file and `rename`, so
/// readers see the old or the new content, never a mix. `durable` adds the
/// `fsync`s that make it survive a power cut (the state file needs them; a
/// metrics textfile, rewritten every second, does not).
pub fn write_atomically(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        drop(f);
        std::fs::rename(&tmp, path)?;
        // The rename is durable once the directory is.
        if durable && let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(serial: &str, spindowns: u64) -> DiskState {
        DiskState {
            spindowns,
            identity: Some(Identity {
                serial: Some(serial.into()),
                ..Identity::default()
            }),
            ..DiskState::default()
        }
    }

    fn id(serial: &str) -> Identity {
        Identity {
            serial: Some(serial.into()),
            ..Identity::default()
        }
    }

    /// Issue 34: two drives come back under each other's kernel names;
    /// each takes its own counters, wherever they were kept.
    #[test]
    fn state_follows_the_serial_number_not_the_kernel_name() {
        let mut st = State::default();
        st.disks.insert("sdb".into(), drive("USB-A", 7));
        st.disks.insert("sdc".into(), drive("SCSI-B", 3));
        // Drive B is now sdb: A's entry is moved aside, B's follows it.
        let (b, note) = st.take_for("sdb", Some(&id("SCSI-B")));
        assert_eq!(b.spindowns, 3);
        let note = note.unwrap();
        assert!(note.contains("USB-A") && note.contains("\"sdc\""), "{note}");
        assert_eq!(st.disks["serial:USB-A"].spindowns, 7);
        // Drive A is now sdc: its entry is found by its serial number.
        let (a, _) = st.take_for("sdc", Some(&id("USB-A")));
        assert_eq!(a.spindowns, 7);
        assert!(st.disks.is_empty(), "{:?}", st.disks.keys());
        // A new drive under a known name does not take another's state.
        st.disks.insert("sdd".into(), drive("OLD", 5));
        let (fresh, _) = st.take_for("sdd", Some(&id("NEW")));
        assert_eq!(fresh.spindowns, 0);
        assert_eq!(st.disks["serial:OLD"].spindowns, 5);
        // An entry from before identification is the drive's own.
        st.disks.insert(
            "sde".into(),
            DiskState {
                spindowns: 9,
                ..DiskState::default()
            },
        );
        assert_eq!(st.take_for("sde", Some(&id("X"))).0.spindowns, 9);
        // Two drives with one serial (USB bridges that give every unit
        // the same string): each key keeps its own entry.
        st.disks.insert("sdf".into(), drive("SAME", 1));
        st.disks.insert("sdg".into(), drive("SAME", 4));
        assert_eq!(st.take_for("sdg", Some(&id("SAME"))).0.spindowns, 4);
        assert_eq!(st.take_for("sdf", Some(&id("SAME"))).0.spindowns, 1);
        // Without a serial number, the kernel name is all there is.
        st.disks.insert("loop0".into(), drive("L", 2));
        assert_eq!(st.take_for("loop0", None).0.spindowns, 2);
    }

    /// A drive's state waits for it a year, and no more than
    /// [`PARKED_MAX`] absent drives are kept: the longest gone go first.
    #[test]
    fn absent_drives_are_forgotten_after_a_year_or_beyond_the_cap() {
        let day = 86_400;
        // Day 20,000 is in 2024 (a clock before 2020 is not believed).
        let d0 = 20_000;
        let mut st = State::default();
        st.disks.insert("sdb".into(), drive("OLD", 5));
        st.disks.insert("sdc".into(), drive("KEPT", 1));
        // A new drive on sdb parks OLD; dated when first seen parked.
        st.take_for("sdb", Some(&id("NEW")));
        assert!(st.forget_parked(d0 * day).is_empty());
        assert_eq!(st.disks["serial:OLD"].parked_unix, Some(d0 * day));
        // A year later it is still kept; a day more, forgotten.
        assert!(st.forget_parked((d0 + 365) * day).is_empty());
        let said = st.forget_parked((d0 + 366) * day + 1);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("OLD") && said[0].contains("366 days"),
            "{}",
            said[0]
        );
        assert!(!st.disks.contains_key("serial:OLD"));
        assert!(
            st.disks.contains_key("sdc"),
            "present drives are not touched"
        );
        // A drive that comes back is no longer parked.
        st.disks.insert("serial:BACK".into(), drive("BACK", 2));
        st.forget_parked((d0 + 400) * day);
        let (back, _) = st.take_for("sdd", Some(&id("BACK")));
        assert_eq!((back.spindowns, back.parked_unix), (2, None));
        // The cap: the ones parked longest go first.
        for i in 0..PARKED_MAX + 3 {
            let serial = format!("P{i:03}");
            st.disks
                .insert(format!("serial:{serial}"), drive(&serial, 0));
            st.forget_parked((d0 + 500) * day + i as u64);
        }
        let parked: Vec<&String> = st
            .disks
            .keys()
            .filter(|k| k.starts_with("serial:"))
            .collect();
        assert_eq!(parked.len(), PARKED_MAX);
        assert_eq!(parked[0], "serial:P003", "{parked:?}");
        // A clock from before NTP set it dates nothing and forgets nothing
        // by age; the date is taken again once the clock is right.
        let mut st = State::default();
        st.disks.insert("serial:PI".into(), drive("PI", 1));
        assert!(st.forget_parked(600).is_empty());
        assert_eq!(st.disks["serial:PI"].parked_unix, None);
        st.disks.get_mut("serial:PI").unwrap().parked_unix = Some(900);
        assert!(st.forget_parked(d0 * day).is_empty());
        assert_eq!(st.disks["serial:PI"].parked_unix, Some(d0 * day));
    }

    #[test]
    fn round_trips_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        assert_eq!(State::load(&p).unwrap(), State::default());
        let mut s = State::default();
        s.disk("sda").spindowns = 3;
        s.disk("sda").last_decision = "standby".into();
        s.save(&p).unwrap();
        let back = State::load(&p).unwrap();
        assert_eq!(back, s);
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        for k in [
            "idle_starts",
            "task_starts",
            "task_stops",
            "spindowns",
            "spinups",
            "standby_s",
            "last_decision",
        ] {
            assert!(v["sda"].get(k).is_some(), "{k}");
        }
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // An unwritable place fails and leaves nothing.
        let bad = p.join("below-a-file.json");
        assert!(s.save(&bad).is_err());
    }

    #[test]
    fn a_corrupt_file_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        std::fs::write(&p, "{ half a fi").unwrap();
        let e = State::load(&p).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        let kept = State::keep_corrupt(&p, 1234).unwrap();
        assert_eq!(kept, dir.path().join("state.json.corrupt-1234"));
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "{ half a fi");
        assert!(!p.exists());
    }

    #[test]
    fn only_what_a_dry_run_learned_is_taken_and_only_where_nothing_was() {
        let snapshot = |periods: u64| lull_core::learned::Snapshot {
            format: lull_core::learned::SNAPSHOT_FORMAT,
            network: "auto".into(),
            breakeven_ns: 72_000_000_000,
            idle_periods: periods,
            since_unix: 1_800_000_000,
            parts: vec![],
        };
        let dir = tempfile::tempdir().unwrap();
        let dry = dir.path().join("state.dry-run.json");
        let mut d = State::default();
        for (key, n) in [("sda", 100), ("sdb", 200), ("sdc", 300)] {
            let mut e = drive(key, 7);
            e.learned = Some(snapshot(n));
            d.disks.insert(key.into(), e);
        }
        d.save(&dry).unwrap();
        let mut real = State::default();
        let mut sdb = drive("sdb", 1);
        sdb.learned = Some(snapshot(5));
        real.disks.insert("sdb".into(), sdb);
        real.disks.insert("sda".into(), drive("sda", 2));
        let taken = real.carry_over_learned(&dry);
        assert_eq!(taken, ["sda", "sdc"]);
        // Learned state where there was none; the real counters stay.
        assert_eq!(real.disks["sda"].learned, Some(snapshot(100)));
        assert_eq!(real.disks["sda"].spindowns, 2);
        assert_eq!(real.disks["sdb"].learned, Some(snapshot(5)));
        assert_eq!(real.disks["sdc"].spindowns, 0);
        assert_eq!(real.disks["sdc"].identity, Some(id("sdc")));
        // No dry run: nothing.
        assert!(real.carry_over_learned(&dir.path().join("none")).is_empty());
    }

    #[test]
    fn a_reboot_ends_the_standby_the_last_run_left() {
        let mut s = State::default();
        for (key, t) in [("sda", Some(1_000)), ("sdb", Some(2_000)), ("sdc", None)] {
            s.disks.entry(key.into()).or_default().standby_unix = t;
        }
        assert_eq!(s.forget_standby_before(1_500), ["sda"]);
        assert_eq!(s.disks["sda"].standby_unix, None);
        // The reboot is its last decision: the drive is awake since then.
        assert_eq!(
            (
                s.disks["sda"].last_decision.as_str(),
                s.disks["sda"].last_decision_unix
            ),
            (SPUN_UP_AT_BOOT, 1_500)
        );
        assert_eq!(s.disks["sdb"].last_decision_unix, 0);
        assert_eq!(s.disks["sdb"].standby_unix, Some(2_000));
        assert_eq!(s.disks["sdc"].standby_unix, None);
    }
}
