//! The identification parsers over byte fixtures laid out as ATA/ACS, SPC
//! and SBC define them, and the order of questions over a fake link.

use super::*;
use crate::sgio::{Reply, SendError};
use crate::transport::HdparmAnswer;
use lull_tasks::drive::{Drive, PresetSource};
use proptest::prelude::*;

/// IDENTIFY DEVICE data: `model` in words 27–46 and `serial` in 10–19
/// (ATA strings: first character in each word's high byte), `form` in
/// word 168, `rpm` in word 217, and the integrity word 255 (signature
/// A5h, checksum) when `checksum`.
fn identify_data(model: &str, serial: &str, form: u16, rpm: u16, checksum: bool) -> Vec<u8> {
    let mut d = vec![0u8; 512];
    let mut put_string = |first: usize, words: usize, s: &str| {
        let mut padded = s.as_bytes().to_vec();
        padded.resize(2 * words, b' ');
        for (w, pair) in padded.chunks_exact(2).enumerate() {
            d[2 * (first + w)] = pair[1];
            d[2 * (first + w) + 1] = pair[0];
        }
    };
    put_string(27, 20, model);
    put_string(10, 10, serial);
    d[2 * 168..2 * 168 + 2].copy_from_slice(&form.to_le_bytes());
    d[2 * 217..2 * 217 + 2].copy_from_slice(&rpm.to_le_bytes());
    if checksum {
        d[510] = 0xA5;
        let sum = d[..511].iter().fold(0u8, |a, &b| a.wrapping_add(b));
        d[511] = 0u8.wrapping_sub(sum);
    }
    d
}

/// `d` with word `w` set to `v` and the integrity word made good again.
fn with_word(mut d: Vec<u8>, w: usize, v: u16) -> Vec<u8> {
    d[2 * w..2 * w + 2].copy_from_slice(&v.to_le_bytes());
    d[510] = 0xA5;
    let sum = d[..511].iter().fold(0u8, |a, &b| a.wrapping_add(b));
    d[511] = 0u8.wrapping_sub(sum);
    d
}

/// IDENTIFY data with the APM feature set supported (word 83 bit 3, the
/// word valid: bits 15:14 = 01b), enabled or not (word 86 bit 3, word 87
/// valid) at `level` (word 91).
fn with_apm(d: Vec<u8>, enabled: bool, level: u16) -> Vec<u8> {
    let d = with_word(d, 83, 0x4000 | 0x0008);
    let d = with_word(d, 86, if enabled { 0x0008 } else { 0 });
    let d = with_word(d, 87, 0x4000);
    // The high byte of word 91 is reserved (hdparm once read 40h there).
    with_word(d, 91, 0x4000 | level)
}

/// Standard INQUIRY data (SPC-4 table 148): device type 0, vendor,
/// product, revision.
fn inquiry_data(vendor: &str, product: &str) -> Vec<u8> {
    let mut d = vec![0u8; 36];
    d[2] = 6; // VERSION: SPC-4
    d[4] = 31; // ADDITIONAL LENGTH
    let mut field = |at: usize, len: usize, s: &str| {
        let mut b = s.as_bytes().to_vec();
        b.resize(len, b' ');
        d[at..at + len].copy_from_slice(&b);
    };
    field(8, 8, vendor);
    field(16, 16, product);
    field(32, 4, "0001");
    d
}

fn vpd_page(page: u8, payload: &[u8]) -> Vec<u8> {
    let mut d = vec![0, page];
    d.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    d.extend_from_slice(payload);
    d
}

/// Block Device Characteristics (SBC-4 table 236): rotation rate in bytes
/// 4–5, form factor in byte 7, page length 3Ch.
fn bdc_page(rate: u16, form: u8) -> Vec<u8> {
    let mut p = vec![0u8; 0x3c];
    p[..2].copy_from_slice(&rate.to_be_bytes());
    p[3] = form;
    vpd_page(0xB1, &p)
}

#[test]
fn identify_device_fields_are_where_acs_puts_them() {
    let d = identify_data("WDC WD40EFRX-68N32N0", "WD-WCC7K1234567", 2, 5400, true);
    let a = parse_identify(&d).unwrap();
    assert_eq!(a.model, "WDC WD40EFRX-68N32N0");
    assert_eq!(a.serial, "WD-WCC7K1234567");
    assert_eq!(a.rotation, Rotation::Rpm(5400));
    assert_eq!(a.form_factor, Some(FormFactor::In3_5));
    // The preset follows the model.
    let drive = Drive::identified(
        &Identity {
            model: Some(a.model),
            ..Identity::default()
        }
        .facts(),
    );
    assert_eq!(
        (drive.preset.as_str(), drive.source),
        ("wd-red-plus", PresetSource::Identified)
    );
}

#[test]
fn the_drive_s_own_power_management_is_read_where_acs_puts_it() {
    let plain = identify_data("ST2000LM015-2E8174", "ZDZ1", 3, 5400, true);
    let none = parse_identify(&plain).unwrap();
    assert_eq!((none.apm, none.epc_enabled), (None, None));
    // A laptop drive as many ship: APM enabled at 7Fh, standby of its own
    // allowed.
    let a = parse_identify(&with_apm(plain.clone(), true, 0x7F)).unwrap();
    assert_eq!(a.apm, Some(Apm::Level(127)));
    assert!(a.apm.unwrap().allows_standby());
    for (level, standby) in [(1, true), (0x80, false), (0xC0, false), (0xFE, false)] {
        let a = parse_identify(&with_apm(plain.clone(), true, level)).unwrap();
        assert_eq!(a.apm, Some(Apm::Level(level as u8)));
        assert_eq!(a.apm.unwrap().allows_standby(), standby, "level {level}");
    }
    let off = parse_identify(&with_apm(plain.clone(), false, 0x7F)).unwrap();
    assert_eq!(off.apm, Some(Apm::Disabled));
    // Words not marked valid (bits 15:14 other than 01b) say nothing.
    let invalid = with_word(with_apm(plain.clone(), true, 0x7F), 83, 0xFFFF);
    assert_eq!(parse_identify(&invalid).unwrap().apm, None);
    let invalid = with_word(with_apm(plain.clone(), true, 0x7F), 87, 0);
    assert_eq!(parse_identify(&invalid).unwrap().apm, None);
    // EPC: word 119 bit 7 supported, word 120 bit 7 enabled.
    let epc = with_word(with_word(plain.clone(), 119, 0x4080), 120, 0x4080);
    assert_eq!(parse_identify(&epc).unwrap().epc_enabled, Some(true));
    let epc_off = with_word(with_word(plain.clone(), 119, 0x4080), 120, 0x4000);
    assert_eq!(parse_identify(&epc_off).unwrap().epc_enabled, Some(false));
    assert_eq!(
        parse_identify(&with_word(plain, 119, 0x0080))
            .unwrap()
            .epc_enabled,
        None,
        "word 119 not valid"
    );
}

#[test]
fn a_drive_that_spins_itself_down_is_named_with_the_fix() {
    let id = |apm, epc| Identity {
        apm,
        epc_enabled: epc,
        kernel: "sdc".into(),
        ..Identity::default()
    };
    let own = id(Some(Apm::Level(127)), None).own_standby().unwrap();
    assert!(own.contains("APM level is 127"), "{own}");
    assert!(own.contains("hdparm -B 254 /dev/sdc"), "{own}");
    for quiet in [
        id(Some(Apm::Level(128)), Some(true)),
        id(Some(Apm::Level(254)), None),
        id(Some(Apm::Disabled), None),
        id(None, None),
    ] {
        assert_eq!(quiet.own_standby(), None, "{quiet:?}");
    }
    assert_eq!(
        id(Some(Apm::Level(127)), Some(true))
            .power_management()
            .as_deref(),
        Some(
            "APM level 127: the drive may spin itself down; EPC enabled: its own idle timers, and its Standby_z timer if set"
        )
    );
    assert_eq!(
        id(Some(Apm::Level(254)), Some(false))
            .power_management()
            .as_deref(),
        Some("APM level 254: no standby of its own")
    );
    assert_eq!(id(None, Some(false)).power_management(), None);
    // Kept in the state file, and an older entry without it reads as unknown.
    let json = serde_json::to_string(&id(Some(Apm::Level(127)), Some(false))).unwrap();
    assert!(json.contains(r#""apm":{"level":127}"#), "{json}");
    let back: Identity = serde_json::from_str(&json).unwrap();
    assert_eq!(back.apm, Some(Apm::Level(127)));
    let old: Identity =
        serde_json::from_str(r#"{"model":"X","via":"","device":"","kernel":"sdb"}"#).unwrap();
    assert_eq!((old.apm, old.epc_enabled), (None, None));
    // An older lull's identity is of layout 0: a restart asks again.
    assert_eq!(old.layout, 0);
    assert!(old.layout < IDENTITY_LAYOUT);
}

#[test]
fn a_bad_integrity_word_or_an_atapi_device_is_no_answer() {
    let mut d = identify_data("ST32000645NS", "Z1234", 2, 7200, true);
    assert!(parse_identify(&d).is_some());
    d[100] ^= 1;
    assert!(
        parse_identify(&d).is_none(),
        "the checksum no longer adds up"
    );
    let mut atapi = identify_data("QEMU DVD-ROM", "1", 0, 0, false);
    atapi[1] |= 0x80;
    assert!(parse_identify(&atapi).is_none());
    assert!(parse_identify(&[0u8; 511]).is_none());
    assert!(parse_identify(&[0u8; 512]).is_none(), "no model");
}

#[test]
fn a_solid_state_drive_reports_rotation_one() {
    let d = identify_data("Samsung SSD 870 EVO 1TB", "S6P", 3, 1, true);
    let a = parse_identify(&d).unwrap();
    assert_eq!(a.rotation, Rotation::NonRotating);
    let id = Identity {
        model: Some(a.model),
        rotation_code: Some(1),
        ..Identity::default()
    };
    assert_eq!(id.facts().spins(), Some(false));
}

#[test]
fn inquiry_and_vpd_pages_follow_spc_and_sbc() {
    let q = parse_inquiry(&inquiry_data("SEAGATE", "ST2000NM0001")).unwrap();
    assert_eq!(
        (q.device_type, q.vendor.as_str(), q.product.as_str()),
        (0, "SEAGATE", "ST2000NM0001")
    );
    assert_eq!(
        parse_vpd_serial(&vpd_page(0x80, b"  Z1P2Q3R4  ")).as_deref(),
        Some("Z1P2Q3R4")
    );
    assert_eq!(
        parse_vpd_serial(&vpd_page(0x83, b"Z1")),
        None,
        "another page"
    );
    assert_eq!(parse_vpd_serial(&vpd_page(0x80, b"    ")), None, "blank");
    assert_eq!(
        parse_vpd_characteristics(&bdc_page(7200, 0x22)),
        Some((Rotation::Rpm(7200), Some(FormFactor::In3_5))),
        "bits 7:4 of byte 7 (WABEREQ, WACEREQ) are not the form factor"
    );
    assert_eq!(
        parse_vpd_characteristics(&bdc_page(1, 3)),
        Some((Rotation::NonRotating, Some(FormFactor::In2_5)))
    );
    let mut ata_info = vec![0u8; 568];
    ata_info[56..568].copy_from_slice(&identify_data(
        "WDC WD60EFZX-68B3FN0",
        "WD-C80",
        2,
        5640,
        true,
    ));
    let page = vpd_page(0x89, &ata_info);
    assert_eq!(page.len(), 572);
    assert_eq!(
        parse_vpd_ata_information(&page).unwrap().model,
        "WDC WD60EFZX-68B3FN0"
    );
}

#[test]
fn command_blocks_follow_the_standards() {
    assert_eq!(inquiry(None, 96), [0x12, 0, 0, 0, 96, 0]);
    assert_eq!(inquiry(Some(0xB1), 64), [0x12, 1, 0xB1, 0, 64, 0]);
    assert_eq!(inquiry(Some(0x89), 572), [0x12, 1, 0x89, 0x02, 0x3c, 0]);
    let c = identify_16();
    assert_eq!((c[0], c[1], c[2], c[6], c[14]), (0x85, 0x08, 0x0e, 1, 0xec));
    assert!(
        c.iter()
            .enumerate()
            .all(|(i, &b)| [0, 1, 2, 6, 14].contains(&i) || b == 0)
    );
    let c = identify_12();
    assert_eq!((c[0], c[1], c[2], c[4], c[9]), (0xa1, 0x08, 0x0e, 1, 0xec));
}

/// A good reply with `data`, or without it CHECK CONDITION with fixed
/// sense ILLEGAL REQUEST, INVALID FIELD IN CDB.
fn reply(data: Option<Vec<u8>>) -> Reply {
    match data {
        Some(data) => Reply {
            ok: true,
            data,
            ..Reply::default()
        },
        None => Reply {
            status: 2,
            sense: vec![0x70, 0, 5, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0],
            ..Reply::default()
        },
    }
}

/// A drive behind a link: answers the INQUIRY pages in `pages` (by page
/// code, `None` the standard data) and ATA IDENTIFY with `ata`; refuses
/// the rest.
struct Fake {
    pages: Vec<(Option<u8>, Vec<u8>)>,
    ata: Option<Vec<u8>>,
    sent: Vec<Vec<u8>>,
}

impl Fake {
    fn new(pages: Vec<(Option<u8>, Vec<u8>)>, ata: Option<Vec<u8>>) -> Self {
        Fake {
            pages,
            ata,
            sent: Vec::new(),
        }
    }
}

/// [`Fake`], answering READ LOG EXT with `log` and MODE SENSE with `mode`
/// as well.
struct Pages {
    fake: Fake,
    log: Option<Vec<u8>>,
    mode: Option<Vec<u8>>,
}

impl Link for Pages {
    fn send(&mut self, cdb: &[u8], data_in: usize) -> Result<Reply, SendError> {
        let answer = match (cdb[0], cdb.get(14)) {
            (0x85, Some(&ATA_READ_LOG_EXT)) => Some(self.log.clone()),
            (OP_MODE_SENSE_10, _) => Some(self.mode.clone()),
            _ => None,
        };
        let Some(data) = answer else {
            return self.fake.send(cdb, data_in);
        };
        self.fake.sent.push(cdb.to_vec());
        Ok(reply(data))
    }
    fn hdparm_check(&mut self) -> HdparmAnswer {
        HdparmAnswer::Missing
    }
    fn hdparm_standby(&mut self) -> Result<(), String> {
        Err("no".into())
    }
}

/// Page 01h of the Power Conditions log with a Standby_z descriptor
/// (bytes 448–511): supported, its current timer enabled or not, the
/// current setting `timer` in 100 ms (bytes 12–15, little-endian); the
/// Standby_y descriptor before it (384–447) with other values.
fn standby_log_page(supported: bool, enabled: bool, timer: u32) -> Vec<u8> {
    let mut p = vec![0u8; 512];
    // Standby_y: supported, enabled, 7 s: not the one read.
    p[385] = 0x80 | 0x04;
    p[396..400].copy_from_slice(&70u32.to_le_bytes());
    p[449] = if supported { 0x80 | 0x40 | 0x20 } else { 0 } | if enabled { 0x04 } else { 0 };
    // Default and saved settings differ from the current one.
    p[452..456].copy_from_slice(&1u32.to_le_bytes());
    p[456..460].copy_from_slice(&2u32.to_le_bytes());
    p[460..464].copy_from_slice(&timer.to_le_bytes());
    p
}

/// MODE SENSE (10) data: the 8-byte header with `descriptors` bytes of
/// block descriptors, then the Power Condition mode page of `len` bytes
/// after its 2-byte header (26h in SPC-4, 0Ah in SPC-3), STANDBY_Z (byte
/// 3 bit 0) and its timer (bytes 8–11, big-endian, 100 ms); IDLE_A (byte
/// 3 bit 1) set with another timer.
fn power_mode_page(descriptors: u16, len: u8, standby_z: bool, timer: u32) -> Vec<u8> {
    let mut d = vec![0u8; 8 + usize::from(descriptors)];
    d[6..8].copy_from_slice(&descriptors.to_be_bytes());
    let mut page = vec![0u8; 2 + usize::from(len)];
    page[0] = 0x80 | 0x1A; // PS set
    page[1] = len;
    page[3] = 0x02 | u8::from(standby_z);
    page[4..8].copy_from_slice(&20u32.to_be_bytes());
    page[8..12].copy_from_slice(&timer.to_be_bytes());
    d.extend_from_slice(&page);
    let total = (d.len() - 2) as u16;
    d[0..2].copy_from_slice(&total.to_be_bytes());
    d
}

#[test]
fn the_standby_z_timer_is_read_where_acs_and_spc_put_it() {
    let c = read_log_ext_16(POWER_CONDITIONS_LOG, STANDBY_CONDITIONS_PAGE);
    assert_eq!(
        (c[0], c[1], c[2], c[6], c[8], c[10], c[14]),
        (0x85, 0x09, 0x0e, 1, 0x08, 0x01, 0x2f)
    );
    assert!(
        c.iter()
            .enumerate()
            .all(|(i, &b)| [0, 1, 2, 6, 8, 10, 14].contains(&i) || b == 0)
    );
    assert_eq!(mode_sense_power(), [0x5a, 0x08, 0x1a, 0, 0, 0, 0, 0, 48, 0]);
    assert_eq!(mode_sense_power_len(), 48);
    let z = |enabled, ms| {
        Some(StandbyTimer {
            enabled,
            timer_ms: ms,
        })
    };
    // ATA: the Standby_z descriptor's current setting, not Standby_y's,
    // nor the default or saved one.
    assert_eq!(
        parse_power_conditions_standby(&standby_log_page(true, true, 6000)),
        z(true, 600_000)
    );
    assert_eq!(
        parse_power_conditions_standby(&standby_log_page(true, false, 6000)),
        z(false, 600_000)
    );
    assert_eq!(
        parse_power_conditions_standby(&standby_log_page(false, true, 6000)),
        None,
        "not supported"
    );
    assert_eq!(parse_power_conditions_standby(&[0u8; 511]), None);
    // SCSI: after the header and any block descriptors, in SPC-4's page
    // and SPC-3's shorter one.
    for (desc, len) in [(0, 0x26), (8, 0x26), (0, 0x0a)] {
        assert_eq!(
            parse_mode_power(&power_mode_page(desc, len, true, 36_000)),
            z(true, 3_600_000),
            "{desc} {len}"
        );
    }
    assert_eq!(
        parse_mode_power(&power_mode_page(0, 0x26, false, 36_000)),
        z(false, 3_600_000)
    );
    let mut other = power_mode_page(0, 0x26, true, 1);
    other[8] = 0x08; // the caching page
    assert_eq!(parse_mode_power(&other), None);
    assert_eq!(
        parse_mode_power(&power_mode_page(0, 0x26, true, 1)[..15]),
        None
    );
}

#[test]
fn the_drive_s_own_standby_z_timer_is_asked_where_it_can_be() {
    let epc = with_word(
        with_word(
            identify_data("ST4000NM0035-1V4107", "ZC1", 2, 7200, true),
            119,
            0x4080,
        ),
        120,
        0x4080,
    );
    let mut info = vec![0u8; 568];
    info[56..].copy_from_slice(&epc);
    let sata = || {
        Fake::new(
            vec![
                (None, inquiry_data("ATA", "ST4000NM0035-1V4")),
                (Some(0x80), vpd_page(0x80, b"ZC1")),
                (Some(0xB1), bdc_page(7200, 2)),
                (Some(0x89), vpd_page(0x89, &info)),
            ],
            None,
        )
    };
    // A SATA drive with EPC: its Power Conditions log.
    let mut link = Pages {
        fake: sata(),
        log: Some(standby_log_page(true, true, 9000)),
        mode: None,
    };
    let id = identify(&mut link, Some(true), false);
    assert_eq!(
        id.standby_z,
        Some(StandbyTimer {
            enabled: true,
            timer_ms: 900_000
        })
    );
    assert!(id.via.contains("LOG 08h"), "{}", id.via);
    assert!(link.fake.sent.iter().all(|c| c[0] != OP_MODE_SENSE_10));
    assert!(id.spins_itself_down());
    let own = Identity {
        kernel: "sdd".into(),
        ..id.clone()
    };
    let warning = own.own_standby().unwrap();
    assert!(
        warning.contains("Standby_z timer spins it down after 15m"),
        "{warning}"
    );
    assert!(
        warning.contains("openSeaChest_PowerControl -d /dev/sdd --standby_z disable"),
        "{warning}"
    );
    assert_eq!(
        own.own_standby_fix().as_deref(),
        Some("`openSeaChest_PowerControl -d /dev/sdd --standby_z disable`")
    );
    assert_eq!(
        own.power_management().as_deref(),
        Some("Standby_z timer after 15m: the drive spins itself down")
    );
    // Its timer off: reported, not warned of.
    let mut link = Pages {
        fake: sata(),
        log: Some(standby_log_page(true, false, 9000)),
        mode: None,
    };
    let id = identify(&mut link, Some(true), false);
    assert!(!id.spins_itself_down());
    assert_eq!(id.own_standby(), None);
    assert_eq!(
        id.power_management().as_deref(),
        Some("EPC enabled: its own idle timers, Standby_z off")
    );
    // Without EPC enabled, the log is not asked.
    let mut plain = sata();
    plain.pages[3] = (Some(0x89), {
        let mut i = vec![0u8; 568];
        i[56..].copy_from_slice(&identify_data("ST4000NM0035-1V4107", "ZC1", 2, 7200, true));
        vpd_page(0x89, &i)
    });
    let mut link = Pages {
        fake: plain,
        log: Some(standby_log_page(true, true, 9000)),
        mode: None,
    };
    let id = identify(&mut link, Some(true), false);
    assert_eq!(id.standby_z, None);
    assert!(
        link.fake
            .sent
            .iter()
            .all(|c| c.len() != 16 || c[14] != ATA_READ_LOG_EXT)
    );
    // A SAS drive: the Power Condition mode page.
    let sas = || {
        Fake::new(
            vec![
                (None, inquiry_data("SEAGATE", "ST4000NM0025")),
                (Some(0x80), vpd_page(0x80, b"ZC2")),
                (Some(0xB1), bdc_page(7200, 2)),
            ],
            None,
        )
    };
    let mut link = Pages {
        fake: sas(),
        log: None,
        mode: Some(power_mode_page(8, 0x26, true, 6000)),
    };
    let id = identify(&mut link, Some(true), false);
    assert_eq!(
        id.standby_z,
        Some(StandbyTimer {
            enabled: true,
            timer_ms: 600_000
        })
    );
    assert!(id.via.contains("MODE PAGE 1Ah"), "{}", id.via);
    // The same behind a USB bridge: no mode page is asked.
    let mut link = Pages {
        fake: sas(),
        log: None,
        mode: Some(power_mode_page(8, 0x26, true, 6000)),
    };
    let id = identify(&mut link, Some(true), true);
    assert_eq!(id.standby_z, None);
    assert!(link.fake.sent.iter().all(|c| c[0] != OP_MODE_SENSE_10));
    // Kept in the state file.
    let id = Identity {
        standby_z: Some(StandbyTimer {
            enabled: true,
            timer_ms: 600_000,
        }),
        ..Identity::default()
    };
    let json = serde_json::to_string(&id).unwrap();
    assert_eq!(serde_json::from_str::<Identity>(&json).unwrap(), id);
}

impl Link for Fake {
    fn send(&mut self, cdb: &[u8], _data_in: usize) -> Result<Reply, SendError> {
        self.sent.push(cdb.to_vec());
        let data = if cdb[0] == OP_INQUIRY {
            let page = (cdb[1] & 1 == 1).then_some(cdb[2]);
            self.pages.iter().find(|p| p.0 == page).map(|p| p.1.clone())
        } else {
            self.ata.clone()
        };
        Ok(reply(data))
    }
    fn hdparm_check(&mut self) -> HdparmAnswer {
        HdparmAnswer::Missing
    }
    fn hdparm_standby(&mut self) -> Result<(), String> {
        Err("no".into())
    }
}

#[test]
fn libata_answers_from_its_vpd_pages_without_a_pass_through() {
    let ata = with_apm(
        identify_data("WDC WD40EFRX-68N32N0", "WD-WCC7K1234567", 2, 5400, true),
        true,
        0x7F,
    );
    let mut info = vec![0u8; 568];
    info[56..].copy_from_slice(&ata);
    let mut fake = Fake {
        pages: vec![
            (None, inquiry_data("ATA", "WDC WD40EFRX-68N")),
            (Some(0x80), vpd_page(0x80, b"WD-WCC7K1234567")),
            (Some(0xB1), bdc_page(5400, 2)),
            (Some(0x89), vpd_page(0x89, &info)),
        ],
        ata: Some(ata),
        sent: Vec::new(),
    };
    let id = identify(&mut fake, Some(true), false);
    assert_eq!(
        id.model.as_deref(),
        Some("WDC WD40EFRX-68N32N0"),
        "VPD 89h's full model wins"
    );
    assert_eq!(id.serial.as_deref(), Some("WD-WCC7K1234567"));
    assert_eq!(
        (id.rotation_code, id.form_factor_code),
        (Some(5400), Some(2))
    );
    assert_eq!(
        id.apm,
        Some(Apm::Level(127)),
        "from the IDENTIFY data in VPD 89h"
    );
    assert_eq!(id.layout, IDENTITY_LAYOUT);
    assert!(
        fake.sent.iter().all(|c| c[0] == OP_INQUIRY),
        "nothing reached the drive itself"
    );
    assert_eq!(
        id.via,
        "INQUIRY, VPD 80h, VPD B1h, VPD 89h, queue/rotational"
    );
}

#[test]
fn a_bridge_without_vpd_pages_is_asked_identify() {
    let mut fake = Fake {
        pages: vec![(None, inquiry_data("JMicron", "Generic"))],
        ata: Some(identify_data("ST32000645NS", "Z1P0ABCD", 2, 7200, true)),
        sent: Vec::new(),
    };
    let id = identify(&mut fake, None, true);
    assert_eq!(id.model.as_deref(), Some("ST32000645NS"));
    assert_eq!(id.key().as_deref(), Some("serial:Z1P0ABCD"));
    assert_eq!(Drive::identified(&id.facts()).preset, "constellation-es2");
    assert_eq!(fake.sent.last().unwrap()[0], 0x85);
}

/// A bridge whose VPD pages say enough to choose the preset but give no
/// serial number is asked IDENTIFY for it: the state and the activity
/// log follow the drive by it.
#[test]
fn a_bridge_without_a_serial_page_is_asked_identify_for_the_serial() {
    let mut fake = Fake {
        pages: vec![
            (None, inquiry_data("ASMT", "2115")),
            (Some(0xB1), bdc_page(5400, 2)),
        ],
        ata: Some(identify_data(
            "WDC WD40EFRX-68N32N0",
            "WD-WCC7K7654321",
            2,
            5400,
            true,
        )),
        sent: Vec::new(),
    };
    let id = identify(&mut fake, Some(true), true);
    assert_eq!(id.serial.as_deref(), Some("WD-WCC7K7654321"));
    assert_eq!(fake.sent.last().unwrap()[0], 0x85);
    // Without pass-through either, no serial: sysfs is asked next
    // (`Identity::name_from_sysfs`).
    fake.ata = None;
    let id = identify(&mut fake, Some(true), true);
    assert_eq!(id.serial, None);
    assert_eq!(id.rotation_code, Some(5400));
}

#[test]
fn nothing_answers_a_loop_device() {
    struct NotSg;
    impl Link for NotSg {
        fn send(&mut self, _: &[u8], _: usize) -> Result<Reply, SendError> {
            Err(SendError::NotSg("loop0: not a SCSI device".into()))
        }
        fn hdparm_check(&mut self) -> HdparmAnswer {
            HdparmAnswer::Missing
        }
        fn hdparm_standby(&mut self) -> Result<(), String> {
            Err("no".into())
        }
    }
    let id = identify(&mut NotSg, Some(false), false);
    assert_eq!((id.model.as_ref(), id.serial.as_ref()), (None, None));
    assert_eq!(id.facts().spins(), Some(false));
    assert_eq!(id.via, "queue/rotational");
}

proptest! {
    #![proptest_config(lull_testkit::cases(512))]

    /// The parsers never panic, whatever bytes a device returns.
    #[test]
    fn parsers_never_panic(data in prop::collection::vec(any::<u8>(), 0..700)) {
        let _ = parse_identify(&data);
        let _ = parse_inquiry(&data);
        let _ = parse_vpd_serial(&data);
        let _ = parse_vpd_characteristics(&data);
        let _ = parse_vpd_ata_information(&data);
        let _ = parse_power_conditions_standby(&data);
        let _ = parse_mode_power(&data);
    }

    /// Any Standby_z timer written where the standards put it reads back
    /// as written, in the log and in the mode page alike.
    #[test]
    fn standby_z_round_trips(enabled: bool, timer: u32, descriptors in 0u16..64) {
        let want = Some(StandbyTimer { enabled, timer_ms: u64::from(timer) * 100 });
        prop_assert_eq!(parse_power_conditions_standby(&standby_log_page(true, enabled, timer)), want);
        prop_assert_eq!(parse_mode_power(&power_mode_page(descriptors, 0x26, enabled, timer)), want);
    }

    /// Any model and serial written into IDENTIFY data read back as written.
    #[test]
    fn identify_strings_round_trip(
        model in "[A-Z0-9][A-Z0-9 -]{0,38}[A-Z0-9]",
        serial in "[A-Z0-9-]{1,20}",
        rpm in 0x0401u16..0xfffe,
    ) {
        let a = parse_identify(&identify_data(&model, &serial, 2, rpm, true)).unwrap();
        prop_assert_eq!(a.model, model);
        prop_assert_eq!(a.serial, serial);
        prop_assert_eq!(a.rotation, Rotation::Rpm(rpm));
    }
}

#[test]
fn the_size_comes_from_sysfs_and_zero_is_no_medium() {
    let dir = tempfile::tempdir().unwrap();
    let block = dir.path().join("block");
    for (name, size) in [("sdc", "0\n"), ("sdb", "7814037168\n"), ("sdz", "junk\n")] {
        std::fs::create_dir_all(block.join(name)).unwrap();
        std::fs::write(block.join(name).join("size"), size).unwrap();
    }
    assert_eq!(sysfs_sectors(dir.path(), "sdc"), Some(0));
    assert_eq!(sysfs_sectors(dir.path(), "sdb"), Some(7_814_037_168));
    assert_eq!(sysfs_sectors(dir.path(), "sdz"), None);
    assert_eq!(sysfs_sectors(dir.path(), "sdq"), None, "not there");
}

/// A drive without a serial number of its own is named from sysfs: an
/// NVMe namespace by its wwid, a virtio disk by its serial, a disk behind
/// a USB bridge by the enclosure's serial string and its size; blank or
/// all-zero values, and a USB device without a serial string, name
/// nothing (not the root hub above it).
#[test]
fn a_drive_without_a_serial_number_is_named_from_sysfs() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path();
    let put = |path: &str, text: &str| {
        let p = sys.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put("block/nvme0n1/wwid", "eui.0025388b91b0e3f1\n");
    put("block/nvme0n1/device/serial", "S4EWNX0R123456      \n");
    put("block/vda/serial", "vol-0a1b2c\n");
    put("block/vdb/serial", "    \n");
    put("block/vdc/serial", "0000000000000000\n");
    put("block/mmcblk0/device/serial", "0x1a2b3c4d\n");
    // A USB enclosure (152d:0578) below the xHCI root hub, which has a
    // vendor id and a serial of its own.
    let hub = "devices/pci0000:00/0000:00:14.0/usb2";
    put(&format!("{hub}/idVendor"), "1d6b\n");
    put(&format!("{hub}/idProduct"), "0003\n");
    put(&format!("{hub}/serial"), "0000:00:14.0\n");
    for (port, serial) in [("2-1", Some("DD564198838B2")), ("2-2", None)] {
        let usb = format!("{hub}/{port}");
        put(&format!("{usb}/idVendor"), "152d\n");
        put(&format!("{usb}/idProduct"), "0578\n");
        if let Some(s) = serial {
            put(&format!("{usb}/serial"), &format!("{s}\n"));
        }
        let scsi = format!("{usb}/{port}:1.0/host6/target6:0:0/6:0:0:0");
        std::fs::create_dir_all(sys.join(&scsi)).unwrap();
        let disk = if serial.is_some() { "sdb" } else { "sdc" };
        put(&format!("block/{disk}/size"), "7814037168\n");
        std::os::unix::fs::symlink(sys.join(&scsi), sys.join(format!("block/{disk}/device")))
            .unwrap();
    }
    let name = |k: &str| sysfs_serial(sys, k).map(|(n, _)| n);
    assert_eq!(
        name("nvme0n1").as_deref(),
        Some("wwid eui.0025388b91b0e3f1")
    );
    assert_eq!(name("vda").as_deref(), Some("serial vol-0a1b2c"));
    assert_eq!(name("vdb"), None);
    assert_eq!(name("vdc"), None);
    assert_eq!(name("mmcblk0").as_deref(), Some("serial 0x1a2b3c4d"));
    assert_eq!(
        name("sdb").as_deref(),
        Some("usb 152d:0578 DD564198838B2, 7814037168 sectors")
    );
    assert_eq!(name("sdc"), None, "not the root hub's serial");
    // Both are behind USB (no mode page is asked of them); a disk on a
    // SATA port is not, nor one without a device.
    let ata = "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0";
    std::fs::create_dir_all(sys.join(ata)).unwrap();
    std::fs::create_dir_all(sys.join("block/sda")).unwrap();
    std::os::unix::fs::symlink(sys.join(ata), sys.join("block/sda/device")).unwrap();
    assert!(sysfs_on_usb(sys, "sdb") && sysfs_on_usb(sys, "sdc"));
    assert!(!sysfs_on_usb(sys, "sda"));
    assert!(!sysfs_on_usb(sys, "vda"));
    assert_eq!(name("sdq"), None, "not there");
    // Identification takes it only where the drive named itself nothing.
    let mut id = Identity::default();
    id.name_from_sysfs(sys, "sdb");
    assert_eq!(
        id.key().as_deref(),
        Some("serial:usb 152d:0578 DD564198838B2, 7814037168 sectors")
    );
    assert!(id.via.contains("sysfs USB serial"), "{}", id.via);
    let mut own = Identity {
        serial: Some("WD-WCC7K0000000".into()),
        ..Identity::default()
    };
    own.name_from_sysfs(sys, "sdb");
    assert_eq!(own.serial.as_deref(), Some("WD-WCC7K0000000"));
}
