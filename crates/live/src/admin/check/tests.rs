use super::access::refused;
use super::hints::{first_standby, short_timeout, stable_name_hint};
use super::*;

/// A refusal to root is not mended by running as root: the warning
/// says what refuses root instead.
#[test]
fn a_device_refused_to_root_is_not_told_to_run_as_root() {
    let e = std::io::Error::from_raw_os_error(libc::EPERM);
    let user = refused("/dev/sdb", &e, false);
    assert!(user.contains("run it as root"), "{user}");
    let root = refused("/dev/sdb", &e, true);
    assert!(!root.contains("run it as root"), "{root}");
    assert!(
        root.starts_with("cannot open /dev/sdb (Operation not permitted (os error 1)) although the daemon runs as root"),
        "{root}"
    );
    assert!(root.contains("device cgroup"), "{root}");
}

/// The acting timeout is measured on the daemon's own controller, and
/// only a network that spins down in under half of `B` and learns
/// nothing is warned of: hd-idle's `-i 10` converted, not `auto`, a
/// timer of `B` or a timer whose predictor keeps it from acting.
#[test]
fn a_timer_far_shorter_than_break_even_is_warned_of() {
    let registry = crate::default_registry();
    let disk = |network: &str| {
        let text = format!(
            "[[disk]]\ndevice = \"sdb\"\nnetwork = \"{network}\"\ntask = \"standby\"\npreset = \"wd-red-plus\"\n"
        );
        Config::parse(Path::new("lull.toml"), &text, &registry)
            .unwrap()
            .disks
            .remove(0)
    };
    let poll = Nanos::from_secs(1);
    let b = disk("auto").breakeven();
    assert_eq!(b.as_secs_f64().round(), 72.0, "{b}");
    // A timer acts at its timeout: the poll after the last reads is
    // the quiet stretch's start.
    let t = first_standby(&registry, &disk("timer(10s)"), poll).unwrap();
    assert!(
        (Nanos::from_secs(10)..=Nanos::from_secs(11)).contains(&t),
        "{t}"
    );
    let w = short_timeout(&registry, &disk("timer(10s)"), poll).unwrap();
    assert!(w.contains("`timer(10s)` spins the drive down 10s"), "{w}");
    assert!(w.contains("B = 1m12s"), "{w}");
    // At B/2 or longer: not warned of.
    assert!(short_timeout(&registry, &disk("timer(37s)"), poll).is_none());
    assert!(short_timeout(&registry, &disk("timer(B)"), poll).is_none());
    // Under a poll longer than the timeout, the network's timeout
    // still: `timer(2B)` is not warned of, `timer(10s)` is, at 10 s.
    let long = Nanos::from_secs(600);
    assert!(short_timeout(&registry, &disk("timer(2B)"), long).is_none());
    let w = short_timeout(&registry, &disk("timer(10s)"), long).unwrap();
    assert!(w.contains("spins the drive down 10s"), "{w}");
    let t = first_standby(&registry, &disk("timer(2B)"), poll).unwrap();
    assert!(t >= Nanos(2 * b.0) && t <= Nanos(2 * b.0) + poll, "{t}");
    // A predictor that says the period is shorter than B keeps it from
    // spinning down at all.
    assert_eq!(
        first_standby(&registry, &disk("timer(10s) + fixed(20s)"), poll),
        None
    );
    // A learner adapts: never judged by its first timeout.
    assert!(short_timeout(&registry, &disk("auto"), poll).is_none());
    assert!(short_timeout(&registry, &disk("share()"), poll).is_none());
}

/// A kernel name gets the drive's by-id link, a transport's name
/// first; a glob, a link already, or a drive with no link gets none.
#[test]
fn a_kernel_name_is_told_the_drives_stable_name() {
    let links: Vec<(String, String)> = [
        ("wwn-0x50014ee2b5a1c3d4", "sdb"),
        ("ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX", "sdb"),
        ("ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX-part1", "sdb1"),
        ("usb-WD_Elements_25A3_575836314134-0:0", "sdc"),
    ]
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .to_vec();
    for device in ["sdb", "/dev/sdb"] {
        let w = stable_name_hint(device, "sdb", &links).unwrap();
        assert!(
            w.ends_with(
                "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX names this drive"
            ),
            "{w}"
        );
        assert!(
            w.starts_with(&format!("`{device}` is a kernel name")),
            "{w}"
        );
    }
    assert!(
        stable_name_hint("sdc", "sdc", &links)
            .unwrap()
            .contains("usb-WD_Elements")
    );
    assert_eq!(stable_name_hint("sd[b-c]", "sdb", &links), None);
    assert_eq!(
        stable_name_hint(
            "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX",
            "sdb",
            &links
        ),
        None
    );
    assert_eq!(stable_name_hint("loop0", "loop0", &links), None);
}
