//! Reads every public sample in `shared/traces` and pins the facts its
//! README states (record counts, spans, devices). Ignored, saying why,
//! when the folder is absent (build.rs probes for it): set `LULL_TRACES`
//! to point at it.

use lull_blktrace_replay::blktrace::{self, Counts};
use lull_blktrace_replay::input::open_decoded;
use lull_blktrace_replay::{Format, ReadOptions, Trace, TraceInfo, open};
use lull_core::request::Op;

mod common;
use common::traces;

fn read(rel: &str) -> Option<Trace> {
    let path = traces()?.join(rel);
    Some(open(&path, ReadOptions::default()).unwrap_or_else(|e| panic!("{e}")))
}

fn counts(rel: &str) -> Option<(Trace, Counts)> {
    let dir = traces()?.join(rel);
    let mut inputs = Vec::new();
    let files = if dir.is_dir() {
        blktrace::cpu_files(&dir).unwrap()
    } else {
        vec![dir]
    };
    for f in files {
        let (_, input) = open_decoded(&f).unwrap();
        inputs.push((f, input));
    }
    Some(blktrace::read_with_counts(inputs, ReadOptions::default()).unwrap())
}

fn span_s(t: &Trace) -> f64 {
    t.span().as_secs_f64()
}

fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, want {want} ± {tol}"
    );
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blktrace_sda_desktop() {
    let Some(t) = read("blktrace/liuzel01_mynotes_sda") else {
        return;
    };
    assert_eq!(t.format, "blktrace");
    assert_eq!(t.devices, ["8,0"]);
    assert_eq!(t.skipped, 0);
    assert_close("span", span_s(&t), 110.2, 0.05);
    let (_, c) = counts("blktrace/liuzel01_mynotes_sda").unwrap();
    let c = &c["8,0"];
    assert_eq!((c.queued, c.issued, c.completed), (113, 109, 109));
    // Every Q is a request; the rest are D or C without a Q.
    assert_eq!(
        t.requests.len() as u64,
        c.queued + c.issue_only + c.completion_only
    );
    // Almost the whole span is idle; the largest gaps are 30, 25 and 20 s.
    let info = TraceInfo::of(&t);
    assert!(info.idle_share > 0.95, "{info:?}");
    assert!(info.longest_idle_s > 29.0 && info.longest_idle_s < 30.5);
    assert!(info.long[2].periods >= 3, "{info:?}");
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blktrace_hadoop_missing_cpu_file() {
    let Some((t, c)) = counts("blktrace/zzunny97_hadoop_eternity10_sdb") else {
        return;
    };
    assert_eq!(t.devices, ["8,16"]);
    let c = &c["8,16"];
    assert_eq!(c.queued, 137_309);
    assert_eq!(c.issued, 137_358);
    assert_eq!(c.completed, 81_388);
    // Many requests never complete (their CPU-33 file is missing): each is
    // a request ending when it was last seen.
    assert!(c.never_completed > 40_000, "{c:?}");
    assert!(t.notes.iter().any(|n| n.contains("never completed")));
    assert_close("span", span_s(&t), 169.27, 0.05);
    // A Q whose D and C were lost with CPU 33 does not take the D of its
    // sector's next request (lab-25 B3): xfsaild rewrites its blocks every
    // 30 s, and first-in first-out pairing made 22 requests of 30 to 61 s
    // that hid the 20.7 s idle period the README lists as the largest.
    assert!(
        t.requests.iter().all(|r| r.response().as_secs_f64() < 1.0),
        "{:?}",
        t.requests.iter().map(|r| r.response()).max()
    );
    let info = TraceInfo::of(&t);
    assert_close("longest idle", info.longest_idle_s, 20.72, 0.01);
    assert!(info.idle_s > 100.0, "{info:?}");
    // The directory reads the same through `open`, and says which file
    // is missing.
    let d = read("blktrace/zzunny97_hadoop_eternity10_sdb").unwrap();
    assert_eq!(d.requests, t.requests);
    assert!(
        d.notes[0].starts_with("CPU 33's file (sdb.blktrace.33) is missing")
            && d.notes[0].contains("CPUs 0 to 39 are otherwise there"),
        "{:?}",
        d.notes
    );
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blktrace_nvme_single_cpu() {
    let Some((t, c)) = counts("blktrace/takeoverjp_nvme0n1/sample.blktrace.0") else {
        return;
    };
    assert_eq!(t.devices, ["259,0"]);
    let c = &c["259,0"];
    assert_eq!((c.queued, c.issued, c.completed), (963, 963, 963));
    assert_eq!(t.requests.len(), 963);
    assert_eq!(c.never_completed + c.completion_only + c.issue_only, 0);
    assert_close("span", span_s(&t), 0.346, 0.001);
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blktrace_dc_only_action_mask() {
    let Some((t, c)) = counts("blktrace/isotopp_keks_sdd4") else {
        return;
    };
    assert_eq!(t.devices, ["8,52"]);
    let c = &c["8,52"];
    assert_eq!((c.queued, c.issued, c.completed), (0, 1_192, 1_206));
    assert_eq!(
        c.issue_only, 1_192,
        "D/C fallback: every D starts a request"
    );
    assert_close("span", span_s(&t), 56.3, 0.05);
    // Periodic writes every ~5.1 s leave 11 idle gaps of about 5.11 s.
    let info = TraceInfo::of(&t);
    assert!(info.long[1].periods >= 10, "{info:?}");
    assert!(
        info.longest_idle_s > 5.0 && info.longest_idle_s < 5.3,
        "{info:?}"
    );
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blktrace_blkparse_dump_skips_notify_times() {
    let Some(t) = read("blktrace/romeus_blkparse_dump_loop0/trace_x_1_y_1.bin") else {
        return;
    };
    assert_eq!(t.devices, ["7,0"]);
    // Notify records keep since-boot times; they must not stretch the span
    // to 3.5 hours.
    assert_close("span", span_s(&t), 0.047, 0.001);
    // The README calls the workload `dd` writes; the records say reads:
    // 1,024 Q, D and C of RS requests.
    assert_eq!(t.requests.len(), 1_024);
    assert!(t.requests.iter().all(|r| r.op == Op::Read));
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blkparse_hadoop_cfq() {
    let Some(t) = read("blkparse/apress_mbpa_sdb_blkparse.txt") else {
        return;
    };
    assert_eq!(t.format, "blkparse");
    assert_eq!(t.devices, ["8,16"]);
    assert!(t.requests.len() >= 15_524, "{}", t.requests.len());
    assert_close("span", span_s(&t), 9.378, 0.01);
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blkparse_dm_crypt_with_summary() {
    let Some(t) = read("blkparse/oxdeadmeat_nvme0n1.blktrace.txt") else {
        return;
    };
    assert_eq!(t.format, "blkparse");
    assert!(t.devices.contains(&"259,0".to_string()), "{:?}", t.devices);
    assert!(t.requests.len() >= 248);
    assert!(t.requests.iter().any(|r| r.op == Op::Flush));
    assert_close("span", span_s(&t), 25.0, 0.1);
    let info = TraceInfo::of(&t);
    assert!(info.long[1].periods >= 5, "{info:?}");
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn blkparse_forty_year_cpu_clock() {
    let Some(t) = read("blkparse/shl812_leveldb_ram0_blk_data.txt") else {
        return;
    };
    assert_eq!(t.devices, ["1,0"]);
    // CPU 13 is 40 years ahead: its requests are dropped, never a 40-year span.
    assert!(span_s(&t) < 60.0, "span {}", span_s(&t));
    assert!(t.skipped > 0);
    assert!(t.notes.iter().any(|n| n.contains("30 days")));
    assert!(
        t.requests
            .iter()
            .all(|r| r.op == Op::Write && r.bytes <= 1024)
    );
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn msr_cambridge_excerpt() {
    let Some(t) = read("msr/msr-cambridge1-sample_hm0.csv") else {
        return;
    };
    assert_eq!(t.format, "msr");
    assert_eq!(t.devices, ["msr:hm_0"]);
    assert_eq!(t.requests.len(), 1_000);
    let last_arrival = t.requests.last().unwrap().arrival.as_secs_f64();
    assert_close("arrival span", last_arrival, 127.23, 0.01);
    // The README says almost all are writes; the rows say 508 reads, 492 writes.
    assert_eq!(t.requests.iter().filter(|r| r.op == Op::Write).count(), 492);
    assert!(t.requests.iter().all(|r| r.completion > r.arrival));
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn cloudphysics_vscsi_two_hours() {
    let Some(t) = read("other/cloudphysics_cloudPhysicsIO.vscsi") else {
        return;
    };
    assert_eq!(t.format, "vscsi");
    assert_eq!(t.requests.len(), 113_872);
    let reads = t.requests.iter().filter(|r| r.op == Op::Read).count();
    assert_eq!((reads, t.requests.len() - reads), (46_974, 66_898));
    assert_close("span", span_s(&t), 7_200.09, 0.01);
    let info = TraceInfo::of(&t);
    assert_close("longest gap", info.longest_idle_s, 4.91, 0.01);
    assert!(info.long[1].periods >= 2_000, "{info:?}");
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn tencent_plain_and_bzip2_agree() {
    let Some(plain) = read("other/tencent_cbs_cloud_storage-sample.csv") else {
        return;
    };
    let bz = read("other/tencent_cbs_cloud_storage-sample.csv.bz2").unwrap();
    assert_eq!(plain.format, "tencent");
    assert_eq!(plain.requests.len(), 50_000);
    assert_eq!(plain.devices.len(), 2_038);
    assert_close("span", span_s(&plain), 1.0, 1e-6);
    assert_eq!(plain, bz);
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn systor_gzip_unsorted() {
    for (rel, span) in [
        ("other/systor17-traces-sample.csv.gz", 2.45),
        ("other/systor17-additional-sample.csv.gz", 1.33),
    ] {
        let Some(t) = read(rel) else {
            return;
        };
        assert_eq!(t.format, "systor");
        assert_eq!(t.requests.len(), 999);
        assert_eq!(t.devices, ["systor:0"]);
        assert!(t.requests.windows(2).all(|w| w[0].arrival <= w[1].arrival));
        assert!(
            t.notes.iter().any(|n| n.contains("sorted")),
            "{:?}",
            t.notes
        );
        let last_arrival = t.requests.last().unwrap().arrival.as_secs_f64();
        assert_close(rel, last_arrival, span, 0.01);
    }
}

#[test]
#[cfg_attr(
    not(has_traces),
    ignore = "needs the trace samples (../shared/traces, or set LULL_TRACES)"
)]
fn every_sample_is_sniffed_by_content() {
    let Some(dir) = traces() else {
        return;
    };
    let cases = [
        (
            "blktrace/liuzel01_mynotes_sda/sda.blktrace.0",
            Format::Blktrace,
        ),
        (
            "blktrace/romeus_blkparse_dump_loop0/trace_x_1_y_1.bin",
            Format::Blktrace,
        ),
        ("blkparse/apress_mbpa_sdb_blkparse.txt", Format::Blkparse),
        ("blkparse/oxdeadmeat_nvme0n1.blktrace.txt", Format::Blkparse),
        (
            "blkparse/shl812_leveldb_ram0_blk_data.txt",
            Format::Blkparse,
        ),
        ("msr/msr-cambridge1-sample_hm0.csv", Format::Msr),
        ("other/cloudphysics_cloudPhysicsIO.vscsi", Format::Vscsi),
        (
            "other/tencent_cbs_cloud_storage-sample.csv.bz2",
            Format::Tencent,
        ),
        ("other/systor17-traces-sample.csv.gz", Format::Systor),
    ];
    for (rel, format) in cases {
        let got = lull_blktrace_replay::read::sniff_file(&dir.join(rel)).unwrap();
        assert_eq!(got, Some(format), "{rel}");
    }
}
