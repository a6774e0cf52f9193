//! What `docs/embedding.md` promises about driving the engine, checked.

use lull::prelude::*;

type LiveEngine = Engine<Network, PolicyActuator, Recorded>;

fn engine(spec: &str) -> LiveEngine {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    Engine::with_policy(
        setup.build_network(spec).unwrap(),
        StopPolicy::EarlierOf,
        Recorded::default(),
    )
    .with_log()
}

/// Requests one at a time, arrivals and completions never at one instant,
/// gaps from milliseconds to an hour (a fixed seed).
fn trace() -> Vec<Request> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut t = Nanos::from_secs(1);
    let mut out = Vec::new();
    for _ in 0..3_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let service = Nanos::from_micros(500 + x % 20_000);
        out.push(Request::new(t, t + service, Op::Read, x % (1 << 30), 4096));
        let gap = match x % 5 {
            0 => Nanos::from_secs(x % 3_600),
            1 => Nanos::from_secs(x % 300),
            _ => Nanos::from_millis(1 + x % 2_000),
        };
        t += service + gap + Nanos(1);
    }
    out
}

/// Pushes `trace` as a live embedder does: arrival, deadlines up to the
/// completion, completion; then runs to `end`.
fn push_live(engine: &mut LiveEngine, trace: &[Request], end: Nanos) -> Vec<(Nanos, Command)> {
    let mut commands = Vec::new();
    for r in trace {
        engine
            .push(&Event::arrival_at(r.arrival, r.op, r.sector, r.bytes))
            .unwrap();
        engine
            .push(&Event::completion_at(
                r.completion,
                r.arrival,
                r.op,
                r.sector,
                r.bytes,
            ))
            .unwrap();
        commands.extend(engine.task_mut().drain());
    }
    engine.finish(end).unwrap();
    commands.extend(engine.task_mut().drain());
    commands
}

#[test]
fn a_live_embedding_decides_as_replay_does() {
    // The method the guide gives for testing an embedding: the same
    // requests through `replay` (what `lull replay --log` writes) and
    // through the embedder's own pushes give the same action log.
    let trace = trace();
    // `replay` ends the run at the trace's last completion.
    let end = trace.last().unwrap().completion;
    for spec in [
        "auto",
        "timer(B) + fixed(2B)",
        "adapt-timer-arith-geom(step=B/4)",
    ] {
        let mut live = engine(spec);
        push_live(&mut live, &trace, end);
        let mut replayed = engine(spec);
        let timeline = Timeline::from_requests(&trace);
        let report = replay(&timeline, &mut replayed).unwrap();
        assert_eq!(live.log(), replayed.log(), "{spec}");
        assert!(!live.log().is_empty(), "{spec}");
        assert_eq!(live.measures(), report.internal, "{spec}");
    }
}

#[test]
fn the_same_input_gives_the_same_decisions() {
    let trace = trace();
    let end = trace.last().unwrap().completion;
    let a = push_live(&mut engine("auto"), &trace, end);
    let b = push_live(&mut engine("auto"), &trace, end);
    assert_eq!(a, b);
    assert!(a.len() > 10, "{}", a.len());
}

#[test]
fn an_event_from_the_past_is_refused_and_changes_nothing() {
    let s = Nanos::from_secs;
    let mut e = engine("timer(B)");
    e.push(&Event::arrival_at(s(10), Op::Read, 0, 4096))
        .unwrap();
    e.push(&Event::completion_at(s(11), s(10), Op::Read, 0, 4096))
        .unwrap();
    let late = e.push(&Event::arrival_at(s(5), Op::Write, 0, 4096));
    assert_eq!(
        late,
        Err(EngineError::OutOfOrder {
            event: s(5),
            now: s(11)
        })
    );
    assert_eq!(e.outstanding(), 0, "the refused arrival was not counted");
    // Advancing to an earlier time is no error and does nothing.
    e.advance(s(3)).unwrap();
    assert_eq!(e.now(), s(11));
    // The engine goes on as if it had not been pushed. The idle period
    // the completion opened begins at the first `advance` past its instant
    // (an arrival at that very instant would have cancelled it), so
    // `next_deadline` is that instant first, then the timer's.
    assert_eq!(e.next_deadline(), Some(s(11)));
    e.advance(s(11)).unwrap();
    let deadline = e.next_deadline().unwrap();
    let b = lull::for_drive("wd-red-plus", Work::Standby)
        .unwrap()
        .break_even();
    assert_eq!(deadline, s(11) + b);
    e.advance(deadline).unwrap();
    assert_eq!(
        e.task_mut().drain().collect::<Vec<_>>(),
        [(deadline, Command::Start { budget: None })]
    );
    // A completion nothing arrived for is refused too.
    let t = deadline + s(1);
    assert_eq!(
        e.push(&Event::completion_at(t, t, Op::Read, 0, 4096)),
        Err(EngineError::CompletionWithoutArrival { at: t })
    );
}
