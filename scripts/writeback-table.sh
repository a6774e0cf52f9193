#!/bin/bash
# docs/results.md, issue 17: change in mean read latency (%) of the writeback
# task per network, device and built-in workload (seed 1; 4 h for the
# paper-era workloads, 24 h for the structured ones).
# Usage: scripts/writeback-table.sh [LULL_BINARY] [NET...]
set -euo pipefail
L=${1:-target/release/lull}
shift || true
[ $# -gt 0 ] || set -- auto 'timer(1s) + fixed(10s)' 'long-idle()'
for n in "$@"; do
  for dev in wd-red-plus hp97560; do
    printf '| `%s` | `%s` |' "$dev" "$n"
    for wl in workstation news database sync30 office home-nas db-checkpoint; do
      d=4h
      case $wl in office | home-nas | db-checkpoint) d=24h ;; esac
      if out=$("$L" replay --workload "$wl" --duration "$d" --task "${TASK:-writeback}" \
        --device "$dev" --net "$n" --format json 2>/dev/null); then
        printf ' %+.1f %% |' "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["latency_improvement_pct"])' "$out")"
      else
        printf ' saturated |'
      fi
    done
    echo
  done
done
