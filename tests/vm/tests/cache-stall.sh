# Foreground I/O does not wait behind metadata work: while random writes
# over more than the cache keep the index worker journalling, committing,
# reclaiming buckets and running gc (gc also requested by message every
# half second), random reads of a warmed range go on being mapped
# directly.  A bio map finds the index locked exclusive waits for it and
# is counted (status counter "lock_waits").  Metadata I/O runs with the
# lock held shared, so few bios may wait: at most 8% of all bios (4.2%
# measured under TCG).  This counts every bio that found the lock taken;
# when map spun for up to 50 us and then deferred the bio, the deferred
# count (1.0 to 2.5%, and 4.7% when commits, reclaims and journal writes
# held the lock exclusive) left out the waits the spin absorbed.  No write is parked ("deferred"): in writethrough no
# write-back copy runs.  The warmed range reads back equal afterwards.  The load is
# bounded by amount, not time: 320 MiB of writes (more than the 256 MiB
# cache, so buckets are reclaimed) and 64 MiB of reads, with a gc message
# every half second while they run and at least 10 in all, each of which
# must have run a pass of its own.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((448 * 2048))
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 7 writethrough $NOBYPASS"
write_data /dev/mapper/dmb 0 32

reclaims0=$(counter reclaims)	# a new set refills at once
common="--filename=/dev/mapper/dmb --ioengine=libaio --direct=1 --bs=4k
	--randrepeat=0 --eta=never"
# shellcheck disable=SC2086
fio --name=writes $common --rw=randwrite --iodepth=8 --offset=64M \
	--size=384M --io_size=320M --output=/tmp/fio-w.out &
wpid=$!
# shellcheck disable=SC2086
fio --name=reads $common --rw=randread --iodepth=8 --offset=0 --size=32M \
	--io_size=64M --output=/tmp/fio-r.out &
rpid=$!
gcs=0
while kill -0 $wpid 2>/dev/null || kill -0 $rpid 2>/dev/null || [ $gcs -lt 10 ]; do
	dmsetup message dmb 0 gc || fail "gc message failed"
	gcs=$((gcs + 1))
	sleep 0.5
done
wait $rpid || { cat /tmp/fio-r.out; fail "fio reads failed"; }
wait $wpid || { cat /tmp/fio-w.out; fail "fio writes failed"; }
dmsetup status dmb

bios=0
for f in 5 6 7 8 9 10; do bios=$((bios + $(status_field dmb $f))); done
waits=$(counter lock_waits)
log "$gcs gc messages; gc_runs $(counter gc_runs) reclaims $(counter reclaims) commits $(counter commits)"
log "$bios bios, $waits waited for the index lock; read hits $(status_field dmb 5) misses $(status_field dmb 6)"
[ "$(counter gc_runs)" -ge "$gcs" ] || fail "$gcs gc messages ran only $(counter gc_runs) passes"
[ "$(counter reclaims)" -gt "$reclaims0" ] || fail "no buckets reclaimed during the load"
[ "$bios" -ge 2000 ] || fail "only $bios bios"
[ $((waits * 100)) -le $((bios * 8)) ] || fail "$waits of $bios bios waited for the index lock (over 8%)"
[ "$(counter deferred)" = 0 ] || fail "$(counter deferred) writes parked with no write-back copy running"
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 $((32 * 2048)) ||
	fail "the warmed range differs"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after the load"
exit 0
