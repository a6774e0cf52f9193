//! Issue 19 on the built-in structured workloads: two jobs whose total need
//! is 80 % of the measured idle capacity are both admitted and meet their
//! deadlines; at 150 % the lower-ranked one is refused, with the exact
//! shortfall.

use lull_blktrace_replay::replay::task_breakeven;
use lull_blktrace_replay::synth;
use lull_core::event::Timeline;
use lull_core::time::Nanos;
use lull_reserve::forecast::HOURS_PER_DAY;
use lull_reserve::plan::{JobSpec, PlanOptions, PlanReport, measure, plan};
use lull_reserve::reserve::{Decision, Request};

const DAY: Nanos = Nanos::from_secs(86_400);
const STEP: Nanos = Nanos::from_secs(60);

fn timeline(name: &str) -> Timeline {
    let shape = synth::shape(name).expect("a built-in workload");
    let trace = synth::generate(shape, DAY, 1);
    let (requests, _) = trace.select(None).unwrap();
    Timeline::from_requests(&requests).with_clock(trace.clock)
}

fn daily(name: &str, amount: Nanos) -> JobSpec {
    JobSpec {
        name: name.into(),
        ranked: vec![Request {
            period_hours: 24,
            amount,
            step: STEP,
        }],
        extra: false,
    }
}

fn opts() -> PlanOptions {
    PlanOptions {
        wait: task_breakeven("spindown", None).unwrap(),
        best_effort: 0.1,
        sigmas: 0.0,
        end: Some(DAY),
    }
}

fn run(tl: &Timeline, share_each: f64, capacity_s: f64) -> PlanReport {
    let amount = Nanos::from_secs_f64(share_each * capacity_s);
    plan(
        tl,
        &[daily("scrub", amount), daily("backup", amount)],
        &opts(),
    )
    .unwrap()
}

#[test]
fn eighty_percent_fits_and_one_hundred_fifty_percent_is_refused_by_the_right_amount() {
    for name in ["office", "home-nas", "db-checkpoint"] {
        let tl = timeline(name);
        // Measure the idle capacity for 60 s steps.
        let measured = measure(&tl, &[STEP], opts().wait, DAY);
        let capacity = measured.window(STEP, 0, HOURS_PER_DAY).unwrap();
        assert!(capacity.mean_s > 3600.0, "{name}: {capacity:?}");

        // 80 %: both admitted, every deadline met, each got its amount.
        let r = run(&tl, 0.4, capacity.mean_s);
        for d in &r.decisions {
            assert!(
                matches!(d.decision, Decision::Granted { rank: 0, .. }),
                "{name}: {d:?}"
            );
        }
        assert_eq!(r.jobs.len(), 2);
        for j in &r.jobs {
            assert_eq!((j.windows, j.met), (1, 1), "{name}: {j:?}");
            assert!(j.obtained >= j.requested());
        }

        // 150 %: the first is admitted, the second refused; the shortfall
        // is what the 90 % share leaves after the first.
        let r = run(&tl, 0.75, capacity.mean_s);
        assert!(matches!(r.decisions[0].decision, Decision::Granted { .. }));
        let Decision::Refused { shortfalls } = &r.decisions[1].decision else {
            panic!(
                "{name}: the second job must be refused: {:?}",
                r.decisions[1]
            )
        };
        let cap = r.forecast.capacity(0.0);
        let usable: u64 = (0..HOURS_PER_DAY)
            .map(|h| (0.9 * cap.usable(STEP, h).unwrap().as_nanos() as f64).floor() as u64)
            .sum();
        let amount = Nanos::from_secs_f64(0.75 * capacity.mean_s).as_nanos();
        let expected = 2 * amount - usable;
        assert_eq!(shortfalls[0].1.per_day.as_nanos(), expected, "{name}");
        // About 60 % of the capacity: 150 % asked, 90 % reservable.
        let ratio = shortfalls[0].1.per_day.as_secs_f64() / capacity.mean_s;
        assert!((ratio - 0.6).abs() < 0.01, "{name}: {ratio}");
        assert_eq!(r.jobs.len(), 1);
        assert_eq!(r.jobs[0].met, r.jobs[0].windows);
    }
}
