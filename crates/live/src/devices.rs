//! Which block devices a `[[disk]]`'s `device` names.
//!
//! A kernel name (`sda`), a path under `/dev` (`/dev/sda`,
//! `/dev/disk/by-id/ata-…`, followed to the kernel name it points to now),
//! or a glob of either (`sd?`, `/dev/disk/by-id/ata-WDC*`). Globs match
//! whole disks only, never partitions, and are re-evaluated whenever the set
//! of block devices changes, so a disk plugged in later is picked up. The
//! daemon acts only on what this module resolves: a device the config does
//! not name is never touched.

use std::path::Path;

use crate::source::is_partition_name;

pub use lull_controller::glob::{glob_match, is_glob};

/// One device a config entry resolved to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Resolved {
    /// The stable name used in the state file and metrics: the device as
    /// configured, or for a glob the matching name.
    pub key: String,
    /// Its kernel name now.
    pub kernel: String,
}

/// Resolves `device` among the present block devices `names` (diskstats).
/// A literal device that is absent resolves to nothing.
pub fn resolve<'a>(device: &str, names: impl Iterator<Item = &'a str> + Clone) -> Vec<Resolved> {
    let present = |k: &str| names.clone().any(|n| n == k);
    let whole_disk = |k: &str| partition_of(k, names.clone()).is_none();
    let mut out = Vec::new();
    if let Some(rest) = device.strip_prefix('/') {
        let path = Path::new(device);
        if is_glob(rest) {
            let (Some(dir), Some(pat)) = (path.parent(), path.file_name()) else {
                return out;
            };
            let pat = pat.to_string_lossy();
            let Ok(rd) = std::fs::read_dir(dir) else {
                return out;
            };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !glob_match(&pat, &name) {
                    continue;
                }
                if let Some(k) = kernel_name(&e.path())
                    && present(&k)
                    && whole_disk(&k)
                {
                    out.push(Resolved {
                        key: e.path().to_string_lossy().into_owned(),
                        kernel: k,
                    });
                }
            }
        } else if let Some(k) = kernel_name(path)
            && present(&k)
        {
            out.push(Resolved {
                key: device.to_string(),
                kernel: k,
            });
        }
    } else if is_glob(device) {
        for n in names.clone() {
            if glob_match(device, n) && whole_disk(n) {
                out.push(Resolved {
                    key: n.to_string(),
                    kernel: n.to_string(),
                });
            }
        }
    } else if present(device) {
        out.push(Resolved {
            key: device.to_string(),
            kernel: device.to_string(),
        });
    }
    out.sort();
    out.dedup_by(|a, b| a.kernel == b.kernel);
    out
}

/// The whole disk `kernel` is a partition of, among the present block
/// devices `names` (the kernel's naming rule: `sdb1` of `sdb`, `nvme0n1p2`
/// of `nvme0n1`), or `None` for a whole disk. Globs never match
/// partitions; a literal name or path can name one, and the daemon refuses
/// it ([`partition_message`]).
pub fn partition_of<'a>(kernel: &str, mut names: impl Iterator<Item = &'a str>) -> Option<String> {
    names
        .find(|&n| n != kernel && is_partition_name(n, kernel))
        .map(str::to_string)
}

/// Why a `[[disk]]` whose `device` is a partition is refused: the daemon
/// would judge the whole disk idle from one partition's I/O, and a
/// spin-down sent to a partition reaches its whole disk.
pub fn partition_message(device: &str, kernel: &str, disk: &str) -> String {
    // Devices with no serial number get no /dev/disk/by-id/ link: the
    // hint names what the admin can write.
    let virtual_disk = ["loop", "ram", "zram", "nbd"]
        .iter()
        .any(|p| disk.starts_with(p));
    let instead = if virtual_disk {
        format!("/dev/{disk}")
    } else {
        format!("e.g. its /dev/disk/by-id/ link (`ls -l /dev/disk/by-id/ | grep -w {disk}`)")
    };
    format!(
        "`{device}` is {kernel} now, a partition of {disk}: lull watches and acts on whole disks (a spin-down sent to a partition stops the whole disk, whatever its other partitions are doing, and one partition's I/O does not say the disk is idle); name the disk instead, {instead}"
    )
}

/// The kernel name a `/dev` path points to (following symlinks).
pub(crate) fn kernel_name(path: &Path) -> Option<String> {
    let real = std::fs::canonicalize(path).ok()?;
    if !real.starts_with("/dev") {
        return None;
    }
    let name = real.file_name()?.to_string_lossy().into_owned();
    // /dev/mapper/x and friends are links to /dev/dm-N; a path in a
    // subdirectory that is not a link is not a kernel name.
    (real.parent() == Some(Path::new("/dev"))).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("sd?", "sda"));
        assert!(!glob_match("sd?", "sda1"));
        assert!(glob_match("sd*", "sdab"));
        assert!(glob_match("ata-WDC*", "ata-WDC_WD40"));
        assert!(glob_match("sd[a-c]", "sdb"));
        assert!(!glob_match("sd[!a-c]", "sdb"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a*b", "acbc"));
        assert!(glob_match("a*b*c", "aXbYbZc"));
    }

    #[test]
    fn names_resolve_to_present_whole_disks() {
        let names = ["sda", "sda1", "sdb", "sdb2", "loop0", "dm-0"];
        let it = || names.iter().copied();
        assert_eq!(partition_of("sda1", it()).as_deref(), Some("sda"));
        assert_eq!(partition_of("sda", it()), None);
        assert_eq!(resolve("sda", it()).len(), 1);
        assert!(resolve("sdc", it()).is_empty());
        let v: Vec<String> = resolve("sd*", it()).into_iter().map(|r| r.kernel).collect();
        assert_eq!(v, ["sda", "sdb"]);
        assert!(resolve("/dev/does-not-exist-lull", it()).is_empty());
    }

    /// A loop device has no /dev/disk/by-id/ link: its partition's message
    /// names `/dev/loopN`, a drive's the by-id link to look up.
    #[test]
    fn the_partition_hint_names_what_the_admin_can_write() {
        let loop_msg = partition_message("/dev/loop3p1", "loop3p1", "loop3");
        assert!(
            loop_msg.ends_with("name the disk instead, /dev/loop3"),
            "{loop_msg}"
        );
        let sd = partition_message("sdb1", "sdb1", "sdb");
        assert!(sd.contains("/dev/disk/by-id/ | grep -w sdb"), "{sd}");
    }
}
