//! `lulld`: the lull daemon alone, for installing instead of hd-idle.
//!
//! The same daemon as `lull daemon`, without the lab (trace replay,
//! ranking, plots), so the binary is small and links no polars or
//! plotters. Its command line is [`lull_live::admin::front::Lulld`], whose
//! flags `lull daemon` and `lull status` share:
//!
//! ```text
//! lulld [daemon] [--config FILE] [--dry-run | --check [--format json]]
//! lulld --from-hd-idle "HD_IDLE_OPTS"
//! lulld status [--config FILE] [--format json] [DISK...]
//! ```

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use lull_live::admin::front::{DaemonArgs, Format, Lulld, LulldCommand, StatusArgs};

/// Writes to stderr, ignoring errors (a closed log pipe must not turn an
/// exit code into a panic).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "lulld: {text}");
}

fn main() -> ExitCode {
    match Lulld::parse().into_command() {
        LulldCommand::Status(args) => status(args),
        LulldCommand::Daemon(args) => daemon(args),
    }
}

/// `lulld status`.
fn status(args: StatusArgs) -> ExitCode {
    let registry = lull_live::default_registry();
    let json = args.format == Format::Json;
    match lull_live::admin::status::report(&args.config, json, &registry, &args.disks) {
        Ok(text) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            say(&e.to_string());
            ExitCode::from(e.exit_code())
        }
    }
}

/// `lulld [daemon]`: `--from-hd-idle`, `--check` or the daemon.
fn daemon(args: DaemonArgs) -> ExitCode {
    if let Some(opts) = &args.from_hd_idle {
        return match lull_live::admin::from_hd_idle::convert_arg(opts) {
            Ok(c) => {
                c.warnings
                    .iter()
                    .for_each(|w| say(&format!("warning: {w}")));
                let _ = std::io::stdout().write_all(c.toml.as_bytes());
                ExitCode::SUCCESS
            }
            Err(e) => {
                say(&e.to_string());
                ExitCode::from(2)
            }
        };
    }
    let config = args.config_path();
    let registry = lull_live::default_registry();
    if args.check {
        return match lull_live::check_report(&config, &registry) {
            Ok(r) => {
                let s = if args.format == Format::Json {
                    let mut s = serde_json::to_string_pretty(&r).unwrap_or_default();
                    s.push('\n');
                    s
                } else {
                    r.text()
                };
                let _ = std::io::stdout().write_all(s.as_bytes());
                ExitCode::SUCCESS
            }
            Err(e) => {
                say(&e.to_string());
                ExitCode::from(2)
            }
        };
    }
    if let Err(e) = lull_live::init_logging() {
        say(&e);
        return ExitCode::from(2);
    }
    match lull_live::run(lull_live::Options {
        config,
        dry_run: args.dry_run,
        registry,
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ lull_live::DaemonError::Config(_)) => {
            say(&e.to_string());
            ExitCode::from(2)
        }
        Err(e) => {
            say(&e.to_string());
            ExitCode::from(1)
        }
    }
}
