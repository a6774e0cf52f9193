//! What components have learned, kept across restarts.
//!
//! A learning component (`share`'s expert weights, `long-idle`'s model,
//! an adaptive timer's timeout, a backoff's estimate) gets better the more
//! idle periods it has seen. A daemon that restarts, reboots or is
//! upgraded would otherwise start every learner from zero; so each
//! component can [save](crate::component::StartDetector::save) what it
//! learned as a [`Learned`] value and [restore](crate::component::StartDetector::restore)
//! it into a fresh copy of itself.
//!
//! What is saved is what holds beyond the current idle period:
//! statistics about the device (weights, estimates, a model), with any
//! time in it written relative to the moment of the save, so that it is
//! meaningful on another clock (the daemon's monotonic time starts again
//! after a reboot; a time that would fall before the new clock's zero is
//! forgotten, [`from_ago`]). A component whose learning follows the wall
//! clock (a periodic source's phase) may keep the save's wall time too,
//! from [`Context::clock`](crate::component::Context::clock), and carry
//! its phase over the time away. What belongs to the moment (an alarm armed, the idle
//! period in progress) is not: a restored component starts outside any
//! idle period, as a fresh one does.
//!
//! The format is a flat list of numbers per component, tagged with the
//! component's name and a version of its layout, and a [`Snapshot`] of a
//! whole network tagged with the network's spec and the break-even time
//! it was built with. It is deliberately plain: serde writes it in any
//! format (the daemon uses its JSON state file), a changed layout is a
//! new version that the old reader rejects, and a restore checks every
//! length before it touches anything, so a corrupted or foreign state is
//! an error (the caller starts cold), never a panic or a wrong model.

use serde::{Deserialize, Serialize};

pub use crate::saved::{Learned, LearnedError, MAX_VALUES, ago, from_ago};
use crate::time::{Nanos, UnixTime};

/// The layout version of [`Snapshot`] itself.
pub const SNAPSHOT_FORMAT: u32 = 1;

/// A whole network's learned state: one entry per component, in the
/// network's order (`None` for a component that learns nothing).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// [`SNAPSHOT_FORMAT`] when written.
    pub format: u32,
    /// The network's spec, as the daemon or replay built it: a state only
    /// goes back into the network it came from. The daemon writes the
    /// spec of its configuration (`auto`); the `lull` facade's
    /// `Setup::snapshot` writes what the network was built from, named
    /// networks expanded ([`Network::spec`](crate::network::Network::spec):
    /// `long-idle` for `auto` on a spinning-down drive), so a state
    /// learned under one expansion is refused by another.
    pub network: String,
    /// The break-even time B the network was built with (nanoseconds): a
    /// network built for another drive learned another scale.
    pub breakeven_ns: u64,
    /// Idle periods the network has seen, over every run that carried
    /// this state (the daemon counts those of at least its poll).
    pub idle_periods: u64,
    /// When learning began (Unix seconds; 0 unknown).
    pub since_unix: u64,
    /// The components' states.
    pub parts: Vec<Option<Learned>>,
}

impl Snapshot {
    /// The break-even time B the network was built with
    /// ([`Snapshot::breakeven_ns`] as a duration).
    pub fn break_even(&self) -> Nanos {
        Nanos(self.breakeven_ns)
    }

    /// When learning began ([`Snapshot::since_unix`] as a wall-clock
    /// instant); `None` when unknown (0).
    pub fn since(&self) -> Option<UnixTime> {
        (self.since_unix > 0).then(|| UnixTime::from_secs(self.since_unix))
    }

    /// Whether this state fits a network built from `network` with
    /// break-even `breakeven`; the reason when it does not. The two specs
    /// are the same network when they are the same text or parse to the
    /// same spec (`auto ` or `timer( 10s )+fixed(1m)`: spacing is not part
    /// of a spec); a spec written another way (`10000ms` for `10s`) is
    /// another network.
    pub fn fits(&self, network: &str, breakeven: Option<Nanos>) -> Result<(), LearnedError> {
        if self.format != SNAPSHOT_FORMAT {
            return Err(LearnedError::new(format!(
                "learned state format {} (this build reads {SNAPSHOT_FORMAT})",
                self.format
            )));
        }
        if !same_spec(&self.network, network) {
            return Err(LearnedError::new(format!(
                "it was learned by network {:?}, the disk now runs {network:?}",
                self.network
            )));
        }
        let b = breakeven.map_or(0, |b| b.0);
        if self.breakeven_ns != b {
            return Err(LearnedError::new(format!(
                "it was learned with break-even {} (breakeven_ns = {}), the disk's is now {} ({}ns)",
                Nanos(self.breakeven_ns).approx(),
                self.breakeven_ns,
                Nanos(b).approx(),
                b
            )));
        }
        let total: usize = self.parts.iter().flatten().map(|l| l.values.len()).sum();
        if total > MAX_VALUES {
            return Err(LearnedError::new(format!(
                "{total} values, more than the {MAX_VALUES} a network may keep"
            )));
        }
        Ok(())
    }
}

/// Whether specs `a` and `b` name the same network for a learned state:
/// the same text, or texts that parse to the same spec (they differ only
/// in spacing). [`Snapshot::fits`] asks it; a replay of a daemon's
/// restarts asks it too, to keep the state where the daemon kept it.
pub fn same_spec(a: &str, b: &str) -> bool {
    use crate::spec::NetworkSpec;
    a == b
        || matches!(
            (NetworkSpec::parse(a, None), NetworkSpec::parse(b, None)),
            (Ok(x), Ok(y)) if x.to_string() == y.to_string()
        )
}
