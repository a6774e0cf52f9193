//! Opening a trace: decompression, content sniffing and dispatch to a
//! reader.
//!
//! The format is found from the first 64 KiB of the decoded content, never
//! from the file name, in this order (the first match wins):
//!
//! 1. lull's activity log (the `\x89LULLACT` magic, [`crate::activity`]),
//! 2. the normalized CSV (its header line),
//! 3. blktrace binary (the `blk_io_trace` magic, either byte order),
//! 4. CloudPhysics VSCSI (plausible 32-byte version-1 records),
//! 5. blkparse text (an event header line after comments),
//! 6. MSR Cambridge CSV (7 columns, `Read`/`Write` in the fourth),
//! 7. SYSTOR '17 CSV (6 columns, decimal seconds, `R`/`W` in the third),
//! 8. SPC (5+ columns, `r`/`w` in the fourth, decimal seconds in the fifth),
//! 9. Alibaba (5 columns, `R`/`W` in the second),
//! 10. Tencent CBS (5 whole-number columns, 0/1 in the fourth),
//! 11. fio's iolog (its first line `fio version 2 iolog` or `… 3 iolog`),
//! 12. bcc's `biosnoop` output (its header line, `TIME(s) COMM PID DISK T
//!     SECTOR BYTES … LAT(ms)`, among the first lines),
//! 13. bpftrace's `biosnoop.bt` output (its header, `TIME(ms) … COMM PID
//!     LAT(ms)`).
//!
//! Any other CSV or TSV is read with a column map (`--columns`, see
//! [`crate::columns`]); that reader lives where polars may be used (the
//! `lull` command line), so this crate stays light. When no format fits,
//! the error shows the file's first line and the column map its header
//! suggests ([`crate::columns::suggest`]).
//!
//! A directory is either a disk's activity log, when it holds `*.lact`
//! segments (read in name order as one log), or a blktrace capture: every
//! `<name>.blktrace.<cpu>` file in it is read and merged by time (the
//! names pick the files; their content must still be blktrace).

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::TraceError;
use crate::input::{self, Input};
use crate::trace::Trace;
use crate::{
    activity, alibaba, biosnoop, blkparse, blktrace, columns, fio, msr, normalized, spc, systor,
    tencent, vscsi,
};

pub use crate::normalized::ReadOptions;

/// The trace formats lull reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// lull's activity log (the daemon's record of a disk).
    Activity,
    /// lull's normalized CSV.
    Normalized,
    /// blktrace binary records.
    Blktrace,
    /// CloudPhysics VSCSI binary records.
    Vscsi,
    /// blkparse default text output.
    Blkparse,
    /// MSR Cambridge / SNIA CSV.
    Msr,
    /// SYSTOR '17 CSV.
    Systor,
    /// SPC (UMass) CSV.
    Spc,
    /// Alibaba block-trace CSV.
    Alibaba,
    /// Tencent CBS CSV.
    Tencent,
    /// fio's iolog, version 2 or 3.
    FioIolog,
    /// bcc's `biosnoop` output.
    BccBiosnoop,
    /// bpftrace's `biosnoop.bt` output.
    BpftraceBiosnoop,
}

impl Format {
    /// Every format, in sniffing order.
    pub const ALL: [Format; 13] = [
        Format::Activity,
        Format::Normalized,
        Format::Blktrace,
        Format::Vscsi,
        Format::Blkparse,
        Format::Msr,
        Format::Systor,
        Format::Spc,
        Format::Alibaba,
        Format::Tencent,
        Format::FioIolog,
        Format::BccBiosnoop,
        Format::BpftraceBiosnoop,
    ];

    /// The name [`Trace::format`] carries.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Activity => activity::NAME,
            Format::Normalized => "normalized-csv",
            Format::Blktrace => "blktrace",
            Format::Vscsi => "vscsi",
            Format::Blkparse => "blkparse",
            Format::Msr => "msr",
            Format::Systor => "systor",
            Format::Spc => "spc",
            Format::Alibaba => "alibaba",
            Format::Tencent => "tencent",
            Format::FioIolog => fio::NAME,
            Format::BccBiosnoop => biosnoop::BCC,
            Format::BpftraceBiosnoop => biosnoop::BPFTRACE,
        }
    }

    /// The format whose content `head` (the first bytes of the decoded
    /// stream) starts with.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        Format::ALL.into_iter().find(|f| match f {
            Format::Activity => activity::sniff(head),
            Format::Normalized => normalized::sniff(head),
            Format::Blktrace => blktrace::sniff(head),
            Format::Vscsi => vscsi::sniff(head),
            Format::Blkparse => blkparse::sniff(head),
            Format::Msr => msr::sniff(head),
            Format::Systor => systor::sniff(head),
            Format::Spc => spc::sniff(head),
            Format::Alibaba => alibaba::sniff(head),
            Format::Tencent => tencent::sniff(head),
            Format::FioIolog => fio::sniff(head),
            Format::BccBiosnoop => biosnoop::sniff_bcc(head),
            Format::BpftraceBiosnoop => biosnoop::sniff_bpftrace(head),
        })
    }

    /// Reads a decoded stream in this format.
    pub fn read(self, input: Input, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
        match self {
            Format::Activity => activity::read(input, path),
            Format::Normalized => normalized::read(input, path, opts),
            Format::Blktrace => blktrace::read_one(input, path, opts),
            Format::Vscsi => vscsi::read(input, path, opts),
            Format::Blkparse => blkparse::read(input, path, opts),
            Format::Msr => msr::read(input, path, opts),
            Format::Systor => systor::read(input, path, opts),
            Format::Spc => spc::read(input, path, opts),
            Format::Alibaba => alibaba::read(input, path, opts),
            Format::Tencent => tencent::read(input, path, opts),
            Format::FioIolog => fio::read(input, path, opts),
            Format::BccBiosnoop => biosnoop::read_bcc(input, path, opts),
            Format::BpftraceBiosnoop => biosnoop::read_bpftrace(input, path, opts),
        }
    }
}

const UNKNOWN: &str = "unrecognized trace format (lull reads blktrace binary, blkparse text, \
MSR Cambridge, SPC, CloudPhysics VSCSI, SYSTOR '17, Tencent CBS and Alibaba traces, fio iologs, \
bcc and bpftrace biosnoop output, its normalized CSV \
`arrival_ns,completion_ns,op,sector,bytes,device` and its daemon's activity logs (`*.lact`), \
and any CSV or TSV with a column map, `--columns`; gzip, bzip2 and zstd are decoded)";

/// Opens `path` (a file, a directory of activity log segments, or a
/// directory of per-CPU blktrace files) and reads it with the reader its
/// content calls for.
///
/// A per-CPU blktrace capture is read whole however it is named: the
/// directory, the device's base name as `blkparse -i sda` takes it
/// (`sda` or `sda.blktrace`, for `sda.blktrace.0`, `sda.blktrace.1`, …),
/// or one of its files, whose siblings are read with it (with a note):
/// one CPU's file alone misses the requests the others saw, and its idle
/// periods are the gaps between them. A gap in the set's CPU numbers, a
/// file lost, is named in a note too.
pub fn open(path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    if path.is_dir() {
        if activity::is_log_dir(path) {
            return Ok(activity::open_log(path)?.trace);
        }
        return open_dir(path, opts);
    }
    if let Some((files, note)) = cpu_set(path) {
        let mut trace = read_cpu_files(path, files, opts)?;
        trace.notes.extend(note);
        return Ok(trace);
    }
    let (head, input) = input::open_decoded(path)?;
    dispatch(head, input, path, opts)
}

/// Reads a trace from any byte stream (decoding and sniffing it like
/// [`open`]); `path` names it in errors.
pub fn read_from(
    raw: impl std::io::Read + Send + 'static,
    path: &Path,
    opts: ReadOptions,
) -> Result<Trace, TraceError> {
    let raw: Input = Box::new(BufReader::with_capacity(input::BUF_LEN, raw));
    let (head, input) = input::decode(raw, path)?;
    dispatch(head, input, path, opts)
}

fn dispatch(
    head: Vec<u8>,
    input: Input,
    path: &Path,
    opts: ReadOptions,
) -> Result<Trace, TraceError> {
    if head.is_empty() {
        return Err(TraceError::format(path, "empty file"));
    }
    match Format::sniff(&head) {
        Some(f) => f.read(input, path, opts),
        None => Err(TraceError::format(path, unknown(&head))),
    }
}

/// The error for content no reader claims: what lull reads, the file's
/// first line, and the `--columns` map its header suggests.
fn unknown(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let first = text
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .find(|l| !l.is_empty());
    let Some(first) = first.filter(|l| !l.contains('\u{fffd}')) else {
        return UNKNOWN.to_string();
    };
    let shown: String = first.chars().take(160).collect();
    let more = if shown.len() < first.len() { "…" } else { "" };
    match columns::suggest(first) {
        Some(map) => format!(
            "{UNKNOWN}; its first line is `{shown}{more}`: if that is a header, try \
             --columns '{map}' (check the time unit and the size unit)"
        ),
        None => format!(
            "{UNKNOWN}; its first line is `{shown}{more}` (for a CSV or TSV, name its columns \
             with --columns 'time=COLUMN:s,op=COLUMN,sector=COLUMN,bytes=COLUMN')"
        ),
    }
}

/// What to try instead when `dir` holds other files: one trace file
/// (`blkparse -d` output, a CSV) is read when named itself.
fn other_files_hint(dir: &Path) -> String {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    match files.as_slice() {
        [] => String::new(),
        [one] => format!("; it holds one file: name it to read it as a trace ({one})"),
        [first, ..] => format!(
            "; it holds {} other files: name one to read it as a trace (e.g. {first})",
            files.len()
        ),
    }
}

/// A per-CPU capture's files, and a note for the user when one of them
/// was named.
type CpuSet = (Vec<std::path::PathBuf>, Option<String>);

/// The per-CPU capture `path` names, when it names one and not a lone
/// file: the files of the set, and a note when the user named one of
/// them (the others are read too).
///
/// - `DIR/sda` or `DIR/sda.blktrace`, no such file, and
///   `DIR/sda.blktrace.<cpu>` files beside it: the set (`blkparse -i`);
/// - `DIR/sda.blktrace.<cpu>`, a file with siblings of the same base:
///   the set, and the note.
fn cpu_set(path: &Path) -> Option<CpuSet> {
    let name = path.file_name().and_then(|n| n.to_str())?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (base, named) = if path.exists() {
        match name.rsplit_once(".blktrace.") {
            Some((base, cpu)) if cpu.parse::<u32>().is_ok() => (base, true),
            _ => return None,
        }
    } else {
        (name.strip_suffix(".blktrace").unwrap_or(name), false)
    };
    if !parent.is_dir() {
        return None;
    }
    // A folder that cannot be listed has no siblings to offer: the path is
    // read (or not found) as named.
    let files: Vec<_> = blktrace::cpu_files(parent)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.rsplit_once(".blktrace."))
                .is_some_and(|(b, _)| b == base)
        })
        .collect();
    if files.is_empty() || (named && files.len() == 1) {
        return None;
    }
    let note = named.then(|| {
        format!(
            "one CPU's file of a per-CPU capture, read with the other {} file{} of it \
             ({base}.blktrace.*), as `blkparse -i {base}` reads them: one CPU's file alone misses \
             the requests the others saw",
            files.len() - 1,
            if files.len() == 2 { "" } else { "s" }
        )
    });
    Some((files, note))
}

/// The per-CPU blktrace files of `dir`, merged.
fn open_dir(dir: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    let files = blktrace::cpu_files(dir)?;
    if files.is_empty() {
        return Err(TraceError::format(
            dir,
            format!(
                "a directory must hold per-CPU blktrace files named `<device>.blktrace.<cpu>` \
                 or activity log segments (`*.lact`){}",
                other_files_hint(dir)
            ),
        ));
    }
    read_cpu_files(dir, files, opts)
}

/// Per-CPU blktrace `files` (of the capture `named`), merged; empty ones
/// (a CPU that saw no I/O) are skipped. A CPU's file missing from among
/// them gets a note ([`missing_cpus_notes`]).
fn read_cpu_files(
    named: &Path,
    files: Vec<std::path::PathBuf>,
    opts: ReadOptions,
) -> Result<Trace, TraceError> {
    let missing = missing_cpus_notes(&files);
    let mut trace = read_cpu_inputs(named, files, opts)?;
    trace.notes.splice(0..0, missing);
    Ok(trace)
}

/// A note for each capture (base name) among `files` whose CPU numbers
/// have a gap: blktrace writes a file for every online CPU, an empty one
/// for a CPU without I/O, so a number missing below the highest is a file
/// lost, or a CPU that was offline (the Hadoop sample lacks CPU 33's,
/// which held most of its completions). A file lost above the highest
/// number cannot be told from a smaller machine.
fn missing_cpus_notes(files: &[std::path::PathBuf]) -> Vec<String> {
    /// The most CPU numbers a note lists.
    const LIST: usize = 8;
    let mut cpus: std::collections::BTreeMap<&str, Vec<u32>> = std::collections::BTreeMap::new();
    for f in files {
        let Some((base, cpu)) = f
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.rsplit_once(".blktrace."))
        else {
            continue;
        };
        if let Ok(cpu) = cpu.parse::<u32>() {
            cpus.entry(base).or_default().push(cpu);
        }
    }
    let mut notes = Vec::new();
    for (base, mut have) in cpus {
        have.sort_unstable();
        have.dedup();
        let Some(&max) = have.last() else { continue };
        // The missing numbers, counted, and the first few of them kept
        // (a file named with a wild CPU number must not make a long loop).
        let (mut count, mut listed, mut expect) = (0u64, Vec::new(), 0u32);
        for &cpu in &have {
            count += u64::from(cpu - expect);
            listed.extend((expect..cpu).take((LIST + 1).saturating_sub(listed.len())));
            expect = cpu.saturating_add(1);
        }
        let Some(&first) = listed.first() else {
            continue;
        };
        let missing: Vec<String> = listed.iter().map(u32::to_string).collect();
        let what = match missing.as_slice() {
            [one] => format!("CPU {one}'s file ({base}.blktrace.{one}) is"),
            [some @ .., last] if count <= LIST as u64 => {
                format!("the files of CPUs {} and {last} are", some.join(", "))
            }
            _ => format!(
                "the files of {count} CPUs ({}, …) are",
                missing[..LIST].join(", ")
            ),
        };
        let (who, they, them) = match missing.as_slice() {
            [one] => (format!("CPU {one} was"), "it", "it"),
            _ => ("those CPUs were".to_string(), "they", "them"),
        };
        // blkparse -i stops at the first CPU number without a file.
        let blkparse = match first {
            0 => "reads none of them".to_string(),
            1 => "reads CPU 0's alone".to_string(),
            _ => format!("reads CPUs 0 to {} alone", first - 1),
        };
        notes.push(format!(
            "{what} missing from {base}.blktrace.* (CPUs 0 to {max} are otherwise there): unless \
             {who} offline, the events {they} recorded are lost, so requests queued on {them} are \
             lost and those dispatched or completed on {them} never complete here \
             (`blkparse -i {base}` stops at the first missing file: it {blkparse})"
        ));
    }
    notes
}

/// [`read_cpu_files`] without the note on missing files.
fn read_cpu_inputs(
    named: &Path,
    files: Vec<std::path::PathBuf>,
    opts: ReadOptions,
) -> Result<Trace, TraceError> {
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        let (empty, is_blktrace, input) = open_cpu_file(&f)?;
        if empty {
            // blktrace writes an empty file for a CPU that saw no I/O.
            continue;
        }
        if !is_blktrace {
            return Err(TraceError::offset(
                &f,
                0,
                "not a blktrace file (no blk_io_trace magic)",
            ));
        }
        inputs.push((f, input));
    }
    if inputs.is_empty() {
        return Err(TraceError::format(
            named,
            "every per-CPU blktrace file is empty",
        ));
    }
    blktrace::read(inputs, opts)
}

/// Read buffer of one per-CPU blktrace file. A capture has a file per CPU
/// (39 in the Hadoop sample), all open at once: [`input::open_decoded`]'s
/// two 256 KiB buffers and two 64 KiB head copies each came to 25 MB of
/// fresh memory; one small buffer cut the reader's page faults by a third.
const CPU_BUF_LEN: usize = 64 * 1024;

/// Opens one per-CPU file and decodes it: whether it is empty, whether it
/// starts with a blktrace record, and the stream from byte 0. The first
/// buffer fill is sniffed in place (no head copy) when it holds a record's
/// magic.
fn open_cpu_file(path: &Path) -> Result<(bool, bool, Input), TraceError> {
    let file = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
    let raw: Input = Box::new(BufReader::with_capacity(CPU_BUF_LEN, file));
    let (_, mut decoded) = input::decompress(raw).map_err(|e| TraceError::io(path, e))?;
    let head = decoded.fill_buf().map_err(|e| TraceError::io(path, e))?;
    if head.len() >= 4 {
        let is_blktrace = blktrace::sniff(head);
        return Ok((false, is_blktrace, decoded));
    }
    // A short first fill: the end of a tiny file, or a decoder's small
    // chunk; read the head properly.
    let (head, rest) = input::peek(decoded).map_err(|e| TraceError::io(path, e))?;
    Ok((head.is_empty(), blktrace::sniff(&head), rest))
}

/// The format of the file at `path`, from its content (decoded), or
/// `None` if lull does not recognise it.
pub fn sniff_file(path: &Path) -> Result<Option<Format>, TraceError> {
    let (head, _) = input::open_decoded(path)?;
    Ok(Format::sniff(&head))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gap in a capture's CPU numbers is a lost file (lab-25 R8: the
    /// Hadoop sample lacks CPU 33's): the note names it, says what it cost
    /// and where `blkparse -i` stops; many gaps are counted, a wild CPU
    /// number costs no long loop, and each capture is judged alone.
    #[test]
    fn missing_cpu_files_are_named() {
        let files = |names: &[&str]| -> Vec<std::path::PathBuf> {
            names.iter().map(|n| Path::new("d").join(n)).collect()
        };
        let mut hadoop: Vec<String> = (0..40)
            .filter(|&c| c != 33)
            .map(|c| format!("sdb.blktrace.{c}"))
            .collect();
        hadoop.push("sda.blktrace.0".into());
        let hadoop: Vec<&str> = hadoop.iter().map(String::as_str).collect();
        assert_eq!(
            missing_cpus_notes(&files(&hadoop)),
            [
                "CPU 33's file (sdb.blktrace.33) is missing from sdb.blktrace.* (CPUs 0 to 39 are \
              otherwise there): unless CPU 33 was offline, the events it recorded are lost, so \
              requests queued on it are lost and those dispatched or completed on it never \
              complete here (`blkparse -i sdb` stops at the first missing file: it reads CPUs 0 \
              to 32 alone)"
            ]
        );
        let notes = missing_cpus_notes(&files(&["a.blktrace.1", "a.blktrace.3"]));
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("the files of CPUs 0 and 2 are missing from a.blktrace.*")
                && notes[0].contains("it reads none of them)"),
            "{notes:?}"
        );
        let notes = missing_cpus_notes(&files(&["a.blktrace.0", "a.blktrace.20"]));
        assert!(
            notes[0].starts_with("the files of 19 CPUs (1, 2, 3, 4, 5, 6, 7, 8, …) are missing")
                && notes[0].contains("it reads CPU 0's alone)"),
            "{notes:?}"
        );
        let notes = missing_cpus_notes(&files(&["a.blktrace.0", "a.blktrace.4294967295"]));
        assert!(
            notes[0].starts_with("the files of 4294967294 CPUs"),
            "{notes:?}"
        );
        assert!(
            missing_cpus_notes(&files(&["a.blktrace.0", "a.blktrace.1", "b.blktrace.0"]))
                .is_empty()
        );
    }

    #[test]
    fn a_directory_without_per_cpu_files_names_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let err = |d: &Path| open(d, ReadOptions::default()).unwrap_err().to_string();
        let empty = err(dir.path());
        assert!(
            empty.contains("per-CPU") && !empty.contains("it holds"),
            "{empty}"
        );
        std::fs::write(dir.path().join("dump.bin"), b"x").unwrap();
        let one = err(dir.path());
        assert!(
            one.contains("it holds one file") && one.contains("dump.bin"),
            "{one}"
        );
        std::fs::write(dir.path().join("a.csv"), b"x").unwrap();
        let two = err(dir.path());
        assert!(
            two.contains("2 other files") && two.contains("a.csv"),
            "{two}"
        );
    }
}
