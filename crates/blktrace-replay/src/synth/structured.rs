//! Workloads with structure: a day of an office PC, a home NAS, a
//! database with checkpoints and persistent busy/quiet regimes, and a
//! server whose quiet hours are paced by cron jobs and checkpoints.
//!
//! Why they exist: when successive idle periods are independent draws from
//! one distribution, the best a policy can do is a fixed timeout (Karlin et
//! al.'s argument), so an i.i.d. workload cannot show what an online
//! policy gains. Real disks are not i.i.d.: a user is at the desk or away,
//! a page cache writes back 30 s after a write and then nothing happens,
//! a daemon wakes every 5 minutes, a backup runs at 2 am, a database is
//! busy for an hour and then quiet for two. Each generator below builds
//! one such day from a few well-known mechanisms, with their usual default
//! settings as parameters.
//!
//! Common machinery:
//!
//! - **Time 0 is midnight** (UTC, Monday 1 January 2024; the trace's
//!   [`Trace::clock`](crate::trace::Trace::clock) says so), so time-of-day
//!   components see the hours the workload was modelled on. Every day is a
//!   working day (no weekends).
//! - **Sources draw from their own random streams**, seeded from
//!   `(seed, source, day)`: a daemon's pokes do not move when the user's
//!   behaviour changes, and the first day of a 48 h trace is the 24 h
//!   trace (up to requests that cross the end).
//! - **One FCFS server** serves the merged requests: a random access costs
//!   2 ms plus an exponential 5 ms of positioning, a sequential one
//!   0.2 ms, plus the transfer at 150 MB/s. Completions queue behind each
//!   other as on a disk.

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::{exp, normal};
use crate::trace::Trace;

/// Seconds in a day.
pub const DAY_S: f64 = 86_400.0;

/// The wall clock of time 0 of a structured workload, Unix seconds:
/// Monday 2024-01-01 00:00:00 UTC.
pub const EPOCH_UNIX_S: u64 = 1_704_067_200;

/// An office PC's disk, one user (`office`).
///
/// The user arrives around `arrive_h`, lunches around `lunch_h` for
/// `lunch_min`, and leaves around `leave_h` (each moved by a normal draw
/// with `shift_sd_min`). While present, work sessions (exponential, mean
/// `session_min`) alternate with away spells (meetings, coffee:
/// log-normal, median `away_min`). In a session, bursts of requests
/// (geometric, mean `burst_mean`) are separated by short think gaps
/// (exponential, mean `think_s`) or, with probability `read_share`, by
/// reading gaps (exponential, mean `read_s`). Arrival brings a login burst.
///
/// Writes go through a page cache as on Linux: a journal commit at the
/// next `commit_s` tick after a write (ext4's `commit=5`), and the dirty
/// data written back by the flusher, which wakes every 5 s
/// (`dirty_writeback_centisecs=500`) and writes what has been dirty for
/// `expire_s` (`dirty_expire_centisecs=3000`). So a session's last write
/// is followed by a journal write within 5 s and a write-back 30–35 s
/// later, and then by silence: the shape laptop-mode tools were written
/// for.
///
/// All day, a background client syncs every `daemon_s` (two synchronous
/// writes) and an hourly job (`cron_s`) reads a few files: nights are
/// periodic idle periods of `daemon_s`, long against any break-even.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Office {
    /// Mean arrival time, hours after midnight.
    pub arrive_h: f64,
    /// Mean departure time, hours after midnight.
    pub leave_h: f64,
    /// Mean start of lunch, hours after midnight.
    pub lunch_h: f64,
    /// Length of lunch, minutes.
    pub lunch_min: f64,
    /// Standard deviation of arrival, lunch and departure, minutes.
    pub shift_sd_min: f64,
    /// Mean length of a work session, minutes.
    pub session_min: f64,
    /// Median away spell, minutes (log-normal, σ = 0.7, 30 s to 45 min).
    pub away_min: f64,
    /// Mean think gap between bursts, seconds.
    pub think_s: f64,
    /// Mean reading gap between bursts, seconds.
    pub read_s: f64,
    /// Share of gaps in a session that are reading gaps.
    pub read_share: f64,
    /// Mean requests per burst.
    pub burst_mean: f64,
    /// Share of the user's requests that are writes.
    pub write_share: f64,
    /// Journal commit interval, seconds.
    pub commit_s: f64,
    /// Age at which dirty data is written back, seconds.
    pub expire_s: f64,
    /// Period of the background client's sync, seconds.
    pub daemon_s: f64,
    /// Period of the hourly job, seconds.
    pub cron_s: f64,
}

/// The `office` parameters.
pub const OFFICE: Office = Office {
    arrive_h: 8.5,
    leave_h: 17.5,
    lunch_h: 12.25,
    lunch_min: 45.0,
    shift_sd_min: 20.0,
    session_min: 25.0,
    away_min: 4.0,
    think_s: 1.5,
    read_s: 30.0,
    read_share: 0.15,
    burst_mean: 5.0,
    write_share: 0.35,
    commit_s: 5.0,
    expire_s: 30.0,
    daemon_s: 300.0,
    cron_s: 3600.0,
};

/// A home NAS (`home-nas`).
///
/// Most evenings (probability `stream_p`) someone streams a film or a
/// series from it: starting around `stream_start_h` (normal,
/// `stream_sd_min`), lasting a log-normal time of median `stream_h`, the
/// player refilling its buffer every `chunk_s` (±10 %) with `chunk_mib`
/// MiB of sequential reads: regular gaps longer than a 2.5" drive's
/// break-even and shorter than a 3.5" NAS drive's. A nightly backup starts
/// at `backup_h` (plus up to 10 minutes): a metadata scan (small reads),
/// then a log-normal `backup_min` (median) of 1 MiB sequential writes,
/// `backup_gap_s` apart on average.
/// During the day (07:00–23:00) people open files now and then (Poisson,
/// `visits_per_h`), a few minutes of small reads each. Between them,
/// hours of silence broken only by the NAS's own pokes: a SMART poll every
/// `smart_s` (smartd's default interval is 30 minutes) and a metadata
/// write (logs, indexes) every `meta_s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HomeNas {
    /// Probability of an evening stream.
    pub stream_p: f64,
    /// Mean start of the stream, hours after midnight.
    pub stream_start_h: f64,
    /// Standard deviation of the start, minutes.
    pub stream_sd_min: f64,
    /// Median length of the stream, hours (log-normal, σ = 0.4, 0.5–5 h).
    pub stream_h: f64,
    /// Buffer refill period of the player, seconds.
    pub chunk_s: f64,
    /// MiB read per refill.
    pub chunk_mib: u32,
    /// Start of the nightly backup, hours after midnight.
    pub backup_h: f64,
    /// Median length of the backup's writing phase, minutes.
    pub backup_min: f64,
    /// Mean gap between the backup's 1 MiB writes, seconds (an
    /// incremental backup over the network: a few MB/s).
    pub backup_gap_s: f64,
    /// File-access visits per hour between 07:00 and 23:00.
    pub visits_per_h: f64,
    /// Period of the SMART poll, seconds.
    pub smart_s: f64,
    /// Period of the metadata write, seconds.
    pub meta_s: f64,
}

/// The `home-nas` parameters.
pub const HOME_NAS: HomeNas = HomeNas {
    stream_p: 0.85,
    stream_start_h: 19.5,
    stream_sd_min: 45.0,
    stream_h: 2.5,
    chunk_s: 10.0,
    chunk_mib: 4,
    backup_h: 2.0,
    backup_min: 25.0,
    backup_gap_s: 0.25,
    visits_per_h: 0.3,
    smart_s: 1800.0,
    meta_s: 3600.0,
};

/// A database disk with checkpoints (`db-checkpoint`).
///
/// The load is Markov-modulated: a busy regime (exponential holding time,
/// mean `busy_min`) and a quiet one (mean `quiet_min`) alternate, each
/// with Poisson transactions (`busy_tps`, `quiet_tps`). A transaction
/// reads a page (8 KiB, random) with probability 0.7 and, with
/// probability `update_share`, commits: a sequential 8 KiB WAL write that
/// dirties two pages. Every `checkpoint_s` (PostgreSQL's
/// `checkpoint_timeout = 5min`) a checkpoint writes the dirty pages,
/// paced to finish within `completion · checkpoint_s`
/// (`checkpoint_completion_target = 0.9`) but no slower than one page
/// per 100 ms, then updates the control file; a checkpoint with nothing
/// dirty is skipped, as PostgreSQL does. So quiet hours are a slow
/// Poisson trickle with a checkpoint burst every 5 minutes, and busy hours
/// leave no idle time worth a spin-down: the regime, not the last gap,
/// tells what comes next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DbCheckpoint {
    /// Mean length of a busy regime, minutes.
    pub busy_min: f64,
    /// Mean length of a quiet regime, minutes.
    pub quiet_min: f64,
    /// Transactions per second while busy.
    pub busy_tps: f64,
    /// Transactions per second while quiet.
    pub quiet_tps: f64,
    /// Share of transactions that write (commit to the WAL).
    pub update_share: f64,
    /// Checkpoint period, seconds.
    pub checkpoint_s: f64,
    /// Share of the period a checkpoint may spread its writes over.
    pub completion: f64,
}

/// The `db-checkpoint` parameters.
pub const DB_CHECKPOINT: DbCheckpoint = DbCheckpoint {
    busy_min: 40.0,
    quiet_min: 60.0,
    busy_tps: 2.0,
    quiet_tps: 1.0 / 60.0,
    update_share: 0.6,
    checkpoint_s: 300.0,
    completion: 0.9,
};

/// A small server with scheduled work (`cron-server`).
///
/// Its clients keep it busy in the daytime (from around `day_start_h` to
/// around `day_end_h`, each moved by a normal draw of `shift_sd_min`):
/// bursts of requests (geometric, mean `burst_mean`) separated by
/// exponential gaps of mean `day_gap_s`. Outside those hours the bursts
/// are rare and their gaps heavy-tailed: Pareto with least gap
/// `quiet_gap_s` and shape `quiet_alpha` (most are minutes, a few are
/// hours). Day and night, scheduled work runs on the wall clock: a cron
/// job every `cron_s` on the tick (`*/5 * * * *`: a few reads and a log
/// append), an application checkpoint every `checkpoint_s` at
/// `checkpoint_offset_s` past the tick (a burst of page writes), and an
/// hourly job at `hourly_offset_s` past the hour (a scan of small reads),
/// each a few milliseconds late (timer slack). So in the quiet hours
/// every idle period is capped by the next scheduled arrival, and what
/// the disk may sleep is the time between those arrivals when no client
/// comes: the periodic structure `periodic()` learns (issue 29).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CronServer {
    /// Mean start of the busy daytime, hours after midnight.
    pub day_start_h: f64,
    /// Mean end of the busy daytime, hours after midnight.
    pub day_end_h: f64,
    /// Standard deviation of start and end, minutes.
    pub shift_sd_min: f64,
    /// Mean gap between daytime bursts, seconds (exponential).
    pub day_gap_s: f64,
    /// Least gap between quiet-hour bursts, seconds (Pareto scale).
    pub quiet_gap_s: f64,
    /// Pareto shape of quiet-hour gaps (smaller: heavier tail).
    pub quiet_alpha: f64,
    /// Mean requests per client burst.
    pub burst_mean: f64,
    /// Period of the cron job, seconds.
    pub cron_s: f64,
    /// Period of the checkpoint, seconds.
    pub checkpoint_s: f64,
    /// Offset of the checkpoint after the period's tick, seconds.
    pub checkpoint_offset_s: f64,
    /// Offset of the hourly job after the hour, seconds.
    pub hourly_offset_s: f64,
}

/// The `cron-server` parameters.
pub const CRON_SERVER: CronServer = CronServer {
    day_start_h: 8.0,
    day_end_h: 19.0,
    shift_sd_min: 30.0,
    day_gap_s: 6.0,
    quiet_gap_s: 40.0,
    quiet_alpha: 1.1,
    burst_mean: 4.0,
    cron_s: 300.0,
    checkpoint_s: 900.0,
    checkpoint_offset_s: 450.0,
    hourly_offset_s: 1020.0,
};

/// One request before service.
#[derive(Clone, Copy, Debug)]
struct Job {
    at: f64,
    service: f64,
    op: Op,
    sector: u64,
    bytes: u32,
}

/// Requests of all sources, and the disk position sequential ones follow.
struct Jobs {
    jobs: Vec<Job>,
    cursor: u64,
}

impl Jobs {
    fn new() -> Self {
        Jobs {
            jobs: Vec::new(),
            cursor: 0,
        }
    }

    /// One request at `at`; a random one seeks first.
    fn io(&mut self, rng: &mut Pcg64, at: f64, op: Op, bytes: u32, sequential: bool) {
        let positioning = if sequential {
            0.000_2
        } else {
            self.cursor = rng.random_range(0..1 << 31);
            0.002 + exp(rng, 0.005)
        };
        self.jobs.push(Job {
            at,
            service: positioning + f64::from(bytes) / 150e6,
            op,
            sector: self.cursor,
            bytes,
        });
        self.cursor += u64::from(bytes / 512);
    }

    /// `n` requests from `at`, `think` seconds apart on average, mostly
    /// sequential; writes with probability `write_share`. Returns the time
    /// of the last request and the times of the writes.
    fn burst(
        &mut self,
        rng: &mut Pcg64,
        at: f64,
        n: u32,
        think: f64,
        write_share: f64,
        writes: &mut Vec<f64>,
    ) -> f64 {
        let mut t = at;
        for i in 0..n {
            if i > 0 {
                t += exp(rng, think);
            }
            let op = if rng.random::<f64>() < write_share {
                writes.push(t);
                Op::Write
            } else {
                Op::Read
            };
            let bytes = 4096 << rng.random_range(0..5u32);
            let sequential = i > 0 && rng.random::<f64>() < 0.7;
            self.io(rng, t, op, bytes, sequential);
        }
        t
    }

    /// Serves the requests before `end` first-come first-served.
    fn serve(mut self, name: &str, end: f64) -> Trace {
        self.jobs.retain(|j| j.at >= 0.0 && j.at < end);
        self.jobs.sort_by(|a, b| a.at.total_cmp(&b.at));
        let mut trace = Trace::new("synthetic");
        let dev = trace.device_id(&format!("synth:{name}"));
        trace.clock = Some(Nanos::from_secs(EPOCH_UNIX_S));
        let mut free = 0.0f64;
        trace.requests.reserve(self.jobs.len());
        for j in self.jobs {
            free = j.at.max(free) + j.service;
            trace.requests.push(
                Request::new(
                    Nanos::from_secs_f64(j.at),
                    Nanos::from_secs_f64(free),
                    j.op,
                    j.sector,
                    j.bytes,
                )
                .on_device(dev),
            );
        }
        trace
    }
}

/// Source tags of the random streams.
const USER: u64 = 1;
const DAEMON: u64 = 2;
const CACHE: u64 = 3;
const STREAM: u64 = 4;
const BACKUP: u64 = 5;
const VISIT: u64 = 6;
const LOAD: u64 = 7;
const HOURLY: u64 = 8;
const FLUSH: u64 = 9;
const CHECKPOINT: u64 = 10;

/// An independent random stream for `source` on `day`.
fn stream(seed: u64, source: u64, day: u64) -> Pcg64 {
    // SplitMix64's finalizer: nearby (seed, source, day) give unrelated
    // seeds.
    let mut z =
        seed ^ source.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ day.wrapping_mul(0xd1b5_4a32_d192_ed03);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    Pcg64::seed_from_u64(z ^ (z >> 31))
}

fn lognormal(rng: &mut Pcg64, median: f64, sigma: f64) -> f64 {
    median * (sigma * normal(rng)).exp()
}

/// A geometric count with mean `mean` (at least 1).
fn geometric(rng: &mut Pcg64, mean: f64) -> u32 {
    let p = 1.0 / mean.max(1.0);
    let mut n = 1;
    while rng.random::<f64>() > p && n < 10_000 {
        n += 1;
    }
    n
}

/// The first multiple of `period` strictly after `t`.
fn next_tick(t: f64, period: f64) -> f64 {
    ((t / period).floor() + 1.0) * period
}

/// Days that overlap `[0, end)`.
fn days(end: f64) -> u64 {
    (end / DAY_S).ceil().max(1.0) as u64
}

/// Periodic pokes from `offset`, every `period`: `n` requests of `op`
/// each, a few milliseconds late (timer slack).
fn periodic(jobs: &mut Jobs, rng: &mut Pcg64, end: f64, period: f64, offset: f64, n: u32, op: Op) {
    let mut t = offset;
    while t < end {
        let mut at = t + exp(rng, 0.005);
        for i in 0..n {
            jobs.io(rng, at, op, 4096, i > 0);
            at += exp(rng, 0.001);
        }
        t += period;
    }
}

/// The page cache's writes for the user's write times `writes` (sorted):
/// journal commits at the next `commit_s` tick after each write, and
/// write-back of data dirty for `expire_s` at the flusher's 5 s ticks.
/// Each draws from its own stream, in time order, so a longer trace
/// starts with the shorter one.
fn page_cache(jobs: &mut Jobs, seed: u64, writes: &[f64], commit_s: f64, expire_s: f64) {
    let mut rng = stream(seed, CACHE, 0);
    let mut last_commit = f64::NEG_INFINITY;
    for &w in writes {
        let c = next_tick(w, commit_s);
        if c > last_commit {
            jobs.io(&mut rng, c, Op::Write, 4096, false);
            jobs.io(&mut rng, c + 0.000_5, Op::Write, 4096, true);
            last_commit = c;
        }
    }
    let rng = &mut stream(seed, FLUSH, 0);
    let mut i = 0;
    while i < writes.len() {
        let flush = next_tick(writes[i] + expire_s, 5.0);
        let j = i + writes[i..].partition_point(|&w| w + expire_s <= flush);
        let mut at = flush + exp(rng, 0.002);
        for k in 0..(j - i).clamp(1, 64) {
            let bytes = 4096 << rng.random_range(0..4u32);
            jobs.io(rng, at, Op::Write, bytes, k % 4 != 0);
            at += exp(rng, 0.001);
        }
        i = j.max(i + 1);
    }
}

/// Hours after midnight of `day` as trace seconds.
fn at_hour(day: u64, h: f64) -> f64 {
    day as f64 * DAY_S + h * 3600.0
}

/// Generates `end` seconds of [`Office`].
pub(super) fn office(p: &Office, name: &str, end: f64, seed: u64) -> Trace {
    let mut jobs = Jobs::new();
    let mut writes = Vec::new();
    for day in 0..days(end) {
        let mut rng = stream(seed, USER, day);
        let sd = p.shift_sd_min * 60.0;
        let arrive = at_hour(day, p.arrive_h) + sd * normal(&mut rng);
        let lunch = at_hour(day, p.lunch_h) + sd * 0.5 * normal(&mut rng);
        let back = lunch + p.lunch_min * 60.0 * (1.0 + 0.2 * normal(&mut rng)).max(0.3);
        let leave = at_hour(day, p.leave_h) + sd * normal(&mut rng);
        // Login: applications load.
        jobs.burst(&mut rng, arrive, 80, 0.01, 0.1, &mut writes);
        for (from, to) in [(arrive + 30.0, lunch), (back, leave)] {
            let mut t = from;
            while t < to {
                let session_end = (t + exp(&mut rng, p.session_min * 60.0)).min(to);
                while t < session_end {
                    let n = geometric(&mut rng, p.burst_mean);
                    let last = jobs.burst(&mut rng, t, n, 0.005, p.write_share, &mut writes);
                    let gap = if rng.random::<f64>() < p.read_share {
                        exp(&mut rng, p.read_s)
                    } else {
                        exp(&mut rng, p.think_s)
                    };
                    t = last + gap;
                }
                t += lognormal(&mut rng, p.away_min * 60.0, 0.7).clamp(30.0, 2700.0);
            }
        }
    }
    writes.sort_by(f64::total_cmp);
    page_cache(&mut jobs, seed, &writes, p.commit_s, p.expire_s);
    let mut rng = stream(seed, DAEMON, 0);
    let offset = rng.random_range(0.0..p.daemon_s);
    periodic(&mut jobs, &mut rng, end, p.daemon_s, offset, 2, Op::Write);
    let mut rng = stream(seed, HOURLY, 0);
    periodic(
        &mut jobs,
        &mut rng,
        end,
        p.cron_s,
        17.0 * 60.0,
        20,
        Op::Read,
    );
    jobs.serve(name, end)
}

/// Generates `end` seconds of [`HomeNas`].
pub(super) fn home_nas(p: &HomeNas, name: &str, end: f64, seed: u64) -> Trace {
    let mut jobs = Jobs::new();
    let mut unused = Vec::new();
    for day in 0..days(end) {
        // The evening stream.
        let mut rng = stream(seed, STREAM, day);
        if rng.random::<f64>() < p.stream_p {
            let start = at_hour(day, p.stream_start_h) + p.stream_sd_min * 60.0 * normal(&mut rng);
            let len = lognormal(&mut rng, p.stream_h * 3600.0, 0.4).clamp(1800.0, 5.0 * 3600.0);
            let mut t = start;
            jobs.io(&mut rng, t, Op::Read, 65536, false);
            while t < start + len {
                for k in 0..p.chunk_mib {
                    jobs.io(&mut rng, t + f64::from(k) * 0.001, Op::Read, 1 << 20, true);
                }
                t += p.chunk_s * rng.random_range(0.9..1.1);
            }
        }
        // The nightly backup: a metadata scan, then the data.
        let mut rng = stream(seed, BACKUP, day);
        let start = at_hour(day, p.backup_h) + rng.random_range(0.0..600.0);
        let mut t = start;
        for _ in 0..300 {
            jobs.io(&mut rng, t, Op::Read, 4096, false);
            t += exp(&mut rng, 0.2);
        }
        let stop = t + lognormal(&mut rng, p.backup_min * 60.0, 0.5).clamp(300.0, 3.0 * 3600.0);
        while t < stop {
            jobs.io(&mut rng, t, Op::Write, 1 << 20, true);
            t += exp(&mut rng, p.backup_gap_s);
        }
        // Daytime visits.
        let mut rng = stream(seed, VISIT, day);
        let mut t = at_hour(day, 7.0);
        loop {
            t += exp(&mut rng, 3600.0 / p.visits_per_h);
            if t >= at_hour(day, 23.0) {
                break;
            }
            let stop = t + lognormal(&mut rng, 180.0, 0.6);
            let mut s = t;
            while s < stop {
                let n = 3 + rng.random_range(0..8u32);
                s = jobs.burst(&mut rng, s, n, 0.01, 0.05, &mut unused) + exp(&mut rng, 4.0);
            }
        }
    }
    let mut rng = stream(seed, DAEMON, 0);
    let offset = rng.random_range(0.0..p.smart_s);
    periodic(&mut jobs, &mut rng, end, p.smart_s, offset, 1, Op::Read);
    let mut rng = stream(seed, HOURLY, 0);
    periodic(&mut jobs, &mut rng, end, p.meta_s, 600.0, 2, Op::Write);
    jobs.serve(name, end)
}

/// Generates `end` seconds of [`CronServer`].
pub(super) fn cron_server(p: &CronServer, name: &str, end: f64, seed: u64) -> Trace {
    let mut jobs = Jobs::new();
    let mut unused = Vec::new();
    for day in 0..days(end) {
        let mut rng = stream(seed, USER, day);
        let sd = p.shift_sd_min * 60.0;
        let start = at_hour(day, p.day_start_h) + sd * normal(&mut rng);
        let stop = at_hour(day, p.day_end_h) + sd * normal(&mut rng);
        let mut t = at_hour(day, 0.0);
        let next_day = at_hour(day + 1, 0.0);
        while t < next_day {
            let n = geometric(&mut rng, p.burst_mean);
            let last = jobs.burst(&mut rng, t, n, 0.01, 0.3, &mut unused);
            let gap = if (start..stop).contains(&last) {
                exp(&mut rng, p.day_gap_s)
            } else {
                // Pareto: scale / U^(1/alpha).
                p.quiet_gap_s / (1.0 - rng.random::<f64>()).powf(1.0 / p.quiet_alpha)
            };
            t = last + gap;
        }
    }
    // Scheduled work, on the wall clock.
    let mut rng = stream(seed, DAEMON, 0);
    let mut k = 1.0;
    while k * p.cron_s < end {
        let mut at = k * p.cron_s + exp(&mut rng, 0.005);
        for i in 0..4 {
            let op = if i == 3 { Op::Write } else { Op::Read };
            jobs.io(&mut rng, at, op, 4096, i > 0);
            at += exp(&mut rng, 0.002);
        }
        k += 1.0;
    }
    let mut rng = stream(seed, CHECKPOINT, 0);
    let mut t = p.checkpoint_offset_s;
    while t < end {
        let mut at = t + exp(&mut rng, 0.005);
        for i in 0..16 {
            jobs.io(&mut rng, at, Op::Write, 8192, i % 4 != 0);
            at += exp(&mut rng, 0.02);
        }
        t += p.checkpoint_s;
    }
    let mut rng = stream(seed, HOURLY, 0);
    periodic(
        &mut jobs,
        &mut rng,
        end,
        3600.0,
        p.hourly_offset_s,
        24,
        Op::Read,
    );
    jobs.serve(name, end)
}

/// Generates `end` seconds of [`DbCheckpoint`].
pub(super) fn db_checkpoint(p: &DbCheckpoint, name: &str, end: f64, seed: u64) -> Trace {
    let mut jobs = Jobs::new();
    let mut rng = stream(seed, LOAD, 0);
    // The regime at time 0 is drawn from the chain's stationary law.
    let mut busy = rng.random::<f64>() < p.busy_min / (p.busy_min + p.quiet_min);
    let mut t = 0.0f64;
    // Commit times, for the checkpoints.
    let mut commits = Vec::new();
    while t < end {
        let regime_end = t + exp(&mut rng, 60.0 * if busy { p.busy_min } else { p.quiet_min });
        let tps = if busy { p.busy_tps } else { p.quiet_tps };
        loop {
            t += exp(&mut rng, 1.0 / tps);
            if t >= regime_end.min(end) {
                break;
            }
            let mut at = t;
            if rng.random::<f64>() < 0.7 {
                jobs.io(&mut rng, at, Op::Read, 8192, false);
                at += 0.001;
            }
            if rng.random::<f64>() < p.update_share {
                // The WAL is its own sequential stream: a seek to it.
                jobs.io(&mut rng, at, Op::Write, 8192, false);
                commits.push(at);
            }
        }
        t = regime_end;
        busy = !busy;
    }
    // Checkpoints: the pages dirtied since the last one (two per commit).
    let mut ck = stream(seed, CACHE, 0);
    let mut k = 1.0;
    let mut done = 0;
    while k * p.checkpoint_s < end {
        let at = k * p.checkpoint_s;
        let upto = commits.partition_point(|&c| c < at);
        let dirty = ((upto - done) * 2).min(20_000);
        done = upto;
        if dirty > 0 {
            let spacing = (p.completion * p.checkpoint_s / dirty as f64).min(0.1);
            let mut w = at + exp(&mut ck, 0.005);
            for _ in 0..dirty {
                jobs.io(&mut ck, w, Op::Write, 8192, false);
                w += spacing;
            }
            jobs.io(&mut ck, w, Op::Write, 8192, false);
        }
        k += 1.0;
    }
    jobs.serve(name, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_cache_commits_on_the_tick_and_writes_back_after_expiry() {
        let mut jobs = Jobs::new();
        page_cache(&mut jobs, 1, &[1.0, 2.0, 50.0], 5.0, 30.0);
        let mut at: Vec<f64> = jobs.jobs.iter().map(|j| j.at).collect();
        at.sort_by(f64::total_cmp);
        let near = |t: f64| at.iter().filter(|&&a| (a - t).abs() < 0.1).count();
        // One journal commit (two writes) for the writes at 1 s and 2 s,
        // one for the write at 50 s.
        assert_eq!(near(5.0), 2, "{at:?}");
        assert_eq!(near(55.0), 2, "{at:?}");
        // Both early writes are 30 s old at the flusher's tick at 35 s:
        // one write-back of two pages; the late one at 85 s.
        assert_eq!(near(35.0), 2, "{at:?}");
        assert_eq!(near(85.0), 1, "{at:?}");
        assert_eq!(at.len(), 7);
        assert!(jobs.jobs.iter().all(|j| j.op == Op::Write));
    }

    #[test]
    fn next_tick_is_strictly_after() {
        assert_eq!(next_tick(0.0, 5.0), 5.0);
        assert_eq!(next_tick(4.9, 5.0), 5.0);
        assert_eq!(next_tick(5.0, 5.0), 10.0);
    }

    #[test]
    fn streams_differ_by_source_and_day() {
        let draw = |s, src, d| stream(s, src, d).random::<u64>();
        assert_ne!(draw(1, USER, 0), draw(1, USER, 1));
        assert_ne!(draw(1, USER, 0), draw(1, DAEMON, 0));
        assert_ne!(draw(1, USER, 0), draw(2, USER, 0));
        assert_eq!(draw(1, USER, 3), draw(1, USER, 3));
    }
}
