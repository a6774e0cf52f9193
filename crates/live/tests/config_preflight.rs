//! The checks a start runs on the paths a config names (`preflight`)
//! name the key's line, as the parser's errors do. (The parser's half of
//! this test is in lull-controller's `config` tests.)

use std::path::Path;

use lull_live::{Config, default_registry, preflight};

#[test]
fn preflight_errors_on_paths_name_the_line() {
    let text = "poll = \"1s\"\nstate_file = \"/proc/nope/state.json\"\n";
    let c = Config::parse(Path::new("lull.toml"), text, &default_registry()).unwrap();
    assert_eq!(c.lines.state_file, Some(2));
    assert_eq!(c.lines.activity_dir, None);
    let e = preflight(&c, false).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("state_file"), "{e}");
    assert_eq!(e.line, Some(2), "{e}");
    assert!(
        e.to_string().starts_with("lull.toml:2: key `state_file`"),
        "{e}"
    );
}
