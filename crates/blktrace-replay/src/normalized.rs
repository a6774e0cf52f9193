//! The normalized CSV (SPEC §5): lull's own interchange format.
//!
//! ```text
//! arrival_ns,completion_ns,op,sector,bytes,device
//! 0,1500000,R,2048,4096,8,0
//! ```
//!
//! One request a row, sorted by arrival; `op` is `R`, `W`, `F` or `D`; the
//! device is the rest of the line (so `8,0` needs no quoting to be read),
//! or double-quoted (a `""` in it for a quote). [`write()`] quotes a device
//! with a comma or a quote in it, as RFC 4180 has it, so that other CSV
//! readers (pandas, polars, a spreadsheet) see six columns.

use std::io::{BufRead, Write};
use std::path::Path;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::trace::Trace;

/// The header line.
pub const HEADER: &str = "arrival_ns,completion_ns,op,sector,bytes,device";

/// Whether the start of a file looks like the normalized CSV.
pub fn sniff(head: &[u8]) -> bool {
    head.strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(head)
        .starts_with(HEADER.as_bytes())
}

/// How to treat bad records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Skip malformed records and count them instead of failing.
    pub lenient: bool,
}

fn parse_row(line: &str, trace: &mut Trace) -> Result<Request, String> {
    let mut fields = line.splitn(6, ',');
    let mut next = |name: &str| {
        fields
            .next()
            .map(str::trim)
            .ok_or_else(|| format!("missing column `{name}` (expected {HEADER})"))
    };
    let num = |name: &str, s: &str| -> Result<u64, String> {
        s.parse::<u64>()
            .map_err(|_| format!("`{name}` is not a whole number: {s:?}"))
    };
    let arrival = num("arrival_ns", next("arrival_ns")?)?;
    let completion = num("completion_ns", next("completion_ns")?)?;
    let op_text = next("op")?;
    let op = Op::from_code(op_text)
        .ok_or_else(|| format!("`op` must be R, W, F or D, not {op_text:?}"))?;
    let sector = num("sector", next("sector")?)?;
    let bytes_text = next("bytes")?;
    let bytes = u32::try_from(num("bytes", bytes_text)?)
        .map_err(|_| format!("`bytes` is too large: {bytes_text}"))?;
    let device = next("device")?;
    let quoted = device.strip_prefix('"').and_then(|d| d.strip_suffix('"'));
    let unquoted;
    let device = match quoted {
        Some(d) if d.contains("\"\"") => {
            unquoted = d.replace("\"\"", "\"");
            unquoted.as_str()
        }
        Some(d) => d,
        None => device,
    };
    if device.is_empty() {
        return Err("missing column `device`".into());
    }
    if completion < arrival {
        return Err(format!(
            "completion_ns {completion} is before arrival_ns {arrival}"
        ));
    }
    if trace.device_limit_reached() && !trace.devices.iter().any(|d| d == device) {
        return Err("more than 65536 devices".into());
    }
    let dev = trace.device_id(device);
    Ok(Request::new(Nanos(arrival), Nanos(completion), op, sector, bytes).on_device(dev))
}

/// Reads a normalized CSV from `input`; `path` names it in errors.
///
/// Unsorted rows are an error (the format promises arrival order; a row
/// out of order means the file is not what it claims), or skipped when
/// lenient.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    let mut trace = Trace::new("normalized-csv");
    let mut lines = input.lines();
    let header = match lines.next() {
        None => {
            return Err(TraceError::line(
                path,
                1,
                "empty file: expected the header line",
            ));
        }
        Some(h) => h.map_err(|e| TraceError::io(path, e))?,
    };
    let header = header.trim_start_matches('\u{feff}').trim();
    if header != HEADER {
        return Err(TraceError::line(
            path,
            1,
            format!("header must be `{HEADER}`, found `{header}`"),
        ));
    }
    let mut last = Nanos::ZERO;
    for (i, line) in lines.enumerate() {
        let lineno = i as u64 + 2;
        let line = line.map_err(|e| TraceError::io(path, e))?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let result = parse_row(line, &mut trace).and_then(|r| {
            if r.arrival < last {
                // `lull trace convert` reads this format as strictly as
                // this, so the fix is a sort by the first column.
                Err(format!(
                    "rows are not sorted by arrival: {} after {} (sort them by their first column, keeping the header first: (head -n 1 {f}; tail -n +2 {f} | sort -t, -k1,1n) > sorted.csv)",
                    r.arrival.0,
                    last.0,
                    f = path.display()
                ))
            } else {
                Ok(r)
            }
        });
        match result {
            Ok(r) => {
                last = r.arrival;
                trace.requests.push(r);
            }
            Err(_) if opts.lenient => trace.skipped += 1,
            Err(message) => return Err(TraceError::line(path, lineno, message)),
        }
    }
    Ok(trace)
}

/// Writes `trace` as a normalized CSV.
pub fn write(trace: &Trace, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "{HEADER}")?;
    // Each device's field once, quoted where CSV needs it.
    let fields: Vec<String> = trace.devices.iter().map(|d| csv_field(d)).collect();
    for r in &trace.requests {
        // An id beyond the list is named as `Trace::device_name` names
        // it (`?`, which needs no quoting).
        let device = fields
            .get(usize::from(r.device.0))
            .map_or_else(|| trace.device_name(r.device), String::as_str);
        writeln!(
            out,
            "{},{},{},{},{},{device}",
            r.arrival.0,
            r.completion.0,
            r.op.code(),
            r.sector,
            r.bytes,
        )?;
    }
    Ok(())
}

/// `text` as a CSV field: double-quoted, with its quotes doubled, when it
/// holds a comma or a quote (or begins or ends with a blank, which a
/// reader would trim).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"']) || text.trim() != text {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Result<Trace, TraceError> {
        read(s.as_bytes(), Path::new("t.csv"), ReadOptions::default())
    }

    #[test]
    fn round_trips() {
        let text = format!("{HEADER}\n0,10,R,8,4096,8,0\n5,20,W,16,512,msr:hm_0\n");
        let t = read_str(&text).unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.devices, ["8,0", "msr:hm_0"]);
        let mut out = Vec::new();
        write(&t, &mut out).unwrap();
        // Written as CSV has it: `8,0` quoted, so six columns.
        let written = String::from_utf8(out).unwrap();
        assert_eq!(
            written,
            format!("{HEADER}\n0,10,R,8,4096,\"8,0\"\n5,20,W,16,512,msr:hm_0\n")
        );
        let again = read_str(&written).unwrap();
        assert_eq!(again.devices, t.devices);
        assert_eq!(again.requests, t.requests);
        // A quote in a device name is doubled, and read back.
        let text = format!("{HEADER}\n0,10,R,8,4096,\"a \"\"b\"\", c\"\n");
        let t = read_str(&text).unwrap();
        assert_eq!(t.devices, ["a \"b\", c"]);
        let mut out = Vec::new();
        write(&t, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
    }

    #[test]
    fn bad_input_names_the_line() {
        let cases = [
            ("", 1, "empty file"),
            ("a,b\n", 1, "header"),
            (
                &format!("{HEADER}\n0,10,R,8\n") as &str,
                2,
                "missing column `bytes`",
            ),
            (
                &format!("{HEADER}\n0,10,R,8,4096,d\n20,10,R,8,4096,d\n"),
                3,
                "before arrival",
            ),
            (
                &format!("{HEADER}\n10,20,R,8,4096,d\n5,20,R,8,4096,d\n"),
                3,
                "not sorted by arrival: 5 after 10 (sort them by their first column, keeping the header first: (head -n 1 t.csv; tail -n +2 t.csv | sort -t, -k1,1n) > sorted.csv)",
            ),
            (
                &format!("{HEADER}\nx,20,R,8,4096,d\n"),
                2,
                "not a whole number",
            ),
            (&format!("{HEADER}\n0,20,Q,8,4096,d\n"), 2, "`op`"),
            (&format!("{HEADER}\n0,20,R,8,4096,\n"), 2, "device"),
        ];
        for (text, line, needle) in cases {
            match read_str(text) {
                Err(TraceError::Line {
                    line: l, message, ..
                }) => {
                    assert_eq!(l, line, "{text:?}: {message}");
                    assert!(message.contains(needle), "{text:?}: {message}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn lenient_skips_and_counts() {
        let text = format!("{HEADER}\n0,10,R,8,4096,d\nbad\n20,30,W,8,4096,d\n");
        let t = read(
            text.as_bytes(),
            Path::new("t.csv"),
            ReadOptions { lenient: true },
        )
        .unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.skipped, 1);
    }
}
