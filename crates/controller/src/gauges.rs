//! What the metrics know about a disk beyond its state-file counters.
//! The shell's `metrics` module renders them.

/// What the metrics know about a disk beyond its state-file counters.
#[derive(Clone, Debug)]
pub struct DiskGauges {
    /// Stable name (state-file key).
    pub key: String,
    /// Task name.
    pub task: &'static str,
    /// The idle task is running.
    pub running: bool,
    /// lull spun it down and no activity has been seen since.
    pub in_standby: bool,
    /// When the disk entered its power state (standby or active), Unix
    /// seconds, if the daemon saw it happen.
    pub power_since_unix: Option<u64>,
    /// Energy saved so far by its spin-downs, if it has a power model.
    pub energy_saved_j: Option<f64>,
    /// The shadow evaluation's figures (`standby` disks with a power
    /// model).
    pub shadow: Option<lull_activity::ShadowReport>,
    /// What the network's nodes have learned: `(node, name, value)` from
    /// [`lull_core::network::Network::node_gauges`].
    pub nodes: Vec<(String, String, f64)>,
    /// `task = "jobs"`: per job, in configuration order.
    pub jobs: Vec<crate::jobs::JobGauge>,
}
