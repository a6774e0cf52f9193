//! A learned state goes back only into the network that learned it, even
//! when both were asked for by one name (embed-26 B4): a snapshot names
//! the network as built (`auto` expanded), and `Setup::restore` checks
//! the spec it is given against the engine's network.

use lull::prelude::*;

fn engine(setup: &Setup, spec: &str) -> Engine<Network, PolicyActuator, NoTask> {
    Engine::with_policy(
        setup.build_network(spec).unwrap(),
        StopPolicy::EarlierOf,
        NoTask,
    )
}

/// A day of requests, so learners have something to keep.
fn learn(engine: &mut Engine<Network, PolicyActuator, NoTask>) {
    let s = Nanos::from_secs;
    for (i, gap) in [5u64, 90, 7, 400, 3, 150, 60, 900, 2, 30]
        .iter()
        .cycle()
        .take(200)
        .enumerate()
    {
        let at = s(i as u64 * 1_000 + gap);
        engine
            .push(&Event::arrival_at(at, Op::Read, 0, 4096))
            .unwrap();
        engine
            .push(&Event::completion_at(at + s(1), at, Op::Read, 0, 4096))
            .unwrap();
    }
}

#[test]
fn a_network_remembers_its_spec_with_named_networks_expanded() {
    let b = Nanos::from_secs(72);
    let standby = Setup::break_even_for(b, Work::Standby).unwrap();
    let io = Setup::break_even_for(b, Work::Io).unwrap();
    assert_eq!(
        standby.build_network("auto").unwrap().spec(),
        Some("long-idle")
    );
    assert_eq!(
        io.build_network("auto").unwrap().spec(),
        Some("timer(B) + no-duration")
    );
    assert_eq!(
        standby
            .build_network(" timer( B )+fixed(2B)")
            .unwrap()
            .spec(),
        Some("timer(B) + fixed(2B)")
    );
    let mut code = NetworkBuilder::new();
    code.source("only", Box::new(standby.build_network("timer(B)").unwrap()));
    assert_eq!(code.build().unwrap().spec(), None);
}

/// The trial's `workmix`: `auto` for work that moves I/O and `auto` for
/// spin-down, with one B. The snapshot of the first went into the
/// second with `Ok(())`.
#[test]
fn a_state_learned_under_one_expansion_is_refused_by_another() {
    let b = Nanos::from_secs(72);
    let standby = Setup::break_even_for(b, Work::Standby).unwrap();
    let io = Setup::break_even_for(b, Work::Io).unwrap();
    let mut learned = engine(&io, "auto");
    learn(&mut learned);
    let snapshot = io.snapshot("auto", &learned, 200, UnixTime::EPOCH);
    assert_eq!(snapshot.network, "timer(B) + no-duration");
    let e = standby
        .restore("auto", &mut engine(&standby, "auto"), &snapshot)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"timer(B) + no-duration\""), "{e}");
    assert!(e.contains("\"long-idle\""), "{e}");
    assert!(e.contains("what `auto` stands for"), "{e}");
    // And the other way round, where the parts used to decide.
    let mut learned = engine(&standby, "auto");
    learn(&mut learned);
    let snapshot = standby.snapshot("auto", &learned, 200, UnixTime::EPOCH);
    assert_eq!(snapshot.network, "long-idle");
    let e = io
        .restore("auto", &mut engine(&io, "auto"), &snapshot)
        .unwrap_err()
        .to_string();
    assert!(e.contains("learned by network \"long-idle\""), "{e}");
    // Into the network that learned it, it goes.
    standby
        .restore("auto", &mut engine(&standby, "auto"), &snapshot)
        .unwrap();
    // Spelled out, it is the same network.
    standby
        .restore("long-idle()", &mut engine(&standby, "long-idle"), &snapshot)
        .unwrap();
}

/// The trial's `specmix`: a `timer(B)` engine snapshotted under the
/// label `auto` restored `Ok(())` into an `auto` engine; and a label
/// that is not what the engine runs was never checked.
#[test]
fn the_spec_given_is_checked_against_the_engine() {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let timer = engine(&setup, "timer(B)");
    let snapshot = setup.snapshot("auto", &timer, 0, UnixTime::EPOCH);
    assert_eq!(snapshot.network, "timer(B)", "what the engine runs");
    let e = setup
        .restore("auto", &mut engine(&setup, "auto"), &snapshot)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"timer(B)\""), "{e}");
    let e = setup
        .restore("auto", &mut engine(&setup, "timer(B)"), &snapshot)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the engine runs `timer(B)`, not `auto`"), "{e}");
    assert!(e.contains("expands to `long-idle`"), "{e}");
    setup
        .restore("timer(B)", &mut engine(&setup, "timer(B)"), &snapshot)
        .unwrap();
}

/// A snapshot written before snapshots named the expansion (`"network":
/// "auto"`) still restores into `auto`, as it did.
#[test]
fn a_snapshot_that_names_auto_still_restores() {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let mut learned = engine(&setup, "auto");
    learn(&mut learned);
    let mut old = setup.snapshot("auto", &learned, 200, UnixTime::EPOCH);
    old.network = "auto".into();
    let json = serde_json::to_string(&old).unwrap();
    assert!(json.contains("\"network\":\"auto\""));
    let back: Snapshot = serde_json::from_str(&json).unwrap();
    let mut restored = engine(&setup, "auto");
    setup.restore("auto", &mut restored, &back).unwrap();
    // By its name only into a network of that name.
    let e = setup
        .restore("timer(B)", &mut engine(&setup, "timer(B)"), &back)
        .unwrap_err()
        .to_string();
    assert!(e.contains("learned by network \"auto\""), "{e}");
}
