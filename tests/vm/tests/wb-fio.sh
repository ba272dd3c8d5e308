# Write-back under fio verify (crc32c) while, in a loop, the cache mode
# switches between writeback and writethrough, flush messages write
# everything back, and the table is reloaded and suspended/resumed; write-
# back copies run throughout (no delay, target 0%).  Zero verify errors;
# a verify-only pass after it all; then, after a last flush, the origin
# alone holds exactly what fio verified.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((128 * 2048))
t_wb="0 $len bcache $CACHE_DEV $ORIGIN_DEV 11 writeback $NOBYPASS writeback_delay 0 writeback_percent 0"
dmsetup create dmb --table "$t_wb"

fio_args="--name=verify --filename=/dev/mapper/dmb --bs=4k --size=64M
	--ioengine=libaio --iodepth=8 --direct=1 --verify=crc32c
	--verify_fatal=1 --randrepeat=1 --eta=never"
# shellcheck disable=SC2086
fio $fio_args --rw=randwrite --do_verify=1 --output=/tmp/fio.out &
fio_pid=$!

cycles=0 flushes=0
while kill -0 $fio_pid 2>/dev/null; do
	dmsetup message dmb 0 cache_mode writethrough
	sleep 0.2
	dmsetup message dmb 0 cache_mode writeback
	if dmsetup message dmb 0 flush; then
		flushes=$((flushes + 1))
	else
		fail "flush message failed during fio"
	fi
	dmsetup reload dmb --table "$t_wb"
	dmsetup suspend dmb
	sleep 0.1
	dmsetup resume dmb
	cycles=$((cycles + 1))
	sleep 0.3
done
wait $fio_pid || { cat /tmp/fio.out; fail "fio failed"; }
dmsetup status dmb
log "$cycles cycles ($flushes flushes) during fio; written back $(counter written_back)"
[ "$cycles" -ge 3 ] || fail "only $cycles cycles ran during fio"
grep -q 'err= 0' /tmp/fio.out || { cat /tmp/fio.out; fail "fio reported errors"; }
[ "$(counter written_back)" -gt 0 ] || fail "nothing was written back"
expect_eq "writeback errors" "$(counter writeback_errors)" 0

# shellcheck disable=SC2086
fio $fio_args --rw=randwrite --verify_only --output=/tmp/fio2.out ||
	{ cat /tmp/fio2.out; fail "verify-only pass failed"; }
grep -q 'err= 0' /tmp/fio2.out || { cat /tmp/fio2.out; fail "verify-only reported errors"; }

dmsetup message dmb 0 flush || fail "last flush failed"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after write-back under fio"
dmsetup create dmlin --table "0 $len linear $ORIGIN_DEV 0"
# shellcheck disable=SC2086
fio ${fio_args//dmb/dmlin} --rw=randwrite --verify_only --output=/tmp/fio3.out ||
	{ cat /tmp/fio3.out; fail "origin does not hold the verified data"; }
dmsetup remove dmlin
exit 0
