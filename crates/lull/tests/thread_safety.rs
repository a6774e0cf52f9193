//! What `docs/embedding.md` says about threads, checked at compile time:
//! an engine and a network are `Send` (move one to the thread that feeds
//! it) but not `Sync` (their components are `&mut self` state machines;
//! share one behind a `Mutex`); a `Setup`, its registry and a learned
//! `Snapshot` are `Send + Sync` (build networks from several threads).

use lull::prelude::*;

fn send<T: Send>() {}
fn send_sync<T: Send + Sync>() {}

/// Compiles only when `T` is not `Sync`: with `T: Sync` both impls apply
/// and the call is ambiguous.
trait AmbiguousIfSync<A> {
    fn check() {}
}
impl<T: ?Sized> AmbiguousIfSync<()> for T {}
impl<T: ?Sized + Sync> AmbiguousIfSync<u8> for T {}

type LiveEngine = Engine<Network, PolicyActuator, Recorded>;

#[test]
fn engines_and_networks_move_between_threads_but_are_not_shared() {
    send::<Network>();
    send::<LiveEngine>();
    send::<Engine<Network, PolicyActuator, lull::tasks::Spindown>>();
    <Network as AmbiguousIfSync<_>>::check();
    <LiveEngine as AmbiguousIfSync<_>>::check();
}

#[test]
fn setups_registries_and_snapshots_are_shared() {
    send_sync::<Setup>();
    send_sync::<Registry>();
    send_sync::<Snapshot>();
    send_sync::<Command>();
}

/// And it works: an engine built on one thread runs on another, from a
/// setup shared by reference.
#[test]
fn an_engine_runs_on_another_thread() {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let commands = std::thread::scope(|scope| {
        let setup = &setup;
        scope
            .spawn(move || {
                let network = setup.build_network("timer(B)").unwrap();
                let mut engine: LiveEngine =
                    Engine::with_policy(network, StopPolicy::EarlierOf, Recorded::default());
                let s = Nanos::from_secs;
                engine
                    .push(&Event::arrival_at(s(0), Op::Read, 0, 4096))
                    .unwrap();
                engine
                    .push(&Event::completion_at(s(1), s(0), Op::Read, 0, 4096))
                    .unwrap();
                engine.advance(s(600)).unwrap();
                engine.task_mut().drain().collect::<Vec<_>>()
            })
            .join()
            .unwrap()
    });
    assert_eq!(
        commands,
        [(
            Nanos::from_secs(1) + setup.break_even(),
            Command::Start { budget: None }
        )]
    );
}
