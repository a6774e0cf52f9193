//! Trace-reader throughput (issue 5): MB/s and events/s of every format on
//! generated in-memory data (the same synthetic requests rendered in each
//! format), through the public sniffing entry point `read_from`.
//!
//! `cargo bench --bench parsers`

use std::hint::black_box;
use std::io::Write;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lull_blktrace_replay::{ReadOptions, Trace, normalized, read_from, synth};
use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

const REQUESTS: usize = 100_000;

fn requests() -> Vec<Request> {
    let shape = synth::shape("database").expect("built-in workload");
    let mut t = synth::generate(shape, Nanos::from_secs(3_600), 7);
    t.requests.truncate(REQUESTS);
    t.requests
}

/// blktrace: Q, G, I, D, C records per request, all CPUs in one stream
/// sorted by time (as `blkparse -d` writes them).
fn blktrace(reqs: &[Request]) -> (Vec<u8>, u64) {
    let mut events: Vec<(u64, u32, &Request)> = Vec::with_capacity(reqs.len() * 5);
    for r in reqs {
        let a = r.arrival.0;
        for (dt, act) in [(0, 1), (200, 4), (400, 12), (600, 7)] {
            events.push((a + dt, act, r));
        }
        events.push((r.completion.0.max(a + 700), 8, r));
    }
    events.sort_by_key(|e| e.0);
    let mut out = Vec::with_capacity(events.len() * 48);
    for (t, act, r) in &events {
        let cat: u32 = if r.op == Op::Write { 2 } else { 1 };
        out.extend((0x6561_7400u32 | 7).to_le_bytes());
        out.extend(1u32.to_le_bytes());
        out.extend(t.to_le_bytes());
        out.extend(r.sector.to_le_bytes());
        out.extend(r.bytes.to_le_bytes());
        out.extend((act | (cat << 16)).to_le_bytes());
        out.extend(100u32.to_le_bytes());
        out.extend(((8u32 << 20) | 16).to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend([0u8; 4]);
    }
    (out, events.len() as u64)
}

/// blkparse default text for the same events.
fn blkparse(reqs: &[Request]) -> (Vec<u8>, u64) {
    let (bin, n) = blktrace(reqs);
    let mut out = Vec::with_capacity(bin.len() * 2);
    for rec in bin.chunks_exact(48) {
        let t = u64::from_le_bytes(rec[8..16].try_into().unwrap());
        let sector = u64::from_le_bytes(rec[16..24].try_into().unwrap());
        let bytes = u32::from_le_bytes(rec[24..28].try_into().unwrap());
        let action = u32::from_le_bytes(rec[28..32].try_into().unwrap());
        let a = match action & 0xff {
            1 => "Q",
            4 => "G",
            12 => "I",
            7 => "D",
            _ => "C",
        };
        let rwbs = if action >> 16 == 2 { "W" } else { "R" };
        writeln!(
            out,
            "  8,16   1 {:>8} {:>5}.{:09}   100  {a} {rwbs:>3} {sector} + {} [bench]",
            1,
            t / 1_000_000_000,
            t % 1_000_000_000,
            bytes / 512
        )
        .unwrap();
    }
    (out, n)
}

fn csv(reqs: &[Request], row: impl Fn(&mut Vec<u8>, &Request)) -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(reqs.len() * 60);
    for r in reqs {
        row(&mut out, r);
    }
    (out, reqs.len() as u64)
}

fn rw(r: &Request) -> &'static str {
    if r.op == Op::Write { "W" } else { "R" }
}

fn vscsi(reqs: &[Request]) -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(reqs.len() * 32);
    for (i, r) in reqs.iter().enumerate() {
        out.extend((0x8000_0000u32 | i as u32).to_le_bytes());
        out.extend(r.bytes.to_le_bytes());
        out.extend(1u32.to_le_bytes());
        out.extend(if r.op == Op::Write { 0x2au16 } else { 0x28 }.to_le_bytes());
        out.extend(0x0100u16.to_le_bytes());
        out.extend(r.sector.to_le_bytes());
        out.extend((r.arrival.0 / 1_000).to_le_bytes());
    }
    (out, reqs.len() as u64)
}

fn inputs() -> Vec<(&'static str, Vec<u8>, u64)> {
    let reqs = requests();
    let base = 1_456_095_145_000_000_000u64;
    let mut v = Vec::new();
    let (b, n) = blktrace(&reqs);
    v.push(("blktrace", b, n));
    let (b, n) = blkparse(&reqs);
    v.push(("blkparse", b, n));
    let (b, n) = csv(&reqs, |o, r| {
        let ticks = 128_166_385_295_514_663u64 + r.arrival.0 / 100;
        let kind = if r.op == Op::Write { "Write" } else { "Read" };
        let resp = r.response().0 / 100;
        writeln!(
            o,
            "{ticks},hm,0,{kind},{},{},{resp}",
            r.sector * 512,
            r.bytes
        )
        .unwrap();
    });
    v.push(("msr", b, n));
    let (b, n) = csv(&reqs, |o, r| {
        let t = r.arrival.0;
        let op = rw(r).to_ascii_lowercase();
        writeln!(
            o,
            "0,{},{},{op},{}.{:06}",
            r.sector,
            r.bytes,
            t / 1_000_000_000,
            t % 1_000_000_000 / 1_000
        )
        .unwrap();
    });
    v.push(("spc", b, n));
    let (b, n) = vscsi(&reqs);
    v.push(("vscsi", b, n));
    let (mut b, n) = csv(&reqs, |o, r| {
        let t = base + r.arrival.0;
        let resp = r.response().0;
        writeln!(
            o,
            "{}.{:09},{}.{:09},{},0,{},{}",
            t / 1_000_000_000,
            t % 1_000_000_000,
            resp / 1_000_000_000,
            resp % 1_000_000_000,
            rw(r),
            r.sector * 512,
            r.bytes
        )
        .unwrap();
    });
    b.splice(
        0..0,
        b"Timestamp,Response,IOType,LUN,Offset,Size\n"
            .iter()
            .copied(),
    );
    v.push(("systor", b, n));
    let (b, n) = csv(&reqs, |o, r| {
        let op = u8::from(r.op == Op::Write);
        writeln!(
            o,
            "{},{},{},{op},1063",
            1_538_323_199 + r.arrival.0 / 1_000_000_000,
            r.sector,
            r.bytes / 512
        )
        .unwrap();
    });
    v.push(("tencent", b, n));
    let (b, n) = csv(&reqs, |o, r| {
        writeln!(
            o,
            "419,{},{},{},{}",
            rw(r),
            r.sector * 512,
            r.bytes,
            1_577_808_000_000_000 + r.arrival.0 / 1_000
        )
        .unwrap();
    });
    v.push(("alibaba", b, n));
    let mut t = Trace::new("bench");
    t.device_id("8,16");
    t.requests = reqs.clone();
    let mut b = Vec::new();
    normalized::write(&t, &mut b).unwrap();
    v.push(("normalized-csv", b, reqs.len() as u64));
    v
}

fn parse(data: &[u8]) -> Trace {
    read_from(
        std::io::Cursor::new(data.to_vec()),
        Path::new("bench"),
        ReadOptions::default(),
    )
    .expect("generated input parses")
}

fn bench(c: &mut Criterion) {
    let inputs = inputs();
    for (name, data, _) in &inputs {
        let t = parse(data);
        assert_eq!(t.format, *name, "sniffed as the format it was written in");
        assert!(
            t.requests.len() >= REQUESTS / 2,
            "{name}: {}",
            t.requests.len()
        );
    }
    let mut g = c.benchmark_group("parse-MB");
    g.sample_size(10);
    for (name, data, _) in &inputs {
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_function(*name, |b| b.iter(|| black_box(parse(black_box(data)))));
    }
    g.finish();
    let mut g = c.benchmark_group("parse-events");
    g.sample_size(10);
    for (name, data, events) in &inputs {
        g.throughput(Throughput::Elements(*events));
        g.bench_function(*name, |b| b.iter(|| black_box(parse(black_box(data)))));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
