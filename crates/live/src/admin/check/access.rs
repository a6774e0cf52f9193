//! Whether the daemon, with the rights this process has, could reach each
//! drive: open its device node, send it SG_IO, find a transport.

use std::path::Path;

/// Why the daemon, with this process's rights, could not open `/dev/KERNEL`
/// to send it a spin-down, if it could not: `--check` runs with the
/// daemon's rights (as the unit's `ExecStartPre`), so a daemon run as a
/// user, or a unit that drops the rights it needs, is caught before the
/// first spin-down fails. Opened read-only and non-blocking, as the
/// transport probe does, which sends the drive nothing. Only a refusal is
/// reported; a device node that is not there (a test's fake disk, a
/// container without `/dev`) is for the start to find.
pub(super) fn unopenable(kernel: &str) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = format!("/dev/{kernel}");
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
    {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Some(refused(&path, &e, crate::config::running_as_root()))
        }
        _ => None,
    }
}

/// What `auto`'s transport probe finds on `/dev/KERNEL` when it finds
/// nothing that reaches the drive: the daemon would leave the disk alone
/// (no spin-down, no power checks), which its start logs but `--check`
/// did not say (a trial found out from the journal). The probe sends
/// only power-state questions (CHECK POWER MODE, REQUEST SENSE, `hdparm
/// -C`), which wake no drive, as the daemon's own does. A device node
/// that is not there (a test's fake disk) is for the start to find.
pub(super) fn unreached(
    kernel: &str,
    backend: crate::drive::Backend,
    hdparm: Option<&Path>,
) -> Option<String> {
    use crate::transport::{DeviceLink, Transport, probe};
    if backend != crate::drive::Backend::Auto {
        return None;
    }
    let dev = Path::new("/dev").join(kernel);
    if !dev.exists() {
        return None;
    }
    let mut link = DeviceLink::open(&dev, crate::drive::hdparm_program(hdparm));
    match probe(&mut link, &[]) {
        Ok(p) if p.transport == Transport::None => Some(format!(
            "no command reaches the drive ({}): the daemon would leave it alone (no spin-down, no power checks) until it is replugged, as it does loop, NVMe and device-mapper devices",
            p.why
        )),
        _ => None,
    }
}

/// Why a standby by SG_IO (`backend` `sgio`, `ata16`, `ata12`, `scsi`)
/// cannot reach `/dev/KERNEL`, if the device takes no SG_IO at all (a
/// loop device, NVMe, device-mapper): every spin-down would fail (and
/// the daemon back off after three in a row). `auto` probes and leaves such a
/// device alone, and `hdparm` runs its own program, so neither is asked.
/// Asked with REQUEST SENSE, which changes no power state (the transport
/// probe's last question); a device that cannot be opened is for
/// [`unopenable`] and the start.
pub(super) fn no_sg_io(kernel: &str, backend: crate::drive::Backend) -> Option<String> {
    use crate::drive::Backend;
    if matches!(backend, Backend::Auto | Backend::Hdparm) {
        return None;
    }
    let dev = crate::sgio::Device::open(Path::new("/dev").join(kernel).as_path()).ok()?;
    match dev.send(&crate::sgio::request_sense(18), 18, 5_000) {
        Err(crate::sgio::SendError::NotSg(m)) => Some(format!(
            "backend = \"{}\": {m}, so every spin-down would fail (the daemon backs off after three in a row); the default backend, auto, probes the transport and leaves such a device alone",
            crate::drive::backend_name(backend)
        )),
        _ => None,
    }
}

/// [`unopenable`]'s warning for `path`, refused with `e` to a process run
/// as root (`as_root`) or not. Root refused is refused by something above
/// it (a container that does not pass the device through, a device
/// cgroup, a security policy), which "run it as root" would not mend.
pub(super) fn refused(path: &str, e: &std::io::Error, as_root: bool) -> String {
    if as_root {
        format!(
            "cannot open {path} ({e}) although the daemon runs as root: something above root refuses it (a container that does not pass the device through, a device cgroup such as systemd's DevicePolicy=/DeviceAllow=, seccomp, AppArmor or SELinux); the daemon could not send it a spin-down until that allows it"
        )
    } else {
        format!(
            "cannot open {path} ({e}): the daemon could not send it a spin-down; run it as root (the packaged unit does), or give it read access to the device and CAP_SYS_RAWIO (SG_IO) or `hdparm`'s rights"
        )
    }
}
