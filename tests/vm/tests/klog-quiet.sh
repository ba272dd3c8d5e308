# The runner's kernel-log check, checked (expected to PASS): 3 MiB of
# harmless log lines, nothing that is a warning.  Shows the check fails
# the klog-* tests for their warnings, not for their volume.
. /tests/lib.sh
klog_flood 3
exit 0
