# The replacement policies the superblock names, in the kernel: caches
# formatted with fifo and with random (bcache_format
# --cache_replacement_policy) take twice the data they hold, so buckets
# are reclaimed by that policy (fio's verify reads must miss: data was
# evicted); fio verifies every block written, the
# policy stays in the superblock, bcache_check is clean, and after the
# table is re-created the region verifies again.
. /tests/lib.sh
load_module
len=$((160 * 2048))
# A 64 MiB cache: 1024 buckets of 64 KiB.
dmsetup create csmall --table "0 $((64 * 2048)) linear $CACHE_DEV 0"
fio_args="--filename=/dev/mapper/dmb --direct=1 --ioengine=libaio --iodepth=8
	--size=128M --bssplit=4k/50:16k/30:64k/20 --randrepeat=1 --eta=never
	--name=fill --rw=randwrite --verify=crc32c --verify_fatal=1"
for policy in fifo random; do
	bcache_format --wipe-bcache -b 64k --cache_replacement_policy $policy \
		-C /dev/mapper/csmall >/dev/null
	table="0 $len bcache /dev/mapper/csmall $ORIGIN_DEV 7 writethrough $NOBYPASS"
	dmsetup create dmb --table "$table"
	# (A new set refills at once: count only what the load reclaimed.)
	reclaims0=$(counter reclaims)
	# shellcheck disable=SC2086
	fio $fio_args --output=/tmp/fio-$policy.out ||
		{ cat /tmp/fio-$policy.out; fail "$policy: fio write+verify failed"; }
	grep -q 'err= 0' /tmp/fio-$policy.out || { cat /tmp/fio-$policy.out; fail "$policy: fio errors"; }
	reclaims=$(($(counter reclaims) - reclaims0))
	misses=$(status_field dmb 6)
	log "$policy: $reclaims reclaims, hits $(status_field dmb 5), misses $misses"
	[ "$reclaims" -gt 0 ] || fail "$policy: nothing was reclaimed"
	# Every write was cached (writethrough, no bypass): a verify read
	# that misses found its data evicted.
	[ "$misses" -gt 0 ] || fail "$policy: no verify read missed: nothing was evicted"
	dmsetup remove dmb
	bcache_check -q /dev/mapper/csmall || fail "$policy: bcache_check"
	bcache-super-show /dev/mapper/csmall | grep -Eiq "replacement.*$policy" ||
		fail "$policy: the superblock lost its policy: $(bcache-super-show /dev/mapper/csmall | grep -i replacement)"
	dmsetup create dmb --table "$table"
	# shellcheck disable=SC2086
	fio $fio_args --verify_only --output=/tmp/fio-$policy-v.out ||
		{ cat /tmp/fio-$policy-v.out; fail "$policy: verify after re-creating failed"; }
	dmsetup remove dmb
done
dmsetup remove csmall
exit 0
