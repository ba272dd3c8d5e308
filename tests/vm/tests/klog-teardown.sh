# The runner's kernel-log check, checked (expected to FAIL with "kernel
# warning"): the test passes but leaves a device whose removal warns; the
# runner's teardown after a test is charged to that test.
. /tests/lib.sh
modprobe dmb-testwarn
dmsetup create planted --table "0 8 dmb_testwarn dtr"
exit 0
