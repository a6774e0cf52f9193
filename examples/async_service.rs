//! A lull network inside an async service (tokio).
//!
//! `cargo run --example async_service`
//!
//! The engine is sans-IO, so an async driver is a small loop: requests come
//! in on a channel and are pushed as arrivals with the current time;
//! completions are scheduled; between them the loop sleeps until the
//! earlier of the next completion and [`Engine::next_deadline`], then
//! advances the engine. The engine never sleeps and never reads the clock,
//! which is why this driver, under tokio's paused clock, makes exactly the
//! decisions the replay driver makes (the test in `tests/examples.rs`).
//!
//! Requests are stamped with the time the service sees them; tokio's timer
//! wakes with millisecond resolution, so under the paused clock arrivals
//! land on whole milliseconds. Deadlines are unaffected: the engine fires
//! each at its own time, however late the wake-up.
//!
//! One difference is inherent to live operation: a live driver cannot know
//! that an arrival will share the instant of a completion, so it announces
//! that zero-length idle period; replay, which sees the whole timeline,
//! does not. Real clocks make such exact ties vanishingly rare.

use std::collections::BTreeMap;

use lull::core::prelude::*;
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant, sleep_until};

/// A foreground request as the service sees it.
#[derive(Clone, Copy, Debug)]
pub struct Incoming {
    /// What it does.
    pub op: Op,
    /// Where.
    pub sector: u64,
    /// How much.
    pub bytes: u32,
    /// How long the device will take.
    pub service: Duration,
}

fn since(base: Instant) -> Nanos {
    Nanos::from(base.elapsed())
}

/// Drives `engine` from `requests` until the channel closes, then finishes
/// the run at the last completion.
pub async fn serve<D: Detector, T: IdleTask>(
    mut engine: Engine<D, PolicyActuator, T>,
    mut requests: mpsc::Receiver<Incoming>,
    base: Instant,
) -> (Engine<D, PolicyActuator, T>, RunReport) {
    // Pending completions, earliest first; ties in arrival order.
    let mut pending: BTreeMap<(Nanos, u64), Event> = BTreeMap::new();
    let mut seq = 0u64;
    let mut last = Nanos::ZERO;
    loop {
        let wake = [
            engine.next_deadline(),
            pending.first_key_value().map(|(&(t, _), _)| t),
        ]
        .into_iter()
        .flatten()
        .min();
        tokio::select! {
            // Timers first: completions and deadlines due at an instant go
            // before a request arriving at that instant (the ordering rule).
            biased;
            _ = sleep_until(base + Duration::from_nanos(wake.map_or(0, |w| w.0))), if wake.is_some() => {
                let now = since(base);
                while let Some(entry) = pending.first_entry() {
                    if entry.key().0 > now { break; }
                    engine.push(&entry.remove()).expect("completions in time order");
                }
                engine.advance(now).expect("time moves forward");
            }
            msg = requests.recv() => match msg {
                Some(r) => {
                    let now = since(base);
                    let service = Nanos::from(r.service).max(Nanos::NANO);
                    let req = Request::new(now, now + service, r.op, r.sector, r.bytes);
                    engine.push(&Event::arrival(&req)).expect("arrivals in time order");
                    pending.insert((req.completion, seq), Event::completion(&req));
                    seq += 1;
                    last = last.max(req.completion);
                }
                None => break,
            },
        }
    }
    while let Some((_, ev)) = pending.pop_first() {
        engine.push(&ev).expect("completions in time order");
    }
    let report = engine.finish(last).expect("finish");
    (engine, report)
}

/// Plays `trace` into a service running `spec` in real (or paused) time and
/// returns the report and the action log.
pub async fn run_trace(
    trace: &[Request],
    spec: &str,
    policy: StopPolicy,
) -> (RunReport, Vec<LogEntry>) {
    let registry = lull::registry();
    let network = build_network(spec, &registry).expect("valid spec");
    let engine = Engine::with_policy(network, policy, NoTask).with_log();
    let (tx, rx) = mpsc::channel(64);
    let base = Instant::now();
    let service = tokio::spawn(serve(engine, rx, base));
    for r in trace {
        sleep_until(base + Duration::from_nanos(r.arrival.0)).await;
        let incoming = Incoming {
            op: r.op,
            sector: r.sector,
            bytes: r.bytes,
            service: Duration::from_nanos((r.completion - r.arrival).0),
        };
        tx.send(incoming).await.expect("service is running");
    }
    drop(tx);
    let (engine, report) = service.await.expect("service task");
    (report, engine.log().to_vec())
}

#[allow(dead_code)]
#[tokio::main(flavor = "current_thread")]
async fn main() {
    // Three short bursts a few hundred milliseconds apart, in real time.
    let ms = Nanos::from_millis;
    let trace: Vec<Request> = [0u64, 5, 10, 400, 405, 900]
        .iter()
        .map(|&t| Request::new(ms(t), ms(t + 2), Op::Write, t * 8, 4096))
        .collect();
    let (report, log) =
        run_trace(&trace, "timer(100ms) + fixed(200ms)", StopPolicy::EarlierOf).await;
    for entry in &log {
        println!("{entry:?}");
    }
    println!("efficiency {:.3}", report.internal.efficiency);
}
