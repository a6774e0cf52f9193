//! What a test needs from the machine, asked when its crate is built.
//!
//! **Why.** libtest has no way for a running test to say "ignored": a
//! test that returns early because `qemu-system-x86_64` is missing shows
//! as `ok`, and the line saying why is swallowed by output capture. So
//! the crates whose tests need a tool, root, loop devices or the shared
//! trace samples ask here, from their `build.rs`, and turn each answer
//! into a `cfg`. A test then carries
//! `#[cfg_attr(not(has_qemu), ignore = "needs qemu-system-x86_64")]` and
//! shows as ignored, with that reason, in `cargo test`'s summary.
//!
//! A build script takes this module alone (`lull-testkit` with
//! `default-features = false`): std only, nothing else to build.
//!
//! ```no_run
//! // build.rs
//! use lull_testkit::probe::{self, Probes};
//! let mut p = Probes::new();
//! p.cfg("has_root", probe::root());
//! p.cfg("has_qemu", probe::tool("qemu-system-x86_64").is_some());
//! ```
//!
//! **What a probe cannot know** stays a run-time check: a container
//! engine's daemon not running, a kernel download failing, a tool
//! installed or a file created after the build. Such a test still calls
//! [`crate::skip`] at run time, which fails a CI run unless `.ci/skips`
//! lists the test. A probe re-runs when `PATH` or `LULL_TRACES` changes,
//! or when a `bin` directory on `PATH` gains or loses a file (a package
//! installed); `touch build.rs` in the crate re-runs it by hand.

use std::path::{Path, PathBuf};

/// The environment variable that names the trace samples folder, when it
/// is not `../shared/traces` beside the repository.
pub const TRACES_VAR: &str = "LULL_TRACES";

/// The probes of one build script. [`Probes::new`] tells cargo when to
/// run the script again; [`Probes::cfg`] declares one `cfg` and sets it
/// when its probe found what it asks for.
#[derive(Debug, Default)]
pub struct Probes {
    declared: Vec<String>,
}

impl Probes {
    /// Starts a build script's probes: cargo runs the script again when
    /// the script changes, when `PATH` or `LULL_TRACES` changes, and when
    /// a `bin` or `sbin` directory on `PATH` changes (a tool installed or
    /// removed).
    pub fn new() -> Probes {
        println!("cargo::rerun-if-changed=build.rs");
        println!("cargo::rerun-if-env-changed=PATH");
        println!("cargo::rerun-if-env-changed={TRACES_VAR}");
        for dir in watched_dirs() {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
        Probes::default()
    }

    /// Declares `cfg(name)` (so rustc knows it) and sets it when
    /// `present`.
    ///
    /// # Panics
    /// When `name` was declared already: two probes for one name would
    /// contradict each other.
    pub fn cfg(&mut self, name: &str, present: bool) {
        assert!(
            !self.declared.iter().any(|d| d == name),
            "cfg {name} probed twice"
        );
        self.declared.push(name.to_string());
        println!("cargo::rustc-check-cfg=cfg({name})");
        if present {
            println!("cargo::rustc-cfg={name}");
        }
    }

    /// Watches `path` too, when it exists: cargo runs the script again
    /// when it changes. (A path that does not exist is not watched:
    /// cargo would run the script, and rebuild the crate, every time.)
    pub fn watch(&mut self, path: &Path) {
        if path.exists() {
            println!("cargo::rerun-if-changed={}", path.display());
        }
    }
}

/// The directories on `PATH` named `bin` or `sbin`, and `/usr/sbin` and
/// `/sbin`, that exist, once each. Only those: cargo scans a watched
/// directory whole, and a `PATH` may name a large tree.
fn watched_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in search_path() {
        let named = matches!(
            dir.file_name().and_then(|n| n.to_str()),
            Some("bin" | "sbin")
        );
        if !dir.is_absolute() || !named || !dir.is_dir() {
            continue;
        }
        let real = dir.canonicalize().unwrap_or(dir);
        if !out.contains(&real) {
            out.push(real);
        }
    }
    out
}

/// `PATH`'s directories, then `/usr/sbin` and `/sbin` (Debian leaves them
/// off a user's `PATH`, and several tools a test needs live there).
fn search_path() -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .collect()
}

/// Where `name` is, as an executable file on `PATH` (or in `/usr/sbin` or
/// `/sbin`).
pub fn tool(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    search_path().into_iter().map(|d| d.join(name)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Whether every one of `names` is a tool here ([`tool`]).
pub fn tools(names: &[&str]) -> bool {
    names.iter().all(|n| tool(n).is_some())
}

/// Whether `cargo SUB --version` works: the cargo that runs the build
/// (`$CARGO`, as tests see it too) finds the subcommand `cargo-SUB`.
pub fn cargo_subcommand(sub: &str) -> bool {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    std::process::Command::new(cargo)
        .args([sub, "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this process runs as root (effective user id 0, read from
/// `/proc/self/status`).
pub fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// Whether loop devices can be made here: root, `losetup`, and the
/// kernel's `/dev/loop-control` (an unprivileged container has none). It
/// attaches nothing; a test that finds every device taken still skips at
/// run time.
pub fn loop_devices() -> bool {
    root() && tool("losetup").is_some() && Path::new("/dev/loop-control").exists()
}

/// Whether `busybox` is on `PATH` and statically linked (`ldd` finds no
/// libraries in it), as a guest's initramfs needs it.
pub fn static_busybox() -> bool {
    let Some(busybox) = tool("busybox") else {
        return false;
    };
    // `ldd` exits non-zero on a static executable ("not a dynamic
    // executable"); without `ldd`, nobody can tell: taken as static.
    match std::process::Command::new("ldd")
        .arg(&busybox)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
    {
        Ok(s) => !s.success(),
        Err(_) => true,
    }
}

/// Whether the user `name` exists (a line of `/etc/passwd`).
pub fn user(name: &str) -> bool {
    std::fs::read_to_string("/etc/passwd")
        .is_ok_and(|p| p.lines().any(|l| l.split(':').next() == Some(name)))
}

/// The trace samples folder: `$LULL_TRACES`, else `shared/traces` beside
/// the repository whose root is `workspace`.
pub fn traces_dir(workspace: &Path) -> PathBuf {
    std::env::var_os(TRACES_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("../shared/traces"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn tools_are_found_on_path_and_a_missing_one_is_not() {
        assert!(super::tool("sh").is_some(), "every Unix has /bin/sh");
        assert!(super::tool("lull-no-such-tool-here").is_none());
        assert!(!super::tools(&["sh", "lull-no-such-tool-here"]));
    }

    #[test]
    fn root_agrees_with_id() {
        let id = std::process::Command::new("id").arg("-u").output().unwrap();
        let uid = String::from_utf8_lossy(&id.stdout).trim().to_string();
        assert_eq!(super::root(), uid == "0", "id -u says {uid}");
    }

    #[test]
    fn users_are_read_from_passwd() {
        assert!(super::user("root"));
        assert!(!super::user("lull-no-such-user"));
    }
}
