#!/usr/bin/env python3
"""docs/periodic-results-draft.md (issue 29, items 1, 3, 5): `auto` on
every built-in workload, both drives, the unseen seeds 201-206 (24 h each):
median and range of `excess_vs_best_fixed` and `gain_vs_clairvoyant`; for
the i.i.d. workloads also the distribution-optimal fixed timeout (best fixed
timeout of a 10-day trace, seed 2, as scripts/auto-robustness.py) and its
excess on the same days.

Usage: scripts/periodic-results.py LULL_BINARY OUT.json NET WORKLOAD,WORKLOAD,...
Prints nothing; writes the raw numbers as JSON (docs/periodic-results-draft.md
says how its tables were made from them).
"""
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

LULL = sys.argv[1]
OUT = sys.argv[2]
NET = sys.argv[3]
DEVICES = ["paper-2.5in", "wd-red-plus"]
SEEDS = range(201, 207)
IID = ["iid-exp", "iid-pareto"]


def replay(workload, device, net, seed, duration="24h"):
    out = subprocess.run(
        [LULL, "replay", "--workload", workload, "--seed", str(seed), "--duration", duration,
         "--task", "spindown", "--device", device, "--net", net, "--format", "json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    names = sys.argv[4].split(",")
    jobs = []
    for w in names:
        for d in DEVICES:
            for s in SEEDS:
                jobs.append((w, d, NET, s, "24h"))
            if w in IID:
                jobs.append((w, d, "timer(B)", 2, "240h"))
    with ThreadPoolExecutor(2) as ex:
        res = list(ex.map(lambda j: replay(*j), jobs))
    out = {}
    fixed_jobs = []
    for j, r in zip(jobs, res):
        w, d, net, s, dur = j
        key = f"{w}|{d}"
        if dur == "240h":
            out.setdefault(key, {})["dist_opt_timeout_s"] = r["best_fixed_timeout_s"]
            for s2 in SEEDS:
                fixed_jobs.append((w, d, f"timer({r['best_fixed_timeout_s']:.6f}s)", s2, "24h"))
        else:
            e = out.setdefault(key, {})
            e.setdefault("auto", {})[s] = {k: r.get(k) for k in
                ("excess_vs_best_fixed", "gain_vs_clairvoyant", "energy_j", "spinups",
                 "oracle_saved_pct", "energy_saved_pct")}
    with ThreadPoolExecutor(2) as ex:
        res = list(ex.map(lambda j: replay(*j), fixed_jobs))
    for j, r in zip(fixed_jobs, res):
        w, d, net, s, dur = j
        out[f"{w}|{d}"].setdefault("dist_opt", {})[s] = r["excess_vs_best_fixed"]
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


main()
