# The 4 KiB block path, with data: block_size 8 on a cache the target
# formats gives a cache of 4 KiB blocks and a target whose logical block
# size is 4 KiB.  Write-through data reads back as hits only; fio
# (4k/16k/64k random writes, verified) over 64 MiB
# in write-back; dirty data reads back, a flush writes it to the origin,
# which then holds it alone; bcache_check clean, the superblock says 8.
. /tests/lib.sh
load_module
len=$((128 * 2048))
table() { echo "0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 $1 block_size 8 $NOBYPASS"; }
dmsetup create dmb --table "$(table writethrough)"
dm=$(dmsetup info -c -o blkdevname --noheadings dmb)
expect_eq "logical block size" "$(cat /sys/block/$dm/queue/logical_block_size)" 4096
expect_eq "status block size" "$(status_field dmb 1)" 8
write_data /dev/mapper/dmb 4 32
dmsetup message dmb 0 clear_stats
same_direct /dev/mapper/dmb $((4 * 2048)) $DATA_DEV 0 $((32 * 2048)) || fail "write-through data differs"
expect_eq "misses reading it back" "$(status_field dmb 6)" 0
[ "$(status_field dmb 5)" -ge 32 ] || fail "it did not read back as hits"
same_data $ORIGIN_DEV $((4 * 2048)) $DATA_DEV 0 $((32 * 2048)) || fail "the origin lacks the write-through data"
dmsetup remove dmb
bcache-super-show $CACHE_DEV | grep -Eq '^dev.sectors_per_block[[:space:]]+8$' ||
	fail "cache block size: $(bcache-super-show $CACHE_DEV | grep -i block)"

dmsetup create dmb --table "$(table writeback)"
# A 4 KiB device: 512-byte direct I/O is refused by the block layer.
dd if=$DATA_DEV of=/dev/mapper/dmb bs=512 count=1 seek=1 oflag=direct status=none 2>/dev/null &&
	fail "a 512-byte direct write was accepted by a 4 KiB device"
fio --filename=/dev/mapper/dmb --direct=1 --ioengine=libaio --iodepth=8 \
	--offset=40M --size=64M --bssplit=4k/50:16k/30:64k/20 --randrepeat=1 \
	--eta=never --name=wb --rw=randwrite --verify=crc32c --verify_fatal=1 \
	--output=/tmp/fio-4k.out || { cat /tmp/fio-4k.out; fail "fio write-back verify failed"; }
[ "$(status_field dmb 4)" -gt 0 ] || fail "nothing dirty after the write-back run"
dmsetup message dmb 0 flush
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check"
fio --filename=$ORIGIN_DEV --direct=1 --ioengine=libaio --iodepth=8 \
	--offset=40M --size=64M --bssplit=4k/50:16k/30:64k/20 --randrepeat=1 \
	--eta=never --name=wb --rw=randwrite --verify=crc32c --verify_only \
	--verify_fatal=1 --output=/tmp/fio-4k-o.out ||
	{ cat /tmp/fio-4k-o.out; fail "the origin alone does not verify after the flush"; }
exit 0
