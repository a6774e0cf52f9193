//! `lull daemon`: watch live disks and act in their idle time.

use std::path::PathBuf;

use lull_live::DaemonError;

use super::CliError;

/// Flags of `lull daemon`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The TOML configuration (see `contrib/lull.toml`; default
    /// /etc/lull.toml, as `lull status` and the systemd unit have it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Decide and log, but touch no drive and run no command; its state
    /// goes to a file of its own beside the state file
    /// (state.dry-run.json for state.json), its activity logs and metrics
    /// as a real run's (as `lulld --dry-run`).
    #[arg(long, conflicts_with = "check")]
    dry_run: bool,
    /// Validate the configuration, show which disks it names (with the
    /// drive each was identified as and its break-even time B), and exit.
    #[arg(long)]
    check: bool,
    /// Output format of `--check`.
    #[arg(long, value_enum, default_value_t, requires = "check")]
    format: super::Format,
    /// Print the lull configuration equivalent to hd-idle's options (the
    /// value of HD_IDLE_OPTS, quoted as one argument, or the path of
    /// hd-idle's defaults file, /etc/default/hd-idle) and exit; see
    /// docs/coming-from-hd-idle.md.
    #[arg(long, value_name = "HD_IDLE_OPTS", allow_hyphen_values = true,
          conflicts_with_all = ["config", "dry_run", "check"])]
    from_hd_idle: Option<String>,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    if let Some(opts) = &args.from_hd_idle {
        let c = lull_live::hd_idle::convert_arg(opts).map_err(CliError::input)?;
        for w in &c.warnings {
            eprintln!("lull: warning: {w}");
        }
        print!("{}", c.toml);
        return Ok(());
    }
    let registry = lull::registry();
    let config = args
        .config
        .unwrap_or_else(|| PathBuf::from("/etc/lull.toml"));
    if args.check {
        let report = lull_live::check_report(&config, &registry).map_err(CliError::input)?;
        match args.format {
            super::Format::Json => println!(
                "{}",
                serde_json::to_string_pretty(&report)
                    .map_err(|e| CliError::runtime(anyhow::anyhow!(e)))?
            ),
            super::Format::Text => print!("{}", report.text()),
        }
        return Ok(());
    }
    lull_live::init_logging().map_err(|e| CliError::input(anyhow::anyhow!(e)))?;
    lull_live::run(lull_live::Options {
        config,
        dry_run: args.dry_run,
        registry,
    })
    .map_err(|e| match e {
        DaemonError::Config(e) => CliError::input(e),
        e @ (DaemonError::Runtime(_) | DaemonError::Held(..)) => CliError::runtime(e),
    })
}
