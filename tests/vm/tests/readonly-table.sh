# A table loaded read-only (dmsetup --readonly, lvm's read-only
# activation) writes nothing to either device.  Where opening the cache
# would have to write (formatting a blank one, creating a make-bcache
# one's set) it is refused with its reason.  Over a cache holding dirty
# data it runs in state ro: the dirty data reads back from the cache (the
# origin never had it), writes, discards and the messages that write are
# refused, suspend, resume and a reload work, a read-write table on the
# same cache is refused while it lives, and both devices keep every byte.
. /tests/lib.sh
load_module
len=$((256 * 2048))
# The whole cache, and the origin's first 64 MiB (its superblock and all
# the data this test writes): cmp, since hashing is slow under TCG.
snap() {
	dd if=$CACHE_DEV of=/tmp/cache.before bs=1M iflag=direct status=none
	dd if=$ORIGIN_DEV of=/tmp/origin.before bs=1M count=64 iflag=direct status=none
}
unchanged() {	# unchanged WHAT
	dd if=$CACHE_DEV bs=1M iflag=direct status=none |
		cmp -s - /tmp/cache.before || fail "$1: the cache changed"
	dd if=$ORIGIN_DEV bs=1M count=64 iflag=direct status=none |
		cmp -s - /tmp/origin.before || fail "$1: the origin changed"
}
refused() {	# refused WHAT WANT TABLE
	snap
	klog_mark
	dmsetup create --readonly dmb --table "$3" 2>/dev/null &&
		fail "$1: a read-only table was created"
	last_dm_error | grep -qF "bcache: $2" ||
		fail "$1: want '$2', got '$(last_dm_error)'"
	unchanged "$1"
}

wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
refused "blank cache" "Read-only table: the cache is blank" \
	"0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"

log "a make-bcache pair"
make-bcache --wipe-bcache -C $CACHE_DEV -B $ORIGIN_DEV >/dev/null 2>&1 || fail "make-bcache"
refused "make-bcache pair" "Read-only table: the cache holds no set" \
	"0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"

log "a cache holding dirty data"
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
table="0 $len bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
dmsetup create dmb --table "$table"
write_dirty /dev/mapper/dmb 0 2
off=$(status_field dmb 16)
dmsetup remove dmb
same_data $ORIGIN_DEV "$off" $DATA_DEV 0 4096 2>/dev/null &&
	fail "the origin holds the dirty data: the read-back below would prove nothing"
snap
dmsetup create --readonly dmb --table "$table" || fail "read-only table refused"
dmsetup status dmb
expect_eq "state" "$(status_field dmb 13)" ro
expect_eq "dirty sectors" "$(status_field dmb 4)" 4096
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 4096 || fail "dirty data reads back wrong"
same_data /dev/mapper/dmb 0 $DATA_DEV 0 4096 || fail "dirty data reads back wrong (buffered)"

log "writes and writing messages refused"
klog_mark
dd if=$DATA_DEV of=/dev/mapper/dmb bs=4k count=1 seek=8 oflag=direct status=none 2>/dev/null &&
	fail "a write to the read-only table succeeded"
# The kernel stops writes to a read-only dm device before they reach the
# target; a writable table stacked on it does not, so the target's own
# refusal is seen there.
dmsetup create over --table "0 2048 linear /dev/mapper/dmb 0" || fail "cannot stack a table on the read-only one"
klog_mark
dd if=$DATA_DEV of=/dev/mapper/over bs=4k count=1 seek=8 oflag=direct status=none 2>/dev/null &&
	fail "a write through a stacked table succeeded"
klog_has "to a read-only table refused" ||
	fail "the target did not refuse the stacked write: $(klog_since | tail -n 2)"
dmsetup remove over
blkdiscard -o 0 -l 1048576 /dev/mapper/dmb 2>/dev/null &&
	fail "a discard on the read-only table succeeded"
for m in gc flush detach "cache_mode writethrough"; do
	klog_mark
	# shellcheck disable=SC2086 # the message is words
	dmsetup message dmb 0 $m 2>/dev/null && fail "message '$m' accepted"
	klog_has "message ${m%% *} refused: the table is read-only" ||
		fail "message '$m': no reason given: $(klog_since | tail -n 2)"
done
dmsetup message dmb 0 clear_stats || fail "clear_stats refused"
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 4096 || fail "dirty data changed by a refused write"

log "suspend, resume, reload; a read-write table on the same cache"
dmsetup suspend dmb
dmsetup resume dmb
dmsetup reload --readonly dmb --table "$table" || fail "read-only reload refused"
dmsetup resume dmb
expect_eq "state after the reload" "$(status_field dmb 13)" ro
klog_mark
dmsetup create dmb2 --table "$table" 2>/dev/null && fail "a read-write table joined a read-only one"
last_dm_error | grep -qF "bcache: Cache in use by a read-only table" ||
	fail "read-write beside read-only: got '$(last_dm_error)'"
dmsetup remove dmb2 2>/dev/null || true
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 4096 || fail "dirty data reads back wrong after the reload"
dmsetup remove dmb
unchanged "read-only table over dirty data"

log "the next read-write table still finds the dirty data"
dmsetup create dmb --table "$table"
expect_eq "dirty sectors, read-write again" "$(status_field dmb 4)" 4096
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 4096 || fail "dirty data lost after the read-only table"
klog_mark
dmsetup create --readonly dmb2 --table "$table" 2>/dev/null &&
	fail "a read-only table joined a read-write one"
last_dm_error | grep -qF "bcache: Read-only table: cache in use read-write" ||
	fail "read-only beside read-write: got '$(last_dm_error)'"
dmsetup remove dmb2 2>/dev/null || true
dmsetup remove dmb
exit 0
