//! SPC traces (the UMass / Storage Performance Council layout used by the
//! Financial and WebSearch traces).
//!
//! ```text
//! ASU,LBA,Size,Opcode,Timestamp[,...]
//! 0,20941264,8192,W,0.551706
//! ```
//!
//! `ASU` is the application storage unit (the device, named `spc:<ASU>`);
//! `LBA` is in 512-byte sectors; `Size` is bytes; `Opcode` is `r`/`R` or
//! `w`/`W`; `Timestamp` is seconds from the start of the trace. Columns
//! after the fifth are ignored. The format records no completion, so
//! completion = arrival (the engine treats each request as lasting 1 ns).
//! A header line is optional; rows are sorted by time and rebased.

use std::io::BufRead;
use std::path::Path;

use lull_core::request::Request;
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::text::{self, RowResult, header_starts, is_decimal, is_uint};
use crate::trace::Trace;

fn is_header(line: &str) -> bool {
    header_starts(line, "asu,")
}

/// Whether `head` looks like an SPC trace.
pub fn sniff(head: &[u8]) -> bool {
    text::sniff_csv(head, is_header, |f| {
        f.len() >= 5
            && is_uint(f[0])
            && is_uint(f[1])
            && is_uint(f[2])
            && text::read_or_write(f[3]).is_some()
            && is_decimal(f[4])
    })
}

/// Reads an SPC trace from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    text::read_csv(
        input,
        path,
        opts,
        "spc",
        is_header,
        |f, trace, devices| -> RowResult {
            if f.len() < 5 {
                return Err(format!(
                    "expected at least 5 columns (ASU,LBA,Size,Opcode,Timestamp), found {}",
                    f.len()
                ));
            }
            let asu = text::uint("ASU", f[0])?;
            let lba = text::uint("LBA", f[1])?;
            let size = text::uint32("Size", f[2])?;
            let op = text::read_or_write(f[3])
                .ok_or_else(|| format!("`Opcode` must be r or w, not {:?}", f[3]))?;
            let t = text::secs_ns("Timestamp", f[4])?;
            let dev = devices.id(trace, &format!("spc:{asu}"))?;
            Ok(Some(
                Request::new(Nanos(t), Nanos(t), op, lba, size).on_device(dev),
            ))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::Op;

    #[test]
    fn reads_rows() {
        let text = "0,20941264,8192,W,0.551706\n1,20939840,8192,r,0.554041,extra\n";
        assert!(sniff(text.as_bytes()));
        let t = read(text.as_bytes(), Path::new("s"), ReadOptions::default()).unwrap();
        assert_eq!(t.devices, ["spc:0", "spc:1"]);
        assert_eq!(t.requests[1].arrival, Nanos(2_335_000));
        assert_eq!(t.requests[1].op, Op::Read);
    }
}
