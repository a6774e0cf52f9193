//! The evidence (the shadow evaluation and what was learned) and its
//! ratios, in text and JSON, and the JSON against its schema.

use super::*;

#[test]
fn the_shadow_comes_from_the_metrics_when_they_carry_it() {
    // The daemon's live shadow, as its metrics write it, against a state
    // file written before any idle period ended ("no idle period ended
    // yet" for a minute after a start, with metrics).
    let live = scene().disks[0].shadow.clone().unwrap();
    let mut stale = live.clone();
    for w in &mut stale.windows {
        w.idle_periods = 0;
        w.policies.clear();
    }
    let g = [standby_gauges("sdc", Some(live.clone()))];
    let mut state = State::default();
    state.disk("sdc").shadow = Some(stale.clone());
    let text = crate::metrics::render(&state, &g, 1, false);
    let samples = parse_metrics(&text).unwrap();
    let cfg = Config::parse(
        Path::new("t.toml"),
        "[[disk]]\ndevice = \"sdc\"\n",
        &crate::default_registry(),
    )
    .unwrap();
    let d = combine(&cfg, &state, &samples, true, 1_800_005_000);
    assert_eq!(d[0].shadow.as_ref(), Some(&live), "every figure, exactly");
    // A daemon whose metrics lack the window figures: the state file's.
    let older: Vec<Sample> = samples
        .into_iter()
        .filter(|s| s.name != "lull_shadow_observed_seconds")
        .collect();
    let d = combine(&cfg, &state, &older, true, 1_800_005_000);
    assert_eq!(d[0].shadow.as_ref(), Some(&stale));
}

#[test]
fn what_was_learned_comes_from_the_metrics_when_they_carry_it() {
    let snap = |n, since| lull_core::learned::Snapshot {
        format: lull_core::learned::SNAPSHOT_FORMAT,
        network: "auto".into(),
        breakeven_ns: 1,
        idle_periods: n,
        since_unix: since,
        parts: Vec::new(),
    };
    let now = 1_800_000_000;
    let mut live = State::default();
    live.disk("sdc").learned = Some(snap(9, now - 60));
    let samples = parse_metrics(&crate::metrics::render(&live, &[], 1, false)).unwrap();
    let cfg = Config::parse(
        Path::new("t.toml"),
        "[[disk]]\ndevice = \"sdc\"\n",
        &crate::default_registry(),
    )
    .unwrap();
    // The state file, written before the first idle period ended.
    let mut stale = State::default();
    stale.disk("sdc");
    let d = combine(&cfg, &stale, &samples, true, now);
    assert_eq!(
        (d[0].learned_idle_periods, d[0].learned_since_unix),
        (Some(9), Some(now - 60))
    );
    // Without the metrics: the state file's.
    stale.disk("sdc").learned = Some(snap(2, now - 30));
    let d = combine(&cfg, &stale, &[], false, now);
    assert_eq!(
        (d[0].learned_idle_periods, d[0].learned_since_unix),
        (Some(2), Some(now - 30))
    );
}

/// Each window opens with the verdict (issue 78): what lull saved and
/// with how many spin-ups, then how much more or less than hd-idle's 10
/// minutes and the best fixed timeout. The other policies follow.
#[test]
fn each_window_opens_with_the_verdict() {
    let mut st = scene();
    let text = render_text(&st);
    let first = |text: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with("saved 24h"))
            .map(|l| {
                l.trim_start()
                    .trim_start_matches("saved 24h")
                    .trim()
                    .to_string()
            })
            .unwrap()
    };
    let w = &st.disks[0].shadow.as_ref().unwrap().windows[0];
    let (lull, hd) = (
        w.policy("lull").unwrap().saved_wh,
        w.policy("hd-idle-10min").unwrap().saved_wh,
    );
    assert!(lull > hd, "the scene has lull ahead of hd-idle");
    let want = format!(
        "lull {}, 4 spin-ups: {} more than hd-idle 10 min,",
        crate::units::energy(lull),
        crate::units::energy(lull - hd)
    );
    assert_eq!(first(&text), want, "{text}");
    assert!(text.contains("more than best fixed (51.2s)\n"), "{text}");
    // Behind the best fixed timeout, it says less; and lull is not
    // listed again among the others.
    for w in &mut st.disks[0].shadow.as_mut().unwrap().windows {
        for p in w.policies.iter_mut().filter(|p| p.policy == "best-fixed") {
            p.saved_wh = 5.0;
        }
    }
    let text = render_text(&st).replace("\n              ", " ");
    assert!(
        text.contains("1.63 Wh less than best fixed (51.2s)"),
        "{text}"
    );
    assert!(!text.contains("; lull "), "{text}");
}

/// A window where even the oracle saved nothing (a fresh start, no idle
/// period longer than B yet) gives no ratio: both are 0/0, and their
/// conventional 1 read "excess vs best fixed 1.00, gain vs clairvoyant
/// 1.00" beside savings of 0 Wh everywhere.
#[test]
fn a_window_with_nothing_to_save_gives_no_ratio() {
    let mut st = scene();
    for w in &mut st.disks[0].shadow.as_mut().unwrap().windows {
        let base = w.baseline_energy_j;
        for p in &mut w.policies {
            (p.spinups, p.energy_j, p.saved_wh) = (0, base, 0.0);
        }
        (w.excess_vs_best_fixed, w.gain_vs_clairvoyant) = (Some(1.0), Some(1.0));
    }
    let text = render_text(&st);
    assert!(!text.contains("excess vs best fixed"), "{text}");
    assert!(!text.contains("gain vs clairvoyant"), "{text}");
    assert!(
        text.contains(
            "no ratio: no idle period outlasted the break-even time, so there was nothing to save"
        ),
        "{text}"
    );
    // The scene itself, with savings, shows its ratios.
    assert!(render_text(&scene()).contains("excess vs best fixed"));
}

/// The JSON too gives no ratio where there was nothing to save (an
/// audit: `"excess_vs_best_fixed": 1.0` beside the text's "no ratio",
/// which a script could not tell from lull matching the best fixed
/// timeout); where there was, it keeps them.
#[test]
fn the_json_gives_no_ratio_where_there_was_nothing_to_save() {
    let mut st = scene();
    let shadow = st.disks[0].shadow.take().unwrap();
    let kept = super::without_empty_ratios(shadow.clone());
    assert_eq!(kept, shadow);
    let mut empty = shadow;
    for w in &mut empty.windows {
        let base = w.baseline_energy_j;
        for p in &mut w.policies {
            (p.spinups, p.energy_j, p.saved_wh) = (0, base, 0.0);
        }
        (w.excess_vs_best_fixed, w.gain_vs_clairvoyant) = (Some(1.0), Some(1.0));
    }
    for w in &super::without_empty_ratios(empty).windows {
        assert_eq!(
            (w.excess_vs_best_fixed, w.gain_vs_clairvoyant),
            (None, None)
        );
    }
}

/// A window where the clairvoyant timer adds nothing over the best fixed
/// one gives no gain ratio (a share of nothing), and says why: a trial
/// read its absence as a ratio lost.
#[test]
fn a_missing_gain_ratio_says_why() {
    let mut st = scene();
    let windows = &mut st.disks[0].shadow.as_mut().unwrap().windows;
    windows[0].gain_vs_clairvoyant = None;
    let text = render_text(&st).replace("\n              ", " ");
    assert!(
        text.contains(
            "gain vs clairvoyant n/a (the clairvoyant timer adds nothing over the best fixed one)"
        ),
        "{text}"
    );
    // Wrapped under the field, as the ratios with it.
    for l in render_text(&st)
        .lines()
        .filter(|l| l.contains("clairvoyant"))
    {
        assert!(l.chars().count() <= 100, "{l}");
    }
}

/// A window that spans a dry run and the real daemon says how much of it
/// the dry run watched, under the ratios: lull's line adds spin-downs it
/// only would have made (a trial switched from `--dry-run` and read
/// them as the real daemon's). None is said of a window without.
#[test]
fn a_window_with_dry_run_time_says_so() {
    let mut st = scene();
    assert!(!render_text(&st).contains("dry run:"));
    let windows = &mut st.disks[0].shadow.as_mut().unwrap().windows;
    windows[0].dry_run_s = windows[0].observed_s;
    windows[1].dry_run_s = windows[1].observed_s / 2.0;
    let half = secs(windows[1].dry_run_s);
    // Wrapped lines read as one.
    let text = render_text(&st).replace("\n              ", " ");
    assert!(
        text.contains(&format!(
            "{half} of it watched by a dry run: lull's figures count the spin-downs it would have made then"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "all of it watched by a dry run: lull's figures are the spin-downs it would have made"
        ),
        "{text}"
    );
}

/// The note under a window's ratios explains only a ratio it shows, and
/// none when even the oracle saved nothing (a short watch, no idle period
/// longer than B: seen in a guest, where it explained two ratios that
/// read "n/a" and nothing).
#[test]
fn the_small_margin_note_explains_only_ratios_shown() {
    let figures = |policy: &str, energy_j: f64| lull_activity::shadow::PolicyFigures {
        policy: policy.into(),
        timeout_s: None,
        saved_wh: 0.0,
        energy_j,
        spinups: 0,
    };
    let window = |oracle: f64, best: f64, clairvoyant: f64, excess, gain| {
        lull_activity::shadow::WindowReport {
            window: "24h".into(),
            observed_s: 3600.0,
            dry_run_s: 0.0,
            idle_periods: 10,
            baseline_energy_j: 10_000.0,
            policies: vec![
                figures("lull", 9_000.0),
                figures("best-fixed", best),
                figures("clairvoyant-10min", clairvoyant),
                figures("oracle", oracle),
            ],
            excess_vs_best_fixed: excess,
            gain_vs_clairvoyant: gain,
            wear_budget_per_day: None,
        }
    };
    // Both margins small, both ratios shown: both explained.
    let note = small_margin_note(&window(8_000.0, 8_050.0, 8_040.0, Some(19.0), Some(-95.0)))
        .expect("a note");
    assert!(note.contains("trails the oracle by 0.50 %"), "{note}");
    assert!(
        note.contains("beats the best fixed one by 0.10 %"),
        "{note}"
    );
    // A ratio not shown is not explained.
    let note =
        small_margin_note(&window(8_000.0, 8_050.0, 8_040.0, Some(19.0), None)).expect("a note");
    assert!(!note.contains("clairvoyant"), "{note}");
    assert_eq!(
        small_margin_note(&window(8_000.0, 8_000.0, 8_000.0, None, None)),
        None
    );
    // Nothing saved by anyone (the oracle spends what never spinning down
    // does): no note.
    assert_eq!(
        small_margin_note(&window(10_000.0, 10_000.0, 10_000.0, None, None)),
        None
    );
    // Large margins: no note.
    assert_eq!(
        small_margin_note(&window(5_000.0, 7_000.0, 6_000.0, Some(2.0), Some(-1.0))),
        None
    );
}

/// `lull status --format json` keeps to the schema in
/// `docs/status.schema.json` (issue 31, item 2): every key documented,
/// no key the schema does not know, each of its type.
#[test]
fn the_json_status_keeps_to_its_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/status.schema.json"),
        )
        .expect("docs/status.schema.json"),
    )
    .expect("the schema is JSON");
    let json = serde_json::to_value(scene()).unwrap();
    let mut errors = Vec::new();
    validate(&schema, &json, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    // A jobs disk's jobs too.
    let mut st = scene();
    st.disks[1].jobs = vec![JobStatus {
        name: "scrub".into(),
        admitted: true,
        idle_s: 1.5,
        deadlines_missed: 0,
        fits_observed: None,
    }];
    let mut errors = Vec::new();
    validate(
        &schema,
        &serde_json::to_value(st).unwrap(),
        "$",
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:#?}");
    // And the check can fail: a key the schema does not know.
    let mut bad = json.clone();
    bad["disks"][0]["surprise"] = serde_json::json!(1);
    bad["now_unix"] = serde_json::json!("soon");
    let mut errors = Vec::new();
    validate(&schema, &bad, "$", &mut errors);
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

/// A JSON Schema subset: `type` (a name or a list), `properties`,
/// `required`, `additionalProperties: false`, `items`.
fn validate(schema: &serde_json::Value, v: &serde_json::Value, at: &str, errors: &mut Vec<String>) {
    use serde_json::Value;
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "number" => v.is_number(),
            "integer" => v.is_u64() || v.is_i64(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            errors.push(format!("{at}: {v} is not {types:?}"));
            return;
        }
    }
    if let (Some(props), Some(obj)) = (
        schema.get("properties").and_then(Value::as_object),
        v.as_object(),
    ) {
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = r.as_str().filter(|k| !obj.contains_key(*k)) {
                errors.push(format!("{at}: `{k}` is missing"));
            }
        }
        for (k, val) in obj {
            match props.get(k) {
                Some(sub) => validate(sub, val, &format!("{at}.{k}"), errors),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{at}: `{k}` is not in the schema"))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            validate(items, x, &format!("{at}[{i}]"), errors);
        }
    }
}
