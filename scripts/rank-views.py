#!/usr/bin/env python3
"""Views of `lull rank` runs for docs/results.md, read from their output
directories (ranking.csv, results.csv, run.toml), so that no table there is
read off a report by hand (issue 35).

    scripts/rank-views.py tasks DIR...   # one row per run: the best network,
                                         # the best start and duration families
    scripts/rank-views.py views DIR      # one run seen as the paper's Figure 15
                                         # sees it: networks, start families,
                                         # start policies, best policy per trace

A *start policy* is a start detector with its parameters (`timer(t=B/2)`),
averaged, as the paper's Figure 15 does, over the duration predictors it
was run with and over the traces; a *start family* is the detector's name
averaged over its networks (rank's report). Distances are `lull rank`'s
scaled distance (0 = the ideal of both measures; lower is better).
Reference rows (the oracle, `auto`, the best fixed timeout) are not ranked
and are left out; so are skeptics' networks from the start-policy views
(they are not a start detector with a duration predictor).
"""

import csv
import math
import statistics
import sys
import tomllib
from collections import defaultdict


def load(d):
    with open(f"{d}/ranking.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ranking = [r for r in rows if r["rank"]]
    references = {r["spec"]: r for r in rows if not r["rank"]}
    with open(f"{d}/results.csv", newline="") as f:
        results = [r for r in csv.DictReader(f) if r["reference"] != "true"]
    with open(f"{d}/run.toml", "rb") as f:
        meta = tomllib.load(f)
    return ranking, results, meta, references


def measures(ranking):
    """The two measures a run ranked on, from ranking.csv's columns."""
    cols = [c[len("mean_scaled_"):] for c in ranking[0] if c.startswith("mean_scaled_")]
    return cols


def start_policy(row):
    """The start detector of a `START + DURATION` network, with its
    parameters as written (`timer(t=B/2)`); None for a skeptic's network,
    which is no start policy of the paper's kind."""
    spec = row["spec"]
    parts = spec.split(" + ")
    if len(parts) != 2 or ";" in spec or row["duration_family"] == "no-duration":
        return None
    return parts[0]


def families(ranking, key):
    """(name, best distance, mean distance) of each family, best first."""
    by = defaultdict(list)
    for r in ranking:
        by[r[key]].append(float(r["mean_distance"]))
    out = [(k, min(v), statistics.fmean(v)) for k, v in by.items()]
    out.sort(key=lambda t: (t[1], t[0]))
    return out


def policies(results, per_trace=False):
    """Mean distance of each start policy over duration predictors (and
    traces unless per_trace), best first."""
    by = defaultdict(list)
    for r in results:
        pol = start_policy(r)
        if not r["distance"] or pol is None:
            continue
        k = (r["trace"], pol) if per_trace else pol
        by[k].append(float(r["distance"]))
    out = [(k, statistics.fmean(v)) for k, v in by.items()]
    out.sort(key=lambda t: (t[1], str(t[0])))
    return out


def tasks(dirs):
    print("| task | measures ranked (x, y) | traces ranked | best network | mean distance (sd) "
          "| `auto` (reference): mean distance | best start families (best distance; family mean) "
          "| best duration families (best distance) |")
    print("|---|---|---:|---|---:|---:|---|---|")
    for d in dirs:
        ranking, _, meta, references = load(d)
        m = measures(ranking)
        best = ranking[0]
        starts = "; ".join(f"{k} {b:.3f} ({a:.3f})" for k, b, a in families(ranking, "start_family")[:3])
        durs = "; ".join(f"{k} {b:.3f}" for k, b, _ in families(ranking, "duration_family")[:3])
        sd = math.sqrt(float(best["var_distance"]))
        auto = references.get("auto")
        auto = f"{float(auto['mean_distance']):.3f}" if auto else "-"
        print(f"| {meta['task']} | {m[0]}, {m[1]} | {int(best['traces'])} | `{best['spec']}` "
              f"| {float(best['mean_distance']):.3f} ({sd:.3f}) | {auto} | {starts} | {durs} |")


def views(d):
    ranking, results, meta, _ = load(d)
    nets = ranking[:4]
    fams = families(ranking, "start_family")
    pols = policies(results)
    per = policies(results, per_trace=True)
    print("| view | best | next |")
    print("|---|---|---|")
    print(f"| networks (rank's table) | `{nets[0]['spec']}` {float(nets[0]['mean_distance']):.3f} | "
          + "; ".join(f"`{r['spec']}` {float(r['mean_distance']):.3f}" for r in nets[1:]) + " |")
    fams.sort(key=lambda t: (t[2], t[0]))
    print(f"| start families (rank's report; mean over the family's networks) "
          f"| {fams[0][0]} {fams[0][2]:.3f} | "
          + "; ".join(f"{k} {a:.3f}" for k, _, a in fams[1:4]) + " |")
    print(f"| start policies, as Figure 15 (mean over duration predictors and traces) "
          f"| `{pols[0][0]}` {pols[0][1]:.3f} | "
          + "; ".join(f"`{k}` {v:.3f}" for k, v in pols[1:5]) + " |")
    best = {}
    for (trace, pol), v in per:
        best.setdefault(trace, (pol, v))
    order = [t["name"] for t in meta["traces"] if t["name"] in best]
    print("| best start policy on each trace | "
          + "; ".join(f"{t} `{best[t][0]}` {best[t][1]:.3f}" for t in order[:len(order) // 2 + len(order) % 2])
          + " | " + "; ".join(f"{t} `{best[t][0]}` {best[t][1]:.3f}" for t in order[len(order) // 2 + len(order) % 2:])
          + " |")


def main(argv):
    if len(argv) < 3 or argv[1] not in ("tasks", "views") or (argv[1] == "views" and len(argv) != 3):
        sys.exit(__doc__)
    if argv[1] == "tasks":
        tasks(argv[2:])
    else:
        views(argv[2])


if __name__ == "__main__":
    main(sys.argv)
