#!/bin/bash
# The core under callgrind.  First, instructions per in-node lookup
# (bench/core/search.c):
# each method and leaf size run with 0 and with LOOKUPS lookups, the
# difference divided by LOOKUPS.  Deterministic (fixed seed).  Writes
# bench/results/core-search.csv and prints it; then the btree (below).
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

# The whole btree (bench/core/btree.c): instructions per lookup and per
# insert at 10^4 to 10^7 keys; the build of the tree runs uninstrumented
# (--instr-atstart=no), the operations with instrumentation on.
make -s -C "$top/userspace" "$top/build/user/bench_btree"
bt=$top/build/user/bench_btree
out2=$top/bench/results/core-btree.csv
OPS=${OPS:-20000}
echo "operation,keys,ops,instructions_per_op,depth,nodes" >"$out2"
for keys in ${BTREE_KEYS:-10000 100000 1000000 10000000}; do
	for op in lookup insert; do
		f=$(mktemp)
		line=$(valgrind --tool=callgrind --instr-atstart=no \
			--callgrind-out-file="$f" "$bt" $op "$keys" "$OPS" 2>/dev/null)
		# With the instrumentation toggled, "summary" stays 0: "totals" counts.
		total=$(awk '/^totals:/ { print $2 }' "$f")
		rm -f "$f"
		set -- $line
		echo "$op,$keys,$OPS,$((total / OPS)),$9,${11}" >>"$out2"
	done
done
cat "$out2"
