//! docs/lab.md's ranking table is what the code prints (issue 16; in the
//! README until issue 78): the run `scripts/lab-rank.sh` makes (`lull rank
//! --task spindown --duration 2h`, every built-in workload) is repeated
//! here and its top-ten table compared with the table in docs/lab.md's
//! `lab-rank` block (issue 35: `<!-- generated: lab-rank -->`).
//! Regenerate with `scripts/figures.sh lab-rank` when an intended change
//! moves it; `scripts/figures.sh --check` compares the whole block, picture
//! included.

use lull_core::time::Nanos;
use lull_rank::{RankConfig, Source};

#[test]
fn the_lab_table_is_what_the_code_prints() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/lab.md");
    let readme = std::fs::read_to_string(&path).expect("docs/lab.md");
    let marker = "<!-- generated: lab-rank -->\n";
    let begin = readme
        .find(marker)
        .expect("docs/lab.md has no lab-rank block")
        + marker.len();
    let end = begin
        + readme[begin..]
            .find("<!-- end generated -->")
            .expect("docs/lab.md's lab-rank block is never closed");
    // The block: a line naming its command, then the table (the lines
    // starting with `|`), then the picture.
    let shown: String = readme[begin..end]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    let out = tempfile::tempdir().unwrap();
    let cfg = RankConfig::new(
        Source::all_builtin(Nanos::from_secs(2 * 3600), 1),
        lull_rank::default_grid("spindown"),
        "default",
        "spindown",
        out.path(),
    );
    let o = lull_rank::rank(&cfg, &lull_rank::registry()).unwrap();
    let printed =
        lull_rank::report::markdown_table(&o.summaries, &o.rows, &o.axes, 10, &o.meta.limits);
    assert_eq!(
        shown, printed,
        "docs/lab.md's ranking table is stale: run scripts/figures.sh lab-rank"
    );
}
