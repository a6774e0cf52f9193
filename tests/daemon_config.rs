//! `lull daemon` without real disks: config errors, `--check`, a missing
//! device that appears later, an unwritable state file, SIGHUP with a broken
//! config, dry runs. The disks are fake: a diskstats file the test rewrites.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const LULL: &str = env!("CARGO_BIN_EXE_lull");

#[path = "../crates/live/tests/support/mod.rs"]
mod support;

use support::{Daemon, Setup, line, state, wait_for, write};

/// Starts `lull daemon --config CONFIG EXTRA…`, logging to `CONFIG.log`.
fn start(config: &Path, extra: &[&str]) -> Daemon {
    let mut cmd = Command::new(LULL);
    cmd.args(["daemon", "--config"]).arg(config).args(extra);
    Daemon::spawn(cmd, config.with_extension("log"), &[])
}

fn count(v: &serde_json::Value, disk: &str, key: &str) -> u64 {
    v[disk][key].as_u64().unwrap_or(0)
}

fn setup(disks: &str, diskstats: &str) -> Setup {
    Setup::new(disks, diskstats)
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(LULL).args(args).output().unwrap()
}

/// `lull daemon --config CONFIG --check`, which must pass: its report.
fn check_ok(config: &Path) -> String {
    let out = run(&["daemon", "--config", config.to_str().unwrap(), "--check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn config_errors_name_the_line_and_key() {
    let s = setup(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(1s) + fixed(nope)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1\"]\n",
        "",
    );
    let out = run(&["daemon", "--config", s.config.to_str().unwrap(), "--check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("lull.toml:9: key `disk[0].network`"), "{err}");

    // The daemon itself refuses to start the same way.
    let out = run(&["daemon", "--config", s.config.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    std::fs::write(
        &s.config,
        "poll = \"1s\"\n[[disk]]\ndevice = \"sda\"\ntask = \"sleep\"\n",
    )
    .unwrap();
    let out = run(&["daemon", "--config", s.config.to_str().unwrap(), "--check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains(":4: key `disk[0].task`"), "{err}");

    std::fs::write(&s.config, "pol = \"1s\"\n").unwrap();
    let out = run(&["daemon", "--config", s.config.to_str().unwrap(), "--check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains(":1: key `pol`") && err.contains("unknown field"),
        "{err}"
    );

    // An offline component is refused.
    std::fs::write(
        &s.config,
        "[[disk]]\ndevice = \"sda\"\nnetwork = \"oracle()\"\n",
    )
    .unwrap();
    let out = run(&["daemon", "--config", s.config.to_str().unwrap(), "--check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains(":3: key `disk[0].network`") && err.contains("offline"),
        "{err}"
    );
}

#[test]
fn check_lists_present_and_missing_disks() {
    let s = setup(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(1s)\"\ntask = \"flush\"\n\n[[disk]]\ndevice = \"fakeb\"\ntask = \"flush\"\n",
        &line("fakea", 0, 1),
    );
    let text = check_ok(&s.config);
    assert!(text.contains("disk[0] fakea (line 8): fakea;"), "{text}");
    assert!(
        text.contains("disk[1] fakeb (line 13): not present now"),
        "{text}"
    );
    assert!(!s.state.exists(), "--check writes nothing");
}

#[test]
fn an_unwritable_state_file_stops_the_start() {
    let s = setup("", "");
    // Not even root may create files in /proc.
    let text = std::fs::read_to_string(&s.config)
        .unwrap()
        .replace(&format!("{:?}", s.state), "\"/proc/lull-state.json\"");
    std::fs::write(&s.config, text).unwrap();
    // A start and --check refuse it alike: a config error (exit 2).
    for extra in [&[][..], &["--check"][..]] {
        let out = run(&[&["daemon", "--config", s.config.to_str().unwrap()], extra].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains("key `state_file`") && err.contains("cannot create files in /proc"),
            "{err}"
        );
    }
}

#[test]
fn a_missing_state_directory_is_created_by_a_start_not_by_check() {
    let s = setup(
        "[[disk]]\ndevice = \"fakea\"\nnetwork = \"timer(1s)\"\ntask = \"flush\"\n",
        &line("fakea", 0, 1),
    );
    // `cargo install` leaves no /var/lib/lull behind: two levels missing.
    let state = s.dir.path().join("var/lib/lull/state.json");
    // The metrics textfile beside it: its directory is the one a start
    // makes.
    let prom = state.with_file_name("lull.prom");
    let text = std::fs::read_to_string(&s.config)
        .unwrap()
        .replace(&format!("{:?}", s.state), &format!("{state:?}"))
        + &format!("[metrics]\ntextfile = {prom:?}\n");
    std::fs::write(&s.config, text).unwrap();
    let text = check_ok(&s.config);
    let dir = state.parent().unwrap();
    assert!(
        text.contains(&format!(
            "state_file: directory {} does not exist; a start creates it",
            dir.display()
        )),
        "{text}"
    );
    assert!(
        !s.dir.path().join("var").exists(),
        "--check creates nothing"
    );

    let mut d = start(&s.config, &[]);
    wait_for(
        "the lock file",
        Duration::from_secs(20),
        || state.with_file_name("state.json.lock").exists(),
        || d.log(),
    );
    assert!(d.stop().success(), "{}", d.log());
    assert!(
        support::state(&state)["fakea"].is_object(),
        "the stop saved the state there: {}",
        d.log()
    );
    assert!(prom.is_file(), "the metrics went there too: {}", d.log());
    // Elsewhere the textfile's directory must exist (node-exporter's: a
    // typo would leave the metrics where nothing collects them).
    let elsewhere = s.dir.path().join("node-exporter/lull.prom");
    let text = std::fs::read_to_string(&s.config)
        .unwrap()
        .replace(&format!("{prom:?}"), &format!("{elsewhere:?}"));
    std::fs::write(&s.config, text).unwrap();
    let out = run(&["daemon", "--config", s.config.to_str().unwrap(), "--check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("key `metrics.textfile`"), "{err}");
}

const COMMAND_DISK: &str = "[[disk]]\ndevice = \"DISK\"\nnetwork = \"timer(500ms)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1000\"]\n";

#[test]
fn a_missing_device_is_awaited_and_picked_up() {
    let disks = COMMAND_DISK.replace("DISK", "fakea") + &COMMAND_DISK.replace("DISK", "fakeb");
    let s = setup(&disks, &line("fakea", 0, 5));
    let mut d = start(&s.config, &[]);
    wait_for(
        "fakea's command",
        Duration::from_secs(20),
        || count(&state(&s.state), "fakea", "task_starts") == 1,
        || d.log(),
    );
    assert!(
        d.log()
            .contains("fakeb (config line 13): not present; waiting"),
        "{}",
        d.log()
    );
    assert_eq!(state(&s.state)["fakeb"]["present"], false);
    assert!(d.alive());

    // fakeb appears: it is watched without a restart, and idle from now.
    write(&s.diskstats, &(line("fakea", 0, 5) + &line("fakeb", 1, 9)));
    wait_for(
        "fakeb's command",
        Duration::from_secs(20),
        || count(&state(&s.state), "fakeb", "task_starts") == 1,
        || d.log(),
    );
    assert_eq!(state(&s.state)["fakeb"]["present"], true);

    // fakea vanishes: logged, the daemon keeps serving fakeb.
    write(&s.diskstats, &line("fakeb", 1, 9));
    wait_for(
        "fakea to vanish",
        Duration::from_secs(20),
        || state(&s.state)["fakea"]["present"] == false,
        || d.log(),
    );
    assert!(d.log().contains("fakea (fakea) vanished"));
    let status = d.stop();
    assert!(status.success(), "{}", d.log());
    let st = state(&s.state);
    for disk in ["fakea", "fakeb"] {
        // Stopped by the daemon, not run to their end.
        assert_eq!(count(&st, disk, "command_exits"), 0, "{st}");
        assert!(st[disk]["command_pid"].is_null());
        assert!(
            st[disk]["last_decision"]
                .as_str()
                .is_some_and(|t| t.starts_with("command stopped by the daemon")),
            "{st}"
        );
    }
}

#[test]
fn sighup_with_a_broken_config_keeps_the_old_one() {
    let s = setup(&COMMAND_DISK.replace("DISK", "fakea"), &line("fakea", 0, 5));
    let mut d = start(&s.config, &[]);
    wait_for(
        "the command",
        Duration::from_secs(20),
        || count(&state(&s.state), "fakea", "task_starts") == 1,
        || d.log(),
    );
    let good = std::fs::read_to_string(&s.config).unwrap();
    std::fs::write(&s.config, good.replace("timer(500ms)", "timer(500ms) + + ")).unwrap();
    d.signal("-HUP");
    wait_for(
        "the rejection",
        Duration::from_secs(20),
        || d.log().contains("config reload rejected"),
        || d.log(),
    );
    assert!(d.log().contains("key `disk[0].network`"), "{}", d.log());
    assert!(d.alive());

    // The old configuration still runs: I/O pauses the command, quiet
    // resumes it.
    let pid = state(&s.state)["fakea"]["command_pid"].as_u64().unwrap();
    let mut ios = 5;
    let mut busy = |until: Instant| {
        while Instant::now() < until {
            ios += 10;
            write(&s.diskstats, &line("fakea", 0, ios));
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let t = Instant::now();
    while proc_state(pid) != Some('T') {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no SIGSTOP:\n{}",
            d.log()
        );
        busy(Instant::now() + Duration::from_millis(100));
    }
    busy(Instant::now() + Duration::from_secs(1));
    assert_eq!(proc_state(pid), Some('T'), "stays paused while busy");
    wait_for(
        "SIGCONT",
        Duration::from_secs(10),
        || proc_state(pid) == Some('S'),
        || d.log(),
    );
    wait_for(
        "the counts",
        Duration::from_secs(10),
        || {
            let st = state(&s.state);
            count(&st, "fakea", "task_starts") == 2 && count(&st, "fakea", "task_stops") == 1
        },
        || d.log(),
    );

    // A valid config is taken.
    std::fs::write(
        &s.config,
        good.replace("poll = \"100ms\"", "poll = \"200ms\""),
    )
    .unwrap();
    d.signal("-HUP");
    wait_for(
        "the reload",
        Duration::from_secs(20),
        || d.log().contains("configuration reloaded"),
        || d.log(),
    );
    assert!(d.stop().success());
    // The command got SIGCONT then SIGTERM.
    assert_eq!(proc_state(pid), None);
    // …which is the daemon stopping it, not a run to its end.
    assert_eq!(count(&state(&s.state), "fakea", "command_exits"), 0);
}

fn proc_state(pid: u64) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the parenthesised command name.
    stat.rsplit_once(") ")?.1.chars().next()
}

#[test]
fn a_dry_run_decides_but_runs_nothing() {
    let s = setup(&COMMAND_DISK.replace("DISK", "fakea"), &line("fakea", 0, 5));
    let mut d = start(&s.config, &["--dry-run"]);
    wait_for(
        "the decision",
        Duration::from_secs(20),
        || d.log().contains("dry run: would run"),
        || d.log(),
    );
    assert!(d.stop().success());
    assert!(
        !s.state.exists(),
        "a dry run leaves the real state file alone"
    );
    let dry = s.state.with_file_name("state.dry-run.json");
    assert!(
        state(&dry)["fakea"].is_object(),
        "a dry run keeps its own state: {}",
        state(&dry)
    );
    assert!(!d.log().contains("command started"));
}

#[test]
fn standby_policy_globs_and_metrics() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let disks = format!(
        "[[disk]]\ndevice = \"fake[ab]\"\nnetwork = \"timer(300ms) + fixed(1s)\"\ntask = \"standby\"\npreset = \"paper-2.5in\"\n\n\
         [[disk]]\ndevice = \"fakec\"\nnetwork = \"timer(300ms)\"\ntask = \"standby\"\nmax_spindowns_per_day = 0\n\n\
         [metrics]\nlisten = \"{port}\"\n"
    );
    let stats =
        line("fakea", 0, 1) + &line("fakeb", 1, 1) + &line("fakec", 2, 1) + &line("other", 3, 1);
    let s = setup(&disks, &stats);
    let text = std::fs::read_to_string(&s.config).unwrap();
    let prom = s.dir.path().join("lull.prom");
    let text = text.replace("[metrics]\n", &format!("[metrics]\ntextfile = {prom:?}\n"));
    std::fs::write(&s.config, text).unwrap();
    let mut d = start(&s.config, &[]);
    let decision = |disk: &str| {
        state(&s.state)[disk]["last_decision"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    for disk in ["fakea", "fakeb"] {
        wait_for(
            "the break-even skip",
            Duration::from_secs(20),
            || {
                decision(disk)
                    .starts_with("skip standby: predicted idle 1s is below the break-even 3.0 s")
            },
            || d.log(),
        );
    }
    wait_for(
        "the wear-budget skip",
        Duration::from_secs(20),
        || decision("fakec").starts_with("skip standby: max_spindowns_per_day = 0"),
        || d.log(),
    );
    let st = state(&s.state);
    assert!(
        st.get("other").is_none(),
        "a disk the config does not name is left alone: {st}"
    );
    for disk in ["fakea", "fakeb", "fakec"] {
        assert_eq!(count(&st, disk, "spindowns"), 0);
        assert_eq!(
            count(&st, disk, "errors"),
            0,
            "no drive command was tried: {st}"
        );
    }
    // Metrics: the textfile and the HTTP endpoint on 127.0.0.1.
    wait_for(
        "the textfile",
        Duration::from_secs(10),
        || prom.exists(),
        || d.log(),
    );
    let tf = std::fs::read_to_string(&prom).unwrap();
    assert!(
        tf.contains("lull_task_starts_total{disk=\"fakec\"} 1"),
        "{tf}"
    );
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut r = String::new();
    c.read_to_string(&mut r).unwrap();
    assert!(r.starts_with("HTTP/1.1 200 OK"), "{r}");
    assert!(r.contains("# TYPE lull_spindowns_total counter"), "{r}");
    assert!(r.contains("lull_disk_present{disk=\"fakea\"} 1"), "{r}");
    assert!(d.stop().success());
}
