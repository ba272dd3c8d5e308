# Large writes on a cache of small buckets.  The constructor halves the
# bucket size of a small cache until it has 1024 buckets (32 KiB on this
# 32 MiB cache), and a write is cached in at most DMB_MAX_PIECES pieces
# (one per bucket it touches), so the target must hand itself no bio that
# needs more: 1 MiB and 4 MiB writes in write-back are cached dirty (the
# 1 MiB ones, one at a time, none counted bypass_nospace once the set has
# buckets ready), and every
# byte reads back, from the target and, after a flush, from the origin.
# Write-through takes the same writes into the cache too.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
dmsetup create csmall --table "0 $((32 * 2048)) linear $CACHE_DEV 0"
len=$((64 * 2048))
table="0 $len bcache /dev/mapper/csmall $ORIGIN_DEV"
# put_mib MIB COUNT: 1 MiB writes of the reference data, each where it
# sits in $DATA_DEV, so the target must read back as $DATA_DEV does.
put_mib() {
	dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip="$1" seek="$1" \
		count="$2" oflag=direct conv=fsync status=none
}

log "write-back, 32 KiB buckets: 1 MiB writes are cached dirty"
dmsetup create dmb --table "$table 9 writeback writeback_percent 40 $NOBYPASS"
expect_eq "bucket size (sectors)" "$(status_field dmb 2)" 64
# write_dirty retries while the fresh set has no bucket ready; a write
# that cannot be cached in DMB_MAX_PIECES pieces never becomes dirty.
write_dirty /dev/mapper/dmb 0 4
before=$(counter bypass_nospace)
put_mib 4 4
expect_eq "bypass_nospace after 1 MiB writes with buckets ready" \
	"$(counter bypass_nospace)" "$before"
[ "$(status_field dmb 4)" -ge $((8 * 2048)) ] ||
	fail "dirty $(status_field dmb 4) after 8 MiB of 1 MiB writes"

log "write-back: 4 MiB writes"
# One 4 MiB write is many bios in flight at once, which can outrun the
# ready buckets (those bypass as nospace, as on a fresh set): write again
# until it is all dirty.  Bios too long for their pieces never would be.
for i in 1 2 3 4 5; do
	dd if=$DATA_DEV of=/dev/mapper/dmb bs=4M skip=2 seek=2 count=1 \
		oflag=direct status=none
	[ "$(status_field dmb 4)" -ge $((12 * 2048)) ] && break
	sleep 1
done
[ "$(status_field dmb 4)" -ge $((12 * 2048)) ] ||
	fail "dirty $(status_field dmb 4) after 12 MiB written"
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 $((12 * 2048)) ||
	fail "the target's data after the large writes"
dmsetup message dmb 0 flush
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
same_direct $ORIGIN_DEV 0 $DATA_DEV 0 $((12 * 2048)) ||
	fail "the origin's data after the flush"
dmsetup remove dmb

log "write-through: 1 MiB writes are cached"
dmsetup create dmb --table "$table 7 writethrough $NOBYPASS"
wm=$(status_field dmb 8)
put_mib 20 4
put_mib 24 4
[ "$(status_field dmb 8)" -ge $((wm + 8)) ] ||
	fail "write misses $wm -> $(status_field dmb 8): 1 MiB writes not cached"
same_direct /dev/mapper/dmb $((20 * 2048)) $DATA_DEV $((20 * 2048)) $((8 * 2048)) ||
	fail "the target's data after write-through"
same_direct $ORIGIN_DEV $((20 * 2048)) $DATA_DEV $((20 * 2048)) $((8 * 2048)) ||
	fail "the origin's data after write-through"
dmsetup remove dmb
bcache_check -q /dev/mapper/csmall || fail "bcache_check after the writes"
dmsetup remove csmall
