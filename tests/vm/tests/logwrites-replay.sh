# Crash states of write-back, from a dm-log-writes log.  The cache, the
# origin and the writer's own log are three dm-linear slices of one
# logged device; a write-back target (no delay, target 0%, so write-back
# copies and clean marks are logged too) takes random 4 KiB writes with
# an fdatasync every 16, and the writer logs each completed flush.  The
# kernel logs writes in the order they became durable, so the log up to
# any flush entry is a state a power cut could have left.  The log is
# replayed (bcache_logreplay) onto a second region of the disk, flush
# point after flush point (the first 4, then LWR_POINTS spread evenly to
# the last); on each, through a throw-away snapshot (non-persistent, its
# COW on the otherwise unused cache disk) so nothing changes the
# replayed state:
# bcache_check finds nothing the constructor would not accept (at most a
# torn journal tail), the target comes up (journal replay), and every
# write a logged flush covered reads back as that write or a newer one.
# Points before the cache's superblock is in the log are skipped and
# counted.  At least 5 in 6 of the points asked for must check written
# data (100 of 120; half as many points on a second kernel, dmb.repeat=1);
# the whole log replayed equals the logged device byte for byte.
#
# One logged device means one write cache: a flush sent to the origin
# slice makes the cache slice's writes durable in the log too, so a
# missing cache flush hidden by an origin flush would go unseen here.
. /tests/lib.sh
load_module
modprobe dm-log-writes
modprobe dm-snapshot

MIB=2048			# sectors
CSEC=$((64 * MIB))		# cache slice
OSEC=$((64 * MIB))		# origin slice (the target's length)
WSEC=$((4 * MIB))		# the writer's flush log (1023 records)
BSEC=$((CSEC + OSEC + WSEC))	# the logged device
REPLAY_OFF=$((256 * MIB))	# the replay copy, further on the origin disk
BLOCKS=256			# the writer's blocks: 1 MiB, rewritten often
RUN=${LWR_SECONDS:-8}		# seconds of writing
MAXPTS=${LWR_POINTS:-120}	# flush points to check at most
[ "${DMB_REPEAT:-0}" = 0 ] || MAXPTS=$((MAXPTS / 2))
LOG=$EXPORT_DEV			# the log device

# The concise spec of the cache, origin and writer-log slices of DEV,
# named PREFIX{c,o,l}, with minors from MINOR on if given (so that a
# later table in the same spec can name them as major:minor: their
# /dev/mapper nodes appear only when dmsetup returns).
slice_spec() {	# slice_spec PREFIX DEV [MINOR]
	local m=${3:-}
	echo "${1}c,,$m,,0 $CSEC linear $2 0;${1}o,,${m:+$((m + 1))},,0 $OSEC linear $2 $CSEC;${1}l,,${m:+$((m + 2))},,0 $WSEC linear $2 $((CSEC + OSEC))"
}
DM_MAJOR=$(awk '$2 == "device-mapper" { print $1 }' /proc/devices)
SNAP_MINOR=240

# Both regions zeroed: the replay starts from what the logging started on.
dmsetup create lwbase --table "0 $BSEC linear $ORIGIN_DEV 0"
dmsetup create replay --table "0 $BSEC linear $ORIGIN_DEV $REPLAY_OFF"
blkdiscard -z /dev/mapper/lwbase
blkdiscard -z /dev/mapper/replay
wipe_head "$LOG"

dmsetup create lwdev --table "0 $BSEC log-writes /dev/mapper/lwbase $LOG"
dmsetup create --concise "$(slice_spec w /dev/mapper/lwdev)"
dmsetup create dmb --table "0 $OSEC bcache /dev/mapper/wc /dev/mapper/wo 11 writeback $NOBYPASS writeback_delay 0 writeback_percent 0"
dmsetup message lwdev 0 mark workload
bcache_crashwriter write /dev/mapper/dmb /dev/mapper/wl $BLOCKS 11 "$RUN" ||
	fail "the writer failed"
dmsetup status dmb
log "dirty $(status_field dmb 4) written back $(counter written_back) reclaims $(counter reclaims)"
[ "$(counter written_back)" -gt 0 ] || fail "nothing was written back during the run"
dmsetup status lwdev
dmsetup status lwdev | grep -q logging_disabled && fail "dm-log-writes stopped logging"
# A normal teardown: what the target writes on removal is logged too.
dmsetup remove dmb
dmsetup remove wc wo wl
dmsetup remove lwdev

bcache_logreplay info "$LOG" >/tmp/lw.info || fail "bcache_logreplay info failed"
grep -v '^mark' /tmp/lw.info | tr '\n' ' '
echo
grep '^mark' /tmp/lw.info
info() { awk -v k="$1" '$1 == k { print $2 }' /tmp/lw.info; }
expect_eq "log closed by the kernel's end mark" "$(info closed)" 1
nflush=$(info flushes)
log "$nflush flush entries in $(info entries) entries"

# check_point FLUSH: bring the target up on a snapshot of the replay.
check_point() {
	local f=$1 out r
	dmsetup create --concise "rsnap,,$SNAP_MINOR,,0 $BSEC snapshot /dev/mapper/replay $CACHE_DEV N 8;$(slice_spec r "$DM_MAJOR:$SNAP_MINOR" $((SNAP_MINOR + 1)))"
	out=$(bcache_check /dev/mapper/rc) && r=0 || r=$?
	if [ $r = 0 ] && echo "$out" | grep -q '^tolerated: journal-tail:'; then
		tails=$((tails + 1))	# a torn newest entry: replay ignores it
	elif [ $r != 0 ]; then
		echo "$out"
		fail "flush point $f ($pos): bcache_check exit $r"
	fi
	klog_mark
	dmsetup create rdmb --table "0 $OSEC bcache /dev/mapper/rc /dev/mapper/ro 9 writeback $NOBYPASS writeback_delay 3600" ||
		fail "flush point $f ($pos): the target refused the cache: $(last_dm_error)"
	out=$(bcache_crashwriter verify /dev/mapper/rdmb /dev/mapper/rl $BLOCKS 2>&1) && r=0 || r=$?
	if [ $r = 0 ]; then
		checked=$((checked + 1))
	elif [ $r = 1 ] && echo "$out" | grep -q '^log: 0 flushed batches'; then
		early=$((early + 1))	# up, but no write flushed yet
	else
		echo "$out"
		dmsetup status rdmb
		e=${pos%%:*}
		log "the log's last entries before this point:"
		bcache_logreplay list "$LOG" | sed -n "$((e > 40 ? e - 40 : 1)),${e}p"
		fail "flush point $f ($pos): flushed writes lost or stale"
	fi
	[ $((checked % 25)) != 1 ] || log "point $f: dirty $(status_field rdmb 4); $(echo "$out" | tail -n 1)"
	dmsetup remove rdmb rc ro rl rsnap
}

# Each of the first 4 flush points (the format ends among them, so the
# skip is exercised), then MAXPTS spread evenly to the last.
points() {
	local i f last=0
	for i in $(seq 1 4); do
		[ "$i" -le "$nflush" ] && echo "$i" && last=$i
	done
	for i in $(seq 1 "$MAXPTS"); do
		f=$(((i * nflush + MAXPTS / 2) / MAXPTS))
		[ "$f" -gt "$last" ] && echo "$f" && last=$f
	done
	return 0
}

pos=0 checked=0 early=0 unformatted=0 tails=0 formatted=0
for f in $(points); do
	pos=$(bcache_logreplay replay "$LOG" /dev/mapper/replay "$pos" "$f") ||
		fail "replay to flush $f failed"
	# The format writes the superblock last: until then no cache exists.
	if [ $formatted = 0 ]; then
		if cmp -s -n 8192 /dev/zero /dev/mapper/replay; then
			unformatted=$((unformatted + 1))
			continue
		fi
		formatted=1
	fi
	check_point "$f"
done
log "$checked points checked written data, $early before the first flushed write, $unformatted before the cache existed (skipped), $tails with a torn journal tail"
[ "$checked" -ge $((MAXPTS * 5 / 6)) ] || fail "only $checked of $MAXPTS points checked"

# The rest of the log (the teardown's writes after the last flush): the
# replay is then the logged device itself, and its cache checks clean.
pos=$(bcache_logreplay replay "$LOG" /dev/mapper/replay "$pos" end)
same_data /dev/mapper/replay 0 /dev/mapper/lwbase 0 "$BSEC" ||
	fail "the whole log replayed differs from the logged device"
dmsetup create --concise "$(slice_spec f /dev/mapper/replay)"
bcache_check /dev/mapper/fc || fail "bcache_check after the whole log"
dmsetup remove fc fo fl replay lwbase
exit 0
