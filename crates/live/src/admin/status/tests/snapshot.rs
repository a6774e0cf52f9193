//! The snapshot and its Prometheus text say the same: an older daemon's
//! text read back ([`from_prometheus`]) is the snapshot a daemon of today
//! serves as JSON, so status reads both alike; and status reads the JSON
//! the daemon writes beside its textfile.

use proptest::prelude::*;

use super::*;
use crate::metrics::DiskGauges;

/// A disk's state-file figures: small counters, times and awkward words.
fn disk_state() -> impl Strategy<Value = DiskState> {
    let words = "[a-z \"\\\\\n]{0,12}";
    (
        (any::<bool>(), proptest::collection::vec(0u64..1 << 40, 8)),
        (0u32..1 << 20, 0u32..1 << 20),
        (
            proptest::option::of(1u64..1 << 33),
            proptest::option::of(1u64..1 << 33),
        ),
        (
            proptest::collection::btree_map("[a-z?]{1,6}", 0u64..1000, 0..3),
            proptest::option::of((1u64..1 << 33, "[a-z-]{1,8}")),
        ),
        (
            words,
            0u64..1 << 33,
            proptest::option::of((0u64..1000, 0u64..1 << 33)),
        ),
    )
        .prop_map(
            |(
                (present, n),
                (standby, command),
                (idle, next),
                (wakeups, wake),
                (words, at, learned),
            )| {
                DiskState {
                    present,
                    idle_starts: n[0],
                    task_starts: n[1],
                    task_stops: n[2],
                    spindowns: n[3],
                    spinups: n[4],
                    errors: n[5],
                    foreign_spinups: n[6],
                    command_exits: n[7],
                    standby_s: f64::from(standby) / 8.0,
                    command_s: f64::from(command) / 3.0,
                    idle_since_unix: idle,
                    next_decision_unix: next,
                    wakeups,
                    last_wake: wake.map(|(unix, cause)| crate::state::Wake {
                        unix,
                        cause,
                        by: Vec::new(),
                    }),
                    last_decision: words,
                    last_decision_unix: at,
                    learned: learned.map(|(idle_periods, since_unix)| {
                        lull_core::learned::Snapshot {
                            format: lull_core::learned::SNAPSHOT_FORMAT,
                            network: "auto".into(),
                            breakeven_ns: 1,
                            idle_periods,
                            since_unix,
                            parts: Vec::new(),
                        }
                    }),
                    ..DiskState::default()
                }
            },
        )
}

/// A controller's gauges of disk `key`: infinite "none"s, jobs, and the
/// scene's real shadow evaluation or none.
fn gauges(key: String) -> impl Strategy<Value = DiskGauges> {
    let value = prop_oneof![
        (-1000i32..1000).prop_map(|v| f64::from(v) / 4.0),
        Just(f64::INFINITY),
        Just(f64::MAX),
        Just(f64::NEG_INFINITY),
    ];
    // By name: a disk's jobs have names of their own (the config refuses
    // two of one name).
    let jobs = proptest::collection::btree_map(
        "[a-z]{1,5}",
        (
            any::<bool>(),
            0u32..1000,
            0u64..9,
            proptest::option::of(any::<bool>()),
        ),
        0..3,
    );
    (
        (
            prop_oneof![
                Just("standby"),
                Just("flush"),
                Just("command"),
                Just("jobs")
            ],
            any::<bool>(),
            any::<bool>(),
        ),
        proptest::option::of(1u64..1 << 33),
        proptest::option::of((0u32..1 << 20).prop_map(|j| f64::from(j) / 16.0)),
        proptest::collection::vec(("[a-z0-9-]{1,6}", "[a-z_]{1,8}", value), 0..4),
        jobs,
        any::<bool>(),
    )
        .prop_map(
            move |((task, running, in_standby), since, energy, nodes, jobs, shadow)| DiskGauges {
                key: key.clone(),
                task,
                running,
                in_standby,
                power_since_unix: since,
                energy_saved_j: energy,
                shadow: shadow.then(|| scene().disks[0].shadow.clone().unwrap()),
                nodes,
                jobs: jobs
                    .into_iter()
                    .map(
                        |(name, (admitted, idle, missed, fits))| crate::jobs::JobGauge {
                            name,
                            admitted,
                            idle_s: f64::from(idle) / 2.0,
                            missed,
                            fits_observed: fits,
                        },
                    )
                    .collect(),
            },
        )
}

/// A daemon's snapshot: disks with a state-file entry, a controller or
/// both, some not exported, and hooks.
fn daemon() -> impl Strategy<Value = DaemonSnapshot> {
    let keys = proptest::collection::btree_set("[a-z]{1,3}|/dev/disk/by-id/[a-z \"]{1,5}", 1..5);
    keys.prop_flat_map(|keys| {
        let keys: Vec<String> = keys.into_iter().collect();
        let n = keys.len();
        (
            proptest::collection::vec((0u8..4, disk_state()), n),
            keys.iter().map(|k| gauges(k.clone())).collect::<Vec<_>>(),
            (any::<u32>(), any::<bool>()),
            proptest::collection::vec((0..n, 0usize..5, 0u64..99, 0u64..99), 0..4),
            Just(keys),
        )
    })
    .prop_map(|(kinds, all_gauges, (polls, dry_run), hooks, keys)| {
        // Per disk: 0 state only, 1 a controller only, 2 both, 3 a state
        // entry not exported.
        let mut state = State::default();
        let mut gauges = Vec::new();
        for ((kind, st), (key, g)) in kinds.into_iter().zip(keys.iter().zip(all_gauges)) {
            if kind != 1 {
                state.disks.insert(key.clone(), st);
            }
            if kind == 1 || kind == 2 {
                gauges.push(g);
            }
        }
        let hidden: Vec<&String> = keys
            .iter()
            .filter(|k| state.disks.contains_key(*k) && !gauges.iter().any(|g| &g.key == *k))
            .step_by(2)
            .collect();
        let exported = |k: &str| !hidden.iter().any(|h| h.as_str() == k);
        let mut snap = DaemonSnapshot::build(&state, &exported, &gauges, u64::from(polls), dry_run);
        let mut seen = std::collections::BTreeSet::new();
        for (disk, ev, runs, failures) in hooks {
            let event = lull_controller::hooks::HookEvent::ALL[ev]
                .name()
                .to_string();
            if seen.insert((keys[disk].clone(), event.clone())) {
                snap.hooks.push(HookSnapshot {
                    disk: keys[disk].clone(),
                    event,
                    runs,
                    failures,
                });
            }
        }
        snap.hooks
            .sort_by(|a, b| (&a.disk, &a.event).cmp(&(&b.disk, &b.event)));
        snap
    })
}

proptest! {
    #![proptest_config(lull_testkit::cases(128))]

    /// The Prometheus text of a snapshot reads back to the snapshot, and
    /// so does its JSON: the text and `/snapshot.json` say the same.
    #[test]
    fn the_text_and_the_json_of_a_snapshot_say_the_same(snap in daemon()) {
        let text = crate::metrics::render_snapshot(&snap);
        let back = from_prometheus(&parse_metrics(&text).unwrap());
        prop_assert_eq!(&back, &snap, "{}", text);
        let json = serde_json::to_string(&snap).unwrap();
        let from_json: DaemonSnapshot = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&from_json, &snap);
    }
}

/// Status reads the snapshot beside the textfile while it is as new as
/// the textfile, and the textfile alone once the snapshot is older (an
/// older daemon's writes, after a newer one left its file).
#[test]
fn status_reads_the_snapshot_beside_the_textfile_while_it_is_current() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("lull.prom");
    let jf = dir.path().join("lull.prom.json");
    let mut state = State::default();
    state.disk("sda").spindowns = 3;
    let snap = DaemonSnapshot::build(&state, &|_| true, &[standby_gauges("sda", None)], 5, true);
    std::fs::write(&tf, crate::metrics::render_snapshot(&snap)).unwrap();
    std::fs::write(&jf, serde_json::to_string(&snap).unwrap()).unwrap();
    let (from, read) = read_textfile(&tf, Some(&jf)).unwrap();
    assert_eq!((from, &read), (jf.clone(), &snap));
    // A daemon without the snapshot rewrites the text later.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&jf)
        .unwrap()
        .set_modified(old)
        .unwrap();
    state.disk("sda").spindowns = 4;
    let newer = DaemonSnapshot::build(&state, &|_| true, &[], 6, false);
    std::fs::write(&tf, crate::metrics::render_snapshot(&newer)).unwrap();
    let (from, read) = read_textfile(&tf, Some(&jf)).unwrap();
    assert_eq!(from, tf);
    assert_eq!(read.disks[0].spindowns, Some(4));
    assert_eq!((read.polls, read.dry_run), (6, false));
    // A snapshot that is not one is an error that names the file.
    std::fs::write(&jf, "{").unwrap();
    let e = read_textfile(&tf, Some(&jf)).unwrap_err().to_string();
    assert!(
        e.contains("lull.prom.json") && e.contains("not a lull snapshot"),
        "{e}"
    );
}
