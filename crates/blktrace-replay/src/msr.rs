//! MSR Cambridge (SNIA IOTTA 388) block traces, and SNIA CSV traces in
//! the same layout.
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166385295514663,hm,0,Write,9056014336,2048,2833
//! ```
//!
//! `Timestamp` is a Windows FILETIME (100 ns ticks since 1601-01-01 UTC;
//! the trace keeps the wall clock of its first arrival, `Trace::clock`, for
//! time-of-day skeptics);
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

/// 1970-01-01 as a FILETIME, in nanoseconds since 1601-01-01.
const FILETIME_UNIX_EPOCH_NS: u64 = 11_644_473_600 * 1_000_000_000;

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
    // Whether timestamps are read as Unix time (decided on the first row:
    // real FILETIMEs are after 1970; small test values stay as they are).
    let mut unix: Option<bool> = None;
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
            let mut arrival = ticks
                .checked_mul(100)
                .ok_or("`Timestamp` is too large for nanoseconds")?;
            if *unix.get_or_insert(arrival >= FILETIME_UNIX_EPOCH_NS) {
                arrival = arrival
                    .checked_sub(FILETIME_UNIX_EPOCH_NS)
                    .ok_or("`Timestamp` is before 1970 while earlier rows are after it")?;
                trace.clock = Some(Nanos::ZERO);
            }
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

    /// FILETIME 128166385295514663 is 2007-02-22 17:22:09.551 UTC (the
    /// MSR Cambridge traces start on 22 February 2007): 12,816,638,529.55 s
    /// after 1601 less the 11,644,473,600 s to 1970.
    #[test]
    fn keeps_the_wall_clock() {
        let text = "128166385295514663,hm,0,Write,9056014336,2048,2833\n";
        let t = read(text.as_bytes(), Path::new("m.csv"), ReadOptions::default()).unwrap();
        let unix_ns = 128_166_385_295_514_663u64 * 100 - 11_644_473_600 * 1_000_000_000;
        assert_eq!(t.clock, Some(Nanos(unix_ns)));
        assert_eq!(
            unix_ns / 1_000_000_000,
            1_172_164_929,
            "2007-02-22 17:22:09 UTC"
        );
        // Made-up small timestamps carry no wall clock.
        let t = read(
            "5,hm,0,Read,0,512,1\n".as_bytes(),
            Path::new("m.csv"),
            ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(t.clock, None);
    }

    #[test]
    fn bad_rows_name_the_line() {
        let text = "128166385295514663,hm,0,Write,9056014336,2048,2833\n1,hm,0,Erase,1,1,1\n";
        let e = read(text.as_bytes(), Path::new("m.csv"), ReadOptions::default()).unwrap_err();
        assert!(matches!(e, TraceError::Line { line: 2, .. }), "{e}");
    }
}
