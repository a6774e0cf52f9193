//! A drive's profile: the drive and its break-even times B, worked out
//! once. It is the one source of B for the daemon's controller, the
//! standby gate, `lull replay`, `lull rank` and `lull plan`.
//!
//! B has one definition per kind of work ([`Work`]):
//!
//! - [`Work::Standby`]: the power model's break-even,
//!   [`PowerModel::break_even`], the one place the formula of SPEC §4.2
//!   is written (72 s for `wd-red-plus`);
//! - [`Work::Io`]: the service model's random 8 KiB access time,
//!   [`ServiceModel::break_even`] (17.7 ms for `wd-red-plus`): a step of
//!   background work delays a foreground request by about this much.
//!
//! A [`DriveProfile`] holds a [`Drive`] (what the drive is: its preset,
//! power and service models, and where they came from) with both B
//! values, checked as a network needs them ([`DriveProfile::break_even`]).
//! Every consumer asks the profile: no code outside [`crate::power`]
//! writes the formula out (`crates/lull/tests/one_break_even.rs` checks
//! it). What is written to files (`breakeven_s` in the state file and
//! the activity log's shadow, `breakeven_ns` in a learned snapshot) is
//! read off the profile's B where it is written.

use std::fmt;

use lull_core::time::Nanos;

use crate::device::ServiceModel;
use crate::drive::{Drive, DriveError, MIN_BREAK_EVEN, PresetSource, Work};
use crate::gate::StandbyGate;
use crate::power::PowerModel;

/// A drive with its break-even times B for standby and for I/O: the one
/// source of B (see the [module docs](self)).
///
/// Its fields are private, so B cannot go stale: the models it was
/// worked out from are only read ([`DriveProfile::drive`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DriveProfile {
    drive: Drive,
    standby: Result<Nanos, DriveError>,
    io: Result<Nanos, DriveError>,
}

impl DriveProfile {
    /// The profile of `drive`: both B values worked out and checked.
    pub fn new(drive: Drive) -> DriveProfile {
        let standby = checked(&drive, Work::Standby);
        let io = checked(&drive, Work::Io);
        DriveProfile { drive, standby, io }
    }

    /// The profile of the drive `spec` names ([`Drive::from_spec`]).
    pub fn from_spec(spec: &str, source: PresetSource) -> Result<DriveProfile, DriveError> {
        Drive::from_spec(spec, source).map(DriveProfile::new)
    }

    /// The drive: its preset, models, source and why.
    pub fn drive(&self) -> &Drive {
        &self.drive
    }

    /// The drive, giving the profile up.
    pub fn into_drive(self) -> Drive {
        self.drive
    }

    /// The preset name (with `+custom` when overridden), or `custom`.
    pub fn preset(&self) -> &str {
        &self.drive.preset
    }

    /// The power model, if the drive has one.
    pub fn power(&self) -> Option<&PowerModel> {
        self.drive.power.as_ref()
    }

    /// The service-time model.
    pub fn service(&self) -> &ServiceModel {
        &self.drive.service
    }

    /// Where the preset came from.
    pub fn source(&self) -> PresetSource {
        self.drive.source
    }

    /// Why the drive is this preset, in words.
    pub fn why(&self) -> &str {
        &self.drive.why
    }

    /// The break-even time B for `work`. An error for spin-down on a
    /// drive without a power model, and for a B no network can scale
    /// with: under [`MIN_BREAK_EVEN`] (a custom drive whose spin-up
    /// costs nothing has B = 0, and every B-relative time, `auto`'s
    /// shortest idle period B/32 among them, would be 0) or too long to
    /// count in nanoseconds (about 584 years: figures off by orders of
    /// magnitude). Refused here, where the drive is named, rather than
    /// later by a component of the network.
    pub fn break_even(&self, work: Work) -> Result<Nanos, DriveError> {
        match work {
            Work::Standby => self.standby.clone(),
            Work::Io => self.io.clone(),
        }
    }

    /// B for spinning down: [`DriveProfile::break_even`] of
    /// [`Work::Standby`].
    pub fn standby(&self) -> Result<Nanos, DriveError> {
        self.break_even(Work::Standby)
    }

    /// B for work that moves I/O: [`DriveProfile::break_even`] of
    /// [`Work::Io`].
    pub fn io(&self) -> Result<Nanos, DriveError> {
        self.break_even(Work::Io)
    }

    /// The daemon's checks before a standby of this drive: its standby B
    /// (none when it has none) and the wear budget `max_spindowns_per_day`.
    pub fn standby_gate(&self, max_spindowns_per_day: Option<u32>) -> StandbyGate {
        StandbyGate {
            break_even: self.standby.as_ref().ok().copied(),
            max_spindowns_per_day,
        }
    }
}

impl From<Drive> for DriveProfile {
    fn from(drive: Drive) -> DriveProfile {
        DriveProfile::new(drive)
    }
}

impl fmt::Display for DriveProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.drive.fmt(f)
    }
}

/// A figure as a person reads it in an error: four significant digits,
/// in exponent form when it is very large or small (`1e300` is not
/// written out in 300 digits).
fn figure(x: f64) -> String {
    if x == 0.0 || (x.is_finite() && (1e-3..1e6).contains(&x.abs())) {
        lull_core::registry::significant(x, 4)
    } else {
        format!("{x:.3e}")
    }
}

/// B of `drive` for `work`, checked (see [`DriveProfile::break_even`]).
fn checked(drive: &Drive, work: Work) -> Result<Nanos, DriveError> {
    let (seconds, how) = match work {
        Work::Standby => match &drive.power {
            Some(p) => (
                p.break_even_s(),
                format!(
                    "for spin-down, p_spinup·t_spinup / (p_active − p_sleep) = {} J / {} W",
                    figure(p.spinup_energy()),
                    figure(p.p_active - p.p_sleep)
                ),
            ),
            None => {
                return Err(DriveError(format!(
                    "drive {} has no power model, so spin-down has no break-even time (name a power preset: {})",
                    drive.preset,
                    crate::power::PRESETS.join(", ")
                )));
            }
        },
        Work::Io => (
            drive.service.break_even().as_secs_f64(),
            "for work that moves I/O, a random 8 KiB access".to_string(),
        ),
    };
    let b = Nanos::from_secs_f64(seconds);
    if b < MIN_BREAK_EVEN {
        return Err(DriveError(format!(
            "drive {}: its break-even time B is {b} ({how}), under the {MIN_BREAK_EVEN} a network needs: every time in a network is a multiple or fraction of B (`auto` waits for B/32), so give the drive's real figures",
            drive.preset
        )));
    }
    if b == Nanos::MAX || !seconds.is_finite() {
        return Err(DriveError(format!(
            "drive {}: its break-even time B is {} s ({how}), more than lull can count in nanoseconds (584 years): check the drive's figures",
            drive.preset,
            figure(seconds)
        )));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The profile's standby B is the power model's, for every preset and
    /// for the lab's default drive. That the power model's is SPEC §4.2's
    /// formula is `crate::power`'s test
    /// (`break_even_is_the_spec_formula_for_every_preset`), where the
    /// formula is written.
    #[test]
    fn standby_b_is_the_power_models_for_every_preset() {
        for &name in crate::power::PRESETS {
            let model = PowerModel::preset(name).unwrap();
            let p = DriveProfile::from_spec(name, PresetSource::Config).unwrap();
            assert_eq!(p.power(), Some(&model), "{name}");
            assert_eq!(p.standby().unwrap(), model.break_even(), "{name}");
            assert_eq!(p.break_even(Work::Standby), p.standby(), "{name}");
            let gate = p.standby_gate(Some(3));
            assert_eq!(gate.break_even, Some(model.break_even()), "{name}");
            assert_eq!(gate.max_spindowns_per_day, Some(3));
        }
        let lab = DriveProfile::new(Drive::lab_default());
        assert_eq!(lab.standby().unwrap(), PowerModel::paper().break_even());
        assert_eq!(lab.standby().unwrap(), Nanos::from_secs(3));
    }

    /// The profile's I/O B is the service model's, for every preset.
    #[test]
    fn io_b_is_the_service_models_for_every_preset() {
        for name in crate::drive::known_presets() {
            let p = DriveProfile::from_spec(name, PresetSource::Config).unwrap();
            assert_eq!(p.io().unwrap(), p.service().break_even(), "{name}");
        }
    }

    #[test]
    fn a_named_drive_has_both_b() {
        let d = DriveProfile::from_spec("wd-red-plus", PresetSource::Config).unwrap();
        assert_eq!(d.preset(), "wd-red-plus");
        let b = d.break_even(Work::Standby).unwrap().as_secs_f64();
        assert!((b - 210.0 / 2.9).abs() < 1e-6, "{b}");
        let io = d.break_even(Work::Io).unwrap();
        assert_eq!(io, ServiceModel::default_model().break_even());
    }

    #[test]
    fn the_paper_drive_named_is_the_lab_default() {
        // Naming the lab's default drive gives that drive: the same B for
        // every kind of work (a trial's `--device paper-2.5in` timed
        // writeback with hp97560's 28 ms where the default had 17.7 ms).
        let named = DriveProfile::from_spec("paper-2.5in", PresetSource::Config).unwrap();
        let default = DriveProfile::new(Drive::lab_default());
        for work in [Work::Standby, Work::Io] {
            assert_eq!(
                named.break_even(work).unwrap(),
                default.break_even(work).unwrap()
            );
        }
    }

    #[test]
    fn a_drive_without_a_power_model_has_no_standby_b() {
        let hp = DriveProfile::from_spec("hp97560", PresetSource::Config).unwrap();
        assert!(hp.power().is_none());
        let e = hp.standby().unwrap_err().to_string();
        assert!(e.contains("no power model"), "{e}");
        assert!(hp.io().is_ok());
        assert_eq!(hp.standby_gate(None), StandbyGate::default());
    }

    #[test]
    fn a_b_no_network_can_scale_with_is_refused() {
        let free = "p_active=2,p_sleep=1,p_spinup=0,t_spinup=1s,t_spindown=1s";
        let p = DriveProfile::from_spec(free, PresetSource::Config).unwrap();
        let e = p.standby().unwrap_err().to_string();
        assert!(e.contains("under the 32ns"), "{e}");
        // The I/O B of the same drive stands.
        assert!(p.io().is_ok());
        let huge = "p_active=2,p_sleep=1,p_spinup=1e300,t_spinup=1s,t_spindown=1s";
        let e = DriveProfile::from_spec(huge, PresetSource::Config)
            .unwrap()
            .standby()
            .unwrap_err()
            .to_string();
        assert!(e.contains("584 years") && e.contains("1.000e300"), "{e}");
    }

    #[test]
    fn nothing_known_is_never_the_papers_laptop_drive() {
        for d in [
            Drive::fallback(),
            Drive::identified(&crate::drive::DriveFacts::default()),
        ] {
            let p = DriveProfile::new(d);
            let b = p.standby().unwrap();
            assert!(b > Nanos::from_secs(30), "{p}: B = {b}");
            assert_eq!(p.source(), PresetSource::Default);
        }
    }
}
