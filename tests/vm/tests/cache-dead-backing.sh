# A cache device that dies under a backing origin (make-bcache -B).  The
# dying device returns errors, so the cache's own untrusted marker (its
# superblock's synchronous flag cleared) cannot be written; the metadata
# failure must then detach the origin in its superblock (no set UUID,
# state none), as the mainline driver detaches a clean device.  When the
# old cache comes back unchanged, a new table must not serve what it held:
# data overwritten while the cache was dead reads back new, not stale,
# and the origin is attached again (set UUID, clean).
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
make-bcache -B $ORIGIN_DEV >/dev/null
usable=$(($(sectors $ORIGIN_DEV) - 16))
csz=$(sectors $CACHE_DEV)
table_on() { echo "0 $usable bcache $1 $ORIGIN_DEV 7 writethrough $NOBYPASS"; }
dmsetup create ssd --table "0 $csz linear $CACHE_DEV 0"
dmsetup create dmb --table "$(table_on /dev/mapper/ssd)"
expect_eq "origin layout" "$(status_field dmb 15)" backing
write_data /dev/mapper/dmb 16 16
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "data before the failure"
[ "$(status_field dmb 5)" -gt 0 ] || fail "no hits before the failure"

log "the cache device dies; 4 MiB of cached data are overwritten"
fail_device ssd $csz
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=32 seek=16 count=4 oflag=direct conv=fsync status=none
wait_for "the fail state" sh -c '[ "$(dmsetup status dmb | awk "{ print \$16 }")" = fail ]'
bcache-super-show $ORIGIN_DEV >/tmp/bsb.out
grep -Eq '^dev.data.cache_state[[:space:]]+0 \[detached\]' /tmp/bsb.out ||
	{ cat /tmp/bsb.out; fail "origin not detached after the cache failed"; }
grep -Eq '^cset.uuid[[:space:]]+00000000-0000-0000-0000-000000000000' /tmp/bsb.out ||
	{ cat /tmp/bsb.out; fail "origin still names the set"; }
dmsetup remove dmb
dmsetup remove ssd

log "the old cache is back, as it was"
dmsetup create dmb --table "$(table_on $CACHE_DEV)"
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV $((32 * 2048)) $((4 * 2048)) ||
	fail "stale data served from the cache that died"
same_direct /dev/mapper/dmb $((20 * 2048)) $DATA_DEV $((4 * 2048)) $((12 * 2048)) ||
	fail "data written before the failure differs"
dmsetup remove dmb
bcache-super-show $ORIGIN_DEV >/tmp/bsb.out
grep -Eq '^dev.data.cache_state[[:space:]]+1 \[clean\]' /tmp/bsb.out ||
	{ cat /tmp/bsb.out; fail "origin not attached again"; }
bcache_check -q $CACHE_DEV || fail "bcache_check of the returned cache"
exit 0
