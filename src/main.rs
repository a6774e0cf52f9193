//! The `lull` command: the lab (replay, rank), trace tools and the daemon.
//!
//! The command line is parsed into raw flags here, then each subcommand in
//! `cli/` validates them into the library objects that do the work, so the
//! binary stays thin.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Find idle time in storage devices and put it to work.
#[derive(Debug, Parser)]
#[command(name = "lull", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the components with their parameters, the named networks, the idle tasks and the device presets.
    Components(cli::components::Args),
    /// Replay a trace (or the built-in workload) through one detector network and an idle task.
    Replay(cli::replay::Args),
    /// Rank a grid of detector networks over traces for one idle task (tables, plots, report).
    Rank(cli::rank::Args),
    /// Redraw the plots of a `lull rank` output directory from its tables.
    Plot(cli::plot::Args),
    /// Watch live disks and put their idle time to work (spin down, flush, run a command).
    Daemon(cli::daemon::Args),
    /// Show each disk's state as the running daemon reports it (power state, spin-downs, wear budget, timeouts, wakes).
    Status(cli::status::Args),
    /// Inspect traces (`info`) or convert them to the normalized CSV (`convert`).
    Trace(cli::trace::Args),
    /// Write a built-in synthetic workload as a normalized CSV.
    Synth(cli::synth::Args),
    /// Reserve idle time for background jobs: forecast, admit, schedule on a trace (or built-in workload).
    Plan(cli::plan::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Components(args) => cli::components::run(args),
        Command::Replay(args) => cli::replay::run(args),
        Command::Rank(args) => cli::rank::run(args),
        Command::Plot(args) => cli::plot::run(args),
        Command::Daemon(args) => cli::daemon::run(args),
        Command::Status(args) => cli::status::run(args),
        Command::Trace(args) => cli::trace::run(args),
        Command::Synth(args) => cli::synth::run(args),
        Command::Plan(args) => cli::plan::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            // A closed stderr must not turn the exit code into a panic's.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "lull: {}", e.message());
            ExitCode::from(e.exit_code())
        }
    }
}
