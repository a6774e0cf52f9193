//! One replay each of `timer(1s) + fixed(10s)`, of `auto` and of `share()`
//! on the paper drive over the replay benchmark's trace (benches/replay.rs: the
//! workstation workload, seed 42, its first million requests), timed
//! (the fastest of N runs) or, under callgrind, counted in instructions.
//!
//! The development VM's timings vary by ±10 % and more between runs of
//! the same binary, so a change of a few percent cannot be seen in
//! criterion's numbers there; instruction counts are exact and repeat.
//! `scripts/replay-instructions.sh` runs this under callgrind.
//!
//! `cargo run --release --example replay_cost -- [RUNS] [timer|auto|share|SPEC]`
//!
//! With `LULL_NO_SHORTCUTS` set (to anything), every engine replays with
//! its shortcuts off (`Engine::with_shortcuts(false)`): every event pushed
//! and every idle period announced, the path a live embedding and the
//! daemon pay (`scripts/replay-instructions.sh --every-event`).
//!
//! A SPEC (any other network, with durations relative to the paper
//! drive's B: `long-idle(min=B/8)`) is replayed alone, for cost studies
//! of a variant (`scripts/replay-instructions.sh SPEC…`).

use std::time::Instant;

use lull::core::prelude::*;

#[path = "../benches/support/replay_trace.rs"]
mod replay_trace;

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args
        .next()
        .map_or(15, |a| a.parse().expect("RUNS: a count"));
    let only = args.next();
    let tl = replay_trace::workstation(1_000_000);
    let b = lull::tasks::power::PowerModel::preset("paper-2.5in")
        .expect("preset")
        .break_even_s();
    let plain = lull::registry();
    let scaled = lull::registry().with_breakeven(Nanos::from_secs_f64(b));
    let mut nets = vec![
        ("timer", "timer(1s) + fixed(10s)", &plain),
        ("auto", "auto", &scaled),
        // What `auto` builds on: the share timeout alone, seeing the same
        // periods (of at least B/32).
        ("share", "share()", &scaled),
    ];
    if let Some(o) = only.as_deref() {
        nets.retain(|(name, ..)| *name == o);
        if nets.is_empty() {
            nets.push((o, o, &scaled));
        }
    }
    for (name, spec, registry) in nets {
        let mut best = f64::MAX;
        for _ in 0..runs {
            let t = Instant::now();
            let net = build_network(spec, registry).expect("network");
            let mut engine = Engine::with_policy(net, StopPolicy::PredictedEnd, NoTask)
                .with_shortcuts(std::env::var_os("LULL_NO_SHORTCUTS").is_none());
            std::hint::black_box(replay(&tl, &mut engine).expect("replay"));
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{name}: fastest of {runs}: {:.2} ms", best * 1e3);
    }
}
