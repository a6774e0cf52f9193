//! The configuration's tests: every error names its line and key.

use super::checks::check_command;
use super::*;
use lull_tasks::PowerModel;
use lull_tasks::drive::{FormFactor, Rotation};

fn registry() -> Registry {
    crate::default_registry()
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(Path::new("lull.toml"), text, &registry())
}

#[test]
fn a_full_config_parses() {
    let c = parse(
        r#"
state_file = "/tmp/s.json"
poll = "100ms"
[metrics]
textfile = "/tmp/lull.prom"
listen = "9733"
[[disk]]
device = "sda"
network = "timer(2s) + fixed(10s)"
task = "standby"
backend = "sgio"
max_spindowns_per_day = 10
compare_timeout = "20m"
preset = "paper-2.5in"
[[disk]]
device = "/dev/disk/by-id/ata-*"
task = "command"
command = ["/bin/sleep", "1000"]
policy = "when-busy"
"#,
    )
    .unwrap();
    assert_eq!(c.poll, Nanos::from_millis(100));
    assert_eq!(c.metrics.listen.unwrap().to_string(), "127.0.0.1:9733");
    assert_eq!(c.disks.len(), 2);
    assert_eq!(c.disks[0].line, 8);
    assert_eq!(
        c.disks[0].task,
        TaskConfig::Standby {
            backend: Backend::Sgio,
            max_spindowns_per_day: 10,
            compare_timeout: Some(Nanos::from_secs(1200)),
        }
    );
    assert_eq!(c.disks[1].network, DEFAULT_NETWORK);
    assert_eq!(c.disks[1].policy, StopPolicy::WhenBusy);
}

fn err(text: &str) -> ConfigError {
    parse(text).unwrap_err()
}

/// Issue 25: without `poll`, a tenth of the shortest time scale of the
/// disks' networks, within 1 s and 60 s; the key wins.
#[test]
fn the_default_poll_follows_the_networks() {
    let disk = |net: &str| {
        format!(
            "[[disk]]\ndevice = \"sd{}\"\nnetwork = \"{net}\"\n",
            net.len()
        )
    };
    let poll = |text: &str| {
        let c = parse(text).unwrap();
        (c.poll, c.poll_derived)
    };
    let s = Nanos::from_secs;
    assert_eq!(poll(&disk("timer(10m)")), (s(60), true));
    assert_eq!(poll(&disk("timer(2h)")), (s(60), true), "at most 60 s");
    assert_eq!(poll(&disk("timer(30s)")), (s(3), true));
    assert_eq!(poll(&disk("timer(5s)")), (s(1), true), "at least 1 s");
    // auto's decision delay and share's shortest expert are B/32.
    assert_eq!(poll(&disk("auto")), (s(1), true));
    assert_eq!(poll(&disk("share()")), (s(1), true));
    // The shortest of several disks.
    let two = disk("timer(10m)") + &disk("timer(100s)");
    assert_eq!(poll(&two), (s(10), true));
    // No disk: the least.
    assert_eq!(poll(""), (s(1), true));
    let explicit = format!("poll = \"5s\"\n{}", disk("timer(10m)"));
    assert_eq!(poll(&explicit), (s(5), false));
    let c = parse(&disk("timer(10m)")).unwrap();
    assert!(
        c.poll_text().starts_with("1m (derived"),
        "{}",
        c.poll_text()
    );
}

/// A `poll` set longer than a disk's network's time scale is said (the
/// network sees no shorter idle period); one within it, a derived one
/// and one for a disk left alone are not.
#[test]
fn a_poll_coarser_than_the_network_is_warned_of() {
    let warn = |text: &str| {
        let c = parse(text).unwrap();
        c.poll_warning(&c.disks[0])
    };
    let w = warn("poll = \"30s\"\n[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(5s)\"\n")
        .expect("30 s against timer(5s)");
    assert!(w.contains("poll 30s") && w.contains("timer(5s)"), "{w}");
    assert!(w.contains("would be 1s"), "{w}");
    // The default said as a duration, not in nanoseconds (a 10-minute
    // poll beside `timer(2B)` read "would be 14482758620ns").
    let w = warn("poll = \"10m\"\n[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(2B)\"\npreset = \"wd-red-plus\"\n")
        .expect("10 m against timer(2B)");
    assert!(w.ends_with("the default would be 14.5s"), "{w}");
    assert_eq!(
        warn("poll = \"5s\"\n[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(5s)\"\n"),
        None
    );
    // The least derived poll is never warned of, though auto's time
    // scale (B/32 of the paper drive, 94 ms) is below it.
    assert_eq!(
        warn("poll = \"1s\"\n[[disk]]\ndevice = \"sda\"\npreset = \"paper-2.5in\"\n"),
        None
    );
    assert!(
        warn("poll = \"2s\"\n[[disk]]\ndevice = \"sda\"\npreset = \"paper-2.5in\"\n").is_some()
    );
    assert_eq!(
        warn("[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(5s)\"\n"),
        None,
        "derived"
    );
    let mut c =
        parse("poll = \"30s\"\n[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(5s)\"\n").unwrap();
    c.disks[0].left_alone = Some("does not rotate".into());
    assert_eq!(c.poll_warning(&c.disks[0]), None, "left alone");
}

const JOBS: &str = r#"
[[disk]]
device = "sda"
task = "standby"
[[disk]]
device = "sdb"
task = "jobs"
assume_idle = "40m"
[[disk.job]]
name = "scrub"
command = ["/bin/sleep", "1000"]
reserve = "2h/day:step=60s,1h/day:step=60s"
[[disk.job]]
name = "trim"
command = ["/bin/sleep", "1001"]
reserve = "5m/hour:extra"
"#;

#[test]
fn a_jobs_disk_parses() {
    let c = parse(JOBS).unwrap();
    let TaskConfig::Jobs {
        jobs,
        best_effort,
        assume_idle,
    } = &c.disks[1].task
    else {
        panic!("{:?}", c.disks[1].task)
    };
    assert_eq!(*best_effort, DEFAULT_BEST_EFFORT);
    assert_eq!(*assume_idle, Nanos::from_secs(2400));
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].name, "scrub");
    assert_eq!(jobs[0].spec.ranked.len(), 2);
    assert_eq!(jobs[0].spec.ranked[1].amount, Nanos::from_secs(3600));
    assert_eq!(jobs[0].spec.ranked[1].step, Nanos::from_secs(60));
    assert_eq!(jobs[1].argv, ["/bin/sleep", "1001"]);
    assert!(jobs[1].spec.extra);
    assert_eq!(jobs[1].spec.ranked[0].period_hours, 1);
    assert_eq!(c.disks[1].task.name(), "jobs");
}

#[test]
fn jobs_errors_name_the_job_table_and_key() {
    let bad = |from: &str, to: &str| err(&JOBS.replacen(from, to, 1));
    let e = bad("reserve = \"5m/hour:extra\"", "reserve = \"5m/week\"");
    assert_eq!(e.key.as_deref(), Some("disk[1].job[1].reserve"), "{e}");
    assert_eq!(e.line, Some(16), "{e}");
    let e = bad("reserve = \"5m/hour:extra\"", "reserve = \"2h/hour\"");
    assert_eq!(e.key.as_deref(), Some("disk[1].job[1].reserve"), "{e}");
    assert!(e.message.contains("at most the period"), "{e}");
    let e = bad("reserve = \"5m/hour:extra\"", "reserv = \"5m/hour\"");
    assert_eq!(e.key.as_deref(), Some("disk[1].job[1].reserv"), "{e}");
    assert!(e.message.contains("reserv"), "{e}");
    let e = bad("name = \"trim\"", "name = \"scrub\"");
    assert_eq!(e.key.as_deref(), Some("disk[1].job[1].name"), "{e}");
    assert!(e.message.contains("job[0]"), "{e}");
    let e = bad(
        "command = [\"/bin/sleep\", \"1000\"]",
        "command = [\"sleep\"]",
    );
    assert_eq!(e.key.as_deref(), Some("disk[1].job[0].command"), "{e}");
    let e = bad("assume_idle = \"40m\"", "assume_idle = \"2h\"");
    assert_eq!(e.key.as_deref(), Some("disk[1].assume_idle"), "{e}");
    let e = bad("assume_idle = \"40m\"", "best_effort = 1.5");
    assert_eq!(e.key.as_deref(), Some("disk[1].best_effort"), "{e}");
    let e = bad("task = \"jobs\"", "task = \"command\"");
    assert_eq!(e.key.as_deref(), Some("disk[1].job"), "{e}");
    assert!(e.message.contains("only applies to task = \"jobs\""), "{e}");
    let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"jobs\"\n");
    assert_eq!(e.key.as_deref(), Some("disk[0].job"), "{e}");
}

/// A trial (nas-26): `task = "standbye"` beside `backend` was reported as
/// a `backend` error ("only applies to task = standby"); the unknown task
/// is the error, on its line, with the hint the other keys get, whatever
/// keys of other tasks the table holds.
#[test]
fn a_typo_in_task_is_the_error_not_the_keys_that_follow_it() {
    for extra in [
        "",
        "backend = \"hdparm\"\n",
        "max_spindowns_per_day = 24\ncompare_timeout = \"20s\"\n",
        "command = [\"/bin/true\"]\n",
    ] {
        let e = err(&format!(
            "[[disk]]\ndevice = \"loop0\"\ntask = \"standbye\"\n{extra}"
        ));
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(3), Some("disk[0].task")),
            "{extra}: {e}"
        );
        assert!(
            e.message.starts_with(
                "unknown task \"standbye\" (live tasks: standby, flush, command, jobs)"
            ) && e.message.ends_with("; did you mean `standby`?"),
            "{extra}: {e}"
        );
    }
    // The lab's names for the simulated tasks point to the live ones.
    for (lab, live) in [("spindown", "standby"), ("writeback", "flush")] {
        let e = err(&format!("[[disk]]\ndevice = \"sda\"\ntask = \"{lab}\"\n"));
        assert_eq!(e.key.as_deref(), Some("disk[0].task"), "{e}");
        assert!(
            e.message.ends_with(&format!(
                "`{lab}` is the lab's simulated task (`lull replay --task {lab}`): on a live disk it is `task = \"{live}\"`"
            )),
            "{e}"
        );
    }
    // Nothing close: the list alone.
    let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"zzz\"\nbackend = \"sgio\"\n");
    assert_eq!(e.key.as_deref(), Some("disk[0].task"), "{e}");
    assert!(!e.message.contains("did you mean"), "{e}");
}

#[test]
fn errors_name_line_and_key() {
    let e =
        err("poll = \"1s\"\n[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(1s) + nonsense(3)\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(4), Some("disk[0].network")),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("lull.toml:4: key `disk[0].network`"),
        "{e}"
    );

    let e = err("poll = 5\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(1), Some("poll")), "{e}");

    let e =
        err("poll = \"1s\"\n\n[[disk]]\ndevice = \"sda\"\ntask = \"standby\"\nbakend = \"x\"\n");
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.message.contains("bakend"), "{e}");

    let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"nap\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(3), Some("disk[0].task")),
        "{e}"
    );

    let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"command\"\n");
    assert_eq!(e.key.as_deref(), Some("disk[0].command"), "{e}");

    let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"command\"\ncommand = [\"sleep\", \"1\"]\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(4), Some("disk[0].command")),
        "{e}"
    );
    assert!(e.message.contains("absolute"), "{e}");

    let e = err("[[disk]]\ndevice = \"sda\"\ntask = \"flush\"\nbackend = \"sgio\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(4), Some("disk[0].backend")),
        "{e}"
    );

    let e = err("[[disk]]\ndevice = \"sda\"\n[[disk]]\ndevice = \"sda\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(4), Some("disk[1].device")),
        "{e}"
    );

    let e = err("poll = \"1ms\"\n");
    assert_eq!(e.key.as_deref(), Some("poll"));

    let e = err("poll = \"1s\"\nstate_interval = \"100ms\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(2), Some("state_interval")),
        "{e}"
    );
    assert!(e.message.contains("between 1s and 1h"), "{e}");
    assert_eq!(parse("").unwrap().state_interval, DEFAULT_STATE_INTERVAL);
    // `power_check` is read at polls: below the poll it would not be
    // what it says; past a day, `0s` without saying so.
    for (bad, what) in [
        ("1ms", "between the poll (1s) and 1d"),
        ("999ms", "between the poll (1s) and 1d"),
        ("25h", "between the poll and 1d"),
    ] {
        let e = err(&format!("poll = \"1s\"\npower_check = \"{bad}\"\n"));
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(2), Some("power_check")),
            "{bad}: {e}"
        );
        assert!(e.message.contains(what), "{what} in {e}");
    }
    for (good, ms) in [("0s", 0), ("1s", 1000), ("1d", 86_400_000)] {
        let c = parse(&format!("poll = \"1s\"\npower_check = \"{good}\"\n")).unwrap();
        assert_eq!(c.power_check, Nanos::from_millis(ms), "{good}");
    }
    let c = parse("poll = \"100ms\"\npower_check = \"200ms\"\n").unwrap();
    assert_eq!(c.power_check, Nanos::from_millis(200));
    assert_eq!(
        parse("state_interval = \"5m\"\n").unwrap().state_interval,
        Nanos::from_secs(300)
    );

    let e = err("[metrics]\nlisten = \"localhost\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(2), Some("metrics.listen")),
        "{e}"
    );

    let e = err("[[disk]]\nnetwork = \"timer(1s)\"\n");
    assert!(e.message.contains("device"), "{e}");
    assert_eq!(e.line, Some(1), "{e}");

    let e = err("[[disk]]\ndevice = \"sda\"\npreset = \"floppy\"\n");
    assert_eq!(e.key.as_deref(), Some("disk[0].preset"), "{e}");
}

#[test]
fn the_shipped_config_parses_with_the_drives_break_even() {
    let c = parse(include_str!("../../../../contrib/lull.toml")).unwrap();
    assert_eq!(c.disks.len(), 1);
    // The poll is derived from the network (auto: B/32, a tenth of it
    // below 1 s: every second).
    assert!(c.poll_derived);
    assert_eq!(c.poll, Nanos::from_secs(1));
    let d = &c.disks[0];
    let red = PowerModel::preset("wd-red-plus").unwrap();
    assert_eq!(d.breakeven(), red.break_even());
    assert!(d.breakeven() > Nanos::from_secs(60), "{}", d.breakeven());
    assert_eq!(
        d.task,
        TaskConfig::Standby {
            backend: Backend::Auto,
            max_spindowns_per_day: 24,
            compare_timeout: None,
        }
    );
}

#[test]
fn the_default_network_scales_with_the_drive() {
    let c = parse(
        "[[disk]]\ndevice = \"sda\"\npreset = \"seagate-ultrathin\"\n[[disk]]\ndevice = \"sdb\"\n[[disk]]\ndevice = \"sdc\"\ntask = \"flush\"\n",
    )
    .unwrap();
    assert!(c.disks.iter().all(|d| d.network == DEFAULT_NETWORK));
    let b: Vec<Nanos> = c.disks.iter().map(|d| d.breakeven()).collect();
    let red = PowerModel::preset("wd-red-plus").unwrap();
    assert_eq!(
        b[1],
        red.break_even(),
        "standby without a preset: the default drive until the daemon identifies it"
    );
    assert!(b[1] > b[0] && b[0] > b[2], "{b:?}");
    // `2B` is accepted because each disk knows its B.
    parse("[[disk]]\ndevice = \"sda\"\nnetwork = \"timer(2B) + fixed(8B)\"\n").unwrap();
}

#[test]
fn a_disk_without_a_preset_never_gets_the_papers_laptop_drive() {
    let c = parse("[[disk]]\ndevice = \"sdb\"\n").unwrap();
    let d = &c.disks[0];
    assert_eq!(d.profile.source(), PresetSource::Default);
    assert_ne!(d.profile.preset(), "paper-2.5in");
    assert!(
        d.breakeven() > Nanos::from_secs(30),
        "B = {}",
        d.breakeven()
    );
    // Identified as a 2.5-inch drive: the class preset, its own B.
    let facts = DriveFacts {
        rotation: Some(Rotation::Rpm(5400)),
        form_factor: Some(FormFactor::In2_5),
        ..DriveFacts::default()
    };
    let r = d
        .for_drive(
            Drive::resolve(None, Some(&facts)).unwrap(),
            Some(&facts),
            &registry(),
        )
        .unwrap();
    assert_eq!(
        (r.profile.preset(), r.profile.source()),
        ("seagate-ultrathin", PresetSource::Class)
    );
    let ultrathin = PowerModel::preset("seagate-ultrathin").unwrap();
    assert_eq!(r.breakeven(), ultrathin.break_even());
    assert!(r.left_alone.is_none());
    assert!(
        r.same_settings(d),
        "a reload still knows it for the same disk"
    );
    // Spacing in the network is not a change; another spec is.
    let spaced = parse("[[disk]]\ndevice = \"sdb\"\nnetwork = \" auto \"\n").unwrap();
    assert!(spaced.disks[0].same_settings(d));
    let timer = parse("[[disk]]\ndevice = \"sdb\"\nnetwork = \"timer(B)\"\n").unwrap();
    assert!(!timer.disks[0].same_settings(d));
}

#[test]
fn a_disk_that_does_not_rotate_is_left_alone_unless_a_preset_is_named() {
    let ssd = DriveFacts {
        model: Some("Samsung SSD 870 EVO 1TB".into()),
        rotation: Some(Rotation::NonRotating),
        ..DriveFacts::default()
    };
    let c = parse(
        "[[disk]]\ndevice = \"sd*\"\n[[disk]]\ndevice = \"loop0\"\npreset = \"paper-2.5in\"\n[[disk]]\ndevice = \"nvme0n1\"\ntask = \"flush\"\n",
    )
    .unwrap();
    let resolved: Vec<DiskConfig> = c
        .disks
        .iter()
        .map(|d| d.for_identified(&ssd, Some(1_000), &registry()).unwrap())
        .collect();
    for (d, r) in c.disks.iter().zip(&resolved) {
        // What the hd-idle warning asks, without resolving the rest; an
        // empty SSD is left alone for not rotating.
        assert_eq!(d.leaves_alone(Some(&ssd), Some(1_000)), r.left_alone);
        assert_eq!(d.leaves_alone(Some(&ssd), Some(0)), r.left_alone);
    }
    let why = resolved[0]
        .left_alone
        .as_deref()
        .expect("a glob's SSD is left alone");
    assert!(
        why.contains("does not rotate") && why.contains("preset"),
        "{why}"
    );
    assert_eq!(resolved[1].left_alone, None, "an explicit preset is obeyed");
    assert_eq!(resolved[1].profile.source(), PresetSource::Config);
    assert_eq!(resolved[2].left_alone, None, "flushing an SSD is fine");
}

#[test]
fn a_disk_without_a_medium_is_left_alone_unless_a_preset_is_named() {
    // An empty card-reader slot under `sd*`: rotational by the kernel's
    // default, and size 0.
    let reader = DriveFacts {
        model: Some("Generic- SD/MMC".into()),
        rotational: Some(true),
        ..DriveFacts::default()
    };
    let c = parse(
        "[[disk]]\ndevice = \"sd*\"\n[[disk]]\ndevice = \"sdx\"\npreset = \"paper-2.5in\"\n[[disk]]\ndevice = \"sdy\"\ntask = \"flush\"\n",
    )
    .unwrap();
    let resolved = |sectors| -> Vec<DiskConfig> {
        c.disks
            .iter()
            .map(|d| {
                let r = d.for_identified(&reader, sectors, &registry()).unwrap();
                assert_eq!(d.leaves_alone(Some(&reader), sectors), r.left_alone);
                r
            })
            .collect()
    };
    let empty = resolved(Some(0));
    let why = empty[0]
        .left_alone
        .as_deref()
        .expect("an empty slot is left alone");
    assert!(why.contains("no medium") && why.contains("preset"), "{why}");
    assert_eq!(empty[1].left_alone, None, "an explicit preset is obeyed");
    assert_eq!(empty[2].left_alone, None, "only a standby disk");
    // With a medium, or its size unknown: spun down as any disk.
    for sectors in [Some(7_814_037_168), None] {
        assert_eq!(resolved(sectors)[0].left_alone, None, "{sectors:?}");
    }
}

#[test]
fn jobs_use_the_drives_io_breakeven_as_lull_plan_does() {
    let c = parse(
        "[[disk]]\ndevice = \"sdb\"\npreset = \"wd-red-plus\"\ntask = \"jobs\"\n[[disk.job]]\nname = \"scrub\"\ncommand = [\"/bin/true\"]\nreserve = \"1h/day:step=2B\"\n",
    )
    .unwrap();
    let d = &c.disks[0];
    let b = lull_tasks::ServiceModel::preset("wd-red-plus")
        .unwrap()
        .break_even();
    assert_eq!(d.breakeven(), b);
    let TaskConfig::Jobs { jobs, .. } = &d.task else {
        panic!("a jobs task")
    };
    assert_eq!(
        jobs[0].spec.ranked[0].step,
        lull_core::time::parse_duration_in("2B", Some(b)).unwrap()
    );
    // The same spec as `lull plan --device wd-red-plus` parses it.
    let plan_b = DriveProfile::from_spec("wd-red-plus", PresetSource::Config)
        .unwrap()
        .io()
        .unwrap();
    assert_eq!(
        jobs[0].spec,
        lull_reserve::plan::parse_job("scrub:1h/day:step=2B", Some(plan_b)).unwrap()
    );
    // Identified as another drive, the step follows its B.
    let es2 = Drive::from_spec("constellation-es2", PresetSource::Identified).unwrap();
    let mut unnamed = d.clone();
    unnamed.preset = None;
    let r = unnamed.for_drive(es2.clone(), None, &registry()).unwrap();
    let TaskConfig::Jobs { jobs, .. } = &r.task else {
        panic!("a jobs task")
    };
    let es2_b = DriveProfile::new(es2).io().unwrap();
    assert_ne!(es2_b, b);
    assert_eq!(
        jobs[0].spec.ranked[0].step,
        lull_core::time::parse_duration_in("2B", Some(es2_b)).unwrap()
    );
}

#[test]
fn an_unknown_preset_names_the_key_and_the_known_ones() {
    let e = parse("[[disk]]\ndevice = \"sdb\"\npreset = \"wd-red\"\n").unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("disk[0].preset") && m.contains("wd-red-plus"),
        "{m}"
    );
    let e = parse("[[disk]]\ndevice = \"sdb\"\npreset = \"hp97560\"\n").unwrap_err();
    assert!(e.to_string().contains("no power model"), "{e}");
}

#[test]
fn auto_follows_the_disks_task() {
    let c = parse(
        "[[disk]]\ndevice = \"sda\"\npreset = \"wd-red-plus\"\n[[disk]]\ndevice = \"sdc\"\ntask = \"flush\"\n",
    )
    .unwrap();
    let expand = |d: &DiskConfig| {
        disk_registry(&registry(), &d.task, d.breakeven())
            .expand_network(&d.network)
            .unwrap()
            .unwrap()
    };
    assert_eq!(expand(&c.disks[0]), lull_detectors::AUTO_SPEC);
    assert_eq!(expand(&c.disks[1]), lull_detectors::AUTO_BACKGROUND_SPEC);
}

#[test]
fn unknown_keys_name_their_table() {
    let e =
        err("poll = \"1s\"\n[[disk]]\ndevice = \"a\"\n[[disk]]\ndevice = \"b\"\nnetwrok = \"x\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(6), Some("disk[1].netwrok")),
        "{e}"
    );
    assert!(e.message.ends_with("; did you mean `network`?"), "{e}");
    let e = err("[metrics]\ntextfil = \"x\"\n");
    assert_eq!(e.key.as_deref(), Some("metrics.textfil"), "{e}");
    assert!(e.message.ends_with("; did you mean `textfile`?"), "{e}");
    let e = err("pol = \"1s\"\n");
    assert_eq!(e.key.as_deref(), Some("pol"), "{e}");
    assert!(e.message.ends_with("; did you mean `poll`?"), "{e}");
    // Nothing close: the list only.
    let e = err("zzzzzz = 1\n");
    assert!(!e.message.contains("did you mean"), "{e}");
}

/// A top-level key written after a table header is that table's in TOML:
/// the error says where it belongs, not the table's closest key (`poll`
/// under `[[disk]]` suggested `policy`).
#[test]
fn a_top_level_key_under_a_table_header_is_told_to_move_up() {
    let e = err("[[disk]]\ndevice = \"a\"\npoll = \"1s\"\n");
    assert_eq!(e.key.as_deref(), Some("disk[0].poll"), "{e}");
    assert!(
        e.message.contains("`poll` is a top-level key") && e.message.contains("`[[disk]]`"),
        "{e}"
    );
    assert!(!e.message.contains("did you mean"), "{e}");
    let e = err("[metrics]\nlisten = \"127.0.0.1:9733\"\nhdparm = \"/usr/sbin/hdparm\"\n");
    assert!(
        e.message.contains("`hdparm` is a top-level key") && e.message.contains("`[metrics]`"),
        "{e}"
    );
    let e = err("[[disk]]\ndevice = \"a\"\ntextfile = \"/tmp/x.prom\"\n");
    assert!(
        e.message.contains("`textfile` belongs in `[metrics]`"),
        "{e}"
    );
    // Every key the hint moves up is one the top level takes.
    for key in super::checks::TOP_LEVEL_ONLY {
        let value = match *key {
            "activity_log" => "true",
            "activity_max_mb" => "64",
            "poll" | "state_interval" | "power_check" | "hook_timeout" | "activity_retention" => {
                "\"10s\""
            }
            "hdparm" => "\"/usr/sbin/hdparm\"",
            _ => "\"/tmp/x\"",
        };
        let text = format!("{key} = {value}\n");
        assert!(
            toml::from_str::<super::RawConfig>(&text).is_ok(),
            "{key} is not a top-level key"
        );
    }
    for key in super::checks::METRICS_ONLY {
        let text = format!("[metrics]\n{key} = \"x\"\n");
        assert!(
            toml::from_str::<super::RawConfig>(&text).is_ok(),
            "{key} is not a [metrics] key"
        );
    }
}

/// A disk's keys at the top level (no `[[disk]]` header above them), or
/// `[[job]]` for `[[disk.job]]`, are told where they go; serde listed the
/// top level's keys.
#[test]
fn a_disk_s_key_at_the_top_level_is_told_to_go_in_a_disk() {
    let e = err("device = \"sdb\"\n");
    assert!(
        e.message.contains("`device` is a disk's key") && e.message.contains("`[[disk]]`"),
        "{e}"
    );
    let e = err(
        "[[disk]]\ndevice = \"a\"\ntask = \"jobs\"\n[[job]]\nname = \"a\"\ncommand = [\"/bin/true\"]\nreserve = \"5m/hour\"\n",
    );
    assert!(e.message.contains("write `[[disk.job]]`"), "{e}");
    // Every key the hint sends to a disk is one a disk takes.
    for key in super::checks::DISK_ONLY {
        let value = match *key {
            "max_spindowns_per_day" => "4",
            "best_effort" => "0.1",
            "command" => "[\"/bin/true\"]",
            "job" => "[{ name = \"a\", command = [\"/bin/true\"], reserve = \"5m/hour\" }]",
            _ => "\"x\"",
        };
        let line = match *key {
            "device" => String::new(),
            _ => format!("{key} = {value}\n"),
        };
        let text = format!("[[disk]]\ndevice = \"a\"\n{line}");
        assert!(
            toml::from_str::<super::RawConfig>(&text).is_ok(),
            "{key} is not a disk's key"
        );
    }
}

#[test]
fn offline_components_are_refused() {
    let e = err("[[disk]]\ndevice = \"sda\"\nnetwork = \"oracle()\"\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(3), Some("disk[0].network")),
        "{e}"
    );
    assert!(e.message.contains("offline"), "{e}");
}

#[test]
#[cfg_attr(
    not(has_root),
    ignore = "needs root (only root refuses files others can change)"
)]
fn writable_files_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    if !running_as_root() {
        lull_testkit::skip("needs root (only root refuses files others can change)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("lull.toml");
    std::fs::write(&f, "poll = \"1s\"\n").unwrap();
    assert!(check_not_writable_by_others(&f).is_ok());
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
    let e = Config::load(&f, &registry()).unwrap_err();
    assert!(e.message.contains("writable"), "{e}");
    let prog = dir.path().join("job.sh");
    std::fs::write(&prog, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = check_command(&[prog.to_string_lossy().into_owned()]).unwrap_err();
    assert!(e.contains("writable"), "{e}");
}

#[test]
fn hooks_are_argv_lists_with_global_defaults() {
    let c = parse(
        "hook_timeout = \"3s\"\non_spindown = [\"/bin/true\", \"global\"]\non_wake = [\"/bin/true\", \"w\"]\n\
         [[disk]]\ndevice = \"sda\"\non_spindown = [\"/bin/true\", \"own\"]\n\
         [[disk]]\ndevice = \"sdb\"\n",
    )
    .unwrap();
    assert_eq!(c.hook_timeout, Nanos::from_secs(3));
    let v = |s: &[&str]| Some(s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    let a = &c.disks[0].hooks;
    assert_eq!(
        a.get(HookEvent::Spindown).cloned(),
        v(&["/bin/true", "own"])
    );
    assert_eq!(a.get(HookEvent::Wake).cloned(), v(&["/bin/true", "w"]));
    assert_eq!(a.get(HookEvent::TaskStart), None);
    let b = &c.disks[1].hooks;
    assert_eq!(
        b.get(HookEvent::Spindown).cloned(),
        v(&["/bin/true", "global"])
    );
    assert_eq!(
        parse("[[disk]]\ndevice = \"sda\"\n").unwrap().hook_timeout,
        DEFAULT_HOOK_TIMEOUT
    );
}

#[test]
fn hook_errors_name_their_key() {
    let e = err("[[disk]]\ndevice = \"sda\"\non_wake = [\"true\"]\n");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(3), Some("disk[0].on_wake")),
        "{e}"
    );
    assert!(e.message.contains("absolute"), "{e}");
    let e = err("on_task_stop = []\n");
    assert_eq!(e.key.as_deref(), Some("on_task_stop"), "{e}");
    let e = err("hook_timeout = \"1ms\"\n");
    assert_eq!(e.key.as_deref(), Some("hook_timeout"), "{e}");
    let e = err("[[disk]]\ndevice = \"sda\"\non_spindwn = [\"/bin/true\"]\n");
    assert_eq!(e.key.as_deref(), Some("disk[0].on_spindwn"), "{e}");
}

#[test]
#[cfg_attr(
    not(has_root),
    ignore = "needs root (only root refuses files others can change)"
)]
fn a_hook_writable_by_others_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    if !running_as_root() {
        lull_testkit::skip("needs root (only root refuses files others can change)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("hook.sh");
    std::fs::write(&prog, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o757)).unwrap();
    let e = err(&format!(
        "[[disk]]\ndevice = \"sda\"\non_spinup = [{prog:?}]\n"
    ));
    assert_eq!(e.key.as_deref(), Some("disk[0].on_spinup"), "{e}");
    assert!(e.message.contains("writable"), "{e}");
}

#[test]
fn activity_keys_default_next_to_the_state_file_and_errors_name_the_key() {
    let c = parse("state_file = \"/srv/lull/state.json\"\n").unwrap();
    assert!(c.activity.enabled);
    assert_eq!(c.activity.dir, Path::new("/srv/lull/activity"));
    assert_eq!(c.activity.retention, DEFAULT_ACTIVITY_RETENTION);
    assert_eq!(c.activity.max_bytes, DEFAULT_ACTIVITY_MAX_MB * 1_000_000);
    let c = parse(
        "activity_log = false\nactivity_dir = \"/var/log/lull\"\nactivity_retention = \"2d\"\nactivity_max_mb = 5\n",
    )
    .unwrap();
    assert!(!c.activity.enabled);
    assert_eq!(c.activity.dir, Path::new("/var/log/lull"));
    assert_eq!(c.activity.retention, Nanos::from_secs(2 * 86_400));
    assert_eq!(c.activity.max_bytes, 5_000_000);
    for (text, key, line) in [
        ("activity_retention = \"5m\"\n", "activity_retention", 1),
        ("poll = \"1s\"\nactivity_max_mb = 0\n", "activity_max_mb", 2),
        ("activity_max_mb = -3\n", "activity_max_mb", 1),
        ("activity_dir = \" \"\n", "activity_dir", 1),
        ("activity_retention = \"a week\"\n", "activity_retention", 1),
        (
            "poll = \"1s\"\nactivity_dir = \"logs\"\n",
            "activity_dir",
            2,
        ),
    ] {
        let e = err(text);
        assert_eq!(e.key.as_deref(), Some(key), "{text}: {e}");
        assert_eq!(e.line, Some(line), "{text}: {e}");
    }
    // A typo is an unknown key, named.
    let e = err("activity_logs = true\n");
    assert!(e.to_string().contains("activity_logs"), "{e}");
}

/// The daemon runs in `/`: a relative path for a file it writes would
/// name a file there, and `lull status` run elsewhere would look
/// elsewhere. Refused, naming the line; and the checks a start runs on
/// those paths later (`preflight`) name the line too (they named none):
/// that half is in lull-live's `tests/config_preflight.rs`.
#[test]
fn paths_the_daemon_writes_are_absolute_and_their_errors_name_the_line() {
    for (text, key, line) in [
        ("state_file = \"state.json\"\n", "state_file", 1),
        (
            "# lull\n\nstate_file = \"./lull/state.json\"\n",
            "state_file",
            3,
        ),
        (
            "[metrics]\ntextfile = \"lull.prom\"\n",
            "metrics.textfile",
            2,
        ),
    ] {
        let e = err(text);
        assert_eq!(e.key.as_deref(), Some(key), "{text}: {e}");
        assert_eq!(e.line, Some(line), "{text}: {e}");
        assert!(e.message.contains("must be an absolute path"), "{e}");
    }
    // The preflight half is lull-live's (`tests/config_preflight.rs`).
}

/// A hand-written file with several mistakes says them all in one run, in
/// file order (serde meets a table's keys sorted, and stopped at the
/// first it met: `disk` before `stat_file`); a misspelt key's line set
/// aside makes no error of its own.
#[test]
fn several_mistakes_are_named_at_once_in_file_order() {
    let e = err(concat!(
        "stat_file = \"/tmp/state.json\"\n",
        "[metrics]\n",
        "textfle = \"/tmp/x.prom\"\n",
        "[[disk]]\n",
        "device = \"sdb\"\n",
        "netwrok = \"auto\"\n",
        "[[disk]]\n",
        "device = \"sdc\"\n",
        "preset = 5\n",
    ));
    assert_eq!(e.line, Some(1), "{e}");
    assert_eq!(e.key.as_deref(), Some("stat_file"), "{e}");
    let text = e.to_string();
    assert!(text.contains("3 more errors further on:"), "{text}");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {text}"))
    };
    assert!(at("lull.toml:3: key `metrics.textfle`") < at("lull.toml:6: key `disk[0].netwrok`"));
    assert!(at("lull.toml:6: key `disk[0].netwrok`") < at("lull.toml:9: key `disk[1].preset`"));
    // One mistake: no list.
    let e = err("poll = \"1s\"\npol = \"2s\"\n");
    assert_eq!(e.line, Some(2));
    assert!(!e.to_string().contains("further on"), "{e}");
    // A required key mistyped: named, and nothing made up after it (its
    // line set aside would leave the disk without a device).
    let e = err("[[disk]]\ndevice = 5\n");
    assert_eq!(e.line, Some(2), "{e}");
    assert!(!e.to_string().contains("further on"), "{e}");
}

/// Issue 35: the `hdparm` program is named in the configuration (no
/// environment variable chooses a program the daemon runs), and checked
/// like a command.
#[test]
fn the_hdparm_key_names_an_absolute_executable() {
    assert_eq!(parse("").unwrap().hdparm, None);
    let c = parse("hdparm = \"/bin/true\"\n").unwrap();
    assert_eq!(c.hdparm.as_deref(), Some(Path::new("/bin/true")));
    for (text, what) in [
        ("hdparm = \"hdparm\"\n", "absolute path"),
        (
            "poll = \"1s\"\nhdparm = \"/nonexistent/hdparm\"\n",
            "/nonexistent/hdparm",
        ),
        ("hdparm = \"/etc\"\n", "not an executable file"),
    ] {
        let e = err(text);
        assert_eq!(e.key.as_deref(), Some("hdparm"), "{text}: {e}");
        assert!(e.to_string().contains(what), "{what} in {e}");
    }
    assert_eq!(
        err("poll = \"1s\"\nhdparm = \"/nonexistent/hdparm\"\n").line,
        Some(2)
    );
}

/// Issue 31, item 3: a value of the wrong type is told in the file's
/// terms, with an example, for every key; never a Rust type's name.
#[test]
fn wrong_types_name_what_the_key_takes() {
    let top = [
        ("state_file = 3", "a path"),
        ("poll = 1", "a duration"),
        ("state_interval = true", "a duration"),
        ("power_check = 60", "a duration"),
        ("diskstats = []", "a path"),
        ("sysfs = 1", "a path"),
        ("metrics = \"127.0.0.1:9977\"", "[metrics]"),
        ("hook_timeout = 10", "a duration"),
        ("activity_log = \"yes\"", "true or false"),
        ("activity_dir = 1", "a path"),
        ("activity_retention = 7", "a duration"),
        ("activity_max_mb = \"64\"", "whole number"),
        ("hdparm = 1", "absolute path"),
        ("on_spindown = \"/bin/true\"", "list of strings"),
        (
            "on_wake = 1",
            "e.g. on_wake = [\"/usr/bin/logger\", \"-t\", \"lull\", \"on_wake\"]",
        ),
        ("disk = \"sdb\"", "[[disk]]"),
        ("[metrics]\nlisten = 9733", "an address"),
        ("[metrics]\ntextfile = 1", "a path"),
    ];
    let disk = [
        ("device = 1", "a kernel name"),
        ("network = 2", "network spec"),
        ("task = 1", "standby"),
        ("policy = 1", "stop policy"),
        ("preset = 1", "drive preset"),
        ("backend = 1", "ata16"),
        ("max_spindowns_per_day = \"24\"", "whole number"),
        ("command = \"/bin/sleep 1\"", "list of strings"),
        ("interval = 24", "a duration"),
        ("best_effort = \"half\"", "between 0 and 1"),
        ("assume_idle = 30", "a duration"),
        ("compare_timeout = 600", "a duration"),
        ("on_spinup = \"x\"", "e.g. on_spinup = [\"/usr/bin/logger\""),
        ("job = 1", "[[disk.job]]"),
    ];
    let cases = top
        .iter()
        .map(|(t, w)| (t.to_string(), *w))
        .chain(disk.iter().map(|(t, w)| {
            (
                format!("[[disk]]\ndevice = \"sdb\"\n{t}")
                    .replace("device = \"sdb\"\ndevice = 1", "device = 1"),
                *w,
            )
        }));
    for (text, want) in cases {
        let e = err(&text);
        let m = e.to_string();
        assert!(m.contains(want) && m.contains("e.g."), "{text}: {m}");
        for internal in ["Raw", "struct", "i64", "f64", "sequence", "a integer"] {
            assert!(!m.contains(internal), "{text}: {m}");
        }
        assert!(e.key.is_some(), "{text}: {m}");
    }
    assert!(
        err("poll = 1").to_string().contains("not an integer `1`"),
        "{}",
        err("poll = 1")
    );
}

#[test]
fn a_dry_run_keeps_its_state_beside_the_real_one() {
    let mut c = parse("state_file = \"/var/lib/lull/state.json\"\n").unwrap();
    assert_eq!(
        c.dry_run_state_file(),
        PathBuf::from("/var/lib/lull/state.dry-run.json")
    );
    assert_eq!(
        c.state_path(false),
        PathBuf::from("/var/lib/lull/state.json")
    );
    assert_eq!(c.state_path(true), c.dry_run_state_file());
    c.state_file = PathBuf::from("/srv/lull-state");
    assert_eq!(
        c.dry_run_state_file(),
        PathBuf::from("/srv/lull-state.dry-run")
    );
}

// `compare_timeout`: a standby disk's own earlier timeout, 1 s to 24 h,
// with the key named when it is wrong.
#[test]
fn compare_timeout_is_a_standby_disks_duration() {
    let with = |t: &str| parse(&format!("[[disk]]\ndevice = \"sdb\"\n{t}\n"));
    let d = with("compare_timeout = \"5m\"").unwrap();
    assert!(matches!(
        d.disks[0].task,
        TaskConfig::Standby { compare_timeout: Some(t), .. } if t == Nanos::from_secs(300)
    ));
    for (t, what) in [
        ("compare_timeout = \"0s\"", "from 1s to 24h"),
        ("compare_timeout = \"2d\"", "from 1s to 24h"),
        ("compare_timeout = \"soon\"", ""),
        (
            "task = \"flush\"\ncompare_timeout = \"5m\"",
            "only applies to task = \"standby\"",
        ),
    ] {
        let e = with(t).unwrap_err();
        assert_eq!(
            e.key.as_deref(),
            Some("disk[0].compare_timeout"),
            "{t}: {e}"
        );
        assert!(e.message.contains(what), "{t}: {e}");
    }
}

/// `[disk]` for `[[disk]]`: serde's "invalid type: map, expected a
/// sequence" named neither the key nor the fix.
#[test]
fn a_single_bracket_disk_table_is_told_to_double_its_brackets() {
    let e = parse("state_file = \"/tmp/s.json\"\n[disk]\ndevice = \"sda\"\n").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert_eq!(e.key.as_deref(), Some("disk"), "{e}");
    assert!(e.to_string().contains("write `[[disk]]`"), "{e}");
    // The right header parses.
    parse("state_file = \"/tmp/s.json\"\n[[disk]]\ndevice = \"sda\"\n").unwrap();
}

/// A reload says which keys of a disk changed (a trial's log said only
/// "configuration changed or removed"), each with its old and new value.
#[test]
fn a_reload_names_the_keys_that_changed() {
    let entry = |keys: &str| {
        parse(&format!("[[disk]]\ndevice = \"loop0\"\n{keys}"))
            .unwrap()
            .disks
            .remove(0)
    };
    let old = entry(
        "network = \"timer(20s)\"\nbackend = \"hdparm\"\nmax_spindowns_per_day = 24\npreset = \"wd-red-plus\"\n",
    );
    assert!(old.changes_to(&old.clone()).is_empty());
    // Other spacing is the same network.
    let new = entry(
        "network = \"timer( 20s )\"\nbackend = \"hdparm\"\nmax_spindowns_per_day = 480\npreset = \"wd-red-plus\"\n",
    );
    assert_eq!(old.changes_to(&new), ["max_spindowns_per_day 24 → 480"]);
    let new = entry(
        "network = \"timer(40s)\"\nmax_spindowns_per_day = 24\ncompare_timeout = \"10m\"\npolicy = \"when-busy\"\n",
    );
    assert_eq!(
        old.changes_to(&new),
        [
            "network timer(20s) → timer(40s)",
            "policy earlier-of → when-busy",
            "preset wd-red-plus → none",
            "backend hdparm → auto",
            "compare_timeout none → 10m",
        ]
    );
    let new = entry(
        "network = \"timer(20s)\"\ntask = \"command\"\ncommand = [\"/bin/true\"]\npreset = \"wd-red-plus\"\n",
    );
    assert_eq!(old.changes_to(&new), ["task standby → command"]);
    let cmd = |argv: &str, interval: &str| {
        entry(&format!(
            "task = \"command\"\ncommand = {argv}\ninterval = \"{interval}\"\n"
        ))
    };
    assert_eq!(
        cmd("[\"/bin/true\"]", "0s").changes_to(&cmd("[\"/bin/false\"]", "1m")),
        [
            "command [\"/bin/true\"] → [\"/bin/false\"]",
            "interval 0s → 1m"
        ]
    );
}

#[test]
fn auto_takes_a_price_per_spin_up_wait() {
    let c = parse("[[disk]]\ndevice = \"sda\"\npreset = \"wd-red-plus\"\nnetwork = \"auto(delay-weight=0.5)\"\n")
        .unwrap();
    let d = &c.disks[0];
    let spec = disk_registry(&registry(), &d.task, d.breakeven())
        .expand_network(&d.network)
        .unwrap()
        .unwrap();
    assert_eq!(spec, "long-idle(delay-weight=0.5)");
    // A flush disk's `auto` is a timer: it takes no price.
    let e =
        err("[[disk]]\ndevice = \"sda\"\ntask = \"flush\"\nnetwork = \"auto(delay-weight=0.5)\"\n");
    assert_eq!(e.key.as_deref(), Some("disk[0].network"), "{e}");
    assert!(e.message.contains("takes no parameters"), "{e}");
}
