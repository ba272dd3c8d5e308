#!/usr/bin/env bash
# Tool tests on image files: bcache_format, bcache_check and bcache_dump
# against make-bcache and bcache-super-show, the damage classes of
# tests/vm/damage-classes.txt applied by bcache_damage, and
# bcache_logreplay on dm-log-writes logs written here.  Every tool runs
# under ASan/UBSan.  Prints "PASS|FAIL tools/<case>" lines.
#
#   tools.sh                  images made here by make-bcache and bcache_format
#   tools.sh --images IMG...  images exported by the VM tests (mainline-written)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/user-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS tools/$1"; }
failc() { echo "FAIL tools/$1 ${*:2}"; }

# run NAME WANT_RC WANT_REGEX TOOL ARGS...: exit code and output, and no
# sanitizer report (which would also change the exit code).
run() {
	local name=$1 want_rc=$2 want=$3 tool=$4 out rc
	shift 4
	case "$tool" in */*) ;; *) tool=$bin/$tool ;; esac
	out=$("$tool" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" >"$tmp/run.out"
	if echo "$out" | grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer'; then
		failc "$name" "sanitizer: $(echo "$out" | grep -m1 'runtime error\|Sanitizer')"
	elif [ "$rc" = "$want_rc" ] && echo "$out" | grep -Eq -- "$want"; then
		pass "$name"
	else
		failc "$name" "rc=$rc want $want_rc /$want/: $(echo "$out" | head -n 4 | tr '\n' ' ')"
	fi
}

# out_has NAME REGEX: the output of the last run holds REGEX too.
out_has() {
	if grep -Eq -- "$2" "$tmp/run.out"; then
		pass "$1"
	else
		failc "$1" "no /$2/ in: $(head -n 4 "$tmp/run.out" | tr '\n' ' ')"
	fi
}

# json_ok NAME IMG: --json output parses, names the superblock and, like
# bcache_check, finds no damage.
json_ok() {
	local name=$1 img=$2 rc
	"$bin/bcache_dump" --json "$img" >"$tmp/json.out" 2>"$tmp/json.err"
	rc=$?
	if grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer' "$tmp/json.err"; then
		failc "$name" "sanitizer: $(grep -m1 'runtime error\|Sanitizer' "$tmp/json.err")"
	elif [ "$rc" != 0 ]; then
		failc "$name" "bcache_dump --json exit $rc: $(head -n 2 "$tmp/json.err" | tr '\n' ' ')"
	elif python3 -c 'import json,sys; d=json.load(sys.stdin); assert "superblock" in d and d["damage"] == 0' \
		<"$tmp/json.out" 2>/dev/null; then
		pass "$name"
	else
		failc "$name" "invalid JSON from bcache_dump --json"
	fi
}

# bcache-super-show -f output without the lines that must differ.
show() { bcache-super-show -f "$1" 2>&1 | grep -Ev "^(sb.csum|dev.uuid|cset.uuid${2:+|$2})"; }

same_show() {	# same_show NAME A B [EXTRA-IGNORED-FIELDS]
	if diff <(show "$2" "${4:-}") <(show "$3" "${4:-}") >"$tmp/diff" &&
		bcache-super-show "$3" >/dev/null 2>&1; then
		pass "$1"
	else
		failc "$1" "$(tr '\n' ' ' <"$tmp/diff")"
	fi
}

classes() { grep -Ev '^(#|$)' "$top/tests/vm/damage-classes.txt"; }

# repaired NAME IMG: bcache_repair on a damaged image, two results.  The
# exit code says what happened and the output agrees: 0 nothing lost and
# no 'lost:' line, 1 'lost:' lines, 3 nothing usable and no output
# written.  A repaired copy checks clean, and a repair of it finds
# nothing to do (the plain copy that then makes is the seeded cases'
# repair/clean-copy: here it would read every image twice per class).
repaired() {	# repaired NAME IMG
	local name=$1 img=$2 out=$tmp/repaired.img again=$tmp/repaired2.img rc lost
	rm -f "$out" "$again"
	"$bin/bcache_repair" -i "$img" -o "$out" >"$tmp/repair.out" 2>&1
	rc=$?
	lost=$(grep -c '^lost:' "$tmp/repair.out")
	if grep -q 'runtime error\|Sanitizer' "$tmp/repair.out"; then
		failc "$name/repair" "sanitizer: $(grep -m1 'runtime error\|Sanitizer' "$tmp/repair.out")"
	elif { [ $rc = 0 ] && [ "$lost" = 0 ]; } || { [ $rc = 1 ] && [ "$lost" != 0 ]; } ||
		{ [ $rc = 3 ] && [ ! -s "$out" ]; }; then
		pass "$name/repair"
	else
		failc "$name/repair" "rc=$rc with $lost lost lines: $(head -n 4 "$tmp/repair.out" | tr '\n' ' ')"
	fi
	if [ $rc = 3 ]; then
		pass "$name/repaired"
	elif "$bin/bcache_check" -q "$out" &&
		"$bin/bcache_repair" -n -i "$out" 2>&1 | grep -q 'checks clean: nothing to repair'; then
		pass "$name/repaired"
	else
		failc "$name/repaired" "the repaired copy does not check clean, or a second repair would change it"
	fi
	rm -f "$out" "$again"
}

# Apply each damage class (those matching @filter) to a copy of @img.
damage_image() {	# damage_image LABEL IMG FILTER
	local label=$1 img=$2 filter=$3 cls checks err copy=$tmp/damaged.img
	while IFS='|' read -r cls checks err; do
		echo "$cls" | grep -Eq "$filter" || continue
		cp --sparse=always "$img" "$copy"
		if ! "$bin/bcache_damage" "$cls" "$copy" >"$tmp/dmg.out" 2>&1; then
			failc "damage/$label/$cls" "bcache_damage: $(cat "$tmp/dmg.out")"
			continue
		fi
		# A damaged newest entry of several is a torn tail: tolerated.
		want_rc=1 want="^damage: (${checks//,/|}):"
		if [[ ",$checks," == *,journal-tail,* ]] &&
			"$bin/bcache_check" "$copy" 2>/dev/null | grep -q '^tolerated: journal-tail:'; then
			want_rc=0 want='^tolerated: journal-tail:'
		fi
		run "damage/$label/$cls" "$want_rc" "$want" bcache_check "$copy"
		run "damage/$label/$cls/dump" 0 '' bcache_dump "$copy"
		run "damage/$label/$cls/dump-json" 0 '' bcache_dump --json "$copy"
		repaired "damage/$label/$cls" "$copy"
	done < <(classes)
}

if [ "${1:-}" = --images ]; then
	shift
	for img in "$@"; do
		label=mainline-$(basename "$(dirname "$img")")
		run "$label/check" 0 ' 0 damage findings' bcache_check "$img"
		run "$label/dirty-keys" 0 'key 0:.* dirty ptr' bcache_dump "$img"
		json_ok "$label/json" "$img"
		damage_image "$label" "$img" .
		# The driver's prio chain and UUID table, found by scanning
		# when the journal is gone.
		cp --sparse=always "$img" "$tmp/jz.img"
		"$bin/bcache_damage" journal-zero "$tmp/jz.img" >/dev/null
		run "$label/journal-lost" 1 '^salvage: UUID table: bucket [0-9]+' \
			bcache_repair -n -i "$tmp/jz.img"
	done
	exit 0
fi

# --- make-bcache images: superblock only, not synchronous -----------------
# size bucket block: several geometries
geoms=("512M 512k 512" "256M 128k 4k" "1G 512k 512" "64M 32k 4k")
for g in "${geoms[@]}"; do
	set -- $g
	name=${1}-b${2}-w${3}
	mk=$tmp/mk-$name.img ours=$tmp/ours-$name.img sbo=$tmp/sbo-$name.img
	truncate -s "$1" "$mk" "$ours" "$sbo"
	make-bcache -C -b "$2" -w "$3" "$mk" >/dev/null
	run "make-bcache/$name/check" 0 'not synchronous' bcache_check "$mk"
	run "make-bcache/$name/dump" 0 'superblock: cache device, version 0' bcache_dump "$mk"
	json_ok "make-bcache/$name/json" "$mk"
	damage_image "make-bcache-$name" "$mk" '^(sb-|truncate)'

	run "format/$name" 0 'journal buckets' bcache_format -b "$2" -w "$3" -C "$ours"
	run "format/$name/check" 0 ' 0 damage findings, 0 tolerated, 0 notes' bcache_check "$ours"
	run "format/$name/dump" 0 'node level 0' bcache_dump "$ours"
	json_ok "format/$name/json" "$ours"
	# Same fields as make-bcache's, apart from what formatting the set sets.
	same_show "format/$name/super-show" "$mk" "$ours" 'sb.version|dev.cache.ordered'
	run "format/$name/super-show-sync" 0 'dev.cache.ordered[[:space:]]+yes' /usr/sbin/bcache-super-show "$ours"
	run "format/$name/superblock-only" 0 'version:		0' bcache_format --superblock-only -b "$2" -w "$3" -C "$sbo"
	same_show "format/$name/superblock-only-super-show" "$mk" "$sbo"
done
damage_image format-64k "$tmp/ours-64M-b32k-w4k.img" .
damage_image format-512k "$tmp/ours-1G-b512k-w512.img" .

# --- backing devices ----------------------------------------------------------
for opts in "" "-o 2048" "--writeback" "-w 4k"; do
	name=backing${opts// /}
	rm -f "$tmp/mkb.img" "$tmp/oursb.img"
	truncate -s 64M "$tmp/mkb.img" "$tmp/oursb.img"
	make-bcache -B $opts "$tmp/mkb.img" >/dev/null
	run "format/$name" 0 "backing device" bcache_format $opts -B "$tmp/oursb.img"
	same_show "format/$name/super-show" "$tmp/mkb.img" "$tmp/oursb.img"
	run "format/$name/check" 0 'backing device' bcache_check "$tmp/oursb.img"
done
# make-bcache 1.0.8 has no --label: check ours through the two readers.
run format/label 0 'backing device' bcache_format --wipe-bcache -l label1 -B "$tmp/oursb.img"
run format/label-dump 0 'label "label1"' bcache_dump "$tmp/oursb.img"
run format/label-show 0 'dev.label[[:space:]]+label1' /usr/sbin/bcache-super-show "$tmp/oursb.img"

# --- our writers: a tree indexing real data (bcache_seed) checks clean -------------
truncate -s 256M "$tmp/seed-c.img"
truncate -s 128M "$tmp/seed-b.img"
head -c 16M /dev/urandom >"$tmp/seed.data"
run seed/format 0 'backing device' bcache_format -b 128k -w 512 -C "$tmp/seed-c.img" -B "$tmp/seed-b.img"
run seed/write 0 'root level 1' bcache_seed "$tmp/seed-c.img" "$tmp/seed-b.img" "$tmp/seed.data" 16
run seed/check 0 'btree: root level 1, [0-9]+ nodes, [0-9]+ keys; buckets: [0-9]+ btree, 128 data' bcache_check "$tmp/seed-c.img"
run seed/again 1 'freshly formatted' bcache_seed "$tmp/seed-c.img" "$tmp/seed-b.img" "$tmp/seed.data" 16
run export/seeded 0 'exported' bcache_export --sectors 32768 "$tmp/seed-c.img" "$tmp/seed-b.img" "$tmp/export.out"
if cmp -s "$tmp/export.out" "$tmp/seed.data"; then pass export/seeded-data; else failc export/seeded-data "differs from the seeded data"; fi
run export/whole 0 'exported' bcache_export "$tmp/seed-c.img" "$tmp/seed-b.img" "$tmp/export-all.out"
if [ "$(stat -c %s "$tmp/export-all.out")" = $(((128 << 20) - 8192)) ] &&
	cmp -s -n $((16 << 20)) "$tmp/export-all.out" "$tmp/seed.data"; then
	pass export/whole-size
else
	failc export/whole-size "wrong size or data"
fi
run export/no-slot 1 'no slot' bcache_export "$tmp/seed-c.img" "$tmp/oursb.img" "$tmp/x.out"
run export/usage 2 'usage' bcache_export "$tmp/seed-c.img"
# The extents only in journal entries: bcache_export replays them.
run seed/journal-format 0 'backing device' bcache_format --wipe-bcache -b 128k -w 512 -C "$tmp/seed-c.img" -B "$tmp/seed-b.img"
run seed/journal 0 '4096 keys in the journal' bcache_seed --journal "$tmp/seed-c.img" "$tmp/seed-b.img" "$tmp/seed.data" 16
run seed/journal-check 0 'replay 1-[0-9]+ with 4096 keys' bcache_check "$tmp/seed-c.img"
run export/journal 0 'exported' bcache_export --sectors 32768 "$tmp/seed-c.img" "$tmp/seed-b.img" "$tmp/export-j.out"
if cmp -s "$tmp/export-j.out" "$tmp/seed.data"; then pass export/journal-data; else failc export/journal-data "differs from the seeded data"; fi

# --- bcache_writeback: dirty extents, in the tree and in the journal, to the
# backing device's data area; the cache then clean and the superblock too.
for how in tree journal; do
	wc=$tmp/wb-c.img wb=$tmp/wb-b.img
	rm -f "$wc" "$wb"
	truncate -s 256M "$wc"
	truncate -s 64M "$wb"
	"$bin/bcache_format" -q -b 128k -w 512 -C "$wc" -B "$wb"
	seed=(--dirty)
	[ $how = journal ] && seed+=(--journal)
	"$bin/bcache_seed" "${seed[@]}" "$wc" "$wb" "$tmp/seed.data" 4 >/dev/null
	run "writeback/$how/list" 0 ': 8192 dirty sectors in [0-9]+ pieces \(slot 0, backing origin\)' \
		bcache_writeback --list "$wc" "$wb"
	run "writeback/$how/no-update" 0 '8192 sectors copied to .*\(the cache left as it was\)' \
		bcache_writeback -n "$wc" "$wb"
	run "writeback/$how/still-dirty" 0 ': 8192 dirty sectors' bcache_writeback --list "$wc" "$wb"
	dd if=/dev/zero of="$wb" bs=512 seek=16 count=8192 conv=notrunc status=none
	# In stages: the superblock stays dirty until nothing dirty is left.
	run "writeback/$how/stage" 0 'sectors copied .*--stop-after: the rest stays dirty' \
		bcache_writeback --stop-after 2048 "$wc" "$wb"
	run "writeback/$how/stage-state" 0 'cache_state[[:space:]]+2 \[dirty\]' /usr/sbin/bcache-super-show "$wb"
	run "writeback/$how/copy" 0 'superblock marked clean' bcache_writeback "$wc" "$wb"
	if cmp -s -i $((16 * 512)):0 -n $((4 << 20)) "$wb" "$tmp/seed.data"; then
		pass "writeback/$how/data"
	else
		failc "writeback/$how/data" "the data area differs from the seeded data"
	fi
	run "writeback/$how/state" 0 'cache_state[[:space:]]+1 \[clean\]' /usr/sbin/bcache-super-show "$wb"
	run "writeback/$how/check" 0 ' 0 damage findings' bcache_check "$wc"
	run "writeback/$how/again" 0 ': 0 dirty sectors' bcache_writeback "$wc" "$wb"
done

# --- bcache_repair on a seeded write-back cache -------------------------------
# 4 MiB dirty in a two-level tree; a damaged leaf loses exactly its key
# range, everything else reads back as seeded; in place with an undo
# file, and the rollback gives the damaged image back byte for byte.
rc_img=$tmp/rp-c.img rb_img=$tmp/rp-b.img
rm -f "$rc_img" "$rb_img"
truncate -s 256M "$rc_img"
truncate -s 64M "$rb_img"
"$bin/bcache_format" -q -b 128k -w 512 -C "$rc_img" -B "$rb_img"
"$bin/bcache_seed" --dirty "$rc_img" "$rb_img" "$tmp/seed.data" 4 >/dev/null
leaf_end=$("$bin/bcache_dump" "$rc_img" | sed -n 's/^node level 0: 0:\([0-9]*\) .*/\1/p' | head -n 1)
run repair/clean 0 'checks clean: nothing to repair' bcache_repair -i "$rc_img" -o "$tmp/rp-copy.img"
if cmp -s "$rc_img" "$tmp/rp-copy.img"; then pass repair/clean-copy; else failc repair/clean-copy "differs"; fi
run repair/clean-in-place 0 'checks clean: nothing to repair' bcache_repair --in-place --undo-file "$tmp/rp-none.undo" "$rc_img"
cp --sparse=always "$rc_img" "$tmp/rp-d.img"
"$bin/bcache_damage" node-magic "$tmp/rp-d.img" >/dev/null
run repair/dry-run 1 "^lost: slot 0 \([-0-9a-f]+\) sectors 0-$((leaf_end - 1)): btree node damaged" \
	bcache_repair -n -i "$tmp/rp-d.img"
run repair/leaf 1 "^lost: slot 0 \([-0-9a-f]+\) sectors 0-$((leaf_end - 1)): btree node damaged" \
	bcache_repair -i "$tmp/rp-d.img" -o "$tmp/rp-o.img"
run repair/leaf-lost-once 1 '^1$' /bin/bash -c "'$bin/bcache_repair' -i '$tmp/rp-d.img' -o '$tmp/rp-o2.img' | grep -c '^lost:'; exit 1"
run repair/leaf-check 0 ' 0 damage findings' bcache_check "$tmp/rp-o.img"
"$bin/bcache_export" -q --sectors 8192 "$tmp/rp-o.img" "$rb_img" "$tmp/rp.out"
if cmp -s -i $((leaf_end * 512)) -n $(((8192 - leaf_end) * 512)) "$tmp/rp.out" "$tmp/seed.data" &&
	! cmp -s -n $((leaf_end * 512)) "$tmp/rp.out" "$tmp/seed.data"; then
	pass repair/leaf-data
else
	failc repair/leaf-data "outside the lost range the data differs from the seeded data (or inside it does not)"
fi
run repair/output-exists 2 'holds a bcache superblock' bcache_repair -i "$tmp/rp-d.img" -o "$tmp/rp-o.img"
run repair/same-device 2 'INPUT and OUTPUT are the same device' bcache_repair -i "$tmp/rp-d.img" -o "$tmp/rp-d.img"
cp --sparse=always "$tmp/rp-d.img" "$tmp/rp-ip.img"
echo keep >"$tmp/rp.undo"
run repair/undo-exists 2 'the undo file must be new' bcache_repair --in-place --undo-file "$tmp/rp.undo" "$tmp/rp-ip.img"
if cmp -s "$tmp/rp-ip.img" "$tmp/rp-d.img" && [ "$(cat "$tmp/rp.undo")" = keep ]; then
	pass repair/undo-exists-untouched
else
	failc repair/undo-exists-untouched "the device or the old undo file was written"
fi
rm -f "$tmp/rp.undo"
run repair/in-place 1 'btree node damaged' bcache_repair --in-place --undo-file "$tmp/rp.undo" "$tmp/rp-ip.img"
run repair/in-place-check 0 ' 0 damage findings' bcache_check "$tmp/rp-ip.img"
"$bin/bcache_export" -q --sectors 8192 "$tmp/rp-ip.img" "$rb_img" "$tmp/rp-ip.out"
if cmp -s "$tmp/rp-ip.out" "$tmp/rp.out"; then pass repair/in-place-data; else failc repair/in-place-data "differs from the repaired copy's"; fi
run repair/rollback 0 'saved blocks written back' bcache_repair --rollback "$tmp/rp.undo" "$tmp/rp-ip.img"
if cmp -s "$tmp/rp-ip.img" "$tmp/rp-d.img"; then pass repair/rollback-data; else failc repair/rollback-data "not the damaged image again"; fi
run repair/rollback-wrong 2 'not an undo file' bcache_repair --rollback "$tmp/rp-d.img" "$tmp/rp-ip.img"
# The flag that keeps the target off the device during the rebuild is
# cleared at the end.
if "$bin/bcache_check" "$tmp/rp-o.img" | grep -q needs_check ||
	"$bin/bcache_check" "$tmp/rp-ip.img" | grep -q needs_check; then
	failc repair/needs-check-cleared "a repaired cache still says needs_check"
else
	pass repair/needs-check-cleared
fi
# A rollback after the repaired cache was used (bcache_writeback journals
# the pieces it cleans) is refused; --force does it.
cp --sparse=always "$tmp/rp-d.img" "$tmp/rp-ip.img"
rm -f "$tmp/rp.undo"
"$bin/bcache_repair" -q --in-place --undo-file "$tmp/rp.undo" "$tmp/rp-ip.img"
cp "$tmp/rp.undo" "$tmp/rp-torn.undo"
cp "$tmp/rp.undo" "$tmp/rp-bad.undo"
"$bin/bcache_writeback" -q "$tmp/rp-ip.img" "$rb_img"
cp --sparse=always "$tmp/rp-ip.img" "$tmp/rp-used.img"
run repair/rollback-used 2 'has been used since' bcache_repair --rollback "$tmp/rp.undo" "$tmp/rp-ip.img"
if cmp -s "$tmp/rp-ip.img" "$tmp/rp-used.img"; then pass repair/rollback-used-untouched; else failc repair/rollback-used-untouched "written"; fi
run repair/rollback-force 0 'saved blocks written back' bcache_repair --force --rollback "$tmp/rp.undo" "$tmp/rp-ip.img"
# A damaged record before the end: nothing written back.  A torn last
# record (the repair stopped while saving it): the others are.
printf 'XXXXXXXX' | dd of="$tmp/rp-bad.undo" bs=1 seek=32 conv=notrunc status=none
cp --sparse=always "$tmp/rp-used.img" "$tmp/rp-bad.img"
run repair/rollback-damaged 2 'record 0 is damaged: nothing written back' bcache_repair --rollback "$tmp/rp-bad.undo" "$tmp/rp-bad.img"
if cmp -s "$tmp/rp-bad.img" "$tmp/rp-used.img"; then pass repair/rollback-damaged-untouched; else failc repair/rollback-damaged-untouched "written"; fi
truncate -s -30 "$tmp/rp-torn.undo"
run repair/rollback-torn 0 'the last record is torn' bcache_repair --rollback "$tmp/rp-torn.undo" "$tmp/rp-bad.img"
# The root node zeroed (two levels, all 4 MiB dirty in the leaves): the
# whole origin is listed, and the leaves, found by scanning the buckets,
# give back all their dirty data: the copy serves the seeded 4 MiB.
cp --sparse=always "$rc_img" "$tmp/rp-r.img"
"$bin/bcache_damage" root-zero "$tmp/rp-r.img" >/dev/null
run repair/root-zero 1 'scan: 1024 dirty extents of theirs kept in lost ranges, 0 left out' \
	bcache_repair -i "$tmp/rp-r.img" -o "$tmp/rp-ro.img"
run repair/root-zero-listed 1 '^lost: slot 0 \([-0-9a-f]+\) sectors 0-end: btree node damaged' \
	bcache_repair -n -i "$tmp/rp-r.img"
"$bin/bcache_export" -q --sectors 8192 "$tmp/rp-ro.img" "$rb_img" "$tmp/rp-r.out"
if cmp -s -n $((4 << 20)) "$tmp/rp-r.out" "$tmp/seed.data"; then pass repair/root-zero-data; else failc repair/root-zero-data "differs from the seeded data"; fi
# The journal zeroed: the prio chain and the UUID table are found by
# scanning the buckets, the whole origin is listed (the root and any
# write logged only in the journal went with it), and the leaves, found
# as orphans, give back all their dirty data.
cp --sparse=always "$rc_img" "$tmp/rp-z.img"
"$bin/bcache_damage" journal-zero "$tmp/rp-z.img" >/dev/null
run repair/journal-lost 1 '^lost: slot 0 \([-0-9a-f]+\) sectors 0-end: journal lost$' \
	bcache_repair -i "$tmp/rp-z.img" -o "$tmp/rp-zo.img"
out_has repair/journal-lost-chain '^salvage: prio chain: seq [0-9]+ from bucket [0-9]+$'
out_has repair/journal-lost-table '^salvage: UUID table: bucket [0-9]+ \(the newest of 1 found, stamped [0-9]+; 0 as new\)$'
"$bin/bcache_export" -q --sectors 8192 "$tmp/rp-zo.img" "$rb_img" "$tmp/rp-z.out"
if cmp -s -n $((4 << 20)) "$tmp/rp-z.out" "$tmp/seed.data"; then pass repair/journal-lost-data; else failc repair/journal-lost-data "differs from the seeded data"; fi
# An earlier set's UUID table left in a bucket this set never used (the
# last), naming another origin in slot 0 and stamped a minute earlier:
# the newer table is taken, and slot 0 is listed with this set's UUID.
# Stamped as new as this set's: which one is current is unknown, and
# nothing is guessed.
stale_table() {	# stale_table IMG SECONDS-EARLIER
	"$bin/bcache_dump" "$1" | python3 -c '
import re, struct, sys
img, back = sys.argv[1], int(sys.argv[2])
d = sys.stdin.read()
nb, bsz = map(int, re.search(r"nbuckets (\d+) bucket_size (\d+)", d).groups())
at = int(re.search(r"uuids \S+ node \d+ ptr \d+:(\d+)", d).group(1)) * 512
with open(img, "r+b") as f:
	f.seek(at)
	t = bytearray(f.read(bsz * 512))
	when = max(struct.unpack_from("<3I", t, i * 128 + 48)[j]
		   for i in range(len(t) // 128) for j in range(3))
	t[0:16] = bytes(range(0x40, 0x50))
	struct.pack_into("<2I", t, 48, when - back, when - back)
	f.seek((nb - 1) * bsz * 512)
	f.write(t)
' "$1" "$2"
}
zuuid=$("$bin/bcache_dump" "$rc_img" | awk '/^uuid slot 0:/ { print $4 }')
cp --sparse=always "$rc_img" "$tmp/rp-zs.img"
stale_table "$tmp/rp-zs.img" 60
"$bin/bcache_damage" journal-zero "$tmp/rp-zs.img" >/dev/null
run repair/journal-lost-stale-table 1 '^salvage: UUID table: bucket [0-9]+ \(the newest of 2 found, stamped [0-9]+; 0 as new\)$' \
	bcache_repair -n -i "$tmp/rp-zs.img"
out_has repair/journal-lost-stale-table-slot "^lost: slot 0 \\($zuuid\\) sectors 0-end: journal lost$"
cp --sparse=always "$rc_img" "$tmp/rp-zs.img"
stale_table "$tmp/rp-zs.img" 0
"$bin/bcache_damage" journal-zero "$tmp/rp-zs.img" >/dev/null
run repair/journal-lost-tied-tables 3 '^salvage: UUID tables in buckets [0-9]+ and 2047, both stamped [0-9]+, disagree' \
	bcache_repair -n -i "$tmp/rp-zs.img"
# The administrator names the table (either one) or the prio chain;
# a bucket that is no table or no chain leaves nothing usable; a table
# named with a valid journal entry is refused (the entry names one).
run repair/given-uuid-bucket 1 '^lost: slot 0 \(40414243-4445-4647-4849-4a4b4c4d4e4f\) sectors 0-end: journal lost$' \
	bcache_repair -n --uuid-bucket 2047 -i "$tmp/rp-zs.img"
out_has repair/given-uuid-bucket-said '^salvage: UUID table: bucket 2047, as given$'
zbucket=$(( $("$bin/bcache_dump" "$rc_img" | sed -n 's/^  uuids .* ptr [0-9]*:\([0-9]*\) .*/\1/p' | tail -n 1) / 256 ))
run repair/given-uuid-bucket-other 1 "^lost: slot 0 \\($zuuid\\) sectors 0-end: journal lost$" \
	bcache_repair -n --uuid-bucket "$zbucket" -i "$tmp/rp-zs.img"
run repair/given-uuid-bucket-no-table 3 '^salvage: bucket 2046 \(given\) does not read as a UUID table$' \
	bcache_repair -n --uuid-bucket 2046 -i "$tmp/rp-zs.img"
zprio=$("$bin/bcache_dump" "$rc_img" | sed -n 's/^prio bucket \([0-9]*\): .*/\1/p' | head -n 1)
run repair/given-prio-bucket 1 "^salvage: prio chain: seq [0-9]+ from bucket $zprio, as given$" \
	bcache_repair -n --prio-bucket "$zprio" --uuid-bucket "$zbucket" -i "$tmp/rp-zs.img"
run repair/given-prio-bucket-no-chain 3 '^salvage: prio chain from bucket 2046 unreadable' \
	bcache_repair -n --prio-bucket 2046 -i "$tmp/rp-zs.img"
run repair/given-prio-bucket-journalled 1 "^salvage: prio chain: from bucket $zprio as given, not bucket $zprio as journal seq [0-9]+ names$" \
	bcache_repair -n --prio-bucket "$zprio" -i "$tmp/rp-d.img"
run repair/given-uuid-bucket-journalled 2 '^salvage: journal seq [0-9]+ names the UUID table: --uuid-bucket is for a lost journal$' \
	bcache_repair -n --uuid-bucket "$zbucket" -i "$tmp/rp-d.img"
run repair/given-bucket-clean 0 '^the buckets given are not used: nothing to repair$' \
	bcache_repair -n --prio-bucket "$zprio" -i "$rc_img"
run repair/given-bucket-usage 2 "--prio-bucket: 'x'" bcache_repair -n --prio-bucket x -i "$tmp/rp-d.img"
# The journal's keys: with all the data in the journal, a damaged root
# leaf loses nothing of it (its range is listed all the same: what the
# node held is unknown).
cp --sparse=always "$rc_img" "$tmp/rp-j.img"
"$bin/bcache_format" -q --wipe-bcache -b 128k -w 512 -C "$tmp/rp-j.img" -B "$rb_img"
"$bin/bcache_seed" --dirty --journal "$tmp/rp-j.img" "$rb_img" "$tmp/seed.data" 4 >/dev/null
cp --sparse=always "$tmp/rp-j.img" "$tmp/rp-jl.img"
"$bin/bcache_damage" node-zero "$tmp/rp-j.img" >/dev/null
run repair/journal 1 '1024 from the journal' bcache_repair -i "$tmp/rp-j.img" -o "$tmp/rp-jo.img"
"$bin/bcache_export" -q --sectors 8192 "$tmp/rp-jo.img" "$rb_img" "$tmp/rp-j.out"
if cmp -s -n $((4 << 20)) "$tmp/rp-j.out" "$tmp/seed.data"; then pass repair/journal-data; else failc repair/journal-data "differs from the seeded data"; fi
# The UUID table lost, and no older journal entry naming another: no
# origin's slot is known, so all each slot held is listed (not dropped
# unsaid, as a table taken for empty would).
cp --sparse=always "$rc_img" "$tmp/rp-u.img"
"$bin/bcache_damage" uuid-ptr "$tmp/rp-u.img" >/dev/null
run repair/uuids-lost 1 '^lost: slot 0 \([-0-9a-f]+\) sectors 0-end: UUID table lost' \
	bcache_repair -i "$tmp/rp-u.img" -o "$tmp/rp-uo.img"
# An in-place repair that stops part way (neither the undo file nor the
# device may grow past 2 MiB: the first write beyond fails) leaves the
# device flagged needs_check, which the target refuses; the undo file
# gives the damaged image back, and a second repair completes.
cp --sparse=always "$tmp/rp-d.img" "$tmp/rp-i.img"
rm -f "$tmp/rp-i.undo" "$tmp/rp-i2.undo"
run repair/interrupted 2 'writing the repaired cache failed' /bin/bash -c \
	"trap '' XFSZ; ulimit -f 2048; exec '$bin/bcache_repair' --in-place --undo-file '$tmp/rp-i.undo' '$tmp/rp-i.img'"
run repair/interrupted-flagged 1 'needs_check set' bcache_check "$tmp/rp-i.img"
cp --sparse=always "$tmp/rp-i.img" "$tmp/rp-i2.img"
run repair/interrupted-rollback 0 'saved blocks written back' bcache_repair --rollback "$tmp/rp-i.undo" "$tmp/rp-i2.img"
if cmp -s "$tmp/rp-i2.img" "$tmp/rp-d.img"; then pass repair/interrupted-rollback-data; else failc repair/interrupted-rollback-data "not the damaged image again"; fi
run repair/interrupted-again 1 'btree node damaged' bcache_repair --in-place --undo-file "$tmp/rp-i2.undo" "$tmp/rp-i.img"
run repair/interrupted-again-check 0 ' 0 damage findings, 0 tolerated, 0 notes' bcache_check "$tmp/rp-i.img"
# The newest entry's last_seq past its seq: replay's start is unknown,
# so nothing is replayed and every range the journal logs is listed (the
# 4 MiB the journal alone holds, past the backing data offset), not
# dropped unsaid.
"$bin/bcache_damage" journal-last-seq "$tmp/rp-jl.img" >/dev/null
run repair/journal-range-unknown 1 '^lost: slot 0 \([-0-9a-f]+\) sectors 16-8207: journal replay range unknown' \
	bcache_repair -i "$tmp/rp-jl.img" -o "$tmp/rp-jlo.img"
cp --sparse=always "$rc_img" "$tmp/rp-p.img"
"$bin/bcache_damage" prio-magic "$tmp/rp-p.img" >/dev/null
run repair/no-prios 3 'bucket generations are unknown' bcache_repair -i "$tmp/rp-p.img" -o "$tmp/rp-po.img"
run repair/usage-no-output 2 'both are needed' bcache_repair -i "$rc_img"
run repair/usage-in-place 2 'needs --undo-file' bcache_repair --in-place "$rc_img"
run repair/usage-undo-alone 2 'goes with --in-place' bcache_repair -i "$rc_img" -o "$tmp/x.img" --undo-file "$tmp/x.undo"
run repair/help 0 'usage: bcache_repair' bcache_repair --help
rm -f "$tmp"/rp-*

# --- needs_check: the flag a failed table leaves -------------------------------
# The checker notes it; --clear-needs-check-flag clears it only on a
# cache that checks clean, and only with a whole check of a device not
# in use.
cp "$tmp/seed-c.img" "$tmp/nc.img"
run needs-check/set 0 'applied needs-check' "$bin/bcache_damage" needs-check "$tmp/nc.img"
run needs-check/noted 0 'note: superblock: needs_check set' bcache_check "$tmp/nc.img"
cp "$tmp/nc.img" "$tmp/nc-dmg.img"
run needs-check/damage 0 'applied prio-magic' "$bin/bcache_damage" prio-magic "$tmp/nc-dmg.img"
run needs-check/damaged-stays 1 'damage found: needs_check stays set' bcache_check --clear-needs-check-flag "$tmp/nc-dmg.img"
run needs-check/damaged-still-set 1 'needs_check set' bcache_check "$tmp/nc-dmg.img"
run needs-check/force-refused 2 'needs a whole check' bcache_check --force --clear-needs-check-flag "$tmp/nc.img"
run needs-check/skip-refused 2 'needs a whole check' bcache_check --skip-btree --clear-needs-check-flag "$tmp/nc.img"
run needs-check/clear 0 'needs_check cleared' bcache_check --clear-needs-check-flag "$tmp/nc.img"
run needs-check/cleared 0 ' 0 damage findings, 0 tolerated, 0 notes' bcache_check "$tmp/nc.img"
run needs-check/clear-again 0 'needs_check is not set' bcache_check --clear-needs-check-flag "$tmp/nc.img"

# --- refusals and usage ---------------------------------------------------------
img=$tmp/small.img
truncate -s 256M "$img"
run format/too-small 1 'needs at least 513 buckets' bcache_format -C "$img"
run format/too-small-hint 1 'hold 512 buckets of 512 KiB; use --bucket 256k or smaller' bcache_format -C "$img"
run format/fits 0 'nbuckets:		1024' bcache_format -b 256k -C "$img"
run format/exists 1 'holds a bcache superblock; use --wipe-bcache' bcache_format -b 256k -C "$img"
run format/wipe 0 'cache device' bcache_format --wipe-bcache -b 128k -C "$img"
run format/bad-bucket 2 "'3k' is not a size in bytes that is a power of two from 4k to 16M" bcache_format -b 3k -C "$img"
run format/bad-policy 2 "'lfu' is not one of lru, fifo, random" bcache_format --cache_replacement_policy lfu -C "$img"
run format/bad-uuid 2 "'nope' is not a UUID" bcache_format --cset-uuid nope -C "$img"
run format/no-device 2 'name a cache' bcache_format
run format/stray-arg 2 'unexpected argument' bcache_format -C "$img" extra
run format/missing 2 'No such file' bcache_format -C "$tmp/none.img"
run format/help 0 'usage: bcache_format' bcache_format --help
run format/policy-fifo 0 'cache device' bcache_format --wipe-bcache -b 128k --cache_replacement_policy fifo --discard -C "$img"
run format/policy-fifo-show 0 'dev.cache.replacement[[:space:]]+1 \[fifo\]' /usr/sbin/bcache-super-show "$img"
run format/discard-show 0 'dev.cache.discard[[:space:]]+yes' /usr/sbin/bcache-super-show "$img"
cset=11111111-2222-3333-4444-555555555555
run format/cset-uuid 0 "Set UUID:.*$cset" bcache_format --wipe-bcache -b 128k --cset-uuid $cset -C "$img"
run check/usage 2 'missing DEVICE-OR-IMAGE' bcache_check
run check/usage-two 2 'too many arguments' bcache_check "$img" "$img"
run check/missing 2 'No such file' bcache_check "$tmp/none.img"
run check/help 0 'super-block-only' bcache_check --help
run check/quiet 0 '^$' bcache_check -q "$img"
run check/super-block-only 0 ' 0 damage findings' bcache_check --super-block-only "$img"
run check/skip-btree 0 ' 0 damage findings' bcache_check --skip-btree --skip-uuids --skip-prios "$img"
# --skip-mappings is --skip-btree: a damaged leaf is not seen.
cp --sparse=always "$img" "$tmp/sm.img"
"$bin/bcache_damage" node-magic "$tmp/sm.img" >/dev/null
run check/skip-mappings 0 ' 0 damage findings' bcache_check --skip-mappings "$tmp/sm.img"
run check/skip-mappings-off 1 '^damage: btree-node:' bcache_check "$tmp/sm.img"
truncate -s 64M "$tmp/zero.img"
run check/all-zero 0 'blank \(sectors 0-15 are zero\)' bcache_check "$tmp/zero.img"
printf 'x' | dd of="$tmp/zero.img" bs=1 seek=100 conv=notrunc status=none
run check/not-blank 1 'superblock: superblock \(sector 8\): Not a bcache superblock \(bad offset\)' bcache_check "$tmp/zero.img"
run dump/usage 2 'usage' bcache_dump
run dump/missing 2 'No such file' bcache_dump "$tmp/none.img"

# --- bcache_logreplay on dm-log-writes logs made here ----------------------------
# The layout as drivers/md/dm-log-writes.c writes it (see the tool's header).
python3 - "$tmp" <<'EOP'
import struct, sys
d = sys.argv[1]
MAGIC = 0x6a736677736872

def entry(ss, sector, nr, flags, data=b'', mark=b''):
	hdr = struct.pack('<QQQQ', sector, nr, flags, len(mark)) + mark
	return hdr.ljust(ss, b'\0') + data

def log(name, ss, entries, magic=MAGIC, version=1, nr=None, pad=4096):
	sb = struct.pack('<QQQI', magic, version,
			 len(entries) if nr is None else nr, ss).ljust(ss, b'\0')
	open(f'{d}/{name}', 'wb').write(sb + b''.join(entries) + b'\0' * pad)

A, B, C, D = (bytes([c]) * 4096 for c in b'ABCD')
end = lambda ss: entry(ss, 0, 0, 8, mark=b'dm-log-writes-end')
# write, flush, mark, FUA write, discard, flush, flush with data (no FUA),
# write, flush, end mark: four flush points.
good = [entry(512, 0, 8, 0, A), entry(512, 0, 0, 1), entry(512, 0, 0, 8, mark=b'x'),
	entry(512, 16, 8, 2, B), entry(512, 0, 8, 4), entry(512, 0, 0, 1),
	entry(512, 32, 8, 1, C), entry(512, 40, 8, 0, D), entry(512, 0, 0, 1), end(512)]
log('good.log', 512, good)
log('open.log', 512, good[:-1])
log('magic.log', 512, good, magic=MAGIC + 1)
log('version.log', 512, good, version=2)
log('ss.log', 768, [])
log('flags.log', 512, [entry(512, 0, 8, 64, A)])
log('trunc.log', 512, good, nr=20, pad=0)
log('past.log', 512, [entry(512, 200, 8, 0, A), entry(512, 0, 0, 1), end(512)])
log('ss4k.log', 4096, [entry(4096, 1, 1, 0, A), entry(4096, 0, 0, 1), end(4096)])
ff = b'\xff' * 65536
open(f'{d}/lr.dev', 'wb').write(ff)
open(f'{d}/lr4k.dev', 'wb').write(ff)
# The device after flush points 1, 2 (3 stops before its data) and 4.
img = bytearray(ff)
img[0:4096] = A
open(f'{d}/lr1.img', 'wb').write(img)
img[0:4096] = bytes(4096)
img[8192:12288] = B
open(f'{d}/lr2.img', 'wb').write(img)
img[16384:20480] = C
img[20480:24576] = D
open(f'{d}/lr4.img', 'wb').write(img)
img = bytearray(ff)
img[4096:8192] = A
open(f'{d}/lr4k.img', 'wb').write(img)
EOP
same_img() {	# same_img NAME DEV IMG
	if cmp -s "$2" "$3"; then pass "$1"; else failc "$1" "the replayed device differs"; fi
}
lr=$tmp/good.log
run logreplay/info 0 'flushes 4' bcache_logreplay info "$lr"
run logreplay/info-closed 0 'closed 1' bcache_logreplay info "$lr"
run logreplay/info-marks 0 'mark 2 x' bcache_logreplay info "$lr"
run logreplay/info-open 0 'closed 0' bcache_logreplay info "$tmp/open.log"
run logreplay/list 0 '^6 23 FLUSH 32 8$' bcache_logreplay list "$lr"
run logreplay/to-1 0 '^2:11:1$' bcache_logreplay replay "$lr" "$tmp/lr.dev" 0 1
same_img logreplay/to-1-data "$tmp/lr.dev" "$tmp/lr1.img"
run logreplay/to-2 0 '^6:23:2$' bcache_logreplay replay "$lr" "$tmp/lr.dev" 2:11:1 2
same_img logreplay/to-2-data "$tmp/lr.dev" "$tmp/lr2.img"
# Flush point 3 carries data without FUA: the replay stops before it.
run logreplay/to-3 0 '^6:23:2$' bcache_logreplay replay "$lr" "$tmp/lr.dev" 6:23:2 3
same_img logreplay/to-3-data "$tmp/lr.dev" "$tmp/lr2.img"
run logreplay/to-4 0 '^9:42:4$' bcache_logreplay replay "$lr" "$tmp/lr.dev" 6:23:2 4
same_img logreplay/to-4-data "$tmp/lr.dev" "$tmp/lr4.img"
run logreplay/to-end 0 '^10:43:4$' bcache_logreplay replay "$lr" "$tmp/lr.dev" 9:42:4 end
# A position that is not an entry's: its "header" is checked.
run logreplay/pos-not-entry 1 'entry 9: empty write without FLUSH' bcache_logreplay replay "$lr" "$tmp/lr.dev" 9:50:4 end
run logreplay/from-start 0 '^9:42:4$' bcache_logreplay replay "$lr" "$tmp/lr.dev" 0 4
same_img logreplay/from-start-data "$tmp/lr.dev" "$tmp/lr4.img"
run logreplay/ss4k 0 '^2:32:1$' bcache_logreplay replay "$tmp/ss4k.log" "$tmp/lr4k.dev" 0 1
same_img logreplay/ss4k-data "$tmp/lr4k.dev" "$tmp/lr4k.img"
run logreplay/no-such-flush 1 'only 4 flush entries, not 5' bcache_logreplay replay "$lr" "$tmp/lr.dev" 0 5
run logreplay/behind 2 'flush point 1 is behind' bcache_logreplay replay "$lr" "$tmp/lr.dev" 6:23:2 1
run logreplay/bad-pos 2 'bad position' bcache_logreplay replay "$lr" "$tmp/lr.dev" 6:23 3
run logreplay/pos-misfit 2 'does not fit this log' bcache_logreplay replay "$lr" "$tmp/lr.dev" 99:23:2 3
run logreplay/bad-point 2 'bad flush point' bcache_logreplay replay "$lr" "$tmp/lr.dev" 0 0
run logreplay/magic 1 'not a dm-log-writes log' bcache_logreplay info "$tmp/magic.log"
run logreplay/version 1 'log version 2 unsupported' bcache_logreplay info "$tmp/version.log"
run logreplay/sectorsize 1 'bad sectorsize 768' bcache_logreplay info "$tmp/ss.log"
run logreplay/flags 1 'unknown flags 0x40' bcache_logreplay info "$tmp/flags.log"
run logreplay/truncated 1 'past the end of the log' bcache_logreplay info "$tmp/trunc.log"
run logreplay/past-dev 1 'past the end of' bcache_logreplay replay "$tmp/past.log" "$tmp/lr.dev" 0 1
run logreplay/not-a-log 2 'cannot read the super block' bcache_logreplay info /dev/null
run logreplay/missing 2 'No such file' bcache_logreplay info "$tmp/none.log"
run logreplay/usage 2 'usage' bcache_logreplay replay "$lr"
exit 0
