//! lull rank (in progress).
