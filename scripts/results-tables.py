#!/usr/bin/env python3
"""Regenerates the tables of docs/results.md from `lull replay` runs.

    scripts/results-tables.py [LULL_BINARY] [SECTION...]

SECTION is one of spindown, writeback-hp, writeback, cleaning,
cleaning-predicted-end (default: all). Each run is `lull replay --workload
W --duration 4h --seed 1 --task T ... --format json`, one per cell; values
are printed with four significant digits, as in the document.
"""

import json
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
    "oracle()",
    "oracle(min=3s)",
]
ALL = ["workstation", "news", "database", "sync30"]

SECTIONS = {
    "spindown": (["--task", "spindown"], ALL,
                 ["energy_saved_pct", "competitive_ratio", "delayed_ops"]),
    "writeback-hp": (["--task", "writeback", "--device", "hp97560"],
                     ["workstation", "sync30"],
                     ["latency_improvement_pct", "mean_queue_bytes"]),
    "writeback": (["--task", "writeback", "--device", "wd-red-plus"], ALL,
                  ["latency_improvement_pct", "mean_queue_bytes"]),
    "cleaning": (["--task", "cleaning", "--device", "wd-red-plus"], ALL,
                 ["mean_added_delay_ms", "mean_unprocessed_bytes"]),
    "cleaning-predicted-end": (["--task", "cleaning", "--device", "wd-red-plus",
                                "--policy", "predicted-end"], ALL,
                               ["mean_added_delay_ms", "mean_unprocessed_bytes"]),
}


def run(lull, args, workload, net):
    out = subprocess.run(
        [lull, "replay", "--workload", workload, "--duration", "4h", "--seed", "1",
         *args, "--net", net, "--format", "json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def table(lull, name):
    args, workloads, keys = SECTIONS[name]
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
    lull = argv.pop(0) if argv and argv[0] not in SECTIONS else "target/release/lull"
    for name in argv or list(SECTIONS):
        print(f"### {name}\n\n{table(lull, name)}\n")


if __name__ == "__main__":
    main()
