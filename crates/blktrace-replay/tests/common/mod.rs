//! What the integration tests share: where the public trace samples are,
//! the registry of every component, a measure by name.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The samples folder (`$LULL_TRACES`, else `../shared/traces` beside the
/// repository), or `None` after saying why the caller skips.
pub(crate) fn traces() -> Option<PathBuf> {
    let dir = std::env::var_os("LULL_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"));
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
    use lull_blktrace_replay::replay::{ReplayOptions, registry_for, replay_spec};
    let registry = registry_for(&registry(), "spindown", Some(device)).unwrap();
    let opts = ReplayOptions {
        task: "spindown".into(),
        device: Some(device.into()),
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
