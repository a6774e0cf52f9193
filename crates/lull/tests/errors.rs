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
    let setup = Setup::break_even_for(Nanos::from_secs(3), Work::Standby);
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
    assert_eq!(Setup::power_model(&model).power(), Some(&model));
    assert_eq!(
        Setup::break_even_for(setup.break_even(), Work::Standby).power(),
        None
    );
    // Nothing named says so.
    let e = lull::for_drive("", Work::Standby).unwrap_err().to_string();
    assert!(e.starts_with("an empty drive: name a preset ("), "{e}");
    assert!(e.contains("wd-red-plus"), "{e}");
}
