#!/usr/bin/env bash
# Overhead of `lull daemon`: CPU and RSS with DISKS fake disks (default 16,
# each with two partitions) polled every second for DURATION seconds
# (default 60). A quarter of the disks see I/O every second (rotating, so
# every disk goes through busy and idle periods and its detectors, engine
# and task decisions all run); QUIET=1 keeps all disks idle, the common case
# for a NAS at night. --dry-run keeps every real drive untouched (and writes
# no state file; the metrics textfile is rewritten).
# Targets: <= 0.1 % of one core, <= 15 MiB RSS.
#
#   cargo build --release --bin lull
#   LULL=target/release/lull scripts/daemon-overhead.sh
#
# CPU time is the sum of the daemon's threads' on-CPU nanoseconds
# (/proc/PID/task/*/schedstat), measured after a 5 s warm-up.
set -euo pipefail

DISKS=${DISKS:-16}
DURATION=${DURATION:-60}
QUIET=${QUIET:-0}
LULL=${LULL:-target/release/lull}
[ -x "$LULL" ] || { echo "no lull binary at $LULL (set LULL=)" >&2; exit 2; }

dir=$(mktemp -d)
pid=
writer=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    [ -n "$writer" ] && kill "$writer" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

names=()
for i in $(seq 0 $((DISKS - 1))); do
    names+=("lulltest$i")
done

write_stats() { # $1: tick
    local t=$1 i=0 out=""
    for n in "${names[@]}"; do
        # Every fourth disk (rotating) did 40 I/Os this second.
        local ios=$(( (t / 4) * 40 + ( (i % 4) < (t % 4) ? 40 : 0 ) ))
        [ "$QUIET" = 1 ] && ios=7
        out+="   8 $((i * 16)) $n $ios 0 $((ios * 8)) 0 $ios 0 $((ios * 8)) 0 0 $ios 0 0 0 0 0 0 0"$'\n'
        out+="   8 $((i * 16 + 1)) ${n}p1 $ios 0 $((ios * 8)) 0 0 0 0 0 0 $ios 0 0 0 0 0 0 0"$'\n'
        out+="   8 $((i * 16 + 2)) ${n}p2 0 0 0 0 $ios 0 $((ios * 8)) 0 0 $ios 0 0 0 0 0 0 0"$'\n'
        i=$((i + 1))
    done
    printf '%s' "$out" > "$dir/diskstats.tmp"
    mv "$dir/diskstats.tmp" "$dir/diskstats"
}
write_stats 0

{
    echo "state_file = \"$dir/state.json\""
    echo 'poll = "1s"'
    echo "diskstats = \"$dir/diskstats\""
    echo "sysfs = \"$dir/no-sysfs\""
    echo '[metrics]'
    echo "textfile = \"$dir/lull.prom\""
    i=0
    for n in "${names[@]}"; do
        echo '[[disk]]'
        echo "device = \"$n\""
        case $((i % 4)) in
            0) echo 'network = "timer(3s) + fixed(10m)"' ;;
            1) echo 'network = "adapt-timer-arith-geom(step=100ms) + fixed(10s)"' ;;
            2) echo 'network = "low-pass(min=3s; event-window(n=10, rate=1) + fixed(100s))"' ;;
            3) echo 'network = "timer(2s) + backoff-arith-geom(step=500ms)"' ;;
        esac
        echo 'task = "standby"'
        echo 'preset = "wd-red-plus"'
        i=$((i + 1))
    done
} > "$dir/lull.toml"

"$LULL" daemon --config "$dir/lull.toml" --check > /dev/null
LULL_LOG=warn "$LULL" daemon --config "$dir/lull.toml" --dry-run 2> "$dir/log" &
pid=$!

( t=1; while sleep 1; do write_stats $t; t=$((t + 1)); done ) &
writer=$!

cpu_ns() {
    local sum=0
    for f in /proc/"$pid"/task/*/schedstat; do
        read -r ns _ < "$f" || true
        sum=$((sum + ns))
    done
    echo "$sum"
}

sleep 5
c0=$(cpu_ns); t0=$(date +%s%N)
sleep "$DURATION"
c1=$(cpu_ns); t1=$(date +%s%N)
rss=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status)
hwm=$(awk '/VmHWM/ {print $2}' /proc/"$pid"/status)
threads=$(ls /proc/"$pid"/task | wc -l)
kill -0 "$pid" || { echo "the daemon died:"; cat "$dir/log"; exit 1; }

awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v rss="$rss" -v hwm="$hwm" -v n="$DISKS" -v th="$threads" -v d="$DURATION" -v q="$QUIET" 'BEGIN {
    printf "disks %d, poll 1s, %d s measured, %d threads, quiet=%s\n", n, d, th, q
    printf "cpu: %.4f %% of one core (%.3f ms per poll)\n", 100 * c / t, c / 1e6 / (t / 1e9)
    printf "rss: %.1f MiB now, %.1f MiB peak\n", rss / 1024, hwm / 1024
    ok = (100 * c / t <= 0.1) && (hwm <= 15 * 1024)
    print (ok ? "within target (<= 0.1 % cpu, <= 15 MiB)" : "OVER TARGET")
    exit ok ? 0 : 1
}'
