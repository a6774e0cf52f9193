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
    /// The reference network, shown but not ranked.
    pub reference: Option<String>,
    /// Whether unbuildable networks are skipped (built-in grid) rather than
    /// rejected (user grid).
    pub lenient: bool,
}

/// The start detectors of the default grid, by family.
fn default_starts() -> Vec<String> {
    let mut v = Vec::new();
    for t in [
        "100ms", "250ms", "500ms", "1s", "2s", "3s", "5s", "10s", "30s",
    ] {
        v.push(format!("timer(t={t})"));
    }
    for kind in ["arith-arith", "arith-geom", "geom-arith"] {
        for step in ["100ms", "1s"] {
            v.push(format!("adapt-timer-{kind}(step={step})"));
        }
    }
    v.push("adapt-timer-geom-geom()".into());
    for n in EVENT_WINDOW_N {
        for rate in EVENT_WINDOW_RATE {
            v.push(format!("event-window(n={n}, rate={rate})"));
        }
    }
    for rate in ["0.1", "1", "10"] {
        v.push(format!("moving-average(rate={rate})"));
    }
    v.push("time-window(window=10s, rate=1)".into());
    v.push("adaptive-rate()".into());
    v.push("rate-change(rate=1)".into());
    v.push("dpll(period=30s)".into());
    v.push("random-timer(breakeven=3s)".into());
    v
}

/// Window sizes of the default event-window sweep (Figure 19).
pub const EVENT_WINDOW_N: [u32; 6] = [2, 5, 10, 50, 100, 1000];
/// Rate thresholds (IO/s) of the default event-window sweep.
pub const EVENT_WINDOW_RATE: [&str; 4] = ["0.1", "1", "10", "100"];

/// The default grid of `task`: about 200 networks.
///
/// Every start detector of the paper's sweep (timers, adaptive timers,
/// event windows, moving averages, time window, adaptive rate, rate change,
/// dpll, random timer) × four duration predictors
/// (fixed, two backoffs, average); the fixed duration is the paper's 10 s
/// for `none` and `spindown` and 1 s for the tasks that move I/O
/// (`writeback`, `cleaning`), whose predictions must fit between requests.
/// Then skeptic networks: `share` over four good predictors (following the
/// best and the weighted majority), `low-pass`, `vote`, `and`, `quality`,
/// `violation-rate` and `time-of-day` filters. For `writeback` and
/// `cleaning`, also the background regulators: the preemption-interval gate
/// (fixed and auto-tuned p) and latency-target policy selection.
pub fn default_grid(task: &str) -> Grid {
    let fixed = match task {
        "writeback" | "cleaning" => "fixed(d=1s)",
        _ => "fixed(d=10s)",
    };
    let durations = [
        fixed,
        "backoff-arith-geom(step=1s)",
        "backoff-geom-geom()",
        "average(n=10)",
    ];
    let mut specs = Vec::new();
    for s in default_starts() {
        for d in durations {
            specs.push(format!("{s} + {d}"));
        }
    }
    let members = [
        format!("timer(t=1s) + {fixed}"),
        format!("adapt-timer-arith-geom(step=100ms) + {fixed}"),
        format!("event-window(n=10, rate=1) + {fixed}"),
        format!("moving-average(rate=1) + {fixed}"),
    ]
    .join(", ");
    specs.push(format!("share({members})"));
    specs.push(format!("share(follow=majority; {members})"));
    specs.push(format!("share(eta=8, alpha=0.05; {members})"));
    specs.push("low-pass(min=3s; timer(t=1s) + average(n=10))".into());
    specs.push(format!(
        "low-pass(min=3s; adapt-timer-arith-geom(step=100ms) + {fixed})"
    ));
    specs.push(format!(
        "vote(threshold=2; timer(t=1s) + {fixed}, event-window(n=10, rate=1) + {fixed}, moving-average(rate=1) + {fixed})"
    ));
    specs.push(format!(
        "and(timer(t=500ms) + {fixed}, event-window(n=50, rate=1) + {fixed})"
    ));
    specs.push(format!("quality(threshold=0.8; timer(t=1s) + {fixed})"));
    specs.push(format!(
        "violation-rate(max=0.1; adapt-timer-arith-geom(step=100ms) + {fixed})"
    ));
    specs.push(format!("time-of-day(busiest=7; timer(t=1s) + {fixed})"));
    if matches!(task, "writeback" | "cleaning") {
        // Background regulation (issue 11): keep a task that moves I/O
        // from hurting the foreground.
        specs.push("preempt-gate(p=20ms; timer(t=0s))".into());
        specs.push("preempt-gate(p=500ms; timer(t=0s))".into());
        specs.push("preempt-gate-auto(timer(t=0s))".into());
        specs.push("latency-target(target=50ms, percentile=95; timer(t=0s) + fixed(d=1s))".into());
    }
    Grid {
        specs,
        reference: Some("oracle()".into()),
        lenient: true,
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
        let reference = match doc.reference {
            None => Some("oracle()".to_string()),
            Some(r) if r.trim().is_empty() => None,
            Some(r) => Some(r),
        };
        Ok(Grid {
            specs,
            reference,
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
    /// Position in the grid (0 is the reference, when there is one).
    pub index: usize,
    /// The spec as written in the grid.
    pub text: String,
    /// The parsed spec.
    pub spec: NetworkSpec,
    /// Families and parameters.
    pub description: Description,
    /// Whether this is the reference row.
    pub reference: bool,
}

/// A grid checked against a registry.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The networks that build, reference first.
    pub networks: Vec<Network>,
    /// What was skipped and why, one line each.
    pub notes: Vec<String>,
}

impl Resolved {
    /// A stable fingerprint of the network list (FNV-1a over the specs), so
    /// shards of different grids are not merged.
    pub fn fingerprint(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for n in &self.networks {
            for b in n.text.bytes().chain([0u8]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("{h:016x}")
    }
}

/// Checks every network of `grid` against `registry`: duplicates are
/// dropped; in a lenient grid, networks that do not build are skipped with
/// a note (grouped by the missing component), in a strict one they are an
/// error.
pub fn resolve(grid: &Grid, registry: &Registry) -> Result<Resolved, GridError> {
    let mut networks = Vec::new();
    let mut notes = Vec::new();
    let mut missing: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let all = grid
        .reference
        .iter()
        .map(|r| (r, true))
        .chain(grid.specs.iter().map(|s| (s, false)));
    for (text, reference) in all {
        let text = text.trim().to_string();
        if !seen.insert(text.clone()) {
            continue;
        }
        // Unknown component names first, so the note can name them.
        let unknown: Vec<String> = match NetworkSpec::parse(&text, None) {
            Ok(shape) => shape
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
                .filter(|name| registry.info(name).is_none())
                .collect(),
            Err(_) => Vec::new(),
        };
        let built = if unknown.is_empty() {
            NetworkSpec::parse(&text, Some(registry))
                .map_err(|e| e.message)
                .and_then(|spec| {
                    spec.build(registry)
                        .map(|_| spec)
                        .map_err(|e| e.to_string())
                })
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
                let description = describe(&spec, registry);
                networks.push(Network {
                    index: networks.len(),
                    text,
                    spec,
                    description,
                    reference,
                });
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
    Ok(Resolved { networks, notes })
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
    fn default_grid_is_large_and_skips_unknown_components() {
        let g = default_grid("spindown");
        assert!(g.specs.len() >= 200, "{}", g.specs.len());
        let r = resolve(&g, &registry()).unwrap();
        assert!(r.networks[0].reference);
        assert_eq!(r.networks[0].description.start_family, "oracle");
        // Without the skeptics crate, skeptic networks are skipped with a
        // note naming each missing component, and the run can go on.
        let detectors_only = lull_detectors::registry();
        let r2 = resolve(&g, &detectors_only).unwrap();
        assert!(r2.networks.len() < r.networks.len());
        assert!(
            r2.notes
                .iter()
                .any(|n| n.contains("`share`") && n.contains("not registered")),
            "{:?}",
            r2.notes
        );
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
        assert_eq!(g.reference, None);
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
        assert_eq!(r.networks.len(), 1 + 22, "{:?}", r.notes);
        assert!(r.notes.is_empty());
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
            reference: Some("oracle()".into()),
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
