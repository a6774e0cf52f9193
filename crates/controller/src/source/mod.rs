//! The live source: `/proc/diskstats` counter deltas turned into the
//! engine's arrival and completion events.
//!
//! # The approximation
//!
//! diskstats has counters, not requests, so each poll is turned into
//! requests as follows (SPEC §2: same event types as replay):
//!
//! - The `n` reads, writes, discards and flushes completed since the last
//!   poll at `t0` become `n` requests spread evenly over `(t0, t]`: the
//!   interval is cut into `n` slots and request `i` ends at the end of slot
//!   `i`, lasting `io_ticks delta / n` (the kernel's own busy time, at least
//!   1 ns, at most the slot; the whole slot when the kernel reports no busy
//!   time), and arriving after `t0` (the first one a nanosecond after it,
//!   so a deadline the daemon acted on at `t0` came first). The last request therefore completes at the poll: an idle period
//!   is only ever seen to start at a poll that found no new work, so idle
//!   time is under-estimated by at most one poll interval and the daemon
//!   errs on the side of not acting.
//! - A poll that finds I/O in flight holds one synthetic request open from
//!   that poll until the first poll that finds none: a single slow request
//!   (a spin-up, a long flush) keeps the disk busy although nothing
//!   completed.
//! - At most [`MAX_EVENTS_PER_POLL`] requests per disk and poll (the counts
//!   are scaled down beyond that); a disk that busy is not idle anyway, and
//!   the bound keeps the daemon's CPU time flat under heavy load.
//! - A disk's activity is the largest of its own counters, the sum over its
//!   partitions and the sum over the device-mapper (or md) devices that hold
//!   it or its partitions, followed transitively. The kernel rolls partition
//!   I/O into the disk's counters, but a stack of dm devices can queue or
//!   split work, so looking at every layer sees activity wherever it shows
//!   first.
//! - Only completed reads, writes, discards, flushes and the in-flight gauge
//!   count. SMART queries and `hdparm -C` are pass-through commands the
//!   kernel does not count as reads or writes; they can move `io_ticks`,
//!   which is therefore used only to size busy time, so monitoring tools do
//!   not keep disks awake.
//!
//! # Vanishing devices, suspend and late polls
//!
//! A disk missing from diskstats is *absent*: its held request (if any)
//! completes, its counters are forgotten, and when it reappears (a USB disk
//! plugged back, possibly under another kernel name, which the daemon
//! re-resolves) its first sample is only a baseline. Counters that go down
//! are a 32-bit wrap or a re-created device ([`crate::diskstats::counter_delta`]).
//!
//! A poll that comes much later than planned (the machine was suspended,
//! the daemon was stopped or starved: detected on `CLOCK_BOOTTIME`, which
//! keeps counting in suspend) does not declare the gap idle, since nobody
//! watched it: the counters are re-based and the gap becomes one busy
//! request from the previous poll to this one. Detectors keep what they
//! learned, a running idle task is stopped, and idleness is measured afresh
//! from this poll. Wall-clock jumps (NTP, manual `date`) never matter: no
//! wall clock is read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lull_activity::{Poll, PollKind};
use lull_core::event::Event;
use lull_core::time::Nanos;

use crate::diskstats::{Counters, Delta, DiskStat, counter_delta};

/// The most requests one disk turns into per poll.
pub use lull_activity::poll::MAX_EVENTS_PER_POLL;

/// A disk and the block devices whose activity is its activity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Family {
    /// The whole disk's kernel name.
    pub disk: String,
    /// Its partitions.
    pub partitions: Vec<String>,
    /// Devices stacked on it or its partitions (dm, md), transitively.
    pub holders: Vec<String>,
}

impl Family {
    /// Finds the partitions and holders of `disk` in sysfs (under
    /// `sysfs_root`, normally `/sys`). Without sysfs entries for the disk,
    /// partitions are recognised by name among `names` (`sda` → `sda1`,
    /// `nvme0n1` → `nvme0n1p1`).
    pub fn discover<'a>(
        disk: &str,
        sysfs_root: &Path,
        names: impl Iterator<Item = &'a str>,
    ) -> Family {
        let class = sysfs_root.join("class/block");
        let mut fam = Family {
            disk: disk.to_string(),
            ..Family::default()
        };
        let disk_dir = class.join(disk);
        if disk_dir.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&disk_dir) {
                for e in rd.flatten() {
                    if e.path().join("partition").is_file() {
                        fam.partitions
                            .push(e.file_name().to_string_lossy().into_owned());
                    }
                }
            }
        } else {
            fam.partitions = names
                .filter(|n| is_partition_name(disk, n))
                .map(str::to_string)
                .collect();
        }
        fam.partitions.sort();
        let mut queue: Vec<PathBuf> = fam
            .partitions
            .iter()
            .map(|p| disk_dir.join(p))
            .chain(std::iter::once(disk_dir.clone()))
            .collect();
        let mut depth = 0;
        while !queue.is_empty() && depth < 8 {
            let mut next = Vec::new();
            for dir in queue {
                let Ok(rd) = std::fs::read_dir(dir.join("holders")) else {
                    continue;
                };
                for e in rd.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name != fam.disk && !fam.holders.contains(&name) {
                        next.push(class.join(&name));
                        fam.holders.push(name);
                    }
                }
            }
            queue = next;
            depth += 1;
        }
        fam.holders.sort();
        fam
    }

    fn members(&self) -> impl Iterator<Item = (&str, Group)> {
        std::iter::once((self.disk.as_str(), Group::Disk))
            .chain(
                self.partitions
                    .iter()
                    .map(|p| (p.as_str(), Group::Partition)),
            )
            .chain(self.holders.iter().map(|h| (h.as_str(), Group::Holder)))
    }
}

/// `name` is a partition of `disk` by the kernel's naming rule.
pub fn is_partition_name(disk: &str, name: &str) -> bool {
    let Some(rest) = name.strip_prefix(disk) else {
        return false;
    };
    let digits = if disk.ends_with(|c: char| c.is_ascii_digit()) {
        match rest.strip_prefix('p') {
            Some(d) => d,
            None => return false,
        }
    } else {
        rest
    };
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Disk,
    Partition,
    Holder,
}

/// One parsed diskstats sample, indexed by name.
///
/// The daemon keeps one and [`Sample::update`]s it at every poll: the
/// entries (and their names' buffers) are reused, the name index is rebuilt
/// only when the list of devices changed, and counters are parsed only
/// for the devices some disk watches ([`Sample::set_wanted`], remembered
/// per line: the kernel keeps its order, so an unchanged line needs no
/// lookup). A poll of an unchanged system allocates nothing.
///
/// It keeps the previous update's text in one buffer: a line that is byte
/// for byte the one of the previous update (a device with no I/O since)
/// is not parsed at all, and is marked not [`Sample::fresh`], so that a
/// [`DiskTracker`] whose devices all kept their lines skips its deltas. On
/// a quiet system a poll is then one comparison of the whole file.
#[derive(Debug, Default)]
pub struct Sample {
    entries: Vec<Entry>,
    /// Entries in use (the rest keep their buffers for later).
    len: usize,
    index: HashMap<String, usize>,
    changed: bool,
    /// Names this layout: positions ([`Sample::position`]) stay valid
    /// while it does not change. Unique across samples.
    layout: u64,
    /// The text of the last update, one buffer (a quiet poll compares it
    /// whole, or line by line, without touching a buffer per line).
    text: Vec<u8>,
}

#[derive(Debug, Default)]
struct Entry {
    name: String,
    dev: (u32, u32),
    counters: Option<Counters>,
    /// Its counters are parsed ([`Sample::set_wanted`]).
    wanted: bool,
    /// Where its line stands in `Sample::text` (empty for a
    /// [`Sample::new`] entry).
    span: std::ops::Range<usize>,
    /// Its counters may differ from the previous update's.
    fresh: bool,
}

impl Entry {
    /// Its counters stand for its line as kept (a line from an update,
    /// parsed if wanted): an identical line needs no parse.
    fn settled(&self) -> bool {
        !self.span.is_empty() && (self.counters.is_some() || !self.wanted)
    }
}

/// A new [`Sample`] layout number: each re-index takes the next one, so a
/// position learned from one sample is never taken for another's.
fn next_layout() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Sample {
    /// Indexes parsed lines.
    pub fn new(stats: Vec<DiskStat>) -> Sample {
        let mut s = Sample {
            len: stats.len(),
            entries: stats
                .into_iter()
                .map(|d| Entry {
                    name: d.name,
                    dev: (d.major, d.minor),
                    counters: Some(d.counters),
                    wanted: true,
                    span: 0..0,
                    fresh: true,
                })
                .collect(),
            index: HashMap::new(),
            changed: true,
            layout: 0,
            text: Vec::new(),
        };
        s.reindex();
        s
    }

    fn reindex(&mut self) {
        self.layout = next_layout();
        self.index.clear();
        for (i, e) in self.entries[..self.len].iter().enumerate() {
            self.index.entry(e.name.clone()).or_insert(i);
        }
    }

    /// Reads a new diskstats `text` into the sample, parsing the counters
    /// of the wanted devices ([`Sample::set_wanted`]), of every device if
    /// `all`, and of every line whose device is not the one the line had
    /// before (the others, if their line changed, read as absent from
    /// [`Sample::get`] until [`Sample::fill`]). Every line's device number
    /// and name are checked; a line that does not parse is an error naming
    /// it, after which the sample is empty.
    ///
    /// A line identical to the one at the same place in the previous
    /// update is taken as it stands (same device, same counters) unless
    /// `all`; every other entry is [`Sample::fresh`].
    pub fn update(&mut self, text: &str, all: bool) -> Result<(), crate::diskstats::ParseError> {
        // The whole file as it was (no I/O on any device): nothing to
        // parse, unless a wanted device still lacks its counters.
        if !all
            && self.len > 0
            && self.text == text.as_bytes()
            && self.entries[..self.len].iter().all(Entry::settled)
        {
            for e in &mut self.entries[..self.len] {
                e.fresh = false;
            }
            self.changed = false;
            return Ok(());
        }
        let result = self.update_lines(text, all);
        self.text.clear();
        if result.is_ok() {
            self.text.extend_from_slice(text.as_bytes());
        }
        result
    }

    fn update_lines(&mut self, text: &str, all: bool) -> Result<(), crate::diskstats::ParseError> {
        let mut n = 0;
        let mut changed = false;
        for (i, line) in text.lines().enumerate() {
            // Where the line stands in `text` (its bytes are `text`'s).
            let start = line.as_ptr() as usize - text.as_ptr() as usize;
            let span = start..start + line.len();
            if !all
                && let Some(e) = self.entries[..self.len].get_mut(n)
                && e.settled()
                && self.text.get(e.span.clone()) == Some(line.as_bytes())
            {
                e.fresh = false;
                e.span = span;
                n += 1;
                continue;
            }
            let known = self.entries.get(n);
            let parsed = crate::diskstats::parse_head(line).and_then(|(ma, mi, name, rest)| {
                let want = all || known.is_none_or(|e| e.wanted || e.name != name);
                let c = if want {
                    Some(crate::diskstats::parse_counters(name, rest)?)
                } else {
                    None
                };
                Ok((ma, mi, name, c))
            });
            let (major, minor, name, counters) = match parsed {
                Ok(p) => p,
                Err(_) if line.trim().is_empty() => continue,
                Err(reason) => {
                    self.len = 0;
                    self.index.clear();
                    self.layout = next_layout();
                    self.changed = true;
                    return Err(crate::diskstats::ParseError {
                        line: i + 1,
                        reason,
                    });
                }
            };
            if n == self.entries.len() {
                self.entries.push(Entry::default());
            }
            let e = &mut self.entries[n];
            if e.name != name {
                e.name.clear();
                e.name.push_str(name);
                // Until told otherwise: parsed, as a new device may be one
                // a disk is about to watch.
                e.wanted = true;
                changed = true;
            }
            e.dev = (major, minor);
            e.counters = counters;
            e.span = span;
            e.fresh = true;
            n += 1;
        }
        changed |= n != self.len;
        self.len = n;
        self.changed = changed;
        if changed {
            self.reindex();
        }
        Ok(())
    }

    /// Says which devices' counters the next updates parse.
    pub fn set_wanted(&mut self, wanted: impl Fn(&str) -> bool) {
        for e in &mut self.entries[..self.len] {
            e.wanted = wanted(&e.name);
        }
    }

    /// Parses the counters [`Sample::update`] skipped, from the same
    /// `text`: for devices a disk started to watch after it.
    pub fn fill(&mut self, text: &str) {
        let mut n = 0;
        for line in text.lines() {
            let Ok((_, _, name, rest)) = crate::diskstats::parse_head(line) else {
                continue;
            };
            let Some(e) = self.entries[..self.len].get_mut(n) else {
                return;
            };
            n += 1;
            if e.counters.is_none() && e.name == name {
                e.counters = crate::diskstats::parse_counters(name, rest).ok();
                e.fresh = true;
            }
        }
    }

    /// Whether the list of devices differs from the previous update's.
    pub fn names_changed(&self) -> bool {
        self.changed
    }

    /// The counters of `name`, if present (and parsed).
    pub fn get(&self, name: &str) -> Option<&Counters> {
        self.index
            .get(name)
            .and_then(|&i| self.entries[i].counters.as_ref())
    }
    /// Where `name` stands in this sample's layout ([`Sample::layout`]),
    /// for [`Sample::at`] and [`Sample::fresh`].
    pub fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
    /// The counters at `position`, if parsed.
    pub fn at(&self, position: usize) -> Option<&Counters> {
        self.entries[..self.len]
            .get(position)
            .and_then(|e| e.counters.as_ref())
    }
    /// Whether the counters at `position` may differ from the previous
    /// update's (`false` only when its line was the same, byte for byte).
    pub fn fresh(&self, position: usize) -> bool {
        self.entries[..self.len]
            .get(position)
            .is_none_or(|e| e.fresh)
    }
    /// Names the list of devices: positions found in a sample stay valid
    /// in it while this number does not change, and are never valid in
    /// another sample.
    pub fn layout(&self) -> u64 {
        self.layout
    }
    /// The device number (major, minor) of `name`, if present.
    pub fn dev(&self, name: &str) -> Option<(u32, u32)> {
        self.index.get(name).map(|&i| self.entries[i].dev)
    }
    /// How many devices it lists.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it lists none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Every device name, in the file's order.
    pub fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.entries[..self.len].iter().map(|e| e.name.as_str())
    }
}

/// What one poll found for one disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollOutcome {
    /// The disk is in diskstats.
    pub present: bool,
    /// It came back after being absent (or was seen for the first time
    /// after the daemon started without it).
    pub appeared: bool,
    /// It disappeared at this poll.
    pub vanished: bool,
    /// It did or had I/O since the last poll.
    pub active: bool,
    /// An idle period began: the previous poll was active and this one is
    /// not, or this poll is a baseline (first sight, or back after being
    /// absent), which the engine sees as a request just completed.
    pub idle_started: bool,
    /// When the idle period that began (`idle_started`) began: the poll
    /// whose requests completed last (each poll's last request completes
    /// at the poll), or a baseline's own time. The engine's idle period
    /// and its timers start there, a poll before the first quiet poll.
    pub idle_from: Option<Nanos>,
    /// The poll was late; the gap was made one busy request.
    pub reset: bool,
    /// Completed operations seen (before the per-poll cap).
    pub ops: u64,
    /// The poll as an activity-log record, whose events are those
    /// appended ([`Poll::events`]); `None` while the disk is absent.
    pub record: Option<Poll>,
}

/// Turns one disk's counter samples into events.
#[derive(Clone, Debug)]
pub struct DiskTracker {
    family: Family,
    /// The counters of each member at the last poll, in
    /// [`Family::members`] order (`None`: absent then, a baseline next).
    prev: Vec<Option<Counters>>,
    /// A request held open for I/O in flight, or for the disk's absence
    /// since it vanished, since this poll.
    held: Option<Nanos>,
    was_active: bool,
    /// The last poll that found the disk active (its last request
    /// completed then).
    active_at: Nanos,
    present: bool,
    seen: bool,
    last: Option<Nanos>,
    /// Where each member stands in the sample (in [`Family::members`]
    /// order), for the sample layout `slots_layout`.
    slots: Vec<Option<usize>>,
    slots_layout: u64,
    /// The largest in-flight count of a group at the last full poll.
    flying: u64,
    /// The last poll took the normal path, so `prev` and `flying` hold
    /// that sample's counters: a poll whose members' lines are all
    /// unchanged may skip them ([`DiskTracker::poll`]).
    steady: bool,
}

impl DiskTracker {
    /// A tracker for `family`; the first poll is a baseline.
    pub fn new(family: Family) -> Self {
        DiskTracker {
            family,
            prev: Vec::new(),
            held: None,
            was_active: false,
            active_at: Nanos::ZERO,
            present: false,
            seen: false,
            last: None,
            slots: Vec::new(),
            slots_layout: 0,
            flying: 0,
            steady: false,
        }
    }

    /// Finds the members' positions in `sample` when its layout changed;
    /// `true` when they were already known.
    fn locate(&mut self, sample: &Sample) -> bool {
        // Empty until located (the disk itself is always a member), and
        // emptied when the family changes.
        if self.slots_layout == sample.layout() && !self.slots.is_empty() {
            return true;
        }
        self.slots.clear();
        self.slots
            .extend(self.family.members().map(|(n, _)| sample.position(n)));
        self.slots_layout = sample.layout();
        false
    }

    /// The family it watches.
    pub fn family(&self) -> &Family {
        &self.family
    }

    /// Replaces the family (partitions or holders changed); new members
    /// start from a baseline at the next poll.
    pub fn set_family(&mut self, family: Family) {
        let old: Vec<(&str, Option<Counters>)> = self
            .family
            .members()
            .map(|(n, _)| n)
            .zip(self.prev.iter().copied())
            .collect();
        let prev = family
            .members()
            .map(|(n, _)| old.iter().find(|(o, _)| *o == n).and_then(|(_, c)| *c))
            .collect();
        self.prev = prev;
        self.family = family;
        self.slots.clear();
        self.steady = false;
    }

    /// What the whole disk completed since the last poll, if it had a
    /// baseline then and is present now: the bytes read, the bytes
    /// written, and whether it also completed discards or flushes (work
    /// no process's I/O counters are charged with). Partitions and
    /// holders are not added: their I/O reaches the disk and is in its
    /// counters already.
    pub fn moved_since(&self, sample: &Sample) -> Option<(u64, u64, bool)> {
        let old = (*self.prev.first()?)?;
        let new = sample.get(&self.family.disk)?;
        let d = old.delta(new);
        let read = counter_delta(old.sectors_read, new.sectors_read).saturating_mul(512);
        let written = counter_delta(old.sectors_written, new.sectors_written).saturating_mul(512);
        Some((read, written, d.discards > 0 || d.flushes > 0))
    }

    /// A tracker for the same disk under a new `family` (its by-id link
    /// moved to another kernel name after a replug): the counters start
    /// afresh with a baseline, and the request it holds open (the disk's
    /// absence since it vanished, or I/O in flight) stays open until that
    /// baseline completes it, as the engine holds it. (A fresh tracker
    /// left the engine busy for good: the guest test's replugged disks
    /// never spun down again.)
    pub fn moved(&self, family: Family) -> DiskTracker {
        DiskTracker {
            held: self.held,
            ..DiskTracker::new(family)
        }
    }

    /// The tracker as a controller that takes the disk over at `at` from
    /// another (a reload) continues it: its next poll's deltas are from
    /// the last counters, spread over the time from `at`, never before
    /// (the new engine's time starts there).
    pub fn handed_over(mut self, at: Nanos) -> DiskTracker {
        if self.last.is_some_and(|l| l < at) {
            self.last = Some(at);
        }
        self.steady = false;
        self
    }

    /// The whole disk's counters at the last poll that read them (`None`
    /// before a baseline, and while it is absent).
    pub fn counters(&self) -> Option<Counters> {
        self.prev.first().copied().flatten()
    }

    /// Whether it holds a synthetic request open (I/O in flight, or the
    /// disk is absent since it vanished).
    pub fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// Processes the sample taken at `now` and appends the events it
    /// implies to `out` (all in `[previous poll, now]`, in order). `late`:
    /// the poll came much later than planned.
    ///
    /// When none of its devices' lines changed since the previous poll
    /// ([`Sample::fresh`]), and that poll was a normal one, there are no
    /// deltas to take and the in-flight counts are the ones it saw: the
    /// members are not read at all (most polls of a quiet disk). The
    /// outcome and events are those of a full reading
    /// (`skipping_unchanged_lines_changes_no_outcome`).
    pub fn poll(
        &mut self,
        now: Nanos,
        sample: &Sample,
        late: bool,
        out: &mut Vec<Event>,
    ) -> PollOutcome {
        let t0 = self.last.replace(now);
        let mut o = PollOutcome::default();
        let located = self.locate(sample);
        // Only the normal path below leaves `prev` and `flying` in step
        // with the sample.
        let steady = std::mem::take(&mut self.steady);
        let Some(disk) = self.slots[0].and_then(|p| sample.at(p)) else {
            if self.present {
                o.vanished = true;
                let p = Poll {
                    t0: t0.unwrap_or(now),
                    t: now,
                    kind: PollKind::Vanished,
                    held_since: self.held.take(),
                    ..Poll::default()
                };
                p.events(out);
                o.record = Some(p);
                // Its absence is held open until the baseline that sees
                // it again (`PollKind::Vanished`).
                self.held = Some(now);
            }
            self.present = false;
            self.was_active = false;
            self.prev.clear();
            return o;
        };
        o.present = true;
        let in_flight_disk = disk.in_flight;
        let Some(t0) = t0.filter(|_| self.present) else {
            // First sight, or back after being absent: a baseline, and the
            // disk counts as having just finished a request, so a disk that
            // stays quiet from now on is seen to be idle from now on. The
            // request lasts a nanosecond, as every request does in the
            // engine (`Request::effective_completion`): a replay of it is
            // then the same to the nanosecond (`tests/controller_replay.rs`).
            o.appeared = self.seen;
            // The engine's idle period begins after that request: so does
            // the controller's (or `lull status` read "the disk is busy"
            // all through a quiet disk's first idle period, while the
            // network was deciding in it).
            o.idle_started = true;
            o.idle_from = Some(now);
            self.was_active = false;
            self.present = true;
            self.seen = true;
            self.rebase(sample);
            let p = Poll {
                t0: now,
                t: now,
                kind: PollKind::Baseline,
                // Back after it vanished: the absence held open since
                // then completes here.
                held_since: self.held.take(),
                ..Poll::default()
            };
            p.events(out);
            o.record = Some(p);
            return o;
        };
        if late {
            self.rebase(sample);
            o.reset = true;
            o.active = true;
            let p = Poll {
                t0,
                t: now,
                kind: PollKind::Late,
                held_since: self.held,
                held_after: in_flight_disk > 0,
                ..Poll::default()
            };
            p.events(out);
            // Still in flight: the request held since `t0` (or before)
            // stays open.
            self.held = p.held_after.then(|| self.held.unwrap_or(t0));
            o.record = Some(p);
            self.was_active = true;
            self.active_at = now;
            return o;
        }

        let mut groups = [Delta::default(); 3];
        // No member's line changed since the last poll, which took this
        // path: no deltas, and the in-flight counts are the same.
        let unchanged = steady
            && located
            && self
                .slots
                .iter()
                .all(|s| s.is_none_or(|p| !sample.fresh(p)));
        let flying = if unchanged {
            self.flying
        } else {
            let mut in_flight = [0u64; 3];
            let members = self.slots.len();
            self.prev.resize(members, None);
            for (((_, group), prev), slot) in self
                .family
                .members()
                .zip(self.prev.iter_mut())
                .zip(&self.slots)
            {
                let g = group as usize;
                let Some(c) = slot.and_then(|p| sample.at(p)) else {
                    *prev = None;
                    continue;
                };
                in_flight[g] = in_flight[g].saturating_add(c.in_flight);
                if let Some(p) = prev {
                    groups[g].add(&p.delta(c));
                }
                *prev = Some(*c);
            }
            in_flight.into_iter().max().unwrap_or(0)
        };
        self.flying = flying;
        self.steady = true;
        let d = *groups.iter().max_by_key(|d| d.ops()).expect("three groups");
        o.ops = d.ops();
        o.active = o.ops > 0 || flying > 0 || self.held.is_some();
        o.idle_started = self.was_active && !o.active;
        if o.idle_started {
            o.idle_from = Some(self.active_at);
        }
        if o.active {
            self.active_at = now;
        }
        self.was_active = o.active;

        let p = Poll {
            t0,
            t: now,
            kind: PollKind::Normal,
            counts: d,
            held_since: self.held,
            held_after: flying > 0,
        };
        p.events(out);
        self.held = match (self.held, flying > 0) {
            (_, false) => None,
            (Some(since), true) => Some(since),
            (None, true) => Some(now),
        };
        o.record = Some(p);
        o
    }

    /// Takes the sample at `now` as the new baseline without turning its
    /// deltas into events: the I/O since the last poll was lull's own (a
    /// flush), not foreground work. The disk keeps its busy or idle state.
    /// `None` when the disk is absent, new or just vanished: those need a
    /// normal [`DiskTracker::poll`].
    pub fn absorb(&mut self, now: Nanos, sample: &Sample) -> Option<PollOutcome> {
        if sample.get(&self.family.disk).is_none() || !self.present || self.last.is_none() {
            return None;
        }
        self.last = Some(now);
        self.rebase(sample);
        Some(PollOutcome {
            present: true,
            active: self.held.is_some(),
            ..PollOutcome::default()
        })
    }

    fn rebase(&mut self, sample: &Sample) {
        self.steady = false;
        self.prev.clear();
        for (name, _) in self.family.members() {
            self.prev.push(sample.get(name).copied());
        }
    }
}

#[cfg(test)]
mod tests;
