# Helpers of the guest's scenarios (sourced by scenario.sh and hd-idle.sh).
# Everything a test reads is a console line starting with `@@ `.

say() { echo "@@ $*"; }
# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds; a miss is
# printed as `@@ missed WHAT` (the tests fail on any).
wait_for() {
  t=$1 what=$2
  shift 2
  i=0
  while ! "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -gt $((t * 2)) ]; then say "missed $what"; return 1; fi
    sleep 0.5
  done
  say "saw $what after $((i / 2)) s"
}
count() { grep -c "$1" "$2" 2>/dev/null || true; }
at_least() { [ "$(count "$2" "$3")" -ge "$1" ]; }
# Reads a block of the disk behind $1 with O_DIRECT (a request diskstats
# counts), at offset $2 MiB.
touch_disk() { dd if="$1" of=/dev/null bs=4096 count=1 skip=$(($2 * 256)) iflag=direct 2>/dev/null; }
# Seconds since the guest booted, with hundredths.
uptime_s() { cut -d' ' -f1 /proc/uptime; }
