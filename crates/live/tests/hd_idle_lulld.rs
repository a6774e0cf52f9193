//! `lulld --from-hd-idle`: the daemon-only binary converts hd-idle's options
//! as `lull daemon --from-hd-idle` does (the same code, `lull_live::admin::from_hd_idle`)
//! and exits 2 naming an option it cannot convert.

use std::process::Command;

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");

#[test]
fn lulld_converts_the_readme_example() {
    // hd-idle's README, "Regarding the parameter -a", example 2
    // (github.com/adelolmo/hd-idle).
    let out = Command::new(LULLD)
        .args(["--from-hd-idle", "-i 0 -a sda -i 300 -a sdb -i 1200"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let toml = String::from_utf8(out.stdout).unwrap();
    let cfg = lull_live::Config::parse(
        std::path::Path::new("converted.toml"),
        &toml,
        &lull_live::default_registry(),
    )
    .unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let got: Vec<(&str, &str)> = cfg
        .disks
        .iter()
        .map(|d| (d.device.as_str(), d.network.as_str()))
        .collect();
    assert_eq!(got, [("sda", "timer(300s)"), ("sdb", "timer(1200s)")]);
    // No `poll` pinned: the file gets the poll a hand-written one gets,
    // derived as hd-idle polls (a tenth of the shortest timeout, 300 s).
    assert!(
        !toml.lines().any(|l| l.trim_start().starts_with("poll")),
        "{toml}"
    );
    assert!(cfg.poll_derived, "{toml}");
    assert_eq!(cfg.poll, lull_core::time::Nanos::from_secs(30));
}

#[test]
fn lulld_refuses_an_unknown_option() {
    let out = Command::new(LULLD)
        .args(["--from-hd-idle", "-a sda -q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"-q\""), "{err}");
    let out = Command::new(LULLD).arg("--from-hd-idle").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
