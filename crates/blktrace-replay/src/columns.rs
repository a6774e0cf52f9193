//! Column maps: how to read any CSV or TSV of block requests, given which
//! column holds what (`lull replay trace.csv --columns
//! 'time=timestamp:s,op=rw_flag,sector,bytes=size*512,device'`).
//!
//! Most people who record block I/O without blktrace write a CSV from
//! their own probe, each with its own columns. Rather than a reader per
//! layout, the user names the columns once. This module is the part that
//! needs no CSV parser: it parses the map (so its errors can name the item
//! at fault), binds it to a header, turns one row's cells into a request
//! with errors that name the column, and guesses a map from a header
//! ([`suggest`]) for the error on an unrecognized file. Splitting the file
//! into cells is polars' job, in the `lull` command line (`lull_rank::
//! columns`): polars stays out of this crate, which embedders use.
//!
//! ## The map
//!
//! Comma-separated items `FIELD[=COLUMN][:UNIT][*FACTOR]`; without
//! `=COLUMN` the column has the field's name.
//!
//! | field        | what the column holds                                  |
//! |--------------|--------------------------------------------------------|
//! | `time`       | the arrival (required); unit `s` (default), `ms`, `us`, `ns` |
//! | `completion` | the completion, in the same clock; unit as `time`       |
//! | `latency`    | completion − arrival; unit as `time` (default `ms`)    |
//! | `op`         | `R`/`W`/`F`/`D`, `read`/`write`/`flush`/`sync`/`discard`/`trim`, an rwbs (`WS`), or `0` read / `1` write |
//! | `sector`     | the first 512-byte sector (`*8` for 4 KiB blocks)       |
//! | `offset`     | the byte offset (sector = offset / 512)                |
//! | `bytes`      | the size in bytes (`*512` for sectors)                  |
//! | `device`     | the device's name                                      |
//!
//! Times are decimal numbers (exact to the nanosecond for plain decimals).
//! Relative or absolute, they are rebased to the first arrival; a time
//! from 2000 on as Unix time (≥ 946,684,800 s) is taken as the wall clock
//! (`Trace::clock`, for time-of-day skeptics). Without a completion or
//! latency column, completion = arrival, said in a note; without `op`,
//! `sector`, `bytes` or `device`, requests are reads, at sector 0, of 0
//! bytes, on a device named after the file, each said in a note.

use std::fmt;

use lull_core::request::{Op, Request};
use lull_core::time::Nanos;

use crate::text::Devices;
use crate::trace::Trace;

/// A time unit of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
}

impl Unit {
    fn parse(s: &str) -> Option<Unit> {
        Some(match s {
            "s" => Unit::S,
            "ms" => Unit::Ms,
            "us" | "µs" => Unit::Us,
            "ns" => Unit::Ns,
            _ => return None,
        })
    }
    /// How many of this unit make a second.
    const fn per_second(self) -> u64 {
        match self {
            Unit::S => 1,
            Unit::Ms => 1_000,
            Unit::Us => 1_000_000,
            Unit::Ns => 1_000_000_000,
        }
    }
    const fn name(self) -> &'static str {
        match self {
            Unit::S => "s",
            Unit::Ms => "ms",
            Unit::Us => "us",
            Unit::Ns => "ns",
        }
    }
}

/// One field's column: its name, and the unit or factor it is read with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's name in the header.
    pub name: String,
    /// The time unit (time fields).
    pub unit: Option<Unit>,
    /// The factor (number fields): `size*512`.
    pub factor: u64,
}

/// A parsed `--columns` map (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnMap {
    /// The arrival time.
    pub time: Column,
    /// The completion time.
    pub completion: Option<Column>,
    /// The latency.
    pub latency: Option<Column>,
    /// The operation.
    pub op: Option<Column>,
    /// The first sector.
    pub sector: Option<Column>,
    /// The byte offset.
    pub offset: Option<Column>,
    /// The size in bytes.
    pub bytes: Option<Column>,
    /// The device.
    pub device: Option<Column>,
}

/// The fields a map may name, for errors.
const FIELDS: &str = "time, completion, latency, op, sector, offset, bytes, device";

impl ColumnMap {
    /// Parses a map; the error names the item at fault.
    pub fn parse(text: &str) -> Result<ColumnMap, String> {
        let mut fields: [Option<Column>; 8] = Default::default();
        const NAMES: [&str; 8] = [
            "time",
            "completion",
            "latency",
            "op",
            "sector",
            "offset",
            "bytes",
            "device",
        ];
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(format!(
                    "--columns {text:?}: an empty item (two commas, or one at an end)"
                ));
            }
            let bad = |why: String| format!("--columns: `{item}`: {why}");
            let (item_rest, factor) = match item.rsplit_once('*') {
                Some((r, f)) => {
                    let f: u64 = f.trim().parse().ok().filter(|&f| f > 0).ok_or_else(|| {
                        bad(format!(
                            "the factor after `*` must be a positive whole number, not {f:?}"
                        ))
                    })?;
                    (r, f)
                }
                None => (item, 1),
            };
            let (field, column) = match item_rest.split_once('=') {
                Some((f, c)) => (f.trim(), Some(c.trim())),
                None => (item_rest.trim(), None),
            };
            // The unit closes the column (`time=ts:ms`) or the field
            // (`time:ms`, the column then named `time`).
            let (field, column, unit) = match column {
                Some(c) => match c.rsplit_once(':') {
                    Some((c, u)) => (field, c.trim(), Some(u.trim())),
                    None => (field, c, None),
                },
                None => match field.split_once(':') {
                    Some((f, u)) => (f.trim(), f.trim(), Some(u.trim())),
                    None => (field, field, None),
                },
            };
            let Some(i) = NAMES.iter().position(|n| *n == field) else {
                return Err(bad(format!(
                    "unknown field `{field}` (the fields are {FIELDS})"
                )));
            };
            if column.is_empty() {
                return Err(bad("no column name after `=`".into()));
            }
            let is_time = i < 3;
            let unit = match unit {
                Some(u) if is_time => Some(
                    Unit::parse(u)
                        .ok_or_else(|| bad(format!("unknown time unit `{u}` (s, ms, us or ns)")))?,
                ),
                Some(u) => {
                    return Err(bad(format!(
                        "`{field}` takes no unit (`:{u}`); a unit is for time, completion and latency"
                    )));
                }
                None if is_time => Some(if field == "latency" {
                    Unit::Ms
                } else {
                    Unit::S
                }),
                None => None,
            };
            if factor != 1 && (is_time || matches!(field, "op" | "device")) {
                return Err(bad(format!(
                    "`{field}` takes no factor; a factor is for sector, offset and bytes"
                )));
            }
            if fields[i].is_some() {
                return Err(bad(format!("`{field}` is named twice")));
            }
            fields[i] = Some(Column {
                name: column.to_string(),
                unit,
                factor,
            });
        }
        let [time, completion, latency, op, sector, offset, bytes, device] = fields;
        let time = time.ok_or_else(|| {
            format!("--columns {text:?}: no `time` (the arrival's column, e.g. `time=timestamp:s`)")
        })?;
        if completion.is_some() && latency.is_some() {
            return Err("--columns: name `completion` or `latency`, not both".into());
        }
        if sector.is_some() && offset.is_some() {
            return Err("--columns: name `sector` or `offset`, not both".into());
        }
        Ok(ColumnMap {
            time,
            completion,
            latency,
            op,
            sector,
            offset,
            bytes,
            device,
        })
    }

    /// The fields named, with their columns.
    fn named(&self) -> impl Iterator<Item = (&'static str, &Column)> {
        [
            ("time", Some(&self.time)),
            ("completion", self.completion.as_ref()),
            ("latency", self.latency.as_ref()),
            ("op", self.op.as_ref()),
            ("sector", self.sector.as_ref()),
            ("offset", self.offset.as_ref()),
            ("bytes", self.bytes.as_ref()),
            ("device", self.device.as_ref()),
        ]
        .into_iter()
        .filter_map(|(f, c)| c.map(|c| (f, c)))
    }

    /// Binds the map to a file's `header`: the index of each field's
    /// column (exact name first, then ignoring case). The error lists the
    /// header. `default_device` names the device when no column does.
    pub fn bind(&self, header: &[&str], default_device: &str) -> Result<Bound, String> {
        let find = |c: &Column| -> Result<usize, String> {
            header
                .iter()
                .position(|h| h.trim() == c.name)
                .or_else(|| {
                    header
                        .iter()
                        .position(|h| h.trim().eq_ignore_ascii_case(&c.name))
                })
                .ok_or_else(|| {
                    format!(
                        "--columns: no column `{}` in the header (it has: {})",
                        c.name,
                        header.join(", ")
                    )
                })
        };
        let find_opt = |c: Option<&Column>| c.map(find).transpose();
        let time = find(&self.time)?;
        let completion = find_opt(self.completion.as_ref())?;
        let latency = find_opt(self.latency.as_ref())?;
        let op = find_opt(self.op.as_ref())?;
        let sector = find_opt(self.sector.as_ref())?;
        let offset = find_opt(self.offset.as_ref())?;
        let bytes = find_opt(self.bytes.as_ref())?;
        let device = find_opt(self.device.as_ref())?;
        Ok(Bound {
            map: self.clone(),
            names: header.iter().map(|h| h.trim().to_string()).collect(),
            time,
            completion,
            latency,
            op,
            sector,
            offset,
            bytes,
            device,
            default_device: default_device.to_string(),
            unix: None,
            devices: Devices::default(),
        })
    }
}

impl fmt::Display for ColumnMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .named()
            .map(|(field, c)| {
                let mut s = field.to_string();
                if c.name != field {
                    s += &format!("={}", c.name);
                }
                if let Some(u) = c.unit {
                    s += &format!(":{}", u.name());
                }
                if c.factor != 1 {
                    s += &format!("*{}", c.factor);
                }
                s
            })
            .collect();
        f.write_str(&items.join(","))
    }
}

/// A [`ColumnMap`] bound to a header: where each field's cells are.
#[derive(Clone, Debug)]
pub struct Bound {
    map: ColumnMap,
    names: Vec<String>,
    time: usize,
    completion: Option<usize>,
    latency: Option<usize>,
    op: Option<usize>,
    sector: Option<usize>,
    offset: Option<usize>,
    bytes: Option<usize>,
    device: Option<usize>,
    default_device: String,
    /// Whether times are Unix time (decided on the first row).
    unix: Option<bool>,
    devices: Devices,
}

/// 2000-01-01 in Unix nanoseconds: an arrival from then on is taken as
/// Unix time.
const UNIX_FROM_NS: u64 = 946_684_800 * 1_000_000_000;

impl Bound {
    /// The request of one row; `cell(i)` is the row's cell in column `i`
    /// (`None` for a missing cell). Errors name the column by name and
    /// number.
    pub fn request(
        &mut self,
        cell: impl Fn(usize) -> Option<String>,
        trace: &mut Trace,
    ) -> Result<Option<Request>, String> {
        let names = &self.names;
        let get = |i: usize| -> Result<String, String> {
            cell(i)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .ok_or_else(|| format!("no value in column `{}` (column {})", names[i], i + 1))
        };
        let what = |i: usize, why: String| format!("`{}` (column {}) {why}", names[i], i + 1);
        let time = |i: usize, unit: Option<Unit>| -> Result<u64, String> {
            let v = get(i)?;
            let unit = unit.unwrap_or(Unit::S);
            time_ns(&v, unit).ok_or(()).map_err(|_| {
                what(
                    i,
                    format!("is not a non-negative number of {}: {v:?}", unit.name()),
                )
            })
        };
        let number = |i: usize, factor: u64| -> Result<u64, String> {
            let v = get(i)?;
            v.parse::<u64>()
                .ok()
                .and_then(|n| n.checked_mul(factor))
                .ok_or_else(|| what(i, format!("is not a whole number (or is too large): {v:?}")))
        };
        let arrival = time(self.time, self.map.time.unit)?;
        let completion = match (self.completion, self.latency) {
            (Some(i), _) => {
                let c = time(i, self.map.completion.as_ref().and_then(|c| c.unit))?;
                if c < arrival {
                    return Err(what(
                        i,
                        format!("is before the arrival ({c} ns < {arrival} ns)"),
                    ));
                }
                c
            }
            (None, Some(i)) => {
                let l = time(i, self.map.latency.as_ref().and_then(|c| c.unit))?;
                arrival
                    .checked_add(l)
                    .ok_or_else(|| what(i, "is too large".into()))?
            }
            (None, None) => arrival,
        };
        let op = match self.op {
            Some(i) => {
                let v = get(i)?;
                op_of(&v).ok_or_else(|| {
                    what(i, format!("is not an operation (R, W, F, D, read, write, flush, discard, an rwbs such as WS, or 0/1): {v:?}"))
                })?
            }
            None => Op::Read,
        };
        let sector = match (self.sector, self.offset) {
            (Some(i), _) => number(i, self.map.sector.as_ref().map_or(1, |c| c.factor))?,
            (None, Some(i)) => number(i, self.map.offset.as_ref().map_or(1, |c| c.factor))? / 512,
            (None, None) => 0,
        };
        let bytes = match self.bytes {
            Some(i) => {
                let b = number(i, self.map.bytes.as_ref().map_or(1, |c| c.factor))?;
                u32::try_from(b)
                    .map_err(|_| what(i, format!("is too large for a request: {b} bytes")))?
            }
            None => 0,
        };
        let device = match self.device {
            Some(i) => get(i)?,
            None => self.default_device.clone(),
        };
        if *self.unix.get_or_insert(arrival >= UNIX_FROM_NS) {
            trace.clock = Some(Nanos::ZERO);
        }
        let dev = self.devices.id(trace, &device)?;
        Ok(Some(
            Request::new(Nanos(arrival), Nanos(completion), op, sector, bytes).on_device(dev),
        ))
    }

    /// Sorts and rebases `trace` and adds the notes on what the map left
    /// out. Call once, after the last row.
    pub fn finish(&self, trace: &mut Trace) {
        if !trace.requests.is_sorted_by_key(|r| r.arrival) {
            trace.notes.push(
                "the rows were not in time order; the requests were sorted by arrival".into(),
            );
        }
        trace.sort();
        trace.rebase();
        let mut missing = Vec::new();
        if self.completion.is_none() && self.latency.is_none() {
            trace.notes.push(
                "no completion or latency column: completion = arrival (idle periods run from \
                 one arrival to the next)"
                    .into(),
            );
        }
        if self.op.is_none() {
            missing.push("no `op` column: every request is a read");
        }
        if self.sector.is_none() && self.offset.is_none() {
            missing.push("no `sector` or `offset` column: every request is at sector 0");
        }
        if self.bytes.is_none() {
            missing.push("no `bytes` column: every request is of 0 bytes");
        }
        trace.notes.extend(missing.into_iter().map(String::from));
        if self.device.is_none() {
            trace.notes.push(format!(
                "no `device` column: the device is named `{}`",
                self.default_device
            ));
        }
    }
}

/// A non-negative decimal number of `unit`s as nanoseconds: exact for
/// plain decimals (digits below a nanosecond are dropped), through `f64`
/// for exponent notation. `None` if it is not one or is too large.
fn time_ns(s: &str, unit: Unit) -> Option<u64> {
    let ns_per = 1_000_000_000 / unit.per_second();
    if s.contains(['e', 'E']) {
        let v: f64 = s.parse().ok()?;
        let ns = v * ns_per as f64;
        return (v.is_finite() && v >= 0.0 && ns < 1.8e19).then_some(ns.round() as u64);
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    // The fraction's digits that are whole nanoseconds.
    let mut nanos = 0u64;
    let mut place = ns_per;
    for b in frac.bytes() {
        place /= 10;
        if place == 0 {
            break;
        }
        nanos += u64::from(b - b'0') * place;
    }
    whole.checked_mul(ns_per)?.checked_add(nanos)
}

/// An operation as people's CSVs write it.
fn op_of(s: &str) -> Option<Op> {
    match s.to_ascii_lowercase().as_str() {
        "0" | "read" | "rd" => return Some(Op::Read),
        "1" | "write" | "wr" => return Some(Op::Write),
        "flush" | "sync" | "fsync" => return Some(Op::Flush),
        "discard" | "trim" | "unmap" => return Some(Op::Discard),
        _ => {}
    }
    // An rwbs (`WS`, `RA`, `FWS`): a preflush `F` first, then the op.
    let op = if s.len() > 1 {
        s.strip_prefix('F').unwrap_or(s)
    } else {
        s
    };
    if !s
        .bytes()
        .all(|b| b"RWDFSAMEN".contains(&b.to_ascii_uppercase()))
    {
        return None;
    }
    match op.as_bytes().first()?.to_ascii_uppercase() {
        b'R' => Some(Op::Read),
        b'W' => Some(Op::Write),
        b'D' => Some(Op::Discard),
        b'F' => Some(Op::Flush),
        _ => None,
    }
}

/// The column map a header line suggests, if it names a time column:
/// header names such as `time`/`timestamp`/`ts`, `rw`/`op`/`rw_flag`/
/// `type`, `sector`/`lba`/`offset`, `size`/`bytes`/`len`, `latency`/`lat`,
/// `device`/`dev`/`disk`. The units are guesses (seconds unless the name
/// says `ms`, `us` or `ns`; sizes in bytes) that the user checks.
pub fn suggest(header: &str) -> Option<String> {
    let sep = if header.contains('\t') && !header.contains(',') {
        '\t'
    } else if header.contains(';') && !header.contains(',') {
        ';'
    } else {
        ','
    };
    let names: Vec<&str> = header
        .split(sep)
        .map(|h| h.trim().trim_matches('"').trim())
        .collect();
    if names.len() < 2 || names.iter().any(|n| n.is_empty()) {
        return None;
    }
    let lower: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
    let pick = |pred: &dyn Fn(&str) -> bool| lower.iter().position(|n| pred(n));
    let unit_of = |n: &str| {
        if n.ends_with("_ns") || n.ends_with("(ns)") || n.ends_with("ns)") {
            "ns"
        } else if n.ends_with("_us") || n.ends_with("(us)") {
            "us"
        } else if n.ends_with("_ms") || n.ends_with("(ms)") {
            "ms"
        } else {
            "s"
        }
    };
    let time = pick(&|n| {
        matches!(
            n,
            "time" | "timestamp" | "ts" | "arrival" | "start" | "issue"
        ) || n.starts_with("time")
            || n.starts_with("timestamp")
            || n.starts_with("ts_")
            || n.starts_with("arrival")
    })?;
    let mut items = vec![format!("time={}:{}", names[time], unit_of(&lower[time]))];
    let is_lat = |n: &str| {
        matches!(
            n,
            "latency"
                | "lat"
                | "response"
                | "responsetime"
                | "response_time"
                | "duration"
                | "service_time"
        ) || n.starts_with("latency")
            || n.starts_with("lat(")
            || n.starts_with("lat_")
    };
    let is_completion = |n: &str| {
        matches!(n, "completion" | "complete" | "finish" | "end" | "done")
            || n.starts_with("completion")
    };
    if let Some(i) = pick(&|n| is_lat(n)) {
        // A latency in seconds is rare: milliseconds unless the name says.
        let unit = match unit_of(&lower[i]) {
            "s" => "ms",
            u => u,
        };
        items.push(format!("latency={}:{unit}", names[i]));
    } else if let Some(i) = pick(&|n| is_completion(n)) {
        items.push(format!("completion={}:{}", names[i], unit_of(&lower[i])));
    }
    /// A field and the header names that suggest it.
    type Guess<'a> = (&'a str, &'a dyn Fn(&str) -> bool);
    let pairs: [Guess; 5] = [
        ("op", &|n| {
            matches!(
                n,
                "op" | "rw"
                    | "rw_flag"
                    | "rwflag"
                    | "type"
                    | "iotype"
                    | "io_type"
                    | "rwbs"
                    | "operation"
                    | "opcode"
                    | "cmd"
                    | "direction"
                    | "t"
            )
        }),
        ("sector", &|n| {
            matches!(n, "sector" | "lba" | "block" | "blkno" | "sector_start")
        }),
        ("offset", &|n| {
            matches!(n, "offset" | "byte_offset" | "addr" | "address")
        }),
        ("bytes", &|n| {
            matches!(
                n,
                "size" | "bytes" | "len" | "length" | "nbytes" | "io_size" | "blocksize"
            )
        }),
        ("device", &|n| {
            matches!(
                n,
                "device" | "dev" | "disk" | "volume" | "lun" | "devno" | "drive"
            )
        }),
    ];
    for (field, pred) in pairs {
        if field == "offset" && items.iter().any(|i| i.starts_with("sector")) {
            continue;
        }
        if let Some(i) = pick(pred) {
            items.push(if names[i] == field {
                field.to_string()
            } else {
                format!("{field}={}", names[i])
            });
        }
    }
    Some(items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_maps() {
        let m =
            ColumnMap::parse("time=timestamp:s,op=rw_flag,sector,bytes=size*512,device").unwrap();
        assert_eq!(m.time.name, "timestamp");
        assert_eq!(m.time.unit, Some(Unit::S));
        assert_eq!(m.bytes.as_ref().unwrap().factor, 512);
        assert_eq!(m.sector.as_ref().unwrap().name, "sector");
        assert_eq!(
            m.to_string(),
            "time=timestamp:s,op=rw_flag,sector,bytes=size*512,device"
        );
        let m = ColumnMap::parse("time:ms, latency=lat").unwrap();
        assert_eq!(
            (m.time.name.as_str(), m.time.unit),
            ("time", Some(Unit::Ms))
        );
        assert_eq!(m.latency.unwrap().unit, Some(Unit::Ms));
        for (bad, needle) in [
            ("op=rw", "no `time`"),
            ("time=t:h", "unknown time unit `h`"),
            ("time=t,colour=c", "unknown field `colour`"),
            ("time=t,,op", "empty item"),
            ("time=t,bytes=size*0", "positive whole number"),
            ("time=t,op=x*2", "takes no factor"),
            ("time=t,sector:s", "takes no unit"),
            ("time=t,time=u", "named twice"),
            ("time=t,completion=c,latency=l", "not both"),
            ("time=", "no column name"),
        ] {
            let e = ColumnMap::parse(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    fn rows(map: &str, header: &[&str], cells: &[&[&str]]) -> Result<Trace, String> {
        let map = ColumnMap::parse(map)?;
        let mut bound = map.bind(header, "f.csv")?;
        let mut trace = Trace::new("columns");
        for row in cells {
            if let Some(r) = bound.request(|i| row.get(i).map(|s| s.to_string()), &mut trace)? {
                trace.requests.push(r);
            }
        }
        bound.finish(&mut trace);
        Ok(trace)
    }

    #[test]
    fn rows_become_requests() {
        let header = ["proces", "device", "rw_flag", "sector", "size", "timestamp"];
        let t = rows(
            "time=timestamp:s,op=rw_flag,sector,bytes=size*512,device",
            &header,
            &[
                &["mmcqd", "mmcblk0", "1", "2048", "8", "105.25"],
                &["kswapd", "mmcblk0", "R", "4096", "16", "100.5"],
            ],
        )
        .unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.requests[0].op, Op::Read);
        assert_eq!(t.requests[1].arrival, Nanos(4_750_000_000));
        assert_eq!(t.requests[1].bytes, 8 * 512);
        assert_eq!(t.devices, ["mmcblk0"]);
        assert_eq!(t.clock, None);
        assert!(
            t.notes.iter().any(|n| n.contains("completion = arrival")),
            "{:?}",
            t.notes
        );
        assert!(
            t.notes.iter().any(|n| n.contains("sorted")),
            "{:?}",
            t.notes
        );
        // Latency in ms, absolute Unix time in ms.
        let t = rows(
            "time=ts:ms,latency=lat",
            &["ts", "lat"],
            &[&["1700000000000", "2.5"]],
        )
        .unwrap();
        assert_eq!(t.requests[0].completion, Nanos(2_500_000));
        assert_eq!(t.clock, Some(Nanos(1_700_000_000_000_000_000)));
        assert_eq!(t.devices, ["f.csv"]);
    }

    #[test]
    fn cell_errors_name_the_column() {
        let e = rows("time=ts,op", &["ts", "op"], &[&["1", "X"]]).unwrap_err();
        assert!(e.contains("`op` (column 2)"), "{e}");
        let e = rows("time=ts,op", &["ts", "op"], &[&["1"]]).unwrap_err();
        assert!(e.contains("no value in column `op` (column 2)"), "{e}");
        let e = rows("time=ts,completion=c", &["ts", "c"], &[&["2", "1"]]).unwrap_err();
        assert!(e.contains("before the arrival"), "{e}");
        let e = rows("time=when", &["ts", "op"], &[]).unwrap_err();
        assert!(
            e.contains("no column `when`") && e.contains("ts, op"),
            "{e}"
        );
    }

    #[test]
    fn suggests_a_map_from_a_header() {
        assert_eq!(
            suggest("proces,device,rw_flag,sector,size,timestamp").as_deref(),
            Some("time=timestamp:s,op=rw_flag,sector,bytes=size,device")
        );
        assert_eq!(
            suggest("ts_ns\tlat_us\trw\toffset\tlen\tdisk").as_deref(),
            Some("time=ts_ns:ns,latency=lat_us:us,op=rw,offset,bytes=len,device=disk")
        );
        // Every suggestion parses.
        for h in ["time,latency,op", "Timestamp;Type;LBA;Size"] {
            let m = suggest(h).unwrap();
            ColumnMap::parse(&m).unwrap();
        }
        assert_eq!(suggest("a,b,c"), None);
        assert_eq!(suggest("0.5,R,8,4096"), None);
    }

    #[test]
    fn times_in_units() {
        assert_eq!(time_ns("1.5", Unit::S), Some(1_500_000_000));
        assert_eq!(
            time_ns("1700000000000", Unit::Ms),
            Some(1_700_000_000_000_000_000)
        );
        assert_eq!(time_ns("2.5", Unit::Ms), Some(2_500_000));
        assert_eq!(time_ns("7.9", Unit::Ns), Some(7));
        assert_eq!(time_ns("1e3", Unit::Us), Some(1_000_000));
        for bad in ["", ".", "-1", "x", "1.2.3", "99999999999999999999"] {
            assert_eq!(time_ns(bad, Unit::S), None, "{bad}");
        }
    }

    #[test]
    fn ops() {
        for (s, op) in [
            ("W", Op::Write),
            ("ws", Op::Write),
            ("FWS", Op::Write),
            ("RA", Op::Read),
            ("F", Op::Flush),
            ("trim", Op::Discard),
            ("0", Op::Read),
        ] {
            assert_eq!(op_of(s), Some(op), "{s}");
        }
        for s in ["2", "X", "Rx", ""] {
            assert_eq!(op_of(s), None, "{s}");
        }
    }
}
