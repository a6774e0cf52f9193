#!/bin/sh
# The guest's second scenario (scripts/guest-test.sh --scenario hd-idle;
# checked by crates/live/tests/guest.rs): Debian's hd-idle itself beside
# lulld. hd-idle watches the SATA disk with `-i 6`; lulld watches the
# SCSI disk with what `lulld --from-hd-idle` converts the same option
# into (`timer(6s)`, `compare_timeout = "6s"`). Both disks get the same
# reads at the same times, so each daemon's decisions can be set against
# the other's: hd-idle's spin-downs (its log file, written at each
# spin-up: how long the disk was stopped), lulld's (its log), and what
# lulld's status says hd-idle's timeout would have done ("your timeout"),
# and what a dry run beside hd-idle on its own disk says it would have.
limit=${1:-420}
log=/tmp/lulld.log
drylog=/tmp/lulld-dry.log
hdlog=/tmp/hd-idle.log
sata=/dev/disk/by-id/ata-LULL_SATA_DISK_LULLSATA0001
scsi=/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_LULLSCSI0001
# The gaps between reads, in seconds: four longer than the timeout by
# more than hd-idle's and lulld's poll (1 s) and second rounding can
# blur, the others shorter than it by as much.
gaps="2 12 3 15 1 10 4 20 2"

. /bin/lib.sh

# status_of CONFIG STEP [ARG...]: lulld's status for CONFIG (with ARGs:
# `--format json`), as `@@ STEP` lines and its exit code as `@@ STEP-exit`.
status_of() {
  config=$1 step=$2
  shift 2
  lulld status --config "$config" "$@" > /tmp/"$step".txt 2>&1
  say "$step-exit $?"
  sed "s/^/@@ $step /" /tmp/"$step".txt
}
# stop_lulld PID STEP: stops that lulld; its exit code as `@@ STEP-exit`.
stop_lulld() {
  kill -TERM "$1"
  wait_for 20 "lulld stopped" sh -c "! kill -0 $1"
  wait "$1"
  say "$2-exit $?"
}

wait_for 30 "two disks" sh -c "[ -e $sata ] && [ -e $scsi ]"
hd=$(readlink -f $sata) && hd=${hd##*/}
ld=$(readlink -f $scsi) && ld=${ld##*/}
say "disks hd-idle $hd lulld $ld"
say "hd-idle-version $(hd-idle -h 2>&1 | head -1)"

# lulld's configuration is what the converter makes of hd-idle's options.
# Both named by their by-id links, as the docs advise: hd-idle resolves
# its link once, at its start; the converter keeps it, and lulld resolves
# it at every poll.
lulld --from-hd-idle "-i 0 -a $scsi -i 6" > /etc/lull.toml 2> /tmp/convert.err
say "convert-exit $?"
sed 's/^/@@ convert-err /' /tmp/convert.err
sed 's/^/@@ toml /' /etc/lull.toml

LULL_LOG=debug LULL_LOG_FORMAT=plain lulld --config /etc/lull.toml 2> $log &
pid=$!
say "lulld pid $pid"
wait_for 60 "lulld's disk" at_least 1 "task standby, network" $log
# The documented way to compare before switching: a dry run beside
# hd-idle, on hd-idle's own disk (its own state file).
lulld --from-hd-idle "-i 0 -a $sata -i 6" 2>/dev/null \
  | sed 's|^state_file = .*|state_file = "/var/lib/lull/dry/state.json"|' > /etc/lull-dry.toml
LULL_LOG=debug LULL_LOG_FORMAT=plain lulld --config /etc/lull-dry.toml --dry-run 2> $drylog &
drypid=$!
say "dry run pid $drypid"
wait_for 60 "the dry run's disk" at_least 1 "task standby, network" $drylog
# hd-idle daemonizes (as its init script starts it); -l writes a line at
# each spin-up it sees: how long the disk ran and how long it was stopped.
hd-idle -i 0 -a "$sata" -i 6 -l $hdlog
say "hd-idle-exit $?"
# Its parent has returned; the daemon it forked may not have begun yet.
wait_for 10 "hd-idle running" pidof hd-idle
hpid=$(pidof hd-idle)
say "hd-idle pid $hpid"

# The reads, each on both disks at once; the uptime of each is printed.
touch_both() {
  touch_disk /dev/$hd "$1" &
  t=$!
  touch_disk /dev/$ld "$1"
  wait $t
  say "touch $(uptime_s)"
}
n=1
touch_both $n
for g in $gaps; do
  if [ "$g" = 12 ]; then
    # Inside the first long gap, after lulld's spin-down: what `lull
    # status` reads from the state file (no metrics) must be that standby.
    sleep 9
    status_of /etc/lull.toml mid-status-json --format json
    g=3
  fi
  sleep "$g"
  n=$((n + 1))
  touch_both $n
done
# From the last read on, a read of both disks every 2 s (not counted as
# touches) until both daemons are stopped: a guest slow to take the
# statuses below left lulld a quiet tail longer than its 6 s timeout, and
# a fifth spin-down that hd-idle's log (a line per spin-up) never shows.
( while :; do touch_disk /dev/$hd 1; touch_disk /dev/$ld 1; sleep 2; done ) &
busy=$!
# The last read's spin-ups seen by both (hd-idle writes its log line a
# poll after it; lulld logs "busy again" at its next poll).
sleep 3
wait_for 20 "lulld's four spin-ups" at_least 4 "busy again after" $log
wait_for 20 "hd-idle's four log lines" at_least 4 "stopped:" $hdlog
sleep 2 # the state file is at most state_interval behind
status_of /etc/lull.toml status
status_of /etc/lull.toml status-json --format json
status_of /etc/lull-dry.toml dry-status-json --format json
stop_lulld $pid lulld
stop_lulld $drypid dry-run
kill -TERM $hpid
wait_for 10 "hd-idle stopped" sh -c "! pidof hd-idle"
kill $busy
wait $busy 2>/dev/null
sed 's/^/@@ hd-idle /' $hdlog
sed 's/^/@@ log /' $log
sed 's/^/@@ drylog /' $drylog
grep -E " ($hd|$ld) " /proc/diskstats | sed 's/^/@@ diskstats /'

# Then an hd-idle started after lulld, on a disk that keeps its stopped
# state: scsi_debug's (QEMU's disks forget a STOP UNIT at once, and answer
# every power check "active"). lulld watches it with a timeout it never
# reaches, and asks its power state every second (REQUEST SENSE, which a
# stopped disk answers NOT READY, INITIALIZING COMMAND REQUIRED); hd-idle,
# started after it, stops the disk after 3 s. lulld must find the disk in
# standby and name hd-idle, which its start could not. The disk takes no
# read after the stop: scsi_debug's stays stopped until a START UNIT,
# which the kernel sends only when it rescans it.
insmod /modules/extra/scsi_debug.ko dev_size_mb=16 inq_vendor=LULL inq_product=STOPPABLE
say "scsi-debug-insmod $?"
wait_for 30 "the stoppable disk" sh -c "grep -l STOPPABLE /sys/block/sd*/device/model"
sd=$(grep -l STOPPABLE /sys/block/sd*/device/model | head -1)
sd=${sd#/sys/block/} && sd=${sd%%/*}
say "asleep-disk $sd"
alog=/tmp/lulld-asleep.log
mkdir -p /var/lib/lull/asleep
# A preset: the kernel takes scsi_debug's disk for a solid-state one, which
# lull would otherwise leave alone.
cat > /etc/lull-asleep.toml <<TOML
state_file = "/var/lib/lull/asleep/state.json"
poll = "1s"
power_check = "1s"
[[disk]]
device = "$sd"
network = "timer(1h)"
preset = "wd-red-plus"
TOML
LULL_LOG=debug LULL_LOG_FORMAT=plain lulld --config /etc/lull-asleep.toml 2> $alog &
apid=$!
wait_for 60 "lulld's transport on $sd" at_least 1 ": transport " $alog
hd-idle -i 0 -a $sd -i 3
say "asleep-hd-idle-exit $?"
wait_for 10 "hd-idle on $sd" pidof hd-idle
hpid=$(pidof hd-idle)
say "asleep-hd-idle pid $hpid"
wait_for 60 "lulld finding $sd asleep" at_least 1 "found in standby" $alog
sleep 2 # the state file is at most state_interval behind; a second check
status_of /etc/lull-asleep.toml asleep-status
stop_lulld $apid asleep-lulld
# A restart while the disk sleeps: the new run reads from the state file
# that the disk was in standby when the last one stopped, and says so.
rlog=/tmp/lulld-restarted.log
LULL_LOG=debug LULL_LOG_FORMAT=plain lulld --config /etc/lull-asleep.toml 2> $rlog &
apid=$!
wait_for 60 "the restarted lulld's power check" at_least 1 "in standby" $rlog
sleep 2 # urgent writes of the state file come at most once a second
status_of /etc/lull-asleep.toml restarted-status
kill -TERM $hpid
stop_lulld $apid restarted-lulld
wait_for 10 "hd-idle stopped" sh -c "! pidof hd-idle"

# Both spinning the same disk down, hd-idle first: lulld with no power
# checks and `timer(6s)`, hd-idle with `-i 3`, started before lulld this
# time (both services enabled): lulld's start warns of it, and its standby
# finds the disk asleep already (its transport asks first) and names
# hd-idle without warning of it again. A rescan has the kernel start the
# disk again (sd sends START UNIT to a disk that answers NOT READY,
# INITIALIZING COMMAND REQUIRED).
echo 1 > /sys/block/$sd/device/rescan
say "rescan $?"
clog=/tmp/lulld-compete.log
mkdir -p /var/lib/lull/compete
sed -e 's|/asleep/|/compete/|' -e 's|power_check = "1s"|power_check = "0s"|' \
  -e 's|timer(1h)|timer(6s)|' /etc/lull-asleep.toml > /etc/lull-compete.toml
sed 's/^/@@ compete-toml /' /etc/lull-compete.toml
hd-idle -i 0 -a $sd -i 3
wait_for 10 "hd-idle on $sd again" pidof hd-idle
hpid=$(pidof hd-idle)
say "compete-hd-idle pid $hpid"
LULL_LOG=debug LULL_LOG_FORMAT=plain lulld --config /etc/lull-compete.toml 2> $clog &
apid=$!
wait_for 60 "lulld's disk" at_least 1 "task standby, network" $clog
wait_for 60 "lulld's standby finding $sd asleep" at_least 1 "already in standby" $clog
sleep 2 # urgent writes of the state file come at most once a second
status_of /etc/lull-compete.toml compete-status
kill -TERM $hpid
stop_lulld $apid compete-lulld
sed 's/^/@@ asleep-log /' $alog
sed 's/^/@@ restarted-log /' $rlog
sed 's/^/@@ compete-log /' $clog
