//! "Did you mean …?" for unknown names: components, parameters, tasks,
//! presets, workloads, policies. One place decides what counts as close,
//! so every error that lists known names suggests the same way.
//!
//! Behind the `suggest` feature (the `lull` binary turns it on), so that
//! embedders of `lull-core` pull in nothing but serde; without it
//! [`closest`] finds nothing and errors list the known names only.

/// The known name closest to `name`, if one is close enough to be a
/// likely typo: Jaro–Winkler similarity (case-insensitive) of at least
/// 0.8, which catches a dropped, doubled or swapped letter and a missing
/// suffix (`wd-red` → `wd-red-plus`) but not an unrelated word. Ties go to
/// the first in `known`.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.trim().to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    let mut best: Option<(f64, &'a str)> = None;
    for k in known {
        let score = similarity(&name, &k.to_ascii_lowercase());
        if score >= 0.8 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, k));
        }
    }
    best.map(|(_, k)| k)
}

#[cfg(feature = "suggest")]
fn similarity(a: &str, b: &str) -> f64 {
    strsim::jaro_winkler(a, b)
}

#[cfg(not(feature = "suggest"))]
fn similarity(_: &str, _: &str) -> f64 {
    0.0
}

/// `"; did you mean `x`?"` for the closest known name, or nothing: to
/// follow the unknown name in a message.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, known).map_or_else(String::new, |k| format!("; did you mean `{k}`?"))
}

#[cfg(all(test, feature = "suggest"))]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_name() {
        let tasks = ["none", "spindown", "writeback", "cleaning"];
        assert_eq!(closest("spindwn", tasks), Some("spindown"));
        assert_eq!(closest("Spindown", tasks), Some("spindown"));
        assert_eq!(closest("writeback ", tasks), Some("writeback"));
        assert_eq!(closest("clenaing", tasks), Some("cleaning"));
        let presets = [
            "paper-2.5in",
            "kittyhawk",
            "wd-red-plus",
            "seagate-ultrathin",
        ];
        assert_eq!(closest("wd-red", presets), Some("wd-red-plus"));
        assert_eq!(closest("paper", presets), Some("paper-2.5in"));
        let policies = ["predicted-end", "when-busy", "earlier-of", "later-of"];
        assert_eq!(closest("earlierof", policies), Some("earlier-of"));
        assert_eq!(
            closest("timerr", ["oracle", "timer", "time-window"]),
            Some("timer")
        );
    }

    #[test]
    fn unrelated_words_find_nothing() {
        let tasks = ["none", "spindown", "writeback", "cleaning"];
        assert_eq!(closest("xyz", tasks), None);
        assert_eq!(closest("", tasks), None);
        assert_eq!(closest("defragment", tasks), None);
        assert_eq!(did_you_mean("xyz", tasks), "");
        assert_eq!(
            did_you_mean("nome", tasks),
            "; did you mean `none`?".to_string()
        );
    }
}
