//! The in-memory trace: requests of one or more devices, sorted by arrival.

use std::collections::BTreeMap;

use lull_core::request::{DeviceId, Request};
use lull_core::time::Nanos;

/// A trace read from a file or made by a synthetic workload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The requests, sorted by arrival (ties in file order).
    pub requests: Vec<Request>,
    /// Device names, indexed by [`DeviceId`] (`8,16`, `msr:hm_0`).
    pub devices: Vec<String>,
    /// The format it was read from (`normalized-csv`, `blktrace`, …).
    pub format: &'static str,
    /// Records skipped by a lenient read, and records a reader always
    /// drops (such as blktrace events with a wildly inconsistent clock).
    pub skipped: u64,
    /// What a reader did that a user should know: requests that never
    /// completed, rows sorted, records dropped for their time. One line
    /// each, for people.
    pub notes: Vec<String>,
    /// The wall clock at time 0, as Unix nanoseconds, for formats whose
    /// timestamps are absolute (MSR's FILETIME, Tencent's Unix seconds):
    /// time-of-day skeptics then see the trace's real hours. Readers set
    /// it for their raw time 0 and [`Trace::rebase`] moves it along.
    pub clock: Option<Nanos>,
}

impl Trace {
    /// An empty trace of `format`.
    pub fn new(format: &'static str) -> Self {
        Trace {
            format,
            ..Trace::default()
        }
    }

    /// The id of device `name`, adding it if new.
    ///
    /// # Panics
    /// Beyond 65 536 devices; readers check [`Trace::device_limit_reached`]
    /// first and report it as an input error.
    pub fn device_id(&mut self, name: &str) -> DeviceId {
        if let Some(i) = self.devices.iter().position(|d| d == name) {
            return DeviceId(i as u16);
        }
        assert!(!self.device_limit_reached(), "more than 65536 devices");
        self.devices.push(name.to_string());
        DeviceId((self.devices.len() - 1) as u16)
    }

    /// Whether another device would not fit in a [`DeviceId`].
    pub fn device_limit_reached(&self) -> bool {
        self.devices.len() > u16::MAX as usize
    }

    /// The name of a device.
    pub fn device_name(&self, id: DeviceId) -> &str {
        self.devices.get(id.0 as usize).map_or("?", String::as_str)
    }

    /// Sorts the requests by arrival, keeping file order among ties.
    pub fn sort(&mut self) {
        if self.requests.is_sorted_by_key(|r| r.arrival) {
            return;
        }
        // A stable radix sort of (arrival, index) keys, then the requests
        // gathered in that order: several times cheaper than a comparison
        // sort moving the requests themselves (that sort was a fifth of the
        // blktrace reader's time on a trace with many requests that never
        // completed). Gathering into a new vector rather than permuting in
        // place lets the out-of-cache reads overlap.
        let keys: Vec<(u64, usize)> = self
            .requests
            .iter()
            .enumerate()
            .map(|(i, r)| (r.arrival.0, i))
            .collect();
        let keys = radix_sort(keys, |&(arrival, _)| arrival);
        self.requests = keys.into_iter().map(|(_, i)| self.requests[i]).collect();
    }

    /// Shifts time so the first arrival is at zero (and the wall clock
    /// of time 0 with it).
    pub fn rebase(&mut self) {
        if let Some(t0) = self.requests.iter().map(|r| r.arrival).min() {
            for r in &mut self.requests {
                r.arrival = r.arrival - t0;
                r.completion = r.completion - t0;
            }
            self.clock = self.clock.map(|c| c + t0);
        }
    }

    /// Drops the requests whose arrival is cut off from the bulk of the
    /// trace by a gap longer than `max_gap` (a CPU clock gone wrong, as in
    /// a blkparse file whose CPUs disagree by 40 years); returns how many.
    ///
    /// The arrivals, in order, are split at every gap longer than
    /// `max_gap`; the cluster with the most requests (the earliest on a
    /// tie) is kept. The requests end up sorted by arrival.
    pub fn drop_time_outliers(&mut self, max_gap: Nanos) -> usize {
        self.sort();
        if self.requests.len() < 2 {
            return 0;
        }
        let (mut best, mut best_len, mut start) = ((0, 0), 0, 0);
        for i in 1..=self.requests.len() {
            let split = i == self.requests.len()
                || self.requests[i].arrival - self.requests[i - 1].arrival > max_gap;
            if split {
                if i - start > best_len {
                    best = (start, i);
                    best_len = i - start;
                }
                start = i;
            }
        }
        let dropped = self.requests.len() - best_len;
        if dropped > 0 {
            self.requests.truncate(best.1);
            self.requests.drain(..best.0);
        }
        dropped
    }

    /// Request counts per device, by device id.
    pub fn counts(&self) -> BTreeMap<DeviceId, usize> {
        let mut m = BTreeMap::new();
        for r in &self.requests {
            *m.entry(r.device).or_insert(0) += 1;
        }
        m
    }

    /// The device with the most requests (the first such on a tie).
    pub fn busiest_device(&self) -> Option<DeviceId> {
        let counts = self.counts();
        let max = counts.values().copied().max()?;
        counts.into_iter().find(|&(_, c)| c == max).map(|(d, _)| d)
    }

    /// The requests of one device, in arrival order.
    pub fn device_requests(&self, id: DeviceId) -> Vec<Request> {
        self.requests
            .iter()
            .filter(|r| r.device == id)
            .copied()
            .collect()
    }

    /// The requests to replay: all of them for a trace of one device, else
    /// those of `disk`, or of the busiest device when no disk is named.
    /// Returns the requests and, when the busiest device was picked for the
    /// caller, its name (callers tell the user).
    pub fn select(&self, disk: Option<&str>) -> Result<(Vec<Request>, Option<&str>), String> {
        if self.devices.len() <= 1 && disk.is_none() {
            return Ok((self.requests.clone(), None));
        }
        match disk {
            Some(name) => {
                let i = self.devices.iter().position(|d| d == name).ok_or_else(|| {
                    format!(
                        "no device `{name}` in the trace (it has: {})",
                        self.devices.join(" ")
                    )
                })?;
                Ok((self.device_requests(DeviceId(i as u16)), None))
            }
            None => {
                let id = self.busiest_device().ok_or("the trace has no requests")?;
                Ok((self.device_requests(id), Some(self.device_name(id))))
            }
        }
    }

    /// First arrival to last completion.
    pub fn span(&self) -> Nanos {
        let first = self.requests.iter().map(|r| r.arrival).min();
        let last = self.requests.iter().map(|r| r.effective_completion()).max();
        match (first, last) {
            (Some(a), Some(b)) => b - a,
            _ => Nanos::ZERO,
        }
    }
}

/// Sorts `items` by `key`, stably: a least-significant-digit radix sort
/// on the key's bytes, skipping the bytes every key shares (the high bytes
/// of nanosecond times, the device of a one-device trace).
pub(crate) fn radix_sort<T: Copy>(mut items: Vec<T>, key: impl Fn(&T) -> u64) -> Vec<T> {
    let Some(&first) = items.first() else {
        return items;
    };
    let mut counts = [[0usize; 256]; 8];
    for item in &items {
        let k = key(item);
        for (d, c) in counts.iter_mut().enumerate() {
            c[((k >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let n = items.len();
    let varies = |c: &[usize; 256]| !c.contains(&n);
    if !counts.iter().any(varies) {
        return items;
    }
    let mut spare = vec![first; n];
    for (d, c) in counts.iter().enumerate() {
        if !varies(c) {
            continue;
        }
        let mut next = [0usize; 256];
        let mut at = 0;
        for (slot, &count) in next.iter_mut().zip(c) {
            *slot = at;
            at += count;
        }
        for item in &items {
            let b = ((key(item) >> (8 * d)) & 0xff) as usize;
            spare[next[b]] = *item;
            next[b] += 1;
        }
        std::mem::swap(&mut items, &mut spare);
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::Op;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(lull_testkit::cases(256))]
        /// The keyed sort gives exactly the stable sort by arrival.
        #[test]
        fn sort_is_the_stable_sort(arrivals in proptest::collection::vec(prop_oneof![0u64..20, any::<u64>(), 1u64 << 40..1u64 << 41], 0..300)) {
            let requests: Vec<Request> = arrivals
                .iter()
                .enumerate()
                .map(|(i, &a)| Request::new(Nanos(a), Nanos(a + 1), Op::Read, i as u64, 512))
                .collect();
            let mut expected = requests.clone();
            expected.sort_by_key(|r| r.arrival);
            let mut t = Trace::new("test");
            t.requests = requests;
            t.sort();
            prop_assert_eq!(t.requests, expected);
        }

        /// Sorting by the minor key, then stably by the major one, is the
        /// lexicographic order (how the pairing orders the requests left
        /// waiting at the end by device and sector).
        #[test]
        fn two_radix_sorts_are_lexicographic(keys in proptest::collection::vec((prop_oneof![Just(8u32 << 20 | 16), any::<u32>()], prop_oneof![0u64..300, any::<u64>()]), 0..300)) {
            let items: Vec<((u32, u64), u32)> =
                keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
            let mut expected = items.clone();
            expected.sort();
            let sorted = radix_sort(items, |&((_, sector), _)| sector);
            let sorted = radix_sort(sorted, |&((dev, _), _)| u64::from(dev));
            prop_assert_eq!(sorted, expected);
        }
    }
}
