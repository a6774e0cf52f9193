//! `lull trace info` and `lull trace convert`: what is in a trace, and
//! turning any supported trace into the normalized CSV.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use lull_blktrace_replay::{ReadOptions, Trace, TraceInfo, normalized};

use super::{CliError, Format};

/// Flags of `lull trace`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Format, devices, requests, bytes, span and the idle-period picture
    /// (long periods' share of idle time, autocorrelation of period lengths).
    Info(InfoArgs),
    /// Convert any supported trace to the normalized CSV.
    Convert(ConvertArgs),
}

/// Flags of `lull trace info`.
#[derive(Debug, clap::Args)]
struct InfoArgs {
    /// Trace files (or directories of per-CPU blktrace files), any
    /// supported format, detected by content.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Skip malformed records (and count them) instead of failing.
    #[arg(long)]
    lenient: bool,
    /// Output format: a table, or one JSON object per input per line.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Flags of `lull trace convert`.
#[derive(Debug, clap::Args)]
struct ConvertArgs {
    /// The trace to convert (file or directory of per-CPU blktrace files).
    file: PathBuf,
    /// Where to write the normalized CSV (written atomically).
    #[arg(short, long)]
    out: PathBuf,
    /// Skip malformed records (and count them) instead of failing.
    #[arg(long)]
    lenient: bool,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    match args.command {
        Command::Info(a) => info(a),
        Command::Convert(a) => convert(a),
    }
}

fn report_reading(path: &Path, trace: &Trace) {
    if trace.skipped > 0 {
        eprintln!(
            "lull: {}: skipped {} record(s)",
            path.display(),
            trace.skipped
        );
    }
    for note in &trace.notes {
        eprintln!("lull: {}: {note}", path.display());
    }
}

fn info(args: InfoArgs) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    for path in &args.files {
        let trace = lull_blktrace_replay::open(
            path,
            ReadOptions {
                lenient: args.lenient,
            },
        )?;
        report_reading(path, &trace);
        let info = TraceInfo::of(&trace);
        let written = match args.format {
            Format::Json => serde_json::to_string(&info)
                .map_err(CliError::runtime)
                .and_then(|s| writeln!(out, "{s}").map_err(CliError::runtime)),
            Format::Text => write_text(&mut out, path, &trace, &info).map_err(CliError::runtime),
        };
        written?;
    }
    Ok(())
}

fn write_text(
    out: &mut impl Write,
    path: &Path,
    trace: &Trace,
    i: &TraceInfo,
) -> std::io::Result<()> {
    writeln!(out, "{}", path.display())?;
    writeln!(out, "  format      {}", i.format)?;
    let shown: Vec<&str> = trace.devices.iter().take(8).map(String::as_str).collect();
    let more = if trace.devices.len() > 8 { " …" } else { "" };
    writeln!(
        out,
        "  devices     {} ({}{more})",
        i.devices,
        shown.join(" ")
    )?;
    writeln!(
        out,
        "  requests    {} ({} reads, {} writes, {} flushes, {} discards)",
        i.requests, i.reads, i.writes, i.flushes, i.discards
    )?;
    writeln!(
        out,
        "  bytes       {} ({} read, {} written)",
        i.bytes, i.read_bytes, i.write_bytes
    )?;
    writeln!(out, "  span        {:.3} s", i.span_s)?;
    if let Some(start) = i.start_unix_s {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(start.max(0.0));
        writeln!(
            out,
            "  recorded    from {}",
            humantime::format_rfc3339_seconds(at)
        )?;
    }
    if i.skipped > 0 {
        writeln!(out, "  skipped     {}", i.skipped)?;
    }
    writeln!(
        out,
        "  idle        device {}: {} periods, {:.3} s of {:.3} s ({:.1}%), longest {:.3} s, mean {:.4} s",
        i.idle_device,
        i.idle_periods,
        i.idle_s,
        i.idle_device_span_s,
        100.0 * i.idle_share,
        i.longest_idle_s,
        i.mean_idle_s
    )?;
    for l in &i.long {
        writeln!(
            out,
            "    > {:>5} s  {:>8} periods  {:>6.1}% of idle time",
            l.threshold_s,
            l.periods,
            100.0 * l.share
        )?;
    }
    let acf: Vec<String> = i
        .autocorrelation
        .iter()
        .map(|r| format!("{r:.2}"))
        .collect();
    writeln!(
        out,
        "  autocorrelation of idle lengths, lags 1-{}: {}",
        acf.len(),
        acf.join(" ")
    )?;
    Ok(())
}

/// Writes `trace` as a normalized CSV to `out`, atomically: into a
/// temporary file beside it, renamed over `out` once complete.
pub(crate) fn write_normalized(trace: &Trace, out: &Path) -> Result<(), CliError> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| CliError::input(anyhow!("{}: not a file name", out.display())))?
        .to_string_lossy()
        .into_owned();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        normalized::write(trace, &mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, out)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        let err = anyhow!("{}: {e}", out.display());
        if e.kind() == std::io::ErrorKind::NotFound {
            CliError::input(err)
        } else {
            CliError::runtime(err)
        }
    })
}

fn convert(args: ConvertArgs) -> Result<(), CliError> {
    let trace = lull_blktrace_replay::open(
        &args.file,
        ReadOptions {
            lenient: args.lenient,
        },
    )?;
    report_reading(&args.file, &trace);
    write_normalized(&trace, &args.out)?;
    eprintln!(
        "lull: wrote {} requests of {} device(s) to {}",
        trace.requests.len(),
        trace.devices.len(),
        args.out.display()
    );
    Ok(())
}
