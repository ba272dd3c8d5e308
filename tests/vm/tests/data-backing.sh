# An origin formatted by make-bcache -B: the target detects the backing
# superblock, maps target sector 0 to the data offset, never overwrites the
# superblock, and the mainline bcache driver sees the same bytes.
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
	sb_before=$(sum_sectors $ORIGIN_DEV 0 $off)
	usable=$(($(sectors $ORIGIN_DEV) - off))

	# Too long by one sector: refused, since data starts at the offset.
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
	expect_eq "superblock area untouched" "$(sum_sectors $ORIGIN_DEV 0 $off)" "$sb_before"

	# Cross-check with the mainline driver: it exports the same data.
	echo $ORIGIN_DEV >/sys/fs/bcache/register
	for i in $(seq 50); do [ -b /dev/bcache0 ] && break; sleep 0.2; done
	[ -b /dev/bcache0 ] || fail "mainline bcache did not start the backing device"
	expect_eq "mainline bcache0 size" "$(sectors /dev/bcache0)" "$usable"
	same_data /dev/bcache0 $((3 * 2048)) $DATA_DEV 0 $((64 * 2048)) ||
		fail "mainline bcache0 shows other bytes than we wrote"
	echo 1 >/sys/block/bcache0/bcache/stop
	for i in $(seq 50); do [ -b /dev/bcache0 ] || break; sleep 0.2; done
	[ -b /dev/bcache0 ] && fail "bcache0 did not stop"

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
		"$(sum_sectors /dev/mapper/dmb 0 $off)" "$sb_before"
	dmsetup remove dmb
done

# The probe tool gives the same answer as the target.
bcache_probe $ORIGIN_DEV | grep -q '^layout: backing' || fail "bcache_probe disagrees"
wipe_head $ORIGIN_DEV
exit 0
