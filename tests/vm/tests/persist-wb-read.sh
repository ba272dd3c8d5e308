# Second half of the write-back power cut (after persist-wb-write): the
# cache checks clean, a read-only table serves the flushed writes without
# writing a byte, then the constructor replays the journal, and every
# write the writer's log says a completed flush covered reads back
# through the target as that write or a newer one.  Then a flush message
# writes everything back, and the origin alone passes the same check.
# With WB_LAYOUT=backing (persist-wbb-read) the origin's superblock says
# dirty after the cut and clean after the flush, and its data area is
# what is checked.
. /tests/lib.sh
load_module
len=$((448 * 2048))
layout=${WB_LAYOUT:-raw}
bstate() {	# as on disk: the target writes it around the page cache
	echo 3 >/proc/sys/vm/drop_caches
	bcache-super-show $ORIGIN_DEV | awk '/^dev.data.cache_state/ { print $3 }'
}
bcache_check -q $CACHE_DEV || fail "the cache does not check clean after the cut"
[ "$layout" = raw ] || expect_eq "origin superblock after the cut" "$(bstate)" "[dirty]"
dmsetup create wblog --table "0 $((16 * 2048)) linear $ORIGIN_DEV $((480 * 2048))"
table="0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
# A read-only table first: the journal is replayed in memory only, the
# flushed writes read back through it, and neither device changes.
# Sectors written to each disk, as the block layer counts them: a write
# by the table would move the count (and hashing both disks is slow).
written() { awk '{ print $7 }' "/sys/class/block/${1#/dev/}/stat"; }
cw=$(written $CACHE_DEV) ow=$(written $ORIGIN_DEV)
case "$cw,$ow" in [0-9]*,[0-9]*) ;; *) fail "no write counts: '$cw' '$ow'" ;; esac
log "sectors written before the read-only table: cache $cw, origin $ow"
dmsetup create --readonly dmb --table "$table" || fail "read-only table refused after the cut"
expect_eq "state, read-only" "$(status_field dmb 13)" ro
bcache_crashwriter verify /dev/mapper/dmb /dev/mapper/wblog 4096 ||
	fail "flushed writes lost or stale through a read-only table"
dmsetup remove dmb
expect_eq "sectors written to the cache by the read-only table" "$(written $CACHE_DEV)" "$cw"
expect_eq "sectors written to the origin by the read-only table" "$(written $ORIGIN_DEV)" "$ow"
[ "$layout" = raw ] || expect_eq "origin superblock after the read-only table" "$(bstate)" "[dirty]"
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
dmsetup status dmb
expect_eq "origin layout" "$(status_field dmb 15)" "$layout"
[ "$(status_field dmb 4)" -gt 0 ] || fail "no dirty data after the cut"
bcache_crashwriter verify /dev/mapper/dmb /dev/mapper/wblog 4096 ||
	fail "flushed writes lost or stale through the target"
dmsetup message dmb 0 flush || fail "flush message failed"
dmsetup message dmb 0 gc
dmsetup status dmb
expect_eq "dirty sectors after flush and gc" "$(status_field dmb 4)" 0
[ "$layout" = raw ] || expect_eq "origin superblock after the flush" "$(bstate)" "[clean]"
off=$(status_field dmb 16)
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the drain"
# The count the read-only table was judged by does move with writes.
[ "$(written $ORIGIN_DEV)" -gt "$ow" ] || fail "the origin's write count did not move for the drain"
# The origin's data area alone, where the target's sector 0 is.
dmsetup create odata --table "0 $len linear $ORIGIN_DEV $off"
bcache_crashwriter verify /dev/mapper/odata /dev/mapper/wblog 4096 ||
	fail "the origin alone lacks flushed writes after the drain"
dmsetup remove odata
dmsetup remove wblog
exit 0
