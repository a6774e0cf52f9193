//! `time-of-day(busiest, offset, gain)`: the paper's SkepticTOD, an
//! environmental skeptic (§3.2 *environmental*, §5.5).

use lull_core::component::{Context, Prediction, Skeptic};
use lull_core::event::Event;
use lull_core::learned::{Learned, LearnedError};
use lull_core::registry::{Arity, Built, ComponentInfo, ParamInfo, ParamKind, Registry, Role};
use lull_core::time::Nanos;

const HOUR: u64 = 3_600_000_000_000;

/// `time-of-day(busiest, offset, gain)`: keeps an hour-by-hour moving
/// average of the number of operations requested and drops predictions
/// that start in one of the `busiest` busiest hours of the day (SkepticTOD,
/// §5.5: "only allowed predictions for the least-busy hours of the day").
///
/// **Clock.** Times are nanoseconds since the start of the trace (or the
/// daemon's base). When the driver knows the wall clock
/// ([`Context::clock`]: the daemon always, a replay of a trace with
/// absolute times), hours are wall-clock hours, UTC, and `offset` shifts
/// them (a time zone); otherwise `offset` says which wall-clock hour time 0
/// falls in. The hour of the day of `t` is `(⌊(clock + t) / 1 h⌋ + offset)
/// mod 24`, with `clock` = 0 when unknown.
///
/// **Moving average.** Arrivals are counted per wall-clock hour. When an
/// hour is over its count is folded into that hour-of-day's average,
/// `avg[h] ← (1 − gain)·avg[h] + gain·count` (the first day's count is
/// taken as is); hours that pass with no event at all fold a count of 0.
/// With the default gain of 0.25 the average remembers about the last week.
///
/// **Busiest hours.** Among the hours of the day with a positive average,
/// sorted by average (ties: earlier hour first), the first `busiest` are
/// busy. An hour never seen, or with an average of 0, is never busy, so
/// during the first day every prediction passes.
///
/// **Filtering.** A prediction passes, unchanged, unless the hour of its
/// start is busy. (It is not cut where it runs into a busy hour.)
///
/// **Presets.** The paper's two versions: TOD, `time-of-day(busiest=7)`
/// (the 70th percentile, [`TimeOfDay::tod`]), and TODSensitive,
/// `time-of-day(busiest=2)` (the 90th percentile,
/// [`TimeOfDay::tod_sensitive`]).
#[derive(Clone, Debug)]
pub struct TimeOfDay {
    busiest: usize,
    offset: u64,
    gain: f64,
    avg: [f64; 24],
    seen: [bool; 24],
    busy: [bool; 24],
    /// The wall-clock hour being counted (hours since the day before time 0).
    hour: Option<u64>,
    count: u64,
    /// The wall clock at time 0 (Unix nanoseconds; 0 when unknown), taken
    /// from the first context seen.
    clock: Option<u64>,
}

impl TimeOfDay {
    /// Drops predictions in the `busiest` busiest hours (0–24); time 0 is
    /// in wall-clock hour `offset` (0–23); `gain` in (0, 1] is the weight
    /// of each new day in the hourly averages.
    pub fn new(busiest: usize, offset: u64, gain: f64) -> Self {
        TimeOfDay {
            busiest: busiest.min(24),
            offset: offset % 24,
            gain,
            avg: [0.0; 24],
            seen: [false; 24],
            busy: [false; 24],
            hour: None,
            count: 0,
            clock: None,
        }
    }
    /// The paper's TOD: the 7 busiest hours are filtered out.
    pub fn tod(offset: u64) -> Self {
        Self::new(7, offset, 0.25)
    }
    /// The paper's TODSensitive: the 2 busiest hours are filtered out.
    pub fn tod_sensitive(offset: u64) -> Self {
        Self::new(2, offset, 0.25)
    }
    /// The hour of the day (0–23) of time `t`.
    pub fn hour_of_day(&self, t: Nanos) -> usize {
        (self.wall_hour(t) % 24) as usize
    }
    /// The moving average of operations for each hour of the day (`None`:
    /// not seen yet).
    pub fn averages(&self) -> [Option<f64>; 24] {
        std::array::from_fn(|h| self.seen[h].then_some(self.avg[h]))
    }
    /// Whether hour of the day `h` is currently one of the busiest.
    pub fn is_busy(&self, h: usize) -> bool {
        self.busy.get(h).copied().unwrap_or(false)
    }

    fn wall_hour(&self, t: Nanos) -> u64 {
        (self.clock.unwrap_or(0) + t.as_nanos()) / HOUR + self.offset
    }

    fn fold(&mut self, h: usize, count: f64, times: u64) {
        if times == 0 {
            return;
        }
        let mut times = times;
        if !self.seen[h] {
            self.seen[h] = true;
            self.avg[h] = count;
            times -= 1;
        }
        if count == 0.0 {
            // Folding zeros is a decay; do it in one step.
            let k = i32::try_from(times).unwrap_or(i32::MAX);
            self.avg[h] *= (1.0 - self.gain).powi(k);
        } else {
            for _ in 0..times {
                self.avg[h] = (1.0 - self.gain) * self.avg[h] + self.gain * count;
            }
        }
    }

    /// Moves the clock to `ctx.now`, folding finished hours.
    fn advance(&mut self, ctx: &Context) {
        if self.clock.is_none() {
            self.clock = Some(ctx.clock.map_or(0, |c| c.0));
        }
        let h = self.wall_hour(ctx.now);
        let Some(cur) = self.hour else {
            self.hour = Some(h);
            return;
        };
        if h <= cur {
            return;
        }
        let count = self.count as f64;
        self.fold((cur % 24) as usize, count, 1);
        // Hours with no event at all.
        let skipped = h - cur - 1;
        let (full, rem) = (skipped / 24, skipped % 24);
        for k in 0..24u64 {
            let extra = u64::from(k < rem);
            let b = ((cur + 1 + k) % 24) as usize;
            self.fold(b, 0.0, full + extra);
        }
        self.hour = Some(h);
        self.count = 0;
        self.rank();
    }

    fn rank(&mut self) {
        let mut hours: Vec<usize> = (0..24)
            .filter(|&h| self.seen[h] && self.avg[h] > 0.0)
            .collect();
        hours.sort_by(|&a, &b| self.avg[b].total_cmp(&self.avg[a]).then(a.cmp(&b)));
        self.busy = [false; 24];
        for &h in hours.iter().take(self.busiest) {
            self.busy[h] = true;
        }
    }
}

impl Skeptic for TimeOfDay {
    fn save(&self, _now: Nanos) -> Option<Learned> {
        // The hours are wall-clock hours (the daemon knows the clock), so
        // the hour being counted stays meaningful across a restart: the
        // hours it was down fold as hours without I/O, which they were.
        let mut v: Vec<f64> = self.avg.to_vec();
        v.extend(self.seen.iter().map(|&b| f64::from(u8::from(b))));
        v.extend(self.busy.iter().map(|&b| f64::from(u8::from(b))));
        v.push(self.hour.map_or(-1.0, |h| h as f64));
        v.push(self.count as f64);
        Some(Learned::new(TIME_OF_DAY.name, 1, v))
    }
    fn restore(&mut self, l: &Learned, _now: Nanos) -> Result<(), LearnedError> {
        let v = l.expect(TIME_OF_DAY.name, 1, 3 * 24 + 2)?;
        if v.iter().any(|&x| !(x >= -1.0 && x.is_finite())) || v[..24].iter().any(|&x| x < 0.0) {
            return Err(LearnedError::new(format!(
                "{}: a negative average or count",
                TIME_OF_DAY.name
            )));
        }
        self.avg.copy_from_slice(&v[..24]);
        for h in 0..24 {
            self.seen[h] = v[24 + h] != 0.0;
            self.busy[h] = v[48 + h] != 0.0;
        }
        self.hour = (v[72] >= 0.0).then_some(v[72] as u64);
        self.count = v[73].max(0.0) as u64;
        Ok(())
    }
    fn on_input(&mut self, _input: usize, p: &Prediction, ctx: &Context) -> Option<Prediction> {
        self.advance(ctx);
        (!self.busy[self.hour_of_day(p.start)]).then_some(*p)
    }
    fn on_event(&mut self, ev: &Event, ctx: &Context) -> Option<Prediction> {
        self.advance(ctx);
        if ev.is_arrival() {
            self.count += 1;
        }
        None
    }
    fn on_idle_begin(&mut self, ctx: &Context) -> Option<Prediction> {
        self.advance(ctx);
        None
    }
}

/// Catalogue entry of `time-of-day`.
pub const TIME_OF_DAY: ComponentInfo = ComponentInfo {
    name: "time-of-day",
    role: Role::Skeptic,
    summary: "drops predictions starting in the n busiest hours of the day (hour-by-hour moving average of operations); TOD = busiest 7, TODSensitive = busiest 2",
    source: "§3.2 environmental skeptics, §5.5 SkepticTOD",
    params: &[
        ParamInfo::optional(
            "busiest",
            ParamKind::Int,
            "7",
            "hours",
            "how many of the busiest hours of the day to filter out, 0–24 (paper: TOD 7, TODSensitive 2)",
        ),
        ParamInfo::optional(
            "offset",
            ParamKind::Int,
            "0",
            "h",
            "hours added to the hour of day: with no wall clock, the hour (0–23) at time 0 of the trace; with one (daemon, traces with absolute times), a time-zone shift from UTC",
        ),
        ParamInfo::optional(
            "gain",
            ParamKind::Float,
            "0.25",
            "",
            "weight of each new day in the hourly moving averages, in (0, 1]",
        ),
    ],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[],
};

pub(crate) fn register(r: &mut Registry) {
    r.register(TIME_OF_DAY, |p| {
        let busiest = p.int_in("busiest", 0, 24)? as usize;
        let offset = p.int_in("offset", 0, 23)?;
        let gain = p.float_in("gain", f64::MIN_POSITIVE, 1.0)?;
        Ok(Built::Skeptic(Box::new(TimeOfDay::new(
            busiest, offset, gain,
        ))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::{Op, Request};

    fn hours(h: f64) -> Nanos {
        Nanos::from_secs_f64(h * 3600.0)
    }

    /// `n` requests spread over the hour starting at `h` hours.
    fn load(t: &mut TimeOfDay, h: u64, n: u64) {
        for k in 0..n {
            let at = hours(h as f64) + Nanos::from_secs(1 + k);
            let r = Request::new(at, at + Nanos::from_millis(1), Op::Read, 0, 512);
            t.on_event(&Event::arrival(&r), &Context::at(r.arrival));
            t.on_event(&Event::completion(&r), &Context::at(r.completion));
        }
    }

    fn ask(t: &mut TimeOfDay, at: Nanos) -> bool {
        let p = Prediction::new(at, Some(Nanos::from_secs(10)));
        t.on_input(0, &p, &Context::at(at)).is_some()
    }

    #[test]
    fn drops_predictions_in_the_busiest_hours_from_the_second_day() {
        let mut t = TimeOfDay::new(2, 0, 0.25);
        // Day 0: hour 9 is the busiest, then 14, then 3.
        load(&mut t, 3, 5);
        load(&mut t, 9, 50);
        assert!(ask(&mut t, hours(9.5)), "hour 9 has not been seen yet");
        load(&mut t, 14, 20);
        // Day 1.
        load(&mut t, 24 + 1, 1);
        let avg = t.averages();
        assert_eq!(avg[9], Some(50.0));
        assert_eq!(
            avg[20],
            Some(0.0),
            "an hour with no event folds a count of 0"
        );
        assert_eq!(avg[0], Some(0.0));
        assert!(t.is_busy(9) && t.is_busy(14) && !t.is_busy(3));
        assert!(ask(&mut t, hours(24.0 + 3.5)));
        assert!(!ask(&mut t, hours(24.0 + 9.5)));
        assert!(!ask(&mut t, hours(24.0 + 14.1)));
        assert!(ask(&mut t, hours(24.0 + 20.0)), "a quiet hour passes");
    }

    #[test]
    fn offset_shifts_the_clock_and_averages_move() {
        // Time 0 is 22:00: trace hour 11 is 09:00.
        let mut t = TimeOfDay::new(1, 22, 0.5);
        assert_eq!(t.hour_of_day(hours(11.5)), 9);
        load(&mut t, 11, 10); // 09:00, day 0
        load(&mut t, 12, 4); // 10:00
        load(&mut t, 13, 1);
        assert!(t.is_busy(9));
        // A quiet 09:00 the next day halves its average to 5; a busy
        // 10:00 takes over (4 → 0.5·4 + 0.5·20 = 12).
        load(&mut t, 35, 0);
        load(&mut t, 36, 20);
        load(&mut t, 37, 1);
        assert_eq!(t.averages()[9], Some(5.0));
        assert_eq!(t.averages()[10], Some(12.0));
        assert!(t.is_busy(10) && !t.is_busy(9));
        assert!(ask(&mut t, hours(24.0 * 2.0 + 11.2)));
        assert!(!ask(&mut t, hours(24.0 * 2.0 + 12.2)));
    }

    /// With the wall clock known, hours are real hours: time 0 is
    /// 2026-11-21 09:30 UTC, so the first half hour of the trace is 09:xx
    /// and the next hour boundary comes 30 minutes in, not 60.
    #[test]
    fn a_known_wall_clock_gives_real_hours() {
        // 2026-11-21 00:00 UTC is 1_795_305_600 s after the epoch.
        let clock = Nanos::from_secs(1_795_305_600) + hours(9.5);
        let ctx = |t: Nanos| Context {
            clock: Some(clock),
            ..Context::at(t)
        };
        let mut t = TimeOfDay::new(1, 0, 0.5);
        let r = Request::new(hours(0.1), hours(0.1) + Nanos::NANO, Op::Read, 0, 512);
        t.on_event(&Event::arrival(&r), &ctx(r.arrival));
        assert_eq!(t.hour_of_day(hours(0.1)), 9);
        assert_eq!(t.hour_of_day(hours(0.6)), 10, "09:30 + 36 min");
        // A busy 09:00 on day 0 (counted from 09:30), quiet 10:00: the
        // next day's 09:45 is dropped, 10:45 passes.
        for k in 0..20 {
            let at = hours(0.2) + Nanos::from_secs(k);
            let r = Request::new(at, at + Nanos::NANO, Op::Read, 0, 512);
            t.on_event(&Event::arrival(&r), &ctx(at));
        }
        let r = Request::new(hours(1.0), hours(1.0) + Nanos::NANO, Op::Read, 0, 512);
        t.on_event(&Event::arrival(&r), &ctx(r.arrival));
        let ask_at = |t: &mut TimeOfDay, at: Nanos| {
            let p = Prediction::new(at, Some(Nanos::from_secs(10)));
            t.on_input(0, &p, &ctx(at)).is_some()
        };
        assert!(!ask_at(&mut t, hours(24.25)), "09:45 the next day is busy");
        assert!(ask_at(&mut t, hours(25.25)), "10:45 the next day is quiet");
    }

    #[test]
    fn presets_are_the_papers() {
        assert_eq!(TimeOfDay::tod(0).busiest, 7);
        assert_eq!(TimeOfDay::tod_sensitive(0).busiest, 2);
    }
}
