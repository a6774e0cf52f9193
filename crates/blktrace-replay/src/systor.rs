//! SYSTOR '17 block traces (SNIA IOTTA).
//!
//! ```text
//! Timestamp,Response,IOType,LUN,Offset,Size
//! 1456095145.133076000,0.000806000,R,0,899056122368,131072
//! ```
//!
//! `Timestamp` is Unix seconds with a fraction, `Response` is seconds,
//! `IOType` is `R` or `W`, `Offset` and `Size` are bytes. The device is
//! `systor:<LUN>`. **The rows are not sorted by time** (the public samples
//! have hundreds of inversions), so the reader sorts them; the note on the
//! trace says how many were out of order. Time is rebased to start at zero;
//! the trace keeps the wall clock of its first arrival (`Trace::clock`).

use std::io::BufRead;
use std::path::Path;

use lull_core::request::Request;
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::text::{self, RowResult, header_starts, is_decimal, is_uint};
use crate::trace::Trace;

fn is_header(line: &str) -> bool {
    header_starts(line, "timestamp,response")
}

/// Whether `head` looks like a SYSTOR '17 trace.
pub fn sniff(head: &[u8]) -> bool {
    text::sniff_csv(head, is_header, |f| {
        f.len() == 6
            && is_decimal(f[0])
            && is_decimal(f[1])
            && text::read_or_write(f[2]).is_some()
            && is_uint(f[3])
            && is_uint(f[4])
            && is_uint(f[5])
    })
}

/// Reads a SYSTOR '17 trace from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    text::read_csv(
        input,
        path,
        opts,
        "systor",
        is_header,
        |f, trace, devices| -> RowResult {
            if f.len() != 6 {
                return Err(format!(
                    "expected 6 columns (Timestamp,Response,IOType,LUN,Offset,Size), found {}",
                    f.len()
                ));
            }
            let t = text::secs_ns("Timestamp", f[0])?;
            let response = text::secs_ns("Response", f[1])?;
            let op = text::read_or_write(f[2])
                .ok_or_else(|| format!("`IOType` must be R or W, not {:?}", f[2]))?;
            let lun = text::uint("LUN", f[3])?;
            let offset = text::uint("Offset", f[4])?;
            let size = text::uint32("Size", f[5])?;
            let completion = t.checked_add(response).ok_or("`Response` is too large")?;
            let dev = devices.id(trace, &format!("systor:{lun}"))?;
            // Unix seconds: raw time 0 is the epoch.
            trace.clock = Some(Nanos::ZERO);
            Ok(Some(
                Request::new(Nanos(t), Nanos(completion), op, offset / 512, size).on_device(dev),
            ))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::Op;

    #[test]
    fn sorts_rows() {
        let text = "Timestamp,Response,IOType,LUN,Offset,Size\n\
                    1456095145.133076000,0.000806000,R,0,899056122368,131072\n\
                    1456095145.126285000,0.008044000,W,0,4256049987072,122880\n";
        assert!(sniff(text.as_bytes()));
        let t = read(text.as_bytes(), Path::new("s"), ReadOptions::default()).unwrap();
        assert_eq!(t.requests[0].op, Op::Write);
        assert_eq!(t.requests[0].arrival, Nanos(0));
        assert_eq!(t.requests[0].completion, Nanos(8_044_000));
        assert_eq!(t.requests[1].arrival, Nanos(6_791_000));
        assert_eq!(t.notes.len(), 1);
        // Time 0 is the earliest row, 2016-02-21 22:52:25.126285 UTC.
        assert_eq!(t.clock, Some(Nanos(1_456_095_145_126_285_000)));
    }
}
