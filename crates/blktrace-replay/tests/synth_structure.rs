//! The structured built-in workloads (`office`, `home-nas`,
//! `db-checkpoint`) have the structure they claim: determinism, idle
//! periods on a 2.5" drive's scale (3 s) and on a 3.5" NAS drive's (72 s),
//! correlated idle lengths, a day/night pattern, periodic daemons, and
//! persistent regimes.

use lull_blktrace_replay::Trace;
use lull_blktrace_replay::info::autocorrelation;
use lull_blktrace_replay::synth::{self, structured};
use lull_core::event::Timeline;
use lull_core::request::Op;
use lull_core::time::Nanos;

const STRUCTURED: [&str; 4] = ["office", "home-nas", "db-checkpoint", "cron-server"];

fn day(name: &str, seed: u64) -> Trace {
    synth::generate(synth::shape(name).unwrap(), Nanos::from_secs(86_400), seed)
}

/// (start, length) of every idle period, seconds.
fn idle(t: &Trace) -> Vec<(f64, f64)> {
    Timeline::from_requests(&t.requests)
        .idle_periods()
        .map(|p| (p.start.as_secs_f64(), p.len().as_secs_f64()))
        .collect()
}

fn arrivals_between(t: &Trace, from_h: f64, to_h: f64) -> usize {
    let (a, b) = (
        Nanos::from_secs_f64(from_h * 3600.0),
        Nanos::from_secs_f64(to_h * 3600.0),
    );
    t.requests
        .iter()
        .filter(|r| r.arrival >= a && r.arrival < b)
        .count()
}

#[test]
fn the_structured_workloads_are_listed_as_such() {
    for w in synth::WORKLOADS {
        assert_eq!(
            w.is_structured(),
            STRUCTURED.contains(&w.name),
            "{}",
            w.name
        );
    }
}

#[test]
fn same_seed_same_trace_and_a_longer_trace_starts_with_the_shorter() {
    for name in STRUCTURED {
        let w = synth::shape(name).unwrap();
        let a = synth::generate(w, Nanos::from_secs(6 * 3600), 5);
        assert_eq!(
            a,
            synth::generate(w, Nanos::from_secs(6 * 3600), 5),
            "{name}"
        );
        assert_ne!(
            a,
            synth::generate(w, Nanos::from_secs(6 * 3600), 6),
            "{name}"
        );
        // A day and two days: the same first day (up to what crosses the end).
        let one = day(name, 2);
        let two = synth::generate(w, Nanos::from_secs(2 * 86_400), 2);
        let cut = Nanos::from_secs(86_400 - 3600);
        let head = |t: &Trace| -> Vec<_> {
            t.requests
                .iter()
                .filter(|r| r.arrival < cut)
                .copied()
                .collect()
        };
        let (a, b) = (head(&one), head(&two));
        assert_eq!(a.len(), b.len(), "{name}");
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        assert_eq!(first, None, "{name}: first difference");
        assert!(two.requests.len() > one.requests.len() * 3 / 2, "{name}");
    }
}

#[test]
fn traces_are_well_formed_and_start_at_midnight() {
    for name in STRUCTURED {
        let t = day(name, 1);
        assert_eq!(
            t.clock,
            Some(Nanos::from_secs(structured::EPOCH_UNIX_S)),
            "{name}"
        );
        assert_eq!(t.devices, [format!("synth:{name}")]);
        assert!(
            t.requests.windows(2).all(|p| p[0].arrival <= p[1].arrival),
            "{name}: sorted"
        );
        assert!(
            t.requests
                .windows(2)
                .all(|p| p[0].completion <= p[1].completion),
            "{name}: FCFS completions"
        );
        assert!(t.requests.iter().all(|r| r.completion > r.arrival));
        assert!(
            t.requests
                .iter()
                .all(|r| r.arrival < Nanos::from_secs(86_400))
        );
    }
}

#[test]
fn idle_periods_on_both_the_3_s_and_the_72_s_scale() {
    for name in STRUCTURED {
        for seed in [1, 2, 3] {
            let l: Vec<f64> = idle(&day(name, seed)).into_iter().map(|p| p.1).collect();
            let total: f64 = l.iter().sum();
            let over = |b: f64| l.iter().filter(|&&x| x > b).count();
            let share = |b: f64| l.iter().filter(|&&x| x > b).sum::<f64>() / total;
            assert!(
                over(3.0) >= 300,
                "{name}/{seed}: {} periods > 3 s",
                over(3.0)
            );
            assert!(
                over(72.0) >= 30,
                "{name}/{seed}: {} periods > 72 s",
                over(72.0)
            );
            // Long periods hold much of the idle time, but not all of it:
            // both a fast and a slow drive have something to decide.
            assert!(
                (0.25..0.97).contains(&share(72.0)),
                "{name}/{seed}: {:.3} of idle time in periods > 72 s",
                share(72.0)
            );
            assert!(
                share(3.0) > share(72.0) + 0.02,
                "{name}/{seed}: 3 s {:.3}, 72 s {:.3}",
                share(3.0),
                share(72.0)
            );
            let acf = autocorrelation(&l, 3);
            assert!(acf[0] > 0.2, "{name}/{seed}: lag-1 autocorrelation {acf:?}");
        }
    }
}

#[test]
fn requests_per_day_are_within_the_expected_bounds() {
    for (name, lo, hi) in [
        ("office", 15_000, 80_000),
        ("home-nas", 5_000, 60_000),
        ("db-checkpoint", 40_000, 600_000),
        ("cron-server", 10_000, 120_000),
    ] {
        for seed in [1, 2, 3] {
            let n = day(name, seed).requests.len();
            assert!((lo..hi).contains(&n), "{name}/{seed}: {n} requests");
        }
    }
}

#[test]
fn office_works_by_day_and_syncs_every_5_minutes_at_night() {
    let p = structured::OFFICE;
    for seed in [1, 2, 3] {
        let t = day("office", seed);
        let work = arrivals_between(&t, 9.5, 11.5) + arrivals_between(&t, 14.0, 16.0);
        let night = arrivals_between(&t, 0.0, 6.0);
        // 4 working hours against 6 night hours of daemons only.
        assert!(work > 20 * night, "seed {seed}: work {work}, night {night}");
        // At night the idle periods are the background sync's period
        // (broken once an hour by the hourly job).
        let mut nights: Vec<f64> = idle(&t)
            .into_iter()
            .filter(|&(s, l)| s < 6.0 * 3600.0 && s > 60.0 && l > 10.0)
            .map(|p| p.1)
            .collect();
        nights.sort_by(f64::total_cmp);
        let median = nights[nights.len() / 2];
        assert!(
            (p.daemon_s - 5.0..=p.daemon_s + 0.1).contains(&median),
            "seed {seed}: median night idle period {median} s"
        );
        assert!(
            nights.len() >= 60,
            "seed {seed}: {} night periods",
            nights.len()
        );
    }
}

#[test]
fn office_writes_back_30_seconds_after_the_last_write() {
    // After a user's last write before a long gap, the page cache writes
    // once more within 5 s (journal) and 30–35 s later (write-back):
    // idle periods just under 30 s are frequent, those of 36–60 s rare.
    let t = day("office", 4);
    let l: Vec<f64> = idle(&t).into_iter().map(|p| p.1).collect();
    let between = |a: f64, b: f64| l.iter().filter(|&&x| x >= a && x < b).count();
    let flush_gap = between(24.0, 30.0);
    let after = between(36.0, 42.0);
    assert!(
        flush_gap > 2 * after,
        "24-30 s: {flush_gap}, 36-42 s: {after}"
    );
}

#[test]
fn home_nas_streams_in_the_evening_and_backs_up_at_night() {
    let p = structured::HOME_NAS;
    let w = synth::shape("home-nas").unwrap();
    let t = synth::generate(w, Nanos::from_secs(3 * 86_400), 1);
    let (mut evening, mut afternoon) = (0, 0);
    for d in 0..3 {
        let h = 24.0 * f64::from(d);
        evening += arrivals_between(&t, h + 20.0, h + 22.0);
        afternoon += arrivals_between(&t, h + 12.0, h + 16.0);
    }
    assert!(
        evening > 5 * afternoon,
        "evening {evening}, afternoon {afternoon}"
    );
    // The backup: most bytes written land between 02:00 and 05:00.
    let written = |from_h: f64, to_h: f64| -> u64 {
        t.requests
            .iter()
            .filter(|r| r.op == Op::Write)
            .filter(|r| {
                let h = (r.arrival.as_secs_f64() / 3600.0) % 24.0;
                h >= from_h && h < to_h
            })
            .map(|r| u64::from(r.bytes))
            .sum()
    };
    assert!(written(2.0, 5.0) > 4 * written(5.0, 26.0), "backup");
    // Between midnight of day 0 and the backup, only the NAS's own pokes:
    // no idle period is longer than the SMART poll.
    let early: Vec<(f64, f64)> = idle(&t)
        .into_iter()
        .filter(|&(s, l)| s > 60.0 && s + l < 1.9 * 3600.0)
        .collect();
    assert!(!early.is_empty());
    assert!(
        early.iter().all(|&(_, l)| l <= p.smart_s + 0.1),
        "{early:?}"
    );
    assert!(arrivals_between(&t, 0.0, 1.9) < 20);
}

#[test]
fn db_checkpoints_every_5_minutes_and_its_regimes_persist() {
    let p = structured::DB_CHECKPOINT;
    for seed in [1, 2] {
        let t = day("db-checkpoint", seed);
        // A write right after most checkpoint ticks (skipped when nothing
        // was dirtied in the last 5 minutes, rare even when quiet).
        let ticks = (86_400.0 / p.checkpoint_s) as u64 - 1;
        let hit = (1..=ticks)
            .filter(|&k| {
                let at = Nanos::from_secs_f64(k as f64 * p.checkpoint_s);
                let i = t.requests.partition_point(|r| r.arrival < at);
                t.requests
                    .get(i)
                    .is_some_and(|r| r.op == Op::Write && r.arrival < at + Nanos::from_millis(100))
            })
            .count() as u64;
        assert!(hit * 100 >= ticks * 85, "seed {seed}: {hit} of {ticks}");
        // Requests per minute: busy and quiet hours, so the count ten
        // minutes later is much like this one.
        let mut per_min = vec![0.0f64; 1440];
        for r in &t.requests {
            per_min[(r.arrival.as_secs_f64() / 60.0) as usize] += 1.0;
        }
        let acf = autocorrelation(&per_min, 10);
        assert!(acf[9] > 0.5, "seed {seed}: {acf:?}");
        let busy = per_min.iter().filter(|&&n| n > 60.0).count();
        let quiet = per_min.iter().filter(|&&n| n < 10.0).count();
        assert!(
            busy > 100 && quiet > 100,
            "seed {seed}: {busy} busy, {quiet} quiet minutes"
        );
    }
}
