#!/usr/bin/env bash
# Sweep timing and memory (issue 9): the default spindown grid on synthetic
# traces of growing length, end to end through the release binary.
#
#   scripts/sweep-scaling.sh [LULL_BINARY] [SIZES...]
#
# Prints one line per size: requests, events, networks, wall seconds,
# networks x events per second, peak RSS, and the event array's size
# (32 bytes an event). Needs GNU time (/usr/bin/time).
set -euo pipefail
lull=${1:-target/release/lull}
shift || true
if [[ $# -gt 0 ]]; then sizes=("$@"); else sizes=(10000 100000 1000000); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The news workload makes about 1 request every 44 ms (measured from a 1 h
# sample below); size each trace to the requested count.
"$lull" synth --workload news --duration 1h --seed 3 -o "$work/probe.csv" >/dev/null
per_hour=$(($(wc -l <"$work/probe.csv") - 1))

printf "%10s %10s %8s %9s %16s %10s %12s\n" requests events networks wall_s "net*events/s" peak_MiB events_MiB
for n in "${sizes[@]}"; do
  secs=$(( (n * 3600 + per_hour - 1) / per_hour ))
  "$lull" synth --workload news --duration "${secs}s" --seed 3 -o "$work/full.csv" >/dev/null
  # awk, not `tail | head`: under pipefail head's early exit fails the pipe.
  awk -v n="$n" 'NR <= n + 1' "$work/full.csv" >"$work/t.csv"
  reqs=$(($(wc -l <"$work/t.csv") - 1))
  /usr/bin/time -f "%e %M" -o "$work/time" \
    "$lull" rank "$work/t.csv" --task spindown --out "$work/out" >"$work/stdout" 2>"$work/stderr"
  read -r wall rss_kib <"$work/time"
  nets=$(($(wc -l <"$work/out/results.csv") - 1))
  events=$((reqs * 2))
  awk -v r="$reqs" -v e="$events" -v n="$nets" -v w="$wall" -v m="$rss_kib" 'BEGIN {
    printf "%10d %10d %8d %9.2f %16.3g %10.1f %12.1f\n", r, e, n, w, (n * e) / w, m / 1024, e * 32 / 1048576 }'
done
