# First boot of the lvm power cut (lvm-cut-read is the second, on the
# same disks): a bcache LV in write-back takes 24 MiB of writes, each
# fsync'd, so acknowledged and flushed; nothing is copied to the origin
# (writeback_delay 3600).  The boot is cut with the LV active: no
# deactivation, no suspend.
. /tests/lib.sh
. /tests/lib-lvm.sh
make_vg
attach
put_dirty 0 24
same_lv 24 "the LV's data before the cut"
log "dirty $(dirty) sectors at the cut"
touch /tmp/dmb-crash
exit 0
