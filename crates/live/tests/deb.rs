//! The Debian package: built with `cargo deb` when it is installed (it is
//! not needed for CI; the test says so and passes without it), and its
//! contents checked with `dpkg-deb`.

use std::path::Path;
use std::process::Command;

fn have(prog: &str, arg: &str) -> bool {
    Command::new(prog)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn have_deb(cargo: &str) -> bool {
    Command::new(cargo)
        .args(["deb", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_package_holds_the_daemon_its_unit_and_a_conffile() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if !have_deb(&cargo) {
        lull_testkit::skip("cargo-deb is not installed (cargo install cargo-deb)");
        return;
    }
    if !have("dpkg-deb", "--version") {
        lull_testkit::skip("dpkg-deb is not installed");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tempfile::tempdir().unwrap();
    let built = Command::new(&cargo)
        .current_dir(&root)
        .args(["deb", "-p", "lull-live", "--output"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "cargo deb failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let deb = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .expect("a .deb");
    let list = Command::new("dpkg-deb")
        .arg("-c")
        .arg(&deb)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for want in [
        "./usr/bin/lulld",
        "./etc/lull.toml",
        "/systemd/system/lull.service",
        "./usr/share/doc/lull/daemon.md",
    ] {
        assert!(list.contains(want), "{want} missing from:\n{list}");
    }
    let ctl = tempfile::tempdir().unwrap();
    let x = Command::new("dpkg-deb")
        .arg("-e")
        .arg(&deb)
        .arg(ctl.path())
        .status()
        .unwrap();
    assert!(x.success());
    let conffiles = std::fs::read_to_string(ctl.path().join("conffiles")).unwrap();
    assert!(
        conffiles.lines().any(|l| l == "/etc/lull.toml"),
        "{conffiles}"
    );
    let control = std::fs::read_to_string(ctl.path().join("control")).unwrap();
    assert!(control.contains("Package: lull"), "{control}");
    // The daemon is small (no polars, no plotters): issue 18's 10 MB.
    let size = list
        .lines()
        .find(|l| l.ends_with("./usr/bin/lulld"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap();
    assert!(size <= 10 << 20, "lulld is {size} bytes");
}
