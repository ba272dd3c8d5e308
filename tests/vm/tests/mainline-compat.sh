# Caches shared with the mainline bcache driver, both ways, origin with a
# backing superblock (make-bcache -B).
#
# 1. dm-bcache populates the cache (write-through); the constructor has
#    recorded the attachment in the backing superblock (the set's UUID,
#    state clean) as the driver would.  The origin's data area is then
#    zeroed behind everyone's back, so only the cache holds the data: the
#    driver registers the pair and serves exactly that data through
#    /dev/bcache0, counting cache hits.
# 2. The driver populates a make-bcache pair (write-back, then written
#    back until clean) and stops; the origin's data area is zeroed again;
#    dm-bcache takes the pair and serves the driver's data as hits only.
# bcache_check is clean after every step.
. /tests/lib.sh
load_module
modprobe bcache
mib=32

log "1: dm-bcache writes, the mainline driver serves"
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
make-bcache -B $ORIGIN_DEV >/dev/null
usable=$(($(sectors $ORIGIN_DEV) - 16))
dmsetup create dmb --table "0 $usable bcache $CACHE_DEV $ORIGIN_DEV 7 writethrough $NOBYPASS"
write_data /dev/mapper/dmb 8 $mib
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((mib * 2048)) ||
	fail "data read back through the target differs"
expect_eq "misses reading back" "$(status_field dmb 6)" 0
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after dm-bcache wrote"
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
bcache-super-show $ORIGIN_DEV >/tmp/bsb.out
grep -Eq "^cset.uuid[[:space:]]+$cset" /tmp/bsb.out || { cat /tmp/bsb.out; fail "backing superblock does not name the set"; }
grep -Eq '^dev.data.cache_state[[:space:]]+1 \[clean\]' /tmp/bsb.out || { cat /tmp/bsb.out; fail "backing state not clean"; }
# Only the cache holds the data now.
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=$mib oflag=seek_bytes,direct \
	seek=$((16 * 512 + 8 * 1048576)) status=none
mainline_register
klog_has 'invalidating existing data' && fail "the driver did not recognise our set"
echo 0 >/sys/block/bcache0/bcache/sequential_cutoff
echo 0 >/sys/fs/bcache/$cset/congested_read_threshold_us
echo 0 >/sys/fs/bcache/$cset/congested_write_threshold_us
same_direct /dev/bcache0 $((8 * 2048)) $DATA_DEV 0 $((mib * 2048)) ||
	fail "the mainline driver serves other bytes than dm-bcache cached"
stats=/sys/block/bcache0/bcache/stats_total
wait_for "the driver's counters" sh -c "[ \"\$(cat $stats/cache_hits)\" != 0 ]"
log "mainline: hits $(cat $stats/cache_hits), misses $(cat $stats/cache_misses)"
[ "$(cat $stats/cache_hits)" -ge $mib ] || fail "few mainline cache hits"
mainline_stop $cset
bcache_check -q $CACHE_DEV || fail "bcache_check after the driver read"

log "2: the mainline driver writes, dm-bcache serves"
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
make-bcache -C -b 128k $CACHE_DEV -B $ORIGIN_DEV >/dev/null
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
mainline_register
expect_eq "mainline mode" "$(cat /sys/block/bcache0/bcache/cache_mode)" \
	"[writethrough] writeback writearound none"
# Cache every write (no sequential or congestion bypass), in write-back,
# which the driver caches whole (in write-through it leaves out some of
# these 1 MiB writes); then let it write back until clean, as a takeover
# from a clean cache needs.
echo 0 >/sys/block/bcache0/bcache/sequential_cutoff
echo 0 >/sys/fs/bcache/$cset/congested_read_threshold_us
echo 0 >/sys/fs/bcache/$cset/congested_write_threshold_us
echo writeback >/sys/block/bcache0/bcache/cache_mode
write_data /dev/bcache0 8 $mib
echo 0 >/sys/block/bcache0/bcache/writeback_percent
echo 0 >/sys/block/bcache0/bcache/writeback_delay
echo 100000 >/sys/block/bcache0/bcache/writeback_rate_minimum
echo 1 >/sys/block/bcache0/bcache/writeback_running
wait_for "the driver to write back" \
	sh -c '[ "$(cat /sys/block/bcache0/bcache/state)" = clean ]'
echo writethrough >/sys/block/bcache0/bcache/cache_mode
mainline_stop $cset
bcache_check -q $CACHE_DEV || fail "bcache_check after the driver wrote"
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=$mib oflag=seek_bytes,direct \
	seek=$((16 * 512 + 8 * 1048576)) status=none
# The driver releases its claim on the devices asynchronously.
for i in $(seq 50); do
	dmsetup create dmb --table "0 $usable bcache $CACHE_DEV $ORIGIN_DEV 6 $NOBYPASS" 2>/dev/null && break
	sleep 0.2
done
dmsetup info dmb >/dev/null || fail "could not create the target on the driver's pair"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((mib * 2048)) ||
	fail "dm-bcache serves other bytes than the driver cached"
log "dm-bcache on the driver's cache: hits $(status_field dmb 5), misses $(status_field dmb 6)"
[ "$(status_field dmb 5)" -ge $((mib / 4)) ] || fail "few hits"
expect_eq "misses on the driver's data" "$(status_field dmb 6)" 0
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after dm-bcache read"
wipe_head $ORIGIN_DEV
exit 0
