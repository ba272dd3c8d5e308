#!/bin/bash
# Instructions per in-node lookup (bench/core/search.c) under callgrind:
# each method and leaf size run with 0 and with LOOKUPS lookups, the
# difference divided by LOOKUPS.  Deterministic (fixed seed).  Writes
# bench/results/core-search.csv and prints it.
set -eu -o pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v valgrind >/dev/null || apt-get install -y valgrind >/dev/null
make -s -C "$top/userspace" "$top/build/user/bench_search"
bin=$top/build/user/bench_search
out=$top/bench/results/core-search.csv
LOOKUPS=${LOOKUPS:-20000}
mkdir -p "$(dirname "$out")"
ir() {	# ir METHOD KEYS LOOKUPS: total instructions of one run
	local f
	f=$(mktemp)
	valgrind --tool=callgrind --callgrind-out-file="$f" "$bin" "$@" >/dev/null 2>&1
	awk '/^summary:/ { print $2 }' "$f"
	rm -f "$f"
}
echo "method,keys,lookups,instructions_per_lookup" >"$out"
for keys in 256 1024 5000; do
	for m in pivots binary eytzinger; do
		base=$(ir $m $keys 0)
		full=$(ir $m $keys "$LOOKUPS")
		echo "$m,$keys,$LOOKUPS,$(( (full - base) / LOOKUPS ))" >>"$out"
	done
done
cat "$out"
