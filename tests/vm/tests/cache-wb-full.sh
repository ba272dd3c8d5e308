# Write-back with more dirty data than the cache holds: with write-back
# held off (writeback_delay), 320 MiB go to a 256 MiB cache; once no
# clean space is left, writes fall back to the origin (bypass_nospace
# counts them) and nothing is lost or reordered: all 320 MiB read back
# right, the cache stays rw and checks clean; then a flush writes the
# dirty part back and the origin alone holds all of it; new writes are
# cached again.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
len=$((448 * 2048))
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
for i in 0 1 2 3 4; do
	write_data /dev/mapper/dmb $((i * 64)) 64
done
dmsetup status dmb
nospace=$(counter bypass_nospace)
log "dirty $(status_field dmb 4) after 320 MiB; bypass_nospace $nospace"
[ "$nospace" -gt 0 ] || fail "no write fell back to the origin with the cache full"
[ "$(status_field dmb 4)" -gt $((128 * 2048)) ] || fail "little dirty data: $(status_field dmb 4)"
expect_eq "state with the cache full" "$(status_field dmb 13)" rw
for i in 0 1 2 3 4; do
	same_direct /dev/mapper/dmb $((i * 64 * 2048)) $DATA_DEV 0 $((64 * 2048)) ||
		fail "MiB $((i * 64))..$((i * 64 + 64)) read back wrong with the cache full"
done
dmsetup message dmb 0 flush || fail "flush of a full cache failed"
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after filling the cache"
for i in 0 1 2 3 4; do
	same_data $ORIGIN_DEV $((i * 64 * 2048)) $DATA_DEV 0 $((64 * 2048)) ||
		fail "the origin lacks MiB $((i * 64))..$((i * 64 + 64)) after the flush"
done
# Space again: writes are cached (dirty) once more.
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
write_data /dev/mapper/dmb 400 8
[ "$(status_field dmb 4)" -ge $((8 * 2048)) ] || fail "writes not cached after the flush"
dmsetup message dmb 0 flush
dmsetup remove dmb
exit 0
