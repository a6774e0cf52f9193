//! The SCSI and ATA command blocks lull sends to a drive, and the sense
//! data that comes back: bytes in, bytes out, no ioctl. The shell's
//! `sgio` module sends them with `SG_IO`.

/// ATA STANDBY IMMEDIATE (ACS-3 7.48): spins the drive down now.
pub const ATA_STANDBY_IMMEDIATE: u8 = 0xE0;
/// ATA CHECK POWER MODE (ACS-3 7.3): the power mode in the COUNT field,
/// without changing it.
pub const ATA_CHECK_POWER_MODE: u8 = 0xE5;

/// Operation code of ATA PASS-THROUGH (16) (SAT, T10/04-262r8, 13.2.3).
pub const OP_ATA_PASS_THROUGH_16: u8 = 0x85;
/// Operation code of ATA PASS-THROUGH (12) (SAT, T10/04-262r8, 13.2.2).
pub const OP_ATA_PASS_THROUGH_12: u8 = 0xA1;
/// Operation code of START STOP UNIT (SBC-4 5.31).
pub const OP_START_STOP_UNIT: u8 = 0x1B;
/// Operation code of REQUEST SENSE (SPC-4 6.39).
pub const OP_REQUEST_SENSE: u8 = 0x03;

/// The PROTOCOL field value for an ATA command without data (SAT's table
/// of PROTOCOL values: 3h, Non-data).
const PROTOCOL_NON_DATA: u8 = 3;
/// CK_COND (byte 2, bit 5): return the ATA registers in the sense data even
/// when the command succeeds.
const CK_COND: u8 = 1 << 5;
/// The POWER CONDITION field value STANDBY (SBC-4 table "POWER CONDITION
/// field": 3h), in bits 7:4 of byte 4.
const POWER_CONDITION_STANDBY: u8 = 3;

/// How many bytes of sense data REQUEST SENSE may return (SPC-4 6.39
/// recommends at most 252).
pub const REQUEST_SENSE_LEN: u8 = 252;

/// ATA PASS-THROUGH (16) (SAT, T10/04-262r8, 13.2.3; SAT-2 to SAT-4 keep
/// the layout) carrying a non-data ATA `command` with all other ATA fields zero.
///
/// Byte 0 operation code 85h; byte 1 bits 4:1 PROTOCOL (3h, non-data),
/// bit 0 EXTEND (0: a 28-bit command); byte 2 bits 7:6 OFF_LINE (0),
/// bit 5 CK_COND, bit 4 T_TYPE, bit 3 T_DIR, bit 2 BYTE_BLOCK, bits 1:0
/// T_LENGTH (all 0: no data is transferred); bytes 3–12 FEATURES, COUNT
/// and LBA (0); byte 13 DEVICE (0); byte 14 COMMAND; byte 15 CONTROL (0).
pub fn ata_pass_through_16(command: u8, ck_cond: bool) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0] = OP_ATA_PASS_THROUGH_16;
    c[1] = PROTOCOL_NON_DATA << 1;
    c[2] = if ck_cond { CK_COND } else { 0 };
    c[14] = command;
    c
}

/// ATA PASS-THROUGH (12) (SAT, T10/04-262r8, 13.2.2; same in SAT-2 to
/// SAT-4), for USB
/// bridges (JMicron's among them) that reject the 16-byte form.
///
/// Byte 0 operation code A1h; byte 1 bits 4:1 PROTOCOL (3h, non-data);
/// byte 2 as in the 16-byte form (CK_COND in bit 5, T_DIR, BYTE_BLOCK and
/// T_LENGTH 0); bytes 3–8 FEATURES, COUNT, LBA and DEVICE (0); byte 9
/// COMMAND; byte 10 reserved; byte 11 CONTROL (0).
pub fn ata_pass_through_12(command: u8, ck_cond: bool) -> [u8; 12] {
    let mut c = [0u8; 12];
    c[0] = OP_ATA_PASS_THROUGH_12;
    c[1] = PROTOCOL_NON_DATA << 1;
    c[2] = if ck_cond { CK_COND } else { 0 };
    c[9] = command;
    c
}

/// START STOP UNIT with POWER CONDITION = STANDBY (SBC-4 5.31; SBC-3
/// has the same CDB): the disk goes to the standby power condition and
/// returns to active by itself at the next command that needs the medium
/// (SBC-4 4.20.5.5.2). A plain stop (START = 0, POWER CONDITION = 0) would
/// leave it stopped until a START UNIT, which SAS disks need and the
/// kernel does not always send.
///
/// Byte 0 operation code 1Bh; byte 1 bit 0 IMMED (0: answer once in
/// standby); byte 2 reserved; byte 3 bits 3:0 POWER CONDITION MODIFIER
/// (0: standby_z); byte 4 bits 7:4 POWER CONDITION (3h), bit 2 NO_FLUSH
/// (0: write the cache first), bit 1 LOEJ (0), bit 0 START (ignored when
/// POWER CONDITION is not 0); byte 5 CONTROL (0).
pub fn start_stop_unit_standby() -> [u8; 6] {
    [OP_START_STOP_UNIT, 0, 0, 0, POWER_CONDITION_STANDBY << 4, 0]
}

/// REQUEST SENSE (SPC-4 6.39) for up to `alloc` bytes of fixed-format
/// sense data: a disk in a low-power condition answers NO SENSE with
/// additional sense code 5Eh (SPC-4 5.12.7) without leaving it.
///
/// Byte 0 operation code 03h; byte 1 bit 0 DESC (0: fixed format);
/// bytes 2–3 reserved; byte 4 ALLOCATION LENGTH; byte 5 CONTROL (0).
pub fn request_sense(alloc: u8) -> [u8; 6] {
    [OP_REQUEST_SENSE, 0, 0, 0, alloc, 0]
}

/// The ATA registers an ATA PASS-THROUGH command returned (SAT's ATA
/// Status Return sense data descriptor, or the fixed-format equivalent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtaReturn {
    /// ERROR.
    pub error: u8,
    /// COUNT bits 7:0: CHECK POWER MODE's answer.
    pub count: u8,
    /// STATUS (bit 0 ERR: the command failed).
    pub status: u8,
}

/// Parsed sense data (SPC-4 4.5), from the sense buffer of a failed
/// command or the parameter data of REQUEST SENSE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sense {
    /// Descriptor format (response code 72h/73h) rather than fixed
    /// (70h/71h).
    pub descriptor: bool,
    /// SENSE KEY.
    pub key: u8,
    /// ADDITIONAL SENSE CODE.
    pub asc: u8,
    /// ADDITIONAL SENSE CODE QUALIFIER.
    pub ascq: u8,
    /// The ATA registers, when the data carries them.
    pub ata: Option<AtaReturn>,
}

/// Sense key ILLEGAL REQUEST: the device does not know the command.
pub const KEY_ILLEGAL_REQUEST: u8 = 0x05;
/// Sense key NO SENSE.
pub const KEY_NO_SENSE: u8 = 0x00;
/// Sense key NOT READY.
pub const KEY_NOT_READY: u8 = 0x02;
/// ADDITIONAL SENSE CODE LOW POWER CONDITION ON and its qualifiers
/// (SPC-4 5.12.7).
pub const ASC_LOW_POWER: u8 = 0x5E;

impl Sense {
    /// Parses `b`; `None` when it is not sense data in either format (too
    /// short, or another response code).
    ///
    /// Fixed format (SPC-4 4.5.3): byte 0 response code 70h/71h (bit 7
    /// VALID), byte 2 bits 3:0 SENSE KEY, bytes 3–6 INFORMATION, byte 7
    /// ADDITIONAL SENSE LENGTH, bytes 8–11 COMMAND-SPECIFIC INFORMATION,
    /// byte 12 ASC, byte 13 ASCQ. For ATA PASS-THROUGH (SAT-2 and later,
    /// with ASC/ASCQ 00h/1Dh "ATA PASS THROUGH INFORMATION AVAILABLE") the
    /// INFORMATION bytes are ERROR, STATUS, DEVICE and COUNT(7:0).
    ///
    /// Descriptor format (SPC-4 4.5.2): byte 0 response code 72h/73h,
    /// byte 1 SENSE KEY, byte 2 ASC, byte 3 ASCQ, byte 7 ADDITIONAL SENSE
    /// LENGTH, descriptors from byte 8; the ATA Status Return descriptor
    /// (SAT, code 09h, length 0Ch) holds ERROR at its byte 3,
    /// COUNT(7:0) at 5 and STATUS at 13.
    pub fn parse(b: &[u8]) -> Option<Sense> {
        let code = *b.first()? & 0x7f;
        match code {
            0x70 | 0x71 => {
                let key = *b.get(2)? & 0x0f;
                let asc = b.get(12).copied().unwrap_or(0);
                let ascq = b.get(13).copied().unwrap_or(0);
                let ata = (asc == 0x00 && ascq == 0x1D && b.len() >= 7).then(|| AtaReturn {
                    error: b[3],
                    status: b[4],
                    count: b[6],
                });
                Some(Sense {
                    descriptor: false,
                    key,
                    asc,
                    ascq,
                    ata,
                })
            }
            0x72 | 0x73 => {
                if b.len() < 4 {
                    return None;
                }
                let len = usize::from(b.get(7).copied().unwrap_or(0));
                let end = (8 + len).min(b.len());
                let mut ata = None;
                let mut at = 8;
                while at + 2 <= end {
                    let (dcode, dlen) = (b[at], usize::from(b[at + 1]));
                    let d = &b[at..(at + 2 + dlen).min(end)];
                    if dcode == 0x09 && d.len() >= 14 {
                        ata = Some(AtaReturn {
                            error: d[3],
                            count: d[5],
                            status: d[13],
                        });
                    }
                    at += 2 + dlen;
                }
                Some(Sense {
                    descriptor: true,
                    key: b[1] & 0x0f,
                    asc: b[2],
                    ascq: b[3],
                    ata,
                })
            }
            _ => None,
        }
    }

    /// The device rejected the command as unknown or malformed.
    pub fn illegal_request(&self) -> bool {
        self.key == KEY_ILLEGAL_REQUEST
    }
}
