# The status's dirty count (field 4) reaches 0 on its own once write-back
# has copied everything: no flush or gc message.  The count is an
# estimate that data overwritten while dirty keeps high until a gc pass
# recounts, so a write-back pass that finds the cache clean while the
# count is not 0 asks for one.  Before it did, 4 MiB written twice over
# in write-back left the count at 4 MiB for good once the copies were
# done, and lvm waiting for it to fall never finished.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
len=$((64 * 2048))

log "write-back, copying held off: 4 MiB written, then written over"
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback writeback_delay 3600 $NOBYPASS"
write_dirty /dev/mapper/dmb 0 4
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=8 seek=0 count=4 oflag=direct conv=fsync status=none
est=$(status_field dmb 4)
log "dirty count $est sectors for 4 MiB of dirty data"
# Otherwise this test would prove nothing.
[ "$est" -gt $((4 * 2048)) ] || fail "the overwritten data is not in the count ($est)"
gc=$(counter gc_runs)

log "cleaner on: the count falls to 0 with no message"
dmsetup message dmb 0 cleaner on
for i in $(seq 60); do
	[ "$(status_field dmb 4)" = 0 ] && break
	sleep 1
done
expect_eq "dirty count after the write-back" "$(status_field dmb 4)" 0
[ "$(counter gc_runs)" -gt "$gc" ] || fail "no gc pass recounted"
log "count 0 after ${i}s"
same_direct $ORIGIN_DEV 0 $DATA_DEV $((8 * 2048)) $((4 * 2048)) ||
	fail "the origin does not hold the second write"
same_direct /dev/mapper/dmb 0 $DATA_DEV $((8 * 2048)) $((4 * 2048)) ||
	fail "the target does not read the second write"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the write-back"
