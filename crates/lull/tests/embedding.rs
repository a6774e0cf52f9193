//! What `docs/embedding.md` promises about driving the engine, checked.

mod common;

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
fn an_event_from_the_past_is_taken_at_the_engines_time() {
    let s = Nanos::from_secs;
    let mut e = engine("timer(B)");
    e.push(&Event::arrival_at(s(10), Op::Read, 0, 4096))
        .unwrap();
    e.push(&Event::completion_at(s(11), s(10), Op::Read, 0, 4096))
        .unwrap();
    // Late: taken at the engine's time (11 s), and counted. Refused, as
    // it once was, its completion would have found nothing outstanding
    // (or ended another request).
    e.push(&Event::arrival_at(s(5), Op::Write, 0, 4096))
        .unwrap();
    assert_eq!(e.outstanding(), 1);
    assert_eq!(e.now(), s(11));
    e.push(&Event::completion_at(s(6), s(5), Op::Write, 0, 4096))
        .unwrap();
    assert_eq!(e.outstanding(), 0);
    assert_eq!(
        e.lateness(),
        Lateness {
            arrivals: 1,
            completions: 1,
            max: s(6),
            total: s(11)
        }
    );
    // Advancing to an earlier time is no error and does nothing.
    e.advance(s(3)).unwrap();
    assert_eq!(e.now(), s(11));
    // The idle period the late completion opened begins at the first
    // `advance` past its instant, the engine's time when it was taken
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
    // Refused without moving the engine's time.
    assert_eq!(e.now(), deadline);
    // And one whose arrival is after it.
    e.push(&Event::arrival_at(t, Op::Read, 0, 4096)).unwrap();
    let early = Event::completion_at(t + s(1), t + s(2), Op::Read, 0, 4096);
    assert_eq!(
        e.push(&early),
        Err(EngineError::CompletionBeforeArrival {
            at: t + s(1),
            arrived: t + s(2)
        })
    );
    assert_eq!((e.now(), e.outstanding()), (t, 1));
    e.push(&Event::completion_at(t + s(1), t, Op::Read, 0, 4096))
        .unwrap();
    assert_eq!(e.outstanding(), 0);
}

#[test]
fn a_quiet_disk_is_idle_from_assume_idle_on() {
    let s = Nanos::from_secs;
    let b = lull::for_drive("wd-red-plus", Work::Standby)
        .unwrap()
        .break_even();
    // A new engine has seen no request: it decides nothing, however long
    // the disk stays quiet.
    let mut e = engine("timer(B)");
    e.advance(s(3_600)).unwrap();
    assert_eq!(e.next_deadline(), None);
    assert_eq!(e.task_mut().drain().count(), 0);
    // Told the disk is idle, it is from then on, as after a completion.
    assert!(e.assume_idle());
    assert!(!e.assume_idle(), "an idle period is already pending");
    e.advance(s(3_600)).unwrap();
    assert!(!e.assume_idle(), "an idle period is already in progress");
    let deadline = e.next_deadline().unwrap();
    assert_eq!(deadline, s(3_600) + b);
    e.advance(deadline).unwrap();
    assert_eq!(
        e.task_mut().drain().collect::<Vec<_>>(),
        [(deadline, Command::Start { budget: None })]
    );
    // With a request outstanding the disk is not idle.
    let mut e = engine("timer(B)");
    e.push(&Event::arrival_at(s(1), Op::Read, 0, 4096)).unwrap();
    assert!(!e.assume_idle());
    assert_eq!(e.next_deadline(), None);
}

/// A NAS's days: at night one backup burst near 03:00, from 08:00 to 23:00
/// a burst every 2 to 8 minutes of 3 to 40 requests 50 to 500 ms apart.
fn bursty_days(seed: u64, days: u64) -> Vec<(Nanos, Nanos)> {
    let mut below = common::xorshift(seed);
    let mut out = Vec::new();
    for d in 0..days {
        let base = Nanos::from_secs(d * 86_400);
        let mut t = base + Nanos::from_secs(3 * 3_600 + below(600));
        for _ in 0..200 {
            let service = Nanos::from_millis(8 + below(10));
            out.push((t, service));
            t += service + Nanos::from_millis(below(30));
        }
        common::daytime_bursts(&mut out, base, &mut below);
    }
    out
}

/// Drives `engine` over `requests` (shifted back by `offset`) as a live
/// service does, up to `end`; returns its commands.
fn drive(
    engine: &mut LiveEngine,
    requests: &[(Nanos, Nanos)],
    offset: Nanos,
    end: Nanos,
) -> Vec<(Nanos, Command)> {
    let mut commands = Vec::new();
    let wait_until = |e: &mut LiveEngine, now: Nanos, out: &mut Vec<_>| {
        while let Some(d) = e.next_deadline().filter(|&d| d <= now) {
            e.advance(d).unwrap();
            out.extend(e.task_mut().drain());
        }
        e.advance(now).unwrap();
        out.extend(e.task_mut().drain());
    };
    for &(at, service) in requests {
        let at = at - offset;
        wait_until(engine, at, &mut commands);
        engine
            .push(&Event::arrival_at(at, Op::Read, 0, 4096))
            .unwrap();
        commands.extend(engine.task_mut().drain());
        wait_until(engine, at + service, &mut commands);
        engine
            .push(&Event::completion_at(at + service, at, Op::Read, 0, 4096))
            .unwrap();
        commands.extend(engine.task_mut().drain());
    }
    wait_until(engine, end - offset, &mut commands);
    commands
}

/// Spin-downs that a request of the same burst ended (shorter than a
/// second, where this workload's bursts have gaps up to half of one).
fn within_bursts(commands: &[(Nanos, Command)]) -> Vec<Nanos> {
    commands
        .windows(2)
        .filter_map(|w| match (w[0], w[1]) {
            ((a, Command::Start { .. }), (b, Command::Stop)) if b - a < Nanos::from_secs(1) => {
                Some(a)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn auto_restored_at_midnight_on_a_quiet_disk_spins_down_between_bursts_only() {
    // An embedder's restart at 00:00, the disk quiet since 23:00. Restored
    // into an engine that was not told the disk is idle, `auto` never saw
    // the night's idle period end (the new engine had no period in
    // progress), and without that period its statistics of gap lengths
    // drifted from those of a network that never restarted: hours later it
    // began spinning down at the end of each burst's first request, 2 to 4
    // times a run on these seeds, where the continuous network and a fresh
    // one never did. Told with `assume_idle`, it learns the night's period
    // (from the restart on) and decides like them.
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let day = Nanos::from_secs(86_400);
    let days = 4;
    let end = day * days;
    for seed in [42u64, 99] {
        let requests = bursty_days(seed, days);
        let mut continuous = engine("auto");
        let all = drive(&mut continuous, &requests, Nanos::ZERO, end);
        for cut in [day, day * 2] {
            let (before, after): (Vec<_>, Vec<_>) = requests.iter().partition(|r| r.0 < cut);
            let mut first = engine("auto");
            drive(&mut first, &before, Nanos::ZERO, cut);
            let snapshot = setup.snapshot("auto", &first, 0, UnixTime::EPOCH);
            let mut restored = engine("auto");
            setup.restore("auto", &mut restored, &snapshot).unwrap();
            assert!(restored.assume_idle());
            let commands = drive(&mut restored, &after, cut, end);
            let spin_downs = |c: &[(Nanos, Command)]| {
                c.iter()
                    .filter(|(_, c)| matches!(c, Command::Start { .. }))
                    .count()
            };
            let later: Vec<_> = all.iter().copied().filter(|(t, _)| *t >= cut).collect();
            assert!(spin_downs(&commands) > 300, "seed {seed}, cut {cut}");
            assert_eq!(
                within_bursts(&commands),
                [],
                "seed {seed}, restored at {}",
                cut.approx()
            );
            assert_eq!(within_bursts(&later), [], "seed {seed}, continuous");
        }
    }
}

#[test]
fn the_daemons_standby_gate_caps_an_embedders_spin_downs() {
    // What the guide shows ("Guarding the drive"): the daemon's own checks
    // between a `Start` and the drive, a wear budget and the break-even,
    // applied by the embedder to the commands it drains.
    use lull::tasks::gate::{StandbyGate, WearBudget};
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let gate = StandbyGate {
        break_even: Some(setup.break_even()),
        max_spindowns_per_day: Some(48),
    };
    let days = 3;
    let requests = bursty_days(7, days);
    let mut e = engine("auto");
    assert!(e.assume_idle());
    let commands = drive(
        &mut e,
        &requests,
        Nanos::ZERO,
        Nanos::from_secs(86_400) * days,
    );
    let (mut bucket, mut sent, mut refused) = (None::<WearBudget>, Vec::new(), 0);
    for (at, command) in commands {
        if let Command::Start { budget } = command {
            match gate.admit(&mut bucket, UnixTime::EPOCH + at, budget) {
                Ok(()) => sent.push(at),
                Err(why) => {
                    refused += 1;
                    // `auto` predicts no duration: only the budget refuses.
                    assert!(why.to_string().contains("wear budget"), "{why}");
                }
            }
        }
    }
    let offered = sent.len() + refused;
    assert!(offered > 100 * days as usize, "auto offered {offered}");
    // At most a sixth of the day's budget at once, then the daily rate.
    let cap = WearBudget::capacity(48) as usize;
    assert!(
        sent.len() <= cap + 48 * days as usize,
        "{} sent",
        sent.len()
    );
    for w in sent.windows(cap + 1) {
        let (first, last) = (w[0], w[cap]);
        // cap + 1 spin-downs need at least one refill of 30 minutes.
        assert!(
            last - first >= Nanos::from_secs(1_800) - Nanos::from_secs(1),
            "{first:?}..{last:?}"
        );
    }
    assert!(refused > 0);
    // The bucket is kept across restarts as JSON, to the bit.
    let json = serde_json::to_string(&bucket).unwrap();
    assert_eq!(
        serde_json::from_str::<Option<WearBudget>>(&json).unwrap(),
        bucket
    );
    assert!(bucket.is_some());
}

/// `docs/embedding.md`'s "Picking B" with the prelude alone: a drive
/// identified from what it says about itself (embed-26 P1: `DriveFacts`
/// was not in the prelude, and the snippet failed with E0422).
#[test]
fn an_identified_drive_needs_only_the_prelude() {
    let facts = DriveFacts {
        model: Some("WDC WD40EFZX-68AWUN0".into()),
        ..DriveFacts::default()
    };
    let setup = Setup::drive(Drive::identified(&facts), Work::Standby).unwrap();
    assert!(setup.build_network("auto").is_ok());
}
