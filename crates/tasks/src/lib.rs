//! lull tasks (in progress).
