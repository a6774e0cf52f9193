//! The text blocks: a pinned scripted scene, commands, jobs, what `auto`
//! learned, the wear budget and left-alone disks.

use super::*;

/// A `command` disk's evidence: the idle time its command was given.
#[test]
fn a_command_disk_says_how_long_its_command_ran() {
    let mut st = scene();
    let d = &mut st.disks[1];
    d.task = Some("command".into());
    let text = render_text(&st);
    assert!(
        !text.contains("  command     ran"),
        "nothing ran yet: {text}"
    );
    let d = &mut st.disks[1];
    (d.command_s, d.command_exits) = (754.2, 1);
    let text = render_text(&st);
    assert!(
        text.contains("\n  command     ran 12m34s in idle time, 1 run to the end\n"),
        "{text}"
    );
    // A standby disk says nothing of commands.
    st.disks[0].command_s = 5.0;
    assert_eq!(render_text(&st).matches("  command     ran").count(), 1);
}

/// A `jobs` disk's evidence, from the daemon's metrics: what each job got
/// of the idle time, whether it was admitted and fits, and its late
/// windows; in the text and in the JSON.
#[test]
fn a_jobs_disk_says_what_each_job_got() {
    let text = "lull_job_admitted{disk=\"sdc\",job=\"scrub\"} 1\n\
        lull_job_admitted{disk=\"sdc\",job=\"trim\"} 0\n\
        lull_job_admitted{disk=\"sdd\",job=\"other\"} 1\n\
        lull_job_idle_seconds_total{disk=\"sdc\",job=\"scrub\"} 754.2\n\
        lull_job_idle_seconds_total{disk=\"sdc\",job=\"trim\"} 0\n\
        lull_job_deadlines_missed_total{disk=\"sdc\",job=\"scrub\"} 2\n\
        lull_job_fits_observed{disk=\"sdc\",job=\"scrub\"} 0\n\
        lull_job_fits_observed{disk=\"sdc\",job=\"trim\"} NaN\n";
    let samples = parse_metrics(text).unwrap();
    let jobs = jobs_from_metrics(&samples, "sdc");
    assert_eq!(
        jobs,
        vec![
            JobStatus {
                name: "scrub".into(),
                admitted: true,
                idle_s: 754.2,
                deadlines_missed: 2,
                fits_observed: Some(false),
            },
            JobStatus {
                name: "trim".into(),
                admitted: false,
                idle_s: 0.0,
                deadlines_missed: 0,
                fits_observed: None,
            },
        ]
    );
    let mut st = scene();
    st.disks[1].task = Some("jobs".into());
    st.disks[1].jobs = jobs;
    let text = render_text(&st);
    assert!(
        text.contains("\n  jobs        scrub: ran 12m34s in idle time, admitted; would be refused on the idle time observed, late in 2 windows\n              trim: ran 0s in idle time, refused at admission\n"),
        "{text}"
    );
    let json = serde_json::to_value(&st).unwrap();
    assert_eq!(json["disks"][1]["jobs"][0]["idle_s"], 754.2);
    assert!(json["disks"][0].get("jobs").is_none());
}

#[test]
fn the_text_status_of_a_scripted_scene_is_pinned() {
    let text = render_text(&scene());
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/status.txt");
    if std::env::var_os("LULL_BLESS").is_some() {
        std::fs::write(&golden, &text).unwrap();
    }
    let want = std::fs::read_to_string(&golden).expect("tests/data/status.txt");
    assert_eq!(
        text, want,
        "the text status changed; LULL_BLESS=1 to accept"
    );
}

/// `auto`'s score of gauges is wrapped at 100 columns under its node, and
/// the periodic source's details, "none" while none is found, are left
/// to the JSON.
#[test]
fn what_auto_learned_is_wrapped_and_leaves_out_what_does_not_exist() {
    let mut st = scene();
    let text = render_text(&st);
    let learned: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  learned"))
        .skip(1)
        .take_while(|l| l.starts_with("              "))
        .collect();
    assert!(learned.len() >= 3, "{text}");
    assert!(learned[0].starts_with("              n0: chance"), "{text}");
    for l in &learned[1..] {
        assert!(
            l.starts_with("                  ") && !l.starts_with("                   "),
            "{l:?}"
        );
    }
    assert!(learned.iter().all(|l| l.chars().count() <= 100), "{text}");
    assert!(
        text.contains("period of the most confident source 30m"),
        "{text}"
    );
    // No source: its period, confidence and next arrival say nothing.
    for g in &mut st.disks[0].nodes {
        match g.name.as_str() {
            "periodic_sources" => g.value = Some(0.0),
            "periodic_period_s" | "periodic_confidence" | "periodic_next_in_s" => {
                *g = NodeGauge::new("n0", &g.name.clone(), f64::MAX)
            }
            _ => {}
        }
    }
    let text = render_text(&st);
    assert!(text.contains("confident periodic sources 0"), "{text}");
    for gone in [
        "period of the most confident source",
        "its confidence",
        "next predicted periodic arrival",
    ] {
        assert!(!text.contains(gone), "{gone}: {text}");
    }
    assert!(
        text.contains("at-once margin never"),
        "'never' is kept: {text}"
    );
}

#[test]
fn a_drive_that_spins_itself_down_is_shown_with_the_fix() {
    let mut st = scene();
    let d = &mut st.disks[0];
    d.drive_power = Some("APM level 127: the drive may spin itself down".into());
    d.spins_itself_down = true;
    d.standby_fix = Some("`hdparm -B 254 /dev/sdb`".into());
    let text = render_text(&st);
    assert!(
        text.contains("  drive power APM level 127: the drive may spin itself down (`hdparm -B 254 /dev/sdb` leaves spin-down to lull)\n"),
        "{text}"
    );
    // Left alone, lull spins nothing down: no fix to offer.
    st.disks[0].left_alone = Some("a solid-state disk".into());
    let text = render_text(&st);
    assert!(
        text.contains("  drive power APM level 127: the drive may spin itself down\n"),
        "{text}"
    );
    // From the state file's identity.
    let mut state = State::default();
    let ds = DiskState {
        identity: Some(crate::identify::Identity {
            apm: Some(crate::identify::Apm::Level(96)),
            kernel: "sdc".into(),
            ..Default::default()
        }),
        ..DiskState::default()
    };
    state.disks.insert("sdc".into(), ds);
    let cfg = Config::parse(
        std::path::Path::new("lull.toml"),
        "[[disk]]\ndevice = \"sdc\"\n",
        &crate::default_registry(),
    )
    .unwrap();
    let d = combine(&cfg, &state, &[], false, 1_800_000_000);
    assert_eq!(
        d[0].drive_power.as_deref(),
        Some("APM level 96: the drive may spin itself down")
    );
    assert!(d[0].spins_itself_down);
    assert_eq!(
        d[0].standby_fix.as_deref(),
        Some("`hdparm -B 254 /dev/sdc`")
    );
}

#[test]
fn a_disk_no_command_reaches_is_shown_left_alone_and_why() {
    let mut st = scene();
    st.disks[0].transport = Some("none".into());
    st.disks[0].transport_why = Some("SG_IO not supported; hdparm -C failed".into());
    // The scene's lull spun the disk down; a disk left alone never was.
    let acted = st.clone();
    for w in &mut st.disks[0].shadow.as_mut().unwrap().windows {
        let base = w.baseline_energy_j;
        let lull = w.policies.iter_mut().find(|p| p.policy == "lull").unwrap();
        (lull.spinups, lull.energy_j, lull.saved_wh) = (0, base, 0.0);
    }
    let text = render_text(&st);
    assert!(
        text.contains("  transport   none: no command reaches the drive (SG_IO not supported; hdparm -C failed); it is left alone (no spin-down, no power checks) until it is replugged\n"),
        "{text}"
    );
    // Its evidence judges nothing lull decided: no ratio, and lull's line
    // says why it is empty (it read "excess vs best fixed 5.57").
    assert!(!text.contains("excess vs best fixed"), "{text}");
    assert!(
        text.contains("lull none (the disk is left alone now)"),
        "{text}"
    );
    assert!(
        text.contains("no ratio: the daemon leaves this disk alone (no command reaches the drive)"),
        "{text}"
    );
    assert!(
        text.contains("hd-idle 10 min "),
        "the references stay: {text}"
    );
    // Left alone now, after lull spun it down in the window (a backend
    // changed to one that cannot reach it): lull's figures and the ratios
    // stand.
    let text = render_text(&acted);
    assert!(!text.contains("lull none"), "{text}");
    assert!(text.contains("excess vs best fixed"), "{text}");
    assert!(text.contains("  transport   none: "), "{text}");
    // A dry run decides as if a command reached it: its ratios stay.
    st.dry_run = Some(true);
    let text = render_text(&st);
    assert!(text.contains("excess vs best fixed"), "{text}");
    // So does a disk that is reached.
    st.dry_run = None;
    st.disks[0].transport = Some("ata16".into());
    assert!(render_text(&st).contains("excess vs best fixed"));
}

#[test]
fn small_savings_keep_their_sign_and_size() {
    assert_eq!(energy(2.914), "2.91 Wh");
    assert_eq!(energy(-0.25), "-0.25 Wh");
    assert_eq!(energy(-0.003_14), "-3.14 mWh");
    assert_eq!(energy(0.042), "42.00 mWh");
    assert_eq!(energy(-1e-9), "0 Wh", "no negative zero");
    assert_eq!(energy(0.0), "0 Wh");
}

/// More attempts in 24 h than spin-downs ever (a standby that found the
/// drive asleep, or failed): the budget's line says what it counts.
#[test]
fn a_budget_spent_on_attempts_that_spun_nothing_down_says_so() {
    let mut st = scene();
    let said = "used in 24 h by attempts, which count when the drive was asleep already";
    assert!(!render_text(&st).contains(said));
    let d = st.disks.iter_mut().find(|d| d.wear.is_some()).unwrap();
    d.spindowns = d.wear.as_ref().unwrap().spent_24h as u64 - 1;
    assert!(render_text(&st).contains(said), "{}", render_text(&st));
}

#[test]
fn a_dry_run_s_budget_is_spent_on_what_it_would_have_done() {
    let mut st = scene();
    assert!(!render_text(&st).contains("would have done"));
    st.dry_run = Some(true);
    let text = render_text(&st);
    assert!(
        text.starts_with("(the daemon runs with --dry-run"),
        "{text}"
    );
    assert!(
        text.contains("4 used in 24 h by spin-downs it would have done, "),
        "{text}"
    );
    // The spin-downs it counts are the ones sent: none, said beside the
    // `saved` lines' would-be spin-ups.
    assert!(
        text.contains(
            " sent (a dry run sends none; lull's `saved` line counts those it would have done)"
        ),
        "{text}"
    );
    // A dry run that has stopped is spoken of in the past.
    st.daemon_running = Some(false);
    let text = render_text(&st);
    assert!(
        text.contains(
            "\n(its last run was a dry run, lulld --dry-run: it decided but did not act)\n"
        ),
        "{text}"
    );
    assert!(!text.contains("the daemon runs with"), "{text}");
}

proptest::proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    /// Wrapping loses and adds nothing: the lines, joined back, are the
    /// items joined by the separator; every line fits the width unless it
    /// holds a single item longer than it.
    #[test]
    fn wrapping_keeps_every_item_and_fits_the_width(
        items in proptest::collection::vec("[a-z0-9 %()]{1,30}", 0..20),
        sep in proptest::sample::select(vec![", ", "; ", " "]),
        width in 10usize..100,
    ) {
        let items: Vec<String> = items;
        let lines = wrap_list(&items, sep, width);
        let end = sep.trim_end();
        let joined: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 < lines.len() {
                    l.strip_suffix(end).unwrap_or(l).to_string()
                } else {
                    l.clone()
                }
            })
            .collect();
        proptest::prop_assert_eq!(joined.join(sep), items.join(sep));
        for l in &lines {
            let alone = items.iter().any(|i| l.strip_suffix(end).unwrap_or(l) == i);
            proptest::prop_assert!(l.chars().count() <= width || alone, "{:?} over {}", l, width);
        }
    }
}
