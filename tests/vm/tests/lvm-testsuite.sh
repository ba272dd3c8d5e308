# The series' own test in lvm2's harness: test/shell/bcache-basic.sh
# against the patched lvm2 (refused key and value, attach in write-back,
# lvs fields, dirty data across deactivation, lvchange, --splitcache and
# --uncache).  lvm2's stock cache tests run in lvm-testsuite-cache
# (make check-lvm2).
. /tests/lib.sh
. /tests/lib-lvm2-suite.sh
load_module
run_lvm2_tests bcache-basic
