//! What the daemon's integration tests share: fake diskstats files, a
//! daemon process with its log, waiting for a condition, reading the state
//! file. Used by `crates/live/tests/daemon.rs` (`lulld`) and, through
//! `#[path]`, by the root package's `tests/daemon_config.rs` (`lull
//! daemon`), so it needs nothing beyond std, tempfile and serde_json.

#![allow(dead_code)] // Each user takes a part.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Writes `text` to `path` atomically, so the daemon never reads half a
/// file.
pub(crate) fn write(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// One diskstats line with `ios` reads and writes.
pub(crate) fn line(name: &str, minor: u32, ios: u64) -> String {
    format!(
        "   7 {minor:7} {name} {ios} 0 {} 0 {ios} 0 {} 0 0 {ios} 0 0 0 0 0 0 0\n",
        ios * 8,
        ios * 8
    )
}

/// The state file as JSON (`Null` while it is missing or half written).
pub(crate) fn state(path: &Path) -> serde_json::Value {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// A config with fake disks in a temporary directory.
pub(crate) struct Setup {
    /// The directory (removed when dropped).
    pub(crate) dir: tempfile::TempDir,
    /// The config file.
    pub(crate) config: PathBuf,
    /// The fake diskstats file.
    pub(crate) diskstats: PathBuf,
    /// The state file.
    pub(crate) state: PathBuf,
}

impl Setup {
    /// `disks` (the `[[disk]]` tables) over a diskstats file holding
    /// `diskstats`; poll 100 ms.
    pub(crate) fn new(disks: &str, diskstats: &str) -> Setup {
        Setup::with_top(disks, diskstats, "")
    }

    /// Like [`Setup::new`], with `top` (more keys or tables) before the
    /// disks. `PROM` in it stands for `lull.prom` in the directory.
    pub(crate) fn with_top(disks: &str, diskstats: &str, top: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("lull.toml");
        let ds = dir.path().join("diskstats");
        let st = dir.path().join("state.json");
        write(&ds, diskstats);
        let top = top.replace("PROM", dir.path().join("lull.prom").to_str().unwrap());
        let text = format!(
            "state_file = {:?}\npoll = \"100ms\"\nstate_interval = \"1s\"\ndiskstats = {:?}\nsysfs = {:?}\n{top}\n{disks}",
            st,
            ds,
            dir.path().join("no-sysfs")
        );
        std::fs::write(&config, text).unwrap();
        Setup {
            dir,
            config,
            diskstats: ds,
            state: st,
        }
    }

    /// The state file now.
    pub(crate) fn state(&self) -> serde_json::Value {
        state(&self.state)
    }

    /// Writes an `hdparm` stand-in that succeeds (a fake disk cannot
    /// sleep) and names it in the configuration's `hdparm` key, as an
    /// admin would name another hdparm; returns its path.
    pub(crate) fn hdparm_stand_in(&self) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let hdparm = self.dir.path().join("hdparm");
        std::fs::write(&hdparm, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&hdparm, std::fs::Permissions::from_mode(0o755)).unwrap();
        let text = std::fs::read_to_string(&self.config).unwrap();
        std::fs::write(&self.config, format!("hdparm = {hdparm:?}\n{text}")).unwrap();
        hdparm
    }

    /// The metrics textfile `PROM` names.
    pub(crate) fn prom(&self) -> PathBuf {
        self.dir.path().join("lull.prom")
    }
}

/// A running daemon whose stderr goes to a file; killed when dropped.
pub(crate) struct Daemon {
    /// The process.
    pub(crate) child: Child,
    /// Its log.
    pub(crate) log: PathBuf,
}

impl Daemon {
    /// Starts `cmd` (program and arguments set) with debug logging, no
    /// systemd sockets, then `env`, stderr to `log`.
    pub(crate) fn spawn(mut cmd: Command, log: PathBuf, env: &[(&str, &str)]) -> Daemon {
        let child = cmd
            .env("LULL_LOG", "debug")
            .env_remove("LULL_LOG_FORMAT")
            .env_remove("JOURNAL_STREAM")
            .env_remove("NOTIFY_SOCKET")
            .env_remove("WATCHDOG_USEC")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Daemon { child, log }
    }
    /// The log so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    /// Whether it still runs.
    pub(crate) fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
    /// Sends `sig` (`-HUP`, `-TERM`, `-KILL`).
    pub(crate) fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    /// SIGTERM, and its exit status (within 30 s).
    pub(crate) fn stop(&mut self) -> std::process::ExitStatus {
        self.signal("-TERM");
        self.exit_within(Duration::from_secs(30))
    }
    /// Its exit status, failing with its log if it still runs after
    /// `timeout`.
    pub(crate) fn exit_within(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                t.elapsed() < timeout,
                "daemon did not exit:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.alive() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits until `f` holds, failing with `log()` after `timeout`.
pub(crate) fn wait_for(
    what: &str,
    timeout: Duration,
    mut f: impl FnMut() -> bool,
    log: impl Fn() -> String,
) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < timeout,
            "timed out waiting for {what}; log:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Two regular files under /dev standing for kernel devices (`/dev/A`,
/// `/dev/B`, names unique to this process) and the path of a by-id style
/// link (not created); all removed when dropped. Needs root.
pub(crate) struct DevNames {
    /// The two kernel names.
    pub(crate) kernel: [String; 2],
    /// `/dev/lull-test-by-id-…`.
    pub(crate) link: PathBuf,
}

impl DevNames {
    /// Creates the two files; `prefix` keeps tests apart.
    pub(crate) fn new(prefix: &str) -> DevNames {
        let tag = std::process::id();
        let kernel = [format!("{prefix}a{tag}"), format!("{prefix}b{tag}")];
        for k in &kernel {
            std::fs::write(format!("/dev/{k}"), "").unwrap();
        }
        DevNames {
            kernel,
            link: PathBuf::from(format!("/dev/{prefix}-by-id-{tag}")),
        }
    }
}

impl Drop for DevNames {
    fn drop(&mut self) {
        for k in &self.kernel {
            let _ = std::fs::remove_file(format!("/dev/{k}"));
        }
        let _ = std::fs::remove_file(&self.link);
    }
}

/// Whether the tests run as root (loop devices, root-owned hooks).
pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A loop device over a 32 MiB file in `dir`, detached when dropped.
pub(crate) struct Loop {
    /// `/dev/loopN`.
    pub(crate) dev: String,
}

impl Loop {
    /// A new loop device over `dir/name` (`None`: no loop devices here).
    pub(crate) fn new(dir: &Path, name: &str) -> Option<Loop> {
        let img = dir.join(name);
        std::fs::File::create(&img).ok()?.set_len(32 << 20).ok()?;
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        dev.starts_with("/dev/loop").then_some(Loop { dev })
    }
    /// The kernel name (`loopN`).
    pub(crate) fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// `n` loop devices in `dir`, or `None` when not root or none are free.
pub(crate) fn loops(dir: &Path, n: usize) -> Option<Vec<Loop>> {
    if !is_root() {
        return None;
    }
    (0..n).map(|i| Loop::new(dir, &format!("img{i}"))).collect()
}

/// Direct writes to a device from a background thread while `on` is set.
pub(crate) struct Traffic {
    on: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Traffic {
    /// Writes to `dev` (off at first).
    pub(crate) fn new(dev: &str) -> Traffic {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let on = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (o, s, dev) = (Arc::clone(&on), Arc::clone(&stop), dev.to_string());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                if o.load(Ordering::SeqCst) {
                    let _ = Command::new("dd")
                        .args([
                            "if=/dev/zero",
                            &format!("of={dev}"),
                            "bs=4k",
                            "count=16",
                            "oflag=direct",
                        ])
                        .stderr(Stdio::null())
                        .status();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Traffic {
            on,
            stop,
            thread: Some(thread),
        }
    }
    /// Turns the writes on or off (off: waits for a write in progress).
    pub(crate) fn set(&self, on: bool) {
        self.on.store(on, std::sync::atomic::Ordering::SeqCst);
        if !on {
            std::thread::sleep(Duration::from_millis(60));
        }
    }
}

impl Drop for Traffic {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The value of `series` (name and labels) in Prometheus text `text`.
pub(crate) fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}
