# lvm2 with the bcache segment type (lvm2-plugin/patches, built by make
# lvm2): lvconvert --type bcache --cachevol on an active LV gives the
# target's table (mode, settings, origin_layout raw); write-back data
# survives vgchange -an/-ay; --splitcache writes every dirty block back
# (active, and inactive) and leaves the cache volume an ordinary LV with
# the origin holding all the data; --uncache and lvremove take the cache
# volume with them; a bad setting is refused with nothing changed; a
# resize is refused while cached; --cachedevice makes the cache volume on
# a PV, and --uncache removes it.  lvchange --cachemode/--cachesettings
# on the active LV under a writer (keys replaced, added, dropped with
# "default", all cleared with ""), to passthrough after writing the dirty
# data back, and on the inactive LV (a value the target refuses changes
# nothing); activation runs bcache_check and refuses a cache whose
# superblock is damaged, naming bcache_repair; a cache the target failed
# (its volume's I/O failing) is split off only with --force, and lvm
# says how much is lost; so is the cache of an inactive LV that cannot
# be activated (its superblock damaged), lvm naming bcache_writeback,
# which then copies the dirty data from the detached volume to the LV.
. /tests/lib.sh
. /tests/lib-lvm.sh
make_vg
put 0 16

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
attr=$(lvs --noheadings -o lv_attr vg/main | xargs)
expect_eq "lv_attr type and health" "${attr:0:1}${attr:8:1}" "C-"
# status: 1 block size, 2 bucket size, 3 used/total buckets, 4 dirty sectors, 5-8 hits and misses
read -r bs bucket ut dsec rh rm wh wm <<<"$(dmsetup status vg-main | awk '{ print $4, $5, $6, $7, $8, $9, $10, $11 }')"
want="writeback $((${ut#*/} * bucket / bs)) $((${ut%/*} * bucket / bs)) $((dsec / bs)) $rh $rm $wh $wm"
got=$(lvs --noheadings -o cache_mode,cache_total_blocks,cache_used_blocks,cache_dirty_blocks,cache_read_hits,cache_read_misses,cache_write_hits,cache_write_misses vg/main | xargs)
expect_eq "lvs cache fields" "$got" "$want"
got=$(lvs --noheadings -o cache_settings vg/main | xargs)
expect_eq "lvs cache_settings" "$got" "sequential_cutoff=0,writeback_delay=3600,congested_read_threshold_us=0,congested_write_threshold_us=0"
same_lv 24 "write-back data lost across vgchange -an/-ay"

log "lvchange --cachemode and --cachesettings on the active LV, a writer running"
rm -f /tmp/stop
( while [ ! -e /tmp/stop ]; do put 24 8; done ) &
writer=$!
sleep 1
lvchange -q --cachemode writethrough vg/main
lvchange -q --cachesettings 'writeback_delay=7200 readahead=16' --cachesettings 'sequential_cutoff=0' vg/main
touch /tmp/stop
wait $writer || fail "the writer failed while the table changed"
case "$(dmsetup table vg-main)" in
*" 13 writethrough origin_layout raw sequential_cutoff 0 writeback_delay 7200 congested_read_threshold_us 0 congested_write_threshold_us 0 readahead 16") ;;
*) fail "table after lvchange: $(dmsetup table vg-main)" ;;
esac
settings="sequential_cutoff=0,writeback_delay=7200,congested_read_threshold_us=0,congested_write_threshold_us=0,readahead=16"
expect_eq "lvs after lvchange" "$(lvs --noheadings -o cache_mode,cache_settings vg/main | xargs)" \
	"writethrough $settings"
put 24 8
same_lv 32 "data lost across lvchange under I/O"
table=$(dmsetup table vg-main)
lvchange --cachesettings 'writeback_percent=99' vg/main 2>/tmp/err &&
	fail "lvchange took writeback_percent=99"
expect_eq "table after a refused lvchange" "$(dmsetup table vg-main)" "$table"
expect_eq "cache_settings after a refused lvchange" \
	"$(lvs --noheadings -o cache_settings vg/main | xargs)" "$settings"

log "lvchange --cachemode passthrough writes the dirty data back first"
lvchange -q --cachemode writeback vg/main
put_dirty 24 8
if ! timeout 240 lvchange --cachemode passthrough vg/main >/tmp/out 2>&1; then
	cat /tmp/out
	dmsetup status vg-main
	dmesg | tail -n 30
	fail "lvchange --cachemode passthrough did not finish"
fi
cat /tmp/out
grep -q "Writing back the dirty data" /tmp/out || fail "no write-back announced: $(cat /tmp/out)"
expect_eq "dirty after passthrough" "$(dirty)" 0
case "$(dmsetup table vg-main)" in *" passthrough "*) ;; *) fail "not passthrough: $(dmsetup table vg-main)" ;; esac
same_lv 32 "data lost by the switch to passthrough"

log "an inactive LV: the target checks new settings before they are committed"
lvchange -q -an vg/main
lvchange --cachesettings 'writeback_percent=99' vg/main 2>/tmp/err &&
	fail "lvchange of the inactive LV took writeback_percent=99"
grep -q "refused the new table" /tmp/err || fail "inactive refusal: $(cat /tmp/err)"
expect_eq "cache_settings after a refused inactive lvchange" \
	"$(lvs --noheadings -o cache_settings vg/main | xargs)" "$settings"
[ -e /dev/mapper/vg-main ] && fail "the refused check left vg/main active"
lvchange -q --cachemode writeback --cachesettings 'readahead=default writeback_delay=3600' vg/main
expect_eq "lvs after an inactive lvchange" "$(lvs --noheadings -o cache_mode,cache_settings vg/main | xargs)" \
	"writeback sequential_cutoff=0,writeback_delay=3600,congested_read_threshold_us=0,congested_write_threshold_us=0"
[ -e /dev/mapper/vg-main ] && fail "the inactive lvchange left vg/main active"

# damage_sb: flip a byte of the cache volume's superblock (4 KiB in, on
# its PV, checksummed), keeping the byte in /tmp/sb-byte; undamage_sb
# puts it back.
damage_sb() {
	local pv pe start extent byte
	read -r pv pe <<<"$(lvs --noheadings -a -o devices vg/fast_cvol | sed 's/[()]/ /g')"
	start=$(pvs --noheadings --units s --nosuffix -o pe_start "$pv" | xargs)
	extent=$(vgs --noheadings --units s --nosuffix -o vg_extent_size vg | xargs)
	sb_pv=$pv sb=$(((start + pe * extent + 8) * 512 + 80))
	dd if="$pv" of=/tmp/sb-byte bs=1 skip=$sb count=1 status=none
	byte=$(od -An -tu1 /tmp/sb-byte | xargs)
	# shellcheck disable=SC2059
	printf "\\$(printf '%03o' $((byte ^ 255)))" | dd of="$pv" bs=1 seek=$sb count=1 conv=notrunc status=none
	cmp -s /tmp/sb-byte <(dd if="$pv" bs=1 skip=$sb count=1 status=none) && fail "the superblock byte did not change"
	sync
}
undamage_sb() {
	dd if=/tmp/sb-byte of="$sb_pv" bs=1 seek=$sb count=1 conv=notrunc status=none
	sync
}

log "activation runs bcache_check; a damaged cache is refused, naming bcache_repair"
damage_sb
lvchange -ay vg/main 2>/tmp/err && fail "a cache with a damaged superblock was activated"
grep -q "bcache_repair" /tmp/err || fail "the refusal names no bcache_repair: $(cat /tmp/err)"
log "lvm said: $(grep bcache_repair /tmp/err)"
dmsetup ls | grep -q '^vg-' && fail "a refused activation left devices: $(dmsetup ls)"
undamage_sb
lvchange -ay -vvvv vg/main 2>/tmp/err || fail "activation after the repair: $(grep -i error /tmp/err)"
grep -q "Running check command on /dev/mapper/vg-fast_cvol" /tmp/err ||
	fail "no bcache_check ran on activation"
same_lv 32 "data lost across the checked activation"
put_dirty 24 8

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

log "--cachedevice: lvm creates the cache volume on the device"
lvconvert -y --type bcache --cachedevice $CACHE_DEV --cachesize 64M --cachemode writeback \
	--cachesettings 'sequential_cutoff=0 writeback_delay=3600' \
	--cachesettings 'congested_read_threshold_us=0 congested_write_threshold_us=0' vg/main
expect_eq "LVs with --cachedevice" "$(segtypes)" "main:bcache [main_bcorig]:linear [main_cache_cvol]:linear "
expect_eq "the cache volume's device" "$(lvs --noheadings -a -o devices vg/main_cache_cvol | xargs)" "$CACHE_DEV(0)"
expect_eq "the cache volume's size" "$(lvs --noheadings -a --units m --nosuffix -o lv_size vg/main_cache_cvol | xargs)" "64.00"
put_dirty 32 8
lvconvert --uncache vg/main
expect_eq "LVs after --uncache of --cachedevice" "$(segtypes)" "main:linear "
same_lv 40 "data lost with --cachedevice"

log "a failed cache is split off only with --force, lvm saying what is lost"
lvcreate -q -y -n fast -L 128M -an -Zn vg $CACHE_DEV
attach
put_dirty 40 8
# Every I/O to the cache volume fails from here; the next write fails the target.
size=$(blockdev --getsz /dev/mapper/vg-fast_cvol)
dmsetup suspend vg-fast_cvol
dmsetup load vg-fast_cvol --table "0 $size error"
dmsetup resume vg-fast_cvol
for i in 1 2 3 4 5; do
	put 48 1 2>/dev/null || true
	[ "$(status_field vg-main 13)" = fail ] && break
	sleep 1
done
expect_eq "metadata state with the cache volume failing" "$(status_field vg-main 13)" fail
# lv_attr: 1st C (cached), 9th F (failed), as lvs shows a failed dm-cache.
attr=$(lvs --noheadings -o lv_attr vg/main | xargs)
expect_eq "lv_attr type and health of the failed cache" "${attr:0:1}${attr:8:1}" CF
lvconvert --splitcache vg/main 2>/tmp/err && fail "a failed cache was split off without --force"
grep -q "the cache has failed.*dirty sectors" /tmp/err || fail "the refusal: $(cat /tmp/err)"
log "lvm said: $(head -n 1 /tmp/err | xargs)"
expect_eq "LVs after the refused split" "$(segtypes)" "[fast_cvol]:linear main:bcache [main_bcorig]:linear "
lvconvert --splitcache --force vg/main 2>&1 | tee /tmp/out
grep -q "dirty sectors only the cache held are lost" /tmp/out || fail "--force said: $(cat /tmp/out)"
expect_eq "LVs after the forced split" "$(segtypes)" "fast:linear main:linear "
lvchange -q -ay vg/main
same_lv 40 "data written back before the cache failed was lost"
lvremove -q -y vg/fast

log "an inactive LV whose cache cannot be activated: split refused, then forced"
put 48 8	# on the origin before the cache comes
dd if=/dev/zero of=/dev/mapper/vg-main bs=1M seek=56 count=4 oflag=direct status=none
lvcreate -q -y -n fast -L 128M -an -Zn vg $CACHE_DEV
attach
put_dirty 56 4	# only the cache holds this
lvchange -an vg/main
damage_sb
lvconvert --splitcache vg/main 2>/tmp/err && fail "a cache that cannot be activated was split off without --force"
grep -q "could not be activated" /tmp/err || fail "the refusal: $(cat /tmp/err)"
expect_eq "LVs after the refused split" "$(segtypes)" "[fast_cvol]:linear main:bcache [main_bcorig]:linear "
dmsetup ls | grep -q '^vg-' && fail "the refused split left devices: $(dmsetup ls)"
lvconvert --splitcache --force vg/main 2>&1 | tee /tmp/out
grep -q "without write-back: it could not be activated" /tmp/out || fail "--force said: $(cat /tmp/out)"
grep -q "bcache_writeback" /tmp/out || fail "--force named no way to recover: $(cat /tmp/out)"
expect_eq "LVs after the forced split" "$(segtypes)" "fast:linear main:linear "
lvchange -q -ay vg/main
same_direct /dev/mapper/vg-main $((48 * 2048)) $DATA_DEV $((48 * 2048)) $((8 * 2048)) ||
	fail "data the origin held before the cache came was lost"
same_direct /dev/mapper/vg-main $((56 * 2048)) $DATA_DEV $((56 * 2048)) $((4 * 2048)) &&
	fail "the dirty data reached the origin, yet the split said it was lost"
# The detached volume kept it: once sound again, bcache_writeback copies
# it to the LV, as lvm's warning says.
undamage_sb
lvchange -q -ay vg/fast
bcache_writeback /dev/mapper/vg-fast /dev/mapper/vg-main | tee /tmp/out
grep -q ": 8192 dirty sectors" /tmp/out || fail "bcache_writeback found: $(head -n 1 /tmp/out)"
same_direct /dev/mapper/vg-main $((48 * 2048)) $DATA_DEV $((48 * 2048)) $((12 * 2048)) ||
	fail "bcache_writeback did not bring the dirty data to the LV"
lvremove -q -y vg/fast

log "lvremove of a cached LV, its settings cleared first"
lvcreate -q -y -n fast -L 128M -an -Zn vg $CACHE_DEV
attach
lvchange -q -y --cachesettings '' vg/main
case "$(dmsetup table vg-main)" in
*" 3 writeback origin_layout raw") ;;
*) fail "table after clearing the settings: $(dmsetup table vg-main)" ;;
esac
expect_eq "cache_settings cleared" "$(lvs --noheadings -o cache_settings vg/main | xargs)" ""
lvremove -q -y vg/main
expect_eq "LVs after lvremove" "$(segtypes)" ""
vgremove -q -y vg
pvremove -q $ORIGIN_DEV $CACHE_DEV
exit 0
