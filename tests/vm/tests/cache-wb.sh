# Write-back caching: writes go to the cache only and are indexed dirty;
# reads return them from the cache while the origin still holds the old
# data; overwrites of dirty data read back right; dirty data survives a
# re-creation of the target; passthrough is refused while anything is
# dirty; the flush message writes everything back (the origin then holds
# exactly what was written, and passthrough is allowed); a switch to
# writethrough drains what is dirty by itself; the cache checks clean.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
len=$((448 * 2048))
# A long writeback_delay: nothing is copied until the test asks.
table="0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=64 oflag=direct status=none

dirty() { status_field dmb 4; }

dmsetup create dmb --table "$table"
write_data /dev/mapper/dmb 16 32
dmsetup status dmb
[ "$(dirty)" -ge $((32 * 2048)) ] || fail "dirty $(dirty) after writing 32 MiB"
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((32 * 2048)) ||
	fail "dirty data read back through the target differs"
expect_eq "read misses of dirty data" "$(status_field dmb 6)" 0
tmp=/tmp/zero.cmp
dd if=$ORIGIN_DEV bs=1M skip=16 count=32 iflag=direct status=none >$tmp
cmp -n $((32 << 20)) $tmp /dev/zero || fail "the origin changed before write-back"
rm -f $tmp

# Overwrite 4 MiB in the middle of the dirty data with other data.
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=40 seek=20 count=4 oflag=direct conv=fsync status=none
check_all() {	# what the target at MiB 16..48 must hold
	same_direct "$1" $((16 * 2048)) $DATA_DEV 0 $((4 * 2048)) &&
	same_direct "$1" $((20 * 2048)) $DATA_DEV $((40 * 2048)) $((4 * 2048)) &&
	same_direct "$1" $((24 * 2048)) $DATA_DEV $((8 * 2048)) $((24 * 2048))
}
check_all /dev/mapper/dmb || fail "overwritten dirty data reads back wrong"

dmsetup message dmb 0 cache_mode passthrough 2>/dev/null &&
	fail "passthrough accepted with dirty data"
expect_eq "mode after the refused switch" "$(status_field dmb 12)" writeback

# Dirty data survives the table: removal, check, a new table.
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check with dirty data"
dmsetup create dmb --table "$table"
[ "$(dirty)" -ge $((32 * 2048)) ] || fail "dirty $(dirty) after re-creating"
check_all /dev/mapper/dmb || fail "dirty data differs after re-creating"

# flush: everything written back, the origin then holds it all.
dmsetup message dmb 0 flush || fail "flush message failed"
dmsetup message dmb 0 gc
dmsetup status dmb
expect_eq "dirty sectors after flush" "$(dirty)" 0
[ "$(counter written_back)" -ge $((32 * 2048)) ] ||
	fail "written_back $(counter written_back) after the flush"
expect_eq "writeback errors" "$(counter writeback_errors)" 0
check_all $ORIGIN_DEV || fail "the origin lacks the data after the flush"
dmsetup message dmb 0 cache_mode passthrough || fail "passthrough refused when clean"
check_all /dev/mapper/dmb || fail "passthrough reads differ"
dmsetup message dmb 0 cache_mode writeback

# A switch to writethrough drains what is dirty without a message.
write_data /dev/mapper/dmb 100 8
[ "$(dirty)" -gt 0 ] || fail "no dirty data after writing 8 MiB"
dmsetup message dmb 0 cache_mode writethrough
for _ in $(seq 60); do
	same_data $ORIGIN_DEV $((100 * 2048)) $DATA_DEV 0 $((8 * 2048)) 2>/dev/null && break
	sleep 1
done
same_data $ORIGIN_DEV $((100 * 2048)) $DATA_DEV 0 $((8 * 2048)) ||
	fail "writethrough did not drain the dirty data"
same_direct /dev/mapper/dmb $((100 * 2048)) $DATA_DEV 0 $((8 * 2048)) ||
	fail "data read back after the drain differs"

# detach: refused while dirty, forced it drops the dirty data; after it
# the target passes through to the origin.
dmsetup message dmb 0 cache_mode writeback
write_data /dev/mapper/dmb 120 4
dmsetup message dmb 0 detach 2>/dev/null && fail "detach accepted with dirty data"
expect_eq "mode after the refused detach" "$(status_field dmb 12)" writeback
# The cleaner writes through and drains.
dmsetup message dmb 0 cleaner on
write_data /dev/mapper/dmb 130 4
for _ in $(seq 60); do same_data $ORIGIN_DEV $((120 * 2048)) $DATA_DEV 0 $((4 * 2048)) 2>/dev/null && break; sleep 1; done
same_data $ORIGIN_DEV $((120 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "the cleaner did not write back the dirty data"
same_data $ORIGIN_DEV $((130 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "a write under the cleaner did not reach the origin"
dmsetup message dmb 0 flush || fail "flush under the cleaner failed"
expect_eq "dirty under the cleaner" "$(dirty)" 0
dmsetup message dmb 0 cleaner off
dmsetup message dmb 0 detach || fail "detach of a clean cache refused"
expect_eq "mode after detach" "$(status_field dmb 12)" passthrough
same_direct /dev/mapper/dmb $((120 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "data read through the detached target differs"

# flush_on_suspend: a suspend writes everything back.
dmsetup message dmb 0 cache_mode writeback
dmsetup message dmb 0 flush_on_suspend on
write_data /dev/mapper/dmb 140 4
[ "$(dirty)" -gt 0 ] || fail "no dirty data before the suspend"
dmsetup suspend dmb
dmsetup resume dmb
expect_eq "dirty after a suspend with flush_on_suspend" "$(dirty)" 0
same_data $ORIGIN_DEV $((140 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "flush_on_suspend left the origin without the data"
dmsetup message dmb 0 flush_on_suspend off

# detach force goes ahead with dirty data (whatever the worker did not
# copy first is dropped): afterwards the target serves what the origin
# holds, and nothing is dirty.
write_data /dev/mapper/dmb 150 4
[ "$(dirty)" -gt 0 ] || fail "no dirty data before detach force"
dmsetup message dmb 0 detach force || fail "detach force refused"
expect_eq "dirty after detach force" "$(dirty)" 0
expect_eq "mode after detach force" "$(status_field dmb 12)" passthrough
same_direct /dev/mapper/dmb $((150 * 2048)) $ORIGIN_DEV $((150 * 2048)) $((4 * 2048)) ||
	fail "the detached target serves other data than the origin holds"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the drain and detach"
exit 0
