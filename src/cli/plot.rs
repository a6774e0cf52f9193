//! `lull plot DIR`: redraw the plots (and `report.md`) of a `lull rank`
//! output directory from its tables, without re-running anything.

use std::path::PathBuf;

use super::CliError;

/// Flags of `lull plot`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A `lull rank` output directory (holding run.toml and results.parquet
    /// or results.csv).
    dir: PathBuf,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let outcome = lull_rank::replot(&args.dir)?;
    for f in &outcome.figures {
        println!(
            "{}",
            args.dir
                .join("plots")
                .join(format!("{}.png", f.stem))
                .display()
        );
    }
    Ok(())
}
