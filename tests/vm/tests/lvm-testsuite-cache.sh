# lvm2's own cache and writecache tests against the patched lvm2: the
# series must leave dm-cache's and dm-writecache's side of lvm2 as it was.
# They do not load or touch dm-bcache, and their outcome changes only with
# the series, so they run in make check-lvm2, not make check.  Not run:
# writecache-large (a 1.2 GiB scsi_debug disk; the VM has 2 GiB of
# memory) and lvm2's other cache tests (cache-single-*, the raid, thin,
# vdo and snapshot variants), not yet tried in this VM.
. /tests/lib.sh
. /tests/lib-lvm2-suite.sh
# scsi_debug's disks need sd_mod, which udev would load on their uevent;
# busybox's mount tries only the file systems the kernel has, so xfs is
# loaded first.
modprobe sd_mod || fail "modprobe sd_mod"
modprobe xfs || fail "modprobe xfs"
# And losetup finds a free loop device through /dev/loop-control, which
# exists once the module is loaded.
modprobe loop || fail "modprobe loop"
run_lvm2_tests cache-metadata2 cachevol-cachedevice lvconvert-cache \
	lvconvert-cache-smq lvchange-cache \
	writecache writecache-misc writecache-split writecache-cache-blocksize \
	writecache-cache-blocksize-2
