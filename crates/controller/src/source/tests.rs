//! Tests of the diskstats deltas turned into events.

use super::*;
use crate::diskstats::parse;
use lull_core::request::Op;

fn line(name: &str, reads: u64, writes: u64, in_flight: u64, io_ms: u64) -> String {
    format!(
        "8 0 {name} {reads} 0 {} 0 {writes} 0 {} 0 {in_flight} {io_ms} 0\n",
        reads * 8,
        writes * 8
    )
}

fn sample(text: &str) -> Sample {
    Sample::new(parse(text).unwrap())
}

fn ms(x: u64) -> Nanos {
    Nanos::from_millis(x)
}

fn family(disk: &str, parts: &[&str], holders: &[&str]) -> Family {
    Family {
        disk: disk.into(),
        partitions: parts.iter().map(|s| s.to_string()).collect(),
        holders: holders.iter().map(|s| s.to_string()).collect(),
    }
}

fn check_ordered(evs: &[Event], from: Nanos, to: Nanos) {
    let mut outstanding = 0i64;
    for w in evs.windows(2) {
        assert!((w[0].time, w[0].kind) <= (w[1].time, w[1].kind), "{evs:?}");
    }
    for e in evs {
        assert!(
            e.time >= from && e.time <= to,
            "{e:?} outside [{from}, {to}]"
        );
        outstanding += if e.is_arrival() { 1 } else { -1 };
        assert!(outstanding >= 0);
    }
}

#[test]
fn a_line_as_it_was_is_not_fresh_and_positions_follow_the_layout() {
    let a = format!("{}{}", line("sda", 1, 2, 0, 3), line("sdb", 5, 6, 0, 7));
    let mut s = Sample::default();
    s.update(&a, false).unwrap();
    let layout = s.layout();
    let (pa, pb) = (s.position("sda").unwrap(), s.position("sdb").unwrap());
    assert!(s.fresh(pa) && s.fresh(pb), "a first sight is fresh");
    s.update(&a, false).unwrap();
    assert!(!s.fresh(pa) && !s.fresh(pb));
    assert_eq!(s.layout(), layout);
    assert_eq!(s.at(pb).unwrap().writes, 6);
    // sdb wrote: only its line is fresh.
    let b = format!("{}{}", line("sda", 1, 2, 0, 3), line("sdb", 5, 7, 0, 8));
    s.update(&b, false).unwrap();
    assert!(!s.fresh(pa) && s.fresh(pb));
    assert_eq!(s.at(pb).unwrap().writes, 7);
    // A device wanted from now on whose line changed while it was not:
    // parsed at the next update, though the file is the same.
    let mut u = Sample::default();
    u.update(&a, false).unwrap();
    u.set_wanted(|n| n == "sda");
    u.update(&b, false).unwrap();
    assert!(u.get("sdb").is_none());
    u.set_wanted(|_| true);
    u.update(&b, false).unwrap();
    assert_eq!(u.get("sdb").unwrap().writes, 7);
    // `all` parses, and marks, every line.
    s.update(&b, true).unwrap();
    assert!(s.fresh(pa) && s.fresh(pb));
    // A device more: a new layout, in which sdb moved.
    let c = format!("{}{}", line("sdc", 0, 0, 0, 0), b);
    s.update(&c, false).unwrap();
    assert_ne!(s.layout(), layout);
    assert_eq!(s.position("sdb"), Some(2));
    assert!(s.fresh(2), "a line at a new place is fresh");
    // Another sample never shares a layout number.
    let mut t = Sample::default();
    t.update(&c, false).unwrap();
    assert_ne!(t.layout(), s.layout());
}

#[test]
fn a_sample_updated_in_place_parses_only_what_is_wanted() {
    let text = format!(
        "{}{}\n{}",
        line("sda", 1, 2, 0, 3),
        line("sda1", 1, 0, 0, 1),
        line("sdb", 5, 6, 1, 7)
    );
    let mut s = Sample::default();
    s.update(&text, false).unwrap();
    assert!(s.names_changed());
    s.set_wanted(|n| n == "sdb");
    // sda did I/O, sda1 and sdb did not.
    let moved = format!(
        "{}{}\n{}",
        line("sda", 4, 2, 0, 3),
        line("sda1", 1, 0, 0, 1),
        line("sdb", 5, 6, 1, 7)
    );
    s.update(&moved, false).unwrap();
    assert!(!s.names_changed());
    assert_eq!(s.names().collect::<Vec<_>>(), ["sda", "sda1", "sdb"]);
    assert_eq!(s.get("sdb").unwrap().writes, 6);
    assert_eq!(s.dev("sda1"), Some((8, 0)));
    // Not wanted and changed: listed, its counters skipped until
    // filled; not wanted and unchanged: its counters still hold.
    assert!(s.get("sda").is_none());
    assert_eq!(s.get("sda1").unwrap().reads, 1);
    s.fill(&moved);
    assert_eq!(s.get("sda").unwrap().reads, 4);
    // Changed again, none wanted: only `all` parses them.
    s.set_wanted(|_| false);
    s.update(&text, false).unwrap();
    assert!(!s.names_changed() && s.get("sda").is_none() && s.len() == 3);
    s.update(&text, true).unwrap();
    assert_eq!(s.get("sda").unwrap().reads, 1);
    assert_eq!(s.get("sdb").unwrap().writes, 6);
    // A device gone, another new: a change, the index follows.
    let text2 = format!("{}{}", line("sda", 1, 2, 0, 3), line("sdc", 9, 9, 0, 9));
    s.update(&text2, false).unwrap();
    assert!(s.names_changed());
    assert_eq!(s.len(), 2);
    assert!(s.dev("sdb").is_none());
    assert_eq!(s.get("sdc").unwrap().reads, 9);
    // A new line that does not parse is an error naming its line; a
    // known, unwanted one is only checked up to its name.
    let bad = format!("{}8 1 sdx 1 2\n", line("sda", 1, 2, 0, 3));
    assert_eq!(s.update(&bad, false).unwrap_err().line, 2);
    assert!(s.is_empty());
    let good = format!("{}{}", line("sda", 1, 2, 0, 3), line("sdx", 1, 2, 0, 3));
    s.update(&good, false).unwrap();
    s.set_wanted(|n| n == "sda");
    s.update(&bad, false).unwrap();
    assert_eq!(s.len(), 2);
    assert!(s.update("8 x sda 1\n", false).is_err());
}

proptest::proptest! {
    #![proptest_config(lull_testkit::cases(256))]
    /// However the device list changes between updates, an updated
    /// sample answers like one built from a full parse, for the
    /// devices it wants.
    #[test]
    fn updates_agree_with_a_full_parse(
        polls in proptest::collection::vec(
            proptest::collection::vec((0u8..6, 0u64..1000, proptest::bool::ANY), 0..6),
            1..6,
        ),
    ) {
        let mut s = Sample::default();
        // What the previous poll asked for, by `set_wanted`.
        let mut asked: Vec<String> = Vec::new();
        for devs in polls {
            let mut text = String::new();
            let mut names = Vec::new();
            for (d, c, _) in &devs {
                let name = format!("sd{}", (b'a' + d) as char);
                if names.contains(&name) {
                    continue;
                }
                text.push_str(&line(&name, *c, c / 2, 0, 1));
                names.push(name);
            }
            let wanted: Vec<String> = devs
                .iter()
                .filter(|x| x.2)
                .map(|(d, _, _)| format!("sd{}", (b'a' + d) as char))
                .collect();
            s.update(&text, false).unwrap();
            let full = sample(&text);
            // What the daemon does when the devices change.
            let fresh = s.names_changed();
            if fresh {
                s.fill(&text);
            }
            proptest::prop_assert_eq!(s.names().collect::<Vec<_>>(), names.iter().map(String::as_str).collect::<Vec<_>>());
            for n in &names {
                proptest::prop_assert_eq!(s.dev(n), full.dev(n));
                if fresh || asked.contains(n) {
                    proptest::prop_assert_eq!(s.get(n), full.get(n));
                }
            }
            s.set_wanted(|n| wanted.iter().any(|w| w == n));
            asked = wanted;
        }
    }
}

proptest::proptest! {
    #![proptest_config(lull_testkit::cases(256))]
    /// A tracker fed one sample updated in place (unchanged lines not
    /// parsed, polls with no changed member skipped) decides exactly
    /// as one fed a full parse at every poll: same outcomes, same
    /// events, through I/O, in-flight requests, devices that come and
    /// go, late polls and absorbed flushes.
    #[test]
    fn skipping_unchanged_lines_changes_no_outcome(
        polls in proptest::collection::vec(
            (
                proptest::collection::vec((0u8..4, 0u64..3, 0u64..2), 4),
                0u8..10,
                0u8..10,
                0u8..4,
            ),
            1..40,
        ),
    ) {
        let fam = family("sda", &["sda1"], &["dm-0"]);
        let names = ["sda", "sda1", "dm-0", "sdb"];
        let mut counts = [0u64; 4];
        let mut flying = [0u64; 4];
        let mut kept = Sample::default();
        let mut fast = DiskTracker::new(fam.clone());
        let mut full = DiskTracker::new(fam);
        let (mut out_fast, mut out_full) = (Vec::new(), Vec::new());
        for (i, (devs, gone, late, absorb)) in polls.into_iter().enumerate() {
            let mut text = String::new();
            for (k, (step, reads, in_flight)) in devs.into_iter().enumerate() {
                // A device may be missing from this poll (k == gone).
                if usize::from(gone) == k {
                    continue;
                }
                // Step 0: I/O completed, and the in-flight count may
                // change; otherwise the line stays as it was (a slow
                // request may still be in flight).
                if step == 0 {
                    counts[k] += reads + 1;
                    flying[k] = in_flight;
                }
                let c = counts[k];
                text.push_str(&line(names[k], c, c / 2, flying[k], c));
            }
            kept.update(&text, false).unwrap();
            if kept.names_changed() {
                kept.fill(&text);
                kept.set_wanted(|n| n != "sdb");
            }
            let now = ms(1000 * (i as u64 + 1));
            let late = late == 0;
            out_fast.clear();
            out_full.clear();
            let (a, b) = if absorb == 0 && !late {
                (fast.absorb(now, &kept), full.absorb(now, &sample(&text)))
            } else {
                (None, None)
            };
            let a = a.unwrap_or_else(|| fast.poll(now, &kept, late, &mut out_fast));
            let b = b.unwrap_or_else(|| full.poll(now, &sample(&text), late, &mut out_full));
            proptest::prop_assert_eq!(a, b, "poll {}", i);
            proptest::prop_assert_eq!(&out_fast, &out_full, "poll {}", i);
        }
    }
}

#[test]
fn deltas_become_request_pairs_ending_at_the_poll() {
    let mut t = DiskTracker::new(family("sda", &[], &[]));
    let mut out = Vec::new();
    let o = t.poll(ms(0), &sample(&line("sda", 10, 10, 0, 5)), false, &mut out);
    // First sight: the disk has just finished a request, and an idle
    // period begins, as in the engine.
    assert!(o.present && !o.active && out.len() == 2);
    assert!(o.idle_started);
    out.clear();
    let o = t.poll(
        ms(1000),
        &sample(&line("sda", 13, 11, 0, 9)),
        false,
        &mut out,
    );
    assert!(o.active);
    assert_eq!(o.ops, 4);
    assert_eq!(out.len(), 8);
    check_ordered(&out, ms(0), ms(1000));
    assert_eq!(out.last().unwrap().time, ms(1000));
    assert_eq!(out.iter().filter(|e| e.op == Op::Write).count(), 2);
    // 4 ms of io_ticks over 4 requests: 1 ms each.
    assert_eq!(out[1].time - out[0].time, ms(1));
    assert_eq!(out[0].bytes, 4096);
    out.clear();
    let o = t.poll(
        ms(2000),
        &sample(&line("sda", 13, 11, 0, 9)),
        false,
        &mut out,
    );
    assert!(!o.active && o.idle_started && out.is_empty());
    let o = t.poll(
        ms(3000),
        &sample(&line("sda", 13, 11, 0, 9)),
        false,
        &mut out,
    );
    assert!(!o.idle_started);
}

#[test]
fn monitoring_noise_does_not_count() {
    // io_ticks and the weighted time move (a SMART query), reads and
    // writes do not.
    let mut t = DiskTracker::new(family("sda", &[], &[]));
    let mut out = Vec::new();
    t.poll(ms(0), &sample(&line("sda", 10, 10, 0, 5)), false, &mut out);
    out.clear();
    let o = t.poll(
        ms(1000),
        &sample(&line("sda", 10, 10, 0, 50)),
        false,
        &mut out,
    );
    assert!(!o.active && out.is_empty());
}

#[test]
fn in_flight_holds_the_disk_busy() {
    let mut t = DiskTracker::new(family("sda", &[], &[]));
    let mut out = Vec::new();
    t.poll(ms(0), &sample(&line("sda", 1, 1, 0, 0)), false, &mut out);
    out.clear();
    t.poll(ms(100), &sample(&line("sda", 1, 1, 1, 0)), false, &mut out);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_arrival() && out[0].time == ms(100));
    assert!(t.holding());
    let o = t.poll(ms(200), &sample(&line("sda", 1, 1, 1, 0)), false, &mut out);
    assert!(o.active && out.len() == 1);
    t.poll(ms(300), &sample(&line("sda", 2, 1, 0, 0)), false, &mut out);
    assert_eq!(out.len(), 4);
    check_ordered(&out, ms(0), ms(300));
    assert!(!t.holding());
}

#[test]
fn partitions_and_holders_count_for_the_disk() {
    let mut t = DiskTracker::new(family("sda", &["sda1"], &["dm-0"]));
    let mut out = Vec::new();
    let base = line("sda", 5, 5, 0, 0) + &line("sda1", 5, 5, 0, 0) + &line("dm-0", 1, 1, 0, 0);
    t.poll(ms(0), &sample(&base), false, &mut out);
    out.clear();
    // dm-0 saw three writes the disk has not (yet) counted.
    let next = line("sda", 5, 5, 0, 0) + &line("sda1", 5, 5, 0, 0) + &line("dm-0", 1, 4, 0, 0);
    let o = t.poll(ms(100), &sample(&next), false, &mut out);
    assert!(o.active);
    assert_eq!(o.ops, 3);
    // A dm device with I/O in flight keeps the disk busy.
    let next = line("sda", 5, 5, 0, 0) + &line("sda1", 5, 5, 0, 0) + &line("dm-0", 1, 4, 2, 0);
    let o = t.poll(ms(200), &sample(&next), false, &mut out);
    assert!(o.active && t.holding());
}

#[test]
fn counter_wrap_is_a_small_delta() {
    let max = u64::from(u32::MAX);
    let mut t = DiskTracker::new(family("sda", &[], &[]));
    let mut out = Vec::new();
    t.poll(
        ms(0),
        &sample(&line("sda", max - 1, 0, 0, 0)),
        false,
        &mut out,
    );
    out.clear();
    let o = t.poll(ms(100), &sample(&line("sda", 2, 0, 0, 0)), false, &mut out);
    assert_eq!(o.ops, 4);
    assert_eq!(out.len(), 8);
}

#[test]
fn a_vanished_device_is_absent_and_returns_with_a_baseline() {
    let mut t = DiskTracker::new(family("sdb", &[], &[]));
    let mut out = Vec::new();
    t.poll(ms(0), &sample(&line("sdb", 1, 1, 0, 0)), false, &mut out);
    out.clear();
    t.poll(ms(100), &sample(&line("sdb", 1, 1, 1, 0)), false, &mut out);
    assert!(t.holding());
    out.clear();
    let o = t.poll(ms(200), &sample(&line("sda", 1, 1, 0, 0)), false, &mut out);
    assert!(o.vanished && !o.present);
    // The held request completes, and the absence is held open in its
    // place: an unplugged disk is not idle (no policy sleeps through it,
    // no network learns from it).
    assert_eq!(out.len(), 2);
    assert!(out[0].is_completion() && out[0].time == ms(200));
    assert!(!out[1].is_completion() && out[1].time == ms(200));
    assert!(t.holding());
    assert_eq!(o.record.map(|p| p.kind), Some(PollKind::Vanished));
    out.clear();
    let o = t.poll(ms(300), &sample(""), false, &mut out);
    assert!(!o.vanished && !o.present && out.is_empty());
    // Back with fresh counters: a baseline that completes the absence,
    // and idle from now on.
    let o = t.poll(
        ms(400),
        &sample(&line("sdb", 500, 0, 0, 0)),
        false,
        &mut out,
    );
    assert!(o.appeared && o.present && o.idle_started);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_completion());
    assert_eq!((out[0].time, out[0].pair), (ms(400), ms(200)));
    assert_eq!(o.record.and_then(|p| p.held_since), Some(ms(200)));
    assert!(!t.holding());
    let o = t.poll(
        ms(500),
        &sample(&line("sdb", 501, 0, 0, 0)),
        false,
        &mut out,
    );
    assert_eq!(o.ops, 1);
}

#[test]
fn a_late_poll_is_busy_not_idle() {
    let mut t = DiskTracker::new(family("sda", &[], &[]));
    let mut out = Vec::new();
    t.poll(ms(0), &sample(&line("sda", 1, 1, 0, 0)), false, &mut out);
    out.clear();
    // Resumed an hour later: the counters moved a lot (resume I/O),
    // none of it is spread over the hour, the hour is one busy request.
    let o = t.poll(
        Nanos::from_secs(3600),
        &sample(&line("sda", 90_000, 1, 0, 0)),
        true,
        &mut out,
    );
    assert!(o.reset && o.active);
    assert_eq!(out.len(), 2);
    assert_eq!((out[0].time, out[1].time), (ms(0), Nanos::from_secs(3600)));
    // The next on-time poll starts from the new baseline.
    out.clear();
    let o = t.poll(
        Nanos::from_secs(3601),
        &sample(&line("sda", 90_000, 1, 0, 0)),
        false,
        &mut out,
    );
    assert!(!o.active && o.idle_started && out.is_empty());
}

#[test]
fn absorbed_deltas_are_not_foreground_io() {
    let mut t = DiskTracker::new(family("sda", &[], &[]));
    let mut out = Vec::new();
    assert!(t.absorb(ms(0), &sample(&line("sda", 1, 1, 0, 0))).is_none());
    t.poll(ms(0), &sample(&line("sda", 1, 1, 0, 0)), false, &mut out);
    out.clear();
    // A flush wrote 30 blocks: absorbed, no events, still idle.
    let o = t
        .absorb(ms(100), &sample(&line("sda", 1, 31, 0, 0)))
        .unwrap();
    assert!(o.present && !o.active);
    let o = t.poll(ms(200), &sample(&line("sda", 1, 31, 0, 0)), false, &mut out);
    assert!(!o.active && !o.idle_started && out.is_empty());
}

#[test]
fn heavy_load_is_capped() {
    let mut t = DiskTracker::new(family("sda", &[], &[]));
    let mut out = Vec::new();
    t.poll(ms(0), &sample(&line("sda", 0, 0, 0, 0)), false, &mut out);
    out.clear();
    t.poll(
        ms(1000),
        &sample(&line("sda", 1_000_000, 5, 0, 1000)),
        false,
        &mut out,
    );
    assert_eq!(out.len() as u64, 2 * MAX_EVENTS_PER_POLL);
    check_ordered(&out, ms(0), ms(1000));
}

#[test]
fn partition_names() {
    assert!(is_partition_name("sda", "sda1"));
    assert!(!is_partition_name("sda", "sdaa"));
    assert!(!is_partition_name("sda", "sda"));
    assert!(is_partition_name("nvme0n1", "nvme0n1p3"));
    assert!(!is_partition_name("nvme0n1", "nvme0n10"));
    assert!(is_partition_name("loop0", "loop0p1"));
}

#[test]
fn discovers_partitions_and_stacked_holders_in_sysfs() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("class/block");
    for d in [
        "sda/sda1",
        "sda/holders/dm-0",
        "sda/sda1/holders/dm-1",
        "dm-1/holders/dm-2",
    ] {
        std::fs::create_dir_all(c.join(d)).unwrap();
    }
    std::fs::write(c.join("sda/sda1/partition"), "1").unwrap();
    let f = Family::discover("sda", dir.path(), std::iter::empty());
    assert_eq!(f.partitions, ["sda1"]);
    assert_eq!(f.holders, ["dm-0", "dm-1", "dm-2"]);
    let f = Family::discover(
        "sdz",
        dir.path(),
        ["sdz", "sdz1", "sdz2", "sdy1"].into_iter(),
    );
    assert_eq!(f.partitions, ["sdz1", "sdz2"]);
}
