//! Drive power models for the spindown task (SPEC §4.2).
//!
//! A [`PowerModel`] is the five numbers of SPEC §4.2: power while spinning
//! (idle or serving), power asleep, power while spinning up, and the
//! spin-up and spin-down times. Presets:
//!
//! | name | p_active | p_sleep | p_spinup | t_spinup | t_spindown | break-even | source |
//! |---|---|---|---|---|---|---|---|
//! | `paper-2.5in` | 1.6 W | 0.4 W | 2.4 W | 1.5 s | 1 s | 3 s | the paper, §4.2 |
//! | `kittyhawk` | 1.6 W | 0.1 W | 2.2 W | 1.5 s | 1 s | 2.2 s | the paper, Table 1 and §2.5.1 |
//! | `wd-red-plus` | 3.3 W | 0.4 W | 21 W | 10 s | 5 s | ≈ 72 s | WD Red (WD40EFRX) spec sheet, powers **not verified**, times assumed (below) |
//! | `seagate-ultrathin` | 1.1 W | 0.18 W | 5 W | 3 s | 1 s | ≈ 16 s | Seagate Laptop Ultrathin HDD SATA Product Manual, Rev. C, §2.7.1 Table 3 (powers, checked); times assumed |
//! | `constellation-es2` | 6.98 W | 1.47 W | 23.64 W | 13.5 s | 20 s | ≈ 58 s | Seagate Constellation ES.2 product manuals (2 TB): SAS Rev. G Table 3 (currents), SATA Rev. H §2.7 (times) |
//!
//! Where the figures come from, preset by preset. "Sourced" means read in
//! the named document; everything else is said to be an assumption or
//! unverified.
//!
//! - **`paper-2.5in`**: §4.2 of the paper ("1 s to spin down and 1.5 s to
//!   spin up … 1.6 W during normal operation; 0.4 W while sleeping; and
//!   2.4 W while spinning up"), break-even 3 s as the paper says.
//! - **`kittyhawk`**: the HP Kittyhawk of Table 1: 1.5–1.7 W in normal
//!   operation (we take the midpoint, 1.6 W), spin-up "1.5 s @ 2.2 W"
//!   (3.3 J). The sleep power is not given as a number ("very little");
//!   the paper says spinning down pays off after 2.2 s, and
//!   `3.3 J / 2.2 s = 1.5 W` saved, so `p_sleep = 1.6 − 1.5 = 0.1 W`.
//!   Table 1 gives no spin-down time; we assume 1 s, as for the paper's
//!   2.5" model.
//! - **`wd-red-plus`**: a 3.5" 4 TB 5400 rpm-class CMR NAS drive, Western
//!   Digital WD40EFRX (sold as *WD Red*, renamed *WD Red Plus* in 2020).
//!   The power figures — idle 3.3 W (taken as `p_active`: a NAS disk spends
//!   its spinning time mostly idle; read/write is about 4.5 W),
//!   standby/sleep 0.4 W, 12 V peak start current 1.75 A — are those of
//!   WD's *WD Red NAS Hard Drives* spec sheet (document 2879-800002) as
//!   recalled when the preset was written. **They are still unverified**:
//!   a search of the stored public reference pages (queries on the
//!   WD40EFRX, WD Red / Red Plus spec sheets and document 2879-800002,
//!   November 2026) found reviews of the drive but no copy of a WD sheet
//!   giving its power table, so override them from the sheet of your
//!   drive's revision (`wd-red-plus,p_active=…`). The order of magnitude of
//!   the start current is corroborated by WD's own *WD Re Technical
//!   Reference Manual* (EX800M, document 2679-771339-A05, §2.4.2.1, mean
//!   current table): a 3.5" WD drive draws at most 1.2 A ("spinup green")
//!   to 2.5 A ("spinup fast") at 12 V while spinning up, 0.78–1.6 A on
//!   average (1.225 A, 14.7 W, in the standard mode). `p_spinup = 12 V ×
//!   1.75 A = 21 W` is the peak start current at 12 V (5 V draw ignored):
//!   an upper bound on the mean spin-up power, so the spin-up energy
//!   `21 W × 10 s = 210 J` and the break-even `210 J / 2.9 W ≈ 72 s` are
//!   upper bounds too. WD publishes no start or stop time for the drive
//!   that we could source: 10 s to spin up and 5 s to spin down are
//!   **assumed** (3.5" manuals that do give one list more: Seagate's
//!   *Constellation ES.2 Serial ATA Product Manual*, Rev. H, §2.7 "Start/stop
//!   times", standby to ready 13.5 s max for the 2 TB and 15 s max for the
//!   3 TB models of a 7200 rpm drive, ready to spindle stop 20 s max).
//! - **`seagate-ultrathin`**: *Seagate Laptop Ultrathin HDD SATA Product
//!   Manual*, Rev. C (2.5" 7 mm drive; model ST320LT030 among others),
//!   §2.7.1, Table 3 "Power dissipation", +5 V input, averages at 25 °C:
//!   spin-up (max) 1.00 A, seek 1.4 W, write 1.70 W, read 1.30 W, idle
//!   performance 1.10 W, idle active 0.66 W, idle low power 0.47 W, standby
//!   0.18 W (steady state, 200 ms after the transition), sleep 0.18 W.
//!   These were checked again against the manual's page 11 in the stored
//!   reference pages (November 2026). `p_active` is the idle-performance
//!   1.10 W (heads tracking, the state a disk is in between requests;
//!   serving costs 1.30–1.70 W, which the one-number model does not
//!   separate), `p_sleep` the standby 0.18 W, and `p_spinup = 5 V × 1.00 A
//!   = 5 W`, the maximum spin-up current: an upper bound, as for
//!   `wd-red-plus`. The manual's start/stop-time section could not be
//!   found in the stored pages and Table 3 gives no load/unload rating:
//!   3 s to spin up and 1 s to spin down are **assumed** (3 s matches the
//!   "spin-up time 3 s" of third-party spec listings of the sibling Laptop
//!   Thin ST500LT012, not a Seagate document). Spin-up energy
//!   `5 W × 3 s = 15 J`, break-even `15 J / 0.92 W ≈ 16.3 s`.
//! - **`constellation-es2`**: a 3.5" 7200 rpm drive, Seagate Constellation
//!   ES.2, 2 TB (ST32000645NS). Currents from the *Constellation ES.2 SAS
//!   Product Manual*, Rev. G, Table 3 "2TB drive DC power requirements"
//!   (the SAS and SATA models share the mechanics), the 3.0 Gb mode
//!   column: average idle 0.46 A at 5 V and 0.39 A at 12 V (`p_active =
//!   2.30 + 4.68 = 6.98 W`), Standby_Z 0.27 A and 0.01 A
//!   (`p_sleep = 1.35 + 0.12 = 1.47 W`), maximum starting current (peak DC) 0.60 A and
//!   1.72 A (`p_spinup = 3.00 + 20.64 = 23.64 W`, an upper bound as
//!   above). The 6.0 Gb column differs only there: 0.59 A and 1.71 A,
//!   23.47 W. Checked against the manual's page 24 in the stored reference
//!   pages (December 2026).
//!   Times from the *Constellation ES.2 Serial ATA Product Manual*,
//!   Rev. H, §2.7 "Start/stop times", 2 TB models: standby to ready
//!   13.5 s (max), ready to spindle stop 20 s (max); both maxima.
//!   Spin-up energy `23.64 W × 13.5 s ≈ 319 J`, break-even
//!   `319 J / 5.51 W ≈ 57.9 s`. It stands for the class of 3.5" drives
//!   at 7200 rpm and more when a drive is identified by its rotation rate
//!   only ([`crate::drive`]).
//!
//! Custom values: `p_active=1.6,p_sleep=0.4,p_spinup=2.4,t_spinup=1.5s,t_spindown=1s`
//! (powers in watts, times with a unit or as bare seconds), or a preset
//! name followed by overrides: `paper-2.5in,t_spinup=3s`.

use std::fmt;
use std::str::FromStr;

use lull_core::time::{Nanos, parse_duration};

/// The power model of one drive (SPEC §4.2).
#[derive(Clone, Debug, PartialEq)]
pub struct PowerModel {
    /// Name of the preset, or `custom`.
    pub name: String,
    /// Power while spinning, idle or serving, in watts.
    pub p_active: f64,
    /// Power while asleep (spun down), in watts.
    pub p_sleep: f64,
    /// Power while spinning up, in watts.
    pub p_spinup: f64,
    /// Time to spin up, in seconds.
    pub t_spinup: f64,
    /// Time to spin down, in seconds (it counts as sleep).
    pub t_spindown: f64,
}

/// The preset names, in the order of the table in the module docs.
pub const PRESETS: &[&str] = &[
    "paper-2.5in",
    "kittyhawk",
    "wd-red-plus",
    "seagate-ultrathin",
    "constellation-es2",
];

/// The default preset: the paper's 2.5" disk.
pub const DEFAULT_PRESET: &str = "paper-2.5in";

impl PowerModel {
    /// A model from its five numbers, named `custom`.
    pub fn new(p_active: f64, p_sleep: f64, p_spinup: f64, t_spinup: f64, t_spindown: f64) -> Self {
        PowerModel {
            name: "custom".into(),
            p_active,
            p_sleep,
            p_spinup,
            t_spinup,
            t_spindown,
        }
    }

    fn named(name: &str, p: [f64; 5]) -> Self {
        PowerModel {
            name: name.into(),
            ..PowerModel::new(p[0], p[1], p[2], p[3], p[4])
        }
    }

    /// What is unverified about the figures B rests on, when this is a
    /// preset whose spin-up figures have no checked source and they were
    /// not overridden: every place that shows B says it beside it
    /// (`lull rank`'s answer, `lulld --check`, `lull status`).
    pub fn caveat(&self) -> Option<&'static str> {
        let why = match self.name.as_str() {
            "wd-red-plus" => {
                "its powers are not verified and its 10 s spin-up time is assumed; B may be nearer 50 s"
            }
            "seagate-ultrathin" => "its 3 s spin-up time is assumed",
            _ => return None,
        };
        // Overridden spin-up figures are the user's own.
        let preset = PowerModel::preset(&self.name)?;
        (preset.p_spinup == self.p_spinup && preset.t_spinup == self.t_spinup).then_some(why)
    }

    /// [`PowerModel::caveat`] of the preset `name` where a drive's
    /// break-even time is `breakeven_s`: the preset's own B (to a
    /// millionth), so its figures were not overridden. What a status or a
    /// check that knows only the preset's name and B shows beside B.
    pub fn caveat_for(name: &str, breakeven_s: f64) -> Option<&'static str> {
        let p = PowerModel::preset(name)?;
        let b = p.break_even_s();
        ((b - breakeven_s).abs() <= 1e-6 * b)
            .then(|| p.caveat())
            .flatten()
    }

    /// The preset `name`, if there is one.
    pub fn preset(name: &str) -> Option<PowerModel> {
        let p = match name {
            "paper-2.5in" => [1.6, 0.4, 2.4, 1.5, 1.0],
            "kittyhawk" => [1.6, 0.1, 2.2, 1.5, 1.0],
            "wd-red-plus" => [3.3, 0.4, 21.0, 10.0, 5.0],
            "seagate-ultrathin" => [1.1, 0.18, 5.0, 3.0, 1.0],
            "constellation-es2" => [6.98, 1.47, 23.64, 13.5, 20.0],
            _ => return None,
        };
        Some(PowerModel::named(name, p))
    }

    /// The paper's 2.5" disk (§4.2).
    pub fn paper() -> PowerModel {
        PowerModel::preset(DEFAULT_PRESET).expect("the default preset exists")
    }

    /// Energy of one spin-up, `p_spinup · t_spinup`, in joules.
    pub fn spinup_energy(&self) -> f64 {
        self.p_spinup * self.t_spinup
    }

    /// The spec that parses back to this model ([`FromStr`]): its preset's
    /// name when it is that preset as is, else its five figures.
    pub fn spec(&self) -> String {
        if PowerModel::preset(&self.name).is_some_and(|q| q == *self) {
            return self.name.clone();
        }
        format!(
            "p_active={},p_sleep={},p_spinup={},t_spinup={},t_spindown={}",
            self.p_active, self.p_sleep, self.p_spinup, self.t_spinup, self.t_spindown
        )
    }

    /// The break-even time B: `p_spinup·t_spinup / (p_active − p_sleep)`.
    /// A sleep longer than this saves energy. The same spelling and type
    /// as [`ServiceModel::break_even`](crate::device::ServiceModel::break_even),
    /// rounded to the nanosecond from [`PowerModel::break_even_s`].
    pub fn break_even(&self) -> Nanos {
        Nanos::from_secs_f64(self.break_even_s())
    }

    /// [`PowerModel::break_even`] in seconds, unrounded: for the energy
    /// arithmetic, which is in seconds and joules.
    pub fn break_even_s(&self) -> f64 {
        self.spinup_energy() / (self.p_active - self.p_sleep)
    }

    /// Energy in joules over `span` with `sleep` of it asleep and
    /// `spinups` spin-ups: `p_active·(span − sleep) + p_sleep·sleep +
    /// p_spinup·t_spinup·spinups`.
    pub fn energy(&self, span: Nanos, sleep: Nanos, spinups: u64) -> f64 {
        self.energy_s(span.as_secs_f64(), sleep.as_secs_f64(), spinups)
    }

    /// [`PowerModel::energy`] with `span` and `sleep` in seconds, for the
    /// lab's arithmetic, which sums seconds.
    pub fn energy_s(&self, span: f64, sleep: f64, spinups: u64) -> f64 {
        self.p_active * (span - sleep)
            + self.p_sleep * sleep
            + self.spinup_energy() * spinups as f64
    }

    /// How long the request that wakes a disk which slept `slept` waits:
    /// `t_spinup + max(0, t_spindown − slept)`.
    pub fn wake_delay(&self, slept: Nanos) -> Nanos {
        Nanos::from_secs_f64(self.wake_delay_s(slept.as_secs_f64()))
    }

    /// [`PowerModel::wake_delay`] in seconds, for the lab's arithmetic.
    pub fn wake_delay_s(&self, slept: f64) -> f64 {
        self.t_spinup + (self.t_spindown - slept).max(0.0)
    }

    /// The time to spin up ([`PowerModel::t_spinup`] as a duration).
    pub fn spinup_time(&self) -> Nanos {
        Nanos::from_secs_f64(self.t_spinup)
    }

    /// The time to spin down ([`PowerModel::t_spindown`] as a duration).
    pub fn spindown_time(&self) -> Nanos {
        Nanos::from_secs_f64(self.t_spindown)
    }

    fn validate(self) -> Result<PowerModel, PowerModelError> {
        let fields = [
            ("p_active", self.p_active),
            ("p_sleep", self.p_sleep),
            ("p_spinup", self.p_spinup),
            ("t_spinup", self.t_spinup),
            ("t_spindown", self.t_spindown),
        ];
        for (k, v) in fields {
            if !v.is_finite() || v < 0.0 {
                return Err(PowerModelError(format!(
                    "{k} must be a finite number ≥ 0, got {v}"
                )));
            }
        }
        if self.p_active <= self.p_sleep {
            return Err(PowerModelError(format!(
                "p_active ({} W) must exceed p_sleep ({} W), or spinning down never pays",
                self.p_active, self.p_sleep
            )));
        }
        Ok(self)
    }
}

impl fmt::Display for PowerModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: p_active={} W, p_sleep={} W, p_spinup={} W, t_spinup={} s, t_spindown={} s (break-even {:.3} s)",
            self.name,
            self.p_active,
            self.p_sleep,
            self.p_spinup,
            self.t_spinup,
            self.t_spindown,
            self.break_even_s()
        )
    }
}

/// A power model that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PowerModelError(pub String);

impl fmt::Display for PowerModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "power model: {}", self.0)
    }
}

impl std::error::Error for PowerModelError {}

/// Parses a time as a duration with a unit (`1500ms`) or as bare seconds
/// (`1.5`).
pub(crate) fn parse_seconds(v: &str) -> Option<f64> {
    if let Ok(x) = v.parse::<f64>() {
        return Some(x);
    }
    parse_duration(v).ok().map(Nanos::as_secs_f64)
}

impl FromStr for PowerModel {
    type Err = PowerModelError;

    /// A preset name, `key=value` pairs, or a preset followed by overrides.
    /// Without a preset every one of the five keys is required.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.split(',').map(str::trim).filter(|p| !p.is_empty());
        let mut base: Option<PowerModel> = None;
        let mut rest: Vec<&str> = Vec::new();
        if let Some(first) = parts.next() {
            if first.contains('=') {
                rest.push(first);
            } else {
                base = Some(PowerModel::preset(first).ok_or_else(|| {
                    PowerModelError(format!(
                        "unknown preset `{first}`{} (known: {}; or give p_active=…,p_sleep=…,p_spinup=…,t_spinup=…,t_spindown=…)",
                        lull_core::suggest::did_you_mean(first, PRESETS.iter().copied()),
                        PRESETS.join(", ")
                    ))
                })?);
            }
        }
        rest.extend(parts);
        let mut vals: [Option<f64>; 5] = match &base {
            Some(b) => [
                Some(b.p_active),
                Some(b.p_sleep),
                Some(b.p_spinup),
                Some(b.t_spinup),
                Some(b.t_spindown),
            ],
            None => [None; 5],
        };
        const KEYS: [&str; 5] = ["p_active", "p_sleep", "p_spinup", "t_spinup", "t_spindown"];
        let mut given = [false; 5];
        for kv in &rest {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| PowerModelError(format!("expected key=value, got `{kv}`")))?;
            let (k, v) = (k.trim(), v.trim());
            let i = KEYS.iter().position(|&x| x == k).ok_or_else(|| {
                PowerModelError(format!(
                    "unknown key `{k}`{} (known: {})",
                    lull_core::suggest::did_you_mean(k, KEYS),
                    KEYS.join(", ")
                ))
            })?;
            let x = if i >= 3 {
                parse_seconds(v)
            } else {
                v.trim_end_matches('W').trim().parse::<f64>().ok()
            }
            .ok_or_else(|| PowerModelError(format!("{k}: cannot read `{v}` as a number")))?;
            if std::mem::replace(&mut given[i], true) {
                return Err(PowerModelError(format!("key `{k}`: given twice")));
            }
            vals[i] = Some(x);
        }
        let mut got = [0.0; 5];
        for (i, v) in vals.iter().enumerate() {
            got[i] = v.ok_or_else(|| PowerModelError(format!("missing {}", KEYS[i])))?;
        }
        let mut m = PowerModel::new(got[0], got[1], got[2], got[3], got[4]);
        if let Some(b) = base {
            m.name = if rest.is_empty() {
                b.name
            } else {
                format!("{}+custom", b.name)
            };
        }
        m.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parses_back_to_the_model() {
        let red = PowerModel::preset("wd-red-plus").unwrap();
        assert_eq!(red.spec(), "wd-red-plus");
        let custom: PowerModel = "wd-red-plus,p_sleep=0.5".parse().unwrap();
        let back: PowerModel = custom.spec().parse().unwrap();
        assert_eq!(
            (
                back.p_active,
                back.p_sleep,
                back.p_spinup,
                back.t_spinup,
                back.t_spindown
            ),
            (
                custom.p_active,
                0.5,
                custom.p_spinup,
                custom.t_spinup,
                custom.t_spindown
            )
        );
    }

    #[test]
    fn paper_break_even_is_three_seconds() {
        let m = PowerModel::paper();
        // 2.4 W · 1.5 s / (1.6 W − 0.4 W) = 3.6 J / 1.2 W = 3 s.
        assert!((m.break_even_s() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn kittyhawk_matches_table_1() {
        let m = PowerModel::preset("kittyhawk").unwrap();
        // 2.2 W · 1.5 s = 3.3 J; 3.3 J / 1.5 W = 2.2 s, as §2.5.1 says.
        assert!((m.spinup_energy() - 3.3).abs() < 1e-12);
        assert!((m.break_even_s() - 2.2).abs() < 1e-12);
    }

    #[test]
    fn seagate_ultrathin_matches_table_3() {
        let m = PowerModel::preset("seagate-ultrathin").unwrap();
        // Table 3 of the Laptop Ultrathin manual: idle performance 1.10 W,
        // standby 0.18 W, spin-up (max) 1.00 A at +5 V = 5 W.
        assert_eq!((m.p_active, m.p_sleep, m.p_spinup), (1.10, 0.18, 5.0));
        // Assumed 3 s spin-up: 5 W · 3 s = 15 J; 15 J / 0.92 W ≈ 16.3 s.
        assert!((m.spinup_energy() - 15.0).abs() < 1e-12);
        assert!((m.break_even_s() - 15.0 / 0.92).abs() < 1e-12);
    }

    #[test]
    fn constellation_es2_from_its_manuals() {
        let m = PowerModel::preset("constellation-es2").unwrap();
        // Table 3: idle 0.46 A·5 V + 0.39 A·12 V; Standby_Z 0.27 A·5 V +
        // 0.01 A·12 V; peak start 0.60 A·5 V + 1.72 A·12 V.
        assert!((m.p_active - (0.46 * 5.0 + 0.39 * 12.0)).abs() < 1e-9);
        assert!((m.p_sleep - (0.27 * 5.0 + 0.01 * 12.0)).abs() < 1e-9);
        assert!((m.p_spinup - (0.60 * 5.0 + 1.72 * 12.0)).abs() < 1e-9);
        // 23.64 W · 13.5 s / 5.51 W ≈ 57.9 s.
        assert!((m.break_even_s() - 23.64 * 13.5 / 5.51).abs() < 1e-9);
    }

    #[test]
    fn wd_red_plus_break_even_by_hand() {
        let m = PowerModel::preset("wd-red-plus").unwrap();
        // 12 V · 1.75 A = 21 W for 10 s = 210 J; 210 J / (3.3 − 0.4) W ≈ 72.4 s.
        assert!((m.spinup_energy() - 210.0).abs() < 1e-9);
        assert!((m.break_even_s() - 210.0 / 2.9).abs() < 1e-9);
    }

    /// B is SPEC §4.2's formula for every preset, in seconds and rounded
    /// to the nanosecond. This file is the one place the formula is
    /// written (`crates/lull/tests/one_break_even.rs`); a drive's profile
    /// reads B from here (`crate::profile`'s tests).
    #[test]
    fn break_even_is_the_spec_formula_for_every_preset() {
        for p in PRESETS {
            let m = PowerModel::preset(p).unwrap();
            let formula = m.p_spinup * m.t_spinup / (m.p_active - m.p_sleep);
            assert_eq!(m.break_even_s(), formula, "{p}");
            assert_eq!(m.break_even(), Nanos::from_secs_f64(formula), "{p}");
        }
    }

    #[test]
    fn every_preset_parses_and_is_valid() {
        for p in PRESETS {
            let m: PowerModel = p.parse().unwrap();
            assert_eq!(&m.name, p);
            assert!(m.break_even_s() > 0.0);
        }
    }

    #[test]
    fn custom_values_and_overrides() {
        let m: PowerModel = "p_active=2,p_sleep=0.5,p_spinup=3W,t_spinup=2s,t_spindown=500ms"
            .parse()
            .unwrap();
        assert_eq!(m, PowerModel::new(2.0, 0.5, 3.0, 2.0, 0.5));
        let m: PowerModel = "paper-2.5in, t_spinup=3".parse().unwrap();
        assert_eq!(m.t_spinup, 3.0);
        assert_eq!(m.name, "paper-2.5in+custom");
        assert!("p_active=1".parse::<PowerModel>().is_err());
        assert!("floppy".parse::<PowerModel>().is_err());
        assert!("paper-2.5in,p_sleep=2".parse::<PowerModel>().is_err());
        assert!("paper-2.5in,volts=5".parse::<PowerModel>().is_err());
    }
}
