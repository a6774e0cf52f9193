//! Time: [`Nanos`], the one unit every component speaks, and duration strings.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub};

use serde::{Deserialize, Serialize};

/// A point in time or a length of time, in nanoseconds.
///
/// As a point it counts from the start of the trace (replay) or from the
/// daemon's monotonic base (live). No component ever reads a clock: the
/// engine hands `now` to it, so the same inputs always give the same
/// decisions.
///
/// Arithmetic saturates instead of wrapping: `Nanos::MAX` stands for
/// "never", and adding to it stays there. `t - u` with `u` later is zero;
/// `t * k` stops at `Nanos::MAX`; `t / k` rounds down.
///
/// # Panics
///
/// `t / 0` panics, as integer division does: there is no saturating
/// answer to a length divided into no parts. Divide by a count that may
/// be zero with `k.max(1)`, or check it first.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    /// Zero: the start of time, or no time at all.
    pub const ZERO: Nanos = Nanos(0);
    /// The largest representable time; used for "never".
    pub const MAX: Nanos = Nanos(u64::MAX);
    /// One nanosecond, the smallest step.
    pub const NANO: Nanos = Nanos(1);

    /// `n` nanoseconds.
    pub const fn from_nanos(n: u64) -> Nanos {
        Nanos(n)
    }
    /// `us` microseconds.
    pub const fn from_micros(us: u64) -> Nanos {
        Nanos(us.saturating_mul(1_000))
    }
    /// `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Nanos {
        Nanos(ms.saturating_mul(1_000_000))
    }
    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s.saturating_mul(1_000_000_000))
    }
    /// `m` minutes.
    pub const fn from_mins(m: u64) -> Nanos {
        Nanos::from_secs(m.saturating_mul(60))
    }
    /// `h` hours.
    pub const fn from_hours(h: u64) -> Nanos {
        Nanos::from_secs(h.saturating_mul(3_600))
    }
    /// Seconds as a float, rounded to the nearest nanosecond; negative and
    /// NaN give zero, too large gives [`Nanos::MAX`].
    pub fn from_secs_f64(s: f64) -> Nanos {
        if s.is_nan() || s <= 0.0 {
            Nanos::ZERO
        } else if s >= u64::MAX as f64 / 1e9 {
            Nanos::MAX
        } else {
            Nanos((s * 1e9).round() as u64)
        }
    }
    /// The raw nanosecond count.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// This time in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self + rhs`, saturating at [`Nanos::MAX`].
    pub const fn saturating_add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
    /// `self - rhs`, saturating at zero.
    pub const fn saturating_sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
    /// `self - rhs`, or `None` when `rhs` is later.
    pub const fn checked_sub(self, rhs: Nanos) -> Option<Nanos> {
        match self.0.checked_sub(rhs.0) {
            Some(v) => Some(Nanos(v)),
            None => None,
        }
    }
    /// This length scaled by a non-negative factor (rounded; saturating).
    pub fn mul_f64(self, k: f64) -> Nanos {
        Nanos::from_secs_f64(self.as_secs_f64() * k)
    }
}

/// A wall-clock instant: nanoseconds since the Unix epoch, the one type
/// for the wall clock in lull's public API (engine time is [`Nanos`] from
/// the engine's own zero).
///
/// Give it once, as the wall clock at the engine's time zero
/// ([`Engine::with_clock`](crate::engine::Engine::with_clock)); the
/// instant of engine time `t` is then `zero + t`. Build it from the
/// system clock (`UnixTime::from(SystemTime::now())`) or with a unit
/// ([`UnixTime::from_secs`]). Serialized as its nanosecond count.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct UnixTime(Nanos);

impl UnixTime {
    /// The Unix epoch, 1970-01-01 00:00:00 UTC.
    pub const EPOCH: UnixTime = UnixTime(Nanos::ZERO);

    /// `d` after the epoch.
    pub const fn since_epoch(d: Nanos) -> UnixTime {
        UnixTime(d)
    }
    /// `s` seconds after the epoch.
    pub const fn from_secs(s: u64) -> UnixTime {
        UnixTime(Nanos::from_secs(s))
    }
    /// `n` nanoseconds after the epoch.
    pub const fn from_nanos(n: u64) -> UnixTime {
        UnixTime(Nanos(n))
    }
    /// The time since the epoch.
    pub const fn elapsed_since_epoch(self) -> Nanos {
        self.0
    }
    /// Whole seconds since the epoch (rounded down).
    pub const fn as_secs(self) -> u64 {
        self.0.0 / 1_000_000_000
    }
}

impl Add<Nanos> for UnixTime {
    type Output = UnixTime;
    /// `zero + t`: the instant of engine time `t` (saturating).
    fn add(self, t: Nanos) -> UnixTime {
        UnixTime(self.0 + t)
    }
}

impl From<std::time::SystemTime> for UnixTime {
    /// The system clock's instant; one before the epoch is the epoch.
    fn from(t: std::time::SystemTime) -> UnixTime {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(UnixTime::EPOCH, |d| UnixTime(d.into()))
    }
}

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        self.saturating_add(rhs)
    }
}

impl AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        *self = self.saturating_add(rhs);
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    /// Saturating: a later minus an earlier time is the usual difference;
    /// the other way round is zero.
    fn sub(self, rhs: Nanos) -> Nanos {
        self.saturating_sub(rhs)
    }
}

impl Mul<u64> for Nanos {
    type Output = Nanos;
    /// `b * 4`: saturating at [`Nanos::MAX`].
    fn mul(self, k: u64) -> Nanos {
        Nanos(self.0.saturating_mul(k))
    }
}

impl Div<u64> for Nanos {
    type Output = Nanos;
    /// `b / 2`: rounded down.
    ///
    /// # Panics
    /// If `k` is 0, as integer division does.
    fn div(self, k: u64) -> Nanos {
        Nanos(self.0 / k)
    }
}

impl From<std::time::Duration> for Nanos {
    fn from(d: std::time::Duration) -> Nanos {
        Nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

impl From<Nanos> for std::time::Duration {
    fn from(n: Nanos) -> std::time::Duration {
        std::time::Duration::from_nanos(n.0)
    }
}

const UNITS: [(&str, u64); 6] = [
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// Formats with the largest unit that represents the value exactly
/// (`1s`, `100ms`, `1500ms`, `90s`), so that [`parse_duration`] gives the
/// same value back.
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("0s");
        }
        // Minutes and hours only when they are whole, and only for lengths
        // a person would write that way.
        for (unit, scale) in UNITS {
            if self.0 % scale == 0 && (scale < 60_000_000_000 || self.0 / scale < 1000) {
                return write!(f, "{}{}", self.0 / scale, unit);
            }
        }
        write!(f, "{}ns", self.0)
    }
}

impl Nanos {
    /// The duration as a person reads it, rounded ([`Approx`]): `17.7ms`,
    /// `72.4s`, `2m25s`, `1h5m`. [`fmt::Display`] of `Nanos` itself is
    /// exact, for text that is parsed again.
    pub fn approx(self) -> Approx {
        Approx(self)
    }
}

/// A duration shown to three significant digits below a minute, to the
/// second below an hour and to the minute above: what status lines,
/// `--check` and plans print for people. Text that is parsed again uses
/// the exact [`fmt::Display`] of [`Nanos`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Approx(pub Nanos);

impl fmt::Display for Approx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.0;
        /// `x` to three significant digits, without trailing zeros.
        fn sig3(x: f64) -> String {
            let decimals = if x >= 100.0 {
                0
            } else if x >= 10.0 {
                1
            } else {
                2
            };
            let t = format!("{x:.decimals$}");
            if t.contains('.') {
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                t
            }
        }
        const S: u64 = 1_000_000_000;
        if n < 1_000 {
            write!(f, "{n}ns")
        } else if n < 999_500 {
            write!(f, "{}us", sig3(n as f64 / 1e3))
        } else if n < 999_500_000 {
            write!(f, "{}ms", sig3(n as f64 / 1e6))
        } else if n < 59_950_000_000 {
            write!(f, "{}s", sig3(n as f64 / 1e9))
        } else if n < 3_599_500_000_000 {
            let s = n.saturating_add(S / 2) / S;
            match s % 60 {
                0 => write!(f, "{}m", s / 60),
                r => write!(f, "{}m{r}s", s / 60),
            }
        } else {
            let m = n.saturating_add(30 * S) / (60 * S);
            match m % 60 {
                0 => write!(f, "{}h", m / 60),
                r => write!(f, "{}h{r}m", m / 60),
            }
        }
    }
}

/// Why a duration string was not understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationError {
    /// The text that was given.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
    /// Where it was read, durations relative to the break-even time B are
    /// accepted too (a network's parameters): the hint says so.
    pub relative: bool,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.relative {
            write!(
                f,
                "bad duration {:?}: {} (write a number and a unit: ns, us, ms, s, m, h, d, e.g. 100ms; or a multiple of the break-even time: B, 2B, B/16)",
                self.input, self.reason
            )
        } else {
            write!(
                f,
                "bad duration {:?}: {} (write a number and a unit: ns, us, ms, s, m, h, d; e.g. 100ms)",
                self.input, self.reason
            )
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses a duration such as `10s`, `100ms`, `1.5s`, `2m`, `250us`, `7d`, `0`.
///
/// A unit is required unless the value is zero: `timer(5)` is far more
/// likely a mistake than a request for five nanoseconds. Fractions are
/// rounded to the nearest nanosecond. Negative, NaN and infinite values are
/// rejected.
pub fn parse_duration(text: &str) -> Result<Nanos, DurationError> {
    let err = |reason| DurationError {
        input: text.to_string(),
        reason,
        relative: false,
    };
    let s = text.trim();
    if s.is_empty() {
        return Err(err("empty"));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(s.len());
    // "e" is only part of the number when followed by digits (1e3s); a
    // number cannot end in 'e'.
    let (num, unit) = s.split_at(split);
    let (num, unit) = match num.strip_suffix('e') {
        Some(n) => (n, &s[split - 1..]),
        None => (num, unit),
    };
    let value: f64 = num.parse().map_err(|_| err("not a number"))?;
    if !value.is_finite() {
        return Err(err("not finite"));
    }
    if value < 0.0 {
        return Err(err("negative"));
    }
    let unit = unit.trim();
    let scale = match unit {
        "" if value == 0.0 => 1,
        "" => return Err(err("missing unit")),
        "µs" => 1_000,
        // Days parse (a retention of `7d`); durations print in hours.
        "d" => 86_400_000_000_000,
        u => UNITS
            .iter()
            .find(|(name, _)| *name == u)
            .map(|(_, scale)| *scale)
            .ok_or_else(|| err("unknown unit"))?,
    };
    let ns = value * scale as f64;
    if ns >= u64::MAX as f64 {
        return Err(err("too large"));
    }
    // Whole numbers are exact; only fractions go through rounding.
    if value.fract() == 0.0 && value < 1e15 {
        Ok(Nanos((value as u64).saturating_mul(scale)))
    } else {
        Ok(Nanos(ns.round() as u64))
    }
}

/// Parses a duration that may be written relative to the break-even time
/// `B` of the device a network is built for: `B`, `2B`, `0.5B`, `B/16`,
/// `3B/2` (a non-negative number, `B`, an optional `/divisor`). Plain
/// durations (`10s`) parse as [`parse_duration`] does.
///
/// Written relative to `B`, one spec serves every drive: `timer(2B)` waits
/// 6 s on the paper's 2.5" disk (B = 3 s) and 2.4 minutes on a NAS disk
/// whose break-even is 72 s. With `breakeven` unknown (`None`) a relative
/// duration is an error that says so.
pub fn parse_duration_in(text: &str, breakeven: Option<Nanos>) -> Result<Nanos, DurationError> {
    let s = text.trim();
    let Some(at) = s.find('B') else {
        return parse_duration(text).map_err(|e| DurationError {
            relative: true,
            ..e
        });
    };
    let err = |reason| DurationError {
        input: text.to_string(),
        reason,
        relative: true,
    };
    let factor = |t: &str| -> Result<f64, DurationError> {
        let t = t.trim();
        let x: f64 = t
            .parse()
            .map_err(|_| err("not a number before or after B"))?;
        if !x.is_finite() {
            Err(err("not finite"))
        } else if x < 0.0 {
            Err(err("negative"))
        } else {
            Ok(x)
        }
    };
    let (num, rest) = s.split_at(at);
    let mul = if num.trim().is_empty() {
        1.0
    } else {
        factor(num.trim_end_matches('*'))?
    };
    let rest = rest[1..].trim();
    let div = match rest.strip_prefix('/') {
        Some(d) => factor(d)?,
        None if rest.is_empty() => 1.0,
        None => return Err(err("unexpected text after B (write B, 2B, 0.5B or B/16)")),
    };
    if div == 0.0 {
        return Err(err("division by zero"));
    }
    let b = breakeven.ok_or_else(|| {
        err("relative to the break-even time B, which is not known here: build the network for a device (`--device` on the command line, `Registry::with_breakeven` in code)")
    })?;
    let ns = b.0 as f64 * mul / div;
    if ns >= u64::MAX as f64 {
        return Err(err("too large"));
    }
    Ok(Nanos(ns.round() as u64))
}

#[cfg(test)]
mod tests {
    #[test]
    fn approx_reads_as_people_write_durations() {
        use super::Nanos;
        let cases = [
            (Nanos(17_679_824), "17.7ms"),
            (Nanos(144_827_586_206), "2m25s"),
            (Nanos::from_secs_f64(210.0 / 2.9), "1m12s"),
            (Nanos::from_secs_f64(16.304), "16.3s"),
            (Nanos::from_secs(3), "3s"),
            (Nanos::from_millis(1500), "1.5s"),
            (Nanos::from_secs(600), "10m"),
            (Nanos::from_secs(3600 + 5 * 60 + 10), "1h5m"),
            (Nanos::from_secs(2 * 3600), "2h"),
            (Nanos(999), "999ns"),
            (Nanos(1_500), "1.5us"),
            (Nanos(999_999), "1ms"),
            (Nanos(59_999_000_000), "1m"),
        ];
        for (n, want) in cases {
            assert_eq!(n.approx().to_string(), want, "{}", n.0);
        }
    }

    use super::*;

    #[test]
    fn parses_durations_relative_to_break_even() {
        let b = Some(Nanos::from_secs(3));
        assert_eq!(parse_duration_in("B", b).unwrap(), Nanos::from_secs(3));
        assert_eq!(parse_duration_in("2B", b).unwrap(), Nanos::from_secs(6));
        assert_eq!(
            parse_duration_in(" 0.5 B ", b).unwrap(),
            Nanos::from_millis(1500)
        );
        assert_eq!(
            parse_duration_in("B/16", b).unwrap(),
            Nanos::from_micros(187_500)
        );
        assert_eq!(
            parse_duration_in("3B/2", b).unwrap(),
            Nanos::from_millis(4500)
        );
        assert_eq!(
            parse_duration_in("10s", None).unwrap(),
            Nanos::from_secs(10)
        );
        let e = parse_duration_in("2B", None).unwrap_err();
        assert!(e.to_string().contains("break-even"), "{e}");
        for bad in ["-1B", "B/0", "xB", "B2", "B/x"] {
            assert!(parse_duration_in(bad, b).is_err(), "{bad}");
        }
        // The same spec scales with the drive.
        let nas = Some(Nanos::from_secs(72));
        assert_eq!(parse_duration_in("2B", nas).unwrap(), Nanos::from_secs(144));
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("10s").unwrap(), Nanos::from_secs(10));
        assert_eq!(parse_duration("100ms").unwrap(), Nanos::from_millis(100));
        assert_eq!(parse_duration(" 1.5s ").unwrap(), Nanos::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Nanos::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Nanos::from_secs(3600));
        assert_eq!(parse_duration("250us").unwrap(), Nanos::from_micros(250));
        assert_eq!(parse_duration("250µs").unwrap(), Nanos::from_micros(250));
        assert_eq!(parse_duration("7ns").unwrap(), Nanos(7));
        assert_eq!(parse_duration("0").unwrap(), Nanos::ZERO);
        assert_eq!(parse_duration("1e3ms").unwrap(), Nanos::from_secs(1));
    }

    #[test]
    fn rejects_bad_durations() {
        for bad in ["", "s", "5", "-1s", "1x", "NaNs", "infs", "1e30h"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn display_round_trips() {
        for n in [
            0,
            1,
            999,
            1_000,
            1_500_000,
            1_000_000_000,
            1_500_000_000,
            60_000_000_000,
            90_000_000_000,
            3_600_000_000_000,
            123_456_789_012,
        ] {
            let text = Nanos(n).to_string();
            assert_eq!(parse_duration(&text).unwrap(), Nanos(n), "{text}");
        }
        assert_eq!(Nanos::from_secs(1).to_string(), "1s");
        assert_eq!(Nanos::from_millis(100).to_string(), "100ms");
        assert_eq!(Nanos::from_secs(120).to_string(), "2m");
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Nanos::MAX + Nanos(1), Nanos::MAX);
        assert_eq!(Nanos(1) - Nanos(2), Nanos::ZERO);
        assert_eq!(Nanos::from_secs_f64(-1.0), Nanos::ZERO);
        assert_eq!(Nanos::from_secs_f64(f64::NAN), Nanos::ZERO);
        assert_eq!(Nanos::from_secs_f64(1.5), Nanos::from_millis(1500));
    }

    #[test]
    fn approx_shows_the_longest_duration() {
        // Found by the learned-state property: a damaged value made an
        // error message format Nanos::MAX, and the rounding overflowed.
        assert_eq!(Nanos::MAX.approx().to_string(), "5124095h34m");
    }

    #[test]
    fn integer_scaling() {
        let b = Nanos::from_secs(72);
        assert_eq!(b / 2, Nanos::from_secs(36));
        assert_eq!(b * 4, Nanos::from_secs(288));
        assert_eq!(Nanos(7) / 2, Nanos(3));
        assert_eq!(Nanos::MAX * 2, Nanos::MAX);
    }
}
