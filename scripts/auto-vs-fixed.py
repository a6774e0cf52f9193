#!/usr/bin/env python3
"""Tables of docs/results.md, issue 15: `auto` against the best fixed timeout.

Usage: scripts/auto-vs-fixed.py RANK_DIR...   (each from `lull rank --task spindown`)
"""
import csv
import sys


def num(row, key):
    v = row.get(key) if row else None
    return float(v) if v not in (None, "") else float("nan")


for d in sys.argv[1:]:
    with open(f"{d}/run.toml") as f:
        device = next((l.split("=", 1)[1].strip().strip('"') for l in f if l.startswith("device")), d)
    by = {}
    with open(f"{d}/results.csv") as f:
        for r in csv.DictReader(f):
            by.setdefault(r["trace"], {})[r["spec"]] = r
    print(f"\n`{device}`:\n")
    print("| workload | auto: excess vs best fixed | share(): excess | best fixed timeout (s) | auto spin-ups | oracle spin-ups | ratio | energy saved: auto / best fixed / oracle (%) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for t, m in by.items():
        a, s, bf = m.get("auto"), m.get("share()"), m.get("best-fixed")
        o = next(v for k, v in m.items() if k.startswith("oracle"))
        ratio = num(a, "spinups") / max(1.0, num(o, "spinups"))
        print(
            f"| {t} | {num(a, 'excess_vs_best_fixed'):.3f} | {num(s, 'excess_vs_best_fixed'):.3f} "
            f"| {num(a, 'best_fixed_timeout_s'):.1f} | {num(a, 'spinups'):.0f} | {num(o, 'spinups'):.0f} "
            f"| {ratio:.2f} | {num(a, 'energy_saved_pct'):.1f} / {num(bf, 'energy_saved_pct'):.1f} / {num(a, 'oracle_saved_pct'):.1f} |"
        )
