# The mainline driver takes over a dirty cache: dm-bcache, in write-back,
# leaves 32 MiB dirty in a cache whose origin carries a backing
# superblock (make-bcache -B); the superblock then says dirty, as the
# driver's own would, and the origin's data area still holds zeroes.
# The driver registers the pair, serves the dirty data, writes it back
# until clean; the origin alone then holds exactly what was written.
. /tests/lib.sh
load_module
modprobe bcache
mib=32
data_at=$((16 * 512 + 8 * 1048576))	# byte offset of MiB 8 of the data area

wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
make-bcache -B $ORIGIN_DEV >/dev/null
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=$mib oflag=seek_bytes,direct \
	seek=$data_at status=none
usable=$(($(sectors $ORIGIN_DEV) - 16))
dmsetup create dmb --table "0 $usable bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
write_data /dev/mapper/dmb 8 $mib
[ "$(status_field dmb 4)" -ge $((mib * 2048)) ] || fail "dirty $(status_field dmb 4) after writing"
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check with dirty data"
cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
bcache-super-show $ORIGIN_DEV >/tmp/bsb.out
grep -Eq "^cset.uuid[[:space:]]+$cset" /tmp/bsb.out || { cat /tmp/bsb.out; fail "backing superblock does not name the set"; }
grep -Eq '^dev.data.cache_state[[:space:]]+2 \[dirty\]' /tmp/bsb.out || { cat /tmp/bsb.out; fail "backing state not dirty"; }
dd if=$ORIGIN_DEV bs=1M iflag=skip_bytes,direct skip=$data_at count=$mib status=none >/tmp/origin.img
cmp -n $((mib << 20)) /tmp/origin.img /dev/zero || fail "the origin changed before write-back"
rm -f /tmp/origin.img

# dm-bcache takes the dirty pair back itself (recovery after a crash
# goes this way); with another cache the dirty origin is refused.
dmsetup create dmb --table "0 $usable bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
same_direct /dev/mapper/dmb $((8 * 2048)) $DATA_DEV 0 $((mib * 2048)) ||
	fail "dm-bcache serves other bytes on the dirty pair"
[ "$(status_field dmb 4)" -ge $((mib * 2048)) ] || fail "dirty $(status_field dmb 4) on the dirty pair"
dmsetup remove dmb
# The other cache: a slice at the origin's end that no test data reaches
# (the export disk holds mainline-cross's image for the host's tests).
dmsetup create other --table "0 $((32 * 2048)) linear $ORIGIN_DEV $((448 * 2048))"
# Refused whether the other cache is blank (the target would format it)
# or a make-bcache cache without a set (the target would create one), and
# the refused table writes nothing to it.
refused_other() {	# refused_other WHAT
	dd if=/dev/mapper/other of=/tmp/other-before bs=1M iflag=direct status=none
	klog_mark
	dmsetup create dmb --table "0 $usable bcache /dev/mapper/other $ORIGIN_DEV 0" 2>/dev/null &&
		fail "a dirty origin was accepted with $1"
	klog_has "Origin bcache superblock is dirty for another cache set" ||
		fail "no precise error for a dirty origin with $1: $(klog_since)"
	dd if=/dev/mapper/other bs=1M iflag=direct status=none | cmp -s - /tmp/other-before ||
		fail "the refused table wrote to $1"
	rm -f /tmp/other-before
}
wipe_head /dev/mapper/other
refused_other "a blank cache"
make-bcache -C -b 16k /dev/mapper/other >/dev/null
refused_other "a make-bcache cache"
dmsetup remove other
bcache-super-show $ORIGIN_DEV | grep -Eq '^dev.data.cache_state[[:space:]]+2 \[dirty\]' ||
	fail "the refused table changed the origin's state"

mainline_register
klog_has 'invalidating existing data' && fail "the driver did not recognise our set"
same_direct /dev/bcache0 $((8 * 2048)) $DATA_DEV 0 $((mib * 2048)) ||
	fail "the mainline driver serves other bytes than dm-bcache left dirty"
state=$(cat /sys/block/bcache0/bcache/state)
log "mainline state after registering: $state, dirty $(cat /sys/block/bcache0/bcache/dirty_data)"
expect_eq "mainline state" "$state" dirty
echo 0 >/sys/block/bcache0/bcache/writeback_percent
echo 0 >/sys/block/bcache0/bcache/writeback_delay
echo 100000 >/sys/block/bcache0/bcache/writeback_rate_minimum
echo 1 >/sys/block/bcache0/bcache/writeback_running
wait_for "the driver to write back" \
	sh -c '[ "$(cat /sys/block/bcache0/bcache/state)" = clean ]'
mainline_stop $cset
same_data $ORIGIN_DEV $((16 + 8 * 2048)) $DATA_DEV 0 $((mib * 2048)) ||
	fail "the origin lacks the data after the driver wrote it back"
bcache_check -q $CACHE_DEV || fail "bcache_check after the driver wrote back"
wipe_head $ORIGIN_DEV
exit 0
