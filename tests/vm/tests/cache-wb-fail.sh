# A cache that fails with dirty data in it (its writes start failing,
# dm-flakey; reads still work): the metadata write a flush needs fails,
# so that flush, and every later one, reports an error (the dirty data's
# durability can no longer be promised); the state is fail; the dirty
# data still reads back right from the cache (the origin never had it);
# a write over dirty data is refused rather than left to be overwritten
# by it later; writes and reads elsewhere go to the origin.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
csz=$(sectors $CACHE_DEV)
osz=$((448 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=32 oflag=direct status=none
dmsetup create cdev --table "0 $csz linear $CACHE_DEV 0"
dmsetup create dmb --table "0 $osz bcache /dev/mapper/cdev $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
write_data /dev/mapper/dmb 8 16
[ "$(status_field dmb 4)" -ge $((16 * 2048)) ] || fail "dirty $(status_field dmb 4) after writing"

dmsetup suspend cdev
dmsetup reload cdev --table "0 $csz flakey $CACHE_DEV 0 0 3600 1 error_writes"
dmsetup resume cdev
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=40 seek=100 count=1 oflag=direct conv=fsync status=none 2>/dev/null &&
	fail "fsync succeeded on a failed cache holding dirty data"
expect_eq "state" "$(status_field dmb 13)" fail
expect_eq "needs_check" "$(status_field dmb 14)" needs_check
sync; echo 3 >/proc/sys/vm/drop_caches
dd if=/dev/mapper/dmb of=/dev/null bs=4k count=1 iflag=direct status=none
dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k count=1 oflag=direct conv=fsync status=none 2>/dev/null &&
	fail "a later fsync succeeded"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
	fail "dirty data reads back wrong from the failed cache"
dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k skip=5 seek=$((10 * 256)) count=1 oflag=direct status=none 2>/dev/null &&
	fail "a write over dirty data was accepted by the failed cache"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
	fail "dirty data changed by a refused write"
# Elsewhere, the origin serves.
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=50 seek=200 count=2 oflag=direct status=none ||
	fail "a write away from dirty data failed"
same_direct /dev/mapper/dmb $((200 * 2048)) $DATA_DEV $((50 * 2048)) $((2 * 2048)) ||
	fail "data written to the origin reads back wrong"
same_data $ORIGIN_DEV $((200 * 2048)) $DATA_DEV $((50 * 2048)) $((2 * 2048)) ||
	fail "the origin lacks the write made after the failure"
dmsetup remove dmb
dmsetup remove cdev
exit 0
