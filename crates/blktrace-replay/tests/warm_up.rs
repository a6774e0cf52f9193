//! `lull replay --warm-up` (issue 29's measurement after a day of
//! learning): the network learns from another trace first and starts the
//! replayed one with what it learned, as a daemon restarted between the
//! two would. The measures are the replayed trace's alone.

use lull_blktrace_replay::replay::{ReplayOptions, replay_spec, replay_spec_warm};
use lull_blktrace_replay::synth;
use lull_core::event::Timeline;
use lull_core::spec::NetworkSpec;
use lull_core::time::Nanos;

mod common;

use common::registry;

fn day(workload: &str, seed: u64) -> Timeline {
    let shape = synth::shape(workload).unwrap();
    let trace = synth::generate(shape, Nanos::from_secs(86_400), seed);
    Timeline::from_requests(&trace.select(None).unwrap().0).with_clock(trace.clock)
}

fn opts(device: &str) -> ReplayOptions {
    ReplayOptions {
        task: "spindown".into(),
        device: Some(device.into()),
        ..ReplayOptions::default()
    }
}

fn spec(net: &str, device: &str) -> NetworkSpec {
    let reg =
        lull_blktrace_replay::replay::registry_for(&registry(), "spindown", Some(device)).unwrap();
    NetworkSpec::parse(net, Some(&reg)).unwrap()
}

fn gauge(g: &[(String, f64)], name: &str) -> f64 {
    g.iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no gauge {name} in {g:?}"))
        .1
}

#[test]
fn a_network_that_learns_nothing_replays_as_cold() {
    let (r, d) = (registry(), "wd-red-plus");
    let (warm, t) = (day("office", 1201), day("office", 201));
    for net in ["timer(t=B)", "timer(t=4B)"] {
        let s = spec(net, d);
        let cold = replay_spec(&t, &s, &r, &opts(d)).unwrap().report.pairs();
        let warmed = replay_spec_warm(&t, &warm, &s, &r, &opts(d))
            .unwrap()
            .report
            .pairs();
        assert_eq!(cold, warmed, "{net}");
    }
}

#[test]
fn auto_starts_the_trace_with_what_it_learned_from_the_warm_up() {
    let (r, d) = (registry(), "wd-red-plus");
    let (warm, t) = (day("cron-server", 1201), day("cron-server", 201));
    let s = spec("auto", d);
    let cold = replay_spec(&t, &s, &r, &opts(d)).unwrap();
    let alone = replay_spec(&warm, &s, &r, &opts(d)).unwrap();
    let warmed = replay_spec_warm(&t, &warm, &s, &r, &opts(d)).unwrap();
    // Its fallback counts the periods of both days: nothing of the warm-up
    // was lost, nothing of it counted twice.
    let periods =
        |o: &lull_blktrace_replay::replay::ReplayOutcome| gauge(&o.gauges, "n0.fallback_periods");
    assert!(periods(&alone) > 1000.0);
    assert_eq!(periods(&warmed), periods(&cold) + periods(&alone));
    // The measures are the trace's: the same references, other decisions.
    let (c, w) = (cold.report.pairs(), warmed.report.pairs());
    let m = |p: &[(&'static str, f64)], k: &str| p.iter().find(|x| x.0 == k).unwrap().1;
    for k in [
        "baseline_energy_j",
        "best_fixed_energy_j",
        "oracle_energy_j",
    ] {
        assert_eq!(m(&c, k), m(&w, k), "{k}");
    }
    assert_ne!(m(&c, "energy_j"), m(&w, "energy_j"));
    // A periodic source learned the day before is confident from the
    // start: no hour of learning it again.
    assert!(gauge(&warmed.gauges, "n0.periodic_hits") > gauge(&cold.gauges, "n0.periodic_hits"));
}

#[test]
fn a_task_on_the_device_model_is_refused() {
    let (r, d) = (registry(), "wd-red-plus");
    let (warm, t) = (day("office", 1201), day("office", 201));
    let o = ReplayOptions {
        task: "writeback".into(),
        ..opts(d)
    };
    let reg = lull_blktrace_replay::replay::registry_for(&r, "writeback", Some(d)).unwrap();
    let s = NetworkSpec::parse("timer(t=1s) + fixed(d=10s)", Some(&reg)).unwrap();
    let e = replay_spec_warm(&t, &warm, &s, &r, &o).unwrap_err();
    assert!(e.to_string().contains("--warm-up"), "{e}");
}
