//! lull live (in progress).
pub mod diskstats;
pub mod source;
