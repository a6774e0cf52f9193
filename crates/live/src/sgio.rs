//! Native drive power control through the Linux `SG_IO` ioctl.
//!
//! Standby tries, in order, ATA PASS-THROUGH (16) with STANDBY IMMEDIATE
//! (SATA disks behind libata or a SAT-capable USB bridge), ATA
//! PASS-THROUGH (12) (older USB bridges that reject the 16-byte CDB) and
//! SCSI START STOP UNIT with START=0 (SAS and SCSI disks). A command the
//! device rejects as an illegal request moves on to the next one; any other
//! failure is reported. The power state comes from ATA CHECK POWER MODE,
//! which never spins a disk up.
//!
//! This is the only module with `unsafe`: one `ioctl` call with a header
//! whose pointers borrow buffers that outlive the call.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `SG_IO` from `<scsi/sg.h>`.
const SG_IO: u32 = 0x2285;
const SG_DXFER_NONE: i32 = -1;
const SG_INFO_OK_MASK: u32 = 0x1;

/// ATA STANDBY IMMEDIATE.
const ATA_STANDBY_IMMEDIATE: u8 = 0xE0;
/// ATA CHECK POWER MODE.
const ATA_CHECK_POWER_MODE: u8 = 0xE5;

/// `struct sg_io_hdr` of `<scsi/sg.h>`.
#[repr(C)]
#[derive(Debug)]
struct SgIoHdr {
    interface_id: i32,
    dxfer_direction: i32,
    cmd_len: u8,
    mx_sb_len: u8,
    iovec_count: u16,
    dxfer_len: u32,
    dxferp: *mut libc::c_void,
    cmdp: *const u8,
    sbp: *mut u8,
    timeout: u32,
    flags: u32,
    pack_id: i32,
    usr_ptr: *mut libc::c_void,
    status: u8,
    masked_status: u8,
    msg_status: u8,
    sb_len_wr: u8,
    host_status: u16,
    driver_status: u16,
    resid: i32,
    duration: u32,
    info: u32,
}

/// What a non-data command returned.
#[derive(Clone, Copy, Debug)]
struct Reply {
    ok: bool,
    status: u8,
    host_status: u16,
    driver_status: u16,
    sense: [u8; 32],
    sense_len: usize,
}

impl Reply {
    fn sense_key(&self) -> Option<u8> {
        if self.sense_len < 3 {
            return None;
        }
        match self.sense[0] & 0x7f {
            0x72 | 0x73 => Some(self.sense[1] & 0x0f),
            0x70 | 0x71 => Some(self.sense[2] & 0x0f),
            _ => None,
        }
    }
    fn illegal_request(&self) -> bool {
        self.sense_key() == Some(0x05)
    }
    /// The ATA sector count register returned with CK_COND.
    fn ata_count(&self) -> Option<u8> {
        match self.sense[0] & 0x7f {
            0x72 if self.sense_len >= 22 && self.sense[8] == 0x09 => Some(self.sense[13]),
            0x70 if self.sense_len >= 7 => Some(self.sense[6]),
            _ => None,
        }
    }
    fn describe(&self) -> String {
        format!(
            "status 0x{:02x}, host 0x{:x}, driver 0x{:x}, sense key {}",
            self.status,
            self.host_status,
            self.driver_status,
            self.sense_key()
                .map_or("none".into(), |k| format!("0x{k:x}"))
        )
    }
}

/// Issues one non-data command.
#[allow(unsafe_code)]
fn sg_io(dev: &File, cdb: &[u8], timeout_ms: u32) -> io::Result<Reply> {
    let mut sense = [0u8; 32];
    let mut hdr = SgIoHdr {
        interface_id: i32::from(b'S'),
        dxfer_direction: SG_DXFER_NONE,
        cmd_len: cdb.len() as u8,
        mx_sb_len: sense.len() as u8,
        iovec_count: 0,
        dxfer_len: 0,
        dxferp: std::ptr::null_mut(),
        cmdp: cdb.as_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout: timeout_ms,
        flags: 0,
        pack_id: 0,
        usr_ptr: std::ptr::null_mut(),
        status: 0,
        masked_status: 0,
        msg_status: 0,
        sb_len_wr: 0,
        host_status: 0,
        driver_status: 0,
        resid: 0,
        duration: 0,
        info: 0,
    };
    // SAFETY: `hdr` is a correctly laid out `sg_io_hdr` (repr(C), field for
    // field as in <scsi/sg.h>); `cmdp` points at `cdb` (cmd_len bytes) and
    // `sbp` at `sense` (mx_sb_len bytes), both alive until the ioctl
    // returns; no data buffer is used (SG_DXFER_NONE, dxferp null). The
    // kernel writes only into `hdr` and `sense`.
    let r = unsafe { libc::ioctl(dev.as_raw_fd(), SG_IO as _, &mut hdr as *mut SgIoHdr) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Reply {
        ok: hdr.info & SG_INFO_OK_MASK == 0 && hdr.status == 0,
        status: hdr.status,
        host_status: hdr.host_status,
        driver_status: hdr.driver_status,
        sense,
        sense_len: usize::from(hdr.sb_len_wr).min(32),
    })
}

fn ata16(command: u8, ck_cond: bool) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0] = 0x85;
    c[1] = 3 << 1; // protocol: non-data
    c[2] = if ck_cond { 0x20 } else { 0 };
    c[14] = command;
    c
}

fn ata12(command: u8, ck_cond: bool) -> [u8; 12] {
    let mut c = [0u8; 12];
    c[0] = 0xA1;
    c[1] = 3 << 1;
    c[2] = if ck_cond { 0x20 } else { 0 };
    c[9] = command;
    c
}

fn open(path: &Path) -> io::Result<File> {
    // Read-only and non-blocking: opening a block device this way does no
    // I/O, so it neither wakes the disk nor waits for media.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

fn os_err(path: &Path, e: io::Error) -> String {
    if e.raw_os_error() == Some(libc::ENOTTY) || e.raw_os_error() == Some(libc::EINVAL) {
        format!(
            "{}: SG_IO not supported ({e}): not a SCSI or ATA device",
            path.display()
        )
    } else {
        format!("{}: SG_IO: {e}", path.display())
    }
}

/// Spins the drive down; returns the command that worked.
pub fn standby(path: &Path) -> Result<&'static str, String> {
    let dev = open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut tried = Vec::new();
    let attempts: [(&'static str, &[u8]); 3] = [
        (
            "ATA PASS-THROUGH(16) STANDBY IMMEDIATE",
            &ata16(ATA_STANDBY_IMMEDIATE, false),
        ),
        (
            "ATA PASS-THROUGH(12) STANDBY IMMEDIATE",
            &ata12(ATA_STANDBY_IMMEDIATE, false),
        ),
        ("SCSI START STOP UNIT (stop)", &[0x1B, 0, 0, 0, 0, 0]),
    ];
    for (name, cdb) in attempts {
        let r = sg_io(&dev, cdb, 30_000).map_err(|e| os_err(path, e))?;
        if r.ok {
            return Ok(name);
        }
        tried.push(format!("{name}: {}", r.describe()));
        if !r.illegal_request() {
            break;
        }
    }
    Err(format!(
        "{}: the drive refused standby ({})",
        path.display(),
        tried.join("; ")
    ))
}

/// The drive's power state by ATA CHECK POWER MODE: `Some(true)` in
/// standby, `Some(false)` spinning, `None` when the device does not answer
/// ATA commands.
pub fn in_standby(path: &Path) -> Result<Option<bool>, String> {
    let dev = open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cdbs: [&[u8]; 2] = [
        &ata16(ATA_CHECK_POWER_MODE, true),
        &ata12(ATA_CHECK_POWER_MODE, true),
    ];
    for cdb in cdbs {
        let r = sg_io(&dev, cdb, 10_000).map_err(|e| os_err(path, e))?;
        if let Some(count) = r.ata_count() {
            return Ok(Some(matches!(count, 0x00 | 0x01)));
        }
        if !r.illegal_request() {
            break;
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_the_kernel_layout() {
        // sizeof(struct sg_io_hdr) on 64-bit Linux.
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::size_of::<SgIoHdr>(), 88);
        #[cfg(target_pointer_width = "32")]
        assert_eq!(std::mem::size_of::<SgIoHdr>(), 64);
    }

    #[test]
    fn cdbs() {
        let c = ata16(ATA_CHECK_POWER_MODE, true);
        assert_eq!((c[0], c[1], c[2], c[14]), (0x85, 0x06, 0x20, 0xE5));
        let c = ata12(ATA_STANDBY_IMMEDIATE, false);
        assert_eq!((c[0], c[1], c[9]), (0xA1, 0x06, 0xE0));
    }

    #[test]
    fn sense_parsing() {
        let mut r = Reply {
            ok: false,
            status: 2,
            host_status: 0,
            driver_status: 8,
            sense: [0; 32],
            sense_len: 22,
        };
        r.sense[0] = 0x72;
        r.sense[1] = 0x01;
        r.sense[8] = 0x09;
        r.sense[13] = 0xFF;
        assert_eq!(r.ata_count(), Some(0xFF));
        r.sense[1] = 0x05;
        assert!(r.illegal_request());
    }

    #[test]
    fn a_non_scsi_device_is_a_clear_error() {
        let e = standby(Path::new("/dev/null")).unwrap_err();
        assert!(e.contains("/dev/null"), "{e}");
    }
}
