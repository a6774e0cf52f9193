//! lull live (in progress).
