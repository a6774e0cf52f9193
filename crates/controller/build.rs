//! What lull-controller's tests need from this machine, probed when the
//! crate is built (`lull_testkit::probe`): each answer is a `cfg` that a
//! test's `ignore` attribute reads (docs/testing.md).

use lull_testkit::probe::{self, Probes};

fn main() {
    let mut p = Probes::new();
    p.cfg("has_root", probe::root());
}
