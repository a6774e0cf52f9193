//! `lull replay --restart-every` (issue 32, item 3): a network rebuilt
//! every day with the state it learned decides exactly as one that never
//! stopped, on every built-in workload and both presets; without the
//! state it forgets, and the replay says how many times it restarted.

use lull_blktrace_replay::replay::{ReplayOptions, replay_spec, replay_spec_restarting};
use lull_blktrace_replay::restart::Restart;
use lull_blktrace_replay::synth;
use lull_core::event::Timeline;
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;

mod common;

use common::{measure, registry};

#[test]
fn a_daily_restart_with_the_learned_state_changes_nothing() {
    let r = registry();
    let day = Nanos::from_secs(86_400);
    for shape in synth::WORKLOADS {
        let trace = synth::generate(shape, day + day, 7);
        let requests = trace.select(None).unwrap().0;
        let tl = Timeline::from_requests(&requests);
        for device in ["wd-red-plus", "paper-2.5in"] {
            let opts = ReplayOptions {
                task: "spindown".into(),
                device: Some(device.into()),
                ..ReplayOptions::default()
            };
            let reg =
                lull_blktrace_replay::replay::registry_for(&r, "spindown", Some(device)).unwrap();
            let spec = NetworkSpec::parse("auto", Some(&reg)).unwrap();
            let straight = replay_spec(&tl, &spec, &r, &opts).unwrap().report.pairs();
            for every in [day, Nanos::from_secs(6 * 3600)] {
                let restart = Restart { every, keep: true };
                let (o, n) = replay_spec_restarting(&tl, &spec, &r, &opts, restart).unwrap();
                let kept = o.report.pairs();
                let what = format!("{} on {device}, every {}", shape.name, every.approx());
                assert!(n >= 1, "{what}: no restart");
                for m in ["energy_j", "spinups"] {
                    assert_eq!(measure(&kept, m), measure(&straight, m), "{what}: {m}");
                }
            }
        }
    }
}

#[test]
fn restarts_without_the_state_forget_and_are_counted() {
    let r = registry();
    let shape = synth::shape("office").unwrap();
    let trace = synth::generate(shape, Nanos::from_secs(86_400), 3);
    let requests = trace.select(None).unwrap().0;
    let tl = Timeline::from_requests(&requests);
    let opts = ReplayOptions {
        task: "spindown".into(),
        device: Some("wd-red-plus".into()),
        ..ReplayOptions::default()
    };
    let reg =
        lull_blktrace_replay::replay::registry_for(&r, "spindown", Some("wd-red-plus")).unwrap();
    let spec = NetworkSpec::parse("auto", Some(&reg)).unwrap();
    let straight = replay_spec(&tl, &spec, &r, &opts).unwrap().report.pairs();
    let hour = Nanos::from_secs(3600);
    let (cold, n) = replay_spec_restarting(
        &tl,
        &spec,
        &r,
        &opts,
        Restart {
            every: hour,
            keep: false,
        },
    )
    .unwrap();
    // A restart per hour that ends an idle period: at most 23 in a day.
    assert!((12..=23).contains(&n), "{n} restarts");
    assert_ne!(
        measure(&cold.report.pairs(), "energy_j"),
        measure(&straight, "energy_j"),
        "forgetting every hour changed nothing"
    );
    // A model-timed task cannot restart; a zero interval is refused.
    let wb = ReplayOptions {
        task: "writeback".into(),
        ..ReplayOptions::default()
    };
    let e = replay_spec_restarting(
        &tl,
        &spec,
        &r,
        &wb,
        Restart {
            every: hour,
            keep: true,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("trace-timed"), "{e}");
    let e = replay_spec_restarting(
        &tl,
        &spec,
        &r,
        &opts,
        Restart {
            every: Nanos::ZERO,
            keep: true,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("above 0"), "{e}");
}
