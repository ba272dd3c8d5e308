# The cache under load, with a working set larger than the cache (so
# buckets are reclaimed, prios rewritten and gc runs): fio writes and
# verifies (crc32c) with two jobs and mixed block sizes while the cache
# mode switches between writethrough, writearound and passthrough and gc
# is requested; then a clean bcache_check, and after re-creating the
# target an index as full as before, the 8 MiB written last read back as
# hits only, and a verify-only pass (the write pass verified the same
# blocks before the target was re-created).  (How many of the
# verify reads hit is not asserted: fio verifies in the order it wrote,
# the cyclic pattern on which lru evicts what comes next.)  Then a
# sequential and a mixed 70/30 pass, each verified.  Then ext4 on the
# target: files written, e2fsck -fn clean, and the files read back equal
# after a remount.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((448 * 2048))
table="0 $len bcache $CACHE_DEV $ORIGIN_DEV 7 writethrough $NOBYPASS"
dmsetup create dmb --table "$table"

base_args="--filename=/dev/mapper/dmb --ioengine=libaio --direct=1
	--iodepth=16 --numjobs=2 --size=192M --offset_increment=192M
	--verify=crc32c --verify_fatal=1 --randrepeat=1 --eta=never
	--group_reporting"
fio_args="$base_args --bssplit=4k/50:16k/30:64k/20"
# shellcheck disable=SC2086
fio --name=load $fio_args --rw=randwrite --do_verify=1 --output=/tmp/fio.out &
fio_pid=$!
switches=0
modes=(writearound passthrough writethrough)
while kill -0 $fio_pid 2>/dev/null; do
	sleep 2
	# A refused switch fails the test: these three modes are always
	# allowed (nothing is dirty), and the status must show the new one.
	mode=${modes[$((switches % 3))]}
	dmsetup message dmb 0 cache_mode "$mode" || fail "switch to $mode refused"
	expect_eq "mode after the switch" "$(status_field dmb 12)" "$mode"
	if [ $((switches % 4)) = 1 ]; then
		dmsetup message dmb 0 gc || fail "gc message failed"
	fi
	switches=$((switches + 1))
done
wait $fio_pid || { cat /tmp/fio.out; fail "fio write+verify failed"; }
grep -q 'err= 0' /tmp/fio.out || { cat /tmp/fio.out; fail "fio reported errors"; }
log "$switches mode switches during the write+verify pass"
[ "$switches" -ge 3 ] || fail "only $switches mode switches happened"
dmsetup message dmb 0 cache_mode writethrough
dmsetup status dmb

# 8 MiB outside fio's area, written last: surely still cached.
write_data /dev/mapper/dmb 400 8
dmsetup status dmb
used=$(status_field dmb 3)
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the fio load"
log "buckets used at the end: $used"

dmsetup create dmb --table "$table"
reopened=$(status_field dmb 3)
log "buckets used after re-creating: $reopened"
[ "${reopened%/*}" -ge $((${used%/*} * 9 / 10)) ] || fail "index lost buckets: $used -> $reopened"
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((400 * 2048)) $DATA_DEV 0 $((8 * 2048)) ||
	fail "the last 8 MiB differ after re-creating"
log "last 8 MiB after re-creating: hits $(status_field dmb 5), misses $(status_field dmb 6)"
expect_eq "misses on the last 8 MiB" "$(status_field dmb 6)" 0
[ "$(status_field dmb 5)" -ge 8 ] || fail "the last 8 MiB were not hits"
dmsetup message dmb 0 clear_stats
# shellcheck disable=SC2086
fio --name=load $fio_args --rw=randwrite --verify_only --output=/tmp/fio3.out ||
	{ cat /tmp/fio3.out; fail "verify after re-creating failed"; }
dmsetup status dmb
log "verify after re-creating: $(status_field dmb 5) hits, $(status_field dmb 6) misses"

# Sequential, then mixed: two jobs writing their halves sequentially in
# 256 KiB requests, then two doing 70/30 random 4 KiB reads and writes
# (64 MiB each), each verified at the end; bcache_check clean after.
for pass in "seq --rw=write --bs=256k" "mixed --rw=randrw --rwmixread=70 --bs=4k --io_size=64M"; do
	# shellcheck disable=SC2086
	set -- $pass
	name=$1
	shift
	# shellcheck disable=SC2086
	fio --name=$name $base_args "$@" --do_verify=1 --output=/tmp/fio-$name.out ||
		{ cat /tmp/fio-$name.out; fail "fio $name write+verify failed"; }
	grep -q 'err= 0' /tmp/fio-$name.out || { cat /tmp/fio-$name.out; fail "fio $name reported errors"; }
	log "$name: hits $(status_field dmb 5) misses $(status_field dmb 6), written $(status_field dmb 8)"
done
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the sequential and mixed passes"
dmsetup create dmb --table "$table"

# ext4 with a file workload.
modprobe ext4
mkfs.ext4 -q -F /dev/mapper/dmb
mkdir -p /mnt/t
mount /dev/mapper/dmb /mnt/t
for i in 1 2 3 4 5 6; do
	dd if=$DATA_DEV of=/mnt/t/f$i bs=1M skip=$((i * 8)) count=8 status=none
	mkdir -p /mnt/t/d$i && cp /mnt/t/f$i /mnt/t/d$i/copy
done
rm /mnt/t/f2 /mnt/t/d4/copy
umount /mnt/t
e2fsck -fn /dev/mapper/dmb >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fail "e2fsck found problems"; }
mount /dev/mapper/dmb /mnt/t
for i in 1 3 4 5 6; do
	cmp -i 0:$((i * 8 * 1048576)) -n $((8 * 1048576)) /mnt/t/f$i $DATA_DEV || {
		dmsetup status dmb
		dmesg | grep -E 'bcache|device-mapper|I/O error' | tail -n 30
		fail "file f$i differs"
	}
done
cmp /mnt/t/d3/copy /mnt/t/f3 || fail "copy d3 differs"
umount /mnt/t
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after ext4"
exit 0
