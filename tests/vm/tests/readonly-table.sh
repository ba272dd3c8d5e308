# A table loaded read-only (dmsetup --readonly, lvm's read-only
# activation) writes nothing: opening a cache would (formatting a blank
# one, creating a make-bcache one's set, replaying and committing the
# journal, recording the attachment on a backing origin), so it is
# refused with its reason, and both devices keep every byte, whether
# the cache is blank, holds dirty data, or fronts a backing origin.
. /tests/lib.sh
load_module
len=$((256 * 2048))
# The metadata lives in the first MiBs of the cache; an origin superblock
# at sector 8.
refused() {	# refused WHAT TABLE
	dd if=$CACHE_DEV of=/tmp/cache.before bs=1M count=32 status=none
	dd if=$ORIGIN_DEV of=/tmp/origin.before bs=1M count=32 status=none
	dmsetup create --readonly dmb --table "$2" 2>/dev/null &&
		fail "$1: a read-only table was created"
	dmesg | tail -n 3 | grep 'Read-only tables are not supported' >/dev/null ||
		fail "$1: the refusal gave no reason: $(dmesg | tail -n 3)"
	dd if=$CACHE_DEV bs=1M count=32 status=none | cmp -s - /tmp/cache.before || fail "$1: the cache changed"
	dd if=$ORIGIN_DEV bs=1M count=32 status=none | cmp -s - /tmp/origin.before || fail "$1: the origin changed"
	rm -f /tmp/cache.before /tmp/origin.before
}

wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
refused "blank cache" "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"

log "a cache holding dirty data"
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 7 writeback $NOBYPASS"
write_dirty /dev/mapper/dmb 0 2
dmsetup remove dmb
refused "dirty cache" "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"

log "a make-bcache pair"
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
make-bcache --wipe-bcache -C $CACHE_DEV -B $ORIGIN_DEV >/dev/null 2>&1 || fail "make-bcache"
refused "make-bcache pair" "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
exit 0
