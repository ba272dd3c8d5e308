# lvm2's own cache tests against the patched lvm2: the series must leave
# dm-cache's side of lvm2 as it was.  These are the ones this VM can run
# (it has no mkfs.xfs, thin tools, dm-raid or scsi_debug, which the others
# need).  They do not load or touch dm-bcache, and their outcome changes
# only with the series, so they run in make check-lvm2, not make check.
. /tests/lib.sh
. /tests/lib-lvm2-suite.sh
run_lvm2_tests cache-metadata2 cachevol-cachedevice lvconvert-cache \
	lvconvert-cache-smq lvchange-cache
