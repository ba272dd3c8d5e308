# bcache_writeback: a write-back cache's dirty data copied to its origin
# offline.  --list and --no-metadata-update write nothing to the cache;
# a device in use, a too-small origin and the same device twice are
# refused with nothing written; an origin write error stops the run
# with the cache still dirty; a run in stages (--stop-after) leaves
# exactly what it did not copy dirty and the next run finishes; a
# cache range that cannot be read is listed as lost, exactly, stays
# dirty, and everything else is copied; a make-bcache -B origin gets its
# data at the data offset and its superblock marked clean.  After each
# full run the target finds nothing dirty and serves the same data.
. /tests/lib.sh
load_module
len=$((448 * 2048))
table() {	# table CACHE: a write-back table that copies nothing itself
	echo "0 $len bcache $1 $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
}
dirty() { status_field dmb 4; }
# The data: MiB 16..24 from $DATA_DEV 0..8, MiB 18..19 overwritten
# with $DATA_DEV 40..41 while dirty.  check_all DEV OFFSET (sectors).
fill() {
	write_dirty /dev/mapper/dmb 16 8
	dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=40 seek=18 count=1 oflag=direct conv=fsync status=none
}
check_all() {
	same_direct "$1" $((16 * 2048 + $2)) $DATA_DEV 0 $((2 * 2048)) &&
	same_direct "$1" $((18 * 2048 + $2)) $DATA_DEV $((40 * 2048)) 2048 &&
	same_direct "$1" $((19 * 2048 + $2)) $DATA_DEV $((3 * 2048)) $((5 * 2048))
}
zero_origin() { dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=64 oflag=direct status=none; }
origin_zero() {	# the origin's MiB 16..24 (+ OFFSET sectors) all zero
	dd if=$ORIGIN_DEV bs=512 skip=$((16 * 2048 + ${1:-0})) count=$((8 * 2048)) iflag=direct status=none |
		cmp -n $((8 << 20)) - /dev/zero
}
listed() { bcache_writeback --list "$@" | awk 'NR == 1 { print $2 }'; }

log "raw origin"
wipe_head $CACHE_DEV
zero_origin
dmsetup create dmb --table "$(table $CACHE_DEV)"
fill
d=$((8 * 2048))	# MiB 16..24, the overwritten part once
log "in use: refused"
rc=0; bcache_writeback $CACHE_DEV $ORIGIN_DEV || rc=$?
expect_eq "exit code on a cache in use" $rc 1
dmsetup remove dmb

out=$(bcache_writeback --list $CACHE_DEV $ORIGIN_DEV) || fail "--list failed"
head -n 3 <<<"$out"
expect_eq "dirty sectors listed" "$(head -n 1 <<<"$out" | awk '{ print $2 }')" "$d"
pieces=$(head -n 1 <<<"$out" | awk '{ print $6 }')
expect_eq "piece lines" "$(($(wc -l <<<"$out") - 1))" "$pieces"
expect_eq "sectors in the piece lines" "$(awk 'NR > 1 { s += $2 } END { print s }' <<<"$out")" "$d"
origin_zero || fail "--list wrote to the origin"

log "refusals"
rc=0; bcache_writeback $CACHE_DEV $CACHE_DEV || rc=$?
expect_eq "same device twice" $rc 2
dmsetup create small --table "0 $((20 * 2048)) linear $ORIGIN_DEV 0"
rc=0; bcache_writeback --origin-layout raw $CACHE_DEV /dev/mapper/small || rc=$?
dmsetup remove small
expect_eq "origin too small" $rc 1
origin_zero || fail "a refused run wrote to the origin"
expect_eq "dirty after the refusals" "$(listed $CACHE_DEV $ORIGIN_DEV)" "$d"

log "--no-metadata-update"
bcache_writeback -n $CACHE_DEV $ORIGIN_DEV || fail "-n failed"
check_all $ORIGIN_DEV 0 || fail "-n: the origin lacks the data"
expect_eq "dirty after -n" "$(listed $CACHE_DEV $ORIGIN_DEV)" "$d"

log "an origin write error stops the run, the cache stays dirty"
zero_origin
dmsetup create org --table "0 $((20 * 2048)) linear $ORIGIN_DEV 0
$((20 * 2048)) $((44 * 2048)) error"
rc=0; bcache_writeback --cache-device $CACHE_DEV --origin-device /dev/mapper/org || rc=$?
dmsetup remove org
expect_eq "exit code on an origin write error" $rc 2
# The buffered writes past MiB 20 fail when the origin is synced: the
# run's one batch is then not marked clean.
expect_eq "dirty after the failed run" "$(listed $CACHE_DEV $ORIGIN_DEV)" "$d"

log "a run in stages"
zero_origin
out=$(bcache_writeback --stop-after 4096 $CACHE_DEV $ORIGIN_DEV) || fail "--stop-after failed"
echo "$out"
copied=$(awk '/sectors copied to/ { print $1 }' <<<"$out")
[ "$copied" -ge 4096 ] && [ "$copied" -lt "$d" ] || fail "--stop-after 4096 copied $copied of $d"
expect_eq "dirty after the first stage" "$(listed $CACHE_DEV $ORIGIN_DEV)" $((d - copied))
bcache_writeback $CACHE_DEV $ORIGIN_DEV || fail "the second stage failed"
expect_eq "dirty after the second run" "$(listed $CACHE_DEV $ORIGIN_DEV)" 0
check_all $ORIGIN_DEV 0 || fail "the origin lacks the data after two stages"
bcache_check -q $CACHE_DEV || fail "bcache_check after write-back"
dmsetup create dmb --table "$(table $CACHE_DEV)"
expect_eq "dirty in the target after write-back" "$(dirty)" 0
check_all /dev/mapper/dmb 0 || fail "the target serves other data after write-back"
dmsetup remove dmb
out=$(bcache_writeback $CACHE_DEV $ORIGIN_DEV) || fail "a run with nothing dirty failed"
grep -q ": 0 dirty sectors" <<<"$out" || fail "nothing dirty: $out"

log "a cache range that cannot be read"
wipe_head $CACHE_DEV
zero_origin
csz=$(sectors $CACHE_DEV)
dmsetup create ssd --table "0 $csz linear $CACHE_DEV 0"
dmsetup create dmb --table "$(table /dev/mapper/ssd)"
fill
dmsetup remove dmb
expect_eq "dirty listed" "$(listed /dev/mapper/ssd $ORIGIN_DEV)" "$d"
# The first piece of 64 sectors or more: its cache sectors 8..15 fail.
read -r ostart olen cstart < <(bcache_writeback --list /dev/mapper/ssd $ORIGIN_DEV |
	awk 'NR > 1 && $2 >= 64 { print; exit }')
bad=$((cstart + 8))
dmsetup suspend ssd
dmsetup reload ssd --table "0 $bad linear $CACHE_DEV 0
$bad 8 error
$((bad + 8)) $((csz - bad - 8)) linear $CACHE_DEV $((bad + 8))"
dmsetup resume ssd
rc=0; out=$(bcache_writeback -r 1 /dev/mapper/ssd $ORIGIN_DEV) || rc=$?
echo "$out" | grep -v "dirty sectors done"
expect_eq "exit code with a lost range" $rc 1
expect_eq "lost ranges" "$(grep '^lost:' <<<"$out")" \
	"lost: origin sectors $((ostart + 8))-$((ostart + 15)) (8 sectors)"
expect_eq "dirty left" "$(listed /dev/mapper/ssd $ORIGIN_DEV)" 8
expect_eq "the piece left dirty" "$(bcache_writeback --list /dev/mapper/ssd $ORIGIN_DEV | sed -n 2p)" \
	"$((ostart + 8)) 8 $bad"
# Everything else reached the origin; the lost sectors did not.
zeros=$(dd if=/dev/zero bs=512 count=8 status=none | sha256sum | cut -d' ' -f1)
expect_eq "the lost sectors on the origin" "$(sum_sectors $ORIGIN_DEV $((ostart + 8)) 8)" "$zeros"
dmsetup create lost --table "0 8 linear $ORIGIN_DEV $((ostart + 8))"
dmsetup create good --table "0 8 linear $CACHE_DEV $bad"
dd if=/dev/mapper/good of=/dev/mapper/lost bs=512 oflag=direct status=none
dmsetup remove lost good
check_all $ORIGIN_DEV 0 || fail "the origin lacks data the damage left readable"
# The cache reads again: the second run copies the 8 sectors.
dmsetup suspend ssd
dmsetup reload ssd --table "0 $csz linear $CACHE_DEV 0"
dmsetup resume ssd
dd if=/dev/zero of=$ORIGIN_DEV bs=512 seek=$((ostart + 8)) count=8 oflag=direct status=none
bcache_writeback /dev/mapper/ssd $ORIGIN_DEV || fail "the run after the repair failed"
check_all $ORIGIN_DEV 0 || fail "the origin lacks the data after the second run"
dmsetup remove ssd

log "make-bcache -B origin"
wipe_head $CACHE_DEV
zero_origin
make-bcache -B $ORIGIN_DEV >/dev/null
off=$(bcache-super-show $ORIGIN_DEV | awk '$1 == "dev.data.first_sector" { print $2 }')
dmsetup create dmb --table "$(table $CACHE_DEV)"
fill
dmsetup remove dmb
bcache-super-show $ORIGIN_DEV | grep -q 'cache_state.*dirty' || fail "no dirty state before write-back"
origin_zero "$off" || fail "the backing origin changed before write-back"
bcache_writeback $CACHE_DEV $ORIGIN_DEV || fail "write-back to the backing origin failed"
check_all $ORIGIN_DEV "$off" || fail "the backing origin lacks the data at its data offset"
bcache-super-show $ORIGIN_DEV | grep -q 'cache_state.*clean' ||
	fail "the backing superblock is not clean after write-back"
dmsetup create dmb --table "$(table $CACHE_DEV)"
expect_eq "dirty in the target after write-back" "$(dirty)" 0
check_all /dev/mapper/dmb 0 || fail "the target serves other data after write-back"
dmsetup remove dmb
exit 0
