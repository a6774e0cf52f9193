//! The README's ranking table is what the code prints (issue 16): the run
//! `scripts/readme-rank.sh` makes (`lull rank --task spindown --duration
//! 2h`, every built-in workload) is repeated here and its top-ten table
//! compared with the table in the README's `readme-rank` block (issue 35:
//! `<!-- generated: readme-rank -->`). Regenerate with
//! `scripts/figures.sh readme-rank` when an intended change moves it;
//! `scripts/figures.sh --check` compares the whole block, picture included.

use lull_core::time::Nanos;
use lull_rank::{RankConfig, Source};

#[test]
fn the_readme_table_is_what_the_code_prints() {
    let readme_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("README.md");
    let marker = "<!-- generated: readme-rank -->\n";
    let begin = readme
        .find(marker)
        .expect("README.md has no readme-rank block")
        + marker.len();
    let end = begin
        + readme[begin..]
            .find("<!-- end generated -->")
            .expect("README.md's readme-rank block is never closed");
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
        "README.md's ranking table is stale: run scripts/figures.sh readme-rank"
    );
}
