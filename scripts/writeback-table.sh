#!/bin/bash
# docs/results.md, issue 17: change in mean read latency (%) of the writeback
# task per device, network and built-in workload (seed 1; 4 h for the
# paper-era workloads, 24 h for the others, whose first hours are night). A trace the device
# cannot serve (`lull replay` exits 2 saying so) is `saturated`; any other
# failure stops the script.
# Usage: scripts/writeback-table.sh [NET...]    (lull: $LULL or target/release/lull)
set -euo pipefail
L=${LULL:-target/release/lull}
[ $# -gt 0 ] || set -- auto 'timer(1s) + fixed(10s)' 'long-idle()'
workloads=(workstation news database sync30 office home-nas db-checkpoint cron-server iid-exp iid-pareto)
printf '| device | network |'
printf ' %s |' "${workloads[@]}"
printf '\n|---|---|'
printf -- '---:|%.0s' "${workloads[@]}"
echo
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for dev in wd-red-plus hp97560; do
  for n in "$@"; do
    printf '| `%s` | `%s` |' "$dev" "$n"
    for wl in "${workloads[@]}"; do
      d=24h
      case $wl in workstation | news | database | sync30) d=4h ;; esac
      rc=0
      out=$("$L" replay --workload "$wl" --duration "$d" --seed 1 --task "${TASK:-writeback}" \
        --device "$dev" --net "$n" --format json 2>"$err") || rc=$?
      if [ $rc -eq 0 ]; then
        # One decimal, signed, with a real minus sign as in the prose.
        v=$(python3 -c 'import json,sys; print("%+.1f" % json.loads(sys.argv[1])["latency_improvement_pct"])' "$out")
        printf ' %s %% |' "${v/#-/−}"
      elif [ $rc -eq 2 ] && grep -q 'cannot serve' "$err"; then
        printf ' saturated |'
      else
        echo "writeback-table.sh: lull replay --workload $wl --device $dev --net '$n' failed:" >&2
        cat "$err" >&2
        exit 1
      fi
    done
    echo
  done
done
