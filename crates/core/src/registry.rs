//! The component registry: canonical names, typed and documented
//! parameters, and factories.
//!
//! Each crate that provides components registers them by name
//! (`lull_detectors::register(&mut registry)`), so spec strings, TOML and
//! `lull components` all see the same catalogue, and an embedder can add
//! its own kinds next to the built-in ones.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::component::{DurationPredictor, Skeptic, StartDetector};
use crate::time::{Nanos, parse_duration_in};

/// What a component is in the taxonomy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Decides when an idle period begins (§3.1.1).
    StartDetector,
    /// Predicts how long it lasts (§3.1.2).
    DurationPredictor,
    /// Filters or combines prediction streams (§3.2).
    Skeptic,
}

impl Role {
    /// The name used in listings.
    pub const fn name(self) -> &'static str {
        match self {
            Role::StartDetector => "start-detector",
            Role::DurationPredictor => "duration-predictor",
            Role::Skeptic => "skeptic",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of a parameter, which fixes how its text is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type", content = "choices")]
pub enum ParamKind {
    /// A length of time: `100ms`, `1.5s`.
    Duration,
    /// A real number.
    Float,
    /// A whole number.
    Int,
    /// One word from a fixed list.
    Choice(&'static [&'static str]),
    /// A list of real numbers: `[1, 2, 0.5]`.
    FloatList,
    /// `true` or `false`.
    Bool,
}

/// One documented parameter of a component.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamInfo {
    /// Its name in spec strings (`step`, `rate`).
    pub name: &'static str,
    /// Its type.
    #[serde(flatten)]
    pub kind: ParamKind,
    /// The default as it would be written in a spec; `None` = required.
    pub default: Option<&'static str>,
    /// The unit, for people (`s`, `IO/s`, `requests`); empty if none.
    pub unit: &'static str,
    /// What it does.
    pub doc: &'static str,
}

impl ParamInfo {
    /// A required parameter.
    pub const fn required(
        name: &'static str,
        kind: ParamKind,
        unit: &'static str,
        doc: &'static str,
    ) -> Self {
        ParamInfo {
            name,
            kind,
            default: None,
            unit,
            doc,
        }
    }
    /// A parameter with a default.
    pub const fn optional(
        name: &'static str,
        kind: ParamKind,
        default: &'static str,
        unit: &'static str,
        doc: &'static str,
    ) -> Self {
        ParamInfo {
            name,
            kind,
            default: Some(default),
            unit,
            doc,
        }
    }
}

/// How many inputs a skeptic takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Arity {
    /// At least this many.
    pub min: usize,
    /// At most this many (`None`: no limit).
    pub max: Option<usize>,
}

impl Arity {
    /// Exactly one input (a filter).
    pub const ONE: Arity = Arity {
        min: 1,
        max: Some(1),
    };
    /// Two or more (a combiner).
    pub const MANY: Arity = Arity { min: 2, max: None };
    /// Whether `n` inputs fit.
    pub fn accepts(&self, n: usize) -> bool {
        n >= self.min && self.max.is_none_or(|m| n <= m)
    }
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max {
            Some(m) if m == self.min => write!(f, "exactly {m}"),
            Some(m) => write!(f, "{} to {m}", self.min),
            None => write!(f, "at least {}", self.min),
        }
    }
}

/// What a gauge's number is, so it can be shown to people.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GaugeUnit {
    /// A duration in seconds (shown as `1m 50s`, `3.2s`).
    Seconds,
    /// A probability or share in `[0, 1]` (shown as a percentage).
    Ratio,
    /// A count of times (shown as `3×`).
    Times,
    /// A count of things (shown as a whole number).
    Count,
    /// A plain number (shown to four significant digits).
    Number,
}

/// One documented gauge of a component ([`crate::component::StartDetector::gauges`]).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct GaugeInfo {
    /// Its name in `gauges()`; a trailing `*` matches any suffix
    /// (`weight_*`: `weight_0`, `weight_1`, …).
    pub name: &'static str,
    /// What it is, in words (`chance the idle period is long`).
    pub label: &'static str,
    /// Its unit.
    pub unit: GaugeUnit,
    /// The word for a value that does not exist (reported as `f64::MAX`
    /// or infinite): `never` unless [`GaugeInfo::none_is`] says otherwise.
    pub none: &'static str,
}

impl GaugeInfo {
    /// A gauge named `name`, labelled `label`, in `unit`.
    pub const fn new(name: &'static str, label: &'static str, unit: GaugeUnit) -> Self {
        GaugeInfo {
            name,
            label,
            unit,
            none: "never",
        }
    }

    /// The same gauge, whose missing value reads as `word` (`none`: a
    /// period where no periodic source is known, where `never` would
    /// mislead).
    pub const fn none_is(mut self, word: &'static str) -> Self {
        self.none = word;
        self
    }

    /// Whether this entry describes the gauge `name`.
    pub fn matches(&self, name: &str) -> bool {
        match self.name.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => self.name == name,
        }
    }

    /// The value as people read it, rounded to what matters: `1m 50s`,
    /// `12 %`, `3×`; `None` (a value that does not exist yet, or is
    /// infinite) as `never`, or the gauge's own word for it
    /// ([`GaugeInfo::none_is`]).
    pub fn show(&self, value: Option<f64>) -> String {
        let Some(v) = value.filter(|v| v.is_finite()) else {
            return self.none.to_string();
        };
        match self.unit {
            GaugeUnit::Seconds if v >= 0.0 => Nanos::from_secs_f64(v).approx().to_string(),
            GaugeUnit::Ratio => format!("{} %", significant(100.0 * v, 2)),
            GaugeUnit::Times => format!("{}×", v.round()),
            GaugeUnit::Count => format!("{}", v.round()),
            GaugeUnit::Seconds | GaugeUnit::Number => significant(v, 4),
        }
    }

    /// `label value` (`timeout 1m 50s`).
    pub fn describe(&self, value: Option<f64>) -> String {
        format!("{} {}", self.label, self.show(value))
    }
}

/// `v` with `digits` significant digits, without trailing zeros
/// (`0.12191474762754606` → `0.1219`, `3` → `3`).
pub fn significant(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The catalogue entry of a component kind.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ComponentInfo {
    /// Canonical name (`timer`, `backoff-arith-geom`, `vote`).
    pub name: &'static str,
    /// Its role.
    pub role: Role,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where it comes from (paper section).
    pub source: &'static str,
    /// Its parameters, in positional order.
    pub params: &'static [ParamInfo],
    /// For skeptics: how many inputs.
    pub inputs: Option<Arity>,
    /// Whether it needs lookahead (offline only: replay, never the daemon).
    pub offline: bool,
    /// The gauges it reports while it runs (what it has learned), for
    /// `lull status`, the metrics and `lull components`; empty for a
    /// component that learns nothing.
    pub gauges: &'static [GaugeInfo],
}

impl ComponentInfo {
    /// The entry of its gauge `name`, if it documents one.
    pub fn gauge(&self, name: &str) -> Option<&'static GaugeInfo> {
        self.gauges.iter().find(|g| g.matches(name))
    }
}

/// A parsed parameter value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A duration.
    Duration(Nanos),
    /// A real number.
    Float(f64),
    /// A whole number.
    Int(u64),
    /// A word from a choice list.
    Choice(String),
    /// A list of numbers.
    FloatList(Vec<f64>),
    /// A flag.
    Bool(bool),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Duration(d) => write!(f, "{d}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Int(n) => write!(f, "{n}"),
            ParamValue::Choice(c) => f.write_str(c),
            ParamValue::FloatList(v) => {
                f.write_str("[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
            ParamValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl ParamKind {
    /// Parses `text` as a value of this kind, with no break-even time
    /// known (a duration written relative to `B` is an error).
    pub fn parse(&self, text: &str) -> Result<ParamValue, String> {
        self.parse_in(text, None)
    }

    /// Parses `text` as a value of this kind; durations may be written
    /// relative to `breakeven` (`2B`, `B/16`: see
    /// [`crate::time::parse_duration_in`]).
    pub fn parse_in(&self, text: &str, breakeven: Option<Nanos>) -> Result<ParamValue, String> {
        let text = text.trim();
        match self {
            ParamKind::Duration => parse_duration_in(text, breakeven)
                .map(ParamValue::Duration)
                .map_err(|e| e.to_string()),
            ParamKind::Float => {
                let x: f64 = text.parse().map_err(|_| {
                    if relative_to_rate(text) {
                        format!(
                            "{text:?} is relative to R, the mean request rate of a trace, which only `lull replay` and `lull rank` know (they write it out before building): here write the rate in requests a second (e.g. `rate=20` for 4R at 5 IO/s)"
                        )
                    } else {
                        format!("{text:?} is not a number")
                    }
                })?;
                if x.is_finite() {
                    Ok(ParamValue::Float(x))
                } else {
                    Err(format!("{text:?} is not a finite number"))
                }
            }
            ParamKind::Int => text
                .parse()
                .map(ParamValue::Int)
                .map_err(|_| format!("{text:?} is not a whole number ≥ 0")),
            ParamKind::Choice(choices) => {
                if choices.contains(&text) {
                    Ok(ParamValue::Choice(text.to_string()))
                } else {
                    Err(format!("{text:?} is not one of {}", choices.join(", ")))
                }
            }
            ParamKind::FloatList => {
                let inner = text
                    .strip_prefix('[')
                    .and_then(|t| t.strip_suffix(']'))
                    .ok_or_else(|| format!("{text:?} is not a list like [1, 2, 3]"))?;
                let mut v = Vec::new();
                for item in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    match item.parse::<f64>() {
                        Ok(x) if x.is_finite() => v.push(x),
                        _ => return Err(format!("list item {item:?} is not a finite number")),
                    }
                }
                Ok(ParamValue::FloatList(v))
            }
            ParamKind::Bool => match text {
                "true" | "yes" | "on" => Ok(ParamValue::Bool(true)),
                "false" | "no" | "off" => Ok(ParamValue::Bool(false)),
                _ => Err(format!("{text:?} is not true or false")),
            },
        }
    }
}

/// A parameter that was rejected, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter's name (empty when the problem is not one parameter's).
    pub param: String,
    /// What is wrong.
    pub reason: String,
}

impl ParamError {
    /// A problem with parameter `param`.
    pub fn new(param: impl Into<String>, reason: impl Into<String>) -> Self {
        ParamError {
            param: param.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.param.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "parameter `{}`: {}", self.param, self.reason)
        }
    }
}

impl std::error::Error for ParamError {}

/// The resolved parameters handed to a factory: every declared parameter
/// has a value (given or default), already parsed to its kind.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: BTreeMap<&'static str, ParamValue>,
    inputs: usize,
    breakeven: Option<Nanos>,
    wear_budget: Option<u32>,
}

impl Params {
    /// Resolves `args` (positional first, then `name=value`) against the
    /// declared parameters, with no break-even time known.
    pub fn resolve(
        info: &ComponentInfo,
        args: &[(Option<&str>, &str)],
        inputs: usize,
    ) -> Result<Params, ParamError> {
        Params::resolve_in(info, args, inputs, None)
    }

    /// Resolves `args` for a device whose break-even time is `breakeven`:
    /// durations written relative to it (`2B`), given or default, become
    /// absolute, and [`Params::breakeven`] hands it to the factory.
    pub fn resolve_in(
        info: &ComponentInfo,
        args: &[(Option<&str>, &str)],
        inputs: usize,
        breakeven: Option<Nanos>,
    ) -> Result<Params, ParamError> {
        let mut given: BTreeMap<&'static str, &str> = BTreeMap::new();
        let mut seen_named = false;
        for (i, (key, value)) in args.iter().enumerate() {
            let p = match key {
                Some(k) => {
                    seen_named = true;
                    info.params.iter().find(|p| p.name == *k).ok_or_else(|| {
                        let known: Vec<_> = info.params.iter().map(|p| p.name).collect();
                        ParamError::new(
                            *k,
                            if known.is_empty() {
                                format!("`{}` takes no parameters", info.name)
                            } else {
                                format!(
                                    "unknown parameter of `{}`{} (it takes: {})",
                                    info.name,
                                    crate::suggest::did_you_mean(k, known.iter().copied()),
                                    known.join(", ")
                                )
                            },
                        )
                    })?
                }
                None => {
                    if seen_named {
                        return Err(ParamError::new(
                            "",
                            format!("positional value {value:?} after a named one"),
                        ));
                    }
                    info.params.get(i).ok_or_else(|| {
                        ParamError::new(
                            "",
                            format!(
                                "`{}` takes {} parameter(s); value {value:?} is one too many",
                                info.name,
                                info.params.len()
                            ),
                        )
                    })?
                }
            };
            if given.insert(p.name, value).is_some() {
                return Err(ParamError::new(p.name, "given twice"));
            }
        }
        let mut values = BTreeMap::new();
        for p in info.params {
            let text = match (given.get(p.name), p.default) {
                (Some(t), _) => *t,
                (None, Some(d)) => {
                    // A default relative to B that the user never wrote:
                    // say what is missing and how to give it.
                    if breakeven.is_none() && p.kind == ParamKind::Duration && d.contains('B') {
                        return Err(ParamError::new(
                            p.name,
                            format!(
                                "defaults to `{d}`, relative to the break-even time B of the device, which is not known here: give the parameter, or build the network for a device (`--device` on the command line, `Registry::with_breakeven` in code)"
                            ),
                        ));
                    }
                    d
                }
                (None, None) => return Err(ParamError::new(p.name, "required")),
            };
            let v = p
                .kind
                .parse_in(text, breakeven)
                .map_err(|e| ParamError::new(p.name, e))?;
            values.insert(p.name, v);
        }
        Ok(Params {
            values,
            inputs,
            breakeven,
            wear_budget: None,
        })
    }

    /// Parameters from already-typed values (for code that builds
    /// components without a spec string); missing ones take defaults.
    pub fn from_values(
        info: &ComponentInfo,
        given: &[(&str, ParamValue)],
        inputs: usize,
    ) -> Result<Params, ParamError> {
        let texts: Vec<(String, String)> = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let args: Vec<(Option<&str>, &str)> = texts
            .iter()
            .map(|(k, v)| (Some(k.as_str()), v.as_str()))
            .collect();
        Params::resolve(info, &args, inputs)
    }

    /// How many inputs the node has (skeptics size their state from it).
    pub fn inputs(&self) -> usize {
        self.inputs
    }
    /// The break-even time `B` of the device the network is built for, if
    /// known ([`Registry::with_breakeven`]).
    pub fn breakeven(&self) -> Option<Nanos> {
        self.breakeven
    }
    /// [`Params::breakeven`], or an error naming `param` for components
    /// that cannot work without it.
    pub fn require_breakeven(&self, param: &str) -> Result<Nanos, ParamError> {
        self.breakeven.ok_or_else(|| {
            ParamError::new(
                param,
                "needs the break-even time B of the device: give the parameter, or build the network for a device (`--device` on the command line, `Registry::with_breakeven` in code)",
            )
        })
    }
    /// The wear budget (spin-downs a day) of the disk the network is
    /// built for, if it has one ([`Registry::with_wear_budget`]).
    pub fn wear_budget(&self) -> Option<u32> {
        self.wear_budget
    }
    /// Every value, by name.
    pub fn values(&self) -> &BTreeMap<&'static str, ParamValue> {
        &self.values
    }
    fn get(&self, name: &str) -> Result<&ParamValue, ParamError> {
        self.values.get(name).ok_or_else(|| {
            ParamError::new(
                name,
                "not declared by this component (a bug in its registration)",
            )
        })
    }
    /// A duration parameter.
    pub fn duration(&self, name: &str) -> Result<Nanos, ParamError> {
        match self.get(name)? {
            ParamValue::Duration(d) => Ok(*d),
            v => Err(ParamError::new(name, format!("{v} is not a duration"))),
        }
    }
    /// A duration that must be greater than zero.
    pub fn positive_duration(&self, name: &str) -> Result<Nanos, ParamError> {
        let d = self.duration(name)?;
        if d == Nanos::ZERO {
            Err(ParamError::new(name, "must be greater than 0"))
        } else {
            Ok(d)
        }
    }
    /// A real number.
    pub fn float(&self, name: &str) -> Result<f64, ParamError> {
        match self.get(name)? {
            ParamValue::Float(x) => Ok(*x),
            ParamValue::Int(n) => Ok(*n as f64),
            v => Err(ParamError::new(name, format!("{v} is not a number"))),
        }
    }
    /// A real number in `[lo, hi]` (`lo = f64::MIN_POSITIVE`: greater
    /// than zero, said so in the error rather than as 300 digits).
    pub fn float_in(&self, name: &str, lo: f64, hi: f64) -> Result<f64, ParamError> {
        let x = self.float(name)?;
        if x >= lo && x <= hi {
            Ok(x)
        } else if lo == f64::MIN_POSITIVE {
            Err(ParamError::new(
                name,
                format!("{x} must be greater than 0 and at most {}", bound(hi)),
            ))
        } else {
            Err(ParamError::new(
                name,
                format!("{x} is outside [{}, {}]", bound(lo), bound(hi)),
            ))
        }
    }
    /// A real number greater than zero.
    pub fn positive_float(&self, name: &str) -> Result<f64, ParamError> {
        let x = self.float(name)?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(ParamError::new(name, format!("{x} must be greater than 0")))
        }
    }
    /// A whole number.
    pub fn int(&self, name: &str) -> Result<u64, ParamError> {
        match self.get(name)? {
            ParamValue::Int(n) => Ok(*n),
            v => Err(ParamError::new(name, format!("{v} is not a whole number"))),
        }
    }
    /// A whole number in `[lo, hi]`.
    pub fn int_in(&self, name: &str, lo: u64, hi: u64) -> Result<u64, ParamError> {
        let n = self.int(name)?;
        if n >= lo && n <= hi {
            Ok(n)
        } else {
            Err(ParamError::new(
                name,
                format!("{n} is outside [{lo}, {hi}]"),
            ))
        }
    }
    /// A choice.
    pub fn choice(&self, name: &str) -> Result<&str, ParamError> {
        match self.get(name)? {
            ParamValue::Choice(c) => Ok(c),
            v => Err(ParamError::new(name, format!("{v} is not a choice"))),
        }
    }
    /// A list of numbers.
    pub fn floats(&self, name: &str) -> Result<&[f64], ParamError> {
        match self.get(name)? {
            ParamValue::FloatList(v) => Ok(v),
            v => Err(ParamError::new(name, format!("{v} is not a list"))),
        }
    }
    /// A flag.
    pub fn bool(&self, name: &str) -> Result<bool, ParamError> {
        match self.get(name)? {
            ParamValue::Bool(b) => Ok(*b),
            v => Err(ParamError::new(name, format!("{v} is not true or false"))),
        }
    }
}

/// A built component.
#[derive(Debug)]
#[non_exhaustive]
pub enum Built {
    /// A start detector.
    Start(Box<dyn StartDetector>),
    /// A duration predictor.
    Duration(Box<dyn DurationPredictor>),
    /// A skeptic.
    Skeptic(Box<dyn Skeptic>),
}

impl Built {
    /// The role of what was built.
    pub fn role(&self) -> Role {
        match self {
            Built::Start(_) => Role::StartDetector,
            Built::Duration(_) => Role::DurationPredictor,
            Built::Skeptic(_) => Role::Skeptic,
        }
    }
}

/// Builds a component from its resolved parameters.
pub type Factory = Arc<dyn Fn(&Params) -> Result<Built, ParamError> + Send + Sync>;

#[derive(Clone)]
struct Entry {
    info: ComponentInfo,
    factory: Factory,
}

/// Expands a named network ([`NetworkInfo`]) into a one-line spec for the
/// registry it is built with (its break-even time and components).
pub type Expander = Arc<dyn Fn(&Registry) -> Result<String, ParamError> + Send + Sync>;

/// The catalogue entry of a named network: a composition that a user can
/// pick by name (`auto`), expanded into a spec when it is built.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct NetworkInfo {
    /// The name, used as the whole spec (`auto`).
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
}

#[derive(Clone)]
struct NetworkEntry {
    info: NetworkInfo,
    expand: Expander,
}

/// The catalogue of component kinds, by canonical name, and of named
/// networks; and the break-even time `B` of the device networks are built
/// for, which durations written as `2B` and components that scale with the
/// drive take from here.
#[derive(Clone, Default)]
pub struct Registry {
    entries: BTreeMap<&'static str, Entry>,
    networks: BTreeMap<&'static str, NetworkEntry>,
    breakeven: Option<Nanos>,
    wear_budget: Option<u32>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("components", &self.entries.keys().collect::<Vec<_>>())
            .field("networks", &self.networks.keys().collect::<Vec<_>>())
            .field("breakeven", &self.breakeven)
            .field("wear_budget", &self.wear_budget)
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a kind. A second registration under the same name replaces
    /// the first (so an embedder can override a built-in).
    ///
    /// # Panics
    /// If `info` is inconsistent (a skeptic without an arity, a default
    /// that does not parse): that is a bug in the registering crate, caught
    /// by its tests.
    pub fn register<F>(&mut self, info: ComponentInfo, factory: F)
    where
        F: Fn(&Params) -> Result<Built, ParamError> + Send + Sync + 'static,
    {
        assert_eq!(
            info.role == Role::Skeptic,
            info.inputs.is_some(),
            "{}: skeptics, and only skeptics, declare inputs",
            info.name
        );
        for p in info.params {
            if let Some(d) = p.default {
                if let Err(e) = p.kind.parse_in(d, Some(Nanos::from_secs(1))) {
                    panic!("{}: default of `{}` does not parse: {e}", info.name, p.name);
                }
            }
        }
        self.entries.insert(
            info.name,
            Entry {
                info,
                factory: Arc::new(factory),
            },
        );
    }

    /// The same registry for a device whose break-even time is `b`:
    /// durations written relative to it (`timer(2B)`) and the defaults of
    /// components that scale with the drive (`random-timer`, `share`, the
    /// adaptive timers' bounds) resolve against it.
    pub fn with_breakeven(mut self, b: Nanos) -> Self {
        self.breakeven = Some(b);
        self
    }

    /// Sets or clears the break-even time ([`Registry::with_breakeven`]).
    pub fn set_breakeven(&mut self, b: Option<Nanos>) {
        self.breakeven = b;
    }

    /// The break-even time networks are built for, if known.
    pub fn breakeven(&self) -> Option<Nanos> {
        self.breakeven
    }

    /// The same registry for a disk held to a wear budget of `per_day`
    /// spin-downs a day (`None` or 0: none): components that spend
    /// spin-downs (`long-idle`, so `auto`) take it as their default and
    /// spend it on the longest periods, instead of learning of it only
    /// from the gate's refusals.
    pub fn with_wear_budget(mut self, per_day: Option<u32>) -> Self {
        self.set_wear_budget(per_day);
        self
    }

    /// Sets or clears the wear budget ([`Registry::with_wear_budget`]).
    pub fn set_wear_budget(&mut self, per_day: Option<u32>) {
        self.wear_budget = per_day.filter(|&n| n > 0);
    }

    /// The wear budget networks are built for, if any.
    pub fn wear_budget(&self) -> Option<u32> {
        self.wear_budget
    }

    /// Registers a named network: `expand` turns it into a one-line spec
    /// for this registry. A second registration replaces the first.
    pub fn register_network<F>(&mut self, info: NetworkInfo, expand: F)
    where
        F: Fn(&Registry) -> Result<String, ParamError> + Send + Sync + 'static,
    {
        self.networks.insert(
            info.name,
            NetworkEntry {
                info,
                expand: Arc::new(expand),
            },
        );
    }

    /// The named networks, sorted by name.
    pub fn networks(&self) -> Vec<&NetworkInfo> {
        self.networks.values().map(|e| &e.info).collect()
    }

    /// The spec a named network stands for with this registry, if `name`
    /// (with or without `()`) is one.
    ///
    /// A named network that stands for one component called without
    /// arguments takes that component's parameters: `auto(delay-weight=1)`
    /// is `long-idle(delay-weight=1)` where `auto` is `long-idle()`. One
    /// that stands for more refuses arguments.
    pub fn expand_network(&self, name: &str) -> Option<Result<String, ParamError>> {
        let name = name.trim();
        let (name, args) = match name.strip_suffix(')').and_then(|n| n.split_once('(')) {
            Some((n, a))
                if !n.contains(['(', ')', '+', '|', '>', ',', '=']) && !a.contains(['(', ')']) =>
            {
                (n.trim(), a.trim())
            }
            _ => (name, ""),
        };
        let entry = self.networks.get(name)?;
        let spec = (entry.expand)(self);
        if args.is_empty() {
            return Some(spec);
        }
        Some(spec.and_then(|spec| match spec.strip_suffix("()") {
            Some(component) if self.info(component).is_some() => Ok(format!("{component}({args})")),
            _ => Err(ParamError::new(
                "",
                format!("`{name}` stands for `{spec}` here, which takes no parameters"),
            )),
        }))
    }

    /// The entry for `name`.
    pub fn info(&self, name: &str) -> Option<&ComponentInfo> {
        self.entries.get(name).map(|e| &e.info)
    }

    /// Every kind, sorted by role then name.
    pub fn list(&self) -> Vec<&ComponentInfo> {
        let mut v: Vec<_> = self.entries.values().map(|e| &e.info).collect();
        v.sort_by_key(|i| (i.role, i.name));
        v
    }

    /// Names of the kinds with `role`, for error messages.
    pub fn names(&self, role: Role) -> Vec<&'static str> {
        self.entries
            .values()
            .filter(|e| e.info.role == role)
            .map(|e| e.info.name)
            .collect()
    }

    /// Builds the kind `name` from text arguments. What its factory built
    /// is of the role it was registered with, or an error naming the
    /// component and both roles (a factory that returns another kind of
    /// component is a bug in its registration, refused here rather than
    /// panicking where the network is wired).
    pub fn build(
        &self,
        name: &str,
        args: &[(Option<&str>, &str)],
        inputs: usize,
    ) -> Result<Built, ParamError> {
        let entry = self
            .entries
            .get(name)
            .ok_or_else(|| ParamError::new("", format!("unknown component `{name}`")))?;
        let mut params = Params::resolve_in(&entry.info, args, inputs, self.breakeven)?;
        params.wear_budget = self.wear_budget;
        let built = (entry.factory)(&params)?;
        let role = built.role();
        if role != entry.info.role {
            return Err(ParamError::new(
                "",
                format!(
                    "its factory built a {role}, but `{name}` is registered as a {} (a bug in the registration of `{name}`: its `ComponentInfo::role` and its factory disagree)",
                    entry.info.role
                ),
            ));
        }
        Ok(built)
    }
}

/// Whether `text` is a rate written relative to a trace's mean rate R
/// (`R`, `4R`, `R/16`, `0.5R`), as `lull replay` and `lull rank` take it.
fn relative_to_rate(text: &str) -> bool {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (coeff, rest) = match t.split_once('R') {
        Some(parts) => parts,
        None => return false,
    };
    let coeff_ok = coeff.is_empty() || coeff.trim_end_matches('*').parse::<f64>().is_ok();
    let rest_ok = rest.is_empty()
        || rest
            .strip_prefix('/')
            .is_some_and(|d| d.parse::<f64>().is_ok());
    coeff_ok && rest_ok
}

/// A range bound as a person reads it: `1000`, `0.5`, `1e-12`, `1e300`.
fn bound(x: f64) -> String {
    if x != 0.0 && x.is_finite() && (x.abs() < 1e-4 || x.abs() >= 1e9) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}
