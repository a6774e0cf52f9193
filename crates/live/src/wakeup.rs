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
//!   holders' device numbers, compared with `stat` of `/proc/PID/fd/*`)
//!   are named as the likely waker, most bytes first. If none is, the
//!   process with the most bytes is named with `?` after it: it did I/O,
//!   but maybe on another disk.
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

/// Storage I/O counters of every process, by pid: `(comm, bytes)`.
pub type Snapshot = HashMap<u32, (String, u64)>;

/// Parses `read_bytes` + `write_bytes` out of a `/proc/PID/io` text.
pub fn parse_io(text: &str) -> Option<u64> {
    let mut sum = None;
    for l in text.lines() {
        if let Some(v) = l
            .strip_prefix("read_bytes:")
            .or_else(|| l.strip_prefix("write_bytes:"))
        {
            *sum.get_or_insert(0u64) += v.trim().parse::<u64>().ok()?;
        }
    }
    sum
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
        let Some(bytes) = std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|t| parse_io(&t))
        else {
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
/// one of the devices `devs` (major, minor).
pub fn uses_devices(pid: u32, devs: &[(u32, u32)]) -> bool {
    use std::os::unix::fs::MetadataExt;
    let on = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| {
            let d = m.dev();
            let (ma, mi) = (nix::sys::stat::major(d), nix::sys::stat::minor(d));
            devs.iter()
                .any(|&(a, b)| u64::from(a) == ma && u64::from(b) == mi)
        })
    };
    if on(std::path::Path::new(&format!("/proc/{pid}/cwd"))) {
        return true;
    }
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| on(&e.path()))
}

/// Who most likely woke the disk whose devices are `devs`: the growing
/// processes that use it, or else the biggest grower marked uncertain.
/// Returns `(comm, description)` pairs for the log, the first one the one
/// counted; empty when no process did storage I/O.
pub fn suspects(grown: &[(u32, String, u64)], uses: impl Fn(u32) -> bool) -> Vec<(String, String)> {
    let sure: Vec<(String, String)> = grown
        .iter()
        .filter(|(pid, _, _)| uses(*pid))
        .take(3)
        .map(|(pid, comm, b)| (comm.clone(), format!("{comm} (pid {pid}, {b} bytes)")))
        .collect();
    if !sure.is_empty() {
        return sure;
    }
    grown
        .first()
        .map(|(pid, comm, b)| {
            vec![(
                format!("{comm}?"),
                format!("{comm}? (pid {pid}, {b} bytes, no open file on the disk)"),
            )]
        })
        .unwrap_or_default()
}

/// What [`attribute`] found woke a disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attribution {
    /// For the log line: `", woken by smbd (pid 12, …)"` (empty when there
    /// was no snapshot to judge).
    pub text: String,
    /// For `LULL_WOKEN_BY`: `"smbd (pid 12, …)"`, the most likely first;
    /// `unknown` when they are gone.
    pub names: Option<String>,
    /// For the state file: the most likely process's name and every
    /// suspect's name.
    pub suspects: Option<(String, Vec<String>)>,
}

/// Names, best effort, what woke a disk whose users are `devs` (device
/// numbers of the disk, its partitions and holders), from the snapshot
/// taken when it went to sleep.
pub fn attribute(before: Snapshot, devs: &[(u32, u32)]) -> Attribution {
    let grown = grew(&before, &snapshot());
    let who = suspects(&grown, |pid| uses_devices(pid, devs));
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
        suspects: Some((who[0].0.clone(), who.iter().map(|w| w.0.clone()).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_counters_parse() {
        let t = "rchar: 100\nwchar: 50\nsyscr: 3\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(t), Some(12288));
        assert_eq!(parse_io("rchar: 1\n"), None);
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

        let who = suspects(&g, |pid| pid == 2);
        assert_eq!(who[0].0, "smbd");
        let who = suspects(&g, |_| false);
        assert_eq!(who[0].0, "rsync?");
        assert!(suspects(&[], |_| true).is_empty());
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
