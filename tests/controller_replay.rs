//! Live decides exactly like replay (issue 26, item 3).
//!
//! A disk's activity (completions at instants) is turned into what the
//! daemon would read: `/proc/diskstats` counters at each of its wake-ups,
//! which come at the next poll or the controller's next deadline, as in the
//! daemon's loop. The per-disk controller is driven with those samples in
//! simulated time. Independently, the test writes down the requests the
//! counter deltas stand for, as `crate::source` documents the
//! approximation (the `n` operations completed in `(t0, t]` become `n`
//! back-to-back requests filling the interval, the first arriving just
//! after `t0`; the first sample is a one-nanosecond baseline request ending
//! at its instant), and replays them with `lull replay`'s
//! library path. The controller's engine decisions (task starts and stops)
//! must be those of the replay at the same instants, to the nanosecond, for
//! `timer`, `share()` and `auto`; its standby orders leave at those
//! instants, or at most a millisecond later (the daemon's least sleep).
//!
//! Against the activity itself (not its polled form), a timer's spin-downs
//! come at most one poll later than a replay of the activity's own
//! requests, and there is one per idle period longer than the timeout,
//! when no idle period is within two polls of the timeout: a property.

use lull_activity::{Log, Record, ShadowReport};
use lull_blktrace_replay::replay::{ReplayOptions, Timing, replay_spec};
use lull_core::actuator::Command;
use lull_core::engine::{LogEntry, RunReport};
use lull_core::event::Timeline;
use lull_core::registry::Registry;
use lull_core::request::{Op, Request};
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;
use lull_live::config::Config;
use lull_live::controller::{
    Context, DiskController, NoWitness, Now, Order, Outcome, Output, Settings,
};
use lull_live::diskstats::parse;
use lull_live::source::{Family, Sample};
use lull_live::task::Intent;
use lull_tasks::gate::StandbyGate;
use proptest::prelude::*;

/// The wall clock at time zero (2027-01-15 08:00 UTC): the daemon tells
/// its engines, and the replay its timeline, so that `auto`'s time-of-day
/// features see the same hours.
const CLOCK: Nanos = Nanos(1_800_000_000_000_000_000);

/// The kernel's boot id the tests' daemon runs in: a restart that finds
/// a disk untouched in the same boot continues its idle period.
const BOOT: u128 = 0x1b2e_87f4_a0c3_4d5e_9f61_0a2b_3c4d_5e6f;

/// What the controller decided: engine starts and stops (at the engine's
/// instants), and standby orders (at the wake-up that sent them).
#[derive(Debug, Default, PartialEq)]
struct Decisions {
    starts: Vec<Nanos>,
    stops: Vec<Nanos>,
    standby_orders: Vec<Nanos>,
    /// The live side's activity-log records (issue 27).
    records: Vec<Record>,
    /// Its shadow evaluation at the end.
    shadow: Option<ShadowReport>,
    /// The idle periods its learned state counts at the end (none for a
    /// network that learns nothing).
    learned_periods: Option<u64>,
    /// The polls that brought I/O, as the test reconstructs them: the
    /// previous poll and the latest arrival.
    busy_polls: lull_tasks::BusyPolls,
}

/// The live side: the controller over the counters of `completions`
/// (sorted instants), polled every `poll` and at its deadlines until
/// `end`. Returns its decisions and the requests its samples stand for.
fn live(
    network: &str,
    completions: &[Nanos],
    poll: Nanos,
    end: Nanos,
    registry: &Registry,
) -> (Decisions, Vec<Request>) {
    live_busy(network, completions, poll, end, registry, UNLIMITED, 0)
}

/// A wear budget no test reaches.
const UNLIMITED: u32 = 1_000_000;

/// The settings' poll of every test controller.
const SETTINGS_POLL: Nanos = Nanos::from_secs(1);

thread_local! {
    /// The `max_poll` the test controllers of this thread get: the
    /// settings' poll (no adaptive poll) unless a test sets it
    /// ([`with_max_poll`]).
    static MAX_POLL: std::cell::Cell<Nanos> = const { std::cell::Cell::new(SETTINGS_POLL) };
}

/// Runs `f` with the test controllers built in it polling adaptively up to
/// `max_poll` (issue 79), as a daemon with that `max_poll` does.
fn with_max_poll<T>(max_poll: Nanos, f: impl FnOnce() -> T) -> T {
    let old = MAX_POLL.with(|m| m.replace(max_poll));
    let out = f();
    MAX_POLL.with(|m| m.set(old));
    out
}

/// [`live`], with `max_spindowns_per_day = per_day`, the kernel counting
/// `busy_ms` of busy time for each completion (diskstats' `io_ms`).
fn live_busy(
    network: &str,
    completions: &[Nanos],
    poll: Nanos,
    end: Nanos,
    registry: &Registry,
    per_day: u32,
    busy_ms: u64,
) -> (Decisions, Vec<Request>) {
    let mut ctl = controller(network, registry, per_day, CLOCK, Default::default());
    drive_saving(
        &mut ctl,
        completions,
        (poll, busy_ms),
        (Nanos::from_millis(1), end, end),
        registry,
        CLOCK,
        (None, Answer::Silent),
    )
}

/// A controller for the test disk, its engine's time zero at wall clock
/// `clock`, starting from the state-file entry `st`.
fn controller(
    network: &str,
    registry: &Registry,
    per_day: u32,
    clock: Nanos,
    st: lull_live::state::DiskState,
) -> DiskController {
    controller_with(network, registry, per_day, clock, st, false, None)
}

/// [`controller`], a dry run's (`lulld --dry-run`) with `dry_run`, of a
/// disk the daemon leaves alone for `left_alone` (as it does a drive that
/// reports no rotation) when given.
fn controller_with(
    network: &str,
    registry: &Registry,
    per_day: u32,
    clock: Nanos,
    st: lull_live::state::DiskState,
    dry_run: bool,
    left_alone: Option<&str>,
) -> DiskController {
    let text = format!(
        "[[disk]]\ndevice = \"sdx\"\nnetwork = \"{network}\"\ntask = \"standby\"\n\
         backend = \"sgio\"\nmax_spindowns_per_day = {per_day}\npreset = \"{DRIVE}\"\n"
    );
    let mut cfg =
        Config::parse(std::path::Path::new("lull.toml"), &text, registry).expect("config");
    cfg.disks[0].left_alone = left_alone.map(str::to_string);
    let family = Family {
        disk: "sdx".into(),
        partitions: vec![],
        holders: vec![],
    };
    let settings = Settings {
        power_check: Nanos::ZERO,
        dry_run,
        clock,
        poll: SETTINGS_POLL,
        max_poll: MAX_POLL.with(std::cell::Cell::get),
        boot_id: Some(BOOT),
    };
    DiskController::new(
        registry,
        &cfg.disks[0],
        "sdx",
        "sdx",
        family,
        1,
        st,
        settings,
        Nanos::ZERO,
    )
    .expect("controller")
}

/// Drives `ctl` (its time zero at wall clock `clock`) over the counters of
/// `completions` as the daemon's loop would, until `end`.
fn drive(
    ctl: &mut DiskController,
    completions: &[Nanos],
    poll: Nanos,
    end: Nanos,
    registry: &Registry,
    clock: Nanos,
) -> (Decisions, Vec<Request>) {
    drive_saving(
        ctl,
        completions,
        (poll, 0),
        (Nanos::from_millis(1), end, end),
        registry,
        clock,
        (None, Answer::Silent),
    )
}

/// The shell's state-file writes in [`drive_saving`]: every so often and
/// at once after an urgent change, as `persist.rs` makes them, keeping
/// the last entry written.
struct Saves {
    every: Nanos,
    last: Option<Nanos>,
    dirty: bool,
    written: lull_live::state::DiskState,
}

/// How the disk's actor answers each standby the controller sends, at
/// once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// Not at all (the tests of decisions alone).
    Silent,
    /// It fails (a bridge that refuses it).
    Fails,
    /// The drive spins down, as a real one does: the controller knows it
    /// is asleep, and a restart takes that up from the state file.
    SpinsDown,
}

/// [`drive`], writing the state file as the shell does when `saves` is
/// given (so that a crash at `end` leaves its last write); polling from
/// `start` until `end`, the first of `(end, stop)`, and then woken only by the
/// controller's deadlines before `stop` (a daemon stopped between polls).
/// The kernel counts `busy_ms` of busy time for each completion (0: none,
/// as for a loop device's writes). `answer` says what the actor reports
/// of each standby the controller sends.
fn drive_saving(
    ctl: &mut DiskController,
    completions: &[Nanos],
    (poll, busy_ms): (Nanos, u64),
    (start, end, stop): (Nanos, Nanos, Nanos),
    registry: &Registry,
    clock: Nanos,
    (mut saves, answer): (Option<&mut Saves>, Answer),
) -> (Decisions, Vec<Request>) {
    let done = |t: Nanos| completions.partition_point(|&c| c <= t) as u64;
    let mut d = Decisions::default();
    let mut requests = Vec::new();
    let mut out = Vec::new();
    let (mut last, mut last_ops) = (None::<Nanos>, 0u64);
    // The daemon's first poll comes just after its start.
    let mut t = start;
    loop {
        let ops = done(t);
        let sample = Sample::new(
            parse(&format!(
                "8 0 sdx {ops} 0 {} 0 0 0 0 0 0 {} 0\n",
                ops * 8,
                ops * busy_ms
            ))
            .unwrap(),
        );
        out.clear();
        let mut cx = Context {
            registry,
            witness: &mut NoWitness,
        };
        let now = Now {
            mono: t,
            unix: (clock + t).as_secs_f64() as u64,
        };
        ctl.on_poll(now, &sample, false, &mut cx, &mut out);
        for o in &out {
            match o {
                // The network's decisions (a retry of one the wear budget
                // refused is the task's, in a replay too).
                Output::Decided(Intent::Start {
                    at, retry: false, ..
                }) => d.starts.push(*at),
                Output::Decided(Intent::Stop { at }) => d.stops.push(*at),
                Output::Order {
                    job: None,
                    order: Order::Start { .. },
                } => d.standby_orders.push(t),
                Output::Activity(r) => d.records.push(r.clone()),
                _ => {}
            }
        }
        let sent = sends_standby(&out);
        let outcome = match answer {
            Answer::Silent => None,
            Answer::Fails => Some(Outcome::Failed("the bridge refused it".into())),
            Answer::SpinsDown => Some(Outcome::SpunDown("test".into())),
        };
        if let Some(outcome) = outcome.filter(|_| sent) {
            let mut reported = Vec::new();
            ctl.on_outcome(now, outcome, true, &mut NoWitness, &mut reported);
            d.records
                .extend(reported.into_iter().filter_map(|o| match o {
                    Output::Activity(r) => Some(r),
                    _ => None,
                }));
        }
        if let Some(s) = saves.as_deref_mut() {
            let (dirty, urgent) = ctl.take_changes();
            s.dirty |= dirty || urgent;
            if s.dirty && (urgent || s.last.is_none_or(|l| t - l >= s.every)) {
                s.written = ctl.state_at(t);
                s.last = Some(t);
                s.dirty = false;
                out.clear();
                ctl.state_written(&mut out);
                d.records.extend(out.iter().filter_map(|o| match o {
                    Output::Activity(r) => Some(r.clone()),
                    _ => None,
                }));
            }
        }
        // The requests these counters stand for (source.rs's spread: `n`
        // slots, each request ending at its slot's end and lasting its
        // share of the busy time, or the whole slot with no busy time
        // reported), and the poll's latest arrival.
        match last {
            None => requests.push(Request::new(t - Nanos::NANO, t, Op::Read, 0, 0)),
            Some(t0) => {
                let n = ops - last_ops;
                let dt = (t - t0).0;
                if let Some(slot) = dt.checked_div(n) {
                    let slot = slot.max(1);
                    let busy = match n * busy_ms {
                        0 => dt,
                        ms => (ms * 1_000_000).min(dt),
                    };
                    let len = (busy / n).clamp(1, slot);
                    let mut latest = t0;
                    for i in 0..n {
                        let end = if i + 1 == n {
                            t
                        } else {
                            Nanos(t0.0 + slot * (i + 1))
                        };
                        let start = Nanos(end.0.saturating_sub(len).max(t0.0 + 1).min(end.0));
                        latest = latest.max(start);
                        requests.push(Request::new(start, end, Op::Read, 0, 4096));
                    }
                    d.busy_polls.push(t0, latest);
                }
            }
        }
        last = Some(t);
        last_ops = ops;
        let least = t + Nanos::from_millis(1);
        if t >= end {
            // Stopping before the next poll: a deadline before the stop
            // still wakes it.
            match ctl.next_deadline().map(|dl| dl.max(least)) {
                Some(dl) if dl < stop && dl < t + poll => {
                    t = dl;
                    continue;
                }
                _ => break,
            }
        }
        // The daemon's loop: the next poll or the earliest deadline, at
        // least a millisecond on. The poll is the test's, or the
        // controller's own when it asks for a longer one (an adaptive
        // poll, `max_poll` above the settings' poll).
        let own = ctl.poll_every(t);
        let next_poll = t + if own > SETTINGS_POLL { own } else { poll };
        let wake = ctl
            .next_deadline()
            .map_or(next_poll, |dl| dl.min(next_poll))
            .max(t + Nanos::from_millis(1));
        t = wake.min(end);
    }
    d.shadow = ctl.shadow();
    d.learned_periods = ctl.state_at(t).learned.map(|l| l.idle_periods);
    (d, requests)
}

/// The shadow's window `w` against the replay's `report`: lull's spin-ups,
/// and lull's and the oracle's savings to the joule.
fn shadow_is_replay(
    w: &lull_activity::shadow::WindowReport,
    report: &RunReport,
) -> Result<(), TestCaseError> {
    let m = |name: &str| report.task_measure(name).unwrap_or(0.0);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
    let (lull, oracle) = (w.policy("lull").unwrap(), w.policy("oracle").unwrap());
    prop_assert_eq!(lull.spinups as f64, m("spinups"), "{:?}", w);
    for (who, shadow, replay) in [
        (
            "lull",
            lull.saved_wh,
            m("baseline_energy_j") - m("energy_j"),
        ),
        (
            "oracle",
            oracle.saved_wh,
            m("baseline_energy_j") - m("oracle_energy_j"),
        ),
    ] {
        prop_assert!(
            close(shadow * 3600.0, replay),
            "{} {} J vs replay {} J",
            who,
            shadow * 3600.0,
            replay
        );
    }
    Ok(())
}

/// The instants of the task starts in an engine's action log, up to
/// `horizon`.
fn start_instants(log: &[LogEntry], horizon: Nanos) -> Vec<Nanos> {
    let mut starts = lull_testkit::start_instants(log);
    starts.retain(|&t| t <= horizon);
    starts
}

/// Whether the controller's outputs `out` send the disk a standby.
fn sends_standby(out: &[Output]) -> bool {
    out.iter().any(|o| {
        matches!(
            o,
            Output::Order {
                job: None,
                order: Order::Start { .. }
            }
        )
    })
}

/// The drive both sides are told: the same preset, so the same B.
const DRIVE: &str = "paper-2.5in";

/// The replay side: `requests` through `lull replay`'s library path
/// (spindown, `--device DRIVE`, trace timing), its commands' instants.
fn replay(network: &str, requests: &[Request], registry: &Registry) -> Decisions {
    replay_measures(network, requests, registry, unlimited(), None).0
}

/// The gate of the daemon's [`UNLIMITED`] budget, as `lull replay
/// --max-spindowns-per-day` gives it: no refusal ever, but `auto` knows
/// the budget and paces itself as the daemon's does.
fn unlimited() -> StandbyGate {
    StandbyGate {
        break_even: None,
        max_spindowns_per_day: Some(UNLIMITED),
    }
}

/// [`replay`], with the spin-down task's measures, its standbys passing
/// `gate` (the daemon's checks, as `lull replay` of a log makes them) and,
/// with `polls`, skipped where a poll overtook them.
fn replay_measures(
    network: &str,
    requests: &[Request],
    registry: &Registry,
    gate: StandbyGate,
    polls: Option<&lull_tasks::BusyPolls>,
) -> (Decisions, RunReport) {
    let spec = NetworkSpec::parse(network, Some(registry)).expect("spec");
    let opts = ReplayOptions {
        busy_polls: polls.map(|p| std::sync::Arc::new(p.clone())),
        ..spindown(gate)
    };
    // The wall clock the daemon's engines are told, so that time-of-day
    // features see the same hours.
    let timeline = Timeline::from_requests(requests).with_clock(Some(CLOCK));
    let outcome = replay_spec(&timeline, &spec, registry, &opts).expect("replay");
    let mut d = Decisions::default();
    for e in &outcome.log {
        if let LogEntry::Command { at, command } = e {
            match command {
                Command::Start { .. } => {
                    d.starts.push(*at);
                    d.standby_orders.push(*at);
                }
                Command::Stop => d.stops.push(*at),
                _ => {}
            }
        }
    }
    (d, outcome.report)
}

/// `lull replay --task spindown --device DRIVE` with its action log, the
/// standbys passing `gate`.
fn spindown(gate: StandbyGate) -> ReplayOptions {
    ReplayOptions {
        task: "spindown".into(),
        policy: None,
        device: Some(DRIVE.into()),
        timing: Timing::Auto,
        log: true,
        gate,
        // The references do not take part in a decision.
        ..ReplayOptions::default()
    }
}

/// The options `lull replay` of a daemon's log replays with: the daemon's
/// checks (its session's wear budget and drive), its poll the references'
/// floor, the polls that overtook a standby, and what the daemon did with
/// its standbys (withheld while it knew the drive asleep; the sleep it
/// took up).
fn log_options(rebuilt: &lull_activity::Rebuilt) -> ReplayOptions {
    ReplayOptions {
        reference_floor: rebuilt.session.poll,
        busy_polls: Some(std::sync::Arc::new(rebuilt.busy_polls.clone())),
        daemon_standbys: Some(std::sync::Arc::new(rebuilt.daemon_standbys.clone())),
        ..spindown(lull_blktrace_replay::activity::daemon_gate(
            &rebuilt.session,
        ))
    }
}

/// Completions in bursts separated by idle gaps: `(gap_ms, burst)` pairs,
/// a burst being `burst` completions 5 ms apart.
fn activity(shape: &[(u64, u32)]) -> Vec<Nanos> {
    let mut t = Nanos::from_millis(500);
    let mut out = Vec::new();
    for &(gap_ms, burst) in shape {
        t += Nanos::from_millis(gap_ms);
        for _ in 0..burst {
            t += Nanos::from_millis(5);
            out.push(t);
        }
    }
    out
}

/// The controller and the replay of its samples' requests agree exactly,
/// the kernel counting `busy_ms` of busy time per completion.
fn same_as_replay(
    network: &str,
    completions: &[Nanos],
    poll: Nanos,
    busy_ms: u64,
) -> Result<(), TestCaseError> {
    let registry = lull_live::default_registry();
    let last = completions.last().copied().unwrap_or(Nanos::ZERO);
    // The replay ends at its last event: compare up to there, so a
    // decision the live side takes in the tail (after the last request)
    // is not counted against it.
    let end = last + poll;
    let (mut live, requests) = live_busy(
        network,
        completions,
        poll,
        end,
        &registry,
        UNLIMITED,
        busy_ms,
    );
    let horizon = requests.iter().map(|r| r.completion).max().unwrap_or(end);
    for v in [&mut live.starts, &mut live.stops, &mut live.standby_orders] {
        v.retain(|&t| t <= horizon);
    }
    let (mut replayed, measures) = replay_measures(
        network,
        &requests,
        &registry,
        unlimited(),
        Some(&live.busy_polls),
    );
    for v in [
        &mut replayed.starts,
        &mut replayed.stops,
        &mut replayed.standby_orders,
    ] {
        v.retain(|&t| t <= horizon);
    }
    prop_assert_eq!(&live.starts, &replayed.starts, "network {}", network);
    prop_assert_eq!(&live.stops, &replayed.stops, "network {}", network);
    // The standbys a poll overtook (its I/O at or after the decision) are
    // neither sent nor replayed: the rest leave.
    let overtaken = replayed
        .standby_orders
        .iter()
        .filter(|&&t| live.busy_polls.overtakes(t))
        .count();
    replayed
        .standby_orders
        .retain(|&t| !live.busy_polls.overtakes(t));
    let skipped = measures.task_measure("overtaken_by_poll").unwrap();
    prop_assert!(skipped >= overtaken as f64, "{} < {}", skipped, overtaken);
    // An order leaves at the wake-up that ran the engine past the
    // decision: at its instant, or up to a millisecond later when the
    // deadline fell within the millisecond after a wake-up (the daemon
    // never sleeps less than that).
    prop_assert_eq!(live.standby_orders.len(), replayed.standby_orders.len());
    for (l, r) in live.standby_orders.iter().zip(&replayed.standby_orders) {
        prop_assert!(
            *l >= *r && *l - *r <= Nanos::from_millis(1),
            "network {}: order at {}, decided at {}",
            network,
            l,
            r
        );
    }
    Ok(())
}

/// Bursts and gaps of 0.3 s to 40 s, against a 4 s timer polled every
/// second.
const SHAPE: [(u64, u32); 6] = [
    (300, 4),
    (8_000, 10),
    (2_000, 3),
    (40_000, 1),
    (4_500, 2),
    (100, 20),
];

#[test]
fn a_timer_decides_at_the_same_instants_as_its_replay() {
    let completions = activity(&SHAPE);
    same_as_replay("timer(4s)", &completions, Nanos::from_secs(1), 0).unwrap();
    // The standbys are real: one per gap longer than the timeout plus the
    // polls that see it.
    let registry = lull_live::default_registry();
    let end = *completions.last().unwrap();
    let (d, _) = live(
        "timer(4s)",
        &completions,
        Nanos::from_secs(1),
        end,
        &registry,
    );
    assert_eq!(d.standby_orders.len(), 3, "{d:?}");
}

/// Seen on a loop device with the paper drive: a poll's two writes,
/// spread over its second with 4 ms of busy time, left half a second
/// between them, and a short timer fired there; the daemon sent the
/// standby at that poll, after the I/O that ended the idle period. Such a
/// start is skipped alike by the daemon and by the replay of what it read.
#[test]
fn a_start_a_poll_overtook_is_skipped_by_the_daemon_and_the_replay() {
    let shape = [(2_000, 2), (3_000, 2), (1_500, 3), (6_000, 2)];
    let completions = activity(&shape);
    let poll = Nanos::from_secs(1);
    same_as_replay("timer(300ms)", &completions, poll, 4).unwrap();
    log_replays_like_live("timer(300ms)", &completions, (poll, 4), UNLIMITED).unwrap();
    let registry = lull_live::default_registry();
    let end = *completions.last().unwrap() + poll;
    let (d, _) = live_busy(
        "timer(300ms)",
        &completions,
        poll,
        end,
        &registry,
        UNLIMITED,
        4,
    );
    let overtaken = d
        .starts
        .iter()
        .filter(|&&t| d.busy_polls.overtakes(t))
        .count();
    assert!(overtaken >= 3, "{d:?}");
    // Every idle period after a burst (and the first, from the daemon's
    // start) still gets its spin-down, one each.
    assert_eq!(d.standby_orders.len(), shape.len() + 1, "{d:?}");
}

proptest! {
    #![proptest_config(lull_testkit::cases(64))]

    /// Over generated activity and networks, the controller's decisions are
    /// those of `lull replay` on the requests its samples stand for.
    #[test]
    fn live_decides_like_replay(
        shape in prop::collection::vec((0u64..60_000, 1u32..30), 1..40),
        network in prop::sample::select(vec!["timer(2s)", "timer(B)", "share()", "auto"]),
        poll_ms in prop::sample::select(vec![250u64, 1000, 2000]),
        busy_ms in prop::sample::select(vec![0u64, 1, 4]),
    ) {
        let completions = activity(&shape);
        same_as_replay(network, &completions, Nanos::from_millis(poll_ms), busy_ms)?;
    }

    /// Against the activity's own requests, a timer spins down once per
    /// idle period longer than its timeout, at most one poll later, when no
    /// idle period is within two polls of the timeout.
    #[test]
    fn a_timer_is_at_most_one_poll_late(
        gaps in prop::collection::vec(
            prop_oneof![100u64..2_000, 10_000u64..60_000],
            1..30,
        ),
        poll_ms in prop::sample::select(vec![250u64, 500, 1000]),
    ) {
        let timeout = Nanos::from_secs(6);
        check_timer_lateness("timer(6s)", timeout, &gaps, Nanos::from_millis(poll_ms))?;
    }

    /// The same at the poll a configuration without `poll` derives from the
    /// timer (issue 25: a tenth of its timeout, within 1 s and 60 s), so
    /// the derived default changes no decision by more than one poll.
    #[test]
    fn a_timer_at_its_derived_poll_is_at_most_one_poll_late(
        timeout_s in prop::sample::select(vec![10u64, 45, 120, 600, 1800]),
        gaps in prop::collection::vec((any::<bool>(), 0.0f64..1.0), 1..25),
    ) {
        let registry = lull_live::default_registry();
        let network = format!("timer({timeout_s}s)");
        let cfg = Config::parse(
            std::path::Path::new("lull.toml"),
            &format!("[[disk]]\ndevice = \"sdx\"\nnetwork = \"{network}\"\n"),
            &registry,
        )
        .unwrap();
        prop_assert!(cfg.poll_derived);
        let (t, p) = (timeout_s * 1000, cfg.poll.0 / 1_000_000);
        prop_assert_eq!(p, (t / 10).clamp(1000, 60_000));
        // Idle periods away from the timeout by more than two polls: short
        // ones below it, long ones above.
        let gaps: Vec<u64> = gaps
            .iter()
            .map(|&(long, x)| {
                let (lo, hi) = if long { (t + 2 * p + 1, 3 * t) } else { (10, t - 2 * p - 1) };
                lo + ((hi - lo) as f64 * x) as u64
            })
            .collect();
        check_timer_lateness(&network, Nanos::from_secs(timeout_s), &gaps, cfg.poll)?;
    }
}

/// A timer of `timeout` over single completions separated by `gaps_ms`
/// (each at least 5 ms): polled every `poll`, it spins down once per idle
/// period longer than the timeout, as a replay of the activity's own
/// requests does, each at most one poll later.
fn check_timer_lateness(
    network: &str,
    timeout: Nanos,
    gaps_ms: &[u64],
    poll: Nanos,
) -> Result<(), TestCaseError> {
    check_timer_lateness_by(network, timeout, gaps_ms, poll, poll)
}

/// [`check_timer_lateness`], each spin-down at most `late` later than the
/// replay's.
fn check_timer_lateness_by(
    network: &str,
    timeout: Nanos,
    gaps_ms: &[u64],
    poll: Nanos,
    late: Nanos,
) -> Result<(), TestCaseError> {
    let registry = lull_live::default_registry();
    let shape: Vec<(u64, u32)> = gaps_ms.iter().map(|&g| (g, 1)).collect();
    let completions = activity(&shape);
    let end = *completions.last().unwrap();
    let (d, _) = live(network, &completions, poll, end, &registry);
    // The activity's own requests: a nanosecond each (the engine's least),
    // ending at the completions, after the one the daemon's first sample
    // stands for.
    let instants: Vec<Nanos> = std::iter::once(Nanos::from_millis(1))
        .chain(completions.iter().copied())
        .collect();
    let own: Vec<Request> = instants
        .iter()
        .map(|&c| Request::new(c - Nanos::NANO, c, Op::Read, 0, 4096))
        .collect();
    let r = replay(network, &own, &registry);
    let long = instants
        .windows(2)
        .filter(|w| w[1] - w[0] > timeout)
        .count();
    prop_assert_eq!(r.standby_orders.len(), long);
    prop_assert_eq!(d.standby_orders.len(), long, "live {:?}, replay {:?}", d, r);
    for (l, o) in d.standby_orders.iter().zip(&r.standby_orders) {
        prop_assert!(
            *l >= *o && *l - *o <= late,
            "live {l}, replay {o}, at most {late} late"
        );
    }
    Ok(())
}

/// Issue 27, item 5: the daemon's activity log, written as bytes and read
/// back, rebuilds exactly the requests its samples stand for (computed
/// independently above); `lull replay` of it orders standby where the
/// daemon did; the shadow's figures for lull and the oracle are the
/// replay's spin-down measures.
fn log_replays_like_live(
    network: &str,
    completions: &[Nanos],
    (poll, busy_ms): (Nanos, u64),
    per_day: u32,
) -> Result<(), TestCaseError> {
    let registry = lull_live::default_registry();
    let last = completions.last().copied().unwrap_or(Nanos::ZERO);
    let end = last + poll;
    let (live, requests) = live_busy(network, completions, poll, end, &registry, per_day, busy_ms);
    let mut bytes = lull_activity::record::header().to_vec();
    for r in &live.records {
        r.encode(&mut bytes);
    }
    let mut log = Log::default();
    log.push_segment(&bytes, std::path::Path::new("sdx.lact"))
        .expect("the log reads back");
    prop_assert!(log.warnings.is_empty());
    prop_assert_eq!(log.runs.len(), 1);
    prop_assert_eq!(&log.runs[0].session.network, network);
    let rebuilt = log.rebuild();
    prop_assert_eq!(rebuilt.clock, CLOCK);
    prop_assert_eq!(&rebuilt.requests, &requests);
    prop_assert_eq!(&rebuilt.busy_polls, &live.busy_polls);
    let horizon = requests.iter().map(|r| r.completion).max().unwrap_or(end);
    // The daemon's checks, as `lull replay` of the log makes them: its
    // drive's break-even and the wear budget the session records.
    let gate = lull_blktrace_replay::activity::daemon_gate(&log.runs[0].session);
    prop_assert_eq!(gate.max_spindowns_per_day, Some(per_day));
    prop_assert!(gate.break_even.is_some());
    let (replayed, measures) = replay_measures(
        network,
        &rebuilt.requests,
        &registry,
        gate,
        Some(&rebuilt.busy_polls),
    );
    let within = |v: &[Nanos]| {
        v.iter()
            .copied()
            .filter(|&t| t <= horizon)
            .collect::<Vec<_>>()
    };
    // The engine decided alike; the checks let the same starts through.
    prop_assert_eq!(within(&live.starts), within(&replayed.starts));
    let m = |name: &str| measures.task_measure(name).unwrap();
    let refused = m("refused_wear_budget") + m("refused_below_break_even");
    // A start the wear budget refused is tried again when a token is
    // there, by both; the retries are the task's, not the engine's.
    let retried = m("retried_after_wear_budget");
    // The starts a poll overtook are skipped first, by both.
    let passed: Vec<Nanos> = within(&replayed.starts)
        .into_iter()
        .filter(|&t| !live.busy_polls.overtakes(t))
        .collect();
    let overtaken = replayed
        .starts
        .iter()
        .filter(|&&t| live.busy_polls.overtakes(t))
        .count() as f64;
    prop_assert!(m("overtaken_by_poll") >= overtaken);
    prop_assert!(m("overtaken_by_poll") <= overtaken + retried);
    // Every start the engine made or the task retried was overtaken,
    // refused or sent.
    prop_assert_eq!(
        within(&rebuilt.standbys).len() as f64,
        within(&replayed.starts).len() as f64 + retried - m("overtaken_by_poll") - refused
    );
    if refused == 0.0 {
        prop_assert_eq!(within(&rebuilt.standbys), passed);
    }
    // The shadow (7-day window: the whole log) against the replay: the
    // same spin-downs, to the joule.
    let w = live
        .shadow
        .as_ref()
        .expect("a standby disk has a shadow")
        .windows[1]
        .clone();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
    let lull = w.policy("lull").unwrap();
    let oracle = w.policy("oracle").unwrap();
    let saved = m("baseline_energy_j") - m("energy_j");
    let oracle_saved = m("baseline_energy_j") - m("oracle_energy_j");
    prop_assert_eq!(lull.spinups as f64, m("spinups"));
    prop_assert!(
        close(lull.saved_wh * 3600.0, saved),
        "lull {} J vs replay {} J",
        lull.saved_wh * 3600.0,
        saved
    );
    prop_assert!(
        close(oracle.saved_wh * 3600.0, oracle_saved),
        "oracle {} J vs replay {} J",
        oracle.saved_wh * 3600.0,
        oracle_saved
    );
    // `lull status`'s two counts, the learner's and the shadow's, count
    // the same idle periods of a poll or longer, deadline polls included.
    if let Some(n) = live.learned_periods {
        prop_assert_eq!(n, w.idle_periods, "learned vs shadow");
    }
    // The references held to the daemon's wear budget: the shadow's best
    // fixed timeout and clairvoyant are `lull replay`'s of the log (the
    // session's poll the floor, as `lull replay` of a log sets it), to
    // the joule.
    let timeline = Timeline::from_requests(&rebuilt.requests).with_clock(Some(CLOCK));
    let opts = ReplayOptions {
        reference_floor: log.runs[0].session.poll,
        busy_polls: Some(std::sync::Arc::new(rebuilt.busy_polls.clone())),
        ..spindown(gate)
    };
    let reference = lull_blktrace_replay::replay::trace_reference(&timeline, &opts)
        .expect("reference")
        .expect("spindown has one");
    prop_assert_eq!(w.wear_budget_per_day, Some(per_day).filter(|&n| n > 0));
    if per_day == 0 {
        // No budget to keep (the daemon never spun down): the replay's
        // references are the exact ones, the shadow's of its grid.
        return Ok(());
    }
    let base = m("baseline_energy_j");
    let rcv = reference.window_clairvoyant.expect("computed");
    for (policy, (energy, spinups)) in [
        ("best-fixed", (reference.energy_j, reference.spinups)),
        ("clairvoyant-10min", (rcv.energy_j, rcv.spinups)),
    ] {
        let p = w.policy(policy).unwrap();
        prop_assert_eq!(p.spinups, spinups, "{}", policy);
        prop_assert!(
            close(p.saved_wh * 3600.0, base - energy),
            "{} {} J vs replay {} J",
            policy,
            p.saved_wh * 3600.0,
            base - energy
        );
    }
    Ok(())
}

#[test]
fn the_activity_log_replays_to_the_daemons_spin_downs() {
    let completions = activity(&SHAPE);
    log_replays_like_live(
        "timer(4s)",
        &completions,
        (Nanos::from_secs(1), 0),
        UNLIMITED,
    )
    .unwrap();
    // And the log is not empty of decisions: three standbys.
    let registry = lull_live::default_registry();
    let (d, _) = live(
        "timer(4s)",
        &completions,
        Nanos::from_secs(1),
        *completions.last().unwrap(),
        &registry,
    );
    let standbys = d
        .records
        .iter()
        .filter(|r| matches!(r, Record::Standby(_)))
        .count();
    assert_eq!(standbys, 3);
}

/// The live side's records as a log, read back and rebuilt.
fn rebuilt_log(records: &[Record]) -> (Log, lull_activity::Rebuilt) {
    let mut bytes = lull_activity::record::header().to_vec();
    for r in records {
        r.encode(&mut bytes);
    }
    let mut log = Log::default();
    log.push_segment(&bytes, std::path::Path::new("sdx.lact"))
        .unwrap();
    let rebuilt = log.rebuild();
    (log, rebuilt)
}

/// `lull replay --net NETWORK` of a rebuilt log with the daemon's checks,
/// and with what it did with its standbys when `standbys`.
fn replay_log(
    network: &str,
    log: &Log,
    rebuilt: &lull_activity::Rebuilt,
    standbys: bool,
) -> RunReport {
    let registry = lull_live::default_registry();
    let spec = NetworkSpec::parse(network, Some(&registry)).unwrap();
    let gate = lull_blktrace_replay::activity::daemon_gate(&log.runs[0].session);
    let timeline = Timeline::from_requests(&rebuilt.requests).with_clock(Some(CLOCK));
    let opts = ReplayOptions {
        busy_polls: Some(std::sync::Arc::new(rebuilt.busy_polls.clone())),
        daemon_standbys: standbys.then(|| std::sync::Arc::new(rebuilt.daemon_standbys.clone())),
        ..spindown(gate)
    };
    replay_spec(&timeline, &spec, &registry, &opts)
        .unwrap()
        .report
}

/// The instants of the standbys `records` say were sent.
fn standbys_of(records: &[Record]) -> Vec<Nanos> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Standby(t) => Some(*t),
            _ => None,
        })
        .collect()
}

/// The `Withheld` records of `records`.
fn withheld_records(records: &[Record]) -> Vec<(Nanos, &str)> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Withheld { t, why } => Some((*t, why.as_str())),
            _ => None,
        })
        .collect()
}

/// A disk the daemon leaves alone (here: its drive reports no rotation)
/// decides as any other, sends no standby, and says so in its log once, at
/// its first decision; the replay of the log with the daemon's checks
/// withholds every start alike, so it shows no saving the daemon did not
/// make. Without the record it would replay the timer's spin-downs.
#[test]
fn a_disk_left_alone_replays_to_no_spin_down() {
    let registry = lull_live::default_registry();
    let completions = activity(&SHAPE);
    let poll = Nanos::from_secs(1);
    let end = *completions.last().unwrap() + poll;
    let why = "the drive reports no rotation (an SSD)";
    let mut ctl = controller_with(
        "timer(4s)",
        &registry,
        UNLIMITED,
        CLOCK,
        Default::default(),
        false,
        Some(why),
    );
    let (live, requests) = drive(&mut ctl, &completions, poll, end, &registry, CLOCK);
    assert!(live.starts.len() >= 3, "{:?}", live.starts);
    assert!(live.standby_orders.is_empty(), "{:?}", live.standby_orders);
    let first = live.starts[0];
    assert_eq!(
        withheld_records(&live.records),
        [(first, format!("left alone: {why}").as_str())]
    );
    assert!(!live.records.iter().any(|r| matches!(r, Record::Standby(_))));

    let (log, rebuilt) = rebuilt_log(&live.records);
    assert_eq!(rebuilt.requests, requests);
    let spans = rebuilt.daemon_standbys.withheld();
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(spans[0].0, first);
    assert!(spans[0].1 > *live.starts.last().unwrap(), "{spans:?}");

    let m = |r: &RunReport, name: &str| r.task_measure(name).unwrap();
    let with = replay_log("timer(4s)", &log, &rebuilt, true);
    assert_eq!(m(&with, "spinups"), 0.0);
    assert_eq!(m(&with, "energy_j"), m(&with, "baseline_energy_j"));
    let horizon = requests.iter().map(|r| r.completion).max().unwrap();
    let decided = live.starts.iter().filter(|&&t| t <= horizon).count() as f64;
    assert_eq!(
        m(&with, "withheld_by_daemon") + m(&with, "overtaken_by_poll"),
        decided
    );
    assert_eq!(m(&with, "failed_standbys"), 0.0);
    // The network's own decisions, as `--standby-checks none` asks: the
    // spin-downs the daemon could not make.
    let without = replay_log("timer(4s)", &log, &rebuilt, false);
    assert!(m(&without, "spinups") >= 2.0);
    assert!(without.task_measure("withheld_by_daemon").is_none());
}

/// `timer(4s)` under a budget of `per_day` on a drive behind a bridge
/// that refuses every standby: a burst every 10 s for 5 minutes (an idle
/// period of about 10 s after each, which the timer acts in), every
/// standby sent failing at once. The controller, its decisions and the
/// requests.
fn behind_a_refusing_bridge(per_day: u32) -> (DiskController, Decisions, Vec<Request>) {
    let registry = lull_live::default_registry();
    let shape = vec![(10_000u64, 3u32); 30];
    let completions = activity(&shape);
    let poll = Nanos::from_secs(1);
    let end = *completions.last().unwrap() + poll;
    let mut ctl = controller("timer(4s)", &registry, per_day, CLOCK, Default::default());
    let (live, requests) = drive_saving(
        &mut ctl,
        &completions,
        (poll, 0),
        (Nanos::from_millis(1), end, end),
        &registry,
        CLOCK,
        (None, Answer::Fails),
    );
    (ctl, live, requests)
}

/// A drive behind a bridge that refuses every standby: each standby the
/// daemon sends fails, and after three in a row it backs off (a minute,
/// then two). The log says both, and its replay does what the daemon did:
/// it takes the failed standbys' tokens, keeps the disk spinning after
/// them, and withholds the starts of the back-off, so it books no saving;
/// without them it would book a spin-down at every idle period.
#[test]
fn failed_standbys_and_their_back_off_replay_to_no_spin_down() {
    let (_, live, requests) = behind_a_refusing_bridge(UNLIMITED);
    let sent = standbys_of(&live.records);
    let failed = live
        .records
        .iter()
        .filter(|r| matches!(r, Record::StandbyFailed(_)))
        .count();
    // Three, then one after a minute, then one after two more.
    assert!((4..=6).contains(&sent.len()), "{sent:?}");
    assert_eq!(failed, sent.len());
    assert!(live.starts.len() >= 25, "{:?}", live.starts);
    let said = withheld_records(&live.records);
    assert!(said.len() >= 2, "{said:?}");
    assert_eq!(said[0].1, "it failed 3 times in a row");
    // Each back-off is ended by the decision that sends again.
    assert!(said.iter().any(|(_, w)| w.is_empty()), "{said:?}");

    let (log, rebuilt) = rebuilt_log(&live.records);
    assert_eq!(rebuilt.requests, requests);
    assert_eq!(rebuilt.daemon_standbys.failed(), &sent[..]);
    let m = |r: &RunReport, name: &str| r.task_measure(name).unwrap();
    let with = replay_log("timer(4s)", &log, &rebuilt, true);
    assert_eq!(m(&with, "spinups"), 0.0, "{with:?}");
    assert_eq!(m(&with, "energy_j"), m(&with, "baseline_energy_j"));
    assert_eq!(m(&with, "failed_standbys"), sent.len() as f64);
    let horizon = requests.iter().map(|r| r.completion).max().unwrap();
    let decided = live.starts.iter().filter(|&&t| t <= horizon).count() as f64;
    assert_eq!(
        m(&with, "withheld_by_daemon")
            + m(&with, "failed_standbys")
            + m(&with, "overtaken_by_poll"),
        decided
    );
    let without = replay_log("timer(4s)", &log, &rebuilt, false);
    assert!(m(&without, "spinups") >= 20.0, "{without:?}");
}

/// A failed standby wears nothing, and its token goes back, in the daemon
/// and in the replay of its log alike: under a budget of 6 a day (a
/// bucket of one token, the next after 4 hours) the daemon goes on
/// sending standbys at its back-off's pace, which it could not if each
/// failure spent the only token, and the replay refuses none for the
/// budget.
#[test]
fn a_failed_standby_gives_its_token_back_in_the_daemon_and_the_replay() {
    let (ctl, live, requests) = behind_a_refusing_bridge(6);
    let sent = standbys_of(&live.records);
    // Three, then one after a minute, then one after two more: as with no
    // budget at all. Had each failure spent the token, one.
    assert!((4..=6).contains(&sent.len()), "{sent:?}");
    let wear = ctl.state().wear.clone().expect("a budget");
    assert_eq!(wear.tokens, 1.0, "every token given back: {wear:?}");
    assert!(ctl.state().spindown_attempts_unix.is_empty());

    let (log, rebuilt) = rebuilt_log(&live.records);
    assert_eq!(rebuilt.requests, requests);
    let m = |r: &RunReport, name: &str| r.task_measure(name).unwrap();
    let with = replay_log("timer(4s)", &log, &rebuilt, true);
    assert_eq!(m(&with, "failed_standbys"), sent.len() as f64, "{with:?}");
    assert_eq!(m(&with, "refused_wear_budget"), 0.0, "{with:?}");
    assert_eq!(m(&with, "spinups"), 0.0, "{with:?}");
}

/// The wear budget over half a day: a burst every 30 minutes, a 4 s
/// timer, 6 spin-downs a day (a bucket of one, a token every 4 hours).
/// The daemon spins down about every 4 hours, not after every burst, and
/// the replay of its log does the same (the check runs on the engine's
/// instants in both).
#[test]
fn a_wear_budget_spaces_the_spin_downs_alike_in_the_daemon_and_the_replay_of_its_log() {
    let shape = vec![(1_800_000u64, 3u32); 26];
    let completions = activity(&shape);
    let poll = Nanos::from_secs(1);
    log_replays_like_live("timer(4s)", &completions, (poll, 0), 6).unwrap();
    let registry = lull_live::default_registry();
    let end = *completions.last().unwrap();
    let (d, _) = live_busy("timer(4s)", &completions, poll, end, &registry, 6, 0);
    let standbys = standbys_of(&d.records);
    // 13 hours: the first at once, then one per 4 hours.
    assert!((3..=4).contains(&standbys.len()), "{standbys:?}");
    assert!(d.starts.len() >= 26, "the engine decided after every burst");
    for w in standbys.windows(2) {
        assert!(
            w[1] - w[0] >= Nanos::from_secs(4 * 3600 - 1),
            "{standbys:?}"
        );
    }
}

/// An evening's bursts spend the wear budget (48 a day: 8 at once, then
/// one every 30 minutes), and the night's idle period begins with none
/// left: the standby refused at its start is tried again when a token is
/// there, and the drive sleeps the rest of the night (it spun until the
/// next I/O, a trial's NAS all night). The replay of the log retries at
/// the same instant.
#[test]
fn a_standby_the_wear_budget_refused_is_tried_again_when_a_token_comes() {
    // Twelve bursts 20 s apart, then two hours quiet, then a burst.
    let mut shape = vec![(20_000u64, 3u32); 12];
    shape.push((7_200_000, 3));
    let completions = activity(&shape);
    let poll = Nanos::from_secs(1);
    log_replays_like_live("timer(4s)", &completions, (poll, 0), 48).unwrap();
    let registry = lull_live::default_registry();
    let end = *completions.last().unwrap();
    let (d, _) = live_busy("timer(4s)", &completions, poll, end, &registry, 48, 0);
    let standbys = standbys_of(&d.records);
    // The night began at the twelfth burst's last completion.
    let night = completions[12 * 3 - 1];
    let in_night: Vec<Nanos> = standbys
        .iter()
        .copied()
        .filter(|&t| t > night && t < completions[12 * 3])
        .collect();
    assert_eq!(in_night.len(), 1, "{standbys:?}");
    // Refused at the timeout (the bucket empty), sent within the half
    // hour a token takes.
    let after = in_night[0] - night;
    assert!(
        after > Nanos::from_secs(5) && after <= Nanos::from_secs(1800 + 5),
        "{after}"
    );
    assert_eq!(
        d.starts.iter().filter(|&&t| t > night).count(),
        1,
        "one decision of the network in the night; the retry is the task's"
    );
}

/// The activity records a controller writes when it stops at `stop`.
fn stop_records(ctl: &mut DiskController, stop: Nanos) -> Vec<Record> {
    let mut out = Vec::new();
    ctl.finish(
        Now {
            mono: stop,
            unix: (CLOCK + stop).as_secs_f64() as u64,
        },
        &mut out,
    );
    out.into_iter()
        .filter_map(|o| match o {
            Output::Activity(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// The activity log of `segments`' records, each written as a segment
/// file's bytes and read back.
fn log_of(segments: &[&[Record]]) -> Log {
    let mut log = Log::default();
    for (i, recs) in segments.iter().enumerate() {
        let mut bytes = lull_activity::record::header().to_vec();
        for r in recs.iter() {
            r.encode(&mut bytes);
        }
        log.push_segment(&bytes, std::path::Path::new(&format!("{i:04}.lact")))
            .expect("the log reads back");
    }
    log
}

/// A SIGHUP that changes a disk's wear budget (24 a day, spent, then 480)
/// starts its controller again in the same daemon: the new run's time
/// zero is the old one's (the daemon's), so both runs began at the same
/// instant of the log's timeline, and the replay checked the first run's
/// decisions against the second run's budget, spinning down where the
/// daemon had refused (a trial: 29 spin-downs in the replay, 13 by the
/// daemon). Each run's checks begin where it took over.
#[test]
fn a_reload_that_raises_the_wear_budget_replays_to_the_daemons_standbys() {
    let registry = lull_live::default_registry();
    let poll = Nanos::from_secs(1);
    let first = activity(&vec![(20_000u64, 3u32); 20]);
    let end1 = *first.last().unwrap() + poll;
    let stop = end1 + poll / 2;
    let mut a = controller("timer(4s)", &registry, 24, CLOCK, Default::default());
    let (d1, _) = drive_saving(
        &mut a,
        &first,
        (poll, 0),
        (Nanos::from_millis(1), end1, stop),
        &registry,
        CLOCK,
        (None, Answer::SpinsDown),
    );
    let mut records1 = d1.records.clone();
    records1.extend(stop_records(&mut a, stop));
    // The same disk's counters, the same daemon's clock and frame.
    let from = stop + poll;
    let mut all = first.clone();
    all.extend(
        activity(&vec![(20_000u64, 3u32); 20])
            .iter()
            .map(|&c| c + from),
    );
    let mut b = controller("timer(4s)", &registry, 480, CLOCK, a.state().clone());
    b.restore(records1.iter().cloned());
    let end2 = *all.last().unwrap() + poll;
    let (d2, _) = drive_saving(
        &mut b,
        &all,
        (poll, 0),
        (from, end2, end2),
        &registry,
        CLOCK,
        (None, Answer::SpinsDown),
    );
    let log = log_of(&[&records1, &d2.records]);
    let rebuilt = log.rebuild();
    assert_eq!(rebuilt.runs.len(), 2);
    assert_eq!(
        rebuilt.runs[0].offset, rebuilt.runs[1].offset,
        "one daemon's clock"
    );
    let opts = log_options(&rebuilt);
    let timeline = Timeline::from_requests(&rebuilt.requests).with_clock(Some(rebuilt.clock));
    let spec = NetworkSpec::parse("timer(4s)", Some(&registry)).unwrap();
    let (outcome, restarts) = lull_blktrace_replay::replay::replay_spec_runs(
        &timeline,
        &spec,
        &registry,
        &opts,
        &rebuilt.runs,
    )
    .unwrap();
    assert_eq!(restarts, 1);
    let m = |name: &str| outcome.report.task_measure(name).unwrap_or(0.0);
    // The first run spent its 4 and was refused the rest.
    let daemon = rebuilt.standbys.len() as f64;
    assert!(m("refused_wear_budget") >= 10.0, "{:?}", outcome.report);
    assert_eq!(
        m("spinups"),
        daemon,
        "the daemon's spin-downs are the replay's"
    );
    let w = d2.shadow.as_ref().unwrap().windows[1].clone();
    let lull = w.policy("lull").unwrap();
    assert_eq!(lull.spinups as f64, m("spinups"));
    let saved = m("baseline_energy_j") - m("energy_j");
    assert!(
        (lull.saved_wh * 3600.0 - saved).abs() <= 1e-6 * saved.abs().max(1.0),
        "{} vs {saved}",
        lull.saved_wh * 3600.0
    );
}

/// A daemon restart: a run over `first` (its own frame) stopped cleanly at
/// its last poll, `down` with nobody watching, a second run over `second`
/// (its own frame, its own wall clock) from the state the first saved. The
/// log of both runs replays, restarts included
/// ([`lull_blktrace_replay::replay::replay_spec_runs`]), to both runs'
/// engine decisions and to the daemon's standbys.
///
/// With `how.crash` (the state file's interval), the first run writes the
/// state file as the shell does and is killed at its last poll: the
/// second starts from the last state written, and the replay resumes from
/// the learned state the log says it held. With `how.dry_first`, the
/// first run is a dry run (its own state file): the second, the real
/// daemon, takes only what it learned.
fn restart_replays_like_live(
    networks: [&str; 2],
    first: &[Nanos],
    second: &[Nanos],
    poll: Nanos,
    down: Nanos,
    per_day: u32,
    how: How,
) -> Result<[Vec<Record>; 2], TestCaseError> {
    let How {
        crash,
        dry_first,
        per_day_after,
        quiet_at_stop,
        another_boot,
    } = how;
    let registry = lull_live::default_registry();
    let end1 = first.last().copied().unwrap_or(Nanos::ZERO) + poll + quiet_at_stop;
    // A clean stop comes between two polls (a crash, at the last one).
    let stop = if crash.is_some() {
        end1
    } else {
        end1 + poll / 2
    };
    let network = networks[1];
    let mut a = controller_with(
        networks[0],
        &registry,
        per_day,
        CLOCK,
        Default::default(),
        dry_first,
        None,
    );
    let mut saves = crash.map(|every| Saves {
        every,
        last: None,
        dirty: true,
        written: Default::default(),
    });
    let (d1, _) = drive_saving(
        &mut a,
        first,
        (poll, 0),
        (Nanos::from_millis(1), end1, stop),
        &registry,
        CLOCK,
        (saves.as_mut(), Answer::SpinsDown),
    );
    let mut records1 = d1.records.clone();
    let state = match saves {
        Some(s) => {
            prop_assert!(!matches!(records1.last(), Some(Record::End(_))));
            s.written
        }
        None => {
            records1.extend(stop_records(&mut a, stop));
            prop_assert!(matches!(records1.last(), Some(Record::End(_))));
            a.state().clone()
        }
    };
    let state = if dry_first {
        // The real daemon's own file holds nothing: it takes the dry
        // run's learned state (`State::carry_over_learned`), nothing else.
        lull_live::state::DiskState {
            learned: state.learned,
            ..Default::default()
        }
    } else {
        state
    };
    let mut state = state;
    if let Some(i) = state.idle_at_stop.as_mut().filter(|_| another_boot) {
        i.boot_id = format!("{:032x}", BOOT + 1);
    }
    // A clean stop while idle: the disk untouched since (its counters go
    // on), the second run takes the idle period up.
    let resumes = state.idle_at_stop.is_some() && !another_boot;
    prop_assert!(!resumes || crash.is_none());
    let clock2 = CLOCK + stop + down;
    let per_day2 = per_day_after.unwrap_or(per_day);
    let mut b = controller(network, &registry, per_day2, clock2, state);
    // The shadow spans the restart, as the daemon's, restored from the log.
    b.restore(records1.iter().cloned());
    let end2 = second.last().copied().unwrap_or(Nanos::ZERO) + poll;
    // The disk's counters go on from the first run's (a restart is not a
    // reboot): its completions, before the second run's first poll.
    let counted: Vec<Nanos> = std::iter::repeat_n(Nanos::ZERO, first.len())
        .chain(second.iter().copied())
        .collect();
    let (d2, _) = drive_saving(
        &mut b,
        &counted,
        (poll, 0),
        (Nanos::from_millis(1), end2, end2),
        &registry,
        clock2,
        (None, Answer::SpinsDown),
    );
    let log = log_of(&[&records1, &d2.records]);
    prop_assert_eq!(log.runs.len(), 2);
    let rebuilt = log.rebuild();
    prop_assert_eq!(rebuilt.runs.len(), 2);
    let offset = rebuilt.runs[1].offset;
    prop_assert_eq!(offset, stop + down);
    prop_assert_eq!(rebuilt.runs[1].clean, crash.is_none());
    // A run that continues has no downtime: the disk was idle through it.
    prop_assert_eq!(
        rebuilt.runs[1].continues,
        resumes.then_some(offset + Nanos::from_millis(1))
    );
    prop_assert_eq!(rebuilt.runs[1].downtime.is_some(), !resumes);
    // The log names every learned state the first run wrote to the state
    // file (the first run's frame is the log's).
    let learned: Vec<Nanos> = records1
        .iter()
        .filter_map(|r| match r {
            Record::Learned { at, .. } => Some(*at),
            _ => None,
        })
        .collect();
    prop_assert!(rebuilt.runs[0].saves_learned);
    prop_assert_eq!(rebuilt.runs[0].dry_run, dry_first);
    prop_assert_eq!(&rebuilt.runs[0].saved, &learned);
    let specs: Vec<NetworkSpec> = networks
        .iter()
        .map(|n| NetworkSpec::parse(n, Some(&registry)).expect("spec"))
        .collect();
    // As `lull replay` of a log makes it.
    let opts = log_options(&rebuilt);
    let timeline = Timeline::from_requests(&rebuilt.requests).with_clock(Some(rebuilt.clock));
    // One network: `lull replay`'s path for a log; two: each run its own.
    let (outcome, restarts) = if networks[0] == networks[1] {
        lull_blktrace_replay::replay::replay_spec_runs(
            &timeline,
            &specs[1],
            &registry,
            &opts,
            &rebuilt.runs,
        )
    } else {
        lull_blktrace_replay::replay::replay_log_runs(
            &timeline,
            &specs,
            &registry,
            &opts,
            &rebuilt.runs,
        )
    }
    .expect("replay");
    prop_assert_eq!(restarts, 1);
    let horizon = rebuilt.requests.iter().map(|r| r.completion).max().unwrap();
    let replayed = start_instants(&outcome.log, horizon);
    // A crashed run's log ends at its last record: what its engine
    // decided after that (a start refused, so no standby record) is lost
    // with it, and the replay sees the disk busy from there on.
    let seen = rebuilt.runs[1].after.expect("the first run has records");
    let mut lived: Vec<Nanos> = d1
        .starts
        .iter()
        .copied()
        .filter(|&t| crash.is_none() || t <= seen)
        .collect();
    lived.extend(d2.starts.iter().map(|&t| t + offset));
    lived.retain(|&t| t <= horizon);
    // A restart that found the disk untouched continues its idle period
    // (as a reload does): the new engine, fresh, starts again while the
    // drive sleeps on (withheld: the drive is in standby already), where
    // the replay's engine goes on with the start it made before.
    let continued = rebuilt.runs[1].continues.is_some();
    let asleep = |t: &Nanos| {
        continued
            && rebuilt.daemon_standbys.withheld_at(*t) == Some("the drive is in standby already")
    };
    lived.retain(|t| !asleep(t));
    let awake: Vec<Nanos> = replayed.iter().copied().filter(|t| !asleep(t)).collect();
    prop_assert_eq!(&lived, &awake, "networks {:?}", networks);
    let m = |name: &str| outcome.report.task_measure(name).unwrap_or(0.0);
    // Refused by the checks, overtaken by a poll's I/O, or withheld by the
    // daemon (the drive asleep already); a start the wear budget refused
    // is tried again when a token is there.
    let refused = m("refused_wear_budget")
        + m("refused_below_break_even")
        + m("overtaken_by_poll")
        + m("withheld_by_daemon")
        - m("retried_after_wear_budget");
    let standbys: Vec<Nanos> = rebuilt
        .standbys
        .iter()
        .copied()
        .filter(|&t| t <= horizon)
        .collect();
    prop_assert_eq!(standbys.len() as f64, replayed.len() as f64 - refused);
    if refused == 0.0 && m("retried_after_wear_budget") == 0.0 {
        prop_assert_eq!(&standbys, &replayed);
    }
    // The daemon's evidence across the restart (its shadow, restored from
    // the first run's log) is the replay's accounting of the log: lull's
    // sleep and spin-ups to the joule, the sleep the second run took up
    // from the state file included.
    let w = d2
        .shadow
        .as_ref()
        .expect("a standby disk has a shadow")
        .windows[1]
        .clone();
    let lull = w.policy("lull").unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
    prop_assert_eq!(lull.spinups as f64, m("spinups"), "{:?}", w);
    let saved = m("baseline_energy_j") - m("energy_j");
    prop_assert!(
        close(lull.saved_wh * 3600.0, saved),
        "lull {} J vs replay {} J",
        lull.saved_wh * 3600.0,
        saved
    );
    Ok([records1, d2.records])
}

/// [`restart_replays_like_live`] for each pair of `networks` over a fixed
/// activity on both sides, a second poll and ten minutes down.
fn fixed_restarts(networks: &[[&str; 2]], how: How) {
    let first = activity(&SHAPE);
    let second = activity(&[(3_000, 2), (12_000, 5), (700, 1), (30_000, 3), (6_000, 2)]);
    for &pair in networks {
        restart_replays_like_live(
            pair,
            &first,
            &second,
            Nanos::from_secs(1),
            Nanos::from_secs(600),
            UNLIMITED,
            how,
        )
        .unwrap();
    }
}

#[test]
fn a_restart_replays_to_the_daemons_decisions_on_both_sides_of_it() {
    // A timer forgets nothing; `auto` learns, saves at the stop and
    // resumes from it in the second run's frame and wall clock.
    fixed_restarts(
        &[
            ["timer(4s)"; 2],
            ["auto"; 2],
            ["share()"; 2],
            // A configuration changed between the runs: nothing carried over.
            ["timer(4s)", "auto"],
            ["share()", "auto"],
        ],
        How::default(),
    );
}

/// A stop or reload while the drive sleeps: the second run takes the
/// standby up from the state file and sends none while the drive sleeps
/// on. Its shadow, and the replay of the log, count that sleep until the
/// I/O that wakes the drive (both had the drive spinning from the restart
/// on, so lull's figures lost the night after every reload), to the joule
/// alike.
#[test]
fn a_restart_while_asleep_counts_the_sleep_taken_up_after_it() {
    let first = activity(&SHAPE);
    // Twenty quiet minutes after the restart, then work.
    let second = activity(&[(1_200_000, 3), (12_000, 5), (30_000, 3)]);
    for network in ["timer(4s)", "auto"] {
        // In another boot (or from a state file of a daemon before
        // `idle_at_stop`): the standby is taken up, the idle period is not.
        let how = How {
            quiet_at_stop: Nanos::from_secs(300),
            another_boot: true,
            ..How::default()
        };
        let [records1, records2] = restart_replays_like_live(
            [network; 2],
            &first,
            &second,
            Nanos::from_secs(1),
            Nanos::from_secs(600),
            UNLIMITED,
            how,
        )
        .unwrap();
        // The second run took the standby up at its first poll and sent
        // none until the I/O twenty minutes on.
        let took_up: Vec<Nanos> = records2
            .iter()
            .filter_map(|r| match r {
                Record::Power {
                    t,
                    standby: true,
                    found: true,
                } => Some(*t),
                _ => None,
            })
            .collect();
        assert_eq!(took_up, [Nanos::from_millis(1)], "{network}");
        let wake = second[0] - Nanos::from_millis(5 * 2);
        // lull's saving in the shadow, with the records as written and
        // with the taking-up read as an older daemon's log has it (not
        // found): the difference is that sleep, less one spin-up.
        let saved = |found: bool| {
            let model = lull_tasks::PowerModel::preset(DRIVE).unwrap();
            let mut sh = lull_activity::Shadow::new(model.clone(), model.break_even())
                .with_floor(Nanos::from_secs(1));
            for r in records1.iter().chain(&records2) {
                let r = match r {
                    Record::Power {
                        t,
                        standby,
                        found: was,
                    } => Record::Power {
                        t: *t,
                        standby: *standby,
                        found: found && *was,
                    },
                    r => r.clone(),
                };
                sh.feed(&r);
            }
            sh.settle();
            sh.report().windows[1].policy("lull").unwrap().clone()
        };
        let (with, without) = (saved(true), saved(false));
        assert_eq!(with.spinups, without.spinups + 1, "{network}");
        let model = lull_tasks::PowerModel::preset(DRIVE).unwrap();
        let sleep_s = (wake - took_up[0]).as_secs_f64();
        let expected =
            (model.energy_s(sleep_s, 0.0, 0) - model.energy_s(sleep_s, sleep_s, 1)) / 3600.0;
        let gained = with.saved_wh - without.saved_wh;
        assert!(
            (gained - expected).abs() <= 0.01 * expected,
            "{network}: {gained} Wh gained, {expected} Wh expected"
        );
    }
}

/// A clean stop while the disk is idle, a restart ten minutes later in
/// the same boot, the disk untouched: the second run continues the idle
/// period (its session says so, and the log has no downtime request).
/// Every reference and the idle periods are then those of a disk no
/// restart touched, and so is lull's row where the drive slept through
/// the restart under a timer. Before, the downtime was one busy request:
/// each reference slept its timeout again and paid a spin-up the drive
/// never made.
#[test]
fn a_restart_while_idle_continues_the_idle_period_in_the_evidence() {
    let registry = lull_live::default_registry();
    let poll = Nanos::from_secs(1);
    let first = activity(&SHAPE);
    let second = activity(&[(30_000, 3), (12_000, 5), (400_000, 3)]);
    let down = Nanos::from_secs(600);
    let model = lull_tasks::PowerModel::preset(DRIVE).unwrap();
    let shadow = |records: &[&[Record]]| {
        let mut sh = lull_activity::Shadow::new(model.clone(), model.break_even()).with_floor(poll);
        for r in records.iter().copied().flatten() {
            sh.feed(r);
        }
        sh.settle();
        sh.report().windows[1].clone()
    };
    // The polls of the two fall up to a poll apart.
    let one_poll_wh = (model.p_active - model.p_sleep) * poll.as_secs_f64() / 3600.0;
    for (network, quiet, asleep) in [
        ("timer(4s)", 300, true),
        ("timer(4s)", 2, false),
        ("auto", 300, true),
    ] {
        let how = How {
            quiet_at_stop: Nanos::from_secs(quiet),
            ..How::default()
        };
        let [r1, r2] =
            restart_replays_like_live([network; 2], &first, &second, poll, down, UNLIMITED, how)
                .unwrap();
        let log = log_of(&[&r1, &r2]);
        assert!(log.rebuild().runs[1].continues.is_some(), "{network}");
        // The same disk, watched throughout.
        let stop = *first.last().unwrap() + poll + Nanos::from_secs(quiet) + poll / 2;
        let all: Vec<Nanos> = first
            .iter()
            .copied()
            .chain(second.iter().map(|&t| t + stop + down))
            .collect();
        let end = *all.last().unwrap() + poll;
        let mut c = controller(network, &registry, UNLIMITED, CLOCK, Default::default());
        let (d, _) = drive_saving(
            &mut c,
            &all,
            (poll, 0),
            (Nanos::from_millis(1), end, end),
            &registry,
            CLOCK,
            (None, Answer::SpinsDown),
        );
        let (restarted, whole) = (shadow(&[&r1, &r2]), shadow(&[&d.records]));
        assert_eq!(restarted.idle_periods, whole.idle_periods, "{network}");
        let mut policies = vec!["oracle", "hd-idle-10min", "hdparm-S12", "best-fixed"];
        if asleep && network.starts_with("timer") {
            policies.push("lull");
        }
        for policy in policies {
            let (p, q) = (
                restarted.policy(policy).unwrap(),
                whole.policy(policy).unwrap(),
            );
            assert_eq!(p.spinups, q.spinups, "{network}: {policy}");
            assert!(
                (p.saved_wh - q.saved_wh).abs() <= one_poll_wh + 1e-9,
                "{network}: {policy}: {p:?} vs {q:?}"
            );
        }
    }
}

/// A crash: the first run writes the state file every minute (and at once
/// after a spin-down) and is killed; the second resumes from the last
/// state written, which holds what `auto` had learned some idle periods
/// before the crash. The replay of the log resumes from the same instant,
/// so both runs' decisions match (they did not, resuming from the crash).
#[test]
fn a_crash_replays_to_the_daemons_decisions_from_its_last_saved_state() {
    fixed_restarts(
        &[
            ["auto"; 2],
            ["share()"; 2],
            ["timer(4s)"; 2],
            ["share()", "auto"],
        ],
        How {
            crash: Some(Nanos::from_secs(60)),
            ..How::default()
        },
    );
}

/// How the first run of [`restart_replays_like_live`] ends, and what it
/// was.
#[derive(Clone, Copy, Debug, Default)]
struct How {
    /// Killed, having written the state file at this interval.
    crash: Option<Nanos>,
    /// A dry run.
    dry_first: bool,
    /// The second run's wear budget, when the admin changed it.
    per_day_after: Option<u32>,
    /// The first run stays quiet this long after its last completion
    /// before it stops (long enough, it stops with the drive asleep).
    quiet_at_stop: Nanos,
    /// The second run starts in another boot than the first (its state
    /// file's idle period, if any, is not taken up; the counters, kept
    /// here, would not be either): it starts from a baseline.
    another_boot: bool,
}

/// [`restart_replays_like_live`] for a timer and `auto`, at 6 spin-downs
/// a day (a bucket of one, a token every 4 hours), over a burst every 30
/// minutes, `bursts` of them in each run.
fn half_hourly_restarts(bursts: [usize; 2], how: How) {
    let first = activity(&vec![(1_800_000u64, 3u32); bursts[0]]);
    let second = activity(&vec![(1_800_000u64, 3u32); bursts[1]]);
    for networks in [["timer(4s)"; 2], ["auto"; 2]] {
        restart_replays_like_live(
            networks,
            &first,
            &second,
            Nanos::from_secs(1),
            Nanos::from_secs(60),
            6,
            how,
        )
        .unwrap();
    }
}

/// The wear budget changed between two runs (6 a day, then 48): each run
/// is checked against its own in the replay too, as the daemon checked
/// it (the last session's budget for both would let the first run spin
/// down where its daemon refused).
#[test]
fn a_changed_wear_budget_checks_each_run_against_its_own() {
    half_hourly_restarts(
        [5, 3],
        How {
            per_day_after: Some(48),
            ..How::default()
        },
    );
}

/// A dry run, then the real daemon. The dry run spends its own budget;
/// the real daemon starts with a full one and spins down after its first
/// burst, and so does the replay of the log, which keeps a budget per mode
/// (one budget for both would refuse it).
#[test]
fn a_dry_run_then_the_real_daemon_replay_with_a_wear_budget_each() {
    half_hourly_restarts(
        [4, 2],
        How {
            dry_first: true,
            ..How::default()
        },
    );
}

proptest! {
    #![proptest_config(lull_testkit::cases(48))]

    /// Over generated activity on both sides of a restart, downtimes and
    /// networks: the log replays, restarts included, to the daemon's
    /// decisions.
    #[test]
    fn restarts_replay_like_live(
        first in prop::collection::vec((0u64..60_000, 1u32..30), 1..25),
        second in prop::collection::vec((0u64..60_000, 1u32..30), 1..25),
        down_s in 1u64..100_000,
        network in prop::sample::select(vec!["timer(2s)", "auto", "share()", "timer(1s) + average(n=3)"]),
        before in prop::sample::select(vec![None, Some("timer(2s)"), Some("auto")]),
        poll_ms in prop::sample::select(vec![250u64, 1000]),
        per_day in prop::sample::select(vec![UNLIMITED, 6]),
        crash_s in prop::option::of(prop::sample::select(vec![1u64, 60, 600])),
        dry_first in any::<bool>(),
        per_day_after in prop::option::of(prop::sample::select(vec![UNLIMITED, 48, 6])),
        quiet_s in prop::sample::select(vec![0u64, 30, 600]),
        another_boot in any::<bool>(),
    ) {
        restart_replays_like_live(
            [before.unwrap_or(network), network],
            &activity(&first),
            &activity(&second),
            Nanos::from_millis(poll_ms),
            Nanos::from_secs(down_s),
            per_day,
            How {
                crash: crash_s.map(Nanos::from_secs),
                dry_first,
                per_day_after,
                quiet_at_stop: Nanos::from_secs(quiet_s),
                another_boot,
            },
        )?;
    }

    /// Over generated activity, networks, budgets and a reload: the log
    /// replays to the daemon's decisions and evidence, and a reload while
    /// idle leaves the references as they were.
    #[test]
    fn a_reload_replays_like_live(
        shape in prop::collection::vec(
            (prop_oneof![9 => 0u64..60_000, 1 => 200_000u64..900_000], 1u32..30),
            1..15,
        ),
        after in prop::collection::vec(
            (prop_oneof![9 => 0u64..60_000, 1 => 200_000u64..900_000], 1u32..30),
            1..15,
        ),
        networks in prop::sample::select(vec![
            ["timer(2s)", "timer(2s)"],
            ["timer(B)", "auto"],
            ["auto", "auto"],
            ["share()", "timer(4s)"],
        ]),
        quiet_ms in prop_oneof![0u64..3_000, 3_000u64..900_000],
        // The same session in both runs too: a reload that starts the
        // controllers again for a top-level key (`power_check`).
        per_day in prop::sample::select(vec![[UNLIMITED, 1000], [48, 480], [6, 12], [6, 6], [UNLIMITED, UNLIMITED]]),
    ) {
        let (first, second) = (activity(&shape), activity(&after));
        reload_replays_like_live(networks, &first, &second, per_day, Nanos::from_millis(quiet_ms), false)?;
    }

    /// Over generated activity, networks and an unplug: the log replays
    /// to the daemon's decisions (none while the disk is away), and its
    /// shadow to the replay's savings.
    #[test]
    fn an_unplug_replays_like_live(
        shape in prop::collection::vec(
            (prop_oneof![9 => 0u64..60_000, 1 => 200_000u64..900_000], 1u32..30),
            1..20,
        ),
        network in prop::sample::select(vec!["timer(2s)", "timer(B)", "auto", "share()"]),
        gone_ms in 0u64..1_500_000,
        away_ms in 1_000u64..900_000,
        per_day in prop::sample::select(vec![UNLIMITED, 6]),
    ) {
        let completions = activity(&shape);
        let gone = Nanos::from_millis(gone_ms);
        unplug_replays_like_live(network, &completions, (gone, gone + Nanos::from_millis(away_ms)), per_day)?;
    }

    /// Issue 79: at the adaptive poll (`max_poll` 60 s over a 1 s poll)
    /// the log still replays to the daemon's decisions and shadow
    /// figures: it holds what the daemon saw, however seldom it looked.
    #[test]
    fn activity_log_replays_like_live_at_the_adaptive_poll(
        shape in prop::collection::vec(
            (prop_oneof![9 => 0u64..60_000, 1 => 200_000u64..1_900_000], 1u32..30),
            1..25,
        ),
        network in prop::sample::select(vec!["timer(2s)", "timer(B)", "timer(10m)", "auto"]),
        per_day in prop::sample::select(vec![UNLIMITED, 48, 6]),
    ) {
        let completions = activity(&shape);
        with_max_poll(Nanos::from_secs(60), || {
            log_replays_like_live(network, &completions, (SETTINGS_POLL, 0), per_day)
        })?;
    }

    /// Issue 79: a timer at the adaptive poll spins down in the same idle
    /// periods as on the activity itself, each at most `D` later: while
    /// idle, the daemon looks at a tenth of the time the disk has been
    /// idle (within the poll and `max_poll`), so the I/O that ends a
    /// period of up to 3 timeouts is seen at most 3/10 of a timeout late,
    /// the next period starts that late, and a poll more for the busy
    /// time.
    #[test]
    fn a_timer_at_the_adaptive_poll_is_late_by_at_most_a_tenth_of_the_idle_time(
        timeout_s in prop::sample::select(vec![10u64, 45, 120, 600, 1800]),
        gaps in prop::collection::vec((any::<bool>(), 0.0f64..1.0), 1..20),
    ) {
        let max_poll = Nanos::from_secs(60);
        let late = Nanos::from_millis(timeout_s * 300).clamp(SETTINGS_POLL, max_poll) + SETTINGS_POLL;
        let (t, p) = (timeout_s * 1000, late.0 / 1_000_000);
        // Idle periods away from the timeout by more than twice that, none
        // longer than 3 timeouts.
        let gaps: Vec<u64> = gaps
            .iter()
            .map(|&(long, x)| {
                let (lo, hi) = if long { (t + 2 * p + 1, 3 * t) } else { (10, t - 2 * p - 1) };
                lo + ((hi - lo) as f64 * x) as u64
            })
            .collect();
        let network = format!("timer({timeout_s}s)");
        with_max_poll(max_poll, || {
            check_timer_lateness_by(&network, Nanos::from_secs(timeout_s), &gaps, SETTINGS_POLL, late)
        })?;
    }

    /// Over generated activity and networks: the recorded log replays to
    /// the daemon's decisions and shadow figures.
    #[test]
    fn activity_log_replays_like_live(
        // Now and then a long quiet stretch, where a standby the wear
        // budget refused at its start is tried again when a token comes.
        shape in prop::collection::vec(
            (prop_oneof![9 => 0u64..60_000, 1 => 1_700_000u64..3_700_000], 1u32..30),
            1..30,
        ),
        network in prop::sample::select(vec![
            "timer(2s)",
            "timer(B)",
            "auto",
            // Predictions below and above B = 3 s: the break-even check
            // refuses some.
            "timer(1s) + average(n=3)",
        ]),
        poll_ms in prop::sample::select(vec![250u64, 1000]),
        per_day in prop::sample::select(vec![UNLIMITED, 48, 6, 0]),
        busy_ms in prop::sample::select(vec![0u64, 1, 4]),
    ) {
        let completions = activity(&shape);
        log_replays_like_live(
            network,
            &completions,
            (Nanos::from_millis(poll_ms), busy_ms),
            per_day,
        )?;
    }
}

/// The controller over the counters of `completions`, polled every
/// `poll` and at its deadlines until `end`, the disk absent from
/// diskstats over `[gone, back)` (another disk's line only), the drive
/// answering each standby as `answer` says, `per_day` its wear budget.
/// Returns the controller, its activity records and the engine's starts.
fn live_unplugged(
    network: &str,
    completions: &[Nanos],
    (gone, back): (Nanos, Nanos),
    (poll, end): (Nanos, Nanos),
    (registry, per_day, answer): (&Registry, u32, Answer),
) -> (DiskController, Vec<Record>, Vec<Nanos>) {
    let mut ctl = controller(network, registry, per_day, CLOCK, Default::default());
    let (mut records, mut starts) = (Vec::new(), Vec::new());
    let mut out = Vec::new();
    let mut t = Nanos::from_millis(1);
    while t <= end {
        let ops = completions.partition_point(|&c| c <= t);
        let line = if t >= gone && t < back {
            "8 0 sda 1 0 8 0 0 0 0 0 0 0 0\n".to_string()
        } else {
            format!("8 0 sdx {ops} 0 {} 0 0 0 0 0 0 0 0\n", ops * 8)
        };
        let sample = Sample::new(parse(&line).unwrap());
        let now = Now {
            mono: t,
            unix: (CLOCK + t).as_secs_f64() as u64,
        };
        out.clear();
        let mut cx = Context {
            registry,
            witness: &mut NoWitness,
        };
        ctl.on_poll(now, &sample, false, &mut cx, &mut out);
        starts.extend(out.iter().filter_map(|o| match o {
            Output::Decided(Intent::Start {
                at, retry: false, ..
            }) => Some(*at),
            _ => None,
        }));
        if answer == Answer::SpinsDown && sends_standby(&out) {
            ctl.on_outcome(
                now,
                Outcome::SpunDown("test".into()),
                true,
                &mut NoWitness,
                &mut out,
            );
        }
        records.extend(out.iter().filter_map(|o| match o {
            Output::Activity(r) => Some(r.clone()),
            _ => None,
        }));
        let next = t + poll;
        t = ctl
            .next_deadline()
            .map_or(next, |d| d.clamp(t + Nanos::from_millis(1), next));
    }
    (ctl, records, starts)
}

/// [`live_unplugged`] against `lull replay` of its log: the same engine
/// starts, none while the disk is away, and the shadow's savings for lull
/// and the oracle are the replay's, to the joule.
fn unplug_replays_like_live(
    network: &str,
    completions: &[Nanos],
    (gone, back): (Nanos, Nanos),
    per_day: u32,
) -> Result<(), TestCaseError> {
    let registry = lull_live::default_registry();
    let end = completions.last().copied().unwrap_or(Nanos::ZERO).max(back) + Nanos::from_secs(30);
    let (ctl, records, starts) = live_unplugged(
        network,
        completions,
        (gone, back),
        (Nanos::from_secs(1), end),
        (&registry, per_day, Answer::Silent),
    );
    let (log, rebuilt) = rebuilt_log(&records);
    prop_assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    // The polls that missed the disk and saw it back, if it was seen gone.
    let polls: Vec<&lull_activity::Poll> = records
        .iter()
        .filter_map(|r| match r {
            Record::Poll(p) => Some(p),
            _ => None,
        })
        .collect();
    let vanish = polls
        .iter()
        .find(|p| p.kind == lull_activity::PollKind::Vanished);
    if let Some(v) = vanish {
        let returned = polls
            .iter()
            .find(|p| p.kind == lull_activity::PollKind::Baseline && p.held_since == Some(v.t))
            .map_or(Nanos::MAX, |p| p.t);
        prop_assert!(v.t >= gone && v.t < gone + Nanos::from_secs(1));
        // `lull replay` says how long it was away (to the run's end when
        // it never came back).
        let until = if returned == Nanos::MAX {
            rebuilt.end
        } else {
            returned
        };
        prop_assert_eq!(&rebuilt.away, &vec![(v.t, until)]);
        prop_assert!(
            starts.iter().all(|&s| s <= v.t || s > returned),
            "a start while away ({:?} to {:?}): {:?}",
            v.t,
            returned,
            starts
        );
    }
    let gate = lull_blktrace_replay::activity::daemon_gate(&log.runs[0].session);
    let (replayed, measures) = replay_measures(
        network,
        &rebuilt.requests,
        &registry,
        gate,
        Some(&rebuilt.busy_polls),
    );
    let horizon = rebuilt
        .requests
        .iter()
        .map(|r| r.completion)
        .max()
        .unwrap_or(end);
    let within = |v: &[Nanos]| {
        v.iter()
            .copied()
            .filter(|&t| t <= horizon)
            .collect::<Vec<_>>()
    };
    prop_assert_eq!(within(&starts), within(&replayed.starts));
    let w = ctl.shadow().expect("a standby disk has a shadow").windows[1].clone();
    shadow_is_replay(&w, &measures)?;
    Ok(())
}

/// A disk unplugged while it sleeps, and plugged back in a minute later
/// (a USB drive, a hot-swap bay): lull's drive slept until it vanished,
/// not through its absence. The daemon's engine holds the absence as busy
/// (`PollKind::Vanished`), so its shadow and `lull replay` of its log
/// credit lull, and every reference, with no sleep while the drive did not
/// exist (a trial saw a replay count 43 s of absence as energy saved), and
/// its network learns no idle period that ran through it. The shadow
/// leaves the absence out of the time watched.
#[test]
fn an_unplugged_disk_is_credited_no_sleep_while_it_is_gone() {
    let registry = lull_live::default_registry();
    let network = "timer(10s)";
    let secs = Nanos::from_secs;
    // Work until 5 s; unplugged from 40 s to 100 s; work again at 130 s.
    let completions: Vec<Nanos> = (1..=5).chain([130, 131]).map(secs).collect();
    let (gone, back, end) = (secs(40), secs(100), secs(135));
    let (ctl, records, _) = live_unplugged(
        network,
        &completions,
        (gone, back),
        (secs(1), end),
        (&registry, UNLIMITED, Answer::SpinsDown),
    );
    let ms = Nanos::from_millis;
    // Spun down at 15 s (the timer after the last I/O's poll) and at
    // 110 s (after the baseline that saw it back): no standby while gone.
    assert_eq!(standbys_of(&records), [ms(15_001), ms(110_001)]);
    // The daemon counted the sleep until it vanished, and a spin-up there.
    let st = ctl.state_at(end);
    assert_eq!(st.spinups, 2);
    let model = lull_tasks::PowerModel::preset(DRIVE).unwrap();
    // lull slept 15 → 40 s and 110 s → the arrival of the I/O counted at
    // the 130 s poll (just after the 129 s poll): 44 s, two spin-ups. The
    // oracle slept through both idle periods: 5 → 40 s and 100 → 129 s.
    let (lull_sleep, oracle_sleep) = (25.0 + 19.0, 35.0 + 29.0);
    let saved_wh = |sleep: f64, spinups: u64| {
        (model.energy_s(sleep, 0.0, 0) - model.energy_s(sleep, sleep, spinups)) / 3600.0
    };
    let shadow = ctl.shadow().expect("a standby disk has a shadow");
    let w = &shadow.windows[1];
    let (lull, oracle) = (w.policy("lull").unwrap(), w.policy("oracle").unwrap());
    assert_eq!((lull.spinups, oracle.spinups), (2, 2));
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 + 1e-3 * b.abs();
    assert!(near(lull.saved_wh, saved_wh(lull_sleep, 2)), "{lull:?}");
    assert!(
        near(oracle.saved_wh, saved_wh(oracle_sleep, 2)),
        "{oracle:?}"
    );
    // Watched: the run less the minute it was gone.
    let watched = (end - ms(1)).as_secs_f64() - (back - gone).as_secs_f64();
    assert!((w.observed_s - watched).abs() < 1.0, "{}", w.observed_s);
    // `lull replay` of the log, with the daemon's checks and standbys:
    // the same spin-downs and savings, to the joule.
    let (log, rebuilt) = rebuilt_log(&records);
    assert!(log.warnings.is_empty(), "{:?}", log.warnings);
    assert_eq!(rebuilt.away, [(ms(40_001), ms(100_001))]);
    let report = replay_log(network, &log, &rebuilt, true);
    let m = |name: &str| report.task_measure(name).unwrap();
    assert_eq!(m("spinups"), 2.0);
    let replay_saved = m("baseline_energy_j") - m("energy_j");
    assert!(
        near(replay_saved, lull.saved_wh * 3600.0),
        "replay {replay_saved} J, shadow {} J",
        lull.saved_wh * 3600.0
    );
    let oracle_saved = m("baseline_energy_j") - m("oracle_energy_j");
    assert!(
        near(oracle_saved, oracle.saved_wh * 3600.0),
        "{oracle_saved}"
    );
    // Without the daemon's standbys the replay's own engine decides, and
    // it decided as the daemon's did: no spin-down while the drive was
    // gone, the same savings.
    let own = replay_log(network, &log, &rebuilt, false);
    assert_eq!(own.task_measure("spinups"), Some(2.0));
    let own_saved =
        own.task_measure("baseline_energy_j").unwrap() - own.task_measure("energy_j").unwrap();
    assert!(
        near(own_saved, replay_saved),
        "{own_saved} J vs {replay_saved} J"
    );
}

/// A SIGHUP reload that starts a disk's controller again (its network or
/// wear budget changed) while the disk is idle: the new controller takes
/// the old one's counters over at the next poll (`continue_from`), with no
/// baseline, and its run continues the old one (`Session::continues`).
/// `lull replay` of the log builds the new network there, idle, as the
/// daemon did, and makes the daemon's starts; the shadow is the replay's
/// to the joule; and the references are those of a disk no reload
/// touched (an audit: a reload while asleep cost every reference its
/// timeout's sleep again and a spin-up the drive never made, and lull's
/// `timer(60s)` beat the identical 60 s reference by 14 %). With
/// `untouched`, the disk must be handed over, and its idle periods and
/// references are compared with those of a run no reload touched (for
/// activity whose gaps are far from a poll: the two see I/O at polls
/// that fall at other instants).
fn reload_replays_like_live(
    networks: [&str; 2],
    first: &[Nanos],
    second: &[Nanos],
    per_day: [u32; 2],
    quiet_at_reload: Nanos,
    untouched: bool,
) -> Result<(), TestCaseError> {
    let registry = lull_live::default_registry();
    let poll = Nanos::from_secs(1);
    let end1 = first.last().copied().unwrap_or(Nanos::ZERO) + poll + quiet_at_reload;
    // The reload comes between two polls; the new controller starts at
    // the next one.
    let (stop, t0) = (end1 + poll / 2, end1 + poll);
    let all: Vec<Nanos> = first
        .iter()
        .copied()
        .chain(second.iter().map(|&t| t + t0))
        .collect();
    let end2 = all.last().copied().unwrap_or(t0) + poll;
    let mut a = controller(
        networks[0],
        &registry,
        per_day[0],
        CLOCK,
        Default::default(),
    );
    let (d1, _) = drive_saving(
        &mut a,
        &all,
        (poll, 0),
        (Nanos::from_millis(1), end1, stop),
        &registry,
        CLOCK,
        (None, Answer::SpinsDown),
    );
    let handover = a.handover();
    let mut records1 = d1.records.clone();
    records1.extend(stop_records(&mut a, stop));
    let mut b = controller(networks[1], &registry, per_day[1], CLOCK, a.state().clone());
    b.restore(records1.iter().cloned());
    let continued = handover.is_some();
    if let Some(t) = handover {
        b.continue_from(t, t0, a.state().idle_since_unix);
    }
    let (d2, _) = drive_saving(
        &mut b,
        &all,
        (poll, 0),
        (t0, end2, end2),
        &registry,
        CLOCK,
        (None, Answer::SpinsDown),
    );
    let log = log_of(&[&records1, &d2.records]);
    let rebuilt = log.rebuild();
    prop_assert_eq!(rebuilt.runs.len(), 2);
    prop_assert_eq!(rebuilt.runs[1].continues, continued.then_some(t0));
    if continued {
        prop_assert_eq!(rebuilt.runs[1].downtime, None);
    }
    let specs: Vec<NetworkSpec> = networks
        .iter()
        .map(|n| NetworkSpec::parse(n, Some(&registry)).expect("spec"))
        .collect();
    let opts = log_options(&rebuilt);
    let timeline = Timeline::from_requests(&rebuilt.requests).with_clock(Some(rebuilt.clock));
    let (outcome, restarts) = lull_blktrace_replay::replay::replay_log_runs(
        &timeline,
        &specs,
        &registry,
        &opts,
        &rebuilt.runs,
    )
    .expect("replay");
    prop_assert_eq!(restarts, 1);
    let horizon = rebuilt.requests.iter().map(|r| r.completion).max().unwrap();
    let replayed = start_instants(&outcome.log, horizon);
    // The new engine, fresh, starts again while the drive sleeps on (a
    // start the daemon withholds: the drive is in standby already); the
    // replay's engine goes on with the start it made before the reload.
    // Neither sends anything there.
    let asleep = |t: &Nanos| {
        rebuilt.daemon_standbys.withheld_at(*t) == Some("the drive is in standby already")
    };
    let lived: Vec<Nanos> = d1
        .starts
        .iter()
        .chain(&d2.starts)
        .copied()
        .filter(|&t| t <= horizon)
        .filter(|t| !asleep(t))
        .collect();
    let replayed: Vec<Nanos> = replayed.into_iter().filter(|t| !asleep(t)).collect();
    prop_assert_eq!(&lived, &replayed, "networks {:?}", networks);
    let w = d2.shadow.as_ref().expect("a shadow").windows[1].clone();
    shadow_is_replay(&w, &outcome.report)?;
    if untouched {
        prop_assert!(continued, "idle at the reload, yet no handover");
        // The references of a disk that no reload touched.
        let mut c = controller(
            networks[0],
            &registry,
            per_day[0],
            CLOCK,
            Default::default(),
        );
        let (d, _) = drive_saving(
            &mut c,
            &all,
            (poll, 0),
            (Nanos::from_millis(1), end2, end2),
            &registry,
            CLOCK,
            (None, Answer::SpinsDown),
        );
        let whole = d.shadow.as_ref().expect("a shadow").windows[1].clone();
        // The same idle periods and spin-ups; the sleep within a poll's
        // worth (the new controller's polls and wake-ups fall at other
        // instants than the untouched one's, so it sees the next I/O up to
        // a poll apart).
        let model = lull_tasks::PowerModel::preset(DRIVE).unwrap();
        let one_poll_wh = (model.p_active - model.p_sleep) * poll.as_secs_f64() / 3600.0;
        prop_assert_eq!(w.idle_periods, whole.idle_periods);
        for policy in ["oracle", "hd-idle-10min"] {
            let (p, q) = (w.policy(policy).unwrap(), whole.policy(policy).unwrap());
            prop_assert_eq!(p.spinups, q.spinups, "{}", policy);
            prop_assert!(
                (p.saved_wh - q.saved_wh).abs() <= one_poll_wh + 1e-9,
                "{}: {:?} vs {:?}",
                policy,
                p,
                q
            );
        }
    }
    Ok(())
}

/// A reload while asleep, with the same network (only the wear budget
/// changed): lull's row and every reference are those of a disk no reload
/// touched, and the replay of the log decides as the daemon did.
#[test]
fn a_reload_while_idle_continues_the_idle_period_in_the_evidence() {
    let first = activity(&SHAPE);
    let second = activity(&[(30_000, 3), (12_000, 5), (400_000, 3)]);
    for (networks, quiet) in [
        (["timer(4s)", "timer(4s)"], 300),
        (["timer(4s)", "timer(4s)"], 2),
        (["auto", "auto"], 300),
        (["timer(B)", "auto"], 40),
    ] {
        reload_replays_like_live(
            networks,
            &first,
            &second,
            [48, 480],
            Nanos::from_secs(quiet),
            true,
        )
        .unwrap();
    }
}
