#!/usr/bin/env bash
# Regenerates README.md's ranking table and picture from the run they show
# (issue 16): `lull rank --task spindown --duration 2h` over every built-in
# workload. crates/rank/tests/readme.rs fails when the table differs from
# what the current code prints.
#
#   scripts/readme-rank.sh [LULL_BINARY]
set -euo pipefail
lull=${1:-target/release/lull}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$lull" rank --task spindown --duration 2h --seed 1 --out "$out" >/dev/null
# The report's "Ranking (top 10)" table, between the README's markers.
awk '/^## Ranking \(top 10\)/{on=1; next} on && /^\|/{print} on && /^$/ && seen{exit} on && /^\|/{seen=1}' \
  "$out/report.md" >"$out/table.md"
awk -v table="$out/table.md" '
  /<!-- rank-table:begin -->/ { print; while ((getline l < table) > 0) print l; skip=1; next }
  /<!-- rank-table:end -->/ { skip=0 }
  !skip { print }' README.md >"$out/README.md"
mv "$out/README.md" README.md
cp "$out/plots/tradeoff-workstation.png" docs/img/rank-spindown-workstation.png
echo "README.md table and docs/img/rank-spindown-workstation.png regenerated"
