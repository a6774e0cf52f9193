//! Results stay bit-identical (issue 9): a fixed sweep's `results.csv` is
//! compared with the hash of the file the straightforward path produced
//! when this test was written. Any change to the engine, a component or the
//! table writer that moves a single digit fails here, so performance work
//! cannot silently change results.
//!
//! If a change is *meant* to alter results, rerun, check the diff of the
//! file this test leaves in the temp directory, and update `EXPECTED`.

use lull_blktrace_replay::replay::ReplayOptions;
use lull_core::time::Nanos;
use lull_rank::{Grid, RankConfig, Shard, Source, rank};

/// FNV-1a of `results.csv` from the sweep below.
///
/// History (each an intended change of results, checked on the diff):
/// - `0xf99f_5c6d_b87c_88d0`: first pinned.
/// - `0x40b3_26c4_9260_4c86`: rate detectors signal the end of their idle
///   state; only `moving-average` rows moved (`predicted_s` shorter: its
///   sample ticks now withdraw under `earlier-of`), energies unchanged.
/// - `0x5924_d00f_c2d6_cb25`: issue 16: new columns `delayed_ops_per_hour`,
///   `spinups_per_day`, `worse_than_no_task`, and robust scores in
///   `x_scaled`/`y_scaled`/`distance`/`trace_rank`; every replay measure
///   unchanged (checked: `timer(t=1s) + fixed(d=10s)` on workstation
///   matches `lull replay` of the previous commit).
/// - `0xb014_86b6_7cde_b44b`: issue 15: the built-in workloads include the
///   structured `office`, `home-nas` and `db-checkpoint` (three more
///   traces); spindown rows carry `best_fixed_timeout_s`,
///   `best_fixed_energy_j` and `excess_vs_best_fixed`; the adaptive
///   timers' defaults scale with B (initial B, floor B/16, ceiling 16B)
///   and they shorten after a missed long period; `share(a, b)` is
///   `follow-share(a, b)` with the spindown loss (first covered instant).
///   Checked on the diff against a run of 7b3514a (which already had the
///   B-scaled adaptive defaults, unpinned): every replay measure of the
///   four old workloads is unchanged but the follow-share rows.
/// - `0xd07e_7af2_8967_e1b8`: `excess_vs_best_fixed` is undefined (NaN)
///   where the best fixed timeout is within 0.01 % of the oracle (the
///   half hour of `office`, all night: 11 rows that read 39–3,907 before,
///   and 1.0 for the oracle's row, optimal like the best fixed timeout);
///   nothing else moved.
/// - `0xa098_73f5_b4af_eb78`: issue 29: spindown rows carry
///   `window_clairvoyant_energy_j` and `gain_vs_clairvoyant` (the
///   clairvoyant per-10-minute timer); with those two columns dropped the
///   file hashes to the previous value: nothing else moved.
/// - `0x3569_0298_d251_0cc5`: issue 35: the built-in workloads include
///   `iid-exp` and `iid-pareto` (independent gaps, two more traces, last);
///   with their rows dropped the file hashes to the previous value:
///   nothing else moved.
/// - `0xc3c5_1832_2958_4fbe`: issue 29: the built-in workloads include
///   `cron-server` (one more trace, after `db-checkpoint`); with its rows
///   dropped and the later `trace_index`es renumbered, the file hashes to
///   the previous value: nothing else moved.
/// - `0xad53_8e72_486e_784b`: the adaptive timers' and backoffs' lengths
///   are kept exactly through halvings (`lull_detectors::adjust::Bounded`
///   in `f64` nanoseconds, rounded to the nearest when used) instead of
///   truncated to whole nanoseconds: three rows moved, those of
///   `adapt-timer-arith-geom(step=100ms) + backoff-arith-geom(step=1s)` on
///   `news`, `database` and `db-checkpoint`, by tens of nanoseconds of
///   predicted time (`predicted_s` 1306.587219127 → 1306.58721912 on
///   `news`; energies in the eleventh digit); nothing else.
/// - `0x8cd5_272a_8a22_b500`: the oracle's own `excess_vs_best_fixed` is
///   0 where the best fixed timeout is within 0.01 % of it (it read 1.0,
///   "as good as the best fixed timeout"): one row moved, the oracle's on
///   `office`; nothing else.
/// - `0xbf97_5d67_6abb_02d4`: issue 75: spindown is ranked on seconds
///   waited behind spin-ups per hour (`wait_s_per_hour`, a new column),
///   not delayed requests per hour. Checked on the diff: besides the new
///   column only `y_scaled`, `distance` and `trace_rank` moved (they come
///   from the cost axis); every replay measure is unchanged.
const EXPECTED: u64 = 0xbf97_5d67_6abb_02d4;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn registry() -> lull_core::registry::Registry {
    let mut r = lull_core::registry::Registry::new();
    lull_detectors::register(&mut r);
    lull_skeptics::register(&mut r);
    r
}

fn sweep(jobs: usize, out: &std::path::Path) -> Vec<u8> {
    let specs = [
        "timer(t=100ms) + fixed(d=10s)",
        "timer(t=1s) + fixed(d=10s)",
        "timer(t=10s) + average(n=10)",
        "adapt-timer-arith-geom(step=100ms) + backoff-arith-geom(step=1s)",
        "adapt-timer-geom-geom() + fixed(d=10s)",
        "event-window(n=10, rate=1) + fixed(d=10s)",
        "moving-average(rate=1) + backoff-geom-geom()",
        "dpll(period=30s) + fixed(d=10s)",
        "random-timer(breakeven=3s) + fixed(d=10s)",
        "low-pass(min=3s; timer(t=1s) + average(n=10))",
        "follow-share(timer(t=1s) + fixed(d=10s), event-window(n=10, rate=1) + fixed(d=10s))",
    ];
    let cfg = RankConfig {
        sources: Source::all_builtin(Nanos::from_secs(1800), 7),
        grid: Grid {
            specs: specs.iter().map(|s| s.to_string()).collect(),
            references: vec!["oracle(min=3s)".into()],
            lenient: false,
        },
        grid_name: "golden".into(),
        replay: ReplayOptions {
            task: "spindown".into(),
            ..ReplayOptions::default()
        },
        jobs: Some(jobs),
        shard: Shard::ALL,
        disk: None,
        lenient: false,
        progress: false,
        out: out.to_path_buf(),
        score: lull_rank::Mode::Robust,
        limits: lull_rank::Limits::default(),
        validate: None,
    };
    rank(&cfg, &registry()).expect("the golden sweep runs");
    std::fs::read(out.join("results.csv")).expect("results.csv")
}

#[test]
fn a_fixed_sweep_gives_bit_identical_results() {
    let keep = std::env::temp_dir().join(format!("lull-golden-{}", std::process::id()));
    let one = sweep(1, &keep);
    let two = tempfile::tempdir().unwrap();
    assert_eq!(
        one,
        sweep(2, two.path()),
        "results depend on the number of threads"
    );
    let hash = fnv1a(&one);
    assert_eq!(
        hash,
        EXPECTED,
        "results.csv changed: FNV-1a {hash:#018x}; the file is at {}",
        keep.join("results.csv").display()
    );
    std::fs::remove_dir_all(&keep).ok();
}
