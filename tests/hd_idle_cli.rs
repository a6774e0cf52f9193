//! `lull daemon --from-hd-idle`: hd-idle's options in, a configuration that
//! `lull daemon --check` accepts out, with each disk covered by the entry
//! hd-idle's rules give it. The disks are fake: a diskstats file.
//!
//! The options are the examples of hd-idle's README ("Regarding the
//! parameter -a", github.com/adelolmo/hd-idle, README.md; the same in its
//! man page debian/hd-idle.8) and the example in debian/hd-idle.default.

use std::path::Path;
use std::process::{Command, Output};

const LULL: &str = env!("CARGO_BIN_EXE_lull");

fn lull(args: &[&str]) -> Output {
    Command::new(LULL).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Converts `opts`, points the result at a temporary state file and a
/// diskstats file listing `disks`, and runs `--check` on it: the check's
/// output, one line per entry.
fn convert_and_check(dir: &Path, opts: &str, disks: &[&str]) -> (String, String) {
    let out = lull(&["daemon", "--from-hd-idle", opts]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let toml = text(&out.stdout);
    let ds = dir.join("diskstats");
    let lines: String = disks
        .iter()
        .enumerate()
        .map(|(i, d)| format!("8 {i} {d} 1 0 8 0 1 0 8 0 0 0 0 0 0 0 0 0 0\n"))
        .collect();
    std::fs::write(&ds, lines).unwrap();
    let local = toml.replacen(
        "state_file = \"/var/lib/lull/state.json\"",
        &format!(
            "state_file = \"{}\"\ndiskstats = \"{}\"",
            dir.join("state.json").display(),
            ds.display()
        ),
        1,
    );
    assert_ne!(local, toml, "the converted file sets state_file:\n{toml}");
    let f = dir.join("lull.toml");
    std::fs::write(&f, &local).unwrap();
    let check = lull(&["daemon", "--config", f.to_str().unwrap(), "--check"]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}\n{local}",
        text(&check.stderr)
    );
    (toml, text(&check.stdout))
}

/// The `--check` lines of the entries that resolved `disk` now.
fn lines_of<'a>(check: &'a str, disk: &str) -> Vec<&'a str> {
    check
        .lines()
        .filter(|l| {
            l.split_once("): ")
                .and_then(|(_, rest)| rest.split(';').next())
                .is_some_and(|found| found.split(", ").any(|k| k == disk))
        })
        .collect()
}

/// The `--check` line of the one entry that resolved `disk`.
fn line_of<'a>(check: &'a str, disk: &str) -> &'a str {
    let hits = lines_of(check, disk);
    assert_eq!(hits.len(), 1, "{disk} in {check}");
    hits[0]
}

const DISKS: &[&str] = &["sda", "sdb", "sdc", "sdaa", "nvme0n1"];

#[test]
fn readme_examples_pass_check_with_hd_idles_timeouts() {
    let dir = tempfile::tempdir().unwrap();
    // README: no options: every SCSI disk after 10 minutes.
    let (_, check) = convert_and_check(dir.path(), "", DISKS);
    for d in ["sda", "sdb", "sdc", "sdaa"] {
        assert!(
            line_of(&check, d).contains("network timer(600s)"),
            "{check}"
        );
    }
    assert!(lines_of(&check, "nvme0n1").is_empty(), "{check}");

    // README example 2.
    let (_, check) = convert_and_check(dir.path(), "-i 0 -a sda -i 300 -a sdb -i 1200", DISKS);
    assert!(
        line_of(&check, "sda").contains("network timer(300s)"),
        "{check}"
    );
    assert!(
        line_of(&check, "sdb").contains("network timer(1200s)"),
        "{check}"
    );
    // Each keeps hd-idle's timeout to set lull's savings against.
    for t in ["5m", "20m"] {
        assert!(
            check.contains(&format!(
                "savings compared with your timeout {t} in lull status"
            )),
            "{check}"
        );
    }
    for d in ["sdc", "sdaa"] {
        assert!(lines_of(&check, d).is_empty(), "{check}");
    }

    // README example 3: -c per disk.
    let (toml, check) = convert_and_check(
        dir.path(),
        "-i 0 -c ata -a sda -i 300 -a sdb -i 1200 -c scsi",
        DISKS,
    );
    assert_eq!(check.lines().filter(|l| l.starts_with("disk[")).count(), 2);
    assert_eq!(toml.matches("\nbackend = \"sgio\"").count(), 2, "{toml}");

    // debian/hd-idle.default, pasted whole.
    let (toml, check) = convert_and_check(
        dir.path(),
        "HD_IDLE_OPTS=\"-i 180 -l /var/log/hd-idle.log\"",
        DISKS,
    );
    assert!(
        line_of(&check, "sdb").contains("network timer(180s)"),
        "{check}"
    );
    assert!(toml.contains("lull writes no log file"), "{toml}");
}

#[test]
fn a_default_timeout_and_named_disks_do_not_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let (_, check) = convert_and_check(dir.path(), "-i 900 -a sdb -i 60 -a sdaa -i 0", DISKS);
    assert!(
        line_of(&check, "sdb").contains("network timer(60s)"),
        "{check}"
    );
    for d in ["sda", "sdc"] {
        assert!(
            line_of(&check, d).contains("network timer(900s)"),
            "{check}"
        );
    }
    assert!(
        lines_of(&check, "sdaa").is_empty(),
        "-i 0: never spun down\n{check}"
    );
}

#[test]
fn options_lull_cannot_convert_exit_2_naming_the_option() {
    for (opts, flag) in [
        ("-i 0 -x 3", "\"-x\""),
        ("-a sda -i soon", "-i"),
        ("-c nvme", "-c"),
        ("-spinupscript fan.sh", "-spinupscript"),
    ] {
        let out = lull(&["daemon", "--from-hd-idle", opts]);
        assert_eq!(out.status.code(), Some(2), "{opts}");
        let err = text(&out.stderr);
        assert!(err.contains(flag), "{opts}: {err}");
        assert!(out.stdout.is_empty(), "{opts}");
    }
    // Not with --config.
    let out = lull(&["daemon", "--from-hd-idle", "-i 60", "--config", "x.toml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn warnings_go_to_stderr_and_the_config_to_stdout() {
    let out = lull(&["daemon", "--from-hd-idle", "-I -i 0 -a sdb -i 600 -p 2"]);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(err.contains("-I has no exact lull equivalent"), "{err}");
    assert!(err.contains("power condition"), "{err}");
    let toml = text(&out.stdout);
    assert!(toml.contains("power_check = \"60s\""), "{toml}");
    assert!(toml.contains("# device = \"sdb\""), "{toml}");
}

/// `--from-hd-idle /etc/default/hd-idle`: the defaults file itself, read
/// as the shell that sources it would (its last `HD_IDLE_OPTS=` line);
/// the file as Debian ships it keeps hd-idle off, which is said (exit 2).
#[test]
fn the_defaults_file_converts_as_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hd-idle");
    std::fs::write(
        &file,
        "HD_IDLE_OPTS=\"-h\"\nSTART_HD_IDLE=true\nHD_IDLE_OPTS=\"-i 0 -a sdb -i 300\"\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let (_, check) = convert_and_check(dir.path(), path, &["sda", "sdb"]);
    assert!(check.contains("timer(300s)"), "{check}");
    std::fs::write(&file, "HD_IDLE_OPTS=\"-h\"\n").unwrap();
    let out = lull(&["daemon", "--from-hd-idle", path]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("Debian's default"),
        "{}",
        text(&out.stderr)
    );
}
