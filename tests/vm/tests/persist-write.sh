# First half of the power-cut test (persist-read is the second, in a new
# boot on the same disks): 32 MiB written through the target and flushed
# (dd conv=fsync: the flush journals the index), then the boot ends like a
# power cut, with the target still loaded: no suspend, no removal, so
# nothing but the journal records the index changes.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((448 * 2048))
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 7 writethrough $NOBYPASS"
write_data /dev/mapper/dmb 16 32
expect_eq "written through" "$(status_field dmb 8)" 32
touch /tmp/dmb-crash
exit 0
