#!/usr/bin/env bash
# Runs lulld inside a Linux guest (QEMU) on emulated SATA, SCSI and USB
# disks, so that its transports, drive identification and replug handling
# go through the kernel's own libata, SCSI and USB mass-storage code
# (issue 28). One command:
#
#   scripts/guest-test.sh                 # builds lulld (debug), boots, reports
#   LULLD=target/release/lulld scripts/guest-test.sh --out /tmp/guest
#   scripts/guest-test.sh --scenario hd-idle   # Debian's hd-idle beside lulld
#
# What it does:
# - the guest kernel: Debian's `linux-image-amd64` (its vmlinuz and
#   modules), fetched with `apt-get download` into $LULL_GUEST_CACHE
#   (default /var/tmp/lull-guest) once and unpacked there, not installed;
# - an initramfs: busybox, lulld and hdparm with the shared libraries they
#   link, the modules for AHCI, SCSI disks, virtio-scsi, xHCI and USB
#   mass storage, and scripts/guest/ (the guest's init, its scenario and
#   the by-id naming);
# - four disk images of its own (never a disk of this machine):
#     SATA: ide-hd on an AHCI controller  (libata's SAT translation)
#     SCSI: scsi-hd on virtio-scsi        (the SCSI disk driver alone)
#     USB:  usb-storage on xHCI           (the path of USB enclosures)
#   each with a serial, so the guest has /dev/disk/by-id/ links, and a
#   second USB disk without one (a bridge that names no drive) and an
#   NVMe drive (which SG_IO does not reach), which `lulld --check` names
#   from sysfs and leaves alone as flash;
# - QEMU with TCG (KVM hangs on these machines under nested
#   virtualization; LULL_GUEST_ACCEL=kvm to try it), its serial console
#   in OUT/console.log and its QMP monitor on two FIFOs, through which the
#   script unplugs the SCSI and USB disks and plugs them back when the
#   guest asks (the console lines `@@ unplug` / `@@ replug`).
#
# The guest prints what it saw as `@@ ` lines; crates/live/tests/guest.rs
# runs this script and checks them. Two scenarios (`--scenario NAME`, the
# script scripts/guest/NAME.sh):
#   scenario  (the default) the transports, identification and hotplug;
#   hd-idle   Debian's hd-idle (1.05, from this machine's package, with
#             the C library it links) on the SATA disk beside lulld on
#             the SCSI disk, the same reads on both: lulld configured by
#             `lulld --from-hd-idle` from hd-idle's options; then an
#             hd-idle started after lulld, on the kernel's scsi_debug
#             disk (which keeps a stopped state), that lulld finds,
#             across a restart of lulld too; and one started before
#             lulld, warned of at the start, found at lulld's standby.
#
# Exit codes: 0 the guest ran the scenario to its end; 1 it did not (the
# console log says where it stopped); 77 something needed is missing
# (printed as `guest-test: skip: WHY`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"

out=""
keep=0
scenario=scenario
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --scenario) scenario="$2"; shift 2 ;;
    -h|--help) sed -n '2,48p' "$0"; exit 0 ;;
    *) echo "guest-test: unknown argument $1 (--out DIR, --keep, --scenario NAME)" >&2; exit 2 ;;
  esac
done
[[ "$scenario" =~ ^[a-z-]+$ && "$scenario" != lib && "$scenario" != by-id && -f "$here/guest/$scenario.sh" ]] \
  || { echo "guest-test: no scenario $scenario (scripts/guest/*.sh: scenario, hd-idle)" >&2; exit 2; }

skip() { echo "guest-test: skip: $*"; exit 77; }
say() { echo "guest-test: $*"; }

cache="${LULL_GUEST_CACHE:-/var/tmp/lull-guest}"
timeout_s="${LULL_GUEST_TIMEOUT:-420}"
accel="${LULL_GUEST_ACCEL:-tcg}"

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
busybox="$(command -v busybox || true)"
[[ -n "$busybox" ]] || skip "busybox is not installed (apt-get install busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && skip "busybox is not statically linked (apt-get install busybox-static)"
command -v depmod >/dev/null && command -v modprobe >/dev/null \
  || skip "depmod/modprobe are not installed (apt-get install kmod)"
hdparm="$(command -v hdparm || true)"
[[ -n "$hdparm" ]] || skip "hdparm is not installed (apt-get install hdparm)"
hd_idle=""
if [[ "$scenario" == hd-idle ]]; then
  hd_idle="$(command -v hd-idle || true)"
  [[ -n "$hd_idle" ]] || skip "hd-idle is not installed (apt-get install hd-idle)"
fi

# --- the guest kernel -------------------------------------------------------
mkdir -p "$cache"
kroot="$cache/kernel"
if ! compgen -G "$kroot/boot/vmlinuz-*" >/dev/null; then
  kpkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}'; }
  pkg="$(kpkg)"
  if [[ -z "$pkg" && "$(id -u)" == 0 ]]; then
    apt-get update -qq >/dev/null 2>&1 || true
    pkg="$(kpkg)"
  fi
  [[ -n "$pkg" ]] || skip "apt does not know linux-image-amd64 (apt-get update?)"
  say "fetching the guest kernel $pkg into $cache"
  (cd "$cache" && rm -f ./*.deb && apt-get download -q "$pkg" >/dev/null 2>&1) \
    || skip "cannot download $pkg (no network or no apt source)"
  rm -rf "$kroot.tmp" && mkdir -p "$kroot.tmp"
  dpkg-deb -x "$cache"/linux-image-*.deb "$kroot.tmp"
  rm -f "$cache"/linux-image-*.deb
  rm -rf "$kroot" && mv "$kroot.tmp" "$kroot"
fi
vmlinuz="$(compgen -G "$kroot/boot/vmlinuz-*" | head -1)"
kver="$(basename "$vmlinuz" | sed 's/^vmlinuz-//')"
[[ -f "$kroot/lib/modules/$kver/modules.dep" ]] || depmod -b "$kroot" "$kver"

# --- lulld --------------------------------------------------------------------
if [[ -z "${LULLD:-}" ]]; then
  say "building lulld"
  (cd "$repo" && cargo build -q -p lull-live --bin lulld)
  LULLD="${CARGO_TARGET_DIR:-$repo/target}/debug/lulld"
fi
[[ -x "$LULLD" ]] || { echo "guest-test: $LULLD is not an executable" >&2; exit 2; }

# --- the initramfs -------------------------------------------------------------
work="$(mktemp -d -t lull-guest.XXXXXX)"
qemu_pid=""
cleanup() {
  if [[ -n "$qemu_pid" ]] && kill -0 "$qemu_pid" 2>/dev/null; then
    kill "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
  fi
  if ((keep)); then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
[[ -n "$out" ]] || out="$work/out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

root="$work/root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc,lib,lib64,var/lib/lull,modules}
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [[ -e "$root/bin/$applet" ]] || ln -s busybox "$root/bin/$applet"
done

# A program and the shared libraries it links, at the same paths.
with_libs() {
  local prog="$1" dest="$2"
  cp "$prog" "$root$dest"
  strip --strip-debug "$root$dest" 2>/dev/null || true
  ldd "$prog" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}
with_libs "$LULLD" /bin/lulld
with_libs "$hdparm" /sbin/hdparm
[[ -z "$hd_idle" ]] || with_libs "$hd_idle" /sbin/hd-idle

# Modules in load order (each one's dependencies first).
: > "$root/modules/order"
for m in ahci sd_mod sg virtio_pci virtio_scsi xhci_pci usb_storage nvme; do
  modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  cp "$ko" "$root/modules/"
  basename "$ko" >> "$root/modules/order"
done

# scsi_debug, a SCSI disk in the kernel's memory that keeps the stopped
# state a START STOP UNIT leaves it in (QEMU's disks keep none): loaded by
# the hd-idle scenario, not at boot (its dependencies are sd_mod's).
mkdir -p "$root/modules/extra"
modprobe -d "$kroot" -S "$kver" --show-depends scsi_debug \
  | awk '$1 == "insmod" && $2 ~ /scsi_debug\.ko/ {print $2}' \
  | while read -r ko; do cp "$ko" "$root/modules/extra/"; done

cp "$here/guest/init" "$root/init"
cp "$here"/guest/*.sh "$root/bin/"
chmod +x "$root/init" "$root"/bin/*.sh
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initrd.gz"

# --- the disks and the machine ----------------------------------------------------
for d in sata scsi usb usbns nvme; do truncate -s 64M "$work/$d.img"; done
mkfifo "$work/qmp.in" "$work/qmp.out"
console="$out/console.log"
: > "$console"

# The serials name the by-id links: ata-LULL_SATA_DISK_LULLSATA0001,
# scsi-0QEMU_QEMU_HARDDISK_LULLSCSI0001, usb-QEMU_QEMU_HARDDISK_LULLUSB0001-0:0.
# A fourth disk, usb1, has none: its SCSI layer answers no VPD page 80h,
# and its USB serial string is QEMU's own (`1-PCI-PORT`), as a bridge's
# that names no drive.
scsi_dev=(scsi-hd,id=scsi0,bus=scsi.0,drive=scsi,serial=LULLSCSI0001,rotation_rate=7200)
usb_dev=(usb-storage,id=usb0,bus=xhci.0,drive=usb,serial=LULLUSB0001)
qemu-system-x86_64 \
  -accel "$accel" -m 512 -smp 1 -display none -no-reboot -monitor none \
  -kernel "$vmlinuz" -initrd "$work/initrd.gz" \
  -append "console=ttyS0 quiet panic=-1 lull.timeout=$timeout_s lull.scenario=$scenario" \
  -serial "file:$console" \
  -chardev "pipe,id=qmp,path=$work/qmp" -mon chardev=qmp,mode=control \
  -blockdev "driver=raw,node-name=sata,file.driver=file,file.filename=$work/sata.img" \
  -blockdev "driver=raw,node-name=scsi,file.driver=file,file.filename=$work/scsi.img" \
  -blockdev "driver=raw,node-name=usb,file.driver=file,file.filename=$work/usb.img" \
  -blockdev "driver=raw,node-name=usbns,file.driver=file,file.filename=$work/usbns.img" \
  -blockdev "driver=raw,node-name=nvme,file.driver=file,file.filename=$work/nvme.img" \
  -device ahci,id=ahci \
  -device "ide-hd,drive=sata,bus=ahci.0,serial=LULLSATA0001,model=LULL SATA DISK,rotation_rate=7200" \
  -device virtio-scsi-pci,id=scsi \
  -device "${scsi_dev[0]}" \
  -device qemu-xhci,id=xhci \
  -device "${usb_dev[0]}" \
  -device usb-storage,id=usb1,bus=xhci.0,drive=usbns \
  -device nvme,id=nvme0,serial=LULLNVME0001,drive=nvme \
  >"$work/qemu.log" 2>&1 &
qemu_pid=$!

# QMP: one JSON command per line in, replies and events out.
exec 3>"$work/qmp.in"
exec 4<"$work/qmp.out"
# QEMU may be gone when a command is written: an error, not a SIGPIPE.
trap '' PIPE
qmp() { echo "$1" >&3 2>/dev/null || true; }
qmp '{"execute":"qmp_capabilities"}'
# QMP's answers are read (and logged) in the background.
cat <&4 > "$out/qmp.log" &
qmp_reader=$!

say "booting ($accel, scenario $scenario); console in $console"
start=$SECONDS
unplugged=0
replugged=0
device_add() { # device_add from a -device argument
  local spec="$1" driver="${1%%,*}" args=""
  IFS=, read -ra kv <<< "${spec#*,}"
  for p in "${kv[@]}"; do args+=",\"${p%%=*}\":\"${p#*=}\""; done
  qmp "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"$driver\"$args}}"
}
status=1
while kill -0 "$qemu_pid" 2>/dev/null; do
  if ((SECONDS - start > timeout_s)); then
    say "timed out after $timeout_s s"
    break
  fi
  if ((!unplugged)) && grep -q '^@@ unplug' "$console"; then
    say "unplugging the SCSI and USB disks"
    qmp '{"execute":"device_del","arguments":{"id":"scsi0"}}'
    qmp '{"execute":"device_del","arguments":{"id":"usb0"}}'
    unplugged=1
  fi
  if ((!replugged)) && grep -q '^@@ replug' "$console"; then
    # The USB disk first: it takes the lowest free name, the SCSI disk's
    # old one, so both come back under other kernel names and only their
    # by-id links say which is which.
    say "plugging them back, USB first"
    device_add "${usb_dev[0]}"
    sleep 3
    device_add "${scsi_dev[0]}"
    replugged=1
  fi
  sleep 0.5
done
if grep -q '^@@ end' "$console"; then status=0; fi
kill -0 "$qemu_pid" 2>/dev/null && qmp '{"execute":"quit"}'
exec 3>&-
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=""
kill "$qmp_reader" 2>/dev/null || true
cp "$work/qemu.log" "$out/qemu.log"
say "took $((SECONDS - start)) s; console: $console"
if ((status)); then
  say "the guest did not reach the end of its scenario; the console's last lines:"
  tail -30 "$console" | sed 's/^/  | /'
fi
exit "$status"
