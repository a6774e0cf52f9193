//! The daemon alone: what `lull daemon --config FILE [--dry-run]` runs,
//! without the lab's subcommands. Used to measure the daemon's overhead
//! with a release build that does not compile the lab's dependencies:
//!
//! ```text
//! cargo build --release -p lull-live --example lulld
//! LULL=target/release/examples/lulld scripts/daemon-overhead.sh
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut config, mut dry_run, mut check) = (None, false, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "daemon" => {}
            "--config" => config = args.next(),
            "--dry-run" => dry_run = true,
            "--check" => check = true,
            other => {
                eprintln!("lulld: unknown argument {other:?}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(config) = config else {
        eprintln!("usage: lulld [daemon] --config FILE [--dry-run | --check]");
        return ExitCode::from(2);
    };
    let registry = lull_live::default_registry();
    if check {
        return match lull_live::check(config.as_ref(), &registry) {
            Ok(s) => {
                print!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("lulld: {e}");
                ExitCode::from(2)
            }
        };
    }
    lull_live::init_logging();
    match lull_live::run(lull_live::Options {
        config: config.into(),
        dry_run,
        registry,
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ lull_live::DaemonError::Config(_)) => {
            eprintln!("lulld: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("lulld: {e}");
            ExitCode::from(1)
        }
    }
}
