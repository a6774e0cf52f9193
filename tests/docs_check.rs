//! The docs check (issue 78, `scripts/docs-check.py`): every result figure
//! in README.md and docs/ prose is generated, dated or allowlisted with a
//! reason; "generated" claims and relative links hold. The README's
//! commands are checked against the release binary by `.ci/run`, which
//! runs the script in full after building it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn check(root: &Path) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts/docs-check.py"))
        .args(["--no-commands", "--root"])
        .arg(root)
        .output()
        .expect("python3 runs")
}

/// A copy of what the check reads: README.md, docs/ and scripts/ (the
/// block list and the allowlist); the rest is linked.
fn copy_of_docs(dir: &Path) {
    let root = repo();
    fs::copy(root.join("README.md"), dir.join("README.md")).unwrap();
    for sub in ["docs", "scripts"] {
        fs::create_dir(dir.join(sub)).unwrap();
        for e in fs::read_dir(root.join(sub)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                fs::copy(e.path(), dir.join(sub).join(e.file_name())).unwrap();
            } else {
                std::os::unix::fs::symlink(e.path(), dir.join(sub).join(e.file_name())).unwrap();
            }
        }
    }
    for other in fs::read_dir(&root).unwrap() {
        let other = other.unwrap();
        let name = other.file_name();
        if !dir.join(&name).exists() && name != "target" && name != ".git" {
            std::os::unix::fs::symlink(other.path(), dir.join(&name)).unwrap();
        }
    }
}

#[test]
#[cfg_attr(not(has_python3), ignore = "needs python3")]
fn readme_and_docs_pass_the_docs_check() {
    let out = check(&repo());
    assert!(
        out.status.success(),
        "scripts/docs-check.py --no-commands failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A hand-typed figure planted in a copy of docs/results.md, and a dead
/// link in a copy of the README, each fail the check, named by line.
#[test]
#[cfg_attr(not(has_python3), ignore = "needs python3")]
fn a_planted_hand_typed_figure_fails_the_docs_check() {
    let tmp = tempfile::tempdir().unwrap();
    copy_of_docs(tmp.path());
    assert!(
        check(tmp.path()).status.success(),
        "the unplanted copy fails"
    );

    let results = tmp.path().join("docs/results.md");
    let text = fs::read_to_string(&results).unwrap();
    let at = text.find("\n## ").expect("results.md has a section") + 1;
    let planted = format!(
        "{}On the NAS drive `auto` saves 13.37 % more than hd-idle.\n\n{}",
        &text[..at],
        &text[at..]
    );
    fs::write(&results, planted).unwrap();
    let out = check(tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a planted figure passed:\n{err}");
    assert!(
        err.contains("docs/results.md:") && err.contains("'13.37 %'"),
        "{err}"
    );

    // Dated, the same sentence is a record and passes.
    fs::write(
        &results,
        fs::read_to_string(&results)
            .unwrap()
            .replace("than hd-idle.\n", "than hd-idle (2026-12-07).\n"),
    )
    .unwrap();
    assert!(check(tmp.path()).status.success());

    let readme = tmp.path().join("README.md");
    let text = fs::read_to_string(&readme).unwrap();
    fs::write(&readme, text + "\nSee [the lab](docs/no-such-page.md).\n").unwrap();
    let out = check(tmp.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a dead link passed:\n{err}");
    assert!(err.contains("dead link docs/no-such-page.md"), "{err}");
}
