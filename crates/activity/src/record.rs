//! The records of an activity log and their encoding.
//!
//! # Layout
//!
//! A segment file is a 16-byte header followed by frames:
//!
//! | bytes | what |
//! |---|---|
//! | 0..8 | magic `\x89LULLACT` (the high first byte catches text-mode transfers) |
//! | 8..10 | format version, little-endian `u16` ([`VERSION`]) |
//! | 10..16 | zero |
//!
//! Each frame is `kind: u8`, `len`: LEB128 `u32`, `len` bytes of payload,
//! then a CRC-32 (IEEE, little-endian) of everything before it in the frame.
//! Integers inside payloads are LEB128 (a quiet disk's poll record is about
//! 30 bytes); strings are a LEB128 length and UTF-8 bytes.
//!
//! # Compatibility
//!
//! A reader skips frames of a kind it does not know (their CRC still
//! checked), and ignores payload bytes past the fields it knows, so a
//! newer writer can add record kinds and trailing fields without breaking
//! older readers; a field is never removed or reordered. A reader of
//! version `n` reads every version up to `n`; a file of a later version is
//! read too when its frames parse (`tests/data/v1.lact` pins version 1).

use lull_core::time::Nanos;

/// The first 8 bytes of every segment.
pub const MAGIC: &[u8; 8] = b"\x89LULLACT";
/// The version this crate writes.
pub const VERSION: u16 = 1;
/// Bytes before the first frame.
pub const HEADER_LEN: usize = 16;

/// The segment header this crate writes.
pub fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// One daemon run's view of a disk: written when a controller starts and
/// again at the start of every segment, so each segment reads alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// The wall clock at the session's time zero (Unix nanoseconds): times
    /// in the session's records are nanoseconds since then, on the
    /// daemon's monotonic clock. It also tells sessions apart.
    pub clock: Nanos,
    /// The daemon's poll interval.
    pub poll: Nanos,
    /// The disk's key in the configuration (its entry or resolved path).
    pub key: String,
    /// Its kernel name when the session started.
    pub kernel: String,
    /// The drive preset its break-even time came from (`wd-red-plus`,
    /// possibly with overrides), empty when none applies.
    pub drive: String,
    /// The task (`standby`, `flush`, `command`, `jobs`).
    pub task: String,
    /// The detector network, as configured.
    pub network: String,
    /// The standby task's wear budget (`max_spindowns_per_day`): `None`
    /// for another task, and in logs written before the field was added (a
    /// trailing field: older readers skip it).
    pub max_spindowns_per_day: Option<u32>,
    /// The daemon names in the log each learned state it writes to the
    /// state file ([`Record::Learned`]), so a replay knows what a crash
    /// resumed from. `false` in logs of older daemons (a trailing field).
    pub saves_learned: bool,
    /// A dry run (`lulld --dry-run`): its standby records say what lull
    /// would have done, and it keeps its own state file (its learned
    /// state, its wear budget). `false` in logs of older daemons.
    pub dry_run: bool,
    /// Which physical drive the disk was ([`drive_id`] of its serial
    /// number): a disk key names a bay or a kernel name (`sdb` under a
    /// glob), which another drive can take, and the evidence of one drive
    /// must not be mixed with another's. `None` when the serial number is
    /// unknown, and in logs of older daemons (a trailing field).
    pub drive_id: Option<u64>,
    /// The run continues the one before it without a break: a SIGHUP
    /// reload started the disk's controller again while the disk was idle
    /// and watched, and the new controller took the old one's counters
    /// over (no baseline poll); or a daemon stopped cleanly while the disk
    /// was idle, and the next one, in the same boot, found its completed
    /// I/O unchanged (a restart: its clock is another, and the time
    /// between the two runs is idle, not unwatched). Its idle period goes
    /// on: the references and lull's own drive sleep through the reload
    /// or restart, and a replay builds the run's network at its first
    /// instant as the daemon did, idle from then. `false` in logs of
    /// older daemons (a flag).
    pub continues: bool,
}

/// The drive identifier [`Session::drive_id`] of the drive with serial
/// number `serial`: a 64-bit FNV-1a hash, never 0. It tells drives apart
/// without writing their serial numbers into a log that may be shared.
pub fn drive_id(serial: &str) -> u64 {
    let h = serial.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    h.max(1)
}

/// How a poll's events were made (see [`crate::poll`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PollKind {
    /// Counter deltas since the previous poll.
    #[default]
    Normal,
    /// The disk's first sample, or its first after it was absent: a
    /// one-nanosecond request ending at the poll, or, when the poll holds
    /// a request open since the disk vanished (`held_since`), that
    /// request's completion.
    Baseline,
    /// The poll came much later than planned: the gap is one busy request.
    Late,
    /// The disk left diskstats at this poll: a request held open from
    /// here until the [`PollKind::Baseline`] that sees it again, so that
    /// its absence is no idle time (an unplugged drive draws nothing,
    /// sleeps through nothing, and its network learns no idle period the
    /// length of its absence). That baseline holds the vanish as its
    /// `held_since`.
    Vanished,
    /// The disk left diskstats at this poll, as daemons before
    /// [`PollKind::Vanished`] wrote it: their engines took its absence
    /// as idle time, up to the baseline that saw it again, so a replay of
    /// such a log does too (it decides as they did).
    VanishedIdle,
}

impl PollKind {
    fn code(self) -> u8 {
        match self {
            PollKind::Normal => 0,
            PollKind::Baseline => 1,
            PollKind::Late => 2,
            PollKind::VanishedIdle => 3,
            PollKind::Vanished => 4,
        }
    }
    fn from_code(c: u8) -> Option<PollKind> {
        Some(match c {
            0 => PollKind::Normal,
            1 => PollKind::Baseline,
            2 => PollKind::Late,
            3 => PollKind::VanishedIdle,
            4 => PollKind::Vanished,
            _ => return None,
        })
    }
}

/// Operations completed between two polls (the merged delta the daemon
/// takes from a disk's counters, its partitions' or its holders').
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Discards completed.
    pub discards: u64,
    /// Flushes completed.
    pub flushes: u64,
    /// Sectors moved (read, written and discarded).
    pub sectors: u64,
    /// Milliseconds the device was busy (`io_ticks`).
    pub io_ms: u64,
}

impl Counts {
    /// Completed operations of every kind.
    pub fn ops(&self) -> u64 {
        self.reads
            .saturating_add(self.writes)
            .saturating_add(self.discards)
            .saturating_add(self.flushes)
    }
    /// Adds another member's counts (a partition's or a holder's): the
    /// operations and sectors add up, the busy time is the longest.
    pub fn add(&mut self, o: &Counts) {
        self.reads = self.reads.saturating_add(o.reads);
        self.writes = self.writes.saturating_add(o.writes);
        self.discards = self.discards.saturating_add(o.discards);
        self.flushes = self.flushes.saturating_add(o.flushes);
        self.sectors = self.sectors.saturating_add(o.sectors);
        self.io_ms = self.io_ms.max(o.io_ms);
    }
}

/// One poll that changed what the daemon knows of the disk. Quiet polls
/// (no completion, nothing in flight, nothing held) are not recorded: they
/// add no event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Poll {
    /// The previous poll (equal to `t` for a baseline).
    pub t0: Nanos,
    /// This poll.
    pub t: Nanos,
    /// How its events are made.
    pub kind: PollKind,
    /// What completed in `(t0, t]`.
    pub counts: Counts,
    /// A request held open for I/O in flight since this instant, before
    /// the poll.
    pub held_since: Option<Nanos>,
    /// Whether one is held open after it.
    pub held_after: bool,
}

/// One record of an activity log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A daemon run starts watching the disk (or a new segment begins).
    Session(Session),
    /// A poll with something to say.
    Poll(Poll),
    /// Still watching at this instant, with nothing to record: written
    /// after a stretch of quiet polls, so that a log cut short by a crash
    /// still shows how long the disk stayed quiet.
    Mark(Nanos),
    /// lull ordered a standby at this instant (the engine's decision).
    Standby(Nanos),
    /// The standby ordered at this instant failed: the drive did not sleep.
    StandbyFailed(Nanos),
    /// The drive's power state at this instant, when lull learned it
    /// (`true`: in standby).
    Power {
        /// When.
        t: Nanos,
        /// In standby.
        standby: bool,
        /// Found: asked of the drive (a power check) or taken up from the
        /// state file after a restart or reload, rather than the answer to
        /// a standby lull sent (whose [`Record::Standby`] already says
        /// it). A replay and the shadow evaluation take a found state up
        /// (`lull_tasks::gate::DaemonStandbys::push_power`). A trailing
        /// byte: `false` in logs of a daemon from before it.
        found: bool,
    },
    /// The daemon stopped watching the disk at this instant (a clean stop).
    End(Nanos),
    /// The state file was written after the poll at `t`, and what the
    /// disk's network had learned in it was as of the poll at `at` (`at ≤
    /// t`: the network's state is kept at the end of each idle period). A
    /// daemon that crashes resumes from the last such state, so a replay
    /// of the log across the crash does too (written only when `at`
    /// changed since the last one; older logs have none).
    Learned {
        /// The poll after which the state file was written.
        t: Nanos,
        /// The poll whose learned state it holds.
        at: Nanos,
    },
    /// From this instant on in the run, the daemon sends the disk no
    /// standby, whatever the network decides, for the reason `why`, which
    /// a replay cannot know from the polls: the disk is left alone (no
    /// transport reaches the drive, or it reports no rotation), unplugged,
    /// or backing off after failed standbys. An empty `why` ends it.
    /// Written at the first decision that found the reason changed, at
    /// that decision's instant, and again after the session at the start
    /// of each segment while it holds, so that a replay of the log
    /// withholds what the daemon withheld (older logs have none: their
    /// replays decide as the network did).
    Withheld {
        /// When (the decision's instant).
        t: Nanos,
        /// Why; empty: standbys go again.
        why: String,
    },
}

impl Record {
    /// The instant it speaks of (`None` for a session).
    pub fn time(&self) -> Option<Nanos> {
        match *self {
            Record::Session(_) => None,
            Record::Poll(p) => Some(p.t),
            Record::Mark(t)
            | Record::Standby(t)
            | Record::StandbyFailed(t)
            | Record::Power { t, .. }
            | Record::Learned { t, .. }
            | Record::Withheld { t, .. }
            | Record::End(t) => Some(t),
        }
    }

    /// The same record `by` later: every instant in it moved (a run's
    /// records on a timeline whose time zero is earlier than the run's).
    pub fn shifted(&self, by: Nanos) -> Record {
        let mut r = self.clone();
        match &mut r {
            Record::Session(_) => {}
            Record::Poll(p) => {
                p.t0 += by;
                p.t += by;
                p.held_since = p.held_since.map(|h| h + by);
            }
            Record::Mark(t)
            | Record::Standby(t)
            | Record::StandbyFailed(t)
            | Record::Power { t, .. }
            | Record::Withheld { t, .. }
            | Record::End(t) => *t += by,
            Record::Learned { t, at } => {
                *t += by;
                *at += by;
            }
        }
        r
    }

    fn kind(&self) -> u8 {
        match self {
            Record::Session(_) => 1,
            Record::Poll(_) => 2,
            Record::Mark(_) => 3,
            Record::Standby(_) => 4,
            Record::StandbyFailed(_) => 5,
            Record::Power { .. } => 6,
            Record::End(_) => 7,
            Record::Learned { .. } => 8,
            Record::Withheld { .. } => 9,
        }
    }

    /// Appends the record as one frame to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut p = Vec::with_capacity(48);
        match self {
            Record::Session(s) => {
                put(&mut p, s.clock.0);
                put(&mut p, s.poll.0);
                for text in [&s.key, &s.kernel, &s.drive, &s.task, &s.network] {
                    put(&mut p, text.len() as u64);
                    p.extend_from_slice(text.as_bytes());
                }
                // 0: none; n + 1: a budget of n.
                put(
                    &mut p,
                    s.max_spindowns_per_day.map_or(0, |n| u64::from(n) + 1),
                );
                // Flags: bit 0, `saves_learned`; bit 1, `dry_run`; bit 2,
                // `continues`.
                put(
                    &mut p,
                    u64::from(s.saves_learned)
                        | (u64::from(s.dry_run) << 1)
                        | (u64::from(s.continues) << 2),
                );
                // 0: unknown.
                put(&mut p, s.drive_id.unwrap_or(0));
            }
            Record::Poll(r) => {
                put(&mut p, r.t0.0);
                put(&mut p, r.t.0.saturating_sub(r.t0.0));
                let flags = r.kind.code()
                    | if r.held_since.is_some() { 0x10 } else { 0 }
                    | if r.held_after { 0x20 } else { 0 };
                p.push(flags);
                let c = &r.counts;
                for v in [c.reads, c.writes, c.discards, c.flushes, c.sectors, c.io_ms] {
                    put(&mut p, v);
                }
                if let Some(h) = r.held_since {
                    put(&mut p, h.0);
                }
            }
            Record::Mark(t) | Record::Standby(t) | Record::StandbyFailed(t) | Record::End(t) => {
                put(&mut p, t.0)
            }
            Record::Power { t, standby, found } => {
                put(&mut p, t.0);
                p.push(u8::from(*standby));
                p.push(u8::from(*found));
            }
            Record::Learned { t, at } => {
                put(&mut p, t.0);
                put(&mut p, t.0.saturating_sub(at.0));
            }
            Record::Withheld { t, why } => {
                put(&mut p, t.0);
                put(&mut p, why.len() as u64);
                p.extend_from_slice(why.as_bytes());
            }
        }
        let start = out.len();
        out.push(self.kind());
        put(out, p.len() as u64);
        out.extend_from_slice(&p);
        let crc = crc32fast::hash(&out[start..]);
        out.extend_from_slice(&crc.to_le_bytes());
    }
}

/// Appends `v` as LEB128.
fn put(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Why a frame could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// The bytes end inside the frame.
    Truncated,
    /// The frame is whole but wrong (its CRC, a length, a field).
    Bad(String),
}

/// A cursor over a payload.
struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

impl Fields<'_> {
    /// Bytes not read yet (a trailing field a writer may not have written).
    fn rest(&self) -> usize {
        self.b.len().saturating_sub(self.at)
    }
    fn int(&mut self, what: &str) -> Result<u64, FrameError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.b.get(self.at) else {
                return Err(FrameError::Bad(format!(
                    "{what}: the record ends inside it"
                )));
            };
            self.at += 1;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(FrameError::Bad(format!("{what}: more than 64 bits")));
            }
            v |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(FrameError::Bad(format!("{what}: more than 64 bits")))
    }
    fn nanos(&mut self, what: &str) -> Result<Nanos, FrameError> {
        self.int(what).map(Nanos)
    }
    fn byte(&mut self, what: &str) -> Result<u8, FrameError> {
        let b = self
            .b
            .get(self.at)
            .copied()
            .ok_or_else(|| FrameError::Bad(format!("{what}: the record ends inside it")))?;
        self.at += 1;
        Ok(b)
    }
    fn text(&mut self, what: &str) -> Result<String, FrameError> {
        let len = self.int(what)?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| self.at.checked_add(l))
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| FrameError::Bad(format!("{what}: longer than its record")))?;
        let s = std::str::from_utf8(&self.b[self.at..end])
            .map_err(|_| FrameError::Bad(format!("{what}: not UTF-8")))?;
        self.at = end;
        Ok(s.to_string())
    }
}

/// The longest payload a frame may claim (a session's strings are short;
/// anything longer is damage, not data).
const MAX_PAYLOAD: u64 = 1 << 20;

/// How many bytes the frame at the start of `b` claims to take (kind,
/// length, payload and CRC), whatever its content; `None` when the bytes
/// end inside its length field.
pub(crate) fn frame_extent(b: &[u8]) -> Option<u64> {
    let mut head = Fields { b, at: 1 };
    match head.int("record length") {
        Ok(len) => Some((head.at as u64).saturating_add(len).saturating_add(4)),
        Err(_) if head.at >= b.len() => None,
        Err(_) => Some(u64::MAX),
    }
}

/// Decodes the frame at the start of `b`: the record (`None` for a kind
/// this version does not know) and the frame's length.
pub(crate) fn decode(b: &[u8]) -> Result<(Option<Record>, usize), FrameError> {
    let Some(&kind) = b.first() else {
        return Err(FrameError::Truncated);
    };
    if kind == 0 {
        return Err(FrameError::Bad("record kind 0".into()));
    }
    let mut head = Fields { b, at: 1 };
    let len = match head.int("record length") {
        Ok(l) => l,
        Err(_) if b.len() < 11 => return Err(FrameError::Truncated),
        Err(e) => return Err(e),
    };
    if len > MAX_PAYLOAD {
        return Err(FrameError::Bad(format!(
            "record length {len} is over {MAX_PAYLOAD}"
        )));
    }
    let start = head.at;
    let end = start + len as usize;
    if b.len() < end + 4 {
        return Err(FrameError::Truncated);
    }
    let crc = u32::from_le_bytes(b[end..end + 4].try_into().expect("four bytes"));
    if crc32fast::hash(&b[..end]) != crc {
        return Err(FrameError::Bad("CRC mismatch".into()));
    }
    let mut f = Fields {
        b: &b[start..end],
        at: 0,
    };
    let rec = match kind {
        1 => {
            let clock = f.nanos("session clock")?;
            let poll = f.nanos("poll interval")?;
            let key = f.text("disk key")?;
            let kernel = f.text("kernel name")?;
            let drive = f.text("drive")?;
            let task = f.text("task")?;
            let network = f.text("network")?;
            // Trailing fields, each absent in older logs.
            let max_spindowns_per_day = match f.rest() {
                0 => None,
                _ => match f.int("wear budget")? {
                    0 => None,
                    n => Some(u32::try_from(n - 1).map_err(|_| {
                        FrameError::Bad(format!("wear budget {} is over u32", n - 1))
                    })?),
                },
            };
            let flags = match f.rest() {
                0 => 0,
                _ => f.int("session flags")?,
            };
            let drive_id = match f.rest() {
                0 => None,
                _ => Some(f.int("drive id")?).filter(|&id| id != 0),
            };
            Record::Session(Session {
                clock,
                poll,
                key,
                kernel,
                drive,
                task,
                network,
                max_spindowns_per_day,
                saves_learned: flags & 1 != 0,
                dry_run: flags & 2 != 0,
                drive_id,
                continues: flags & 4 != 0,
            })
        }
        2 => {
            let t0 = f.nanos("poll t0")?;
            let dt = f.nanos("poll interval")?;
            let flags = f.byte("poll flags")?;
            let kind = PollKind::from_code(flags & 0x0f)
                .ok_or_else(|| FrameError::Bad(format!("poll kind {}", flags & 0x0f)))?;
            let mut c = [0u64; 6];
            for (v, what) in c
                .iter_mut()
                .zip(["reads", "writes", "discards", "flushes", "sectors", "io_ms"])
            {
                *v = f.int(what)?;
            }
            let held_since = if flags & 0x10 != 0 {
                Some(f.nanos("held since")?)
            } else {
                None
            };
            let t = Nanos(
                t0.0.checked_add(dt.0)
                    .ok_or_else(|| FrameError::Bad("poll time overflows".into()))?,
            );
            if held_since.is_some_and(|h| h > t0) {
                return Err(FrameError::Bad("held since after the previous poll".into()));
            }
            Record::Poll(Poll {
                t0,
                t,
                kind,
                counts: Counts {
                    reads: c[0],
                    writes: c[1],
                    discards: c[2],
                    flushes: c[3],
                    sectors: c[4],
                    io_ms: c[5],
                },
                held_since,
                held_after: flags & 0x20 != 0,
            })
        }
        3 => Record::Mark(f.nanos("mark")?),
        4 => Record::Standby(f.nanos("standby")?),
        5 => Record::StandbyFailed(f.nanos("standby failed")?),
        6 => Record::Power {
            t: f.nanos("power time")?,
            standby: f.byte("power state")? != 0,
            found: f.rest() > 0 && f.byte("power found")? != 0,
        },
        7 => Record::End(f.nanos("end")?),
        8 => {
            let t = f.nanos("state written")?;
            let back = f.int("learned before")?;
            let at =
                t.0.checked_sub(back)
                    .ok_or_else(|| FrameError::Bad("learned state from before time zero".into()))?;
            Record::Learned { t, at: Nanos(at) }
        }
        9 => Record::Withheld {
            t: f.nanos("withheld")?,
            why: f.text("withheld: why")?,
        },
        _ => return Ok((None, end + 4)),
    };
    Ok((Some(rec), end + 4))
}
