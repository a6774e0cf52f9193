//! Test support shared by lull's crates (a dev-dependency only; never
//! published).
//!
//! **Why it exists.** A property test pins its case count with
//! `ProptestConfig::with_cases(n)` because the properties differ by orders
//! of magnitude in cost (a whole-trace replay against a parser fed a few
//! bytes). But a pinned count ignores `PROPTEST_CASES`, so a soak run could
//! not ask for more, and a property that fails for one seed in a thousand
//! stays hidden until CI draws that seed. [`cases`] keeps each test's
//! default for the fast suite and lets `scripts/soak.sh` raise every count
//! at once:
//!
//! - `PROPTEST_CASES=N`: every property runs `N` cases (proptest's own
//!   variable, honoured as proptest documents it);
//! - otherwise `LULL_PROPTEST_SCALE=K`: every property runs `K` times its
//!   default, so the expensive ones grow in proportion.
//!
//! The seed is proptest's: `PROPTEST_RNG_SEED=S` makes a run repeatable,
//! and the soak script sets and prints a fresh one per run. With
//! `LULL_SOAK_LOG=FILE` every property appends its name and case count to
//! `FILE`, so the script can say how many cases ran.

use proptest::test_runner::Config;

/// The environment variable that multiplies every property's default case
/// count (when `PROPTEST_CASES` is not set).
pub const SCALE_VAR: &str = "LULL_PROPTEST_SCALE";

/// A proptest configuration of `default` cases, or what the environment
/// asks for (see the [crate docs](crate)). Everything else, the seed and
/// the failure persistence included, is proptest's default.
///
/// ```
/// // In a test file:
/// // proptest! {
/// //     #![proptest_config(lull_testkit::cases(64))]
/// //     #[test]
/// //     fn addition_commutes(a in 0u32..1000, b in 0u32..1000) { ... }
/// // }
/// let config = lull_testkit::cases(64);
/// assert!(config.cases >= 1);
/// ```
pub fn cases(default: u32) -> Config {
    let cases = resolve(
        default,
        std::env::var("PROPTEST_CASES").ok().as_deref(),
        std::env::var(SCALE_VAR).ok().as_deref(),
    );
    if let Some(log) = std::env::var_os(LOG_VAR) {
        record(&log, cases);
    }
    Config {
        cases,
        ..Config::default()
    }
}

/// The environment variable naming the file where each property records
/// its case count (one line: the test's name, a tab, the count).
pub const LOG_VAR: &str = "LULL_SOAK_LOG";

/// Appends this test's name (libtest names its thread after it) and its
/// case count to `log`. A soak run's bookkeeping: failing to write is said
/// on stderr and changes nothing else.
fn record(log: &std::ffi::OsStr, cases: u32) {
    use std::io::Write;
    let name = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string();
    let line = format!("{name}\t{cases}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "lull-testkit: cannot append to {}: {e}",
            log.to_string_lossy()
        );
    }
}

/// The case count for `default` given the two variables' values. A value
/// that does not parse is ignored, as proptest ignores a bad
/// `PROPTEST_CASES` (with a warning of its own).
fn resolve(default: u32, absolute: Option<&str>, scale: Option<&str>) -> u32 {
    if let Some(n) = absolute.and_then(|v| v.trim().parse::<u32>().ok()) {
        return n.max(1);
    }
    match scale.and_then(|v| v.trim().parse::<u32>().ok()) {
        Some(k) => default.saturating_mul(k.max(1)),
        None => default,
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn default_unless_asked() {
        assert_eq!(resolve(64, None, None), 64);
        assert_eq!(resolve(64, Some("1000"), Some("10")), 1000);
        assert_eq!(resolve(64, None, Some("10")), 640);
        assert_eq!(resolve(64, Some("junk"), Some("3")), 192);
        assert_eq!(resolve(64, Some("0"), None), 1);
        assert_eq!(resolve(64, None, Some("0")), 64);
        assert_eq!(resolve(u32::MAX, None, Some("2")), u32::MAX);
    }
}
