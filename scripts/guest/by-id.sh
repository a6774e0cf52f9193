#!/bin/sh
# mdev's command for sd* disks in the guest: creates and removes the
# /dev/disk/by-id/ links the way udev's 60-persistent-storage rules name
# them (the guest runs no udev):
#   ata-MODEL_SERIAL             a disk behind libata (ata_id's ID_SERIAL)
#   usb-VENDOR_MODEL_SERIAL-0:0  a USB mass-storage disk (usb_id)
#   scsi-0VENDOR_MODEL_SERIAL    any other SCSI disk (scsi_id)
# MODEL and VENDOR from the SCSI INQUIRY data in sysfs (libata puts the
# ATA model there), SERIAL from VPD page 80h (libata translates it from
# IDENTIFY DEVICE) or the USB device's serial; runs of blanks become `_`.
name="$MDEV"
case "$name" in sd*[0-9]) exit 0 ;; esac
mkdir -p /dev/disk/by-id
if [ "$ACTION" = remove ]; then
  for l in /dev/disk/by-id/*; do
    [ "$(readlink "$l")" = "../../$name" ] && rm -f "$l"
  done
  echo "@@ mdev remove $name"
  exit 0
fi
dev=/sys/block/$name/device
[ -d "$dev" ] || exit 0
clean() { tr -s ' \t' '__' | sed 's/^_//; s/_$//'; }
vendor=$(cat "$dev/vendor" 2>/dev/null | clean)
model=$(cat "$dev/model" 2>/dev/null | clean)
serial=""
if [ -r "$dev/vpd_pg80" ]; then
  serial=$(dd if="$dev/vpd_pg80" bs=1 skip=4 2>/dev/null | tr -d '\000' | clean)
fi
path=$(readlink -f "$dev")
case "$path" in
  */ata[0-9]*) id="ata-${model}_${serial}" ;;
  */usb[0-9]*)
    d="$path"
    while [ "$d" != / ] && [ ! -r "$d/serial" ]; do d=$(dirname "$d"); done
    [ -r "$d/serial" ] && serial=$(cat "$d/serial" | clean)
    id="usb-${vendor}_${model}_${serial}-0:0" ;;
  *) id="scsi-0${vendor}_${model}_${serial}" ;;
esac
ln -sfn "../../$name" "/dev/disk/by-id/$id"
echo "@@ mdev add $name $id"
