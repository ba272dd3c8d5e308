# An allocation that fails while the worker indexes writes fails neither
# the writes nor the cache: the writes wait and are indexed on a later
# try.  Debian's kernels have no failslab, so the test-only injector
# dmb-testfail (tests/vm/testmods) makes every 3rd successful
# bch_set_insert() return -ENOMEM (the insert ran; the caller is told it
# did not, as when its last allocation fails).  In write-through and in
# write-back, fio writes 48 MiB of random 4-64k blocks with the injector
# armed, then verifies them: the state stays rw, the injector fired
# hundreds of times, every block reads back.  The table goes and comes
# back (journal replay): everything verifies again, and bcache_check is
# clean.  In write-back, a flush then writes every block to the origin,
# which alone verifies.
. /tests/lib.sh
load_module
len=$((256 * 2048))
wipe_head $CACHE_DEV
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=1 oflag=direct status=none
inject() { echo "$1" >/sys/module/dmb_testfail/parameters/armed; }
injected() { cat /sys/module/dmb_testfail/parameters/injected; }
fio_job() {	# fio_job DEV OUTPUT [fio options]
	local dev=$1 out=$2
	shift 2
	fio --filename="$dev" --direct=1 --ioengine=libaio --iodepth=8 \
		--offset=16M --size=48M --bssplit=4k/50:16k/30:64k/20 \
		--randrepeat=1 --eta=never --name=enomem --rw=randwrite \
		--verify=crc32c --verify_fatal=1 --output="$out" "$@" ||
		{ cat "$out"; return 1; }
}
for mode in writethrough writeback; do
	log "$mode"
	klog_mark
	table="0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 $mode $NOBYPASS writeback_delay 3600"
	dmsetup create dmb --table "$table"
	modprobe dmb-testfail every=3
	inject 1
	fio_job /dev/mapper/dmb /tmp/fio-$mode.out || fail "$mode: fio verify failed with the injector armed"
	inject 0
	n=$(injected)
	log "$mode: $n inserts reported -ENOMEM"
	[ "$n" -ge 100 ] || fail "$mode: the injector fired $n times"
	expect_eq "$mode: state" "$(status_field dmb 13)" rw
	klog_has 'out of memory indexing writes' || fail "$mode: no retry was logged"
	if [ $mode = writeback ]; then
		[ "$(status_field dmb 4)" -gt 0 ] || fail "nothing dirty after the write-back run"
	else
		# Write-through: hits, and the keys are those of the writes.
		dmsetup message dmb 0 clear_stats
		fio_job /dev/mapper/dmb /tmp/fio-$mode-v.out --verify_only ||
			fail "$mode: a second verify failed"
		expect_eq "$mode: misses verifying" "$(status_field dmb 6)" 0
	fi
	rmmod dmb_testfail
	dmsetup remove dmb
	bcache_check -q $CACHE_DEV || fail "$mode: bcache_check"
	dmsetup create dmb --table "$table"
	fio_job /dev/mapper/dmb /tmp/fio-$mode-r.out --verify_only ||
		fail "$mode: the writes do not verify after the table came back"
	if [ $mode = writeback ]; then
		dmsetup message dmb 0 flush
		expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
		dmsetup remove dmb
		fio_job $ORIGIN_DEV /tmp/fio-origin.out --verify_only ||
			fail "the origin alone does not verify after the flush"
	else
		dmsetup remove dmb
		fio_job $ORIGIN_DEV /tmp/fio-origin.out --verify_only ||
			fail "write-through: the origin does not hold the writes"
		wipe_head $CACHE_DEV
	fi
done
exit 0
