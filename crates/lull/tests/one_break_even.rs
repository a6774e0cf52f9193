//! One source of the break-even time B (issue 76, item 4).
//!
//! SPEC §4.2's formula, `p_spinup·t_spinup / (p_active − p_sleep)`, is
//! written in one place: `PowerModel::break_even_s` in
//! `crates/tasks/src/power.rs`. A drive's B is read from its profile
//! (`lull_tasks::DriveProfile`), which asks the power model. These tests
//! read every Rust file of the workspace as tokens (`proc-macro2`), so
//! comments, doc comments and strings are not code here:
//!
//! - no file but `power.rs` writes the formula out, or a piece of it
//!   (`p_spinup * t_spinup`, `spinup_energy() /`, `/ (p_active −
//!   p_sleep)`), whatever the receivers are called;
//! - no file but `power.rs` rebuilds B from seconds
//!   (`Nanos::from_secs_f64(….break_even_s())`);
//! - the code that takes B (the controller, the daemon's shell, replay,
//!   rank and the command line) does not read the power model's B at
//!   all (`break_even_s`): it asks the profile. Test code is left out
//!   there, and the exceptions are listed with their reason.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The one file that defines the formula.
const DEFINITION: &str = "crates/tasks/src/power.rs";

/// The profile: B from the power model, with its checks.
const PROFILE: &str = "crates/tasks/src/profile.rs";

/// Where B is taken for a decision or a report: none of these reads the
/// power model's B (`break_even_s`) outside its tests.
const CONSUMERS: &[&str] = &[
    "crates/controller/src",
    "crates/live/src",
    "crates/blktrace-replay/src",
    "crates/rank/src",
    "src",
];

/// Files of [`CONSUMERS`] that may read `break_even_s`, and why.
const EXCEPTIONS: &[(&str, &str)] = &[(
    "src/cli/components.rs",
    "`lull components` lists each power preset's own B, unrounded (JSON `breakeven_s`); no drive is resolved",
)];

/// A token, flattened: groups become their delimiters.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    Open(char),
    Close(char),
    Literal,
}

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every `.rs` file under `dir`, skipping build output and hidden
/// directories.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The workspace's Rust files, relative to the root, sorted.
fn workspace_files() -> Vec<String> {
    let root = root();
    let mut files = Vec::new();
    for top in ["crates", "src", "tests", "benches", "examples"] {
        rust_files(&root.join(top), &mut files);
    }
    let mut rel: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap().to_string_lossy().to_string())
        .collect();
    rel.sort();
    rel
}

fn flatten(stream: TokenStream, skip_tests: bool, out: &mut Vec<Tok>) {
    let toks: Vec<TokenTree> = stream.into_iter().collect();
    let mut i = 0;
    while i < toks.len() {
        // `#[cfg(test)]` or `#[test]`: the item after it is test code.
        if skip_tests && is_test_attr(&toks, i) {
            i += 2;
            // Past further attributes, to the item's body (a brace group)
            // or its end (`;`).
            while i < toks.len() {
                match &toks[i] {
                    TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                        i += 1;
                        break;
                    }
                    TokenTree::Punct(p) if p.as_char() == ';' => {
                        i += 1;
                        break;
                    }
                    _ => i += 1,
                }
            }
            continue;
        }
        match &toks[i] {
            TokenTree::Ident(id) => out.push(Tok::Ident(id.to_string())),
            TokenTree::Punct(p) => out.push(Tok::Punct(p.as_char())),
            TokenTree::Literal(_) => out.push(Tok::Literal),
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ('(', ')'),
                    Delimiter::Brace => ('{', '}'),
                    Delimiter::Bracket => ('[', ']'),
                    Delimiter::None => (' ', ' '),
                };
                out.push(Tok::Open(open));
                flatten(g.stream(), skip_tests, out);
                out.push(Tok::Close(close));
            }
        }
        i += 1;
    }
}

/// Whether `toks[i..]` starts with `#[cfg(test)]` or `#[test]`.
fn is_test_attr(toks: &[TokenTree], i: usize) -> bool {
    let (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g))) = (toks.get(i), toks.get(i + 1))
    else {
        return false;
    };
    if p.as_char() != '#' || g.delimiter() != Delimiter::Bracket {
        return false;
    }
    let text = g.stream().to_string().replace(' ', "");
    text == "test" || text == "cfg(test)"
}

/// The tokens of `file` ([`strip_receivers`]), its test code left out
/// when `skip_tests`.
fn tokens(file: &str, skip_tests: bool) -> Vec<Tok> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let stream = TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e:?}"));
    let mut flat = Vec::new();
    flatten(stream, skip_tests, &mut flat);
    strip_receivers(flat)
}

/// `flat` with receivers dropped: `self.p_spinup`, `m.p_spinup` and
/// `p_spinup` all read `p_spinup`.
fn strip_receivers(flat: Vec<Tok>) -> Vec<Tok> {
    let mut out: Vec<Tok> = Vec::with_capacity(flat.len());
    for t in flat {
        if t == Tok::Punct('.') {
            // A receiver that is a name goes with its dot; one that ends
            // in a group (a call's result) stays.
            if matches!(out.last(), Some(Tok::Ident(_))) {
                out.pop();
            }
            continue;
        }
        out.push(t);
    }
    out
}

fn id(s: &str) -> Tok {
    Tok::Ident(s.into())
}

/// The places `toks` writes the formula, or a piece of it.
fn formula_pieces(toks: &[Tok]) -> Vec<&'static str> {
    let star = Tok::Punct('*');
    let slash = Tok::Punct('/');
    let minus = Tok::Punct('-');
    let mut found = Vec::new();
    // Padded, so a piece at the very end is seen too.
    let padded: Vec<Tok> = toks
        .iter()
        .cloned()
        .chain(std::iter::repeat_n(Tok::Literal, 4))
        .collect();
    for w in padded.windows(5) {
        if (w[0] == id("p_spinup") && w[1] == star && w[2] == id("t_spinup"))
            || (w[0] == id("t_spinup") && w[1] == star && w[2] == id("p_spinup"))
        {
            found.push("p_spinup * t_spinup");
        }
        if w[0] == id("spinup_energy")
            && w[1] == Tok::Open('(')
            && w[2] == Tok::Close(')')
            && w[3] == slash
        {
            found.push("spinup_energy() / …");
        }
        let divides = w[0] == slash
            && ((w[1] == Tok::Open('(') && w[2] == id("p_active") && w[3] == minus)
                || (w[1] == id("p_active") && w[2] == minus));
        if divides && w.contains(&id("p_sleep")) {
            found.push("… / (p_active - p_sleep)");
        }
    }
    found
}

/// Whether `toks` rebuilds B from seconds:
/// `from_secs_f64( … break_even_s … )`.
fn rebuilds_b(toks: &[Tok]) -> bool {
    toks.iter().enumerate().any(|(i, t)| {
        if *t != id("from_secs_f64") || toks.get(i + 1) != Some(&Tok::Open('(')) {
            return false;
        }
        let mut depth = 0;
        for u in &toks[i + 1..] {
            match u {
                Tok::Open(_) => depth += 1,
                Tok::Close(_) => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                u if *u == id("break_even_s") => return true,
                _ => {}
            }
        }
        false
    })
}

#[test]
fn the_formula_is_written_in_one_place() {
    let mut bad = Vec::new();
    let files = workspace_files();
    assert!(
        files.iter().any(|f| f == DEFINITION),
        "{DEFINITION} is read"
    );
    for f in &files {
        if f == DEFINITION {
            continue;
        }
        let toks = tokens(f, false);
        for piece in formula_pieces(&toks) {
            bad.push(format!("{f}: writes `{piece}`"));
        }
        if f != PROFILE && rebuilds_b(&toks) {
            bad.push(format!(
                "{f}: rebuilds B from seconds (`from_secs_f64(….break_even_s())`)"
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "B's formula is written in {DEFINITION} only (`PowerModel::break_even`); \
         take B from the drive's profile (`lull_tasks::DriveProfile::break_even`) instead:\n{}",
        bad.join("\n")
    );
    // It is there.
    let def = tokens(DEFINITION, false);
    assert!(formula_pieces(&def).contains(&"p_spinup * t_spinup"));
    assert!(formula_pieces(&def).contains(&"spinup_energy() / …"));
}

#[test]
fn the_consumers_take_b_from_the_profile() {
    let mut bad = Vec::new();
    for f in workspace_files() {
        if !CONSUMERS.iter().any(|c| f.starts_with(&format!("{c}/"))) {
            continue;
        }
        // Test code is left out: a test may check B against the model.
        if f.ends_with("/tests.rs") || f.contains("/tests/") {
            continue;
        }
        if EXCEPTIONS.iter().any(|(e, _)| *e == f) {
            continue;
        }
        if tokens(&f, true).contains(&id("break_even_s")) {
            bad.push(f);
        }
    }
    assert!(
        bad.is_empty(),
        "these read the power model's B (`break_even_s`) where B is taken for a decision or a report: \
         take it from the drive's profile (`lull_tasks::DriveProfile`), or list the file in EXCEPTIONS with its reason:\n{}",
        bad.join("\n")
    );
    for (e, why) in EXCEPTIONS {
        assert!(!why.is_empty());
        assert!(
            tokens(e, true).contains(&id("break_even_s")),
            "{e} is listed as an exception but reads no `break_even_s`: remove it from EXCEPTIONS"
        );
    }
}

/// The scan finds what it looks for, in any spelling of the receivers.
#[test]
fn the_scan_finds_the_formula() {
    let toks = |s: &str| {
        let mut flat = Vec::new();
        flatten(TokenStream::from_str(s).unwrap(), false, &mut flat);
        strip_receivers(flat)
    };
    for code in [
        "let b = m.p_spinup * m.t_spinup / (m.p_active - m.p_sleep);",
        "let e = self.t_spinup * self.p_spinup;",
        "let b = model.spinup_energy() / save;",
        "let b = e / (p.p_active - p.p_sleep);",
    ] {
        assert!(!formula_pieces(&toks(code)).is_empty(), "{code}");
    }
    for code in [
        "// m.p_spinup * m.t_spinup\nlet x = 1;",
        "let s = \"p_spinup * t_spinup\";",
        "let e = (p.p_active - p.p_sleep) * slept - p.spinup_energy() * n;",
    ] {
        assert!(formula_pieces(&toks(code)).is_empty(), "{code}");
    }
    assert!(rebuilds_b(&toks(
        "let b = Nanos::from_secs_f64(m.break_even_s());"
    )));
    assert!(!rebuilds_b(&toks(
        "let b = Nanos::from_secs_f64(x); let s = m.break_even_s();"
    )));
    // Test code is skipped where asked.
    let mut flat = Vec::new();
    flatten(
        TokenStream::from_str("#[cfg(test)] mod tests { fn f() { m.break_even_s(); } }").unwrap(),
        true,
        &mut flat,
    );
    assert!(!flat.contains(&id("break_even_s")));
}
