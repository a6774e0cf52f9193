//! lull trace replay (in progress).
