//! Opening a trace file: content sniffing and dispatch to a reader.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::TraceError;
use crate::normalized;
use crate::trace::Trace;

pub use crate::normalized::ReadOptions;

/// Opens `path` and reads it with the reader its content calls for
/// (never its name).
pub fn open(path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    let mut input = BufReader::with_capacity(1 << 20, file);
    let head = input.fill_buf().map_err(|e| TraceError::io(path, e))?;
    if head.is_empty() {
        return Err(TraceError::format(path, "empty file"));
    }
    if normalized::sniff(head) {
        return normalized::read(input, path, opts);
    }
    Err(TraceError::format(
        path,
        "unrecognized trace format (lull reads the normalized CSV `arrival_ns,completion_ns,op,sector,bytes,device`)",
    ))
}
