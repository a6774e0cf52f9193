#!/usr/bin/env python3
"""docs/results.md's table of `auto` against the best fixed timeout in
hindsight on seeds 201-206, without a wear budget (README.md's headline
until issue 78; block `auto-headline`).

`auto`'s defaults were chosen on seed 1, and alternatives were weighed on
seeds 101-106. Seeds 201-206 were declared unseen on 2026-11-25, then used
to compare variants of `auto`: they are tuning seeds too (docs/results.md,
"The seed protocol"). For every built-in workload and both drives, the
table gives the median and range over those six days of
`excess_vs_best_fixed` (24 h each), next to seed 1's value.

Usage: scripts/headline.py      (lull: $LULL, else target/release/lull)
"""
import json
import os
import statistics
import subprocess

LULL = os.environ.get("LULL", "target/release/lull")
SEEDS = range(201, 207)
TUNING = 1
DEVICES = ["paper-2.5in", "wd-red-plus"]
WORKLOADS = ["office", "home-nas", "db-checkpoint", "cron-server", "workstation", "news", "database",
             "sync30", "iid-exp", "iid-pareto"]
KIND = {"office": "structured", "home-nas": "structured", "db-checkpoint": "structured",
        "cron-server": "structured, periodic",
        "workstation": "correlated", "news": "correlated", "database": "correlated",
        "sync30": "periodic", "iid-exp": "independent", "iid-pareto": "independent"}


def excess(workload, device, seed):
    argv = [LULL, "replay", "--workload", workload, "--seed", str(seed), "--duration", "24h",
            "--task", "spindown", "--device", device, "--net", "auto", "--format", "json"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {p.stderr.strip()}")
    return json.loads(p.stdout)["excess_vs_best_fixed"]


def cell(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"


def one(x):
    return "n/a" if x is None else f"{x:.2f}"


print("| workload | gaps | `paper-2.5in`: seeds 201–206 (tuning), median (range) | seed 1 (tuning) "
      "| `wd-red-plus`: seeds 201–206 (tuning), median (range) | seed 1 (tuning) |")
print("|---|---|---:|---:|---:|---:|")
for w in WORKLOADS:
    cells = []
    for d in DEVICES:
        cells.append(cell([excess(w, d, s) for s in SEEDS]))
        cells.append(one(excess(w, d, TUNING)))
    print(f"| {w} | {KIND[w]} | " + " | ".join(cells) + " |")
