#!/usr/bin/env bash
# lulld side by side with hd-idle: CPU and memory on DISKS loop devices
# (default 16) with a TIMEOUT s timeout (default 10), both polling
# /proc/diskstats every tenth of it (hd-idle's rule, and lulld's derived
# default poll, within 1 s and 60 s; POLL=1s pins lulld's), for DURATION seconds (default 60) after a WARMUP s warm-up (default 15: the
# first spin-down attempts, at 10 s, are behind it). Both run
# at once on the same disks and see the same traffic.
#
# Traffic (QUIET=0, the default): every second one disk (in turn) gets a
# 4 KiB direct write, so each disk is idle ~15 s out of 16 and both daemons
# lulld tries to spin each down about every 16 s. Loop devices refuse
# standby: lulld's `auto` backend finds no SG_IO and falls back to hdparm
# (a process per attempt, counted in its CPU as children's time). hd-idle
# 1.05 (Debian's) keeps only the lines of SCSI disks (`sd` and letters):
# on loop devices it reads and parses /proc/diskstats every poll and
# sleeps, with no per-disk state and no spin-down attempt, so the
# comparison is a little in its favour (docs/performance.md). QUIET=1:
# no I/O at all, the NAS at night.
#
# Needs root, losetup, hd-idle (apt-get install hd-idle) and a release
# lulld:
#
#   cargo build --release -p lull-live --bin lulld
#   sudo LULLD=target/release/lulld scripts/daemon-overhead.sh
#
# CPU: utime+stime+cutime+cstime from /proc/PID/stat (clock ticks, so
# 10 ms resolution: use DURATION=600 for small numbers), and the daemon's
# own threads' on-CPU nanoseconds from /proc/PID/task/*/schedstat. Memory:
# VmRSS and VmHWM, RSS split into anonymous and file-backed pages (the
# binary's code and libc), and Pss (file pages shared with other
# processes counted in part).
#
# NETWORK='auto' runs that network on every disk instead of
# `timer(TIMEOUT s)` (hd-idle keeps TIMEOUT); `auto` needs a preset
# (EXTRA is top-level, so DISK_EXTRA='preset = "wd-red-plus"' adds keys to
# each [[disk]]).
#
# EXTRA='key = value' adds top-level keys to lulld's configuration (e.g.
# EXTRA='activity_log = false' to measure what the activity log costs).
#
# DEFAULTS=1 runs both at their own defaults (issue 79): lulld with no
# `network`, `poll` or budget keys (`auto`, the derived poll, the
# adaptive poll up to `max_poll` 60 s, 48 spin-downs a day) on the
# wd-red-plus preset, hd-idle with its default 600 s timeout (it polls
# at a tenth of it, 60 s). TIMEOUT is then 600.
#
# RUNS=N (default 1) measures N consecutive windows of DURATION s on the
# same daemons and ends with the median, minimum and maximum of each
# daemon's own-thread CPU per minute and of their ratio (the machine may
# be shared: one window says little).
set -euo pipefail

DISKS=${DISKS:-16}
DURATION=${DURATION:-60}
QUIET=${QUIET:-0}
WARMUP=${WARMUP:-15}
RUNS=${RUNS:-1}
DEFAULTS=${DEFAULTS:-0}
TIMEOUT=${TIMEOUT:-10}
[ "$DEFAULTS" = 1 ] && TIMEOUT=600
LULLD=${LULLD:-target/release/lulld}
[ -x "$LULLD" ] || { echo "no lulld at $LULLD (set LULLD=)" >&2; exit 2; }
command -v hd-idle >/dev/null || { echo "hd-idle is not installed" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root (loop devices)" >&2; exit 2; }

dir=$(mktemp -d)
loops=()
lpid=
hpid=
writer=
cleanup() {
    [ -n "$writer" ] && kill "$writer" 2>/dev/null || true
    [ -n "$lpid" ] && kill "$lpid" 2>/dev/null || true
    [ -n "$hpid" ] && kill "$hpid" 2>/dev/null || true
    sleep 0.5
    for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT

for i in $(seq 0 $((DISKS - 1))); do
    truncate -s 32M "$dir/img$i"
    loops+=("$(losetup -f --show "$dir/img$i")")
done

{
    echo "state_file = \"$dir/state.json\""
    # No `poll`: lulld derives it as hd-idle does (a tenth of the timeout,
    # within 1 s and 60 s); POLL= pins it.
    [ -n "${POLL:-}" ] && echo "poll = \"$POLL\""
    [ -n "${EXTRA:-}" ] && echo "$EXTRA"
    for l in "${loops[@]}"; do
        echo '[[disk]]'
        echo "device = \"${l#/dev/}\""
        if [ "$DEFAULTS" = 1 ]; then
            echo 'preset = "wd-red-plus"'
        else
            echo "network = \"${NETWORK:-timer(${TIMEOUT}s)}\""
            echo 'task = "standby"'
            echo 'max_spindowns_per_day = 100000'
        fi
        [ -n "${DISK_EXTRA:-}" ] && echo "$DISK_EXTRA"
    done
} > "$dir/lull.toml"
poll=$("$LULLD" --config "$dir/lull.toml" --check | sed -n 's/.*: ok; poll \([^ ,(]*\).*/\1/p')

hd_args=(-i 0)
for l in "${loops[@]}"; do hd_args+=(-a "${l#/dev/}" -i "$TIMEOUT"); done
# At its defaults: every disk named, each with hd-idle's default timeout.
[ "$DEFAULTS" = 1 ] && { hd_args=(); for l in "${loops[@]}"; do hd_args+=(-a "${l#/dev/}"); done; }

LULL_LOG=warn "$LULLD" --config "$dir/lull.toml" 2> "$dir/lulld.log" &
lpid=$!
# hd-idle daemonizes: find the daemon by its (unique) arguments.
hd-idle "${hd_args[@]}"
for _ in $(seq 50); do
    hpid=$(pgrep -nf "^hd-idle ${hd_args[*]}\$" || true)
    [ -n "$hpid" ] && break
    sleep 0.1
done
[ -n "$hpid" ] || { echo "hd-idle did not start" >&2; exit 1; }

if [ "$QUIET" != 1 ]; then
    (
        t=0
        while sleep 1; do
            l=${loops[$((t % DISKS))]}
            dd if=/dev/zero of="$l" bs=4k count=1 oflag=direct conv=notrunc status=none
            t=$((t + 1))
        done
    ) &
    writer=$!
fi

ticks() { # utime stime cutime cstime
    awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$1/stat"
}
sched_ns() {
    local sum=0 ns
    for f in /proc/"$1"/task/*/schedstat; do
        read -r ns _ < "$f" || true
        sum=$((sum + ns))
    done
    echo "$sum"
}

hz=$(getconf CLK_TCK)
report() { # name pid ticks0 ticks1 ns0 ns1
    local rss hwm th anon file pss
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$2/status")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$2/status")
    anon=$(awk '/RssAnon/ {print $2}' "/proc/$2/status")
    file=$(awk '/RssFile/ {print $2}' "/proc/$2/status")
    pss=$(awk '/^Pss:/ {print $2}' "/proc/$2/smaps_rollup")
    th=$(ls "/proc/$2/task" | wc -l)
    awk -v n="$1" -v t=$(($4 - $3)) -v s=$(($6 - $5)) -v hz="$hz" -v d="$DURATION" \
        -v rss="$rss" -v hwm="$hwm" -v th="$th" -v anon="$anon" -v file="$file" -v pss="$pss" 'BEGIN {
        printf "%-8s cpu %6.1f ms/min (with children, %d ms resolution), own threads %6.2f ms/min; rss %.1f MiB (peak %.1f MiB; anonymous %.2f, file-backed %.2f, pss %.2f); %d threads\n",
            n, t * 1000 / hz * 60 / d, 1000 / hz, s / 1e6 * 60 / d, rss / 1024, hwm / 1024, anon / 1024, file / 1024, pss / 1024, th
    }'
}

sleep "$WARMUP"
echo "$DISKS loop devices, ${TIMEOUT}s timeout, lulld poll $poll, ${RUNS} x ${DURATION} s measured, quiet=$QUIET, defaults=$DEFAULTS"
: > "$dir/runs"
for run in $(seq "$RUNS"); do
    lt0=$(ticks "$lpid"); ht0=$(ticks "$hpid")
    ls0=$(sched_ns "$lpid"); hs0=$(sched_ns "$hpid")
    sleep "$DURATION"
    lt1=$(ticks "$lpid"); ht1=$(ticks "$hpid")
    ls1=$(sched_ns "$lpid"); hs1=$(sched_ns "$hpid")
    kill -0 "$lpid" || { echo "lulld died:"; cat "$dir/lulld.log"; exit 1; }
    [ "$RUNS" -gt 1 ] && echo "window $run:"
    report lulld "$lpid" "$lt0" "$lt1" "$ls0" "$ls1"
    report hd-idle "$hpid" "$ht0" "$ht1" "$hs0" "$hs1"
    echo "$(((ls1 - ls0) / DURATION)) $(((hs1 - hs0) / DURATION))" >> "$dir/runs"
done
if [ "$RUNS" -gt 1 ]; then
    # ns per second of each window -> ms per minute; median, min, max.
    stats() { sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %.2f (%.2f-%.2f)", m, v[1], v[NR] }'; }
    echo "own threads, ms/min over $RUNS windows:" \
        "lulld $(awk '{ print $1 * 60 / 1e6 }' "$dir/runs" | stats)," \
        "hd-idle $(awk '{ print $2 * 60 / 1e6 }' "$dir/runs" | stats)," \
        "ratio $(awk '{ print $1 / $2 }' "$dir/runs" | stats)"
fi
ls -l "$LULLD" "$(command -v hd-idle)" | awk '{ printf "binary %s: %.2f MB\n", $NF, $5 / 1e6 }'
echo "lulld log lines (warn and above): $(wc -l < "$dir/lulld.log")"
if [ -d "$dir/activity" ]; then
    echo "activity log: $(du -sk "$dir/activity" | cut -f1) KiB in $(find "$dir/activity" -name '*.lact' | wc -l) segments"
fi
