#!/usr/bin/env bash
# What a restart costs `auto` (issue 32): each built-in workload, three
# days, on both presets, replayed straight through, restarted every 24 h
# without its learned state (a daemon that forgets at each daily reboot),
# and with it (as the daemon keeps it in its state file). Prints a
# Markdown table for docs/results.md.
#
#   scripts/restart-cost.sh            # seed 1
#   SEED=7 scripts/restart-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/lull-release.sh
seed="${SEED:-1}"
days="${DAYS:-3d}"
every="${EVERY:-24h}"
run() { # workload device [flags...] -> "energy_j spinups"
  local w="$1" d="$2"
  shift 2
  "$lull" replay --workload "$w" --duration "$days" --seed "$seed" --task spindown \
    --device "$d" --format json "$@" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["energy_j"], int(d["spinups"]), d.get("oracle_energy_j", ""), d.get("baseline_energy_j", ""))'
}
echo "| workload | device | saved, never restarted | restarted every $every, forgetting | … keeping its state | spin-ups: never / forgetting / keeping |"
echo "|---|---|---|---|---|---|"
for d in wd-red-plus paper-2.5in; do
  for w in $workloads; do
    read -r e0 s0 _ base < <(run "$w" "$d")
    read -r e1 s1 _ _ < <(run "$w" "$d" --restart-every "$every")
    read -r e2 s2 _ _ < <(run "$w" "$d" --restart-every "$every" --keep-state)
    python3 - "$w" "$d" "$e0" "$e1" "$e2" "$s0" "$s1" "$s2" "$base" <<'PY'
import sys
w, d, e0, e1, e2, s0, s1, s2, base = sys.argv[1:]
e0, e1, e2, base = float(e0), float(e1), float(e2), float(base)
saved = base - e0
# What the restarts lost, as a share of what the uninterrupted run saved
# (negative: they saved more).
# A loss that rounds to zero is written 0.0, not -0.0.
tenths = lambda x: f"{x + 0.0 if round(x, 1) else 0.0:.1f}"
cost = lambda e: "n/a (nothing saved)" if saved <= 0 else f"{tenths((e - e0) / saved * 100)} % lost"
print(f"| {w} | {d} | {saved / base * 100:.1f} % ({saved / 3.6e3:.1f} Wh) | {cost(e1)} | {cost(e2)} | {s0} / {s1} / {s2} |")
PY
  done
done
