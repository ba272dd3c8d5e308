#!/bin/bash
# The second boot of the systemd boot test, run by dmb-boot-check.service
# in a real systemd system (tests/vm/mkrootfs.sh) on the disks
# boot-systemd-prep left: a cache whose set holds dirty blocks of an ext4
# file system on a raw origin, /etc/bcachetab naming them, and an fstab
# line mounting the file system by UUID.  The origin carries the same
# UUID, stale.  dm-bcache.service and the udev rules must have brought
# the cache up, and the mount by UUID must have got the cached device:
# the file written before the first boot ended is there, whole.  A second
# file is written for boot-systemd-after, which checks that shutdown
# flushed both to the origin.  Prints the result line the host reads.
name=boot-systemd
echo "@@BEGIN $name"
. /usr/share/dmb-kernel-bad.sh
. /etc/dmb-boot.env	# NAME, FSUUID, SUM
finish() {
	echo "@@RESULT $name $*"
	echo "@@DONE"
	systemctl --no-block poweroff
	exit 0
}
fail() { echo "FAILED: $*"; finish FAIL "$*"; }
mm() { stat -L -c '%t:%T' "$1"; }
log() { echo "-- $*"; }

systemctl is-active dm-bcache.service >/dev/null ||
	fail "dm-bcache.service is $(systemctl is-active dm-bcache.service): $(journalctl -b -u dm-bcache.service --no-pager | tail -n 20)"
dmsetup status "$NAME" >/tmp/status || fail "$NAME is not active"
log "status: $(cat /tmp/status)"
set -- $(cat /tmp/status)
[ "${15}" = writeback ] || fail "$NAME is in ${15}, not writeback"
[ "$7" -gt 0 ] || fail "no dirty data: the first boot's writes were not kept"

log "the mount by UUID got the cached device"
src=$(findmnt -n -o SOURCE /mnt/cached) || fail "/mnt/cached is not mounted: $(systemctl status mnt-cached.mount --no-pager 2>&1 | tail -n 20)"
log "/mnt/cached from $src"
[ "$(mm "$src")" = "$(mm /dev/mapper/"$NAME")" ] || fail "/mnt/cached is $src, not /dev/mapper/$NAME"
link=$(readlink -f /dev/disk/by-uuid/"$FSUUID")
[ "$(mm "$link")" = "$(mm /dev/mapper/"$NAME")" ] || fail "/dev/disk/by-uuid/$FSUUID is $link"
udevadm info --query=property /dev/vdb | grep -x 'SYSTEMD_READY=0' >/dev/null ||
	fail "the origin is ready for systemd: $(udevadm info --query=property /dev/vdb)"
# systemd's view: the origin is no device unit, the UUID's is the
# cached device.
sub=$(systemctl show -P SubState dev-vdb.device) || fail "systemctl show dev-vdb.device"
[ "$sub" = dead ] || fail "systemd has the origin as a device unit ($sub)"
unit=$(systemd-escape --path --suffix=device /dev/disk/by-uuid/"$FSUUID")
sys=$(systemctl show -P SysFSPath "$unit") || fail "systemctl show $unit"
[ "$sys" = "$(readlink -f /sys/class/block/"$(basename "$(readlink -f /dev/mapper/"$NAME")")")" ] ||
	fail "$unit is $sys, not the cached device"
[ "$(sha256sum </mnt/cached/file)" = "$SUM" ] || fail "/mnt/cached/file differs from what was written"

log "a second file, for the shutdown's flush"
dd if=/dev/urandom of=/mnt/cached/after bs=1M count=4 conv=fsync status=none
sha256sum </mnt/cached/after >/var/dmb-after.sum
sync

if bad=$(dmesg | grep -E "$KERNEL_BAD"); then
	dmesg | grep -E -B 5 -A 30 -m 1 "$KERNEL_BAD" | sed 's/^/  dmesg: /'
	fail "kernel warning: $(head -n 1 <<<"$bad")"
fi
finish PASS
