# The runner's kernel-log check, checked (expected to FAIL with "kernel
# warning"): a warning, then the log cleared with dmesg -c, then a pass.
# A check that counted lines of dmesg saw nothing here.
. /tests/lib.sh
klog_warn_now
dmesg -c >/dev/null
echo "dmb-test: after the clear" >/dev/kmsg
exit 0
