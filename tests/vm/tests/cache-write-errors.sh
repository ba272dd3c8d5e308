# A write-back write whose data write to the cache fails, while the
# cache's metadata works: it is sent to the origin instead, its range
# invalidated, and succeeds.  The cache is a dm device over vda; one
# 4 KiB write-back write with FUA puts its key in the journal, and
# bcache_dump --force --json (on the live cache) shows where its data went; the
# rest of that open data bucket becomes an error-target hole.  The next
# write-back writes land in the hole: each succeeds, counts in
# cache_errors, is not dirty, reads back right and is on the origin; the
# metadata state stays rw and bcache_check is clean afterwards.
. /tests/lib.sh
load_module
csec=$(sectors $CACHE_DEV)
len=$((64 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=8 oflag=direct status=none
dmsetup create cdev --table "0 $csec linear $CACHE_DEV 0"
dmsetup create dmb --table "0 $len bcache /dev/mapper/cdev $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
bucket=$(status_field dmb 2)

# Block 0 with FUA: durable, key journalled.
dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k count=1 oflag=direct,sync status=none
ptr=$(bcache_dump --force --json /dev/mapper/cdev 2>/dev/null |
	grep -oE '"offset":8,"size":8,"dirty":true,"ptrs":\[\{"dev":0,"offset":[0-9]+' |
	tail -n 1 | sed -E 's/.*"offset":([0-9]+)$/\1/')
[ -n "$ptr" ] || fail "the journalled key of block 0 is not in the dump"
# The rest of its bucket, from the next 4 KiB on.
hole=$((ptr + 8))
end=$(((ptr / bucket + 1) * bucket))
log "block 0's data at cache sector $ptr; hole $hole-$end"
[ "$end" -gt "$hole" ] || fail "block 0 ended its bucket: no room for a hole"
printf '%s\n' "0 $hole linear $CACHE_DEV 0" "$hole $((end - hole)) error" \
	"$end $((csec - end)) linear $CACHE_DEV $end" >/tmp/hole
dmsetup suspend cdev
dmsetup reload cdev /tmp/hole
dmsetup resume cdev

errors0=$(counter cache_errors)
dirty0=$(status_field dmb 4)
# Blocks 1-3 (reference blocks 1-3), one write each, no FUA.
for b in 1 2 3; do
	dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k skip=$b seek=$b count=1 oflag=direct status=none ||
		fail "write-back write $b failed: a cache data error must not fail it"
done
errors=$(counter cache_errors)
log "cache_errors $errors0 -> $errors, dirty $dirty0 -> $(status_field dmb 4), state $(status_field dmb 13)"
[ "$errors" -gt "$errors0" ] || fail "no write met the hole: it proves nothing"
expect_eq "metadata state" "$(status_field dmb 13)" rw
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 32 || fail "blocks 0-3 read back differ"
# Those that met the hole (the first ones: the bucket fills in order) are
# on the origin already; write-back is held off, so nothing else is.
met=$((errors - errors0 > 3 ? 3 : errors - errors0))
same_data $ORIGIN_DEV 8 $DATA_DEV 8 $((met * 8)) ||
	fail "a write that met the hole is not on the origin"
# ... and not dirty: only the writes the cache took add dirty sectors.
grew=$(($(status_field dmb 4) - dirty0))
[ "$grew" -le $(((3 - met) * 8)) ] ||
	fail "dirty grew by $grew sectors; $met of 3 writes went to the origin"
dmsetup message dmb 0 flush
dmsetup remove dmb
same_data $ORIGIN_DEV 0 $DATA_DEV 0 32 || fail "the origin lacks blocks 0-3 after the flush"
dmsetup remove cdev
bcache_check -q $CACHE_DEV || fail "bcache_check"
exit 0
