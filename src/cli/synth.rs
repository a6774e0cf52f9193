//! `lull synth`: write a built-in synthetic workload as a normalized CSV.

use std::path::PathBuf;

use anyhow::anyhow;
use lull_blktrace_replay::synth;
use lull_core::time::parse_duration;

use super::CliError;

/// Flags of `lull synth`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The workload: workstation, news, database, sync30 (bursty, gaps
    /// correlated over a few periods), office, home-nas, db-checkpoint,
    /// cron-server (with structure: a day from midnight), or iid-exp,
    /// iid-pareto (independent gaps); `lull components` describes each.
    #[arg(long, default_value = "workstation")]
    workload: String,
    /// How long a trace to generate (`600s`, `24h`).
    #[arg(long)]
    duration: String,
    /// Seed: the same seed gives the same trace on every machine.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the normalized CSV (written atomically).
    #[arg(short, long)]
    out: PathBuf,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let shape = synth::shape(&args.workload)
        .ok_or_else(|| CliError::input(anyhow!(synth::unknown(&args.workload))))?;
    let duration =
        parse_duration(&args.duration).map_err(|e| CliError::input(anyhow!("--duration: {e}")))?;
    if duration.0 == 0 {
        return Err(CliError::input(anyhow!("--duration must be positive")));
    }
    let trace = synth::generate(shape, duration, args.seed);
    super::trace::write_normalized(&trace, &args.out)?;
    eprintln!(
        "lull: wrote {} requests of workload {} ({}) to {}",
        trace.requests.len(),
        shape.name,
        args.duration,
        args.out.display()
    );
    Ok(())
}
