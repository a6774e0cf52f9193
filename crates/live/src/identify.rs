//! Asking a drive what it is: its model, serial number, rotation rate and
//! form factor, through the transports the daemon already has.
//!
//! The answers choose the drive's preset and so its break-even time B
//! ([`lull_tasks::drive`]), tell a solid-state disk (never spun down)
//! from a rotating one, and give the serial number that the state file
//! keys a drive by, whatever kernel name it comes back under.
//!
//! # What is asked, in order
//!
//! | step | command | fields |
//! |---|---|---|
//! | 1 | SCSI INQUIRY (SPC-4 6.6), standard data | vendor (bytes 8–15), product (16–31) |
//! | 2 | INQUIRY, VPD page 80h Unit Serial Number (SPC-4 7.8.15) | serial (bytes 4…) |
//! | 3 | INQUIRY, VPD page B1h Block Device Characteristics (SBC-4 6.6.2) | MEDIUM ROTATION RATE (bytes 4–5), NOMINAL FORM FACTOR (byte 7, bits 3:0) |
//! | 4 | INQUIRY, VPD page 89h ATA Information (SAT-4 12.4.2) | the drive's IDENTIFY DEVICE data (bytes 60–571) |
//! | 5 | ATA IDENTIFY DEVICE (ACS-3 7.12) in ATA PASS-THROUGH (16), then (12), PIO data-in | model (words 27–46), serial (10–19), form factor (168), rotation rate (217), APM (83, 86, 87, 91), EPC (119, 120) |
//! | 6 | for a drive with EPC enabled: ATA READ LOG EXT (ACS-3 7.24) of the Power Conditions log (08h), page 01h, in ATA PASS-THROUGH (16); for a SCSI drive (no IDENTIFY data, VPD B1h answered): MODE SENSE (10) (SPC-4 6.12) of the Power Condition mode page (1Ah, SPC-4 7.5.13) | its own Standby_z timer: enabled, and after how long |
//! | 7 | `/sys/block/NAME/queue/rotational` | the kernel's rotational flag |
//! | 8 | sysfs: an NVMe namespace's `wwid`, a virtio disk's or card's `serial`, a USB enclosure's serial string ([`sysfs_serial`]) | a name for a drive that gave no serial number |
//!
//! Steps 1 to 4 are answered by the SCSI layer between host and drive
//! (libata answers them from the IDENTIFY data it read at probe time), so
//! they never reach the medium. Step 5 goes to the drive and is sent only
//! when steps 1–4 left the rotation rate, the model or the serial number
//! unknown (a USB bridge that implements no VPD pages); ACS lets a drive in standby
//! answer IDENTIFY DEVICE, but some spin up for it, so the daemon asks once
//! per appearance of a drive and keeps the answer in the state file. Step
//! 6 goes to the drive too, and only to a drive that can have the timer
//! (EPC enabled; a SCSI target that implements VPD pages, not a bare USB
//! bridge, which may not survive a mode page it does not know).
//! Every step that fails (an illegal request, SG_IO not supported on a
//! loop or NVMe device) is skipped; what was learnt is merged, ATA's answer
//! first.
//!
//! **The drive's own power management.** A drive whose Advanced Power
//! Management level is 01h–7Fh spins itself down after an idle time of
//! its own (many laptop and USB drives ship so, or a distribution sets it
//! with `hdparm -B`): those spin-downs compete with lull's decisions, and
//! the daemon finds the disk "in standby (spun down by something else)".
//! The IDENTIFY data says so (words 83 and 86 bit 3: supported and
//! enabled; word 91: the level), and the daemon and `lulld --check` warn
//! with the fix. Extended Power Conditions (words 119 and 120 bit 7) has
//! timers of its own, and the one that spins a drive down is Standby_z:
//! off by default, set by a vendor's firmware on some drives or by
//! `openSeaChest_PowerControl --standby_z`. Step 6 reads it where it
//! lives (an ATA drive's Power Conditions log, a SCSI drive's Power
//! Condition mode page, whose STANDBY bit and timer are Standby_z's since
//! SPC-4), and an enabled timer is warned of like an APM level that
//! allows standby. From VPD page 89h the IDENTIFY data is what libata
//! read when it last probed the drive (boot, replug, resume), so a level
//! set since then shows after the next probe; `hdparm -B /dev/sdX` reads
//! the current one. The log page and the mode page are the drive's
//! current settings.
//!
//! The parsers take byte slices and never panic on any input; the tests
//! pin them on fixtures laid out as the standards define them.

use std::path::Path;

#[cfg(test)]
use lull_tasks::drive::FormFactor;
use lull_tasks::drive::Rotation;

use crate::transport::Link;

pub use lull_controller::identify::*;

/// Reading sysfs for an [`Identity`]: the IO half of
/// [`Identity::name_from`].
pub trait NameFromSysfs {
    /// Gives a drive that answered no serial number the name sysfs has
    /// for it ([`sysfs_serial`]) as its serial: the state file and the
    /// activity log then follow it across kernel names as they follow a
    /// drive's own. Reads sysfs only; a drive with a serial is left as it
    /// is.
    fn name_from_sysfs(&mut self, sysfs: &Path, kernel: &str);
}

impl NameFromSysfs for Identity {
    fn name_from_sysfs(&mut self, sysfs: &Path, kernel: &str) {
        if self.serial.is_none() {
            self.name_from(sysfs_serial(sysfs, kernel));
        }
    }
}

/// Asks the drive behind `link` what it is (the steps of the module docs)
/// and reads `rotational` (the contents of `queue/rotational`, if the
/// caller could read it). `usb`: the disk is behind a USB bridge, which is
/// asked no mode page (the kernel asks a USB disk none it can skip: cheap
/// bridges hang on pages they do not know). Never fails: what could not be
/// learnt stays unknown.
pub fn identify(link: &mut dyn Link, rotational: Option<bool>, usb: bool) -> Identity {
    let mut id = Identity {
        rotational,
        layout: IDENTITY_LAYOUT,
        ..Identity::default()
    };
    // What answered: ATA IDENTIFY data (VPD 89h or a pass-through), and
    // the Block Device Characteristics page (a SCSI target that
    // implements VPD pages).
    let (mut ata, mut characteristics) = (false, false);
    let mut ask = |page: Option<u8>, alloc: u16| answer(link, &inquiry(page, alloc), alloc.into());
    if let Some(q) = ask(None, 96).as_deref().and_then(parse_inquiry) {
        let model = if q.vendor.is_empty() || q.vendor == "ATA" {
            q.product
        } else {
            format!("{} {}", q.vendor, q.product)
        };
        id.model = Some(model);
        id.note("INQUIRY");
    }
    if let Some(s) = ask(Some(0x80), 252).as_deref().and_then(parse_vpd_serial) {
        id.serial = Some(s);
        id.note("VPD 80h");
    }
    if let Some((rot, ff)) = ask(Some(0xB1), 64)
        .as_deref()
        .and_then(parse_vpd_characteristics)
    {
        if rot != Rotation::Unknown {
            id.rotation_code = Some(match rot {
                Rotation::NonRotating => 1,
                Rotation::Rpm(r) => r,
                Rotation::Unknown => 0,
            });
        }
        id.form_factor_code = ff.map(form_factor_code);
        id.note("VPD B1h");
        characteristics = true;
    }
    if let Some(a) = ask(Some(0x89), 572)
        .as_deref()
        .and_then(parse_vpd_ata_information)
    {
        id.take_ata(a, "VPD 89h");
        ata = true;
    }
    // A serial number is worth the question too: it is what the state
    // and the activity log follow the drive by.
    if !id.knows_enough() || id.serial.is_none() {
        for (cdb, via) in [
            (&identify_16()[..], "IDENTIFY (PASS-THROUGH 16)"),
            (&identify_12()[..], "IDENTIFY (PASS-THROUGH 12)"),
        ] {
            if let Some(a) = answer(link, cdb, 512).as_deref().and_then(parse_identify) {
                id.take_ata(a, via);
                ata = true;
                break;
            }
        }
    }
    // Step 6: the drive's own Standby_z timer, where it can have one.
    let standby_z = if ata && id.epc_enabled == Some(true) {
        let cdb = read_log_ext_16(POWER_CONDITIONS_LOG, STANDBY_CONDITIONS_PAGE);
        answer(link, &cdb, 512)
            .as_deref()
            .and_then(parse_power_conditions_standby)
            .map(|z| (z, "LOG 08h"))
    } else if !ata && characteristics && !usb {
        answer(link, &mode_sense_power(), mode_sense_power_len())
            .as_deref()
            .and_then(parse_mode_power)
            .map(|z| (z, "MODE PAGE 1Ah"))
    } else {
        None
    };
    if let Some((z, via)) = standby_z {
        id.standby_z = Some(z);
        id.note(via);
    }
    if id.rotational.is_some() {
        id.note("queue/rotational");
    }
    id
}

/// The data `cdb` brings back over `link` (up to `len` bytes), if the
/// command succeeded.
fn answer(link: &mut dyn Link, cdb: &[u8], len: usize) -> Option<Vec<u8>> {
    let r = link.send(cdb, len).ok()?;
    r.ok.then_some(r.data)
}

/// The kernel's rotational flag of disk `kernel` under the sysfs root
/// `sysfs` (`/sys`): `Some(false)` for `0`, `Some(true)` for `1`.
pub fn sysfs_rotational(sysfs: &Path, kernel: &str) -> Option<bool> {
    let text =
        std::fs::read_to_string(sysfs.join("block").join(kernel).join("queue/rotational")).ok()?;
    match text.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// A name that stays with the device behind disk `kernel` (under the
/// sysfs root `sysfs`) across reboots, ports and kernel names, for a
/// drive that answered no serial number of its own (an NVMe namespace,
/// which SG_IO does not reach; a virtio disk; a memory card; a USB bridge
/// that implements no VPD page 80h nor ATA pass-through), and how it was
/// found. In order:
///
/// | sysfs | name | what it is |
/// |---|---|---|
/// | `block/NAME/wwid` | `wwid eui.…` | an NVMe namespace's EUI-64, NGUID or the kernel's `nvme.VID-SERIAL-MODEL-NSID` |
/// | `block/NAME/serial` | `serial …` | a virtio disk's serial (QEMU's `serial=`, a cloud volume's id) |
/// | `block/NAME/device/serial` | `serial …` | a memory card's serial number (from its CID) |
/// | the USB device above `block/NAME/device` | `usb VID:PID SERIAL, N sectors` | the USB enclosure's serial string, with the disk's size |
///
/// A USB serial names the enclosure, not the drive in it, and cheap
/// bridges give every unit the same string: with the disk's size in the
/// name, two such enclosures are told apart unless their drives are the
/// same size too (the daemon then knows the second one watched by its
/// key), and a drive swapped for one of the same size in the same
/// enclosure is taken for the old one. Blank or all-zero values count as
/// none.
pub fn sysfs_serial(sysfs: &Path, kernel: &str) -> Option<(String, &'static str)> {
    let read = |p: &Path| -> Option<String> {
        let text = std::fs::read_to_string(p).ok()?;
        let t = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        let blank = t
            .chars()
            .all(|c| c == '0' || c == ' ' || c == '.' || c == '-');
        (!blank).then(|| t.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let block = sysfs.join("block").join(kernel);
    if let Some(w) = read(&block.join("wwid")) {
        return Some((format!("wwid {w}"), "sysfs wwid"));
    }
    if let Some(s) = read(&block.join("serial")) {
        return Some((format!("serial {s}"), "sysfs serial"));
    }
    if let Some(s) = read(&block.join("device/serial")) {
        return Some((format!("serial {s}"), "sysfs device serial"));
    }
    // The USB device is the nearest ancestor of the SCSI device with a
    // vendor id (its interface and the SCSI host below it have none; the
    // root hub above it has its own, so the nearest one counts).
    let root = std::fs::canonicalize(sysfs).ok()?;
    let mut dir = std::fs::canonicalize(block.join("device")).ok()?;
    while dir.starts_with(&root) && dir != root {
        let id = |f: &str| read(&dir.join(f));
        if let (Some(v), Some(p)) = (id("idVendor"), id("idProduct")) {
            let serial = id("serial")?;
            let sectors = sysfs_sectors(sysfs, kernel).unwrap_or(0);
            return Some((
                format!("usb {v}:{p} {serial}, {sectors} sectors"),
                "sysfs USB serial",
            ));
        }
        if !dir.pop() {
            break;
        }
    }
    None
}

/// What the daemon and `lulld --check` say when a drive's serial number
/// is forgotten because the drive at kernel name `twin` gives it too
/// ([`Identity::drop_shared_serial`]).
pub fn shared_serial_text(twin: &str, serial: &str) -> String {
    format!(
        "{twin} gives the same serial number, {serial:?}: two drives cannot both be followed by it, so this one is known by its key"
    )
}

/// Whether disk `kernel` (under the sysfs root `sysfs`) sits behind a USB
/// bridge: its device's path runs through a USB device.
pub fn sysfs_on_usb(sysfs: &Path, kernel: &str) -> bool {
    let (Ok(root), Ok(dev)) = (
        std::fs::canonicalize(sysfs),
        std::fs::canonicalize(sysfs.join("block").join(kernel).join("device")),
    ) else {
        return false;
    };
    dev.strip_prefix(&root).is_ok_and(|p| {
        p.components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with("usb"))
    })
}

/// The size of disk `kernel` in 512-byte sectors, from the sysfs root
/// `sysfs` (`/sys/block/NAME/size`): 0 for a device that holds no medium
/// (an empty card-reader slot).
pub fn sysfs_sectors(sysfs: &Path, kernel: &str) -> Option<u64> {
    std::fs::read_to_string(sysfs.join("block").join(kernel).join("size"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// SG_IO to a device node with a short timeout: identification answers
/// from the SCSI layer in microseconds, and a bridge that does not answer
/// in 5 s is not worth waiting longer for.
struct Quick(Result<crate::sgio::Device, crate::sgio::SendError>);

impl Link for Quick {
    fn send(
        &mut self,
        cdb: &[u8],
        data_in: usize,
    ) -> Result<crate::sgio::Reply, crate::sgio::SendError> {
        self.0
            .as_ref()
            .map_err(Clone::clone)?
            .send(cdb, data_in, 5_000)
    }
    fn hdparm_check(&mut self) -> crate::transport::HdparmAnswer {
        crate::transport::HdparmAnswer::Missing
    }
    fn hdparm_standby(&mut self) -> Result<(), String> {
        Err("identification never spins a drive down".into())
    }
}

/// Identifies the disk `kernel` at its device node under `/dev`, with
/// `queue/rotational` read under the sysfs root `sysfs`, and records
/// the device it was asked on.
pub fn identify_disk(kernel: &str, sysfs: &Path) -> Identity {
    let dev = Path::new("/dev").join(kernel);
    let mut link = Quick(crate::sgio::Device::open(&dev));
    let mut id = identify(
        &mut link,
        sysfs_rotational(sysfs, kernel),
        sysfs_on_usb(sysfs, kernel),
    );
    id.name_from_sysfs(sysfs, kernel);
    let (device, kernel) = crate::transport::identity(&dev);
    id.device = device;
    id.kernel = kernel;
    id
}

#[cfg(test)]
mod tests;
