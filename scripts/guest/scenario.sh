#!/bin/sh
# The guest's scenario (scripts/guest-test.sh; checked by
# crates/live/tests/guest.rs). Everything the test reads is a console line
# starting with `@@ `: `@@ <step> <what>`. lulld runs on the three disks
# with backend "auto", a 4 s timer and hooks; the scenario waits for what
# it expects in lulld's log (each wait bounded, a miss printed as
# `@@ missed <what>`) and goes on, so that the test sees everything.
limit=${1:-420}
log=/tmp/lulld.log
hooks=/tmp/hooks.log
sata=/dev/disk/by-id/ata-LULL_SATA_DISK_LULLSATA0001
scsi=/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_LULLSCSI0001
usb=/dev/disk/by-id/usb-QEMU_QEMU_HARDDISK_LULLUSB0001-0:0

. /bin/lib.sh

ip link set lo up
wait_for 30 "three disks" sh -c "[ -e $sata ] && [ -e $scsi ] && [ -e $usb ]"
# A fourth, on USB, whose bridge names no serial number (QEMU's
# usb-storage without serial=: no VPD page 80h, no ATA pass-through; the
# USB device's own serial string is QEMU's, from the port).
wait_for 30 "a USB disk without a serial number" sh -c "ls /dev/disk/by-id/usb-QEMU_QEMU_HARDDISK_1-*"
noserial=$(ls /dev/disk/by-id/usb-QEMU_QEMU_HARDDISK_1-* | head -1)
# And an NVMe drive: SG_IO does not reach it; sysfs names it.
wait_for 30 "an NVMe drive" sh -c "[ -e /sys/block/nvme0n1 ]"
say "nvme-wwid $(cat /sys/block/nvme0n1/wwid 2>/dev/null)"
for l in /dev/disk/by-id/*; do
  k=$(readlink "$l")
  say "byid ${l##*/} ${k##*/} $(cat /sys/block/${k##*/}/queue/rotational 2>/dev/null) $(readlink -f /sys/block/${k##*/}/device | sed 's,.*/devices/,,')"
done
# What hdparm says, for comparison (the docs' table).
for d in $sata $scsi $usb; do
  say "hdparm-C ${d##*/} $(hdparm -C "$d" 2>&1 | tr '\n' ' ')"
done
for d in $sata $scsi $usb; do
  say "hdparm-y ${d##*/} $(hdparm -y "$d" 2>&1 | tr '\n' ' ')"
done
say "hdparm-I-model $(hdparm -I $sata 2>&1 | grep -E 'Model Number|Serial Number|Rotation' | tr -s ' \n' '  ')"

cat > /etc/lull.toml <<TOML
state_file = "/var/lib/lull/state.json"
poll = "1s"
power_check = "3s"
state_interval = "1s"
hook_timeout = "5s"
on_spindown = ["/bin/sh", "-c", "echo spindown \$LULL_DISK >> $hooks"]
on_wake = ["/bin/sh", "-c", "echo wake \$LULL_DISK >> $hooks"]

[metrics]
listen = "127.0.0.1:9733"
TOML
for d in $sata $scsi $usb; do
  cat >> /etc/lull.toml <<TOML

[[disk]]
device = "$d"
network = "timer(4s)"
task = "standby"
backend = "auto"
max_spindowns_per_day = 1000
TOML
done
lulld --config /etc/lull.toml --check > /tmp/check.txt 2>&1
say "check-exit $?"
sed 's/^/@@ check /' /tmp/check.txt
# The fourth disk and the NVMe drive, checked alone: lulld names them
# from sysfs, and leaves the NVMe drive alone (flash, and nothing to send
# a standby through).
cat > /etc/lull-noserial.toml <<TOML
state_file = "/var/lib/lull/noserial.json"

[[disk]]
device = "$noserial"
task = "standby"

[[disk]]
device = "nvme0n1"
task = "standby"
TOML
lulld --config /etc/lull-noserial.toml --check > /tmp/check-noserial.txt 2>&1
say "noserial-check-exit $?"
sed 's/^/@@ noserial-check /' /tmp/check-noserial.txt
say "noserial ${noserial##*/}"

LULL_LOG=debug LULL_LOG_FORMAT=plain lulld --config /etc/lull.toml 2> $log &
pid=$!
say "lulld pid $pid"

# 1. Probed, then idle: each disk spun down after its timeout; hooks ran.
wait_for 60 "three transports" at_least 3 ": transport " $log
wait_for 60 "three spin-downs" at_least 3 ": in standby (" $log
wait_for 20 "three spindown hooks" at_least 3 "^spindown" $hooks
say "diskstats-before $(grep -E ' sd[a-z] ' /proc/diskstats | awk '{print $3, $4, $8}' | tr '\n' ';')"
# 2. I/O on each: a wake counted, its hook run; then idle again.
n=0
for d in $sata $scsi $usb; do touch_disk $d 7; n=$((n + 1)); done
wait_for 30 "three wake hooks" at_least 3 "^wake" $hooks
wait_for 60 "six spin-downs" at_least 6 ": in standby (" $log
sleep 2 # the state file is at most state_interval (1 s) behind
lulld status --config /etc/lull.toml > /tmp/status.txt 2>&1
say "status-exit $?"
sed 's/^/@@ status /' /tmp/status.txt
# 3. Unplug the SCSI and USB disks right after I/O (the host does it
# through QMP): their timers run out while they are away, and no standby
# may be sent to a disk that is not there.
for d in $scsi $usb; do touch_disk $d 9; done
wait_for 20 "five wakes" at_least 5 ": busy again after " $log
say "unplug"
wait_for 60 "scsi and usb gone" sh -c "[ ! -e $scsi ] && [ ! -e $usb ]"
sleep 8
touch_disk $sata 9
say "replug"
wait_for 60 "scsi and usb back" sh -c "[ -e $scsi ] && [ -e $usb ]"
for l in $scsi $usb; do say "byid-again ${l##*/} $(readlink $l)"; done
wait_for 30 "five transports" at_least 5 ": transport " $log
sleep 2
for d in $scsi $usb; do touch_disk $d 11; done
wait_for 90 "nine spin-downs" at_least 9 ": in standby (" $log
lulld status --config /etc/lull.toml --format json > /tmp/status.json 2>&1
say "status-json-exit $?"
sed 's/^/@@ status-json /' /tmp/status.json
kill -TERM $pid
wait_for 20 "lulld stopped" sh -c "! kill -0 $pid"
wait $pid
say "lulld-exit $?"
sed 's/^/@@ hooks /' $hooks
sed 's/^/@@ log /' $log
sed 's/^/@@ state /' /var/lib/lull/state.json
# Each activity log segment's first 4 KiB (its session record), in hex:
# the host reads the drive each names.
for f in /var/lib/lull/activity/*/*.lact; do
  echo "@@ lact $(head -c 4096 "$f" | od -An -tx1 -v | tr -d ' \n')"
done
grep -E ' sd[a-z] ' /proc/diskstats | sed 's/^/@@ diskstats /'
dmesg | sed 's/^/@@ dmesg /'
