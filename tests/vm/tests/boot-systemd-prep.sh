# The first boot of the systemd boot test (tests/run-all.sh runs the three
# boots in order; the second is tests/vm/systemd/boot-check.sh in a real
# systemd system, the third boot-systemd-after).  Here: a cache set in
# front of the raw origin, an ext4 file system made through it in
# writethrough (so the origin carries it too, same UUID), then a file
# written in writeback that stays dirty in the cache; the table is removed
# without a flush, so the origin holds the file system without the file.
# The root file system of the second boot (vde) gets /etc/bcachetab for
# the pair and an fstab line mounting the file system by UUID.
. /tests/lib.sh
load_module
modprobe ext4
ROOT_DEV=/dev/vde
[ -b $ROOT_DEV ] || fail "no root file system disk $ROOT_DEV"
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
bcache_format -q -b 256k -C $CACHE_DEV || fail "bcache_format"
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
fsuuid=$(cat /proc/sys/kernel/random/uuid)
cat >/etc/bcachetab <<EOT
data  UUID=$cset  $ORIGIN_DEV  writeback,flush_on_stop,writeback_delay=3600,sequential_cutoff=0,congested_read_threshold_us=0,congested_write_threshold_us=0
EOT

log "the file system, made in writethrough: on the origin too"
dmsetup create data --table "0 $(sectors $ORIGIN_DEV) bcache $CACHE_DEV $ORIGIN_DEV 0"
mkfs.ext4 -q -U "$fsuuid" -E lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/data || fail "mkfs.ext4"
dmsetup remove data

log "a file written in writeback stays dirty"
bcache_tab start data || fail "bcache_tab start"
expect_eq "mode" "$(status_field data 12)" writeback
mkdir -p /mnt/c
mount -t ext4 /dev/mapper/data /mnt/c || fail "mount"
# A fresh set has no bucket ready until its first refill: writes bypass
# (bypass_nospace) until then, so write again until they are cached.
# Direct 1 MiB writes on 256 KiB buckets: a write needing more than
# DMB_MAX_PIECES pieces bypasses (docs/dm-bcache.rst, Limitations).
for i in 1 2 3 4 5; do
	dd if=$DATA_DEV of=/mnt/c/file bs=1M count=8 oflag=direct conv=fsync status=none
	[ "$(status_field data 4)" -ge $((8 * 2048)) ] && break
	sleep 1
done
sum=$(sha256sum </mnt/c/file)
umount /mnt/c
[ "$(status_field data 4)" -ge $((8 * 2048)) ] || fail "dirty $(status_field data 4) after writing"
dmsetup remove data

log "the origin alone: the same UUID, not the file"
mount -t ext4 -o ro,noload $ORIGIN_DEV /mnt/c || fail "the origin holds no file system"
[ -e /mnt/c/file ] && [ "$(sha256sum </mnt/c/file)" = "$sum" ] &&
	fail "the origin already holds the file: nothing would tell the two apart"
umount /mnt/c

log "the second boot's configuration"
mkdir -p /mnt/root
mount -t ext4 $ROOT_DEV /mnt/root || fail "mount the root file system"
cp /etc/bcachetab /mnt/root/etc/bcachetab
echo "UUID=$fsuuid /mnt/cached ext4 defaults 0 0" >>/mnt/root/etc/fstab
printf 'NAME=data\nFSUUID=%s\nSUM="%s"\n' "$fsuuid" "$sum" >/mnt/root/etc/dmb-boot.env
umount /mnt/root
rm -f /etc/bcachetab
