# bcache_repair on a write-back cache the target wrote: 16 MiB of dirty
# 4 KiB random writes (a two-level tree of about 4096 keys), the table
# removed (everything committed: the journal replays no keys).  Then,
# each time on a fresh copy of that cache:
#  - two leaves (chosen at random) get their first sector overwritten:
#    exactly their key ranges are listed as lost;
#  - the cache sectors of one dirty extent's first 4 KiB read as errors
#    (dm-error): exactly those 8 origin sectors are listed;
#  - a leaf's first sectors read as errors: exactly its range is listed;
#  - the root node is overwritten: all of the origin is listed, and all
#    the data is served (the scan finds every leaf);
#  - the journal is zeroed: the prio chain and the UUID table are found
#    by scanning (the newer of this set's table and the one an earlier
#    set on the device left), all of the origin is listed, and all the
#    data is served as when the root is gone.
# Each repaired copy checks clean, and a table on it serves exactly the
# written data outside the listed ranges and, inside them, the written
# data (dirty data of nodes outside the tree, found by the scan: all of
# it when only the root is gone) or the origin's zeroes, with the dirty
# count that gives.
. /tests/lib.sh
load_module
# vda's first 128 MiB is the cache; vdb holds the origin (MiB 0..64), a
# copy of the cache as written (MiB 64..192) and the repaired copies
# (MiB 256..384).
cache_mib=128
dmsetup create ssd --table "0 $((cache_mib * 2048)) linear $CACHE_DEV 0"
dmsetup create org --table "0 $((64 * 2048)) linear $ORIGIN_DEV 0"
dmsetup create keep --table "0 $((cache_mib * 2048)) linear $ORIGIN_DEV $((64 * 2048))"
dmsetup create rep --table "0 $((cache_mib * 2048)) linear $ORIGIN_DEV $((256 * 2048))"
table() {	# table CACHE
	echo "0 $((64 * 2048)) bcache $1 /dev/mapper/org 9 writeback $NOBYPASS writeback_delay 3600"
}
# An earlier set on the same device, in its second half (64 KiB buckets
# there are this set's too), used once: its UUID table, naming another
# origin (a raw origin's UUID comes from the set's), stays behind in a
# bucket this set never writes, as the suite's earlier tests leave
# theirs.  With the journal lost the repair must take this set's, the
# newer.
dmsetup create old --table "0 $((64 * 2048)) linear /dev/mapper/ssd $((64 * 2048))"
wipe_head /dev/mapper/old
bcache_format -q -b 64k -C /dev/mapper/old
dmsetup create dmb --table "$(table /dev/mapper/old)"
dmsetup remove dmb old
sleep 1
dd if=/dev/zero of=/dev/mapper/org bs=1M count=64 oflag=direct status=none
wipe_head /dev/mapper/ssd
# 64 KiB buckets: 128-sector nodes, so 4096 keys take several leaves.
bcache_format -q -b 64k -C /dev/mapper/ssd
dmsetup create dmb --table "$(table /dev/mapper/ssd)"
fio --name=w --filename=/dev/mapper/dmb --rw=randwrite --bs=4k --size=16M \
	--offset=16M --direct=1 --ioengine=psync --randrepeat=1 \
	--eta=never --output=/tmp/fio.out || { cat /tmp/fio.out; fail "fio"; }
dirty=$(status_field dmb 4)
expect_eq "dirty sectors written" "$dirty" $((16 * 2048))
dd if=/dev/mapper/dmb of=/tmp/expected bs=1M skip=16 count=16 iflag=direct status=none
dmsetup remove dmb
bcache_check /dev/mapper/ssd | grep -q 'replay [0-9]*-[0-9]* with 0 keys' ||
	fail "the journal still replays keys after the table went: $(bcache_check /dev/mapper/ssd | grep replay)"
dd if=/dev/mapper/ssd of=/dev/mapper/keep bs=1M oflag=direct status=none
bcache_dump /dev/mapper/ssd >/tmp/dump
uuid=$(awk '/^uuid slot 0:/ { print $4 }' /tmp/dump)
# Leaves in key order: "end offset" of each (MAX for the last).
awk '/^node level 0:/ { split($4, k, ":"); print (k[1] == 0 ? k[2] : "end"), $8 }' /tmp/dump >/tmp/leaves
nleaves=$(wc -l </tmp/leaves)
log "$nleaves leaves"
[ "$nleaves" -ge 4 ] || fail "only $nleaves leaves: the test needs a deeper tree"

restore() {
	dmsetup suspend ssd
	dmsetup reload ssd --table "0 $((cache_mib * 2048)) linear $CACHE_DEV 0"
	dmsetup resume ssd
	dd if=/dev/mapper/keep of=/dev/mapper/ssd bs=1M oflag=direct status=none
	wipe_head /dev/mapper/rep
}
# repair WANT_RC: the repair's output in /tmp/repair.out.
repair() {
	local rc=0
	bcache_repair -i /dev/mapper/ssd -o /dev/mapper/rep >/tmp/repair.out 2>&1 || rc=$?
	cat /tmp/repair.out
	expect_eq "bcache_repair's exit code" $rc "$1"
}
# The leaf keys of a dump that cover origin sector $1.
keys_at() {
	awk -v s="$1" '/^    key 0:[0-9]+-/ { split($2, r, "[:-]"); if (r[2] <= s + 0 && s + 0 < r[3]) print }' "$2"
}
# served LOST...: a table on the repaired copy serves the written data
# outside the LOST ranges (origin sectors A-B, relative to MiB 16 here);
# inside them each 4 KiB block is the written one (dirty data the scan
# for orphaned nodes kept: each block was written once, so no older
# version exists) or the origin's zeroes.  Its dirty count is the written
# data less the zeroed blocks, which go to $zeroed.
served() {
	local zero
	bcache_check -q /dev/mapper/rep || fail "the repaired copy does not check clean"
	dmsetup create dmb --table "$(table /dev/mapper/rep)"
	dd if=/dev/mapper/dmb of=/tmp/got bs=1M skip=16 count=16 iflag=direct status=none
	rm -rf /tmp/blk && mkdir -p /tmp/blk/got /tmp/blk/want
	split -b 4096 -a 4 /tmp/got /tmp/blk/got/
	split -b 4096 -a 4 /tmp/expected /tmp/blk/want/
	(cd /tmp/blk/got && md5sum ./*) >/tmp/blk/got.md5
	(cd /tmp/blk/want && md5sum ./*) >/tmp/blk/want.md5
	zero=$(head -c 4096 /dev/zero | md5sum | cut -d' ' -f1)
	zeroed=$(paste -d' ' /tmp/blk/got.md5 /tmp/blk/want.md5 | awk -v z="$zero" -v r="$*" '
		BEGIN { n = split(r, rs, " ")
			for (i = 1; i <= n; i++) { split(rs[i], ab, "-"); lo[i] = ab[1]; hi[i] = ab[2] } }
		{ s = 32768 + (NR - 1) * 8; inside = 0
		  for (i = 1; i <= n; i++) if (s >= lo[i] + 0 && s + 7 <= hi[i] + 0) inside = 1
		  if ($1 == $3) next
		  if (inside && $1 == z) { zeroed++; next }
		  if (bad++ < 8) printf "origin sector %d (%s a listed range): %s\n", s,
			inside ? "inside" : "outside", $1 == z ? "zeroes" : "other data" >"/tmp/blk/bad"
		  }
		END { if (NR != 4096) print "short"; else if (bad) print "bad"; else print zeroed + 0 }')
	case $zeroed in
	short) fail "the served data is not 4096 blocks" ;;
	bad)	dmsetup remove dmb
		bcache_dump /dev/mapper/rep >/tmp/dump.rep
		local at
		at=$(awk '{ print $3; exit }' /tmp/blk/bad)
		fail "the repaired cache serves other data: $(cat /tmp/blk/bad)
the keys at origin sector $at before: $(keys_at "$at" /tmp/dump)
and in the repaired copy: $(keys_at "$at" /tmp/dump.rep)" ;;
	esac
	log "$zeroed blocks of the listed ranges read as the origin's zeroes"
	expect_eq "dirty in the repaired cache" "$(status_field dmb 4)" $((dirty - zeroed * 8))
	dmsetup remove dmb
	rm -rf /tmp/blk /tmp/got
}
# The lost line of leaf number N (1-based) as bcache_repair prints it.
leaf_lost() {
	local lo=0 hi
	[ "$1" -gt 1 ] && lo=$(sed -n "$(($1 - 1))p" /tmp/leaves | cut -d' ' -f1)
	hi=$(sed -n "$1p" /tmp/leaves | cut -d' ' -f1)
	[ "$hi" = end ] || hi=$((hi - 1))
	echo "lost: slot 0 ($uuid) sectors $lo-$hi: btree node damaged"
}
leaf_sector() { sed -n "$1p" /tmp/leaves | cut -d' ' -f2 | cut -d: -f2; }
# Cache sectors SECTOR..SECTOR+7 read as errors until the next restore.
error_at() {
	dmsetup suspend ssd
	dmsetup reload ssd --table "0 $1 linear $CACHE_DEV 0
$1 8 error
$(($1 + 8)) $((cache_mib * 2048 - $1 - 8)) linear $CACHE_DEV $(($1 + 8))"
	dmsetup resume ssd
}
# served for the ranges the repair listed, clipped to the written region.
served_listed() {
	local r lo hi clipped=()
	for r in $(grep '^lost:' /tmp/repair.out | sed 's/.* sectors \([0-9]*-[0-9]*\):.*/\1/'); do
		lo=${r%-*} hi=${r#*-}
		[ "$lo" -lt 32768 ] && lo=32768
		[ "$hi" -gt 65535 ] && hi=65535
		[ "$lo" -le "$hi" ] && clipped+=("$lo-$hi")
	done
	served "${clipped[@]}"
}

log "two leaves overwritten"
restore
# Two leaves, not neighbours (their lost ranges would merge), not the
# last (its range runs to the origin's end, beyond the data).
a=$((RANDOM % (nleaves - 3) + 1))
b=$((a + 2 + RANDOM % (nleaves - a - 2)))
log "leaves $a and $b"
for n in $a $b; do
	dd if=/dev/urandom of=/dev/mapper/ssd bs=512 seek="$(leaf_sector $n)" count=1 \
		oflag=direct status=none
done
repair 1
expect_eq "lost lines" "$(grep '^lost:' /tmp/repair.out)" "$(leaf_lost $a; leaf_lost $b)"
served_listed

log "one dirty extent's first 4 KiB unreadable"
restore
read -r ostart csector < <(awk '/^    key 0:.* dirty ptr/ { n++; if (n == 1000) {
	split($2, r, "[:-]"); split($7, p, ":"); print r[2], p[2]; exit } }' /tmp/dump)
log "origin sector $ostart, cache sector $csector"
error_at "$csector"
repair 1
expect_eq "lost lines" "$(grep '^lost:' /tmp/repair.out)" \
	"lost: slot 0 ($uuid) sectors $ostart-$((ostart + 7)): dirty data unreadable"
served "$ostart-$((ostart + 7))"
expect_eq "blocks zeroed" "$zeroed" 1

log "a leaf that does not read (dm-error)"
restore
n=$((RANDOM % (nleaves - 1) + 1))
ls=$(leaf_sector $n)
log "leaf $n at cache sector $ls"
error_at "$ls"
repair 1
expect_eq "lost lines" "$(grep '^lost:' /tmp/repair.out)" "$(leaf_lost $n)"
served_listed

log "the root overwritten"
restore
root=$(awk '/^node level/ { split($8, p, ":"); print p[2]; exit }' /tmp/dump)
dd if=/dev/zero of=/dev/mapper/ssd bs=512 seek="$root" count=8 oflag=direct status=none
repair 1
expect_eq "lost lines" "$(grep '^lost:' /tmp/repair.out)" \
	"lost: slot 0 ($uuid) sectors 0-end: btree node damaged"
# The leaves are whole: the scan gives back all their dirty data.
grep -q 'scan: [0-9]* dirty extents of theirs kept' /tmp/repair.out ||
	fail "no scan for orphaned nodes"
served 32768-65535
expect_eq "blocks zeroed" "$zeroed" 0

log "the journal zeroed"
restore
bsz=$(awk '/^  nbuckets/ { print $4 }' /tmp/dump)
first=$(awk '/^  nbuckets/ { print $6 }' /tmp/dump)
njournal=$(awk '/^  nbuckets/ { print $12 }' /tmp/dump)
dd if=/dev/zero of=/dev/mapper/ssd bs=512 seek=$((first * bsz)) count=$((njournal * bsz)) \
	oflag=direct status=none
repair 1
expect_eq "lost lines" "$(grep '^lost:' /tmp/repair.out)" \
	"lost: slot 0 ($uuid) sectors 0-end: journal lost"
grep -q '^salvage: prio chain: seq [0-9]* from bucket' /tmp/repair.out ||
	fail "no prio chain found by the scan"
# At least this set's table and the earlier one: the suite's earlier
# tests may have left more.
grep -Eq '^salvage: UUID table: bucket [0-9]+ \(the newest of ([2-9]|[1-9][0-9]+) found,' /tmp/repair.out ||
	fail "not the newest of the UUID tables found by the scan"
# Everything was committed before the journal went: the scan gives back
# all the dirty data, as when only the root is gone.
served 32768-65535
expect_eq "blocks zeroed" "$zeroed" 0

dmsetup remove ssd org keep rep
exit 0
