# A cache device that fails under I/O.  The cache is a dm-linear device
# over vda whose table is swapped for the error target mid-way: cached
# reads then fail on the cache and are read again from the origin, the
# first failed metadata write sets the state to fail and needs_check, and
# from then on every I/O goes to the origin (bypass_failed).  No user
# I/O fails and fio verifies every block; removing the target works.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
csz=$(sectors $CACHE_DEV)
len=$((448 * 2048))
dmsetup create ssd --table "0 $csz linear $CACHE_DEV 0"
dmsetup create dmb --table "0 $len bcache /dev/mapper/ssd $ORIGIN_DEV 7 writethrough $NOBYPASS"

fio_args="--name=v --filename=/dev/mapper/dmb --bs=4k --size=32M --offset=64M
	--ioengine=libaio --iodepth=8 --direct=1 --verify=crc32c
	--verify_fatal=1 --randrepeat=1 --eta=never"
# shellcheck disable=SC2086
fio $fio_args --rw=randwrite --do_verify=0 --output=/tmp/fio1.out || { cat /tmp/fio1.out; fail "fio write"; }
write_data /dev/mapper/dmb 16 16
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "data before the failure"
[ "$(status_field dmb 5)" -gt 0 ] || fail "no hits before the failure"

log "the cache device fails"
fail_device ssd $csz
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
	fail "cached data not served from the origin after the cache failed"
log "reads on the failed cache: $(counter cache_errors) cache errors"
[ "$(counter cache_errors)" -gt 0 ] || fail "no cache errors counted"
# shellcheck disable=SC2086
fio $fio_args --rw=randwrite --verify_only --output=/tmp/fio2.out ||
	{ cat /tmp/fio2.out; fail "verify after the cache failed"; }
# Writes (and their flushes) now fail on the cache's metadata.
# shellcheck disable=SC2086
fio $fio_args --rw=randwrite --io_size=4M --fsync=16 --do_verify=1 --output=/tmp/fio3.out ||
	{ cat /tmp/fio3.out; fail "writes after the cache failed"; }
wait_for "the fail state" sh -c '[ "$(dmsetup status dmb | awk "{ print \$16 }")" = fail ]'
expect_eq "needs_check" "$(status_field dmb 14)" needs_check
dmsetup message dmb 0 clear_stats
dd if=/dev/mapper/dmb of=/dev/null bs=4k count=16 iflag=direct status=none
[ "$(counter bypass_failed)" -ge 16 ] || fail "reads in the fail state not bypassed"
dmsetup status dmb
dmsetup remove dmb
dmsetup remove ssd
# The origin alone holds everything written.
dmsetup create lin --table "0 $len linear $ORIGIN_DEV 0"
same_direct /dev/mapper/lin $((16 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "origin lacks the data"
dmsetup remove lin
exit 0
