//! Drive facts the controller reasons about: its power state and how
//! standby reaches it. The shell's `drive` module runs `hdparm` and
//! `syncfs`; these are the data types and pure parsers it shares.

/// A drive's power state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerState {
    /// Spinning (active or idle).
    Active,
    /// Spun down.
    Standby,
    /// The device does not say.
    Unknown,
}

/// The power state in `hdparm -C`'s output.
pub fn hdparm_power_state(text: &str) -> PowerState {
    let Some(state) = text
        .lines()
        .find_map(|l| l.split_once("drive state is:").map(|(_, s)| s.trim()))
    else {
        return PowerState::Unknown;
    };
    if state.contains("standby") || state.contains("sleeping") {
        PowerState::Standby
    } else if state.contains("active") || state.contains("idle") {
        PowerState::Active
    } else {
        PowerState::Unknown
    }
}

/// How `standby` talks to the drive (the transports are described in
/// [`crate::transport`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Probe, without waking the drive, which transport it answers
    /// (ATA PASS-THROUGH 16, 12, SCSI, `hdparm`), remember it in the
    /// state file and log it once; a drive that answers none is left
    /// alone.
    Auto,
    /// `hdparm -y` (one process per spin-down; no power-state checks).
    Hdparm,
    /// Native SG_IO, each command in turn until one is not refused: ATA
    /// PASS-THROUGH (16), then (12), then SCSI START STOP UNIT.
    Sgio,
    /// ATA PASS-THROUGH (16) only (SATA disks, most SAT USB bridges).
    Ata16,
    /// ATA PASS-THROUGH (12) only (USB bridges that reject the 16-byte
    /// command, JMicron's among them).
    Ata12,
    /// SCSI only: START STOP UNIT with the STANDBY power condition, power
    /// state by REQUEST SENSE (SAS disks).
    Scsi,
}

/// The backend's name as configured.
pub fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Auto => "auto",
        Backend::Hdparm => "hdparm",
        Backend::Sgio => "sgio",
        Backend::Ata16 => "ata16",
        Backend::Ata12 => "ata12",
        Backend::Scsi => "scsi",
    }
}
