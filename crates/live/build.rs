//! What lull-live's tests need from this machine, probed when the crate is
//! built (`lull_testkit::probe`): each answer is a `cfg` that a test's
//! `ignore` attribute reads, so a test that cannot run here shows as
//! ignored, with its reason (docs/testing.md).

use std::path::Path;

use lull_testkit::probe::{self, Probes};

fn main() {
    let mut p = Probes::new();
    let root = probe::root();
    p.cfg("has_root", root);
    p.cfg("has_loop", probe::loop_devices());
    // scripts/guest-test.sh: QEMU, a static busybox for the initramfs, kmod
    // for the guest's modules, hdparm inside the guest. (The guest kernel
    // is fetched at run time: a failed download is a run-time skip.)
    p.cfg(
        "has_guest_tools",
        probe::tool("qemu-system-x86_64").is_some()
            && probe::static_busybox()
            && probe::tools(&["depmod", "modprobe", "hdparm"]),
    );
    p.cfg("has_hd_idle", probe::tool("hd-idle").is_some());
    p.cfg(
        "has_deb_tools",
        probe::cargo_subcommand("deb") && probe::tool("dpkg-deb").is_some(),
    );
    // A container tool; whether its engine runs is known at run time only.
    p.cfg(
        "has_container_tool",
        ["podman", "buildah", "docker"]
            .iter()
            .any(|t| probe::tool(t).is_some()),
    );
    p.cfg(
        "has_runuser_nobody",
        root && probe::tool("runuser").is_some() && probe::user("nobody"),
    );
    p.cfg(
        "has_mkfs_ext4",
        probe::tools(&["mkfs.ext4", "mount", "umount"]),
    );
    p.cfg("has_block_node", block_node());
    p.cfg("has_proc_diskstats", Path::new("/proc/diskstats").is_file());
    let etc = Path::new("/etc/lull.toml");
    p.watch(etc);
    p.cfg("has_etc_lull_toml", etc.exists());
}

/// Whether a block device of `/sys/class/block` has its node in `/dev`.
fn block_node() -> bool {
    std::fs::read_dir("/sys/class/block")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| Path::new("/dev").join(e.file_name()).exists())
}
