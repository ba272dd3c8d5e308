# Table reloads and suspend/resume while fio writes and verifies
# (verify=crc32c): zero verify errors, and a second verify-only pass over
# the same data after the last reload.
. /tests/lib.sh
load_module
wipe_head $ORIGIN_DEV
len=$((128 * 2048))
t_wt="0 $len bcache $CACHE_DEV $ORIGIN_DEV 1 writethrough"
t_pt="0 $len bcache $CACHE_DEV $ORIGIN_DEV 3 passthrough origin_layout raw"
dmsetup create dmb --table "$t_wt"

fio_args="--name=verify --filename=/dev/mapper/dmb --bs=4k --size=64M
	--ioengine=libaio --iodepth=8 --direct=1 --verify=crc32c
	--verify_fatal=1 --randrepeat=1 --eta=never"
# shellcheck disable=SC2086
fio $fio_args --rw=randwrite --do_verify=1 --output=/tmp/fio.out &
fio_pid=$!

cycles=0
while kill -0 $fio_pid 2>/dev/null; do
	if [ $((cycles % 2)) = 0 ]; then
		dmsetup reload dmb --table "$t_pt"
	else
		dmsetup reload dmb --table "$t_wt"
	fi
	dmsetup suspend dmb
	dmsetup resume dmb
	dmsetup suspend dmb
	sleep 0.1
	dmsetup resume dmb
	cycles=$((cycles + 1))
	sleep 0.3
done
wait $fio_pid || { cat /tmp/fio.out; fail "fio failed"; }
log "$cycles reload + suspend/resume cycles during fio"
[ "$cycles" -ge 5 ] || fail "only $cycles cycles ran during fio"
grep -q 'err= 0' /tmp/fio.out || { cat /tmp/fio.out; fail "fio reported errors"; }

# shellcheck disable=SC2086
fio $fio_args --rw=randwrite --verify_only --output=/tmp/fio2.out ||
	{ cat /tmp/fio2.out; fail "verify-only pass failed"; }
grep -q 'err= 0' /tmp/fio2.out || { cat /tmp/fio2.out; fail "verify-only reported errors"; }

# The origin holds exactly what fio verified through the target.
dmsetup remove dmb
dmsetup create dmlin --table "0 $len linear $ORIGIN_DEV 0"
# shellcheck disable=SC2086
fio ${fio_args//dmb/dmlin} --rw=randwrite --verify_only --output=/tmp/fio3.out ||
	{ cat /tmp/fio3.out; fail "origin does not hold the verified data"; }
dmsetup remove dmlin
exit 0
