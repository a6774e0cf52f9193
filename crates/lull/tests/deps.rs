//! An embedder who wants detectors needs `lull-core` + `lull-detectors`,
//! nothing heavy (SPEC §1): their dependency trees stay free of tokio,
//! polars and plotters.

use std::process::Command;

fn normal_deps(krate: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            krate,
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {krate}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn embedder_crates_pull_in_nothing_heavy() {
    for krate in [
        "lull-core",
        "lull-detectors",
        "lull-skeptics",
        "lull-reserve",
        "lull-activity",
    ] {
        let deps = normal_deps(krate);
        assert!(
            deps.iter().any(|d| d == krate),
            "{krate} is in its own tree: {deps:?}"
        );
        for banned in ["tokio", "polars", "plotters", "rayon"] {
            assert!(
                !deps
                    .iter()
                    .any(|d| d == banned || d.starts_with(&format!("{banned}-"))),
                "{krate} depends on {banned}: {deps:?}"
            );
        }
    }
    // Core itself: serde only.
    let core: Vec<String> = normal_deps("lull-core")
        .into_iter()
        .filter(|d| d != "lull-core")
        .collect();
    for d in &core {
        assert!(
            [
                "serde",
                "serde_core",
                "serde_derive",
                "proc-macro2",
                "quote",
                "syn",
                "unicode-ident"
            ]
            .contains(&d.as_str()),
            "lull-core without features depends on {d}"
        );
    }
}
