# Write-back on a make-bcache -B origin, and the refusals tied to dirty
# data.  The origin's superblock goes dirty with the first dirty write and
# back to clean after a flush, while the table is live; a passthrough
# table on the dirty cache is refused and writes nothing; detach of the
# clean cache leaves the superblock detached (no set, state none) and the
# target passing through to the data; and a dirty origin whose cache was
# wiped is refused, the blank cache left unformatted.  Data is compared
# at every step.
. /tests/lib.sh
load_module
make-bcache -B $ORIGIN_DEV >/dev/null
usable=$(($(sectors $ORIGIN_DEV) - 16))
wb="0 $usable bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
# The superblock as on disk: the target writes it around the page cache.
super_show() { echo 3 >/proc/sys/vm/drop_caches; bcache-super-show $ORIGIN_DEV; }
state() { super_show | awk '/^dev.data.cache_state/ { print $3 }'; }
set_uuid() { super_show | awk '/^cset.uuid/ { print $2 }'; }
origin_holds() {	# origin_holds MIB-IN-DATA-AREA COUNT-MIB SRC-MIB
	same_data $ORIGIN_DEV $((16 + $1 * 2048)) $DATA_DEV $(($3 * 2048)) $(($2 * 2048))
}

dmsetup create dmb --table "$wb"
expect_eq "state before any write" "$(state)" "[clean]"
write_data /dev/mapper/dmb 8 16
expect_eq "state with dirty data" "$(state)" "[dirty]"
origin_holds 8 16 0 && fail "the origin has the dirty data already"
dmsetup remove dmb

log "a passthrough table on the dirty cache is refused, writing nothing"
dd if=$CACHE_DEV of=/tmp/cache-head bs=1M count=4 iflag=direct status=none
dd if=$ORIGIN_DEV of=/tmp/origin-head bs=1M count=32 iflag=direct status=none
klog_mark
dmsetup create dmb --table "0 $usable bcache $CACHE_DEV $ORIGIN_DEV 1 passthrough" 2>/dev/null &&
	fail "passthrough accepted on a dirty cache"
klog_has 'Cache holds dirty data: passthrough refused' ||
	fail "wrong error: $(last_dm_error)"
dd if=$CACHE_DEV bs=1M count=4 iflag=direct status=none | cmp -s - /tmp/cache-head ||
	fail "the refused table wrote to the cache"
dd if=$ORIGIN_DEV bs=1M count=32 iflag=direct status=none | cmp -s - /tmp/origin-head ||
	fail "the refused table wrote to the origin"
rm -f /tmp/cache-head /tmp/origin-head

log "flush: the superblock clean again, the origin holds the data"
dmsetup create dmb --table "$wb"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "dirty data differs"
dmsetup message dmb 0 flush
expect_eq "dirty after the flush" "$(status_field dmb 4)" 0
expect_eq "state after the flush" "$(state)" "[clean]"
origin_holds 8 16 0 || fail "the origin lacks the data after the flush"

log "detach: the superblock detached, the target passes through"
cset=$(set_uuid)
[ -n "$cset" ] && [ "$cset" != 00000000-0000-0000-0000-000000000000 ] ||
	fail "the origin names no set while attached: '$cset'"
dmsetup message dmb 0 detach
expect_eq "mode after detach" "$(status_field dmb 12)" passthrough
expect_eq "state after detach" "$(state)" "[detached]"
expect_eq "set uuid after detach" "$(set_uuid)" 00000000-0000-0000-0000-000000000000
write_data /dev/mapper/dmb 40 4
origin_holds 40 4 0 || fail "a write after detach did not reach the origin"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((16 * 2048)) || fail "data after detach differs"
dmsetup remove dmb

log "a dirty origin whose cache was wiped is refused"
dmsetup create dmb --table "$wb"
write_data /dev/mapper/dmb 60 4
expect_eq "state with dirty data" "$(state)" "[dirty]"
dmsetup remove dmb
wipe_head $CACHE_DEV
klog_mark
dmsetup create dmb --table "$wb" 2>/dev/null && fail "a dirty origin was accepted with a wiped cache"
klog_has 'Origin bcache superblock is dirty for another cache set' ||
	fail "wrong error: $(last_dm_error)"
cmp -n $((1 << 20)) $CACHE_DEV /dev/zero >/dev/null || fail "the refused table wrote to the wiped cache"
expect_eq "state after the refusal" "$(state)" "[dirty]"
exit 0
