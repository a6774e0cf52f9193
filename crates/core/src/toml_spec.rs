//! Networks as TOML documents (feature `toml`): named nodes with
//! `inputs = [...]`, so one predictor can feed several skeptics.
//!
//! ```toml
//! sink = "both"              # optional: the one node nothing consumes
//!
//! [[node]]
//! name = "fast"
//! spec = "timer(1s) + fixed(10s)"        # a predictor (or any one-line spec)
//!
//! [[node]]
//! name = "slow"
//! spec = "event-window(n=10, rate=1) + fixed(100s)"
//!
//! [[node]]
//! name = "both"
//! skeptic = "vote(threshold=2)"          # a skeptic and its parameters
//! inputs = ["fast", "slow"]
//! ```
//!
//! A `spec` that is itself a tree of skeptics is expanded in place: its
//! inner nodes are named `NAME.n1`, `NAME.n2`, … and its root is `NAME`.

use serde::{Deserialize, Serialize};

use crate::network::NetworkError;
use crate::registry::Registry;
use crate::spec::{ComponentSpec, NetworkSpec, NodeKind, NodeSpec};

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sink: Option<String>,
    #[serde(default)]
    node: Vec<NodeDoc>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeDoc {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skeptic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inputs: Option<Vec<String>>,
}

fn single_component(
    text: &str,
    node: &str,
    registry: Option<&Registry>,
) -> Result<ComponentSpec, NetworkError> {
    // A skeptic header `vote(threshold=2)` parses as a plain component.
    let spec = NetworkSpec::parse(text, None).map_err(|e| {
        let mut n = NetworkError::from(e);
        n.node = node.to_string();
        n
    })?;
    match spec.nodes.as_slice() {
        [
            NodeSpec {
                kind:
                    NodeKind::Predictor {
                        start,
                        duration: None,
                    },
                ..
            },
        ] => {
            if let Some(info) = registry.and_then(|r| r.info(&start.name)) {
                if info.role != crate::registry::Role::Skeptic {
                    return Err(NetworkError::component(
                        node,
                        None,
                        &start.name,
                        format!("is a {}, not a skeptic", info.role),
                    ));
                }
            }
            let mut c = start.clone();
            c.pos = None;
            Ok(c)
        }
        _ => Err(NetworkError::node(
            node,
            format!(
                "`skeptic = {text:?}` must be one skeptic with its parameters; its inputs go in `inputs`"
            ),
        )),
    }
}

impl NetworkSpec {
    /// Parses a TOML network document. Errors name the node (or the TOML
    /// line and column for syntax errors).
    pub fn from_toml(text: &str, registry: Option<&Registry>) -> Result<NetworkSpec, NetworkError> {
        let doc: Doc = toml::from_str(text)
            .map_err(|e| NetworkError::node("", format!("invalid network TOML: {e}")))?;
        if doc.node.is_empty() {
            return Err(NetworkError::node("", "the network TOML has no [[node]]"));
        }
        let mut nodes = Vec::new();
        for n in doc.node {
            match (n.spec, n.skeptic, n.inputs) {
                (Some(spec), None, None) => {
                    let sub = NetworkSpec::parse(&spec, registry).map_err(|e| {
                        let mut err = NetworkError::from(e);
                        err.node = n.name.clone();
                        err
                    })?;
                    let root = sub.sink.clone().expect("one-line specs name their root");
                    let rename = |s: &str| {
                        if s == root {
                            n.name.clone()
                        } else {
                            format!("{}.{s}", n.name)
                        }
                    };
                    for mut inner in sub.nodes {
                        inner.name = rename(&inner.name);
                        if let NodeKind::Predictor { start, duration } = &mut inner.kind {
                            start.pos = None;
                            if let Some(d) = duration {
                                d.pos = None;
                            }
                        }
                        if let NodeKind::Skeptic { skeptic, inputs } = &mut inner.kind {
                            skeptic.pos = None;
                            for i in inputs.iter_mut() {
                                *i = rename(i);
                            }
                        }
                        nodes.push(inner);
                    }
                }
                (None, Some(skeptic), Some(inputs)) => {
                    let skeptic = single_component(&skeptic, &n.name, registry)?;
                    nodes.push(NodeSpec {
                        name: n.name,
                        kind: NodeKind::Skeptic { skeptic, inputs },
                    });
                }
                (None, Some(_), None) => {
                    return Err(NetworkError::node(
                        &n.name,
                        "a skeptic node needs `inputs = [...]`",
                    ));
                }
                (Some(_), _, _) => {
                    return Err(NetworkError::node(
                        &n.name,
                        "give either `spec` (a predictor) or `skeptic` with `inputs`, not both",
                    ));
                }
                (None, None, _) => {
                    return Err(NetworkError::node(
                        &n.name,
                        "needs `spec = \"START + DURATION\"` or `skeptic = \"…\"`",
                    ));
                }
            }
        }
        Ok(NetworkSpec::from_nodes(nodes, doc.sink))
    }

    /// The TOML form: one `[[node]]` per node.
    pub fn to_toml(&self) -> String {
        let doc = Doc {
            sink: self.sink.clone(),
            node: self
                .nodes
                .iter()
                .map(|n| match &n.kind {
                    NodeKind::Predictor { start, duration } => NodeDoc {
                        name: n.name.clone(),
                        spec: Some(match duration {
                            Some(d) => format!("{start} + {d}"),
                            None => start.to_string(),
                        }),
                        skeptic: None,
                        inputs: None,
                    },
                    NodeKind::Skeptic { skeptic, inputs } => NodeDoc {
                        name: n.name.clone(),
                        spec: None,
                        skeptic: Some(skeptic.to_string()),
                        inputs: Some(inputs.clone()),
                    },
                })
                .collect(),
        };
        toml::to_string(&doc).expect("a network document always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_and_toml_give_the_same_graph() {
        let line = NetworkSpec::parse(
            "vote(threshold=2; timer(1s) + fixed(10s), low-pass(min=3s; timer(5s)))",
            None,
        )
        .unwrap();
        let again = NetworkSpec::from_toml(&line.to_toml(), None).unwrap();
        assert_eq!(line, again);
    }

    #[test]
    fn shared_nodes_and_inline_subtrees() {
        let doc = r#"
            sink = "both"
            [[node]]
            name = "fast"
            spec = "timer(1s) + fixed(10s)"
            [[node]]
            name = "filtered"
            spec = "low-pass(min=3s; timer(5s))"
            [[node]]
            name = "a"
            skeptic = "and"
            inputs = ["fast", "filtered"]
            [[node]]
            name = "b"
            skeptic = "vote(threshold=1)"
            inputs = ["fast", "filtered"]
            [[node]]
            name = "both"
            skeptic = "and"
            inputs = ["a", "b"]
        "#;
        let spec = NetworkSpec::from_toml(doc, None).unwrap();
        let names: Vec<_> = spec.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["fast", "filtered", "filtered.n1", "a", "b", "both"]);
        assert_eq!(spec.to_line(), None, "a shared node has no one-line form");
        assert_eq!(NetworkSpec::from_toml(&spec.to_toml(), None).unwrap(), spec);
    }

    #[test]
    fn malformed_documents_name_the_node() {
        let cases = [
            ("[[node]]\nname = \"x\"\n", "x"),
            ("[[node]]\nname = \"y\"\nskeptic = \"vote\"\n", "y"),
            ("[[node]]\nname = \"z\"\nspec = \"timer(\"\n", "z"),
            (
                "[[node]]\nname = \"w\"\nspec = \"timer(1s)\"\nskeptic = \"and\"\ninputs = []\n",
                "w",
            ),
        ];
        for (doc, node) in cases {
            let e = NetworkSpec::from_toml(doc, None).unwrap_err();
            assert_eq!(e.node, node, "{doc}: {e}");
        }
        let e = NetworkSpec::from_toml("[[node]]\nnam = 1\n", None).unwrap_err();
        assert!(e.to_string().contains("line"), "{e}");
    }
}
