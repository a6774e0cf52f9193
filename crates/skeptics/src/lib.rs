//! lull skeptics (in progress).
