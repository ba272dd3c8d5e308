# Cross-tests with the mainline bcache driver.
#
# 1. A cache and backing pair made by bcache_format registers (the cache
#    as an existing set: our journal, prios, UUID table and root) and
#    serves I/O; after the driver has written data in write-through and
#    then write-back mode and been stopped, bcache_check finds the cache
#    clean and bcache_dump shows the (dirty) keys.
# 2. A pair made by make-bcache, whose set the driver creates itself, gets
#    enough random write-back writes to split the root and a gc pass (node
#    rewrites, freeing keys, stale pointers); bcache_check finds it clean,
#    and bcache_export (our loader, journal replay and gens) rebuilds
#    exactly the bytes the driver served, most of them dirty in the cache.
#    The cache is left on $EXPORT_DEV for the host's tests under
#    ASan/UBSan, and every damage class on copies of it is caught by
#    bcache_check and refused by the constructor (on the first kernel of
#    a make check only: see dmb.repeat in guest-runner.sh).
. /tests/lib.sh
load_module
modprobe bcache

wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
bcache_format --wipe-bcache -b 128k -C $CACHE_DEV -B $ORIGIN_DEV >/tmp/format.out ||
	fail "bcache_format: $(cat /tmp/format.out)"
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
bdev_cset=$(bcache-super-show $ORIGIN_DEV | awk '/^cset.uuid/ { print $2 }')
expect_eq "one set uuid for the pair" "$bdev_cset" "$cset"

log "register the pair bcache_format made"
mainline_register
klog_has 'invalidating existing data' && fail "our set was not recognised as existing"
expect_eq "cache mode" "$(cat /sys/block/bcache0/bcache/cache_mode)" \
	"[writethrough] writeback writearound none"
usable=$(sectors /dev/bcache0)
expect_eq "bcache0 size" "$usable" $(($(sectors $ORIGIN_DEV) - 16))

log "write-through run"
write_data /dev/bcache0 0 32
same_data /dev/bcache0 0 $DATA_DEV 0 $((32 * 2048)) || fail "write-through data differs"
same_data $ORIGIN_DEV 16 $DATA_DEV 0 $((32 * 2048)) || fail "origin lacks write-through data"
mainline_stop $cset
bcache_check $CACHE_DEV >/tmp/check.out || { cat /tmp/check.out; fail "not clean after write-through"; }
grep -Eq 'btree: .* [1-9][0-9]* data' /tmp/check.out || fail "no data buckets: $(cat /tmp/check.out)"

log "write-back run on the same set"
mainline_register
echo writeback >/sys/block/bcache0/bcache/cache_mode
echo 0 >/sys/block/bcache0/bcache/writeback_running
write_data /dev/bcache0 40 16
same_data /dev/bcache0 $((40 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "write-back data differs"
expect_eq "backing state" "$(cat /sys/block/bcache0/bcache/state)" dirty
mainline_stop $cset
bcache_check $CACHE_DEV >/tmp/check.out || { cat /tmp/check.out; fail "not clean after write-back"; }
cat /tmp/check.out
grep -Eq ' [1-9][0-9]* dirty$' /tmp/check.out || fail "no dirty buckets: $(cat /tmp/check.out)"
bcache_dump $CACHE_DEV >/tmp/dump.out || fail "bcache_dump failed"
keys=$(grep -c '^    key 0:' /tmp/dump.out || true)
dirty=$(grep -c '^    key 0:.* dirty ptr' /tmp/dump.out || true)
log "dump: $keys leaf keys, $dirty dirty"
[ "$keys" -gt 0 ] || fail "bcache_dump shows no keys"
[ "$dirty" -gt 0 ] || fail "bcache_dump shows no dirty keys"
bcache_dump --json $CACHE_DEV | grep -q '"dirty":true' || fail "JSON dump shows no dirty key"

log "make-bcache pair: the driver creates the set; random writes, gc"
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
make-bcache -C -b 128k $CACHE_DEV -B $ORIGIN_DEV >/dev/null
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
mainline_register
echo writeback >/sys/block/bcache0/bcache/cache_mode
echo 0 >/sys/block/bcache0/bcache/writeback_running
fio --name=split --filename=/dev/bcache0 --rw=randwrite --bs=4k \
	--size=160M --io_size=96M --direct=1 --ioengine=psync \
	--randrepeat=1 --eta=never --output=/tmp/fio.out || { cat /tmp/fio.out; fail "fio"; }
# The pass asked for must run: the driver's "seconds since the last gc"
# drops to 0 or 1 (the writes took longer, and 2 s pass first).
gc_last=/sys/fs/bcache/$cset/internal/btree_gc_last_sec
sleep 2
log "last gc before the trigger: $(cat $gc_last) s ago"
echo 1 >/sys/fs/bcache/$cset/internal/trigger_gc
gc_recent() { [ "$(cat $gc_last)" -le 1 ]; }
wait_for "the driver's gc pass" gc_recent
log "tree depth $(cat /sys/fs/bcache/$cset/tree_depth), dirty $(cat /sys/block/bcache0/bcache/dirty_data)"
# What the driver serves, dirty data included, for bcache_export below.
sync
echo 3 >/proc/sys/vm/drop_caches
dd if=/dev/bcache0 of=/tmp/mainline.img bs=1M count=160 iflag=direct status=none
mainline_stop $cset
bcache_check $CACHE_DEV >/tmp/check.out || { cat /tmp/check.out; fail "not clean after random writes and gc"; }
cat /tmp/check.out
grep -q 'btree: root level [1-9]' /tmp/check.out || fail "the root did not split: $(cat /tmp/check.out)"

log "bcache_export rebuilds the device from our reading of the cache"
bcache_export --sectors $((160 * 2048)) $CACHE_DEV $ORIGIN_DEV /tmp/ours.img
cmp /tmp/mainline.img /tmp/ours.img ||
	fail "bcache_export differs from what the mainline driver served"
cmp -s -n $((160 << 20)) -i 8192:0 $ORIGIN_DEV /tmp/mainline.img &&
	fail "the origin alone holds the data: the comparison proves nothing"
rm -f /tmp/mainline.img /tmp/ours.img

log "export the mainline-written cache for the host's tests"
dd if=$CACHE_DEV of=$EXPORT_DEV bs=1M oflag=direct status=none

if [ "${DMB_REPEAT:-0}" = 1 ]; then
	# The checker is the same program on every kernel, and cache-format
	# has this kernel's constructor refuse every class.
	log "damage classes skipped: checked on the first kernel (dmb.repeat=1)"
	exit 0
fi
log "damage classes on copies of the mainline-written cache"
# Each copy is a throw-away snapshot of the exported cache (non-persistent,
# its COW on the cache disk): the whole cache, since metadata can sit in
# any bucket after gc (bcache_damage checks the result is sound before
# damaging it), without copying 256 MiB per class.
modprobe dm-snapshot
restore() {
	! dmsetup info dmgsnap >/dev/null 2>&1 || dmsetup remove dmgsnap
	dmsetup create dmgsnap --table "0 $(sectors $EXPORT_DEV) snapshot $EXPORT_DEV $CACHE_DEV N 8"
}
damage_all restore /dev/mapper/dmgsnap
dmsetup remove dmgsnap
# The classes damaged copies only.
bcache_check -q $EXPORT_DEV || fail "the exported cache changed"
exit 0
