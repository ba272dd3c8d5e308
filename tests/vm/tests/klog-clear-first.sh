# The runner's kernel-log check, checked (expected to FAIL with "kernel
# warning"): the log cleared first, then a warning, then a pass.  A
# check that counted lines of dmesg from before the test saw fewer lines
# than it started with and nothing after.
. /tests/lib.sh
dmesg -c >/dev/null
klog_warn_now
exit 0
