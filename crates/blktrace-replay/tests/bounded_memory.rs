//! Streams generated multi-GB inputs through the readers and checks that
//! peak memory stays far below the input size: the readers hold one
//! record (blktrace) or one line (text) at a time, plus the requests.
//!
//! Not run in CI (minutes of CPU). Run with
//! `cargo test --release -p lull-blktrace-replay --test bounded_memory -- --ignored --nocapture`;
//! `LULL_BIG_GB` sets the size of each input (default 4).

use std::io::Read;
use std::path::Path;

use lull_blktrace_replay::{ReadOptions, read_from};

/// Rewrites the pattern for a round (its times).
type Stamp = dyn FnMut(&mut [u8], u64) + Send;

/// An input generated on the fly from a repeating pattern, `total` bytes
/// long (cut at a whole pattern).
struct Repeat {
    pattern: Vec<u8>,
    pos: usize,
    left: u64,
    round: u64,
    stamp: Box<Stamp>,
}

impl Read for Repeat {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        if self.pos == self.pattern.len() {
            self.pos = 0;
            self.round += 1;
            (self.stamp)(&mut self.pattern, self.round);
        }
        let n = buf
            .len()
            .min(self.pattern.len() - self.pos)
            .min(self.left as usize);
        buf[..n].copy_from_slice(&self.pattern[self.pos..self.pos + n]);
        self.pos += n;
        self.left -= n as u64;
        Ok(n)
    }
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn gigabytes() -> u64 {
    std::env::var("LULL_BIG_GB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4)
}

fn record(time: u64, action: u32, sector: u64, pdu: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(48 + pdu);
    v.extend((0x6561_7400u32 | 7).to_le_bytes());
    v.extend(1u32.to_le_bytes());
    v.extend(time.to_le_bytes());
    v.extend(sector.to_le_bytes());
    v.extend(4096u32.to_le_bytes());
    v.extend(action.to_le_bytes());
    v.extend(1u32.to_le_bytes());
    v.extend(((8u32 << 20) | 16).to_le_bytes());
    v.extend(0u32.to_le_bytes());
    v.extend([0, 0]);
    v.extend((pdu as u16).to_le_bytes());
    v.resize(48 + pdu, 0);
    v
}

/// Writes the round's time into the Q and C records of the pattern.
fn stamp_blktrace(p: &mut [u8], round: u64) {
    let t = round * 10_000_000;
    p[8..16].copy_from_slice(&t.to_le_bytes());
    p[48 + 8..48 + 16].copy_from_slice(&(t + 1_000).to_le_bytes());
}

#[test]
#[ignore = "streams several GB; run by hand"]
fn blktrace_stream_is_bounded() {
    let total = gigabytes() << 30;
    let q = 1 | ((1 << 4 | 1 << 1) << 16);
    let c = 8 | ((1 << 7 | 1 << 1) << 16);
    let message = 2 | (1 << 26);
    let mut pattern = record(0, q, 8, 0);
    pattern.extend(record(0, c, 8, 0));
    // A scheduler message with a large payload: read and thrown away.
    pattern.extend(record(0, message, 0, 60_000));
    let per = pattern.len() as u64;
    let input = Repeat {
        pattern,
        pos: 0,
        left: total / per * per,
        round: 0,
        stamp: Box::new(stamp_blktrace),
    };
    let start = std::time::Instant::now();
    let t = read_from(
        input,
        Path::new("generated.blktrace"),
        ReadOptions::default(),
    )
    .unwrap();
    let secs = start.elapsed().as_secs_f64();
    let rss = peak_rss_mb();
    println!(
        "blktrace: {} GiB, {} requests in {secs:.1} s ({:.0} MB/s), peak RSS {rss:.0} MB",
        total >> 30,
        t.requests.len(),
        total as f64 / 1e6 / secs
    );
    assert_eq!(t.requests.len() as u64, total / per);
    assert!(
        rss < 256.0,
        "peak RSS {rss} MB for a {} GiB input",
        total >> 30
    );
}

#[test]
#[ignore = "streams several GB; run by hand"]
fn blkparse_stream_is_bounded() {
    let total = gigabytes() << 30;
    // One Q and one C per round, both stamped with the round's seconds,
    // and 200 plug lines the reader parses and ignores.
    let q = "  8,0    0        1 SSSSSSSSSSSS.000000001   100  Q  WS 4096 + 8 [fio]\n";
    let c = "  8,0    1        2 SSSSSSSSSSSS.000500000     0  C  WS 4096 + 8 [0]\n";
    let p = "  8,0    0        3            0.000000003   100  P   N [fio]\n";
    let mut text = String::from(q);
    for _ in 0..200 {
        text.push_str(p);
    }
    let c_at = text.len();
    text.push_str(c);
    let pattern = text.into_bytes();
    let q_at = q.find('S').unwrap();
    let c_at = c_at + c.find('S').unwrap();
    assert_eq!(&pattern[q_at..q_at + 12], b"SSSSSSSSSSSS");
    assert_eq!(&pattern[c_at..c_at + 12], b"SSSSSSSSSSSS");
    let per = pattern.len() as u64;
    let stamp = move |p: &mut [u8], round: u64| {
        let s = format!("{:>12}", round);
        p[q_at..q_at + 12].copy_from_slice(s.as_bytes());
        p[c_at..c_at + 12].copy_from_slice(s.as_bytes());
    };
    let mut pattern = pattern;
    stamp(&mut pattern, 0);
    let input = Repeat {
        pattern,
        pos: 0,
        left: total / per * per,
        round: 0,
        stamp: Box::new(stamp),
    };
    let start = std::time::Instant::now();
    let t = read_from(input, Path::new("generated.txt"), ReadOptions::default()).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let rss = peak_rss_mb();
    println!(
        "blkparse: {} GiB, {} requests in {secs:.1} s ({:.0} MB/s), peak RSS {rss:.0} MB",
        total >> 30,
        t.requests.len(),
        total as f64 / 1e6 / secs
    );
    assert_eq!(t.requests.len() as u64, total / per);
    assert!(
        rss < 512.0,
        "peak RSS {rss} MB for a {} GiB input",
        total >> 30
    );
}
