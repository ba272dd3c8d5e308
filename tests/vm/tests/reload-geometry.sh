# A reload onto the live index (the table it replaces has the cache open)
# is held to the same geometry rules as a first open: the identical
# table line keeps the logical block size the cache's block size gave
# it, and a bucket_size other than the superblock's is refused, the
# live table left as it was.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
bcache_format -q -b 128k -w 4k -C $CACHE_DEV || fail "bcache_format"
len=$((256 * 2048))
line="0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
dmsetup create dmb --table "$line"
expect_eq "logical block size, first open" "$(blockdev --getss /dev/mapper/dmb)" 4096
write_data /dev/mapper/dmb 0 1

dmsetup reload dmb --table "$line"
dmsetup resume dmb
expect_eq "logical block size after reloading the same line" "$(blockdev --getss /dev/mapper/dmb)" 4096
expect_eq "status block size after the reload" "$(status_field dmb 1)" 8

out=$(dmsetup reload dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 2 bucket_size 512" 2>&1) &&
	fail "a reload with another bucket_size was accepted"
dmesg | tail -n 5 | grep 'bucket_size differs from the cache superblock' >/dev/null ||
	fail "the refusal did not name bucket_size: $(dmesg | tail -n 3)"
out=$(dmsetup reload dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 2 block_size 1" 2>&1) &&
	fail "a reload with a block_size smaller than the cache's was accepted"
dmsetup resume dmb
expect_eq "logical block size after the refusals" "$(blockdev --getss /dev/mapper/dmb)" 4096
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 2048 || fail "data after the reloads"
dmsetup remove dmb
exit 0
