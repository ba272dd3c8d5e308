# A write-through write over dirty data whose origin write fails: the
# write fails, and the dirty data it was to replace stays, indexed and
# dirty, as the last acknowledged contents of the range (the index must
# not roll the range back to the origin's older data).  Once the origin
# works again, a flush leaves exactly the dirty data on it.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
osz=$((448 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=32 oflag=direct status=none
dmsetup create orig --table "0 $osz linear $ORIGIN_DEV 0"
dmsetup create dmb --table "0 $osz bcache $CACHE_DEV /dev/mapper/orig 9 writeback $NOBYPASS writeback_delay 3600"
write_dirty /dev/mapper/dmb 8 4
dirty0=$(status_field dmb 4)

log "write-through over dirty data, the origin failing writes"
# The origin fails first: in writethrough, write-back would otherwise
# copy the dirty data at once (its copies now fail, the data stays).
dmsetup suspend orig
dmsetup reload orig --table "0 $osz flakey $ORIGIN_DEV 0 0 3600 1 error_writes"
dmsetup resume orig
dmsetup message dmb 0 cache_mode writethrough
[ "$(status_field dmb 4)" -ge "$dirty0" ] || fail "dirty data written back before the test: $(status_field dmb 4) < $dirty0"
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=20 seek=8 count=1 oflag=direct status=none 2>/dev/null &&
	fail "a write-through write succeeded though the origin failed it"
expect_eq "state after the failed write" "$(status_field dmb 13)" rw
[ "$(status_field dmb 4)" -ge "$dirty0" ] || fail "dirty data dropped: $(status_field dmb 4) < $dirty0"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "the range reads back older than its dirty data after a failed write-through write"

dmsetup suspend orig
dmsetup reload orig --table "0 $osz linear $ORIGIN_DEV 0"
dmsetup resume orig
dmsetup message dmb 0 flush || fail "flush after the origin recovered"
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
same_data $ORIGIN_DEV $((8 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "the origin lacks the dirty data after the flush"
dmsetup remove dmb
dmsetup remove orig
bcache_check -q $CACHE_DEV || fail "bcache_check after the errors"
exit 0
