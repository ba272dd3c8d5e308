# A FUA write the index cannot journal must fail.  The cache holds dirty
# data (so when its metadata fails the set stays trusted for the next
# table; the origin fails writes to that range, so write-back cannot
# clean it) and clean data on another range.  The cache device then fails
# every I/O, and a write-through FUA write goes over the clean range: its
# cache piece fails, the journal entry that would invalidate the range
# fails, the cache goes to fail.  The write must not succeed: the next
# table opens the same journal and serves the clean data it held.
# Whatever the write returned, the next table must read the range as
# the last write that succeeded left it.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
csz=$(sectors $CACHE_DEV)
osz=$((448 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=32 oflag=direct status=none
dmsetup create c --table "0 $csz linear $CACHE_DEV 0"
dmsetup create orig --table "0 $((8 * 2048)) linear $ORIGIN_DEV 0
$((8 * 2048)) $((4 * 2048)) error
$((12 * 2048)) $((osz - 12 * 2048)) linear $ORIGIN_DEV $((12 * 2048))"
table="0 $osz bcache /dev/mapper/c /dev/mapper/orig 9 writeback $NOBYPASS writeback_delay 3600"
dmsetup create dmb --table "$table"
write_dirty /dev/mapper/dmb 8 4

log "clean data at 16 MiB, journalled"
dmsetup message dmb 0 cache_mode writethrough
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=30 seek=16 count=1 oflag=direct,dsync status=none ||
	fail "the write-through write of the clean range"
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV $((30 * 2048)) 2048 || fail "clean range reads back wrong"
[ "$(status_field dmb 4)" -ge $((4 * 2048)) ] || fail "the dirty data was cleaned: $(status_field dmb 4)"

log "the cache device fails; a FUA write over the clean range"
dmsetup suspend c
dmsetup reload c --table "0 $csz error"
dmsetup resume c
if dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=40 seek=16 count=1 oflag=direct,dsync status=none 2>/dev/null; then
	want=40
	log "the FUA write succeeded"
else
	want=30
	log "the FUA write failed"
fi
expect_eq "state" "$(status_field dmb 13)" fail
dmsetup remove dmb

log "the next table reads what the last successful write left"
dmsetup suspend c
dmsetup reload c --table "0 $csz linear $CACHE_DEV 0"
dmsetup resume c
dmsetup create dmb --table "$table"
same_direct /dev/mapper/dmb $((16 * 2048)) $DATA_DEV $((want * 2048)) 2048 ||
	fail "the range reads back other than the last successful write (MiB $want of the data disk)"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "the dirty data is gone"
dmsetup remove dmb
dmsetup remove c
dmsetup remove orig
exit 0
