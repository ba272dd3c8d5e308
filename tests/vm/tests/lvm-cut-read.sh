# Second boot of the lvm power cut (after lvm-cut-write): vgchange -ay
# runs bcache_check on the cache volume, which must pass on a cache cut
# in use, and activates the LV; the 24 MiB written before the cut are
# there and still dirty (the origin does not hold them); --splitcache
# writes them back, and the plain LV then reads them from the origin.
. /tests/lib.sh
. /tests/lib-lvm.sh
vgchange -ay -vvvv vg 2>/tmp/err || fail "vgchange -ay after the cut: $(grep -i -e error -e fail /tmp/err | tail -n 5)"
grep -q "Running check command on /dev/mapper/vg-fast_cvol" /tmp/err ||
	fail "no bcache_check ran on activation"
expect_eq "LVs after the cut" "$(segtypes)" "[fast_cvol]:linear main:bcache [main_bcorig]:linear "
log "dirty $(dirty) sectors after the cut"
[ "$(dirty)" -ge $((24 * 2048)) ] || fail "dirty $(dirty) after the cut, want the 24 MiB"
same_lv 24 "data lost by the power cut"
same_direct /dev/mapper/vg-main_bcorig 0 $DATA_DEV 0 $((24 * 2048)) >/dev/null 2>&1 &&
	fail "the origin holds the data already: the cut tested nothing"
lvconvert --splitcache vg/main
expect_eq "LVs after the split" "$(segtypes)" "fast:linear main:linear "
same_lv 24 "data lost by the split after the cut"
vgremove -q -y vg
pvremove -q $ORIGIN_DEV $CACHE_DEV
