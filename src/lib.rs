//! lull facade (in progress).
