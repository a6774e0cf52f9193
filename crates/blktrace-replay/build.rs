//! What this crate's tests need from this machine, probed when it is built
//! (`lull_testkit::probe`): the shared trace samples and `blkparse`. Each
//! answer is a `cfg` that a test's `ignore` attribute reads, so a test
//! that cannot run here shows as ignored, with its reason
//! (docs/testing.md).

use std::path::Path;

use lull_testkit::probe::{self, Probes};

fn main() {
    let mut p = Probes::new();
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let traces = probe::traces_dir(&Path::new(&manifest).join("../.."));
    p.watch(&traces);
    p.cfg("has_traces", traces.is_dir());
    p.cfg("has_blkparse", probe::tool("blkparse").is_some());
}
