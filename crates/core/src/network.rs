//! Detector networks (§3): predictors and skeptics wired as a DAG with one
//! sink that feeds the actuator.
//!
//! A network is evaluated in topological order, once per stimulus (an
//! event, an idle-period boundary or a deadline): each node sees the
//! stimulus, then the predictions its inputs produced for it, so a node
//! shared by several skeptics runs once and every consumer gets its output.
//! A network of one predictor skips the graph machinery entirely.

use std::collections::BTreeMap;
use std::fmt;

use crate::component::{
    Context, Detector, DurationPredictor, Prediction, Predictor, Skeptic, StartDetector,
    restore_next,
};
use crate::event::Event;
use crate::saved::{Learned, LearnedError};
use crate::time::Nanos;

/// Why a network could not be built. Names the node at fault and, for
/// one-line specs, the column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkError {
    /// The node (empty for problems of the whole network).
    pub node: String,
    /// The component kind involved, if any.
    pub component: Option<String>,
    /// Byte offset in the one-line spec.
    pub pos: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// The spec source, when the error comes from parsing one.
    pub source_text: Option<String>,
}

impl NetworkError {
    /// A problem with node `node`.
    pub fn node(node: &str, message: impl Into<String>) -> Self {
        NetworkError {
            node: node.to_string(),
            component: None,
            pos: None,
            message: message.into(),
            source_text: None,
        }
    }
    /// A problem with component `component` of node `node`.
    pub fn component(
        node: &str,
        pos: Option<usize>,
        component: &str,
        message: impl Into<String>,
    ) -> Self {
        NetworkError {
            node: node.to_string(),
            component: Some(component.to_string()),
            pos,
            message: message.into(),
            source_text: None,
        }
    }
}

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (Some(src), Some(pos)) = (&self.source_text, self.pos) {
            return write_spec_error(f, src, pos, &self.message);
        }
        match (&self.component, self.pos, self.node.is_empty()) {
            (Some(c), Some(p), _) => write!(f, "`{c}` at column {}: {}", p + 1, self.message),
            (Some(c), None, false) => write!(f, "node `{}` (`{c}`): {}", self.node, self.message),
            (Some(c), None, true) => write!(f, "`{c}`: {}", self.message),
            (None, _, false) => write!(f, "node `{}`: {}", self.node, self.message),
            (None, _, true) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for NetworkError {}

/// Writes a spec's error: the column, `message`, then the spec `source`
/// with a caret under byte `pos`. A [`SpecError`](crate::spec::SpecError)
/// is shown so, and a [`NetworkError`] made from one.
pub(crate) fn write_spec_error(
    f: &mut fmt::Formatter<'_>,
    source: &str,
    pos: usize,
    message: &str,
) -> fmt::Result {
    let col = source[..pos.min(source.len())].chars().count();
    write!(
        f,
        "bad network spec at column {}: {}\n  {}\n  {}^",
        col + 1,
        message,
        source,
        " ".repeat(col)
    )
}

enum Pending {
    Source(Box<dyn Detector>),
    Skeptic(Box<dyn Skeptic>, Vec<String>),
}

/// Builds a network in code from named nodes; [`NetworkBuilder::build`]
/// validates it (duplicate and unknown names, cycles, missing or several
/// sinks) with errors that name the node.
#[derive(Default)]
pub struct NetworkBuilder {
    nodes: Vec<(String, Pending)>,
    positions: BTreeMap<String, usize>,
    sink: Option<String>,
}

impl fmt::Debug for NetworkBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.nodes.iter().map(|(n, _)| n))
            .finish()
    }
}

impl NetworkBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a predictor node.
    pub fn predictor(
        &mut self,
        name: &str,
        start: Box<dyn StartDetector>,
        duration: Box<dyn DurationPredictor>,
    ) -> &mut Self {
        self.source(name, Box::new(Predictor::new(start, duration)))
    }
    /// Adds any detector (a predictor, or a whole sub-network) as a source.
    pub fn source(&mut self, name: &str, detector: Box<dyn Detector>) -> &mut Self {
        self.nodes
            .push((name.to_string(), Pending::Source(detector)));
        self
    }
    /// Adds a skeptic over the named inputs (in order).
    pub fn skeptic(&mut self, name: &str, skeptic: Box<dyn Skeptic>, inputs: &[&str]) -> &mut Self {
        let inputs = inputs.iter().map(|s| s.to_string()).collect();
        self.nodes
            .push((name.to_string(), Pending::Skeptic(skeptic, inputs)));
        self
    }
    /// Names the sink (otherwise: the one node nothing consumes).
    pub fn sink(&mut self, name: &str) -> &mut Self {
        self.sink = Some(name.to_string());
        self
    }
    /// Records where a node was written (for error messages).
    pub fn position(&mut self, name: &str, pos: usize) -> &mut Self {
        self.positions.insert(name.to_string(), pos);
        self
    }

    fn err(&self, node: &str, message: impl Into<String>) -> NetworkError {
        let mut e = NetworkError::node(node, message);
        e.pos = self.positions.get(node).copied();
        e
    }

    /// Validates and builds.
    pub fn build(self) -> Result<Network, NetworkError> {
        if self.nodes.is_empty() {
            return Err(NetworkError::node("", "the network has no nodes"));
        }
        let mut index = BTreeMap::new();
        for (i, (name, _)) in self.nodes.iter().enumerate() {
            if name.is_empty() {
                return Err(NetworkError::node("", format!("node #{i} has no name")));
            }
            if index.insert(name.clone(), i).is_some() {
                return Err(self.err(name, "two nodes have this name"));
            }
        }
        let n = self.nodes.len();
        // consumers[i]: (consumer node, input slot)
        let mut consumers: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        let mut indegree = vec![0usize; n];
        for (i, (name, node)) in self.nodes.iter().enumerate() {
            if let Pending::Skeptic(_, inputs) = node {
                if inputs.is_empty() {
                    return Err(self.err(name, "a skeptic needs at least one input"));
                }
                for (slot, input) in inputs.iter().enumerate() {
                    let &j = index.get(input).ok_or_else(|| {
                        self.err(
                            name,
                            format!("input `{input}` is not a node of this network"),
                        )
                    })?;
                    if j == i {
                        return Err(self.err(name, "a node cannot be its own input (cycle)"));
                    }
                    consumers[j].push((i, slot));
                    indegree[i] += 1;
                }
            }
        }
        let sink = match &self.sink {
            Some(s) => {
                let &i = index.get(s).ok_or_else(|| {
                    NetworkError::node(s, "the sink is not a node of this network")
                })?;
                if !consumers[i].is_empty() {
                    return Err(self.err(
                        s,
                        "the sink feeds other nodes; the sink must be the end of the network",
                    ));
                }
                i
            }
            None => {
                let free: Vec<usize> = (0..n).filter(|&i| consumers[i].is_empty()).collect();
                match free.as_slice() {
                    [i] => *i,
                    [] => {
                        // Every node feeds another, so following any
                        // consumer from any node comes back: name that
                        // cycle, as a network with a sink does.
                        let mut path = vec![0];
                        let start = loop {
                            let next = consumers[*path.last().unwrap_or(&0)][0].0;
                            if let Some(at) = path.iter().position(|&p| p == next) {
                                break at;
                            }
                            path.push(next);
                        };
                        let mut cycle: Vec<&str> = path[start..]
                            .iter()
                            .map(|&i| self.nodes[i].0.as_str())
                            .collect();
                        cycle.push(cycle[0]);
                        return Err(self.err(
                            cycle[0],
                            format!(
                                "is part of a cycle ({}), so no node is left to be the sink",
                                cycle.join(" → ")
                            ),
                        ));
                    }
                    many => {
                        let names: Vec<_> =
                            many.iter().map(|&i| self.nodes[i].0.as_str()).collect();
                        return Err(self.err(
                            names[1],
                            format!(
                                "several nodes feed nothing ({}); a network has exactly one sink",
                                names.join(", ")
                            ),
                        ));
                    }
                }
            }
        };
        for (i, c) in consumers.iter().enumerate() {
            if i != sink && c.is_empty() {
                return Err(self.err(
                    &self.nodes[i].0,
                    "feeds nothing: a network has exactly one sink",
                ));
            }
        }
        // Kahn's algorithm, smallest index first so the order is stable.
        let mut order = Vec::with_capacity(n);
        let mut ready: std::collections::BTreeSet<usize> =
            (0..n).filter(|&i| indegree[i] == 0).collect();
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for &(c, _) in &consumers[i] {
                indegree[c] -= 1;
                if indegree[c] == 0 {
                    ready.insert(c);
                }
            }
        }
        if order.len() < n {
            let stuck = (0..n)
                .find(|i| !order.contains(i))
                .expect("some node is left");
            return Err(self.err(&self.nodes[stuck].0, "is part of a cycle"));
        }
        let mut slots: Vec<Option<(String, Pending)>> = self.nodes.into_iter().map(Some).collect();
        if n == 1 {
            let (name, node) = slots[0].take().expect("one node");
            return match node {
                Pending::Source(d) => Ok(Network {
                    inner: Inner::Single(name, d),
                    spec: None,
                }),
                Pending::Skeptic(..) => Err(NetworkError::node(&name, "a skeptic needs inputs")),
            };
        }
        let mut position = vec![0; n];
        for (k, &i) in order.iter().enumerate() {
            position[i] = k;
        }
        let mut nodes = Vec::with_capacity(n);
        let mut node_consumers = Vec::with_capacity(n);
        for &i in &order {
            let (name, node) = slots[i].take().expect("each node once");
            let imp = match node {
                Pending::Source(d) => NodeImpl::Source(d),
                Pending::Skeptic(s, _) => NodeImpl::Skeptic(s),
            };
            nodes.push(Node {
                name,
                imp,
                deadline: None,
                evaluations: 0,
            });
            node_consumers.push(
                consumers[i]
                    .iter()
                    .map(|&(c, slot)| (position[c], slot))
                    .collect(),
            );
        }
        Ok(Network {
            inner: Inner::Dag(Dag {
                inboxes: vec![Vec::new(); n],
                nodes,
                consumers: node_consumers,
                sink: position[sink],
                scratch: Vec::new(),
            }),
            spec: None,
        })
    }
}

enum NodeImpl {
    Source(Box<dyn Detector>),
    Skeptic(Box<dyn Skeptic>),
}

struct Node {
    name: String,
    imp: NodeImpl,
    deadline: Option<Nanos>,
    evaluations: u64,
}

impl NodeImpl {
    fn next_deadline(&self) -> Option<Nanos> {
        match self {
            NodeImpl::Source(d) => d.next_deadline(),
            NodeImpl::Skeptic(s) => s.next_deadline(),
        }
    }
}

#[derive(Clone, Copy)]
enum Stimulus<'a> {
    Event(&'a Event),
    IdleBegin,
    IdleEnd(Nanos),
    Deadline,
}

struct Dag {
    nodes: Vec<Node>,
    consumers: Vec<Vec<(usize, usize)>>,
    inboxes: Vec<Vec<(usize, Prediction)>>,
    sink: usize,
    scratch: Vec<Prediction>,
}

impl Dag {
    fn step(&mut self, stimulus: Stimulus<'_>, ctx: &Context, out: &mut Vec<Prediction>) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for i in 0..self.nodes.len() {
            scratch.clear();
            let node = &mut self.nodes[i];
            let inbox = &mut self.inboxes[i];
            let due = matches!(stimulus, Stimulus::Deadline)
                && node.deadline.is_some_and(|d| d <= ctx.now);
            let touched = !matches!(stimulus, Stimulus::Deadline) || due || !inbox.is_empty();
            if !touched {
                continue;
            }
            node.evaluations += 1;
            match (&mut node.imp, stimulus) {
                (NodeImpl::Source(d), Stimulus::Event(ev)) => d.on_event(ev, ctx, &mut scratch),
                (NodeImpl::Source(d), Stimulus::IdleBegin) => d.on_idle_begin(ctx, &mut scratch),
                (NodeImpl::Source(d), Stimulus::IdleEnd(b)) => d.on_idle_end(ctx, b),
                (NodeImpl::Source(d), Stimulus::Deadline) if due => {
                    d.on_deadline(ctx, &mut scratch)
                }
                (NodeImpl::Skeptic(s), Stimulus::Event(ev)) => scratch.extend(s.on_event(ev, ctx)),
                (NodeImpl::Skeptic(s), Stimulus::IdleBegin) => scratch.extend(s.on_idle_begin(ctx)),
                (NodeImpl::Skeptic(s), Stimulus::IdleEnd(b)) => s.on_idle_end(ctx, b),
                (NodeImpl::Skeptic(s), Stimulus::Deadline) if due => {
                    scratch.extend(s.on_deadline(ctx))
                }
                _ => {}
            }
            if let NodeImpl::Skeptic(s) = &mut node.imp {
                for (slot, p) in inbox.drain(..) {
                    scratch.extend(s.on_input(slot, &p, ctx));
                }
            }
            node.deadline = node.imp.next_deadline();
            if i == self.sink {
                out.extend_from_slice(&scratch);
            } else {
                for p in &scratch {
                    for &(c, slot) in &self.consumers[i] {
                        self.inboxes[c].push((slot, *p));
                    }
                }
            }
        }
        self.scratch = scratch;
    }
}

enum Inner {
    Single(String, Box<dyn Detector>),
    Dag(Dag),
}

/// A built detector network; a [`Detector`] the engine can drive.
pub struct Network {
    inner: Inner,
    // The spec it was built from, named networks expanded.
    spec: Option<String>,
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.node_names()).finish()
    }
}

impl Network {
    /// The spec the network was built from, with named networks expanded
    /// (`auto` built for spin-down is `long-idle`), as
    /// [`NetworkSpec`](crate::spec::NetworkSpec) prints it; `None` for one
    /// wired in code with a [`NetworkBuilder`]. A learned state is tagged
    /// with it, so a state learned by one network is refused by another
    /// even where both were asked for by the same name.
    pub fn spec(&self) -> Option<&str> {
        self.spec.as_deref()
    }

    pub(crate) fn set_spec(&mut self, spec: String) {
        self.spec = Some(spec);
    }

    /// The node names in evaluation order.
    pub fn node_names(&self) -> Vec<&str> {
        match &self.inner {
            Inner::Single(n, _) => vec![n.as_str()],
            Inner::Dag(d) => d.nodes.iter().map(|n| n.name.as_str()).collect(),
        }
    }
    /// Every node's [gauges](Detector::gauges) as `(node, name, value)`,
    /// in evaluation order: what a daemon exports as metrics (a `share`
    /// node's weights, an adaptive timer's timeout).
    pub fn node_gauges(&self) -> Vec<(String, String, f64)> {
        let tag = |node: &str, g: Vec<(String, f64)>| {
            g.into_iter()
                .map(|(k, v)| (node.to_string(), k, v))
                .collect::<Vec<_>>()
        };
        match &self.inner {
            Inner::Single(n, d) => tag(n, d.gauges()),
            Inner::Dag(d) => d
                .nodes
                .iter()
                .flat_map(|n| {
                    let g = match &n.imp {
                        NodeImpl::Source(d) => d.gauges(),
                        NodeImpl::Skeptic(s) => s.gauges(),
                    };
                    tag(&n.name, g)
                })
                .collect(),
        }
    }
    /// How many times node `name` has been evaluated (a stimulus reached
    /// it); `None` for a one-node network or an unknown name.
    pub fn evaluations(&self, name: &str) -> Option<u64> {
        match &self.inner {
            Inner::Single(..) => None,
            Inner::Dag(d) => d
                .nodes
                .iter()
                .find(|n| n.name == name)
                .map(|n| n.evaluations),
        }
    }
}

impl Detector for Network {
    fn spec(&self) -> Option<&str> {
        Network::spec(self)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context, out: &mut Vec<Prediction>) {
        match &mut self.inner {
            Inner::Single(_, d) => d.on_event(ev, ctx, out),
            Inner::Dag(d) => d.step(Stimulus::Event(ev), ctx, out),
        }
    }
    /// [`Network::node_gauges`] as `node.name`: what a replay reports of
    /// the network at its end.
    fn gauges(&self) -> Vec<(String, f64)> {
        self.node_gauges()
            .into_iter()
            .map(|(node, name, v)| (format!("{node}.{name}"), v))
            .collect()
    }
    fn wants_events(&self) -> bool {
        match &self.inner {
            Inner::Single(_, d) => d.wants_events(),
            // Skeptics see every event.
            Inner::Dag(_) => true,
        }
    }
    fn quiet_below(&self) -> Nanos {
        match &self.inner {
            Inner::Single(_, d) => d.quiet_below(),
            // Skeptics see every idle period.
            Inner::Dag(_) => Nanos::ZERO,
        }
    }
    fn on_idle_begin(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        match &mut self.inner {
            Inner::Single(_, d) => d.on_idle_begin(ctx, out),
            Inner::Dag(d) => d.step(Stimulus::IdleBegin, ctx, out),
        }
    }
    fn on_idle_end(&mut self, ctx: &Context, began: Nanos) {
        match &mut self.inner {
            Inner::Single(_, d) => d.on_idle_end(ctx, began),
            Inner::Dag(d) => d.step(Stimulus::IdleEnd(began), ctx, &mut Vec::new()),
        }
    }
    fn next_deadline(&self) -> Option<Nanos> {
        match &self.inner {
            Inner::Single(_, d) => d.next_deadline(),
            Inner::Dag(d) => d.nodes.iter().filter_map(|n| n.deadline).min(),
        }
    }
    fn on_deadline(&mut self, ctx: &Context, out: &mut Vec<Prediction>) {
        match &mut self.inner {
            Inner::Single(_, d) => d.on_deadline(ctx, out),
            Inner::Dag(d) => d.step(Stimulus::Deadline, ctx, out),
        }
    }
    fn save_parts(&self, now: Nanos, out: &mut Vec<Option<Learned>>) {
        match &self.inner {
            Inner::Single(_, d) => d.save_parts(now, out),
            Inner::Dag(d) => {
                for n in &d.nodes {
                    match &n.imp {
                        NodeImpl::Source(d) => d.save_parts(now, out),
                        NodeImpl::Skeptic(s) => out.push(s.save(now)),
                    }
                }
            }
        }
    }
    fn restore_parts(
        &mut self,
        parts: &mut &[Option<Learned>],
        now: Nanos,
    ) -> Result<(), LearnedError> {
        match &mut self.inner {
            Inner::Single(_, d) => d.restore_parts(parts, now),
            Inner::Dag(d) => {
                for n in &mut d.nodes {
                    match &mut n.imp {
                        NodeImpl::Source(d) => d.restore_parts(parts, now)?,
                        NodeImpl::Skeptic(s) => restore_next(parts, |l| s.restore(l, now))?,
                    }
                }
                Ok(())
            }
        }
    }
}
