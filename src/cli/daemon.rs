//! `lull daemon`: watch live disks and act in their idle time.

use std::path::PathBuf;

use lull_live::DaemonError;

use super::CliError;

/// Flags of `lull daemon`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The TOML configuration (see `contrib/lull.toml`).
    #[arg(long)]
    config: PathBuf,
    /// Decide and log, but touch no drive, run no command and write no
    /// state file.
    #[arg(long, conflicts_with = "check")]
    dry_run: bool,
    /// Validate the configuration, show which disks it names, and exit.
    #[arg(long)]
    check: bool,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let registry = lull::registry();
    if args.check {
        let summary = lull_live::check(&args.config, &registry).map_err(CliError::input)?;
        print!("{summary}");
        return Ok(());
    }
    lull_live::init_logging().map_err(|e| CliError::input(anyhow::anyhow!(e)))?;
    lull_live::run(lull_live::Options {
        config: args.config,
        dry_run: args.dry_run,
        registry,
    })
    .map_err(|e| match e {
        DaemonError::Config(e) => CliError::input(e),
        e @ DaemonError::Runtime(_) => CliError::runtime(e),
    })
}
