//! blkparse's default text output.
//!
//! Each event line starts with the fixed header blkparse prints as
//! `"%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s "`: `maj,min`, CPU, sequence,
//! `seconds.nanoseconds`, pid, action, RWBS. The tail depends on the
//! action: `sector + nsectors [comm]` for most, `sector + n <- (maj,min)
//! from` for remaps, `sector [error]` or `0 [error]` for completions and
//! flushes without a length, `[comm]` alone for flushes issued without a
//! sector, `N [comm]` for plugs, `N <message>` for `m` scheduler messages.
//!
//! Only Q, D, C, M and F lines make requests (rules in
//! [`crate::pairing`]); every other action blkparse prints
//! ([`BLKPARSE_ACTIONS`]) is read and ignored. An action it never prints
//! (damage, another tool's output, a newer blkparse's) is ignored too and
//! counted in a note naming the first such line, as the binary reader
//! notes action codes blktrace does not define. Lines
//! starting with `#`, blank lines, `Input file … added` lines and the
//! per-CPU and Total summary blocks blkparse prints at the end (from the
//! first `CPU…` / `Total (` line on) are skipped. Any other line that
//! does not start with the event header is an error naming the line (with
//! `lenient`, skipped and counted).
//!
//! RWBS gives the kind: `D` discard, `W` write, `R` read, `N` (no data)
//! and a leading `F` with no length a flush.
//!
//! Time: the blkparse times are relative to the first event, on each
//! CPU's clock. A CPU whose clock is off by years (one sample has a CPU
//! 40 years ahead of the others) is caught by [`Trace::drop_time_outliers`]
//! with a 30-day gap: the requests cut off from the bulk are dropped and
//! counted in [`Trace::skipped`], with a note, never stretched into a
//! 40-year span. Requests are sorted and rebased to start at zero.

use std::io::BufRead;
use std::path::Path;

use lull_core::request::Op;

use crate::error::TraceError;
use crate::normalized::ReadOptions;
use crate::pairing::{Action, BlockEvent, Pairing};
use crate::text::Lines;
use crate::trace::Trace;

/// One event line, parsed.
#[derive(Debug, PartialEq)]
struct Line<'a> {
    device: u32,
    time: u64,
    action: &'a str,
    rwbs: &'a str,
    sector: u64,
    sectors: u64,
}

fn parse_dev(s: &str) -> Option<u32> {
    let (maj, min) = s.split_once(',')?;
    let maj: u32 = maj.parse().ok()?;
    let min: u32 = min.parse().ok()?;
    (maj < 4096 && min < (1 << 20)).then_some((maj << 20) | min)
}

fn parse_time(s: &str) -> Option<u64> {
    let (secs, nanos) = s.split_once('.')?;
    if nanos.is_empty() || nanos.len() > 9 || !nanos.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let mut ns: u64 = nanos.parse().ok()?;
    for _ in nanos.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// Parses the header and the sector part of an event line; `Err` with a
/// reason if the line starts like an event (`maj,min`) but is malformed,
/// `Ok(None)` if it does not start like an event at all.
fn parse_line(line: &str) -> Result<Option<Line<'_>>, String> {
    let mut tok = line.split_ascii_whitespace();
    let Some(dev) = tok.next() else {
        return Ok(None);
    };
    if !dev.contains(',') || !dev.bytes().next().is_some_and(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    let device = parse_dev(dev).ok_or_else(|| format!("bad device {dev:?}"))?;
    let mut field = |name: &str| {
        tok.next().ok_or_else(|| {
            format!("missing {name} (expected `maj,min cpu seq secs.ns pid action rwbs ...`)")
        })
    };
    let cpu = field("cpu")?;
    cpu.parse::<u32>()
        .map_err(|_| format!("cpu is not a number: {cpu:?}"))?;
    let seq = field("sequence")?;
    seq.parse::<u64>()
        .map_err(|_| format!("sequence is not a number: {seq:?}"))?;
    let time = field("time")?;
    let time = parse_time(time).ok_or_else(|| format!("bad time {time:?}"))?;
    let pid = field("pid")?;
    pid.parse::<u32>()
        .map_err(|_| format!("pid is not a number: {pid:?}"))?;
    let action = field("action")?;
    if action.len() > 2 || !action.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!("bad action {action:?}"));
    }
    let rwbs = field("RWBS")?;
    let (mut sector, mut sectors) = (0, 0);
    if let Some(first) = tok.next() {
        if let Ok(s) = first.parse::<u64>() {
            sector = s;
            if tok.next() == Some("+") {
                let n = tok.next().unwrap_or("");
                sectors = n.parse().map_err(|_| format!("bad length {n:?}"))?;
            }
        }
    }
    Ok(Some(Line {
        device,
        time,
        action,
        rwbs,
        sector,
        sectors,
    }))
}

fn op_of(rwbs: &str, bytes: u32) -> Op {
    let flush = rwbs.starts_with('F');
    let rest = rwbs.strip_prefix('F').unwrap_or(rwbs);
    if rest.contains('D') {
        Op::Discard
    } else if flush && bytes == 0 {
        Op::Flush
    } else if rest.contains('W') {
        Op::Write
    } else if rest.contains('R') {
        Op::Read
    } else {
        Op::Flush
    }
}

fn is_summary_start(line: &str) -> bool {
    line.starts_with("CPU") || line.starts_with("Total (") || line.starts_with("Throughput")
}

/// Whether the first lines of `head` look like blkparse text: after
/// comments, blank lines and `Input file` lines, an event line.
pub fn sniff(head: &[u8]) -> bool {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    for line in text.lines().take(50) {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with("Input file") {
            continue;
        }
        return matches!(parse_line(l), Ok(Some(_)));
    }
    false
}

/// The actions blkparse prints: of file-system requests Q, I, M, F, G, S,
/// R, D, C, P, U, UT, X, B and A; of packet commands a subset of those;
/// `m` for a message.
pub const BLKPARSE_ACTIONS: [&str; 16] = [
    "Q", "I", "M", "F", "G", "S", "R", "D", "C", "P", "U", "UT", "X", "B", "A", "m",
];

/// Reads blkparse text from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    let mut trace = Trace::new("blkparse");
    let mut lines = Lines::new(input, path);
    let mut pairing = Pairing::default();
    let mut summary = false;
    // Lines whose action blkparse never prints: how many, and the first.
    let (mut unknown, mut first_unknown) = (0u64, None::<(u64, String)>);
    loop {
        let (lineno, line) = match lines.next_line() {
            Ok(None) => break,
            Ok(Some(l)) => l,
            Err(Err(e)) => return Err(e),
            Err(Ok(_)) if opts.lenient => {
                trace.skipped += 1;
                continue;
            }
            Err(Ok(n)) => return Err(TraceError::line(path, n, "not UTF-8 text")),
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("Input file") {
            continue;
        }
        let parsed = match parse_line(line) {
            Ok(Some(l)) => l,
            Ok(None) => {
                if summary || is_summary_start(line) {
                    summary = true;
                    continue;
                }
                if opts.lenient {
                    trace.skipped += 1;
                    continue;
                }
                return Err(TraceError::line(
                    path,
                    lineno,
                    "not a blkparse event line (expected `maj,min cpu seq secs.ns pid action rwbs ...`)",
                ));
            }
            Err(message) => {
                if opts.lenient {
                    trace.skipped += 1;
                    continue;
                }
                return Err(TraceError::line(path, lineno, message));
            }
        };
        let action = match parsed.action {
            "Q" => Action::Queue,
            "M" => Action::BackMerge,
            "F" => Action::FrontMerge,
            "D" => Action::Issue,
            "R" => Action::Requeue,
            "C" => Action::Complete,
            a => {
                if !BLKPARSE_ACTIONS.contains(&a) {
                    unknown += 1;
                    first_unknown.get_or_insert_with(|| (lineno, a.to_string()));
                }
                continue;
            }
        };
        let bytes = u32::try_from(parsed.sectors.saturating_mul(512)).unwrap_or(u32::MAX);
        let ev = BlockEvent {
            time: parsed.time,
            device: parsed.device,
            sector: parsed.sector,
            bytes,
            op: op_of(parsed.rwbs, bytes),
            action,
        };
        pairing
            .event(&mut trace, ev)
            .map_err(|m| TraceError::line(path, lineno, m))?;
    }
    pairing
        .finish(&mut trace)
        .map_err(|m| TraceError::format(path, m))?;
    if let Some((line, action)) = first_unknown {
        trace.notes.push(format!(
            "{unknown} line(s) carry an action blkparse does not print (the first: {action:?} at {} line {line}; blkparse's are {}): damaged lines, or another tool's; skipped",
            path.display(),
            BLKPARSE_ACTIONS.join(" ")
        ));
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Result<Trace, TraceError> {
        read(s.as_bytes(), Path::new("t.txt"), ReadOptions::default())
    }

    #[test]
    fn parses_the_line_forms() {
        let l = parse_line("  8,16   5        1     0.000000000 18615  A   R 1444645666 + 256 <- (8,17) 1444645632")
            .unwrap()
            .unwrap();
        assert_eq!(
            (l.device, l.action, l.sector, l.sectors),
            ((8 << 20) | 16, "A", 1_444_645_666, 256)
        );
        let l = parse_line("259,0   11        4     0.024133625   612  D  FN [kworker/11:1H]")
            .unwrap()
            .unwrap();
        assert_eq!((l.sector, l.sectors, l.rwbs), (0, 0, "FN"));
        let l = parse_line("259,0   11        5     0.024899010     0  C  FN 0 [0]")
            .unwrap()
            .unwrap();
        assert_eq!(l.time, 24_899_010);
        assert_eq!(parse_line("CPU0 (8,16):").unwrap(), None);
        assert!(parse_line("8,16 5 1 x 1 Q R 1 + 8 [a]").is_err());
    }

    #[test]
    fn pairs_and_skips_summaries() {
        let t = read_str(
            "# header\n\
             8,0 0 1 0.000000100 1 Q W 64 + 8 [dd]\n\
             8,0 0 2 0.000000200 1 G W 64 + 8 [dd]\n\
             8,0 0 0 0.000000250 0 m N cfq1 insert\n\
             8,0 1 1 0.000500100 0 C W 64 + 8 [0]\n\
             CPU0 (8,0):\n Reads Queued: 0, 0KiB\nTotal (8,0):\nThroughput (R/W): 0KiB/s / 0KiB/s\n",
        )
        .unwrap();
        assert_eq!(t.requests.len(), 1);
        assert_eq!(t.requests[0].completion.0, 500_000);
        assert_eq!(t.requests[0].bytes, 4096);
    }

    #[test]
    fn actions_blkparse_never_prints_are_noted_with_the_first_line() {
        let t = read_str(
            "8,0 0 1 0.000000100 1 Q W 64 + 8 [dd]\n\
             8,0 0 2 0.000000150 1 UT N [dd] 1\n\
             8,0 0 3 0.000000200 1 Z W 64 + 8 [dd]\n\
             8,0 0 4 0.000000300 1 ZZ W 64 + 8 [dd]\n\
             8,0 1 5 0.000500100 0 C W 64 + 8 [0]\n",
        )
        .unwrap();
        assert_eq!(t.requests.len(), 1);
        assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
        assert!(
            t.notes[0].starts_with("2 line(s) carry an action blkparse does not print (the first: \"Z\" at t.txt line 3;"),
            "{}",
            t.notes[0]
        );
        // Every action blkparse prints: no note.
        let all: String = BLKPARSE_ACTIONS
            .iter()
            .enumerate()
            .map(|(i, a)| format!("8,0 0 {} 0.{:09} 1 {a} R 64 + 8 [dd]\n", i + 1, i + 1))
            .collect();
        assert!(read_str(&all).unwrap().notes.is_empty());
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = read_str("8,0 0 1 0.1 1 Q W 64 + 8 [dd]\nhello\n").unwrap_err();
        assert!(matches!(e, TraceError::Line { line: 2, .. }), "{e}");
        let e = read_str("8,0 0 1 0.1 1 Q W 64 + x [dd]\n").unwrap_err();
        assert!(matches!(e, TraceError::Line { line: 1, .. }), "{e}");
        let t = read(
            "8,0 0 1 0.1 1 Q W 64 + 8 [dd]\nhello\n".as_bytes(),
            Path::new("t"),
            ReadOptions { lenient: true },
        )
        .unwrap();
        assert_eq!(t.skipped, 1);
    }
}
