//! What the `lull` binary's integration tests share: running it and
//! reading its output.

#![allow(dead_code)] // Each test binary takes a part.

use std::process::{Command, Output};

/// Runs `lull ARGS…` and waits for it.
pub(crate) fn lull(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lull"))
        .args(args)
        .output()
        .expect("run lull")
}

/// Its standard error, as text.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Its standard output, as text.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
