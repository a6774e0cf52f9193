//! The blktrace binary format: `struct blk_io_trace` records as the kernel
//! writes them, one file per CPU (`<dev>.blktrace.<cpu>`), or one merged
//! stream as `blkparse -d` writes it.
//!
//! # Records
//!
//! A record is a fixed header followed by `pdu_len` bytes of payload:
//!
//! | off | field | notes |
//! |----:|-------|-------|
//! | 0 | `u32 magic` | `0x65617400 \| version`; version 0x07 (48-byte header) or 0x08 (`blk_io_trace2`, 64 bytes) |
//! | 4 | `u32 sequence` | per CPU |
//! | 8 | `u64 time` | ns; per-CPU files count from boot |
//! | 16 | `u64 sector` | 512-byte units |
//! | 24 | `u32 bytes` | |
//! | 28 | `u32 action` | v7: low 16 bits action, high 16 bits category mask |
//! | 32 | `u32 pid` | |
//! | 36 | `u32 device` | `dev_t`: major = dev >> 20, minor = dev & 0xfffff |
//! | 40 | `u32 cpu` | a `u32`, not a `u16` |
//! | 44 | `u16 error`, 46 `u16 pdu_len` | |
//!
//! Version 0x08 puts `pid` at 28, a `u64 action` at 32 (same code and
//! category bits, categories may go above bit 31), `device` at 40, `cpu`
//! at 44, `error` at 48, `pdu_len` at 50 and pads the header to 64 bytes.
//!
//! The byte order is found from the first record's magic (either order is
//! accepted) and must then hold for the whole file. The action code is
//! `action & 0xff` (bit 8 flags a cgroup id in the payload). Records with
//! the NOTIFY category (process names, the wall-clock TIMESTAMP, scheduler
//! messages) are not I/O events: their times may be on another clock (a
//! `blkparse -d` dump keeps their raw since-boot times while its I/O times
//! start at zero). Payloads are skipped unread, but for the first
//! TIMESTAMP's (`u32` seconds and nanoseconds of the wall clock, in the
//! file's byte order), which gives the trace its wall clock
//! ([`Trace::clock`]). The kernel reads the wall clock and stamps the
//! record with its own time at once (`trace_note_time`), so the wall clock
//! holds at the TIMESTAMP's own time. (blkparse's `%z` adds its
//! `abs_start_time` to times counted from the first I/O event instead,
//! which puts every event early by the time from the start of tracing to
//! the first I/O: 1.9 s on the shared `liuzel01` capture.) It is taken at
//! the TIMESTAMP's time when that is on the I/O events' clock (the kernel
//! writes it as tracing starts, so at or before the first I/O event, as in
//! its per-CPU files), else at the I/O events' time zero (a `-d` dump,
//! whose times start at the trace's start, where the TIMESTAMP is written,
//! while the notify keeps its time since boot, after them). Time-of-day
//! features and `lull plan`'s hours then see the capture's real hours.
//!
//! # Files and time
//!
//! Each input file is read as a stream and the streams are merged by time
//! (a k-way merge over a heap, ties to the file listed first). A file
//! decodes up to 256 events ahead, straight out of its read buffer, so a
//! few kilobytes per file are held besides that buffer.
//! Requests are built from Q, D, R, C, M and F events by the rules in
//! [`crate::pairing`], split per device (`maj,min`), sorted, cut off from
//! clock outliers (a gap of more than 30 days), and rebased so the first
//! arrival is zero.
//!
//! A file's I/O times only go forward (each CPU stamps its own events in
//! order; a `blkparse -d` dump is written sorted). An I/O event earlier
//! than the one before it in its file, a damaged time field or a clock
//! stepped back, is taken at the time it carries, when the merge reaches
//! it; a note counts them and names the first file that has one.
//!
//! # Errors
//!
//! A bad magic, an unsupported version, a `pdu_len` longer than any the
//! kernel writes ([`MAX_PDU_LEN`]: a damaged header, whose payload would
//! swallow the records after it), a record or payload cut short by the end
//! of the file name the file and the byte offset of the record. With
//! `lenient`, a damaged header is skipped and counted, a bad magic makes
//! the reader scan forward for the next record of the file's byte order
//! (the stretch counted as the 48-byte records it could have held, at
//! least one), and a truncated tail is skipped and counted.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

use lull_core::request::Op;

use crate::error::TraceError;
use crate::input::{Input, read_full_buffered as read_full};
use crate::normalized::ReadOptions;
use crate::pairing::{Action, BlockEvent, DeviceCounts, Pairing};
use crate::trace::Trace;

/// The magic without its version byte.
pub const MAGIC: u32 = 0x6561_7400;

/// The longest payload a record may carry. The kernel's are short: a
/// remap's 16 bytes, a process name's 16, a message of at most 128
/// (`BLK_TN_MAX_MSG`), a command of at most 16 or so, each with an 8-byte
/// cgroup id before it when traced with cgroups. A longer `pdu_len` is a
/// damaged header, which would otherwise swallow the records after it as
/// payload and surface as a bad magic somewhere past the damage.
pub const MAX_PDU_LEN: u16 = 1024;

/// The smallest record (a version 0x07 header without payload): a damaged
/// stretch a lenient read skips counts as the records of this size it
/// could have held.
const MIN_RECORD: u64 = 48;

const TC_SHIFT: u32 = 16;
const TC_WRITE: u64 = 1 << 1;
const TC_FLUSH: u64 = 1 << 2;
const TC_NOTIFY: u64 = 1 << 10;
const TC_DISCARD: u64 = 1 << 13;

/// Whether `head` starts with a blktrace record (version 0x07 or 0x08, in
/// either byte order).
pub fn sniff(head: &[u8]) -> bool {
    byte_order(head).is_some()
}

fn byte_order(head: &[u8]) -> Option<bool> {
    let b: [u8; 4] = head.get(..4)?.try_into().ok()?;
    let plausible = |m: u32| m & 0xffff_ff00 == MAGIC && matches!(m & 0xff, 0x07 | 0x08);
    if plausible(u32::from_le_bytes(b)) {
        Some(false)
    } else if plausible(u32::from_be_bytes(b)) {
        Some(true)
    } else {
        None
    }
}

/// One decoded header.
#[derive(Clone, Copy, Debug)]
struct Record {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u64,
    device: u32,
    pdu_len: u16,
}

/// Reads the records of one file, in file order.
struct RecordReader {
    input: Input,
    path: PathBuf,
    offset: u64,
    big_endian: Option<bool>,
    lenient: bool,
    skipped: u64,
    buf: [u8; 64],
    /// Decoded events not yet handed out, from `next` on.
    batch: Vec<BlockEvent>,
    next: usize,
    /// The first TIMESTAMP notify: its time and the wall clock it carries
    /// (Unix nanoseconds).
    stamp: Option<(u64, u64)>,
    /// The time of the last I/O event handed out, and how many I/O events
    /// were earlier than the one before them (a file's times only go
    /// forward, but for a damaged record or a clock stepped back).
    last_time: u64,
    backwards: u64,
    /// Records whose action code blktrace does not define
    /// ([`defined`]), and the first of them: its offset and code.
    undefined: u64,
    first_undefined: Option<(u64, u64)>,
    /// The offset of the record [`Self::next_record`] returned last.
    record_at: u64,
}

/// How many events a file decodes ahead of the merge: enough that the
/// decoding loop runs over the read buffer in one go, few enough that the
/// reader's memory stays a few kilobytes per file.
const BATCH: usize = 256;

impl RecordReader {
    fn new(input: Input, path: PathBuf, lenient: bool) -> Self {
        RecordReader {
            input,
            path,
            offset: 0,
            big_endian: None,
            lenient,
            skipped: 0,
            buf: [0; 64],
            batch: Vec::with_capacity(BATCH),
            next: 0,
            stamp: None,
            last_time: 0,
            backwards: 0,
            undefined: 0,
            first_undefined: None,
            record_at: 0,
        }
    }

    fn err(&self, offset: u64, message: impl Into<String>) -> TraceError {
        TraceError::offset(&self.path, offset, message)
    }

    fn io_err(&self, e: io::Error) -> TraceError {
        TraceError::io(&self.path, e)
    }

    fn u16_at(&self, i: usize) -> u16 {
        let b = [self.buf[i], self.buf[i + 1]];
        if self.big_endian == Some(true) {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }

    fn u32_at(&self, i: usize) -> u32 {
        let b: [u8; 4] = self.buf[i..i + 4].try_into().expect("4 bytes");
        if self.big_endian == Some(true) {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn u64_at(&self, i: usize) -> u64 {
        let b: [u8; 8] = self.buf[i..i + 8].try_into().expect("8 bytes");
        if self.big_endian == Some(true) {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        }
    }

    /// Shifts the window one byte at a time until it starts with a magic
    /// of this file's byte order; `false` at the end of the file.
    fn resync(&mut self) -> Result<bool, TraceError> {
        loop {
            self.buf.copy_within(1..4, 0);
            let n = read_full(&mut self.input, &mut self.buf[3..4]).map_err(|e| self.io_err(e))?;
            if n == 0 {
                return Ok(false);
            }
            self.offset += 1;
            if byte_order(&self.buf[..4]) == self.big_endian {
                return Ok(true);
            }
        }
    }

    /// The next record, or `None` at the end of the file.
    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        let mut have =
            read_full(&mut self.input, &mut self.buf[..4]).map_err(|e| self.io_err(e))?;
        loop {
            if have == 0 {
                return Ok(None);
            }
            let start = self.offset;
            if have < 4 {
                return self.truncated(start, have, 48);
            }
            let order = byte_order(&self.buf[..4]);
            match (order, self.big_endian) {
                (Some(o), None) => self.big_endian = Some(o),
                (Some(o), Some(e)) if o == e => {}
                _ => {
                    let raw = u32::from_le_bytes(self.buf[..4].try_into().expect("4 bytes"));
                    let message = if raw & 0xffff_ff00 == MAGIC
                        || raw.swap_bytes() & 0xffff_ff00 == MAGIC
                    {
                        let v = if raw & 0xffff_ff00 == MAGIC {
                            raw & 0xff
                        } else {
                            raw.swap_bytes() & 0xff
                        };
                        if order.is_some() {
                            "record in the other byte order than the file's first record"
                                .to_string()
                        } else {
                            format!(
                                "unsupported blktrace version 0x{v:02x} (lull reads 0x07 and 0x08)"
                            )
                        }
                    } else {
                        format!(
                            "bad magic {:02x} {:02x} {:02x} {:02x}: not a blk_io_trace record (expected 0x65617407 or 0x65617408)",
                            self.buf[0], self.buf[1], self.buf[2], self.buf[3]
                        )
                    };
                    if !self.lenient {
                        return Err(self.err(start, message));
                    }
                    let found = self.big_endian.is_some() && self.resync()?;
                    // The records the damaged stretch could have held, at
                    // least one (what it held cannot be known).
                    let stretch = self.offset - start + if found { 0 } else { 4 };
                    self.skipped += (stretch / MIN_RECORD).max(1);
                    if !found {
                        return Ok(None);
                    }
                    have = 4;
                    continue;
                }
            }
            let len = if self.buf[if self.big_endian == Some(true) { 3 } else { 0 }] == 0x08 {
                64
            } else {
                48
            };
            let n =
                read_full(&mut self.input, &mut self.buf[4..len]).map_err(|e| self.io_err(e))?;
            if n < len - 4 {
                return self.truncated(start, 4 + n, len);
            }
            let rec = if len == 48 {
                Record {
                    time: self.u64_at(8),
                    sector: self.u64_at(16),
                    bytes: self.u32_at(24),
                    action: u64::from(self.u32_at(28)),
                    device: self.u32_at(36),
                    pdu_len: self.u16_at(46),
                }
            } else {
                Record {
                    time: self.u64_at(8),
                    sector: self.u64_at(16),
                    bytes: self.u32_at(24),
                    action: self.u64_at(32),
                    device: self.u32_at(40),
                    pdu_len: self.u16_at(50),
                }
            };
            self.offset += len as u64;
            if rec.pdu_len > MAX_PDU_LEN {
                let message = format!(
                    "implausible pdu_len {}: the kernel's payloads are at most a few hundred bytes ({MAX_PDU_LEN} allowed), so the record is damaged",
                    rec.pdu_len
                );
                if !self.lenient {
                    return Err(self.err(start, message));
                }
                // The header is skipped; the next record is searched for
                // from its end, as after a bad magic.
                self.skipped += 1;
                have =
                    read_full(&mut self.input, &mut self.buf[..4]).map_err(|e| self.io_err(e))?;
                continue;
            }
            if rec.pdu_len > 0 {
                // Skipped unread, but for a TIMESTAMP's wall clock.
                let want = u64::from(rec.pdu_len);
                let stamp = is_timestamp(&rec) && rec.pdu_len == 8;
                let mut pdu = [0u8; 8];
                let got = if stamp {
                    read_full(&mut self.input, &mut pdu).map_err(|e| self.io_err(e))? as u64
                } else {
                    io::copy(&mut (&mut self.input).take(want), &mut io::sink())
                        .map_err(|e| self.io_err(e))?
                };
                self.offset += got;
                if got < want {
                    let message = format!(
                        "payload cut short: pdu_len is {want} but only {got} byte(s) follow the header"
                    );
                    if !self.lenient {
                        return Err(self.err(start, message));
                    }
                    self.skipped += 1;
                    return Ok(None);
                }
                if stamp {
                    let big = self.big_endian == Some(true);
                    self.keep_stamp(&rec, &pdu, big);
                }
            }
            self.record_at = start;
            return Ok(Some(rec));
        }
    }

    /// Counts a record at `offset` whose action code blktrace does not
    /// define.
    #[cold]
    fn undefined_at(&mut self, offset: u64, rec: &Record) {
        self.undefined += 1;
        self.first_undefined
            .get_or_insert((offset, rec.action & 0xff));
    }

    /// Keeps the first TIMESTAMP's time and wall clock.
    fn keep_stamp(&mut self, rec: &Record, pdu: &[u8; 8], big: bool) {
        if self.stamp.is_none() {
            self.stamp = stamp_of(rec, pdu, big);
        }
    }

    fn truncated(
        &mut self,
        start: u64,
        have: usize,
        len: usize,
    ) -> Result<Option<Record>, TraceError> {
        if self.lenient {
            self.skipped += 1;
            return Ok(None);
        }
        Err(self.err(
            start,
            format!("truncated record: {have} of {len} header bytes before the end of the file"),
        ))
    }

    /// The time of the next I/O event the pairing uses (notify records
    /// and other actions skipped), `None` at the end: the merge then takes
    /// the event, `batch[next]`, by moving `next` on. (Returning the event
    /// itself in a `Result<Option<_>>` cost a store-forwarding stall per
    /// event, a tenth of the reader's time.)
    #[inline(always)]
    fn head_time(&mut self) -> Result<Option<u64>, TraceError> {
        if self.next == self.batch.len() {
            self.refill()?;
        }
        Ok(self.batch.get(self.next).map(|e| e.time))
    }

    /// Decodes the next events into `batch`; leaves it empty at the end of
    /// the file.
    ///
    /// Whole, well-formed records already in the input's buffer are decoded
    /// in place (no copy, no call through the `Read` trait). Everything
    /// else, a record split across two buffer fills, the file's first
    /// record, a bad magic, a truncated tail, goes through
    /// [`Self::next_record`], and only when the batch holds nothing yet: so
    /// an error surfaces when the merge reaches it, as if records were read
    /// one at a time.
    #[inline(never)]
    fn refill(&mut self) -> Result<(), TraceError> {
        self.fill()?;
        for ev in &self.batch {
            self.backwards += u64::from(ev.time < self.last_time);
            self.last_time = ev.time;
        }
        Ok(())
    }

    /// [`Self::refill`] without counting the steps back in time.
    fn fill(&mut self) -> Result<(), TraceError> {
        self.batch.clear();
        self.next = 0;
        loop {
            match self.big_endian {
                Some(true) => self.decode_buffered::<true>()?,
                Some(false) => self.decode_buffered::<false>()?,
                None => {}
            }
            if !self.batch.is_empty() {
                return Ok(());
            }
            match self.next_record()? {
                None => return Ok(()),
                Some(rec) => {
                    if let Some(ev) = decode(&rec) {
                        self.batch.push(ev);
                    } else if !defined(&rec) {
                        self.undefined_at(self.record_at, &rec);
                    }
                }
            }
        }
    }

    /// The fast path of [`Self::refill`]: decodes the whole records at the
    /// start of the input's buffer, up to [`BATCH`] events.
    fn decode_buffered<const BIG: bool>(&mut self) -> Result<(), TraceError> {
        let avail = self
            .input
            .fill_buf()
            .map_err(|e| TraceError::io(&self.path, e))?;
        let mut at = 0;
        let mut stamp = None;
        // Records with an undefined action code: how many, and the first
        // (counted once the buffer is released).
        let (mut n_undefined, mut undefined) = (0u64, None::<(usize, Record)>);
        while self.batch.len() < BATCH {
            let Some((len, rec)) = parse_whole::<BIG>(&avail[at..]) else {
                break;
            };
            at += len;
            if let Some(ev) = decode(&rec) {
                self.batch.push(ev);
            } else if !defined(&rec) {
                undefined.get_or_insert((at - len, rec));
                n_undefined += 1;
            } else if self.stamp.is_none() && is_timestamp(&rec) && rec.pdu_len == 8 {
                let pdu: [u8; 8] = avail[at - 8..at].try_into().expect("8 bytes");
                stamp = stamp.or_else(|| stamp_of(&rec, &pdu, BIG));
            }
        }
        if self.stamp.is_none() {
            self.stamp = stamp;
        }
        if let Some((first, rec)) = undefined {
            self.undefined_at(self.offset + first as u64, &rec);
            self.undefined += n_undefined - 1;
        }
        self.input.consume(at);
        self.offset += at as u64;
        Ok(())
    }
}

/// The record at the start of `buf` when it is whole (header and payload)
/// and its magic is of byte order `BIG`: its length with the payload, and
/// the record. `None` sends the caller to the careful path.
#[inline]
fn parse_whole<const BIG: bool>(buf: &[u8]) -> Option<(usize, Record)> {
    if buf.len() < 48 {
        return None;
    }
    let u16_at = |i: usize| {
        let b = [buf[i], buf[i + 1]];
        if BIG {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    };
    let u32_at = |i: usize| {
        let b: [u8; 4] = buf[i..i + 4].try_into().expect("4 bytes");
        if BIG {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let u64_at = |i: usize| {
        let b: [u8; 8] = buf[i..i + 8].try_into().expect("8 bytes");
        if BIG {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        }
    };
    let magic = u32_at(0);
    if magic & 0xffff_ff00 != MAGIC {
        return None;
    }
    let (len, rec) = match magic & 0xff {
        0x07 => (
            48,
            Record {
                time: u64_at(8),
                sector: u64_at(16),
                bytes: u32_at(24),
                action: u64::from(u32_at(28)),
                device: u32_at(36),
                pdu_len: u16_at(46),
            },
        ),
        0x08 if buf.len() >= 64 => (
            64,
            Record {
                time: u64_at(8),
                sector: u64_at(16),
                bytes: u32_at(24),
                action: u64_at(32),
                device: u32_at(40),
                pdu_len: u16_at(50),
            },
        ),
        _ => return None,
    };
    if rec.pdu_len > MAX_PDU_LEN {
        return None;
    }
    let whole = len + usize::from(rec.pdu_len);
    (buf.len() >= whole).then_some((whole, rec))
}

/// Whether `rec` is a TIMESTAMP notify (`BLK_TN_TIMESTAMP`: action code 1
/// in the NOTIFY category; bit 8 flags a cgroup id).
fn is_timestamp(rec: &Record) -> bool {
    (rec.action >> TC_SHIFT) & TC_NOTIFY != 0 && rec.action & 0xff == 1
}

/// The TIMESTAMP `rec`'s time and wall clock (Unix nanoseconds) from its
/// payload `pdu` (seconds and nanoseconds, `u32` each in the file's byte
/// order); `None` for nanoseconds of a second or more.
fn stamp_of(rec: &Record, pdu: &[u8; 8], big: bool) -> Option<(u64, u64)> {
    let word = |i: usize| {
        let b: [u8; 4] = pdu[i..i + 4].try_into().expect("4 bytes");
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let (sec, nsec) = (u64::from(word(0)), u64::from(word(4)));
    (nsec < 1_000_000_000).then_some((rec.time, sec * 1_000_000_000 + nsec))
}

/// The last action code blktrace defines (`BLK_TA_DRV_DATA`; 1
/// `BLK_TA_QUEUE` is the first). A notify record's code is its own
/// (`BLK_TN_*`), and defined.
const LAST_ACTION: u64 = 17;

/// Whether `rec`'s action code is one blktrace defines: other codes are
/// damage (a flipped bit in an action field goes unnoticed otherwise) or
/// a newer kernel's, and are counted in a note.
fn defined(rec: &Record) -> bool {
    let code = rec.action & 0xff;
    (rec.action >> TC_SHIFT) & TC_NOTIFY != 0 || (1..=LAST_ACTION).contains(&code)
}

fn decode(rec: &Record) -> Option<BlockEvent> {
    let cat = rec.action >> TC_SHIFT;
    if cat & TC_NOTIFY != 0 {
        return None;
    }
    let action = match rec.action & 0xff {
        1 => Action::Queue,
        2 => Action::BackMerge,
        3 => Action::FrontMerge,
        6 => Action::Requeue,
        7 => Action::Issue,
        8 => Action::Complete,
        _ => return None,
    };
    Some(BlockEvent {
        time: rec.time,
        device: rec.device,
        sector: rec.sector,
        bytes: rec.bytes,
        op: op_of(cat, rec.bytes),
        action,
    })
}

/// The request kind from the category bits, as blkparse spells RWBS:
/// discard, else write, else read when bytes move, else (`N`, or a
/// preflush with no data) a flush. The READ category bit is not used, as
/// in blkparse: a zero-byte "read" is a request that moves no data.
fn op_of(cat: u64, bytes: u32) -> Op {
    if cat & TC_DISCARD != 0 {
        Op::Discard
    } else if cat & TC_FLUSH != 0 && bytes == 0 {
        Op::Flush
    } else if cat & TC_WRITE != 0 {
        Op::Write
    } else if bytes > 0 {
        Op::Read
    } else {
        Op::Flush
    }
}

/// Event counts per device (`maj,min`), from [`read_with_counts`].
pub type Counts = BTreeMap<String, DeviceCounts>;

/// Reads and merges `inputs` (decoded streams with the paths that name
/// them in errors): the per-CPU files of one trace, or a single file.
pub fn read(inputs: Vec<(PathBuf, Input)>, opts: ReadOptions) -> Result<Trace, TraceError> {
    read_with_counts(inputs, opts).map(|(t, _)| t)
}

/// [`read`], also returning the event counts per device.
pub fn read_with_counts(
    inputs: Vec<(PathBuf, Input)>,
    opts: ReadOptions,
) -> Result<(Trace, Counts), TraceError> {
    let mut trace = Trace::new("blktrace");
    let first_path = inputs
        .first()
        .map_or_else(|| PathBuf::from("-"), |(p, _)| p.clone());
    let mut readers: Vec<RecordReader> = inputs
        .into_iter()
        .map(|(p, i)| RecordReader::new(i, p, opts.lenient))
        .collect();
    let mut pairing = Pairing::default();
    let mut failed = None;
    let mut first: Option<u64> = None;
    merge(&mut readers, |ev, i| {
        first = Some(first.map_or(ev.time, |a| a.min(ev.time)));
        match pairing.event(&mut trace, ev) {
            Ok(()) => Flow::More,
            Err(m) => {
                failed = Some((i, m));
                Flow::Stop
            }
        }
    })?;
    if let Some((i, m)) = failed {
        return Err(TraceError::format(&readers[i].path, m));
    }
    trace.skipped += readers.iter().map(|r| r.skipped).sum::<u64>();
    // The wall clock of raw time 0, from the first TIMESTAMP of any file
    // (module docs); the rebase in `finish` moves it along.
    if let (Some((time, unix)), Some(first)) = (readers.iter().find_map(|r| r.stamp), first) {
        // The kernel writes the TIMESTAMP as tracing starts, before any
        // I/O event on the same clock; a `-d` dump's I/O times start at 0,
        // after which its since-boot notify time lies.
        let same_clock = time <= first.saturating_add(1_000_000_000);
        trace.clock = Some(lull_core::time::Nanos(if same_clock {
            unix.saturating_sub(time)
        } else {
            unix
        }));
    }
    let counts = pairing
        .finish(&mut trace)
        .map_err(|m| TraceError::format(&first_path, m))?;
    trace.notes.extend(backwards_note(&readers));
    trace.notes.extend(undefined_note(&readers));
    Ok((trace, counts))
}

/// The note on I/O events earlier than the one before them in their file,
/// if any: the merge takes each file's events in order, so such an event
/// is taken late, at the time it carries.
fn backwards_note(readers: &[RecordReader]) -> Option<String> {
    let total: u64 = readers.iter().map(|r| r.backwards).sum();
    let mut with = readers.iter().filter(|r| r.backwards > 0);
    let first = with.next()?;
    let others = match with.count() {
        0 => String::new(),
        n => format!(" and {n} other file{}", if n == 1 { "" } else { "s" }),
    };
    Some(format!(
        "{total} event(s) are earlier than the event before them in their file ({}{others}), whose \
         times only go forward: a damaged time field, or a clock that stepped back; each is taken \
         at the time it carries",
        first.path.display()
    ))
}

/// The note on records whose action code blktrace does not define, if
/// any: skipped, with the first one's file, offset and code.
fn undefined_note(readers: &[RecordReader]) -> Option<String> {
    let total: u64 = readers.iter().map(|r| r.undefined).sum();
    let first = readers.iter().find(|r| r.undefined > 0)?;
    let (offset, code) = first.first_undefined?;
    Some(format!(
        "{total} record(s) carry an action code blktrace does not define (the first: code {code} in {} at byte offset {offset}; blktrace's are 1 to {LAST_ACTION}): damaged records, or a newer kernel's; skipped",
        first.path.display()
    ))
}

/// What [`merge`]'s consumer says after each event.
enum Flow {
    More,
    Stop,
}

/// Merges the readers' events by time: `sink` gets each with the index of
/// its file, in order, until it says stop. A read error ends the merge
/// where the merge reaches it.
fn merge(
    readers: &mut [RecordReader],
    mut sink: impl FnMut(BlockEvent, usize) -> Flow,
) -> Result<(), TraceError> {
    // The heap holds (time of the head event, file index) of every file
    // not yet done; the smallest pair goes next, so ties go to the file
    // listed first. The top is replaced in place (one sift down, nothing
    // moved when the same file is still the earliest) rather than popped
    // and pushed.
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some(t) = r.head_time()? {
            heap.push(Reverse((t, i)));
        }
    }
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((_, i)) = *top;
        let r = &mut readers[i];
        let ev = r.batch[r.next];
        r.next += 1;
        if let Flow::Stop = sink(ev, i) {
            return Ok(());
        }
        match r.head_time()? {
            Some(t) => *top = Reverse((t, i)),
            None => {
                PeekMut::pop(top);
            }
        }
    }
    Ok(())
}

/// Reads one decoded stream (a single per-CPU file or a `blkparse -d`
/// dump); `path` names it in errors.
pub fn read_one(input: Input, path: &Path, opts: ReadOptions) -> Result<Trace, TraceError> {
    read(vec![(path.to_path_buf(), input)], opts)
}

/// The per-CPU files of a blktrace directory: every regular file whose
/// name has the form `<name>.blktrace.<n>`, ordered by name and CPU.
pub fn cpu_files(dir: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| TraceError::io(dir, e))? {
        let entry = entry.map_err(|e| TraceError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some((base, cpu)) = name.rsplit_once(".blktrace.") else {
            continue;
        };
        let Ok(cpu) = cpu.parse::<u32>() else {
            continue;
        };
        if entry.path().is_file() {
            files.push((base.to_string(), cpu, entry.path()));
        }
    }
    files.sort();
    Ok(files.into_iter().map(|(_, _, p)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::time::Nanos;
    use std::io::Cursor;

    /// A v7 record.
    pub(crate) fn record(
        time: u64,
        action: u32,
        sector: u64,
        bytes: u32,
        pdu: &[u8],
        big: bool,
    ) -> Vec<u8> {
        let mut v = Vec::new();
        let put32 = |v: &mut Vec<u8>, x: u32| {
            v.extend(if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            })
        };
        let put64 = |v: &mut Vec<u8>, x: u64| {
            v.extend(if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            })
        };
        put32(&mut v, MAGIC | 7);
        put32(&mut v, 1);
        put64(&mut v, time);
        put64(&mut v, sector);
        put32(&mut v, bytes);
        put32(&mut v, action);
        put32(&mut v, 42);
        put32(&mut v, (8 << 20) | 16);
        put32(&mut v, 0);
        v.extend([0, 0]);
        let len = pdu.len() as u16;
        v.extend(if big {
            len.to_be_bytes()
        } else {
            len.to_le_bytes()
        });
        v.extend(pdu);
        v
    }

    fn read_bytes(data: Vec<u8>, lenient: bool) -> Result<Trace, TraceError> {
        read_one(
            Box::new(Cursor::new(data)),
            Path::new("t.blktrace.0"),
            ReadOptions { lenient },
        )
    }

    const Q: u32 = 1 | (1 << 4 | 1 << 1) << 16;
    const C: u32 = 8 | (1 << 7 | 1 << 1) << 16;
    const NOTE: u32 = 1 << 26;

    /// A record whose action code blktrace does not define (a damaged
    /// action field, once read and dropped without a word: lab trial,
    /// R11) is skipped and counted in a note naming the first's file,
    /// offset and code; notify records and blktrace's own codes are not.
    #[test]
    fn undefined_action_codes_are_skipped_and_noted() {
        for big in [false, true] {
            let mut d = record(0, NOTE, 0, 0, b"kworker\0", big);
            d.extend(record(1_000, Q, 8, 4096, &[], big));
            let first = d.len();
            // Code 40 with the write and queue categories; a plug (9).
            d.extend(record(2_000, 40 | (1 << 1) << 16, 8, 4096, &[], big));
            d.extend(record(2_500, 9, 0, 0, &[], big));
            d.extend(record(3_000, C, 8, 4096, &[], big));
            d.extend(record(4_000, 0, 8, 4096, &[], big));
            let t = read_bytes(d, false).unwrap();
            assert_eq!(t.requests.len(), 1);
            let note: Vec<_> = t
                .notes
                .iter()
                .filter(|n| n.contains("does not define"))
                .collect();
            assert_eq!(note.len(), 1, "{:?}", t.notes);
            assert!(
                note[0].starts_with("2 record(s) carry an action code blktrace does not define (the first: code 40 in t.blktrace.0 at byte offset ")
                    && note[0].contains(&format!("offset {first};")),
                "{}",
                note[0]
            );
            // None for a clean file.
            let mut clean = record(1_000, Q, 8, 4096, &[], big);
            clean.extend(record(3_000, C, 8, 4096, &[], big));
            assert!(read_bytes(clean, false).unwrap().notes.is_empty());
        }
    }

    /// One CPU's file of a capture is read with its siblings (and says
    /// so), the base name reads the set as `blkparse -i` does, and a file
    /// without siblings of its own base is read alone.
    #[test]
    fn a_per_cpu_capture_is_read_whole_however_it_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, at: u64, sector: u64| {
            let mut d = record(at, Q, sector, 4096, &[], false);
            d.extend(record(at + 1_000_000, C, sector, 4096, &[], false));
            std::fs::write(dir.path().join(name), d).unwrap();
        };
        write("sda.blktrace.0", 0, 0);
        write("sda.blktrace.1", 10_000_000_000, 8);
        write("sdb.blktrace.0", 5_000_000_000, 16);
        let open = |name: &str| crate::read::open(&dir.path().join(name), ReadOptions::default());
        let one = open("sda.blktrace.0").unwrap();
        assert_eq!(one.requests.len(), 2);
        assert!(
            one.notes.iter().any(|n| n.contains("one CPU's file")
                && n.contains("blkparse -i sda")
                && n.contains("the other 1 file of it")),
            "{:?}",
            one.notes
        );
        for name in ["sda", "sda.blktrace", "sda.blktrace.1"] {
            let t = open(name).unwrap();
            assert_eq!(t.requests.len(), 2, "{name}");
            assert_eq!(t.requests, one.requests, "{name}");
        }
        assert!(open("sda").unwrap().notes.is_empty());
        let alone = open("sdb.blktrace.0").unwrap();
        assert_eq!(alone.requests.len(), 1);
        assert!(alone.notes.is_empty(), "{:?}", alone.notes);
        let missing = open("sdc").unwrap_err().to_string();
        assert!(missing.contains("sdc"), "{missing}");
    }

    const D: u32 = 7 | (1 << 6 | 1 << 1) << 16;

    /// A per-CPU capture with a CPU's file lost (the Hadoop sample lacks
    /// CPU 33's): the notes name the file, and a Q whose D was on that CPU
    /// does not take the D of its sector's next request (lab-25 B3, R8).
    #[test]
    fn a_missing_cpu_file_is_named_and_its_lost_ds_do_not_shift_pairs() {
        let dir = tempfile::tempdir().unwrap();
        let s = 1_000_000_000u64;
        let write = |cpu: u32, recs: &[(u64, u32)]| {
            let mut d = Vec::new();
            for &(at, action) in recs {
                d.extend(record(at, action, 20672, 16384, &[], false));
            }
            std::fs::write(dir.path().join(format!("sdb.blktrace.{cpu}")), d).unwrap();
        };
        // CPU 0 queued it at 77 s; its D and C were on CPU 2, lost.
        write(0, &[(77 * s, Q)]);
        write(1, &[(107 * s, Q), (107 * s + 84_000, D)]);
        write(3, &[(169 * s, Q), (169 * s + 154_000, D)]);
        std::fs::write(dir.path().join("sdb.blktrace.4"), b"").unwrap();
        for name in ["", "sdb", "sdb.blktrace.1"] {
            let t = crate::read::open(&dir.path().join(name), ReadOptions::default()).unwrap();
            let lengths: Vec<u64> = t.requests.iter().map(|r| r.response().0).collect();
            assert_eq!(lengths, [0, 84_000, 154_000], "{name}");
            assert!(
                t.notes[0].starts_with("CPU 2's file (sdb.blktrace.2) is missing")
                    && t.notes[0].contains("CPUs 0 to 4 are otherwise there")
                    && t.notes[0].contains("unless CPU 2 was offline, the events it recorded"),
                "{name}: {:?}",
                t.notes
            );
            assert!(
                t.notes[1].starts_with("3 request(s) never completed (1 of them never dispatched"),
                "{name}: {:?}",
                t.notes
            );
        }
        // Several files lost.
        std::fs::remove_file(dir.path().join("sdb.blktrace.1")).unwrap();
        let t = crate::read::open(dir.path(), ReadOptions::default()).unwrap();
        assert!(
            t.notes[0].starts_with("the files of CPUs 1 and 2 are missing from sdb.blktrace.*")
                && t.notes[0].contains("unless those CPUs were offline, the events they recorded"),
            "{:?}",
            t.notes
        );
        // Nothing missing, nothing said.
        for cpu in [1, 2] {
            write(cpu, &[]);
        }
        let t = crate::read::open(dir.path(), ReadOptions::default()).unwrap();
        assert!(
            !t.notes.iter().any(|n| n.contains("missing")),
            "{:?}",
            t.notes
        );
    }

    /// An I/O event earlier than the one before it in its file (a zeroed
    /// time, lab-25 R11) is counted in a note naming the file.
    #[test]
    fn time_going_back_within_a_file_is_noted() {
        let mut data = record(5_000, Q, 64, 4096, &[], false);
        data.extend(record(9_000, C, 64, 4096, &[], false));
        data.extend(record(1, NOTE, 0, 0, b"kworker\0", false));
        let t = read_bytes(data.clone(), false).unwrap();
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        data.extend(record(0, Q, 128, 4096, &[], false));
        data.extend(record(12_000, C, 128, 4096, &[], false));
        let t = read_bytes(data, false).unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
        assert!(
            t.notes[0].starts_with(
                "1 event(s) are earlier than the event before them in their file (t.blktrace.0)"
            ),
            "{:?}",
            t.notes
        );
    }

    /// A TIMESTAMP notify's payload: seconds and nanoseconds, `u32` each in
    /// the file's byte order.
    fn stamp_pdu(sec: u32, nsec: u32, big: bool) -> Vec<u8> {
        let mut v = Vec::new();
        for x in [sec, nsec] {
            v.extend(if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            });
        }
        v
    }

    const STAMP: u32 = 1 | (1 << 10) << 16;

    /// The wall clock comes from the TIMESTAMP notify, as blkparse takes
    /// it, whether it is the file's first record (read on the careful
    /// path) or one in the middle (the fast path), in both byte orders: at
    /// its own time when that is on the I/O events' clock, else (a `-d`
    /// dump, its I/O times from zero and the notify's since boot) at the
    /// I/O events' time zero. The rebase moves it to the first arrival.
    #[test]
    fn the_timestamp_notify_gives_the_wall_clock() {
        // 2024-05-01T12:00:00.25Z.
        let (sec, nsec) = (1_714_564_800u32, 250_000_000u32);
        let unix = u64::from(sec) * 1_000_000_000 + u64::from(nsec);
        let boot = 7_000_000_000_000u64; // the capture began 7000 s after boot
        for big in [false, true] {
            for first in [true, false] {
                let mut data = Vec::new();
                let stamp = record(boot, STAMP, 0, 0, &stamp_pdu(sec, nsec, big), big);
                if first {
                    data.extend(&stamp);
                }
                data.extend(record(boot + 5_000, Q, 64, 4096, &[], big));
                if !first {
                    data.extend(&stamp);
                }
                data.extend(record(boot + 9_000, C, 64, 4096, &[], big));
                let t = read_bytes(data, false).unwrap();
                assert_eq!(t.requests.len(), 1);
                // Time 0 is the first arrival, 5 µs after the stamp.
                assert_eq!(
                    t.clock,
                    Some(Nanos(unix + 5_000)),
                    "big {big}, first {first}"
                );
            }
        }
        // A `-d` dump: I/O from zero, the notify at its since-boot time.
        let mut data = record(boot, STAMP, 0, 0, &stamp_pdu(sec, nsec, false), false);
        data.extend(record(5_000, Q, 64, 4096, &[], false));
        data.extend(record(9_000, C, 64, 4096, &[], false));
        let t = read_bytes(data, false).unwrap();
        assert_eq!(t.clock, Some(Nanos(unix + 5_000)));
        // No TIMESTAMP, or one with a bad payload: no wall clock.
        let mut data = record(
            boot,
            STAMP,
            0,
            0,
            &stamp_pdu(sec, 1_000_000_000, false),
            false,
        );
        data.extend(record(boot + 5_000, Q, 64, 4096, &[], false));
        data.extend(record(boot + 9_000, C, 64, 4096, &[], false));
        assert_eq!(read_bytes(data, false).unwrap().clock, None);
    }

    #[test]
    fn pairs_in_both_byte_orders() {
        for big in [false, true] {
            let mut data = record(5_000, Q, 64, 4096, &[], big);
            data.extend(record(1, NOTE, 0, 0, b"kworker\0", big));
            data.extend(record(9_000, C, 64, 4096, &[], big));
            let t = read_bytes(data, false).unwrap();
            assert_eq!(t.requests.len(), 1);
            assert_eq!(t.requests[0].completion.0, 4_000);
            assert_eq!(t.requests[0].op, Op::Write);
            assert_eq!(t.devices, ["8,16"]);
        }
    }

    #[test]
    fn version_8_records() {
        let mut v = Vec::new();
        v.extend((MAGIC | 8).to_le_bytes());
        v.extend(1u32.to_le_bytes());
        v.extend(100u64.to_le_bytes());
        v.extend(8u64.to_le_bytes());
        v.extend(512u32.to_le_bytes());
        v.extend(7u32.to_le_bytes());
        v.extend(u64::from(Q).to_le_bytes());
        v.extend(((8u32 << 20) | 1).to_le_bytes());
        v.extend(0u32.to_le_bytes());
        v.extend([0u8; 4]);
        v.extend([0u8; 12]);
        assert_eq!(v.len(), 64);
        let t = read_bytes(v, false).unwrap();
        assert_eq!(t.devices, ["8,1"]);
        assert_eq!(t.requests.len(), 1);
    }

    /// A record of either version and byte order, `action` being the code
    /// with the category bits above bit 16.
    fn any_record(big: bool, time: u64, gen_record: &Gen) -> Vec<u8> {
        let &(_, action, dev, sector, bytes, pdu, v8) = gen_record;
        if !v8 {
            let mut r = record(time, action, sector, bytes, &vec![0xab; pdu], big);
            let d = if big {
                dev.to_be_bytes()
            } else {
                dev.to_le_bytes()
            };
            r[36..40].copy_from_slice(&d);
            return r;
        }
        let mut v = Vec::new();
        let mut put = |b: &[u8]| {
            let mut b = b.to_vec();
            if big {
                b.reverse();
            }
            v.extend(b);
        };
        put(&(MAGIC | 8).to_le_bytes());
        put(&1u32.to_le_bytes());
        put(&time.to_le_bytes());
        put(&sector.to_le_bytes());
        put(&bytes.to_le_bytes());
        put(&7u32.to_le_bytes());
        put(&u64::from(action).to_le_bytes());
        put(&dev.to_le_bytes());
        put(&0u32.to_le_bytes());
        put(&0u16.to_le_bytes());
        put(&(pdu as u16).to_le_bytes());
        v.resize(64 + pdu, 0xcd);
        v
    }

    /// The merge as first written: one record at a time through the
    /// careful path, a heap of (time, file) popped and pushed per event.
    fn reference(files: &[Vec<u8>], lenient: bool) -> Result<(Trace, Counts), TraceError> {
        let mut trace = Trace::new("blktrace");
        let mut readers: Vec<RecordReader> = files
            .iter()
            .enumerate()
            .map(|(i, d)| {
                RecordReader::new(
                    Box::new(Cursor::new(d.clone())),
                    PathBuf::from(format!("t.blktrace.{i}")),
                    lenient,
                )
            })
            .collect();
        let next = |r: &mut RecordReader| -> Result<Option<BlockEvent>, TraceError> {
            while let Some(rec) = r.next_record()? {
                if let Some(ev) = decode(&rec) {
                    r.backwards += u64::from(ev.time < r.last_time);
                    r.last_time = ev.time;
                    return Ok(Some(ev));
                } else if !defined(&rec) {
                    let at = r.record_at;
                    r.undefined_at(at, &rec);
                }
            }
            Ok(None)
        };
        let mut heads = Vec::new();
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            let ev = next(r)?;
            if let Some(e) = &ev {
                heap.push(Reverse((e.time, i)));
            }
            heads.push(ev);
        }
        let mut pairing = Pairing::default();
        while let Some(Reverse((_, i))) = heap.pop() {
            let ev = heads[i].take().expect("a queued head");
            pairing
                .event(&mut trace, ev)
                .map_err(|m| TraceError::format(&readers[i].path, m))?;
            if let Some(n) = next(&mut readers[i])? {
                heap.push(Reverse((n.time, i)));
                heads[i] = Some(n);
            }
        }
        trace.skipped += readers.iter().map(|r| r.skipped).sum::<u64>();
        let counts = pairing
            .finish(&mut trace)
            .map_err(|m| TraceError::format(Path::new("t.blktrace.0"), m))?;
        trace.notes.extend(backwards_note(&readers));
        trace.notes.extend(undefined_note(&readers));
        Ok((trace, counts))
    }

    /// One generated record: time step, action, device, sector, bytes,
    /// payload length, version 8.
    type Gen = (u64, u32, u32, u64, u32, usize, bool);

    fn arb_record() -> impl Strategy<Value = Gen> {
        let action = prop_oneof![
            Just(Q),
            Just(C),
            Just(7 | (1 << 1) << 16),
            Just(2 | (1 << 1) << 16),
            Just(3 | (1 << 1) << 16),
            Just(6 | (1 << 1) << 16),
            Just(4 | 1 << 16),
            Just(8 | (1 << 13) << 16),
            Just(NOTE),
            // An action code blktrace does not define.
            Just(40 | (1 << 1) << 16),
        ];
        (
            prop_oneof![4 => 0u64..50, 1 => Just(0u64)],
            action,
            prop_oneof![Just(8u32 << 20), Just((8u32 << 20) | 1)],
            (0u64..6).prop_map(|s| s * 8),
            prop_oneof![Just(0u32), Just(512), Just(4096)],
            prop_oneof![4 => Just(0usize), 1 => 1usize..100],
            proptest::bool::weighted(0.1),
        )
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(lull_testkit::cases(256))]
        /// The batched reader and in-place merge give exactly what the
        /// record-at-a-time reader and pop-and-push merge gave, whatever the
        /// read buffer's size (records split across fills, or never whole
        /// in one), with damaged files too (the same error, or in lenient
        /// mode the same skips).
        #[test]
        fn same_as_the_reference_merge(
            files in proptest::collection::vec(
                (proptest::collection::vec(arb_record(), 0..40), any::<bool>(), any::<bool>()),
                1..5,
            ),
            damage in proptest::collection::vec((0usize..5, 0usize..4000, any::<u8>()), 0..2),
            cap in prop_oneof![1usize..64, 64usize..600, Just(super::super::input::BUF_LEN)],
            lenient in any::<bool>(),
        ) {
            let mut data: Vec<Vec<u8>> = files
                .iter()
                .map(|(recs, big, backwards)| {
                    let mut t = if *backwards { 10_000u64 } else { 0 };
                    let mut v = Vec::new();
                    for r in recs {
                        // Time-sorted files, or now and then one that is not.
                        t = if *backwards { t.saturating_sub(r.0) } else { t + r.0 };
                        v.extend(any_record(*big, t, r));
                    }
                    v
                })
                .collect();
            for &(f, at, byte) in &damage {
                let n = data.len();
                let d = &mut data[f % n];
                if d.is_empty() {
                    continue;
                }
                if byte % 2 == 0 {
                    d.truncate(at % d.len());
                } else {
                    let at = at % d.len();
                    d[at] = byte;
                }
            }
            let expected = reference(&data, lenient);
            let inputs: Vec<(PathBuf, Input)> = data
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let input: Input =
                        Box::new(std::io::BufReader::with_capacity(cap, Cursor::new(d.clone())));
                    (PathBuf::from(format!("t.blktrace.{i}")), input)
                })
                .collect();
            let got = read_with_counts(inputs, ReadOptions { lenient });
            match (got, expected) {
                (Ok(g), Ok(e)) => prop_assert_eq!(g, e),
                (Err(g), Err(e)) => prop_assert_eq!(g.to_string(), e.to_string()),
                (g, e) => prop_assert!(false, "got {:?}, expected {:?}", g.map(|_| ()), e.map(|_| ())),
            }
        }
    }
}
