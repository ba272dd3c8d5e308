# While suspended the target writes nothing to the cache: no reclaim, no
# gc pass, no commit.  A 64 MiB cache takes random writes over 96 MiB
# (reclaim and gc due all the time), with gc asked for by message;
# the target is suspended in the middle of it, three times, and for 3 s
# each time the cache device must not change by a byte and the gc and
# reclaim counters must not move.  After resume the writes go on; fio
# verifies every block, and bcache_check is clean.
. /tests/lib.sh
load_module
len=$((160 * 2048))
dmsetup create csmall --table "0 $((64 * 2048)) linear $CACHE_DEV 0"
bcache_format --wipe-bcache -b 64k -C /dev/mapper/csmall >/dev/null
dmsetup create dmb --table "0 $len bcache /dev/mapper/csmall $ORIGIN_DEV 7 writethrough $NOBYPASS"
fio_args="--filename=/dev/mapper/dmb --direct=1 --ioengine=libaio --iodepth=8
	--size=96M --bs=4k --randrepeat=1 --eta=never --name=load
	--rw=randwrite --verify=crc32c --verify_fatal=1"
# shellcheck disable=SC2086
fio $fio_args --output=/tmp/fio.out &
fio_pid=$!
gcs_and_reclaims() { echo "$(counter gc_runs) $(counter reclaims)"; }
for round in 1 2 3; do
	sleep 1
	kill -0 $fio_pid 2>/dev/null || fail "fio ended before suspension $round"
	dmsetup message dmb 0 gc
	dmsetup suspend dmb
	before=$(gcs_and_reclaims)
	dd if=/dev/mapper/csmall of=/tmp/csmall bs=1M iflag=direct status=none
	sleep 3
	dd if=/dev/mapper/csmall bs=1M iflag=direct status=none | cmp -s - /tmp/csmall ||
		fail "suspension $round: the cache changed while suspended"
	expect_eq "suspension $round: gc runs and reclaims" "$(gcs_and_reclaims)" "$before"
	log "suspension $round: cache unchanged for 3 s; gc runs, reclaims: $before"
	dmsetup resume dmb
done
rm -f /tmp/csmall
wait $fio_pid || { cat /tmp/fio.out; fail "fio write+verify failed"; }
grep -q 'err= 0' /tmp/fio.out || { cat /tmp/fio.out; fail "fio reported errors"; }
# Every write was cached (writethrough, no bypass): verify reads that
# miss found their data evicted, so reclaim was due throughout.
[ "$(status_field dmb 6)" -gt 0 ] || fail "no verify read missed: nothing was evicted"
dmsetup remove dmb
bcache_check -q /dev/mapper/csmall || fail "bcache_check"
dmsetup remove csmall
exit 0
