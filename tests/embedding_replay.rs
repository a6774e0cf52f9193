//! docs/embedding.md, "Testing an embedding against `lull replay`", done
//! end to end: a trace, `lull replay --log`, and an embedding on the light
//! `lull` facade that pushes the same requests one event at a time from
//! its own loop; the two action logs are the same, line for line.

mod common;

use common::{lull, stderr};
use lull::prelude::*;

#[test]
fn an_embedding_on_the_facade_logs_what_lull_replay_logs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("nas.csv");
    let log = dir.path().join("replay.jsonl");
    let (trace_s, log_s) = (trace.to_str().unwrap(), log.to_str().unwrap());
    let out = lull(&[
        "synth",
        "--workload",
        "home-nas",
        "--duration",
        "12h",
        "--seed",
        "7",
        "--out",
        trace_s,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = lull(&[
        "replay",
        trace_s,
        "--net",
        "auto",
        "--device",
        "wd-red-plus",
        "--policy",
        "earlier-of",
        "--log",
        log_s,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let replayed: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();

    // The embedding: the trace's requests as its own I/O path would see
    // them, every arrival and completion pushed in time order (a
    // completion before an arrival at the same instant, the engine's
    // ordering rule), with the wall clock the trace was recorded at.
    let t = lull_blktrace_replay::open(&trace, Default::default()).unwrap();
    let (requests, _) = t.select(None).unwrap();
    let mut events: Vec<(Nanos, bool, Event)> = Vec::new();
    for r in &requests {
        events.push((
            r.arrival,
            true,
            Event::arrival_at(r.arrival, r.op, r.sector, r.bytes),
        ));
        events.push((
            r.completion,
            false,
            Event::completion_at(r.completion, r.arrival, r.op, r.sector, r.bytes),
        ));
    }
    events.sort_by_key(|(t, arrival, _)| (*t, *arrival));
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let mut engine = Engine::with_policy(
        setup.build_network("auto").unwrap(),
        StopPolicy::EarlierOf,
        Recorded::<NoTask>::default(),
    )
    .with_log();
    if let Some(c) = t.clock {
        engine = engine.with_clock(UnixTime::since_epoch(c));
    }
    let mut commands = 0;
    for (_, _, ev) in &events {
        engine.push(ev).unwrap();
        commands += engine.task_mut().drain().count();
    }
    let end = events.last().unwrap().0;
    engine.finish(end).unwrap();
    commands += engine.task_mut().drain().count();
    let live: Vec<String> = engine
        .log()
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();

    assert!(replayed.len() > 20, "{} entries", replayed.len());
    assert!(commands > 10, "{commands} commands pulled");
    if let Some(i) = (0..live.len().max(replayed.len())).find(|&i| live.get(i) != replayed.get(i)) {
        panic!(
            "the logs differ at line {i}: live {:?}, replay {:?}",
            live.get(i),
            replayed.get(i)
        );
    }
}
