//! `lull trace info` and `lull trace convert`: what is in a trace, and
//! turning any supported trace (or a CSV read with a column map) into the
//! normalized CSV or Parquet, so that it can be shared.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use lull_blktrace_replay::{Trace, TraceInfo, normalized};

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
    /// Convert any supported trace to the normalized CSV or Parquet.
    ///
    /// Reads blktrace (binary or blkparse text), MSR Cambridge, SPC, VSCSI,
    /// SYSTOR '17, Tencent CBS, Alibaba, fio iologs (v2, v3), bcc and
    /// bpftrace biosnoop output, lull's normalized CSV and activity logs,
    /// each detected by content, and any CSV or TSV with --columns. Writes
    /// `arrival_ns,completion_ns,op,sector,bytes,device`, as Parquet when
    /// OUT ends in `.parquet`, else as CSV.
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
    /// Read the files as CSV or TSV with this column map (see `lull
    /// replay --help`).
    #[arg(long, value_name = "MAP")]
    columns: Option<String>,
    /// Output format: a table, or one JSON object per input per line.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Flags of `lull trace convert`.
#[derive(Debug, clap::Args)]
struct ConvertArgs {
    /// The trace to convert (file or directory of per-CPU blktrace files).
    file: PathBuf,
    /// Where to write it (written atomically): Parquet for `*.parquet`,
    /// else the normalized CSV. Or give it with -o.
    #[arg(
        value_name = "OUT",
        required_unless_present = "out_flag",
        conflicts_with = "out_flag"
    )]
    out: Option<PathBuf>,
    /// Where to write it (the same as OUT).
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out_flag: Option<PathBuf>,
    /// Skip malformed records (and count them) instead of failing.
    #[arg(long)]
    lenient: bool,
    /// Read FILE as a CSV or TSV with this column map, e.g.
    /// `time=timestamp:s,op=rw_flag,sector,bytes=size*512,device` (see
    /// `lull replay --help`).
    #[arg(long, value_name = "MAP")]
    columns: Option<String>,
    /// Keep one device of a multi-device trace (by its name, as `lull
    /// trace info` lists them).
    #[arg(long)]
    disk: Option<String>,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    match args.command {
        Command::Info(a) => info(a),
        Command::Convert(a) => convert(a),
    }
}

/// What the reader did, on stderr, as `lull replay` and `lull trace`
/// say it: the records it skipped (malformed ones under `--lenient`, and
/// the requests a note below names as dropped) and its notes, each
/// naming the file.
pub(crate) fn report_reading(path: Option<&Path>, trace: &Trace) {
    let named = path
        .map(|p| format!("{}: ", p.display()))
        .unwrap_or_default();
    if trace.skipped > 0 {
        let dropped = trace.notes.iter().any(|n| n.starts_with("dropped "));
        eprintln!(
            "lull: note: {named}skipped {} record(s){}",
            trace.skipped,
            if dropped {
                " (malformed, or dropped as a note says)"
            } else {
                " (malformed)"
            }
        );
    }
    for note in &trace.notes {
        eprintln!("lull: note: {named}{note}");
    }
}

fn info(args: InfoArgs) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    for path in &args.files {
        let trace = super::open_trace(path, args.columns.as_deref(), args.lenient)?;
        report_reading(Some(path), &trace);
        let info = TraceInfo::of(&trace);
        let written = match args.format {
            Format::Json => serde_json::to_string(&JsonInfo {
                file: path,
                device_names: &trace.devices,
                idle_device_name: &info.idle_device,
                info: &info,
            })
            .map_err(CliError::runtime)
            .and_then(|s| writeln!(out, "{s}").map_err(CliError::runtime)),
            Format::Text => write_text(&mut out, path, &trace, &info).map_err(CliError::runtime),
        };
        written?;
    }
    Ok(())
}

/// One line of `lull trace info --format json`: which file, its devices'
/// names and the device whose idle periods are described, then every
/// number of [`TraceInfo`].
#[derive(serde::Serialize)]
struct JsonInfo<'a> {
    file: &'a Path,
    device_names: &'a [String],
    idle_device_name: &'a str,
    #[serde(flatten)]
    info: &'a TraceInfo,
}

fn write_text(
    out: &mut impl Write,
    path: &Path,
    trace: &Trace,
    i: &TraceInfo,
) -> std::io::Result<()> {
    writeln!(out, "{}", path.display())?;
    writeln!(out, "  format      {}", i.format)?;
    if trace.requests.is_empty() {
        // Said, not left to "devices 0 ()" and lines of zeros (`lull
        // replay` refuses such a trace: "the trace has no requests").
        return writeln!(out, "  requests    none: the trace holds no request");
    }
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
    write!(
        out,
        "  bytes       {} ({} read, {} written",
        i.bytes, i.read_bytes, i.write_bytes
    )?;
    if i.discard_bytes > 0 {
        write!(out, ", {} discarded", i.discard_bytes)?;
    }
    writeln!(out, ")")?;
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
        .map(|&r| correlation_text(r))
        .collect();
    writeln!(
        out,
        "  autocorrelation of idle lengths, lags 1-{}: {}",
        acf.len(),
        acf.join(" ")
    )?;
    Ok(())
}

/// A correlation to two decimals, a tiny negative one as `0.00`: a trace
/// whose idle lengths carry no information read `-0.00` at every lag.
fn correlation_text(r: f64) -> String {
    let text = format!("{r:.2}");
    if text == "-0.00" {
        "0.00".to_string()
    } else {
        text
    }
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
    let out = args
        .out
        .or(args.out_flag)
        .ok_or_else(|| CliError::input(anyhow!("name the output: OUT or -o OUT")))?;
    let trace = super::open_trace(&args.file, args.columns.as_deref(), args.lenient)?;
    report_reading(Some(&args.file), &trace);
    let trace = match &args.disk {
        Some(name) => one_device(&trace, name)?,
        None => trace,
    };
    let parquet = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    if parquet {
        lull_rank::columns::write_parquet(&trace, &out).map_err(|e| match e {
            lull_rank::RankError::Io { ref error, .. }
                if error.kind() == std::io::ErrorKind::NotFound =>
            {
                CliError::input(e)
            }
            e => CliError::runtime(e),
        })?;
    } else {
        write_normalized(&trace, &out)?;
    }
    eprintln!(
        "lull: wrote {} requests of {} device(s) to {}{}",
        trace.requests.len(),
        trace.devices.len(),
        out.display(),
        if parquet { " (Parquet)" } else { "" }
    );
    Ok(())
}

/// The requests of the device `name` alone, as a trace of one device.
fn one_device(trace: &Trace, name: &str) -> Result<Trace, CliError> {
    let (requests, _) = trace
        .select(Some(name))
        .map_err(|e| CliError::input(anyhow!("--disk: {e}")))?;
    let mut one = Trace {
        requests,
        devices: Vec::new(),
        format: trace.format,
        skipped: trace.skipped,
        notes: trace.notes.clone(),
        clock: trace.clock,
    };
    let id = one.device_id(name);
    for r in &mut one.requests {
        r.device = id;
    }
    Ok(one)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_correlation_that_rounds_to_zero_reads_as_zero() {
        let t = super::correlation_text;
        assert_eq!(t(-0.001), "0.00");
        assert_eq!(t(-0.0), "0.00");
        assert_eq!(t(0.004), "0.00");
        assert_eq!(t(-0.005_1), "-0.01");
        assert_eq!(t(0.56), "0.56");
        assert_eq!(t(f64::NAN), "NaN");
    }
}
