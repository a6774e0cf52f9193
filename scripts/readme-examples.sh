#!/usr/bin/env bash
# README.md's lab examples (issue 78), as the README's commands print
# them, trimmed to their answer. scripts/figures.sh puts each between
# README.md's markers.
#
#   scripts/readme-examples.sh rank     # `lull rank --task spindown --out DIR`:
#                                       # the answer and its table (a minute
#                                       # or two on two cores)
#   scripts/readme-examples.sh replay   # `lull replay` of one workload on the
#                                       # NAS drive under the daemon's budget:
#                                       # the verdict and the network
#   scripts/readme-examples.sh embed    # the library's example
#                                       # (`cargo run -p lull --example
#                                       # spindown_auto`, release: its deps
#                                       # are lull's), up to its saved state
#
# lull: $LULL or target/release/lull.
set -euo pipefail
lull=${LULL:-target/release/lull}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
case ${1:-} in
  rank)
    "$lull" rank --task spindown --out "$out/report" 2>/dev/null >"$out/stdout"
    echo '```text'
    # The three lines, a blank line, the table: up to the second blank line.
    awk 'NF == 0 { blank++; if (blank == 2) exit } { print }' "$out/stdout"
    echo '```' ;;
  replay)
    "$lull" replay --workload office --task spindown --device wd-red-plus \
      --max-spindowns-per-day 48 >"$out/stdout"
    echo '```text'
    # The verdict, then the header's first line.
    awk '{ print } /^network / { exit }' "$out/stdout"
    echo '```' ;;
  embed)
    cargo run -q --release -p lull --example spindown_auto >"$out/stdout"
    echo '```text'
    # Up to the saved state; the line after it shows the state refused by
    # another drive's network.
    awk '{ print } /^saved state:/ { exit }' "$out/stdout"
    echo '```' ;;
  *)
    sed -n '2,17p' "$0" >&2
    exit 2 ;;
esac
