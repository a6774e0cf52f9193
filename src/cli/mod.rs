//! Subcommands. Each has an `Args` (clap) and a `run` that returns a
//! [`CliError`] saying whether the input or the system is at fault.

pub(crate) mod components;
pub(crate) mod daemon;
pub(crate) mod plan;
pub(crate) mod plot;
pub(crate) mod rank;
pub(crate) mod replay;
pub(crate) mod status;
pub(crate) mod synth;
pub(crate) mod trace;

use std::fmt;

/// An error with its exit code: 2 for usage or input errors, 1 for runtime
/// failures.
#[derive(Debug)]
pub(crate) enum CliError {
    /// Bad flags, spec, config or trace: exit code 2.
    Input(anyhow::Error),
    /// Something failed while running: exit code 1.
    Runtime(anyhow::Error),
}

impl CliError {
    pub(crate) fn input(e: impl Into<anyhow::Error>) -> Self {
        CliError::Input(e.into())
    }
    pub(crate) fn runtime(e: impl Into<anyhow::Error>) -> Self {
        CliError::Runtime(e.into())
    }
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 2,
            CliError::Runtime(_) => 1,
        }
    }
    /// The error and its causes, each once, on one line.
    pub(crate) fn message(&self) -> String {
        format!("{:#}", self.error())
    }
    fn error(&self) -> &anyhow::Error {
        match self {
            CliError::Input(e) | CliError::Runtime(e) => e,
        }
    }
    /// Whether stdout was closed under us (`lull components | head`):
    /// not a failure of lull, so it ends quietly with status 0.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        self.error().chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        })
    }
}

impl From<lull_blktrace_replay::TraceError> for CliError {
    fn from(e: lull_blktrace_replay::TraceError) -> Self {
        if e.is_input_error() {
            CliError::Input(e.into())
        } else {
            CliError::Runtime(e.into())
        }
    }
}

impl From<lull_blktrace_replay::ReplayError> for CliError {
    fn from(e: lull_blktrace_replay::ReplayError) -> Self {
        match e {
            lull_blktrace_replay::ReplayError::Engine(_)
            | lull_blktrace_replay::ReplayError::Learned(_) => CliError::Runtime(e.into()),
            _ => CliError::Input(e.into()),
        }
    }
}

/// Checks an output directory given with `flag` before any work: a path
/// that exists and is not a directory is the user's mistake (exit 2),
/// named at once instead of as `File exists` (exit 1) after the run.
pub(crate) fn check_out_dir(flag: &str, dir: &std::path::Path) -> Result<(), CliError> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(CliError::input(anyhow::anyhow!(
            "{flag} {}: exists and is not a directory (name a new or an existing directory)",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// Output format of reporting subcommands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// A table for people.
    #[default]
    Text,
    /// JSON for programs.
    Json,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Text => "text",
            Format::Json => "json",
        })
    }
}

/// A measure for text output: counts (`spinups`, `delayed_ops`, …, bytes)
/// as integers, everything else with six decimals.
///
/// A count is a key that names things in the plural (ends in `s` but not
/// in the seconds suffix `_s`) holding a whole number; a fractional value
/// always keeps its decimals, so nothing is lost if a key is misjudged.
/// The trace-source flags `lull replay`, `lull rank` and `lull plan`
/// share: which device of a trace, how much of a built-in workload and
/// with which seed, and whether bad records are skipped. Each command
/// keeps its own positional traces and `--workload` (one default each, or
/// several for `rank`), the only source flags whose defaults differ.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SourceArgs {
    /// Which device of a multi-device trace (default: the busiest).
    #[arg(long)]
    pub(crate) disk: Option<String>,
    /// Length of the built-in workload(s) used without a trace.
    #[arg(long, default_value = "24h")]
    pub(crate) duration: String,
    /// Seed of the built-in workload(s).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Skip malformed trace records (and report how many) instead of
    /// failing.
    #[arg(long)]
    pub(crate) lenient: bool,
    /// Read the trace as a CSV or TSV with this column map, e.g.
    /// `time=timestamp:s,op=rw_flag,sector,bytes=size*512,device`.
    /// Fields: time (required; unit s, ms, us or ns), completion or
    /// latency (unit, latency's default ms), op, sector or offset, bytes
    /// (`*N` multiplies), device.
    #[arg(long, value_name = "MAP")]
    pub(crate) columns: Option<String>,
}

/// Opens the trace at `path`: with a `--columns` map as a CSV or TSV read
/// with it, else in the format its content shows.
pub(crate) fn open_trace(
    path: &std::path::Path,
    columns: Option<&str>,
    lenient: bool,
) -> Result<lull_blktrace_replay::Trace, CliError> {
    let opts = lull_blktrace_replay::ReadOptions { lenient };
    match columns {
        Some(map) => {
            let map = lull_blktrace_replay::columns::ColumnMap::parse(map)
                .map_err(|e| CliError::input(anyhow::anyhow!(e)))?;
            Ok(lull_rank::columns::read(path, &map, opts)?)
        }
        None => Ok(lull_blktrace_replay::open(path, opts)?),
    }
}

/// The drive preset a daemon's activity log names in its last session,
/// when it can model spin-down (`None`, with a note on stderr, when it
/// names none that can).
pub(crate) fn session_drive(session: &lull_blktrace_replay::activity::Session) -> Option<String> {
    if session.drive.is_empty() {
        return None;
    }
    match lull_blktrace_replay::replay::power_model(Some(&session.drive)) {
        Ok(_) => Some(session.drive.clone()),
        Err(e) => {
            eprintln!(
                "lull: note: the log's drive preset `{}` cannot model spin-down ({e})",
                session.drive
            );
            None
        }
    }
}

/// A measure's value as text: a count (a plural name such as `spinups`,
/// not a time in `_s`) as a whole number, else six decimals.
pub(crate) fn text_value(key: &str, v: f64) -> String {
    number_text(
        v,
        (key.ends_with('s') && !key.ends_with("_s")) || COUNTS.contains(&key),
    )
}

/// Measures that count something though their names do not end in `s`
/// (`spinups`, `forced_flushes` do): shown as whole numbers.
const COUNTS: &[&str] = &[
    "manners_degraded",
    "manners_normal",
    "refused_wear_budget",
    "refused_below_break_even",
    "retried_after_wear_budget",
    "overtaken_by_poll",
    "withheld_by_daemon",
    "queued_bytes_at_end",
];

/// `v` as a whole number when `whole` allows and it is one, else six
/// decimals.
pub(crate) fn number_text(v: f64, whole: bool) -> String {
    if whole && v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.6}")
    }
}

/// A JSON object of numbers, in the given key order (a number that is not
/// finite is `null`).
pub(crate) fn json_number_map<'a>(
    pairs: impl IntoIterator<Item = (&'a str, f64)>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    for (k, v) in pairs {
        let n = serde_json::Number::from_f64(v)
            .map_or(serde_json::Value::Null, serde_json::Value::Number);
        map.insert(k.to_string(), n);
    }
    map
}
