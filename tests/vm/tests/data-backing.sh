# An origin formatted by make-bcache -B: the target detects the backing
# superblock, maps target sector 0 to the data offset, records in the
# superblock only what the mainline driver records on attaching (the cache
# set's UUID, state clean) and leaves the rest of the area alone, and the
# mainline bcache driver, given the cache and the origin, sees the same
# bytes.
. /tests/lib.sh
load_module
modprobe bcache

for off in 16 2048; do
	log "make-bcache -B with data offset $off"
	wipe_head $ORIGIN_DEV
	if [ "$off" = 16 ]; then
		make-bcache -B $ORIGIN_DEV >/dev/null
	else
		make-bcache -B -o $off $ORIGIN_DEV >/dev/null
	fi
	sb_before=$(sum_sectors $ORIGIN_DEV 0 8)
	wipe_head $CACHE_DEV
	usable=$(($(sectors $ORIGIN_DEV) - off))

	# Too long by one sector: refused, since data starts at the offset.
	klog_mark
	if dmsetup create dmb --table "0 $((usable + 1)) bcache $CACHE_DEV $ORIGIN_DEV 0" 2>/dev/null; then
		fail "target longer than the data area was accepted"
	fi
	last_dm_error | grep -q 'Origin device too small for target length' ||
		fail "wrong error: $(last_dm_error)"

	dmsetup create dmb --table "0 $usable bcache $CACHE_DEV $ORIGIN_DEV 0"
	expect_eq "origin layout" "$(status_field dmb 15)" backing
	expect_eq "data offset" "$(status_field dmb 16)" "$off"
	write_data /dev/mapper/dmb 3 64
	dmsetup remove dmb

	same_data $ORIGIN_DEV $((off + 3 * 2048)) $DATA_DEV 0 $((64 * 2048)) ||
		fail "origin bytes at the data offset differ"
	expect_eq "head before the superblock untouched" \
		"$(sum_sectors $ORIGIN_DEV 0 8)" "$sb_before"
	cset=$(bcache-super-show $CACHE_DEV | awk '/^cset.uuid/ { print $2 }')
	bcache-super-show $ORIGIN_DEV >/tmp/bsb.out
	grep -Eq "^cset.uuid[[:space:]]+$cset" /tmp/bsb.out ||
		{ cat /tmp/bsb.out; fail "backing superblock does not name the set"; }
	grep -Eq "^dev.data.first_sector[[:space:]]+$off" /tmp/bsb.out ||
		{ cat /tmp/bsb.out; fail "data offset changed"; }
	sb_after=$(sum_sectors $ORIGIN_DEV 0 $off)

	# Cross-check with the mainline driver: it exports the same data.
	mainline_register
	expect_eq "mainline bcache0 size" "$(sectors /dev/bcache0)" "$usable"
	same_data /dev/bcache0 $((3 * 2048)) $DATA_DEV 0 $((64 * 2048)) ||
		fail "mainline bcache0 shows other bytes than we wrote"
	mainline_stop $cset
	sb_after=$(sum_sectors $ORIGIN_DEV 0 $off)

	# origin_layout raw ignores the superblock: sector 0 is sector 0.
	# The mainline driver drops its exclusive claim on vdb asynchronously
	# after stop (6.12 defers the release), so allow it a few seconds.
	table="0 $usable bcache $CACHE_DEV $ORIGIN_DEV 2 origin_layout raw"
	for i in $(seq 50); do
		dmsetup create dmb --table "$table" 2>/dev/null && break
		sleep 0.2
	done
	dmsetup info dmb >/dev/null || fail "origin still busy after bcache stop"
	expect_eq "raw layout" "$(status_field dmb 15)" raw
	expect_eq "raw reads the superblock area" \
		"$(sum_sectors /dev/mapper/dmb 0 $off)" "$sb_after"
	dmsetup remove dmb
done

# The probe tool gives the same answer as the target.
bcache_probe $ORIGIN_DEV | grep -q '^layout: backing' || fail "bcache_probe disagrees"
wipe_head $ORIGIN_DEV
exit 0
