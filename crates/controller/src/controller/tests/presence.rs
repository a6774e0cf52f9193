//! Disks that go away, come back under another name, or are left alone.

use super::*;

/// Found by the guest test: a disk unplugged, then back under another
/// kernel name (its by-id link moved: `replugged`) has its counters start
/// afresh, and the absence its engine held open since it vanished ends
/// with the new name's baseline; a fresh tracker left the engine busy for
/// good, so the disk never spun down again.
#[test]
fn a_disk_back_under_another_name_is_idle_again_and_spun_down() {
    let (mut c, r) = controller("network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\n");
    run(&mut c, &r, 0, 6, busy_then_quiet);
    run_absent(&mut c, &r, 6, 20);
    assert!(!c.state().present);
    let mut out = Vec::new();
    let family = Family {
        disk: "sdc".into(),
        partitions: vec![],
        holders: vec![],
    };
    c.replugged("sdc", family, &mut out);
    // Back as sdc at 20 with counters of its own, quiet: spun down after
    // its timeout from the baseline.
    let back = drive(&mut c, &r, 20, 40, |_| {
        "8 32 sdc 7 0 56 0 0 0 0 0 0 0 0\n".into()
    });
    assert!(c.state().present);
    assert_eq!(standby_orders(&back), vec![25]);
}

/// Polls `c` with `sdb` absent (unplugged): another disk's line only.
fn run_absent(
    c: &mut DiskController,
    registry: &Registry,
    from: u64,
    to: u64,
) -> Vec<(u64, Output)> {
    drive(c, registry, from, to, |_| {
        "8 0 sda 1 0 8 0 0 0 0 0 0 0 0\n".into()
    })
}

#[test]
fn an_unplugged_disk_is_sent_no_standby_and_its_return_is_no_wake() {
    // Found by the guest test (issue 28): unplugged while busy, the timer
    // ran out while it was away and a standby went to a device node that
    // no longer existed; unplugged in standby, its first I/O after coming
    // back ran the on_wake hook of an idle period that had ended.
    let (mut c, r) = controller(
        "network = \"timer(5s)\"\nmax_spindowns_per_day = 1000\non_wake = [\"/bin/true\"]\n",
    );
    // Busy until 5, unplugged from 6 to 20: the timer runs out at 10.
    run(&mut c, &r, 0, 6, busy_then_quiet);
    let away = run_absent(&mut c, &r, 6, 20);
    assert_eq!(standby_orders(&away), Vec::<u64>::new());
    // The state file says since when it is gone (the poll that missed it).
    let gone = c.state().vanished_unix.expect("gone since");
    assert_eq!(c.state().last_decision_unix, gone);
    assert!(
        c.state().last_decision.contains("not present"),
        "{}",
        c.state().last_decision
    );
    assert!(c.state().spindown_attempts_unix.is_empty());
    // Back and quiet: spun down after its timeout, as a new disk would be.
    let back = run(&mut c, &r, 20, 40, |_| 100);
    assert_eq!(c.state().vanished_unix, None);
    assert_eq!(standby_orders(&back), vec![25]);
    report(&mut c, 25, Outcome::SpunDown("ok".into()));
    assert!(c.in_standby());
    // Unplugged in standby: the standby time so far counts, then nothing
    // of that idle period is left.
    run_absent(&mut c, &r, 40, 45);
    assert!(!c.in_standby());
    assert!(
        (c.state().standby_s - 15.0).abs() < 1.5,
        "{}",
        c.state().standby_s
    );
    // Its standby ended when it left: a spin-up (a trial saw "spin-downs
    // 2, spin-ups 0" beside a shadow that counted one).
    assert_eq!(c.state().spinups, c.state().spindowns);
    let spinups = c.state().spinups;
    // Back, then I/O: no spin-up counted (lull did not know its state), and
    // no on_wake hook for the idle period that ended when it left.
    let outs = run(&mut c, &r, 45, 48, |s| if s < 47 { 100 } else { 120 });
    assert_eq!(c.state().spinups, spinups);
    let hooks = outs
        .iter()
        .filter(|(_, o)| matches!(o, Output::Hook { .. }))
        .count();
    assert_eq!(hooks, 0, "{outs:?}");
}

#[test]
fn a_disk_left_alone_is_asked_nothing() {
    // Power checks every 5 s: the same disk gets them unless it is left
    // alone (a non-rotating drive that no preset names).
    let r = crate::default_registry();
    let checks = |left_alone: Option<&str>| {
        // A timer: `auto` under the default budget waits, cautious, for
        // periods that show a shorter timeout saves more.
        let (mut cfg, family) = sdb(
            "task = \"standby\"\nbackend = \"sgio\"\nnetwork = \"timer(10s)\"\n",
            &r,
        );
        cfg.left_alone = left_alone.map(String::from);
        let mut c = fresh(&r, &cfg, family, Nanos::from_secs(5));
        let outs = run(&mut c, &r, 0, 600, |t| 10 * (t / 100));
        let orders = |f: fn(&Order) -> bool| {
            outs.iter()
                .filter(|(_, o)| matches!(o, Output::Order { order, .. } if f(order)))
                .count()
        };
        (
            orders(|o| matches!(o, Order::CheckPower { .. })),
            orders(|o| matches!(o, Order::Start { .. })),
        )
    };
    let (power, standby) = checks(None);
    assert!(power >= 100 && standby >= 1, "{power} {standby}");
    assert_eq!(checks(Some("the drive does not rotate")), (0, 0));
}
