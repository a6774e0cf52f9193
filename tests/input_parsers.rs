//! Every parser of what a user types or a machine hands lull, on arbitrary
//! and on mutated input: it answers `Ok` or an error, it never panics.
//! The trace readers have their own (`lull-blktrace-replay`'s
//! `tests/malformed.rs`), the activity log its own
//! (`lull-activity`'s `tests/read.rs`); these are the rest: network specs
//! (one line and TOML, then built into a network), drive power and service
//! models, durations, `lull rank` grid files, the daemon's configuration,
//! `/proc/diskstats`, hd-idle's options, the daemon's state file, and
//! what `lull status` reads and prints of the daemon's metrics.
//! `scripts/soak.sh` runs them with its parsers' scale.

use std::path::Path;

use lull_core::spec::NetworkSpec;
use lull_core::time::parse_duration;
use lull_tasks::PowerModel;
use lull_tasks::device::ServiceModel;
use proptest::prelude::*;

/// Text made of the characters specs, configurations and counters are
/// written with, so that the parsers get past their first byte.
fn texty(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            8 => prop::sample::select(
                "abcdefgilmnoprstuvwxyzBRS0123456789()[]{}=;,+-./_*:#\"' \n\t@"
                    .chars()
                    .collect::<Vec<_>>()
            ),
            1 => any::<char>(),
        ],
        0..max,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

/// `valid` with a few bytes replaced, inserted or deleted at random.
fn mutated(valid: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 1..8).prop_map(
        move |edits| {
            let mut b = valid.as_bytes().to_vec();
            for (i, kind, byte) in edits {
                let at = i.index(b.len() + 1);
                match kind {
                    0 if at < b.len() => b[at] = byte,
                    1 => b.insert(at, byte),
                    _ if at < b.len() => {
                        b.remove(at);
                    }
                    _ => {}
                }
            }
            String::from_utf8_lossy(&b).into_owned()
        },
    )
}

const SPEC: &str = "low-pass(min=3s; vote(threshold=2; timer(1s) + fixed(10s), event-window(n=10, rate=0.25) + average(n=3, initial=B)))";

const TOML_NET: &str = "[[node]]\nname = \"fast\"\nspec = \"timer(1s) + fixed(10s)\"\n\n[[node]]\nname = \"careful\"\nspec = \"timer(5s) + fixed(60s)\"\n\n[[node]]\nname = \"both\"\nskeptic = \"and\"\ninputs = [\"fast\", \"careful\"]\n";

const GRID: &str = include_str!("../crates/rank/grids/timers.toml");

const CONFIG: &str = include_str!("../contrib/lull.toml");

const DISKSTATS: &str = "   8       0 sda 4085 35 43290 411 194919 3860 1928420 6295 0 6076 7142 70 0 2293830 6 990 428\n   8       1 sda1 10 0 80 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n 259       0 nvme0n1 1 2 3 4 5 6 7 8 0 9 10\n   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0\n";

const HD_IDLE: &str =
    "-i 0 -a sda -i 300 -a /dev/disk/by-id/ata-X -i 60 -c ata -s 1 -l /var/log/hd-idle.log";

/// A state file as the daemon writes it: every field of a disk's entry.
fn state_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let mut st = lull_live::state::State::default();
        st.disks.insert(
            "sdb".into(),
            lull_live::state::DiskState {
                spindowns: 3,
                spinups: 2,
                standby_s: 12.5,
                ..Default::default()
            },
        );
        serde_json::to_string_pretty(&st).unwrap()
    })
}

/// The daemon's registry, with `B` of the paper's drive for specs that
/// name it (as `lull replay` and the daemon resolve it).
fn with_b() -> lull::Setup {
    lull::for_drive("paper-2.5in", lull::Work::Standby).unwrap()
}

/// One spec string through the parser and, when it parses, the builder:
/// a network is the parser's word made real, and a bad parameter value
/// must be an error there too.
fn spec_round(text: &str, registry: &lull_core::registry::Registry) -> Result<(), TestCaseError> {
    match NetworkSpec::parse(text, Some(registry)) {
        Ok(spec) => {
            if let Err(e) = spec.build(registry) {
                // The message the user reads is made too.
                let _ = e.to_string();
            }
        }
        Err(e) => {
            prop_assert!(e.pos <= text.len(), "{} past {}", e.pos, text.len());
            let _ = e.to_string();
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    #[test]
    fn network_specs_never_panic(text in prop_oneof![texty(80), mutated(SPEC)]) {
        let setup = with_b();
        spec_round(&text, setup.registry())?;
        // And with the names resolved later (`--grid` files, TOML nodes).
        if let Err(e) = NetworkSpec::parse(&text, None) {
            let _ = e.to_string();
        }
    }

    #[test]
    fn toml_networks_never_panic(text in prop_oneof![texty(120), mutated(TOML_NET)]) {
        let setup = with_b();
        let registry = setup.registry();
        match NetworkSpec::from_toml(&text, Some(registry)) {
            Ok(spec) => {
                if let Err(e) = spec.build(registry) {
                    let _ = e.to_string();
                }
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }

    #[test]
    fn drive_models_and_durations_never_panic(
        text in prop_oneof![
            texty(60),
            mutated("wd-red-plus,p_active=3.3W,t_spinup=10s"),
            mutated("p_active=2,p_sleep=0.5,p_spinup=3W,t_spinup=2s,t_spindown=500ms"),
            mutated("2B/16"),
            mutated("90m"),
        ],
    ) {
        if let Err(e) = text.parse::<PowerModel>() {
            let _ = e.to_string();
        }
        if let Err(e) = text.parse::<ServiceModel>() {
            let _ = e.to_string();
        }
        if let Err(e) = parse_duration(&text) {
            let _ = e.to_string();
        }
    }

    #[test]
    fn grid_files_never_panic(text in prop_oneof![texty(120), mutated(GRID)]) {
        for task in ["spindown", "writeback", "cleaning", "nonsense"] {
            if let Err(e) = lull_rank::grid::Grid::from_toml(&text, task) {
                let _ = e.to_string();
            }
        }
    }

    #[test]
    fn daemon_configurations_never_panic(text in prop_oneof![texty(200), mutated(CONFIG)]) {
        let registry = lull_live::default_registry();
        // And an error names the file (and the line, where there is one).
        if let Err(e) = lull_live::config::Config::parse(Path::new("lull.toml"), &text, &registry) {
            let shown = e.to_string();
            prop_assert!(shown.starts_with("lull.toml"), "{shown}");
        }
    }

    #[test]
    fn diskstats_never_panic(text in prop_oneof![texty(200), mutated(DISKSTATS)]) {
        if let Err(e) = lull_live::diskstats::parse(&text) {
            let _ = e.to_string();
        }
    }

    #[test]
    fn hd_idle_options_never_panic(text in prop_oneof![texty(80), mutated(HD_IDLE)]) {
        if let Err(e) = lull_live::hd_idle::parse(&text) {
            let _ = e.to_string();
        }
        if let Err(e) = lull_live::admin::from_hd_idle::convert(&text) {
            let _ = e.to_string();
        }
    }

    #[test]
    fn state_files_never_panic(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        mutated(state_text()).prop_map(String::into_bytes),
    ]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, &bytes).unwrap();
        // A damaged file is an `InvalidData` error (the daemon keeps it
        // aside and starts afresh), never a panic.
        if let Err(e) = lull_live::state::State::load(&path) {
            prop_assert!(
                e.kind() == std::io::ErrorKind::InvalidData,
                "{e}"
            );
        }
    }
}

/// The valid inputs the mutations start from are valid: otherwise the
/// properties above would only ever see errors.
#[test]
fn the_seeds_of_the_mutations_parse() {
    let setup = with_b();
    let b = setup.registry();
    NetworkSpec::parse(SPEC, Some(b)).unwrap().build(b).unwrap();
    NetworkSpec::from_toml(TOML_NET, Some(b))
        .unwrap()
        .build(b)
        .unwrap();
    let registry = lull_live::default_registry();
    "wd-red-plus,p_active=3.3W,t_spinup=10s"
        .parse::<PowerModel>()
        .unwrap();
    parse_duration("90m").unwrap();
    lull_rank::grid::Grid::from_toml(GRID, "spindown").unwrap();
    lull_live::config::Config::parse(Path::new("lull.toml"), CONFIG, &registry).unwrap();
    assert_eq!(lull_live::diskstats::parse(DISKSTATS).unwrap().len(), 4);
    lull_live::admin::from_hd_idle::convert(HD_IDLE).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    std::fs::write(&path, state_text()).unwrap();
    lull_live::state::State::load(&path).unwrap();
}

/// The samples `lull status` reads of one disk `sdb`, each with a value
/// to fill in (`{}`): every name it looks for, with the labels it wants.
const METRICS: &[&str] = &[
    "lull_dry_run {}",
    "lull_disk_present{disk=\"sdb\"} {}",
    "lull_errors_total{disk=\"sdb\"} {}",
    "lull_foreign_spinups_total{disk=\"sdb\"} {}",
    "lull_idle_since_timestamp_seconds{disk=\"sdb\"} {}",
    "lull_in_standby{disk=\"sdb\"} {}",
    "lull_last_wake_timestamp_seconds{disk=\"sdb\",cause=\"spinup\"} {}",
    "lull_learned_idle_periods{disk=\"sdb\"} {}",
    "lull_learned_since_timestamp_seconds{disk=\"sdb\"} {}",
    "lull_next_decision_timestamp_seconds{disk=\"sdb\"} {}",
    "lull_node_gauge{disk=\"sdb\",node=\"n0\",name=\"acting_timeout_s\"} {}",
    "lull_node_gauge{disk=\"sdb\",node=\"n0\",name=\"p_long\"} {}",
    "lull_node_gauge{disk=\"sdb\",node=\"n0\",name=\"margin\"} {}",
    "lull_node_gauge{disk=\"sdb\",node=\"n0\",name=\"periodic_next_in_s\"} {}",
    "lull_power_state_since_timestamp_seconds{disk=\"sdb\"} {}",
    "lull_shadow_observed_seconds{disk=\"sdb\",window=\"24h\"} {}",
    "lull_shadow_baseline_energy_joules{disk=\"sdb\",window=\"24h\"} {}",
    "lull_shadow_energy_joules{disk=\"sdb\",policy=\"lull\",window=\"24h\"} {}",
    "lull_shadow_energy_joules{disk=\"sdb\",policy=\"best-fixed\",window=\"24h\"} {}",
    "lull_shadow_energy_joules{disk=\"sdb\",policy=\"oracle\",window=\"24h\"} {}",
    "lull_shadow_energy_joules{disk=\"sdb\",policy=\"hd-idle-10min\",window=\"24h\"} {}",
    "lull_shadow_energy_joules{disk=\"sdb\",policy=\"clairvoyant-10min\",window=\"24h\"} {}",
    "lull_shadow_timeout_seconds{disk=\"sdb\",policy=\"best-fixed\",window=\"24h\"} {}",
    "lull_shadow_timeout_seconds{disk=\"sdb\",policy=\"hd-idle-10min\",window=\"24h\"} {}",
    "lull_shadow_spinups_total{disk=\"sdb\",policy=\"lull\",window=\"24h\"} {}",
    "lull_shadow_spinups_total{disk=\"sdb\",policy=\"best-fixed\",window=\"24h\"} {}",
    "lull_shadow_spinups_total{disk=\"sdb\",policy=\"oracle\",window=\"24h\"} {}",
    "lull_shadow_spinups_total{disk=\"sdb\",policy=\"hd-idle-10min\",window=\"24h\"} {}",
    "lull_shadow_spinups_total{disk=\"sdb\",policy=\"clairvoyant-10min\",window=\"24h\"} {}",
    "lull_shadow_idle_periods{disk=\"sdb\",window=\"24h\"} {}",
    "lull_shadow_excess_vs_best_fixed{disk=\"sdb\",window=\"24h\"} {}",
    "lull_shadow_gain_vs_clairvoyant{disk=\"sdb\",window=\"24h\"} {}",
    "lull_spindowns_total{disk=\"sdb\"} {}",
    "lull_spinups_total{disk=\"sdb\"} {}",
    "lull_standby_seconds_total{disk=\"sdb\"} {}",
    "lull_task_running{disk=\"sdb\",task=\"standby\"} {}",
    "lull_task_starts_total{disk=\"sdb\"} {}",
    "lull_wakeups_total{disk=\"sdb\",comm=\"smartd\"} {}",
];

/// Values a metric can hold, the format's specials and the extremes among
/// them.
fn metric_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("NaN".to_string()),
        Just("+Inf".to_string()),
        Just("-Inf".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("1e300".to_string()),
        Just("-1e300".to_string()),
        Just("18446744073709551616".to_string()),
        (0.0f64..4e9).prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
    ]
}

/// Writes what `lull status` reads into `dir`: the metrics textfile
/// `metrics`, a state file (and a dry run's) with one disk `sdb` whose
/// drive has `breakeven_s` and which slept `standby_s`, and a
/// configuration naming them; returns the configuration's path.
fn status_files(dir: &Path, metrics: &str, breakeven_s: f64, standby_s: f64) -> std::path::PathBuf {
    let prom = dir.join("lull.prom");
    let state = dir.join("state.json");
    let config = dir.join("lull.toml");
    std::fs::write(&prom, metrics).unwrap();
    let mut st = lull_live::state::State::default();
    st.disks.insert(
        "sdb".into(),
        lull_live::state::DiskState {
            standby_s,
            drive: Some(lull_live::state::DriveRecord {
                preset: "wd-red-plus".into(),
                preset_source: "config".into(),
                why: "named".into(),
                breakeven_s,
                left_alone: None,
            }),
            ..Default::default()
        },
    );
    // serde_json writes NaN and infinities as null, which reads back as
    // an error: write what it can. A dry run's state file too, for
    // metrics whose `lull_dry_run` is not 0.
    let st = serde_json::to_string(&st).unwrap();
    std::fs::write(&state, &st).unwrap();
    std::fs::write(dir.join("state.dry-run.json"), &st).unwrap();
    std::fs::write(
        &config,
        format!(
            "state_file = {state:?}\n[metrics]\ntextfile = {prom:?}\n[[disk]]\ndevice = \"sdb\"\n"
        ),
    )
    .unwrap();
    config
}

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    /// `lull status` reads the daemon's metrics (from its endpoint or its
    /// textfile: a half-written file, another program on the port, a
    /// daemon of another version) and its state file: whatever values
    /// they hold, it prints a status or an error, never a panic.
    #[test]
    fn status_never_panics_on_what_it_reads(
        values in prop::collection::vec(metric_value(), METRICS.len()),
        keep in prop::collection::vec(any::<bool>(), METRICS.len()),
        breakeven_s in prop_oneof![Just(f64::NAN), Just(-1.0), Just(0.0), Just(1e300), 0.0f64..1e4],
        standby_s in prop_oneof![Just(f64::NAN), Just(-1.0), Just(f64::INFINITY), 0.0f64..1e9],
        tail in prop_oneof![Just(String::new()), texty(60)],
    ) {
        let mut text = String::new();
        for ((line, v), k) in METRICS.iter().zip(&values).zip(&keep) {
            if *k {
                text.push_str(&line.replace("{}", v));
                text.push('\n');
            }
        }
        text.push_str(&tail);
        let dir = tempfile::tempdir().unwrap();
        let config = status_files(dir.path(), &text, breakeven_s, standby_s);
        let registry = lull_live::default_registry();
        for json in [false, true] {
            let _ = lull_live::admin::status::report(&config, json, &registry, &[]);
        }
    }
}

/// The status property's set-up reads: with every sample present and
/// plain values, `lull status` shows the disk and its shadow evaluation.
#[test]
fn the_status_set_up_reads() {
    // Not a dry run (`lull_dry_run 0`).
    let text: String = METRICS
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}\n", l.replace("{}", &i.to_string())))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let config = status_files(dir.path(), &text, 72.4, 0.0);
    let registry = lull_live::default_registry();
    let out = lull_live::admin::status::report(&config, false, &registry, &[]).unwrap();
    assert!(out.contains("sdb"), "{out}");
    assert!(out.contains("drive       wd-red-plus"), "{out}");
    assert!(out.contains("saved 24h"), "{out}");
}
