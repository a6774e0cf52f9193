use std::path::Path;

use super::*;

/// Starts a program named `hd-idle` in `dir` (a `sleep 60`: its
/// command line is not hd-idle's) and waits until it runs as that.
pub(crate) fn fake_hd_idle(dir: &Path) -> std::process::Child {
    let fake = dir.join("hd-idle");
    // A link, not a copy: the process is named after the path run,
    // and a copy just written can fail to run (ETXTBSY) while another
    // test's thread forks with its file still open for writing.
    std::os::unix::fs::symlink("/bin/sleep", &fake).unwrap();
    let p = std::process::Command::new(&fake).arg("60").spawn().unwrap();
    // `spawn` may return before the child has run the program, and
    // an exec renames the process before its new command line can be
    // read (empty until then: read as hd-idle's with no options).
    let comm = format!("/proc/{}/comm", p.id());
    for _ in 0..500 {
        if std::fs::read_to_string(&comm).is_ok_and(|c| c == "hd-idle\n")
            && crate::process::cmdline(p.id()).is_some_and(|c| !c.is_empty())
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    p
}

/// A program named like hd-idle, started now, is found spinning the
/// disk down (its command line is not hd-idle's, so it may spin down
/// any: the warning says so), with its pid; gone, it is not.
#[test]
fn a_running_spin_down_program_is_found_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = fake_hd_idle(dir.path());
    let found = spinners_of(&["fakea"]);
    let ours: Vec<_> = found.iter().filter(|s| s.pid == p.id()).collect();
    assert_eq!(ours.len(), 1, "{found:?}");
    assert_eq!(ours[0].name, "hd-idle");
    assert!(
        ours[0]
            .warning
            .contains(&format!("hd-idle (pid {})", p.id())),
        "{}",
        ours[0].warning
    );
    p.kill().unwrap();
    p.wait().unwrap();
    assert!(spinners_of(&["fakea"]).iter().all(|s| s.pid != p.id()));
}

#[test]
fn an_absent_disk_gets_a_hint_where_one_helps() {
    let present: Vec<String> = ["loop0", "sda", "sdb"].map(String::from).to_vec();
    assert_eq!(
        absent_hint("SDA", &present).as_deref(),
        Some("kernel names are case-sensitive: did you mean `sda`?")
    );
    assert_eq!(
        absent_hint("/dev/Loop0", &present).as_deref(),
        Some("kernel names are case-sensitive: did you mean `loop0`?")
    );
    assert_eq!(
        absent_hint("sdz", &present).as_deref(),
        Some("present now: sda, sdb")
    );
    assert_eq!(
        absent_hint("loop9", &present).as_deref(),
        Some("present now: loop0, sda, sdb")
    );
    let only_loops: Vec<String> = ["loop0", "zram0"].map(String::from).to_vec();
    assert_eq!(absent_hint("sdb", &only_loops), None);
    let many: Vec<String> = (0..13).map(|i| format!("sd{i}")).collect();
    assert!(
        absent_hint("nvme0n1", &many)
            .unwrap()
            .ends_with("sd8, sd9 and 3 more")
    );
    // A glob for hot-plugged disks waits quietly.
    assert_eq!(absent_hint("sd[x-z]", &present), None);
    assert_eq!(absent_hint("sdz", &[]), None);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("ata-NOPE");
    assert_eq!(
        absent_hint(link.to_str().unwrap(), &present),
        Some(format!(
            "`ls -l {}` lists the links present now",
            dir.path().display()
        ))
    );
    let gone = dir.path().join("by-nothing/ata-NOPE");
    assert_eq!(
        absent_hint(gone.to_str().unwrap(), &present),
        Some(format!(
            "{} does not exist now",
            dir.path().join("by-nothing").display()
        ))
    );
}

fn args(s: &str) -> Option<Vec<String>> {
    Some(s.split_whitespace().map(String::from).collect())
}

// The hd-idle warning names only disks lull spins down: not a flush
// entry's, not a solid-state disk or an empty slot under a glob, but
// those with a preset named whatever they are.
#[test]
fn only_disks_lull_spins_down_are_shared_with_hd_idle() {
    let dir = tempfile::tempdir().unwrap();
    let sysfs = dir.path();
    for (name, rotational, size) in [
        ("sda", "1", "7814037168"),
        ("sdb", "0", "1953525168"),
        ("sdc", "1", "0"),
        ("sdd", "1", "7814037168"),
        ("sde", "0", "0"),
    ] {
        let d = sysfs.join("block").join(name);
        std::fs::create_dir_all(d.join("queue")).unwrap();
        std::fs::write(d.join("queue/rotational"), rotational).unwrap();
        std::fs::write(d.join("size"), size).unwrap();
    }
    let text = format!(
        "sysfs = {:?}\n[[disk]]\ndevice = \"sd[abc]\"\n[[disk]]\ndevice = \"sdd\"\ntask = \"flush\"\n[[disk]]\ndevice = \"sde\"\npreset = \"paper-2.5in\"\n",
        sysfs.display().to_string()
    );
    let cfg = Config::parse(Path::new("lull.toml"), &text, &crate::default_registry()).unwrap();
    let found: Vec<Vec<Resolved>> = [&["sda", "sdb", "sdc"][..], &["sdd"], &["sde"]]
        .iter()
        .map(|names| {
            names
                .iter()
                .map(|n| Resolved {
                    key: n.to_string(),
                    kernel: n.to_string(),
                })
                .collect()
        })
        .collect();
    assert_eq!(spun_down_disks(&cfg, &found), ["sda", "sde"]);
}

#[test]
fn hd_idle_is_named_only_for_the_disks_it_shares_with_lull() {
    let none = |_: &str| None;
    // Debian's example: it spins down only sda, and lull only sdb.
    assert_eq!(
        competition("hd-idle", 7, args("-i 0 -a sda -i 300"), &["sdb"], &none),
        None
    );
    let w = competition(
        "hd-idle",
        7,
        args("-i 0 -a sdb -i 300"),
        &["sdb", "sdc"],
        &none,
    )
    .unwrap();
    assert!(
        w.starts_with(
            "hd-idle (pid 7, options `-i 0 -a sdb -i 300`) spins down sdb (after 5m) too: "
        ),
        "{w}"
    );
    // Its default covers every sd disk after 10 minutes.
    let w = competition("hd-idle", 7, args(""), &["sdc"], &none).unwrap();
    assert!(w.contains("spins down sdc (after 10m) too"), "{w}");
    // Options it cannot read, or another program: it may.
    for (name, a) in [
        ("hd-idle", None),
        ("hd-idle", args("-x")),
        ("spindownd", None),
    ] {
        let w = competition(name, 9, a, &["sdb"], &none).unwrap();
        assert!(
            w.starts_with(&format!("{name} (pid 9) is running and may spin down")),
            "{w}"
        );
        // hd-idle's options are advised to hd-idle alone.
        assert_eq!(w.contains("-i 0 -a DISK"), name == "hd-idle", "{w}");
    }
}
