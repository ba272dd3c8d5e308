# A clean key never becomes durable before the origin data it mirrors.
# A write-through write completes once the cache and the origin both
# completed it; the origin may still hold it in a volatile cache.  Its
# key reaches the journal on the timer (no flush from the user).  Were
# the journal entry durable and the origin's copy not, a power cut would
# leave the cache serving the write while the origin lacks it: the range
# reverts silently once its bucket is reclaimed.
#
# The origin is logged (dm-log-writes, which logs a plain write only
# once a flush has made it durable), the cache is not.  After the write
# and the journal timer, the cache device is suspended (nothing more
# reaches it) and the log marked: the cache's contents then, and the
# origin replayed up to the last flush before the mark, are a state a
# power cut could leave.  On it the cache may hold the write only if the
# origin does: a table on that pair must read the range as the origin
# alone does, and (the origin being flushed before the journal) both as
# the write.
. /tests/lib.sh
load_module
modprobe dm-log-writes

MIB=2048
CSEC=$((64 * MIB))
OSEC=$((64 * MIB))
COPY_OFF=$((128 * MIB))		# the cache's frozen copy, on the cache disk
LOG_OFF=$((192 * MIB))		# the origin's log, on the cache disk too
REPLAY_OFF=$((256 * MIB))	# the replayed origin, on the origin disk
LOG=/dev/mapper/lwlog

dmsetup create obase --table "0 $OSEC linear $ORIGIN_DEV 0"
dmsetup create oreplay --table "0 $OSEC linear $ORIGIN_DEV $REPLAY_OFF"
blkdiscard -z /dev/mapper/obase
blkdiscard -z /dev/mapper/oreplay
dmsetup create lwlog --table "0 $((64 * MIB)) linear $CACHE_DEV $LOG_OFF"
wipe_head "$LOG"
wipe_head $CACHE_DEV
dmsetup create c --table "0 $CSEC linear $CACHE_DEV 0"
dmsetup create lo --table "0 $OSEC log-writes /dev/mapper/obase $LOG"
dmsetup create dmb --table "0 $OSEC bcache /dev/mapper/c /dev/mapper/lo 7 writethrough $NOBYPASS"
# A first refill makes buckets ready; until then writes bypass.  The
# cache's buckets are 64 KiB: requests of 256 KiB fit a write's pieces.
dd if=$DATA_DEV of=/dev/mapper/dmb bs=256k seek=128 count=4 oflag=direct conv=fsync status=none
sleep 1

bypassed() {
	local n=0 w
	for w in sequential congested mode busy nospace failed; do
		n=$((n + $(counter bypass_$w)))
	done
	echo $n
}
before=$(bypassed)
log "a write-through write, no flush; then the journal timer"
dd if=$DATA_DEV of=/dev/mapper/dmb bs=256k skip=20 seek=32 count=4 oflag=direct status=none ||
	fail "the write failed"
expect_eq "writes that bypassed the cache" "$(bypassed)" "$before"
sleep 1

log "power cut: the cache frozen, the origin's log marked"
dmsetup suspend c
dmsetup message lo 0 mark cut
dd if=$CACHE_DEV of=$CACHE_DEV bs=1M skip=0 seek=$((COPY_OFF / MIB)) count=$((CSEC / MIB)) \
	iflag=direct oflag=direct conv=fsync status=none
dmsetup resume c
dmsetup remove dmb
dmsetup remove lo c

bcache_logreplay list "$LOG" >/tmp/lo.list || fail "bcache_logreplay list failed"
cut=$(awk '$3 ~ /MARK/ && $6 == "cut" { print $1; exit }' /tmp/lo.list)
[ -n "$cut" ] || fail "no mark in the origin's log"
flushes=$(awk -v cut="$cut" '$1 < cut && $3 ~ /FLUSH/' /tmp/lo.list | wc -l)
log "the origin's log: $flushes flushes before the cut (entry $cut)"
if [ "$flushes" -gt 0 ]; then
	bcache_logreplay replay "$LOG" /dev/mapper/oreplay 0 "$flushes" >/dev/null ||
		fail "replaying the origin's log failed"
fi

dmsetup create ccopy --table "0 $CSEC linear $CACHE_DEV $COPY_OFF"
dmsetup create dmb --table "0 $OSEC bcache /dev/mapper/ccopy /dev/mapper/oreplay 7 writethrough $NOBYPASS" ||
	fail "the target refused the cut state: $(last_dm_error)"
same_direct /dev/mapper/dmb $((8 * MIB)) /dev/mapper/oreplay $((8 * MIB)) $MIB ||
	fail "after the cut the cache serves data the origin lost"
same_direct /dev/mapper/dmb $((8 * MIB)) $DATA_DEV $((5 * MIB)) $MIB ||
	fail "the write is gone although its key was journalled"
dmsetup remove dmb
dmsetup remove ccopy obase oreplay lwlog
exit 0
