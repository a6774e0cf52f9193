//! What the facade's integration tests share: a NAS's bursty daytime.

#![allow(dead_code)]

use lull::core::time::Nanos;

/// A xorshift generator from `seed`: `below(n)` is in `0..n`.
pub(crate) fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

/// A NAS's daytime from `base` (the day's midnight): from 08:00 to 23:00 a
/// burst every 2 to 8 minutes of 3 to 40 requests 50 to 500 ms apart, each
/// `(arrival, service)` pushed to `out`.
pub(crate) fn daytime_bursts(
    out: &mut Vec<(Nanos, Nanos)>,
    base: Nanos,
    below: &mut impl FnMut(u64) -> u64,
) {
    let mut t = base + Nanos::from_secs(8 * 3_600);
    while t < base + Nanos::from_secs(23 * 3_600) {
        for _ in 0..3 + below(38) {
            let service = Nanos::from_millis(5 + below(20));
            out.push((t, service));
            t += service + Nanos::from_millis(50 + below(450));
        }
        t += Nanos::from_secs(120 + below(360));
    }
}
