#!/usr/bin/env bash
# `auto` from a cold start (issue 32, item 4): the first hour and the first
# day of each built-in workload, on both presets, against hd-idle's
# default (a fixed 10 minutes), `timer(B)` and the best fixed timeout in
# hindsight for that stretch. Energy saved against never spinning down, in
# % of the baseline; spin-ups in parentheses. Prints a Markdown table.
#
#   scripts/cold-start.sh          # seed 1
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/lull-release.sh
seed="${SEED:-1}"
run() { # workload device duration net -> "saved% spinups best%"
  "$lull" replay --workload "$1" --duration "$3" --seed "$seed" --task spindown \
    --device "$2" --net "$4" --format json |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
b = d["baseline_energy_j"]
pct = lambda e: (b - e) / b * 100
print("%.1f %d %.1f" % (pct(d["energy_j"]), d["spinups"], pct(d["best_fixed_energy_j"])))'
}
echo "| workload | device | span | auto | hd-idle 10 min | timer(B) | best fixed |"
echo "|---|---|---|---|---|---|---|"
for d in wd-red-plus paper-2.5in; do
  for w in $workloads; do
    for span in 1h 1d; do
      read -r a an best < <(run "$w" "$d" "$span" auto)
      read -r h hn _ < <(run "$w" "$d" "$span" "timer(600s)")
      read -r t tn _ < <(run "$w" "$d" "$span" "timer(B)")
      echo "| $w | $d | first $span | $a % ($an) | $h % ($hn) | $t % ($tn) | $best % |"
    done
  done
done
