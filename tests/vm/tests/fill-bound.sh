# Read-miss fills are bounded in memory: the cache is dm-delay (its
# writes held 2 s), so fills pile up while 1 MiB random reads at queue
# depth 32 miss over 64 MiB.  Each fill holds its pages until it is
# indexed; all of a cache's fills hold at most 16 MiB, so at most 16
# 1 MiB fills are ever pending (status fills_pending, sampled every
# 0.1 s), and at least 8 are (the bound was reached: the test is not
# vacuous).  Misses past the bound are served but not cached.  Every read
# returns the origin's data, and once the cache is fast again the misses
# fill and read back equal from the cache.
. /tests/lib.sh
load_module
csec=$(sectors $CACHE_DEV)
len=$((128 * 2048))
write_data $ORIGIN_DEV 0 64
dmsetup create cdev --table "0 $csec linear $CACHE_DEV 0"
dmsetup create dmb --table "0 $len bcache /dev/mapper/cdev $ORIGIN_DEV 7 writethrough $NOBYPASS"
dmsetup suspend cdev
dmsetup reload cdev --table "0 $csec delay $CACHE_DEV 0 0 $CACHE_DEV 0 2000"
dmsetup resume cdev

fio --name=misses --filename=/dev/mapper/dmb --ioengine=libaio --direct=1 \
	--rw=randread --bs=1M --iodepth=32 --size=64M --io_size=64M \
	--norandommap --randrepeat=0 --eta=never --output=/tmp/fio.out &
fpid=$!
max=0
while kill -0 $fpid 2>/dev/null; do
	n=$(counter fills_pending)
	[ "$n" -gt "$max" ] && max=$n
	sleep 0.1
done
wait $fpid || { cat /tmp/fio.out; fail "fio failed"; }
log "at most $max fills pending; misses $(status_field dmb 6)"
[ "$max" -le 16 ] || fail "$max fills pending at once: more than 16 MiB of fills"
[ "$max" -ge 8 ] || fail "only $max fills pending at once: the bound was never approached"
wait_fills
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 $((64 * 2048)) || fail "the reads differ from the origin's data"

dmsetup suspend cdev
dmsetup reload cdev --table "0 $csec linear $CACHE_DEV 0"
dmsetup resume cdev
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 $((64 * 2048)) || fail "the second read differs"
wait_fills
hits=$(status_field dmb 5)
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 $((64 * 2048)) || fail "the third read differs"
log "read hits before the third read $hits, after $(status_field dmb 5)"
[ "$(status_field dmb 5)" -gt "$hits" ] || fail "nothing was cached once the cache was fast"
dmsetup remove dmb
dmsetup remove cdev
bcache_check -q $CACHE_DEV || fail "bcache_check"
exit 0
