//! What the integration tests share: where the public trace samples are,
//! the registry of every component, a measure by name.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The samples folder (`$LULL_TRACES`, else `../shared/traces` beside the
/// repository), or `None` after saying why the caller skips. A test that
/// calls it carries `#[cfg_attr(not(has_traces), ignore = …)]` too
/// (build.rs): this is the fallback for samples gone since the build.
pub(crate) fn traces() -> Option<PathBuf> {
    let dir = lull_testkit::probe::traces_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    if dir.is_dir() {
        Some(dir)
    } else {
        lull_testkit::skip(&format!(
            "trace samples not found at {} (set LULL_TRACES)",
            dir.display()
        ));
        None
    }
}

/// A registry with every detector and skeptic.
pub(crate) fn registry() -> lull_core::registry::Registry {
    let mut r = lull_core::registry::Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r
}

/// The measures of `spec` replayed on `tl` for the spin-down task on the
/// drive preset `device`, as `lull replay --task spindown --device DEVICE`
/// makes them.
pub(crate) fn spindown_pairs(
    tl: &lull_core::event::Timeline,
    spec: &str,
    device: &str,
) -> Vec<(&'static str, f64)> {
    spindown_pairs_gated(tl, spec, device, lull_tasks::StandbyGate::default())
}

/// [`spindown_pairs`] with the daemon's checks `gate` (`lull replay
/// --max-spindowns-per-day N`, say).
pub(crate) fn spindown_pairs_gated(
    tl: &lull_core::event::Timeline,
    spec: &str,
    device: &str,
    gate: lull_tasks::StandbyGate,
) -> Vec<(&'static str, f64)> {
    use lull_blktrace_replay::replay::{ReplayOptions, registry_for, replay_spec};
    let registry = registry_for(&registry(), "spindown", Some(device)).unwrap();
    let opts = ReplayOptions {
        task: "spindown".into(),
        device: Some(device.into()),
        gate,
        ..ReplayOptions::default()
    };
    let spec = lull_core::spec::NetworkSpec::parse(spec, Some(&registry)).unwrap();
    replay_spec(tl, &spec, &registry, &opts)
        .unwrap()
        .report
        .pairs()
}

/// The measure `name` of a report's pairs (NaN when absent).
pub(crate) fn measure(pairs: &[(&'static str, f64)], name: &str) -> f64 {
    pairs.iter().find(|p| p.0 == name).map_or(f64::NAN, |p| p.1)
}

/// A trace from gap lengths in seconds: one 5 ms request after each.
pub(crate) fn gap_trace(gaps: &[f64]) -> lull_core::event::Timeline {
    use lull_core::request::{Op, Request};
    use lull_core::time::Nanos;
    let mut reqs = Vec::with_capacity(gaps.len() + 1);
    let mut t = 0.0;
    reqs.push(Request::new(
        Nanos::ZERO,
        Nanos::from_millis(5),
        Op::Read,
        0,
        4096,
    ));
    for &g in gaps {
        t += 0.005 + g;
        reqs.push(Request::new(
            Nanos::from_secs_f64(t),
            Nanos::from_secs_f64(t + 0.005),
            Op::Read,
            0,
            4096,
        ));
    }
    lull_core::event::Timeline::from_requests(&reqs)
}
