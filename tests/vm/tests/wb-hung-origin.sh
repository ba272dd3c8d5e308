# A write-back copy stuck on a hung origin holds up only its own range.
# The origin is a dm device, suspended once one dirty MiB is in the
# cache; the copy of that MiB then hangs on its origin write.  Meanwhile
# 96 MiB of write-back writes elsewhere need refills (a refill waits for
# the cache I/O that can still address the buckets it reclaims): they
# must all complete, within 60 s, while the origin stays suspended.  (They
# are not fsynced: a flush must reach the origin, and waits for it.)
# Then the origin resumes, a flush copies everything, and the table and
# the origin alone read back what was written.
. /tests/lib.sh
load_module
osec=$(sectors $ORIGIN_DEV)
len=$((448 * 2048))
dmsetup create odev --table "0 $osec linear $ORIGIN_DEV 0"
dmsetup create dmb --table "0 $len bcache $CACHE_DEV /dev/mapper/odev 9 writeback $NOBYPASS writeback_delay 5"
# Dirty first (a fresh set bypasses to the origin until its first refill),
# then the origin hangs before writeback_delay runs out.
write_dirty /dev/mapper/dmb 0 1
dmsetup suspend odev
reclaims0=$(counter reclaims)
sleep 7		# past writeback_delay: the copy has started, and hangs
expect_eq "written back with the origin suspended" "$(counter written_back)" 0

start=$(date +%s)
# No fsync: a flush must reach the origin, and the origin hangs.
(for i in 0 1 2 3 4 5; do
	dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M seek=$((64 + 16 * i)) count=16 \
		oflag=direct status=none || exit 1
done) &
wpid=$!
while kill -0 $wpid 2>/dev/null && [ $(($(date +%s) - start)) -lt 60 ]; do
	sleep 1
done
if kill -0 $wpid 2>/dev/null; then
	log "status: $(dmsetup status dmb)"
	dmsetup resume odev
	wait $wpid
	fail "write-back writes stalled behind a copy stuck on the hung origin"
fi
wait $wpid || fail "write-back writes failed"
log "96 MiB written in $(($(date +%s) - start)) s with the origin suspended; reclaims $(counter reclaims) (from $reclaims0)"
[ "$(counter reclaims)" -gt "$reclaims0" ] || fail "no refill ran during the writes: the test proves nothing"
expect_eq "written back while suspended" "$(counter written_back)" 0
expect_eq "writes sent to the hung origin" "$(counter bypass_nospace)" 0

dmsetup resume odev
dmsetup message dmb 0 flush || fail "flush after the origin resumed"
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
# all_written DEV WHOSE: MiB 0 and MiB 64-159 of DEV are what was written.
all_written() {
	local i
	same_direct "$1" 0 $DATA_DEV 0 2048 || fail "$2 MiB 0 differs"
	for i in 0 1 2 3 4 5; do
		same_direct "$1" $(((64 + 16 * i) * 2048)) $DATA_DEV 0 $((16 * 2048)) ||
			fail "$2 MiB $((64 + 16 * i)) differs"
	done
}
all_written /dev/mapper/dmb "the table's"
dmsetup remove dmb
all_written /dev/mapper/odev "the origin's"
dmsetup remove odev
bcache_check -q $CACHE_DEV || fail "bcache_check"
exit 0
