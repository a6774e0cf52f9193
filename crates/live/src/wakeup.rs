//! "What woke my disk": which processes did I/O while a disk slept.
//!
//! # The approximation
//!
//! The kernel does not say which process a request on a disk came from
//! (diskstats counts requests, not owners). Best effort, from `/proc`:
//!
//! - When lull finds a disk in standby (it spun it down, or CHECK POWER
//!   MODE found it asleep), it records every process's storage I/O
//!   counters (`read_bytes` + `write_bytes` of `/proc/PID/io`, which count
//!   bytes that went to, or will go to, a block device).
//! - When the disk is busy again, it reads them again. A process whose
//!   counters grew did block I/O somewhere in between (a process that did
//!   not exist at the first snapshot counts from zero).
//! - Of those, the ones holding a file open (or their working directory)
//!   on one of the disk's file systems (the disk's, its partitions' and
//!   holders' device numbers, compared with `stat` of `/proc/PID/fd/*`),
//!   or one of those devices itself (`/dev/sdb` open: `dd`, a database
//!   or a virtual machine on the raw disk), are named as the likely waker, most bytes first, and so are kernel
//!   threads whose name says they work for one of those devices
//!   (`kworker/u8:2+flush-8:16`, `jbd2/sdb1-8`). If none is, the
//!   process with the most bytes is named with `?` after it: it did I/O,
//!   but maybe on another disk. A kernel thread whose name says it works
//!   for another device (`kworker/u8:0-loop0` when `loop1` woke) is never
//!   named.
//!
//! # Limits
//!
//! - A process that exited before the disk woke (a cron job's `ls`) is
//!   gone from `/proc` and cannot be named; the wake-up is counted as
//!   `comm="unknown"`.
//! - Writes are charged to the process that dirtied the page, when it
//!   dirtied it; the disk may be woken later by the kernel's writeback.
//!   A read served from the page cache wakes nothing and counts nothing.
//! - Reading another process's `io` needs root (or the same user).
//! - btrfs and other file systems with anonymous device numbers are not
//!   recognised by their open files; the `?` fallback still applies.
//! - Two snapshots per spin-up, of every process: a few milliseconds,
//!   rarely (never at every poll).

use std::collections::HashMap;

pub use lull_controller::wakeup::{Attribution, Snapshot, kworker_queue, tally, tally_name};

/// `read_bytes` and `write_bytes` of process `pid` (`/proc/PID/io`),
/// `None` when it cannot be read or parsed.
fn proc_io(pid: u32) -> Option<(u64, u64)> {
    parse_io_split(&std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?)
}

/// The storage bytes process `pid` and its live descendants have read
/// and written so far (`read_bytes`, `write_bytes`), `None` when `pid`'s counters
/// cannot be read (it exited, or `/proc/PID/io` is not the daemon's to
/// read). A process's counters hold its reaped children's, and a child
/// still running is found through `/proc/PID/task/TID/children`. Each
/// process is read after its descendants: a child reaped during the walk
/// is then in its parent's counters when they are read, where reading
/// the parent first lost it (its bytes were in neither), and a scrub's
/// `dd` that ended just then made its own reads look like the
/// foreground's. A child read and then reaped before its parent is read
/// counts twice for that walk, which makes the command's I/O look larger
/// for one poll, never smaller. A descendant that left the tree
/// (reparented to init before it was reaped) is lost. At most 4 096
/// processes are visited.
pub fn tree_io(pid: u32) -> Option<(u64, u64)> {
    // The tree in pre-order, then read in reverse: descendants first.
    let mut order = vec![pid];
    let mut stack = children(pid);
    while let Some(p) = stack.pop() {
        if order.len() >= 4096 {
            break;
        }
        order.push(p);
        stack.extend(children(p));
    }
    let (mut read, mut written) = (0u64, 0u64);
    for &p in order[1..].iter().rev() {
        if let Some((r, w)) = proc_io(p) {
            read = read.saturating_add(r);
            written = written.saturating_add(w);
        }
    }
    let (r, w) = proc_io(pid)?;
    Some((read.saturating_add(r), written.saturating_add(w)))
}

/// `read_bytes` and `write_bytes` of a `/proc/PID/io` text, `None` when
/// either is missing or does not parse.
pub fn parse_io_split(text: &str) -> Option<(u64, u64)> {
    let (mut read, mut written) = (None, None);
    for l in text.lines() {
        if let Some(v) = l.strip_prefix("read_bytes:") {
            read = Some(v.trim().parse::<u64>().ok()?);
        } else if let Some(v) = l.strip_prefix("write_bytes:") {
            written = Some(v.trim().parse::<u64>().ok()?);
        }
    }
    Some((read?, written?))
}

/// The children of every thread of process `pid`, from
/// `/proc/PID/task/TID/children` (empty when unreadable).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// Reads every process's storage I/O counters.
pub fn snapshot() -> Snapshot {
    let mut out = HashMap::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Some(bytes) = proc_io(pid).map(|(r, w)| r.saturating_add(w)) else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim().to_string())
            .unwrap_or_default();
        out.insert(pid, (comm, bytes));
    }
    out
}

/// Processes whose counters grew from `before` to `after`, most bytes
/// first: `(pid, comm, bytes)`. A pid whose name changed is a new
/// process and counts from zero.
pub fn grew(before: &Snapshot, after: &Snapshot) -> Vec<(u32, String, u64)> {
    let mut v: Vec<(u32, String, u64)> = after
        .iter()
        .filter_map(|(&pid, (comm, b))| {
            let base = before
                .get(&pid)
                .filter(|(c, _)| c == comm)
                .map_or(0, |(_, b0)| *b0);
            (*b > base).then(|| (pid, comm.clone(), b - base))
        })
        .collect();
    v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    v
}

/// Whether process `pid` has a file open, or its working directory, on
/// one of the devices `devs` (major, minor), or has one of them open
/// itself (its block device node: `dd`, a database or a virtual
/// machine on a raw disk).
pub fn uses_devices(pid: u32, devs: &[(u32, u32)]) -> bool {
    let on = |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| on_devices(&m, devs));
    if on(std::path::Path::new(&format!("/proc/{pid}/cwd"))) {
        return true;
    }
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| on(&e.path()))
}

/// Whether the file `m` describes lives on one of the devices `devs`
/// (its file system's device), or is one of them (a block device node,
/// whose own device is the `/dev` file system's): a process with
/// `/dev/sdb` open read "no open file on the disk" when it woke `sdb`.
fn on_devices(m: &std::fs::Metadata, devs: &[(u32, u32)]) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let is = |d: u64| {
        let (ma, mi) = (nix::sys::stat::major(d), nix::sys::stat::minor(d));
        devs.iter()
            .any(|&(a, b)| u64::from(a) == ma && u64::from(b) == mi)
    };
    is(m.dev()) || (m.file_type().is_block_device() && is(m.rdev()))
}

/// The block device a kernel thread's name says it works for, if it
/// says one: `kworker/u8:0-loop0` (a worker last running the `loop0`
/// workqueue; `+` instead of `-` while it runs), `kworker/u8:2+flush-8:16`
/// (writeback of the device 8:16), `kworker/0:1H-xfs-buf/sda1`,
/// `kworker/u8:3-kcryptd/253:0` (dm-crypt's device 253:0),
/// `jbd2/sda1-8` (ext4's journal on `sda1`), `flush-8:16` (older
/// kernels' writeback threads). Anything else, a user process's name
/// included, names none: its I/O may be on any disk.
pub fn kernel_thread_device(comm: &str) -> Option<DeviceRef> {
    let numbers = |t: &str| {
        let (a, b) = t.split_once(':')?;
        Some(DeviceRef::Numbers(a.parse().ok()?, b.parse().ok()?))
    };
    if let Some(t) = comm.strip_prefix("flush-") {
        return numbers(t);
    }
    if let Some(rest) = comm.strip_prefix("jbd2/") {
        let (name, _inode) = rest.rsplit_once('-')?;
        return (!name.is_empty()).then(|| DeviceRef::Name(name.to_string()));
    }
    let wq = kworker_queue(comm)?;
    if let Some(t) = wq.strip_prefix("flush-") {
        return numbers(t);
    }
    // A workqueue named for a device ends in its name (`loop0`,
    // `xfs-buf/sda1`); the rest (`events_unbound`, `writeback`) name
    // none, which only the system can tell (`DeviceRef::Name` is then
    // looked up).
    let name = wq.rsplit('/').next().unwrap_or(wq);
    // `kcryptd/253:0`: by device numbers.
    numbers(name).or_else(|| (!name.is_empty()).then(|| DeviceRef::Name(name.to_string())))
}

/// A block device a kernel thread's name refers to
/// ([`kernel_thread_device`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceRef {
    /// By kernel name (`loop0`, `sda1`): a device only if the system has
    /// one by that name.
    Name(String),
    /// By device numbers (major, minor).
    Numbers(u32, u32),
}

/// Whether a grower's name ties it to the disk (`Some(true)`), to another
/// block device (`Some(false)`), or to none. `lands` resolves a kernel
/// name to the devices its I/O reaches ([`lands_on`]; `None`: no such
/// device, so not a device).
fn names_device(
    comm: &str,
    devs: &[(u32, u32)],
    lands: &impl Fn(&str) -> Option<Vec<(u32, u32)>>,
) -> Option<bool> {
    let reach = match kernel_thread_device(comm)? {
        DeviceRef::Numbers(a, b) => vec![(a, b)],
        DeviceRef::Name(n) => lands(&n)?,
    };
    Some(reach.iter().any(|d| devs.contains(d)))
}

/// The devices the I/O of a worker for the block device `name` reaches,
/// from `sysfs` (`/sys`): the device itself and, for a loop device, the
/// one holding its backing file (its worker reads and writes that file).
/// Stacked devices (dm, md) need nothing more: the disk's holders are
/// among its own devices. `None` when there is no such block device.
pub fn lands_on(sysfs: &std::path::Path, name: &str) -> Option<Vec<(u32, u32)>> {
    use std::os::unix::fs::MetadataExt;
    let dir = sysfs.join("class/block").join(name);
    let t = std::fs::read_to_string(dir.join("dev")).ok()?;
    let (a, b) = t.trim().split_once(':')?;
    let mut out = vec![(a.parse().ok()?, b.parse().ok()?)];
    if let Ok(f) = std::fs::read_to_string(dir.join("loop/backing_file"))
        && let Ok(m) = std::fs::metadata(f.trim_end_matches('\n'))
    {
        let d = m.dev();
        out.push((
            nix::sys::stat::major(d) as u32,
            nix::sys::stat::minor(d) as u32,
        ));
    }
    Some(out)
}

/// Who most likely woke the disk whose devices are `devs`: the growing
/// processes that use it, or else one grower marked uncertain: of those
/// that moved at least `woke` bytes (what the disk did in the poll that
/// showed it awake), the one that moved least, else the biggest. A short
/// `dd` or `cp` that woke the disk has exited, but its parent (a cron
/// job's shell) holds its bytes once it reaped it, while a build beside it
/// moved gigabytes to other disks: the closest fit leaves the least I/O
/// unexplained (`woke` 0: the biggest). Generic kernel workers are never
/// the uncertain guess.
/// A kernel thread whose name says which device it works for
/// ([`kernel_thread_device`]; `lands` resolves a kernel name, as
/// [`lands_on`] does) is one of the first when that device's I/O reaches
/// one of `devs` and never named when it does not (`loop0`'s worker did
/// not wake `loop1`, though its working directory, `/`, may be on it).
/// The uncertain fallback never names the daemon itself: its own writes
/// (the state file, the metrics) go elsewhere, or it would hold a file on
/// the disk and be named surely (a poll of 1 s makes it the biggest
/// grower of a quiet machine: "woken by lulld?" was its own I/O).
/// Returns `(comm, description)` pairs for the log, the first one the one
/// counted; empty when no process did storage I/O.
pub fn suspects(
    grown: &[(u32, String, u64)],
    uses: impl Fn(u32) -> bool,
    devs: &[(u32, u32)],
    lands: impl Fn(&str) -> Option<Vec<(u32, u32)>>,
    woke: u64,
) -> Vec<(String, String)> {
    // Each grower with what its name says (see `names_device`).
    let candidates: Vec<_> = grown
        .iter()
        .map(|g| (g, names_device(&g.1, devs, &lands)))
        .filter(|(_, named)| *named != Some(false))
        .collect();
    // Surely on the disk: a process using it (a file, its working
    // directory, its device node) before a kernel thread whose name says
    // it works for it, each most bytes first. The thread is how the I/O
    // went, the process who asked for it: a loop device's own worker,
    // whose counters hold whatever else it did, outgrew the writer and
    // was named instead.
    let mut sure: Vec<_> = candidates
        .iter()
        .filter(|((pid, _, _), named)| *named == Some(true) || uses(*pid))
        .collect();
    sure.sort_by_key(|(_, named)| *named == Some(true));
    let sure: Vec<(String, String)> = sure
        .into_iter()
        .take(3)
        .map(|((pid, comm, b), _)| (comm.clone(), format!("{comm} (pid {pid}, {b} bytes)")))
        .collect();
    if !sure.is_empty() {
        return sure;
    }
    // Neither the daemon nor a kernel worker that names no device
    // (`kworker/u8:0-events_unbound`, `kworker/u8:2-ext4-rsv-conversion`):
    // it works for others, and its name tells the admin nothing.
    let own = std::process::id();
    let others = || {
        candidates
            .iter()
            .filter(|((pid, comm, _), _)| *pid != own && !comm.starts_with("kworker/"))
    };
    others()
        .filter(|((_, _, b), _)| woke > 0 && *b >= woke)
        .min_by_key(|((_, _, b), _)| *b)
        .or_else(|| others().next())
        .map(|((pid, comm, b), _)| {
            vec![(
                format!("{comm}?"),
                format!("{comm}? (pid {pid}, {b} bytes, no open file on the disk)"),
            )]
        })
        .unwrap_or_default()
}

/// Names, best effort, what woke a disk whose users are `devs` (device
/// numbers of the disk, its partitions and holders) and moved `woke`
/// bytes in the poll that showed it awake, from the snapshot taken when
/// it went to sleep ([`suspects`]).
pub fn attribute(before: Snapshot, devs: &[(u32, u32)], woke: u64) -> Attribution {
    let grown = grew(&before, &snapshot());
    let who = suspects(
        &grown,
        |pid| uses_devices(pid, devs),
        devs,
        |name| lands_on(std::path::Path::new("/sys"), name),
        woke,
    );
    if who.is_empty() {
        return Attribution {
            text: ", woken by a process that is gone (or by the kernel)".to_string(),
            names: Some("unknown".to_string()),
            suspects: Some(("unknown".to_string(), vec!["unknown".to_string()])),
        };
    }
    let list: Vec<&str> = who.iter().map(|w| w.1.as_str()).collect();
    let list = list.join(", ");
    Attribution {
        text: format!(", woken by {list}"),
        names: Some(list),
        suspects: Some((
            tally_name(&who[0].0),
            who.iter().map(|w| tally_name(&w.0)).collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_counters_parse() {
        let t = "rchar: 100\nwchar: 50\nsyscr: 3\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io_split(t), Some((4096, 8192)));
        assert_eq!(parse_io_split("rchar: 1\n"), None);
        assert_eq!(parse_io_split("read_bytes: 4096\n"), None);
    }

    #[test]
    fn growers_are_ranked_and_new_names_count_from_zero() {
        let s = |v: &[(u32, &str, u64)]| -> Snapshot {
            v.iter().map(|&(p, c, b)| (p, (c.to_string(), b))).collect()
        };
        let before = s(&[(1, "init", 10), (2, "smbd", 100), (3, "cron", 5)]);
        let after = s(&[
            (1, "init", 10),
            (2, "smbd", 4196),
            (3, "ls", 7),
            (4, "rsync", 9000),
        ]);
        let g = grew(&before, &after);
        let names: Vec<&str> = g.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(names, ["rsync", "smbd", "ls"]);
        assert_eq!(g[1].2, 4096);
        assert_eq!(g[2].2, 7, "pid 3 is another process now");

        let none = |_: &str| None;
        let who = suspects(&g, |pid| pid == 2, &[], none, 0);
        assert_eq!(who[0].0, "smbd");
        let who = suspects(&g, |_| false, &[], none, 0);
        assert_eq!(who[0].0, "rsync?");
        // The uncertain guess fits the bytes that woke the disk: of those
        // that moved at least as much, the one that moved least (a cron
        // shell holding its reaped `dd`'s bytes, not the build beside it);
        // the biggest when none moved that much.
        let fit = |woke| suspects(&g, |_| false, &[], none, woke)[0].0.clone();
        assert_eq!(fit(4000), "smbd?");
        assert_eq!(fit(4096), "smbd?");
        assert_eq!(fit(4097), "rsync?");
        assert_eq!(fit(5), "ls?");
        assert_eq!(fit(20_000), "rsync?");
        // A kernel worker that names no device is never the guess, however
        // well it fits: it works for others.
        let mut with_worker = vec![(9, "kworker/u8:0-events_unbound".to_string(), 4100)];
        with_worker.extend(g.iter().cloned());
        with_worker.sort_by_key(|w| std::cmp::Reverse(w.2));
        let who = suspects(&with_worker, |_| false, &[], none, 4000);
        assert_eq!(who[0].0, "smbd?");
        let only = vec![(9, "kworker/u8:0-events_unbound".to_string(), 4100)];
        assert!(suspects(&only, |_| false, &[], none, 4000).is_empty());
        assert!(suspects(&[], |_| true, &[], none, 0).is_empty());
        // The daemon's own writes are never the uncertain guess, however
        // much it grew; it is named when it holds a file on the disk.
        let own = std::process::id();
        let mut with_self = vec![(own, "lulld".to_string(), 1 << 30)];
        with_self.extend(g.iter().cloned());
        let who = suspects(&with_self, |_| false, &[], none, 0);
        assert_eq!(who[0].0, "rsync?");
        assert!(suspects(&with_self[..1], |_| false, &[], none, 0).is_empty());
        let who = suspects(&with_self, |pid| pid == own, &[], none, 0);
        assert_eq!(who[0].0, "lulld");
    }

    #[test]
    fn kernel_workers_are_counted_by_their_work_not_their_instance() {
        for (comm, want) in [
            ("kworker/u8:4-loop0", "kworker (loop0)"),
            ("kworker/u8:2-loop0", "kworker (loop0)"),
            ("kworker/u8:2+flush-8:16", "kworker (flush-8:16)"),
            ("kworker/0:1H-xfs-buf/sda1", "kworker (xfs-buf/sda1)"),
            ("kworker/0:0", "kworker/0:0"),
            ("kworker/u8:0-", "kworker/u8:0-"),
            ("jbd2/sda1-8", "jbd2/sda1-8"),
            ("smbd", "smbd"),
            ("python3?", "python3?"),
            ("unknown", "unknown"),
        ] {
            assert_eq!(tally_name(comm), want, "{comm}");
        }
    }

    #[test]
    fn kernel_threads_name_their_devices() {
        let n = |s: &str| Some(DeviceRef::Name(s.to_string()));
        for (comm, want) in [
            ("kworker/u8:0-loop0", n("loop0")),
            ("kworker/u8:0+loop12", n("loop12")),
            ("kworker/u8:2+flush-8:16", Some(DeviceRef::Numbers(8, 16))),
            ("kworker/u8:2-flush-253:0", Some(DeviceRef::Numbers(253, 0))),
            ("kworker/0:1H-xfs-buf/sda1", n("sda1")),
            (
                "kworker/u8:3-kcryptd/253:0",
                Some(DeviceRef::Numbers(253, 0)),
            ),
            ("kworker/3:0-events", n("events")),
            ("jbd2/sda1-8", n("sda1")),
            ("jbd2/dm-0-8", n("dm-0")),
            ("flush-8:16", Some(DeviceRef::Numbers(8, 16))),
            ("kworker/0:0", None),
            ("kworker/u8:0-", None),
            ("flush-8", None),
            ("jbd2/", None),
            ("rsync", None),
            ("loop0", None),
        ] {
            assert_eq!(kernel_thread_device(comm), want, "{comm}");
        }
    }

    #[test]
    fn a_worker_for_another_device_is_never_named() {
        // loop1 (7:1) woke; loop0's worker (7:0) did the most I/O, a
        // workqueue not named for a device next, rsync the least.
        let g = vec![
            (10, "kworker/u8:0-loop0".to_string(), 9000),
            (11, "kworker/3:0-events".to_string(), 500),
            (12, "rsync".to_string(), 100),
        ];
        // loop0's backing file is on 8:0.
        let numbers = |name: &str| match name {
            "loop0" => Some(vec![(7, 0), (8, 0)]),
            "loop1" => Some(vec![(7, 1)]),
            _ => None,
        };
        let devs = [(7, 1)];
        // Uncertain: the biggest grower that names no other device and is
        // no kernel worker.
        let who = suspects(&g, |_| false, &devs, numbers, 0);
        assert_eq!(who.len(), 1);
        assert_eq!(who[0].0, "rsync?");
        // Its working directory (`/`) on the disk does not make loop0's
        // worker a suspect either.
        let who = suspects(&g, |pid| pid != 11, &devs, numbers, 0);
        assert_eq!(
            who.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
            ["rsync"]
        );
        // A worker for the disk itself is named, surely.
        let g2 = [
            (13, "kworker/u8:2+flush-7:1".to_string(), 40),
            (12, "rsync".to_string(), 100),
        ];
        let who = suspects(&g2, |_| false, &devs, numbers, 0);
        assert_eq!(who[0].0, "kworker/u8:2+flush-7:1");
        // A process using the disk comes before the disk's own worker,
        // however much more the worker grew.
        let g3 = [
            (14, "kworker/u8:4-loop1".to_string(), 2_498_560),
            (15, "python3".to_string(), 16_384),
        ];
        let who = suspects(&g3, |pid| pid == 15, &devs, numbers, 0);
        assert_eq!(
            who.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
            ["python3", "kworker/u8:4-loop1"]
        );
        // Only growers naming other devices: nothing to name.
        assert!(suspects(&g[..1], |_| true, &devs, numbers, 0).is_empty());
        // The disk holding loop0's backing file was woken by its worker.
        let who = suspects(&g, |_| false, &[(8, 0), (8, 1)], numbers, 0);
        assert_eq!(who[0].0, "kworker/u8:0-loop0");
    }

    #[test]
    fn a_loop_devices_worker_lands_on_its_backing_files_disk() {
        use std::os::unix::fs::MetadataExt;
        let sys = tempfile::tempdir().unwrap();
        let backing = sys.path().join("disk.img");
        std::fs::write(&backing, b"").unwrap();
        let d = std::fs::metadata(&backing).unwrap().dev();
        let host = (
            nix::sys::stat::major(d) as u32,
            nix::sys::stat::minor(d) as u32,
        );
        let dir = sys.path().join("class/block/loop3");
        std::fs::create_dir_all(dir.join("loop")).unwrap();
        std::fs::write(dir.join("dev"), "7:3\n").unwrap();
        std::fs::write(
            dir.join("loop/backing_file"),
            format!("{}\n", backing.display()),
        )
        .unwrap();
        let sda = sys.path().join("class/block/sda");
        std::fs::create_dir_all(&sda).unwrap();
        std::fs::write(sda.join("dev"), "8:0\n").unwrap();
        assert_eq!(lands_on(sys.path(), "loop3"), Some(vec![(7, 3), host]));
        assert_eq!(lands_on(sys.path(), "sda"), Some(vec![(8, 0)]));
        assert_eq!(lands_on(sys.path(), "events"), None);
    }

    /// A block device node is on the device it is, not only on `/dev`'s
    /// file system: a process holding `/dev/sdb` open uses `sdb`. (A node
    /// made with `mknod`, which needs root; stat does not open it.)
    #[test]
    #[cfg_attr(not(has_root), ignore = "needs root (mknod needs CAP_MKNOD)")]
    fn a_block_device_node_is_on_its_own_device() {
        use nix::sys::stat::{Mode, SFlag, makedev, mknod};
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("sdz");
        if let Err(e) = mknod(&node, SFlag::S_IFBLK, Mode::S_IRUSR, makedev(8, 240)) {
            lull_testkit::skip(&format!("mknod needs root (CAP_MKNOD): {e}"));
            return;
        }
        let m = std::fs::metadata(&node).unwrap();
        assert!(on_devices(&m, &[(8, 240)]));
        assert!(!on_devices(&m, &[(8, 241)]));
        // And on the file system it sits in, as any file.
        let d = m.dev();
        let fs = (
            nix::sys::stat::major(d) as u32,
            nix::sys::stat::minor(d) as u32,
        );
        assert!(on_devices(&m, &[fs]));
        // A character device with the same numbers is not the disk.
        let chr = dir.path().join("chr");
        mknod(&chr, SFlag::S_IFCHR, Mode::S_IRUSR, makedev(8, 240)).unwrap();
        let c = std::fs::metadata(&chr).unwrap();
        assert!(!on_devices(&c, &[(8, 240)]));
    }

    #[test]
    fn our_own_working_directory_is_found() {
        use std::os::unix::fs::MetadataExt;
        let d = std::fs::metadata(".").unwrap().dev();
        let dev = (
            nix::sys::stat::major(d) as u32,
            nix::sys::stat::minor(d) as u32,
        );
        assert!(uses_devices(std::process::id(), &[dev]));
        assert!(!uses_devices(std::process::id(), &[(4095, 4095)]));
        // The snapshot sees this process (when /proc/self/io is readable).
        if std::fs::read_to_string("/proc/self/io").is_ok() {
            assert!(snapshot().contains_key(&std::process::id()));
        }
    }
}
