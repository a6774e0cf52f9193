#!/usr/bin/env python3
"""docs/results.md, issue 15: `auto` on days it was never looked at, against
the fixed timeout that is best for the workload's *distribution*.

For every built-in workload and drive:
  1. the best fixed timeout of a 10-day trace (seed 2, 240 h): the timeout a
     user who knew the workload's statistics in advance would pick; on
     i.i.d. gaps no online policy does better in expectation;
  2. on six other days (seeds 101-106, 24 h each), `excess_vs_best_fixed` of
     that timeout and of `auto`.

Usage: scripts/auto-robustness.py [LULL_BINARY]   (default $LULL, then target/release/lull)
"""
import os
import statistics
import sys

import lullreplay

LULL = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LULL", "target/release/lull")
DEVICES = ["paper-2.5in", "wd-red-plus"]
WORKLOADS = ["workstation", "news", "database", "sync30", "office", "home-nas", "db-checkpoint",
             "cron-server"]
SEEDS = range(101, 107)


def replay(workload, device, net, seed, duration="24h"):
    return lullreplay.replay(LULL, workload, seed, device=device, net=net, duration=duration)


def cell(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return f"{statistics.median(xs):.3f} ({min(xs):.2f}–{max(xs):.2f})"


for device in DEVICES:
    print(f"\n`{device}`:\n")
    print("| workload | distribution-optimal timeout (s) | its excess vs best fixed: median (range) | `auto`: median (range) | `auto` ≤ target on |")
    print("|---|---:|---:|---:|---:|")
    for w in WORKLOADS:
        t = replay(w, device, "timer(B)", 2, "240h")["best_fixed_timeout_s"]
        fixed, auto = [], []
        for s in SEEDS:
            fixed.append(replay(w, device, f"timer({t:.6f}s)", s)["excess_vs_best_fixed"])
            auto.append(replay(w, device, "auto", s)["excess_vs_best_fixed"])
        target = 0.8 if w in ("office", "home-nas", "db-checkpoint", "cron-server") else 1.0
        met = sum(1 for a in auto if a is not None and a <= target)
        print(f"| {w} | {t:.1f} | {cell(fixed)} | {cell(auto)} | {met}/{len(auto)} days (≤ {target}) |")
