//! Grids: which detector networks a ranking sweeps.
//!
//! A grid is a list of one-line network specs (SPEC §3.2) plus one
//! reference network, by default the offline `oracle()`. The built-in
//! [`default_grid`] follows the paper's sweep (§4): every start detector
//! family at several settings, each with fixed, backoff and average duration
//! predictors, and a few skeptic networks. Grids are also read from TOML
//! ([`Grid::from_toml`]):
//!
//! ```toml
//! # Networks, one spec string each.
//! specs = ["timer(t=1s) + fixed(d=10s)", "share(timer(t=1s), timer(t=5s))"]
//!
//! # Cartesian templates: `{name}` in `spec` takes every value of the
//! # array `name`; all combinations are generated, the first variable
//! # (in alphabetical order) varying slowest.
//! [[template]]
//! spec = "event-window(n={n}, rate={rate}) + {duration}"
//! n = [2, 10, 100]
//! rate = [0.1, 1]
//! duration = ["fixed(d=10s)", "average(n=10)"]
//!
//! # Optional: the reference row ("" for none); default "oracle()".
//! reference = "oracle()"
//! # Optional: also sweep the built-in default grid of the task.
//! default = false
//! ```
//!
//! Resolving a grid against a [`Registry`] validates each network. In the
//! default grid, networks naming a component this build does not register
//! are skipped with a note (the catalogue grows as components land); in a
//! user grid every network must build, or the grid is rejected.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use lull_core::registry::Registry;
use lull_core::spec::{ComponentSpec, NetworkSpec, NodeKind};

/// The name that selects the built-in grid.
pub const DEFAULT: &str = "default";

/// Why a grid cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum GridError {
    /// The TOML document is malformed.
    #[error("grid TOML: {0}")]
    Toml(String),
    /// A template is inconsistent.
    #[error("grid template `{template}`: {reason}")]
    Template {
        /// The template's spec.
        template: String,
        /// What is wrong.
        reason: String,
    },
    /// A network does not parse or build.
    #[error("grid network `{spec}`: {reason}")]
    Network {
        /// The spec.
        spec: String,
        /// What is wrong.
        reason: String,
    },
    /// Nothing left to run.
    #[error("the grid has no network that builds with this registry")]
    Empty,
}

/// An unresolved grid: spec strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    /// The networks to rank, in order.
    pub specs: Vec<String>,
    /// The reference rows, shown but not ranked, in report order: network
    /// specs (`auto`, `oracle()`) or [`BEST_FIXED`]. A reference that does
    /// not build is skipped with a note, in any grid.
    pub references: Vec<String>,
    /// Whether unbuildable networks are skipped (built-in grid) rather than
    /// rejected (user grid).
    pub lenient: bool,
}

/// Timer settings of the default grid: log-spaced from B/16 to 16·B.
pub const TIMERS: [&str; 9] = ["B/16", "B/8", "B/4", "B/2", "B", "2B", "4B", "8B", "16B"];

/// The start detectors of the default grid, by family. Durations are
/// written relative to the device's break-even time `B`, rate thresholds
/// relative to each trace's mean request rate `R` ([`with_rate`]).
fn default_starts() -> Vec<String> {
    let mut v = Vec::new();
    for t in TIMERS {
        v.push(format!("timer(t={t})"));
    }
    // Adaptive timers start at B and move between B/16 and 16B (their
    // defaults); the step is a fraction of B.
    for kind in ["arith-arith", "arith-geom", "geom-arith"] {
        for step in ["B/8", "B/2"] {
            v.push(format!("adapt-timer-{kind}(step={step})"));
        }
    }
    v.push("adapt-timer-geom-geom()".into());
    v.push("random-timer()".into());
    // Helmbold et al.'s timeout experts (a start detector, no inputs).
    v.push("share()".into());
    v.push("share(decision=median)".into());
    for n in EVENT_WINDOW_N {
        for rate in EVENT_WINDOW_RATE {
            v.push(format!("event-window(n={n}, rate={rate})"));
        }
    }
    for rate in ["R/16", "R/4", "R"] {
        v.push(format!("moving-average(rate={rate})"));
    }
    v.push("time-window(window=B, rate=R/4)".into());
    v.push("adaptive-rate(rate=R/4, min=R/1000, max=1000R)".into());
    v.push("rate-change(rate=R/4)".into());
    v.push("dpll(period=30s)".into());
    v
}

/// Window sizes of the default event-window sweep (Figure 19).
pub const EVENT_WINDOW_N: [u32; 6] = [2, 5, 10, 50, 100, 1000];
/// Rate thresholds of the default event-window sweep, relative to the
/// trace's mean request rate `R`: a window is "idle" when its rate falls
/// to a sixteenth, a quarter, the mean, or stays under four times it.
pub const EVENT_WINDOW_RATE: [&str; 4] = ["R/16", "R/4", "R", "4R"];

/// Whether a task's measures can depend on the duration predictor under
/// `policy`. For `spindown` under `earlier-of` or `when-busy` only a
/// request wakes the disk, so the predicted end changes nothing the task
/// measures, and the default grid does not multiply its start detectors by
/// duration predictors.
pub fn durations_matter(task: &str, policy: lull_core::actuator::StopPolicy) -> bool {
    use lull_core::actuator::StopPolicy;
    let base = crate::base_task(task);
    !(base == "spindown" && matches!(policy, StopPolicy::EarlierOf | StopPolicy::WhenBusy))
}

/// The default grid of `task` under stop `policy`, derived from the
/// device and the workload rather than from one drive:
///
/// - timers log-spaced from `B/16` to `16B`, the adaptive timers (initial
///   `B`, floor `B/16`, ceiling `16B`, steps `B/8` and `B/2`),
///   `random-timer()` (break-even `B`), `share()` and `share(decision=median)`
///   (timeout experts) and, for spin-down, `periodic()` (share's timeout
///   gated by learned periodic arrivals), where `B` is the break-even time
///   of the task's device ([`Registry::with_breakeven`]);
/// - the rate detectors (event windows, moving average, time window,
///   adaptive rate, rate change) at thresholds relative to each trace's
///   mean request rate `R` (requests / span): `R/16`, `R/4`, `R`, `4R`;
///   for spin-down their sampling periods too are relative to `B`
///   (`moving-average` and `rate-change` sample every `B/4`,
///   `adaptive-rate` judges over `4B`, so that the grid's decisions scale
///   with `B`: `tests/scale_invariance.rs`); and `dpll` on the usual 30 s
///   sync period (a
///   property of the host's sync daemon, wall-clock by nature);
/// - each start detector × four duration predictors (`fixed(d=4B)`,
///   `backoff-arith-geom(step=B/4, initial=B)`,
///   `backoff-geom-geom(initial=B)`, `average(n=10)`, for spin-down with
///   `initial=B`; the fixed duration and the average's first prediction
///   are 1 s for the tasks that move I/O, whose predictions must fit
///   between requests) — unless the task cannot tell them apart
///   ([`durations_matter`]), when each start detector runs alone;
/// - skeptic networks: `follow-share` over four good predictors (best and
///   weighted majority), `low-pass`, `vote`, `and`, `quality`,
///   `violation-rate` and `time-of-day` filters; for `writeback` and
///   `cleaning` also the background regulators (preemption gate, latency
///   target). The skeptics that judge predicted durations keep a duration
///   predictor where the start detectors run alone (`low-pass` over
///   `average(n=10, initial=B)`, `quality` over `fixed(d=B)`: did the
///   declaration hold long enough to pay), since without one they would pass
///   everything; `violation-rate`, whose threshold is a rate per second that
///   does not scale with `B`, is left out of the spin-down grid.
///   `time-of-day` learns the busiest hours from a day's requests, so on a
///   trace of one day it passes everything and is reported as equivalent to
///   its input; `lull rank --warm-up`, where every network has learned from
///   another day first, ranks it on what it learned.
///
/// Components this build does not register (or that need a break-even
/// time the registry does not have) are skipped with a note when the grid
/// is resolved.
pub fn default_grid_for(task: &str, policy: lull_core::actuator::StopPolicy) -> Grid {
    let moves_io = matches!(crate::base_task(task), "writeback" | "cleaning");
    let fixed = if moves_io {
        "fixed(d=1s)"
    } else {
        "fixed(d=4B)"
    };
    let durations: Vec<&str> = if durations_matter(task, policy) {
        vec![
            fixed,
            "backoff-arith-geom(step=B/4, initial=B)",
            "backoff-geom-geom(initial=B)",
            "average(n=10)",
        ]
    } else {
        Vec::new()
    };
    let with = |s: &str| -> String {
        match durations.first() {
            Some(d) => format!("{s} + {d}"),
            None => s.to_string(),
        }
    };
    let mut specs = Vec::new();
    for s in default_starts() {
        if durations.is_empty() {
            specs.push(s);
        } else {
            for d in &durations {
                specs.push(format!("{s} + {d}"));
            }
        }
    }
    if crate::base_task(task) == "spindown" {
        // The periodic estimator with share's timeout behind it (issue
        // 29), `auto`'s gate as a network of its own. Spin-down only: on
        // the tasks that move I/O `B` is a disk access, and periods of
        // milliseconds are the foreground's request spacing.
        specs.push(with("periodic()"));
    }
    let members = [
        with("timer(t=B)"),
        with("adapt-timer-arith-geom(step=B/8)"),
        with("event-window(n=10, rate=R/4)"),
        with("moving-average(rate=R/4)"),
    ]
    .join(", ");
    specs.push(format!("follow-share({members})"));
    specs.push(format!("follow-share(follow=majority; {members})"));
    specs.push(format!("follow-share(eta=8, alpha=0.05; {members})"));
    // The skeptics that judge predicted durations get a duration predictor
    // even where the task cannot tell durations apart: without one
    // `low-pass`, `quality` and `violation-rate` pass every prediction and
    // each network would be its input again. `low-pass(min=B)` needs one
    // whose predictions vary (a fixed `4B` or 1 s always passes it);
    // `quality` judges whether a declaration held for `fixed(d=B)`, that is
    // whether the spin-down it prompts pays for itself.
    // (`initial=B`: before any period is seen it predicts what passes, a
    // length that scales with `B` as the rest of the spin-down grid does.)
    specs.push("low-pass(min=B; timer(t=B/4) + average(n=10, initial=B))".into());
    specs.push(
        "low-pass(min=B; adapt-timer-arith-geom(step=B/8) + average(n=10, initial=B))".into(),
    );
    specs.push(format!(
        "vote(threshold=2; {}, {}, {})",
        with("timer(t=B)"),
        with("event-window(n=10, rate=R/4)"),
        with("moving-average(rate=R/4)")
    ));
    specs.push(format!(
        "and({}, {})",
        with("timer(t=B/4)"),
        with("event-window(n=50, rate=R/4)")
    ));
    if durations.is_empty() {
        specs.push("quality(threshold=0.8; timer(t=B) + fixed(d=B))".into());
    } else {
        specs.push(format!("quality(threshold=0.8; {})", with("timer(t=B)")));
    }
    // `violation-rate`'s threshold is violations per second, which does not
    // scale with `B`: for spin-down, `quality` judges the same outcomes as a
    // share of the declarations.
    if crate::base_task(task) != "spindown" {
        specs.push(format!(
            "violation-rate(max=0.1; {})",
            with("adapt-timer-arith-geom(step=B/8)")
        ));
    }
    specs.push(format!("time-of-day(busiest=7; {})", with("timer(t=B)")));
    if moves_io {
        // Background regulation (issue 11): keep a task that moves I/O
        // from hurting the foreground.
        specs.push("preempt-gate(p=20ms; timer(t=0s))".into());
        specs.push("preempt-gate(p=500ms; timer(t=0s))".into());
        specs.push("preempt-gate-auto(timer(t=0s))".into());
        specs.push("latency-target(target=50ms, percentile=95; timer(t=0s) + fixed(d=1s))".into());
    }
    if crate::base_task(task) == "spindown" {
        specs = specs.iter().map(|s| scale_with_b(s)).collect();
    }
    Grid {
        specs,
        references: default_references_for(task),
        lenient: true,
    }
}

/// The sampling periods of the rate detectors written relative to `B`, as
/// the spin-down grid has them (issue 35): `moving-average` and
/// `rate-change` sample every `B/4` instead of every second, and
/// `adaptive-rate` judges a prediction without a duration over `4B`
/// instead of 10 s, so that every network of the spin-down grid but
/// `dpll(period=30s)` and `time-of-day` (wall-clock by nature) decides
/// the same on a trace and drive scaled together
/// (`crates/rank/tests/scale_invariance.rs`); under a stop policy that follows
/// predicted ends, `average(n=10)` predicts `B` rather than 1 s before it has
/// seen a period, and the backoffs keep their estimates between `B/256` and
/// `256B` rather than 10 ms and 10 minutes (11.7 ms and 12.8 minutes on the
/// paper's drive, `B` = 3 s; `B` over and times a power of two, exact
/// whenever `B` itself is scaled by one). The tasks that move I/O keep the defaults: their `B`
/// is a disk access (milliseconds), and sampling that often would cost more
/// than the detector learns.
fn scale_with_b(spec: &str) -> String {
    spec.replace("moving-average(rate=", "moving-average(period=B/4, rate=")
        .replace("rate-change(rate=", "rate-change(period=B/4, rate=")
        .replace("adaptive-rate(rate=", "adaptive-rate(horizon=4B, rate=")
        .replace("average(n=10)", "average(n=10, initial=B)")
        .replace(
            "backoff-arith-geom(step=B/4, initial=B)",
            "backoff-arith-geom(step=B/4, initial=B, floor=B/256, ceiling=256B)",
        )
        .replace(
            "backoff-geom-geom(initial=B)",
            "backoff-geom-geom(initial=B, floor=B/256, ceiling=256B)",
        )
}

/// The default grid of `task` under the task's default stop policy
/// ([`default_grid_for`]).
pub fn default_grid(task: &str) -> Grid {
    default_grid_for(
        task,
        lull_blktrace_replay::replay::default_policy(crate::base_task(task)),
    )
}

/// The pseudo-reference that stands for the best fixed timeout in
/// hindsight: one more job per trace replays `timer(t=T)` at the timeout
/// `T` the task reports (`best_fixed_timeout_s`, see
/// [`crate::sweep::best_fixed_row`]), or, for a task that reports none, the
/// grid's plain timer with the least energy stands in
/// ([`crate::analysis::complete`]).
pub const BEST_FIXED: &str = "best-fixed";

/// The default reference rows, in report order: the named network `auto`,
/// the best fixed timer in hindsight, the offline oracle.
pub fn default_references() -> Vec<String> {
    vec!["auto".into(), BEST_FIXED.into(), "oracle()".into()]
}

/// hd-idle's default: spin down after 10 minutes without I/O. Spin-down
/// rankings carry it as a reference row, so the report can say what a
/// network saves against the tool most users run today.
pub const HD_IDLE: &str = "timer(t=600s)";

/// The default reference rows of `task`: [`default_references`], and for
/// spin-down hd-idle's 10 minutes ([`HD_IDLE`]) after `auto`.
pub fn default_references_for(task: &str) -> Vec<String> {
    let mut refs = default_references();
    if crate::base_task(task) == "spindown" {
        refs.insert(1, HD_IDLE.into());
    }
    refs
}

/// The mean-rate placeholder of rate thresholds: `R`, `4R`, `R/16`.
const RATE: char = 'R';

/// Whether `text` writes a parameter relative to the trace's mean request
/// rate `R`.
pub fn rate_relative(text: &str) -> bool {
    substitute_rate(text, 1.0, format_rate).is_some_and(|s| s != text)
}

/// `text` with every parameter value written relative to the trace's mean
/// request rate (`R`, `4R`, `0.5R`, `R/16`, `3R/2`) replaced by the number
/// of IO/s for `rate`; `None` when such a value is malformed.
pub fn with_rate(text: &str, rate: f64) -> Option<String> {
    substitute_rate(text, rate, format_rate)
}

/// [`with_rate`] writing each value with `format` (every digit, say,
/// where `with_rate` rounds for people).
pub fn with_rate_as(text: &str, rate: f64, format: impl Fn(f64) -> String) -> Option<String> {
    substitute_rate(text, rate, format)
}

fn substitute_rate(text: &str, rate: f64, format: impl Fn(f64) -> String) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    // A parameter value runs from `=` to the next `,`, `)` or `;`.
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        out.push_str(&rest[..=eq]);
        rest = &rest[eq + 1..];
        let end = rest.find([',', ')', ';']).unwrap_or(rest.len());
        let value = &rest[..end];
        if value.contains(RATE) {
            out.push_str(&format(rate * rate_factor(value.trim())?));
        } else {
            out.push_str(value);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    Some(out)
}

/// The multiplier of a rate-relative value (`4R` → 4, `R/16` → 1/16).
pub fn rate_factor(value: &str) -> Option<f64> {
    let (num, after) = value.split_once(RATE)?;
    let num = num.trim().trim_end_matches('*');
    let mul: f64 = if num.is_empty() {
        1.0
    } else {
        num.parse().ok()?
    };
    let div: f64 = match after.trim() {
        "" => 1.0,
        d => d.strip_prefix('/')?.trim().parse().ok()?,
    };
    (mul.is_finite() && mul >= 0.0 && div.is_finite() && div > 0.0).then(|| mul / div)
}

/// A rate as a spec number: six significant digits, never in exponent
/// form (the spec grammar reads plain decimals).
fn format_rate(r: f64) -> String {
    let digits = (5 - r.abs().max(1e-12).log10().floor() as i32).clamp(0, 15) as usize;
    let s = format!("{r:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GridDoc {
    #[serde(default)]
    specs: Vec<String>,
    #[serde(default)]
    template: Vec<BTreeMap<String, toml::Value>>,
    reference: Option<String>,
    references: Option<Vec<String>>,
    #[serde(default)]
    default: bool,
}

impl Grid {
    /// Reads a grid document (format in the module docs). `task` picks the
    /// default grid when the document asks to include it.
    pub fn from_toml(text: &str, task: &str) -> Result<Grid, GridError> {
        let doc: GridDoc = toml::from_str(text).map_err(|e| GridError::Toml(e.to_string()))?;
        let mut specs = Vec::new();
        if doc.default {
            specs.extend(default_grid(task).specs);
        }
        specs.extend(doc.specs);
        for t in doc.template {
            specs.extend(expand_template(t)?);
        }
        let references = match (doc.references, doc.reference) {
            (Some(_), Some(_)) => {
                return Err(GridError::Toml(
                    "give `reference` or `references`, not both".into(),
                ));
            }
            (Some(list), None) => list.into_iter().filter(|r| !r.trim().is_empty()).collect(),
            (None, Some(r)) if r.trim().is_empty() => Vec::new(),
            (None, Some(r)) => vec![r],
            (None, None) => default_references_for(task),
        };
        Ok(Grid {
            specs,
            references,
            lenient: false,
        })
    }
}

fn value_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Expands one `[[template]]` table into its cartesian product.
fn expand_template(mut t: BTreeMap<String, toml::Value>) -> Result<Vec<String>, GridError> {
    let spec = match t.remove("spec") {
        Some(toml::Value::String(s)) => s,
        _ => {
            return Err(GridError::Template {
                template: "?".into(),
                reason: "needs a string `spec`".into(),
            });
        }
    };
    let bad = |reason: String| GridError::Template {
        template: spec.clone(),
        reason,
    };
    let mut vars: Vec<(String, Vec<String>)> = Vec::new();
    for (k, v) in t {
        let values = match &v {
            toml::Value::Array(a) => a.iter().map(value_text).collect::<Option<Vec<_>>>(),
            other => value_text(other).map(|s| vec![s]),
        }
        .ok_or_else(|| bad(format!("`{k}` must be a value or an array of values")))?;
        if values.is_empty() {
            return Err(bad(format!("`{k}` is an empty array")));
        }
        if !spec.contains(&format!("{{{k}}}")) {
            return Err(bad(format!("`{k}` is not used as {{{k}}} in the spec")));
        }
        vars.push((k, values));
    }
    // Every placeholder must have values.
    let mut rest = spec.as_str();
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| bad("unclosed `{`".into()))?;
        let name = &rest[open + 1..open + close];
        if !vars.iter().any(|(k, _)| k == name) {
            return Err(bad(format!("no values for {{{name}}}")));
        }
        rest = &rest[open + close + 1..];
    }
    let mut out = vec![spec.clone()];
    for (k, values) in &vars {
        let pat = format!("{{{k}}}");
        out = out
            .iter()
            .flat_map(|s| values.iter().map(|v| s.replace(&pat, v)))
            .collect();
    }
    Ok(out)
}

/// What a network is, for grouping and for parameter columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// The start detector family (`timer`, `event-window`, …); for a
    /// network whose sink is a skeptic, the skeptic's name (`share`).
    pub start_family: String,
    /// The duration predictor family (`fixed`, `average`, …,
    /// `no-duration`); for a skeptic network, its inputs' family when they
    /// all agree, else `mixed`.
    pub duration_family: String,
    /// The skeptic at the sink, if any.
    pub skeptic: Option<String>,
    /// Parameters as written, keyed `start.NAME`, `duration.NAME` or
    /// `skeptic.NAME` (positional arguments get their catalogue name).
    pub params: BTreeMap<String, String>,
    /// Offline (the oracle): a reference, never ranked.
    pub offline: bool,
}

fn add_params(
    out: &mut BTreeMap<String, String>,
    prefix: &str,
    c: &ComponentSpec,
    registry: &Registry,
) {
    let info = registry.info(&c.name);
    for (i, a) in c.args.iter().enumerate() {
        let key = match (&a.key, info) {
            (Some(k), _) => k.clone(),
            (None, Some(info)) => info
                .params
                .get(i)
                .map_or_else(|| format!("arg{i}"), |p| p.name.to_string()),
            (None, None) => format!("arg{i}"),
        };
        out.insert(format!("{prefix}.{key}"), a.value.clone());
    }
}

/// Describes a parsed network.
pub fn describe(spec: &NetworkSpec, registry: &Registry) -> Description {
    let mut params = BTreeMap::new();
    let offline = spec.nodes.iter().any(|n| match &n.kind {
        NodeKind::Predictor { start, .. } => registry.info(&start.name).is_some_and(|i| i.offline),
        NodeKind::Skeptic { .. } => false,
    });
    let sink = spec.sink_name().and_then(|s| spec.node(s));
    let (start_family, duration_family, skeptic) = match sink.map(|n| &n.kind) {
        Some(NodeKind::Predictor { start, duration }) => {
            add_params(&mut params, "start", start, registry);
            if let Some(d) = duration {
                add_params(&mut params, "duration", d, registry);
            }
            (
                start.name.clone(),
                duration
                    .as_ref()
                    .map_or_else(|| "no-duration".to_string(), |d| d.name.clone()),
                None,
            )
        }
        Some(NodeKind::Skeptic { skeptic, .. }) => {
            add_params(&mut params, "skeptic", skeptic, registry);
            let families: BTreeSet<String> = spec
                .nodes
                .iter()
                .filter_map(|n| match &n.kind {
                    NodeKind::Predictor { duration, .. } => Some(
                        duration
                            .as_ref()
                            .map_or_else(|| "no-duration".to_string(), |d| d.name.clone()),
                    ),
                    NodeKind::Skeptic { .. } => None,
                })
                .collect();
            let dur = if families.len() == 1 {
                families.into_iter().next().unwrap_or_default()
            } else {
                "mixed".to_string()
            };
            (skeptic.name.clone(), dur, Some(skeptic.name.clone()))
        }
        None => ("?".into(), "?".into(), None),
    };
    Description {
        start_family,
        duration_family,
        skeptic,
        params,
        offline,
    }
}

/// One network of a resolved grid.
#[derive(Clone, Debug)]
pub struct Network {
    /// Position in the grid (the reference rows come first).
    pub index: usize,
    /// The spec as written in the grid.
    pub text: String,
    /// The parsed spec (for a rate-relative network, with `R` = 1 IO/s:
    /// each trace builds its own, [`Network::spec_for`]).
    pub spec: NetworkSpec,
    /// Families and parameters.
    pub description: Description,
    /// Whether this is a reference row.
    pub reference: bool,
    /// Whether the spec writes a rate relative to the trace's mean
    /// request rate `R`.
    pub rate_relative: bool,
}

impl Network {
    /// The spec to run on a trace whose mean request rate is `rate` IO/s.
    pub fn spec_for(&self, rate: f64, registry: &Registry) -> Result<NetworkSpec, String> {
        if !self.rate_relative {
            return Ok(self.spec.clone());
        }
        let text = with_rate(&self.text, rate)
            .ok_or_else(|| format!("`{}`: a malformed rate relative to R", self.text))?;
        NetworkSpec::parse(&text, Some(registry)).map_err(|e| format!("`{text}`: {}", e.message))
    }
}

/// A grid checked against a registry.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The networks that build, reference rows first.
    pub networks: Vec<Network>,
    /// Whether the best fixed timer in hindsight is a reference row.
    pub best_fixed: bool,
    /// What was skipped and why, one line each.
    pub notes: Vec<String>,
}

impl Resolved {
    /// A stable fingerprint of the network list (FNV-1a over the specs), so
    /// shards of different grids are not merged.
    pub fn fingerprint(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let texts = self.networks.iter().map(|n| n.text.as_str());
        let extra = self.best_fixed.then_some(BEST_FIXED);
        for t in texts.chain(extra) {
            for b in t.bytes().chain([0u8]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("{h:016x}")
    }
}

/// Component names of a spec's shape that `registry` knows neither as a
/// component nor as a named network.
fn unknown_names(text: &str, registry: &Registry) -> Vec<String> {
    let Ok(shape) = NetworkSpec::parse(text, None) else {
        return Vec::new();
    };
    shape
        .nodes
        .iter()
        .flat_map(|n| match &n.kind {
            NodeKind::Predictor { start, duration } => {
                let mut v = vec![start.name.clone()];
                v.extend(duration.iter().map(|d| d.name.clone()));
                v
            }
            NodeKind::Skeptic { skeptic, .. } => vec![skeptic.name.clone()],
        })
        .filter(|name| registry.info(name).is_none() && registry.expand_network(name).is_none())
        .collect()
}

/// Parses and builds `text` (with `R` = 1 IO/s when it is rate-relative).
fn build_one(text: &str, registry: &Registry) -> Result<NetworkSpec, String> {
    let probe = with_rate(text, 1.0).ok_or("a malformed rate relative to R (write R, 4R, R/16)")?;
    let spec = NetworkSpec::parse(&probe, Some(registry)).map_err(|e| e.message)?;
    spec.build(registry).map_err(|e| e.to_string())?;
    Ok(spec)
}

/// Checks every network of `grid` against `registry`: duplicates are
/// dropped; in a lenient grid, networks that do not build are skipped with
/// a note (grouped by the missing component), in a strict one they are an
/// error. A reference row that does not build (`auto` before it is
/// registered) is skipped with a note in any grid.
pub fn resolve(grid: &Grid, registry: &Registry) -> Result<Resolved, GridError> {
    let mut networks = Vec::new();
    let mut notes = Vec::new();
    let mut missing: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut best_fixed = false;
    let all = grid
        .references
        .iter()
        .map(|r| (r, true))
        .chain(grid.specs.iter().map(|s| (s, false)));
    for (text, reference) in all {
        let text = text.trim().to_string();
        if !seen.insert(text.clone()) {
            continue;
        }
        if reference && text == BEST_FIXED {
            best_fixed = true;
            continue;
        }
        // Unknown component names first, so the note can name them.
        let unknown = unknown_names(&text, registry);
        let built = if unknown.is_empty() {
            build_one(&text, registry)
        } else {
            Err(format!(
                "unknown component{} {}",
                if unknown.len() > 1 { "s" } else { "" },
                unknown
                    .iter()
                    .map(|u| format!("`{u}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        };
        match built {
            Ok(spec) => {
                let rate_relative = rate_relative(&text);
                let mut description = describe(&spec, registry);
                // A rate-relative spec describes its written parameters.
                if let (true, Ok(shape)) = (rate_relative, NetworkSpec::parse(&text, None)) {
                    description.params = describe(&shape, registry).params;
                }
                networks.push(Network {
                    index: networks.len(),
                    rate_relative,
                    text,
                    spec,
                    description,
                    reference,
                });
            }
            Err(reason) if reference => {
                notes.push(format!("reference row `{text}` skipped: {reason}"));
            }
            Err(reason) if grid.lenient => {
                if unknown.is_empty() {
                    notes.push(format!("skipped `{text}`: {reason}"));
                } else {
                    for u in unknown {
                        *missing.entry(u).or_default() += 1;
                    }
                }
            }
            Err(reason) => return Err(GridError::Network { spec: text, reason }),
        }
    }
    for (name, count) in missing {
        notes.insert(
            0,
            format!(
                "skipped {count} network{} using `{name}`: not registered in this build",
                if count == 1 { "" } else { "s" }
            ),
        );
    }
    if networks.iter().all(|n| n.reference) {
        return Err(GridError::Empty);
    }
    Ok(Resolved {
        networks,
        best_fixed,
        notes,
    })
}

/// A one-line summary of a resolved grid, e.g. for logs.
pub fn summary(r: &Resolved) -> String {
    let mut families: BTreeMap<&str, usize> = BTreeMap::new();
    for n in r.networks.iter().filter(|n| !n.reference) {
        *families.entry(&n.description.start_family).or_default() += 1;
    }
    let mut s = format!(
        "{} networks",
        r.networks.iter().filter(|n| !n.reference).count()
    );
    let _ = write!(
        s,
        " ({})",
        families
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        let mut r = Registry::new();
        lull_detectors::register(&mut r);
        lull_skeptics::register(&mut r);
        r.with_breakeven(lull_core::time::Nanos::from_secs(3))
    }

    #[test]
    fn regulators_join_the_grid_of_tasks_that_move_io() {
        let r = registry();
        for task in ["writeback", "cleaning"] {
            let g = default_grid(task);
            let gates: Vec<_> = g
                .specs
                .iter()
                .filter(|s| s.starts_with("preempt-gate"))
                .collect();
            assert_eq!(gates.len(), 3, "{task}");
            assert!(
                g.specs.iter().any(|s| s.starts_with("latency-target")),
                "{task}"
            );
            for spec in g
                .specs
                .iter()
                .filter(|s| s.starts_with("preempt") || s.starts_with("latency"))
            {
                lull_core::spec::build_network(spec, &r).unwrap_or_else(|e| panic!("{spec}: {e}"));
            }
        }
        for task in ["none", "spindown"] {
            assert!(
                !default_grid(task)
                    .specs
                    .iter()
                    .any(|s| s.starts_with("preempt") || s.starts_with("latency"))
            );
        }
    }

    #[test]
    fn default_grid_is_device_relative_and_skips_what_does_not_build() {
        use lull_core::actuator::StopPolicy;
        // Spindown under earlier-of: one row per start detector.
        let g = default_grid_for("spindown", StopPolicy::EarlierOf);
        assert!(
            g.specs.iter().all(|s| !s.contains("+ backoff")),
            "{:?}",
            g.specs
        );
        assert!(g.specs.contains(&"timer(t=B/16)".to_string()));
        assert!(g.specs.contains(&"timer(t=16B)".to_string()));
        assert!(g.specs.contains(&"share()".to_string()));
        assert!(g.specs.contains(&"share(decision=median)".to_string()));
        // No hard-coded device time scale: every timer is relative to B.
        assert!(
            g.specs
                .iter()
                .filter(|s| s.starts_with("timer("))
                .all(|s| s.contains('B')),
            "{:?}",
            g.specs
        );
        // Under a policy where the predicted end matters, × 4 durations.
        let p = default_grid_for("spindown", StopPolicy::PredictedEnd);
        assert!(
            p.specs.len() > 3 * g.specs.len(),
            "{} vs {}",
            p.specs.len(),
            g.specs.len()
        );
        // Spin-down carries hd-idle's 10 minutes; other tasks do not.
        assert_eq!(g.references, ["auto", HD_IDLE, BEST_FIXED, "oracle()"]);
        assert_eq!(
            default_grid("writeback").references,
            ["auto", BEST_FIXED, "oracle()"]
        );
        let r = resolve(&g, &registry()).unwrap();
        assert!(r.best_fixed);
        // `auto` is a reference that may not exist yet: skipped with a note.
        assert!(r.networks[0].reference);
        if r.networks[0].text != "auto" {
            assert!(
                r.notes.iter().any(|n| n.contains("`auto`")),
                "{:?}",
                r.notes
            );
        }
        // Rate thresholds relative to R are resolved per trace.
        let ew = r
            .networks
            .iter()
            .find(|n| n.text == "event-window(n=10, rate=R/4)")
            .expect("event window at R/4");
        assert!(ew.rate_relative);
        let spec = ew.spec_for(8.0, &registry()).unwrap();
        assert_eq!(ew.description.params["start.rate"], "R/4");
        assert!(spec.build(&registry()).is_ok());
        // Without a break-even time, B-relative networks do not build.
        let no_b = {
            let mut r = Registry::new();
            lull_detectors::register(&mut r);
            r
        };
        let r2 = resolve(&g, &no_b).unwrap();
        assert!(r2.networks.len() < r.networks.len());
        assert!(
            r2.notes.iter().any(|n| n.contains("timer(t=B/16)")),
            "{:?}",
            r2.notes
        );
    }

    #[test]
    fn rates_relative_to_r_substitute() {
        assert_eq!(rate_factor("R"), Some(1.0));
        assert_eq!(rate_factor("4R"), Some(4.0));
        assert_eq!(rate_factor("R/16"), Some(1.0 / 16.0));
        assert_eq!(rate_factor("3R/2"), Some(1.5));
        assert_eq!(rate_factor("R/0"), None);
        assert_eq!(
            with_rate("event-window(n=10, rate=R/4) + fixed(d=4B)", 2.0).unwrap(),
            "event-window(n=10, rate=0.5) + fixed(d=4B)"
        );
        assert_eq!(
            with_rate("moving-average(rate=4R)", 0.001234567).unwrap(),
            "moving-average(rate=0.00493827)"
        );
        assert!(!rate_relative("timer(t=B)"));
        assert!(rate_relative("vote(threshold=2; a(rate=R), b(x=1))"));
        assert!(with_rate("x(rate=zR)", 1.0).is_none());
    }

    #[test]
    fn templates_expand_cartesian_in_order() {
        let g = Grid::from_toml(
            r#"
specs = ["timer(t=1s)"]
reference = ""
[[template]]
spec = "event-window(n={n}, rate={rate}) + {d}"
n = [2, 10]
rate = [0.5, 1]
d = ["fixed(d=10s)"]
"#,
            "none",
        )
        .unwrap();
        assert!(g.references.is_empty());
        assert_eq!(
            g.specs,
            vec![
                "timer(t=1s)",
                "event-window(n=2, rate=0.5) + fixed(d=10s)",
                "event-window(n=2, rate=1) + fixed(d=10s)",
                "event-window(n=10, rate=0.5) + fixed(d=10s)",
                "event-window(n=10, rate=1) + fixed(d=10s)",
            ]
        );
        assert!(!g.lenient);
    }

    #[test]
    fn the_shipped_example_grid_resolves() {
        let text = include_str!("../grids/timers.toml");
        let g = Grid::from_toml(text, "spindown").unwrap();
        assert_eq!(g.specs.len(), 2 + 14 + 6);
        let r = resolve(&g, &registry()).unwrap();
        let references = r.networks.iter().filter(|n| n.reference).count();
        assert_eq!(r.networks.len(), references + 22, "{:?}", r.notes);
        // Only a reference that is not registered yet may be skipped.
        assert!(
            r.notes.iter().all(|n| n.contains("reference row")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn template_errors_name_the_template() {
        for doc in [
            "[[template]]\nspec = \"timer(t={t})\"\n",
            "[[template]]\nspec = \"timer(t=1s)\"\nt = [\"1s\"]\n",
            "[[template]]\nspec = \"timer(t={t})\"\nt = []\n",
            "bogus = 1\n",
        ] {
            assert!(Grid::from_toml(doc, "none").is_err(), "{doc}");
        }
    }

    #[test]
    fn strict_grids_reject_and_lenient_grids_note() {
        let reg = registry();
        let mut g = Grid {
            specs: vec![
                "timer(t=1s) + fixed(d=10s)".into(),
                "no-such-detector(x=1) + fixed(d=1s)".into(),
                "timer(t=1s) + fixed(d=10s)".into(),
            ],
            references: vec!["oracle()".into()],
            lenient: true,
        };
        let r = resolve(&g, &reg).unwrap();
        assert_eq!(r.networks.len(), 2, "duplicate dropped, unknown skipped");
        assert!(r.notes[0].contains("`no-such-detector`"), "{:?}", r.notes);
        g.lenient = false;
        let e = resolve(&g, &reg).unwrap_err().to_string();
        assert!(e.contains("no-such-detector"), "{e}");
    }

    #[test]
    fn descriptions_name_families_and_params() {
        let reg = registry();
        let spec = NetworkSpec::parse("timer(2s) + fixed(d=10s)", Some(&reg)).unwrap();
        let d = describe(&spec, &reg);
        assert_eq!(d.start_family, "timer");
        assert_eq!(d.duration_family, "fixed");
        assert_eq!(d.params["start.t"], "2s");
        assert_eq!(d.params["duration.d"], "10s");
        assert!(!d.offline);
        let spec =
            NetworkSpec::parse("low-pass(min=3s; timer(t=1s) + fixed(d=1s))", Some(&reg)).unwrap();
        let d = describe(&spec, &reg);
        assert_eq!(d.start_family, "low-pass");
        assert_eq!(d.duration_family, "fixed");
        assert_eq!(d.skeptic.as_deref(), Some("low-pass"));
        assert_eq!(d.params["skeptic.min"], "3s");
    }
}
