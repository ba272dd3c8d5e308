# Devices without a volatile write cache (both disks switched to "write
# through", as a power-loss-protected SSD reports itself): the target
# still takes flushes and FUA, because its index keys wait in memory (up
# to DMB_JOURNAL_DELAY) for the next journal write, which a flush
# forces.  Were dm to offer neither, fsync would return without reaching
# the journal, and a power cut inside that window would lose write-back
# data an fsync had acknowledged.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
queue() { cat "/sys/block/$1/queue/$2"; }
# The disks get their cache back however the test ends: later tests in
# this boot rely on their flushes.
restore() {
	for d in $CACHE_DEV $ORIGIN_DEV; do
		echo "write back" >"/sys/block/${d#/dev/}/queue/write_cache"
	done
}
trap restore EXIT
for d in $CACHE_DEV $ORIGIN_DEV; do
	echo "write through" >"/sys/block/${d#/dev/}/queue/write_cache"
	expect_eq "$d write cache" "$(queue ${d#/dev/} write_cache)" "write through"
done
dmsetup create dmb --table "0 $((256 * 2048)) bcache $CACHE_DEV $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"
dm=$(dmsetup info -c --noheadings -o blkdevname dmb | tr -d ' ')
expect_eq "dm write cache" "$(queue "$dm" write_cache)" "write back"
expect_eq "dm FUA" "$(queue "$dm" fua)" 1
write_dirty /dev/mapper/dmb 0 4
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 $((4 * 2048)) || fail "data after the fsynced writes"
dmsetup remove dmb
exit 0
