//! Shared machinery of the text readers: a line reader that counts lines
//! and rejects non-UTF-8 text with the line number, a comma splitter,
//! number parsers that keep decimal seconds exact to the nanosecond, a
//! device-name cache, and [`read_csv`], the driver every CSV format uses.
//!
//! The CSV driver reads row by row (only the `Vec<Request>` grows), skips
//! blank lines and an optional header line, stops at the first malformed
//! row with its line number (or, with `lenient`, skips and counts it), and
//! finally sorts the requests by arrival (stable, so ties keep file order)
//! and rebases time so the first arrival is zero. Sorting is what makes
//! unsorted formats such as SYSTOR '17 safe; the number of rows found out
//! of order is reported in [`Trace::notes`].

use rustc_hash::FxHashMap as HashMap;
use std::io::BufRead;
use std::path::Path;

use lull_core::request::{DeviceId, Op, Request};

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::trace::Trace;

/// Reads lines with their 1-based numbers.
pub(crate) struct Lines<'p, R> {
    input: R,
    path: &'p Path,
    buf: Vec<u8>,
    line: u64,
}

impl<'p, R: BufRead> Lines<'p, R> {
    pub(crate) fn new(input: R, path: &'p Path) -> Self {
        Lines {
            input,
            path,
            buf: Vec::with_capacity(256),
            line: 0,
        }
    }

    /// The next line without its end-of-line characters: `Ok(None)` at
    /// the end, `Err(Ok(..))` for a line that is not UTF-8 (its number),
    /// `Err(Err(..))` for an I/O error.
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &str)>, Result<u64, TraceError>> {
        self.buf.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| Err(TraceError::io(self.path, e)))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((self.line, s))),
            Err(_) => Err(Ok(self.line)),
        }
    }
}

/// Splits `line` at commas into `out` (trimmed); returns the number of
/// fields, or `None` if there are more than `out` holds.
pub(crate) fn split_fields<'a, const N: usize>(
    line: &'a str,
    out: &mut [&'a str; N],
) -> Option<usize> {
    let mut n = 0;
    for f in line.split(',') {
        if n == N {
            return None;
        }
        out[n] = f.trim();
        n += 1;
    }
    Some(n)
}

/// A whole number.
pub(crate) fn uint(name: &str, s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("`{name}` is not a whole number: {s:?}"))
}

/// A whole number that fits in 32 bits.
pub(crate) fn uint32(name: &str, s: &str) -> Result<u32, String> {
    u32::try_from(uint(name, s)?).map_err(|_| format!("`{name}` is too large: {s}"))
}

/// Non-negative decimal seconds (`1456095145.133076`, `0.5`, `12`, `1e-3`)
/// as nanoseconds: exact for plain decimals (digits beyond the ninth
/// decimal are truncated), through `f64` for exponent notation.
pub(crate) fn secs_ns(name: &str, s: &str) -> Result<u64, String> {
    let bad = || format!("`{name}` is not a non-negative number of seconds: {s:?}");
    if s.contains(['e', 'E']) {
        let v: f64 = s.parse().map_err(|_| bad())?;
        if !(v.is_finite() && (0.0..1.8e10).contains(&v)) {
            return Err(bad());
        }
        return Ok((v * 1e9).round() as u64);
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    let mut nanos = 0u64;
    for (i, b) in frac.bytes().take(9).enumerate() {
        nanos += u64::from(b - b'0') * 10u64.pow(8 - i as u32);
    }
    whole
        .checked_mul(1_000_000_000)
        .and_then(|w| w.checked_add(nanos))
        .ok_or_else(|| format!("`{name}` is too large: {s}"))
}

/// Device names to ids without a linear search per row.
#[derive(Clone, Debug, Default)]
pub(crate) struct Devices {
    ids: HashMap<String, DeviceId>,
}

impl Devices {
    /// The id of `name` in `trace`, adding it if new; an error past
    /// 65 536 devices.
    pub(crate) fn id(&mut self, trace: &mut Trace, name: &str) -> Result<DeviceId, String> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        if trace.device_limit_reached() {
            return Err("more than 65536 devices".into());
        }
        let id = trace.device_id(name);
        self.ids.insert(name.to_string(), id);
        Ok(id)
    }
}

/// What a CSV row parser returns: a request, or nothing for a row that is
/// valid but carries no request.
pub(crate) type RowResult = Result<Option<Request>, String>;

/// Reads a CSV trace (see the module docs). `is_header` recognises the
/// optional header line (only the first non-blank line is offered);
/// `row` parses the fields of one row.
pub(crate) fn read_csv<R: BufRead>(
    input: R,
    path: &Path,
    opts: ReadOptions,
    format: &'static str,
    is_header: impl Fn(&str) -> bool,
    mut row: impl FnMut(&[&str], &mut Trace, &mut Devices) -> RowResult,
) -> Result<Trace, TraceError> {
    let mut first = true;
    read_lines(input, path, opts, format, |line, trace, devices| {
        if std::mem::take(&mut first) && is_header(line) {
            return Ok(None);
        }
        let mut fields = [""; 16];
        match split_fields(line, &mut fields) {
            Some(n) => row(&fields[..n], trace, devices),
            None => Err("too many columns".to_string()),
        }
    })
}

/// The driver of every line-oriented reader: reads `input` line by line
/// (blank lines skipped, a byte-order mark and surrounding blanks
/// trimmed), hands each line to `row`, stops at the first malformed one
/// with its line number (or, with `lenient`, skips and counts it), then
/// sorts the requests by arrival and rebases time to the first arrival.
/// `row` returns `Ok(None)` for a line that is valid but carries no
/// request (a header, a tool's banner).
pub(crate) fn read_lines<R: BufRead>(
    input: R,
    path: &Path,
    opts: ReadOptions,
    format: &'static str,
    mut row: impl FnMut(&str, &mut Trace, &mut Devices) -> RowResult,
) -> Result<Trace, TraceError> {
    let mut trace = Trace::new(format);
    let mut devices = Devices::default();
    let mut lines = Lines::new(input, path);
    let mut inversions = 0u64;
    let mut last = None;
    loop {
        let (lineno, line) = match lines.next_line() {
            Ok(None) => break,
            Ok(Some(l)) => l,
            Err(Err(e)) => return Err(e),
            Err(Ok(_)) if opts.lenient => {
                trace.skipped += 1;
                continue;
            }
            Err(Ok(lineno)) => {
                return Err(TraceError::line(path, lineno, "not UTF-8 text"));
            }
        };
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() {
            continue;
        }
        match row(line, &mut trace, &mut devices) {
            Ok(Some(r)) => {
                if last.is_some_and(|t| r.arrival < t) {
                    inversions += 1;
                }
                last = Some(r.arrival);
                trace.requests.push(r);
            }
            Ok(None) => {}
            Err(_) if opts.lenient => trace.skipped += 1,
            Err(message) => return Err(TraceError::line(path, lineno, message)),
        }
    }
    if inversions > 0 {
        trace.notes.push(format!(
            "{inversions} row(s) were out of time order; the requests were sorted by arrival"
        ));
    }
    trace.sort();
    trace.rebase();
    Ok(trace)
}

/// Whether `head` looks like a CSV trace: its first data line (after an
/// optional header) passes `row_ok`. Only the first, so that a bad row
/// further down is reported with its line number by the reader instead of
/// making the whole file unrecognisable.
pub(crate) fn sniff_csv(
    head: &[u8],
    is_header: impl Fn(&str) -> bool,
    row_ok: impl Fn(&[&str]) -> bool,
) -> bool {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    // Only complete lines, unless the head is the whole input.
    let text = if head.len() >= crate::input::HEAD_LEN {
        text.rsplit_once('\n').map_or("", |(t, _)| t)
    } else {
        text
    };
    let mut fields = [""; 16];
    let mut seen = 0;
    for (i, line) in text
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i == 0 && is_header(line) {
            continue;
        }
        match split_fields(line, &mut fields) {
            Some(n) if row_ok(&fields[..n]) => seen += 1,
            _ => return false,
        }
        if seen == 1 {
            break;
        }
    }
    seen > 0
}

/// Whether `s` is a whole number.
/// A read or a write in the one-letter form several CSV traces share
/// (`R`/`W`, either case); anything else is not an op of these formats.
pub(crate) fn read_or_write(s: &str) -> Option<Op> {
    match s {
        "R" | "r" => Some(Op::Read),
        "W" | "w" => Some(Op::Write),
        _ => None,
    }
}

pub(crate) fn is_uint(s: &str) -> bool {
    !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `s` is a plain non-negative decimal.
pub(crate) fn is_decimal(s: &str) -> bool {
    let (i, f) = s.split_once('.').unwrap_or((s, ""));
    !(i.is_empty() && f.is_empty())
        && i.bytes().all(|b| b.is_ascii_digit())
        && f.bytes().all(|b| b.is_ascii_digit())
}

/// Whether the first field of a header line starts with `name`
/// (ignoring case).
pub(crate) fn header_starts(line: &str, name: &str) -> bool {
    line.get(..name.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(
            secs_ns("t", "1456095145.133076000"),
            Ok(1_456_095_145_133_076_000)
        );
        assert_eq!(secs_ns("t", "0.5"), Ok(500_000_000));
        assert_eq!(secs_ns("t", "12"), Ok(12_000_000_000));
        assert_eq!(secs_ns("t", ".25"), Ok(250_000_000));
        assert_eq!(secs_ns("t", "1.0000000019"), Ok(1_000_000_001));
        assert_eq!(secs_ns("t", "1e-3"), Ok(1_000_000));
        for bad in ["", ".", "-1", "1.2.3", "x", "1e400", "99999999999999999999"] {
            assert!(secs_ns("t", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn splits_fields() {
        let mut out = [""; 3];
        assert_eq!(split_fields("a, b ,c", &mut out), Some(3));
        assert_eq!(out, ["a", "b", "c"]);
        assert_eq!(split_fields("a,b,c,d", &mut out), None);
    }
}
