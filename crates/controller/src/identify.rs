//! What a drive says it is: the command blocks that ask it and the
//! parsers of its answers (INQUIRY, VPD pages, IDENTIFY DEVICE, the power
//! condition pages), and the `Identity` the state file keeps. The shell's
//! `identify` module sends the commands.

use lull_core::time::Nanos;
use lull_tasks::drive::{DriveFacts, FormFactor, Rotation};
use serde::{Deserialize, Serialize};

/// Operation code of INQUIRY (SPC-4 6.6).
pub const OP_INQUIRY: u8 = 0x12;
/// ATA IDENTIFY DEVICE (ACS-3 7.12).
pub const ATA_IDENTIFY_DEVICE: u8 = 0xEC;
/// The PROTOCOL field value PIO Data-In (SAT: 4h).
const PROTOCOL_PIO_DATA_IN: u8 = 4;
/// Byte 2 of an ATA PASS-THROUGH reading one 512-byte block: T_DIR (bit
/// 3, from the device), BYTE_BLOCK (bit 2, lengths in blocks), T_LENGTH
/// (bits 1:0 = 2h, the length is in the COUNT field).
const DATA_IN_ONE_BLOCK: u8 = (1 << 3) | (1 << 2) | 2;

/// INQUIRY (SPC-4 6.6) for `alloc` bytes: the standard data (`page` =
/// `None`) or the vital product data page `page` (EVPD = 1).
///
/// Byte 0 operation code 12h; byte 1 bit 0 EVPD; byte 2 PAGE CODE; bytes
/// 3–4 ALLOCATION LENGTH (big-endian); byte 5 CONTROL (0).
pub fn inquiry(page: Option<u8>, alloc: u16) -> [u8; 6] {
    let [hi, lo] = alloc.to_be_bytes();
    [
        OP_INQUIRY,
        u8::from(page.is_some()),
        page.unwrap_or(0),
        hi,
        lo,
        0,
    ]
}

/// ATA IDENTIFY DEVICE in ATA PASS-THROUGH (16) (SAT 13.2.3): PROTOCOL
/// PIO Data-In (byte 1 = 4h << 1), T_DIR, BYTE_BLOCK and T_LENGTH = 2h
/// (byte 2), COUNT 1 (byte 6), COMMAND ECh (byte 14).
pub fn identify_16() -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0] = crate::cdb::OP_ATA_PASS_THROUGH_16;
    c[1] = PROTOCOL_PIO_DATA_IN << 1;
    c[2] = DATA_IN_ONE_BLOCK;
    c[6] = 1;
    c[14] = ATA_IDENTIFY_DEVICE;
    c
}

/// ATA IDENTIFY DEVICE in ATA PASS-THROUGH (12) (SAT 13.2.2): the same
/// fields, COUNT in byte 4 and COMMAND in byte 9.
pub fn identify_12() -> [u8; 12] {
    let mut c = [0u8; 12];
    c[0] = crate::cdb::OP_ATA_PASS_THROUGH_12;
    c[1] = PROTOCOL_PIO_DATA_IN << 1;
    c[2] = DATA_IN_ONE_BLOCK;
    c[4] = 1;
    c[9] = ATA_IDENTIFY_DEVICE;
    c
}

/// Operation code of MODE SENSE (10) (SPC-4 6.12).
pub const OP_MODE_SENSE_10: u8 = 0x5A;
/// ATA READ LOG EXT (ACS-3 7.24).
pub const ATA_READ_LOG_EXT: u8 = 0x2F;
/// The Power Conditions log's address (ACS-3 9.12).
pub const POWER_CONDITIONS_LOG: u8 = 0x08;
/// Its page of the Standby_y and Standby_z descriptors.
pub const STANDBY_CONDITIONS_PAGE: u8 = 0x01;
/// The Power Condition mode page's code (SPC-4 7.5.13).
pub const POWER_CONDITION_MODE_PAGE: u8 = 0x1A;
/// Bytes asked of MODE SENSE (10): the 8-byte header, no block
/// descriptors (DBD), and the 40-byte page.
const MODE_SENSE_ALLOC: u16 = 8 + 40;

/// MODE SENSE (10) of the current values of the Power Condition mode page
/// (SPC-4 6.12): byte 1 DBD (bit 3: no block descriptors); byte 2 PC 00b
/// (current) and PAGE CODE 1Ah; bytes 7–8 ALLOCATION LENGTH.
pub fn mode_sense_power() -> [u8; 10] {
    let [hi, lo] = MODE_SENSE_ALLOC.to_be_bytes();
    [
        OP_MODE_SENSE_10,
        1 << 3,
        POWER_CONDITION_MODE_PAGE,
        0,
        0,
        0,
        0,
        hi,
        lo,
        0,
    ]
}

/// How many bytes [`mode_sense_power`] asks for.
pub fn mode_sense_power_len() -> usize {
    usize::from(MODE_SENSE_ALLOC)
}

/// ATA READ LOG EXT of one 512-byte page `page` of log `log`, in ATA
/// PASS-THROUGH (16) (SAT 13.2.3): PROTOCOL PIO Data-In with EXTEND (a
/// 48-bit command; byte 1), the lengths as for IDENTIFY (byte 2), COUNT 1
/// (byte 6), LBA 7:0 the log address (byte 8), LBA 15:8 the page (byte 10),
/// COMMAND 2Fh (byte 14).
pub fn read_log_ext_16(log: u8, page: u8) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0] = crate::cdb::OP_ATA_PASS_THROUGH_16;
    c[1] = (PROTOCOL_PIO_DATA_IN << 1) | 1;
    c[2] = DATA_IN_ONE_BLOCK;
    c[6] = 1;
    c[8] = log;
    c[10] = page;
    c[14] = ATA_READ_LOG_EXT;
    c
}

/// A drive's own Standby_z timer: after `timer_ms` of idleness an enabled
/// one spins the drive down, whatever lull decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandbyTimer {
    /// Whether the timer is enabled (the current setting).
    pub enabled: bool,
    /// Its current setting, in milliseconds (the standards count 100 ms).
    pub timer_ms: u64,
}

impl StandbyTimer {
    fn new(enabled: bool, hundreds_of_ms: u32) -> Self {
        StandbyTimer {
            enabled,
            timer_ms: u64::from(hundreds_of_ms) * 100,
        }
    }

    /// The timer in words: `after 10 min`.
    fn after(self) -> String {
        format!("after {}", Nanos::from_millis(self.timer_ms).approx())
    }
}

/// The Standby_z timer in page 01h of an ATA drive's Power Conditions log
/// (ACS-3 9.12): the Standby_z descriptor is the page's bytes 448–511;
/// its byte 1 holds POWER CONDITION SUPPORTED (bit 7) and CURRENT TIMER
/// ENABLED (bit 2), bytes 12–15 CURRENT TIMER SETTING (little-endian, in
/// 100 ms). `None` when the page is short or the condition not supported.
pub fn parse_power_conditions_standby(page: &[u8]) -> Option<StandbyTimer> {
    let d = page.get(448..512)?;
    if d[1] & 0x80 == 0 {
        return None;
    }
    let timer = u32::from_le_bytes([d[12], d[13], d[14], d[15]]);
    Some(StandbyTimer::new(d[1] & 0x04 != 0, timer))
}

/// The Standby_z timer in MODE SENSE (10) data of the Power Condition
/// mode page (SPC-4 7.5.13): after the 8-byte header and BLOCK DESCRIPTOR
/// LENGTH (bytes 6–7) bytes of descriptors, the page (byte 0, bits 5:0:
/// 1Ah) has STANDBY_Z in byte 3 bit 0 and the STANDBY_Z CONDITION TIMER in
/// bytes 8–11 (big-endian, in 100 ms), where SPC-3's shorter page had its
/// STANDBY bit and timer. `None` when the data is short or another page.
pub fn parse_mode_power(data: &[u8]) -> Option<StandbyTimer> {
    let descriptors = usize::from(u16::from_be_bytes([*data.get(6)?, *data.get(7)?]));
    let page = data.get(8 + descriptors..)?;
    if page.first()? & 0x3F != POWER_CONDITION_MODE_PAGE || *page.get(1)? < 0x0A {
        return None;
    }
    let p = page.get(..12)?;
    let timer = u32::from_be_bytes([p[8], p[9], p[10], p[11]]);
    Some(StandbyTimer::new(p[3] & 0x01 != 0, timer))
}

/// What ATA IDENTIFY DEVICE data says (ACS-3 7.12.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtaIdentity {
    /// Words 27–46, trimmed.
    pub model: String,
    /// Words 10–19, trimmed.
    pub serial: String,
    /// Word 217.
    pub rotation: Rotation,
    /// Word 168, bits 3:0.
    pub form_factor: Option<FormFactor>,
    /// The Advanced Power Management feature set (words 83, 86, 91):
    /// `None` when not supported, or when the words are not marked valid.
    pub apm: Option<Apm>,
    /// Whether the Extended Power Conditions feature set is enabled (word
    /// 120 bit 7); `None` when not supported (word 119 bit 7).
    pub epc_enabled: Option<bool>,
}

/// The drive's own Advanced Power Management (ACS-3 4.6), which a drive
/// applies by itself: levels 01h–7Fh let it enter Standby (spin down)
/// after an idle time of its own choosing, 80h–FEh do not (`hdparm -B`
/// sets it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Apm {
    /// Supported, not enabled (word 86 bit 3 clear).
    Disabled,
    /// Enabled at this level (word 91, bits 7:0).
    Level(u8),
}

impl Apm {
    /// Whether the drive may spin itself down at this setting.
    pub fn allows_standby(self) -> bool {
        matches!(self, Apm::Level(1..=0x7F))
    }
}

/// An ATA string: `words` 16-bit words, the first character in the high
/// byte of each (ACS-3 3.4.9), trimmed of spaces and NULs; `None` when
/// empty or not printable ASCII.
fn ata_string(data: &[u8], first_word: usize, words: usize) -> Option<String> {
    let bytes = data.get(2 * first_word..2 * (first_word + words))?;
    let mut s = String::with_capacity(2 * words);
    for pair in bytes.chunks_exact(2) {
        s.push(char::from(pair[1]));
        s.push(char::from(pair[0]));
    }
    printable(&s)
}

/// `s` trimmed, if it is non-empty printable ASCII.
fn printable(s: &str) -> Option<String> {
    let t = s.trim_matches(|c: char| c == ' ' || c == '\0');
    (!t.is_empty() && t.chars().all(|c| c.is_ascii_graphic() || c == ' ')).then(|| t.to_string())
}

fn word(data: &[u8], w: usize) -> u16 {
    data.get(2 * w..2 * w + 2)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
}

/// Parses 512 bytes of IDENTIFY DEVICE data (16-bit words, little-endian,
/// as SG_IO returns them). `None` when the data is not a usable answer:
/// shorter than 512 bytes, an ATAPI device (word 0 bit 15), a failed
/// integrity word (word 255: signature A5h in bits 7:0, and the checksum
/// in bits 15:8 making all 512 bytes sum to 0 modulo 256), or no model.
pub fn parse_identify(data: &[u8]) -> Option<AtaIdentity> {
    let data = data.get(..512)?;
    if word(data, 0) & 0x8000 != 0 {
        return None;
    }
    if data[510] == 0xA5 && data.iter().fold(0u8, |a, &b| a.wrapping_add(b)) != 0 {
        return None;
    }
    // Words 83, 87 and 119, 120 hold meaning only with bits 15:14 = 01b.
    let valid = |w: usize| word(data, w) & 0xC000 == 0x4000;
    let apm = (valid(83) && word(data, 83) & 0x0008 != 0 && valid(87)).then(|| {
        if word(data, 86) & 0x0008 != 0 {
            Apm::Level((word(data, 91) & 0xff) as u8)
        } else {
            Apm::Disabled
        }
    });
    let epc_enabled = (valid(119) && word(data, 119) & 0x0080 != 0)
        .then(|| valid(120) && word(data, 120) & 0x0080 != 0);
    Some(AtaIdentity {
        model: ata_string(data, 27, 20)?,
        serial: ata_string(data, 10, 10).unwrap_or_default(),
        rotation: Rotation::from_code(word(data, 217)),
        form_factor: FormFactor::from_code((word(data, 168) & 0x0f) as u8),
        apm,
        epc_enabled,
    })
}

/// What standard INQUIRY data says (SPC-4 6.6.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inquiry {
    /// PERIPHERAL DEVICE TYPE (byte 0, bits 4:0): 0 a direct-access
    /// block device.
    pub device_type: u8,
    /// T10 VENDOR IDENTIFICATION (bytes 8–15), trimmed.
    pub vendor: String,
    /// PRODUCT IDENTIFICATION (bytes 16–31), trimmed.
    pub product: String,
}

/// Parses standard INQUIRY data; `None` when shorter than 32 bytes or the
/// product is not printable.
pub fn parse_inquiry(data: &[u8]) -> Option<Inquiry> {
    let d = data.get(..32)?;
    let text = |r: std::ops::Range<usize>| String::from_utf8_lossy(&d[r]).into_owned();
    Some(Inquiry {
        device_type: d[0] & 0x1f,
        vendor: printable(&text(8..16)).unwrap_or_default(),
        product: printable(&text(16..32))?,
    })
}

/// The payload of VPD page `page`: bytes 4 to 4 + PAGE LENGTH (bytes 2–3),
/// if byte 1 is `page` and the length fits.
fn vpd(data: &[u8], page: u8) -> Option<&[u8]> {
    if data.len() < 4 || data[1] != page {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([data[2], data[3]]));
    data.get(4..4 + len)
}

/// The PRODUCT SERIAL NUMBER of a Unit Serial Number VPD page (80h),
/// trimmed; `None` when absent or blank.
pub fn parse_vpd_serial(data: &[u8]) -> Option<String> {
    printable(&String::from_utf8_lossy(vpd(data, 0x80)?))
}

/// MEDIUM ROTATION RATE and NOMINAL FORM FACTOR of a Block Device
/// Characteristics VPD page (B1h).
pub fn parse_vpd_characteristics(data: &[u8]) -> Option<(Rotation, Option<FormFactor>)> {
    let p = vpd(data, 0xB1)?;
    let rate = u16::from_be_bytes([*p.first()?, *p.get(1)?]);
    Some((
        Rotation::from_code(rate),
        p.get(3).and_then(|&b| FormFactor::from_code(b & 0x0f)),
    ))
}

/// The IDENTIFY DEVICE data inside an ATA Information VPD page (89h),
/// bytes 60–571.
pub fn parse_vpd_ata_information(data: &[u8]) -> Option<AtaIdentity> {
    vpd(data, 0x89)?;
    parse_identify(data.get(60..572)?)
}

/// What identification found out about a drive, as the state file keeps
/// it (so a restart does not ask again).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Identity {
    /// The model string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The serial number: what the state and the activity log follow the
    /// drive by; for a drive that gave none, the name sysfs has for it
    /// (the shell's `sysfs_serial`: `wwid …`, `serial …`, `usb VID:PID SERIAL, N
    /// sectors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// The rotation-rate field as reported (0 none, 1 non-rotating, else rpm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation_code: Option<u16>,
    /// The form-factor code as reported (bits 3:0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form_factor_code: Option<u8>,
    /// The kernel's `queue/rotational`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// The drive's Advanced Power Management setting, from its IDENTIFY
    /// data (absent: not supported, or no IDENTIFY data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apm: Option<Apm>,
    /// Whether its Extended Power Conditions feature set is enabled
    /// (absent: not supported, or no IDENTIFY data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epc_enabled: Option<bool>,
    /// Its own Standby_z timer (step 6 of the module docs; absent: not
    /// asked, not supported or no answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standby_z: Option<StandbyTimer>,
    /// Which commands answered (`INQUIRY, VPD 80h, VPD B1h`).
    pub via: String,
    /// The device numbers it was asked on (`major:minor`).
    pub device: String,
    /// The kernel name it was asked on.
    pub kernel: String,
    /// Which questions it answers ([`IDENTITY_LAYOUT`]; 0 in a state file
    /// written before the field): a restart reuses a remembered identity
    /// only of the current layout, so a drive identified by an older lull
    /// is asked once more for what it did not ask then (its APM level).
    pub layout: u32,
}

/// The layout the shell's `identify` answers now: 1 added the drive's APM and EPC,
/// 2 its Standby_z timer.
pub const IDENTITY_LAYOUT: u32 = 2;

impl Identity {
    /// The facts the preset resolution uses.
    pub fn facts(&self) -> DriveFacts {
        DriveFacts {
            model: self.model.clone(),
            rotation: self.rotation_code.map(Rotation::from_code),
            form_factor: self.form_factor_code.and_then(FormFactor::from_code),
            rotational: self.rotational,
        }
    }

    /// The key the state file follows the drive by: `serial:…` when the
    /// drive has a serial number.
    pub fn key(&self) -> Option<String> {
        self.serial.as_ref().map(|s| format!("serial:{s}"))
    }

    /// The drive's own power management in words, when it reported any:
    /// its APM level (and whether that lets it spin itself down) and
    /// whether EPC is enabled.
    pub fn power_management(&self) -> Option<String> {
        let apm = self.apm.map(|a| match a {
            Apm::Disabled => "APM disabled".to_string(),
            Apm::Level(l) if a.allows_standby() => {
                format!("APM level {l}: the drive may spin itself down")
            }
            Apm::Level(l) => format!("APM level {l}: no standby of its own"),
        });
        let epc = match (self.epc_enabled, self.standby_z) {
            (_, Some(z)) if z.enabled => Some(format!(
                "Standby_z timer {}: the drive spins itself down",
                z.after()
            )),
            (Some(true), Some(_)) => {
                Some("EPC enabled: its own idle timers, Standby_z off".to_string())
            }
            (Some(true), None) => {
                Some("EPC enabled: its own idle timers, and its Standby_z timer if set".to_string())
            }
            _ => None,
        };
        joined(apm, epc, "; ")
    }

    /// The drive's APM level, when it lets the drive spin itself down
    /// (01h–7Fh).
    pub fn self_standby_level(&self) -> Option<u8> {
        match self.apm {
            Some(a @ Apm::Level(l)) if a.allows_standby() => Some(l),
            _ => None,
        }
    }

    /// Its Standby_z timer, when enabled.
    pub fn self_standby_timer(&self) -> Option<StandbyTimer> {
        self.standby_z.filter(|z| z.enabled)
    }

    /// Whether the drive may spin itself down regardless of lull: an APM
    /// level that allows it, or an enabled Standby_z timer.
    pub fn spins_itself_down(&self) -> bool {
        self.self_standby_level().is_some() || self.self_standby_timer().is_some()
    }

    /// What lets the drive spin itself down, in a few words for a log line
    /// (`the drive's APM level 127 lets it spin itself down`).
    pub fn self_standby_reason(&self) -> Option<String> {
        let apm = self
            .self_standby_level()
            .map(|l| format!("the drive's APM level {l} lets it spin itself down"));
        let z = self
            .self_standby_timer()
            .map(|z| format!("its Standby_z timer spins it down {}", z.after()));
        joined(apm, z, ", ")
    }

    /// The commands that leave spin-down to lull, when the drive may spin
    /// itself down ([`Identity::spins_itself_down`]).
    pub fn own_standby_fix(&self) -> Option<String> {
        let apm = self
            .self_standby_level()
            .map(|_| format!("`hdparm -B 254 /dev/{}`", self.kernel));
        let z = self.self_standby_timer().map(|_| {
            format!(
                "`openSeaChest_PowerControl -d /dev/{} --standby_z disable`",
                self.kernel
            )
        });
        joined(apm, z, " and ")
    }

    /// Why the drive may spin itself down regardless of lull, when its
    /// APM level allows it ([`Identity::self_standby_level`]) or its
    /// Standby_z timer is enabled: for a warning with the fix.
    pub fn own_standby(&self) -> Option<String> {
        let apm = self.self_standby_level().map(|level| {
            format!(
                "the drive's own APM level is {level} (1–127 let a drive spin itself down): its spin-downs \
                 compete with lull's decisions and show as \"found in standby\"; `hdparm -B 254 /dev/{}` \
                 (or 128–253 to keep its other power saving) leaves spin-down to lull",
                self.kernel
            )
        });
        let z = self.self_standby_timer().map(|z| {
            format!(
                "the drive's own EPC Standby_z timer spins it down {} of idleness: its spin-downs compete \
                 with lull's decisions and show as \"found in standby\"; `openSeaChest_PowerControl -d /dev/{} \
                 --standby_z disable` leaves spin-down to lull (`--showEPCSettings` shows its timers)",
                z.after(),
                self.kernel
            )
        });
        joined(apm, z, "; and ")
    }

    /// Gives a drive that answered no serial number `found`, the name
    /// sysfs has for it and where that name came from, as its serial: the
    /// state file and the activity log then follow it across kernel names
    /// as they follow a drive's own. A drive with a serial is left as it
    /// is. The shell reads sysfs (`name_from_sysfs` in its `identify`).
    pub fn name_from(&mut self, found: Option<(String, &'static str)>) {
        if self.serial.is_none()
            && let Some((name, via)) = found
        {
            self.serial = Some(name);
            self.note(via);
        }
    }

    /// Forgets this drive's serial number (the drive at kernel name
    /// `kernel`) when another drive of `others` (kernel name, identity)
    /// gives the same one, and returns that drive's kernel name: two
    /// enclosures whose bridges give every unit one serial string
    /// (sysfs's name for a drive without its own), or drives with a
    /// firmware's placeholder serial. This one is then known by its key,
    /// as a drive without a serial is, rather than one taking the other's
    /// state and evidence. The daemon asks it of the disks it watches,
    /// `lulld --check` of those it reports.
    pub fn drop_shared_serial<'a>(
        &mut self,
        kernel: &str,
        others: impl IntoIterator<Item = (&'a str, &'a Identity)>,
    ) -> Option<&'a str> {
        let serial = self.serial.as_deref()?;
        let (twin, _) = others
            .into_iter()
            .find(|(k, i)| *k != kernel && i.serial.as_deref() == Some(serial))?;
        self.serial = None;
        Some(twin)
    }

    /// Takes what an IDENTIFY DEVICE answer says, noting `via` (the
    /// command that got it).
    pub fn take_ata(&mut self, a: AtaIdentity, via: &str) {
        self.apm = a.apm.or(self.apm);
        self.epc_enabled = a.epc_enabled.or(self.epc_enabled);
        self.model = Some(a.model);
        if !a.serial.is_empty() {
            self.serial = Some(a.serial);
        }
        let code = match a.rotation {
            Rotation::Unknown => None,
            Rotation::NonRotating => Some(1),
            Rotation::Rpm(r) => Some(r),
        };
        self.rotation_code = code.or(self.rotation_code);
        self.form_factor_code = a
            .form_factor
            .map(form_factor_code)
            .or(self.form_factor_code);
        self.note(via);
    }

    /// Adds `via` (a command or file that answered) to [`Identity::via`].
    pub fn note(&mut self, via: &str) {
        if !self.via.is_empty() {
            self.via.push_str(", ");
        }
        self.via.push_str(via);
    }

    /// Whether the answers so far name the drive well enough to stop
    /// asking.
    pub fn knows_enough(&self) -> bool {
        let model_known = self
            .model
            .as_deref()
            .is_some_and(|m| lull_tasks::drive::preset_for_model(m).is_some());
        model_known || self.rotation_code.is_some_and(|c| c == 1 || c >= 0x0401)
    }
}

/// Both texts joined by `sep`, or the one there is.
fn joined(a: Option<String>, b: Option<String>, sep: &str) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}{sep}{b}")),
        (a, b) => a.or(b),
    }
}

/// The NOMINAL FORM FACTOR code (SBC-4 VPD B1h) of `f`.
pub fn form_factor_code(f: FormFactor) -> u8 {
    match f {
        FormFactor::In5_25 => 1,
        FormFactor::In3_5 => 2,
        FormFactor::In2_5 => 3,
        FormFactor::In1_8 => 4,
        FormFactor::Below1_8 => 5,
    }
}
