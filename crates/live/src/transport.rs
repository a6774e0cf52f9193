//! Transports: which command reaches a disk, found without waking it.
//!
//! Between the host and a disk may sit libata (a SATA disk: ATA
//! PASS-THROUGH works), a USB bridge that speaks SAT (ATA PASS-THROUGH 16),
//! an older bridge that only takes the 12-byte form (JMicron), a SAS HBA
//! (SCSI only: a plain START STOP UNIT *stop* leaves a SAS disk stopped
//! until something sends START UNIT, so standby uses the STANDBY power
//! condition, after which it wakes by itself), or a layer that passes
//! nothing through (a loop device, a virtual disk, NVMe).
//!
//! With `backend = "auto"` each disk is **probed** once with commands that
//! never change its power state — ATA CHECK POWER MODE by ATA
//! PASS-THROUGH (16), then (12), then SCSI REQUEST SENSE (SPC-4 5.12.7:
//! the power condition is pollable sense data, ASC 5Eh), then `hdparm -C`
//! — and the first that answers is its [`Transport`]: `ata16`, `ata12`,
//! `scsi`, `hdparm`, or `none`. The choice is logged once, kept in the
//! state file ([`crate::state::TransportMemo`], with the device numbers and
//! kernel name it was probed on) and reused after a restart; the disk is
//! probed again when it is replugged (it vanished from diskstats, or its
//! device numbers or by-id target changed) or when its transport starts
//! refusing commands as an illegal request (that transport is then
//! skipped until the next replug). A disk that answers none is reported
//! once and left alone: no spin-down attempts, no power checks, no
//! repeated errors.
//!
//! The power checks use the same transport as standby (CHECK POWER MODE
//! or REQUEST SENSE; none with `hdparm`, whose process per check would
//! cost more than it tells). A limit of REQUEST SENSE: SPC lets a device
//! answer it with a pending unit attention and clear that condition, so
//! the kernel may not see such a unit attention on a `scsi` disk (the
//! power state then reads as unknown for that check).
//!
//! Every standby sent over SG_IO is read back at once with the same power
//! check. A drive that accepted the command but still answers *active*
//! either ignores standby or does not report it (a bridge that answers
//! REQUEST SENSE with no sense whatever the power condition; QEMU's
//! emulated ATA and SCSI disks do both, as the guest test shows,
//! `scripts/guest-test.sh`). The spin-down still counts, as hd-idle would
//! count it, but the disk's periodic power checks stop
//! ([`Standby::Unconfirmed`]): each would otherwise read a sleeping disk
//! as "spun up by something else" and count a spin-up that did not
//! happen. They resume when a later standby is confirmed, or after a
//! replug.
//!
//! The decision logic ([`probe`], [`check_power`], [`standby`]) talks to
//! the disk through the [`Link`] trait, so tests drive it with a fake disk
//! and check that a sleeping one is never sent a waking command.

use std::path::{Path, PathBuf};

use tracing::{info, warn};

use crate::drive::{Backend, PowerState};
use crate::sgio::{self, Reply, SendError, Sense};
pub use lull_controller::transport::{Transport, TransportMemo, configured, left_alone};

/// What `hdparm -C` said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HdparmAnswer {
    /// `hdparm` is not installed.
    Missing,
    /// It ran and could not tell (its error or output).
    Unknown(String),
    /// It read the power state.
    State(PowerState),
}

/// The way to a disk: one SCSI command at a time, and `hdparm -C`.
pub trait Link {
    /// Sends `cdb`, reading up to `data_in` bytes (0: no data).
    fn send(&mut self, cdb: &[u8], data_in: usize) -> Result<Reply, SendError>;
    /// Runs `hdparm -C` on the disk.
    fn hdparm_check(&mut self) -> HdparmAnswer;
    /// Runs `hdparm -y` on the disk.
    fn hdparm_standby(&mut self) -> Result<(), String>;
}

/// Opens a [`Link`] to a device node.
pub type Opener = std::sync::Arc<dyn Fn(&Path) -> Box<dyn Link + Send> + Send + Sync>;

/// Why a command did not do what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CmdError {
    /// The device rejected it with ILLEGAL REQUEST: this transport does
    /// not reach the disk.
    Illegal(String),
    /// It completed without the answer it should carry (no ATA
    /// registers, an unexpected sense key, a host or driver error).
    NoAnswer(String),
    /// SG_IO does not reach the device at all.
    NotSg(String),
    /// The command could not be sent (no device node, an I/O error).
    Failed(String),
}

impl CmdError {
    fn text(&self) -> &str {
        match self {
            CmdError::Illegal(m)
            | CmdError::NoAnswer(m)
            | CmdError::NotSg(m)
            | CmdError::Failed(m) => m,
        }
    }
}

fn sent(r: Result<Reply, SendError>) -> Result<Reply, CmdError> {
    r.map_err(|e| match e {
        SendError::NotSg(m) => CmdError::NotSg(m),
        SendError::Failed(m) => CmdError::Failed(m),
    })
}

fn refused(what: &str, r: &Reply) -> CmdError {
    let m = format!("{what}: {}", r.describe());
    if r.illegal_request() {
        CmdError::Illegal(format!("{m} (illegal request)"))
    } else {
        CmdError::NoAnswer(m)
    }
}

/// ATA CHECK POWER MODE's COUNT (ACS-3 7.3): 00h standby_z, 01h
/// standby_y, 40h NV cache with the spindle stopped → standby; 41h, 80h
/// to 83h (idle, idle_a/b/c), FFh (active or idle) → spinning.
pub fn ata_power(count: u8) -> PowerState {
    match count {
        0x00 | 0x01 | 0x40 => PowerState::Standby,
        0x41 | 0x80..=0x83 | 0xFF => PowerState::Active,
        _ => PowerState::Unknown,
    }
}

/// The power condition in REQUEST SENSE's sense data (SPC-4 5.12.7,
/// SBC-4 4.20.4): NO SENSE with LOW POWER CONDITION ON (5Eh) and a
/// standby qualifier (02h, 04h standby_z by timer/command; 09h, 0Ah
/// standby_y), or NOT READY / INITIALIZING COMMAND REQUIRED (04h/02h: the
/// stopped condition) → standby; an idle qualifier (01h, 03h, 05h–08h:
/// spinning) or no sense at all → active. 5Eh/00h (low power, reason
/// unknown) may be idle or standby, and other sense data (a pending unit
/// attention, an informational exception) hides the power condition:
/// unknown.
pub fn scsi_power(s: &Sense) -> PowerState {
    match (s.key, s.asc, s.ascq) {
        (sgio::KEY_NO_SENSE, sgio::ASC_LOW_POWER, 0x02 | 0x04 | 0x09 | 0x0A) => PowerState::Standby,
        (sgio::KEY_NO_SENSE, sgio::ASC_LOW_POWER, 0x01 | 0x03 | 0x05..=0x08) => PowerState::Active,
        (sgio::KEY_NOT_READY, 0x04, 0x02) => PowerState::Standby,
        (sgio::KEY_NO_SENSE, 0x00, 0x00) => PowerState::Active,
        _ => PowerState::Unknown,
    }
}

/// Reads the power state through `t` (an SG_IO transport) with a command
/// that never changes it.
pub fn check_power(t: Transport, link: &mut dyn Link) -> Result<PowerState, CmdError> {
    let Some((cdb, data_in)) = t.check_cdb() else {
        return Err(CmdError::NoAnswer(format!("{t}: not an SG_IO transport")));
    };
    let r = sent(link.send(&cdb, data_in))?;
    if t == Transport::Scsi {
        if !r.ok {
            return Err(refused(t.check_name(), &r));
        }
        return match Sense::parse(&r.data) {
            Some(s) => Ok(scsi_power(&s)),
            None => Err(CmdError::NoAnswer(format!(
                "{}: no sense data in its {} bytes",
                t.check_name(),
                r.data.len()
            ))),
        };
    }
    // CK_COND: the answer is in the sense data, with CHECK CONDITION.
    match r.ata() {
        Some(a) => Ok(ata_power(a.count)),
        None if r.ok => Err(CmdError::NoAnswer(format!(
            "{}: no ATA registers returned",
            t.check_name()
        ))),
        None => Err(refused(t.check_name(), &r)),
    }
}

/// Spins the disk down through `t` (an SG_IO transport).
pub fn standby(t: Transport, link: &mut dyn Link) -> Result<(), CmdError> {
    let Some(cdb) = t.standby_cdb() else {
        return Err(CmdError::NoAnswer(format!("{t}: not an SG_IO transport")));
    };
    let r = sent(link.send(&cdb, 0))?;
    // Some translators answer an ATA command with its registers even
    // without CK_COND; without ERR that is success too.
    if r.ok || (t != Transport::Scsi && r.ata().is_some()) {
        Ok(())
    } else {
        Err(refused(t.standby_name(), &r))
    }
}

/// What [`probe`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The transport.
    pub transport: Transport,
    /// The power state its answer gave.
    pub power: PowerState,
    /// What answered, and what was refused before it.
    pub why: String,
}

/// Finds the first transport in `ata16`, `ata12`, `scsi`, `hdparm` that
/// answers its power-state command (none of which wakes a sleeping disk),
/// skipping those in `skip` (refused earlier); `none` when nothing does.
/// An error when the disk cannot be reached to ask (no device node, an
/// I/O error): the caller asks again later.
pub fn probe(link: &mut dyn Link, skip: &[Transport]) -> Result<Probe, String> {
    let mut tried = Vec::new();
    for t in Transport::SG {
        if skip.contains(&t) {
            tried.push(format!("{t}: refused standby before"));
            continue;
        }
        match check_power(t, link) {
            Ok(power) => {
                let before = if tried.is_empty() {
                    String::new()
                } else {
                    format!("; before it: {}", tried.join("; "))
                };
                return Ok(Probe {
                    transport: t,
                    power,
                    why: format!("answers {}{before}", t.check_name()),
                });
            }
            Err(CmdError::Illegal(m) | CmdError::NoAnswer(m)) => tried.push(m),
            Err(CmdError::NotSg(m)) => {
                tried.push(m);
                break;
            }
            Err(CmdError::Failed(m)) => return Err(m),
        }
    }
    if skip.contains(&Transport::Hdparm) {
        tried.push("hdparm: refused standby before".into());
    } else {
        match link.hdparm_check() {
            HdparmAnswer::State(power) => {
                return Ok(Probe {
                    transport: Transport::Hdparm,
                    power,
                    why: format!(
                        "hdparm -C answers; no SG_IO command did: {}",
                        tried.join("; ")
                    ),
                });
            }
            HdparmAnswer::Missing => tried.push("hdparm is not installed".into()),
            HdparmAnswer::Unknown(m) => tried.push(m),
        }
    }
    Ok(Probe {
        transport: Transport::None,
        power: PowerState::Unknown,
        why: tried.join("; "),
    })
}

/// `backend = "sgio"`'s power check: the first SG_IO transport that
/// answers (unknown when none does).
pub fn check_power_any(link: &mut dyn Link) -> Result<PowerState, String> {
    for t in Transport::SG {
        match check_power(t, link) {
            Ok(p) => return Ok(p),
            Err(CmdError::Illegal(_) | CmdError::NoAnswer(_)) => {}
            Err(CmdError::NotSg(m) | CmdError::Failed(m)) => return Err(m),
        }
    }
    Ok(PowerState::Unknown)
}

/// `backend = "sgio"`'s standby: each SG_IO transport in turn while the
/// device refuses them as illegal requests. Returns the command that
/// worked.
pub fn standby_any(link: &mut dyn Link) -> Result<&'static str, String> {
    let mut tried = Vec::new();
    for t in Transport::SG {
        match standby(t, link) {
            Ok(()) => return Ok(t.standby_name()),
            Err(CmdError::Illegal(m)) => tried.push(m),
            Err(e @ CmdError::NoAnswer(_)) => {
                tried.push(e.text().to_string());
                break;
            }
            Err(CmdError::NotSg(m) | CmdError::Failed(m)) => return Err(m),
        }
    }
    Err(format!("the drive refused standby ({})", tried.join("; ")))
}

/// The real [`Link`]: SG_IO on the device node, `hdparm` the program
/// configured or found ([`crate::drive::hdparm_program`]).
#[derive(Debug)]
pub struct DeviceLink {
    dev: Result<sgio::Device, SendError>,
    path: PathBuf,
    hdparm: Option<PathBuf>,
}

impl DeviceLink {
    /// Opens `path` (an error is kept and returned by each command), with
    /// `hdparm` as the program for the hdparm transport (`None`: missing).
    pub fn open(path: &Path, hdparm: Option<PathBuf>) -> DeviceLink {
        DeviceLink {
            dev: sgio::Device::open(path),
            path: path.to_path_buf(),
            hdparm,
        }
    }
}

impl Link for DeviceLink {
    fn send(&mut self, cdb: &[u8], data_in: usize) -> Result<Reply, SendError> {
        // STANDBY IMMEDIATE and START STOP UNIT answer once the spindle
        // stopped: seconds, not milliseconds.
        self.dev
            .as_ref()
            .map_err(Clone::clone)?
            .send(cdb, data_in, 30_000)
    }

    fn hdparm_check(&mut self) -> HdparmAnswer {
        if self.hdparm.is_none() {
            return HdparmAnswer::Missing;
        }
        match crate::drive::hdparm(self.hdparm.as_deref(), "-C", &self.path) {
            Ok(text) => match crate::drive::hdparm_power_state(&text) {
                PowerState::Unknown => HdparmAnswer::Unknown(format!(
                    "hdparm -C {}: no power state in its output",
                    self.path.display()
                )),
                p => HdparmAnswer::State(p),
            },
            Err(e) => HdparmAnswer::Unknown(e),
        }
    }

    fn hdparm_standby(&mut self) -> Result<(), String> {
        crate::drive::hdparm(self.hdparm.as_deref(), "-y", &self.path).map(|_| ())
    }
}

/// What the device node is now: its device numbers (`major:minor`, empty
/// when it is not a block device) and kernel name.
pub fn identity(dev: &Path) -> (String, String) {
    let numbers = dev
        .to_str()
        .and_then(crate::drive::block_device_numbers)
        .map_or_else(String::new, |(a, b)| format!("{a}:{b}"));
    let kernel = dev
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    (numbers, kernel)
}

/// What a standby order did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standby {
    /// Spun down, by this command (the power check right after it said
    /// standby, or could not tell).
    SpunDown(String),
    /// The drive accepted this command, but the power check right after
    /// it still answers active: the drive or its bridge ignores standby,
    /// or does not report it (QEMU's emulated disks do both). Counted as
    /// a spin-down, as hd-idle would; power checks stop for the disk
    /// ([`Chooser::power`]).
    Unconfirmed(String),
    /// The power check found it in standby already.
    Already,
    /// No transport reaches it: nothing was sent.
    LeftAlone,
}

/// A disk's transport as its actor uses it: the configured one, or for
/// `auto` the probed one, remembered and re-probed as the module docs
/// say. Logs its choices; the caller saves what [`Chooser::take_memo`]
/// returns in the state file.
pub struct Chooser {
    key: String,
    /// How the disk is reached.
    open: Opener,
    backend: Backend,
    /// The device node when the disk was found.
    initial: PathBuf,
    /// The probed transport (from the state file, or this run).
    memo: Option<TransportMemo>,
    /// The memo was checked against the device node (or probed) since
    /// the start or the last replug.
    checked: bool,
    /// Transports that refused a command as illegal since the last replug.
    refused: Vec<Transport>,
    /// The last probe error (logged once until it changes).
    last_error: Option<String>,
    /// A new memo for the state file.
    fresh: Option<TransportMemo>,
    /// The drive still answered active right after its last standby:
    /// its power checks tell nothing, so none are sent (until a standby
    /// is confirmed, or a replug).
    blind: bool,
}

impl Chooser {
    /// For the disk `key` at `dev`, configured with `backend`, with what
    /// the state file remembers.
    pub fn new(
        key: &str,
        backend: Backend,
        dev: PathBuf,
        remembered: Option<TransportMemo>,
        hdparm: Option<PathBuf>,
    ) -> Chooser {
        let open: Opener =
            std::sync::Arc::new(move |p: &Path| Box::new(DeviceLink::open(p, hdparm.clone())) as _);
        Chooser::with_opener(key, backend, dev, remembered, open)
    }

    /// [`Chooser::new`] reaching the disk through `open` (a fake disk in
    /// tests).
    pub fn with_opener(
        key: &str,
        backend: Backend,
        dev: PathBuf,
        remembered: Option<TransportMemo>,
        open: Opener,
    ) -> Chooser {
        Chooser {
            key: key.to_string(),
            open,
            backend,
            initial: dev,
            memo: remembered,
            checked: false,
            refused: Vec::new(),
            last_error: None,
            fresh: None,
            blind: false,
        }
    }

    /// A probe's result for the state file, once.
    pub fn take_memo(&mut self) -> Option<TransportMemo> {
        self.fresh.take()
    }

    /// The disk was replugged: forget its transport, so that the next use
    /// ([`Chooser::resolve`] right away, when it is present) probes again.
    pub fn forget(&mut self) {
        if self.backend == Backend::Auto && self.memo.is_some() {
            info!(
                "disk {}: replugged; its transport is probed again",
                self.key
            );
        }
        self.memo = None;
        self.checked = false;
        self.refused.clear();
        self.blind = false;
    }

    /// Runs `f` on a [`Link`] to `dev`, on tokio's blocking pool (an ioctl
    /// or `hdparm` may take seconds).
    async fn on_device<T: Send + 'static>(
        &self,
        dev: &Path,
        f: impl FnOnce(&mut dyn Link) -> T + Send + 'static,
    ) -> Result<T, String> {
        let (dev, open) = (dev.to_path_buf(), self.open.clone());
        tokio::task::spawn_blocking(move || f(&mut *open(&dev)))
            .await
            .map_err(|e| e.to_string())
    }

    /// Resolves the transport at the start, so it is logged (and probed
    /// if need be) before the first spin-down.
    pub async fn prepare(&mut self) {
        let dev = self.initial.clone();
        self.resolve(&dev).await;
    }

    /// Resolves the transport for `dev` now (probing if need be; the
    /// result is logged, an error too).
    pub async fn resolve(&mut self, dev: &Path) {
        let _ = self.transport(dev).await;
    }

    /// The transport for `dev` now: the configured one; for `auto` the
    /// remembered one if `dev` is still the device it was probed on, else
    /// a fresh probe. `None` for `sgio` (each command tries them all).
    async fn transport(&mut self, dev: &Path) -> Result<Option<Transport>, String> {
        if self.backend == Backend::Sgio {
            return Ok(None);
        }
        if let Some(t) = configured(self.backend) {
            return Ok(Some(t));
        }
        let (numbers, kernel) = identity(dev);
        if let Some(m) = &self.memo {
            if m.device == numbers && m.kernel == kernel {
                if !self.checked {
                    self.checked = true;
                    info!(
                        "disk {}: transport {} (remembered from the state file: probed on {} {}{})",
                        self.key,
                        m.transport,
                        m.kernel,
                        m.device,
                        if m.transport == Transport::None {
                            "; left alone until it is replugged"
                        } else {
                            ""
                        }
                    );
                }
                return Ok(Some(m.transport));
            }
            info!(
                "disk {}: now {kernel} {numbers}, its transport was probed on {} {}: replugged, probing again",
                self.key, m.kernel, m.device
            );
            self.refused.clear();
            self.memo = None;
        }
        let skip = self.refused.clone();
        let probed = self
            .on_device(dev, move |l| probe(l, &skip))
            .await
            .and_then(|r| r);
        match probed {
            Ok(p) => {
                if p.transport == Transport::None {
                    warn!(
                        "disk {}: transport none: no command reaches the drive ({}); it is left alone (no spin-down, no power checks) until it is replugged",
                        self.key, p.why
                    );
                } else {
                    info!(
                        "disk {}: transport {} ({}; the drive is {}); remembered in the state file",
                        self.key,
                        p.transport,
                        p.why,
                        match p.power {
                            PowerState::Active => "spinning",
                            PowerState::Standby => "in standby",
                            PowerState::Unknown => "in an unknown state",
                        }
                    );
                }
                let memo = TransportMemo {
                    transport: p.transport,
                    device: numbers,
                    kernel,
                    probed_unix: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs()),
                    why: p.why,
                };
                self.memo = Some(memo.clone());
                self.fresh = Some(memo);
                self.checked = true;
                self.last_error = None;
                Ok(Some(p.transport))
            }
            Err(e) => {
                if self.last_error.as_deref() != Some(e.as_str()) {
                    warn!(
                        "disk {}: cannot probe its transport: {e} (probed again at the next spin-down or power check)",
                        self.key
                    );
                    self.last_error = Some(e.clone());
                }
                Err(format!("cannot probe the transport: {e}"))
            }
        }
    }

    /// `t` refused a command as illegal: with `auto`, skip it and probe
    /// again (true); with an explicit backend, nothing to do (false).
    fn refuse(&mut self, t: Transport, why: &str) -> bool {
        if self.backend != Backend::Auto {
            return false;
        }
        warn!(
            "disk {}: transport {t} refused a command ({why}); probing again without it",
            self.key
        );
        self.refused.push(t);
        self.memo = None;
        true
    }

    /// The power state through the disk's transport, `None` when it gets
    /// no checks (`hdparm`: a process per check; `none`: left alone; a
    /// drive that still answered active right after its last standby,
    /// [`Standby::Unconfirmed`]: its answers would count spin-ups that
    /// did not happen).
    pub async fn power(&mut self, dev: &Path) -> Option<Result<PowerState, String>> {
        if self.blind {
            return None;
        }
        loop {
            let t = match self.transport(dev).await {
                Err(e) => return Some(Err(e)),
                Ok(None) => {
                    return Some(self.on_device(dev, check_power_any).await.and_then(|r| r));
                }
                Ok(Some(Transport::Hdparm | Transport::None)) => return None,
                Ok(Some(t)) => t,
            };
            match self.on_device(dev, move |l| check_power(t, l)).await {
                Err(e) => return Some(Err(e)),
                Ok(Ok(p)) => return Some(Ok(p)),
                Ok(Err(CmdError::Illegal(m) | CmdError::NotSg(m))) => {
                    if !self.refuse(t, &m) {
                        return Some(Err(m));
                    }
                }
                Ok(Err(e)) => return Some(Err(e.text().to_string())),
            }
        }
    }

    /// Spins the disk down through its transport: over SG_IO the power
    /// state is read first (an ioctl) and a disk already in standby is
    /// left so; `hdparm -y` goes straight (STANDBY IMMEDIATE leaves a
    /// sleeping drive asleep, and a second process per spin-down would
    /// cost more than it saves).
    pub async fn standby(&mut self, dev: &Path) -> Result<Standby, String> {
        loop {
            let t = match self.transport(dev).await? {
                None => {
                    let r = self
                        .on_device(dev, |l| {
                            if check_power_any(l)? == PowerState::Standby {
                                return Ok((Standby::Already, PowerState::Standby));
                            }
                            let how = standby_any(l)?;
                            let after = check_power_any(l).unwrap_or(PowerState::Unknown);
                            Ok((Standby::SpunDown(how.to_string()), after))
                        })
                        .await?;
                    return r.map(|(s, after)| self.confirm(s, after, "a power check"));
                }
                Some(Transport::None) => return Ok(Standby::LeftAlone),
                Some(Transport::Hdparm) => {
                    return self
                        .on_device(dev, |l| l.hdparm_standby())
                        .await?
                        .map(|()| Standby::SpunDown(Transport::Hdparm.standby_name().into()));
                }
                Some(t) => t,
            };
            let r = self
                .on_device(dev, move |l| {
                    if check_power(t, l)? == PowerState::Standby {
                        return Ok((Standby::Already, PowerState::Standby));
                    }
                    standby(t, l)?;
                    // Read back at once: STANDBY IMMEDIATE and START STOP
                    // UNIT return once the spindle stopped.
                    let after = check_power(t, l).unwrap_or(PowerState::Unknown);
                    Ok((Standby::SpunDown(t.standby_name().into()), after))
                })
                .await?;
            match r {
                Ok((s, after)) => return Ok(self.confirm(s, after, t.check_name())),
                Err(CmdError::Illegal(m) | CmdError::NotSg(m)) => {
                    if !self.refuse(t, &m) {
                        return Err(m);
                    }
                }
                Err(e) => return Err(e.text().to_string()),
            }
        }
    }
}

impl Chooser {
    /// What the power check `check` right after a standby said (`after`)
    /// makes of the standby `s`: a drive still active did not take it,
    /// or does not say (logged when that starts, and when it ends).
    fn confirm(&mut self, s: Standby, after: PowerState, check: &str) -> Standby {
        let Standby::SpunDown(how) = s else {
            return s;
        };
        match after {
            PowerState::Active => {
                if !self.blind {
                    warn!(
                        "disk {}: the drive accepted {how}, but {check} right after it still answers active: the drive or its bridge ignores standby, or does not report it; power checks are off for this disk until a standby is confirmed or it is replugged (they would count spin-ups that did not happen)",
                        self.key
                    );
                    self.blind = true;
                }
                Standby::Unconfirmed(how)
            }
            PowerState::Standby => {
                if self.blind {
                    info!(
                        "disk {}: {check} confirms standby now; power checks resume",
                        self.key
                    );
                    self.blind = false;
                }
                Standby::SpunDown(how)
            }
            PowerState::Unknown => Standby::SpunDown(how),
        }
    }
}

impl std::fmt::Debug for Chooser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chooser")
            .field("key", &self.key)
            .field("backend", &self.backend)
            .field("memo", &self.memo)
            .field("refused", &self.refused)
            .field("blind", &self.blind)
            .finish_non_exhaustive()
    }
}
