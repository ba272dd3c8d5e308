# A cache that fails with dirty data in it (its writes start failing,
# dm-flakey; reads still work): the metadata write a flush needs fails,
# so that flush, and every later one, reports an error (the dirty data's
# durability can no longer be promised); the state is fail; the dirty
# data still reads back right from the cache (the origin never had it);
# a write over dirty data is refused rather than left to be overwritten
# by it later; writes and reads elsewhere go to the origin.
# Then the cache device works again and the table goes: its removal
# records needs_check in the cache superblock (the failed device refused
# that write at the failure), bcache_check notes it, the next table is
# refused until bcache_check --clear-needs-check-flag clears it (a
# read-only table is not: it serves the data and writes nothing), and
# then serves the dirty data, and the writes made during the failure.
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

log "the cache device works again; the table goes"
dmsetup suspend cdev
dmsetup reload cdev --table "0 $csz linear $CACHE_DEV 0"
dmsetup resume cdev
klog_mark
dmsetup remove dmb
klog_has "needs_check recorded in the cache superblock" ||
	fail "the removal did not record needs_check: $(klog_since | tail -n 3)"
bcache_check /dev/mapper/cdev >/tmp/nc.out ||
	{ cat /tmp/nc.out; fail "bcache_check found damage after the failure"; }
grep -q "note: superblock: needs_check set" /tmp/nc.out ||
	{ cat /tmp/nc.out; fail "bcache_check does not report needs_check"; }
table="0 $osz bcache /dev/mapper/cdev $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
klog_mark
dmsetup create dmb --table "$table" 2>/dev/null &&
	fail "a cache marked needs_check was accepted"
klog_has "Cache needs checking" || fail "no precise error for needs_check: $(last_dm_error)"
dmsetup remove dmb 2>/dev/null || true
log "read-only, the cache that needs checking serves its data and is not written"
dd if=/dev/mapper/cdev of=/tmp/cache.before bs=1M iflag=direct status=none
dmsetup create --readonly dmb --table "$table" ||
	fail "a read-only table over needs_check refused: $(last_dm_error)"
expect_eq "state, read-only" "$(status_field dmb 13)" ro
expect_eq "needs_check, read-only" "$(status_field dmb 14)" needs_check
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
	fail "dirty data reads back wrong through a read-only table"
same_direct /dev/mapper/dmb $((200 * 2048)) $DATA_DEV $((50 * 2048)) $((2 * 2048)) ||
	fail "the write made during the failure reads back wrong read-only"
dmsetup remove dmb
dd if=/dev/mapper/cdev bs=1M iflag=direct status=none | cmp -s - /tmp/cache.before ||
	fail "the read-only table wrote to the cache"
rm -f /tmp/cache.before
bcache_check --clear-needs-check-flag /dev/mapper/cdev >/tmp/nc.out ||
	{ cat /tmp/nc.out; fail "bcache_check --clear-needs-check-flag failed"; }
grep -q "needs_check cleared" /tmp/nc.out || fail "needs_check not cleared: $(cat /tmp/nc.out)"
dmsetup create dmb --table "$table"
expect_eq "state after the check" "$(status_field dmb 13)" rw
expect_eq "needs_check after the check" "$(status_field dmb 14)" -
[ "$(status_field dmb 4)" -ge $((16 * 2048)) ] || fail "dirty $(status_field dmb 4) after the check"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
	fail "dirty data reads back wrong after the check"
same_direct /dev/mapper/dmb $((200 * 2048)) $DATA_DEV $((50 * 2048)) $((2 * 2048)) ||
	fail "the write made during the failure reads back wrong"
dmsetup remove dmb
dmsetup remove cdev
exit 0
