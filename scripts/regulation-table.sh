#!/usr/bin/env bash
# docs/results.md, issues 11 and 17: one table of "Background regulation"
# (gate, manners or latency-target; 30 minutes of each built-in workload,
# seed 1), printed by the ignored test `regulation_tables`, or the
# saturation table (4 h, seed 1), printed by `saturation_table`, both in
# crates/blktrace-replay/tests/regulate_replay.rs (a release build of the
# test: a few minutes the first time).
#
#   scripts/regulation-table.sh gate|manners|latency-target|saturation
set -euo pipefail
cd "$(dirname "$0")/.."
test=regulation_tables
[[ $1 == saturation ]] && test=saturation_table
out=$(LULL_REGULATION_TABLE=$1 cargo test --release -q -p lull-blktrace-replay \
  --test regulate_replay -- --ignored --nocapture --exact "$test")
grep '^|' <<<"$out"
