//! `lull status`: each disk's state as the running daemon reports it
//! ([`lull_live::admin::status`]: its metrics endpoint or textfile and its
//! state file, found through its config). Its flags are `lulld status`'s
//! ([`lull_live::admin::front::StatusArgs`]).

use lull_live::admin::front::{Format, StatusArgs};
use lull_live::admin::status::StatusError;

use super::CliError;

/// Flags of `lull status`: `lulld status`'s.
pub(crate) type Args = StatusArgs;

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let text = lull_live::admin::status::report(
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
