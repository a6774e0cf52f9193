//! The ways lull reaches a disk's power management, and what the state
//! file remembers of the probe that chose one. The shell's `transport`
//! module probes and sends; this is the data and the rule
//! ([`left_alone`]) the controller shares with it.

use serde::{Deserialize, Serialize};

use crate::drive::Backend;

/// A way to reach a disk's power management.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// ATA commands in ATA PASS-THROUGH (16).
    Ata16,
    /// ATA commands in ATA PASS-THROUGH (12).
    Ata12,
    /// SCSI START STOP UNIT (STANDBY power condition) and REQUEST SENSE.
    Scsi,
    /// `hdparm -y` (no power checks).
    Hdparm,
    /// Nothing reaches the disk: it is left alone.
    None,
}

impl Transport {
    /// The SG_IO transports, in the order they are tried.
    pub const SG: [Transport; 3] = [Transport::Ata16, Transport::Ata12, Transport::Scsi];

    /// The name used in the config, the state file and the log.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Ata16 => "ata16",
            Transport::Ata12 => "ata12",
            Transport::Scsi => "scsi",
            Transport::Hdparm => "hdparm",
            Transport::None => "none",
        }
    }

    /// The command that reads the power state without changing it, and
    /// how many bytes it returns (SG_IO transports only).
    pub fn check_cdb(self) -> Option<(Vec<u8>, usize)> {
        match self {
            Transport::Ata16 => Some((
                crate::cdb::ata_pass_through_16(crate::cdb::ATA_CHECK_POWER_MODE, true).to_vec(),
                0,
            )),
            Transport::Ata12 => Some((
                crate::cdb::ata_pass_through_12(crate::cdb::ATA_CHECK_POWER_MODE, true).to_vec(),
                0,
            )),
            Transport::Scsi => Some((
                crate::cdb::request_sense(crate::cdb::REQUEST_SENSE_LEN).to_vec(),
                usize::from(crate::cdb::REQUEST_SENSE_LEN),
            )),
            Transport::Hdparm | Transport::None => None,
        }
    }

    /// The command that spins the disk down (SG_IO transports only).
    pub fn standby_cdb(self) -> Option<Vec<u8>> {
        match self {
            Transport::Ata16 => Some(
                crate::cdb::ata_pass_through_16(crate::cdb::ATA_STANDBY_IMMEDIATE, false).to_vec(),
            ),
            Transport::Ata12 => Some(
                crate::cdb::ata_pass_through_12(crate::cdb::ATA_STANDBY_IMMEDIATE, false).to_vec(),
            ),
            Transport::Scsi => Some(crate::cdb::start_stop_unit_standby().to_vec()),
            Transport::Hdparm | Transport::None => None,
        }
    }

    /// The power-state command, in words.
    /// (The shell names the command in its log lines.)
    pub fn check_name(self) -> &'static str {
        match self {
            Transport::Ata16 => "CHECK POWER MODE by ATA PASS-THROUGH (16)",
            Transport::Ata12 => "CHECK POWER MODE by ATA PASS-THROUGH (12)",
            Transport::Scsi => "SCSI REQUEST SENSE",
            Transport::Hdparm => "hdparm -C",
            Transport::None => "nothing",
        }
    }

    /// The standby command, in words.
    pub fn standby_name(self) -> &'static str {
        match self {
            Transport::Ata16 => "ATA PASS-THROUGH (16) STANDBY IMMEDIATE",
            Transport::Ata12 => "ATA PASS-THROUGH (12) STANDBY IMMEDIATE",
            Transport::Scsi => "SCSI START STOP UNIT (power condition STANDBY)",
            Transport::Hdparm => "hdparm -y",
            Transport::None => "nothing",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The transport an explicit `backend` names (`None` for `auto`, which
/// probes, and `sgio`, which tries the SG_IO transports in turn).
pub fn configured(b: Backend) -> Option<Transport> {
    match b {
        Backend::Ata16 => Some(Transport::Ata16),
        Backend::Ata12 => Some(Transport::Ata12),
        Backend::Scsi => Some(Transport::Scsi),
        Backend::Hdparm => Some(Transport::Hdparm),
        Backend::Auto | Backend::Sgio => None,
    }
}

/// The transport a probe found for a disk (the shell's `transport` module), and the
/// device it was found on: a disk that comes back with other device
/// numbers or under another kernel name (a by-id link pointing
/// elsewhere) is probed again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportMemo {
    /// `ata16`, `ata12`, `scsi`, `hdparm` or `none`.
    pub transport: Transport,
    /// The device numbers it was probed on (`major:minor`).
    #[serde(default)]
    pub device: String,
    /// The kernel name it was probed on (`sdb`).
    #[serde(default)]
    pub kernel: String,
    /// When (Unix seconds).
    #[serde(default)]
    pub probed_unix: u64,
    /// What answered, and what was refused before it.
    #[serde(default)]
    pub why: String,
}

/// Whether the daemon leaves a disk alone: `backend = "auto"` and its
/// probe found no transport.
pub fn left_alone(backend: Backend, memo: Option<&TransportMemo>) -> bool {
    backend == Backend::Auto && memo.is_some_and(|m| m.transport == Transport::None)
}
