# lvm2's own tests, run by lvm2's harness against the patched lvm2: the
# series' test/shell/bcache-basic.sh and the cache tests of lvm2's suite
# that can run in this VM (it has no mkfs.xfs, thin tools, dm-raid or
# scsi_debug, which the others need): cache-metadata2, cachevol-cachedevice,
# lvconvert-cache, lvconvert-cache-smq, lvchange-cache.  mkinitramfs.sh
# lays the harness out in /opt/lvm2-testsuite as lvm2's make install
# would.  Each test must pass: a skip (exit 200) fails here, as it would
# hide what did not run.
. /tests/lib.sh
[ -d /opt/lvm2-testsuite/shell ] || fail "the initramfs has no lvm2 test suite (make lvm2 builds it)"
load_module
cd /opt/lvm2-testsuite
for name in bcache-basic cache-metadata2 cachevol-cachedevice lvconvert-cache \
	lvconvert-cache-smq lvchange-cache; do
	t=shell/$name.sh
	[ -e "$t" ] || fail "lvm2's suite has no $t"
	rc=0
	LVM_TEST_FLAVOUR=ndev-vanilla LVM_TEST_DIR=/tmp \
		bash -noprofile -norc "$t" >/tmp/lvm2-test.log 2>&1 || rc=$?
	case $rc in
	0) log "PASS ${t#shell/}" ;;
	200)
		tail -n 20 /tmp/lvm2-test.log
		fail "${t#shell/} skipped: it must run here"
		;;
	*)
		# The harness's trace of the test's own lines, and its verdict.
		grep -E "^#${t#shell/}:[0-9]+\+|^(TEST|## - |[a-z_]+: )" /tmp/lvm2-test.log | tail -n 25
		fail "${t#shell/} failed (exit $rc)"
		;;
	esac
done
