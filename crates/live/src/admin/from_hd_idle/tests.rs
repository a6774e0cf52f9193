//! Tests of the hd-idle's options read and translated.

use super::*;
use crate::config::{Backend, Config, TaskConfig};
use crate::devices::resolve;
use lull_core::time::Nanos;
use proptest::prelude::*;

fn no_links(_: &str) -> Option<String> {
    None
}

fn config_of(opts: &str) -> (Conversion, Config) {
    let c = convert_with(opts, &no_links).unwrap();
    let cfg = Config::parse(
        Path::new("converted.toml"),
        &c.toml,
        &crate::default_registry(),
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
    (c, cfg)
}

/// Which entry (device, timeout) covers each of `names`, as the
/// daemon's resolver sees it; panics if two entries cover one disk.
fn coverage(cfg: &Config, names: &[&str]) -> BTreeMap<String, (String, String)> {
    let mut m = BTreeMap::new();
    for d in &cfg.disks {
        for r in resolve(&d.device, names.iter().copied()) {
            let prev = m.insert(r.kernel.clone(), (d.device.clone(), d.network.clone()));
            assert!(
                prev.is_none(),
                "{} covered twice: {prev:?} and {}",
                r.kernel,
                d.device
            );
        }
    }
    m
}

// The examples of hd-idle's README and man page (github.com/adelolmo/
// hd-idle, README.md "Regarding the parameter -a" and debian/hd-idle.8
// EXAMPLE; the last is debian/hd-idle.default's commented example).
const README_1: &str = "";
const README_2: &str = "-i 0 -a sda -i 300 -a sdb -i 1200";
const README_3: &str = "-i 0 -c ata -a sda -i 300 -a sdb -i 1200 -c scsi";
const DEFAULT_FILE: &str = "HD_IDLE_OPTS=\"-i 180 -l /var/log/hd-idle.log\"";

const NAMES: &[&str] = &["sda", "sdb", "sdc", "sdz", "sdaa", "sdba", "nvme0n1"];

#[test]
fn readme_no_options_spins_every_sd_disk_down_after_ten_minutes() {
    let (_, cfg) = config_of(README_1);
    assert_eq!(cfg.disks.len(), 1);
    assert_eq!(cfg.disks[0].device, "sd*");
    assert_eq!(cfg.disks[0].network, "timer(600s)");
    let cov = coverage(&cfg, NAMES);
    assert_eq!(cov.len(), 6, "{cov:?}");
    assert!(!cov.contains_key("nvme0n1"));
}

#[test]
fn readme_per_disk_idle_times() {
    let (c, cfg) = config_of(README_2);
    let devs: Vec<&str> = cfg.disks.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(devs, ["sda", "sdb"], "{}", c.toml);
    assert_eq!(cfg.disks[0].network, "timer(300s)");
    assert_eq!(cfg.disks[1].network, "timer(1200s)");
    let cov = coverage(&cfg, NAMES);
    assert_eq!(cov.keys().collect::<Vec<_>>(), ["sda", "sdb"]);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn readme_command_types_per_disk() {
    let (c, cfg) = config_of(README_3);
    assert_eq!(cfg.disks.len(), 2);
    // Each keeps its hd-idle timeout to compare with.
    for (d, secs) in cfg.disks.iter().zip([300, 1200]) {
        assert_eq!(
            d.task,
            TaskConfig::Standby {
                backend: Backend::Sgio,
                max_spindowns_per_day: crate::config::DEFAULT_SPINDOWNS_PER_DAY,
                compare_timeout: Some(Nanos::from_secs(secs)),
            }
        );
    }
    // sda inherits the default -c ata; sdb's own -c scsi follows it.
    let sda = c.toml.split("\n[[disk]]\n").nth(1).unwrap();
    let sdb = c.toml.split("\n[[disk]]\n").nth(2).unwrap();
    assert!(
        sda.contains("# -c ata") && !sda.contains("# -c scsi"),
        "{sda}"
    );
    assert!(sdb.contains("# -c scsi"), "{sdb}");
}

/// Without `-c`, hd-idle sends START STOP UNIT to whatever it is given;
/// the conversion keeps lull's transport probe (`backend` left at `auto`),
/// which leaves a device that takes no SG_IO alone instead of failing a
/// spin-down (and spending a wear token) at every idle period. Only a
/// `-c` given writes `backend = "sgio"`, and only on the entries it covers.
#[test]
fn without_c_the_conversion_keeps_the_transport_probe() {
    let (c, cfg) = config_of(README_2);
    for d in &cfg.disks {
        assert!(
            matches!(
                d.task,
                TaskConfig::Standby {
                    backend: Backend::Auto,
                    ..
                }
            ),
            "{:?}",
            d.task
        );
    }
    assert!(c.toml.contains("# backend = \"sgio\""), "{}", c.toml);
    assert!(!c.toml.contains("\nbackend = "), "{}", c.toml);
    assert!(c.toml.contains("Without -c, hd-idle sends"), "{}", c.toml);
    // The origin comments name no -c that was not given.
    assert!(c.toml.contains("# -a sda -i 300\n"), "{}", c.toml);
    assert!(!c.toml.contains("-c scsi"), "{}", c.toml);

    // -c on one disk: sgio there, the probe on the other.
    let (c, cfg) = config_of("-i 0 -a sda -i 300 -a sdb -i 1200 -c ata");
    let backends: Vec<Backend> = cfg
        .disks
        .iter()
        .map(|d| match d.task {
            TaskConfig::Standby { backend, .. } => backend,
            ref t => panic!("{t:?}"),
        })
        .collect();
    assert_eq!(backends, [Backend::Auto, Backend::Sgio], "{}", c.toml);
    assert!(c.toml.contains("Without -c, hd-idle sends"), "{}", c.toml);
    assert!(c.toml.contains("for -c ata,"), "{}", c.toml);
    assert!(!c.toml.contains("for -c scsi,"), "{}", c.toml);

    // -c given everywhere an entry is written: no note on its absence.
    let (c, _) = config_of(README_3);
    assert!(!c.toml.contains("Without -c"), "{}", c.toml);
}

/// A defaults file that extends the variable (`HD_IDLE_OPTS="$HD_IDLE_OPTS
/// -a sdc -i 60"`) is read as written: the variable is named, with the way
/// to hand over what the shell would leave.
#[test]
fn a_shell_variable_among_the_options_says_how_to_expand_it() {
    let e = convert_with("HD_IDLE_OPTS=\"$HD_IDLE_OPTS -a sdc -i 60\"", &no_links).unwrap_err();
    assert_eq!(e.flag(), Some("$HD_IDLE_OPTS"));
    let text = e.to_string();
    assert!(text.contains("is a shell variable"), "{text}");
    assert!(text.contains("echo \"$HD_IDLE_OPTS\""), "{text}");
}

/// Debian's `/etc/default/hd-idle` as shipped (hd-idle 1.05+ds-2): `-h`
/// keeps hd-idle off. Converting it says so, instead of "drop -h".
#[test]
fn debian_s_default_file_keeps_hd_idle_off_and_says_so() {
    let e = convert_with("HD_IDLE_OPTS=\"-h\"", &no_links).unwrap_err();
    assert_eq!(e.flag(), Some("-h"));
    let text = e.to_string();
    assert!(text.contains("Debian's default"), "{text}");
    assert!(text.contains("spins no disk down"), "{text}");
    // `-h` among other options is the option to drop.
    let e = convert_with("-i 300 -h", &no_links).unwrap_err();
    assert!(e.to_string().contains("drop it"), "{e}");
}

#[test]
fn the_default_file_example_with_a_log_file() {
    let (c, cfg) = config_of(DEFAULT_FILE);
    assert_eq!(cfg.disks.len(), 1);
    assert_eq!(cfg.disks[0].network, "timer(180s)");
    assert!(
        c.toml
            .contains("-l /var/log/hd-idle.log: lull writes no log file")
    );
}

#[test]
fn the_readme_examples_pass_check() {
    // `--check` runs the parser (networks built with each disk's B)
    // and the preflight: the state file's directory and which present
    // disks each entry names, refusing a disk named twice.
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("diskstats");
    let mut text = String::new();
    for (i, n) in NAMES.iter().enumerate() {
        text.push_str(&format!("8 {i} {n} 1 0 8 0 1 0 8 0 0 0 0 0 0 0 0 0 0\n"));
    }
    std::fs::write(&ds, text).unwrap();
    let scripts = "-spinupscript /usr/local/bin/up.sh -a sdb -i 300";
    for (i, ex) in [README_1, README_2, README_3, DEFAULT_FILE, scripts]
        .iter()
        .enumerate()
    {
        let c = convert_with(ex, &no_links).unwrap();
        let toml = c.toml.replace(
            "state_file = \"/var/lib/lull/state.json\"",
            &format!(
                "state_file = {}\ndiskstats = {}",
                quote(&dir.path().join("state.json").to_string_lossy()),
                quote(&ds.to_string_lossy())
            ),
        );
        let f = dir.path().join(format!("ex{i}.toml"));
        std::fs::write(&f, &toml).unwrap();
        let out = crate::check(&f, &crate::default_registry())
            .unwrap_or_else(|e| panic!("example {ex:?}: {e}\n{toml}"));
        assert!(out.contains(": ok;"), "{out}");
    }
}

#[test]
fn every_other_disk_leaves_the_named_ones_out() {
    let (c, cfg) = config_of("-i 600 -a sda -i 300 -a sdaa -i 0");
    let cov = coverage(&cfg, NAMES);
    assert_eq!(
        cov["sda"],
        ("sda".into(), "timer(300s)".into()),
        "{}",
        c.toml
    );
    assert!(!cov.contains_key("sdaa"), "-i 0: no entry\n{}", c.toml);
    for n in ["sdb", "sdc", "sdz", "sdba"] {
        assert_eq!(cov[n].1, "timer(600s)", "{n}");
        assert!(cov[n].0.contains(['*', '?', '[']), "{n}: {:?}", cov[n]);
    }
}

#[test]
fn each_flag() {
    // -i: the timeout, whole seconds.
    assert_eq!(config_of("-i 42").1.disks[0].network, "timer(42s)");
    // -a with a link: kept as written; its kernel name is left out of
    // the default's globs.
    let link = "/dev/disk/by-id/usb-WD_My_Book_1140_0000";
    let c = convert_with(&format!("-i 300 -a {link} -i 900"), &|p| {
        (p == link).then(|| "sdb".to_string())
    })
    .unwrap();
    let cfg = Config::parse(Path::new("x"), &c.toml, &crate::default_registry()).unwrap();
    assert_eq!(cfg.disks[0].device, link);
    let globs: Vec<&str> = cfg.disks[1..].iter().map(|d| d.device.as_str()).collect();
    assert!(!globs.is_empty());
    for n in ["sda", "sdc", "sdbb"] {
        assert_eq!(
            globs
                .iter()
                .filter(|g| crate::devices::glob_match(g, n))
                .count(),
            1,
            "{n}: {globs:?}"
        );
    }
    assert!(!globs.iter().any(|g| crate::devices::glob_match(g, "sdb")));
    // An unresolvable link: the default entries are commented out.
    let c = convert_with(&format!("-i 300 -a {link} -i 900"), &no_links).unwrap();
    let cfg = Config::parse(Path::new("x"), &c.toml, &crate::default_registry()).unwrap();
    assert_eq!(cfg.disks.len(), 1, "{}", c.toml);
    assert!(c.warnings.iter().any(|w| w.contains("did not resolve")));
    // A link to a partition: warned about.
    let c = convert_with("-i 0 -a /dev/disk/by-label/DATA -i 540", &|_| {
        Some("sdc1".into())
    })
    .unwrap();
    assert!(
        c.warnings.iter().any(|w| w.contains("partition")),
        "{:?}",
        c.warnings
    );
    // ... and its entry names the whole disk, as hd-idle watches it: a
    // partition is refused by --check and the start on the machine it was
    // converted on.
    let cfg = Config::parse(Path::new("x"), &c.toml, &crate::default_registry()).unwrap();
    assert_eq!(cfg.disks[0].device, "sdc", "{}", c.toml);
    let c = convert_with("-i 0 -a sda1 -i 300", &no_links).unwrap();
    let cfg = Config::parse(Path::new("x"), &c.toml, &crate::default_registry()).unwrap();
    assert_eq!(cfg.disks[0].device, "sda", "{}", c.toml);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("-a sda1 names a partition; hd-idle watches its disk sda")),
        "{:?}",
        c.warnings
    );
    // A timeout of a day or more: no "up to 0 a day".
    let long = convert_with("-i 0 -a sda -i 100000", &no_links)
        .unwrap()
        .toml;
    assert!(!long.contains("up to 0 a day"), "{long}");
    assert!(long.contains("at most one a day"), "{long}");
    // -c.
    let ata = convert_with("-c ata", &no_links).unwrap().toml;
    assert!(ata.contains("backend = \"sgio\"") && ata.contains("for -c ata,"));
    let scsi = convert_with("-c scsi", &no_links).unwrap().toml;
    assert!(scsi.contains("START STOP UNIT with the STANDBY power condition"));
    // -p 0 (lull sends STANDBY instead of the plain stop) and -p 3
    // (STANDBY) convert; another power condition does not.
    assert_eq!(config_of("-c scsi -p 0").1.disks.len(), 1);
    assert_eq!(config_of("-c scsi -p 3").1.disks.len(), 1);
    let (c, cfg) = config_of("-i 0 -a sdb -i 600 -c scsi -p 2");
    assert!(cfg.disks.is_empty(), "{}", c.toml);
    assert!(c.toml.contains("# device = \"sdb\""), "{}", c.toml);
    assert!(c.warnings.iter().any(|w| w.contains("power condition")));
    // With -c ata, hd-idle ignores -p.
    let (c, cfg) = config_of("-i 0 -c ata -p 3 -a sdb -i 600");
    assert_eq!(cfg.disks.len(), 1, "{}", c.toml);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // -s: a comment, no key.
    let (c, cfg) = config_of("-s 1");
    assert!(c.toml.contains("-s 1: lull always follows links"));
    assert_eq!(cfg.disks.len(), 1);
    // -l and -d: comments.
    assert!(config_of("-l /tmp/x.log").0.toml.contains("-l /tmp/x.log:"));
    assert!(config_of("-d").0.toml.contains("LULL_LOG=debug"));
    // -I: power_check, and a warning.
    let (c, cfg) = config_of("-I");
    assert_eq!(cfg.power_check, Nanos::from_secs(60));
    assert!(
        c.toml
            .contains("-I: hd-idle sends the spin-down command again")
    );
    assert_eq!(c.warnings.len(), 1);
}

#[test]
fn bad_options_name_the_option() {
    let e = |s: &str| parse(s).unwrap_err();
    assert_eq!(e("-x").flag(), Some("-x"));
    assert_eq!(e("-i 0 --frobnicate").flag(), Some("--frobnicate"));
    assert!(matches!(e("-i"), HdIdleError::MissingValue { .. }));
    assert!(matches!(e("-i -a sda"), HdIdleError::MissingValue { .. }));
    assert!(matches!(e("-i ten"), HdIdleError::BadValue { .. }));
    assert!(matches!(e("-c nvme"), HdIdleError::BadValue { .. }));
    assert!(matches!(e("-p 16"), HdIdleError::BadValue { .. }));
    assert!(matches!(e("-s 2"), HdIdleError::BadValue { .. }));
    assert!(matches!(e("-a disk/by-id/x"), HdIdleError::BadValue { .. }));
    assert_eq!(e("-t sda").flag(), Some("-t"));
    assert!(matches!(
        e("-spindownscript x.sh"),
        HdIdleError::BadValue { .. }
    ));
    assert!(matches!(
        e("-spinupscript"),
        HdIdleError::MissingValue { .. }
    ));
    assert_eq!(e("-a 'sda"), HdIdleError::Quote('\''));
    assert!(e("-x").to_string().contains("\"-x\""));
}

#[test]
fn options_as_written_in_files() {
    let a = parse("HD_IDLE_OPTS=\"-i 0 -a sda -i 300\"").unwrap();
    let b = parse("/usr/sbin/hd-idle -i 0 -a 'sda' -i 300").unwrap();
    let c = parse("  -i 0\t-a sda   -i 300 ").unwrap();
    assert_eq!(a.disks, c.disks);
    assert_eq!(b.disks, c.disks);
    assert_eq!(c.default.idle_s, 0);
    assert_eq!(c.disks[0].settings.idle_s, 300);
    // -p 0x3 is hex, as hd-idle's strconv.ParseUint(s, 0, 4) reads it.
    assert_eq!(parse("-p 0x3").unwrap().default.power_condition, 3);
}

#[test]
fn complement_globs() {
    assert_eq!(other_disk_globs([]), ["sd*"]);
    assert_eq!(other_disk_globs(["sda", "sdb"]), ["sd[!ab]*", "sd[ab]?*"]);
    assert_eq!(other_disk_globs(["nvme0n1"]), ["sd*"]);
}

/// hd-idle's rule: a named disk's own settings, else the default; and
/// the default entry covers SCSI disks only.
fn hd_idle_timeout(o: &HdIdleOptions, name: &str) -> u64 {
    // Only `sd` disks, named or not.
    if sd_suffix(name).is_none() {
        return 0;
    }
    match o.disks.iter().find(|d| d.name == name) {
        Some(d) => d.settings.idle_s,
        None => o.default.idle_s,
    }
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]
    /// Whatever the options, every disk gets exactly hd-idle's timeout
    /// from exactly one entry, or no entry when hd-idle never spins it
    /// down.
    #[test]
    fn each_disk_gets_hd_idles_timeout(
        default in prop_oneof![Just(None), Just(Some(0u64)), (1u64..5000).prop_map(Some)],
        named in proptest::collection::vec(
            (prop::sample::select(vec!["sda", "sdb", "sdc", "sdaa", "sdab", "sdba", "sdz", "nvme0n1"]),
             prop_oneof![Just(0u64), 1u64..5000]),
            0..5),
    ) {
        let mut opts = String::new();
        if let Some(d) = default {
            opts.push_str(&format!("-i {d} "));
        }
        for (n, i) in &named {
            opts.push_str(&format!("-a {n} -i {i} "));
        }
        let o = parse(&opts).unwrap();
        let (c, cfg) = config_of(&opts);
        let universe = ["sda", "sdb", "sdc", "sdd", "sdz", "sdaa", "sdab", "sdac", "sdba", "sdbb", "sdzz", "sdaaa", "nvme0n1", "nvme1n1"];
        let cov = coverage(&cfg, &universe);
        for n in universe {
            let want = hd_idle_timeout(&o, n);
            let got = cov.get(n).map(|(_, net)| net.clone());
            if want == 0 {
                prop_assert_eq!(got, None, "{} {}", n, c.toml);
            } else {
                prop_assert_eq!(got, Some(format!("timer({want}s)")), "{} {}", n, c.toml);
            }
        }
    }
}

#[test]
fn which_disks_a_running_hd_idle_spins_down_and_when() {
    let link = |p: &str| (p == "/dev/disk/by-id/usb-X").then(|| "sdc".to_string());
    // Debian's example: nothing by default, sda after 5 minutes.
    let o = parse("-i 0 -a sda -i 300").unwrap();
    assert_eq!(o.idle_for("sda", &link), 300);
    assert_eq!(o.idle_for("sdb", &link), 0);
    // The default: every whole SCSI disk after 10 minutes, nothing else.
    let o = parse("").unwrap();
    assert_eq!(o.idle_for("sdb", &link), 600);
    assert_eq!(o.idle_for("sdab", &link), 600);
    assert_eq!(o.idle_for("nvme0n1", &link), 0);
    assert_eq!(o.idle_for("loop0", &link), 0);
    // Named by path or by a link; `-i 0` for a named disk keeps it up.
    let o = parse("-i 120 -a /dev/sdb -i 0 -a /dev/disk/by-id/usb-X -i 900").unwrap();
    assert_eq!(o.idle_for("sdb", &link), 0);
    assert_eq!(o.idle_for("sdc", &link), 900);
    assert_eq!(o.idle_for("sdd", &link), 120);
    // A running hd-idle's arguments, as /proc/PID/cmdline splits them.
    let words = ["-i", "0", "-a", "sdc", "-i", "60"]
        .map(String::from)
        .to_vec();
    assert_eq!(parse_words(words).unwrap().idle_for("sdc", &link), 60);
    // `-a sda` alone under `-i 0`: never for the Go port, 600 s for the C
    // original (Debian's package); counted as the C one's unless an option
    // only the Go port has shows which runs.
    assert_eq!(parse("-i 0 -a sda").unwrap().idle_for("sda", &link), 600);
    assert_eq!(
        parse("-i 0 -a sda -c ata").unwrap().idle_for("sda", &link),
        0
    );
}

#[test]
fn hd_idle_s_scripts_become_hooks_that_run_them_alike() {
    let (c, cfg) = config_of(
        "-spinupscript /usr/local/bin/up.sh -spindownscript '/opt/my scripts/down.sh' -a sdb -i 300",
    );
    let argv = |s: &str| {
        vec![
            "/bin/sh".to_string(),
            "-c".into(),
            "exec /bin/bash \"$0\" \"$LULL_DISK\"".into(),
            s.into(),
        ]
    };
    let d = &cfg.disks[0];
    use crate::hooks::HookEvent;
    assert_eq!(
        d.hooks.get(HookEvent::Spinup),
        Some(&argv("/usr/local/bin/up.sh")),
        "{}",
        c.toml
    );
    assert_eq!(
        d.hooks.get(HookEvent::Spindown),
        Some(&argv("/opt/my scripts/down.sh")),
        "{}",
        c.toml
    );
    assert!(
        c.toml
            .contains("# -spinupscript /usr/local/bin/up.sh: hd-idle runs `/bin/bash\n"),
        "{}",
        c.toml
    );
    // What the hook runs: the script with the disk's name, as hd-idle does.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("up.sh");
    let out = dir.path().join("out");
    std::fs::write(&script, format!("echo \"$1\" > {}\n", out.display())).unwrap();
    let a = argv(script.to_str().unwrap());
    let status = std::process::Command::new(&a[0])
        .args(&a[1..])
        .env("LULL_DISK", "sdb")
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "sdb\n");
}

#[test]
fn an_a_without_its_own_i_is_warned_about_where_the_two_hd_idles_differ() {
    let own = |w: &Conversion| {
        w.warnings
            .iter()
            .filter(|w| w.contains("has no -i of its own"))
            .cloned()
            .collect::<Vec<_>>()
    };
    // The Go port gives sda the default's 300 s (written); the C original,
    // Debian's package, 600 s (warned, in the file too).
    let (c, cfg) = config_of("-i 300 -a sda");
    let w = own(&c);
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(w[0].contains("-a sda") && w[0].contains("300 s") && w[0].contains("600 s"));
    assert!(w[0].contains("timer(600s)"), "{}", w[0]);
    assert!(c.toml.contains("has no -i of its own"), "{}", c.toml);
    let cov = coverage(&cfg, &["sda"]);
    assert_eq!(cov["sda"].1, "timer(300s)");
    // `-i 0 -a sda`: never for the Go port (no entry), 600 s for the C one.
    let (c, cfg) = config_of("-i 0 -a sda");
    let w = own(&c);
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(w[0].contains("add an entry"), "{}", w[0]);
    assert!(coverage(&cfg, &["sda"]).is_empty());
    // Where both agree, or an option only the Go port has says which
    // hd-idle these options are for, nothing is said.
    for opts in [
        "-a sda",
        "-i 300 -a sda -i 300",
        "-i 300 -a sda -c ata",
        "-s 1 -i 0 -a sda",
        "-i 0 -a sda -i 60 -a sdb -i 600",
    ] {
        let (c, _) = config_of(opts);
        assert!(own(&c).is_empty(), "{opts}: {:?}", c.warnings);
    }
}

/// The converted file sets no `poll`: lull derives it as hd-idle polls, a
/// tenth of the shortest timeout (within 1 s and 1 min), so a converted
/// 10-minute disk is read once a minute, not every second.
#[test]
fn the_converted_file_polls_as_hd_idle_does() {
    for (opts, poll_s) in [
        ("", 60),
        ("-i 0 -a sda -i 6", 1),
        ("-i 0 -a sda -i 300 -a sdb -i 1200", 30),
        ("-i 0 -a sda -i 3600", 60),
        ("-I -i 0 -a sda -i 600", 60),
    ] {
        let (c, cfg) = config_of(opts);
        assert!(cfg.poll_derived, "{opts}: {}", c.toml);
        assert_eq!(cfg.poll, Nanos::from_secs(poll_s), "{opts}");
    }
}

/// hd-idle reads only the diskstats lines of `sd` disks: an `-a` naming
/// another disk never spun anything down, so its entry is written
/// commented out, with a warning, and a running hd-idle with it is not
/// counted as spinning that disk down.
#[test]
fn an_a_naming_a_disk_hd_idle_never_watches_is_left_commented_out() {
    let link = "/dev/disk/by-id/nvme-Samsung_X";
    let opts = format!("-i 0 -a nvme0n1 -i 300 -a {link} -i 600 -a sdb -i 300");
    let c = convert_with(&opts, &|p| (p == link).then(|| "nvme1n1".to_string())).unwrap();
    let cfg = Config::parse(Path::new("x"), &c.toml, &crate::default_registry()).unwrap();
    let devices: Vec<&str> = cfg.disks.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(devices, ["sdb"], "{}", c.toml);
    for name in ["nvme0n1", "nvme1n1"] {
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains(name) && w.contains("not an sd disk")),
            "{name}: {:?}",
            c.warnings
        );
    }
    assert!(c.toml.contains("# device = \"nvme0n1\""), "{}", c.toml);
    let o = parse(&opts).unwrap();
    let none = |_: &str| None;
    assert_eq!(o.idle_for("nvme0n1", &none), 0);
    assert_eq!(o.idle_for("sdb", &none), 300);
}

/// `--from-hd-idle /etc/default/hd-idle`: the options of the file's last
/// `HD_IDLE_OPTS=` line that is not a comment, as the shell sourcing it
/// leaves them.
#[test]
fn the_defaults_file_itself_is_read() {
    // Debian's file as shipped (hd-idle 1.05+ds-2), shortened.
    let debian = "# defaults file for hd-idle\n\nHD_IDLE_OPTS=\"-h\"\n\n# hd-idle command line options\n#  -a <name>  Set device name\n#HD_IDLE_OPTS=\"-i 180 -l /var/log/hd-idle.log\"\n";
    assert_eq!(
        options_in_defaults_file(debian).as_deref(),
        Some("HD_IDLE_OPTS=\"-h\"")
    );
    let edited =
        format!("{debian}START_HD_IDLE=true\n  export HD_IDLE_OPTS=\"-i 0 -a sdb -i 300\"\n");
    assert_eq!(
        options_in_defaults_file(&edited).as_deref(),
        Some("HD_IDLE_OPTS=\"-i 0 -a sdb -i 300\"")
    );
    assert_eq!(
        options_in_defaults_file("# nothing\nSTART_HD_IDLE=false\n"),
        None
    );
    // Through a file on disk.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hd-idle");
    std::fs::write(&file, &edited).unwrap();
    let c = convert_arg(file.to_str().unwrap()).unwrap();
    assert!(c.toml.contains("device = \"sdb\""), "{}", c.toml);
    std::fs::write(&file, debian).unwrap();
    let e = convert_arg(file.to_str().unwrap()).unwrap_err();
    assert!(e.to_string().contains("Debian's default"), "{e}");
    std::fs::write(&file, "START_HD_IDLE=false\n").unwrap();
    let e = convert_arg(file.to_str().unwrap()).unwrap_err();
    assert!(e.to_string().contains("no HD_IDLE_OPTS= line"), "{e}");
    // Options are options, even when a file of that name exists.
    assert!(convert_arg("-i 0 -a sdb -i 300").is_ok());
}
