# Errors in the cache's data while its metadata works: the cache is a
# dm device over vda, and after dirty (write-back) and clean
# (write-through) data are written, the 4 KiB where one dirty extent's
# data and one clean extent's data begin (found with bcache_dump --json)
# become error-target holes.  A read hit on the dirty block fails with an
# I/O error, never the origin's older data; the rest of the dirty extent's
# MiB still reads from the cache; a read hit on the clean block is served
# from the origin, right; both count in cache_errors; the metadata state
# stays rw.  A flush, which cannot copy the unreadable block, fails and
# the block stays dirty: dirty data is never dropped.
. /tests/lib.sh
load_module
csec=$(sectors $CACHE_DEV)
len=$((64 * 2048))
dmsetup create cdev --table "0 $csec linear $CACHE_DEV 0"
table() { echo "0 $len bcache /dev/mapper/cdev $ORIGIN_DEV 9 $1 $NOBYPASS writeback_delay 3600"; }

# Clean first: a switch from write-back to writethrough would drain.
dmsetup create dmb --table "$(table writethrough)"
write_data /dev/mapper/dmb 20 4		# clean: reference MiB 0-3
dmsetup message dmb 0 cache_mode writeback
write_data /dev/mapper/dmb 8 4		# dirty: reference MiB 0-3 again
[ "$(status_field dmb 4)" -ge $((4 * 2048)) ] || fail "the 4 MiB written in write-back are not dirty"
dmsetup remove dmb

# extent DIRTY LO HI: "start ptr" of the first extent whose dirty flag is
# DIRTY (true/false) and that starts within [LO, HI) of the target.
extent() {
	bcache_dump --json /dev/mapper/cdev |
		grep -oE "\"offset\":[0-9]+,\"size\":[0-9]+,\"dirty\":$1,\"ptrs\":\\[\\{\"dev\":0,\"offset\":[0-9]+" |
		sed -E 's/"offset":([0-9]+),"size":([0-9]+),.*"offset":([0-9]+)$/\1 \2 \3/' |
		awk -v lo="$2" -v hi="$3" '$2 >= 8 && $1 - $2 >= lo && $1 - $2 < hi { print $1 - $2, $3; exit }'
}
read -r dstart dptr <<<"$(extent true $((8 * 2048)) $((12 * 2048)))"
read -r cstart cptr <<<"$(extent false $((20 * 2048)) $((24 * 2048)))"
[ -n "$dptr" ] && [ -n "$cptr" ] || fail "no dirty or clean extent found in the dump"
log "dirty extent at $dstart (cache sector $dptr), clean at $cstart (cache sector $cptr)"

# The cache with two 4 KiB holes, in sector order.
{
	at=0
	for h in $(printf '%s\n' "$dptr" "$cptr" | sort -n); do
		[ "$h" -gt "$at" ] && echo "$at $((h - at)) linear $CACHE_DEV $at"
		echo "$h 8 error"
		at=$((h + 8))
	done
	echo "$at $((csec - at)) linear $CACHE_DEV $at"
} >/tmp/holes
dmsetup suspend cdev
dmsetup reload cdev /tmp/holes
dmsetup resume cdev

dmsetup create dmb --table "$(table writeback)"
dd if=/dev/mapper/dmb of=/tmp/block bs=4k skip=$((dstart / 8)) count=1 iflag=direct status=none 2>/dev/null &&
	fail "a read of dirty data the cache cannot read succeeded (the origin's older data?)"
# The rest of the dirty extent's MiB reads from the cache.
rest=$(( (dstart % 2048) + 8 ))	# sectors into its MiB past the hole
dd if=$DATA_DEV of=/tmp/want bs=512 skip=$((dstart + 8 - 8 * 2048)) count=$((2048 - rest)) status=none
dd if=/dev/mapper/dmb bs=512 skip=$((dstart + 8)) count=$((2048 - rest)) iflag=direct status=none |
	cmp - /tmp/want || fail "dirty data past the hole differs"
rm -f /tmp/want
same_direct /dev/mapper/dmb $((20 * 2048)) $DATA_DEV 0 $((4 * 2048)) ||
	fail "clean data around and in the hole differs (the hole is served from the origin)"
errors=$(counter cache_errors)
log "cache_errors $errors, state $(status_field dmb 13)"
[ "$errors" -ge 2 ] || fail "cache_errors $errors, want at least 2"
expect_eq "metadata state" "$(status_field dmb 13)" rw

dmsetup message dmb 0 flush 2>/dev/null && fail "a flush with unreadable dirty data succeeded"
[ "$(status_field dmb 4)" -gt 0 ] || fail "the unreadable dirty block was dropped"
log "after the failed flush: dirty $(status_field dmb 4), writeback_errors $(counter writeback_errors)"
[ "$(counter writeback_errors)" -gt 0 ] || fail "the failed copy was not counted"
dmsetup remove dmb
dmsetup remove cdev
exit 0
