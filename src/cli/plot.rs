//! `lull plot DIR`: redraw the plots (and `report.md`) of a `lull rank`
//! output directory from its tables, without re-running anything.

use std::io::Write;
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
    let mut out = std::io::stdout().lock();
    for f in &outcome.figures {
        let png = args.dir.join("plots").join(format!("{}.png", f.stem));
        writeln!(out, "{}", png.display()).map_err(CliError::runtime)?;
    }
    Ok(())
}
