//! The Linux `SG_IO` ioctl, the command blocks lull sends through it, and
//! the sense data that comes back.
//!
//! Four commands, each built by one function whose bytes the tests pin
//! against the standard's layout:
//!
//! | command | CDB | wakes a sleeping disk? |
//! |---|---|---|
//! | ATA CHECK POWER MODE in ATA PASS-THROUGH (16) / (12) | [`ata_pass_through_16`], [`ata_pass_through_12`] with CK_COND | no (ACS: it only reads the power mode) |
//! | ATA STANDBY IMMEDIATE in ATA PASS-THROUGH (16) / (12) | the same, without CK_COND | spins it down |
//! | SCSI REQUEST SENSE | [`request_sense`] | no (SPC-4 5.12.7: the power condition is pollable sense data) |
//! | SCSI START STOP UNIT, POWER CONDITION = STANDBY | [`start_stop_unit_standby`] | spins it down |
//!
//! Which of them a disk answers is decided by [`crate::transport`]; this
//! module only sends and parses. It is the only module with `unsafe`: one
//! `ioctl` call with a header whose pointers borrow buffers that outlive
//! the call.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// `SG_IO` from `<scsi/sg.h>`.
const SG_IO: u32 = 0x2285;
const SG_DXFER_NONE: i32 = -1;
const SG_DXFER_FROM_DEV: i32 = -3;
const SG_INFO_OK_MASK: u32 = 0x1;

pub use lull_controller::cdb::*;

/// What one command returned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// GOOD status, and neither the host adapter nor the driver reported
    /// an error.
    pub ok: bool,
    /// SCSI status (2: CHECK CONDITION).
    pub status: u8,
    /// Host adapter status.
    pub host_status: u16,
    /// Driver status.
    pub driver_status: u16,
    /// The sense data the kernel returned.
    pub sense: Vec<u8>,
    /// Data-in bytes (REQUEST SENSE's parameter data).
    pub data: Vec<u8>,
}

impl Reply {
    /// The parsed sense buffer.
    pub fn sense(&self) -> Option<Sense> {
        Sense::parse(&self.sense)
    }

    /// The device rejected the command (sense key ILLEGAL REQUEST).
    pub fn illegal_request(&self) -> bool {
        self.sense().is_some_and(|s| s.illegal_request())
    }

    /// The ATA registers returned with CK_COND, unless the ATA command
    /// itself failed (ERR in STATUS).
    pub fn ata(&self) -> Option<AtaReturn> {
        self.sense()
            .and_then(|s| s.ata)
            .filter(|a| a.status & 0x01 == 0)
    }

    /// For error messages.
    pub fn describe(&self) -> String {
        let sense = self.sense().map_or("no sense data".to_string(), |s| {
            format!(
                "sense key 0x{:x}, ASC/ASCQ 0x{:02x}/0x{:02x}",
                s.key, s.asc, s.ascq
            )
        });
        format!(
            "status 0x{:02x}, host 0x{:x}, driver 0x{:x}, {sense}",
            self.status, self.host_status, self.driver_status
        )
    }
}

/// Why a command could not be sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The device does not take SG_IO at all (`ENOTTY`/`EINVAL`: a loop
    /// device, NVMe, a virtual disk): no SCSI or ATA command reaches it.
    NotSg(String),
    /// Anything else: the node cannot be opened, an I/O error, the device
    /// went away.
    Failed(String),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::NotSg(m) | SendError::Failed(m) => f.write_str(m),
        }
    }
}

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

/// A device node opened for SG_IO.
#[derive(Debug)]
pub struct Device {
    file: File,
    path: PathBuf,
}

impl Device {
    /// Opens `path` read-only and non-blocking: opening a block device this
    /// way does no I/O, so it neither wakes the disk nor waits for media.
    pub fn open(path: &Path) -> Result<Device, SendError> {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map(|file| Device {
                file,
                path: path.to_path_buf(),
            })
            .map_err(|e| SendError::Failed(format!("{}: {e}", path.display())))
    }

    /// Sends `cdb`, reading up to `data_in` bytes from the device (0: a
    /// non-data command), waiting at most `timeout_ms`.
    #[allow(unsafe_code)]
    pub fn send(&self, cdb: &[u8], data_in: usize, timeout_ms: u32) -> Result<Reply, SendError> {
        let mut sense = [0u8; 64];
        let mut data = vec![0u8; data_in];
        let mut hdr = SgIoHdr {
            interface_id: i32::from(b'S'),
            dxfer_direction: if data_in == 0 {
                SG_DXFER_NONE
            } else {
                SG_DXFER_FROM_DEV
            },
            cmd_len: u8::try_from(cdb.len()).unwrap_or(u8::MAX),
            mx_sb_len: sense.len() as u8,
            iovec_count: 0,
            dxfer_len: u32::try_from(data_in).unwrap_or(u32::MAX),
            dxferp: if data_in == 0 {
                std::ptr::null_mut()
            } else {
                data.as_mut_ptr().cast()
            },
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
        // SAFETY: `hdr` is a correctly laid out `sg_io_hdr` (repr(C), field
        // for field as in <scsi/sg.h>); `cmdp` points at `cdb` (cmd_len
        // bytes), `sbp` at `sense` (mx_sb_len bytes) and `dxferp` at `data`
        // (dxfer_len bytes, or null with SG_DXFER_NONE), all alive until
        // the ioctl returns. The kernel writes only into `hdr`, `sense`
        // and `data`.
        let r = unsafe { libc::ioctl(self.file.as_raw_fd(), SG_IO as _, &mut hdr as *mut SgIoHdr) };
        if r < 0 {
            let e = io::Error::last_os_error();
            let path = self.path.display();
            return Err(
                if matches!(e.raw_os_error(), Some(libc::ENOTTY | libc::EINVAL)) {
                    SendError::NotSg(format!(
                        "{path}: SG_IO not supported ({e}): not a SCSI or ATA device"
                    ))
                } else {
                    SendError::Failed(format!("{path}: SG_IO: {e}"))
                },
            );
        }
        let got = data_in.saturating_sub(usize::try_from(hdr.resid).unwrap_or(0));
        data.truncate(got);
        Ok(Reply {
            ok: hdr.info & SG_INFO_OK_MASK == 0 && hdr.status == 0,
            status: hdr.status,
            host_status: hdr.host_status,
            driver_status: hdr.driver_status,
            sense: sense[..usize::from(hdr.sb_len_wr).min(sense.len())].to_vec(),
            data,
        })
    }
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
    fn a_non_scsi_device_is_a_clear_error() {
        let d = Device::open(Path::new("/dev/null")).unwrap();
        let e = d.send(&request_sense(18), 18, 1000).unwrap_err();
        assert!(matches!(e, SendError::NotSg(_)), "{e:?}");
        assert!(e.to_string().contains("/dev/null"), "{e}");
        let e = Device::open(Path::new("/no/such/disk")).unwrap_err();
        assert!(matches!(e, SendError::Failed(ref m) if m.contains("/no/such/disk")));
    }
}
