//! CloudPhysics VSCSI traces, version 1 (the layout libCacheSim reads).
//!
//! Each record is 32 bytes, little-endian, with no file header:
//!
//! | off | field |
//! |----:|-------|
//! | 0 | `u32 sn` (serial number, high bit set) |
//! | 4 | `u32 len` (bytes) |
//! | 8 | `u32 nSG` (scatter-gather entries) |
//! | 12 | `u16 cmd` (SCSI opcode) |
//! | 14 | `u16 ver` (`0x0100`: version 1 in the high byte) |
//! | 16 | `u64 lbn` (512-byte sector) |
//! | 24 | `u64 ts` (microseconds) |
//!
//! READ(6/10/12/16) (`0x08 0x28 0xa8 0x88`) are reads, WRITE(6/10/12/16)
//! (`0x0a 0x2a 0xaa 0x8a`) and WRITE SAME(10/16) (`0x41 0x93`) writes,
//! SYNCHRONIZE CACHE(10/16) (`0x35 0x91`) flushes and UNMAP (`0x42`)
//! discards. Other commands (INQUIRY, TEST UNIT READY, …) move no data
//! and are left out, counted in a note. No completion is recorded:
//! completion = arrival (1 ns to the engine). The device is `vscsi`.
//! Records are sorted by time (the published trace already is) and
//! rebased to start at zero.
//!
//! Errors name the byte offset of the record: a version other than 1, or
//! a record cut short by the end of the file (with `lenient`, skipped and
//! counted).

use std::io::Read;
use std::path::Path;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::input::read_full;
use crate::normalized::ReadOptions;
use crate::trace::Trace;

/// Bytes per record.
pub const RECORD_LEN: usize = 32;

fn op(cmd: u16) -> Option<Op> {
    match cmd {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a | 0x41 | 0x93 => Some(Op::Write),
        0x35 | 0x91 => Some(Op::Flush),
        0x42 => Some(Op::Discard),
        _ => None,
    }
}

fn plausible(rec: &[u8]) -> bool {
    let sn = u32::from_le_bytes(rec[0..4].try_into().expect("4 bytes"));
    let cmd = u16::from_le_bytes([rec[12], rec[13]]);
    let ver = u16::from_le_bytes([rec[14], rec[15]]);
    sn & 0x8000_0000 != 0 && ver >> 8 == 1 && cmd <= 0xff
}

/// Whether `head` starts with VSCSI version-1 records (the first few all
/// plausible, with non-decreasing timestamps).
pub fn sniff(head: &[u8]) -> bool {
    let recs: Vec<&[u8]> = head.chunks_exact(RECORD_LEN).take(4).collect();
    if recs.is_empty() || !recs.iter().all(|r| plausible(r)) {
        return false;
    }
    let ts = |r: &[u8]| u64::from_le_bytes(r[24..32].try_into().expect("8 bytes"));
    recs.windows(2).all(|w| ts(w[0]) <= ts(w[1]))
}

/// Reads a VSCSI trace from `input`; `path` names it in errors.
pub fn read(mut input: impl Read, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    let mut trace = Trace::new("vscsi");
    let dev = trace.device_id("vscsi");
    let mut buf = [0u8; RECORD_LEN];
    let mut offset = 0u64;
    let mut other = 0u64;
    let mut inversions = 0u64;
    let mut last = 0u64;
    loop {
        let n = read_full(&mut input, &mut buf).map_err(|e| TraceError::io(path, e))?;
        if n == 0 {
            break;
        }
        if n < RECORD_LEN {
            if opts.lenient {
                trace.skipped += 1;
                break;
            }
            return Err(TraceError::offset(
                path,
                offset,
                format!("truncated record: {n} of {RECORD_LEN} bytes before the end of the file"),
            ));
        }
        let ver = u16::from_le_bytes([buf[14], buf[15]]);
        if ver >> 8 != 1 {
            if opts.lenient {
                trace.skipped += 1;
                offset += RECORD_LEN as u64;
                continue;
            }
            return Err(TraceError::offset(
                path,
                offset,
                format!("unsupported VSCSI record version 0x{ver:04x} (lull reads version 1)"),
            ));
        }
        let len = u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes"));
        let cmd = u16::from_le_bytes([buf[12], buf[13]]);
        let lbn = u64::from_le_bytes(buf[16..24].try_into().expect("8 bytes"));
        let us = u64::from_le_bytes(buf[24..32].try_into().expect("8 bytes"));
        offset += RECORD_LEN as u64;
        let Some(op) = op(cmd) else {
            other += 1;
            continue;
        };
        let Some(t) = us.checked_mul(1_000) else {
            if opts.lenient {
                trace.skipped += 1;
                continue;
            }
            return Err(TraceError::offset(
                path,
                offset - RECORD_LEN as u64,
                "timestamp too large",
            ));
        };
        if t < last {
            inversions += 1;
        }
        last = t;
        trace
            .requests
            .push(Request::new(Nanos(t), Nanos(t), op, lbn, len).on_device(dev));
    }
    if !trace.requests.is_empty() {
        // Said, since the idle time a replay under trace timing sees (and
        // `trace info`'s) is then all the time between arrivals.
        trace.notes.push(
            "the format records no completion times: each request is taken to last no time, so the disk reads as idle between arrivals under trace timing (spindown, none, trace info); writeback and cleaning run on the device model, which serves each request"
                .to_string(),
        );
    }
    if other > 0 {
        trace.notes.push(format!(
            "{other} SCSI command(s) that move no data were left out"
        ));
    }
    if inversions > 0 {
        trace.notes.push(format!(
            "{inversions} record(s) were out of time order; the requests were sorted by arrival"
        ));
    }
    trace.sort();
    trace.rebase();
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(cmd: u16, len: u32, lbn: u64, us: u64) -> [u8; 32] {
        let mut r = [0u8; 32];
        r[0..4].copy_from_slice(&0x8000_00f4u32.to_le_bytes());
        r[4..8].copy_from_slice(&len.to_le_bytes());
        r[8..12].copy_from_slice(&1u32.to_le_bytes());
        r[12..14].copy_from_slice(&cmd.to_le_bytes());
        r[14..16].copy_from_slice(&0x0100u16.to_le_bytes());
        r[16..24].copy_from_slice(&lbn.to_le_bytes());
        r[24..32].copy_from_slice(&us.to_le_bytes());
        r
    }

    #[test]
    fn reads_records() {
        let mut data = Vec::new();
        data.extend(record(0x2a, 512, 10, 5_000_000));
        data.extend(record(0x28, 4096, 20, 5_000_100));
        data.extend(record(0x12, 0, 0, 5_000_200));
        assert!(sniff(&data));
        let t = read(&data[..], Path::new("v"), ReadOptions::default()).unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.requests[1].arrival, Nanos(100_000));
        assert_eq!(t.requests[1].op, Op::Read);
        assert_eq!(t.notes.len(), 2);
        assert!(t.notes[0].contains("no completion times"), "{:?}", t.notes);
        data.truncate(40);
        let e = read(&data[..], Path::new("v"), ReadOptions::default()).unwrap_err();
        assert!(matches!(e, TraceError::Offset { offset: 32, .. }), "{e}");
    }
}
