# The runner's kernel-log check, checked (tests/run-all.sh expects this
# test to FAIL with "kernel warning"): a warning logged in the middle of
# a test that then passes.
. /tests/lib.sh
klog_warn_now
exit 0
