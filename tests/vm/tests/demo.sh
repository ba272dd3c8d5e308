# The demo (make demo): a bcache device on an all-zero cache (which the
# target formats), its table and status, data written through and read
# back from the cache (the status counts the hits), the same after the
# device is removed and created again, write-back (dirty data, then a
# flush message writing it back), and the offline checker on the cache.
# Also a test: it fails if any step fails.
. /tests/lib.sh
say() { printf '\n### %s\n' "$*"; }
counter_of() { dmsetup status "$1" | tr ' ' '\n' | grep -A1 -x "$2" | tail -n 1; }
# hits_only MIB: the MiB just read came from the cache, every request of
# it (same_direct reads 1 MiB requests).
hits_only() {
	local hits misses
	hits=$(status_field demo 5) misses=$(status_field demo 6)
	echo "read hits: $hits, read misses: $misses"
	[ "$hits" -ge "$1" ] || fail "$hits read hits, want at least $1"
	expect_eq "read misses" "$misses" 0
}
load_module
wipe_head $ORIGIN_DEV
wipe_head $CACHE_DEV

say "dm-bcache $(dmsetup targets | awk '$1 == "bcache" { print $2 }') on Linux $(uname -r)"
len=$((256 * 2048))
# sequential_cutoff 0: cache even these large sequential writes.
table="0 $len bcache $CACHE_DEV $ORIGIN_DEV 2 sequential_cutoff 0"
echo "# dmsetup create demo --table \"$table\""
dmsetup create demo --table "$table"
echo "# dmsetup table demo";  dmsetup table demo
echo "# dmsetup status demo"; dmsetup status demo

say "write 64 MiB of random data through /dev/mapper/demo at 1 MiB"
write_data /dev/mapper/demo 1 64
dmsetup message demo 0 clear_stats
same_direct /dev/mapper/demo 2048 $DATA_DEV 0 $((64 * 2048)) || fail "read back differs"
echo "read back: identical"
same_data $ORIGIN_DEV 2048 $DATA_DEV 0 $((64 * 2048)) || fail "the origin differs"
echo "origin at the same offset: identical"
echo "# dmsetup status demo"; dmsetup status demo
hits_only 64
dmsetup remove demo

say "removed and created again: the index is read back from the cache"
dmsetup create demo --table "$table"
same_direct /dev/mapper/demo 2048 $DATA_DEV 0 $((64 * 2048)) || fail "read back differs"
echo "read back: identical"
hits_only 64
dmsetup remove demo

say "write-back: writes stay in the cache (dirty) until written back"
wb="0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
echo "# dmsetup create demo --table \"$wb\""
dmsetup create demo --table "$wb"
dd if=/dev/zero of=$ORIGIN_DEV bs=1M seek=100 count=16 oflag=direct status=none
write_data /dev/mapper/demo 100 16
dirty=$(status_field demo 4)
echo "dirty sectors: $dirty"
expect_eq "dirty sectors" "$dirty" $((16 * 2048))
same_direct /dev/mapper/demo $((100 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "read back differs"
echo "read back: identical"
if same_data $ORIGIN_DEV $((100 * 2048)) $DATA_DEV 0 $((16 * 2048)) >/dev/null 2>&1; then
	fail "the origin has the data already"
fi
echo "the origin does not have it yet"
echo "# dmsetup message demo 0 flush"; dmsetup message demo 0 flush
echo "dirty sectors: $(status_field demo 4), written back: $(counter_of demo written_back)"
same_data $ORIGIN_DEV $((100 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "the origin differs after the flush"
echo "origin after the flush: identical"
expect_eq "dirty sectors after the flush" "$(status_field demo 4)" 0
dmsetup remove demo

say "the cache the target formatted, checked offline"
echo "# bcache_check $CACHE_DEV"; bcache_check $CACHE_DEV

say "an origin formatted by make-bcache -B (data starts at sector 16)"
make-bcache -B $ORIGIN_DEV >/dev/null
bcache_probe $ORIGIN_DEV
usable=$(($(blockdev --getsz $ORIGIN_DEV) - 16))
dmsetup create demo --table "0 $usable bcache $CACHE_DEV $ORIGIN_DEV 0"
echo "# dmsetup status demo"; dmsetup status demo
write_data /dev/mapper/demo 0 16
same_data $ORIGIN_DEV 16 $DATA_DEV 0 $((16 * 2048)) || fail "the origin at sector 16 differs"
echo "origin at sector 16 holds the data: identical"
dmsetup remove demo
wipe_head $ORIGIN_DEV
say "demo finished"
