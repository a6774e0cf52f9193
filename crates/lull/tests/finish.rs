//! `Engine::finish` ends a run for good (embed-26 B2): a later push,
//! advance or finish is refused with `EngineError::Finished` and changes
//! nothing, where the engine used to take them and silently decide
//! nothing more (its actuator still thought the task ran).

use lull::prelude::*;

fn engine(spec: &str) -> Engine<Network, PolicyActuator, Recorded> {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    Engine::with_policy(
        setup.build_network(spec).unwrap(),
        StopPolicy::EarlierOf,
        Recorded::default(),
    )
}

fn request(engine: &mut Engine<Network, PolicyActuator, Recorded>, at: u64) {
    let s = Nanos::from_secs;
    engine
        .push(&Event::arrival_at(s(at), Op::Read, 0, 4096))
        .unwrap();
    engine
        .push(&Event::completion_at(s(at + 1), s(at), Op::Read, 0, 4096))
        .unwrap();
}

/// The trial's sequence: a request, finish while the task runs, then
/// more traffic. Every later call says the engine is finished.
#[test]
fn a_finished_engine_refuses_events_and_time() {
    let s = Nanos::from_secs;
    for spec in ["auto", "timer(B)", "timer(B) + fixed(2B)"] {
        let mut e = engine(spec);
        request(&mut e, 0);
        e.finish(s(500)).unwrap();
        let commands: Vec<_> = e.task_mut().drain().collect();
        assert!(
            matches!(
                commands.as_slice(),
                [(_, Command::Start { .. }), (at, Command::Stop)] if *at <= s(500)
            ),
            "{spec}: started, stopped by its budget or by finish: {commands:?}"
        );
        assert!(!e.task_running(), "{spec}: finish stops the task");
        assert_eq!(e.finished_at(), Some(s(500)));
        assert_eq!(e.next_deadline(), None, "{spec}");
        let finished = Err(EngineError::Finished { at: s(500) });
        assert_eq!(
            e.push(&Event::arrival_at(s(600), Op::Read, 0, 4096)),
            finished,
            "{spec}"
        );
        assert_eq!(e.advance(s(5000)), finished, "{spec}");
        assert_eq!(e.finish(s(6000)).map(|_| ()), finished, "{spec}");
        assert!(!e.assume_idle(), "{spec}");
        assert_eq!(e.task_mut().drain().count(), 0, "{spec}: no command since");
        assert_eq!(e.now(), s(500), "{spec}: refused calls move nothing");
        assert_eq!(e.outstanding(), 0, "{spec}");
        let text = EngineError::Finished { at: s(500) }.to_string();
        assert!(text.contains("finished at 500000000000 ns"), "{text}");
        assert!(text.contains("build a new one"), "{text}");
        // What it learned is still there to carry into a new engine.
        let saved = e.save_learned();
        let mut next = engine(spec);
        next.restore_learned(&saved).unwrap();
    }
}

/// `advance` instead of `finish` keeps the engine deciding: the
/// commands after the second request are the ones a finished engine no
/// longer gave.
#[test]
fn an_advanced_engine_keeps_deciding() {
    let s = Nanos::from_secs;
    let mut e = engine("timer(B)");
    request(&mut e, 0);
    e.advance(s(500)).unwrap();
    request(&mut e, 600);
    e.advance(s(5000)).unwrap();
    let starts = e
        .task_mut()
        .drain()
        .filter(|(_, c)| matches!(c, Command::Start { .. }))
        .count();
    assert_eq!(starts, 2);
}

/// A report mid-run does not end it: `measures()` and the task's own.
#[test]
fn measures_report_without_ending_the_run() {
    let s = Nanos::from_secs;
    let mut e = engine("timer(B)");
    request(&mut e, 0);
    request(&mut e, 300);
    let m = e.measures();
    assert!(m.predicted_s > 0.0 && m.efficiency <= 1.0, "{m:?}");
    request(&mut e, 900);
    assert!(e.measures().predicted_s > m.predicted_s);
    assert_eq!(e.finished_at(), None);
    e.advance(s(2000)).unwrap();
}

/// `replay` finishes its engine at the last completion, as before: its
/// report is the one a push of every event and a finish there give.
#[test]
fn replay_still_finishes_at_the_last_completion() {
    let s = Nanos::from_secs;
    let reqs: Vec<Request> = [0u64, 200, 230, 900]
        .iter()
        .map(|&a| Request::new(s(a), s(a + 2), Op::Read, 0, 4096))
        .collect();
    let timeline = Timeline::from_requests(&reqs);
    let mut replayed = engine("auto");
    let report = replay(&timeline, &mut replayed).unwrap();
    assert_eq!(replayed.finished_at(), Some(s(902)));
    let mut pushed = engine("auto").with_shortcuts(false);
    for ev in timeline.events() {
        pushed.push(ev).unwrap();
    }
    assert_eq!(pushed.finish(s(902)).unwrap(), report);
    assert!(replayed.advance(s(1000)).is_err());
}
