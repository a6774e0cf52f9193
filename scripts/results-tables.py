#!/usr/bin/env python3
"""Regenerates the tables of docs/results.md from `lull replay` runs.

    scripts/results-tables.py [LULL_BINARY] [SECTION...]

SECTION is one of spindown, writeback-hp, writeback, cleaning,
cleaning-predicted-end, writeback-target, writeback-predicted-end,
cleaning-measures (default: the first five). Each run is `lull replay --workload
W --duration 4h --seed 1 --task T ... --format json`, one per cell; values
are printed with four significant digits, as in the document. The writeback
sections show `latency_improvement_pct` of the paper's policy
(`writeback-paper`) and the improved one (`writeback`) side by side, one
decimal; a workload the device cannot serve (`lull replay` refuses it,
exit 2) is one column of `sat.`. LULL_BINARY defaults to $LULL, then
target/release/lull. scripts/figures.sh puts each section in its block.
"""

import hashlib
import json
import os
import subprocess
import sys

NETWORKS = [
    "timer(500ms) + fixed(10s)",
    "timer(1s) + fixed(10s)",
    "timer(5s) + fixed(10s)",
    "timer(30s) + fixed(10s)",
    "adapt-timer-arith-geom(step=100ms) + fixed(10s)",
    "event-window(n=10, rate=1) + fixed(10s)",
    "event-window(n=10, rate=0.1) + fixed(10s)",
    "moving-average(rate=1) + fixed(10s)",
    "moving-average(rate=0.1) + fixed(10s)",
    # Every idle period, however short (for spin-down `oracle()` means
    # min=B, the optimum, as the next row).
    "oracle(min=0s)",
    "oracle(min=3s)",
]
ALL = ["workstation", "news", "database", "sync30"]

SECTIONS = {
    "spindown": (["--task", "spindown"], ALL,
                 ["energy_saved_pct", "competitive_ratio", "delayed_ops"]),
    "writeback-hp": (["--device", "hp97560"], ALL, None),
    "writeback": (["--device", "wd-red-plus"], ALL, None),
    "cleaning": (["--task", "cleaning", "--device", "wd-red-plus"], ALL,
                 ["mean_added_delay_ms", "mean_unprocessed_bytes"]),
    "cleaning-predicted-end": (["--task", "cleaning", "--device", "wd-red-plus",
                                "--policy", "predicted-end"], ALL,
                               ["mean_added_delay_ms", "mean_unprocessed_bytes"]),
}


def run(lull, args, workload, net):
    m = replay_or_saturated(lull, args, workload, net)
    if m is None:
        raise SystemExit(f"lull replay --workload {workload} {args} --net {net!r}: saturated")
    return m


def replay_or_saturated(lull, args, workload, net):
    """The run's measures, or None when the device cannot serve the trace.

    With FIGURES_CACHE set (scripts/figures.sh sets it), runs are kept there
    by their arguments, so sections sharing a cell replay it once."""
    argv = ["replay", "--workload", workload, "--duration", "4h", "--seed", "1",
            *args, "--net", net, "--format", "json"]
    cache = os.environ.get("FIGURES_CACHE")
    path = None
    if cache:
        key = hashlib.sha256("\0".join(argv).encode()).hexdigest()
        path = os.path.join(cache, key + ".json")
        if os.path.exists(path):
            return json.load(open(path))
    p = subprocess.run([lull, *argv], capture_output=True, text=True)
    if p.returncode == 2 and "cannot serve" in p.stderr:
        m = None
    elif p.returncode != 0:
        raise SystemExit(f"lull {' '.join(argv)} failed: {p.stderr.strip()}")
    else:
        m = json.loads(p.stdout)
    if path:
        os.makedirs(cache, exist_ok=True)
        json.dump(m, open(path, "w"))
    return m


def writeback_table(lull, args, workloads):
    cells = {}
    for net in NETWORKS:
        for w in workloads:
            for policy in ("writeback-paper", "writeback"):
                cells[net, w, policy] = replay_or_saturated(
                    lull, ["--task", policy, *args], w, net)
    saturated = {w for w in workloads
                 if all(cells[n, w, p] is None for n in NETWORKS
                        for p in ("writeback-paper", "writeback"))}
    cols = []
    for w in workloads:
        cols += [w] if w in saturated else [f"{w}: paper", f"{w}: improved"]
    lines = ["| network | " + " | ".join(cols) + " |",
             "|---|" + "---|" * len(cols)]
    for net in NETWORKS:
        row = []
        for w in workloads:
            policies = ["writeback"] if w in saturated else ["writeback-paper", "writeback"]
            for p in policies:
                m = cells[net, w, p]
                row.append("sat." if m is None else "%.1f" % m["latency_improvement_pct"])
        lines.append(f"| `{net}` | " + " | ".join(row) + " |")
    return "\n".join(lines)


TARGET = "timer(1s) + fixed(10s)"
DEVICES = ["wd-red-plus", "hp97560"]


def pct(x):
    """A signed percentage with one decimal and a real minus sign."""
    return ("+%.1f" % x if x >= 0 else "\u2212%.1f" % -x)


def ms(x):
    """Milliseconds as the document writes them: 0.72, 3.3, 12.6, 136.8."""
    return "%.2f" % x if x < 1 else "%.1f" % x


def latency(x):
    """A mean latency in ms: two decimals below 100 ms, one above."""
    return "%.2f" % x if x < 100 else "%.1f" % x


def mb(x):
    """Megabytes: 0.05, 1.2, 63."""
    return "%.2f" % x if x < 1 else "%.1f" % x if x < 100 else "%.0f" % x


def writeback_target(lull):
    """`timer(1s) + fixed(10s)`, improved policy: the change in mean read
    latency and the latencies without and with the task."""
    lines = ["| device | " + " | ".join(ALL) + " |", "|---|" + "---|" * len(ALL)]
    for dev in DEVICES:
        row = []
        for w in ALL:
            m = replay_or_saturated(lull, ["--task", "writeback", "--device", dev], w, TARGET)
            row.append("saturated (refused)" if m is None else
                       f"**{pct(m['latency_improvement_pct'])} %** "
                       f"({latency(m['baseline_read_latency_ms'])} \u2192 {latency(m['read_latency_ms'])} ms)")
        lines.append(f"| `{dev}` | " + " | ".join(row) + " |")
    return "\n".join(lines)


def writeback_predicted_end(lull):
    """`timer(1s) + fixed(10s)` under `--policy predicted-end`: the change in
    mean read latency, paper policy -> improved policy (indented: the table
    sits in a list item)."""
    lines = ["| device | " + " | ".join(ALL) + " |", "|---|" + "---|" * len(ALL)]
    for dev in DEVICES:
        row = []
        for w in ALL:
            a, b = (replay_or_saturated(lull, ["--task", t, "--device", dev,
                                               "--policy", "predicted-end"], w, TARGET)
                    for t in ("writeback-paper", "writeback"))
            row.append("sat." if a is None or b is None else
                       f"{pct(a['latency_improvement_pct'])} \u2192 "
                       f"**{pct(b['latency_improvement_pct'])}**")
        lines.append(f"| `{dev}` | " + " | ".join(row) + " |")
    return "\n".join("  " + l for l in lines)


CLEANING_NETS = [TARGET, "event-window(n=10, rate=1) + fixed(10s)",
                 "moving-average(rate=0.1) + fixed(10s)"]


def cleaning_measures(lull):
    """Cleaning, `earlier-of`: mean added delay and mean backlog per device
    and workload the device can serve, for three networks."""
    head = [f"`{CLEANING_NETS[0]}`: delay, mean backlog"] + [f"`{n}`" for n in CLEANING_NETS[1:]]
    lines = ["| device, workload | " + " | ".join(head) + " |",
             "|---|" + "---|" * len(head)]
    for dev in ["hp97560", "wd-red-plus"]:
        for w in ALL:
            cells = [replay_or_saturated(lull, ["--task", "cleaning", "--device", dev], w, n)
                     for n in CLEANING_NETS]
            if any(c is None for c in cells):
                continue
            row = [f"{ms(c['mean_added_delay_ms'])} ms, {mb(c['mean_unprocessed_bytes'] / 1e6)} MB"
                   for c in cells]
            lines.append(f"| `{dev}`, {w} | " + " | ".join(row) + " |")
    return "\n".join(lines)


EXTRA = {
    "writeback-target": writeback_target,
    "writeback-predicted-end": writeback_predicted_end,
    "cleaning-measures": cleaning_measures,
}


def table(lull, name):
    if name in EXTRA:
        return EXTRA[name](lull)
    args, workloads, keys = SECTIONS[name]
    if keys is None:
        return writeback_table(lull, args, workloads)
    cols = [f"{w}: {k}" for w in workloads for k in keys]
    lines = ["| network | " + " | ".join(cols) + " |",
             "|---|" + "---|" * len(cols)]
    for net in NETWORKS:
        cells = []
        for w in workloads:
            m = run(lull, args, w, net)
            cells += ["%.4g" % m[k] for k in keys]
        lines.append(f"| `{net}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    argv = sys.argv[1:]
    lull = (argv.pop(0) if argv and argv[0] not in SECTIONS and argv[0] not in EXTRA
            else os.environ.get("LULL", "target/release/lull"))
    names = argv or list(SECTIONS)
    if len(names) == 1:
        print(table(lull, names[0]))
        return
    for name in names:
        print(f"### {name}\n\n{table(lull, name)}\n")


if __name__ == "__main__":
    main()
