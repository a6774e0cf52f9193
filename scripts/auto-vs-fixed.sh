#!/usr/bin/env bash
# docs/results.md, issue 15: `auto` against the best fixed timeout in
# hindsight, 24 h of every built-in workload (seed 1, the seed the defaults
# were tuned on), on the paper's 2.5" drive and a NAS drive: two
# `lull rank --task spindown` runs, then scripts/auto-vs-fixed.py.
#
#   scripts/auto-vs-fixed.sh        # lull: $LULL or target/release/lull
set -euo pipefail
lull=${LULL:-target/release/lull}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for dev in paper-2.5in wd-red-plus; do
  "$lull" rank --task spindown --device "$dev" --seed 1 --days 1 --out "$out/rank-$dev" >/dev/null 2>&1
done
python3 scripts/auto-vs-fixed.py "$out/rank-paper-2.5in" "$out/rank-wd-red-plus"
