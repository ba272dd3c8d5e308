# Reads, fills and writes racing on one range.  One fio job writes 4 KiB
# blocks at random over a 16 MiB region, three passes, and verifies each
# pass (crc32c, and a backlog check every 128 blocks while the others
# run); two jobs read the same region at random, so misses fill it, with
# readahead 248 (a fill covers the 124 KiB after its miss, blocks the
# writer is writing).  A fill that indexed data older than a write that
# completed before it fails the verify.  In writethrough, then in
# write-back with write-back copying throughout; the region verifies
# again after the table is re-created, and after a flush from the origin
# alone.  bcache_check clean.
. /tests/lib.sh
load_module
len=$((64 * 2048))

race() {	# race OUT: the writer with its verify, and two readers
	fio --filename=/dev/mapper/dmb --direct=1 --ioengine=libaio --size=16M \
		--bs=4k --eta=never --output="$1" \
		--name=writer --rw=randwrite --iodepth=8 --loops=3 \
		--verify=crc32c --verify_backlog=128 --verify_fatal=1 \
		--name=reader --rw=randread --iodepth=4 --numjobs=2 --io_size=48M ||
		{ cat "$1"; fail "fio reported a failure"; }
	grep -q 'err= 0' "$1" || { cat "$1"; fail "fio reported errors"; }
}
verify_region() {	# verify_region DEV OUT
	fio --filename="$1" --direct=1 --ioengine=libaio --size=16M --bs=4k \
		--eta=never --output="$2" --name=writer --rw=randwrite \
		--verify=crc32c --verify_only --verify_fatal=1 ||
		{ cat "$2"; fail "verify of $1 failed"; }
}

for mode in "writethrough" "writeback writeback_percent 0 writeback_delay 0 writeback_rate_minimum 4096"; do
	set -- $mode
	name=$1
	table="0 $len bcache $CACHE_DEV $ORIGIN_DEV $((${#}+8)) $mode $NOBYPASS readahead 248"
	# An empty cache over an all-zero region: the readers' misses fill.
	wipe_head $CACHE_DEV
	dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=16 oflag=direct status=none
	dmsetup create dmb --table "$table"
	race /tmp/race-$name.out
	log "$name: hits $(status_field dmb 5), misses $(status_field dmb 6), written back $(counter written_back)"
	[ "$(status_field dmb 6)" -gt 0 ] || fail "$name: no read missed, nothing was filled"
	dmsetup remove dmb
	dmsetup create dmb --table "$table"
	verify_region /dev/mapper/dmb /tmp/verify-$name.out
	if [ "$name" = writeback ]; then
		dmsetup message dmb 0 flush
		expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
	fi
	dmsetup remove dmb
	bcache_check -q $CACHE_DEV || fail "$name: bcache_check"
	verify_region $ORIGIN_DEV /tmp/verify-origin-$name.out
done
exit 0
