//! Network specifications: the one-line spec language and the graph form
//! that the TOML loader and the builder share.
//!
//! One-line specs (whitespace-insensitive):
//!
//! ```text
//! timer(1s) + fixed(10s)
//! adapt-timer-arith-geom(step=100ms) + backoff-arith-geom(step=500ms)
//! low-pass(min=3s; event-window(n=10, rate=1) + fixed(100s))
//! vote(threshold=2; timer(1s) + fixed(10s), moving-average(rate=0.1) + fixed(10s))
//! ```
//!
//! A predictor is `START + DURATION` (`+ DURATION` omitted means
//! `no-duration`); a skeptic is `name(params; input, input, …)`, and the `;`
//! may be left out when it has no parameters. Parameters are positional
//! (in the order `lull components` lists them) or `name=value`.
//!
//! Both the one-line form and TOML parse to a [`NetworkSpec`]: named nodes
//! with their components and inputs. It prints back to either form, and
//! [`NetworkSpec::build`] turns it into a running network with a
//! [`Registry`].

use std::fmt;

use crate::network::{Network, NetworkBuilder, NetworkError};
use crate::registry::{Built, Registry, Role};

/// One argument of a component: `value` or `key=value`, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The parameter name, if given.
    pub key: Option<String>,
    /// The value text.
    pub value: String,
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{k}={}", self.value),
            None => f.write_str(&self.value),
        }
    }
}

/// A component with its arguments, as written in a spec.
#[derive(Clone, Debug)]
pub struct ComponentSpec {
    /// Its kind (`timer`).
    pub name: String,
    /// Its arguments.
    pub args: Vec<Arg>,
    /// Byte offset in the one-line spec it came from (for errors).
    pub pos: Option<usize>,
}

impl ComponentSpec {
    /// A component with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        ComponentSpec {
            name: name.into(),
            args: Vec::new(),
            pos: None,
        }
    }
    /// Adds `key=value`.
    pub fn arg(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.args.push(Arg {
            key: Some(key.into()),
            value: value.into(),
        });
        self
    }
    fn arg_pairs(&self) -> Vec<(Option<&str>, &str)> {
        self.args
            .iter()
            .map(|a| (a.key.as_deref(), a.value.as_str()))
            .collect()
    }
}

/// Positions are provenance, not meaning: two specs that differ only in
/// where they were written are equal.
impl PartialEq for ComponentSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.args == other.args
    }
}

impl Eq for ComponentSpec {}

impl fmt::Display for ComponentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.args.is_empty() {
            f.write_str("(")?;
            write_args(f, &self.args)?;
            f.write_str(")")?;
        }
        Ok(())
    }
}

fn write_args(f: &mut fmt::Formatter<'_>, args: &[Arg]) -> fmt::Result {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{a}")?;
    }
    Ok(())
}

/// What a node of the graph is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A start detector with an optional duration predictor.
    Predictor {
        /// The start detector.
        start: ComponentSpec,
        /// The duration predictor; `None` is `no-duration`.
        duration: Option<ComponentSpec>,
    },
    /// A skeptic over named inputs.
    Skeptic {
        /// The skeptic.
        skeptic: ComponentSpec,
        /// Its inputs, by node name, in order.
        inputs: Vec<String>,
    },
}

/// A named node of a network spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Its name, unique in the network.
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
}

impl NodeSpec {
    /// The position of its (first) component in a one-line spec.
    pub fn pos(&self) -> Option<usize> {
        match &self.kind {
            NodeKind::Predictor { start, .. } => start.pos,
            NodeKind::Skeptic { skeptic, .. } => skeptic.pos,
        }
    }
}

/// A detector network as a graph of named nodes.
#[derive(Clone, Debug)]
pub struct NetworkSpec {
    /// The nodes, in the order they were written.
    pub nodes: Vec<NodeSpec>,
    /// The node that feeds the actuator; `None`: the one node nothing
    /// consumes.
    pub sink: Option<String>,
    /// The named network this was expanded from and the text it expanded
    /// to (`auto`, `long-idle()`), for errors raised while building it.
    expanded: Option<(String, String)>,
}

/// Provenance is not meaning: a named network equals the spec it expands
/// to.
impl PartialEq for NetworkSpec {
    fn eq(&self, other: &Self) -> bool {
        self.nodes == other.nodes && self.sink == other.sink
    }
}

impl Eq for NetworkSpec {}

/// A one-line spec that does not parse: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The spec text.
    pub source: String,
    /// Byte offset of the problem.
    pub pos: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::network::write_spec_error(f, &self.source, self.pos, &self.message)
    }
}

impl std::error::Error for SpecError {}

impl From<SpecError> for NetworkError {
    fn from(e: SpecError) -> Self {
        NetworkError {
            node: String::new(),
            component: None,
            pos: Some(e.pos),
            message: e.message,
            source_text: Some(e.source),
        }
    }
}

// ---------------------------------------------------------------------------
// The one-line parser.

#[derive(Debug)]
enum Expr {
    Term(Term),
    Plus(Term, Term),
}

#[derive(Debug)]
struct Term {
    name: String,
    pos: usize,
    /// `None` when written without parentheses.
    items: Option<Vec<Item>>,
    /// Items after `;`.
    inputs: Option<Vec<Expr>>,
}

#[derive(Debug)]
enum Item {
    Named(String, String),
    Value(String),
    Expr(Expr),
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

impl<'a> Parser<'a> {
    fn err<T>(&self, pos: usize, message: impl Into<String>) -> Result<T, SpecError> {
        Err(SpecError {
            source: self.src.to_string(),
            pos,
            message: message.into(),
        })
    }
    fn skip_ws(&mut self) {
        while self
            .src
            .as_bytes()
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.src.as_bytes().get(self.pos).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> Result<(String, usize), SpecError> {
        let start = match self.peek() {
            Some(c) if is_ident_start(c) => self.pos,
            Some(c) => {
                return self.err(
                    self.pos,
                    format!("expected a component name, found {:?}", c as char),
                );
            }
            None => return self.err(self.pos, "expected a component name, found the end"),
        };
        while self
            .src
            .as_bytes()
            .get(self.pos)
            .is_some_and(|&c| is_ident(c))
        {
            self.pos += 1;
        }
        Ok((self.src[start..self.pos].to_string(), start))
    }
    /// A value: everything up to a top-level `,`, `;` or `)`.
    fn value(&mut self) -> Result<String, SpecError> {
        self.skip_ws();
        let start = self.pos;
        let mut depth = 0i32;
        let bytes = self.src.as_bytes();
        while let Some(&c) = bytes.get(self.pos) {
            match c {
                b'[' | b'(' => depth += 1,
                b']' | b')' if depth > 0 => depth -= 1,
                b',' | b';' | b')' if depth == 0 => break,
                _ => {}
            }
            self.pos += 1;
        }
        let text = self.src[start..self.pos].trim();
        if text.is_empty() {
            return self.err(start, "expected a value");
        }
        if depth != 0 {
            return self.err(start, "unbalanced brackets in value");
        }
        Ok(text.to_string())
    }
    fn expr(&mut self) -> Result<Expr, SpecError> {
        let first = self.term()?;
        if self.eat(b'+') {
            let second = self.term()?;
            if self.peek() == Some(b'+') {
                return self.err(self.pos, "a predictor is START + DURATION: only one `+`");
            }
            Ok(Expr::Plus(first, second))
        } else {
            Ok(Expr::Term(first))
        }
    }
    fn term(&mut self) -> Result<Term, SpecError> {
        let (name, pos) = self.ident()?;
        if !self.eat(b'(') {
            return Ok(Term {
                name,
                pos,
                items: None,
                inputs: None,
            });
        }
        let mut items = Vec::new();
        let mut inputs = None;
        if !self.eat(b')') {
            loop {
                if self.peek() == Some(b';') {
                    break;
                }
                items.push(self.item()?);
                if !self.eat(b',') {
                    break;
                }
            }
            if self.eat(b';') {
                let mut v = Vec::new();
                loop {
                    v.push(self.expr()?);
                    if !self.eat(b',') {
                        break;
                    }
                }
                inputs = Some(v);
            }
            if !self.eat(b')') {
                return match self.peek() {
                    Some(c) => self.err(
                        self.pos,
                        format!("expected `,` or `)`, found {:?}", c as char),
                    ),
                    None => self.err(self.pos, format!("missing `)` to close `{name}(`")),
                };
            }
        }
        Ok(Term {
            name,
            pos,
            items: Some(items),
            inputs,
        })
    }
    fn item(&mut self) -> Result<Item, SpecError> {
        match self.peek() {
            Some(c) if is_ident_start(c) => {
                let save = self.pos;
                let (name, _) = self.ident()?;
                if self.eat(b'=') {
                    return Ok(Item::Named(name, self.value()?));
                }
                // `B` and `B/16` are durations relative to the break-even
                // time (time::parse_duration_in), not components.
                let relative =
                    name == "B" && matches!(self.peek(), None | Some(b'/' | b',' | b')' | b';'));
                self.pos = save;
                if relative {
                    return Ok(Item::Value(self.value()?));
                }
                Ok(Item::Expr(self.expr()?))
            }
            Some(b'=') => self.err(self.pos, "missing parameter name before `=`"),
            Some(_) => Ok(Item::Value(self.value()?)),
            None => self.err(self.pos, "unexpected end of spec"),
        }
    }
}

struct Lower<'r> {
    registry: Option<&'r Registry>,
    src: String,
    nodes: Vec<NodeSpec>,
}

impl Lower<'_> {
    fn err<T>(&self, pos: usize, message: impl Into<String>) -> Result<T, SpecError> {
        Err(SpecError {
            source: self.src.clone(),
            pos,
            message: message.into(),
        })
    }

    fn role(&self, name: &str) -> Option<Role> {
        self.registry.and_then(|r| r.info(name)).map(|i| i.role)
    }

    /// A plain component (no inputs): items become arguments.
    fn component(&self, t: Term) -> Result<ComponentSpec, SpecError> {
        if let Some(inputs) = &t.inputs {
            if !inputs.is_empty() {
                return self.err(
                    t.pos,
                    format!("`{}` is not a skeptic: it takes no inputs", t.name),
                );
            }
        }
        let mut args = Vec::new();
        for item in t.items.unwrap_or_default() {
            match item {
                Item::Named(k, v) => args.push(Arg {
                    key: Some(k),
                    value: v,
                }),
                Item::Value(v) => args.push(Arg {
                    key: None,
                    value: v,
                }),
                // A bare word is a positional value (a choice such as `median`).
                Item::Expr(Expr::Term(Term {
                    name, items: None, ..
                })) => args.push(Arg {
                    key: None,
                    value: name,
                }),
                Item::Expr(e) => {
                    let pos = match &e {
                        Expr::Term(x) | Expr::Plus(x, _) => x.pos,
                    };
                    return self.err(
                        pos,
                        format!("`{}` is not a skeptic: it takes no inputs", t.name),
                    );
                }
            }
        }
        Ok(ComponentSpec {
            name: t.name,
            args,
            pos: Some(t.pos),
        })
    }

    fn node(&mut self, e: Expr) -> Result<String, SpecError> {
        let name = format!("n{}", self.nodes.len());
        match e {
            Expr::Plus(s, d) => {
                for t in [&s, &d] {
                    if self.role(&t.name) == Some(Role::Skeptic) {
                        return self.err(
                            t.pos,
                            format!(
                                "`{}` is a skeptic: it cannot be part of START + DURATION",
                                t.name
                            ),
                        );
                    }
                }
                let start = self.component(s)?;
                let duration = self.component(d)?;
                self.nodes.push(NodeSpec {
                    name: name.clone(),
                    kind: NodeKind::Predictor {
                        start,
                        duration: Some(duration),
                    },
                });
            }
            Expr::Term(t) => {
                let skeptic = match self.role(&t.name) {
                    Some(Role::Skeptic) => true,
                    Some(_) => false,
                    // Without a registry: a term with inputs is a skeptic.
                    None => {
                        t.inputs.is_some()
                            || t.items
                                .as_ref()
                                .is_some_and(|i| i.iter().any(|x| matches!(x, Item::Expr(_))))
                    }
                };
                if !skeptic {
                    if self.role(&t.name) == Some(Role::DurationPredictor) {
                        return self.err(
                            t.pos,
                            format!(
                                "`{}` is a duration predictor: write START + {}",
                                t.name, t.name
                            ),
                        );
                    }
                    let start = self.component(t)?;
                    self.nodes.push(NodeSpec {
                        name: name.clone(),
                        kind: NodeKind::Predictor {
                            start,
                            duration: None,
                        },
                    });
                    return Ok(name);
                }
                // Reserve our slot so names follow pre-order.
                let slot = self.nodes.len();
                self.nodes.push(NodeSpec {
                    name: name.clone(),
                    kind: NodeKind::Skeptic {
                        skeptic: ComponentSpec::new(""),
                        inputs: vec![],
                    },
                });
                let mut args = Vec::new();
                let mut input_exprs = Vec::new();
                for item in t.items.unwrap_or_default() {
                    match item {
                        Item::Named(k, v) => args.push(Arg {
                            key: Some(k),
                            value: v,
                        }),
                        Item::Value(v) if t.inputs.is_some() || input_exprs.is_empty() => args
                            .push(Arg {
                                key: None,
                                value: v,
                            }),
                        Item::Value(v) => {
                            return self.err(
                                t.pos,
                                format!("value {v:?} among the inputs of `{}`", t.name),
                            );
                        }
                        Item::Expr(e) if t.inputs.is_none() => input_exprs.push(e),
                        Item::Expr(_) => {
                            return self
                                .err(t.pos, format!("inputs of `{}` go after the `;`", t.name));
                        }
                    }
                }
                input_exprs.extend(t.inputs.unwrap_or_default());
                if input_exprs.is_empty() {
                    return self.err(
                        t.pos,
                        format!(
                            "skeptic `{}` needs inputs: {}(params; input, …)",
                            t.name, t.name
                        ),
                    );
                }
                let mut inputs = Vec::new();
                for e in input_exprs {
                    inputs.push(self.node(e)?);
                }
                self.nodes[slot].kind = NodeKind::Skeptic {
                    skeptic: ComponentSpec {
                        name: t.name,
                        args,
                        pos: Some(t.pos),
                    },
                    inputs,
                };
            }
        }
        Ok(name)
    }
}

impl NetworkSpec {
    /// Parses a one-line spec. With a registry, names are checked for their
    /// role as the spec is read; without one, the shape alone decides.
    ///
    /// With a registry, a named network (`auto`) is expanded first into
    /// the spec it stands for on that registry's device.
    pub fn parse(text: &str, registry: Option<&Registry>) -> Result<NetworkSpec, SpecError> {
        if let Some(expanded) = registry.and_then(|r| r.expand_network(text)) {
            let expanded = expanded.map_err(|e| SpecError {
                source: text.to_string(),
                pos: 0,
                message: format!("network `{}`: {e}", text.trim()),
            })?;
            let mut spec = NetworkSpec::parse_line(&expanded, registry).map_err(|e| SpecError {
                source: text.to_string(),
                pos: 0,
                message: format!(
                    "network `{}` expands to `{expanded}`, which does not parse: {e}",
                    text.trim()
                ),
            })?;
            spec.expanded = Some((text.trim().to_string(), expanded));
            return Ok(spec);
        }
        NetworkSpec::parse_line(text, registry)
    }

    /// A spec of `nodes` with `sink` (`None`: the one node nothing
    /// consumes), as code or another format (TOML) builds one.
    pub fn from_nodes(nodes: Vec<NodeSpec>, sink: Option<String>) -> NetworkSpec {
        NetworkSpec {
            nodes,
            sink,
            expanded: None,
        }
    }

    /// The named network this spec was expanded from (`auto`) when
    /// [`NetworkSpec::parse`] expanded one, and the text it stood for.
    pub fn expanded_from(&self) -> Option<(&str, &str)> {
        self.expanded
            .as_ref()
            .map(|(name, text)| (name.as_str(), text.as_str()))
    }

    fn parse_line(text: &str, registry: Option<&Registry>) -> Result<NetworkSpec, SpecError> {
        let mut p = Parser { src: text, pos: 0 };
        if p.peek().is_none() {
            return p.err(0, "empty spec");
        }
        let expr = p.expr()?;
        if let Some(c) = p.peek() {
            return p.err(
                p.pos,
                format!("unexpected {:?} after the end of the network", c as char),
            );
        }
        let mut lower = Lower {
            registry,
            src: text.to_string(),
            nodes: Vec::new(),
        };
        let root = lower.node(expr)?;
        Ok(NetworkSpec {
            nodes: lower.nodes,
            sink: Some(root),
            expanded: None,
        })
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The sink: the named one, or the only node nothing consumes.
    pub fn sink_name(&self) -> Option<&str> {
        if let Some(s) = &self.sink {
            return Some(s);
        }
        let mut free = self.nodes.iter().filter(|n| {
            !self.nodes.iter().any(|m| match &m.kind {
                NodeKind::Skeptic { inputs, .. } => inputs.contains(&n.name),
                _ => false,
            })
        });
        let first = free.next()?;
        free.next().is_none().then_some(first.name.as_str())
    }

    /// The one-line form, if the graph is a tree (no node feeds two
    /// skeptics); a shared node needs TOML.
    pub fn to_line(&self) -> Option<String> {
        let sink = self.sink_name()?;
        let mut uses = std::collections::BTreeMap::<&str, usize>::new();
        for n in &self.nodes {
            if let NodeKind::Skeptic { inputs, .. } = &n.kind {
                for i in inputs {
                    *uses.entry(i.as_str()).or_default() += 1;
                }
            }
        }
        if uses.values().any(|&u| u > 1) {
            return None;
        }
        let mut out = String::new();
        self.write_line(sink, &mut out, 0)?;
        Some(out)
    }

    fn write_line(&self, name: &str, out: &mut String, depth: usize) -> Option<()> {
        use std::fmt::Write;
        if depth > self.nodes.len() {
            return None; // a cycle
        }
        match &self.node(name)?.kind {
            NodeKind::Predictor { start, duration } => {
                write!(out, "{start}").ok()?;
                if let Some(d) = duration {
                    write!(out, " + {d}").ok()?;
                }
            }
            NodeKind::Skeptic { skeptic, inputs } => {
                out.push_str(&skeptic.name);
                out.push('(');
                for (i, a) in skeptic.args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write!(out, "{a}").ok()?;
                }
                if !skeptic.args.is_empty() {
                    out.push_str("; ");
                }
                for (i, input) in inputs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write_line(input, out, depth + 1)?;
                }
                out.push(')');
            }
        }
        Some(())
    }

    /// [`NetworkSpec::build`] for an engine that runs live (a daemon, an
    /// embedding): refuses an offline component (the oracle needs to know
    /// when each idle period ends, which only a replay knows; live it would
    /// build and never fire), naming the node and the component, and does
    /// not list offline components among the known names of an error.
    pub fn build_online(&self, registry: &Registry) -> Result<Network, NetworkError> {
        self.build_with(registry, true)
            .map_err(|e| self.in_expansion(e))
    }

    /// Builds the running network: validates the graph (names, cycles,
    /// sinks, arities) and every component's parameters. Errors name the
    /// node and, for one-line specs, the column; for a named network
    /// (`auto`) they say what it expanded to, as its parse errors do.
    ///
    /// The network remembers the spec it was built from, named networks
    /// expanded ([`Network::spec`]): what a learned state is tagged with.
    pub fn build(&self, registry: &Registry) -> Result<Network, NetworkError> {
        self.build_with(registry, false)
            .map_err(|e| self.in_expansion(e))
    }

    /// An error of the expanded network, said in terms of the name the
    /// user wrote: its column is in the expansion, not in what was written.
    fn in_expansion(&self, e: NetworkError) -> NetworkError {
        let Some((name, text)) = &self.expanded else {
            return e;
        };
        NetworkError {
            pos: Some(0),
            source_text: Some(name.clone()),
            message: format!("network `{name}` expands to `{text}`, which does not build: {e}"),
            ..e
        }
    }

    fn build_with(&self, registry: &Registry, online: bool) -> Result<Network, NetworkError> {
        if online {
            self.refuse_offline(registry)?;
        }
        let mut network = self.wire(registry, online)?;
        network.set_spec(self.to_string());
        Ok(network)
    }

    fn refuse_offline(&self, registry: &Registry) -> Result<(), NetworkError> {
        for n in &self.nodes {
            let parts: Vec<&ComponentSpec> = match &n.kind {
                NodeKind::Predictor { start, duration } => {
                    std::iter::once(start).chain(duration.iter()).collect()
                }
                NodeKind::Skeptic { skeptic, .. } => vec![skeptic],
            };
            for c in parts {
                if registry.info(&c.name).is_some_and(|i| i.offline) {
                    return Err(NetworkError::component(
                        &n.name,
                        c.pos,
                        &c.name,
                        "is an offline component (it needs to know the future) and cannot run live: replay it (`lull replay`), or run a network without it",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Wires the components into a network; `online` leaves offline
    /// components out of the names an error lists.
    fn wire(&self, registry: &Registry, online: bool) -> Result<Network, NetworkError> {
        let known = |role: Role| -> Vec<&'static str> {
            registry
                .names(role)
                .into_iter()
                .filter(|n| !(online && registry.info(n).is_some_and(|i| i.offline)))
                .collect()
        };
        let mut b = NetworkBuilder::new();
        for n in &self.nodes {
            let at = |e: crate::registry::ParamError, c: &ComponentSpec| {
                NetworkError::component(&n.name, c.pos, &c.name, e.to_string())
            };
            // What a registry checks already ([`Registry::build`]): an
            // error, never a panic, if one ever gets through.
            let miswired = |c: &ComponentSpec, built: &Built| {
                NetworkError::component(
                    &n.name,
                    c.pos,
                    &c.name,
                    format!(
                        "its factory built a {}, which does not belong here",
                        built.role()
                    ),
                )
            };
            let want = |c: &ComponentSpec, role: Role| -> Result<(), NetworkError> {
                match registry.info(&c.name) {
                    // A named network used as a part: say what it is and
                    // how it is written.
                    None if registry.expand_network(&c.name).is_some() => {
                        Err(NetworkError::component(
                            &n.name,
                            c.pos,
                            &c.name,
                            format!(
                                "is a whole network, not a {role}: write it alone (`{}`), or compose its parts",
                                c.name
                            ),
                        ))
                    }
                    None => {
                        // Where a whole spec may stand (a start detector's
                        // place), the named networks are known names too.
                        let networks: Vec<&str> = if role == Role::StartDetector {
                            registry.networks().iter().map(|i| i.name).collect()
                        } else {
                            Vec::new()
                        };
                        let also = if networks.is_empty() {
                            String::new()
                        } else {
                            format!("; networks, written alone: {}", networks.join(", "))
                        };
                        Err(NetworkError::component(
                            &n.name,
                            c.pos,
                            &c.name,
                            format!(
                                "unknown component{} (known {}s: {}{also})",
                                crate::suggest::did_you_mean(
                                    &c.name,
                                    known(role).into_iter().chain(networks.iter().copied())
                                ),
                                role,
                                known(role).join(", ")
                            ),
                        ))
                    }
                    Some(i) if i.role != role => Err(NetworkError::component(
                        &n.name,
                        c.pos,
                        &c.name,
                        format!("is a {}, not a {}", i.role, role),
                    )),
                    Some(_) => Ok(()),
                }
            };
            match &n.kind {
                NodeKind::Predictor { start, duration } => {
                    want(start, Role::StartDetector)?;
                    let s = match registry
                        .build(&start.name, &start.arg_pairs(), 0)
                        .map_err(|e| at(e, start))?
                    {
                        Built::Start(s) => s,
                        other => return Err(miswired(start, &other)),
                    };
                    let d = match duration {
                        Some(dur) => {
                            want(dur, Role::DurationPredictor)?;
                            match registry
                                .build(&dur.name, &dur.arg_pairs(), 0)
                                .map_err(|e| at(e, dur))?
                            {
                                Built::Duration(d) => d,
                                other => return Err(miswired(dur, &other)),
                            }
                        }
                        None => {
                            let nd = ComponentSpec::new("no-duration");
                            want(&nd, Role::DurationPredictor)?;
                            match registry
                                .build("no-duration", &[], 0)
                                .map_err(|e| at(e, &nd))?
                            {
                                Built::Duration(d) => d,
                                other => return Err(miswired(&nd, &other)),
                            }
                        }
                    };
                    b.predictor(&n.name, s, d);
                }
                NodeKind::Skeptic { skeptic, inputs } => {
                    want(skeptic, Role::Skeptic)?;
                    let info = registry.info(&skeptic.name).expect("checked above");
                    let arity = info.inputs.expect("skeptics declare inputs");
                    if !arity.accepts(inputs.len()) {
                        return Err(NetworkError::component(
                            &n.name,
                            skeptic.pos,
                            &skeptic.name,
                            format!("takes {arity} input(s), given {}", inputs.len()),
                        ));
                    }
                    let s = match registry
                        .build(&skeptic.name, &skeptic.arg_pairs(), inputs.len())
                        .map_err(|e| at(e, skeptic))?
                    {
                        Built::Skeptic(s) => s,
                        other => return Err(miswired(skeptic, &other)),
                    };
                    let names: Vec<&str> = inputs.iter().map(String::as_str).collect();
                    b.skeptic(&n.name, s, &names);
                }
            }
            if let Some(p) = n.pos() {
                b.position(&n.name, p);
            }
        }
        if let Some(s) = &self.sink {
            b.sink(s);
        }
        b.build()
    }
}

/// The one-line form when there is one, else the node list.
impl fmt::Display for NetworkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_line() {
            Some(line) => f.write_str(&line),
            None => {
                for (i, n) in self.nodes.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    match &n.kind {
                        NodeKind::Predictor { start, duration } => {
                            write!(f, "{} = {start}", n.name)?;
                            if let Some(d) = duration {
                                write!(f, " + {d}")?;
                            }
                        }
                        NodeKind::Skeptic { skeptic, inputs } => {
                            write!(f, "{} = {skeptic}[{}]", n.name, inputs.join(", "))?;
                        }
                    }
                }
                Ok(())
            }
        }
    }
}

/// Parses a one-line spec with the registry and builds it.
///
/// The usual entry point: `build_network("timer(1s) + fixed(10s)", &reg)`.
pub fn build_network(text: &str, registry: &Registry) -> Result<Network, NetworkError> {
    let spec = NetworkSpec::parse(text, Some(registry)).map_err(NetworkError::from)?;
    spec.build(registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> NetworkSpec {
        NetworkSpec::parse(s, None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_the_spec_examples() {
        let n = parse("timer(1s) + fixed(10s)");
        assert_eq!(n.nodes.len(), 1);
        assert_eq!(n.to_line().unwrap(), "timer(1s) + fixed(10s)");

        let n = parse("  adapt-timer-arith-geom( step = 100ms )+backoff-arith-geom(step=500ms)");
        assert_eq!(
            n.to_line().unwrap(),
            "adapt-timer-arith-geom(step=100ms) + backoff-arith-geom(step=500ms)"
        );

        let n = parse("low-pass(min=3s; event-window(n=10, rate=1) + fixed(100s))");
        assert_eq!(n.nodes.len(), 2);
        assert_eq!(n.sink.as_deref(), Some("n0"));

        let n = parse(
            "vote(threshold=2; timer(1s) + fixed(10s), moving-average(rate=0.1) + fixed(10s))",
        );
        assert_eq!(n.nodes.len(), 3);
        match &n.nodes[0].kind {
            NodeKind::Skeptic { inputs, .. } => assert_eq!(inputs, &["n1", "n2"]),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn skeptic_without_params_needs_no_semicolon() {
        let n = parse("and(timer(1s), timer(2s) + fixed(1s))");
        assert_eq!(
            n.to_line().unwrap(),
            "and(timer(1s), timer(2s) + fixed(1s))"
        );
        let n = parse("weighted-vote(weights=[1, 2], threshold=2; timer(1s), timer(2s))");
        assert_eq!(
            n.to_line().unwrap(),
            "weighted-vote(weights=[1, 2], threshold=2; timer(1s), timer(2s))"
        );
    }

    #[test]
    fn durations_relative_to_b_parse_positionally() {
        for (text, value) in [
            ("fixed(B/2)", "B/2"),
            ("fixed(B)", "B"),
            ("fixed(2B)", "2B"),
            ("timer(B / 16)", "B / 16"),
        ] {
            let n = parse(text);
            match &n.nodes[0].kind {
                NodeKind::Predictor { start, .. } => {
                    assert_eq!(start.args[0].value, value, "{text}");
                }
                k => panic!("{k:?}"),
            }
        }
        let n = parse("timer(2B) + fixed(B/2)");
        assert_eq!(n.to_line().unwrap(), "timer(2B) + fixed(B/2)");
    }

    #[test]
    fn round_trips_through_text() {
        for s in [
            "timer(1s)",
            "oracle",
            "average(8, median)",
            "vote(threshold=2; timer(1s) + fixed(10s), low-pass(min=3s; timer(5s)))",
        ] {
            let a = parse(s);
            let b = parse(&a.to_line().unwrap());
            assert_eq!(a, b, "{s}");
        }
    }

    #[test]
    fn errors_point_at_the_column() {
        for (s, col) in [
            ("timer(1s", 8),
            ("timer(1s) + ", 12),
            ("timer(1s) + fixed(1s) + fixed(2s)", 22),
            ("timer(1s)) ", 9),
            ("(", 0),
            ("", 0),
            ("timer(=1s)", 6),
            ("vote(threshold=2; )", 18),
        ] {
            let e = NetworkSpec::parse(s, None).unwrap_err();
            assert_eq!(e.pos, col, "{s:?}: {e}");
            assert!(
                e.to_string().contains(&format!("column {}", col + 1)),
                "{e}"
            );
        }
    }
}
