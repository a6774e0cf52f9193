#!/usr/bin/env python3
"""docs/results.md, block `learning-curve` (issue 75, item 4): how many
long periods `auto` needs to reach the best fixed timeout on a drive
where they are few.

On the NAS drive (`wd-red-plus`, B = 72 s: a day holds a few dozen
periods longer than B, often fewer), each workload is replayed for one to
seven days of the same seed. A built-in workload's first k days are the
same at every length, so the energy of day k alone is the difference of
two replays. For each day k the table gives:

- the periods longer than B seen before day k began (the oracle's
  spin-ups, without a budget);
- `auto`'s energy on day k over that of the week's best fixed timeout on
  day k (the timeout chosen in hindsight over all seven days; a fixed
  timer's energy adds up day by day). 1.000 is the best fixed timeout;
  below is better.

Without a budget and under the daemon's 48 a day (then the timeout and
the timer are behind the same gate). Medians over the given seeds.

    scripts/learning-curve.py --seeds S1,S2,S3 [LULL_BINARY]
"""
import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

import lullreplay

args = sys.argv[1:]
if args and args[0] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
if len(args) < 2 or args[0] != "--seeds":
    raise SystemExit("usage: scripts/learning-curve.py --seeds S1,S2,S3 [LULL_BINARY]")
SEEDS = [int(s) for s in args[1].split(",")]
LULL = args[2] if len(args) > 2 else os.environ.get("LULL", "target/release/lull")
WORKLOADS = ["office", "home-nas", "cron-server", "workstation", "news", "iid-pareto"]
DAYS = 7
DEVICE = "wd-red-plus"
BUDGETS = [None, 48]


def replay(workload, seed, days, net, budget):
    return lullreplay.replay(LULL, workload, seed, device=DEVICE, net=net,
                             duration=f"{24 * days}h", budget=budget)


def curve(job):
    workload, seed, budget = job
    week = replay(workload, seed, DAYS, "auto", budget)
    best = week["best_fixed_timeout_s"]
    fixed = "timer(1000000s)" if best is None or best != best else f"timer({best}s)"
    days = range(1, DAYS + 1)
    auto = [0.0] + [replay(workload, seed, d, "auto", budget)["energy_j"] for d in days]
    timer = [0.0] + [replay(workload, seed, d, fixed, budget)["energy_j"] for d in days]
    longs = [0.0] + [replay(workload, seed, d, "oracle()", None)["spinups"] for d in days]
    return [(longs[d - 1], (auto[d] - auto[d - 1]) / (timer[d] - timer[d - 1])) for d in days]


def main():
    jobs = [(w, s, b) for b in BUDGETS for w in WORKLOADS for s in SEEDS]
    with ThreadPoolExecutor(2) as ex:
        out = dict(zip(jobs, ex.map(curve, jobs)))
    print(f"Seeds: {', '.join(map(str, SEEDS))}. Each cell: periods longer than B seen before "
          "the day / `auto` over the week's best fixed timeout on that day (medians).")
    for b in BUDGETS:
        gate = f"`max_spindowns_per_day = {b}`" if b else "no budget"
        print(f"\n`{DEVICE}`, {gate}:\n")
        print("| workload | " + " | ".join(f"day {d}" for d in range(1, DAYS + 1)) + " |")
        print("|---|" + "---:|" * DAYS)
        for w in WORKLOADS:
            cells = []
            for d in range(DAYS):
                xs = [out[(w, s, b)][d] for s in SEEDS]
                n = statistics.median(x[0] for x in xs)
                r = statistics.median(x[1] for x in xs)
                cells.append(f"{n:.0f} / {r:.3f}")
            print(f"| {w} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
