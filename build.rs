//! What lull-cli's tests need from this machine, probed when the package
//! is built (`lull_testkit::probe`): the shared trace samples, root and
//! loop devices, the Debian tools the daemon tests drive, a one-node
//! Slurm's packages, python3 and the Kubernetes schema validator. Each answer is a
//! `cfg` that a test's `ignore` attribute reads, so a test that cannot run
//! here shows as ignored, with its reason (docs/testing.md).

use std::path::Path;

use lull_testkit::probe::{self, Probes};

fn main() {
    let mut p = Probes::new();
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let traces = probe::traces_dir(Path::new(&manifest));
    p.watch(&traces);
    p.cfg("has_traces", traces.is_dir());
    let root = probe::root();
    p.cfg("has_loop", probe::loop_devices());
    // Where the daemon looks for hdparm (lull_live::drive), not `PATH`.
    p.cfg(
        "has_hdparm",
        ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
            .iter()
            .any(|d| Path::new(d).join("hdparm").exists()),
    );
    p.cfg(
        "has_mkfs_ext4",
        probe::tools(&["mkfs.ext4", "mount", "umount"]),
    );
    // scripts/slurm-test.sh: root (slurmd runs each job as its user) and
    // the daemons and clients of slurm-wlm and munge.
    p.cfg(
        "has_slurm",
        root && probe::tools(&[
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "squeue",
            "scontrol",
            "sinfo",
        ]),
    );
    // scripts/docs-check.py (tests/docs_check.rs).
    p.cfg("has_python3", probe::tool("python3").is_some());
    p.cfg(
        "has_kubernetes_validate",
        probe::tool("kubernetes-validate").is_some(),
    );
}
