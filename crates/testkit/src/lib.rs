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
//!
//! Beside it: [`probe`], what a crate's `build.rs` asks of the machine
//! (a tool, root, loop devices, the shared traces) so that a test that
//! cannot run here is ignored with its reason; [`skip`], the run-time
//! fallback for what a probe cannot know; and reads of an engine's action
//! log that several crates' tests make alike ([`finished_declared`],
//! [`start_instants`]), so that a check added to one (every stop follows a
//! start) holds in all.
//!
//! The features `proptest` and `lull-core` (both on by default) bring
//! [`cases`] and the action-log reads; a build script that only probes
//! turns them off and builds nothing but std.

pub mod probe;

#[cfg(feature = "proptest")]
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
#[cfg(feature = "proptest")]
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
#[cfg(feature = "proptest")]
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

/// The environment variable naming the file of skips a CI run allows
/// (`.ci/skips`): set, a test that skips without being listed there fails.
pub const SKIPS_VAR: &str = "LULL_CI_SKIPS";
/// The environment variable naming the file where each skip is recorded
/// (one line: the test's key, a tab, the reason), for `.ci/run` to count.
pub const SKIP_LOG_VAR: &str = "LULL_SKIP_LOG";

/// This test's key: `package::test-binary::test` (`lull-live::deb::
/// the_package_holds_the_daemon_its_unit_and_a_conffile`), from what cargo
/// and libtest tell a running test (`CARGO_PKG_NAME`, the executable's
/// name without cargo's hash, and the thread libtest names after the test).
pub fn test_key() -> String {
    let pkg = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "?".into());
    let bin = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
            _ => s,
        })
        .unwrap_or_else(|| "?".into());
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string();
    format!("{pkg}::{bin}::{test}")
}

/// The calling test skips, for `why` (a tool, a trace sample, root or a
/// loop device it needs is missing). It says so, records it for the CI
/// summary (`$LULL_SKIP_LOG`), and, in a CI run (`$LULL_CI_SKIPS` names
/// the allowed skips), panics unless the test is listed there: CI
/// installs what tests need, so a skip there is either known and
/// explained, or a failure. The caller returns after it.
///
/// It is the fallback for what a build-time [`probe`] cannot know (an
/// engine's daemon not running, a download failing, a tool removed since
/// the build). Outside CI its line is captured with the test's output and
/// the test shows as `ok`: where a probe can know, the test carries an
/// `ignore` attribute on the probe's `cfg` as well, so that it shows as
/// ignored, with its reason. `.ci/run` fails on an ignored test that
/// `.ci/skips` does not list, as this fails on such a skip.
///
/// `.ci/skips` holds one test key per line ([`test_key`]; a trailing `*`
/// matches a prefix), then whitespace and the reason; `#` starts a
/// comment.
pub fn skip(why: &str) {
    let key = test_key();
    println!("skipping {key}: {why}");
    if let Some(log) = std::env::var_os(SKIP_LOG_VAR) {
        use std::io::Write;
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| writeln!(f, "{key}\t{why}"));
    }
    if let Some(list) = std::env::var_os(SKIPS_VAR) {
        let text = std::fs::read_to_string(&list).unwrap_or_default();
        assert!(
            allowed(&text, &key),
            "{key} skipped in a CI run ({why}), and {} does not list it: install what it needs in .ci/run, or list it there with the reason",
            list.to_string_lossy()
        );
    }
}

/// Whether the skips file `text` lists `key`.
fn allowed(text: &str, key: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter_map(|l| l.split_whitespace().next())
        .any(|k| match k.strip_suffix('*') {
            Some(prefix) => key.starts_with(prefix),
            None => k == key,
        })
}

/// The case count for `default` given the two variables' values. A value
/// that does not parse is ignored, as proptest ignores a bad
/// `PROPTEST_CASES` (with a warning of its own).
#[cfg(feature = "proptest")]
fn resolve(default: u32, absolute: Option<&str>, scale: Option<&str>) -> u32 {
    if let Some(n) = absolute.and_then(|v| v.trim().parse::<u32>().ok()) {
        return n.max(1);
    }
    match scale.and_then(|v| v.trim().parse::<u32>().ok()) {
        Some(k) => default.saturating_mul(k.max(1)),
        None => default,
    }
}

/// The fields of one line of the lab's CSV output (`ranking.csv`,
/// `results.csv`): split at commas outside double quotes, the quotes
/// dropped (specs are quoted when they hold commas, and hold no quotes).
///
/// ```
/// let f = lull_testkit::csv_fields("1,\"and(a, b)\",x");
/// assert_eq!(f, ["1", "and(a, b)", "x"]);
/// ```
pub fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The intervals `[start, stop)` an engine's finished run declared
/// ([`lull_core::engine::declared_intervals`]), checked as a finished log
/// must be: every stop follows a start (the library skips a stray one) and
/// no run is left open (`finish` stops the task).
///
/// # Panics
/// When the log breaks either rule, naming it.
#[cfg(feature = "lull-core")]
pub fn finished_declared(
    log: &[lull_core::engine::LogEntry],
) -> Vec<(lull_core::time::Nanos, lull_core::time::Nanos)> {
    use lull_core::actuator::Command;
    use lull_core::engine::LogEntry;
    let (out, open) = lull_core::engine::declared_intervals(log);
    let stops = log
        .iter()
        .filter(|e| {
            matches!(
                e,
                LogEntry::Command {
                    command: Command::Stop,
                    ..
                }
            )
        })
        .count();
    assert_eq!(out.len(), stops, "every stop after a start");
    assert!(open.is_none(), "finish stops the task: a run is left open");
    out
}

/// The instants at which an engine's action log starts its task (renewals
/// included: [`lull_core::actuator::Command::Start`]), in log order.
#[cfg(feature = "lull-core")]
pub fn start_instants(log: &[lull_core::engine::LogEntry]) -> Vec<lull_core::time::Nanos> {
    use lull_core::actuator::Command;
    use lull_core::engine::LogEntry;
    log.iter()
        .filter_map(|e| match e {
            LogEntry::Command {
                at,
                command: Command::Start { .. },
            } => Some(*at),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn skips_are_listed_by_key_or_prefix() {
        let list = "# comment\nlull-live::deb::* cargo-deb is not installed\n\
                    lull::cli::one   no traces  # why\n";
        assert!(super::allowed(list, "lull-live::deb::the_package"));
        assert!(super::allowed(list, "lull::cli::one"));
        assert!(!super::allowed(list, "lull::cli::one_more"));
        assert!(!super::allowed(list, "lull-live::debx::a"));
        assert!(!super::allowed("", "x"));
    }

    #[test]
    #[cfg(feature = "proptest")]
    fn default_unless_asked() {
        use super::resolve;
        assert_eq!(resolve(64, None, None), 64);
        assert_eq!(resolve(64, Some("1000"), Some("10")), 1000);
        assert_eq!(resolve(64, None, Some("10")), 640);
        assert_eq!(resolve(64, Some("junk"), Some("3")), 192);
        assert_eq!(resolve(64, Some("0"), None), 1);
        assert_eq!(resolve(64, None, Some("0")), 64);
        assert_eq!(resolve(u32::MAX, None, Some("2")), u32::MAX);
    }
}
