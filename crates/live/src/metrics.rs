//! Metrics in the Prometheus text format: a node_exporter textfile and,
//! when configured, a tiny HTTP/1.1 endpoint.
//!
//! The responder is hand-rolled on tokio (one request per connection,
//! `Connection: close`, 8 KiB request limit): a scrape endpoint needs
//! nothing more, and an HTTP framework would outweigh the rest of the
//! daemon. Every connection is its own task with its own deadlines (the
//! request within 5 s, the whole exchange within 10 s), and there is no
//! cap on connections: idle or slow clients only hold their own task (a
//! few hundred bytes) until their deadline, and never stand between a
//! scraper and its answer. The process's file-descriptor limit bounds them;
//! when it is reached, accepting pauses briefly.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::snapshot::{DaemonSnapshot, DiskSnapshot, HookSnapshot, JobSnapshot};
use crate::state::State;

pub use lull_controller::gauges::DiskGauges;

/// The name of the commented-out sample that carries a disk's last
/// decision: `# lull_last_decision{disk="KEY",text="WORDS"} UNIX`.
pub const LAST_DECISION: &str = "lull_last_decision";

/// A per-disk metric: name, help, type (`counter`, `gauge`), and how to
/// read it from a disk's snapshot (`None`: no sample for that disk).
type PerDisk = (
    &'static str,
    &'static str,
    &'static str,
    fn(&DiskSnapshot) -> Option<f64>,
);

pub(crate) fn label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The shadow evaluation's metrics: per disk, policy and window.
fn shadow_metrics(out: &mut String, disks: &[DiskSnapshot]) {
    let rows = || {
        disks
            .iter()
            .filter_map(|d| d.shadow.as_ref().map(|r| (d, r)))
            .flat_map(|(d, r)| r.iter().map(move |w| (label(&d.disk), w)))
    };
    type PerPolicy = (
        &'static str,
        &'static str,
        fn(&lull_activity::shadow::PolicyFigures) -> Option<f64>,
    );
    let per_policy: [PerPolicy; 3] = [
        (
            "lull_shadow_energy_joules",
            "Energy over the window of what lull did and of what fixed timeouts, the best fixed timeout in hindsight and the clairvoyant timer (both under the daemon's wear budget) and the oracle would have spent (shadow evaluation).",
            |p| Some(p.energy_j),
        ),
        (
            "lull_shadow_spinups_total",
            "Spin-ups over the window, per policy (shadow evaluation; a windowed count, so a gauge).",
            |p| Some(p.spinups as f64),
        ),
        (
            "lull_shadow_timeout_seconds",
            "The timeout of each fixed policy of the shadow evaluation (hd-idle's, hdparm -S values, the best fixed one in hindsight); absent for lull, the oracle, the clairvoyant and a best fixed policy of never spinning down.",
            |p| p.timeout_s,
        ),
    ];
    for (name, help, value) in per_policy {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for (disk, w) in rows() {
            for p in &w.policies {
                let Some(x) = value(p) else { continue };
                let _ = writeln!(
                    out,
                    "{name}{{disk=\"{disk}\",policy=\"{}\",window=\"{}\"}} {}",
                    p.policy,
                    w.window,
                    Value(x)
                );
            }
        }
    }
    type PerWindow = (
        &'static str,
        &'static str,
        fn(&lull_activity::shadow::WindowReport) -> Option<f64>,
    );
    // With the observed time, the idle periods and the baseline too,
    // `lull status` shows the shadow from the metrics (current to the
    // second) rather than from the state file (up to `state_interval`
    // old).
    let per_window: [PerWindow; 7] = [
        (
            "lull_shadow_excess_vs_best_fixed",
            "(lull - oracle) / (best fixed - oracle) in energy over the window: below 1, lull beat every fixed timeout.",
            |w| w.excess_vs_best_fixed,
        ),
        (
            "lull_shadow_gain_vs_clairvoyant",
            "(best fixed - lull) / (best fixed - clairvoyant per-10-minute timer) in energy over the window: the share of what the clairvoyant adds that lull captured.",
            |w| w.gain_vs_clairvoyant,
        ),
        (
            "lull_shadow_observed_seconds",
            "Seconds the daemon watched the disk in the window, while it was present (shadow evaluation; the time it was unplugged is left out).",
            |w| Some(w.observed_s),
        ),
        (
            "lull_shadow_dry_run_seconds",
            "Of the seconds watched in the window, those a dry run watched: lull's figures there count the spin-downs it would have made (shadow evaluation).",
            |w| Some(w.dry_run_s),
        ),
        (
            "lull_shadow_idle_periods",
            "Idle periods of a poll or longer that ended in the window (shadow evaluation).",
            |w| Some(w.idle_periods as f64),
        ),
        (
            "lull_shadow_baseline_energy_joules",
            "Energy over the window of a disk that never sleeps (shadow evaluation).",
            |w| Some(w.baseline_energy_j),
        ),
        (
            "lull_shadow_wear_budget_per_day",
            "The wear budget (spin-downs a day) the best fixed timeout and the clairvoyant timer are held to, as the daemon is; absent without one (shadow evaluation).",
            |w| w.wear_budget_per_day.map(f64::from),
        ),
    ];
    for (name, help, value) in per_window {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for (disk, w) in rows() {
            if let Some(x) = value(w) {
                let _ = writeln!(
                    out,
                    "{name}{{disk=\"{disk}\",window=\"{}\"}} {}",
                    w.window,
                    Value(x)
                );
            }
        }
    }
}

/// A sample's value in the text format: `NaN`, `+Inf` and `-Inf` as the
/// format spells them, and the gauges' "none" (`f64::MAX`, or anything
/// beyond 1e300: [`lull_core::registry::GaugeInfo`]) as `+Inf` rather
/// than its 309 digits; every other value as Rust writes it, the shortest
/// text that reads back to the same `f64`.
struct Value(f64);

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        if v.is_nan() {
            f.write_str("NaN")
        } else if v >= 1e300 {
            f.write_str("+Inf")
        } else if v <= -1e300 {
            f.write_str("-Inf")
        } else {
            write!(f, "{v}")
        }
    }
}

/// An instant the snapshot exported: Unix seconds, NaN for none.
fn instant(t: Option<Option<u64>>) -> Option<f64> {
    t.map(|t| t.map_or(f64::NAN, |t| t as f64))
}

/// Renders every metric, for every disk of `state` and `gauges`: the
/// text of [`DaemonSnapshot::build`]'s snapshot.
pub fn render(state: &State, gauges: &[DiskGauges], polls: u64, dry_run: bool) -> String {
    render_snapshot(&DaemonSnapshot::build(
        state,
        &|_| true,
        gauges,
        polls,
        dry_run,
    ))
}

/// Renders `snap` in the Prometheus text format: what the textfile holds
/// and `GET /metrics` answers.
pub fn render_snapshot(snap: &DaemonSnapshot) -> String {
    let mut out = String::with_capacity(4096);
    let disks = &snap.disks;
    let per_disk: [PerDisk; 14] = [
        (
            "lull_idle_starts_total",
            "Idle periods observed: each time the disk's counters stopped moving between two polls (lull status counts those of at least a poll; a learner's own gauge counts the periods it learned from, by its own clock).",
            "counter",
            |d| d.idle_starts.map(|n| n as f64),
        ),
        (
            "lull_task_starts_total",
            "The network's decisions to start the idle task (for standby also those the wear budget or the break-even check refused: lull_spindowns_total counts the spin-downs sent).",
            "counter",
            |d| d.task_starts.map(|n| n as f64),
        ),
        (
            "lull_task_stops_total",
            "Idle task stops.",
            "counter",
            |d| d.task_stops.map(|n| n as f64),
        ),
        (
            "lull_spindowns_total",
            "Spin-downs issued by lull.",
            "counter",
            |d| d.spindowns.map(|n| n as f64),
        ),
        (
            "lull_spinups_total",
            "Activity on disks lull spun down.",
            "counter",
            |d| d.spinups.map(|n| n as f64),
        ),
        (
            "lull_standby_seconds_total",
            "Time in standby after lull's spin-downs.",
            "counter",
            |d| d.standby_s,
        ),
        (
            "lull_errors_total",
            "Errors while acting on the disk.",
            "counter",
            |d| d.errors.map(|n| n as f64),
        ),
        (
            "lull_foreign_spinups_total",
            "Spin-ups lull did not cause, seen by CHECK POWER MODE.",
            "counter",
            |d| d.foreign_spinups.map(|n| n as f64),
        ),
        (
            "lull_command_exits_total",
            "Idle commands that ran to their end.",
            "counter",
            |d| d.command_exits.map(|n| n as f64),
        ),
        (
            "lull_command_seconds_total",
            "Time the idle command ran, neither paused nor stopped.",
            "counter",
            |d| d.command_s,
        ),
        // What the network learned, for `lull status` (the state file's is
        // up to `state_interval` old): no sample for a network that learns
        // nothing, or before its first idle period.
        (
            "lull_learned_idle_periods",
            "Idle periods of a poll or longer the disk's network has seen, over every run that kept its state.",
            "gauge",
            |d| d.learned_idle_periods.map(|n| n as f64),
        ),
        (
            "lull_learned_since_timestamp_seconds",
            "Since when the disk's network has been learning (its state kept across restarts).",
            "gauge",
            |d| d.learned_since_unix.map(|t| t as f64),
        ),
        // The current idle period and the network's next decision in it,
        // for `lull status`: NaN while the disk is busy (or absent), or
        // nothing is due. Unix seconds are exact in an f64.
        (
            "lull_idle_since_timestamp_seconds",
            "When the disk's current idle period began (NaN while it is busy).",
            "gauge",
            |d| instant(d.idle_since_unix),
        ),
        (
            "lull_next_decision_timestamp_seconds",
            "When the disk's network decides next unless I/O comes (NaN: nothing is due).",
            "gauge",
            |d| instant(d.next_decision_unix),
        ),
    ];
    for (name, help, kind, f) in per_disk {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for d in disks {
            if let Some(v) = f(d) {
                let _ = writeln!(out, "{name}{{disk=\"{}\"}} {}", label(&d.disk), Value(v));
            }
        }
    }
    let _ = writeln!(
        out,
        "# HELP lull_wakeups_total Spin-ups by the process that most likely caused them (best effort; `unknown`: gone, `NAME?`: did I/O but holds no file on the disk).\n# TYPE lull_wakeups_total counter"
    );
    for d in disks {
        for (comm, n) in &d.wakeups {
            let _ = writeln!(
                out,
                "lull_wakeups_total{{disk=\"{}\",comm=\"{}\"}} {n}",
                label(&d.disk),
                label(comm)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP lull_last_wake_timestamp_seconds When the disk last woke (I/O after the idle task acted, or a spin-up), by cause (`spinup`, `foreign-spinup`, `io`).\n# TYPE lull_last_wake_timestamp_seconds gauge"
    );
    for d in disks {
        if let Some((unix, cause)) = &d.last_wake {
            let _ = writeln!(
                out,
                "lull_last_wake_timestamp_seconds{{disk=\"{}\",cause=\"{}\"}} {unix}",
                label(&d.disk),
                label(cause.as_deref().unwrap_or(""))
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP lull_disk_present Whether the disk is in /proc/diskstats.\n# TYPE lull_disk_present gauge"
    );
    for d in disks {
        if let Some(present) = d.present {
            let _ = writeln!(
                out,
                "lull_disk_present{{disk=\"{}\"}} {}",
                label(&d.disk),
                u8::from(present)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP lull_task_running Whether the idle task runs.\n# TYPE lull_task_running gauge"
    );
    for d in disks {
        if let (Some(task), Some(running)) = (&d.task, d.task_running) {
            let _ = writeln!(
                out,
                "lull_task_running{{disk=\"{}\",task=\"{task}\"}} {}",
                label(&d.disk),
                u8::from(running)
            );
        }
    }
    // What the controller knows beyond the state file, a sample per disk
    // (none where the function gives none).
    type PerGauge = (&'static str, &'static str, fn(&DiskSnapshot) -> Option<f64>);
    let per_gauge: [PerGauge; 3] = [
        (
            "lull_in_standby",
            "Whether lull spun the disk down (or found it in standby, or the daemon's previous run left it so) and it has stayed idle.",
            |d| d.in_standby.map(|b| f64::from(u8::from(b))),
        ),
        (
            "lull_power_state_since_timestamp_seconds",
            "When the disk entered the power state lull_in_standby shows, if the daemon saw it happen (a spin-down, a wake, a standby found after the disk was seen awake; NaN before it sees one); while lull_disk_present is 0, when the daemon saw the disk vanish.",
            |d| instant(d.power_since_unix),
        ),
        (
            "lull_energy_saved_joules",
            "Estimated energy saved while the disk was in standby, whoever spun it down, up to the poll that saw the I/O that woke it (power model of the disk's preset; lull status's lull line counts lull's own spin-downs, to the I/O's arrival).",
            |d| d.energy_saved_j,
        ),
    ];
    for (name, help, f) in per_gauge {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for d in disks {
            if let Some(v) = f(d) {
                let _ = writeln!(out, "{name}{{disk=\"{}\"}} {}", label(&d.disk), Value(v));
            }
        }
    }
    // The last decision's words, as comments: a label holding them would
    // start a new series at every decision, and Prometheus ignores a
    // comment. An older `lull status` reads them back.
    for d in disks {
        if let (Some(text), Some(unix)) = (&d.last_decision, d.last_decision_unix) {
            let _ = writeln!(
                out,
                "# {LAST_DECISION}{{disk=\"{}\",text=\"{}\"}} {unix}",
                label(&d.disk),
                label(text),
            );
        }
    }
    shadow_metrics(&mut out, disks);
    let _ = writeln!(
        out,
        "# HELP lull_node_gauge What a detector network node has learned (a share node's weights, an adaptive timeout).\n# TYPE lull_node_gauge gauge"
    );
    for d in disks {
        for n in &d.nodes {
            let _ = writeln!(
                out,
                "lull_node_gauge{{disk=\"{}\",node=\"{}\",name=\"{}\"}} {}",
                label(&d.disk),
                label(&n.node),
                label(&n.name),
                Value(n.value)
            );
        }
    }
    type JobMetric = (
        &'static str,
        &'static str,
        &'static str,
        fn(&JobSnapshot) -> f64,
    );
    let job_metrics: [JobMetric; 4] = [
        (
            "lull_job_admitted",
            "gauge",
            "Whether admission control admitted the job's reservation.",
            |j| f64::from(u8::from(j.admitted)),
        ),
        (
            "lull_job_idle_seconds_total",
            "counter",
            "Time the job's command ran in the disk's idle time.",
            |j| j.idle_s,
        ),
        (
            "lull_job_deadlines_missed_total",
            "counter",
            "Reservation windows in which the job got less than its reservation.",
            |j| j.deadlines_missed as f64,
        ),
        (
            "lull_job_fits_observed",
            "gauge",
            "Whether the job fits the idle time observed (after a full day; NaN before).",
            |j| j.fits_observed.map_or(f64::NAN, |f| f64::from(u8::from(f))),
        ),
    ];
    for (name, kind, help, f) in job_metrics {
        if disks.iter().all(|d| d.jobs.is_empty()) {
            break;
        }
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for d in disks {
            for j in &d.jobs {
                let _ = writeln!(
                    out,
                    "{name}{{disk=\"{}\",job=\"{}\"}} {}",
                    label(&d.disk),
                    label(&j.name),
                    Value(f(j))
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "# HELP lull_polls_total Reads of /proc/diskstats.\n# TYPE lull_polls_total counter\nlull_polls_total {}",
        snap.polls
    );
    let _ = writeln!(
        out,
        "# HELP lull_dry_run Whether the daemon only logs its decisions.\n# TYPE lull_dry_run gauge\nlull_dry_run {}",
        u8::from(snap.dry_run)
    );
    hook_metrics(&mut out, &snap.hooks);
    out
}

/// The hooks' counters, by disk and event.
fn hook_metrics(out: &mut String, hooks: &[HookSnapshot]) {
    if hooks.is_empty() {
        return;
    }
    for (name, help, pick) in [
        (
            "lull_hook_runs_total",
            "Hooks started, by disk and event.",
            (|h: &HookSnapshot| h.runs) as fn(&HookSnapshot) -> u64,
        ),
        (
            "lull_hook_failures_total",
            "Hooks that failed to start, exited non-zero or timed out (killed), by disk and event.",
            |h: &HookSnapshot| h.failures,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for h in hooks {
            let _ = writeln!(
                out,
                "{name}{{disk=\"{}\",event=\"{}\"}} {}",
                label(&h.disk),
                h.event,
                pick(h)
            );
        }
    }
}

/// What the daemon serves at one time: the snapshot's two renderings.
#[derive(Debug, Default)]
pub struct Exported {
    /// The Prometheus text (`GET /metrics`, the textfile).
    pub text: String,
    /// The snapshot as JSON (`GET /snapshot.json`, the file beside the
    /// textfile), read by `lull status`.
    pub json: String,
}

impl Exported {
    /// Both renderings of `snap`.
    pub fn of(snap: &DaemonSnapshot) -> Exported {
        Exported {
            text: render_snapshot(snap),
            // A snapshot is plain data: writing it cannot fail.
            json: serde_json::to_string(snap).unwrap_or_default() + "\n",
        }
    }
}

/// The path `GET /snapshot.json` answers at, as `lull status` asks it.
pub const SNAPSHOT_PATH: &str = "/snapshot.json";

/// Serves `GET /metrics` and `GET /snapshot.json` on `listener` with the
/// latest renderings from `rx` until the sender is dropped.
pub async fn serve(listener: TcpListener, rx: watch::Receiver<Arc<Exported>>) {
    loop {
        let (mut sock, _) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("metrics endpoint: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let rx = rx.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(10), respond(&mut sock, rx)).await;
        });
    }
}

async fn respond(
    sock: &mut tokio::net::TcpStream,
    rx: watch::Receiver<Arc<Exported>>,
) -> std::io::Result<()> {
    let mut buf = [0u8; 8192];
    let mut n = 0;
    let head_by = tokio::time::Instant::now() + Duration::from_secs(5);
    while n < buf.len() {
        let r = tokio::time::timeout_at(head_by, sock.read(&mut buf[n..]))
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        if r == 0 {
            break;
        }
        n += r;
        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n")
            || buf[..n].windows(2).any(|w| w == b"\n\n")
        {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf[..n]);
    let mut first = head.lines().next().unwrap_or("").split_ascii_whitespace();
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    // The text at the time of the request, not of the connection.
    let body = rx.borrow().clone();
    let (status, ctype, text): (&str, &str, &str) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            &body.text,
        ),
        ("GET" | "HEAD", SNAPSHOT_PATH) => ("200 OK", "application/json", &body.json),
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/plain; charset=utf-8",
            "lull daemon: metrics at /metrics, its snapshot as JSON at /snapshot.json\n",
        ),
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain; charset=utf-8", "not found\n"),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET\n",
        ),
    };
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    sock.write_all(header.as_bytes()).await?;
    if method != "HEAD" {
        sock.write_all(text.as_bytes()).await?;
    }
    sock.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_textfile_format() {
        let mut s = State::default();
        s.disk("/dev/disk/by-id/x\"y").spindowns = 2;
        s.disk("/dev/disk/by-id/x\"y")
            .wakeups
            .insert("smbd".into(), 3);
        s.disk("/dev/disk/by-id/x\"y").last_wake = Some(crate::state::Wake {
            unix: 1_700_000_123,
            cause: crate::state::Wake::SPINUP.into(),
            by: vec!["smbd".into()],
        });
        s.disk("sdz");
        let g = [DiskGauges {
            key: "/dev/disk/by-id/x\"y".into(),
            task: "standby",
            running: true,
            in_standby: false,
            power_since_unix: Some(1_700_000_100),
            energy_saved_j: Some(1.5),
            nodes: vec![
                ("share".into(), "weight_0".into(), 0.25),
                ("n0".into(), "periodic_period_s".into(), f64::MAX),
                ("n0".into(), "margin".into(), f64::INFINITY),
            ],
            jobs: Vec::new(),
            shadow: Some(shadow_of_one_hour_gap()),
        }];
        let text = render(&s, &g, 7, false);
        // A gauge's "none" is +Inf, not f64::MAX's 309 digits, and reads
        // back as "none" in `lull status`.
        for name in ["periodic_period_s", "margin"] {
            let line = format!(
                "lull_node_gauge{{disk=\"/dev/disk/by-id/x\\\"y\",node=\"n0\",name=\"{name}\"}} +Inf\n"
            );
            assert!(text.contains(&line), "{line} in {text}");
        }
        assert!(text.lines().all(|l| l.len() < 400), "{text}");
        let samples = crate::admin::status::parse_metrics(&text).unwrap();
        let none = samples
            .iter()
            .find(|s| s.label("name") == Some("periodic_period_s"))
            .expect("the gauge parses");
        assert!(crate::admin::status::NodeGauge::new("n0", "periodic_period_s", none.value).never);
        // The shadow: a one-hour idle period on a wd-red-plus.
        for (policy, spinups) in [("lull", 0), ("hd-idle-10min", 1), ("oracle", 1)] {
            for window in ["24h", "7d"] {
                let line = format!(
                    "lull_shadow_spinups_total{{disk=\"/dev/disk/by-id/x\\\"y\",policy=\"{policy}\",window=\"{window}\"}} {spinups}\n"
                );
                assert!(text.contains(&line), "{line} in {text}");
            }
        }
        let energy = |policy: &str| {
            let key = format!(
                "lull_shadow_energy_joules{{disk=\"/dev/disk/by-id/x\\\"y\",policy=\"{policy}\",window=\"24h\"}} "
            );
            let at = text.find(&key).unwrap_or_else(|| panic!("{key} in {text}")) + key.len();
            text[at..].lines().next().unwrap().parse::<f64>().unwrap()
        };
        assert!(energy("oracle") < energy("hd-idle-10min"));
        assert!(energy("hd-idle-10min") < energy("lull"));
        assert!(!text.contains("lull_job_"), "no job metrics without jobs");
        assert!(
            text.contains("lull_spindowns_total{disk=\"/dev/disk/by-id/x\\\"y\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("lull_task_running{disk=\"/dev/disk/by-id/x\\\"y\",task=\"standby\"} 1")
        );
        assert!(text.contains("lull_polls_total 7"));
        assert!(
            text.contains("lull_wakeups_total{disk=\"/dev/disk/by-id/x\\\"y\",comm=\"smbd\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("lull_last_wake_timestamp_seconds{disk=\"/dev/disk/by-id/x\\\"y\",cause=\"spinup\"} 1700000123\n"),
            "{text}"
        );
        assert!(!text.contains("lull_last_wake_timestamp_seconds{disk=\"sdz\""));
        assert!(text.contains(
            "lull_node_gauge{disk=\"/dev/disk/by-id/x\\\"y\",node=\"share\",name=\"weight_0\"} 0.25\n"
        ));
        let mut g = g;
        g[0].jobs = vec![
            crate::jobs::JobGauge {
                name: "scrub".into(),
                admitted: true,
                idle_s: 12.5,
                missed: 1,
                fits_observed: Some(false),
            },
            crate::jobs::JobGauge {
                name: "trim".into(),
                admitted: false,
                idle_s: 0.0,
                missed: 0,
                fits_observed: None,
            },
        ];
        let text = render(&s, &g, 7, false);
        for want in [
            "lull_job_admitted{disk=\"/dev/disk/by-id/x\\\"y\",job=\"scrub\"} 1\n",
            "lull_job_admitted{disk=\"/dev/disk/by-id/x\\\"y\",job=\"trim\"} 0\n",
            "lull_job_idle_seconds_total{disk=\"/dev/disk/by-id/x\\\"y\",job=\"scrub\"} 12.5\n",
            "lull_job_deadlines_missed_total{disk=\"/dev/disk/by-id/x\\\"y\",job=\"scrub\"} 1\n",
            "# TYPE lull_job_idle_seconds_total counter\n",
            "lull_job_fits_observed{disk=\"/dev/disk/by-id/x\\\"y\",job=\"scrub\"} 0\n",
            "lull_job_fits_observed{disk=\"/dev/disk/by-id/x\\\"y\",job=\"trim\"} NaN\n",
        ] {
            assert!(text.contains(want), "{want}\n{text}");
        }
        // Every sample is `name{labels} value`; label values may hold spaces.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (series, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
            assert!(!series.contains('}') || series.ends_with('}'), "{line}");
        }
    }

    #[test]
    fn serves_metrics_over_http() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            let exported = |polls| {
                Arc::new(Exported::of(&DaemonSnapshot {
                    polls,
                    ..DaemonSnapshot::default()
                }))
            };
            let (tx, rx) = watch::channel(exported(1));
            tokio::spawn(serve(l, rx));
            let get = |path: &'static str| async move {
                let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
                s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut r = String::new();
                s.read_to_string(&mut r).await.unwrap();
                r
            };
            let r = get("/metrics").await;
            assert!(
                r.starts_with("HTTP/1.1 200 OK\r\n") && r.contains("\nlull_polls_total 1\n"),
                "{r}"
            );
            tx.send(exported(2)).unwrap();
            assert!(get("/metrics").await.ends_with("lull_dry_run 0\n"));
            assert!(get("/metrics").await.contains("lull_polls_total 2\n"));
            // The same snapshot as JSON, for `lull status`.
            let r = get(SNAPSHOT_PATH).await;
            let (head, body) = r.split_once("\r\n\r\n").unwrap();
            assert!(head.contains("Content-Type: application/json"), "{head}");
            let back: DaemonSnapshot = serde_json::from_str(body).unwrap();
            assert_eq!(back.polls, 2);
            assert!(get("/nope").await.starts_with("HTTP/1.1 404"));
            // Idle clients, more than any fixed cap, do not block a scrape.
            let mut idle = Vec::new();
            for _ in 0..100 {
                idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
            }
            assert!(get("/metrics").await.contains("lull_polls_total 2\n"));
            drop(idle);
        });
    }

    /// The shadow of a disk that lull left spinning through a one-hour
    /// idle period.
    fn shadow_of_one_hour_gap() -> lull_activity::ShadowReport {
        use lull_activity::{Poll, PollKind, Record, Session, Shadow};
        use lull_core::time::Nanos;
        let red =
            lull_tasks::DriveProfile::from_spec("wd-red-plus", lull_tasks::PresetSource::Config);
        let mut sh = Shadow::for_profile(&red.unwrap()).unwrap();
        let s = Nanos::from_secs;
        for r in [
            Record::Session(Session {
                clock: s(1_700_000_000),
                ..Session::default()
            }),
            Record::Poll(Poll {
                t0: s(1),
                t: s(1),
                kind: PollKind::Baseline,
                ..Poll::default()
            }),
            Record::Poll(Poll {
                t0: s(3600),
                t: s(3601),
                counts: lull_activity::Counts {
                    reads: 1,
                    ..Default::default()
                },
                ..Poll::default()
            }),
        ] {
            sh.feed(&r);
        }
        sh.settle();
        sh.report()
    }
}
