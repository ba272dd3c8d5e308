# Shared by the tests that run lvm2's own test harness (lvm-testsuite*.sh)
# against the patched lvm2.  mkinitramfs.sh lays the harness out in
# /opt/lvm2-testsuite as lvm2's make install would.  Sourced after
# /tests/lib.sh.
[ -d /opt/lvm2-testsuite/shell ] || fail "the initramfs has no lvm2 test suite (make lvm2 builds it)"

# run_lvm2_tests NAME...: lvm2's test/shell/NAME.sh, one after another;
# each must pass.  A skip (exit 200) fails here, as it would hide what did
# not run.
run_lvm2_tests() {
	local name t rc t0
	for name in "$@"; do
		t=/opt/lvm2-testsuite/shell/$name.sh
		[ -e "$t" ] || fail "lvm2's suite has no shell/$name.sh"
		rc=0
		t0=$(date +%s)
		# The three variables let xfsprogs (since 5.19) make the
		# file systems below 300 MiB the writecache tests use, as
		# it does under fstests.
		(cd /opt/lvm2-testsuite && LVM_TEST_FLAVOUR=ndev-vanilla LVM_TEST_DIR=/tmp \
			TEST_DIR=/tmp TEST_DEV=/dev/null QA_CHECK_FS=1 \
			bash -noprofile -norc "$t") >/tmp/lvm2-test.log 2>&1 || rc=$?
		case $rc in
		0) log "PASS $name.sh ($(($(date +%s) - t0))s)" ;;
		200)
			tail -n 20 /tmp/lvm2-test.log
			fail "$name.sh skipped: it must run here"
			;;
		*)
			# The harness's trace of the test's own lines, and its verdict.
			grep -E "^#$name.sh:[0-9]+\+|^(TEST|## - |[a-z_]+: )" /tmp/lvm2-test.log | tail -n 25
			fail "$name.sh failed (exit $rc)"
			;;
		esac
	done
}
