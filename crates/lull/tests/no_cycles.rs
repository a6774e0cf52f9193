//! No import cycle between the modules of one crate (issue 76). For
//! every crate of the workspace (each package's `src/lib.rs`,
//! `src/main.rs` and `src/bin/*`), the modules under one parent form a
//! graph: an edge `a → b` when code in `a` or below it names an item of
//! `b` or below it. None of these graphs has a cycle. At the top, the
//! parent is the crate root: `src/foo.rs` or `src/foo/` is module `foo`
//! (what docs/architecture.md calls a crate's modules); the same holds
//! for the modules under each module. A parent naming its own modules
//! (`lib.rs` re-exporting them, say) is not an edge; nor is naming an
//! item a parent defines itself (a crate's error type in `lib.rs`), nor
//! test code (`#[cfg(test)]`, `#[test]`): a unit test may reach up its
//! crate.
//!
//! The scan reads tokens (`proc-macro2`), so comments, doc comments and
//! strings name nothing. It follows `mod` declarations (`#[path]` too)
//! from each crate root and resolves `use` trees, `crate::`, `self::`,
//! `super::` and `$crate::` paths, paths through a child module or an
//! imported name, and names brought in by a glob (`use super::*`). A
//! path through a re-export names both modules: `crate::a::X`, where
//! `a` re-exports `X` from `b`, is an edge to `a` and to `b`. A path it
//! cannot resolve (another crate, a local item) is no edge.
//!
//! docs/architecture.md lists each library's modules layer by layer; a
//! test here checks that the list is the code's.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// A module's path from its crate root: `[]` is the root.
type ModPath = Vec<String>;

#[derive(Debug, Default)]
struct Module {
    /// Declared under `#[cfg(test)]` (or inside such a module).
    test: bool,
    children: BTreeSet<String>,
    /// Names a `use` brings in: name → the path as written, resolved
    /// from this module.
    aliases: BTreeMap<String, Vec<String>>,
    /// The paths of `use …::*`, as written.
    globs: Vec<Vec<String>>,
}

/// A path named in code: where, and as written.
#[derive(Debug)]
struct Ref {
    from: ModPath,
    segs: Vec<String>,
    file: PathBuf,
    line: usize,
    /// In test code (`#[cfg(test)]`, `#[test]`).
    test: bool,
}

/// One crate's module tree and the paths its code names.
#[derive(Debug)]
struct Crate {
    /// The crate root file, relative to the scanned tree.
    root: PathBuf,
    modules: BTreeMap<ModPath, Module>,
    refs: Vec<Ref>,
    /// Every file read.
    files: BTreeSet<PathBuf>,
    errors: Vec<String>,
}

/// Where a file's `mod` declarations look for their files.
struct Ctx<'a> {
    file: &'a Path,
    /// Where `mod x;` finds `x.rs` or `x/mod.rs`.
    dir: PathBuf,
    /// Where `#[path = "…"]` is relative to.
    path_base: PathBuf,
    /// Test code only.
    test: bool,
}

/// The attributes of the item being read that matter here.
#[derive(Default)]
struct Attrs {
    /// `#[path = "…"]`.
    path: Option<String>,
    /// `#[cfg(test)]` or `#[test]`.
    test: bool,
}

fn is_punct(t: Option<&TokenTree>, c: char) -> bool {
    matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

/// `::` at `toks[i]`.
fn is_colon2(toks: &[TokenTree], i: usize) -> bool {
    matches!(toks.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
        && is_punct(toks.get(i + 1), ':')
}

fn ident(t: Option<&TokenTree>) -> Option<String> {
    match t {
        Some(TokenTree::Ident(i)) => {
            let s = i.to_string();
            Some(s.strip_prefix("r#").map(str::to_string).unwrap_or(s))
        }
        _ => None,
    }
}

fn line_of(t: &TokenTree) -> usize {
    t.span().start().line
}

/// `path = "…"` in an attribute's brackets.
fn path_attr(g: &proc_macro2::Group) -> Option<String> {
    let toks: Vec<TokenTree> = g.stream().into_iter().collect();
    if ident(toks.first()).as_deref() == Some("path") && is_punct(toks.get(1), '=') {
        if let Some(TokenTree::Literal(l)) = toks.get(2) {
            let s = l.to_string();
            return s
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .map(str::to_string);
        }
    }
    None
}

/// `#[test]`, `#[cfg(test)]` or `#[cfg(all(test, …))]`: code built for
/// unit tests only.
fn is_test_attr(g: &proc_macro2::Group) -> bool {
    let toks: Vec<TokenTree> = g.stream().into_iter().collect();
    let words = |t: &TokenTree| match t {
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
            g.stream().into_iter().collect::<Vec<_>>()
        }
        _ => Vec::new(),
    };
    let is_test = |t: &[TokenTree]| t.len() == 1 && ident(t.first()).as_deref() == Some("test");
    match ident(toks.first()).as_deref() {
        Some("test") => toks.len() == 1,
        Some("cfg") if toks.len() == 2 => {
            let cfg = words(&toks[1]);
            is_test(&cfg)
                || (ident(cfg.first()).as_deref() == Some("all")
                    && cfg.len() == 2
                    && words(&cfg[1])
                        .split(|t| is_punct(Some(t), ','))
                        .any(is_test))
        }
        _ => false,
    }
}

impl Crate {
    fn load(tree: &Path, root: &Path) -> Crate {
        let mut krate = Crate {
            root: root.to_path_buf(),
            modules: BTreeMap::new(),
            refs: Vec::new(),
            files: BTreeSet::new(),
            errors: Vec::new(),
        };
        krate.load_file(tree, root, Vec::new(), true, false);
        krate
    }

    /// Reads the file of module `module`; `mod_rs` for a crate root, a
    /// `mod.rs` or a `#[path]` file, whose submodules sit beside it;
    /// `test` for a module of test code.
    fn load_file(&mut self, tree: &Path, file: &Path, module: ModPath, mod_rs: bool, test: bool) {
        self.modules.entry(module.clone()).or_default().test = test;
        if !self.files.insert(file.to_path_buf()) {
            return;
        }
        let text = match std::fs::read_to_string(tree.join(file)) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(format!("{}: {e}", file.display()));
                return;
            }
        };
        let tokens: TokenStream = match text.parse() {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(format!("{}: {e:?}", file.display()));
                return;
            }
        };
        let parent = file.parent().unwrap_or(Path::new("")).to_path_buf();
        let dir = if mod_rs {
            parent.clone()
        } else {
            parent.join(file.file_stem().unwrap())
        };
        let ctx = Ctx {
            file,
            dir,
            path_base: parent,
            test,
        };
        self.scan(tree, tokens, &module, &ctx);
    }

    fn scan(&mut self, tree: &Path, tokens: TokenStream, module: &ModPath, ctx: &Ctx) {
        let toks: Vec<TokenTree> = tokens.into_iter().collect();
        // Test code: the whole scope (`#![cfg(test)]`), or the next item.
        let mut scope_test = ctx.test;
        let mut attrs = Attrs::default();
        let mut i = 0;
        while i < toks.len() {
            let test = scope_test || attrs.test;
            if is_punct(toks.get(i), '#') {
                let inner = is_punct(toks.get(i + 1), '!');
                let j = if inner { i + 2 } else { i + 1 };
                if let Some(TokenTree::Group(g)) = toks.get(j) {
                    if g.delimiter() == Delimiter::Bracket {
                        if let Some(p) = path_attr(g) {
                            attrs.path = Some(p);
                        }
                        if is_test_attr(g) {
                            if inner {
                                scope_test = true;
                            } else {
                                attrs.test = true;
                            }
                        }
                        i = j + 1;
                        continue;
                    }
                }
            }
            let word = ident(toks.get(i));
            if word.as_deref() == Some("mod") {
                if let Some(name) = ident(toks.get(i + 1)) {
                    let mut child = module.clone();
                    child.push(name.clone());
                    self.modules
                        .get_mut(module)
                        .unwrap()
                        .children
                        .insert(name.clone());
                    match toks.get(i + 2) {
                        Some(TokenTree::Punct(p)) if p.as_char() == ';' => {
                            let (file, mod_rs) = match attrs.path.take() {
                                Some(p) => (ctx.path_base.join(p), true),
                                None => {
                                    let flat = ctx.dir.join(format!("{name}.rs"));
                                    if tree.join(&flat).is_file() {
                                        (flat, false)
                                    } else {
                                        (ctx.dir.join(&name).join("mod.rs"), true)
                                    }
                                }
                            };
                            self.load_file(tree, &file, child, mod_rs, test);
                            attrs = Attrs::default();
                            i += 3;
                            continue;
                        }
                        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                            self.modules.entry(child.clone()).or_default().test = test;
                            let inner = Ctx {
                                file: ctx.file,
                                dir: ctx.dir.join(&name),
                                path_base: ctx.dir.join(&name),
                                test,
                            };
                            self.scan(tree, g.stream(), &child, &inner);
                            attrs = Attrs::default();
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            if word.as_deref() == Some("use") {
                let end = (i + 1..toks.len())
                    .find(|&k| is_punct(toks.get(k), ';'))
                    .unwrap_or(toks.len());
                let line = line_of(&toks[i]);
                let mut leaves = Vec::new();
                use_tree(&toks[i + 1..end], Vec::new(), &mut leaves);
                for leaf in leaves {
                    let m = self.modules.get_mut(module).unwrap();
                    match &leaf.name {
                        Some(n) if n != "_" => {
                            m.aliases.insert(n.clone(), leaf.segs.clone());
                        }
                        Some(_) => {}
                        None => m.globs.push(leaf.segs.clone()),
                    }
                    self.refs.push(Ref {
                        from: module.clone(),
                        segs: leaf.segs,
                        file: ctx.file.to_path_buf(),
                        line,
                        test,
                    });
                }
                attrs = Attrs::default();
                i = end + 1;
                continue;
            }
            if let Some(TokenTree::Group(g)) = toks.get(i) {
                let inner = Ctx {
                    file: ctx.file,
                    dir: ctx.dir.clone(),
                    path_base: ctx.path_base.clone(),
                    test,
                };
                self.scan(tree, g.stream(), module, &inner);
                // A body ends the item its attributes were on.
                if g.delimiter() == Delimiter::Brace {
                    attrs = Attrs::default();
                }
                i += 1;
                continue;
            }
            if is_punct(toks.get(i), ';') {
                attrs = Attrs::default();
            }
            // A path: its first segment not after `::`; `$crate` is `crate`.
            let after_colons = i >= 2 && is_colon2(&toks, i - 2);
            let (first, start) = if is_punct(toks.get(i), '$')
                && ident(toks.get(i + 1)).as_deref() == Some("crate")
            {
                (Some("crate".to_string()), i + 1)
            } else {
                (word, i)
            };
            if let (Some(first), false) = (first, after_colons) {
                let mut segs = vec![first];
                let mut j = start + 1;
                while is_colon2(&toks, j) {
                    match ident(toks.get(j + 2)) {
                        Some(s) => {
                            segs.push(s);
                            j += 3;
                        }
                        None => break,
                    }
                }
                // A lone word after `.` is a field or a method.
                let field = segs.len() == 1 && i >= 1 && is_punct(toks.get(i - 1), '.');
                if !field {
                    self.refs.push(Ref {
                        from: module.clone(),
                        segs,
                        file: ctx.file.to_path_buf(),
                        line: line_of(&toks[i]),
                        test,
                    });
                }
                i = j;
                continue;
            }
            i += 1;
        }
    }

    /// The module a path leads to, and whether it names that module
    /// itself (rather than an item in it).
    fn resolve(&self, from: &ModPath, segs: &[String], seen: &mut Seen) -> Option<(ModPath, bool)> {
        if segs.is_empty() {
            return None;
        }
        let (mut cur, rest): (ModPath, &[String]) = match segs[0].as_str() {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (from.clone(), &segs[1..]),
            "super" => {
                let mut cur = from.clone();
                let mut k = 0;
                while segs.get(k).map(String::as_str) == Some("super") {
                    cur.pop()?;
                    k += 1;
                }
                (cur, &segs[k..])
            }
            first => {
                // A bare name: a child module, an import or a glob's name.
                // A lone word names a module only through an import.
                if segs.len() == 1 {
                    let m = self.modules.get(from)?;
                    if m.aliases.contains_key(first) {
                        return None; // its `use` is the edge
                    }
                    return self.through_globs(from, first, true, seen);
                }
                match self.step(from, first, seen)? {
                    (m, true) => (m, &segs[1..]),
                    found => return Some(found),
                }
            }
        };
        for seg in rest {
            match self.step(&cur, seg, seen) {
                Some((m, true)) => cur = m,
                Some(found) => return Some(found),
                None => return Some((cur, false)),
            }
        }
        Some((cur, true))
    }

    /// The module a path names: the last one its segments walk down to,
    /// not following imports. `use crate::a::X` names `a` even when `a`
    /// only re-exports `X` from `b`.
    fn named(&self, from: &ModPath, segs: &[String]) -> Option<ModPath> {
        let (mut cur, rest): (ModPath, &[String]) = match segs.first()?.as_str() {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (from.clone(), &segs[1..]),
            "super" => {
                let mut cur = from.clone();
                let mut k = 0;
                while segs.get(k).map(String::as_str) == Some("super") {
                    cur.pop()?;
                    k += 1;
                }
                (cur, &segs[k..])
            }
            _ => (from.clone(), segs),
        };
        for seg in rest {
            if !self.modules.get(&cur)?.children.contains(seg) {
                break;
            }
            cur.push(seg.clone());
        }
        Some(cur)
    }

    /// One segment from module `cur`.
    fn step(&self, cur: &ModPath, name: &str, seen: &mut Seen) -> Option<(ModPath, bool)> {
        // Globs and imports may lead back: each name is tried once.
        if !seen.insert((cur.clone(), name.to_string())) {
            return None;
        }
        let m = self.modules.get(cur)?;
        if m.children.contains(name) {
            let mut child = cur.clone();
            child.push(name.to_string());
            return Some((child, true));
        }
        if let Some(target) = m.aliases.get(name) {
            return self.resolve(cur, target, seen);
        }
        self.through_globs(cur, name, false, seen)
    }

    /// A name a glob brings in; a `lone` word (no `::` after it) is a
    /// module only through an import, else a variable or a field.
    fn through_globs(
        &self,
        cur: &ModPath,
        name: &str,
        lone: bool,
        seen: &mut Seen,
    ) -> Option<(ModPath, bool)> {
        if !seen.insert((cur.clone(), format!("*{name}"))) {
            return None;
        }
        let m = self.modules.get(cur)?;
        for g in &m.globs {
            if let Some((gm, true)) = self.resolve(cur, g, seen) {
                if gm == *cur {
                    continue;
                }
                let gmod = &self.modules[&gm];
                if (!lone && gmod.children.contains(name)) || gmod.aliases.contains_key(name) {
                    return self.step(&gm, name, seen);
                }
            }
        }
        None
    }

    /// Each parent module's graph of its children: parent → child →
    /// (child it names → the first place it does).
    fn graphs(&self) -> BTreeMap<ModPath, Graph> {
        let mut graphs: BTreeMap<ModPath, Graph> = BTreeMap::new();
        for r in self.refs.iter().filter(|r| !r.test) {
            let resolved = self
                .resolve(&r.from, &r.segs, &mut Seen::new())
                .map(|(m, _)| m);
            let named = self.named(&r.from, &r.segs);
            for to in resolved.into_iter().chain(named) {
                let common = r.from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if common < r.from.len() && common < to.len() {
                    graphs
                        .entry(r.from[..common].to_vec())
                        .or_default()
                        .entry(r.from[common].clone())
                        .or_default()
                        .entry(to[common].clone())
                        .or_insert_with(|| {
                            format!("{}:{}: {}", r.file.display(), r.line, r.segs.join("::"))
                        });
                }
            }
        }
        graphs
    }

    /// The crate's top-level modules, test modules left out, in layers
    /// from the bottom: the first imports no other module of the crate,
    /// and each module is one layer above the highest it imports from.
    /// `None` when they import in a cycle.
    fn layers(&self) -> Option<Vec<Vec<String>>> {
        let graphs = self.graphs();
        let empty = Graph::new();
        let graph = graphs.get(&Vec::new()).unwrap_or(&empty);
        let modules: Vec<&String> = self.modules[&Vec::new()]
            .children
            .iter()
            .filter(|m| !self.modules[&vec![(*m).clone()]].test)
            .collect();
        let mut layer: BTreeMap<&String, usize> = modules.iter().map(|m| (*m, 0)).collect();
        // A longest path can be no longer than the number of modules.
        for _ in 0..=modules.len() {
            let mut changed = false;
            for m in &modules {
                let want = graph
                    .get(*m)
                    .into_iter()
                    .flat_map(|out| out.keys())
                    .filter_map(|d| layer.get(d).map(|l| l + 1))
                    .max()
                    .unwrap_or(0);
                if want != layer[*m] {
                    layer.insert(m, want);
                    changed = true;
                }
            }
            if !changed {
                let mut out = vec![Vec::new(); layer.values().max().map_or(0, |l| l + 1)];
                for (m, l) in layer {
                    out[l].push(m.clone());
                }
                return Some(out);
            }
        }
        None
    }

    /// Every cycle, one per strongly connected set of modules, described.
    fn cycle_report(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (parent, graph) in self.graphs() {
            for (cycle, set) in cycles(&graph) {
                let name = |m: &String| {
                    let mut p = parent.clone();
                    p.push(m.clone());
                    p.join("::")
                };
                let chain: Vec<String> = cycle.iter().map(name).collect();
                let mut text = format!(
                    "{}: {} → {}",
                    self.root.display(),
                    chain.join(" → "),
                    chain[0]
                );
                if set.len() > cycle.len() {
                    let set: Vec<String> = set.iter().map(name).collect();
                    text.push_str(&format!(" (in a cycle set of {})", set.join(", ")));
                }
                for (k, a) in cycle.iter().enumerate() {
                    let b = &cycle[(k + 1) % cycle.len()];
                    text.push_str(&format!("\n    {} → {}: {}", name(a), name(b), graph[a][b]));
                }
                out.push(text);
            }
        }
        out
    }
}

/// The (module, name) steps one resolution has taken.
type Seen = BTreeSet<(ModPath, String)>;

/// A graph of sibling modules: module → (module it names → evidence).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// A leaf of a `use` tree: its path and the name it brings in (`None`
/// for a glob).
struct Leaf {
    segs: Vec<String>,
    name: Option<String>,
}

fn use_tree(toks: &[TokenTree], mut prefix: Vec<String>, out: &mut Vec<Leaf>) {
    let mut i = 0;
    if is_colon2(toks, 0) {
        return; // `::name`: another crate
    }
    loop {
        match toks.get(i) {
            Some(TokenTree::Punct(p)) if p.as_char() == '$' => i += 1,
            Some(TokenTree::Punct(p)) if p.as_char() == '*' => {
                out.push(Leaf {
                    segs: prefix,
                    name: None,
                });
                return;
            }
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                for part in inner.split(|t| is_punct(Some(t), ',')) {
                    if !part.is_empty() {
                        use_tree(part, prefix.clone(), out);
                    }
                }
                return;
            }
            t => {
                let Some(seg) = ident(t) else { return };
                i += 1;
                if is_colon2(toks, i) {
                    prefix.push(seg);
                    i += 2;
                    continue;
                }
                let name = if ident(toks.get(i)).as_deref() == Some("as") {
                    ident(toks.get(i + 1))
                } else if seg == "self" {
                    prefix.last().cloned()
                } else {
                    Some(seg.clone())
                };
                if seg != "self" {
                    prefix.push(seg);
                }
                out.push(Leaf { segs: prefix, name });
                return;
            }
        }
    }
}

/// Each strongly connected set of two or more nodes (Tarjan's
/// algorithm), with a shortest cycle through its first node, in order.
fn cycles(graph: &Graph) -> Vec<(Vec<String>, Vec<String>)> {
    let nodes: BTreeSet<&String> = graph
        .iter()
        .flat_map(|(a, out)| std::iter::once(a).chain(out.keys()))
        .collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of: BTreeMap<&String, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            graph
                .get(*n)
                .map(|out| out.keys().map(|m| index_of[m]).collect())
                .unwrap_or_default()
        })
        .collect();

    struct Tarjan<'a> {
        succ: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        sets: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.succ[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut set = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack[w] = false;
                    set.push(w);
                    if w == v {
                        break;
                    }
                }
                self.sets.push(set);
            }
        }
    }
    let n = nodes.len();
    let mut t = Tarjan {
        succ: &succ,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        sets: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let mut sets: Vec<BTreeSet<usize>> = t
        .sets
        .into_iter()
        .filter(|s| s.len() > 1)
        .map(|s| s.into_iter().collect())
        .collect();
    sets.sort();
    sets.iter()
        .map(|set| {
            // Breadth first from the first node back to it, inside the set.
            let start = *set.iter().next().unwrap();
            let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
            let mut queue = VecDeque::from([start]);
            'search: while let Some(v) = queue.pop_front() {
                for &w in &succ[v] {
                    if !set.contains(&w) || prev.contains_key(&w) {
                        continue;
                    }
                    prev.insert(w, v);
                    if w == start {
                        break 'search;
                    }
                    queue.push_back(w);
                }
            }
            let mut chain = vec![start];
            let mut v = prev[&start];
            while v != start {
                chain.push(v);
                v = prev[&v];
            }
            chain[1..].reverse();
            let names =
                |ids: &mut dyn Iterator<Item = usize>| ids.map(|i| nodes[i].clone()).collect();
            (
                names(&mut chain.into_iter()),
                names(&mut set.iter().copied()),
            )
        })
        .collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every crate root of the workspace's packages, relative to its root.
fn crate_roots(ws: &Path) -> Vec<PathBuf> {
    let mut packages = vec![PathBuf::new()];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(ws.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.strip_prefix(ws).unwrap().to_path_buf())
        .collect();
    dirs.sort();
    packages.extend(dirs);
    let mut roots = Vec::new();
    for p in packages {
        let src = p.join("src");
        for f in ["lib.rs", "main.rs"] {
            if ws.join(&src).join(f).is_file() {
                roots.push(src.join(f));
            }
        }
        if let Ok(bins) = std::fs::read_dir(ws.join(&src).join("bin")) {
            let mut bins: Vec<PathBuf> = bins.map(|e| e.unwrap().path()).collect();
            bins.sort();
            for b in bins {
                let b = b.strip_prefix(ws).unwrap().to_path_buf();
                if b.extension().is_some_and(|e| e == "rs") {
                    roots.push(b);
                } else if ws.join(&b).join("main.rs").is_file() {
                    roots.push(b.join("main.rs"));
                }
            }
        }
    }
    roots
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_crate_has_an_import_cycle_between_its_modules() {
    let ws = workspace();
    let roots = crate_roots(&ws);
    assert!(roots.len() >= 12, "crate roots found: {roots:?}");
    let mut report = Vec::new();
    let mut read = BTreeSet::new();
    for root in &roots {
        let krate = Crate::load(&ws, root);
        assert!(krate.errors.is_empty(), "{:?}", krate.errors);
        report.extend(krate.cycle_report());
        read.extend(krate.files);
    }
    // Every source file belongs to a crate the scan read: a file it
    // missed would hide its imports.
    let mut all = Vec::new();
    rust_files(&ws.join("src"), &mut all);
    for p in std::fs::read_dir(ws.join("crates")).unwrap() {
        let src = p.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut all);
        }
    }
    let missed: Vec<_> = all
        .iter()
        .map(|p| p.strip_prefix(&ws).unwrap().to_path_buf())
        .filter(|p| !read.contains(p))
        .collect();
    assert!(missed.is_empty(), "files no crate root reaches: {missed:?}");
    assert!(
        report.is_empty(),
        "import cycles between modules of one crate (docs/architecture.md):\n{}",
        report.join("\n")
    );
}

/// The package name in `dir/Cargo.toml`.
fn package_name(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|n| n.strip_suffix('"'))
        .expect("a package name")
        .to_string()
}

/// Where docs/architecture.md lists each crate's module layers.
const LAYERS_BEGIN: &str = "<!-- module layers: begin -->";
const LAYERS_END: &str = "<!-- module layers: end -->";

/// docs/architecture.md's list of each library's modules, layer by layer
/// from the bottom, is the code's: a module added, moved or importing
/// anew shows there. A crate of one module is left out.
#[test]
fn architecture_md_lists_the_layers_of_the_code() {
    let ws = workspace();
    let mut want = String::new();
    for root in crate_roots(&ws) {
        if root.file_name().is_none_or(|f| f != "lib.rs") {
            continue;
        }
        let krate = Crate::load(&ws, &root);
        let Some(layers) = krate.layers() else {
            continue; // the test above names the cycle
        };
        if layers.iter().map(Vec::len).sum::<usize>() < 2 {
            continue;
        }
        let name = package_name(&ws.join(root.parent().unwrap().parent().unwrap()));
        want.push_str(&format!("- `{name}`:\n"));
        for (k, layer) in layers.iter().enumerate() {
            let names: Vec<String> = layer.iter().map(|m| format!("`{m}`")).collect();
            want.push_str(&format!("  {}. {}\n", k + 1, names.join(", ")));
        }
    }
    let doc = std::fs::read_to_string(ws.join("docs/architecture.md")).unwrap();
    let have = doc
        .split_once(LAYERS_BEGIN)
        .and_then(|(_, rest)| rest.split_once(LAYERS_END))
        .map(|(list, _)| list.trim())
        .unwrap_or_else(|| panic!("docs/architecture.md has no {LAYERS_BEGIN} … {LAYERS_END}"));
    assert!(
        have == want.trim(),
        "docs/architecture.md's module layers are not the code's; the code's are:\n\n{LAYERS_BEGIN}\n{want}{LAYERS_END}\n"
    );
}

fn graph(edges: &[(&str, &str)]) -> Graph {
    let mut g = Graph::new();
    for (a, b) in edges {
        g.entry(a.to_string())
            .or_default()
            .insert(b.to_string(), String::new());
    }
    g
}

#[test]
fn the_cycle_finder_finds_each_cycle_once() {
    let g = graph(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("b", "d"),
        ("d", "e"),
        ("e", "d"),
        ("f", "a"),
        ("e", "g"),
    ]);
    let found = cycles(&g);
    let chains: Vec<_> = found.iter().map(|(c, _)| c.clone()).collect();
    assert_eq!(chains, vec![vec!["a", "b", "c"], vec!["d", "e"]]);
    assert_eq!(found[0].1, vec!["a", "b", "c"]);
    // A shortest cycle through the first node.
    let g = graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("b", "a")]);
    assert_eq!(
        cycles(&g),
        vec![(
            vec!["a".into(), "b".into()],
            vec!["a".into(), "b".into(), "c".into()]
        )]
    );
    let dag = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("d", "a")]);
    assert!(cycles(&dag).is_empty());
}

/// A crate written to a temporary directory: `(path, text)` files.
fn planted(files: &[(&str, &str)]) -> (tempfile::TempDir, Crate) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let krate = Crate::load(dir.path(), Path::new("src/lib.rs"));
    assert!(krate.errors.is_empty(), "{:?}", krate.errors);
    (dir, krate)
}

#[test]
fn a_planted_cycle_is_named() {
    // a → b by `use`, b → c by `super::` in an expression, c → a through
    // the root's re-export.
    let (_dir, krate) = planted(&[
        ("src/lib.rs", "mod a; mod b; mod c; pub use a::A;"),
        ("src/a.rs", "use crate::b::B;\npub struct A(B);"),
        ("src/b.rs", "pub struct B;\nfn f() { super::c::g() }"),
        ("src/c.rs", "pub fn g() {}\nfn h(_: crate::A) {}"),
    ]);
    let report = krate.cycle_report();
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(
        report[0].starts_with("src/lib.rs: a → b → c → a\n"),
        "{report:?}"
    );
    assert!(
        report[0].contains("a → b: src/a.rs:1: crate::b::B"),
        "{report:?}"
    );
    assert!(
        report[0].contains("b → c: src/b.rs:2: super::c::g"),
        "{report:?}"
    );
    assert!(
        report[0].contains("c → a: src/c.rs:2: crate::A"),
        "{report:?}"
    );
}

#[test]
fn comments_strings_and_the_root_name_nothing() {
    // b names a only in comments, doc comments and strings; the root
    // naming both is no edge; a → b is the one edge.
    let (_dir, krate) = planted(&[
        (
            "src/lib.rs",
            "pub mod a; pub mod b; pub use a::A; pub use b::B;",
        ),
        ("src/a.rs", "pub struct A(crate::b::B);"),
        (
            "src/b.rs",
            "/// See [`crate::a::A`].\npub struct B;\n// crate::a::A\n/* super::a::A */\nconst S: &str = \"crate::a::A\";",
        ),
    ]);
    assert!(
        krate.cycle_report().is_empty(),
        "{:?}",
        krate.cycle_report()
    );
    let graphs = krate.graphs();
    let top = &graphs[&Vec::<String>::new()];
    assert_eq!(top.len(), 1, "{top:?}");
    assert!(top["a"].contains_key("b"));
}

#[test]
fn nested_modules_and_globs_are_followed() {
    // Under `p` (a directory module), `p::y`'s inner module reaches `p::x`
    // through `use super::super::*` and the parent's import; `p::x` names
    // `p::y` through `super::`. The top level (p, q) has no cycle: q → p
    // only, through a `#[path]` file.
    let (_dir, krate) = planted(&[
        ("src/lib.rs", "mod p; mod q;"),
        ("src/p/mod.rs", "mod x; mod y; use self::x::X;"),
        ("src/p/x.rs", "pub struct X;\nfn f() { super::y::g(); }"),
        (
            "src/p/y.rs",
            "pub fn g() {}\nmod inner {\n    use super::*;\n    use super::super::*;\n    fn t(_: X) {}\n}",
        ),
        ("src/q.rs", "#[path = \"q_extra.rs\"]\nmod extra;"),
        ("src/q_extra.rs", "use crate::p::X;"),
    ]);
    let report = krate.cycle_report();
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(
        report[0].starts_with("src/lib.rs: p::x → p::y → p::x\n"),
        "{report:?}"
    );
    assert!(
        report[0].contains("p::y → p::x: src/p/y.rs:5: X"),
        "{report:?}"
    );
    assert!(krate.files.contains(Path::new("src/q_extra.rs")));
    let top = &krate.graphs()[&Vec::<String>::new()];
    assert_eq!(top.len(), 1, "{top:?}");
    assert!(top["q"].contains_key("p"));
}

#[test]
fn test_code_names_nothing() {
    // b → a in library code; a names b only in test code: a test module
    // inline or in its own file, a `#[test]` function, a `cfg(all(test,
    // …))` import.
    let (_dir, krate) = planted(&[
        ("src/lib.rs", "mod a; mod b;"),
        (
            "src/a.rs",
            "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::b::g;\n}\n#[cfg(test)]\nmod more;\n#[test]\nfn t() { crate::b::g(); }\n#[cfg(all(test, unix))]\nuse crate::b::g;\nfn h() {}",
        ),
        ("src/a/more.rs", "fn m() { super::super::b::g() }"),
        ("src/b.rs", "pub fn g() { crate::a::f() }"),
    ]);
    assert!(
        krate.cycle_report().is_empty(),
        "{:?}",
        krate.cycle_report()
    );
    assert!(krate.files.contains(Path::new("src/a/more.rs")));
    let top = &krate.graphs()[&Vec::<String>::new()];
    assert_eq!(top.len(), 1, "{top:?}");
    assert!(top["b"].contains_key("a"));
}
