//! What woke a disk, as the controller records it: the snapshot type,
//! the attribution and the tally of wakers. The shell's `wakeup` module
//! reads `/proc` to fill them.

use std::collections::{BTreeMap, HashMap};

/// Storage I/O counters of every process, by pid: `(comm, bytes)`.
pub type Snapshot = HashMap<u32, (String, u64)>;

/// What the shell's `wakeup::attribute` found woke a disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attribution {
    /// For the log line: `", woken by smbd (pid 12, …)"` (empty when there
    /// was no snapshot to judge).
    pub text: String,
    /// For `LULL_WOKEN_BY`: `"smbd (pid 12, …)"`, the most likely first;
    /// `unknown` when they are gone.
    pub names: Option<String>,
    /// For the state file: the most likely process's name and every
    /// suspect's name.
    pub suspects: Option<(String, Vec<String>)>,
}

/// The name a waker is counted under (the state file's tally, the
/// `comm` label of `lull_wakeups_total`, `lull status`): its name, but a
/// kernel worker's without the pool and the instance the kernel numbers
/// it by, `kworker/u8:4-loop0` as `kworker (loop0)`. The same work was
/// counted under as many names as there were workers (a loop trial's
/// status listed `kworker/u8:4-loop0 22, kworker/u8:2-loop0 17,
/// kworker/u8:1-loop0 4`), and each one was a new label value. The log
/// line keeps the whole name, with its pid.
pub fn tally_name(comm: &str) -> String {
    kworker_queue(comm).map_or_else(|| comm.to_string(), |wq| format!("kworker ({wq})"))
}

/// `counts` (waker names and their wake-ups) tallied under
/// [`tally_name`]: what the state file of an older daemon, or the last
/// textfile it left, counted by kernel-worker instance, as it is counted
/// now.
pub fn tally<'a>(counts: impl IntoIterator<Item = (&'a str, u64)>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (comm, n) in counts {
        *out.entry(tally_name(comm)).or_default() += n;
    }
    out
}

/// The workqueue a kernel worker's name says it last ran (`loop0` of
/// `kworker/u8:4-loop0`, `flush-8:16` of `kworker/u8:2+flush-8:16`; `+`
/// while it runs), if it is a worker that names one.
pub fn kworker_queue(comm: &str) -> Option<&str> {
    let (_, wq) = comm.strip_prefix("kworker/")?.split_once(['-', '+'])?;
    (!wq.is_empty()).then_some(wq)
}
