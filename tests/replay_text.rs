//! `lull replay`'s text output: one measure per line, names and values in
//! aligned columns whatever the longest name.

mod common;

use common::{lull, stderr, stdout};

#[test]
fn measures_line_up_in_two_columns() {
    let o = lull(&[
        "replay",
        "--workload",
        "office",
        "--duration",
        "2h",
        "--task",
        "spindown",
        "--device",
        "wd-red-plus",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let measures: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
    assert!(
        measures
            .iter()
            .any(|l| l.trim_start().starts_with("window_clairvoyant_energy_j ")),
        "{text}"
    );
    // Every value ends in the same column, and every name is followed by
    // at least one space before its value.
    let ends: Vec<usize> = measures.iter().map(|l| l.trim_end().len()).collect();
    assert!(ends.windows(2).all(|w| w[0] == w[1]), "{text}");
    for l in &measures {
        let mut parts = l.split_whitespace();
        let (name, value) = (parts.next().unwrap(), parts.next().unwrap());
        assert!(parts.next().is_none(), "{l}");
        assert!(value.parse::<f64>().is_ok(), "{l}");
        assert!(l.find(value).unwrap() > 2 + name.len(), "{l}");
    }
}
