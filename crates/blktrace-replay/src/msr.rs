//! MSR Cambridge (SNIA IOTTA 388) block traces, and SNIA CSV traces in
//! the same layout.
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166385295514663,hm,0,Write,9056014336,2048,2833
//! ```
//!
//! `Timestamp` is a Windows FILETIME (100 ns ticks since 1601-01-01 UTC);
//! `Type` is `Read` or `Write` (any case); `Offset` and `Size` are bytes;
//! `ResponseTime` is in 100 ns ticks, so completion = arrival + response.
//! The device is `msr:<Hostname>_<DiskNumber>` (`msr:hm_0`), so several
//! volumes can share a file. A header line is optional. The published
//! volumes are sorted by time; rows out of order are sorted anyway (see
//! the shared CSV row handling in `text.rs`). Time is rebased to start at zero.

use std::io::BufRead;
use std::path::Path;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::text::{self, RowResult, header_starts, is_uint};
use crate::trace::Trace;

fn op(s: &str) -> Option<Op> {
    if s.eq_ignore_ascii_case("read") {
        Some(Op::Read)
    } else if s.eq_ignore_ascii_case("write") {
        Some(Op::Write)
    } else {
        None
    }
}

fn is_header(line: &str) -> bool {
    header_starts(line, "timestamp,hostname")
}

/// Whether `head` looks like an MSR Cambridge CSV.
pub fn sniff(head: &[u8]) -> bool {
    text::sniff_csv(head, is_header, |f| {
        f.len() == 7
            && is_uint(f[0])
            && !f[1].is_empty()
            && is_uint(f[2])
            && op(f[3]).is_some()
            && is_uint(f[4])
            && is_uint(f[5])
            && is_uint(f[6])
    })
}

/// Reads an MSR Cambridge CSV from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    text::read_csv(
        input,
        path,
        opts,
        "msr",
        is_header,
        |f, trace, devices| -> RowResult {
            if f.len() != 7 {
                return Err(format!(
                    "expected 7 columns (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {}",
                    f.len()
                ));
            }
            let ticks = text::uint("Timestamp", f[0])?;
            let host = f[1];
            if host.is_empty() {
                return Err("empty `Hostname`".into());
            }
            let disk = text::uint("DiskNumber", f[2])?;
            let op =
                op(f[3]).ok_or_else(|| format!("`Type` must be Read or Write, not {:?}", f[3]))?;
            let offset = text::uint("Offset", f[4])?;
            let size = text::uint32("Size", f[5])?;
            let response = text::uint("ResponseTime", f[6])?;
            let arrival = ticks
                .checked_mul(100)
                .ok_or("`Timestamp` is too large for nanoseconds")?;
            let completion = response
                .checked_mul(100)
                .and_then(|r| arrival.checked_add(r))
                .ok_or("`ResponseTime` is too large")?;
            let dev = devices.id(trace, &format!("msr:{host}_{disk}"))?;
            Ok(Some(
                Request::new(Nanos(arrival), Nanos(completion), op, offset / 512, size)
                    .on_device(dev),
            ))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows() {
        let text = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
                    128166385295514663,hm,0,Write,9056014336,2048,2833\n\
                    128166385295515175,hm,1,read,5548077056,4096,2320\n";
        assert!(sniff(text.as_bytes()));
        let t = read(text.as_bytes(), Path::new("m.csv"), ReadOptions::default()).unwrap();
        assert_eq!(t.devices, ["msr:hm_0", "msr:hm_1"]);
        assert_eq!(t.requests[0].arrival, Nanos(0));
        assert_eq!(t.requests[0].completion, Nanos(283_300));
        assert_eq!(t.requests[1].arrival, Nanos(51_200));
        assert_eq!(t.requests[1].op, Op::Read);
        assert_eq!(t.requests[0].sector, 9_056_014_336 / 512);
    }

    #[test]
    fn bad_rows_name_the_line() {
        let text = "128166385295514663,hm,0,Write,9056014336,2048,2833\n1,hm,0,Erase,1,1,1\n";
        let e = read(text.as_bytes(), Path::new("m.csv"), ReadOptions::default()).unwrap_err();
        assert!(matches!(e, TraceError::Line { line: 2, .. }), "{e}");
    }
}
