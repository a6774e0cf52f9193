//! `lulld` as an admin meets it: the crash paths and misleading outputs of
//! issue 18, each reproduced the way it was found. The disks are fake (a
//! diskstats file the test rewrites) unless a test says otherwise; tests
//! that need root say so and pass without it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");

mod support;

use support::{Daemon, DevNames, Setup, is_root, line, sample, state, wait_for, write};

/// Starts `lulld --config CONFIG` with `env`, logging to `CONFIG.log`.
fn start(config: &Path, env: &[(&str, &str)]) -> Daemon {
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(config);
    Daemon::spawn(cmd, config.with_extension("log"), env)
}

/// Waits until `d` logs that it restored a learned state of `periods`
/// idle periods (`what` names the wait in a failure).
fn wait_restored(d: &Daemon, periods: u64, what: &str) {
    wait_for(
        what,
        Duration::from_secs(10),
        || {
            d.log().contains(&format!(
                "what its network learned is restored ({periods} idle periods"
            ))
        },
        || d.log(),
    );
}

/// Sends `d` SIGHUP and waits until its log says `outcome` (the reload
/// or its rejection).
fn reload(d: &Daemon, outcome: &str) {
    d.signal("-HUP");
    wait_for(
        outcome,
        Duration::from_secs(20),
        || d.log().contains(outcome),
        || d.log(),
    );
}

/// Starts `lulld --dry-run` on `config`.
fn start_dry(config: &Path) -> Daemon {
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(config).arg("--dry-run");
    Daemon::spawn(cmd, config.with_extension("log"), &[])
}

/// `lulld --config CONFIG --check`, which must succeed: its report.
fn check_ok(config: &Path) -> String {
    let out = run(&["--config", config.to_str().unwrap(), "--check"]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(LULLD)
        .args(args)
        .env_remove("LULL_LOG")
        .output()
        .unwrap()
}

/// Without `--config`, `lulld` reads /etc/lull.toml, as its help, `lulld
/// status` and the systemd unit have it (a trial's `lulld --check` met a
/// usage error): with no such file, the error names it (exit 2).
#[test]
#[cfg_attr(
    has_etc_lull_toml,
    ignore = "/etc/lull.toml exists here (the test needs a machine without it)"
)]
fn without_config_the_daemon_reads_etc_lull_toml() {
    if Path::new("/etc/lull.toml").exists() {
        lull_testkit::skip("/etc/lull.toml exists here (the test needs a machine without it)");
        return;
    }
    let out = run(&["--check"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/etc/lull.toml: cannot read: No such file"),
        "{err}"
    );
}

const COMMAND_DISK: &str = "[[disk]]\ndevice = \"DISK\"\nnetwork = \"timer(300ms)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"SECONDS\"]\n";

fn command_disk(disk: &str, seconds: &str) -> String {
    COMMAND_DISK
        .replace("DISK", disk)
        .replace("SECONDS", seconds)
}

/// Starts the daemon on `s` (a [`command_disk`] on `fakea`) and waits
/// until its command runs; returns the daemon and the command's pid.
fn start_until_command(s: &Setup) -> (Daemon, u32) {
    let d = start(&s.config, &[]);
    wait_for(
        "the command",
        Duration::from_secs(20),
        || s.state()["fakea"]["command_pid"].as_u64().is_some(),
        || d.log(),
    );
    let pid = s.state()["fakea"]["command_pid"].as_u64().unwrap() as u32;
    (d, pid)
}

/// Live (not zombie) processes whose command line is exactly `argv`.
fn processes_running(argv: &[&str]) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = raw
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
            .unwrap_or(true);
        if !zombie && args == argv {
            out.push(pid);
        }
    }
    out
}

// Bug 1: `lulld … 2>&1 | head -1` killed the daemon (exit 101) at its
// second log line.
#[test]
fn a_broken_log_pipe_does_not_stop_the_daemon() {
    let s = Setup::new(&command_disk("fakea", "1001.25"), &line("fakea", 0, 5));
    let mut child = Command::new(LULLD)
        .arg("--config")
        .arg(&s.config)
        .env("LULL_LOG", "debug")
        .env_remove("NOTIFY_SOCKET")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first line, then close the pipe, as `head -1` does.
    let mut err = child.stderr.take().unwrap();
    let mut first = [0u8; 1];
    err.read_exact(&mut first).unwrap();
    drop(err);
    // The daemon goes on logging (the command starts, is logged) and works.
    let t = Instant::now();
    while s.state()["fakea"]["command_pid"].as_u64().is_none() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the daemon died: {:?}",
            child.try_wait()
        );
        assert!(t.elapsed() < Duration::from_secs(20), "no command started");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(child.try_wait().unwrap().is_none(), "the daemon died");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(processes_running(&["/bin/sleep", "1001.25"]).is_empty());
}

// Bug 2: a by-id link that udev creates (or moves) after the kernel device
// appeared was followed only when the set of kernel names changed.
#[test]
#[cfg_attr(not(has_root), ignore = "needs root (creates names under /dev)")]
fn a_link_that_moves_is_followed_without_any_new_kernel_name() {
    if !is_root() {
        lull_testkit::skip("needs root (creates names under /dev)");
        return;
    }
    let names = DevNames::new("lullt");
    let [a, b] = names.kernel.clone();
    let link = names.link.clone();
    // Both kernel devices exist from the start; the link does not yet.
    let s = Setup::new(
        &command_disk(link.to_str().unwrap(), "1002.25"),
        &(line(&a, 0, 5) + &line(&b, 1, 5)),
    );
    let mut d = start(&s.config, &[]);
    let key = link.to_str().unwrap();
    wait_for(
        "the missing link to be noticed",
        Duration::from_secs(10),
        || d.log().contains("not present; waiting"),
        || d.log(),
    );
    std::os::unix::fs::symlink(&a, &link).unwrap();
    wait_for(
        "the link to be followed",
        Duration::from_secs(10),
        || s.state()[key]["kernel_name"] == a.as_str(),
        || d.log(),
    );
    // The link moves to the other device (a re-plug under a new number,
    // whose kernel name was already there): followed too, also once its
    // directory has been quiet for longer than the daemon resolves links
    // in full (it then watches the directory's modification time).
    std::thread::sleep(Duration::from_secs(3));
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&b, &link).unwrap();
    wait_for(
        "the moved link to be followed",
        Duration::from_secs(10),
        || s.state()[key]["kernel_name"] == b.as_str(),
        || d.log(),
    );
    assert!(d.alive());
    assert!(d.stop().success());
    drop(names);
}

// Found by the guest test (issue 28): a by-id link that is gone while its
// old kernel name stays in diskstats (another disk replugged under it) was
// still watched, and spun down, on the link's behalf.
#[test]
#[cfg_attr(not(has_root), ignore = "needs root (creates names under /dev)")]
fn a_disk_whose_link_is_gone_is_absent_though_its_kernel_name_stays() {
    if !is_root() {
        lull_testkit::skip("needs root (creates names under /dev)");
        return;
    }
    let names = DevNames::new("lullv");
    let [a, b] = names.kernel.clone();
    let link = names.link.clone();
    std::os::unix::fs::symlink(format!("/dev/{a}"), &link).unwrap();
    let key = link.to_str().unwrap();
    let disk = format!(
        "[[disk]]\ndevice = {key:?}\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\nmax_spindowns_per_day = 1000\n"
    );
    let s = Setup::new(&disk, &(line(&a, 0, 5) + &line(&b, 1, 5)));
    s.hdparm_stand_in();
    let mut d = start(&s.config, &[]);
    let spindowns = |s: &Setup| s.state()[key]["spindowns"].as_u64().unwrap_or(0);
    wait_for(
        "a spin-down through the link",
        Duration::from_secs(10),
        || spindowns(&s) >= 1,
        || d.log(),
    );
    // The link goes; its kernel name stays, and has I/O, then is quiet.
    std::fs::remove_file(&link).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    write(&s.diskstats, &(line(&a, 0, 9) + &line(&b, 1, 5)));
    wait_for(
        "the disk to count as absent",
        Duration::from_secs(10),
        || s.state()[key]["present"] == false,
        || d.log(),
    );
    let before = spindowns(&s);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        spindowns(&s),
        before,
        "spun down through a link that is gone:\n{}",
        d.log()
    );
    // Back: watched and spun down again.
    std::os::unix::fs::symlink(format!("/dev/{a}"), &link).unwrap();
    wait_for(
        "a spin-down after the link is back",
        Duration::from_secs(10),
        || s.state()[key]["present"] == true && spindowns(&s) > before,
        || d.log(),
    );
    assert!(d.alive());
    assert!(d.stop().success());
    drop(names);
}

// Bug 3: `--check` passed configs a start refused.
#[test]
fn check_refuses_what_a_start_refuses() {
    let cases: Vec<(String, &str, &str)> = vec![
        (
            // A directory that cannot be made (a missing one is made).
            "state_file = \"/proc/nonexistent-lull-dir/state.json\"\n".into(),
            "key `state_file`",
            "/proc",
        ),
        (
            "[metrics]\ntextfile = \"/nonexistent-lull-dir/lull.prom\"\n".into(),
            "key `metrics.textfile`",
            "/nonexistent-lull-dir",
        ),
        (
            // The same device twice, by kernel name and by path.
            "[[disk]]\ndevice = \"null\"\ntask = \"flush\"\n[[disk]]\ndevice = \"/dev/null\"\ntask = \"flush\"\n"
                .into(),
            "key `disk[1].device`",
            "already names",
        ),
        (
            // …and by two globs.
            "[[disk]]\ndevice = \"fake?\"\ntask = \"flush\"\n[[disk]]\ndevice = \"fa*\"\ntask = \"flush\"\n"
                .into(),
            "key `disk[1].device`",
            "already names",
        ),
        (
            // A partition: its I/O does not say the disk is idle, and a
            // spin-down sent to it stops the whole disk.
            "[[disk]]\ndevice = \"fakea1\"\ntask = \"standby\"\n".into(),
            "key `disk[0].device`",
            "a partition of fakea",
        ),
    ];
    for (text, key, what) in cases {
        let s = Setup::new(
            "",
            &(line("fakea", 0, 1) + &line("fakea1", 1, 1) + &line("null", 3, 1)),
        );
        let cfg = std::fs::read_to_string(&s.config).unwrap();
        let cfg = if text.starts_with("state_file") {
            // A top-level key replaces the test's own.
            text.clone() + &cfg.replace(&format!("state_file = {:?}\n", s.state), "")
        } else {
            // Tables go last.
            cfg + &text
        };
        std::fs::write(&s.config, cfg).unwrap();
        for extra in [&["--check"][..], &[][..]] {
            let out = run(&[&["--config", s.config.to_str().unwrap()], extra].concat());
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{text} {extra:?}: {err}");
            assert!(err.contains(key) && err.contains(what), "{text}: {err}");
        }
        assert!(!s.state.exists());
    }
}

// Bug 4: after `kill -9` and a restart, a command that ignores SIGHUP ran
// twice.
#[test]
fn a_command_left_by_a_killed_daemon_never_runs_twice() {
    let argv = ["/bin/sleep", "1004.25"];
    let _reaper = Reaper(&argv);
    let s = Setup::new(&command_disk("fakea", argv[1]), &line("fakea", 0, 5));
    let (mut d, first) = start_until_command(&s);
    d.signal("-KILL");
    let _ = d.child.wait();
    assert_eq!(processes_running(&argv), [first], "the orphan survives");

    let mut d = start(&s.config, &[]);
    wait_for(
        "a new command",
        Duration::from_secs(30),
        || {
            s.state()["fakea"]["command_pid"]
                .as_u64()
                .is_some_and(|p| p as u32 != first)
        },
        || d.log(),
    );
    let running = processes_running(&argv);
    let log = d.log();
    assert!(d.stop().success());
    assert_eq!(running.len(), 1, "{running:?}\n{log}");
    assert!(log.contains("of a previous run still runs"), "{log}");
}

// Bug 5: `lull_task_running` stayed 1 after a failed standby, and the
// SIGTERM sent at stop counted as a command run to its end.
#[test]
fn metrics_tell_the_truth_about_failures_and_stops() {
    let disks = "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\n"
        .to_string()
        + &command_disk("fakeb", "1005.25");
    let s = Setup::with_top(
        &disks,
        &(line("fakea", 0, 5) + &line("fakeb", 1, 5)),
        "[metrics]\ntextfile = \"PROM\"\n",
    );
    let prom = s.prom();
    let mut d = start(&s.config, &[]);
    // /dev/fakea does not exist: standby fails.
    wait_for(
        "the standby failure",
        Duration::from_secs(20),
        || s.state()["fakea"]["errors"].as_u64().unwrap_or(0) >= 1,
        || d.log(),
    );
    wait_for(
        "the metrics to say so",
        Duration::from_secs(5),
        || {
            std::fs::read_to_string(&prom).is_ok_and(|t| {
                t.contains("lull_task_running{disk=\"fakea\",task=\"standby\"} 0")
                    && t.contains("lull_errors_total{disk=\"fakea\"} 1")
            })
        },
        || std::fs::read_to_string(&prom).unwrap_or_default() + &d.log(),
    );
    // `auto` cannot probe a disk without a device node: said once.
    assert_eq!(
        d.log().matches("cannot probe its transport").count(),
        1,
        "{}",
        d.log()
    );
    wait_for(
        "the command",
        Duration::from_secs(20),
        || s.state()["fakeb"]["command_pid"].as_u64().is_some(),
        || d.log(),
    );
    assert!(d.stop().success());
    let st = s.state();
    assert_eq!(st["fakeb"]["command_exits"].as_u64(), Some(0), "{st}");
    assert!(st["fakeb"]["command_pid"].is_null(), "{st}");
    let tf = std::fs::read_to_string(&prom).unwrap();
    assert!(
        tf.contains("lull_command_exits_total{disk=\"fakeb\"} 0"),
        "{tf}"
    );
}

// Bug 6: logs.
#[test]
fn an_invalid_log_level_is_an_error() {
    let s = Setup::new("", "");
    let mut d = start(&s.config, &[("LULL_LOG", "verbose")]);
    let t = Instant::now();
    let status = loop {
        if let Some(st) = d.child.try_wait().unwrap() {
            break Some(st);
        }
        if t.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = d.log();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(2),
        "started anyway: {err}"
    );
    assert!(err.contains("LULL_LOG=\"verbose\""), "{err}");
}

#[test]
fn journald_sees_priorities() {
    use std::os::unix::fs::MetadataExt;
    // /dev/fakea does not exist: standby fails, an error.
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nbackend = \"sgio\"\n",
        &line("fakea", 0, 5),
    );
    // As systemd does: $JOURNAL_STREAM names the file stderr is.
    let log = s.config.with_extension("log");
    std::fs::File::create(&log).unwrap();
    let m = std::fs::metadata(&log).unwrap();
    let stream = format!("{}:{}", m.dev(), m.ino());
    let mut d = start(&s.config, &[("JOURNAL_STREAM", &stream)]);
    wait_for(
        "the standby error",
        Duration::from_secs(20),
        || d.log().contains("standby failed"),
        || d.log(),
    );
    assert!(d.stop().success());
    let text = d.log();
    for l in text.lines() {
        assert!(
            l.starts_with("<3>")
                || l.starts_with("<4>")
                || l.starts_with("<6>")
                || l.starts_with("<7>"),
            "{l:?}"
        );
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("<3>disk fakea: standby failed")),
        "{text}"
    );
    assert!(text.contains("<6>lull daemon started"), "{text}");
}

#[test]
fn an_unwritable_textfile_is_reported_once() {
    let s = Setup::with_top(
        &command_disk("fakea", "1006.25"),
        &line("fakea", 0, 5),
        "[metrics]\ntextfile = \"PROM\"\n",
    );
    let prom = s.prom();
    // A directory where the file should be: every write fails.
    std::fs::create_dir(&prom).unwrap();
    let mut d = start(&s.config, &[]);
    // Activity keeps the state changing, so the metrics are saved often.
    for i in 0..40u64 {
        let ios = 5 + i / 10 * 10;
        write(&s.diskstats, &line("fakea", 0, ios));
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_for(
        "a few saves",
        Duration::from_secs(20),
        || s.state()["fakea"]["task_starts"].as_u64().unwrap_or(0) >= 3,
        || d.log(),
    );
    assert!(d.stop().success());
    let log = d.log();
    assert_eq!(log.matches("metrics textfile").count(), 1, "{log}");
    assert!(processes_running(&["/bin/sleep", "1006.25"]).is_empty());
}

#[test]
fn unknown_keys_are_named_with_their_table() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\n\n[[disk]]\ndevice = \"fakeb\"\nnetwrok = \"timer(1s)\"\n",
        "",
    );
    let out = run(&["--config", s.config.to_str().unwrap(), "--check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("key `disk[1].netwrok`"), "{err}");
}

// An empty card-reader slot under `fake*` (size 0 in sysfs) is left
// alone; a disk with a medium beside it is not.
#[test]
fn an_empty_card_reader_slot_is_left_alone() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fake*\"\n",
        &(line("fakea", 0, 5) + &line("fakeb", 0, 5)),
    );
    let sysfs = s.config.parent().unwrap().join("no-sysfs/block");
    for (name, size) in [("fakea", "0\n"), ("fakeb", "976773168\n")] {
        std::fs::create_dir_all(sysfs.join(name)).unwrap();
        std::fs::write(sysfs.join(name).join("size"), size).unwrap();
    }
    let out = run(&["--config", s.config.to_str().unwrap(), "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let block = |name: &str| {
        text.split("disk[0]")
            .find(|b| b.contains(&format!(": {name};")))
            .unwrap_or_else(|| panic!("{name}: {text}"))
            .to_string()
    };
    assert!(
        block("fakea").contains("left alone: it holds no medium (size 0"),
        "{text}"
    );
    assert!(!block("fakeb").contains("left alone"), "{text}");
}

// Bug 7: 16 idle connections made every scrape fail.
#[test]
fn idle_clients_do_not_block_scrapes() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let s = Setup::with_top("", "", &format!("[metrics]\nlisten = \"{port}\"\n"));
    let mut d = start(&s.config, &[]);
    wait_for(
        "the endpoint",
        Duration::from_secs(10),
        || d.log().contains("metrics at"),
        || d.log(),
    );
    let idle: Vec<std::net::TcpStream> = (0..200)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut r = String::new();
    let _ = c.read_to_string(&mut r);
    assert!(r.starts_with("HTTP/1.1 200 OK"), "{r:?}");
    assert!(r.contains("lull_polls_total"), "{r}");
    drop(idle);
    assert!(d.alive());
    assert!(d.stop().success());
}

// Bug 8: a corrupt state file was overwritten without a backup.
#[test]
fn a_corrupt_state_file_is_kept_aside() {
    let s = Setup::new("", "");
    std::fs::write(&s.state, "{\"fakea\": {\"spindowns\": 3,").unwrap();
    let mut d = start(&s.config, &[]);
    wait_for(
        "a fresh state file",
        Duration::from_secs(10),
        || s.state().is_object(),
        || d.log(),
    );
    assert!(d.stop().success());
    let kept: Vec<PathBuf> = std::fs::read_dir(s.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("state.json.corrupt-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read_to_string(&kept[0]).unwrap(),
        "{\"fakea\": {\"spindowns\": 3,"
    );
    let log = d.log();
    assert!(log.contains(kept[0].to_str().unwrap()), "{log}");
}

#[test]
fn help_and_version() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--config FILE") && text.contains("SIGHUP"),
        "{text}"
    );
    let out = run(&["--version"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("lulld "));
    assert_eq!(run(&["--bogus"]).status.code(), Some(2));
}

// A disk that cannot spin down (here: no such device node) is not retried
// at every idle period, and does not flood the log with errors.
#[test]
fn repeated_standby_failures_back_off() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(200ms)\"\ntask = \"standby\"\nbackend = \"sgio\"\n",
        &line("fakea", 0, 5),
    );
    let mut d = start(&s.config, &[]);
    let mut ios = 5;
    let t = Instant::now();
    while !s.state()["fakea"]["last_decision"]
        .as_str()
        .is_some_and(|x| x.starts_with("skip standby: it failed 3 times in a row"))
    {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no back-off: {}\n{}",
            s.state(),
            d.log()
        );
        // A busy moment, then quiet: one idle period, one attempt.
        ios += 10;
        write(&s.diskstats, &line("fakea", 0, ios));
        std::thread::sleep(Duration::from_millis(800));
    }
    assert!(d.stop().success());
    let st = s.state();
    assert_eq!(st["fakea"]["errors"].as_u64(), Some(3), "{st}");
    let log = d.log();
    assert_eq!(log.matches("standby failed: ").count(), 3, "{log}");
    assert!(
        log.contains("standby failed 3 times in a row; next try in 1m"),
        "{log}"
    );
}

// The wear budget is spread over the day and survives a restart: with 6
// spin-downs a day the bucket holds one, spent by the first spin-down (a
// stand-in for hdparm that succeeds: a failed one gives its token back);
// a restart does not refill it.
#[test]
fn the_wear_budget_survives_a_restart() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(200ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\nmax_spindowns_per_day = 6\n",
        &line("fakea", 0, 5),
    );
    s.hdparm_stand_in();
    let mut d = start(&s.config, &[]);
    wait_for(
        "the first spin-down",
        Duration::from_secs(20),
        || s.state()["fakea"]["spindowns"].as_u64() == Some(1),
        || d.log(),
    );
    assert!(d.stop().success());
    let tokens = s.state()["fakea"]["wear"]["tokens"].as_f64().unwrap();
    assert!(tokens < 0.01, "{}", s.state());

    let mut d = start(&s.config, &[]);
    // A busy moment, then an idle period: the budget says no.
    std::thread::sleep(Duration::from_millis(500));
    write(&s.diskstats, &line("fakea", 0, 50));
    wait_for(
        "the wear-budget skip",
        Duration::from_secs(20),
        || {
            s.state()["fakea"]["last_decision"]
                .as_str()
                .is_some_and(|x| x.starts_with("skip standby: wear budget (6 spin-downs a day"))
        },
        || d.log(),
    );
    // Two more idle periods, two more skips: the journal is told once.
    let starts = || s.state()["fakea"]["task_starts"].as_u64().unwrap_or(0);
    let before = starts();
    for ios in [60, 70] {
        write(&s.diskstats, &line("fakea", 0, ios));
        std::thread::sleep(Duration::from_millis(1500));
    }
    wait_for(
        "two more starts",
        Duration::from_secs(20),
        || starts() >= before + 2,
        || d.log(),
    );
    assert!(d.stop().success());
    assert_eq!(
        s.state()["fakea"]["spindowns"].as_u64(),
        Some(1),
        "no second spin-down"
    );
    let log = d.log();
    let info = |what: &str| {
        log.lines()
            .filter(|l| l.contains(" INFO ") && l.contains(what))
            .count()
    };
    assert_eq!(
        info("skip standby: wear budget"),
        1,
        "said once at info level: {log}"
    );
    assert!(
        log.matches("DEBUG disk fakea: skip standby: wear budget")
            .count()
            >= 2,
        "the rest at debug level: {log}"
    );
    assert!(
        log.contains("more of these are logged at debug level until a standby goes"),
        "{log}"
    );
    assert_eq!(
        info("busy, stop standby"),
        0,
        "a refused start stopped nothing: {log}"
    );
}

// A flush disk flushes at every idle period longer than its B (about a
// random access): the journal at info level tells of the first idle
// period's flush and then goes quiet; every one is at debug level and
// counted in the state.
#[test]
fn a_flush_disk_s_routine_is_told_once_at_info_level() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(200ms)\"\ntask = \"flush\"\n",
        &line("fakea", 0, 5),
    );
    let mut d = start(&s.config, &[]);
    let starts = || s.state()["fakea"]["task_starts"].as_u64().unwrap_or(0);
    for ios in [10, 20, 30, 40] {
        wait_for(
            "a flush",
            Duration::from_secs(20),
            || d.log().matches("disk fakea: flushed").count() >= (ios / 10) as usize,
            || d.log(),
        );
        // The first poll after a flush counts as the flush's own writes;
        // the second is foreground I/O.
        write(&s.diskstats, &line("fakea", 0, ios));
        std::thread::sleep(Duration::from_millis(150));
        write(&s.diskstats, &line("fakea", 0, ios + 1));
    }
    wait_for(
        "the stops",
        Duration::from_secs(20),
        || d.log().matches("disk fakea: busy, stop flush").count() >= 4,
        || d.log(),
    );
    assert!(d.stop().success());
    assert!(starts() >= 4, "{}", s.state());
    let log = d.log();
    let at = |level: &str, what: &str| {
        log.lines()
            .filter(|l| l.contains(level) && l.contains(what))
            .count()
    };
    for what in ["idle, flush", "flushed", "busy, stop flush"] {
        assert_eq!(at(" INFO ", what), 1, "{what} once at info level: {log}");
        assert!(at("DEBUG", what) >= 3, "{what} at debug level: {log}");
    }
    assert!(
        log.contains("each idle period's flush is logged at debug level from here on"),
        "{log}"
    );
}

// Two drives watched at once that give one serial number (enclosures
// whose bridges give every unit the same string; a firmware's placeholder
// serial): one is followed by it, the other by its key, and the log says
// so. A drive with a serial of its own is followed by it.
#[test]
fn two_drives_with_one_serial_number_are_told_apart_by_key() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\ntask = \"flush\"\n[[disk]]\ndevice = \"fakeb\"\ntask = \"flush\"\n[[disk]]\ndevice = \"fakec\"\ntask = \"flush\"\n",
        &format!(
            "{}{}{}",
            line("fakea", 0, 5),
            line("fakeb", 1, 5),
            line("fakec", 2, 5)
        ),
    );
    for (disk, serial) in [
        ("fakea", "VOL-SAME"),
        ("fakeb", "VOL-SAME"),
        ("fakec", "VOL-C"),
    ] {
        let dir = s.dir.path().join("no-sysfs/block").join(disk);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("serial"), format!("{serial}\n")).unwrap();
    }
    // `--check` says what the daemon will do.
    let out = check_ok(&s.config);
    assert!(
        out.contains(
            "warning: disk[1] fakeb: fakea gives the same serial number, \"serial VOL-SAME\""
        ),
        "{out}"
    );
    assert_eq!(
        out.matches("followed by serial \"serial VOL-SAME\"")
            .count(),
        1,
        "{out}"
    );
    assert_eq!(out.matches("no serial number: ").count(), 1, "{out}");
    assert!(out.contains("followed by serial \"serial VOL-C\""), "{out}");
    let mut d = start(&s.config, &[]);
    wait_for(
        "the warning",
        Duration::from_secs(20),
        || {
            d.log()
                .contains("gives the same serial number, \"serial VOL-SAME\"")
        },
        || d.log(),
    );
    assert!(d.stop().success());
    let st = s.state();
    let serial = |disk: &str| st[disk]["identity"]["serial"].as_str().map(str::to_string);
    let same: Vec<_> = ["fakea", "fakeb"].into_iter().map(serial).collect();
    assert!(
        same.contains(&Some("serial VOL-SAME".into())) && same.contains(&None),
        "one followed by the serial, one by its key: {same:?}\n{st}"
    );
    assert_eq!(serial("fakec").as_deref(), Some("serial VOL-C"), "{st}");
}

// An admin's mistake: `metrics.listen` on a port another program holds.
// The start fails on it; `--check` says so beforehand.
#[test]
fn check_warns_of_a_metrics_port_another_program_holds() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let s = Setup::new(
        &format!(
            "[metrics]\nlisten = \"127.0.0.1:{port}\"\n[[disk]]\ndevice = \"fakea\"\ntask = \"flush\"\n"
        ),
        &line("fakea", 0, 5),
    );
    let out = check_ok(&s.config);
    assert!(
        out.contains(&format!(
            "warning: metrics.listen 127.0.0.1:{port}: cannot listen: "
        )) && out.contains("a start now would fail"),
        "{out}"
    );
    drop(taken);
    let out = check_ok(&s.config);
    assert!(!out.contains("metrics.listen"), "free again: {out}");
}

// Issue 19: `--check` validates a jobs disk's tables and says in advance
// which jobs admission control admits.
#[test]
fn check_validates_jobs_and_shows_their_admission() {
    let jobs = "[[disk]]\ndevice = \"fakea\"\ntask = \"jobs\"\n[[disk.job]]\nname = \"scrub\"\ncommand = [\"/bin/sleep\", \"1\"]\nreserve = \"20m/hour\"\n[[disk.job]]\nname = \"trim\"\ncommand = [\"/bin/sleep\", \"2\"]\nreserve = \"10m/hour,5m/hour\"\n[[disk.job]]\nname = \"dedup\"\ncommand = [\"/bin/sleep\", \"3\"]\nreserve = \"2h/day\"\n";
    let s = Setup::new(jobs, &line("fakea", 0, 5));
    let out = run(&["--config", s.config.to_str().unwrap(), "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 30 min an hour assumed, 10 % kept: 27 min can be reserved.
    assert!(
        text.contains("job scrub admitted with 20m/hour (choice 1 of 1)"),
        "{text}"
    );
    assert!(
        text.contains("job trim admitted with 5m/hour (choice 2 of 2)"),
        "{text}"
    );
    assert!(text.contains("job dedup refused"), "{text}");

    for (from, to, key) in [
        (
            "reserve = \"2h/day\"",
            "reserve = \"2h/fortnight\"",
            "disk[0].job[2].reserve",
        ),
        (
            "reserve = \"2h/day\"",
            "reserv = \"2h/day\"",
            "disk[0].job[2].reserv",
        ),
        (
            "task = \"jobs\"",
            "task = \"jobs\"\nassume_idle = \"2h\"",
            "disk[0].assume_idle",
        ),
    ] {
        let s = Setup::new(&jobs.replacen(from, to, 1), &line("fakea", 0, 5));
        let out = run(&["--config", s.config.to_str().unwrap(), "--check"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        assert!(err.contains(&format!("key `{key}`")), "{to}: {err}");
    }
}

/// Counters that changed reach the state file every `state_interval`,
/// not at every poll (each write is two `fsync`s on the system disk, the
/// one the admin wants asleep), while the metrics follow at once; all of
/// them are saved at stop.
#[test]
fn counters_wait_for_the_state_interval_and_are_saved_at_stop() {
    let s = Setup::with_top(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(1h)\"\ntask = \"flush\"\n",
        &line("fakea", 0, 5),
        "[metrics]\ntextfile = \"PROM\"\n",
    );
    let cfg = std::fs::read_to_string(&s.config)
        .unwrap()
        .replace("state_interval = \"1s\"", "state_interval = \"1h\"");
    std::fs::write(&s.config, cfg).unwrap();
    let mut d = start(&s.config, &[]);
    let idle_starts = |v: &serde_json::Value| v["fakea"]["idle_starts"].as_u64().unwrap_or(0);
    wait_for(
        "the first save",
        Duration::from_secs(10),
        || s.state()["fakea"]["present"] == true,
        || d.log(),
    );
    // The first save counts the idle period its first poll began (1).
    let first = idle_starts(&s.state());
    // I/O, then none: another idle period starts.
    write(&s.diskstats, &line("fakea", 0, 9));
    let prom = s.prom();
    wait_for(
        "the idle start in the metrics",
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(&prom).is_ok_and(|t| {
                sample(&t, "lull_idle_starts_total{disk=\"fakea\"}") == Some(first as f64 + 1.0)
            })
        },
        || d.log(),
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        idle_starts(&s.state()),
        first,
        "written before its interval"
    );
    assert!(d.stop().success());
    assert_eq!(idle_starts(&s.state()), first + 1, "not saved at stop");
}

// A dry run beside hd-idle learns on the real disk: it keeps that in its
// own state file across its restarts, and a real run takes it over.
#[test]
fn what_a_dry_run_learned_survives_its_restart_and_the_switch() {
    let disk = "[[disk]]\ndevice = \"fakel\"\nnetwork = \"auto\"\ntask = \"standby\"\nbackend = \"hdparm\"\n";
    let s = Setup::new(disk, &line("fakel", 0, 1));
    s.hdparm_stand_in();
    let dry = s.state.with_file_name("state.dry-run.json");
    let busy_and_quiet = |from: u64| {
        for i in from..from + 6 {
            std::thread::sleep(Duration::from_millis(350));
            write(&s.diskstats, &line("fakel", 0, i));
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    let mut d = start_dry(&s.config);
    busy_and_quiet(2);
    assert!(d.stop().success());
    assert!(!s.state.exists(), "the real state file is left alone");
    let periods = state(&dry)["fakel"]["learned"]["idle_periods"]
        .as_u64()
        .unwrap_or(0);
    assert!(periods >= 3, "{}", state(&dry));
    // The dry run restarts: it goes on from what it learned.
    let mut d = start_dry(&s.config);
    wait_restored(&d, periods, "the dry run's learned state to be restored");
    busy_and_quiet(20);
    assert!(d.stop().success());
    let periods = state(&dry)["fakel"]["learned"]["idle_periods"]
        .as_u64()
        .unwrap();
    // The switch: the real daemon starts trained.
    let mut d = start(&s.config, &[]);
    wait_restored(
        &d,
        periods,
        "the real run to restore what the dry run learned",
    );
    assert!(d.log().contains("takes what the dry run"), "{}", d.log());
    assert!(d.stop().success());
    assert!(
        s.state()["fakel"]["learned"]["idle_periods"]
            .as_u64()
            .unwrap()
            >= periods
    );
    assert_eq!(
        s.state()["fakel"]["spindowns"],
        0,
        "no counter is carried over"
    );
}

// Issue 32: what `auto` learned is kept in the state file at stop and
// restored at the next start; a state file whose learned part is damaged
// starts cold with a warning, never a crash.
#[test]
fn what_auto_learned_is_kept_across_a_restart() {
    let disk = "[[disk]]\ndevice = \"fakel\"\nnetwork = \"auto\"\ntask = \"standby\"\nbackend = \"hdparm\"\n";
    let s = Setup::new(disk, &line("fakel", 0, 1));
    s.hdparm_stand_in();
    let mut d = start(&s.config, &[]);
    // Busy and quiet in turn: idle periods end.
    for i in 2..8 {
        std::thread::sleep(Duration::from_millis(350));
        write(&s.diskstats, &line("fakel", 0, i));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(d.stop().success());
    let learned = s.state()["fakel"]["learned"].clone();
    let periods = learned["idle_periods"].as_u64().unwrap_or(0);
    assert!(periods >= 3, "{}", s.state());
    assert_eq!(learned["network"], "auto");
    let mut d = start(&s.config, &[]);
    wait_restored(&d, periods, "the learned state to be restored");
    for i in 20..23 {
        std::thread::sleep(Duration::from_millis(350));
        write(&s.diskstats, &line("fakel", 0, i));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(d.stop().success());
    let again = s.state()["fakel"]["learned"]["idle_periods"]
        .as_u64()
        .unwrap();
    assert!(
        again > periods,
        "{again} after {periods}: it went on counting"
    );
    assert!(
        !d.log().contains("engine error"),
        "the restored network failed: {}",
        d.log()
    );
    // Damaged: truncated values. A warning, a cold start, no crash.
    let mut st = s.state();
    let parts = st["fakel"]["learned"]["parts"].as_array_mut().unwrap();
    for p in parts.iter_mut().filter(|p| !p.is_null()) {
        p["values"].as_array_mut().unwrap().truncate(5);
    }
    std::fs::write(&s.state, serde_json::to_vec(&st).unwrap()).unwrap();
    let mut d = start(&s.config, &[]);
    wait_for(
        "the damaged state to be refused",
        Duration::from_secs(10),
        || d.log().contains("its learned state is not used ("),
        || d.log(),
    );
    assert!(
        d.log().contains("its network learns from scratch"),
        "{}",
        d.log()
    );
    assert!(d.alive());
    assert!(d.stop().success());
}

// An admin removes the state directory under the running daemon to start
// afresh. The lock file went with it, and a second daemon could then take
// the state file. Now the daemon makes and takes its lock again and writes
// its state; if another daemon took the new lock first, it stops (exit 1)
// without writing the other's state file.
#[test]
fn a_removed_state_directory_is_made_again_and_its_lock_retaken() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(1h)\"\n",
        &line("fakea", 0, 5),
    );
    let sub = s.dir.path().join("var");
    let state = sub.join("state.json");
    let lock = sub.join("state.json.lock");
    let text = std::fs::read_to_string(&s.config).unwrap().replace(
        &format!("state_file = {:?}\n", s.state),
        &format!("state_file = {state:?}\n"),
    );
    std::fs::write(&s.config, text).unwrap();
    let mut d = start(&s.config, &[]);
    wait_for(
        "the state file",
        Duration::from_secs(20),
        || state.is_file(),
        || d.log(),
    );
    std::fs::remove_dir_all(&sub).unwrap();
    wait_for(
        "the lock taken again",
        Duration::from_secs(20),
        || {
            d.log()
                .contains("was removed (with its directory?): made and taken again")
        },
        || d.log(),
    );
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap().trim(),
        d.child.id().to_string()
    );
    wait_for(
        "the state written again",
        Duration::from_secs(20),
        || state.is_file(),
        || d.log(),
    );
    // A second daemon refused as ever.
    let mut second = Daemon::spawn(
        {
            let mut c = Command::new(LULLD);
            c.arg("--config").arg(&s.config);
            c
        },
        s.dir.path().join("second.log"),
        &[],
    );
    assert_eq!(second.exit_within(Duration::from_secs(20)).code(), Some(1));

    // Removed again while the first is stopped, and a second daemon takes
    // the new lock first: the first stops when it finds out.
    d.signal("-STOP");
    std::fs::remove_dir_all(&sub).unwrap();
    let mut second = Daemon::spawn(
        {
            let mut c = Command::new(LULLD);
            c.arg("--config").arg(&s.config);
            c
        },
        s.dir.path().join("third.log"),
        &[],
    );
    wait_for(
        "the second daemon",
        Duration::from_secs(20),
        || second.log().contains("lull daemon started"),
        || second.log(),
    );
    d.signal("-CONT");
    let status = d.exit_within(Duration::from_secs(20));
    assert_eq!(status.code(), Some(1), "{}", d.log());
    assert!(
        d.log().contains("was removed, and another daemon took it"),
        "{}",
        d.log()
    );
    assert!(second.alive(), "{}", second.log());
    assert_eq!(second.stop().code(), Some(0), "{}", second.log());
}

// An admin starts `lulld --config /etc/lull.toml` by hand while the
// service runs. Before the state file's lock, both ran, both acted, and the
// second stopped the first's command as left over from a crash.
#[test]
fn a_second_daemon_on_one_state_file_is_refused_and_the_first_keeps_its_command() {
    // An argument of this run's own, so leftovers of another run (or of a
    // failed assertion here) are not counted, and all are killed at the end.
    let seconds = format!("{}.5", 100_000 + std::process::id());
    let argv = ["/bin/sleep", seconds.as_str()];
    let _reaper = Reaper(&argv);
    let s = Setup::new(&command_disk("fakea", argv[1]), &line("fakea", 0, 5));
    let (mut d, first) = start_until_command(&s);

    let mut second = Daemon::spawn(
        {
            let mut c = Command::new(LULLD);
            c.arg("--config").arg(&s.config);
            c
        },
        s.dir.path().join("second.log"),
        &[],
    );
    let status = second.exit_within(Duration::from_secs(20));
    let said = second.log();
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("another lulld (pid {})", d.child.id())),
        "{said}"
    );
    assert!(said.contains("state.json.lock"), "{said}");
    assert_eq!(
        processes_running(&argv),
        [first],
        "the first daemon's command runs on"
    );
    assert_eq!(
        s.state()["fakea"]["command_pid"].as_u64(),
        Some(first as u64),
        "the state file is the first daemon's"
    );

    // `--check` by hand meanwhile: valid, and it says a start would be
    // refused.
    let out = check_ok(&s.config);
    assert!(
        out.contains(&format!(
            "a lulld (pid {}) is running on state file",
            d.child.id()
        )),
        "{out}"
    );

    let log = d.log();
    assert!(d.stop().success(), "{log}");
    // The lock goes with its holder: the next start runs.
    let out = check_ok(&s.config);
    assert!(!out.contains("is running on state file"), "{out}");
    let mut d = start(&s.config, &[]);
    wait_for(
        "the restart",
        Duration::from_secs(20),
        || d.log().contains("lull daemon started"),
        || d.log(),
    );
    assert!(d.stop().success(), "{}", d.log());
}

/// As root, a loop device and a configuration that spins it down, read
/// from the real `/proc/diskstats` (the fake one would hide the loop
/// device); `None` after saying why the test skips. In drop order: the
/// setup, the loop device, the directory of its image.
fn loop_standby_setup(why_root: &str) -> Option<(Setup, support::Loop, tempfile::TempDir)> {
    if !is_root() {
        lull_testkit::skip(why_root);
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = support::Loop::new(dir.path(), "disk.img") else {
        lull_testkit::skip("no loop devices (losetup -f failed)");
        return None;
    };
    let s = Setup::new(
        &format!(
            "[[disk]]\ndevice = {:?}\nnetwork = \"timer(1h)\"\ntask = \"standby\"\n",
            disk.dev
        ),
        "",
    );
    let cfg = std::fs::read_to_string(&s.config).unwrap().replace(
        &format!("diskstats = {:?}\n", s.diskstats),
        "diskstats = \"/proc/diskstats\"\n",
    );
    std::fs::write(&s.config, cfg).unwrap();
    Some((s, disk, dir))
}

// A maintenance command on a `command` disk (a scrub reading the disk) was
// paused by its own reads at every poll and resumed a break-even time
// later, so it ran whatever the foreground did. Its own I/O is now told
// from the foreground's (`/proc/PID/io` of its process tree against the
// disk's counters): alone it runs unpaused; the foreground's writes beside
// it pause it. While it runs the daemon polls every 100 ms, not every
// `poll` (2 s here), so that pause comes within 100 ms of the foreground.
#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn a_command_reading_its_disk_is_not_paused_by_its_own_reads() {
    use std::os::unix::fs::PermissionsExt;
    let Some((s, disk, dir)) = loop_standby_setup("needs root (a loop device)") else {
        return;
    };
    // A scrub: 64 KiB direct reads of the disk, a line per read.
    let script = dir.path().join("scrub.sh");
    let progress = dir.path().join("scrub.log");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ni=0\nwhile true; do\n  dd if={} of=/dev/null bs=64k count=1 skip=$((i % 256)) iflag=direct status=none\n  echo $i >> {}\n  i=$((i + 1))\n  sleep 0.05\ndone\n",
            disk.dev,
            progress.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cfg = std::fs::read_to_string(&s.config)
        .unwrap()
        .replace(
            "network = \"timer(1h)\"\ntask = \"standby\"\n",
            &format!(
                "network = \"timer(300ms)\"\ntask = \"command\"\ncommand = [{:?}]\n",
                script.to_str().unwrap()
            ),
        )
        .replace("poll = \"100ms\"", "poll = \"2s\"");
    assert!(cfg.contains("poll = \"2s\""), "{cfg}");
    std::fs::write(&s.config, cfg).unwrap();
    let argv = ["/bin/sh", script.to_str().unwrap()];
    let _reaper = Reaper(&argv);
    let mut d = start(&s.config, &[("LULL_LOG", "debug")]);
    let key = disk.dev.as_str();
    wait_for(
        "the command",
        Duration::from_secs(20),
        || s.state()[key]["command_pid"].as_u64().is_some(),
        || d.log(),
    );
    let pid = s.state()[key]["command_pid"].as_u64().unwrap() as u32;
    let reads = || {
        std::fs::read_to_string(&progress)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    // Three seconds alone: 30 polls (not one or two), most with the
    // scrub's reads.
    let own_polls = || d.log().matches("were its command's own I/O").count();
    let (before, polls_before) = (reads(), own_polls());
    std::thread::sleep(Duration::from_secs(3));
    let alone = reads() - before;
    assert!(alone >= 20, "the scrub ran: {alone} reads\n{}", d.log());
    let polls = own_polls() - polls_before;
    assert!(polls >= 10, "{polls} polls in 3 s\n{}", d.log());
    assert!(
        d.log()
            .contains("were its command's own I/O: not counted as activity"),
        "{}",
        d.log()
    );
    assert!(
        !d.log()
            .contains(&format!("command paused (SIGSTOP), pid {pid}")),
        "paused by its own reads:\n{}",
        d.log()
    );
    // The foreground writes beside it: paused.
    let traffic = support::Traffic::new(&disk.dev);
    traffic.set(true);
    wait_for(
        "the pause",
        Duration::from_secs(10),
        || {
            d.log()
                .contains(&format!("command paused (SIGSTOP), pid {pid}"))
        },
        || d.log(),
    );
    traffic.set(false);
    d.stop();
}

/// Kills the processes running `argv` when dropped, passed or failed.
struct Reaper<'a>(&'a [&'a str]);

impl Drop for Reaper<'_> {
    fn drop(&mut self) {
        for p in processes_running(self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

// A reload that moves the state file onto one another daemon holds is
// rejected, and the running configuration kept.
#[test]
fn a_reload_onto_another_daemons_state_file_is_rejected() {
    let seconds = format!("{}.75", 100_000 + std::process::id());
    let _reaper = Reaper(&["/bin/sleep", seconds.as_str()]);
    let a = Setup::new(&command_disk("fakea", &seconds), &line("fakea", 0, 5));
    let b = Setup::new(
        "[[disk]]\ndevice = \"fakeb\"\nnetwork = \"timer(1h)\"\ntask = \"command\"\ncommand = [\"/bin/true\"]\n",
        &line("fakeb", 1, 5),
    );
    let mut da = start(&a.config, &[]);
    let mut db = start(&b.config, &[]);
    for d in [&da, &db] {
        wait_for(
            "the start",
            Duration::from_secs(20),
            || d.log().contains("lull daemon started"),
            || d.log(),
        );
    }
    let text = std::fs::read_to_string(&b.config).unwrap();
    let moved = text.replace(
        &format!("state_file = {:?}", b.state),
        &format!("state_file = {:?}", a.state),
    );
    assert_ne!(moved, text);
    write(&b.config, &moved);
    reload(&db, "config reload rejected");
    let log = db.log();
    assert!(
        log.contains(&format!("another lulld (pid {})", da.child.id())),
        "{log}"
    );
    assert!(db.alive(), "{log}");
    assert!(da.stop().success(), "{}", da.log());
    assert!(db.stop().success(), "{}", db.log());
    // b kept its own state file.
    assert!(b.state()["fakeb"].is_object(), "{}", b.state());
}

// An admin installs lull and leaves hd-idle running: both would spin the
// disks down. `--check` and the start name it where a disk is to be spun
// down; a dry run beside it (the documented way to compare) does not.
#[test]
fn a_running_hd_idle_is_named_where_disks_are_spun_down() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("hd-idle");
    // A link, not a copy: the process is named after the path run, and a
    // copy just written can fail to run (ETXTBSY) while another test's
    // thread forks with its file still open for writing.
    std::os::unix::fs::symlink("/bin/sleep", &fake).unwrap();
    let mut hd = Command::new(&fake).arg("60").spawn().unwrap();
    // Until its exec is done, the process is not hd-idle yet, or is one
    // with an empty command line (hd-idle's with no options).
    let proc = |f: &str| std::fs::read(format!("/proc/{}/{f}", hd.id())).unwrap_or_default();
    wait_for(
        "the fake hd-idle's exec",
        Duration::from_secs(5),
        || proc("comm") == b"hd-idle\n" && proc("cmdline").ends_with(b"hd-idle\x0060\0"),
        String::new,
    );
    let standby = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(1h)\"\ntask = \"standby\"\nbackend = \"sgio\"\n",
        &line("fakea", 0, 5),
    );
    let flush = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\ntask = \"flush\"\n",
        &line("fakea", 0, 5),
    );
    let named = "hd-idle (pid ";
    let out = check_ok(&standby.config);
    assert!(out.contains(&format!("warning: {named}")), "{out}");
    assert!(out.contains("systemctl disable --now hd-idle"), "{out}");
    let out = check_ok(&flush.config);
    assert!(!out.contains(named), "no disk to spin down: {out}");

    let mut d = start(&standby.config, &[]);
    // Stopped only once started: the warning comes before the signal
    // handlers are in place.
    wait_for(
        "the warning, and the start",
        Duration::from_secs(20),
        || {
            let log = d.log();
            log.contains(named) && log.contains("lull daemon started")
        },
        || d.log(),
    );
    assert!(d.stop().success(), "{}", d.log());
    let mut d = start_dry(&standby.config);
    wait_for(
        "the dry run",
        Duration::from_secs(20),
        || d.log().contains("lull daemon started"),
        || d.log(),
    );
    assert!(d.stop().success(), "{}", d.log());
    assert!(!d.log().contains(named), "{}", d.log());

    let _ = hd.kill();
    let _ = hd.wait();
    if lull_live::process::running_named(lull_live::process::SPIN_DOWN_DAEMONS).is_empty() {
        let out = check_ok(&standby.config);
        assert!(!out.contains(named), "{out}");
    }
}

// lulld run as a user (or a unit that drops root): `--check` said ok, and
// the first spin-down failed. Now `--check` says it cannot open the disk.
#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
#[cfg_attr(
    all(has_loop, not(has_runuser_nobody)),
    ignore = "needs runuser and the user nobody"
)]
fn check_warns_when_it_cannot_open_a_disk_it_would_spin_down() {
    let Some((s, disk, _dir)) =
        loop_standby_setup("needs root (a loop device, and runuser to drop to nobody)")
    else {
        return;
    };
    // nobody cannot reach this build's lulld, nor the setup's directory,
    // when the clone or $TMPDIR sits under a directory only root may enter
    // (root's home is 0700 on Debian). Everything nobody needs goes to a
    // fresh directory under /tmp: a copy of lulld, the config, and a
    // directory of nobody's own for the state file (the config's directory
    // may not be writable by others: the daemon refuses such a config).
    let Some(reach) = reachable_by_nobody() else {
        return;
    };
    let nobody_dir = reach.dir.path().join("nobody");
    std::fs::create_dir(&nobody_dir).unwrap();
    std::os::unix::fs::chown(&nobody_dir, Some(65534), Some(65534)).unwrap();
    let here = s.dir.path().to_str().unwrap();
    let cfg = std::fs::read_to_string(&s.config)
        .unwrap()
        .replace(
            &format!("state_file = {:?}\n", s.state),
            &format!("state_file = {:?}\n", nobody_dir.join("state.json")),
        )
        .replace(here, reach.dir.path().to_str().unwrap());
    assert!(!cfg.contains(here), "{cfg}");
    let config = reach.dir.path().join("lull.toml");
    std::fs::write(&config, cfg).unwrap();
    let out = check_ok(&config);
    assert!(!out.contains("cannot open"), "{out}");

    let as_nobody = reach.run(&["--config", config.to_str().unwrap(), "--check"]);
    let out = String::from_utf8_lossy(&as_nobody.stdout);
    assert!(as_nobody.status.success(), "{as_nobody:?}");
    assert!(
        out.contains(&format!(
            "warning: disk[0] {}: cannot open {}",
            disk.name(),
            disk.dev
        )),
        "{out}"
    );
}

/// A 0755 directory under /tmp holding a 0755 copy of this build's lulld,
/// which nobody can run wherever the build is.
struct AsNobody {
    dir: tempfile::TempDir,
    lulld: PathBuf,
}

impl AsNobody {
    /// `lulld ARGS` run as nobody (`runuser`), without `LULL_LOG`.
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(&self.lulld)
            .args(args)
            .env_remove("LULL_LOG")
            .output()
            .unwrap()
    }
}

/// An [`AsNobody`] whose lulld nobody has run (`--help`); `None` after
/// saying why the test skips when nobody cannot (a /tmp mounted noexec).
fn reachable_by_nobody() -> Option<AsNobody> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("lull-as-nobody")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let lulld = dir.path().join("lulld");
    std::fs::copy(LULLD, &lulld).unwrap();
    std::fs::set_permissions(&lulld, std::fs::Permissions::from_mode(0o755)).unwrap();
    let reach = AsNobody { dir, lulld };
    let help = reach.run(&["--help"]);
    if !help.status.success() {
        lull_testkit::skip(&format!(
            "nobody cannot run a copy of lulld in {} ({})",
            reach.dir.path().display(),
            String::from_utf8_lossy(&help.stderr).trim()
        ));
        return None;
    }
    Some(reach)
}

// The state file, activity logs or metrics textfile on the very disk the
// daemon spins down: its own writes would keep the disk awake. `--check`
// and the start say so; a file elsewhere raises nothing.
#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
#[cfg_attr(
    all(has_loop, not(has_mkfs_ext4)),
    ignore = "needs mkfs.ext4, mount and umount"
)]
fn own_files_on_a_disk_it_spins_down_are_named() {
    let Some((s, disk, dir)) =
        loop_standby_setup("needs root (a loop device with a mounted file system)")
    else {
        return;
    };
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ok = |c: &mut Command| c.output().is_ok_and(|o| o.status.success());
    assert!(
        ok(Command::new("mkfs.ext4").args(["-q", &disk.dev])),
        "mkfs.ext4 {}",
        disk.dev
    );
    assert!(
        ok(Command::new("mount").arg(&disk.dev).arg(&mnt)),
        "mount {}",
        disk.dev
    );
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());

    let real = |state: &Path| {
        std::fs::read_to_string(&s.config).unwrap().replace(
            &format!("state_file = {:?}\n", s.state),
            &format!("state_file = {state:?}\n"),
        )
    };
    std::fs::create_dir(mnt.join("lull")).unwrap();
    let on_disk = mnt.join("lull").join("state.json");
    let config_on = s.dir.path().join("on.toml");
    std::fs::write(&config_on, real(&on_disk)).unwrap();
    let out = check_ok(&config_on);
    let named = format!(
        "warning: state_file {} is on {}, which disk[0] spins down",
        on_disk.display(),
        disk.name()
    );
    assert!(out.contains(&named), "{out}");
    assert!(
        out.contains(&format!(
            "warning: activity_dir {} is on {}",
            mnt.join("lull").join("activity").display(),
            disk.name()
        )),
        "{out}"
    );
    // Elsewhere: nothing.
    let config_off = s.dir.path().join("off.toml");
    std::fs::write(&config_off, real(&s.state)).unwrap();
    let out = check_ok(&config_off);
    assert!(!out.contains("spins down:"), "{out}");

    // A start logs it too.
    let mut d = start(&config_on, &[]);
    // Stopped only once started: the warning comes before the signal
    // handlers are in place.
    wait_for(
        "the warning at the start, and the start",
        Duration::from_secs(20),
        || {
            let log = d.log();
            log.contains(&named["warning: ".len()..]) && log.contains("lull daemon started")
        },
        || d.log(),
    );
    assert!(d.stop().success(), "{}", d.log());
}

// A configuration tried by hand with its own `state_file`, on a disk the
// service already acts on: the state file's lock does not see it, the
// disk's claim does. The second daemon runs but leaves the disk alone.
#[test]
fn a_disk_another_daemon_acts_on_is_left_alone() {
    let first_s = format!("{}.125", 100_000 + std::process::id());
    let second_s = format!("{}.375", 100_000 + std::process::id());
    let _reap_first = Reaper(&["/bin/sleep", first_s.as_str()]);
    let _reap_second = Reaper(&["/bin/sleep", second_s.as_str()]);
    let a = Setup::new(&command_disk("fakea", &first_s), &line("fakea", 0, 5));
    let b = Setup::new(&command_disk("fakea", &second_s), "");
    // b reads a's machine: the same diskstats.
    let text = std::fs::read_to_string(&b.config).unwrap().replace(
        &format!("diskstats = {:?}", b.diskstats),
        &format!("diskstats = {:?}", a.diskstats),
    );
    std::fs::write(&b.config, text).unwrap();

    let (mut da, first) = start_until_command(&a);
    let out = check_ok(&b.config);
    assert!(
        out.contains(&format!(
            "warning: disk[0] fakea: another lulld (pid {}) acts on it",
            da.child.id()
        )),
        "{out}"
    );

    let mut db = start(&b.config, &[]);
    wait_for(
        "the second daemon's refusal",
        Duration::from_secs(20),
        || {
            db.log().contains(&format!(
                "another lulld (pid {}) acts on fakea",
                da.child.id()
            ))
        },
        || db.log(),
    );
    // Idle for many times its timer: it never runs its command.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        processes_running(&["/bin/sleep", second_s.as_str()]).is_empty(),
        "{}",
        db.log()
    );
    assert_eq!(
        processes_running(&["/bin/sleep", first_s.as_str()]),
        [first]
    );
    assert!(db.alive(), "{}", db.log());
    // The first stops: within 60 polls (6 s here) the second claims the
    // disk and acts on it.
    assert!(da.stop().success(), "{}", da.log());
    wait_for(
        "the second daemon's command once the disk is free",
        Duration::from_secs(20),
        || !processes_running(&["/bin/sleep", second_s.as_str()]).is_empty(),
        || db.log(),
    );
    assert!(db.stop().success(), "{}", db.log());
}

// Two mistakes `--check` used to call ok: a file with no `[[disk]]` (hd-idle
// with no `-a` watches every disk; lulld watched nothing, silently), and a
// `poll` far coarser than a disk's network (`timer(5s)` under a 30 s poll
// is a 30 s timer). Both are warnings, in `--check` and in a start's log.
#[test]
fn check_and_start_warn_of_no_disk_and_of_a_poll_coarser_than_the_network() {
    let s = Setup::new("", "");
    let out = check_ok(&s.config);
    assert!(
        out.contains(
            "warning: the configuration names no disk ([[disk]]): the daemon watches nothing"
        ),
        "{out}"
    );

    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(5s)\"\n",
        &line("fakea", 0, 5),
    );
    let text = std::fs::read_to_string(&s.config).unwrap();
    let coarse = text.replace("poll = \"100ms\"", "poll = \"30s\"");
    assert_ne!(coarse, text);
    std::fs::write(&s.config, &coarse).unwrap();
    let warning = "poll 30s is longer than the time scale of its network `timer(5s)` (5s)";
    let out = check_ok(&s.config);
    assert!(
        out.contains(&format!("warning: disk[0] fakea: {warning}")),
        "{out}"
    );
    assert!(!out.contains("names no disk"), "{out}");
    let mut d = start_dry(&s.config);
    wait_for(
        "the poll warning",
        Duration::from_secs(10),
        || d.log().contains(warning),
        || d.log(),
    );
    d.stop();
    // A poll within the network's time scale says nothing.
    std::fs::write(&s.config, coarse.replace("poll = \"30s\"", "poll = \"5s\"")).unwrap();
    let out = check_ok(&s.config);
    assert!(!out.contains("is longer than the time scale"), "{out}");
}

// An admin who writes `max_spindowns_per_day = 0` as hd-idle's `-i 0`
// ("no timeout") gets a disk lull never spins down; `--check` says so,
// and what a budget allows at once otherwise. A typo in a kernel name
// would wait forever: `--check` says what it might have meant.
#[test]
fn check_states_each_standby_disks_wear_budget() {
    let s = Setup::new(
        "[[disk]]\ndevice = \"fakea\"\ntask = \"standby\"\nmax_spindowns_per_day = 0\n[[disk]]\ndevice = \"fakeb\"\ntask = \"standby\"\nmax_spindowns_per_day = 24\n[[disk]]\ndevice = \"fakec\"\ntask = \"flush\"\n[[disk]]\ndevice = \"FAKEB\"\ntask = \"flush\"\n",
        &format!(
            "{}{}{}",
            line("fakea", 0, 5),
            line("fakeb", 1, 5),
            line("fakec", 2, 5)
        ),
    );
    let out = check_ok(&s.config);
    let block = |disk: &str| {
        let from = out
            .find(&format!("): {disk}; task"))
            .unwrap_or_else(|| panic!("{out}"));
        let rest = &out[from..];
        rest[..rest[1..].find("\ndisk[").map_or(rest.len(), |i| i + 1)].to_string()
    };
    assert!(
        block("fakea").contains(
            "wear budget 0 spin-downs a day (max_spindowns_per_day = 0): it is never spun down"
        ),
        "{out}"
    );
    assert!(
        block("fakeb").contains("wear budget 24 spin-downs a day, at most 4 at once"),
        "{out}"
    );
    assert!(!block("fakec").contains("wear budget"), "{out}");
    // An absent disk whose name differs from a present one's only in case.
    assert!(
        out.contains("FAKEB (line 19): not present now (the daemon waits for it; kernel names are case-sensitive: did you mean `fakeb`?)"),
        "{out}"
    );
    let json = run(&[
        "--config",
        s.config.to_str().unwrap(),
        "--check",
        "--format",
        "json",
    ]);
    assert!(json.status.success(), "{json:?}");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let budgets: Vec<_> = v["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["max_spindowns_per_day"].as_u64())
        .collect();
    assert_eq!(budgets, [Some(0), Some(24), None, None]);
}

// Tried as an admin: a first start ran the system's hdparm, which refused
// the disk; the admin named another `hdparm` in the file and reloaded.
// The disk's entry had not changed, so it kept its actors, built with the
// old program, and the reload changed nothing until a restart. The
// top-level keys a disk takes at its start (`hdparm`, `poll`,
// `power_check`, the activity log's) now start every disk again, as a
// restart would, keeping its counters and what it learned.
#[test]
fn a_reload_that_changes_hdparm_runs_the_new_one() {
    use std::os::unix::fs::PermissionsExt;
    let disk = "[[disk]]\ndevice = \"fakeh\"\nnetwork = \"timer(200ms)\"\ntask = \"standby\"\nbackend = \"hdparm\"\n";
    let s = Setup::new(disk, &line("fakeh", 0, 1));
    let stand_in = |name: &str| {
        let path = s.dir.path().join(name);
        let ran = s.dir.path().join(format!("{name}.ran"));
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho \"$*\" >> {ran:?}\nexit 0\n"),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        (path, ran)
    };
    let (first, first_ran) = stand_in("hdparm-first");
    let (second, second_ran) = stand_in("hdparm-second");
    let text = std::fs::read_to_string(&s.config).unwrap();
    write(&s.config, &format!("hdparm = {first:?}\n{text}"));
    let mut d = start(&s.config, &[]);
    let mut ios = 1;
    // Busy, then quiet until `ran` holds a spin-down.
    let mut spin_down_with = |ran: &Path, d: &Daemon| {
        let t = Instant::now();
        while !ran.exists() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "no spin-down by {ran:?}: {}",
                d.log()
            );
            ios += 1;
            write(&s.diskstats, &line("fakeh", 0, ios));
            std::thread::sleep(Duration::from_millis(700));
        }
    };
    spin_down_with(&first_ran, &d);
    write(&s.config, &format!("hdparm = {second:?}\n{text}"));
    reload(&d, "configuration reloaded");
    let before = std::fs::read_to_string(&first_ran).unwrap();
    spin_down_with(&second_ran, &d);
    assert!(d.stop().success(), "{}", d.log());
    let log = d.log();
    assert!(
        log.contains("disk fakeh: hdparm changed; its controller starts again"),
        "{log}"
    );
    // The reload says what it runs with, as the start does.
    assert!(
        log.contains("configuration reloaded: 1 disk entry, poll "),
        "{log}"
    );
    assert_eq!(
        std::fs::read_to_string(&first_ran).unwrap(),
        before,
        "the old hdparm ran after the reload: {log}"
    );
    assert!(
        std::fs::read_to_string(&second_ran)
            .unwrap()
            .contains("-y /dev/fakeh"),
        "{log}"
    );
    // The counters went on across the reload: both spin-downs are there.
    assert!(
        s.state()["fakeh"]["spindowns"].as_u64() >= Some(2),
        "{}",
        s.state()
    );
}

/// `--check --format json` gives the poll interval as a number and says
/// whether it was derived, beside the words (`poll` was prose only).
#[test]
fn check_json_gives_the_poll_as_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("lull.toml");
    let state = dir.path().join("state.json");
    for (top, poll_s, derived) in [("poll = \"500ms\"\n", 0.5, false), ("", 1.0, true)] {
        std::fs::write(
            &config,
            format!(
                "{top}state_file = {state:?}\n[[disk]]\ndevice = \"nosuchdisk\"\nnetwork = \"timer(10s)\"\n"
            ),
        )
        .unwrap();
        let out = run(&[
            "--config",
            config.to_str().unwrap(),
            "--check",
            "--format",
            "json",
        ]);
        assert!(out.status.success(), "{out:?}");
        let js: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(js["poll_s"], poll_s, "{js}");
        assert_eq!(js["poll_derived"], derived, "{js}");
        assert!(
            js["poll"]
                .as_str()
                .unwrap()
                .starts_with(if derived { "1s (derived" } else { "500ms" }),
            "{js}"
        );
    }
}
