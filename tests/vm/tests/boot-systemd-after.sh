# The third boot of the systemd boot test (see boot-systemd-prep): the
# second boot's shutdown stopped dm-bcache.service, whose bcache_tab stop
# flushed the entry (flush_on_stop) before removing it, so the origin on
# its own now holds the file the first boot left dirty and the file the
# second boot wrote, and the cache holds nothing dirty.
. /tests/lib.sh
load_module
modprobe ext4
ROOT_DEV=/dev/vde
mkdir -p /mnt/root /mnt/o
mount -t ext4 -o ro $ROOT_DEV /mnt/root || fail "mount the root file system"
. /mnt/root/etc/dmb-boot.env
after=$(cat /mnt/root/var/dmb-after.sum 2>/dev/null) || fail "the second boot left no second file"
umount /mnt/root

log "the origin alone holds both files"
mount -t ext4 -o ro,noload $ORIGIN_DEV /mnt/o || fail "the origin holds no file system"
expect_eq "the first boot's file on the origin" "$(sha256sum </mnt/o/file)" "$SUM"
expect_eq "the second boot's file on the origin" "$(sha256sum </mnt/o/after)" "$after"
umount /mnt/o

log "the cache is clean"
bcache_check -q $CACHE_DEV || fail "bcache_check after the shutdown"
dmsetup create data --table "0 $(sectors $ORIGIN_DEV) bcache $CACHE_DEV $ORIGIN_DEV 0"
expect_eq "dirty after the shutdown" "$(status_field data 4)" 0
dmsetup remove data
