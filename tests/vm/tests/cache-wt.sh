# Write-through caching: data written through the target is served from
# the cache (read hits, no misses); a table removal and re-creation keeps
# it (hits again, from the journal and the committed nodes); data written
# to the origin behind the target's back is a miss once, filled, then a
# hit; the cache checks clean offline after each step.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((448 * 2048))
# Every I/O cached: no sequential or congestion bypass.
table="0 $len bcache $CACHE_DEV $ORIGIN_DEV 7 writethrough $NOBYPASS"

hits() { status_field dmb 5; }
misses() { status_field dmb 6; }

dmsetup create dmb --table "$table"
write_data /dev/mapper/dmb 16 32
dmsetup status dmb
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((32 * 2048)) ||
	fail "data read back through the target differs"
log "after writing 32 MiB and reading it back: hits $(hits) misses $(misses)"; dmsetup status dmb
[ "$(hits)" -gt 0 ] || fail "no read hits"
expect_eq "read misses of written data" "$(misses)" 0
same_data $ORIGIN_DEV $((16 * 2048)) $DATA_DEV 0 $((32 * 2048)) ||
	fail "origin does not hold the written data"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after write-through"

# Persistence: a new table on the same cache serves the same data as hits.
dmsetup create dmb --table "$table"
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((32 * 2048)) ||
	fail "data differs after re-creating the target"
log "after re-creating: hits $(hits) misses $(misses)"
[ "$(hits)" -gt 0 ] || fail "no read hits after re-creating"
expect_eq "misses after re-creating" "$(misses)" 0

# A suspend makes the index durable; a reload's destructor, with nothing
# run since, adds no commit of its own.
dmsetup suspend dmb
c1=$(counter commits)
dmsetup reload dmb --table "$table"
dmsetup resume dmb
expect_eq "commits by the replaced table's destructor" "$(counter commits)" "$c1"
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((32 * 2048)) ||
	fail "data differs after a reload"

# Misses fill: data put on the origin directly is a miss, then a hit.
dd if=$DATA_DEV of=$ORIGIN_DEV bs=1M skip=32 seek=200 count=16 oflag=direct status=none
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((200 * 2048)) $DATA_DEV $((32 * 2048)) $((16 * 2048)) ||
	fail "origin data read through the target differs"
m1=$(misses)
[ "$m1" -gt 0 ] || fail "no misses reading uncached data"
wait_fills
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((200 * 2048)) $DATA_DEV $((32 * 2048)) $((16 * 2048)) ||
	fail "filled data read through the target differs"
log "uncached read: $m1 misses; again: hits $(hits) misses $(misses)"
expect_eq "misses re-reading filled data" "$(misses)" 0

# Readahead: a 4 KiB miss fills the 124 KiB after it too (readahead 248
# sectors), which then read as hits; without readahead they miss.
dd if=$DATA_DEV of=$ORIGIN_DEV bs=1M skip=48 seek=220 count=2 oflag=direct status=none
read_4k() { dd if=/dev/mapper/dmb of=/dev/null bs=4k skip="$1" count="$2" iflag=direct status=none; }
ra_misses() {	# ra_misses 4K-BLOCK: misses reading the 124 KiB after it
	read_4k "$1" 1
	wait_fills
	dmsetup message dmb 0 clear_stats
	read_4k $(($1 + 1)) 31
	misses
}
dmsetup message dmb 0 readahead 248
with=$(ra_misses $((220 * 256)))
dmsetup message dmb 0 readahead 0
without=$(ra_misses $((221 * 256)))
log "reading 124 KiB after a 4 KiB miss: $with misses with readahead, $without without"
expect_eq "misses after readahead" "$with" 0
[ "$without" -gt 0 ] || fail "no misses without readahead"
same_direct /dev/mapper/dmb $((220 * 2048)) $DATA_DEV $((48 * 2048)) $((2 * 2048)) ||
	fail "data read ahead differs"

# Discard: offered (both devices take discards), it invalidates what the
# cache holds of its range and reaches the origin, which then reads
# zeroes (qemu's discard=unmap); the range reads as the origin has it.
dmdev=dm-$(dmsetup info -c --noheadings -o minor dmb | tr -d " ")
[ "$(cat /sys/block/$dmdev/queue/discard_max_bytes)" -gt 0 ] || fail "discards not offered"
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((24 * 2048)) $DATA_DEV $((8 * 2048)) $((4 * 2048)) ||
	fail "data before the discard"
expect_eq "misses before the discard" "$(misses)" 0
blkdiscard -o $((24 * 1048576)) -l $((4 * 1048576)) /dev/mapper/dmb
dmsetup message dmb 0 clear_stats
dd if=/dev/mapper/dmb of=/tmp/through bs=1M skip=24 count=4 iflag=direct status=none
dd if=$ORIGIN_DEV of=/tmp/origin bs=1M skip=24 count=4 iflag=direct status=none
cmp /tmp/through /tmp/origin || fail "discarded range read back differs from the origin"
log "discarded 4 MiB then read back: hits $(hits) misses $(misses)"
expect_eq "hits in the discarded range" "$(hits)" 0
cmp -n $((4 * 1048576)) /dev/zero /tmp/origin || fail "the discard did not reach the origin"
rm -f /tmp/through /tmp/origin

# Write-around: an overwrite of cached data invalidates it.
dmsetup message dmb 0 cache_mode writearound
write_data /dev/mapper/dmb 16 8
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((8 * 2048)) ||
	fail "write-around overwrite not seen"
[ "$(misses)" -gt 0 ] || fail "write-around overwrite served from stale cache"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the scenarios"
exit 0
