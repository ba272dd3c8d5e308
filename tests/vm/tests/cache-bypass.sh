# The bypass policy.  Sequential: with sequential_cutoff 1 MiB, an 8 MiB
# sequential write in 256 KiB requests caches the requests that leave the
# stream short of 1 MiB (the first three: the fourth brings it to the
# cutoff, as bcache counts) and goes around the cache after
# (bypass_sequential counted); reading it back, the bypassed part misses
# and, being sequential too, is not filled.  Random 4 KiB writes are
# cached.  sequential_cutoff 0 by message: everything cached again.
# Congestion: a 1 us write threshold (every cache write is slower) sends
# writes around the cache once the average is known (bypass_congested);
# 0 switches it off.  Data always reads back right.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((448 * 2048))
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 7 writethrough sequential_cutoff 2048 congested_read_threshold_us 0 congested_write_threshold_us 0"


dd if=$DATA_DEV of=/dev/mapper/dmb bs=256k count=32 oflag=direct status=none
wm=$(status_field dmb 8) bw=$(status_field dmb 10) seq=$(counter bypass_sequential)
log "sequential 8 MiB: $wm written through, $bw bypassed ($seq sequential)"
expect_eq "writes cached before the cutoff" "$wm" 3
expect_eq "writes bypassed as sequential" "$seq" 29
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 $((8 * 2048)) || fail "sequential data differs"
log "read back: hits $(status_field dmb 5) misses $(status_field dmb 6) bypassed $(status_field dmb 9)"
[ "$(status_field dmb 5)" -ge 1 ] || fail "the cached first MiB did not hit"
[ "$(counter bypass_sequential)" -ge 1 ] || fail "sequential reads were not bypassed"

# Random 4 KiB writes are not a stream.
dmsetup message dmb 0 clear_stats
fio --name=rnd --filename=/dev/mapper/dmb --rw=randwrite --bs=4k --size=64M \
	--offset=128M --io_size=2M --direct=1 --ioengine=psync --randrepeat=1 \
	--eta=never --output=/tmp/fio.out || { cat /tmp/fio.out; fail "fio"; }
log "random 4k: $(status_field dmb 8) written through, $(counter bypass_sequential) sequential"
[ "$(counter bypass_sequential)" -le 8 ] || fail "random writes taken for sequential"

dmsetup message dmb 0 sequential_cutoff 0
dmsetup message dmb 0 clear_stats
dd if=$DATA_DEV of=/dev/mapper/dmb bs=256k count=32 seek=64 oflag=direct status=none
expect_eq "cutoff 0: written through" "$(status_field dmb 8)" 32
expect_eq "cutoff 0: bypassed" "$(status_field dmb 10)" 0

dmsetup message dmb 0 congested_write_threshold_us 1
dmsetup message dmb 0 clear_stats
dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k count=256 seek=8192 oflag=direct status=none
log "congested: $(status_field dmb 8) written through, $(counter bypass_congested) congested"
[ "$(counter bypass_congested)" -ge 200 ] || fail "writes not bypassed as congested"
dmsetup message dmb 0 congested_write_threshold_us 0
dmsetup message dmb 0 clear_stats
dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k count=256 seek=9000 oflag=direct status=none
expect_eq "uncongested: bypassed" "$(status_field dmb 10)" 0
same_direct /dev/mapper/dmb $((8192 * 8)) $DATA_DEV 0 $((256 * 8)) || fail "congested-path data differs"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the bypass runs"
exit 0
