//! `lulld`: the lull daemon alone, for installing instead of hd-idle.
//!
//! The same daemon as `lull daemon`, without the lab (trace replay,
//! ranking, plots), so the binary is small and links no polars or
//! plotters. Arguments:
//!
//! ```text
//! lulld [daemon] [--config FILE] [--dry-run | --check [--format json]]
//! lulld --from-hd-idle "HD_IDLE_OPTS"
//! lulld status [--config FILE] [--format json]
//! ```

use std::io::Write;
use std::process::ExitCode;

const HELP: &str = "\
lulld: put disk idle time to work (spin-down, flush, maintenance commands)

usage: lulld [daemon] [--config FILE] [--dry-run | --check [--format json]]
       lulld --from-hd-idle HD_IDLE_OPTS|/etc/default/hd-idle
       lulld status [--config FILE] [--format json] [DISK...]

  --config FILE  the TOML configuration (default /etc/lull.toml;
                 documented in /usr/share/doc/lull/lull.toml.example)
  --check        validate the configuration as a start would, list the
                 disks it names with the drive each was identified as and
                 its break-even time B, and exit (0: ok, 2: invalid;
                 --format json for scripts)
  --dry-run      decide and log, but touch no drive and run no command;
                 its state goes to a file of its own beside the state
                 file (state.dry-run.json for state.json), its activity
                 logs and metrics as a real run's
  --from-hd-idle OPTS
                 print the configuration equivalent to hd-idle's options
                 (HD_IDLE_OPTS from /etc/default/hd-idle, as one argument,
                 or that file's path) and exit (2: an option lull cannot
                 convert)
  status         print each disk's state as the running daemon reports it
                 (its metrics and state file; --config defaults to
                 /etc/lull.toml; --format json for scripts; 1: not reachable);
                 DISK... shows only those (a name as status prints it, a
                 kernel name such as sdb, or a /dev path; 2: not there)
  -h, --help     this text
  -V, --version  the version

signals: SIGHUP reloads the configuration (an invalid one is rejected and
the running one kept); SIGTERM and SIGINT stop.

environment: LULL_LOG=error|warn|info|debug|trace (default info);
LULL_LOG_FORMAT=auto|journal|plain (journal: <N> priority prefixes, the
default when stderr is systemd's journal stream).

exit codes: 0 stopped cleanly, 1 runtime failure, 2 invalid configuration
or arguments.
";

/// Writes to stderr, ignoring errors (a closed log pipe must not turn an
/// exit code into a panic).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "lulld: {text}");
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut config, mut dry_run, mut check) = (None, false, false);
    let (mut status, mut json) = (false, false);
    let mut disks = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "daemon" => {}
            "status" => status = true,
            "--format" => match args.next().as_deref() {
                Some("json") => json = true,
                Some("text") => json = false,
                _ => {
                    say("--format needs text or json");
                    return ExitCode::from(2);
                }
            },
            "--config" => match args.next() {
                Some(c) => config = Some(c),
                None => {
                    say("--config needs a file");
                    return ExitCode::from(2);
                }
            },
            "--dry-run" => dry_run = true,
            "--from-hd-idle" => {
                let Some(opts) = args.next() else {
                    say("--from-hd-idle needs hd-idle's options as one argument");
                    return ExitCode::from(2);
                };
                return match lull_live::hd_idle::convert_arg(&opts) {
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
            "--check" => check = true,
            "-h" | "--help" => {
                let _ = std::io::stdout().write_all(HELP.as_bytes());
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                let _ = writeln!(std::io::stdout(), "lulld {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            // `lulld status sdb`: the disks to show.
            other if status && !other.starts_with('-') => disks.push(other.to_string()),
            other => {
                say(&format!("unknown argument {other:?} (see lulld --help)"));
                return ExitCode::from(2);
            }
        }
    }
    if status {
        let config = config.unwrap_or_else(|| "/etc/lull.toml".into());
        let registry = lull_live::default_registry();
        return match lull_live::status::report(config.as_ref(), json, &registry, &disks) {
            Ok(text) => {
                let _ = std::io::stdout().write_all(text.as_bytes());
                ExitCode::SUCCESS
            }
            Err(e) => {
                say(&e.to_string());
                ExitCode::from(e.exit_code())
            }
        };
    }
    // As the systemd unit and `lulld status` have it: the help said so,
    // and a trial's `lulld --check` met a usage error instead.
    let config = config.unwrap_or_else(|| "/etc/lull.toml".into());
    if check && dry_run {
        say("--check and --dry-run exclude each other");
        return ExitCode::from(2);
    }
    let registry = lull_live::default_registry();
    if check {
        return match lull_live::check_report(config.as_ref(), &registry) {
            Ok(r) => {
                let s = if json {
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
        config: config.into(),
        dry_run,
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
