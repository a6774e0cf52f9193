//! The per-poll cost of recording and shadow evaluation (issue 27): what
//! the daemon adds to each poll of a disk.
//!
//! - `encode_busy_poll`: a poll with I/O becomes a frame (the writer's
//!   share is one `write(2)` per poll with records, not measured here).
//! - `shadow_busy_poll`: the shadow books a poll of 10 requests and the
//!   idle period before it.
//! - `shadow_quiet_poll`: a quiet poll, which records nothing: the
//!   shadow only settles (most polls of a quiet disk).
//! - `report`: both windows over a full week of hourly buckets (each
//!   state-file save and metrics render).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use lull_activity::{Counts, Poll, PollKind, Record, Session, Shadow};
use lull_core::time::Nanos;
use lull_tasks::PowerModel;

fn busy(t0: Nanos, t: Nanos) -> Poll {
    Poll {
        t0,
        t,
        kind: PollKind::Normal,
        counts: Counts {
            reads: 6,
            writes: 4,
            sectors: 160,
            io_ms: 12,
            ..Counts::default()
        },
        held_since: None,
        held_after: false,
    }
}

fn shadow() -> Shadow {
    let model = PowerModel::preset("wd-red-plus").unwrap();
    let mut s = Shadow::new(model.clone(), model.break_even());
    s.feed(&Record::Session(Session {
        clock: Nanos::from_secs(1_700_000_000),
        ..Session::default()
    }));
    s
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("activity_per_poll");
    g.bench_function("encode_busy_poll", |b| {
        let rec = Record::Poll(busy(Nanos::from_secs(100), Nanos::from_secs(101)));
        let mut out = Vec::with_capacity(64);
        b.iter(|| {
            out.clear();
            black_box(&rec).encode(&mut out);
            black_box(out.len())
        })
    });
    g.bench_function("shadow_busy_poll", |b| {
        let mut s = shadow();
        let mut t = Nanos::from_secs(1);
        b.iter(|| {
            // A busy poll every 30 s: an idle period before each.
            let t0 = t + Nanos::from_secs(29);
            t = t0 + Nanos::from_secs(1);
            s.feed(&Record::Poll(busy(t0, t)));
            s.settle();
        })
    });
    g.bench_function("shadow_quiet_poll", |b| {
        let mut s = shadow();
        s.feed(&Record::Poll(busy(
            Nanos::from_secs(1),
            Nanos::from_secs(2),
        )));
        b.iter(|| black_box(&mut s).settle())
    });
    g.bench_function("report_full_week", |b| {
        let mut s = shadow();
        let mut t = Nanos::from_secs(1);
        for _ in 0..(7 * 24 * 12) {
            let t0 = t + Nanos::from_secs(299);
            t = t0 + Nanos::from_secs(1);
            s.feed(&Record::Poll(busy(t0, t)));
        }
        s.settle();
        b.iter(|| black_box(s.report()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
