//! Sweeps on a cluster (docs/cluster.md, issue 30): the Slurm job scripts
//! in `contrib/slurm/` run as documented on a one-node Slurm that
//! `scripts/slurm-test.sh` brings up (root and the Debian packages
//! slurm-wlm and munge; without them the test is ignored, saying why),
//! the documentation shows those very files, and the Kubernetes manifest
//! in `contrib/k8s/` validates against the Kubernetes schema
//! (`kubernetes-validate` from PyPI; ignored without it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const LULL: &str = env!("CARGO_BIN_EXE_lull");

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn text(o: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The code block that follows the line `` `PATH`: `` in `doc`.
fn doc_block(doc: &str, path: &str) -> String {
    let label = format!("`{path}`:");
    let mut lines = doc.lines().skip_while(|l| l.trim() != label).skip(1);
    let fence = lines
        .find(|l| !l.trim().is_empty())
        .unwrap_or_else(|| panic!("docs/cluster.md: no line {label} followed by a code block"));
    assert!(fence.starts_with("```"), "{label} is followed by {fence:?}");
    let mut block = String::new();
    for l in lines.by_ref() {
        if l == "```" {
            return block;
        }
        block.push_str(l);
        block.push('\n');
    }
    panic!("docs/cluster.md: the block after {label} is not closed")
}

#[test]
fn the_docs_show_the_job_scripts_the_slurm_test_runs() {
    let doc = std::fs::read_to_string(repo("docs/cluster.md")).unwrap();
    for path in ["contrib/slurm/sweep.sbatch", "contrib/slurm/merge.sbatch"] {
        let file = std::fs::read_to_string(repo(path)).unwrap();
        assert_eq!(
            doc_block(&doc, path),
            file,
            "docs/cluster.md shows {path} other than it is"
        );
    }
    // The manifest is only referenced (it is long); no copy of it remains.
    assert!(doc.contains("contrib/k8s/lull-rank.yaml"));
    assert!(
        !doc.contains("completionMode: Indexed"),
        "a copy of the manifest"
    );
}

/// Why the Slurm test cannot run here, if it cannot.
fn slurm_missing() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next().map(str::to_owned));
    if uid.as_deref() != Some("0") {
        return Some("needs root (slurmd runs the jobs as their user)".into());
    }
    let missing: Vec<&str> = [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scontrol",
        "sinfo",
    ]
    .into_iter()
    .filter(|t| which(t).is_none())
    .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} not installed (apt-get install slurm-wlm munge)",
            missing.join(", ")
        )
    })
}

fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// A cluster of `scripts/slurm-test.sh`, stopped when dropped (a failed
/// assertion included).
struct Slurm {
    dir: PathBuf,
    stopped: bool,
}

impl Slurm {
    fn start(dir: &Path) -> Slurm {
        let o = Command::new(repo("scripts/slurm-test.sh"))
            .arg("start")
            .arg(dir)
            .output()
            .unwrap();
        // Stopped even when `start` half-failed (it tears down itself too).
        let slurm = Slurm {
            dir: dir.to_path_buf(),
            stopped: false,
        };
        assert!(o.status.success(), "slurm-test.sh start: {}", text(&o));
        slurm
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// A client command (`sbatch`, `squeue`, …) of this cluster.
    fn cmd(&self, tool: &str) -> Command {
        let mut c = Command::new(which(tool).unwrap());
        c.env("SLURM_CONF", self.conf());
        c
    }

    /// `sbatch --parsable ARGS` in `cwd`; the job id.
    fn sbatch(&self, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
        let o = self
            .cmd("sbatch")
            .current_dir(cwd)
            .envs(env.iter().copied())
            .arg("--parsable")
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "sbatch {args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// Waits until none of `jobs` is pending or running.
    fn wait(&self, jobs: &[&str], timeout: Duration) {
        let t = Instant::now();
        loop {
            let o = self
                .cmd("squeue")
                .args(["--noheader", "--format=%i %T %r", "--jobs"])
                .arg(jobs.join(","))
                .output()
                .unwrap();
            let queue = String::from_utf8_lossy(&o.stdout).into_owned();
            if o.status.success() && queue.trim().is_empty() {
                return;
            }
            assert!(
                t.elapsed() < timeout,
                "jobs {jobs:?} not done after {timeout:?}:\n{queue}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `JobState` and `Reason` of each job (of each task of an array),
    /// from `scontrol show job`: accounting is off, and the controller
    /// keeps finished jobs for `MinJobAge` (300 s).
    fn states(&self, job: &str) -> Vec<(String, String, String)> {
        let o = self
            .cmd("scontrol")
            .args(["--oneliner", "show", "job", job])
            .output()
            .unwrap();
        assert!(o.status.success(), "scontrol show job {job}: {}", text(&o));
        let field = |line: &str, key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .unwrap_or("")
                .to_string()
        };
        let mut out: Vec<_> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                (
                    field(l, "ArrayTaskId="),
                    field(l, "JobState="),
                    field(l, "Reason="),
                )
            })
            .collect();
        out.sort();
        out
    }

    fn logs(&self) -> String {
        ["slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| {
                let log = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(15).collect();
                format!(
                    "{f}:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn stop(&mut self) -> Output {
        self.stopped = true;
        Command::new(repo("scripts/slurm-test.sh"))
            .arg("stop")
            .arg(&self.dir)
            .output()
            .unwrap()
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        if !self.stopped {
            let o = self.stop();
            if !o.status.success() {
                eprintln!("slurm-test.sh stop: {}", text(&o));
            }
        }
    }
}

/// Processes whose command line or environment names `dir`: what the
/// cluster in `dir` started (its daemons, job steps and jobs), and nothing
/// else on the machine.
fn processes_of(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        let read = |f: &str| std::fs::read(e.path().join(f)).unwrap_or_default();
        let (cmdline, environ) = (read("cmdline"), read("environ"));
        let has = |b: &[u8]| String::from_utf8_lossy(b).contains(&needle);
        // A zombie has no command line left: it runs nothing.
        if !cmdline.is_empty() && (has(&cmdline) || has(&environ)) {
            found.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

fn lull(args: &[&str], cwd: &Path) {
    let o = Command::new(LULL)
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "lull {args:?}: {}", text(&o));
}

#[test]
#[cfg_attr(
    not(has_slurm),
    ignore = "needs root, slurm-wlm and munge (apt-get install slurm-wlm munge)"
)]
fn a_job_array_sweep_merges_into_the_single_process_ranking_on_slurm() {
    if let Some(why) = slurm_missing() {
        lull_testkit::skip(&why);
        return;
    }
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // Traces the way a cluster shares them: one directory every task reads.
    let traces = root.join("traces");
    std::fs::create_dir(&traces).unwrap();
    let mut trace_args = Vec::new();
    for w in ["workstation", "news", "sync30"] {
        let f = traces.join(format!("{w}.csv"));
        let f = f.to_str().unwrap().to_string();
        lull(
            &[
                "synth",
                "--workload",
                w,
                "--duration",
                "2h",
                "--seed",
                "7",
                "-o",
                &f,
            ],
            root,
        );
        trace_args.push(f);
    }
    let rank_args = |out: &str| -> Vec<String> {
        let mut a = trace_args.clone();
        a.extend(["--task", "spindown", "--device", "wd-red-plus"].map(String::from));
        if !out.is_empty() {
            a.extend(["--out".to_string(), out.to_string()]);
        }
        a
    };

    // The single process.
    let t = Instant::now();
    let whole = root.join("whole");
    let mut args = vec!["rank".to_string()];
    args.extend(rank_args(whole.to_str().unwrap()));
    lull(&args.iter().map(String::as_str).collect::<Vec<_>>(), root);
    let single = t.elapsed();

    let t = Instant::now();
    let mut slurm = Slurm::start(&root.join("slurm"));
    let started = t.elapsed();
    // The job scripts find `lull` on PATH, as on a cluster.
    let bin = Path::new(LULL).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let path = path.to_str().unwrap();
    let sweep = repo("contrib/slurm/sweep.sbatch");
    let merge = repo("contrib/slurm/merge.sbatch");
    let (sweep, merge) = (sweep.to_str().unwrap(), merge.to_str().unwrap());
    let logs = root.join("logs");
    std::fs::create_dir(&logs).unwrap();
    let limit = Duration::from_secs(100);
    // As documented: the array of four shards writing under `out`, then
    // a merge once every task succeeded. Returns both job ids.
    let submit = |out: &str, env: &[(&str, &str)]| {
        let mut args = vec![
            "--array=0-3".to_string(),
            sweep.to_string(),
            out.to_string(),
        ];
        args.extend(rank_args(""));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let array = slurm.sbatch(&logs, env, &args);
        let dep = format!("--dependency=afterok:{array}");
        let merged = slurm.sbatch(&logs, env, &[&dep, "--kill-on-invalid-dep=yes", merge, out]);
        (array, merged)
    };

    let t = Instant::now();
    let out = root.join("out");
    let out = out.to_str().unwrap();
    let (array, merged) = submit(out, &[("PATH", path)]);
    slurm.wait(&[&array, &merged], limit);
    let on_slurm = t.elapsed();
    let states = slurm.states(&array);
    assert_eq!(states.len(), 4, "{states:?}");
    for (task, state, _) in &states {
        assert_eq!(
            state,
            "COMPLETED",
            "task {task}: {states:?}\n{}",
            slurm.logs()
        );
    }
    assert_eq!(slurm.states(&merged)[0].1, "COMPLETED", "{}", slurm.logs());
    // Each task ran the slice its array index names.
    for i in 0..4 {
        let meta = std::fs::read_to_string(format!("{out}/shard-{i}/run.toml")).unwrap();
        assert!(meta.contains(&format!("shard = \"{}/4\"", i + 1)), "{meta}");
    }
    for f in ["ranking.csv", "results.csv"] {
        let a = std::fs::read(whole.join(f)).unwrap();
        let b = std::fs::read(Path::new(out).join("merged").join(f)).unwrap();
        assert!(
            a == b,
            "{f} of the Slurm sweep differs from the single process's"
        );
    }

    // A task that fails (here: a node that dies under array task 2).
    let failing = root.join("lull-dies-on-task-2");
    std::fs::write(
        &failing,
        "#!/bin/sh\nif [ \"$SLURM_ARRAY_TASK_ID\" = 2 ]; then echo 'node lost' >&2; exit 3; fi\nexec lull \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &failing,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = root.join("out-failed");
    let out = out.to_str().unwrap();
    let env = [("PATH", path), ("LULL_BIN", failing.to_str().unwrap())];
    let (array, merged) = submit(out, &env);
    // Someone runs the merge anyway, once the array is over.
    let dep = format!("--dependency=afterany:{array}");
    let forced = slurm.sbatch(&logs, &env, &[&dep, merge, out]);
    slurm.wait(&[&array, &merged, &forced], limit);
    let states = slurm.states(&array);
    let failed: Vec<_> = states.iter().filter(|s| s.1 != "COMPLETED").collect();
    assert_eq!(failed.len(), 1, "{states:?}");
    assert_eq!(
        (failed[0].0.as_str(), failed[0].1.as_str()),
        ("2", "FAILED")
    );
    // The documented merge never runs: Slurm cancels it.
    let (_, state, reason) = &slurm.states(&merged)[0];
    assert_eq!(
        (state.as_str(), reason.as_str()),
        ("CANCELLED", "DependencyNeverSatisfied")
    );
    // The forced one refuses, naming the missing shard, and writes nothing.
    assert_eq!(slurm.states(&forced)[0].1, "FAILED");
    let log = std::fs::read_to_string(logs.join(format!("lull-merge-{forced}.out"))).unwrap();
    assert!(
        log.contains("shard 3/4 is missing (scheduler index 2, counting from 0)"),
        "{log}"
    );
    assert!(!Path::new(out).join("merged").exists());
    assert!(!Path::new(out).join("shard-2").exists());
    // Rerun as documented: that shard alone, its slice spelt out, then
    // the merge; the ranking is whole again.
    let wrap = format!(
        "lull rank {} --shard 3/4 --out {out}/shard-2",
        rank_args("").join(" ")
    );
    let env = [("PATH", path)];
    let rerun = slurm.sbatch(&logs, &env, &["--wrap", &wrap]);
    let dep = format!("--dependency=afterok:{rerun}");
    let merged = slurm.sbatch(&logs, &env, &[&dep, merge, out]);
    slurm.wait(&[&rerun, &merged], limit);
    assert_eq!(slurm.states(&merged)[0].1, "COMPLETED", "{}", slurm.logs());
    let a = std::fs::read(whole.join("ranking.csv")).unwrap();
    let b = std::fs::read(Path::new(out).join("merged/ranking.csv")).unwrap();
    assert!(
        a == b,
        "ranking.csv after the rerun differs from the single process's"
    );

    // Nothing the cluster started outlives it.
    let pids: Vec<String> = ["slurmctld.pid", "slurmd.pid", "munge/munged.pid"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(slurm.dir.join(f))
                .unwrap()
                .trim()
                .to_string()
        })
        .collect();
    let t = Instant::now();
    let o = slurm.stop();
    let stopped = t.elapsed();
    assert!(o.status.success(), "slurm-test.sh stop: {}", text(&o));
    for pid in &pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, s)| &s[..1]);
        assert!(
            matches!(state, None | Some("Z")),
            "pid {pid} of the cluster still runs: {stat}"
        );
    }
    let left = processes_of(root);
    assert!(left.is_empty(), "left running: {left:?}");

    let total = t0.elapsed();
    println!(
        "single process {single:.1?}; cluster up in {started:.1?}; 4-task array and merge {on_slurm:.1?}; stopped in {stopped:.1?}; test {total:.1?}"
    );
    assert!(
        total < Duration::from_secs(180),
        "the Slurm test took {total:?}, more than its 3 minutes"
    );
}

#[test]
#[cfg_attr(
    not(has_kubernetes_validate),
    ignore = "needs kubernetes-validate (pip install kubernetes-validate)"
)]
fn the_kubernetes_manifest_validates_against_the_schema() {
    let Some(validate) = which("kubernetes-validate") else {
        lull_testkit::skip(
            "kubernetes-validate is not installed (pip install kubernetes-validate)",
        );
        return;
    };
    let manifest = repo("contrib/k8s/lull-rank.yaml");
    let text_of = |f: &Path| {
        let o = Command::new(&validate)
            .args(["--strict", "--no-warn"])
            .arg(f)
            .output()
            .unwrap();
        (o.status.success(), text(&o))
    };
    let (ok, out) = text_of(&manifest);
    assert!(ok, "{out}");
    // Both Jobs were checked (the sweep and the merge).
    assert!(
        out.contains("job/lull-rank ") && out.contains("job/lull-rank-merge "),
        "{out}"
    );

    // The validator rejects what the cluster would (so the check above
    // could fail): a misspelt field.
    let yaml = std::fs::read_to_string(&manifest).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(&bad, yaml.replacen("restartPolicy:", "restartPolicyy:", 1)).unwrap();
    let (ok, out) = text_of(&bad);
    assert!(!ok && out.contains("restartPolicyy"), "{out}");

    // Each pod is told how many shards there are: the Job's completions.
    let value = |key: &str| {
        yaml.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(key))
            .map(|v| {
                v.split('#')
                    .next()
                    .unwrap()
                    .trim()
                    .trim_matches('"')
                    .to_string()
            })
            .unwrap_or_else(|| panic!("no {key} in {}", manifest.display()))
    };
    let count = yaml
        .lines()
        .skip_while(|l| !l.contains("name: LULL_SHARD_COUNT"))
        .nth(1)
        .and_then(|l| l.trim().strip_prefix("value:"))
        .map(|v| {
            v.split('#')
                .next()
                .unwrap()
                .trim()
                .trim_matches('"')
                .to_string()
        });
    assert_eq!(count, Some(value("completions:")), "LULL_SHARD_COUNT");
}
