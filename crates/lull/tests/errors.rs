//! The errors an embedder meets read as advice (issue 36): they name the
//! parameter at fault and say what to write.

use lull::prelude::*;

fn error(spec: &str) -> String {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    match setup.build_network(spec) {
        Ok(_) => panic!("{spec} built"),
        Err(e) => e.to_string(),
    }
}

fn bare_error(spec: &str) -> String {
    match lull_core::spec::build_network(spec, &lull::registry()) {
        Ok(_) => panic!("{spec} built without B"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_range_is_written_compactly() {
    let e = error("share(eta=-1)");
    assert!(e.contains("parameter `eta`"), "{e}");
    assert!(e.contains("greater than 0 and at most 1000"), "{e}");
    assert!(e.len() < 120, "{} characters: {e}", e.len());
}

#[test]
fn a_named_network_in_a_composition_says_what_it_is() {
    let e = error("auto + fixed(10s)");
    assert!(e.contains("`auto`"), "{e}");
    assert!(e.contains("whole network"), "{e}");
    assert!(e.contains("write it alone"), "{e}");
    // An unknown name is answered with the named networks among the
    // known names.
    let e = error("long-idel");
    assert!(e.contains("unknown component"), "{e}");
    assert!(e.contains("networks, written alone: auto"), "{e}");
}

#[test]
fn the_unit_hint_includes_b() {
    let e = error("timer(2b)");
    assert!(e.contains("parameter `t`"), "{e}");
    assert!(e.contains("2B"), "{e}");
}

#[test]
fn offline_components_are_refused_with_the_way_out() {
    let e = error("oracle");
    assert!(e.contains("offline"), "{e}");
    assert!(e.contains("lull replay"), "{e}");
}

#[test]
fn a_network_that_needs_b_says_how_to_give_it() {
    // `auto` on a registry without B: its default `B/32` was never written
    // by the user, so the error says where it comes from and how to give B.
    let e = bare_error("auto");
    assert!(e.contains("defaults to `B/32`"), "{e}");
    assert!(e.contains("Registry::with_breakeven"), "{e}");
    // A B the user wrote, likewise.
    let e = bare_error("timer(2B)");
    assert!(e.contains("parameter `t`"), "{e}");
    assert!(e.contains("Registry::with_breakeven"), "{e}");
    // With B, both build.
    let setup = Setup::break_even_for(Nanos::from_secs(3), Work::Standby).unwrap();
    assert!(setup.build_network("auto").is_ok());
    assert!(setup.build_network("timer(2B)").is_ok());
}

#[test]
fn an_unknown_drive_lists_the_presets() {
    let e = lull::for_drive("wd-redplus", Work::Standby)
        .unwrap_err()
        .to_string();
    assert!(e.contains("wd-red-plus"), "{e}");
    assert!(e.contains("p_active="), "{e}");
    // A setup keeps the drive's power model, however it was made.
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let model = setup.power().expect("a preset's power model").clone();
    assert_eq!(model.break_even(), setup.break_even());
    assert_eq!(Setup::power_model(&model).unwrap().power(), Some(&model));
    assert_eq!(
        Setup::break_even_for(setup.break_even(), Work::Standby)
            .unwrap()
            .power(),
        None
    );
    // Nothing named says so.
    let e = lull::for_drive("", Work::Standby).unwrap_err().to_string();
    assert!(e.starts_with("an empty drive: name a preset ("), "{e}");
    assert!(e.contains("wd-red-plus"), "{e}");
}

/// A registered component whose factory builds another role than it
/// was registered with: an error naming it and both roles, where the
/// network used to panic with "entered unreachable code" (embed-26 B3).
#[test]
fn a_factory_that_builds_the_wrong_role_is_named() {
    use lull::core::registry::{ComponentInfo, ParamInfo};
    const LIAR: ComponentInfo = ComponentInfo {
        name: "liar",
        role: Role::DurationPredictor,
        summary: "registered as a duration predictor, builds a start detector",
        source: "a test",
        params: &[ParamInfo::optional(
            "t",
            ParamKind::Duration,
            "1s",
            "s",
            "a timeout",
        )],
        inputs: None,
        offline: false,
        gauges: &[],
    };
    let mut setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let builtins = lull::registry();
    setup
        .registry_mut()
        .register(LIAR, move |_| builtins.build("timer", &[(None, "1s")], 0));
    let e = setup
        .build_network("timer(B) + liar(2s)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`liar`"), "{e}");
    assert!(e.contains("built a start-detector"), "{e}");
    assert!(e.contains("registered as a duration-predictor"), "{e}");
    // The registry says so to whoever builds from it directly.
    let e = setup
        .registry()
        .build("liar", &[], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`liar`"), "{e}");
}

/// `R` (a trace's mean request rate) is the lab's: the library says who
/// resolves it and what to write instead (embed-26 D3).
#[test]
fn a_rate_relative_to_r_says_it_belongs_to_the_lab() {
    for spec in [
        "event-window(n=5, rate=4R)",
        "event-window(n=5, rate=R/16)",
        "moving-average(rate=R)",
    ] {
        let e = error(spec);
        assert!(e.contains("parameter `rate`"), "{e}");
        assert!(e.contains("`lull replay` and `lull rank`"), "{e}");
        assert!(e.contains("requests a second"), "{e}");
    }
    let e = error("moving-average(rate=fast)");
    assert!(e.contains("\"fast\" is not a number"), "{e}");
    assert!(!e.contains("lull replay"), "{e}");
}

/// A drive whose B cannot scale a network is refused where it is named,
/// with its spec and B, not later by `long-idle` at a column of `auto`'s
/// expansion the user never wrote (embed-26 D3).
#[test]
fn a_drive_without_a_usable_break_even_is_refused_by_name() {
    let free = "p_active=5,p_sleep=1,p_spinup=0,t_spinup=0,t_spindown=0";
    let e = lull::for_drive(free, Work::Standby)
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("drive `{free}`")), "{e}");
    assert!(e.contains("B is 0s"), "{e}");
    assert!(e.contains("B/32"), "{e}");
    // 1 ns: `auto`'s B/32 would round to 0.
    let tiny = "p_active=5,p_sleep=4,p_spinup=1,t_spinup=1ns,t_spindown=0";
    let e = lull::for_drive(tiny, Work::Standby)
        .unwrap_err()
        .to_string();
    assert!(e.contains("B is 1ns"), "{e}");
    // 32 ns is the shortest B that builds `auto` (a registry given B
    // directly; `Setup::break_even_for` refuses a B that short).
    let registry = lull::registry().with_breakeven(Nanos(32));
    assert!(lull_core::spec::build_network("auto", &registry).is_ok());
    // Figures off by orders of magnitude saturated B at Nanos::MAX.
    let huge = "p_active=1.1,p_sleep=1,p_spinup=1e300,t_spinup=1e300,t_spindown=0";
    let e = lull::for_drive(huge, Work::Standby)
        .unwrap_err()
        .to_string();
    assert!(e.contains("584 years"), "{e}");
    // Work that moves I/O is unaffected by the power model.
    assert!(lull::for_drive(free, Work::Io).is_ok());
}

/// A drive key given twice is refused, as a network parameter given
/// twice is (the last one used to win silently).
#[test]
fn a_drive_key_given_twice_is_refused() {
    for spec in [
        "wd-red-plus,p_active=4.1,p_active=5",
        "p_active=5,p_sleep=1,p_spinup=2,t_spinup=2,t_spindown=1,p_sleep=2",
        "wd-red-plus,rpm=5400,rpm=7200",
    ] {
        let e = lull::for_drive(spec, Work::Standby)
            .unwrap_err()
            .to_string();
        assert!(e.contains("given twice"), "{spec}: {e}");
    }
    let e = "wd-red-plus,t_spinup=3,t_spinup=4"
        .parse::<lull::tasks::PowerModel>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("key `t_spinup`: given twice"), "{e}");
    let e = "wd-red-plus,rpm=5400,rpm=7200"
        .parse::<lull::tasks::ServiceModel>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("key `rpm`: given twice"), "{e}");
}

/// An error raised while building a named network says what it expanded
/// to, as its parse errors do (embed-26 D3).
#[test]
fn a_build_error_of_a_named_network_says_what_it_expands_to() {
    // B = 1 ns (a registry given B directly; a setup refuses it):
    // `auto`'s B/32 is 0.
    let registry = lull::registry().with_breakeven(Nanos(1));
    let e = NetworkSpec::parse("auto", Some(&registry))
        .unwrap()
        .build_online(&registry)
        .unwrap_err()
        .to_string();
    assert!(e.contains("network `auto` expands to `long-idle()`"), "{e}");
    assert!(e.contains("parameter `min`"), "{e}");
    // Through the core entry point too.
    let e = lull_core::spec::build_network("auto", &registry)
        .unwrap_err()
        .to_string();
    assert!(e.contains("expands to `long-idle()`"), "{e}");
}

/// Live, the offline `oracle` is not offered among the known names; a
/// replay's build still lists it (embed-26 D2).
#[test]
fn a_live_build_does_not_offer_the_oracle() {
    let e = error("timr");
    assert!(e.contains("known start-detectors:"), "{e}");
    assert!(!e.contains("oracle"), "{e}");
    assert!(e.contains("timer"), "{e}");
    let e = lull_core::spec::build_network("timr", &lull::registry())
        .unwrap_err()
        .to_string();
    assert!(e.contains("oracle"), "{e}");
}

/// With the `suggest` feature the facade suggests the closest name.
#[cfg(feature = "suggest")]
#[test]
fn the_suggest_feature_says_did_you_mean() {
    let e = error("timr");
    assert!(e.contains("did you mean `timer`?"), "{e}");
    let e = lull::for_drive("wd-red", Work::Standby)
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean `wd-red-plus`?"), "{e}");
}

/// Restore errors are short and say whose they are (embed-26 D3).
#[test]
fn restore_errors_are_short_and_name_the_component() {
    let setup = lull::for_drive("wd-red-plus", Work::Standby).unwrap();
    let build = |spec: &str| {
        Engine::with_policy(
            setup.build_network(spec).unwrap(),
            StopPolicy::EarlierOf,
            NoTask,
        )
    };
    // `share`'s weights with a corrupted sum of about -3e300.
    let mut parts = build("share").save_learned();
    let share = parts[0].as_mut().expect("share learns");
    share.values[0] = -3.2e300;
    let e = build("share")
        .restore_learned(&parts)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("share: "), "{e}");
    assert!(e.contains("-3.2e300"), "{e}");
    assert!(e.len() < 100, "{} characters: {e}", e.len());
    // An adaptive timer's timeout outside its bounds.
    let mut parts = build("adapt-timer-geom-geom").save_learned();
    parts[0].as_mut().expect("it learns").values[0] = 0.0;
    let e = build("adapt-timer-geom-geom")
        .restore_learned(&parts)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("adaptive-timer: timeout 0ns is outside"),
        "{e}"
    );
}
