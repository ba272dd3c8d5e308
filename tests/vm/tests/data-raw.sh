# A raw origin: 64 MiB of random data written through the target equals
# the origin's bytes at the same offset, and data written to the origin
# reads back through the target.
. /tests/lib.sh
load_module
wipe_head $ORIGIN_DEV
len=$((448 * 2048))

dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
dmsetup message dmb 0 clear_stats
write_data /dev/mapper/dmb 7 64
same_data /dev/mapper/dmb $((7 * 2048)) $DATA_DEV 0 $((64 * 2048)) ||
	fail "data read back through the target differs"
dmsetup remove dmb
same_data $ORIGIN_DEV $((7 * 2048)) $DATA_DEV 0 $((64 * 2048)) ||
	fail "origin bytes at the same offset differ"

# The other way: write the origin directly, read through the target, in
# passthrough mode this time.
dd if=$DATA_DEV of=$ORIGIN_DEV bs=1M skip=8 seek=100 count=16 oflag=direct status=none
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 1 passthrough"
same_data /dev/mapper/dmb $((100 * 2048)) $DATA_DEV $((8 * 2048)) $((16 * 2048)) ||
	fail "origin data read through the target differs"
[ "$(status_field dmb 9)" -gt 0 ] || fail "no bypassed reads counted"
dmsetup remove dmb

# Once the cache is formatted, I/O never rewrites its superblock.
before=$(sum_sectors $CACHE_DEV 0 16)
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
write_data /dev/mapper/dmb 0 4
dmsetup remove dmb
expect_eq "cache superblock untouched" "$(sum_sectors $CACHE_DEV 0 16)" "$before"
exit 0
