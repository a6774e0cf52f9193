#!/usr/bin/env python3
"""docs/results.md, issue 19: the `lull plan` tables on the 24 h structured
workloads (seed 1, `--wait 3s`: the paper 2.5" drive's spin-down break-even).

    scripts/plan-tables.py capacity   # usable idle time per day
    scripts/plan-tables.py jobs       # two daily 60 s-step jobs at 80 % and 150 %

`capacity` runs `lull plan --workload W --wait 3s --job probe:1m/day:step=60s`;
`jobs` asks, for each workload, for two jobs (`scrub`, `backup`) of 40 %
each, then 75 % each, of the measured 60 s-step capacity (whole seconds).
The binary is $LULL, else target/release/lull.
"""
import json
import os
import subprocess
import sys

LULL = os.environ.get("LULL", "target/release/lull")
WORKLOADS = ["office", "home-nas", "db-checkpoint"]


def plan(workload, *jobs):
    argv = [LULL, "plan", "--workload", workload, "--seed", "1", "--wait", "3s", "--format", "json"]
    for j in jobs:
        argv += ["--job", j]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


def capacity(workload):
    """Usable idle time per day (seconds) by step length (seconds)."""
    r = plan(workload, "probe:1m/day:step=60s")
    return {c["step_s"]: c["day_mean_s"] for c in r["capacity"]}


def thousands(x):
    return f"{x:,.0f}".replace(",", " ")


def capacity_table():
    print("| workload | interruptible | 60 s steps |")
    print("|---|---|---|")
    for w in WORKLOADS:
        c = capacity(w)
        print(f"| `{w}` | {c[0.0] / 3600:.2f} h | {c[60.0] / 3600:.2f} h ({thousands(c[60.0])} s) |")


def jobs_table():
    print("| workload | need | scrub | backup | deadlines met | delayed requests (total delay) |")
    print("|---|---|---|---|---|---|")
    for w in WORKLOADS:
        cap = capacity(w)[60.0]
        for need, share in (("80 %", 0.40), ("150 %", 0.75)):
            amount = round(cap * share)
            r = plan(w, f"scrub:{amount}s/day:step=60s", f"backup:{amount}s/day:step=60s")
            jobs = {j["job"]: j for j in r["jobs"]}
            cells, met, delayed = [], [], []
            for d in r["decisions"]:
                name = d["job"]
                if d["admitted"]:
                    j = jobs[name]
                    cells.append(f"admitted, {j['obtained_s'] / 3600:.2f} h of {j['requested_s'] / 3600:.2f} h")
                    met.append(f"{j['deadlines_met']}/{j['windows']}")
                    delayed.append(f"{thousands(j['delayed_requests'])} ({thousands(j['delay_total_s'])} s)")
                else:
                    short = min(s["per_day_s"] for s in d["shortfalls"])
                    cells.append(f"**refused: short by {short / 3600:.2f} h per day**")
            print(f"| `{w}` | {need} | " + " | ".join(cells) + f" | {', '.join(met)} | {' + '.join(delayed)} |")


if __name__ == "__main__":
    what = sys.argv[1:] or ["capacity", "jobs"]
    for t in what:
        {"capacity": capacity_table, "jobs": jobs_table}[t]()
