//! `lull status`: each disk's state as the running daemon reports it
//! ([`lull_live::status`]: its metrics endpoint or textfile and its state
//! file, found through its config).

use std::path::PathBuf;

use lull_live::status::StatusError;

use super::{CliError, Format};

/// Flags of `lull status`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The daemon's TOML configuration (read only, to find its metrics and
    /// state file).
    #[arg(long, default_value = "/etc/lull.toml")]
    config: PathBuf,
    /// `text`: a block per disk, for people; `json`: one object for
    /// scripts.
    #[arg(long, default_value_t = Format::Text)]
    format: Format,
    /// Only these disks: a stable name (the state-file key, as the status
    /// prints it), a kernel name (`sdb`) or a `/dev/` path; every disk
    /// when none is given.
    disks: Vec<String>,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let text = lull_live::status::report(
        &args.config,
        args.format == Format::Json,
        &lull::registry(),
        &args.disks,
    )
    .map_err(|e| match e {
        e @ (StatusError::Config(_) | StatusError::NoSuchDisk(_)) => CliError::input(e),
        e @ StatusError::Unreachable(_) => CliError::runtime(e),
    })?;
    use std::io::Write as _;
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(CliError::runtime)
}
