//! Real actions on drives: `hdparm` (the last-resort transport of
//! [`crate::transport`], which owns standby and the power state), and
//! `syncfs` of a disk's mounted file systems.
//!
//! Every function here blocks or awaits a child process, and is called
//! only from a disk's actor task (see [`crate::daemon`]), never from the
//! poll loop, so a drive that takes 30 s to answer delays nothing else.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use lull_controller::drive::{Backend, PowerState, backend_name, hdparm_power_state};

/// Where `hdparm` is: the usual system directories, in order (no `$PATH`
/// search, so a root daemon never runs a program a user placed earlier in
/// its path). The configuration's `hdparm` key names another
/// ([`hdparm_program`]); nothing else does: no environment variable
/// chooses a program the daemon runs.
pub fn hdparm_path() -> Option<PathBuf> {
    [
        "/usr/sbin/hdparm",
        "/sbin/hdparm",
        "/usr/bin/hdparm",
        "/bin/hdparm",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

/// The `hdparm` the daemon runs: `configured` (the config's `hdparm`
/// key, checked like a command when the file was read), else the one in
/// the system directories ([`hdparm_path`]).
pub fn hdparm_program(configured: Option<&Path>) -> Option<PathBuf> {
    configured.map(Path::to_path_buf).or_else(hdparm_path)
}

/// The message when `hdparm` is missing.
const NO_HDPARM: &str = "hdparm is not installed (looked in /usr/sbin, /sbin, /usr/bin, /bin); install it or set backend = \"sgio\"";

/// How long `hdparm` may take before it is killed.
const HDPARM_TIMEOUT: Duration = Duration::from_secs(60);

/// Judges what `hdparm FLAG DEV` printed and how it exited: its output, or
/// an error naming the failing line.
fn hdparm_judge(
    flag: &str,
    dev: &Path,
    status: std::process::ExitStatus,
    stdout: &[u8],
    stderr: &[u8],
) -> Result<String, String> {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(stdout),
        String::from_utf8_lossy(stderr)
    );
    let failed = text
        .lines()
        .find(|l| l.contains("failed") || l.contains("bad/missing sense") || l.contains("No such"))
        .map(str::trim);
    if !status.success() || failed.is_some() {
        let why = failed
            .or_else(|| text.lines().map(str::trim).rfind(|l| !l.is_empty()))
            .unwrap_or("no output");
        return Err(format!(
            "hdparm {flag} {} failed ({status}): {why}",
            dev.display()
        ));
    }
    Ok(text)
}

/// Runs `hdparm FLAG DEV` (at most [`HDPARM_TIMEOUT`]) and returns its
/// output. It blocks: the transport code calls it on tokio's blocking
/// pool.
pub(crate) fn hdparm(prog: Option<&Path>, flag: &str, dev: &Path) -> Result<String, String> {
    use std::io::Read;
    let prog = prog.ok_or(NO_HDPARM)?;
    let mut child = std::process::Command::new(prog)
        .arg(flag)
        .arg(dev)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", prog.display()))?;
    let start = std::time::Instant::now();
    // Its output is a few lines, well below a pipe's buffer: waiting
    // before reading cannot deadlock.
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() < HDPARM_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "hdparm {flag} {}: no answer in 60 s",
                    dev.display()
                ));
            }
            Err(e) => return Err(format!("{}: {e}", prog.display())),
        }
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_end(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_end(&mut err);
    }
    hdparm_judge(flag, dev, status, &out, &err)
}

/// The mount points of file systems on the devices `devs` (major, minor),
/// from a `/proc/self/mountinfo` text, one per file system.
///
/// A file system is on a device when mountinfo's device field names it, or,
/// for file systems that report an anonymous device there (btrfs), when
/// the mount source is a block device that `source_dev` resolves to one of
/// `devs` ([`block_device_numbers`] in the daemon; a table in tests).
pub fn mounts_on(
    mountinfo: &str,
    devs: &[(u32, u32)],
    source_dev: impl Fn(&str) -> Option<(u32, u32)>,
) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let mut f = line.split(' ');
        let (Some(_), Some(_), Some(dev), Some(_), Some(mnt)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let Some((ma, mi)) = dev.split_once(':') else {
            continue;
        };
        let (Ok(ma), Ok(mi)) = (ma.parse::<u32>(), mi.parse::<u32>()) else {
            continue;
        };
        // After the optional fields: " - fstype source options".
        let source = line
            .split_once(" - ")
            .and_then(|(_, rest)| rest.split(' ').nth(1))
            .map(unescape);
        let on_dev = devs.contains(&(ma, mi))
            || (ma == 0
                && source
                    .as_deref()
                    .filter(|s| s.starts_with('/'))
                    .and_then(&source_dev)
                    .is_some_and(|d| devs.contains(&d)));
        if on_dev && !seen.contains(&(ma, mi)) {
            seen.push((ma, mi));
            out.push(PathBuf::from(unescape(mnt)));
        }
    }
    out
}

/// The (major, minor) numbers of the block device at `path`, if it is one.
pub fn block_device_numbers(path: &str) -> Option<(u32, u32)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    dev_numbers(meta.rdev())
}

/// The (major, minor) numbers of a `dev_t` (a block device's `st_rdev`, a
/// file system's `st_dev`).
pub(crate) fn dev_numbers(dev: u64) -> Option<(u32, u32)> {
    Some((
        u32::try_from(nix::sys::stat::major(dev)).ok()?,
        u32::try_from(nix::sys::stat::minor(dev)).ok()?,
    ))
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `syncfs` of every file system mounted from `devs`; returns the mount
/// points synced.
pub async fn flush(devs: Vec<(u32, u32)>) -> Result<Vec<PathBuf>, String> {
    tokio::task::spawn_blocking(move || {
        let info = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let mounts = mounts_on(&info, &devs, block_device_numbers);
        let mut errors = Vec::new();
        for m in &mounts {
            let r = std::fs::File::open(m)
                .map_err(|e| e.to_string())
                .and_then(|f| nix::unistd::syncfs(f.as_fd()).map_err(|e| e.to_string()));
            if let Err(e) = r {
                errors.push(format!("{}: {e}", m.display()));
            }
        }
        if errors.is_empty() {
            Ok(mounts)
        } else {
            Err(format!("syncfs failed: {}", errors.join("; ")))
        }
    })
    .await
    .map_err(|e| e.to_string())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_mounts_of_a_disk() {
        let info = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                    23 22 8:2 / /srv/my\\040data rw shared:2 - xfs /dev/sda2 rw\n\
                    24 22 8:2 /sub /bind rw shared:2 - xfs /dev/sda2 rw\n\
                    25 22 8:17 / /other rw shared:3 - ext4 /dev/sdb1 rw\n";
        let m = mounts_on(info, &[(8, 0), (8, 1), (8, 2)], |_| None);
        assert_eq!(m, [PathBuf::from("/"), PathBuf::from("/srv/my data")]);
    }

    #[test]
    fn finds_btrfs_by_its_mount_source() {
        // btrfs reports an anonymous device (0:N); its source names the
        // disk. Subvolume mounts of one file system share the 0:N number.
        let info = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                    40 22 0:45 /@data /data rw,relatime shared:5 - btrfs /dev/sdc1 rw,space_cache=v2\n\
                    41 22 0:45 /@home /home rw,relatime shared:6 - btrfs /dev/sdc1 rw,space_cache=v2\n\
                    42 22 0:46 / /scratch rw shared:7 - btrfs /dev/sdd rw\n\
                    43 22 0:47 / /merged rw shared:8 - overlay overlay rw,lowerdir=/a\n\
                    44 22 0:48 / /tmp rw shared:9 - tmpfs tmpfs rw\n";
        let table = |s: &str| match s {
            "/dev/sdc1" => Some((8, 33)),
            "/dev/sdd" => Some((8, 48)),
            _ => None,
        };
        assert_eq!(
            mounts_on(info, &[(8, 32), (8, 33)], table),
            [PathBuf::from("/data")]
        );
        assert_eq!(
            mounts_on(info, &[(8, 48)], table),
            [PathBuf::from("/scratch")]
        );
        assert!(mounts_on(info, &[(8, 64)], table).is_empty());
    }

    #[test]
    fn block_device_numbers_of_files_that_are_not_devices() {
        assert_eq!(block_device_numbers("/proc/self/mountinfo"), None);
        assert_eq!(block_device_numbers("/no/such/device"), None);
    }

    #[test]
    #[cfg_attr(not(has_block_node), ignore = "needs a block device node in /dev")]
    fn block_device_numbers_agree_with_sysfs() {
        // Any block device node that exists here (loop devices usually do).
        let found = std::fs::read_dir("/sys/class/block")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let node = format!("/dev/{name}");
                std::path::Path::new(&node).exists().then_some((name, node))
            })
            .next();
        let Some((name, node)) = found else {
            lull_testkit::skip("no block device node in /dev");
            return;
        };
        let sysfs = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).unwrap();
        let (ma, mi) = sysfs.trim().split_once(':').unwrap();
        assert_eq!(
            block_device_numbers(&node),
            Some((ma.parse().unwrap(), mi.parse().unwrap())),
            "{node}"
        );
    }
}
