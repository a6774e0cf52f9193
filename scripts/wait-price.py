#!/usr/bin/env python3
"""docs/results.md, block `wait-price` (issue 75): what a price per
spin-up wait buys. `auto(delay-weight=w)` counts every spin-down as
costing B·(1 + w) in its decisions (lull_detectors::long_idle, "A price
per spin-up wait"); the energy measured is the drive's own.

For each built-in workload on the NAS drive (`wd-red-plus`, a 10 s
spin-up), without a budget and under the daemon's 48 a day, the medians
over seeds 301-303 (tuning seeds: the table shows a trade-off and chooses
nothing; the default stays 0) of: energy over the best fixed timeout's
(behind the same gate), spin-ups, seconds requests waited behind them,
and kJ saved against never spinning down.

    scripts/wait-price.py [LULL_BINARY]
"""
import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

import lullreplay

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
LULL = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LULL", "target/release/lull")
WORKLOADS = ["office", "home-nas", "db-checkpoint", "cron-server", "workstation", "news",
             "database", "sync30", "iid-exp", "iid-pareto"]
SEEDS = [301, 302, 303]
WEIGHTS = [0, 0.25, 1]
BUDGETS = [None, 48]
DEVICE = "wd-red-plus"


def replay(job):
    workload, seed, weight, budget = job
    net = "auto" if weight == 0 else f"auto(delay-weight={weight})"
    r = lullreplay.replay(LULL, workload, seed, device=DEVICE, net=net, budget=budget)
    return (r["energy_j"] / r["best_fixed_energy_j"], r["spinups"], r["added_latency_s"],
            (r["baseline_energy_j"] - r["energy_j"]) / 1000)


def main():
    jobs = [(w, s, x, b) for b in BUDGETS for w in WORKLOADS for x in WEIGHTS for s in SEEDS]
    with ThreadPoolExecutor(2) as ex:
        out = dict(zip(jobs, ex.map(replay, jobs)))
    for b in BUDGETS:
        gate = f"`max_spindowns_per_day = {b}`" if b else "no budget"
        print(f"\n`{DEVICE}`, {gate}; each cell: energy / best fixed, spin-ups, "
              "seconds waited, kJ saved (medians over seeds 301-303):\n")
        print("| workload | " + " | ".join(f"delay-weight = {w}" for w in WEIGHTS) + " |")
        print("|---|" + "---:|" * len(WEIGHTS))
        for w in WORKLOADS:
            cells = []
            for x in WEIGHTS:
                rs = [out[(w, s, x, b)] for s in SEEDS]
                m = [statistics.median(r[i] for r in rs) for i in range(4)]
                cells.append(f"{m[0]:.3f}, {m[1]:.0f} up, {m[2]:.0f} s, {m[3]:.1f} kJ")
            print(f"| {w} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
