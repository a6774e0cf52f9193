//! Tables: rows ↔ polars data frames ↔ CSV and Parquet files.
//!
//! `results` has one row per (network, trace): identity columns, the
//! network's families, its parameters (one string column per parameter,
//! `start.*`, `duration.*`, `skeptic.*`, null where a network has no such
//! parameter), every measure the replay reported (one `f64` column each,
//! internal first), then the ranking of §4.1.1 within the trace
//! (`x_scaled`, `y_scaled`, `distance`, `trace_rank`).
//!
//! Parquet is the exact form (merges read it); CSV is for people and
//! spreadsheets and is read back only when the Parquet file is missing.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use crate::RankError;
use crate::atomic;
use crate::score::{Scored, Summary};
use crate::sweep::Row;

/// Identity and family columns, in order.
const ID_COLUMNS: [&str; 8] = [
    "trace_index",
    "trace",
    "network_index",
    "spec",
    "reference",
    "start_family",
    "duration_family",
    "skeptic",
];
/// Ranking columns appended to `results`.
const DERIVED: [&str; 5] = [
    "x_scaled",
    "y_scaled",
    "distance",
    "trace_rank",
    "worse_than_no_task",
];
/// Prefixes of parameter columns.
const PARAM_PREFIXES: [&str; 3] = ["start.", "duration.", "skeptic."];

fn is_param(name: &str) -> bool {
    PARAM_PREFIXES.iter().any(|p| name.starts_with(p))
}

fn pe(e: PolarsError) -> RankError {
    RankError::Table(e.to_string())
}

fn col<T, N>(name: &str, values: T) -> Column
where
    Series: NamedFrom<T, N>,
    N: ?Sized,
{
    Series::new(name.into(), values).into_column()
}

/// The `results` frame of `rows` (sorted by trace, network) with their
/// within-trace scores.
pub fn results_frame(rows: &[Row], scored: &[Scored]) -> Result<DataFrame, RankError> {
    let mut cols = vec![
        col(
            "trace_index",
            rows.iter()
                .map(|r| r.trace_index as u32)
                .collect::<Vec<_>>(),
        ),
        col(
            "trace",
            rows.iter().map(|r| r.trace.as_str()).collect::<Vec<_>>(),
        ),
        col(
            "network_index",
            rows.iter()
                .map(|r| r.network_index as u32)
                .collect::<Vec<_>>(),
        ),
        col(
            "spec",
            rows.iter().map(|r| r.spec.as_str()).collect::<Vec<_>>(),
        ),
        col(
            "reference",
            rows.iter().map(|r| r.reference).collect::<Vec<_>>(),
        ),
        col(
            "start_family",
            rows.iter()
                .map(|r| r.start_family.as_str())
                .collect::<Vec<_>>(),
        ),
        col(
            "duration_family",
            rows.iter()
                .map(|r| r.duration_family.as_str())
                .collect::<Vec<_>>(),
        ),
        col(
            "skeptic",
            rows.iter()
                .map(|r| r.skeptic.as_deref())
                .collect::<Vec<_>>(),
        ),
    ];
    let params: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.params.keys().map(String::as_str))
        .collect();
    for p in params {
        cols.push(col(
            p,
            rows.iter()
                .map(|r| r.params.get(p).map(String::as_str))
                .collect::<Vec<_>>(),
        ));
    }
    for m in measure_names(rows) {
        cols.push(col(
            &m,
            rows.iter().map(|r| r.measure(&m)).collect::<Vec<_>>(),
        ));
    }
    cols.push(col(
        "x_scaled",
        scored.iter().map(|s| s.x).collect::<Vec<_>>(),
    ));
    cols.push(col(
        "y_scaled",
        scored.iter().map(|s| s.y).collect::<Vec<_>>(),
    ));
    cols.push(col(
        "distance",
        scored.iter().map(|s| s.distance).collect::<Vec<_>>(),
    ));
    cols.push(col(
        "trace_rank",
        scored
            .iter()
            .map(|s| s.rank.map(|r| r as u32))
            .collect::<Vec<_>>(),
    ));
    cols.push(col(
        "worse_than_no_task",
        scored.iter().map(|s| s.worse).collect::<Vec<_>>(),
    ));
    DataFrame::new(rows.len(), cols).map_err(pe)
}

/// Measure names in first-seen order.
pub fn measure_names(rows: &[Row]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        for (k, _) in &r.measures {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    names
}

fn strings(df: &DataFrame, name: &str) -> Result<Vec<Option<String>>, RankError> {
    let c = df.column(name).map_err(pe)?;
    let c = c.cast(&DataType::String).map_err(pe)?;
    Ok(c.str()
        .map_err(pe)?
        .iter()
        .map(|v| v.map(str::to_string))
        .collect())
}

fn floats(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>, RankError> {
    let c = df.column(name).map_err(pe)?;
    let c = c.cast(&DataType::Float64).map_err(pe)?;
    Ok(c.f64().map_err(pe)?.iter().collect())
}

fn indices(df: &DataFrame, name: &str) -> Result<Vec<usize>, RankError> {
    let c = df.column(name).map_err(pe)?;
    let c = c.cast(&DataType::UInt64).map_err(pe)?;
    c.u64()
        .map_err(pe)?
        .iter()
        .map(|v| {
            v.map(|v| v as usize)
                .ok_or_else(|| RankError::Table(format!("null in `{name}`")))
        })
        .collect()
}

/// Rows back from a `results` frame (ranking columns are dropped: they are
/// recomputed).
pub fn rows_from_frame(df: &DataFrame) -> Result<Vec<Row>, RankError> {
    let n = df.height();
    let trace_index = indices(df, "trace_index")?;
    let network_index = indices(df, "network_index")?;
    let trace = strings(df, "trace")?;
    let spec = strings(df, "spec")?;
    let reference: Vec<bool> = {
        let c = df
            .column("reference")
            .map_err(pe)?
            .cast(&DataType::Boolean)
            .map_err(pe)?;
        c.bool()
            .map_err(pe)?
            .iter()
            .map(|v| v.unwrap_or(false))
            .collect()
    };
    let start = strings(df, "start_family")?;
    let duration = strings(df, "duration_family")?;
    let skeptic = strings(df, "skeptic")?;
    let mut rows: Vec<Row> = (0..n)
        .map(|i| Row {
            trace_index: trace_index[i],
            trace: trace[i].clone().unwrap_or_default(),
            network_index: network_index[i],
            spec: spec[i].clone().unwrap_or_default(),
            reference: reference[i],
            start_family: start[i].clone().unwrap_or_default(),
            duration_family: duration[i].clone().unwrap_or_default(),
            skeptic: skeptic[i].clone(),
            params: Default::default(),
            measures: Vec::new(),
        })
        .collect();
    for name in df.get_column_names() {
        let name = name.as_str();
        if ID_COLUMNS.contains(&name) || DERIVED.contains(&name) {
            continue;
        }
        if is_param(name) {
            for (row, v) in rows.iter_mut().zip(strings(df, name)?) {
                if let Some(v) = v {
                    row.params.insert(name.to_string(), v);
                }
            }
        } else {
            for (row, v) in rows.iter_mut().zip(floats(df, name)?) {
                if let Some(v) = v {
                    row.measures.push((name.to_string(), v));
                }
            }
        }
    }
    rows.sort_by_key(|r| (r.trace_index, r.network_index));
    Ok(rows)
}

/// The `ranking` frame: one row per network, ranked first.
pub fn ranking_frame(
    summaries: &[Summary],
    rows: &[Row],
    traces: &[String],
    x: &str,
    y: &str,
) -> Result<DataFrame, RankError> {
    let first = |policy: usize| rows.iter().find(|r| r.network_index == policy);
    let raw_mean = |policy: usize, m: &str| crate::means::raw_mean(rows, policy, m);
    let get = |f: &dyn Fn(&Row) -> String| -> Vec<String> {
        summaries
            .iter()
            .map(|s| first(s.policy).map(f).unwrap_or_default())
            .collect()
    };
    let mut cols = vec![
        col(
            "rank",
            summaries
                .iter()
                .map(|s| s.rank.map(|r| r as u32))
                .collect::<Vec<_>>(),
        ),
        col("spec", get(&|r| r.spec.clone())),
        col(
            "equivalents",
            summaries
                .iter()
                .map(|s| {
                    s.equivalents
                        .iter()
                        .filter_map(|&p| first(p).map(|r| r.spec.as_str()))
                        .collect::<Vec<_>>()
                        .join(" | ")
                })
                .collect::<Vec<_>>(),
        ),
        col("start_family", get(&|r| r.start_family.clone())),
        col("duration_family", get(&|r| r.duration_family.clone())),
        col(
            "traces",
            summaries
                .iter()
                .map(|s| s.distances.len() as u32)
                .collect::<Vec<_>>(),
        ),
        col(
            "worse_than_no_task",
            summaries.iter().map(|s| s.worse as u32).collect::<Vec<_>>(),
        ),
        col(
            "pareto",
            summaries.iter().map(|s| s.pareto).collect::<Vec<_>>(),
        ),
        col(
            "pareto_traces",
            summaries
                .iter()
                .map(|s| s.frontier.len() as u32)
                .collect::<Vec<_>>(),
        ),
        col(
            "mean_distance",
            summaries.iter().map(|s| s.mean).collect::<Vec<_>>(),
        ),
        col(
            "var_distance",
            summaries.iter().map(|s| s.variance).collect::<Vec<_>>(),
        ),
        col(
            &format!("mean_scaled_{x}"),
            summaries.iter().map(|s| s.mean_x).collect::<Vec<_>>(),
        ),
        col(
            &format!("mean_scaled_{y}"),
            summaries.iter().map(|s| s.mean_y).collect::<Vec<_>>(),
        ),
        col(
            &format!("mean_{x}"),
            summaries
                .iter()
                .map(|s| raw_mean(s.policy, x))
                .collect::<Vec<_>>(),
        ),
        col(
            &format!("mean_{y}"),
            summaries
                .iter()
                .map(|s| raw_mean(s.policy, y))
                .collect::<Vec<_>>(),
        ),
    ];
    for m in [
        "competitive_ratio",
        crate::analysis::EXCESS,
        crate::analysis::GAIN,
        crate::sweep::SPINUPS_PER_DAY,
        crate::sweep::DELAYED_PER_HOUR,
    ] {
        if rows.iter().any(|r| r.measure(m).is_some()) {
            // The excess and the gain are ratios of sums over the traces
            // ([`crate::means::raw_mean`]), not means of ratios: named so.
            let how = if [crate::analysis::EXCESS, crate::analysis::GAIN].contains(&m) {
                "pooled"
            } else {
                "mean"
            };
            cols.push(col(
                &format!("{how}_{m}"),
                summaries
                    .iter()
                    .map(|s| raw_mean(s.policy, m))
                    .collect::<Vec<_>>(),
            ));
        }
    }
    for (t, name) in traces.iter().enumerate() {
        cols.push(col(
            &format!("pareto[{name}]"),
            summaries
                .iter()
                .map(|s| (!s.reference).then(|| s.frontier.contains(&t)))
                .collect::<Vec<_>>(),
        ));
    }
    for (t, name) in traces.iter().enumerate() {
        cols.push(col(
            &format!("distance[{name}]"),
            summaries
                .iter()
                .map(|s| s.distances.iter().find(|d| d.0 == t).map(|d| d.1))
                .collect::<Vec<_>>(),
        ));
    }
    DataFrame::new(summaries.len(), cols).map_err(pe)
}

/// Writes `df` as CSV, atomically.
pub fn write_csv(df: &mut DataFrame, path: &Path) -> Result<(), RankError> {
    atomic::write_with(path, |tmp| {
        let mut f = File::create(tmp).map_err(|e| RankError::io(tmp, e))?;
        CsvWriter::new(&mut f)
            .include_header(true)
            .finish(df)
            .map_err(pe)
    })
}

/// Writes `df` as Parquet, atomically.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<(), RankError> {
    atomic::write_with(path, |tmp| {
        let f = File::create(tmp).map_err(|e| RankError::io(tmp, e))?;
        ParquetWriter::new(f).finish(df).map(|_| ()).map_err(pe)
    })
}

/// Reads a Parquet file.
pub fn read_parquet(path: &Path) -> Result<DataFrame, RankError> {
    let f = File::open(path).map_err(|e| RankError::io(path, e))?;
    ParquetReader::new(f)
        .finish()
        .map_err(|e| RankError::Table(format!("{}: {e}", path.display())))
}

/// Reads a CSV file (every column's type inferred from all rows).
pub fn read_csv(path: &Path) -> Result<DataFrame, RankError> {
    CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|r| r.finish())
        .map_err(|e| RankError::Table(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: usize, n: usize, x: f64) -> Row {
        let mut params = std::collections::BTreeMap::new();
        if n == 1 {
            params.insert("start.t".to_string(), "10".to_string());
        }
        Row {
            trace_index: t,
            trace: format!("w{t}"),
            network_index: n,
            spec: format!("timer(t={n}s)"),
            reference: n == 0,
            start_family: "timer".into(),
            duration_family: "no-duration".into(),
            skeptic: None,
            params,
            measures: vec![("efficiency".into(), x), ("violation_rate".into(), 0.1 * x)],
        }
    }

    #[test]
    fn rows_round_trip_through_parquet_and_csv() {
        let rows = vec![
            row(0, 0, 1.0),
            row(0, 1, 0.123456789012345),
            row(1, 1, 1e-300),
        ];
        let scored = vec![
            Scored {
                x: 0.0,
                y: 0.0,
                distance: 0.0,
                rank: None,
                worse: false,
            };
            3
        ];
        let mut df = results_frame(&rows, &scored).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.parquet");
        write_parquet(&mut df, &p).unwrap();
        assert_eq!(rows_from_frame(&read_parquet(&p).unwrap()).unwrap(), rows);
        let c = dir.path().join("r.csv");
        write_csv(&mut df, &c).unwrap();
        assert_eq!(rows_from_frame(&read_csv(&c).unwrap()).unwrap(), rows);
    }
}
