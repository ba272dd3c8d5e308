#!/usr/bin/env bash
# make check-lvm2: lvm2's own cache and writecache tests
# (tests/vm/tests/lvm-testsuite-cache.sh)
# against the patched lvm2, in one 6.1 boot.  They show the series leaves
# dm-cache's side of lvm2 as it was; their outcome changes with the series
# only, so they run here, when the series changes, rather than in every
# make check.  Last line: "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
mkdir -p build
bash scripts/deps.sh >build/deps.log 2>&1 || { cat build/deps.log; exit 1; }
bash scripts/lvm2.sh || { echo "0 passed, 1 failed"; exit 1; }
# shellcheck disable=SC1090
. <(sed 's/ := /=/' build/kernels.mk)
tests=(lvm-testsuite lvm-testsuite-cache)
# lvm2's tests take over 10 minutes in one VM test (the runner's limit
# per test is 10).
# The image gets what lvm2's writecache tests need (xfs, scsi_debug, ...).
VM_LVM2_EXTRAS=1 TEST_TIMEOUT=1200 VM_TIMEOUT=1800 bash tests/vm/run.sh "$KVER_61" lvm2suite "${tests[@]}" |
	grep -E '^(vm:|FAIL)'
res=build/results/vm-lvm2suite-$KVER_61.txt
cat "$res" 2>/dev/null
pass=$(grep -c "^PASS" "$res" 2>/dev/null) || pass=0
fail=$((${#tests[@]} - pass))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
