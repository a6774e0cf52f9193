//! The disks present now, and what to say beside an entry that names
//! none of them.

use std::path::Path;

use crate::devices::partition_of;
use crate::source::Sample;

/// The whole disks in `sample`, by kernel name, sorted.
pub(crate) fn whole_disks(sample: &Sample) -> Vec<String> {
    let mut out: Vec<String> = sample
        .names()
        .filter(|n| partition_of(n, sample.names()).is_none())
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// What `--check` (and the daemon's warning) says beside a `[[disk]]`
/// whose `device` resolves to nothing now (the daemon waits for it, so a
/// typo would wait forever): a kernel name that differs from a present
/// disk's only in case is named (kernel names are case-sensitive);
/// another kernel name gets the whole disks present now (its kind first,
/// at most ten; loop, ram, zram and nbd devices only for a name of their
/// kind); a missing link, the folder that lists those present, or that
/// the folder is missing. Nothing for a glob: matching nothing yet is
/// what a glob for hot-plugged disks does.
pub(crate) fn absent_hint(device: &str, present: &[String]) -> Option<String> {
    if crate::devices::is_glob(device) {
        return None;
    }
    let name = device.strip_prefix("/dev/").unwrap_or(device);
    if !name.contains('/') {
        if let Some(p) = present.iter().find(|p| p.eq_ignore_ascii_case(name)) {
            return Some(format!(
                "kernel names are case-sensitive: did you mean `{p}`?"
            ));
        }
        // Those of the same kind first (`sd…` for `sdz`, `nvme…` for
        // `nvme1n1`: the longest common prefix): a server lists dm-, loop,
        // nbd and ram devices too.
        let common = |n: &str| {
            n.bytes()
                .zip(name.bytes())
                .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
                .count()
        };
        // Memory and loop devices (every unattached loop is listed) only
        // for a name of their kind.
        let virtual_ = |p: &str| {
            ["loop", "ram", "zram", "nbd"]
                .iter()
                .any(|v| p.starts_with(v))
        };
        let mut ordered: Vec<&str> = present
            .iter()
            .map(String::as_str)
            .filter(|p| !virtual_(p) || common(p) > 0)
            .collect();
        ordered.sort_by_key(|p| std::cmp::Reverse(common(p)));
        if ordered.is_empty() {
            return None;
        }
        let shown = ordered.iter().take(10).copied().collect::<Vec<_>>();
        let more = ordered.len() - shown.len();
        return Some(format!(
            "present now: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let dir = Path::new(device).parent()?;
    Some(if dir.is_dir() {
        format!("`ls -l {}` lists the links present now", dir.display())
    } else {
        format!("{} does not exist now", dir.display())
    })
}
