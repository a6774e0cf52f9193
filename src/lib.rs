//! # lull
//!
//! Find idle time in storage devices and put it to work. This facade
//! re-exports the crates an embedder needs; the `lull` binary is built on
//! it.

#![forbid(unsafe_code)]

pub use lull_core as core;
pub use lull_detectors as detectors;
pub use lull_skeptics as skeptics;
pub use lull_tasks as tasks;

use lull_core::registry::Registry;

/// A registry with every built-in start detector, duration predictor and
/// skeptic.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r
}
