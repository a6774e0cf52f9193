//! The daemon's front ends: one argument definition for `lulld` and
//! `lull daemon`.
//!
//! The daemon has two front ends: `lulld`, the daemon alone (what a
//! package installs), and `lull daemon`, the same daemon in the lab's
//! binary. Each used to define its flags and their help on its own, and
//! the two drifted. Now both take [`DaemonArgs`] and [`StatusArgs`] from
//! here, so a flag and its help are written once. `lulld`'s whole command
//! line is [`Lulld`]; `lull` adds its two commands to its own.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// The configuration file both front ends read without `--config`, as
/// the systemd unit has it.
pub const DEFAULT_CONFIG: &str = "/etc/lull.toml";

/// Output format of `--check` and `status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text for people.
    #[default]
    Text,
    /// JSON for programs.
    Json,
}

/// The daemon's flags: `lulld [daemon]` and `lull daemon`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct DaemonArgs {
    /// The TOML configuration (default /etc/lull.toml, as `status` and
    /// the systemd unit have it; documented in
    /// /usr/share/doc/lull/lull.toml.example and contrib/lull.toml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Decide and log, but touch no drive and run no command. Its state
    /// goes to a file of its own beside the state file
    /// (state.dry-run.json for state.json). It writes its activity logs
    /// and metrics as a real run does.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// Validate the configuration as a start would, list the disks it
    /// names with the drive each was identified as and its break-even
    /// time B, and exit (0: ok, 2: invalid).
    #[arg(long)]
    pub check: bool,
    /// Output format of `--check` (json for scripts).
    #[arg(long, value_enum, default_value_t, requires = "check")]
    pub format: Format,
    /// Print the lull configuration equivalent to hd-idle's options and
    /// exit (2: an option lull cannot convert). Give HD_IDLE_OPTS from
    /// /etc/default/hd-idle quoted as one argument, or that file's path;
    /// see docs/coming-from-hd-idle.md.
    #[arg(long, value_name = "HD_IDLE_OPTS", allow_hyphen_values = true,
          conflicts_with_all = ["config", "dry_run", "check"])]
    pub from_hd_idle: Option<String>,
}

impl DaemonArgs {
    /// The configuration file: `--config`, or [`DEFAULT_CONFIG`].
    pub fn config_path(&self) -> PathBuf {
        self.config
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG))
    }
}

/// The flags of `lulld status` and `lull status`.
#[derive(Clone, Debug, clap::Args)]
pub struct StatusArgs {
    /// The daemon's TOML configuration (read only, to find its metrics and
    /// state file).
    #[arg(long, value_name = "FILE", default_value = DEFAULT_CONFIG)]
    pub config: PathBuf,
    /// `text`: a block per disk, for people; `json`: one object for
    /// scripts.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Only these disks: a stable name (the state-file key, as the status
    /// prints it), a kernel name (`sdb`) or a `/dev/` path; every disk
    /// when none is given (2: one is not there).
    #[arg(value_name = "DISK")]
    pub disks: Vec<String>,
}

/// What `lulld --help` says after the flags.
const LULLD_AFTER: &str = "\
signals: SIGHUP reloads the configuration (an invalid one is rejected and
the running one kept); SIGTERM and SIGINT stop.

environment: LULL_LOG=error|warn|info|debug|trace (default info);
LULL_LOG_FORMAT=auto|journal|plain (journal: <N> priority prefixes, the
default when stderr is systemd's journal stream).

exit codes: 0 stopped cleanly, 1 runtime failure (status: not reachable),
2 invalid configuration or arguments.";

/// `lulld`'s command line: the daemon alone, for installing instead of
/// hd-idle.
#[derive(Debug, Parser)]
#[command(
    name = "lulld",
    version,
    about = "lulld: put disk idle time to work (spin-down, flush, maintenance commands)",
    override_usage = "lulld [daemon] [--config FILE] [--dry-run | --check [--format json]]\n       lulld --from-hd-idle HD_IDLE_OPTS|/etc/default/hd-idle\n       lulld status [--config FILE] [--format json] [DISK...]",
    after_help = LULLD_AFTER,
    args_conflicts_with_subcommands = true
)]
pub struct Lulld {
    /// `daemon` (the default) or `status`.
    #[command(subcommand)]
    pub command: Option<LulldCommand>,
    /// The daemon's flags, without the word `daemon`.
    #[command(flatten)]
    pub daemon: DaemonArgs,
}

/// `lulld`'s commands.
#[derive(Debug, Subcommand)]
pub enum LulldCommand {
    /// Watch the disks and put their idle time to work (the default).
    Daemon(DaemonArgs),
    /// Print each disk's state as the running daemon reports it (its
    /// metrics and state file).
    Status(StatusArgs),
}

impl Lulld {
    /// The command to run: `status`, or the daemon with its flags.
    pub fn into_command(self) -> LulldCommand {
        self.command.unwrap_or(LulldCommand::Daemon(self.daemon))
    }
}
