//! The daemon's decisions on a scripted scenario stay what they were
//! (issue 26: the decisions moved into a sans-IO controller "with no change
//! of behaviour"). Two fake disks on a diskstats file the test writes: a
//! standby disk (an `hdparm` stand-in that succeeds) and a command disk.
//! The script: I/O, idle, I/O, idle, a reload with the same settings, the
//! standby disk vanishing and coming back, `kill -9` and a restart, idle.
//! Each disk's decisions, as the log words them with numbers and pids
//! blanked, must equal `tests/data/scenario.decisions`, which the daemon
//! before the restructuring wrote (`LULL_BLESS=1` writes it anew: only for
//! a change of behaviour that is meant, said in the commit).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod support;

use support::{Daemon, Setup, line, wait_for, write};

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");
const A: &str = "lullsa";
const B: &str = "lullsb";

fn start(s: &Setup) -> Daemon {
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(&s.config);
    let n = std::fs::read_dir(s.dir.path()).unwrap().count();
    Daemon::spawn(cmd, s.dir.path().join(format!("lulld-{n}.log")), &[])
}

/// The disks' lines: `a`, `b` I/O counts (`None`: the disk is absent).
fn stats(a: Option<u64>, b: u64) -> String {
    a.map_or(String::new(), |a| line(A, 0, a)) + &line(B, 1, b)
}

/// A log line's words with what varies from run to run blanked: numbers
/// become `N`, durations `D` (`2s 300ms` and `2s` alike), and who woke a
/// disk (a guess from whatever else ran on the machine) is cut.
fn normalize(text: &str) -> String {
    let text = match text.find(", woken by") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() || (c == '.' && digits.ends_with('N')) {
            if !digits.ends_with('N') {
                digits.push('N');
            }
        } else {
            digits.push(c);
        }
    }
    let mut words: Vec<String> = Vec::new();
    for w in digits.split(' ') {
        let core = w.trim_end_matches([',', ')', ';']);
        let is_duration = core.starts_with('N')
            && ["ns", "us", "µs", "ms", "s", "m", "h", "d"].contains(&&core[1..]);
        if is_duration {
            let tail = &w[core.len()..];
            if words.last().is_some_and(|l| l == "D") {
                words.pop();
            }
            words.push(format!("D{tail}"));
        } else {
            words.push(w.to_string());
        }
    }
    words.join(" ")
}

/// The lines a `flush`, `command` or `jobs` disk logs at every idle
/// period, at debug level after the first (`routine!` in the controller):
/// decisions whatever their level.
const ROUTINE: [&str; 4] = [
    ": idle, ",
    ": busy, stop ",
    ": command paused (SIGSTOP)",
    ": command resumed (SIGCONT)",
];

/// Each disk's decisions in a log: the text after `disk NAME: `,
/// normalized; hooks and debug lines but the routine ones left out (their
/// order against other disks' lines depends on the scheduler, not on
/// decisions), and the note that the routine goes to debug level.
fn decisions(log: &str, out: &mut BTreeMap<String, Vec<String>>) {
    for l in log.lines() {
        let routine = ROUTINE.iter().any(|r| l.contains(r)) && !l.contains("(it did not run)");
        if (l.contains("DEBUG") && !routine) || l.contains(": hook ") {
            continue;
        }
        let l = l.split(" (each idle period's ").next().unwrap_or(l);
        for disk in [A, B] {
            let Some(at) = l.find(&format!("disk {disk}")) else {
                continue;
            };
            let text = l[at + 5 + disk.len()..].trim_start_matches([':', ' ']);
            out.entry(disk.to_string())
                .or_default()
                .push(normalize(text));
        }
    }
}

#[test]
fn decisions_on_a_scripted_scenario_are_those_before_the_controller() {
    let disks = format!(
        "[[disk]]\ndevice = \"{A}\"\nnetwork = \"timer(1s)\"\ntask = \"standby\"\nbackend = \"hdparm\"\nmax_spindowns_per_day = 1000\n\n\
         [[disk]]\ndevice = \"{B}\"\nnetwork = \"timer(1s)\"\ntask = \"command\"\ncommand = [\"/bin/sleep\", \"1004.75\"]\n"
    );
    let s = Setup::new(&disks, &stats(Some(1), 1));
    s.hdparm_stand_in();
    let mut d = start(&s);
    let (mut a, mut b) = (1u64, 1u64);
    // `secs` of I/O on both disks, ten writes of the file a second.
    let busy = |a: &mut u64, b: &mut u64, secs: u64| {
        for _ in 0..secs * 10 {
            *a += 3;
            *b += 3;
            write(&s.diskstats, &stats(Some(*a), *b));
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let wait = |d: &Daemon, what: &str, f: &dyn Fn(&str) -> bool| {
        wait_for(what, Duration::from_secs(20), || f(&d.log()), || d.log());
    };
    let count = |log: &str, pat: &str| log.matches(pat).count();
    busy(&mut a, &mut b, 2);
    wait(&d, "the first standby", &|l| {
        count(l, "in standby (") >= 1 && count(l, "command started") >= 1
    });
    busy(&mut a, &mut b, 2);
    wait(&d, "the second standby", &|l| {
        count(l, "in standby (") >= 2 && count(l, "command resumed") >= 1
    });
    // A reload with the same settings keeps both disks as they are.
    d.signal("-HUP");
    wait(&d, "the reload", &|l| l.contains("configuration reloaded"));
    // The standby disk vanishes and comes back (busy: its first sample is a
    // baseline, then counters move).
    write(&s.diskstats, &stats(None, b));
    wait(&d, "the disk to vanish", &|l| l.contains("vanished"));
    busy(&mut a, &mut b, 2);
    wait(&d, "the disk to come back and sleep", &|l| {
        l.contains("is back") && count(l, "in standby (") >= 3
    });
    // kill -9 while the command runs; the restart stops it first. Not
    // before the state file holds the standby: the log line comes before
    // the save, and a kill between them left a file without it (the
    // restart then found no standby to take up).
    wait_for(
        "the standby in the state file",
        Duration::from_secs(20),
        || !s.state()[A]["standby_unix"].is_null(),
        || d.log(),
    );
    d.signal("-KILL");
    let _ = d.child.wait();
    let mut log = d.log();
    let mut d = start(&s);
    busy(&mut a, &mut b, 2);
    wait(&d, "a standby after the restart", &|l| {
        count(l, "in standby (") >= 1 && count(l, "command started") >= 1
    });
    assert!(d.stop().success(), "{}", d.log());
    log.push_str(&d.log());

    let mut got = BTreeMap::new();
    decisions(&log, &mut got);
    let text: String = got
        .iter()
        .flat_map(|(disk, ds)| ds.iter().map(move |t| format!("{disk}\t{t}\n")))
        .collect();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scenario.decisions");
    if std::env::var_os("LULL_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &text).unwrap();
    }
    let want = std::fs::read_to_string(&golden).expect("tests/data/scenario.decisions");
    assert_eq!(text, want, "decisions changed; the whole log:\n{log}");
}
