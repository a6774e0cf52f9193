//! Commands a previous run started and left running.

use std::time::Duration;

use tracing::{info, warn};

use crate::config::{Config, TaskConfig};
use crate::process;
use crate::state::State;

/// Commands a previous run of the daemon started and did not stop (it was
/// killed with SIGKILL, or crashed) may still run: a command that ignores
/// SIGHUP survives its daemon. Stop those that are still ours (same pid
/// and start time, see [`crate::process`]) so a command never runs twice;
/// forget the others.
pub(crate) async fn stop_orphans(state: &mut State, cfg: &Config) {
    let argvs: Vec<Vec<String>> = cfg
        .disks
        .iter()
        .flat_map(|d| match &d.task {
            TaskConfig::Command { argv, .. } => vec![argv.clone()],
            TaskConfig::Jobs { jobs, .. } => jobs.iter().map(|j| j.argv.clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    for (key, st) in &mut state.disks {
        let mut old: Vec<(String, u32, Option<u64>)> = std::mem::take(&mut st.job_pids)
            .into_iter()
            .map(|(job, p)| (format!("job {job}: command"), p.pid, p.start))
            .collect();
        if let Some(pid) = st.command_pid.take() {
            old.push(("command".into(), pid, st.command_start.take()));
        }
        for (what, pid, start) in old {
            if process::is_our_command(pid, start, &argvs) {
                warn!(
                    "disk {key}: {what} pid {pid} of a previous run still runs (the daemon was killed?); stopping it so it does not run twice"
                );
                let how = process::terminate_group(pid, start, Duration::from_secs(10)).await;
                info!("disk {key}: old {what} pid {pid} {how}");
                st.last_decision = format!("old {what} pid {pid} stopped at start ({how})");
                st.last_decision_unix = crate::timer::unix_now();
            } else {
                info!("disk {key}: {what} pid {pid} of a previous run is gone");
            }
        }
    }
}
