//! Properties of the MS Manners regulator on random sample sequences.

use lull_core::time::Nanos;
use lull_tasks::manners::{Judgement, Manners, MannersConfig};
use proptest::prelude::*;

proptest! {
    #![proptest_config(lull_testkit::cases(256))]

    /// No suspension ever exceeds the cap, the back-off never grows past
    /// it, and the task may run again once a suspension is over.
    #[test]
    fn suspension_never_exceeds_the_cap(
        samples in proptest::collection::vec((1u64..200, 1u64..100_000, 0u64..2_000), 1..400),
        base_ms in 1u64..10_000,
        cap_ms in 1u64..60_000,
        init in 1u64..20,
        alpha in 0.01f64..0.5,
        beta in 0.01f64..0.5,
    ) {
        let cfg = MannersConfig {
            base: Nanos::from_millis(base_ms),
            cap: Nanos::from_millis(cap_ms),
            init_samples: init,
            steady_samples: 50.0,
            alpha,
            beta,
            ..MannersConfig::default()
        };
        let cap = cfg.cap;
        let mut m = Manners::new(cfg);
        let mut now = Nanos::ZERO;
        // The suspensions as they held the task: each new one replaces the
        // rest of the one in force.
        let mut held: Vec<(Nanos, Nanos)> = Vec::new();
        for (elapsed_ms, work, gap_ms) in samples {
            now += Nanos::from_millis(elapsed_ms + gap_ms);
            let before = m.suspensions();
            let j = m.record(now, work as f64, Nanos::from_millis(elapsed_ms));
            prop_assert!(m.next_suspension() <= cap);
            prop_assert!(m.longest_suspension() <= cap);
            if j == Judgement::Degraded {
                prop_assert_eq!(m.suspensions(), before + 1);
                let until = m.resume_at().unwrap();
                prop_assert!(until > now && until - now <= cap);
                prop_assert!(!m.may_run(now));
                prop_assert!(m.may_run(until + Nanos::from_secs(3600)));
                if let Some(last) = held.last_mut() {
                    last.1 = last.1.min(now);
                }
                held.push((now, m.resume_at().unwrap()));
            }
        }
        prop_assert!(m.suspended() <= Nanos(cap.as_nanos() * m.suspensions()));
        // The trace ends at the last sample: the time suspended is the
        // union of what held the task, to there, so never more than the
        // time since the first suspension (it was counted in full per
        // judgement: a manners_suspended_s of 60,205 s on a 4-hour trace).
        m.finish(now);
        let union: u64 = held.iter().map(|&(a, b)| b.min(now).saturating_sub(a).as_nanos()).sum();
        prop_assert_eq!(m.suspended(), Nanos(union));
        if let Some(&(first, _)) = held.first() {
            prop_assert!(m.suspended() <= now - first);
        }
    }
}
