//! Transports (issue 20, item 3): the command bytes of every backend
//! against the standards' layouts, sense data in both formats, the probe's
//! decisions on a fake disk (which must never be woken by it), the
//! per-disk chooser's memory, the state file with and without the field,
//! `--check` on the new backends, and `lulld` on a loop device (root
//! only) choosing once and remembering across a restart.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lull_live::config::Backend;
use lull_live::drive::PowerState;
use lull_live::sgio::{self, Reply, SendError, Sense};
use lull_live::state::{DiskState, State, TransportMemo};
use lull_live::transport::{
    self, Chooser, CmdError, HdparmAnswer, Link, Opener, Standby, Transport,
};

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");

mod support;

use support::{Daemon, Traffic, loops, state, wait_for};

// ---------------------------------------------------------------------
// Command bytes, field by field, from the standards.

/// The fields of an ATA PASS-THROUGH CDB (SAT, T10/04-262r8, 13.2.2 for
/// the 12-byte form, 13.2.3 for the 16-byte form; SAT-2 to SAT-4 keep the
/// layout).
#[derive(Debug, PartialEq, Eq)]
struct AtaPt {
    protocol: u8,
    extend: bool,
    off_line: u8,
    ck_cond: bool,
    t_type: bool,
    t_dir: bool,
    byte_block: bool,
    t_length: u8,
    features: u16,
    count: u16,
    lba: u64,
    device: u8,
    command: u8,
    control: u8,
}

/// Decodes byte 2 (the same in both forms): OFF_LINE 7:6, CK_COND 5,
/// T_TYPE 4, T_DIR 3, BYTE_BLOCK 2, T_LENGTH 1:0.
fn flags(b: u8) -> (u8, bool, bool, bool, bool, u8) {
    (
        b >> 6,
        b & 0x20 != 0,
        b & 0x10 != 0,
        b & 0x08 != 0,
        b & 0x04 != 0,
        b & 0x03,
    )
}

fn decode16(c: &[u8; 16]) -> AtaPt {
    assert_eq!(c[0], 0x85, "ATA PASS-THROUGH (16) operation code");
    let (off_line, ck_cond, t_type, t_dir, byte_block, t_length) = flags(c[2]);
    AtaPt {
        // Byte 1: MULTIPLE_COUNT 7:5, PROTOCOL 4:1, EXTEND 0.
        protocol: (c[1] >> 1) & 0x0f,
        extend: c[1] & 1 != 0,
        off_line,
        ck_cond,
        t_type,
        t_dir,
        byte_block,
        t_length,
        // Bytes 3/4 FEATURES 15:8/7:0, 5/6 COUNT, 7..12 LBA interleaved
        // (31:24, 7:0, 39:32, 15:8, 47:40, 23:16).
        features: u16::from_be_bytes([c[3], c[4]]),
        count: u16::from_be_bytes([c[5], c[6]]),
        lba: u64::from(c[8])
            | u64::from(c[10]) << 8
            | u64::from(c[12]) << 16
            | u64::from(c[7]) << 24
            | u64::from(c[9]) << 32
            | u64::from(c[11]) << 40,
        device: c[13],
        command: c[14],
        control: c[15],
    }
}

fn decode12(c: &[u8; 12]) -> AtaPt {
    assert_eq!(c[0], 0xA1, "ATA PASS-THROUGH (12) operation code");
    assert_eq!(c[10], 0, "byte 10 is reserved");
    let (off_line, ck_cond, t_type, t_dir, byte_block, t_length) = flags(c[2]);
    AtaPt {
        protocol: (c[1] >> 1) & 0x0f,
        extend: false,
        off_line,
        ck_cond,
        t_type,
        t_dir,
        byte_block,
        t_length,
        // Byte 3 FEATURES, 4 COUNT, 5..7 LBA 7:0, 15:8, 23:16, 8 DEVICE,
        // 9 COMMAND, 11 CONTROL.
        features: u16::from(c[3]),
        count: u16::from(c[4]),
        lba: u64::from(c[5]) | u64::from(c[6]) << 8 | u64::from(c[7]) << 16,
        device: c[8],
        command: c[9],
        control: c[11],
    }
}

/// A non-data ATA command (PROTOCOL 3h): no transfer, so T_DIR,
/// BYTE_BLOCK, T_TYPE and T_LENGTH are all zero, and every register but
/// COMMAND is zero for CHECK POWER MODE and STANDBY IMMEDIATE.
fn non_data(command: u8, ck_cond: bool) -> AtaPt {
    AtaPt {
        protocol: 3,
        extend: false,
        off_line: 0,
        ck_cond,
        t_type: false,
        t_dir: false,
        byte_block: false,
        t_length: 0,
        features: 0,
        count: 0,
        lba: 0,
        device: 0,
        command,
        control: 0,
    }
}

#[test]
fn ata_pass_through_16_bytes() {
    let check = sgio::ata_pass_through_16(0xE5, true);
    assert_eq!(
        check,
        [0x85, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xE5, 0]
    );
    assert_eq!(decode16(&check), non_data(0xE5, true));
    let standby = sgio::ata_pass_through_16(0xE0, false);
    assert_eq!(
        standby,
        [0x85, 0x06, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xE0, 0]
    );
    assert_eq!(decode16(&standby), non_data(0xE0, false));
    // The ATA opcodes (ACS-3 7.3 CHECK POWER MODE, 7.48 STANDBY IMMEDIATE).
    assert_eq!(sgio::ATA_CHECK_POWER_MODE, 0xE5);
    assert_eq!(sgio::ATA_STANDBY_IMMEDIATE, 0xE0);
}

#[test]
fn ata_pass_through_12_bytes() {
    let check = sgio::ata_pass_through_12(0xE5, true);
    assert_eq!(check, [0xA1, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0xE5, 0, 0]);
    assert_eq!(decode12(&check), non_data(0xE5, true));
    let standby = sgio::ata_pass_through_12(0xE0, false);
    assert_eq!(standby, [0xA1, 0x06, 0x00, 0, 0, 0, 0, 0, 0, 0xE0, 0, 0]);
    assert_eq!(decode12(&standby), non_data(0xE0, false));
}

#[test]
fn start_stop_unit_asks_for_the_standby_power_condition() {
    // SBC-4 5.31: byte 0 1Bh; byte 1 bit 0 IMMED; byte 3 bits 3:0 POWER
    // CONDITION MODIFIER; byte 4 bits 7:4 POWER CONDITION, bit 2
    // NO_FLUSH, bit 1 LOEJ, bit 0 START; byte 5 CONTROL.
    let c = sgio::start_stop_unit_standby();
    assert_eq!(c, [0x1B, 0x00, 0x00, 0x00, 0x30, 0x00]);
    assert_eq!(c[1] & 1, 0, "IMMED = 0: the answer comes once in standby");
    assert_eq!(c[3] & 0x0f, 0, "POWER CONDITION MODIFIER 0: standby_z");
    assert_eq!(c[4] >> 4, 3, "POWER CONDITION 3h = STANDBY");
    assert_eq!(c[4] & 0x04, 0, "NO_FLUSH = 0: the cache is written first");
    assert_eq!(c[4] & 0x03, 0, "LOEJ = 0, START = 0");
}

#[test]
fn request_sense_asks_for_fixed_format() {
    // SPC-4 6.39: byte 0 03h; byte 1 bit 0 DESC; byte 4 ALLOCATION LENGTH.
    let c = sgio::request_sense(252);
    assert_eq!(c, [0x03, 0x00, 0x00, 0x00, 252, 0x00]);
    assert_eq!(c[1] & 1, 0, "DESC = 0: fixed-format sense data");
    assert_eq!(sgio::REQUEST_SENSE_LEN, 252, "SPC-4's recommended maximum");
}

#[test]
fn each_transport_sends_its_own_commands() {
    let cdb = |t: Transport| t.check_cdb().unwrap();
    assert_eq!(
        cdb(Transport::Ata16),
        (sgio::ata_pass_through_16(0xE5, true).to_vec(), 0)
    );
    assert_eq!(
        cdb(Transport::Ata12),
        (sgio::ata_pass_through_12(0xE5, true).to_vec(), 0)
    );
    assert_eq!(
        cdb(Transport::Scsi),
        (sgio::request_sense(252).to_vec(), 252)
    );
    assert_eq!(
        Transport::Ata16.standby_cdb().unwrap(),
        sgio::ata_pass_through_16(0xE0, false)
    );
    assert_eq!(
        Transport::Ata12.standby_cdb().unwrap(),
        sgio::ata_pass_through_12(0xE0, false)
    );
    assert_eq!(
        Transport::Scsi.standby_cdb().unwrap(),
        sgio::start_stop_unit_standby()
    );
    for t in [Transport::Hdparm, Transport::None] {
        assert!(t.check_cdb().is_none() && t.standby_cdb().is_none(), "{t}");
    }
}

// ---------------------------------------------------------------------
// Sense data.

/// Descriptor-format sense (SPC-4 4.5.2) with an ATA Status Return
/// descriptor (SAT: code 09h, length 0Ch; ERROR at 3, COUNT 7:0 at 5,
/// STATUS at 13), after `before` other descriptor bytes.
fn descriptor_ata(count: u8, status: u8, before: &[u8]) -> Vec<u8> {
    let mut ata = vec![0x09, 0x0C, 0, 0, 0, count, 0, 0, 0, 0, 0, 0, 0xA0, status];
    ata[3] = 0x00;
    let mut v = vec![0x72, 0x01, 0x00, 0x1D, 0, 0, 0];
    v.push((before.len() + ata.len()) as u8);
    v.extend_from_slice(before);
    v.extend(ata);
    v
}

/// Fixed-format sense (SPC-4 4.5.3) with `key`, `asc`, `ascq`, and the
/// INFORMATION bytes 3..7.
fn fixed(key: u8, asc: u8, ascq: u8, info: [u8; 4]) -> Vec<u8> {
    let mut v = vec![0u8; 18];
    v[0] = 0x70;
    v[2] = key;
    v[3..7].copy_from_slice(&info);
    v[7] = 10;
    v[12] = asc;
    v[13] = ascq;
    v
}

#[test]
fn sense_in_descriptor_format_carries_the_ata_registers() {
    let s = Sense::parse(&descriptor_ata(0xFF, 0x50, &[])).unwrap();
    assert!(s.descriptor);
    assert_eq!((s.key, s.asc, s.ascq), (0x01, 0x00, 0x1D));
    let a = s.ata.unwrap();
    assert_eq!((a.count, a.status, a.error), (0xFF, 0x50, 0x00));
    // The ATA descriptor need not come first: an INFORMATION descriptor
    // (code 00h, 10 bytes of body) before it is skipped.
    let info = [0x00, 0x0A, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let s = Sense::parse(&descriptor_ata(0x00, 0x50, &info)).unwrap();
    assert_eq!(s.ata.unwrap().count, 0x00);
    // A descriptor list cut short by the buffer yields no registers.
    let short = &descriptor_ata(0x00, 0x50, &[])[..14];
    assert_eq!(Sense::parse(short).unwrap().ata, None);
    // ERR in STATUS: the ATA command failed, its COUNT means nothing.
    let r = Reply {
        ok: false,
        status: 2,
        sense: descriptor_ata(0x00, 0x51, &[]),
        ..Reply::default()
    };
    assert!(r.sense().unwrap().ata.is_some());
    assert_eq!(r.ata(), None);
}

#[test]
fn sense_in_fixed_format_carries_the_ata_registers_only_with_00_1d() {
    // SAT's fixed format: INFORMATION = ERROR, STATUS, DEVICE, COUNT(7:0),
    // ASC/ASCQ 00h/1Dh ATA PASS THROUGH INFORMATION AVAILABLE.
    let s = Sense::parse(&fixed(0x01, 0x00, 0x1D, [0x00, 0x50, 0xA0, 0x80])).unwrap();
    assert!(!s.descriptor);
    let a = s.ata.unwrap();
    assert_eq!((a.error, a.status, a.count), (0x00, 0x50, 0x80));
    // An ILLEGAL REQUEST in fixed format is no ATA answer, whatever its
    // INFORMATION bytes hold (read as COUNT 00h it would say "standby").
    let s = Sense::parse(&fixed(0x05, 0x20, 0x00, [0, 0, 0, 0])).unwrap();
    assert!(s.illegal_request());
    assert_eq!(s.ata, None);
    let r = Reply {
        ok: false,
        status: 2,
        sense: fixed(0x05, 0x24, 0x00, [0; 4]),
        ..Reply::default()
    };
    assert!(r.illegal_request());
    assert!(r.describe().contains("0x24"), "{}", r.describe());
    // Deferred errors (71h) and descriptor deferred (73h) parse too;
    // anything else is not sense data.
    let mut d = fixed(0x06, 0x29, 0x00, [0; 4]);
    d[0] = 0xF1;
    assert_eq!(Sense::parse(&d).unwrap().key, 0x06);
    assert_eq!(Sense::parse(&[0x73, 0x05, 0x20, 0x00]).unwrap().key, 5);
    assert_eq!(Sense::parse(&[0x00, 0x05]), None);
    assert_eq!(Sense::parse(&[0x70, 0x00]), None);
    assert_eq!(Sense::parse(&[0x72, 0x00, 0x5E]), None);
    assert_eq!(Sense::parse(&[]), None);
}

#[test]
fn the_low_power_condition_reads_as_standby_or_spinning() {
    let power = |b: &[u8]| transport::scsi_power(&Sense::parse(b).unwrap());
    // SPC-4 5.12.7: NO SENSE, 5Eh with a standby qualifier.
    for q in [0x02, 0x04, 0x09, 0x0A] {
        assert_eq!(
            power(&fixed(0, 0x5E, q, [0; 4])),
            PowerState::Standby,
            "{q:x}"
        );
        assert_eq!(
            power(&[0x72, 0x00, 0x5E, q, 0, 0, 0, 0]),
            PowerState::Standby,
            "descriptor {q:x}"
        );
    }
    // Idle conditions spin.
    for q in [0x01, 0x03, 0x05, 0x06, 0x07, 0x08] {
        assert_eq!(
            power(&fixed(0, 0x5E, q, [0; 4])),
            PowerState::Active,
            "{q:x}"
        );
    }
    // 5Eh/00h: idle or standby, reason unknown.
    assert_eq!(power(&fixed(0, 0x5E, 0, [0; 4])), PowerState::Unknown);
    // Active: no pollable sense data.
    assert_eq!(power(&fixed(0, 0, 0, [0; 4])), PowerState::Active);
    // SBC-4 4.20.4: stopped (NOT READY, INITIALIZING COMMAND REQUIRED).
    assert_eq!(power(&fixed(2, 0x04, 0x02, [0; 4])), PowerState::Standby);
    // A unit attention hides the power condition.
    assert_eq!(power(&fixed(6, 0x29, 0x00, [0; 4])), PowerState::Unknown);
}

#[test]
fn check_power_mode_counts() {
    // ACS-3 7.3.
    for c in [0x00, 0x01, 0x40] {
        assert_eq!(transport::ata_power(c), PowerState::Standby, "{c:x}");
    }
    for c in [0x41, 0x80, 0x81, 0x82, 0x83, 0xFF] {
        assert_eq!(transport::ata_power(c), PowerState::Active, "{c:x}");
    }
    assert_eq!(transport::ata_power(0x42), PowerState::Unknown);
}

// ---------------------------------------------------------------------
// A fake disk behind a configurable path.

/// How a command form fares on the fake disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// It answers as the standard says.
    Works,
    /// ILLEGAL REQUEST (fixed format, INVALID COMMAND OPERATION CODE).
    Illegal,
    /// GOOD status, but no ATA registers / no sense data (a bridge that
    /// ignores CK_COND).
    Mute,
}

#[derive(Debug)]
struct Disk {
    ata16: Form,
    ata12: Form,
    scsi: Form,
    /// SG_IO fails with ENOTTY (a loop device).
    not_sg: bool,
    /// The node cannot be opened.
    missing: bool,
    hdparm: HdparmAnswer,
    asleep: bool,
    /// Every CDB sent.
    sent: Vec<Vec<u8>>,
    /// The waking commands sent while asleep.
    woken_by: Vec<Vec<u8>>,
    hdparm_standbys: usize,
    /// It accepts standby commands and stays awake (QEMU's emulated
    /// disks: `scripts/guest-test.sh`).
    ignores_standby: bool,
}

impl Disk {
    fn new(ata16: Form, ata12: Form, scsi: Form) -> Disk {
        Disk {
            ata16,
            ata12,
            scsi,
            not_sg: false,
            missing: false,
            hdparm: HdparmAnswer::Missing,
            asleep: false,
            sent: Vec::new(),
            woken_by: Vec::new(),
            hdparm_standbys: 0,
            ignores_standby: false,
        }
    }
}

/// The commands that never change the power state: CHECK POWER MODE in
/// either ATA PASS-THROUGH form (non-data, any CK_COND), and REQUEST
/// SENSE.
fn non_waking(c: &[u8]) -> bool {
    match c.first() {
        Some(0x85) => c.len() == 16 && c[14] == 0xE5 && (c[1] >> 1) & 0x0f == 3,
        Some(0xA1) => c.len() == 12 && c[9] == 0xE5 && (c[1] >> 1) & 0x0f == 3,
        Some(0x03) => c.len() == 6,
        _ => false,
    }
}

#[derive(Clone)]
struct Fake(Arc<Mutex<Disk>>);

impl Fake {
    fn new(d: Disk) -> Fake {
        Fake(Arc::new(Mutex::new(d)))
    }
    fn disk(&self) -> std::sync::MutexGuard<'_, Disk> {
        self.0.lock().unwrap()
    }
    fn opener(&self) -> Opener {
        let f = self.clone();
        Arc::new(move |_: &Path| Box::new(f.clone()) as Box<dyn Link + Send>)
    }
}

fn illegal() -> Reply {
    Reply {
        ok: false,
        status: 2,
        sense: fixed(0x05, 0x20, 0x00, [0; 4]),
        ..Reply::default()
    }
}

impl Link for Fake {
    fn send(&mut self, cdb: &[u8], data_in: usize) -> Result<Reply, SendError> {
        let mut d = self.disk();
        if d.missing {
            return Err(SendError::Failed(
                "/dev/fake: No such file or directory".into(),
            ));
        }
        if d.not_sg {
            return Err(SendError::NotSg(
                "/dev/fake: SG_IO not supported: not a SCSI or ATA device".into(),
            ));
        }
        d.sent.push(cdb.to_vec());
        if d.asleep && !non_waking(cdb) {
            d.woken_by.push(cdb.to_vec());
        }
        let form = match cdb[0] {
            0x85 => d.ata16,
            0xA1 => d.ata12,
            _ => d.scsi,
        };
        match form {
            Form::Illegal => return Ok(illegal()),
            Form::Mute => {
                return Ok(Reply {
                    ok: true,
                    ..Reply::default()
                });
            }
            Form::Works => {}
        }
        let ata_command = match cdb[0] {
            0x85 => Some(cdb[14]),
            0xA1 => Some(cdb[9]),
            _ => None,
        };
        Ok(match (ata_command, cdb[0]) {
            (Some(0xE5), _) => Reply {
                ok: false,
                status: 2,
                sense: descriptor_ata(if d.asleep { 0x00 } else { 0xFF }, 0x50, &[]),
                ..Reply::default()
            },
            (Some(0xE0), _) => {
                d.asleep = !d.ignores_standby;
                Reply {
                    ok: true,
                    ..Reply::default()
                }
            }
            (None, 0x03) => {
                let mut data = if d.asleep {
                    fixed(0, 0x5E, 0x04, [0; 4])
                } else {
                    fixed(0, 0, 0, [0; 4])
                };
                data.truncate(data_in);
                Reply {
                    ok: true,
                    data,
                    ..Reply::default()
                }
            }
            (None, 0x1B) if cdb[4] >> 4 == 3 => {
                d.asleep = !d.ignores_standby;
                Reply {
                    ok: true,
                    ..Reply::default()
                }
            }
            // Anything else needs the medium: it spins up.
            _ => {
                d.asleep = false;
                Reply {
                    ok: true,
                    ..Reply::default()
                }
            }
        })
    }

    fn hdparm_check(&mut self) -> HdparmAnswer {
        let d = self.disk();
        match &d.hdparm {
            HdparmAnswer::State(_) => HdparmAnswer::State(if d.asleep {
                PowerState::Standby
            } else {
                PowerState::Active
            }),
            other => other.clone(),
        }
    }

    fn hdparm_standby(&mut self) -> Result<(), String> {
        let mut d = self.disk();
        d.hdparm_standbys += 1;
        d.asleep = true;
        Ok(())
    }
}

fn probe(d: Disk, skip: &[Transport]) -> (Result<transport::Probe, String>, Fake) {
    let f = Fake::new(d);
    let mut link = f.clone();
    (transport::probe(&mut link, skip), f)
}

use Form::{Illegal, Mute, Works};

#[test]
fn probe_takes_ata16_when_it_works() {
    let (p, f) = probe(Disk::new(Works, Works, Works), &[]);
    let p = p.unwrap();
    assert_eq!(
        (p.transport, p.power),
        (Transport::Ata16, PowerState::Active)
    );
    assert_eq!(
        f.disk().sent,
        [sgio::ata_pass_through_16(0xE5, true).to_vec()]
    );
}

#[test]
fn probe_falls_back_to_ata12_when_ata16_is_illegal() {
    let (p, f) = probe(Disk::new(Illegal, Works, Works), &[]);
    let p = p.unwrap();
    assert_eq!(p.transport, Transport::Ata12);
    assert!(p.why.contains("illegal request"), "{}", p.why);
    assert_eq!(f.disk().sent.len(), 2);
}

#[test]
fn probe_falls_back_to_scsi_when_both_ata_forms_are_refused() {
    for (a16, a12) in [(Illegal, Illegal), (Mute, Illegal), (Illegal, Mute)] {
        let mut d = Disk::new(a16, a12, Works);
        d.asleep = true;
        let (p, f) = probe(d, &[]);
        let p = p.unwrap();
        assert_eq!(
            (p.transport, p.power),
            (Transport::Scsi, PowerState::Standby),
            "{a16:?} {a12:?}"
        );
        assert_eq!(f.disk().sent.last().unwrap(), &sgio::request_sense(252));
    }
}

#[test]
fn probe_falls_back_to_hdparm_then_to_none() {
    let mut d = Disk::new(Illegal, Illegal, Illegal);
    d.hdparm = HdparmAnswer::State(PowerState::Active);
    let p = probe(d, &[]).0.unwrap();
    assert_eq!(p.transport, Transport::Hdparm);
    // hdparm absent, or unable to tell: nothing reaches the disk.
    for h in [
        HdparmAnswer::Missing,
        HdparmAnswer::Unknown("hdparm -C /dev/fake failed".into()),
    ] {
        let mut d = Disk::new(Illegal, Illegal, Illegal);
        d.hdparm = h.clone();
        let p = probe(d, &[]).0.unwrap();
        assert_eq!(p.transport, Transport::None, "{h:?}");
        assert!(p.why.contains("illegal request"), "{}", p.why);
    }
    // No SG_IO at all (a loop device): one attempt, then hdparm.
    let mut d = Disk::new(Works, Works, Works);
    d.not_sg = true;
    let (p, _) = probe(d, &[]);
    let p = p.unwrap();
    assert_eq!(p.transport, Transport::None);
    assert!(p.why.contains("SG_IO not supported"), "{}", p.why);
    assert!(p.why.contains("hdparm is not installed"), "{}", p.why);
}

#[test]
fn a_disk_that_cannot_be_reached_is_an_error_not_none() {
    let mut d = Disk::new(Works, Works, Works);
    d.missing = true;
    let e = probe(d, &[]).0.unwrap_err();
    assert!(e.contains("No such file"), "{e}");
}

#[test]
fn probe_skips_transports_that_refused_before() {
    let (p, f) = probe(Disk::new(Works, Works, Works), &[Transport::Ata16]);
    assert_eq!(p.unwrap().transport, Transport::Ata12);
    assert_eq!(
        f.disk().sent,
        [sgio::ata_pass_through_12(0xE5, true).to_vec()]
    );
}

/// Every combination of answers, asleep or awake: the probe picks the
/// first transport that answers (ata16, ata12, scsi, hdparm, none), and
/// sends a sleeping disk nothing that could wake it.
#[test]
fn the_probe_never_wakes_a_sleeping_disk_and_picks_the_first_that_answers() {
    let forms = [Works, Illegal, Mute];
    let hd = [
        HdparmAnswer::Missing,
        HdparmAnswer::Unknown("x".into()),
        HdparmAnswer::State(PowerState::Active),
    ];
    let mut cases = 0;
    for a16 in forms {
        for a12 in forms {
            for scsi in forms {
                for h in &hd {
                    for asleep in [false, true] {
                        let mut d = Disk::new(a16, a12, scsi);
                        d.hdparm = h.clone();
                        d.asleep = asleep;
                        let (p, f) = probe(d, &[]);
                        let p = p.unwrap();
                        let want = if a16 == Works {
                            Transport::Ata16
                        } else if a12 == Works {
                            Transport::Ata12
                        } else if scsi == Works {
                            Transport::Scsi
                        } else if matches!(h, HdparmAnswer::State(_)) {
                            Transport::Hdparm
                        } else {
                            Transport::None
                        };
                        assert_eq!(p.transport, want, "{a16:?} {a12:?} {scsi:?} {h:?}");
                        let d = f.disk();
                        assert_eq!(d.asleep, asleep, "the probe changed the power state");
                        assert!(d.woken_by.is_empty(), "{:?}", d.woken_by);
                        assert!(d.sent.iter().all(|c| non_waking(c)), "{:?}", d.sent);
                        if want != Transport::Hdparm && want != Transport::None {
                            let expect = if asleep {
                                PowerState::Standby
                            } else {
                                PowerState::Active
                            };
                            assert_eq!(p.power, expect);
                        }
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 162);
}

#[test]
fn standby_and_power_through_each_transport() {
    for t in Transport::SG {
        let f = Fake::new(Disk::new(Works, Works, Works));
        let mut link = f.clone();
        assert_eq!(transport::check_power(t, &mut link), Ok(PowerState::Active));
        transport::standby(t, &mut link).unwrap();
        assert_eq!(
            transport::check_power(t, &mut link),
            Ok(PowerState::Standby)
        );
        assert_eq!(f.disk().sent[1], t.standby_cdb().unwrap());
    }
    // Refusals are told apart: illegal, mute, no SG_IO.
    let f = Fake::new(Disk::new(Illegal, Mute, Works));
    let mut link = f.clone();
    assert!(matches!(
        transport::standby(Transport::Ata16, &mut link),
        Err(CmdError::Illegal(_))
    ));
    assert!(matches!(
        transport::check_power(Transport::Ata12, &mut link),
        Err(CmdError::NoAnswer(_))
    ));
    // `sgio` walks on past illegal requests to the SCSI command.
    let f = Fake::new(Disk::new(Illegal, Illegal, Works));
    let mut link = f.clone();
    assert_eq!(
        transport::standby_any(&mut link),
        Ok(Transport::Scsi.standby_name())
    );
    assert!(f.disk().asleep);
    let mut d = Disk::new(Works, Works, Works);
    d.not_sg = true;
    let mut link = Fake::new(d);
    let e = transport::standby_any(&mut link).unwrap_err();
    assert!(e.contains("SG_IO"), "{e}");
}

// ---------------------------------------------------------------------
// The chooser: memory, re-probes, leaving a disk alone.

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn memo(t: Transport, dev: &Path) -> TransportMemo {
    let (device, kernel) = transport::identity(dev);
    TransportMemo {
        transport: t,
        device,
        kernel,
        probed_unix: 1,
        why: "test".into(),
    }
}

/// A chooser for the disk `key` at `/dev/DEV` behind `f`, remembering
/// `remembered` (a transport and the node it was probed on).
fn chooser(
    f: &Fake,
    backend: Backend,
    dev: &str,
    remembered: Option<(Transport, &str)>,
) -> (Chooser, PathBuf) {
    let dev = PathBuf::from("/dev").join(dev);
    let memo = remembered.map(|(t, on)| memo(t, &PathBuf::from("/dev").join(on)));
    let c = Chooser::with_opener("disk", backend, dev.clone(), memo, f.opener());
    (c, dev)
}

#[test]
fn a_remembered_transport_is_used_without_a_probe() {
    let f = Fake::new(Disk::new(Illegal, Works, Works));
    let (mut c, dev) = chooser(
        &f,
        Backend::Auto,
        "fake-sdz",
        Some((Transport::Ata12, "fake-sdz")),
    );
    runtime().block_on(async {
        c.prepare().await;
        assert!(f.disk().sent.is_empty(), "probed: {:?}", f.disk().sent);
        assert_eq!(c.take_memo(), None);
        assert_eq!(c.power(&dev).await, Some(Ok(PowerState::Active)));
        assert_eq!(
            f.disk().sent,
            [sgio::ata_pass_through_12(0xE5, true).to_vec()]
        );
    });
}

#[test]
fn another_device_node_is_probed_again() {
    let f = Fake::new(Disk::new(Illegal, Works, Works));
    // The by-id link pointed at fake-sdy when probed; now at fake-sdx.
    let (mut c, _) = chooser(
        &f,
        Backend::Auto,
        "fake-sdx",
        Some((Transport::Scsi, "fake-sdy")),
    );
    runtime().block_on(async {
        c.prepare().await;
        let m = c.take_memo().expect("probed again");
        assert_eq!(m.transport, Transport::Ata12);
        assert_eq!(m.kernel, "fake-sdx");
        // Remembered now: no second probe.
        let before = f.disk().sent.len();
        c.prepare().await;
        assert_eq!(f.disk().sent.len(), before);
        // Gone and back: probed again.
        c.forget();
        c.prepare().await;
        assert!(c.take_memo().is_some());
        assert!(f.disk().sent.len() > before);
    });
}

#[test]
fn a_transport_that_turns_illegal_is_replaced() {
    // ata16 answers CHECK POWER MODE, then refuses STANDBY IMMEDIATE.
    let f = Fake::new(Disk::new(Works, Works, Works));
    let (mut c, dev) = chooser(
        &f,
        Backend::Auto,
        "fake-sdw",
        Some((Transport::Ata16, "fake-sdw")),
    );
    runtime().block_on(async {
        c.prepare().await;
        f.disk().ata16 = Illegal;
        let r = c.standby(&dev).await.unwrap();
        assert_eq!(r, Standby::SpunDown(Transport::Ata12.standby_name().into()));
        let m = c.take_memo().expect("re-probed");
        assert_eq!(m.transport, Transport::Ata12);
        assert!(f.disk().asleep);
        // Asleep now: the next order finds it so and sends no standby.
        let n = f.disk().sent.len();
        assert_eq!(c.standby(&dev).await, Ok(Standby::Already));
        assert_eq!(f.disk().sent.len(), n + 1);
    });
    // An explicit backend is not replaced: the refusal is an error.
    let f = Fake::new(Disk::new(Illegal, Works, Works));
    let (mut c, dev) = chooser(&f, Backend::Ata16, "fake-sdv", None);
    runtime().block_on(async {
        let e = c.standby(&dev).await.unwrap_err();
        assert!(e.contains("illegal request"), "{e}");
        assert_eq!(c.take_memo(), None);
    });
}

#[test]
fn a_drive_still_active_after_standby_gets_no_more_power_checks() {
    // QEMU's emulated disks (the guest test, issue 28): STANDBY accepted,
    // and CHECK POWER MODE / REQUEST SENSE answer active right after.
    // Periodic checks would count a spin-up for every one of them.
    for (forms, t) in [
        ((Works, Works, Works), Transport::Ata16),
        ((Illegal, Illegal, Works), Transport::Scsi),
    ] {
        let mut d = Disk::new(forms.0, forms.1, forms.2);
        d.ignores_standby = true;
        let f = Fake::new(d);
        let (mut c, dev) = chooser(&f, Backend::Auto, "fake-sds", Some((t, "fake-sds")));
        runtime().block_on(async {
            assert_eq!(c.power(&dev).await, Some(Ok(PowerState::Active)));
            let n = f.disk().sent.len();
            assert_eq!(
                c.standby(&dev).await,
                Ok(Standby::Unconfirmed(t.standby_name().into()))
            );
            // Check, standby, and the check that read it back.
            let sent = f.disk().sent[n..].to_vec();
            assert_eq!(sent.len(), 3, "{t}: {sent:x?}");
            assert_eq!(sent[0], sent[2], "{t}: read back with the same check");
            // No more power checks: none sent.
            let n = f.disk().sent.len();
            assert_eq!(c.power(&dev).await, None, "{t}");
            assert_eq!(f.disk().sent.len(), n);
            // A standby that takes: confirmed, checks resume.
            f.disk().ignores_standby = false;
            assert_eq!(
                c.standby(&dev).await,
                Ok(Standby::SpunDown(t.standby_name().into()))
            );
            assert_eq!(c.power(&dev).await, Some(Ok(PowerState::Standby)));
            // Ignored again, then replugged: checks resume too.
            f.disk().asleep = false;
            f.disk().ignores_standby = true;
            assert!(matches!(c.standby(&dev).await, Ok(Standby::Unconfirmed(_))));
            assert_eq!(c.power(&dev).await, None);
            c.forget();
            assert_eq!(c.power(&dev).await, Some(Ok(PowerState::Active)));
        });
    }
}

#[test]
fn a_disk_nothing_reaches_is_left_alone() {
    let f = Fake::new(Disk::new(Illegal, Illegal, Illegal));
    let (mut c, dev) = chooser(&f, Backend::Auto, "fake-sdu", None);
    runtime().block_on(async {
        c.prepare().await;
        let m = c.take_memo().unwrap();
        assert_eq!(m.transport, Transport::None);
        let n = f.disk().sent.len();
        assert_eq!(c.standby(&dev).await, Ok(Standby::LeftAlone));
        assert_eq!(c.power(&dev).await, None);
        assert_eq!(f.disk().sent.len(), n, "commands sent to a disk left alone");
        assert_eq!(c.take_memo(), None, "probed again");
    });
    let mut st = DiskState::default();
    assert!(!transport::left_alone(Backend::Auto, st.transport.as_ref()));
    st.transport = Some(memo(Transport::None, &dev));
    assert!(transport::left_alone(Backend::Auto, st.transport.as_ref()));
    assert!(!transport::left_alone(Backend::Sgio, st.transport.as_ref()));
    st.transport = Some(memo(Transport::Scsi, &dev));
    assert!(!transport::left_alone(Backend::Auto, st.transport.as_ref()));
}

#[test]
fn hdparm_is_the_last_resort_for_standby_without_power_checks() {
    let mut d = Disk::new(Illegal, Illegal, Illegal);
    d.hdparm = HdparmAnswer::State(PowerState::Active);
    let f = Fake::new(d);
    let (mut c, dev) = chooser(&f, Backend::Auto, "fake-sdt", None);
    runtime().block_on(async {
        assert_eq!(c.power(&dev).await, None);
        assert_eq!(c.take_memo().unwrap().transport, Transport::Hdparm);
        assert_eq!(
            c.standby(&dev).await,
            Ok(Standby::SpunDown("hdparm -y".into()))
        );
        assert_eq!(f.disk().hdparm_standbys, 1);
    });
}

// ---------------------------------------------------------------------
// The state file.

#[test]
fn the_state_file_keeps_the_transport_and_reads_old_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.json");
    // A file from before the field: loads, not probed yet.
    std::fs::write(
        &p,
        r#"{"sdb": {"spindowns": 3, "kernel_name": "sdb", "present": true}}"#,
    )
    .unwrap();
    let old = State::load(&p).unwrap();
    assert_eq!(old.disks["sdb"].spindowns, 3);
    assert_eq!(old.disks["sdb"].transport, None);
    // Without a transport, the field is not written.
    old.save(&p).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    assert!(v["sdb"].get("transport").is_none(), "{v}");
    // With one, it round-trips, as lowercase names.
    for t in [
        Transport::Ata16,
        Transport::Ata12,
        Transport::Scsi,
        Transport::Hdparm,
        Transport::None,
    ] {
        let mut s = old.clone();
        s.disk("sdb").transport = Some(TransportMemo {
            transport: t,
            device: "8:16".into(),
            kernel: "sdb".into(),
            probed_unix: 1_700_000_000,
            why: "answers".into(),
        });
        s.save(&p).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["sdb"]["transport"]["transport"], t.name());
        assert_eq!(v["sdb"]["transport"]["device"], "8:16");
        assert_eq!(State::load(&p).unwrap(), s);
    }
    // A memo written with only its transport still loads.
    std::fs::write(&p, r#"{"sdc": {"transport": {"transport": "scsi"}}}"#).unwrap();
    let s = State::load(&p).unwrap();
    let m = s.disks["sdc"].transport.as_ref().unwrap();
    assert_eq!((m.transport, m.device.as_str()), (Transport::Scsi, ""));
}

// ---------------------------------------------------------------------
// The configuration.

fn check(backend: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("lull.toml");
    std::fs::write(
        &cfg,
        format!(
            "state_file = {:?}\n\n[[disk]]\ndevice = \"sdq\"\n\n[[disk]]\ndevice = \"sdr\"\ntask = \"standby\"\nbackend = \"{backend}\"\n",
            dir.path().join("state.json")
        ),
    )
    .unwrap();
    Command::new(LULLD)
        .arg("--config")
        .arg(&cfg)
        .arg("--check")
        .env_remove("LULL_LOG")
        .output()
        .unwrap()
}

#[test]
fn check_accepts_every_backend_and_names_a_bad_one() {
    for b in ["auto", "sgio", "ata16", "ata12", "scsi", "hdparm"] {
        let out = check(b);
        assert!(
            out.status.success(),
            "{b}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = check("ata14");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("disk[1].backend"), "{err}");
    assert!(err.contains("line 9") || err.contains(":9"), "{err}");
    assert!(err.contains("\"ata14\""), "{err}");
    for b in ["ata16", "ata12", "scsi"] {
        assert!(err.contains(b), "{err}");
    }
}

// ---------------------------------------------------------------------
// lulld on a loop device (root only).

fn start(config: &Path, log: &str) -> Daemon {
    let mut cmd = Command::new(LULLD);
    cmd.arg("--config").arg(config);
    Daemon::spawn(cmd, config.with_file_name(log), &[])
}

/// `--check` on a loop device with a backend that sends SG_IO without a
/// probe: the warning names the device, the backend and the way out
/// (`auto`); with `hdparm` no such warning; with `auto`, the probe's
/// finding that nothing reaches the drive, so the daemon leaves it alone
/// (a trial learned that from the journal only).
#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn check_warns_of_an_sg_io_backend_on_a_device_that_takes_no_sg_io() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip("needs root and loop devices");
        return;
    };
    let key = devs[0].name();
    let cfg = dir.path().join("lull.toml");
    for backend in ["sgio", "ata16", "scsi", "auto", "hdparm"] {
        std::fs::write(
            &cfg,
            format!(
                "state_file = {:?}\n\n[[disk]]\ndevice = {key:?}\nnetwork = \"timer(10s)\"\ntask = \"standby\"\nbackend = \"{backend}\"\n",
                dir.path().join("state.json")
            ),
        )
        .unwrap();
        let out = Command::new(LULLD)
            .arg("--config")
            .arg(&cfg)
            .args(["--check", "--format", "json"])
            .env_remove("LULL_LOG")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let js: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let warned: Vec<&str> = js["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w.as_str())
            .filter(|w| w.contains("SG_IO not supported"))
            .collect();
        if backend == "hdparm" {
            assert!(warned.is_empty(), "{backend}: {warned:?}");
        } else if backend == "auto" {
            assert_eq!(warned.len(), 1, "{backend}: {js}");
            let w = warned[0];
            assert!(
                w.starts_with(&format!("disk[0] {key}: no command reaches the drive (")),
                "{w}"
            );
            assert!(w.contains("the daemon would leave it alone"), "{w}");
        } else {
            assert_eq!(warned.len(), 1, "{backend}: {js}");
            let w = warned[0];
            assert!(
                w.starts_with(&format!("disk[0] {key}: backend = \"{backend}\"")),
                "{w}"
            );
            assert!(w.contains("the default backend, auto, probes"), "{w}");
        }
    }
}

/// The lines of `log` that report a transport choice.
fn choices(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(": transport ")).collect()
}

#[test]
#[cfg_attr(
    not(has_loop),
    ignore = "needs root and loop devices (/dev/loop-control)"
)]
fn the_daemon_probes_a_loop_device_once_and_remembers_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let Some(devs) = loops(dir.path(), 1) else {
        lull_testkit::skip("needs root and loop devices");
        return;
    };
    let disk = &devs[0];
    let key = disk.name();
    let st = dir.path().join("state.json");
    let cfg = dir.path().join("lull.toml");
    // A short timer: several idle periods pass while the daemon runs.
    std::fs::write(
        &cfg,
        format!(
            "state_file = {st:?}\npoll = \"100ms\"\nstate_interval = \"1s\"\npower_check = \"200ms\"\n\n[[disk]]\ndevice = {key:?}\nnetwork = \"timer(200ms)\"\ntask = \"standby\"\nbackend = \"auto\"\n"
        ),
    )
    .unwrap();
    let io = Traffic::new(&disk.dev);
    io.set(true);
    let mut d = start(&cfg, "first.log");
    wait_for(
        "the transport in the state file",
        Duration::from_secs(20),
        || !state(&st)[key]["transport"].is_null(),
        || d.log(),
    );
    // Idle periods come and go: the disk is left alone, quietly.
    for cycle in 1..=2 {
        io.set(false);
        wait_for(
            &format!("idle period {cycle}"),
            Duration::from_secs(20),
            || state(&st)[key]["task_starts"].as_u64().unwrap_or(0) >= cycle,
            || d.log(),
        );
        io.set(true);
        wait_for(
            &format!("busy period {cycle}"),
            Duration::from_secs(20),
            || state(&st)[key]["task_stops"].as_u64().unwrap_or(0) >= cycle,
            || d.log(),
        );
    }
    io.set(false);
    std::thread::sleep(Duration::from_millis(500));
    assert!(d.stop().success(), "{}", d.log());
    let log = d.log();
    let first = state(&st);
    let m = &first[key]["transport"];
    // A loop device takes no SG_IO, and `hdparm -C` (if installed) cannot
    // tell its state: nothing reaches it.
    assert_eq!(m["transport"], "none", "{first}\n{log}");
    assert_eq!(m["kernel"], key, "{m}");
    let numbers = std::fs::read_to_string(format!("/sys/class/block/{key}/dev")).unwrap();
    assert_eq!(m["device"], numbers.trim(), "{m}");
    assert!(m["why"].as_str().unwrap().contains("SG_IO"), "{m}");
    assert_eq!(choices(&log).len(), 1, "{log}");
    assert!(choices(&log)[0].contains("left alone"), "{log}");
    assert_eq!(first[key]["errors"], 0, "{log}");
    assert_eq!(first[key]["spindowns"], 0, "{log}");
    assert!(!log.contains("standby failed"), "{log}");
    assert!(
        first[key]["last_decision"]
            .as_str()
            .unwrap()
            .contains("no transport"),
        "{first}"
    );

    // Restarted: remembered, not probed again.
    let mut d = start(&cfg, "second.log");
    wait_for(
        "the remembered transport",
        Duration::from_secs(20),
        || d.log().contains("remembered from the state file"),
        || d.log(),
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(d.stop().success(), "{}", d.log());
    let log = d.log();
    assert_eq!(choices(&log).len(), 1, "{log}");
    assert!(
        choices(&log)[0].contains("transport none (remembered"),
        "{log}"
    );
    let second = state(&st);
    assert_eq!(second[key]["transport"], first[key]["transport"], "{log}");
}

#[test]
#[cfg_attr(not(has_root), ignore = "needs root (creates names under /dev)")]
fn the_daemon_probes_again_when_the_disk_is_replugged() {
    if !support::is_root() {
        lull_testkit::skip("needs root (creates names under /dev)");
        return;
    }
    let names = support::DevNames::new("lulltp");
    let [a, b] = names.kernel.clone();
    let link = names.link.clone();
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let key = link.to_str().unwrap();
    let both = support::line(&a, 0, 5) + &support::line(&b, 1, 5);
    let s = support::Setup::new(
        &format!("[[disk]]\ndevice = {key:?}\nnetwork = \"timer(10m)\"\ntask = \"standby\"\n"),
        &both,
    );
    let mut d = start(&s.config, "replug.log");
    let probed_on = |k: &str| s.state()[key]["transport"]["kernel"] == k;
    // Neither a regular file nor (if installed) hdparm answers: none.
    wait_for(
        "the probe",
        Duration::from_secs(20),
        || probed_on(&a),
        || d.log(),
    );
    assert_eq!(s.state()[key]["transport"]["transport"], "none");
    // The by-id link moves to another kernel device: probed again there.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&b, &link).unwrap();
    wait_for(
        "the probe of b",
        Duration::from_secs(20),
        || probed_on(&b),
        || d.log(),
    );
    // The disk vanishes and comes back under the same name: probed again.
    support::write(&s.diskstats, &support::line(&a, 0, 5));
    wait_for(
        "the disk to vanish",
        Duration::from_secs(20),
        || d.log().contains("vanished"),
        || d.log(),
    );
    support::write(&s.diskstats, &both);
    wait_for(
        "the third probe",
        Duration::from_secs(20),
        || choices(&d.log()).len() == 3,
        || d.log(),
    );
    assert!(d.stop().success(), "{}", d.log());
    let log = d.log();
    assert_eq!(
        log.matches("replugged; its transport is probed again")
            .count(),
        2,
        "{log}"
    );
    assert!(
        choices(&log).iter().all(|l| l.contains("transport none")),
        "{log}"
    );
    assert_eq!(s.state()[key]["errors"], 0, "{log}");
    drop(names);
}
