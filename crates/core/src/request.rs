//! Foreground requests: what a trace records and what the engine replays.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::time::Nanos;

/// The kind of a block request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Op {
    /// A read.
    Read = 0,
    /// A write.
    Write = 1,
    /// A cache flush or barrier.
    Flush = 2,
    /// A discard (trim, unmap).
    Discard = 3,
}

impl Op {
    /// The one-letter code of the normalized CSV: `R`, `W`, `F`, `D`.
    pub const fn code(self) -> char {
        match self {
            Op::Read => 'R',
            Op::Write => 'W',
            Op::Flush => 'F',
            Op::Discard => 'D',
        }
    }
    /// The op for a one-letter code (case-insensitive), if it is one.
    pub fn from_code(c: &str) -> Option<Op> {
        match c {
            "R" | "r" => Some(Op::Read),
            "W" | "w" => Some(Op::Write),
            "F" | "f" => Some(Op::Flush),
            "D" | "d" => Some(Op::Discard),
            _ => None,
        }
    }
    /// Whether the request writes data to the medium (writes only; a
    /// discard changes the mapping but moves no data).
    pub const fn is_write(self) -> bool {
        matches!(self, Op::Write)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

/// A device within one trace: an index into the trace's device table.
///
/// Sixteen bits keep [`Request`] at 32 bytes; a trace with more than 65 536
/// devices is rejected by the readers.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct DeviceId(pub u16);

/// One foreground request, as recorded in a trace.
///
/// `completion >= arrival`. The device is busy while `arrival <= t <
/// completion`. A request recorded with `completion == arrival` (some
/// traces know only when a request was queued) is treated by the engine as
/// lasting one nanosecond, so that every request splits idle time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Request {
    /// When the request reached the device queue.
    pub arrival: Nanos,
    /// When the device finished it.
    pub completion: Nanos,
    /// First 512-byte sector.
    pub sector: u64,
    /// Length in bytes.
    pub bytes: u32,
    /// What the request does.
    pub op: Op,
    /// Which device of the trace it went to.
    pub device: DeviceId,
}

impl Request {
    /// A request on device 0.
    pub const fn new(arrival: Nanos, completion: Nanos, op: Op, sector: u64, bytes: u32) -> Self {
        Request {
            arrival,
            completion,
            sector,
            bytes,
            op,
            device: DeviceId(0),
        }
    }
    /// The same request on another device.
    pub const fn on_device(mut self, device: DeviceId) -> Self {
        self.device = device;
        self
    }
    /// The completion the engine uses: at least one nanosecond after the
    /// arrival (see the type's docs).
    pub fn effective_completion(&self) -> Nanos {
        self.completion.max(self.arrival + Nanos::NANO)
    }
    /// How long the device spent on it (response time).
    pub fn response(&self) -> Nanos {
        self.completion - self.arrival
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_is_compact() {
        assert_eq!(std::mem::size_of::<Request>(), 32);
    }

    #[test]
    fn op_codes_round_trip() {
        for op in [Op::Read, Op::Write, Op::Flush, Op::Discard] {
            assert_eq!(Op::from_code(&op.code().to_string()), Some(op));
        }
        assert_eq!(Op::from_code("X"), None);
    }
}
