# lvm2 with the bcache segment type (lvm2-plugin/patches, built by make
# lvm2): lvconvert --type bcache --cachevol on an active LV gives the
# target's table (mode, settings, origin_layout raw); write-back data
# survives vgchange -an/-ay; --splitcache writes every dirty block back
# (active, and inactive) and leaves the cache volume an ordinary LV with
# the origin holding all the data; --uncache and lvremove take the cache
# volume with them; a bad setting is refused with nothing changed; a
# resize is refused while cached.
. /tests/lib.sh
[ -e /opt/lvm2-dmbcache/version ] || fail "the initramfs has no patched lvm2 (make lvm2 builds it)"
export PATH=/opt/lvm2-dmbcache/sbin:$PATH LD_LIBRARY_PATH=/opt/lvm2-dmbcache/lib
log "lvm2 $(cat /opt/lvm2-dmbcache/version)"
lvm segtypes | grep -qw bcache || fail "lvm has no bcache segment type: $(lvm segtypes | tr '\n' ' ')"
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
pvcreate -q $ORIGIN_DEV $CACHE_DEV
vgcreate -q vg $ORIGIN_DEV $CACHE_DEV
lvcreate -q -y -n main -L 64M vg $ORIGIN_DEV
lvcreate -q -y -n fast -L 128M -an -Zn vg $CACHE_DEV
# put MIB COUNT: DATA_DEV's MiB MIB.. to the same place in the LV.
put() {
	dd if=$DATA_DEV of=/dev/mapper/vg-main bs=1M skip="$1" seek="$1" count="$2" \
		oflag=direct conv=fsync status=none
}
put 0 16

# put_dirty MIB COUNT: put, again until the LV shows that much dirty (a
# fresh cache has no bucket ready until its first refill, and bypasses).
put_dirty() {
	local i
	for i in 1 2 3 4 5; do
		put "$1" "$2"
		[ "$(dirty)" -ge $(($2 * 2048)) ] && return 0
		sleep 1
	done
	dmsetup status vg-main
	fail "dirty $(dirty) after writing $2 MiB in write-back mode"
}

field() { dmsetup status "$1" | awk -v n="$2" '{ print $(n + 3) }'; }
dirty() { field vg-main 4; }
# same_lv MIB: the LV's first MIB MiB are DATA_DEV's.
same_lv() { same_direct /dev/mapper/vg-main 0 $DATA_DEV 0 $(($1 * 2048)) || fail "$2"; }
attach() {
	lvconvert -y --type bcache --cachevol fast --cachemode writeback \
		--cachesettings 'sequential_cutoff=0 writeback_delay=3600' \
		--cachesettings 'congested_read_threshold_us=0 congested_write_threshold_us=0' vg/main
}
# segtypes: "name:segtype" of every LV, hidden ones included.
segtypes() { lvs --noheadings -a -o lv_name,segtype vg | awk '{ printf "%s:%s ", $1, $2 }'; }

log "attach to an active LV"
attach
table=$(dmsetup table vg-main)
log "table: $table"
case "$table" in
*" bcache "*" 11 writeback origin_layout raw sequential_cutoff 0 writeback_delay 3600 congested_read_threshold_us 0 congested_write_threshold_us 0") ;;
*) fail "unexpected table: $table" ;;
esac
expect_eq "LVs" "$(segtypes)" "[fast_cvol]:linear main:bcache [main_bcorig]:linear "
same_lv 16 "the LV lost its data when the cache was attached"

log "write-back data across vgchange -an/-ay"
put_dirty 16 8
vgchange -q -an vg
vgchange -q -ay vg
[ "$(dirty)" -gt 0 ] || fail "the dirty data was lost across deactivation"

log "lvs fields from the target's status (in its blocks) and the metadata"
# status: 1 block size, 2 bucket size, 3 used/total buckets, 4 dirty sectors, 5-8 hits and misses
read -r bs bucket ut dsec rh rm wh wm <<<"$(dmsetup status vg-main | awk '{ print $4, $5, $6, $7, $8, $9, $10, $11 }')"
want="writeback $((${ut#*/} * bucket / bs)) $((${ut%/*} * bucket / bs)) $((dsec / bs)) $rh $rm $wh $wm"
got=$(lvs --noheadings -o cache_mode,cache_total_blocks,cache_used_blocks,cache_dirty_blocks,cache_read_hits,cache_read_misses,cache_write_hits,cache_write_misses vg/main | xargs)
expect_eq "lvs cache fields" "$got" "$want"
got=$(lvs --noheadings -o cache_settings vg/main | xargs)
expect_eq "lvs cache_settings" "$got" "sequential_cutoff=0,writeback_delay=3600,congested_read_threshold_us=0,congested_write_threshold_us=0"
same_lv 24 "write-back data lost across vgchange -an/-ay"

log "refused: a resize while cached, a bad value, an unknown key"
lvextend -q -L +4M vg/main 2>/tmp/err && fail "lvextend of a cached LV succeeded"
grep -q "detach it first" /tmp/err || fail "lvextend: $(cat /tmp/err)"

log "--splitcache of the active LV"
lvconvert --splitcache vg/main | tee /tmp/split
grep -q "Flushing" /tmp/split || fail "no progress shown while flushing"
expect_eq "LVs after the split" "$(segtypes)" "fast:linear main:linear "
case "$(dmsetup table vg-main)" in *linear*) ;; *) fail "not linear: $(dmsetup table vg-main)" ;; esac
same_lv 24 "data lost by the split"

log "a bad value: the target refuses, nothing changes"
lvconvert -y --type bcache --cachevol fast --cachesettings 'writeback_percent=99' vg/main 2>/tmp/err &&
	fail "writeback_percent=99 was taken"
expect_eq "LVs after a refused attach" "$(segtypes)" "fast:linear main:linear "
lvconvert -y --type bcache --cachevol fast --cachesettings 'no_such_key=1' vg/main 2>/tmp/err &&
	fail "an unknown key was taken"
grep -q "Unknown bcache setting no_such_key" /tmp/err || fail "unknown key: $(cat /tmp/err)"
same_lv 24 "data lost by a refused attach"

log "--splitcache of an inactive LV writes back too"
attach
put_dirty 24 8
lvchange -q -an vg/main
lvconvert --splitcache vg/main
expect_eq "LVs after the inactive split" "$(segtypes)" "fast:linear main:linear "
lvchange -q -ay vg/main
same_lv 32 "data lost by the inactive split"

log "--uncache removes the cache volume"
attach
lvconvert --uncache vg/main
expect_eq "LVs after --uncache" "$(segtypes)" "main:linear "
same_lv 32 "data lost by --uncache"

log "lvremove of a cached LV"
lvcreate -q -y -n fast -L 128M -an -Zn vg $CACHE_DEV
attach
lvremove -q -y vg/main
expect_eq "LVs after lvremove" "$(segtypes)" ""
vgremove -q -y vg
pvremove -q $ORIGIN_DEV $CACHE_DEV
exit 0
