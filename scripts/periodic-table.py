#!/usr/bin/env python3
"""docs/periodic-results-draft.md: the before/after tables from two or three JSON files of
scripts/periodic-results.py (before, an optional second before file merged into it, after).

Usage: scripts/periodic-table.py BEFORE.json [BEFORE2.json] AFTER.json
"""
import json, statistics, sys
before = json.load(open(sys.argv[1]))
for extra in sys.argv[2:-1]:
    before.update(json.load(open(extra)))
after = json.load(open(sys.argv[-1]))
ORDER = ["office","home-nas","db-checkpoint","cron-server","workstation","news","database","sync30","iid-exp","iid-pareto"]
KIND = {"office":"structured","home-nas":"structured","db-checkpoint":"structured","cron-server":"structured, periodic",
        "workstation":"correlated","news":"correlated","database":"correlated","sync30":"periodic","iid-exp":"independent","iid-pareto":"independent"}
def med(xs):
    xs=[x for x in xs if x is not None]; return statistics.median(xs) if xs else None
def cell(d, key):
    xs=[v[key] for v in d["auto"].values() if v[key] is not None]
    return f"{statistics.median(xs):.3f} ({min(xs):.2f}–{max(xs):.2f})"
for dev in ["paper-2.5in","wd-red-plus"]:
    print(f"\n`{dev}`, seeds 201–206 (24 h each), median (range):\n")
    print("| workload | gaps | `auto` before: excess vs best fixed | after | before: gain vs clairvoyant | after | distribution-optimal timeout: its excess |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for w in ORDER:
        k=f"{w}|{dev}"
        b,a=before[k],after[k]
        do = f"{a['dist_opt_timeout_s']:.1f} s: {med(list(a['dist_opt'].values())):.3f}" if "dist_opt" in a else ""
        print(f"| {w} | {KIND[w]} | {cell(b,'excess_vs_best_fixed')} | {cell(a,'excess_vs_best_fixed')} | {cell(b,'gain_vs_clairvoyant')} | {cell(a,'gain_vs_clairvoyant')} | {do} |")
