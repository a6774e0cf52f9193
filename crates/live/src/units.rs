//! Quantities in words (lull-controller's `units`, shared with the shell).

pub(crate) use lull_controller::units::{energy, secs};
