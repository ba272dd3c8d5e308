# Our writers -> the mainline driver.  bcache_seed (tests/tools/) copies
# 48 MiB of the reference data into a bcache_format cache and indexes it
# with core/btree/btree.c and core/btree/node_io.c (4 KiB extents, a two-level tree),
# records the origin in the UUID table and names the root in a new journal
# entry.  The origin itself holds zeros.  The mainline driver registers
# the pair and must serve the reference data from the cache, as hits;
# bcache_check is clean before and after.  Then the same with the extents
# only in journal entries written by core/journal/journal_write.c, which the
# driver must replay.
. /tests/lib.sh
modprobe bcache

wipe_head $CACHE_DEV
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=64 oflag=direct status=none
bcache_format --wipe-bcache -b 128k -C $CACHE_DEV -B $ORIGIN_DEV >/dev/null
out=$(bcache_seed $CACHE_DEV $ORIGIN_DEV $DATA_DEV 48) || fail "bcache_seed: $out"
log "$out"
echo "$out" | grep -q 'root level 1' || fail "expected a two-level tree"
bcache_check -q $CACHE_DEV || fail "bcache_check on the seeded cache"
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')

mainline_register
expect_eq "state" "$(cat /sys/block/bcache0/bcache/state)" clean
# No bypass: every read is a lookup (TCG latencies look like congestion).
echo 0 >/sys/block/bcache0/bcache/sequential_cutoff
echo 0 >/sys/fs/bcache/$cset/congested_read_threshold_us
echo 0 >/sys/fs/bcache/$cset/congested_write_threshold_us

same_data /dev/bcache0 0 $DATA_DEV 0 $((48 * 2048)) ||
	fail "bcache0 does not return the data our index points at"
same_data $ORIGIN_DEV 16 $DATA_DEV 0 2048 &&
	fail "the origin holds the data: the test proves nothing"
# The driver folds its counters into stats_total every 13.6 s.
stats=/sys/block/bcache0/bcache/stats_total
for i in $(seq 40); do
	[ "$(cat $stats/cache_hits)" != 0 ] && break
	sleep 1
done
for f in cache_hits cache_misses cache_bypass_hits cache_bypass_misses; do
	eval "$f=$(cat $stats/$f)"
done
log "hits $cache_hits, misses $cache_misses, bypass hits $cache_bypass_hits, bypass misses $cache_bypass_misses"
# 48 MiB in requests of at most 128 KiB: at least 384 hits.  A few
# misses come from reads outside the seeded range (the partition scan at
# the end of the device, readahead past 48 MiB).
[ "$cache_hits" -ge 384 ] || fail "$cache_hits cache hits, want at least 384"
[ "$((cache_misses + cache_bypass_misses))" -le 8 ] || fail "too many misses"
[ "$cache_bypass_hits" = 0 ] || fail "reads bypassed the cache"

mainline_stop $cset
bcache_check $CACHE_DEV >/tmp/check.out || { cat /tmp/check.out; fail "not clean after the driver ran"; }

log "the same extents, only in journal entries"
wipe_head $CACHE_DEV
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=64 oflag=direct status=none
bcache_format --wipe-bcache -b 128k -C $CACHE_DEV -B $ORIGIN_DEV >/dev/null
out=$(bcache_seed --journal $CACHE_DEV $ORIGIN_DEV $DATA_DEV 48) || fail "bcache_seed --journal: $out"
log "$out"
bcache_check -q $CACHE_DEV || fail "bcache_check on the journal-seeded cache"
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
mainline_register
klog_has 'journal replay done, 12288 keys' ||
	fail "the driver did not replay our entries: $(klog_since | grep -i 'journal replay')"
same_data /dev/bcache0 0 $DATA_DEV 0 $((48 * 2048)) ||
	fail "bcache0 does not return the data our journal entries index"
mainline_stop $cset
bcache_check $CACHE_DEV >/tmp/check.out || { cat /tmp/check.out; fail "not clean after the replay"; }
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
exit 0
