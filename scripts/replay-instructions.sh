#!/usr/bin/env bash
# Instructions one replay of `timer(1s) + fixed(10s)`, one of `auto` and
# one of `share()` (paper drive) take on the replay benchmark's trace, counted by
# callgrind inside `lull_core::engine::replay` (examples/replay_cost.rs),
# and their ratios to the timer's: a cost measure that repeats exactly, where this VM's
# timings vary by ±10 % and more (docs/performance.md).
#
#   scripts/replay-instructions.sh [--every-event] [SPEC…]   # needs valgrind (apt-get install valgrind)
#
# With --every-event every engine replays with its shortcuts off
# (`Engine::with_shortcuts(false)`): every event pushed and every idle
# period announced, as a live embedding and the daemon drive it, where
# the lab's replay lets a timer skip the events of periods it sits out.
#
# Each SPEC (a network, durations relative to the paper drive's B:
# 'long-idle(min=B/8)') is counted too, with its ratio to the timer's.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --every-event ]; then
    export LULL_NO_SHORTCUTS=1
    shift
fi
command -v valgrind >/dev/null || { echo "replay-instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
cargo build --release --example replay_cost >&2
target="${CARGO_TARGET_DIR:-target}"
bin="$target/release/examples/replay_cost"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A count
i=0
for net in timer auto share "$@"; do
    i=$((i + 1))
    valgrind --tool=callgrind --callgrind-out-file="$out/$i" \
        --toggle-collect='lull_core::engine::replay*' "$bin" 1 "$net" >/dev/null 2>"$out/$i.log" \
        || { cat "$out/$i.log" >&2; exit 1; }
    count[$net]=$(callgrind_annotate "$out/$i" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    printf '%-6s %14s instructions\n' "$net" "${count[$net]}"
done
awk -v a="${count[auto]}" -v s="${count[share]}" -v t="${count[timer]}" \
    'BEGIN { printf "auto / timer: %.2f   share / timer: %.2f\n", a / t, s / t }'
for net in "$@"; do
    awk -v a="${count[$net]}" -v t="${count[timer]}" -v n="$net" \
        'BEGIN { printf "%s / timer: %.2f\n", n, a / t }'
done
