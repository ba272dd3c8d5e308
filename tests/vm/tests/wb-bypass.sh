# Write-back with the default bypass policy, with the writeback worker
# copying throughout (writeback_percent 0, no delay, the default rate
# minimum): writes that go around the cache land on blocks just made
# dirty and must win over them, whether the copy of the older data is
# queued, in flight or done:
#   - sequential writes past sequential_cutoff (the default 4 MiB),
#   - write-around writes (mode switched under dirty data),
#   - congested writes (write threshold 1 us),
#   - discards (the range then reads as the origin has it: zeroes here).
# A model of the 32 MiB region, updated with every write, must equal
# what the target reads back after each phase, and the origin alone
# after a flush; bcache_check clean.
. /tests/lib.sh
load_module
region_blocks=8192	# 32 MiB in 4 KiB blocks
len=$((128 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=32 oflag=direct status=none
head -c $((32 << 20)) /dev/zero >/tmp/model

# The origin must read discarded ranges as zeroes for the model to hold.
write_data $ORIGIN_DEV 100 1
blkdiscard -o $((100 << 20)) -l $((1 << 20)) $ORIGIN_DEV
cmp -n $((1 << 20)) -i $((100 << 20)):0 $ORIGIN_DEV /dev/zero >/dev/null ||
	fail "the origin disk does not zero discarded ranges: the model cannot hold"

dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 5 writeback writeback_percent 0 writeback_delay 0"
dm=$(dmsetup info -c -o blkdevname --noheadings dmb)
[ "$(cat /sys/block/$dm/queue/discard_max_bytes)" -gt 0 ] ||
	fail "the target does not take discards"

# put BLOCK SRC COUNT: COUNT 4 KiB blocks of the reference data from block
# SRC on, to the target and the model at block BLOCK.
put() {
	dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k skip="$2" seek="$1" count="$3" \
		oflag=direct status=none
	dd if=$DATA_DEV of=/tmp/model bs=4k skip="$2" seek="$1" count="$3" \
		conv=notrunc status=none
}
# dirty_in LO HI N: N single-block writes at random blocks of [LO, HI),
# dirty when written (write-back copies them slowly: the default rate
# minimum and writeback_percent 0, so copies run all along); the blocks
# are left in DIRTIED for the bypassed writes to land on.
dirty_in() {
	local i b
	DIRTIED=()
	for ((i = 0; i < $3; i++)); do
		b=$(($1 + RANDOM % ($2 - $1)))
		put $b $((RANDOM % 16384)) 1
		DIRTIED+=("$b")
	done
	[ "$(status_field dmb 4)" -gt 0 ] || fail "nothing dirty after writing $3 blocks"
}
# over_dirtied: new data over each block in DIRTIED.
over_dirtied() {
	local b
	for b in "${DIRTIED[@]}"; do put "$b" $((RANDOM % 16384)) 1; done
}
model_holds() {	# model_holds WHAT: the target reads back as the model
	same_direct /dev/mapper/dmb 0 /tmp/model 0 $((32 * 2048)) ||
		fail "$1: the target differs from the model"
}

log "dirty data: random 4 KiB writes"
dirty_in 0 $region_blocks 256
model_holds "after the random writes"

log "sequential writes past the cutoff, over dirty data"
dirty_in 1024 3072 64
seq0=$(counter bypass_sequential)
put 1024 2048 2048	# 8 MiB in 4 KiB requests: one stream
dirty_in 6144 8192 64
dd if=$DATA_DEV of=/dev/mapper/dmb bs=512k skip=8 seek=48 count=16 oflag=direct status=none
dd if=$DATA_DEV of=/tmp/model bs=512k skip=8 seek=48 count=16 conv=notrunc status=none
[ "$(counter bypass_sequential)" -gt "$seq0" ] || fail "no write was bypassed as sequential"
model_holds "after the sequential writes"

log "write-around writes over dirty data, draining flat out"
dirty_in 0 $region_blocks 64
around0=$(counter bypass_mode)
dmsetup message dmb 0 cache_mode writearound
over_dirtied
[ "$(counter bypass_mode)" -gt "$around0" ] || fail "no write went around the cache"
model_holds "after the write-around writes"
dmsetup message dmb 0 cache_mode writeback

log "congested writes over dirty data"
dirty_in 0 $region_blocks 64
cong0=$(counter bypass_congested)
dmsetup message dmb 0 congested_write_threshold_us 1
over_dirtied
[ "$(counter bypass_congested)" -gt "$cong0" ] || fail "no write was bypassed as congested"
dmsetup message dmb 0 congested_write_threshold_us 20000
model_holds "after the congested writes"

log "discards over dirty data"
for mib in 3 9 17 30; do
	dirty_in $((mib * 256)) $((mib * 256 + 256)) 16
	blkdiscard -o $((mib << 20)) -l $((1 << 20)) /dev/mapper/dmb
	dd if=/dev/zero of=/tmp/model bs=1M seek=$mib count=1 conv=notrunc status=none
done
model_holds "after the discards"

log "flush: the origin alone holds the model"
dmsetup message dmb 0 flush
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
log "written back: $(counter written_back) sectors; bypassed: sequential $(counter bypass_sequential), mode $(counter bypass_mode), congested $(counter bypass_congested)"
dmsetup remove dmb
same_data $ORIGIN_DEV 0 /tmp/model 0 $((32 * 2048)) || fail "the origin differs from the model after the flush"
bcache_check -q $CACHE_DEV || fail "bcache_check after the test"
rm -f /tmp/model
exit 0
