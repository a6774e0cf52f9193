//! What a drive is, and its break-even time B for a task: the one
//! resolution that `lull plan`, `lull replay`, `lull rank` and the daemon
//! share.
//!
//! Everything in lull scales with B, so a wrong B makes every decision
//! wrong by the same factor. A drive is named once (a `--device` option, a
//! disk's `preset`) or identified (its model string, rotation rate and form
//! factor, [`DriveFacts`]), and becomes a [`Drive`]: a power model for
//! spin-down, a service model for the work that moves I/O (flush,
//! commands, jobs, writeback, cleaning), and where the figures came from.
//! Its break-even time B for each kind of work ([`Work`]) is worked out
//! once, in its [`DriveProfile`](crate::profile::DriveProfile), the one
//! source of B:
//!
//! - [`Work::Standby`]: the power model's break-even,
//!   [`PowerModel::break_even`] (72 s for `wd-red-plus`);
//! - [`Work::Io`]: the service model's random 8 KiB access time
//!   ([`ServiceModel::break_even`], 17.7 ms for `wd-red-plus`): a step of
//!   background work delays a foreground request by about this much.
//!
//! # Resolution ([`Drive::resolve`])
//!
//! 1. A preset that the user wrote is obeyed ([`PresetSource::Config`]).
//! 2. Else the drive's model string is matched against the preset table
//!    ([`PresetSource::Identified`]).
//! 3. Else its rotation rate and form factor pick a class preset
//!    ([`PresetSource::Class`]): 3.5" at 7200 rpm or more →
//!    `constellation-es2`; other 3.5" (and rotating drives of unknown
//!    size below 7200 rpm) → `wd-red-plus`; 2.5" and smaller →
//!    `seagate-ultrathin`.
//! 4. Else the default ([`PresetSource::Default`]): `wd-red-plus`, a modern
//!    3.5" drive, and of the 3.5" presets the one with the longest
//!    break-even, so a drive nothing is known of is spun down the least.
//!    Never the paper's 1995 laptop drive (B = 3 s), which would spin a
//!    modern drive down 24 times too eagerly.
//!
//! A drive that reports no rotation ([`Rotation::NonRotating`]: an SSD, an
//! NVMe namespace) is [`DriveFacts::spins`] `== Some(false)`; the daemon
//! never sends it a standby unless its config names a preset.
//!
//! The lab keeps its own documented default when `--device` is absent
//! ([`Drive::lab_default`]): the paper's 2.5" drive for spin-down (its
//! results are stated against it) and `wd-red-plus` for service times.

use std::fmt;

use lull_core::time::Nanos;

use crate::device::ServiceModel;
use crate::power::PowerModel;

/// Where a drive's preset came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PresetSource {
    /// Named by the user (`preset = …`, `--device …`).
    Config,
    /// The drive's model string matched a preset.
    Identified,
    /// Chosen by the drive's rotation rate and form factor.
    Class,
    /// Nothing was known: the documented default.
    Default,
}

impl PresetSource {
    /// `config`, `identified`, `class` or `default`.
    pub fn name(self) -> &'static str {
        match self {
            PresetSource::Config => "config",
            PresetSource::Identified => "identified",
            PresetSource::Class => "class",
            PresetSource::Default => "default",
        }
    }
}

impl fmt::Display for PresetSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of work whose break-even time is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Work {
    /// Spinning the drive down (`standby`, `spindown`, `none`).
    Standby,
    /// Work that moves I/O and competes with the foreground (`flush`,
    /// `command`, `jobs`, `writeback`, `cleaning`).
    Io,
}

impl Work {
    /// The shortest break-even time B a drive may physically have for
    /// this work: a B given by hand below it is in the wrong unit
    /// (`Nanos(72)` meant as 72 s), and the `lull` facade refuses it.
    ///
    /// - [`Work::Standby`]: 100 ms. B = `p_spinup·t_spinup / (p_active −
    ///   p_sleep)` exceeds the spin-up time (spinning up draws more than
    ///   the spinning drive saves asleep), and no drive spins up in
    ///   100 ms: the fastest presets take 1.5 s (B 2.2 s).
    /// - [`Work::Io`]: 1 µs. B is one random 8 KiB access; the fastest
    ///   solid-state devices take about 10 µs, a disk milliseconds.
    pub const fn min_break_even(self) -> Nanos {
        match self {
            Work::Standby => Nanos::from_millis(100),
            Work::Io => Nanos::from_micros(1),
        }
    }
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Work::Standby => "Work::Standby",
            Work::Io => "Work::Io",
        })
    }
}

/// How fast a drive's media turns, as it reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rotation {
    /// Not reported.
    Unknown,
    /// Solid state: nothing spins.
    NonRotating,
    /// Nominal revolutions a minute.
    Rpm(u16),
}

impl Rotation {
    /// The field as ATA/ACS (IDENTIFY DEVICE word 217) and SBC (Block
    /// Device Characteristics VPD page, bytes 4–5) define it: 0 not
    /// reported, 1 non-rotating, 0401h–FFFEh the rate in rpm, the rest
    /// reserved (read as not reported).
    pub fn from_code(code: u16) -> Rotation {
        match code {
            1 => Rotation::NonRotating,
            0x0401..=0xfffe => Rotation::Rpm(code),
            _ => Rotation::Unknown,
        }
    }
}

impl fmt::Display for Rotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rotation::Unknown => f.write_str("rotation not reported"),
            Rotation::NonRotating => f.write_str("non-rotating"),
            Rotation::Rpm(r) => write!(f, "{r} rpm"),
        }
    }
}

/// A drive's nominal form factor, as ATA/ACS (IDENTIFY word 168, bits 3:0)
/// and SBC (Block Device Characteristics VPD page, byte 7, bits 3:0) code
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormFactor {
    /// 5.25 inch (code 1).
    In5_25,
    /// 3.5 inch (code 2).
    In3_5,
    /// 2.5 inch (code 3).
    In2_5,
    /// 1.8 inch (code 4).
    In1_8,
    /// Less than 1.8 inch (code 5).
    Below1_8,
}

impl FormFactor {
    /// The form factor of code `c` (bits 3:0); `None` for 0 (not
    /// reported) and the reserved codes.
    pub fn from_code(c: u8) -> Option<FormFactor> {
        Some(match c & 0x0f {
            1 => FormFactor::In5_25,
            2 => FormFactor::In3_5,
            3 => FormFactor::In2_5,
            4 => FormFactor::In1_8,
            5 => FormFactor::Below1_8,
            _ => return None,
        })
    }
}

impl fmt::Display for FormFactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FormFactor::In5_25 => "5.25-inch",
            FormFactor::In3_5 => "3.5-inch",
            FormFactor::In2_5 => "2.5-inch",
            FormFactor::In1_8 => "1.8-inch",
            FormFactor::Below1_8 => "sub-1.8-inch",
        })
    }
}

/// What a drive says about itself (from ATA IDENTIFY DEVICE, SCSI INQUIRY
/// and VPD pages, or sysfs), as far as the preset resolution needs it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DriveFacts {
    /// The model string (ATA: IDENTIFY words 27–46; SCSI: INQUIRY vendor
    /// and product), trimmed.
    pub model: Option<String>,
    /// Its nominal rotation rate.
    pub rotation: Option<Rotation>,
    /// Its nominal form factor.
    pub form_factor: Option<FormFactor>,
    /// The kernel's `queue/rotational` flag, the last resort.
    pub rotational: Option<bool>,
}

impl DriveFacts {
    /// Whether the media spins: `Some(false)` when the drive reports no
    /// rotation (rotation rate 1) or, lacking a rate, the kernel says it
    /// is not rotational; `None` when nothing says.
    pub fn spins(&self) -> Option<bool> {
        match self.rotation {
            Some(Rotation::NonRotating) => Some(false),
            Some(Rotation::Rpm(_)) => Some(true),
            Some(Rotation::Unknown) | None => self.rotational,
        }
    }

    /// What they say, in words: `model "WDC WD40EFRX-68N32N0", 5400 rpm,
    /// 3.5-inch`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.model {
            parts.push(format!("model {m:?}"));
        }
        match self.rotation {
            Some(r @ (Rotation::NonRotating | Rotation::Rpm(_))) => parts.push(r.to_string()),
            _ => {
                if let Some(r) = self.rotational {
                    parts.push(format!("queue/rotational {}", u8::from(r)));
                }
            }
        }
        if let Some(f) = self.form_factor {
            parts.push(f.to_string());
        }
        if parts.is_empty() {
            "nothing reported".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Model strings and the preset they are, `?` for one character and `*`
/// for any run (matched against the upper-cased model with runs of spaces
/// made one).
pub const MODELS: &[(&str, &str)] = &[
    // WD Red (EFRX, EFAX) and Red Plus (EFZX, EFPX, EFZZ), 3.5" 5400 rpm class.
    ("WDC WD*EFRX*", "wd-red-plus"),
    ("WDC WD*EFZX*", "wd-red-plus"),
    ("WDC WD*EFPX*", "wd-red-plus"),
    ("WDC WD*EFZZ*", "wd-red-plus"),
    ("WD*EFRX*", "wd-red-plus"),
    ("WD*EFZX*", "wd-red-plus"),
    // Seagate Laptop Ultrathin.
    ("ST320LT030*", "seagate-ultrathin"),
    ("ST250LT021*", "seagate-ultrathin"),
    // Seagate Constellation ES.2 (standard, SED and FIPS models).
    ("ST3?00064?NS*", "constellation-es2"),
    ("ST3?00065?NS*", "constellation-es2"),
    // The paper's HP disk.
    ("*97560*", "hp97560"),
];

/// Whether `text` matches `pattern` (`?` one character, `*` any run).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match (pattern.first(), text.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob(&pattern[1..], text) || (!text.is_empty() && glob(pattern, &text[1..]))
        }
        (Some(b'?'), Some(_)) => glob(&pattern[1..], &text[1..]),
        (Some(p), Some(t)) if p == t => glob(&pattern[1..], &text[1..]),
        _ => false,
    }
}

/// The preset a model string names ([`MODELS`]), if any.
pub fn preset_for_model(model: &str) -> Option<&'static str> {
    let norm = model
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    MODELS
        .iter()
        .find(|(p, _)| glob(p.as_bytes(), norm.as_bytes()))
        .map(|&(_, name)| name)
}

/// The preset a drive takes when nothing is known of it.
pub const DEFAULT_PRESET: &str = "wd-red-plus";

/// The shortest break-even time a drive may have, 32 ns: `auto` waits
/// for B/32 (`long-idle`'s shortest idle period), which must not round to
/// zero. Real drives have B of milliseconds (work that moves I/O) to
/// minutes (spin-down).
pub const MIN_BREAK_EVEN: Nanos = Nanos(32);

/// A drive spec or resolution that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriveError(pub String);

impl fmt::Display for DriveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DriveError {}

/// A drive as lull models it: the preset it is, its power model (for
/// spin-down) and service model (for work that moves I/O), and where they
/// came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Drive {
    /// The preset name (with `+custom` when overridden), or `custom`.
    pub preset: String,
    /// Its power model; `None` for a drive that has none (`hp97560`).
    pub power: Option<PowerModel>,
    /// Its service-time model.
    pub service: ServiceModel,
    /// Where the preset came from.
    pub source: PresetSource,
    /// Why, in words (`model "WDC WD40EFRX-68N32N0" is wd-red-plus`).
    pub why: String,
}

/// Every drive preset name: the power presets, then the service presets
/// that are not also power presets.
pub fn known_presets() -> Vec<&'static str> {
    let mut known: Vec<&str> = crate::power::PRESETS.to_vec();
    for n in crate::device::PRESETS {
        if !known.contains(n) {
            known.push(n);
        }
    }
    known
}

const POWER_KEYS: [&str; 5] = ["p_active", "p_sleep", "p_spinup", "t_spinup", "t_spindown"];

impl Drive {
    /// The drive `spec` names: a preset of either table (`wd-red-plus`),
    /// optionally followed by overrides of either model's keys
    /// (`wd-red-plus,p_active=3.0,rpm=7200`), or the five power keys of a
    /// custom drive (then with `wd-red-plus`'s service model unless service
    /// keys are given too). A power preset without a service model of its
    /// own (`paper-2.5in`, `kittyhawk`) takes `wd-red-plus`'s too, so
    /// `--device paper-2.5in` is the lab's default drive
    /// ([`Drive::lab_default`]): one name, one drive. `hp97560` names the
    /// paper's disk timing.
    pub fn from_spec(spec: &str, source: PresetSource) -> Result<Drive, DriveError> {
        if spec.split(',').all(|p| p.trim().is_empty()) {
            return Err(DriveError(format!(
                "an empty drive: name a preset ({}) or give p_active=…,p_sleep=…,p_spinup=…,t_spinup=…,t_spindown=…",
                known_presets().join(", ")
            )));
        }
        let mut parts = spec.split(',').map(str::trim).filter(|p| !p.is_empty());
        let first = parts.next().unwrap_or("");
        let (base, mut rest): (Option<&str>, Vec<&str>) = if first.contains('=') || first.is_empty()
        {
            (
                None,
                std::iter::once(first).filter(|f| !f.is_empty()).collect(),
            )
        } else {
            (Some(first), Vec::new())
        };
        rest.extend(parts);
        if let Some(b) = base {
            if PowerModel::preset(b).is_none() && ServiceModel::preset(b).is_none() {
                let known = known_presets();
                return Err(DriveError(format!(
                    "unknown drive preset `{b}`{} (known: {}; or give p_active=…,p_sleep=…,p_spinup=…,t_spinup=…,t_spindown=…)",
                    lull_core::suggest::did_you_mean(b, known.iter().copied()),
                    known.join(", ")
                )));
            }
        }
        // A key of neither model is named here, with both models' keys
        // (each model's own parser knows only its own); so is a key given
        // twice, as a network spec's parameter is (the last one won).
        let keys = || POWER_KEYS.iter().chain(&crate::device::KEYS).copied();
        let mut seen: Vec<&str> = Vec::new();
        for kv in &rest {
            let k = kv.split('=').next().unwrap_or("").trim();
            if kv.contains('=') && !keys().any(|x| x == k) {
                return Err(DriveError(format!(
                    "unknown key `{k}`{} (known: {})",
                    lull_core::suggest::did_you_mean(k, keys()),
                    keys().collect::<Vec<_>>().join(", ")
                )));
            }
            if seen.contains(&k) {
                return Err(DriveError(format!("key `{k}`: given twice")));
            }
            seen.push(k);
        }
        let (power_kv, service_kv): (Vec<&str>, Vec<&str>) = rest
            .iter()
            .partition(|kv| POWER_KEYS.contains(&kv.split('=').next().unwrap_or("").trim()));
        let join = |base: Option<&str>, kv: &[&str]| {
            base.into_iter()
                .chain(kv.iter().copied())
                .collect::<Vec<_>>()
                .join(",")
        };
        let power = match base.and_then(PowerModel::preset) {
            Some(_) => Some(join(base, &power_kv)),
            None if !power_kv.is_empty() => Some(join(None, &power_kv)),
            None => None,
        }
        .map(|s| {
            s.parse::<PowerModel>()
                .map_err(|e| DriveError(e.to_string()))
        })
        .transpose()?;
        let service_base = match base {
            Some(b) if ServiceModel::preset(b).is_some() => b,
            _ => crate::device::DEFAULT_PRESET,
        };
        let service = join(Some(service_base), &service_kv)
            .parse::<ServiceModel>()
            .map_err(|e| DriveError(e.to_string()))?;
        let preset = match (&power, base) {
            (Some(p), _) => p.name.clone(),
            (None, Some(_)) => service.name.clone(),
            (None, None) => "custom".into(),
        };
        Ok(Drive {
            preset,
            power,
            service,
            source,
            why: String::new(),
        })
    }

    /// The drive for a preset name of the table (a built-in name: cannot
    /// fail), with `source` and `why`.
    fn preset(name: &str, source: PresetSource, why: String) -> Drive {
        let mut d = Drive::from_spec(name, source).expect("a built-in preset parses");
        d.why = why;
        d
    }

    /// The drive taken when nothing is known: [`DEFAULT_PRESET`].
    pub fn fallback() -> Drive {
        Drive::preset(
            DEFAULT_PRESET,
            PresetSource::Default,
            "nothing identified the drive: a modern 3.5-inch drive".into(),
        )
    }

    /// The lab's default when `--device` is absent: the paper's 2.5" drive
    /// for spin-down and `wd-red-plus` for service times, as the results
    /// in the docs are stated.
    pub fn lab_default() -> Drive {
        Drive {
            preset: crate::power::DEFAULT_PRESET.into(),
            power: Some(PowerModel::paper()),
            service: ServiceModel::default_model(),
            source: PresetSource::Default,
            why: "the lab's default: the paper's 2.5-inch drive for spin-down, wd-red-plus's service times".into(),
        }
    }

    /// The drive from what it says about itself: a model in [`MODELS`],
    /// else a class preset by rotation and form factor, else
    /// [`Drive::fallback`] (see the module docs).
    pub fn identified(facts: &DriveFacts) -> Drive {
        if let Some(model) = &facts.model {
            if let Some(name) = preset_for_model(model) {
                if PowerModel::preset(name).is_some() {
                    return Drive::preset(
                        name,
                        PresetSource::Identified,
                        format!("model {model:?} is {name}"),
                    );
                }
            }
        }
        let rpm = match facts.rotation {
            Some(Rotation::Rpm(r)) => Some(r),
            _ => None,
        };
        let class = match (facts.form_factor, rpm) {
            (Some(FormFactor::In2_5 | FormFactor::In1_8 | FormFactor::Below1_8), _) => {
                Some("seagate-ultrathin")
            }
            (Some(FormFactor::In3_5 | FormFactor::In5_25) | None, Some(r)) if r >= 7200 => {
                Some("constellation-es2")
            }
            (Some(FormFactor::In3_5 | FormFactor::In5_25), _) | (None, Some(_)) => {
                Some("wd-red-plus")
            }
            (None, None) => None,
        };
        match class {
            Some(name) => Drive::preset(
                name,
                PresetSource::Class,
                format!("{}: the {name} class", facts.describe()),
            ),
            None => {
                let mut d = Drive::fallback();
                d.why = if facts.spins() == Some(false) {
                    // No preset describes flash; the fallback's service
                    // times stand in (the B of flush, command and jobs,
                    // slower than flash: a later start, never an earlier
                    // one), and a standby is never sent.
                    format!(
                        "{}: a solid-state disk, which no preset describes; {}'s figures stand in",
                        facts.describe(),
                        d.preset
                    )
                } else {
                    format!("{}: a modern 3.5-inch drive", facts.describe())
                };
                d
            }
        }
    }

    /// The drive of a disk: `explicit` (a preset the user wrote) if given,
    /// else from `facts` if any, else [`Drive::fallback`].
    pub fn resolve(
        explicit: Option<&str>,
        facts: Option<&DriveFacts>,
    ) -> Result<Drive, DriveError> {
        match (explicit, facts) {
            (Some(spec), _) => {
                let mut d = Drive::from_spec(spec, PresetSource::Config)?;
                d.why = "named in the configuration".into();
                Ok(d)
            }
            (None, Some(f)) => Ok(Drive::identified(f)),
            (None, None) => Ok(Drive::fallback()),
        }
    }
}

impl fmt::Display for Drive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.preset, self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_drive_has_both_models() {
        let d = Drive::from_spec("wd-red-plus", PresetSource::Config).unwrap();
        assert_eq!(d.preset, "wd-red-plus");
        assert_eq!(d.power, PowerModel::preset("wd-red-plus"));
        assert_eq!(d.service, ServiceModel::default_model());
    }

    #[test]
    fn overrides_go_to_the_model_that_has_the_key() {
        let d = Drive::from_spec("wd-red-plus,p_active=4,rpm=7200", PresetSource::Config).unwrap();
        assert_eq!(d.power.as_ref().unwrap().p_active, 4.0);
        assert_eq!(d.service.rpm, 7200.0);
        assert_eq!(d.preset, "wd-red-plus+custom");
    }

    #[test]
    fn the_paper_drives_take_the_default_service_model() {
        for name in ["paper-2.5in", "kittyhawk"] {
            let d = Drive::from_spec(name, PresetSource::Config).unwrap();
            assert_eq!(d.service.name, crate::device::DEFAULT_PRESET, "{name}");
        }
        // Naming the lab's default drive gives that drive (its B:
        // `crate::profile`'s tests).
        let named = Drive::from_spec("paper-2.5in", PresetSource::Config).unwrap();
        let default = Drive::lab_default();
        assert_eq!(
            (&named.power, &named.service),
            (&default.power, &default.service)
        );
        let hp = Drive::from_spec("hp97560", PresetSource::Config).unwrap();
        assert!(hp.power.is_none());
    }

    #[test]
    fn unknown_presets_and_keys_are_named() {
        let e = Drive::from_spec("wd-red", PresetSource::Config)
            .unwrap_err()
            .0;
        assert!(e.contains("`wd-red`") && e.contains("wd-red-plus"), "{e}");
        let e = Drive::from_spec("wd-red-plus,rpn=5", PresetSource::Config)
            .unwrap_err()
            .0;
        assert!(e.contains("rpn"), "{e}");
        // A key of neither model lists both models' keys.
        let e = Drive::from_spec("wd-red-plus,bogus=1", PresetSource::Config)
            .unwrap_err()
            .0;
        assert!(e.contains("`bogus`"), "{e}");
        assert!(e.contains("p_active") && e.contains("rpm"), "{e}");
        // Nothing at all says so, with the presets.
        for empty in ["", "  ", ", "] {
            let e = Drive::from_spec(empty, PresetSource::Config).unwrap_err().0;
            assert!(
                e.contains("an empty drive") && e.contains("wd-red-plus"),
                "{e}"
            );
        }
    }

    #[test]
    fn models_match_their_presets() {
        assert_eq!(
            preset_for_model("WDC WD40EFRX-68N32N0"),
            Some("wd-red-plus")
        );
        assert_eq!(
            preset_for_model("wdc  wd60efzx-68b3fn0"),
            Some("wd-red-plus")
        );
        assert_eq!(preset_for_model("ST32000645NS"), Some("constellation-es2"));
        assert_eq!(
            preset_for_model("ST320LT030-9YG142"),
            Some("seagate-ultrathin")
        );
        assert_eq!(preset_for_model("Samsung SSD 870 EVO 1TB"), None);
    }

    #[test]
    fn classes_follow_rotation_and_size() {
        let f = |rpm: u16, ff: Option<FormFactor>| DriveFacts {
            rotation: Some(Rotation::from_code(rpm)),
            form_factor: ff,
            ..DriveFacts::default()
        };
        let p = |facts: DriveFacts| {
            let d = Drive::identified(&facts);
            (d.preset, d.source)
        };
        use PresetSource::*;
        assert_eq!(
            p(f(7200, Some(FormFactor::In3_5))),
            ("constellation-es2".into(), Class)
        );
        assert_eq!(
            p(f(5400, Some(FormFactor::In3_5))),
            ("wd-red-plus".into(), Class)
        );
        assert_eq!(
            p(f(5400, Some(FormFactor::In2_5))),
            ("seagate-ultrathin".into(), Class)
        );
        assert_eq!(p(f(7200, None)), ("constellation-es2".into(), Class));
        assert_eq!(p(f(0, None)), ("wd-red-plus".into(), Default));
        // A known model wins over the class.
        let mut known = f(7200, Some(FormFactor::In3_5));
        known.model = Some("WDC WD40EFRX-68N32N0".into());
        assert_eq!(p(known), ("wd-red-plus".into(), Identified));
    }

    #[test]
    fn rotation_codes_follow_the_standards() {
        assert_eq!(Rotation::from_code(0), Rotation::Unknown);
        assert_eq!(Rotation::from_code(1), Rotation::NonRotating);
        assert_eq!(Rotation::from_code(0x0400), Rotation::Unknown);
        assert_eq!(Rotation::from_code(0x0401), Rotation::Rpm(0x0401));
        assert_eq!(Rotation::from_code(0xffff), Rotation::Unknown);
        assert_eq!(FormFactor::from_code(0x02), Some(FormFactor::In3_5));
        assert_eq!(FormFactor::from_code(0x00), None);
        assert_eq!(FormFactor::from_code(0x06), None);
    }

    #[test]
    fn a_solid_state_disk_is_not_called_a_3_5_inch_drive() {
        let ssd = DriveFacts {
            rotational: Some(false),
            ..DriveFacts::default()
        };
        let d = Drive::identified(&ssd);
        assert_eq!(d.preset, DEFAULT_PRESET);
        assert!(d.why.contains("a solid-state disk"), "{}", d.why);
        assert!(!d.why.contains("3.5-inch"), "{}", d.why);
        let spinning = DriveFacts {
            rotational: Some(true),
            ..DriveFacts::default()
        };
        assert!(
            Drive::identified(&spinning)
                .why
                .contains("a modern 3.5-inch drive")
        );
    }

    #[test]
    fn spins_prefers_the_drives_word_over_the_kernels() {
        let ssd = DriveFacts {
            rotation: Some(Rotation::NonRotating),
            rotational: Some(true),
            ..DriveFacts::default()
        };
        assert_eq!(ssd.spins(), Some(false));
        let kernel_only = DriveFacts {
            rotational: Some(false),
            ..DriveFacts::default()
        };
        assert_eq!(kernel_only.spins(), Some(false));
        assert_eq!(DriveFacts::default().spins(), None);
    }
}
