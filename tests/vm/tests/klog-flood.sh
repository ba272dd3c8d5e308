# The runner's kernel-log check, checked (expected to FAIL with "kernel
# warning"): a warning, then 6 MiB of log lines, more than the VM's 4 MiB
# ring buffer (tests/vm/vm.sh), so the warning is gone from the buffer
# (and from dmesg) by the time the test ends.
. /tests/lib.sh
klog_warn_now
klog_flood 6
# (Through a file: grep -q ending early would kill dmesg, and pipefail
# would then hide the match.)
dmesg >/tmp/dmesg.out
grep -q 'dmb_testwarn: warning planted' /tmp/dmesg.out &&
	fail "the warning is still in the ring buffer: the flood was too small"
rm -f /tmp/dmesg.out
exit 0
