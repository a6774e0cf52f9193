//! The daemon's per-poll diskstats work (issue 18): a full parse into a
//! fresh map of every line (what each poll did before) against updating
//! the kept [`Sample`] in place, which parses only the watched devices'
//! counters whose lines changed and allocates nothing while the device
//! list stays the same: on a quiet host (the same file), with one disk and
//! the system disk busy, and with every device busy.
//!
//! `cargo bench -p lull-live --bench diskstats`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lull_live::diskstats::parse;
use lull_live::source::Sample;

/// A diskstats text like a NAS's: `disks` disks with two partitions each
/// and a few other devices, in the kernel's format (17 counters).
/// `busy` names the devices that did I/O: their counters are moved on.
fn diskstats(disks: usize, busy: impl Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut line = |major: u32, minor: u32, name: &str, k: u64| {
        let k = if busy(name) { k + 1 } else { k };
        out.push_str(&format!(
            "{major:4} {minor:7} {name} {} {} {} {} {} {} {} {} 0 {} {} 0 0 0 0 {} {}\n",
            k * 1031,
            k * 7,
            k * 80_224,
            k * 311,
            k * 977,
            k * 13,
            k * 91_136,
            k * 1_200,
            k * 1_400,
            k * 2_600,
            k * 5,
            k * 9
        ));
    };
    for i in 0..4u32 {
        line(7, i, &format!("loop{i}"), u64::from(i) + 1);
    }
    for d in 0..disks {
        let name = format!("sd{}", (b'a' + d as u8) as char);
        let minor = 16 * d as u32;
        line(8, minor, &name, d as u64 + 3);
        line(8, minor + 1, &format!("{name}1"), d as u64 + 2);
        line(8, minor + 2, &format!("{name}2"), d as u64 + 1);
    }
    line(259, 0, "nvme0n1", 50);
    line(259, 1, "nvme0n1p1", 49);
    out
}

fn bench(c: &mut Criterion) {
    let text = diskstats(16, |_| false);
    let lines = text.lines().count() as u64;
    let mut g = c.benchmark_group("diskstats_poll");
    g.throughput(Throughput::Elements(lines));
    g.bench_function("parse_and_index_every_line", |b| {
        b.iter(|| {
            let s = Sample::new(parse(black_box(&text)).unwrap());
            black_box(s.get("sdp").map(|c| c.reads))
        })
    });
    // The daemon's case: the 16 disks and their partitions are watched.
    // Each iteration updates to the other text of a pair, so that every
    // update sees what changed between them.
    let cases = [
        ("update_in_place_quiet", diskstats(16, |_| false)),
        (
            "update_in_place_one_disk_and_the_system_disk_busy",
            diskstats(16, |n| n.starts_with("sdc") || n.starts_with("nvme")),
        ),
        ("update_in_place_every_device_busy", diskstats(16, |_| true)),
    ];
    for (name, other) in cases {
        let mut kept = Sample::default();
        kept.update(&text, true).unwrap();
        kept.set_wanted(|n| n.starts_with("sd"));
        let pair = [&text, &other];
        let mut i = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                i ^= 1;
                kept.update(black_box(pair[i]), false).unwrap();
                black_box(kept.get("sdp").map(|c| c.reads))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
