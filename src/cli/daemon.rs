//! `lull daemon`: watch live disks and act in their idle time.
//!
//! Its flags are `lulld`'s ([`lull_live::admin::front::DaemonArgs`]), so
//! the two front ends' help cannot disagree.

use lull_live::DaemonError;
use lull_live::admin::front::{DaemonArgs, Format};

use super::CliError;

/// Flags of `lull daemon`: the daemon's own.
pub(crate) type Args = DaemonArgs;

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    if let Some(opts) = &args.from_hd_idle {
        let c = lull_live::admin::from_hd_idle::convert_arg(opts).map_err(CliError::input)?;
        for w in &c.warnings {
            eprintln!("lull: warning: {w}");
        }
        print!("{}", c.toml);
        return Ok(());
    }
    let registry = lull::registry();
    let config = args.config_path();
    if args.check {
        let report = lull_live::check_report(&config, &registry).map_err(CliError::input)?;
        match args.format {
            Format::Json => println!(
                "{}",
                serde_json::to_string_pretty(&report)
                    .map_err(|e| CliError::runtime(anyhow::anyhow!(e)))?
            ),
            Format::Text => print!("{}", report.text()),
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The options part of a command's long help: from "Options:" on.
    fn options(mut cmd: clap::Command) -> String {
        let help = cmd.render_long_help().to_string();
        let at = help.find("Options:").expect("an options section");
        help[at..].to_string()
    }

    /// `lull daemon --help` and `lulld daemon --help` describe the shared
    /// flags in the same words, and so do `lull status --help` and `lulld
    /// status --help`: both front ends take them from one definition.
    #[test]
    fn the_two_front_ends_help_alike() {
        let lull = crate::Cli::command();
        let lulld = lull_live::admin::front::Lulld::command();
        for name in ["daemon", "status"] {
            let ours = lull.find_subcommand(name).unwrap().clone();
            let theirs = lulld.find_subcommand(name).unwrap().clone();
            assert_eq!(options(ours), options(theirs), "{name}");
        }
        // And `lulld` without the word `daemon` offers the same flags.
        let daemon = lull.find_subcommand("daemon").unwrap();
        for arg in daemon.get_arguments() {
            let top = lulld
                .get_arguments()
                .find(|a| a.get_id() == arg.get_id())
                .unwrap_or_else(|| panic!("lulld has no {}", arg.get_id()));
            let words = |a: &clap::Arg| {
                (
                    a.get_help().map(ToString::to_string),
                    a.get_long_help().map(ToString::to_string),
                )
            };
            assert_eq!(words(top), words(arg), "{}", arg.get_id());
        }
        let dry = daemon
            .get_arguments()
            .find(|a| a.get_id() == "dry_run")
            .unwrap();
        let said = dry.get_help().unwrap().to_string();
        assert!(said.contains("state.dry-run.json"), "{said}");
    }
}
