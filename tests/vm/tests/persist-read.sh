# Second half of the power-cut test (after persist-write, in a new boot
# on the same disks): the constructor replays the journal (the kernel log
# says how many keys), the cache checks clean, and the 32 MiB written
# before the cut are served from the cache as hits only.
. /tests/lib.sh
load_module
len=$((448 * 2048))
bcache_check -q $CACHE_DEV || fail "the cache does not check clean after the cut"
klog_mark
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 7 writethrough $NOBYPASS"
replayed=$(klog_since | sed -n 's/.*journal replay done, \([0-9]*\) keys.*/\1/p' | tail -n 1)
log "journal replay: ${replayed:-no} keys"
[ "${replayed:-0}" -gt 0 ] || fail "no journal replay at construction"
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((32 * 2048)) ||
	fail "data differs after the power cut"
log "after the cut: hits $(status_field dmb 5) misses $(status_field dmb 6)"
expect_eq "misses after the cut" "$(status_field dmb 6)" 0
[ "$(status_field dmb 5)" -ge 32 ] || fail "too few hits after the cut"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after reading"
exit 0
