#!/usr/bin/env bash
# docs/lab.md's ranking table and picture (issue 16), from the run they show:
# `lull rank --task spindown --duration 2h --days 1 --seed 1` over every built-in
# workload. Prints the report's top-ten table; with --png PATH also writes
# the workstation trade-off plot there (under $FIGURES_OUT when set) and
# prints its caption and image link (relative to docs/, where the block is).
# scripts/figures.sh puts the table between docs/lab.md's markers
# (`scripts/figures.sh lab-rank`); crates/rank/tests/readme.rs and
# `scripts/figures.sh --check` fail when it differs from what the code prints.
#
#   scripts/lab-rank.sh [--png PATH]      # lull: $LULL or target/release/lull
set -euo pipefail
lull=${LULL:-target/release/lull}
png=
if [[ ${1:-} == --png ]]; then png=$2; fi
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$lull" rank --task spindown --duration 2h --days 1 --seed 1 --out "$out" >/dev/null
# The report's "Ranking (top 10)" table.
awk '/^## Ranking \(top 10\)/{on=1; next} on && /^\|/{print} on && /^$/ && seen{exit} on && /^\|/{seen=1}' \
  "$out/report.md"
if [[ -n $png ]]; then
  dest=${FIGURES_OUT:-.}/$png
  mkdir -p "$(dirname "$dest")"
  cp "$out/plots/tradeoff-workstation.png" "$dest"
  cat <<EOT

The trade-off on the \`workstation\` workload (one point per network, better
is lower right, the frontier drawn; the paper's Figure 9):

![spindown: energy saved vs delayed operations on workstation](${png#docs/})
EOT
fi
