//! Processes from `/proc`: is a process id from the state file still the
//! command the daemon started, and how to stop a command that outlived a
//! daemon killed with SIGKILL.
//!
//! A process id alone proves nothing after a restart: the command may have
//! exited and the number been reused. The daemon records the process's
//! start time (`/proc/PID/stat` field 22, clock ticks since boot) beside
//! its id; the pair names one process for the life of the machine. The
//! daemon starts every command as the leader of its own process group, so
//! a process that is not a group leader is not one of its commands.

use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// What `/proc/PID/stat` says about a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// State letter (`R`, `S`, `T`, `Z`…).
    pub state: char,
    /// Process group.
    pub pgrp: i32,
    /// Start time, clock ticks after boot.
    pub start_ticks: u64,
}

/// Parses the text of `/proc/PID/stat` (the command name in parentheses
/// may itself hold spaces and parentheses).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = text.rsplit_once(") ")?.1;
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    // `rest` starts at field 3 (state).
    Some(Stat {
        state: f.first()?.chars().next()?,
        pgrp: f.get(2)?.parse().ok()?,
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

/// The stat of process `pid`, if it exists.
pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The command line of process `pid`.
pub fn cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        raw.split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// Programs that spin disks down on a timeout of their own. With one of
/// them running beside the real daemon, a disk is spun down by whichever
/// is first, and lull counts the other's spin-downs as its workload's.
pub const SPIN_DOWN_DAEMONS: &[&str] = &["hd-idle", "hdidle", "spindownd"];

/// The processes running now whose name (`/proc/PID/comm`) is one of
/// `names`, as (pid, name), by pid. Processes that vanish or cannot be
/// read while the list is made are skipped, and so are zombies (an
/// exited process its parent has not reaped: it runs nothing, and its
/// command line reads empty).
pub fn running_named(names: &[&str]) -> Vec<(u32, String)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out: Vec<(u32, String)> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            let comm = comm.trim_end_matches('\n');
            (names.contains(&comm) && stat(pid).is_some_and(|s| s.state != 'Z'))
                .then(|| (pid, comm.to_string()))
        })
        .collect();
    out.sort_unstable();
    out
}

/// Whether `cmdline` runs `argv`: the same arguments, the program either
/// first or after an interpreter (`/bin/sh /usr/local/bin/job.sh …`).
pub fn runs(cmdline: &[String], argv: &[String]) -> bool {
    let Some((prog, args)) = argv.split_first() else {
        return false;
    };
    cmdline.ends_with(args)
        && cmdline[..cmdline.len() - args.len()]
            .iter()
            .any(|c| c == prog)
}

/// Whether `pid` is still a command this daemon (or its previous run)
/// started: alive (not a zombie), leader of its own process group, and
/// either started at `start_ticks` (when recorded) or running one of
/// `argvs` (state files written before start times were recorded).
pub fn is_our_command(pid: u32, start_ticks: Option<u64>, argvs: &[Vec<String>]) -> bool {
    let Some(s) = stat(pid) else {
        return false;
    };
    if s.state == 'Z' || i64::from(s.pgrp) != i64::from(pid) {
        return false;
    }
    match start_ticks {
        Some(t) => s.start_ticks == t,
        None => cmdline(pid).is_some_and(|c| argvs.iter().any(|a| runs(&c, a))),
    }
}

/// Stops the process group of `pid` that is not our child: SIGCONT (a
/// paused command cannot act on SIGTERM), SIGTERM, and SIGKILL if it is
/// still there after `grace`. Returns how it ended.
pub async fn terminate_group(pid: u32, start_ticks: Option<u64>, grace: Duration) -> String {
    let Ok(raw) = i32::try_from(pid) else {
        return "pid out of range".into();
    };
    let group = Pid::from_raw(raw);
    let alive = || {
        stat(pid).is_some_and(|s| s.state != 'Z' && start_ticks.is_none_or(|t| s.start_ticks == t))
    };
    let _ = killpg(group, Signal::SIGCONT);
    if let Err(e) = killpg(group, Signal::SIGTERM) {
        return format!("SIGTERM failed: {e}");
    }
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline {
        if !alive() {
            return "ended after SIGTERM".into();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = killpg(group, Signal::SIGKILL);
    format!("killed (SIGTERM ignored for {} s)", grace.as_secs())
}

/// Sends `sig` to the process group `pid` leads (commands and hooks run in
/// a group of their own, so their children get it too).
pub fn signal_group(pid: u32, sig: nix::sys::signal::Signal) -> Result<(), String> {
    let pid = i32::try_from(pid).map_err(|_| "pid out of range".to_string())?;
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), sig)
        .map_err(|e| format!("{sig} to process group {pid}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_survive_odd_names() {
        let t = "4242 (my (odd) job) S 1 4242 4242 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 123456 2134016 161 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        assert_eq!(
            parse_stat(t),
            Some(Stat {
                state: 'S',
                pgrp: 4242,
                start_ticks: 123456
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn our_own_process_is_found_with_its_start_time() {
        let me = std::process::id();
        let s = stat(me).expect("/proc/self");
        let c = cmdline(me).unwrap();
        assert!(!c.is_empty());
        // We are not a group leader unless run so; check the parts.
        let leader = i64::from(s.pgrp) == i64::from(me);
        assert_eq!(is_our_command(me, Some(s.start_ticks), &[]), leader);
        assert!(!is_our_command(me, Some(s.start_ticks + 1), &[]));
        assert!(!is_our_command(
            u32::MAX - 1,
            None,
            std::slice::from_ref(&c)
        ));
    }

    #[test]
    fn command_lines_match_with_an_interpreter() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let argv = v(&["/usr/local/bin/job.sh", "-v"]);
        assert!(runs(&v(&["/usr/local/bin/job.sh", "-v"]), &argv));
        assert!(runs(&v(&["/bin/sh", "/usr/local/bin/job.sh", "-v"]), &argv));
        assert!(!runs(&v(&["/bin/sh", "/usr/local/bin/job.sh"]), &argv));
        assert!(!runs(&v(&["/bin/sleep", "-v"]), &argv));
    }
}
