# First half of the write-back power cut (persist-wb-read is the second,
# in a new boot on the same disks).  A writer keeps overwriting random
# 4 KiB blocks of a write-back target, calls fdatasync every 16 writes,
# and after each completed flush logs which writes it covered, on a
# slice of the origin outside the target.  Write-back runs meanwhile
# (writeback_percent 0, no delay), so some data is on the origin, some
# only in the cache, and some on its way.  The boot is cut under the
# writer: no suspend, no removal.  persist-wbb-write runs it with
# WB_LAYOUT=backing: the origin then carries a make-bcache -B superblock,
# which must say dirty after the cut.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
len=$((448 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=17 oflag=direct status=none
[ "${WB_LAYOUT:-raw}" = raw ] || make-bcache -B $ORIGIN_DEV >/dev/null
dmsetup create wblog --table "0 $((16 * 2048)) linear $ORIGIN_DEV $((480 * 2048))"
dd if=/dev/zero of=/dev/mapper/wblog bs=1M count=16 oflag=direct status=none
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 11 writeback $NOBYPASS writeback_delay 0 writeback_percent 0"
bcache_crashwriter write /dev/mapper/dmb /dev/mapper/wblog 4096 7 &
sleep 25
kill -0 $! 2>/dev/null || fail "the writer stopped before the cut"
dmsetup status dmb
log "dirty $(status_field dmb 4) written back $(counter written_back)"
[ "$(status_field dmb 4)" -gt 0 ] || fail "no dirty data at the cut"
[ "$(counter written_back)" -gt 0 ] || fail "nothing written back before the cut"
expect_eq "origin layout" "$(status_field dmb 15)" "${WB_LAYOUT:-raw}"
touch /tmp/dmb-crash
exit 0
