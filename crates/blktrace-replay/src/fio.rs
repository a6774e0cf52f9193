//! fio's I/O logs (`write_iolog`), versions 2 and 3, as traces.
//!
//! ```text
//! fio version 3 iolog
//! 0 /dev/sdb add
//! 1 /dev/sdb open
//! 3 /dev/sdb write 0 4096
//! 5 /dev/sdb read 1048576 4096
//! 12 /dev/sdb close
//! ```
//!
//! A line is `[TIME] FILE ACTION [OFFSET LENGTH]`: version 3 starts each
//! line with the time in milliseconds since the job started; version 2
//! has no time. `OFFSET` and `LENGTH` are bytes (the sector is the offset
//! / 512). `read` and `write` are requests; `sync` and `datasync` are
//! flushes; `trim` is a discard; `add`, `open` and `close` manage files
//! and carry no request. The device is the `FILE` (`/dev/sdb`), so the
//! logs of several jobs can be concatenated after one header line each.
//!
//! fio logs an I/O when it is issued and records no completion, so
//! completion = arrival (a note says so): the idle periods are the gaps
//! between issues, to the millisecond.
//!
//! **Version 2 has no timestamps.** What it has is `wait` actions (`FILE
//! wait USEC`), which fio's replay sleeps for before the next I/O. A
//! version 2 log is read as fio replays it: each request arrives when the
//! `wait`s before it add up to, back to back otherwise, with a note. A
//! version 2 log without a single `wait` would be one burst at time 0,
//! with no idle time to find: it is refused with an error that asks for
//! version 3 (fio since 3.31 writes it), rather than measured as nothing.
//! The file name may hold blanks: a line is split from the right.

use std::io::BufRead;
use std::path::Path;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::text::{self, RowResult};
use crate::trace::Trace;

/// The format name ([`Trace::format`]).
pub const NAME: &str = "fio-iolog";

const V2: &str = "fio version 2 iolog";
const V3: &str = "fio version 3 iolog";

/// The version named by a header line.
fn version(line: &str) -> Option<u8> {
    match line {
        V2 => Some(2),
        V3 => Some(3),
        _ => None,
    }
}

/// Whether `head` is a fio iolog (version 2 or 3): its first line is the
/// version line.
pub fn sniff(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    std::str::from_utf8(line).is_ok_and(|l| version(l.trim()).is_some())
}

/// What one action does.
enum Action {
    /// A request of this op.
    Io(Op),
    /// `wait`: sleep (version 2, microseconds in the offset field).
    Wait,
    /// File management: nothing.
    File,
}

fn action(s: &str) -> Option<Action> {
    Some(match s {
        "read" => Action::Io(Op::Read),
        "write" => Action::Io(Op::Write),
        "sync" | "datasync" => Action::Io(Op::Flush),
        "trim" => Action::Io(Op::Discard),
        "wait" => Action::Wait,
        "add" | "open" | "close" => Action::File,
        _ => return None,
    })
}

/// Reads a fio iolog from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    let mut ver: Option<u8> = None;
    // Version 2: the time the `wait`s have added up to, and whether any.
    let mut clock = 0u64;
    let mut waits = 0u64;
    let mut trace = text::read_lines(
        input,
        path,
        opts,
        NAME,
        |line, trace, devices| -> RowResult {
            if let Some(v) = version(line) {
                // Logs concatenated: each part keeps its own header.
                ver = Some(v);
                clock = 0;
                return Ok(None);
            }
            let v =
                ver.ok_or("not a fio iolog: the first line must be `fio version 3 iolog` (or 2)")?;
            let mut t: Vec<&str> = line.split_whitespace().collect();
            let time = if v == 3 {
                if t.is_empty() {
                    return Err("expected TIME FILE ACTION [OFFSET LENGTH]".into());
                }
                let ms = text::uint("TIME", t.remove(0)).map_err(|e| format!("{e} (column 1)"))?;
                Some(
                    ms.checked_mul(1_000_000)
                        .ok_or("`TIME` (column 1) is too large")?,
                )
            } else {
                None
            };
            let first = usize::from(v == 3) + 1;
            let expected = if v == 3 {
                "TIME FILE ACTION [OFFSET LENGTH]"
            } else {
                "FILE ACTION [OFFSET LENGTH]"
            };
            // From the right: ACTION alone, or ACTION OFFSET LENGTH.
            let n = t.len();
            let (act, file, nums) = match t.as_slice() {
                [.., a] if matches!(action(a), Some(Action::File)) && n >= 2 => {
                    (action(a), &t[..n - 1], None)
                }
                [.., a, off, len] if n >= 4 => (action(a), &t[..n - 3], Some((*off, *len))),
                [.., a, off] if *a == "wait" && n >= 3 => {
                    (action(a), &t[..n - 2], Some((*off, "0")))
                }
                _ => {
                    return Err(format!(
                        "expected {expected}, found {n} field(s) after the time"
                    ));
                }
            };
            let Some(act) = act else {
                let at = n - if nums.is_some() { 3 } else { 1 };
                return Err(format!(
                    "`ACTION` (column {}) must be read, write, sync, datasync, trim, wait, add, open \
                 or close, not {:?}",
                    first + file.len(),
                    t[at]
                ));
            };
            let col = first + file.len() + 1;
            match act {
                Action::File => Ok(None),
                Action::Wait => {
                    let (usec, _) = nums.unwrap_or(("0", "0"));
                    let usec =
                        text::uint("OFFSET", usec).map_err(|e| format!("{e} (column {col})"))?;
                    if v == 2 {
                        waits += 1;
                        clock = usec
                            .checked_mul(1000)
                            .and_then(|w| clock.checked_add(w))
                            .ok_or("the waits add up to too long")?;
                    }
                    Ok(None)
                }
                Action::Io(op) => {
                    let (off, len) = nums.unwrap_or(("0", "0"));
                    let offset =
                        text::uint("OFFSET", off).map_err(|e| format!("{e} (column {col})"))?;
                    let bytes = text::uint32("LENGTH", len)
                        .map_err(|e| format!("{e} (column {})", col + 1))?;
                    let at = Nanos(time.unwrap_or(clock));
                    let dev = devices.id(trace, &file.join(" "))?;
                    Ok(Some(
                        Request::new(at, at, op, offset / 512, bytes).on_device(dev),
                    ))
                }
            }
        },
    )?;
    match ver {
        Some(2) if waits == 0 && !trace.requests.is_empty() => {
            return Err(TraceError::format(
                path,
                "a fio version 2 iolog records no times (and this one no `wait`s): its requests \
                 would all arrive at once, with no idle time to find. Record it again with a fio \
                 that writes version 3 (fio 3.31 or later, `write_iolog=FILE`), whose lines start \
                 with the time in milliseconds",
            ));
        }
        Some(2) => trace.notes.push(format!(
            "a fio version 2 iolog records no times: requests arrive when its {waits} `wait`(s) \
             add up to, back to back between them, as fio replays it"
        )),
        _ => {}
    }
    if !trace.requests.is_empty() {
        trace.notes.push(
            "a fio iolog records when each I/O was issued, not when it completed: completion = \
             arrival"
                .into(),
        );
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Result<Trace, TraceError> {
        read(s.as_bytes(), Path::new("f.log"), ReadOptions::default())
    }

    #[test]
    fn version_3_is_timed() {
        let text = "fio version 3 iolog\n0 /dev/sdb add\n1 /dev/sdb open\n\
                    3 /dev/sdb write 0 4096\n5 /dev/sdb read 1048576 4096\n\
                    9 /dev/sdb trim 4096 8192\n10 /dev/sdb sync 0 0\n12 /dev/sdb close\n";
        assert!(sniff(text.as_bytes()));
        let t = read_str(text).unwrap();
        assert_eq!(t.devices, ["/dev/sdb"]);
        let ops: Vec<Op> = t.requests.iter().map(|r| r.op).collect();
        assert_eq!(ops, [Op::Write, Op::Read, Op::Discard, Op::Flush]);
        assert_eq!(t.requests[1].arrival, Nanos(2_000_000));
        assert_eq!(t.requests[1].sector, 2048);
        assert_eq!(t.requests[3].arrival, Nanos(7_000_000));
        assert_eq!(t.requests[3].completion, t.requests[3].arrival);
    }

    #[test]
    fn version_2_needs_waits() {
        let text = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n\
                    /dev/sdb write 0 4096\n/dev/sdb wait 2000000\n/dev/sdb read 4096 512\n";
        let t = read_str(text).unwrap();
        assert_eq!(t.requests[1].arrival, Nanos(2_000_000_000));
        assert!(t.notes[0].contains("1 `wait`"), "{:?}", t.notes);
        let e = read_str("fio version 2 iolog\n/dev/sdb write 0 4096\n").unwrap_err();
        assert!(e.to_string().contains("version 3"), "{e}");
    }

    #[test]
    fn bad_lines_name_line_and_column() {
        let text = "fio version 3 iolog\n3 /dev/sdb write 0 4096\n4 /dev/sdb erase 0 4096\n";
        match read_str(text) {
            Err(TraceError::Line {
                line: 3, message, ..
            }) => {
                assert!(message.contains("column 3"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let text = "fio version 3 iolog\n3 /dev/sdb write 0 4096\n4 /dev/sdb write 0 x\n";
        match read_str(text) {
            Err(TraceError::Line {
                line: 3, message, ..
            }) => {
                assert!(
                    message.contains("LENGTH") && message.contains("column 5"),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
