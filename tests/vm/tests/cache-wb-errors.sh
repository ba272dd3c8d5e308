# Write-back against a failing origin (dm-flakey, writes failing): the
# copies fail and are counted, the flush message reports the failure,
# the dirty data stays in the cache and reads back right; once the origin
# works again the copies are retried and the origin ends up with exactly
# the data written.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
osz=$((448 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=32 oflag=direct status=none
dmsetup create orig --table "0 $osz linear $ORIGIN_DEV 0"
dmsetup create dmb --table "0 $osz bcache $CACHE_DEV /dev/mapper/orig 9 writeback $NOBYPASS writeback_delay 3600"
write_data /dev/mapper/dmb 8 16
d0=$(status_field dmb 4)
[ "$d0" -ge $((16 * 2048)) ] || fail "dirty $d0 after writing 16 MiB"

# The origin starts failing every write (and stays down).
dmsetup suspend orig
dmsetup reload orig --table "0 $osz flakey $ORIGIN_DEV 0 0 3600 1 error_writes"
dmsetup resume orig
dmsetup message dmb 0 flush 2>/dev/null && fail "flush succeeded on a failing origin"
errs=$(counter writeback_errors)
log "after the failed flush: writeback_errors $errs dirty $(status_field dmb 4)"
[ "$errs" -gt 0 ] || fail "no write-back error counted"
[ "$(status_field dmb 4)" -ge $((16 * 2048)) ] || fail "dirty data dropped after errors"
expect_eq "state after origin errors" "$(status_field dmb 13)" rw
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
	fail "dirty data reads back wrong while the origin fails"
dmsetup message dmb 0 flush 2>/dev/null && fail "second flush succeeded on a failing origin"
[ "$(counter writeback_errors)" -gt "$errs" ] || fail "failed copies not retried"

# The origin recovers: a flush now succeeds and the origin has it all.
dmsetup suspend orig
dmsetup reload orig --table "0 $osz linear $ORIGIN_DEV 0"
dmsetup resume orig
dmsetup message dmb 0 flush || fail "flush failed after the origin recovered"
dmsetup message dmb 0 gc
expect_eq "dirty after the recovered flush" "$(status_field dmb 4)" 0
same_data $ORIGIN_DEV $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
	fail "the origin lacks the data after recovery"
dmsetup remove dmb
dmsetup remove orig
bcache_check -q $CACHE_DEV || fail "bcache_check after the errors"
exit 0
