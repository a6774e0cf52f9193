//! The references of a replay made with the daemon's wear budget (`lull
//! replay` of an activity log, `lull rank --from-daemon`): the best fixed
//! timeout in hindsight is the best of the shadow's candidates, each
//! replayed as `timer(c)` through the engine under the same budget, to
//! the joule; so the token buckets of `BestFixed::under_wear_budget` are
//! the gate's, and the daemon's shadow (which uses the same buckets) says
//! what a replay says.

use lull_blktrace_replay::activity::lull_activity::shadow::fixed_timeouts;
use lull_blktrace_replay::replay::{ReplayOptions, replay_spec, trace_reference};
use lull_blktrace_replay::synth;
use lull_core::event::Timeline;
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;
use lull_tasks::{PowerModel, StandbyGate};

mod common;

use common::{measure, registry};

/// 2023-11-14 22:13:20 UTC: the wall clock the budget refills by.
const CLOCK: Nanos = Nanos(1_700_000_000_000_000_000);

#[test]
fn the_best_fixed_timeout_under_a_budget_is_the_best_of_its_timers_replayed() {
    let r = registry();
    let floor = Nanos::from_secs(1);
    let mut bound = 0;
    for name in ["office", "cron-server", "workstation", "home-nas"] {
        let shape = synth::shape(name).unwrap();
        let trace = synth::generate(shape, Nanos::from_secs(8 * 3600), 11);
        let requests = trace.select(None).unwrap().0;
        let tl = Timeline::from_requests(&requests).with_clock(Some(CLOCK));
        for device in ["paper-2.5in", "wd-red-plus"] {
            let b = PowerModel::preset(device).unwrap().break_even();
            for per_day in [6u32, 48] {
                let opts = ReplayOptions {
                    task: "spindown".into(),
                    device: Some(device.into()),
                    gate: StandbyGate {
                        break_even: Some(b),
                        max_spindowns_per_day: Some(per_day),
                    },
                    reference_floor: floor,
                    ..ReplayOptions::default()
                };
                let what = format!("{name} on {device}, {per_day} a day");
                let reference = trace_reference(&tl, &opts).unwrap().unwrap();
                let mut best = (f64::INFINITY, 0.0, Nanos::ZERO);
                let (mut base, mut free_spinups) = (f64::NAN, 0.0f64);
                for c in fixed_timeouts(b, floor) {
                    let spec = NetworkSpec::parse(&format!("timer(t={}ns)", c.0), None).unwrap();
                    let m = replay_spec(&tl, &spec, &r, &opts).unwrap().report.pairs();
                    base = measure(&m, "baseline_energy_j");
                    let e = measure(&m, "energy_j");
                    if e < best.0 {
                        best = (e, measure(&m, "spinups"), c);
                    }
                    // The same timer without the budget, for the check
                    // below that the budget binds somewhere.
                    let free = ReplayOptions {
                        gate: StandbyGate::default(),
                        ..opts.clone()
                    };
                    let fm = replay_spec(&tl, &spec, &r, &free).unwrap().report.pairs();
                    free_spinups = free_spinups.max(measure(&fm, "spinups"));
                }
                if best.0 >= base {
                    // Never spinning down is best.
                    assert_eq!(reference.spinups, 0, "{what}");
                    assert!((reference.energy_j - base).abs() < 1e-6 * base, "{what}");
                } else {
                    assert_eq!(reference.spinups as f64, best.1, "{what}");
                    assert!(
                        (reference.energy_j - best.0).abs() <= 1e-6 * best.0,
                        "{what}: {} J against {} J by replay at {}",
                        reference.energy_j,
                        best.0,
                        best.2.approx()
                    );
                    assert_eq!(reference.timeout_s, best.2.as_secs_f64(), "{what}");
                }
                let cv = reference.window_clairvoyant.unwrap();
                assert!(cv.energy_j <= reference.energy_j + 1e-9, "{what}");
                if free_spinups > f64::from(per_day) / 3.0 {
                    bound += 1;
                }
            }
        }
    }
    // The budget held some timer back somewhere, or nothing was tested.
    assert!(bound > 0);
}
