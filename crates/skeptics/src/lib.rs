//! # lull-skeptics
//!
//! Skeptics (§3.2 of *Idleness is not sloth*): filters and combiners over
//! prediction streams, registered under their canonical names.

#![forbid(unsafe_code)]

use lull_core::registry::Registry;

/// Registers every skeptic of this crate.
pub fn register(_registry: &mut Registry) {}
