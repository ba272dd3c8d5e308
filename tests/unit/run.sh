#!/usr/bin/env bash
# Runs the unit-test binary as JOBS shards side by side (one per core by
# default: the tests are single-threaded, and the long ones would
# otherwise leave a core idle), then prints every shard's output in shard
# order and one total, "N passed, N failed".  A shard that dies before
# its own total (an ASan or UBSan abort, a crash) fails the run by name.
#
#   run.sh UNIT_TESTS [JOBS]
set -uo pipefail
bin=$1
jobs=${2:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for ((k = 0; k < jobs; k++)); do
	"$bin" --shard "$k/$jobs" >"$tmp/$k.out" 2>&1 &
done
wait

passed=0 failed=0
for ((k = 0; k < jobs; k++)); do
	# The shard's total is its last line; everything else is passed on.
	sed '$d' "$tmp/$k.out"
	last=$(tail -n 1 "$tmp/$k.out")
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		echo "$last"
		echo "FAIL unit/shard-$k/$jobs died before its total"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
