//! Any CSV or TSV read with a column map (`--columns`), and traces
//! written as Parquet.
//!
//! The map itself, and turning one row's cells into a request, are
//! [`lull_blktrace_replay::columns`]: polars-free, so its errors name the
//! map's item or the row's column. This module only splits the file into
//! cells, with polars' CSV reader (quoting, ragged rows and odd encodings
//! are its job), which is why it lives here: only this crate and the
//! command line may use polars, and the library crates embedders use stay
//! light.
//!
//! Every column is read as text (no type inference, so `0x1f` or `R` in a
//! numeric-looking column is the row's error, not the file's). The
//! separator is a tab when the header line has tabs and no commas, a
//! semicolon when it has semicolons and neither, else a comma. Extra
//! fields on a row are ignored; a missing one is that row's error. The
//! file is decoded (gzip, bzip2, zstd) and read whole into memory, unlike
//! the streaming readers. A malformed row is named by its line number
//! (when rows and non-blank lines match one to one, as they do without
//! quoted line breaks; else by its row number) and its column; with
//! `lenient` it is skipped and counted.

use std::io::{Cursor, Read};
use std::path::Path;

use lull_blktrace_replay::columns::ColumnMap;
use lull_blktrace_replay::{ReadOptions, Trace, TraceError, input};
use polars::prelude::*;

use crate::RankError;

/// The format name of a trace read with a column map.
pub const NAME: &str = "columns";

/// Reads the CSV or TSV at `path` with `map`.
pub fn read(path: &Path, map: &ColumnMap, opts: ReadOptions) -> Result<Trace, TraceError> {
    let (_, mut decoded) = input::open_decoded(path)?;
    let mut bytes = Vec::new();
    decoded
        .read_to_end(&mut bytes)
        .map_err(|e| TraceError::io(path, e))?;
    read_bytes(bytes, path, map, opts)
}

/// The separator of a file whose first line is `header`.
fn separator(header: &str) -> u8 {
    if header.contains('\t') && !header.contains(',') {
        b'\t'
    } else if header.contains(';') && !header.contains([',', '\t']) {
        b';'
    } else {
        b','
    }
}

/// Reads CSV or TSV `bytes` (already decoded) with `map`; `path` names
/// them in errors and names the device when the map has no `device`.
pub fn read_bytes(
    bytes: Vec<u8>,
    path: &Path,
    map: &ColumnMap,
    opts: ReadOptions,
) -> Result<Trace, TraceError> {
    // The 1-based numbers of the non-blank lines, the header's first.
    let mut lines = Vec::new();
    let mut start = 0usize;
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if !line.iter().all(u8::is_ascii_whitespace) {
            lines.push((n as u64 + 1, start));
        }
        start += line.len() + 1;
    }
    let Some(&(_, header_at)) = lines.first() else {
        return Err(TraceError::format(
            path,
            "empty file: expected a header line",
        ));
    };
    let header_text = bytes[header_at..]
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or(&[]);
    let sep = separator(&String::from_utf8_lossy(header_text));
    // How many lines the file has, a final line break ending the last.
    let bytes_lines =
        bytes.split(|&b| b == b'\n').count() as u64 - u64::from(bytes.last() == Some(&b'\n'));
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(Some(0))
        .map_parse_options(|p| {
            p.with_separator(sep)
                .with_truncate_ragged_lines(true)
                .with_missing_is_null(true)
                .with_encoding(CsvEncoding::LossyUtf8)
        })
        .into_reader_with_file_handle(Cursor::new(bytes))
        .finish()
        .map_err(|e| TraceError::format(path, format!("not a CSV or TSV polars can read: {e}")))?;
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let header: Vec<&str> = names.iter().map(String::as_str).collect();
    let device = path
        .file_name()
        .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
    let mut bound = map
        .bind(&header, &device)
        .map_err(|e| TraceError::line(path, lines[0].0, e))?;
    let columns: Vec<&StringChunked> = df
        .columns()
        .iter()
        .map(|c| c.str())
        .collect::<PolarsResult<_>>()
        .map_err(|e| TraceError::format(path, e.to_string()))?;
    // Line numbers when rows and lines match one to one: polars keeps a
    // blank line as a row of nulls (skipped below) unless it is trailing.
    let header_line = lines[0].0;
    let physical = bytes_lines - header_line;
    let line_of = |row: usize| -> Option<u64> {
        if physical == df.height() as u64 {
            Some(header_line + 1 + row as u64)
        } else if lines.len() - 1 == df.height() {
            Some(lines[row + 1].0)
        } else {
            None
        }
    };
    let mut trace = Trace::new(NAME);
    for row in 0..df.height() {
        if columns
            .iter()
            .all(|c| c.get(row).is_none_or(|v| v.trim().is_empty()))
        {
            continue;
        }
        let result = bound.request(
            |i| columns.get(i).and_then(|c| c.get(row)).map(str::to_string),
            &mut trace,
        );
        match result {
            Ok(Some(r)) => trace.requests.push(r),
            Ok(None) => {}
            Err(_) if opts.lenient => trace.skipped += 1,
            Err(message) => {
                if let Some(line) = line_of(row) {
                    return Err(TraceError::line(path, line, message));
                }
                return Err(TraceError::format(
                    path,
                    format!("data row {} (after the header): {message}", row + 1),
                ));
            }
        }
    }
    bound.finish(&mut trace);
    Ok(trace)
}

/// `trace` as a frame in the normalized CSV's columns
/// (`arrival_ns,completion_ns,op,sector,bytes,device`).
pub fn frame(trace: &Trace) -> Result<DataFrame, RankError> {
    let r = &trace.requests;
    let column = |name: &str, s: Series| s.with_name(name.into()).into_column();
    let cols = vec![
        column(
            "arrival_ns",
            Series::new(
                "".into(),
                r.iter().map(|r| r.arrival.0).collect::<Vec<u64>>(),
            ),
        ),
        column(
            "completion_ns",
            Series::new(
                "".into(),
                r.iter().map(|r| r.completion.0).collect::<Vec<u64>>(),
            ),
        ),
        column(
            "op",
            Series::new(
                "".into(),
                r.iter()
                    .map(|r| r.op.code().to_string())
                    .collect::<Vec<String>>(),
            ),
        ),
        column(
            "sector",
            Series::new("".into(), r.iter().map(|r| r.sector).collect::<Vec<u64>>()),
        ),
        column(
            "bytes",
            Series::new("".into(), r.iter().map(|r| r.bytes).collect::<Vec<u32>>()),
        ),
        column(
            "device",
            Series::new(
                "".into(),
                r.iter()
                    .map(|r| trace.device_name(r.device).to_string())
                    .collect::<Vec<String>>(),
            ),
        ),
    ];
    DataFrame::new(r.len(), cols).map_err(|e| RankError::Table(e.to_string()))
}

/// Writes `trace` as Parquet at `out`, atomically, in the normalized
/// CSV's columns.
pub fn write_parquet(trace: &Trace, out: &Path) -> Result<(), RankError> {
    let mut df = frame(trace)?;
    crate::table::write_parquet(&mut df, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lull_core::request::Op;
    use lull_core::time::Nanos;
    use proptest::prelude::*;

    fn read_str(text: &str, map: &str, lenient: bool) -> Result<Trace, TraceError> {
        read_bytes(
            text.as_bytes().to_vec(),
            Path::new("t.csv"),
            &ColumnMap::parse(map).unwrap(),
            ReadOptions { lenient },
        )
    }

    #[test]
    fn reads_csv_and_tsv() {
        let map = "time=ts:ms,op=rw,sector,bytes=size*512";
        let csv = "ts,rw,sector,size\n10,W,8,8\n\n30,R,16,1\n";
        let t = read_str(csv, map, false).unwrap();
        assert_eq!(t.requests.len(), 2);
        assert_eq!(t.requests[1].arrival, Nanos(20_000_000));
        assert_eq!((t.requests[0].op, t.requests[0].bytes), (Op::Write, 4096));
        assert_eq!(t.devices, ["t.csv"]);
        let tsv = "ts\trw\tsector\tsize\n10\tW\t8\t8\n30\tR\t16\t1\n";
        let u = read_str(tsv, map, false).unwrap();
        assert_eq!(u.requests, t.requests);
        // Quoted fields.
        let q = "\"ts\",\"rw\",\"sector\",\"size\"\n\"10\",\"W\",\"8\",\"8\"\n";
        assert_eq!(read_str(q, map, false).unwrap().requests.len(), 1);
    }

    #[test]
    fn a_bad_row_is_named_by_line_and_column() {
        let map = "time=ts,op=rw";
        let text = "ts,rw\n1,W\n\n2,Q\n3,R\n";
        match read_str(text, map, false) {
            Err(TraceError::Line { line, message, .. }) => {
                assert_eq!(line, 4);
                assert!(message.contains("`rw` (column 2)"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let t = read_str(text, map, true).unwrap();
        assert_eq!((t.requests.len(), t.skipped), (2, 1));
        // A column the map names but the header lacks: the header's line.
        let e = read_str(text, "time=when", false).unwrap_err();
        assert!(
            matches!(&e, TraceError::Line { line: 1, message, .. } if message.contains("no column `when`")),
            "{e}"
        );
        // A short row.
        let e = read_str("ts,rw\n1\n", map, false).unwrap_err();
        assert!(e.to_string().contains("no value in column `rw`"), "{e}");
    }

    #[test]
    fn parquet_keeps_the_requests() {
        let t = read_str(
            "ts,rw,dev\n1,W,a\n2,R,b\n",
            "time=ts,op=rw,device=dev",
            false,
        )
        .unwrap();
        let df = frame(&t).unwrap();
        assert_eq!(df.height(), 2);
        assert_eq!(
            df.get_column_names()
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(","),
            lull_blktrace_replay::normalized::HEADER
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.parquet");
        write_parquet(&t, &p).unwrap();
        let back = crate::table::read_parquet(&p).unwrap();
        assert!(back.equals(&df));
    }

    proptest! {
        #![proptest_config(lull_testkit::cases(64))]

        /// Any bytes after a header: an error or a trace, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), tab in any::<bool>()) {
            let mut text = if tab { b"ts\trw\tsize\n".to_vec() } else { b"ts,rw,size\n".to_vec() };
            text.extend(bytes);
            for lenient in [false, true] {
                let _ = read_bytes(text.clone(), Path::new("p"), &ColumnMap::parse("time=ts:us,op=rw,bytes=size*512").unwrap(), ReadOptions { lenient });
            }
        }

        #[test]
        fn csv_like_text_never_panics(lines in proptest::collection::vec("[0-9RWrw.,\"\t e-]{0,30}", 0..12)) {
            let text = format!("ts,rw,size\n{}", lines.join("\n"));
            for lenient in [false, true] {
                let _ = read_bytes(text.clone().into_bytes(), Path::new("p"), &ColumnMap::parse("time=ts,op=rw,bytes=size").unwrap(), ReadOptions { lenient });
            }
        }
    }
}
