//! Trace insight for `lull trace info`: what is in a trace, and the
//! idle-time picture of §1.1 of the paper.
//!
//! The paper's two observations are measured directly:
//!
//! * **Most idle time is in a few long periods** (its Figure 2): for each
//!   threshold of 0.1, 1, 10 and 60 s, the number of idle periods longer
//!   than it and the share of all idle time they hold.
//! * **Period lengths are correlated** (its Figure 3): the sample
//!   autocorrelation of the sequence of idle-period lengths at lags 1 to
//!   10, `r_k = Σ (x_t − m)(x_{t+k} − m) / Σ (x_t − m)²`. A lag with
//!   fewer than two pairs, or lengths without variance, gives 0.
//!
//! Idle periods are those of [`Timeline::idle_periods`] (SPEC §2) on the
//! busiest device, the one `lull replay` picks by default; idle periods
//! of several devices merged would mean nothing. The counts and bytes are
//! over the whole trace.

use serde::ser::{Serialize, SerializeMap, Serializer};

#[cfg(doc)]
use lull_core::event::Timeline;
use lull_core::request::{DeviceId, Op, Request};
use lull_core::time::Nanos;

use crate::trace::Trace;

/// The idle-period thresholds, in seconds.
pub const THRESHOLDS_S: [f64; 4] = [0.1, 1.0, 10.0, 60.0];

/// The autocorrelation lags.
pub const LAGS: usize = 10;

/// Idle periods longer than a threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LongIdle {
    /// The threshold, seconds.
    pub threshold_s: f64,
    /// How many periods are longer.
    pub periods: usize,
    /// Their share of all idle time (0 to 1).
    pub share: f64,
}

/// What `lull trace info` reports about one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceInfo {
    /// The format it was read from.
    pub format: &'static str,
    /// Number of devices.
    pub devices: usize,
    /// Number of requests.
    pub requests: usize,
    /// Reads.
    pub reads: usize,
    /// Writes.
    pub writes: usize,
    /// Flushes.
    pub flushes: usize,
    /// Discards.
    pub discards: usize,
    /// Bytes moved, all requests.
    pub bytes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes discarded (trimmed).
    pub discard_bytes: u64,
    /// Records the reader skipped.
    pub skipped: u64,
    /// First arrival to last completion, seconds.
    pub span_s: f64,
    /// When the first request arrived, Unix seconds, for formats with
    /// absolute timestamps (see [`Trace::clock`]).
    pub start_unix_s: Option<f64>,
    /// The device the idle picture is of (the busiest).
    pub idle_device: String,
    /// Its requests.
    pub idle_device_requests: usize,
    /// Its span, seconds.
    pub idle_device_span_s: f64,
    /// Its number of idle periods.
    pub idle_periods: usize,
    /// Its total idle time, seconds.
    pub idle_s: f64,
    /// Idle time over its span (0 to 1).
    pub idle_share: f64,
    /// Longest idle period, seconds.
    pub longest_idle_s: f64,
    /// Mean idle period, seconds.
    pub mean_idle_s: f64,
    /// Periods longer than each of [`THRESHOLDS_S`].
    pub long: Vec<LongIdle>,
    /// Autocorrelation of idle-period lengths at lags 1 to [`LAGS`].
    pub autocorrelation: Vec<f64>,
}

/// The sample autocorrelation of `x` at lags `1..=lags` (see the module
/// docs).
pub fn autocorrelation(x: &[f64], lags: usize) -> Vec<f64> {
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n.max(1) as f64;
    let var: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    (1..=lags)
        .map(|k| {
            if n < k + 2 || var <= 0.0 || !var.is_finite() {
                return 0.0;
            }
            let cov: f64 = (0..n - k).map(|t| (x[t] - mean) * (x[t + k] - mean)).sum();
            cov / var
        })
        .collect()
}

/// The idle periods of one device's requests, found in one pass over
/// them in arrival order: every gap of non-zero length between the first
/// arrival and the last completion in which none of them is outstanding.
///
/// These are exactly the periods of [`Timeline::idle_periods`] on a
/// timeline of the same requests (SPEC §2: each lasts at least 1 ns, see
/// [`Request::effective_completion`]), in the same order, without building
/// the timeline: that meant two index sorts and two arrays of events, most
/// of the work of `lull trace info` after reading, and the requests of a
/// [`Trace`] are sorted by arrival already. A request that arrives after
/// every earlier one has completed opens a period that began at the latest
/// of those completions.
#[derive(Clone, Debug, Default, PartialEq)]
struct IdleSweep {
    /// The requests swept.
    requests: usize,
    /// First arrival to last completion.
    span: Nanos,
    /// The idle periods' lengths, seconds, in order.
    lengths: Vec<f64>,
}

impl IdleSweep {
    /// The idle periods of `requests` (those of device `only`, or all of
    /// them when `None`). Requests out of arrival order (a [`Trace`] put
    /// together by hand) are copied and sorted first.
    fn of(requests: &[Request], only: Option<DeviceId>) -> IdleSweep {
        let mine = |r: &&Request| only.is_none_or(|d| r.device == d);
        if let Some(sweep) = Self::in_order(requests.iter().filter(mine)) {
            return sweep;
        }
        let mut sorted: Vec<Request> = requests.iter().filter(mine).copied().collect();
        sorted.sort_by_key(|r| r.arrival);
        Self::in_order(sorted.iter()).expect("sorted by arrival")
    }

    /// The sweep, or `None` at the first request that arrives before the
    /// one before it.
    fn in_order<'a>(mut requests: impl Iterator<Item = &'a Request>) -> Option<IdleSweep> {
        let Some(r) = requests.next() else {
            return Some(IdleSweep::default());
        };
        let (start, mut arrival, mut end) = (r.arrival, r.arrival, r.effective_completion());
        let mut sweep = IdleSweep {
            requests: 1,
            ..IdleSweep::default()
        };
        for r in requests {
            if r.arrival < arrival {
                return None;
            }
            arrival = r.arrival;
            if arrival > end {
                sweep.lengths.push((arrival - end).as_secs_f64());
            }
            end = end.max(r.effective_completion());
            sweep.requests += 1;
        }
        sweep.span = end - start;
        Some(sweep)
    }
}

impl TraceInfo {
    /// Measures `trace`, in two passes over its requests and no copy of
    /// them: one for the counts, the bytes, the span and the requests per
    /// device, one over the busiest device's requests for its idle periods
    /// (the periods of [`Timeline::idle_periods`], found without building
    /// the timeline).
    pub fn of(trace: &Trace) -> TraceInfo {
        let mut info = TraceInfo::blank(trace);
        // Requests per device id, indexed by it (a request may name an id
        // beyond the device table; `Trace::busiest_device` counts it too).
        let mut per_device = vec![0usize; trace.devices.len()];
        let (mut first, mut last) = (Nanos::MAX, Nanos::ZERO);
        for r in &trace.requests {
            info.count(r);
            let d = usize::from(r.device.0);
            if d >= per_device.len() {
                per_device.resize(d + 1, 0);
            }
            per_device[d] += 1;
            first = first.min(r.arrival);
            last = last.max(r.effective_completion());
        }
        if !trace.requests.is_empty() {
            info.span_s = (last - first).as_secs_f64();
        }
        // The busiest device, the first such on a tie (as
        // `Trace::busiest_device`).
        let (mut busiest, mut most) = (None, 0);
        for (d, &n) in per_device.iter().enumerate() {
            if n > most {
                (busiest, most) = (Some(DeviceId(d as u16)), n);
            }
        }
        let idle = match busiest {
            Some(id) => {
                info.idle_device = trace.device_name(id).to_string();
                // A trace of one device is all of it, whatever ids its
                // requests name.
                let only = (trace.devices.len() > 1).then_some(id);
                IdleSweep::of(&trace.requests, only)
            }
            None => IdleSweep::default(),
        };
        info.set_idle(idle.requests, idle.span, &idle.lengths);
        info
    }

    /// The report of `trace` before anything is counted: its format and
    /// its numbers of devices, requests and skipped records.
    fn blank(trace: &Trace) -> TraceInfo {
        TraceInfo {
            format: trace.format,
            devices: trace.devices.len(),
            requests: trace.requests.len(),
            reads: 0,
            writes: 0,
            flushes: 0,
            discards: 0,
            bytes: 0,
            read_bytes: 0,
            write_bytes: 0,
            discard_bytes: 0,
            skipped: trace.skipped,
            span_s: 0.0,
            start_unix_s: trace.clock.map(|c| c.as_secs_f64()),
            idle_device: String::new(),
            idle_device_requests: 0,
            idle_device_span_s: 0.0,
            idle_periods: 0,
            idle_s: 0.0,
            idle_share: 0.0,
            longest_idle_s: 0.0,
            mean_idle_s: 0.0,
            long: Vec::new(),
            autocorrelation: vec![0.0; LAGS],
        }
    }

    /// Counts `r` by kind, and its bytes.
    fn count(&mut self, r: &Request) {
        let b = u64::from(r.bytes);
        self.bytes += b;
        match r.op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes += b;
            }
            Op::Write => {
                self.writes += 1;
                self.write_bytes += b;
            }
            Op::Flush => self.flushes += 1,
            Op::Discard => {
                self.discards += 1;
                self.discard_bytes += b;
            }
        }
    }

    /// The idle picture of the idle device: its number of requests, its
    /// span, and the lengths of its idle periods (seconds, in order).
    fn set_idle(&mut self, requests: usize, span: Nanos, lengths: &[f64]) {
        self.idle_device_requests = requests;
        self.idle_device_span_s = span.as_secs_f64();
        // From +0.0: `Sum` of no `f64` is -0.0, which a trace with no
        // idle period printed as "-0.000 s".
        let total = lengths.iter().fold(0.0, |a, l| a + l);
        self.idle_periods = lengths.len();
        self.idle_s = total;
        if self.idle_device_span_s > 0.0 {
            self.idle_share = total / self.idle_device_span_s;
        }
        self.longest_idle_s = lengths.iter().copied().fold(0.0, f64::max);
        if !lengths.is_empty() {
            self.mean_idle_s = total / lengths.len() as f64;
        }
        self.long = THRESHOLDS_S
            .iter()
            .map(|&threshold_s| {
                let (periods, time) = lengths
                    .iter()
                    .filter(|&&l| l > threshold_s)
                    .fold((0, 0.0), |(n, s), l| (n + 1, s + l));
                LongIdle {
                    threshold_s,
                    periods,
                    share: if total > 0.0 { time / total } else { 0.0 },
                }
            })
            .collect();
        self.autocorrelation = autocorrelation(lengths, LAGS);
    }

    /// The numbers, flat, in a stable order: the keys of the JSON object
    /// (besides `format`).
    pub fn pairs(&self) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = vec![
            ("devices".into(), self.devices as f64),
            ("requests".into(), self.requests as f64),
            ("reads".into(), self.reads as f64),
            ("writes".into(), self.writes as f64),
            ("flushes".into(), self.flushes as f64),
            ("discards".into(), self.discards as f64),
            ("bytes".into(), self.bytes as f64),
            ("read_bytes".into(), self.read_bytes as f64),
            ("write_bytes".into(), self.write_bytes as f64),
            ("discard_bytes".into(), self.discard_bytes as f64),
            ("skipped".into(), self.skipped as f64),
            ("span_s".into(), self.span_s),
        ];
        v.extend(self.start_unix_s.map(|s| ("start_unix_s".into(), s)));
        v.extend([
            (
                "idle_device_requests".into(),
                self.idle_device_requests as f64,
            ),
            ("idle_device_span_s".into(), self.idle_device_span_s),
            ("idle_periods".into(), self.idle_periods as f64),
            ("idle_s".into(), self.idle_s),
            ("idle_share".into(), self.idle_share),
            ("longest_idle_s".into(), self.longest_idle_s),
            ("mean_idle_s".into(), self.mean_idle_s),
        ]);
        for l in &self.long {
            let t = threshold_key(l.threshold_s);
            v.push((format!("idle_periods_over_{t}"), l.periods as f64));
            v.push((format!("idle_share_over_{t}"), l.share));
        }
        for (i, r) in self.autocorrelation.iter().enumerate() {
            v.push((format!("acf_lag{}", i + 1), *r));
        }
        v
    }
}

fn threshold_key(s: f64) -> String {
    if s < 1.0 {
        format!("{}ms", (s * 1000.0).round() as u64)
    } else {
        format!("{}s", s.round() as u64)
    }
}

impl Serialize for TraceInfo {
    /// A flat object: `format` (a string), then every number of
    /// [`TraceInfo::pairs`].
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pairs = self.pairs();
        let mut map = serializer.serialize_map(Some(pairs.len() + 1))?;
        map.serialize_entry("format", self.format)?;
        for (k, v) in &pairs {
            // Counts print as integers.
            if v.fract() == 0.0 && v.abs() < 9.0e15 {
                map.serialize_entry(k, &(*v as i64))?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::event::Timeline;
    use proptest::prelude::*;

    /// `TraceInfo::of` as first written, the reference for the one-pass
    /// version: the span and the busiest device found by `Trace`'s own
    /// methods, that device's requests copied out, a `Timeline` built of
    /// them, its idle periods collected (the counting and the statistics
    /// of the lengths are shared).
    fn reference(trace: &Trace) -> TraceInfo {
        let mut info = TraceInfo::blank(trace);
        info.span_s = trace.span().as_secs_f64();
        for r in &trace.requests {
            info.count(r);
        }
        let requests = match trace.busiest_device() {
            Some(id) if trace.devices.len() > 1 => {
                info.idle_device = trace.device_name(id).to_string();
                trace.device_requests(id)
            }
            Some(id) => {
                info.idle_device = trace.device_name(id).to_string();
                trace.requests.clone()
            }
            None => Vec::new(),
        };
        let timeline = Timeline::from_requests(&requests);
        let lengths: Vec<f64> = timeline
            .idle_periods()
            .map(|p| p.len().as_secs_f64())
            .collect();
        info.set_idle(requests.len(), timeline.span(), &lengths);
        info
    }

    proptest! {
        #![proptest_config(lull_testkit::cases(256))]
        /// The one-pass analysis gives exactly what the timeline gave, to
        /// the last bit of every float: requests with ties, zero and
        /// negative lengths, several devices (and ids beyond the device
        /// table), sorted as a reader leaves them or not.
        #[test]
        fn matches_the_timeline(
            requests in proptest::collection::vec(
                (0u64..60, 0u64..40, 0u16..4, 0u8..4, 0u32..9000),
                0..120,
            ),
            devices in 0usize..4,
            sorted in any::<bool>(),
            scale in prop_oneof![Just(1u64), Just(1_000_000), Just(250_000_000)],
        ) {
            let mut t = Trace::new("test");
            for d in 0..devices {
                t.device_id(&format!("d{d}"));
            }
            let ops = [Op::Read, Op::Write, Op::Flush, Op::Discard];
            t.requests = requests
                .iter()
                .map(|&(a, len, dev, op, bytes)| {
                    // Some completions before their arrival (read as 1 ns).
                    let c = (a + len).saturating_sub(5);
                    Request::new(Nanos(a * scale), Nanos(c * scale), ops[op as usize], 0, bytes)
                        .on_device(DeviceId(dev))
                })
                .collect();
            if sorted {
                t.sort();
            }
            prop_assert_eq!(TraceInfo::of(&t), reference(&t));
        }
    }

    #[test]
    fn autocorrelation_of_known_series() {
        let alt = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        let r = autocorrelation(&alt, 2);
        assert!(r[0] < -0.8 && r[1] > 0.6, "{r:?}");
        assert_eq!(autocorrelation(&[1.0, 1.0, 1.0], 1), [0.0]);
        assert_eq!(autocorrelation(&[1.0], 3), [0.0, 0.0, 0.0]);
    }

    #[test]
    fn idle_picture() {
        let mut t = Trace::new("test");
        let s = Nanos::from_secs;
        // Busy [0,1), idle 1..3 (2 s), busy [3,4), idle 4..104 (100 s), busy [104,105).
        for (a, c) in [(0, 1), (3, 4), (104, 105)] {
            t.requests
                .push(Request::new(s(a), s(c), Op::Write, 0, 4096));
        }
        t.device_id("d");
        let i = TraceInfo::of(&t);
        assert_eq!(i.requests, 3);
        assert_eq!(i.writes, 3);
        assert_eq!(i.idle_periods, 2);
        assert_eq!(i.idle_s, 102.0);
        assert_eq!(i.long[1].periods, 2);
        assert_eq!(i.long[3].periods, 1);
        assert!((i.long[3].share - 100.0 / 102.0).abs() < 1e-12);
        let json = serde_json::to_string(&i).unwrap();
        assert!(
            json.starts_with("{\"format\":\"test\",\"devices\":1,"),
            "{json}"
        );
        assert!(json.contains("\"idle_share_over_60s\""));
        assert!(json.contains("\"idle_periods_over_100ms\""));
        assert!(json.contains("\"acf_lag10\""));
    }
}
