//! An embedder adds the `lull` facade, or `lull-core` + `lull-detectors`,
//! and gets nothing heavy (SPEC §1): their dependency trees stay free of
//! an async runtime, data frames, plotting, parallelism and command-line
//! parsing, and the facade's stays under a stated size.

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

/// Crates an embedder must never get through the facade, by family: a
/// name equal to one of these or starting with it and `-` is refused.
const BANNED: &[(&str, &str)] = &[
    ("tokio", "an async runtime"),
    ("async-std", "an async runtime"),
    ("smol", "an async runtime"),
    ("futures", "an async runtime's support"),
    ("mio", "an event loop"),
    ("polars", "a data-frame library"),
    ("arrow", "a columnar data library"),
    ("plotters", "a plotting library"),
    ("rayon", "a thread pool"),
    ("crossbeam", "a thread pool's support"),
    ("clap", "a command-line parser"),
    ("indicatif", "a terminal progress bar"),
];

/// The most crates (the facade included) the facade's normal dependency
/// tree may hold. Today it holds 15: lull and its four library crates;
/// serde, serde_core and serde_derive with the proc-macro crates
/// (proc-macro2, quote, syn, unicode-ident); rand, rand_core and
/// rand_pcg. A dependency that pushes past the bound is a decision to
/// take on purpose, not by accident.
const FACADE_BOUND: usize = 30;

fn banned_in(deps: &[String]) -> Vec<String> {
    deps.iter()
        .filter(|d| {
            BANNED
                .iter()
                .any(|(b, _)| *d == b || d.starts_with(&format!("{b}-")))
        })
        .cloned()
        .collect()
}

#[test]
fn the_facade_is_light() {
    let mut deps = normal_deps("lull");
    assert!(deps.iter().any(|d| d == "lull"), "{deps:?}");
    for k in ["lull-core", "lull-detectors", "lull-skeptics", "lull-tasks"] {
        assert!(
            deps.iter().any(|d| d == k),
            "the facade re-exports {k}: {deps:?}"
        );
    }
    assert!(
        !deps
            .iter()
            .any(|d| d == "lull-live" || d == "lull-rank" || d == "lull-blktrace-replay"),
        "the facade does not depend on the lab or the daemon: {deps:?}"
    );
    let banned = banned_in(&deps);
    assert!(
        banned.is_empty(),
        "the facade depends on {banned:?}; see BANNED"
    );
    deps.sort();
    deps.dedup();
    assert!(
        deps.len() <= FACADE_BOUND,
        "the facade's normal tree has {} crates, more than {FACADE_BOUND}: {deps:?}",
        deps.len()
    );
}

/// The check itself sees what it must refuse: the CLI package has every
/// banned family the facade must not.
#[test]
fn the_check_sees_the_heavy_tree() {
    let deps = normal_deps("lull-cli");
    let banned = banned_in(&deps);
    for family in ["tokio", "polars", "plotters", "rayon", "clap"] {
        assert!(
            banned.iter().any(|d| d == family),
            "{family} in the CLI's tree: {banned:?}"
        );
    }
}

#[test]
fn embedder_crates_pull_in_nothing_heavy() {
    for krate in [
        "lull-core",
        "lull-detectors",
        "lull-skeptics",
        "lull-tasks",
        "lull-reserve",
        "lull-activity",
    ] {
        let deps = normal_deps(krate);
        assert!(
            deps.iter().any(|d| d == krate),
            "{krate} is in its own tree: {deps:?}"
        );
        let banned = banned_in(&deps);
        assert!(banned.is_empty(), "{krate} depends on {banned:?}");
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

/// Crates the controller must never get, beyond [`BANNED`]: system-call
/// bindings, sockets and signal handling. The controller decides; the
/// shell (`lull-live`) does the IO. With none of these in its tree, an
/// ioctl, a spawned task or a socket in the controller does not compile.
const CONTROLLER_BANNED: &[(&str, &str)] = &[
    ("nix", "system-call bindings"),
    ("libc", "system-call bindings"),
    ("rustix", "system-call bindings"),
    ("socket2", "sockets"),
    ("signal-hook", "signal handling"),
    ("sd-notify", "the service manager's socket"),
    ("lull-live", "the daemon's shell"),
];

/// lull-controller holds every decision the daemon makes (SPEC §1): its
/// normal tree has no async runtime, event loop or system-call binding,
/// so the wall between decisions and IO is the compiler's.
#[test]
fn the_controller_does_no_io() {
    let deps = normal_deps("lull-controller");
    assert!(
        deps.iter().any(|d| d == "lull-controller"),
        "lull-controller is in its own tree: {deps:?}"
    );
    let banned = banned_in(&deps);
    assert!(
        banned.is_empty(),
        "lull-controller depends on {banned:?}; see BANNED"
    );
    let io: Vec<&String> = deps
        .iter()
        .filter(|d| {
            CONTROLLER_BANNED
                .iter()
                .any(|(b, _)| *d == b || d.starts_with(&format!("{b}-")))
        })
        .collect();
    assert!(
        io.is_empty(),
        "lull-controller depends on {io:?}; see CONTROLLER_BANNED"
    );
    // The check sees the shell's IO crates where they are.
    let live = normal_deps("lull-live");
    for k in ["tokio", "nix", "libc"] {
        assert!(live.iter().any(|d| d == k), "{k} in lull-live's tree");
    }
}
