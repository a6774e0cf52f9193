//! The output of the eBPF `biosnoop` tools: bcc's `biosnoop` (the Python
//! tool of Debian's `bpfcc-tools`, `biosnoop-bpfcc`, and its libbpf-tools
//! port) and bpftrace's `biosnoop.bt`.
//!
//! blktrace needs debugfs and root; most people record block I/O with
//! these tools today. Their output is a table for people, one completed
//! request a line, so it is read by its header line: the columns present
//! decide how a row is split.
//!
//! ## bcc
//!
//! ```text
//! TIME(s)     COMM           PID    DISK    T SECTOR     BYTES  QUE(ms) LAT(ms)
//! 0.000000    kworker/u72:1  13379  nvme1n1 W 1142400    4096      0.01    0.55
//! ```
//!
//! - `TIME(s)` is when the request **completed**: the tool stamps each
//!   event with the kernel clock in its completion probe and prints it
//!   less the first event's stamp. The libbpf-tools port's `-t` prints
//!   `TIMESTAMP` instead, the local wall-clock time (`HH:MM:SS.mmm`) at
//!   which the line was printed, to the millisecond; a time earlier than
//!   the line before is taken as the next day.
//! - `LAT(ms)` is from the issue to the device to completion; `QUE(ms)`
//!   (with `-Q`) is the time queued in the OS before the issue. So the
//!   arrival is `TIME - LAT - QUE` (the request entered the block layer
//!   then) and the completion is `TIME`. libbpf-tools prints a `QUE(ms)`
//!   of `-1` when it missed the insertion: that request's queue time is
//!   taken as 0 and counted in a note.
//! - `T` is `R` or `W` (bcc's Python tool), or the kernel's rwbs string in
//!   libbpf-tools (`WS`, `FWS`, `RA`, `D`, `F`, …): the first letter of the
//!   operation after an optional preflush `F` decides. An `N` (another
//!   operation, such as a zone command) carries no read or write: such
//!   rows are skipped and counted in a note.
//! - `SECTOR` is 512-byte sectors, `BYTES` the size. Newer bcc's `-P` adds
//!   a `P` column (sequential or random) before `QUE(ms)`; it is ignored.
//! - The device is the `DISK` name (`nvme1n1`); a row whose process was
//!   not seen at queue time has an empty `DISK` in old bcc (and a `COMM`
//!   of `?`), and newer tools print `<unknown>` or `Unknown`: such rows
//!   are on device `?`.
//! - `COMM` is truncated to 14 characters but may hold blanks (`Web
//!   Content`), so a row is split from both ends: the fixed columns from
//!   the right, `TIME` from the left, the command name what is between.
//!
//! ## bpftrace
//!
//! ```text
//! Attaching 4 probes...
//! TIME(ms)     DISK ID        COMM             PID    LAT(ms)
//!              MAJOR MINOR
//! 611          259   0        bash             4179        10
//! ```
//!
//! `biosnoop.bt` prints the completion time in whole milliseconds since
//! the tool started and the latency in whole milliseconds from the
//! request's start in the block layer (so it includes the OS queue):
//! arrival = `TIME - LAT`, completion = `TIME`. Its versions differ in
//! the device column: none (the first versions), `DISK` (a name, kernels
//! before 6.4) or `DISK ID` as `MAJOR MINOR` (a tracepoint version; the
//! device is then `major,minor` as blktrace names it). It records **no
//! direction, sector or size**: every request is read as a read of 0
//! bytes at sector 0, with a note, so only the timing (which is what idle
//! periods are made of) is real. Latencies below 1 ms print as 0.
//!
//! Either tool's lines before its header (`Attaching 4 probes...`,
//! `Tracing block I/O... Hit Ctrl-C to end.`) are skipped; bcc's
//! `Possibly lost N samples` lines are skipped and counted. A second
//! header (two runs appended to one file, each with its own time 0) is an
//! error at its line. Rows are sorted by arrival and time is rebased to
//! the first arrival.

use std::io::BufRead;
use std::path::Path;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::text::{self, RowResult};
use crate::trace::Trace;

/// The format name of bcc's `biosnoop` ([`Trace::format`]).
pub const BCC: &str = "bcc-biosnoop";
/// The format name of bpftrace's `biosnoop.bt` ([`Trace::format`]).
pub const BPFTRACE: &str = "bpftrace-biosnoop";

/// Raw times are kept this far above zero until the trace is rebased, so
/// an arrival before the first completion (`TIME - LAT` of the first row)
/// needs no signed arithmetic.
const OFFSET: u64 = 1 << 62;

/// How many non-blank lines at the start may precede the header.
const BANNER_LINES: usize = 4;

/// The columns of a bcc header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bcc {
    /// `TIMESTAMP` (wall clock) instead of `TIME(s)`.
    wall: bool,
    /// The `P` column of `-P`.
    pattern: bool,
    /// The `QUE(ms)` column of `-Q`.
    queue: bool,
}

/// The device column of a bpftrace header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BtDisk {
    /// No device column.
    None,
    /// `DISK`: a name.
    Name,
    /// `DISK ID`: `MAJOR MINOR`.
    Id,
}

fn bcc_header(line: &str) -> Option<Bcc> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let wall = match *t.first()? {
        "TIME(s)" => false,
        "TIMESTAMP" => true,
        _ => return None,
    };
    let rest = &t[1..];
    let fixed = ["COMM", "PID", "DISK", "T", "SECTOR", "BYTES"];
    if rest.len() < fixed.len() + 1 || rest[..fixed.len()] != fixed || rest.last()? != &"LAT(ms)" {
        return None;
    }
    match &rest[fixed.len()..rest.len() - 1] {
        [] => Some((false, false)),
        ["P"] => Some((true, false)),
        ["QUE(ms)"] => Some((false, true)),
        ["P", "QUE(ms)"] => Some((true, true)),
        _ => None,
    }
    .map(|(pattern, queue)| Bcc {
        wall,
        pattern,
        queue,
    })
}

fn bt_header(line: &str) -> Option<BtDisk> {
    let t: Vec<&str> = line.split_whitespace().collect();
    match t.as_slice() {
        ["TIME(ms)", "COMM", "PID", "LAT(ms)"] => Some(BtDisk::None),
        ["TIME(ms)", "DISK", "COMM", "PID", "LAT(ms)"] => Some(BtDisk::Name),
        ["TIME(ms)", "DISK", "ID", "COMM", "PID", "LAT(ms)"] => Some(BtDisk::Id),
        _ => None,
    }
}

/// The first few non-blank lines of `head`, as text.
fn head_lines(head: &[u8]) -> impl Iterator<Item = &str> {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    text.lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .filter(|l| !l.is_empty())
        .take(BANNER_LINES + 1)
}

/// Whether `head` is bcc `biosnoop` output (its header line among the
/// first lines).
pub fn sniff_bcc(head: &[u8]) -> bool {
    head_lines(head).any(|l| bcc_header(l).is_some())
}

/// Whether `head` is bpftrace `biosnoop.bt` output.
pub fn sniff_bpftrace(head: &[u8]) -> bool {
    head_lines(head).any(|l| bt_header(l).is_some())
}

/// Milliseconds with an optional fraction (`0.74`, `10`) as nanoseconds.
fn ms_ns(name: &str, col: usize, s: &str) -> Result<u64, String> {
    // Exact: seconds to 9 decimals, read as milliseconds, is the value in
    // picoseconds; ms columns print at most 3 decimals.
    text::secs_ns(name, s).map(|ps| ps / 1000).map_err(|_| {
        format!("`{name}` (column {col}) is not a non-negative number of milliseconds: {s:?}")
    })
}

/// `HH:MM:SS.mmm` as nanoseconds since midnight.
fn wall_ns(s: &str) -> Result<u64, String> {
    let bad = || format!("`TIMESTAMP` (column 1) is not a time HH:MM:SS.mmm: {s:?}");
    let mut parts = s.splitn(3, ':');
    let (h, m, sec) = (
        parts.next().ok_or_else(bad)?,
        parts.next().ok_or_else(bad)?,
        parts.next().ok_or_else(bad)?,
    );
    let h: u64 = text::uint("TIMESTAMP", h).map_err(|_| bad())?;
    let m: u64 = text::uint("TIMESTAMP", m).map_err(|_| bad())?;
    let sec = text::secs_ns("TIMESTAMP", sec).map_err(|_| bad())?;
    if h > 23 || m > 59 || sec >= 61_000_000_000 {
        return Err(bad());
    }
    Ok((h * 3600 + m * 60) * 1_000_000_000 + sec)
}

/// The op of a bcc `T` column: `R`/`W`, or an rwbs string. `Ok(None)` for
/// `N` (another operation).
fn bcc_op(s: &str, col: usize) -> Result<Option<Op>, String> {
    // A preflush `F` comes first; a lone `F` is a flush.
    let op = if s.len() > 1 {
        s.strip_prefix('F').unwrap_or(s)
    } else {
        s
    };
    match op.as_bytes().first() {
        Some(b'R') => Ok(Some(Op::Read)),
        Some(b'W') => Ok(Some(Op::Write)),
        Some(b'D') => Ok(Some(Op::Discard)),
        Some(b'F') => Ok(Some(Op::Flush)),
        Some(b'N') => Ok(None),
        _ => Err(format!(
            "`T` (column {col}) must be R, W or an rwbs such as WS, FWS, D or F, not {s:?}"
        )),
    }
}

fn device_name(disk: &str) -> &str {
    match disk {
        "" | "<unknown>" | "Unknown" => "?",
        d => d,
    }
}

/// What a reader counts as it goes, for its notes.
#[derive(Default)]
struct Counts {
    lost_lines: u64,
    other_ops: u64,
    missed_queue: u64,
}

/// One bcc row, after the header `h`.
fn bcc_row(
    line: &str,
    h: Bcc,
    day: &mut (u64, u64),
    counts: &mut Counts,
    trace: &mut Trace,
    devices: &mut text::Devices,
) -> RowResult {
    let t: Vec<&str> = line.split_whitespace().collect();
    // From the right: LAT, [QUE], [P], BYTES, SECTOR, T.
    let tail = 4 + usize::from(h.queue) + usize::from(h.pattern);
    let expected = if h.queue {
        "TIME COMM PID DISK T SECTOR BYTES QUE(ms) LAT(ms)"
    } else {
        "TIME COMM PID DISK T SECTOR BYTES LAT(ms)"
    };
    // TIME, COMM (one word at least), PID, and the tail; DISK may be empty.
    if t.len() < 3 + tail {
        return Err(format!(
            "expected the columns {expected}, found {} field(s)",
            t.len()
        ));
    }
    let n = t.len();
    let mid = &t[1..n - tail];
    // The DISK column is empty when its last word is the PID (a disk name
    // is never all digits).
    let (disk, pid_at) = if mid.last().is_some_and(|w| text::is_uint(w)) {
        ("", mid.len() - 1)
    } else {
        (mid[mid.len() - 1], mid.len() - 2)
    };
    if pid_at == 0 || !text::is_uint(mid[pid_at]) {
        return Err(format!(
            "expected the columns {expected}: no whole-number PID before the DISK column"
        ));
    }
    // Column numbers as the header counts them (COMM as one).
    let col = |from_right: usize| 8 + usize::from(h.queue) + usize::from(h.pattern) - from_right;
    let lat = ms_ns("LAT(ms)", col(0), t[n - 1])?;
    let que = if h.queue {
        let q = t[n - 2];
        if q.starts_with('-') {
            counts.missed_queue += 1;
            0
        } else {
            ms_ns("QUE(ms)", col(1), q)?
        }
    } else {
        0
    };
    let bytes_at = n - 2 - usize::from(h.queue) - usize::from(h.pattern);
    let size = text::uint32("BYTES", t[bytes_at]).map_err(|e| format!("{e} (column 7)"))?;
    let sector = text::uint("SECTOR", t[bytes_at - 1]).map_err(|e| format!("{e} (column 6)"))?;
    let Some(op) = bcc_op(t[bytes_at - 2], 5)? else {
        counts.other_ops += 1;
        return Ok(None);
    };
    let time = if h.wall {
        // A time of day: one earlier than the last (by more than a
        // reordering could explain) starts the next day.
        let tod = wall_ns(t[0])?;
        let (days, last) = day;
        if tod + 12 * 3_600_000_000_000 < *last {
            *days += 1;
        }
        *last = tod;
        *days * 86_400_000_000_000 + tod
    } else {
        text::secs_ns("TIME(s)", t[0]).map_err(|e| format!("{e} (column 1)"))?
    };
    let completion = OFFSET
        .checked_add(time)
        .ok_or("`TIME(s)` (column 1) is too large")?;
    let arrival = completion
        .checked_sub(lat)
        .and_then(|a| a.checked_sub(que))
        .ok_or("`LAT(ms)` is longer than any trace")?;
    let dev = devices.id(trace, device_name(disk))?;
    Ok(Some(
        Request::new(Nanos(arrival), Nanos(completion), op, sector, size).on_device(dev),
    ))
}

/// Where `line` stands before the tool's data: its header (kept in
/// `header`; a second one is an error), one of the banner lines before it
/// (`seen` counts them; `None` for both), or a data line under the header
/// (`Some` of it). `tool` and `columns` name what is missing when no header
/// came within the banner lines.
fn lead<H: Copy>(
    line: &str,
    header: &mut Option<H>,
    seen: &mut usize,
    parse: impl Fn(&str) -> Option<H>,
    tool: &str,
    columns: &str,
) -> Result<Option<H>, String> {
    if let Some(h) = parse(line) {
        if header.replace(h).is_some() {
            return Err(format!(
                "a second {tool} header: two runs in one file, each timed from its own \
                 start; split the file at this line and read each part alone"
            ));
        }
        return Ok(None);
    }
    if header.is_none() {
        *seen += 1;
        if *seen > BANNER_LINES {
            return Err(format!("no {tool} header ({columns}) in the first lines"));
        }
    }
    Ok(*header)
}

/// Reads bcc `biosnoop` output from `input`; `path` names it in errors.
pub fn read_bcc(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    let mut header: Option<Bcc> = None;
    let mut day = (0u64, 0u64);
    let mut counts = Counts::default();
    let mut seen = 0usize;
    let mut trace = text::read_lines(input, path, opts, BCC, |line, trace, devices| {
        let Some(h) = lead(
            line,
            &mut header,
            &mut seen,
            bcc_header,
            "biosnoop",
            "TIME(s) COMM PID DISK T SECTOR BYTES LAT(ms)",
        )?
        else {
            return Ok(None);
        };
        if line.starts_with("Possibly lost ") {
            counts.lost_lines += 1;
            return Ok(None);
        }
        bcc_row(line, h, &mut day, &mut counts, trace, devices)
    })?;
    if counts.lost_lines > 0 {
        trace.notes.push(format!(
            "biosnoop said {} time(s) that it possibly lost samples: requests are missing, and \
             their busy time reads as idle",
            counts.lost_lines
        ));
    }
    if counts.other_ops > 0 {
        trace.notes.push(format!(
            "skipped {} row(s) of operations other than read, write, flush and discard (T = N)",
            counts.other_ops
        ));
    }
    if counts.missed_queue > 0 {
        trace.notes.push(format!(
            "{} row(s) have QUE(ms) -1 (biosnoop missed the insertion): their queue time is \
             taken as 0",
            counts.missed_queue
        ));
    }
    if header.is_some_and(|h| h.wall) {
        trace.notes.push(
            "TIMESTAMP is when biosnoop printed each line, to the millisecond (its wall clock, \
             without a date): arrivals are that time less the latency"
                .into(),
        );
    }
    Ok(trace)
}

/// Reads bpftrace `biosnoop.bt` output from `input`; `path` names it in
/// errors.
pub fn read_bpftrace(
    input: impl BufRead,
    path: &Path,
    opts: ReadOptions,
) -> Result<Trace, TraceError> {
    let mut header: Option<BtDisk> = None;
    let mut seen = 0usize;
    let mut trace = text::read_lines(input, path, opts, BPFTRACE, |line, trace, devices| {
        let Some(h) = lead(
            line,
            &mut header,
            &mut seen,
            bt_header,
            "biosnoop.bt",
            "TIME(ms) … COMM PID LAT(ms)",
        )?
        else {
            return Ok(None);
        };
        let t: Vec<&str> = line.split_whitespace().collect();
        if h == BtDisk::Id && t == ["MAJOR", "MINOR"] {
            return Ok(None);
        }
        let (disk_words, expected) = match h {
            BtDisk::None => (0, "TIME(ms) COMM PID LAT(ms)"),
            BtDisk::Name => (1, "TIME(ms) DISK COMM PID LAT(ms)"),
            BtDisk::Id => (2, "TIME(ms) MAJOR MINOR COMM PID LAT(ms)"),
        };
        // TIME, the disk's words, COMM (one word at least; it may hold
        // blanks), PID, LAT.
        let n = t.len();
        if n < 4 + disk_words {
            return Err(format!(
                "expected the columns {expected}, found {n} field(s)"
            ));
        }
        let time = text::uint("TIME(ms)", t[0]).map_err(|e| format!("{e} (column 1)"))?;
        let lat = text::uint("LAT(ms)", t[n - 1])
            .map_err(|e| format!("{e} (column {})", 4 + disk_words))?;
        text::uint("PID", t[n - 2]).map_err(|e| format!("{e} (column {})", 3 + disk_words))?;
        let device = match h {
            BtDisk::None => "?".to_string(),
            BtDisk::Name => device_name(t[1]).to_string(),
            BtDisk::Id => {
                let major = text::uint32("MAJOR", t[1]).map_err(|e| format!("{e} (column 2)"))?;
                let minor = text::uint32("MINOR", t[2]).map_err(|e| format!("{e} (column 3)"))?;
                format!("{major},{minor}")
            }
        };
        let completion = time
            .checked_mul(1_000_000)
            .and_then(|t| t.checked_add(OFFSET))
            .ok_or("`TIME(ms)` (column 1) is too large")?;
        let arrival = lat
            .checked_mul(1_000_000)
            .and_then(|l| completion.checked_sub(l))
            .ok_or("`LAT(ms)` is longer than any trace")?;
        let dev = devices.id(trace, &device)?;
        Ok(Some(
            Request::new(Nanos(arrival), Nanos(completion), Op::Read, 0, 0).on_device(dev),
        ))
    })?;
    if !trace.requests.is_empty() {
        trace.notes.push(
            "biosnoop.bt records no direction, sector or size: every request is read as a read \
             of 0 bytes at sector 0 (its times are real, to the millisecond)"
                .into(),
        );
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bcc(text: &str) -> Result<Trace, TraceError> {
        read_bcc(text.as_bytes(), Path::new("b.txt"), ReadOptions::default())
    }

    #[test]
    fn bcc_rows_are_timed_from_completion_back() {
        let text = "Tracing block I/O... Hit Ctrl-C to end.\n\
            TIME(s)     COMM           PID    DISK    T SECTOR     BYTES  QUE(ms) LAT(ms)\n\
            0.000000    kworker/u72:1  13379  nvme1n1 W 1142400    4096      0.01    0.55\n\
            0.000771    Web Content    22177  nvme1n1 R 41963894   3072      0.11    0.47\n";
        assert!(sniff_bcc(text.as_bytes()));
        assert!(!sniff_bpftrace(text.as_bytes()));
        let t = bcc(text).unwrap();
        assert_eq!(t.format, BCC);
        assert_eq!(t.devices, ["nvme1n1"]);
        // Arrivals 0 - 0.56 ms and 0.771 - 0.58 ms: the first is time 0.
        let r = &t.requests;
        assert_eq!((r[0].arrival, r[0].completion), (Nanos(0), Nanos(560_000)));
        assert_eq!(r[1].arrival, Nanos(771_000 - 580_000 + 560_000));
        assert_eq!(r[1].completion, Nanos(771_000 + 560_000));
        assert_eq!(
            (r[1].op, r[1].sector, r[1].bytes),
            (Op::Read, 41963894, 3072)
        );
    }

    #[test]
    fn bcc_variants() {
        // libbpf-tools: rwbs, a missed queue time, an unknown disk, -t.
        let text = "TIMESTAMP    COMM           PID     DISK    T    SECTOR     BYTES   QUE(ms) LAT(ms)\n\
            23:59:59.990 jbd2/sda1-8    310     sda     FWS  100        4096     -1.000   0.500\n\
            00:00:00.010 ?              0       Unknown N    0          0         0.000   0.100\n\
            00:00:00.020 dd             4000    <unknown> D  8          512       0.000   1.000\n";
        let t = bcc(text).unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.requests[0].op, Op::Write);
        assert_eq!(t.requests[1].op, Op::Discard);
        assert_eq!(t.devices, ["sda", "?"]);
        // Across midnight: 30 ms apart at completion.
        assert_eq!(
            t.requests[1].completion - t.requests[0].completion,
            Nanos(30_000_000)
        );
        assert_eq!(t.notes.len(), 3, "{:?}", t.notes);
        // Old bcc: a row without a DISK.
        let text = "TIME(s)     COMM           PID    DISK    T SECTOR     BYTES   LAT(ms)\n\
            0.000000    ?              0              R 0          4096      0.29\n";
        let t = bcc(text).unwrap();
        assert_eq!(t.devices, ["?"]);
        assert_eq!(t.requests[0].completion, Nanos(290_000));
    }

    #[test]
    fn bcc_errors_name_line_and_column() {
        let text = "TIME(s)     COMM           PID    DISK    T SECTOR     BYTES   LAT(ms)\n\
            0.000004    supervise      1950   xvda1   W 13092560   4096       0.74\n\
            0.000178    supervise      1950   xvda1   W 1309x432   4096       0.61\n";
        match bcc(text) {
            Err(TraceError::Line { line, message, .. }) => {
                assert_eq!(line, 3);
                assert!(
                    message.contains("SECTOR") && message.contains("column 6"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        let t = read_bcc(
            text.as_bytes(),
            Path::new("b"),
            ReadOptions { lenient: true },
        )
        .unwrap();
        assert_eq!((t.requests.len(), t.skipped), (1, 1));
    }

    #[test]
    fn bpftrace_versions() {
        let text = "Attaching 4 probes...\n\
            TIME(ms)     DISK ID        COMM             PID    LAT(ms)\n\
                         MAJOR MINOR\n\
            611          259   0        bash             4179        10\n\
            627          259   0        cksum            4179        15\n";
        assert!(sniff_bpftrace(text.as_bytes()));
        assert!(!sniff_bcc(text.as_bytes()));
        let t = read_bpftrace(text.as_bytes(), Path::new("b"), ReadOptions::default()).unwrap();
        assert_eq!(t.devices, ["259,0"]);
        assert_eq!(t.requests[0].completion, Nanos(10_000_000));
        assert_eq!(
            t.requests[1].arrival,
            Nanos(627_000_000 - 15_000_000 - 601_000_000)
        );
        assert_eq!(t.notes.len(), 1);
        let text = "TIME(ms)     COMM             PID    LAT(ms)\n\
            2966         jbd2/nvme0n1-8   615          0\n";
        let t = read_bpftrace(text.as_bytes(), Path::new("b"), ReadOptions::default()).unwrap();
        assert_eq!(t.devices, ["?"]);
        let text = "TIME(ms)     DISK    COMM             PID    LAT(ms)\n\
            2966         sda     jbd2/sda1-8      615          x\n";
        let e = read_bpftrace(text.as_bytes(), Path::new("b"), ReadOptions::default()).unwrap_err();
        assert!(
            matches!(&e, TraceError::Line { line: 2, message, .. } if message.contains("column 5")),
            "{e}"
        );
    }
}
