//! The replay benchmark's trace, shared by `benches/replay.rs` and
//! `examples/replay_cost.rs` (which counts its instructions) so that both
//! measure the same events.

use lull::core::prelude::*;
use lull_blktrace_replay::synth;

/// The first `requests` requests of the built-in workstation workload,
/// seed 42, as a timeline.
pub(crate) fn workstation(requests: usize) -> Timeline {
    let shape = synth::shape("workstation").expect("built-in workload");
    // The workstation makes about 1.3 requests a second.
    let secs = (requests as f64 / 1.3) as u64;
    let mut trace = synth::generate(shape, Nanos::from_secs(secs), 42);
    trace.requests.truncate(requests);
    Timeline::from_requests(&trace.requests)
}
