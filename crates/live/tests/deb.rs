//! The Debian package: built with `cargo deb` and its contents checked
//! with `dpkg-deb`; ignored, saying so, without them (build.rs probes for
//! both; `.ci/run` installs cargo-deb).

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
#[cfg_attr(
    not(has_deb_tools),
    ignore = "needs cargo-deb and dpkg-deb (cargo install cargo-deb)"
)]
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
        "./usr/share/doc/lull/coming-from-hd-idle.md",
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
    // README.md and docs/daemon.md say how large the package is ("a 1.1
    // MB package, 3.4 MB installed"); hold both figures to what was built
    // here, within a tenth either way (toolchains and dependency updates
    // move them a little; a figure off by more is stale).
    let built = std::fs::metadata(&deb).unwrap().len() as f64 / 1e6;
    let installed_built = size as f64 / 1e6;
    for doc in ["README.md", "docs/daemon.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let (package, installed) =
            readme_package_mb(&text).unwrap_or_else(|| panic!("{doc} states the package's size"));
        for (what, claimed, measured) in [
            ("package", package, built),
            ("installed daemon", installed, installed_built),
        ] {
            assert!(
                (measured - claimed).abs() <= 0.1 * claimed,
                "{doc} says the {what} is {claimed} MB; `cargo deb -p lull-live` built {measured:.2} MB: update {doc}"
            );
        }
    }
}

/// The sizes a document gives for the daemon's package and the installed
/// daemon: "a P MB package, I MB installed".
fn readme_package_mb(readme: &str) -> Option<(f64, f64)> {
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = flat.find(" MB package, ")?;
    let package = flat[..at].rsplit(' ').next()?.parse().ok()?;
    let rest = &flat[at + " MB package, ".len()..];
    let installed = rest.split(' ').next()?.parse().ok()?;
    rest.split(' ').nth(1).filter(|w| *w == "MB")?;
    Some((package, installed))
}

#[test]
fn the_readme_package_size_is_read() {
    assert_eq!(
        readme_package_mb("no lab dependencies: a 1.0 MB package,\n3.2 MB installed, as built"),
        Some((1.0, 3.2))
    );
    assert_eq!(
        readme_package_mb("a 1.0 MB package, 3.2 MiB installed"),
        None
    );
    assert_eq!(readme_package_mb("2.6 MB on disk"), None);
}
