//! lull detectors (in progress).
