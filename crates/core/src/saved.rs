//! What one component has learned: the [`Learned`] value it saves and
//! restores, the error a restore gives, and the relative times its
//! layout is written in. [`crate::learned`] re-exports all of it beside
//! a whole network's [`Snapshot`](crate::learned::Snapshot); it is apart
//! so that the component traits, below the network and its spec, can
//! name it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::time::Nanos;

/// The most numbers a component may save (bounded state: a corrupted file
/// cannot make a restore allocate without limit).
pub const MAX_VALUES: usize = 1 << 16;

/// What one component has learned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    /// The component's name in the registry (`share`, `long-idle`).
    pub kind: String,
    /// The version of its layout.
    pub version: u32,
    /// The values, in the component's own order.
    pub values: Vec<f64>,
}

impl Learned {
    /// `kind`'s state in layout `version`.
    pub fn new(kind: &str, version: u32, values: Vec<f64>) -> Self {
        Learned {
            kind: kind.to_string(),
            version,
            values,
        }
    }

    /// The values, when this is `kind`'s state in `version` with exactly
    /// `len` finite-or-infinite (never NaN) values; an error naming what
    /// does not fit otherwise.
    pub fn expect(&self, kind: &str, version: u32, len: usize) -> Result<&[f64], LearnedError> {
        if self.kind != kind {
            return Err(LearnedError::new(format!(
                "a {} state cannot go into {kind}",
                self.kind
            )));
        }
        if self.version != version {
            return Err(LearnedError::new(format!(
                "{kind}: state version {} (this build reads version {version})",
                self.version
            )));
        }
        if self.values.len() != len {
            return Err(LearnedError::new(format!(
                "{kind}: {} values where its state has {len}",
                self.values.len()
            )));
        }
        if let Some(i) = self.values.iter().position(|v| v.is_nan()) {
            return Err(LearnedError::new(format!(
                "{kind}: value {i} is not a number"
            )));
        }
        Ok(&self.values)
    }
}

/// Why a learned state could not be restored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LearnedError(pub String);

impl LearnedError {
    /// An error saying `why`.
    pub fn new(why: impl Into<String>) -> Self {
        LearnedError(why.into())
    }
}

impl fmt::Display for LearnedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LearnedError {}

/// Writes a time `t` relative to `now`: `now - t` in nanoseconds, exact
/// as an `f64` below 2⁵³ ns (104 days); `None` as `-1`.
pub fn ago(now: Nanos, t: Option<Nanos>) -> f64 {
    t.map_or(-1.0, |t| now.saturating_sub(t).0 as f64)
}

/// The time [`ago`] wrote, back on the clock whose time is `now`; `None`
/// for a time before that clock's zero. A daemon restores at its clock's
/// zero, so what happened before it started is forgotten, as long ago,
/// rather than every such time collapsing onto the start (which made all
/// of them one instant: a periodic estimator's anchors would have
/// recurred at once).
pub fn from_ago(now: Nanos, ago: f64) -> Option<Nanos> {
    (ago >= 0.0 && ago.is_finite() && ago <= now.0 as f64)
        .then(|| now.saturating_sub(Nanos(ago as u64)))
}
