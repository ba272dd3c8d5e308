# A write over a write-back copy in flight waits for that copy alone.
# The origin is dm-delay (writes and flushes held 6 s), the cache a dm
# device with an error hole where one clean block's data lies.  A flush
# message copies the dirty MiB to the slow origin; while that copy is in
# flight, a write over it is parked (status "deferred"), and a read of the
# clean block, whose cache read fails, is retried from the origin without
# waiting behind the parked write: well within the copy's time.  The
# parked write finishes after the copy, so the origin ends with the new
# data, not the copy's older data, and so does the table.
. /tests/lib.sh
load_module
csec=$(sectors $CACHE_DEV)
osec=$(sectors $ORIGIN_DEV)
len=$((64 * 2048))
dmsetup create cdev --table "0 $csec linear $CACHE_DEV 0"
dmsetup create odev --table "0 $osec linear $ORIGIN_DEV 0"
table() { echo "0 $len bcache /dev/mapper/cdev /dev/mapper/odev 9 $1 $NOBYPASS writeback_delay 3600"; }

# Clean MiB 20-23 first (a switch to writethrough would drain), then one
# dirty MiB at 8; both are DATA_DEV's MiB 0-3 and 0.
dmsetup create dmb --table "$(table writethrough)"
write_data /dev/mapper/dmb 20 4
dmsetup message dmb 0 cache_mode writeback
write_dirty /dev/mapper/dmb 8 1
dmsetup remove dmb

# The cache sector where a clean extent in MiB 20-23 starts.
read -r cstart cptr <<<"$(bcache_dump --json /dev/mapper/cdev |
	grep -oE '"offset":[0-9]+,"size":[0-9]+,"dirty":false,"ptrs":\[\{"dev":0,"offset":[0-9]+' |
	sed -E 's/"offset":([0-9]+),"size":([0-9]+),.*"offset":([0-9]+)$/\1 \2 \3/' |
	awk -v lo=$((20 * 2048)) -v hi=$((24 * 2048)) '$2 >= 8 && $1 - $2 >= lo && $1 - $2 < hi { print $1 - $2, $3; exit }')"
[ -n "$cptr" ] || fail "no clean extent found in the dump"
log "clean extent at $cstart, cache sector $cptr"
dmsetup suspend cdev
dmsetup reload cdev --table "0 $cptr linear $CACHE_DEV 0
$cptr 8 error
$((cptr + 8)) $((csec - cptr - 8)) linear $CACHE_DEV $((cptr + 8))"
dmsetup resume cdev
dmsetup suspend odev
dmsetup reload odev --table "0 $osec delay $ORIGIN_DEV 0 0 $ORIGIN_DEV 0 6000"
dmsetup resume odev

dmsetup create dmb --table "$(table writeback)"
expect_eq "dirty at the start" "$(status_field dmb 4)" 2048
dmsetup message dmb 0 flush &
fpid=$!
# The copy's origin write is held once dm-delay counts a write it holds
# (status: start length delay reads writes [flushes]); a fixed sleep was
# too short on a slow host.
odev_writing() {
	local held
	held=$(dmsetup status odev | awk '{ print $5 }')
	[ "${held:-0}" -ge 1 ]
}
wait_for "the copy's write to the origin" odev_writing
# 4 KiB of DATA_DEV's MiB 5 over the dirty MiB's second block.
dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k skip=$((5 * 256)) seek=$((8 * 256 + 1)) \
	count=1 oflag=direct status=none &
wpid=$!
parked() { [ "$(counter deferred)" -ge 1 ]; }
wait_for "the write over the copy to be parked" parked
kill -0 $wpid 2>/dev/null || fail "the write over a copy in flight completed before the copy"

ms_now() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
t0=$(ms_now)
same_direct /dev/mapper/dmb "$cstart" $DATA_DEV $((cstart - 20 * 2048)) 8 ||
	fail "the clean block behind the hole reads wrong"
ms=$(($(ms_now) - t0))
log "failed hit retried from the origin in $ms ms; cache_errors $(counter cache_errors)"
[ "$(counter cache_errors)" -ge 1 ] || fail "the hole was not read (no cache error)"
[ "$ms" -lt 3000 ] || fail "the retried read took $ms ms: it waited behind the parked write"
kill -0 $wpid 2>/dev/null || fail "the parked write completed before the copy"

wait $wpid || fail "the parked write failed"
wait $fpid || fail "the flush message failed"
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
# The table and the origin alone: MiB 8 is DATA_DEV's MiB 0 but for the
# parked write's block.
dd if=$DATA_DEV bs=1M count=1 status=none >/tmp/want
dd if=$DATA_DEV bs=4k skip=$((5 * 256)) count=1 status=none |
	dd of=/tmp/want bs=4k seek=1 conv=notrunc status=none
dd if=/dev/mapper/dmb bs=1M skip=8 count=1 iflag=direct status=none |
	cmp - /tmp/want || fail "the table's MiB 8 is not the parked write over the copied data"
dmsetup remove dmb
dd if=/dev/mapper/odev bs=1M skip=8 count=1 iflag=direct status=none |
	cmp - /tmp/want || fail "the origin's MiB 8 is not the parked write over the copied data"
rm -f /tmp/want
dmsetup remove odev
dmsetup remove cdev
exit 0
