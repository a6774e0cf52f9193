//! A NAS that lets `auto` decide when to spin a disk down, feeding the
//! engine from its own clock and pulling the engine's commands instead of
//! implementing an idle task; what `auto` learned on the first day is
//! saved as JSON and restored into the next day's engine, as a service
//! does across a restart.
//!
//! `cargo run -p lull --example spindown_auto`
//!
//! The engine is sans-IO: the application tells it when each request
//! arrives ([`Event::arrival_at`]: the completion is not known yet) and
//! when it completes ([`Event::completion_at`]), and wakes it at
//! [`Engine::next_deadline`] with [`Engine::advance`]. The commands come
//! out of [`Recorded`]: `Start` spins the disk down, `Stop` ends the idle
//! period. With `auto` (no predicted duration) a `Stop` comes only at an
//! arrival, so here it means the disk is needed again (the request waits
//! for the spin-up); with a network that predicts a duration, `EarlierOf`
//! also stops when the budget runs out, and a spin-down service should
//! wake the disk for a request only (docs/embedding.md, "stop policy").
//! Each day's engine is told the disk is idle when it starts
//! ([`Engine::assume_idle`]): a new engine has seen no request and
//! decides nothing until one completes.
//! Time is simulated here so the example is fast and deterministic; a
//! real service would take nanoseconds from a monotonic clock
//! (`Instant::now() - started`).
//!
//! Copying this file into a crate of one's own: the state is written
//! with `serde_json`, and reads back to the bit (as asserted below) only
//! with its `float_roundtrip` feature, which lull's workspace turns on:
//!
//! ```toml
//! serde_json = { version = "1", features = ["float_roundtrip"] }
//! ```
//!
//! Without it serde_json's faster float parser may read a learned value
//! back one unit in the last place off (about 1e-16 relative): the
//! restore is still accepted, but the restored network is not exactly
//! the one saved, and a restart is no longer deterministic.

use lull::prelude::*;
use lull::tasks::PowerModel;

/// The drive: a WD Red Plus, B = 72.4 s.
pub const DRIVE: &str = "wd-red-plus";

/// What one day did to the disk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Day {
    /// Requests served.
    pub requests: u64,
    /// Spin-downs (`Start` commands).
    pub spindowns: u64,
    /// Time spent spun down.
    pub asleep: Nanos,
    /// Energy used by the disk, in joules ([`PowerModel::energy`]).
    pub energy_j: f64,
    /// Energy had it never spun down.
    pub always_on_j: f64,
    /// Every command, with its time.
    pub commands: Vec<(Nanos, Command)>,
}

/// What the example found.
#[derive(Debug)]
pub struct Outcome {
    /// B of the drive.
    pub break_even: Nanos,
    /// The first day, `auto` starting from nothing.
    pub first: Day,
    /// The second day, `auto` restored from the first day's state.
    pub restored: Day,
    /// The second day again, `auto` starting from nothing.
    pub fresh: Day,
    /// The first day's learned state, as JSON.
    pub saved_json: String,
    /// Why the state is refused by a network built for another drive.
    pub refused: String,
}

/// The storage application: its disk's state, and the engine that decides.
struct Nas {
    engine: Engine<Network, PolicyActuator, Recorded>,
    model: PowerModel,
    asleep_since: Option<Nanos>,
    day: Day,
}

impl Nas {
    fn new(setup: &Setup) -> Nas {
        let network = setup.build_network("auto").expect("auto builds");
        Nas {
            engine: Engine::with_policy(network, StopPolicy::EarlierOf, Recorded::default()),
            model: setup
                .power()
                .cloned()
                .expect("a preset's setup has its power model"),
            asleep_since: None,
            day: Day::default(),
        }
    }

    /// Acts on the commands the engine gave since the last call.
    fn obey(&mut self) {
        let commands: Vec<_> = self.engine.task_mut().drain().collect();
        for (at, c) in commands {
            match c {
                Command::Start { .. } if self.asleep_since.is_none() => {
                    self.day.spindowns += 1;
                    self.asleep_since = Some(at);
                }
                Command::Stop => {
                    if let Some(since) = self.asleep_since.take() {
                        self.day.asleep += at - since;
                    }
                }
                _ => {}
            }
            self.day.commands.push((at, c));
        }
    }

    /// Runs the engine up to `now`: every deadline before it, in order, as
    /// a service that sleeps until the next deadline would.
    fn wait_until(&mut self, now: Nanos) {
        while let Some(d) = self.engine.next_deadline().filter(|&d| d <= now) {
            self.engine.advance(d).expect("time moves forward");
            self.obey();
        }
        self.engine.advance(now).expect("time moves forward");
        self.obey();
    }

    /// One request, `service` long, arriving at `at`.
    fn serve(&mut self, at: Nanos, service: Nanos, op: Op, sector: u64) {
        self.wait_until(at);
        self.engine
            .push(&Event::arrival_at(at, op, sector, 4096))
            .expect("in order");
        self.obey();
        let done = at + service;
        self.wait_until(done);
        self.engine
            .push(&Event::completion_at(done, at, op, sector, 4096))
            .expect("in order");
        self.obey();
        self.day.requests += 1;
    }

    fn end_day(mut self, end: Nanos) -> Day {
        self.wait_until(end);
        if let Some(since) = self.asleep_since.take() {
            self.day.asleep += end - since;
        }
        self.day.energy_j = self.model.energy(end, self.day.asleep, self.day.spindowns);
        self.day.always_on_j = self.model.energy(end, Nanos::ZERO, 0);
        self.day
    }
}

/// A day of a small office's NAS: sessions of requests a few seconds
/// apart, separated by quiet spells from a minute to two hours (times
/// from a fixed seed).
fn day_of_requests(seed: u64) -> Vec<(Nanos, Nanos, Op, u64)> {
    let mut x = seed;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let day = Nanos::from_secs(86_400);
    let mut t = Nanos::from_secs(60);
    let mut out = Vec::new();
    while t < day - Nanos::from_secs(3_600) {
        for _ in 0..5 + next(60) {
            let service = Nanos::from_millis(5 + next(20));
            let op = if next(3) == 0 { Op::Write } else { Op::Read };
            out.push((t, service, op, next(1 << 30)));
            t += service + Nanos::from_millis(200 + next(5_000));
        }
        t += Nanos::from_secs(60 + next(7_200));
    }
    out
}

fn run_day(setup: &Setup, seed: u64, saved: Option<&Snapshot>) -> (Day, Snapshot) {
    let mut nas = Nas::new(setup);
    if let Some(s) = saved {
        setup
            .restore("auto", &mut nas.engine, s)
            .expect("the state fits the network it came from");
    }
    // The disk is quiet when the service starts: idle from now, so that a
    // disk nobody touches still spins down and a restored `auto` learns
    // the idle period that spans the restart.
    nas.engine.assume_idle();
    for (at, service, op, sector) in day_of_requests(seed) {
        nas.serve(at, service, op, sector);
    }
    let end = Nanos::from_secs(86_400);
    nas.wait_until(end);
    // One request at a time: each completion begins an idle period.
    let prior = saved.map_or(0, |s| s.idle_periods);
    let snapshot = setup.snapshot(
        "auto",
        &nas.engine,
        prior + nas.day.requests,
        UnixTime::EPOCH,
    );
    (nas.end_day(end), snapshot)
}

/// Runs the first day, saves what `auto` learned as JSON, and runs the
/// second day from it and from nothing.
pub fn run() -> Outcome {
    let setup = lull::for_drive(DRIVE, Work::Standby).expect("a built-in preset");
    let (first, learned) = run_day(&setup, 0x853c_49e6_748f_ea9b, None);
    let saved_json = serde_json::to_string(&learned).expect("a snapshot serializes");
    let restored_state: Snapshot = serde_json::from_str(&saved_json).expect("and reads back");
    assert_eq!(
        restored_state, learned,
        "the state survives JSON to the bit only with serde_json's `float_roundtrip` feature: \
         add `serde_json = {{ version = \"1\", features = [\"float_roundtrip\"] }}` to Cargo.toml"
    );
    let second = 0xda3e_39cb_94b9_5bdb;
    let (restored, _) = run_day(&setup, second, Some(&restored_state));
    let (fresh, _) = run_day(&setup, second, None);
    // A network built for another drive learned another time scale.
    let other = lull::for_drive("seagate-ultrathin", Work::Standby).expect("a built-in preset");
    let mut engine = Engine::with_policy(
        other.build_network("auto").expect("auto builds"),
        StopPolicy::EarlierOf,
        Recorded::<NoTask>::default(),
    );
    let refused = other
        .restore("auto", &mut engine, &restored_state)
        .expect_err("another B")
        .to_string();
    Outcome {
        break_even: setup.break_even(),
        first,
        restored,
        fresh,
        saved_json,
        refused,
    }
}

#[allow(dead_code)]
fn main() {
    let out = run();
    println!("B = {}", out.break_even.approx());
    for (name, d) in [
        ("day 1, auto from nothing", &out.first),
        ("day 2, auto restored", &out.restored),
        ("day 2, auto from nothing", &out.fresh),
    ] {
        println!(
            "{name}: {} requests, {} spin-downs, asleep {}, {:.0} J against {:.0} J always on",
            d.requests,
            d.spindowns,
            d.asleep.approx(),
            d.energy_j,
            d.always_on_j
        );
    }
    println!("saved state: {} bytes of JSON", out.saved_json.len());
    println!("into another drive's network: {}", out.refused);
}
