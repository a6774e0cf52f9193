//! A parser for `/proc/diskstats` and counter arithmetic.
//!
//! Hand-written rather than taken from the `procfs` crate: the format is one
//! whitespace-separated line per block device, the daemon needs nine of its
//! fields, the path must be configurable (tests point it at a file they
//! rewrite) and the parse runs every poll for every device, so a
//! forty-line parser with no dependency and one allocation per line is the
//! lighter and more testable choice.
//!
//! Field layout (Documentation/admin-guide/iostats.rst): `major minor name`
//! then reads completed, reads merged, sectors read, ms reading, writes
//! completed, writes merged, sectors written, ms writing, I/Os in progress,
//! ms doing I/O (`io_ticks`), weighted ms; since Linux 4.18 four discard
//! fields; since 5.5 two flush fields. Older kernels' 14-field lines parse
//! with zero discards and flushes.

use std::fmt;

/// One line of `/proc/diskstats`: the counters lull uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    /// Major device number.
    pub major: u32,
    /// Minor device number.
    pub minor: u32,
    /// Kernel name (`sda`, `nvme0n1p2`, `dm-0`).
    pub name: String,
    /// The counters.
    pub counters: Counters,
}

/// The activity counters of one block device.
///
/// Only completed reads, writes, discards and flushes and the in-flight
/// count say that the device served foreground I/O. `io_ticks` is kept to
/// size busy time, never to decide busy-ness: pass-through commands from
/// monitoring tools (`smartctl`, `hdparm -C`) are not counted as reads or
/// writes by the kernel but can move `io_ticks`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Reads completed.
    pub reads: u64,
    /// Sectors read.
    pub sectors_read: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written.
    pub sectors_written: u64,
    /// I/Os currently in progress (a gauge, not a counter).
    pub in_flight: u64,
    /// Milliseconds spent doing I/O.
    pub io_ticks: u64,
    /// Discards completed (0 before Linux 4.18).
    pub discards: u64,
    /// Sectors discarded.
    pub sectors_discarded: u64,
    /// Flush requests completed (0 before Linux 5.5).
    pub flushes: u64,
}

/// How much happened between two samples of [`Counters`]: the counts an
/// activity-log poll record carries ([`lull_activity::Counts`]).
pub use lull_activity::Counts as Delta;

/// The increase of a counter from `old` to `new`.
///
/// Counters are `unsigned long` in the kernel (32 bits on 32-bit kernels,
/// and some, such as `io_ticks`, were `unsigned int` for years). A value
/// that went down is a 32-bit wrap when the old value fit in 32 bits and
/// the drop is more than half the range; otherwise the device was
/// re-created (unplugged and plugged back, a dm table reloaded) and its
/// counters restarted from zero, so everything in `new` is new.
pub fn counter_delta(old: u64, new: u64) -> u64 {
    if new >= old {
        new - old
    } else if old <= u64::from(u32::MAX) && old - new > u64::from(u32::MAX) / 2 {
        (new + (1u64 << 32)) - old
    } else {
        new
    }
}

impl Counters {
    /// What happened between `self` (older) and `new`.
    pub fn delta(&self, new: &Counters) -> Delta {
        Delta {
            reads: counter_delta(self.reads, new.reads),
            writes: counter_delta(self.writes, new.writes),
            discards: counter_delta(self.discards, new.discards),
            flushes: counter_delta(self.flushes, new.flushes),
            sectors: counter_delta(self.sectors_read, new.sectors_read)
                .saturating_add(counter_delta(self.sectors_written, new.sectors_written))
                .saturating_add(counter_delta(self.sectors_discarded, new.sectors_discarded)),
            io_ms: counter_delta(self.io_ticks, new.io_ticks),
        }
    }
}

/// A line of the diskstats file that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for ParseError {}

/// Parses the whole file. Blank lines are skipped; a line with fewer than
/// 14 fields or a non-number where a counter belongs is an error (the
/// kernel never writes one, so the file is not diskstats).
pub fn parse(text: &str) -> Result<Vec<DiskStat>, ParseError> {
    let mut out = Vec::with_capacity(32);
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(parse_line(line).map_err(|reason| ParseError {
            line: i + 1,
            reason,
        })?);
    }
    Ok(out)
}

fn parse_line(line: &str) -> Result<DiskStat, String> {
    let (major, minor, name, rest) = parse_head(line)?;
    Ok(DiskStat {
        major,
        minor,
        name: name.to_string(),
        counters: parse_counters(name, rest)?,
    })
}

/// The head of a diskstats line: major, minor, the kernel name, and the
/// rest of the line (the counters, for [`parse_counters`]).
pub fn parse_head(line: &str) -> Result<(u32, u32, &str, &str), String> {
    let mut rest = line;
    let mut field = || {
        let t = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let end = t.find(|c: char| c.is_ascii_whitespace()).unwrap_or(t.len());
        rest = &t[end..];
        (!t.is_empty()).then(|| &t[..end])
    };
    let (Some(major), Some(minor), Some(name)) = (field(), field(), field()) else {
        return Err("fewer than three fields (major, minor, name)".into());
    };
    let major = major
        .parse::<u32>()
        .map_err(|_| format!("major number is not a number: {major:?}"))?;
    let minor = minor
        .parse::<u32>()
        .map_err(|_| format!("minor number is not a number: {minor:?}"))?;
    Ok((major, minor, name, rest))
}

/// Parses the counters of device `name` from `rest`, the fields after its
/// name (at least 11; 15 and 17 on newer kernels).
pub fn parse_counters(name: &str, rest: &str) -> Result<Counters, String> {
    let mut f = [0u64; 17];
    let mut n = 0;
    for (slot, text) in f.iter_mut().zip(rest.split_ascii_whitespace()) {
        *slot = text
            .parse()
            .map_err(|_| format!("counter {} of {name} is not a number: {text:?}", n + 1))?;
        n += 1;
    }
    if n < 11 {
        return Err(format!(
            "{name}: {n} counters, expected at least 11 (is this /proc/diskstats?)"
        ));
    }
    Ok(Counters {
        reads: f[0],
        sectors_read: f[2],
        writes: f[4],
        sectors_written: f[6],
        in_flight: f[8],
        io_ticks: f[9],
        discards: f[11],
        sectors_discarded: f[13],
        flushes: f[15],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kernel_lines_of_every_vintage() {
        let text = "   8       0 sda 10 1 80 5 20 2 160 7 3 40 50\n\
                    \n   8       1 sda1 1 0 8 1 2 0 16 1 0 2 3 4 0 32 1 5 2\n";
        let v = parse(text).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].name, "sda");
        assert_eq!((v[0].major, v[0].minor), (8, 0));
        assert_eq!(v[0].counters.reads, 10);
        assert_eq!(v[0].counters.writes, 20);
        assert_eq!(v[0].counters.in_flight, 3);
        assert_eq!(v[0].counters.discards, 0);
        assert_eq!(v[1].counters.discards, 4);
        assert_eq!(v[1].counters.sectors_discarded, 32);
        assert_eq!(v[1].counters.flushes, 5);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = parse("8 0 sda 1 2 3\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n8 1 sdb x 2 3 4 5 6 7 8 9 10 11\n")
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("sdb"), "{e}");
    }

    #[test]
    fn counters_wrap_at_32_bits_and_reset_on_recreation() {
        assert_eq!(counter_delta(5, 9), 4);
        // A 32-bit counter wrapped.
        assert_eq!(counter_delta(u64::from(u32::MAX) - 1, 3), 5);
        // The device came back with fresh counters.
        assert_eq!(counter_delta(1000, 7), 7);
        assert_eq!(counter_delta(1 << 40, 7), 7);
    }
}
