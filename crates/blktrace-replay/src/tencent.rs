//! Tencent CBS cloud block-storage traces (SNIA IOTTA).
//!
//! ```text
//! Timestamp,Offset,Size,IOType,VolumeID
//! 1538323199,13896880,128,0,1063
//! ```
//!
//! `Timestamp` is whole Unix seconds (so the trace can say nothing about
//! gaps shorter than a second); `Offset` and `Size` are 512-byte sectors
//! (the set's own README, section 3: "Offset is the starting offset of the
//! I/O in sectors from the start of the logical virtual volume. 1 sector =
//! 512 bytes", and Size "in sectors"; the sample's values are all
//! multiples of 8); `IOType` is 0 for a read and 1 for a write; the device
//! is `tencent:<VolumeID>`. No completion is recorded: completion =
//! arrival (1 ns to the engine). A header line is optional; rows are
//! sorted by time and rebased, and the trace keeps the wall clock of its
//! first arrival (`Trace::clock`, for time-of-day skeptics).

use std::io::BufRead;
use std::path::Path;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::text::{self, RowResult, header_starts, is_uint};
use crate::trace::Trace;

fn op(s: &str) -> Option<Op> {
    match s {
        "0" => Some(Op::Read),
        "1" => Some(Op::Write),
        _ => None,
    }
}

fn is_header(line: &str) -> bool {
    header_starts(line, "timestamp,offset")
}

/// Whether `head` looks like a Tencent CBS trace.
pub fn sniff(head: &[u8]) -> bool {
    text::sniff_csv(head, is_header, |f| {
        f.len() == 5
            && is_uint(f[0])
            && is_uint(f[1])
            && is_uint(f[2])
            && op(f[3]).is_some()
            && is_uint(f[4])
    })
}

/// Reads a Tencent CBS trace from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    text::read_csv(
        input,
        path,
        opts,
        "tencent",
        is_header,
        |f, trace, devices| -> RowResult {
            if f.len() != 5 {
                return Err(format!(
                    "expected 5 columns (Timestamp,Offset,Size,IOType,VolumeID), found {}",
                    f.len()
                ));
            }
            let secs = text::uint("Timestamp", f[0])?;
            let offset = text::uint("Offset", f[1])?;
            let size = text::uint("Size", f[2])?;
            let op = op(f[3]).ok_or_else(|| format!("`IOType` must be 0 or 1, not {:?}", f[3]))?;
            let volume = text::uint("VolumeID", f[4])?;
            let t = secs
                .checked_mul(1_000_000_000)
                .ok_or("`Timestamp` is too large")?;
            let bytes = size
                .checked_mul(512)
                .and_then(|b| u32::try_from(b).ok())
                .ok_or("`Size` is too large")?;
            let dev = devices.id(trace, &format!("tencent:{volume}"))?;
            // Unix seconds: raw time 0 is the epoch.
            trace.clock = Some(Nanos::ZERO);
            Ok(Some(
                Request::new(Nanos(t), Nanos(t), op, offset, bytes).on_device(dev),
            ))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows() {
        let text = "1538323200,4247200,128,1,1058\n1538323199,13896880,128,0,1063\n";
        assert!(sniff(text.as_bytes()));
        let t = read(text.as_bytes(), Path::new("t"), ReadOptions::default()).unwrap();
        assert_eq!(t.requests[0].op, Op::Read);
        assert_eq!(t.requests[0].bytes, 65_536);
        assert_eq!(t.requests[1].arrival, Nanos::from_secs(1));
        assert_eq!(t.device_name(t.requests[0].device), "tencent:1063");
        // Time 0 is the earliest row, 2018-09-30 15:59:59 UTC.
        assert_eq!(t.clock, Some(Nanos::from_secs(1_538_323_199)));
    }
}
