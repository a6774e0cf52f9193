//! Alibaba cloud block-storage traces (the 2020 release, one file of all
//! volumes).
//!
//! ```text
//! device_id,opcode,offset,length,timestamp
//! 419,W,8792064,4096,1577808000000048
//! ```
//!
//! `opcode` is `R` or `W`; `offset` and `length` are bytes; `timestamp`
//! is Unix microseconds. The device is `alibaba:<device_id>`. No
//! completion is recorded: completion = arrival (1 ns to the engine). A
//! header line is optional; rows are sorted by time and rebased, and the
//! trace keeps the wall clock of its first arrival (`Trace::clock`).

use std::io::BufRead;
use std::path::Path;

use lull_core::request::Request;
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::text::{self, RowResult, header_starts, is_uint};
use crate::trace::Trace;

fn is_header(line: &str) -> bool {
    header_starts(line, "device_id,opcode")
}

/// Whether `head` looks like an Alibaba block trace.
pub fn sniff(head: &[u8]) -> bool {
    text::sniff_csv(head, is_header, |f| {
        f.len() == 5
            && is_uint(f[0])
            && text::read_or_write(f[1]).is_some()
            && is_uint(f[2])
            && is_uint(f[3])
            && is_uint(f[4])
    })
}

/// Reads an Alibaba block trace from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    text::read_csv(
        input,
        path,
        opts,
        "alibaba",
        is_header,
        |f, trace, devices| -> RowResult {
            if f.len() != 5 {
                return Err(format!(
                    "expected 5 columns (device_id,opcode,offset,length,timestamp), found {}",
                    f.len()
                ));
            }
            let id = text::uint("device_id", f[0])?;
            let op = text::read_or_write(f[1])
                .ok_or_else(|| format!("`opcode` must be R or W, not {:?}", f[1]))?;
            let offset = text::uint("offset", f[2])?;
            let length = text::uint32("length", f[3])?;
            let us = text::uint("timestamp", f[4])?;
            let t = us.checked_mul(1_000).ok_or("`timestamp` is too large")?;
            let dev = devices.id(trace, &format!("alibaba:{id}"))?;
            // Unix microseconds: raw time 0 is the epoch.
            trace.clock = Some(Nanos::ZERO);
            Ok(Some(
                Request::new(Nanos(t), Nanos(t), op, offset / 512, length).on_device(dev),
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
        let text = "device_id,opcode,offset,length,timestamp\n\
                    419,W,8792064,4096,1577808000000048\n\
                    12,R,0,512,1577808000000000\n";
        assert!(sniff(text.as_bytes()));
        let t = read(text.as_bytes(), Path::new("a"), ReadOptions::default()).unwrap();
        assert_eq!(t.requests[0].op, Op::Read);
        assert_eq!(t.requests[1].arrival, Nanos(48_000));
        assert_eq!(t.requests[1].sector, 8_792_064 / 512);
        // 2019-12-31 16:00:00 UTC, midnight in Beijing.
        assert_eq!(t.clock, Some(Nanos::from_secs(1_577_808_000)));
    }
}
