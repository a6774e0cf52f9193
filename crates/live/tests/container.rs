//! The `Containerfile` at the repository root (docs/container.md).
//!
//! Without a container engine the file is checked against the workspace:
//! it builds a binary this crate has, copies files that exist, runs the
//! binary it installs with the configuration it installs, and declares the
//! configuration's and the state file's directories as volumes. With
//! podman, buildah, or docker with a running engine, the image is built
//! (which downloads the base images and crates) and, where the tool can run
//! it, the daemon inside validates its shipped configuration.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn containerfile() -> String {
    std::fs::read_to_string(root().join("Containerfile")).expect("Containerfile at the repo root")
}

/// The instructions, with `\` continuations joined and comments dropped.
fn instructions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && cur.is_empty()) {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(t);
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    out
}

/// The words of a JSON-array instruction (`CMD ["a", "b"]`).
fn exec_form(instr: &str) -> Vec<String> {
    let (_, rest) = instr.split_once(' ').unwrap();
    serde_json::from_str(rest.trim()).unwrap_or_else(|e| panic!("{instr}: {e}"))
}

fn find<'a>(ins: &'a [String], keyword: &str) -> Vec<&'a str> {
    ins.iter()
        .filter(|i| i.split_whitespace().next() == Some(keyword))
        .map(String::as_str)
        .collect()
}

#[test]
fn the_containerfile_matches_the_workspace() {
    let ins = instructions(&containerfile());
    // The build: this crate's daemon binary.
    let build = ins
        .iter()
        .find(|i| i.contains("cargo build"))
        .expect("a cargo build");
    let words: Vec<&str> = build.split_whitespace().collect();
    let after = |flag: &str| {
        words
            .iter()
            .position(|w| *w == flag)
            .and_then(|p| words.get(p + 1))
            .copied()
            .unwrap_or_else(|| panic!("{flag} in {build}"))
    };
    assert_eq!(after("-p"), env!("CARGO_PKG_NAME"));
    let bin = after("--bin");
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("src/bin/{bin}.rs"))
            .is_file(),
        "{bin}"
    );
    assert!(words.contains(&"--release") && words.contains(&"--locked"));
    // `install -D -m MODE SRC /out/DEST` pairs: what the image gets.
    let mut installed = Vec::new();
    for seg in build.split("&&") {
        let w: Vec<&str> = seg.split_whitespace().collect();
        if w.first() == Some(&"install") {
            let (src, dst) = (w[w.len() - 2], w[w.len() - 1]);
            let dst = dst.strip_prefix("/out").expect("installed under /out");
            if src != format!("target/release/{bin}") {
                assert!(root().join(src).is_file(), "{src} is copied into the image");
            }
            installed.push((src.to_string(), dst.to_string()));
        }
    }
    let exe = installed
        .iter()
        .find(|(s, _)| s == &format!("target/release/{bin}"))
        .map(|(_, d)| d.clone())
        .expect("the binary is installed");
    let (config_src, config_dst) = installed
        .iter()
        .find(|(s, _)| s.ends_with(".toml"))
        .cloned()
        .expect("a configuration is installed");
    // Entry point and command: that binary with that configuration.
    let entry = exec_form(find(&ins, "ENTRYPOINT")[0]);
    assert_eq!(entry, [exe]);
    let cmd = exec_form(find(&ins, "CMD")[0]);
    assert_eq!(cmd, ["--config".to_string(), config_dst.clone()]);
    // Volumes: the configuration's directory and the state file's.
    let volumes: Vec<String> = find(&ins, "VOLUME")
        .iter()
        .flat_map(|v| exec_form(v))
        .collect();
    let cfg = lull_live::Config::parse(
        Path::new(&config_dst),
        &std::fs::read_to_string(root().join(&config_src)).unwrap(),
        &lull_live::default_registry(),
    )
    .unwrap();
    let dir = |p: &Path| p.parent().unwrap().to_string_lossy().into_owned();
    assert!(
        volumes.contains(&dir(Path::new(&config_dst))),
        "{volumes:?}"
    );
    assert!(volumes.contains(&dir(&cfg.state_file)), "{volumes:?}");
    // Two stages on the same Debian release (the binary links its glibc).
    let froms = find(&ins, "FROM");
    assert_eq!(froms.len(), 2, "{froms:?}");
    let release = |f: &str| {
        f.split(['-', ':', ' '])
            .find(|w| w.starts_with("bookworm"))
            .map(str::to_string)
    };
    assert!(
        release(froms[0]).is_some() && release(froms[0]) == release(froms[1]),
        "{froms:?}"
    );
    // The build context leaves out the build directory.
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == "target"), "{ignore}");
}

/// A container tool that can build here, or why none is used.
fn tool() -> Result<&'static str, String> {
    let works = |prog: &str, args: &[&str]| {
        Command::new(prog)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works("podman", &["info"]) {
        return Ok("podman");
    }
    if works("buildah", &["--version"]) {
        return Ok("buildah");
    }
    if works("docker", &["info"]) {
        return Ok("docker");
    }
    Err("no podman, no buildah, no docker with a running engine".into())
}

#[test]
#[cfg_attr(not(has_container_tool), ignore = "needs podman, buildah or docker")]
fn the_image_builds_and_checks_its_configuration() {
    let tool = match tool() {
        Ok(t) => t,
        Err(why) => {
            lull_testkit::skip(&format!("the image build: {why}"));
            return;
        }
    };
    let tag = "localhost/lull-test:container-rs";
    let build = match tool {
        "buildah" => vec!["bud", "-f", "Containerfile", "-t", tag, "."],
        _ => vec!["build", "-f", "Containerfile", "-t", tag, "."],
    };
    let out = Command::new(tool)
        .args(&build)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tool} {build:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if tool == "buildah" {
        eprintln!("built with buildah; not run (buildah runs no containers)");
        return;
    }
    // The shipped configuration names a disk that is not here: --check
    // accepts it and says the daemon waits for it.
    let out = Command::new(tool)
        .args([
            "run",
            "--rm",
            tag,
            "--config",
            "/etc/lull/lull.toml",
            "--check",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(": ok;"), "{stdout}");
    let _ = Command::new(tool).args(["rmi", tag]).output();
}
