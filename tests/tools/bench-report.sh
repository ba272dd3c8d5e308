#!/usr/bin/env bash
# bench/report.py on results made here: real fio JSON (short runs on a
# file), counters and timings chosen so that every figure the report
# derives is known.  Checks the CSV rows, medians, hit ratios, the target
# verdicts, the footprint and that an unreadable run is left out.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
res=$dir/res
mkdir -p "$res"
truncate -s 16M "$dir/f.img"
fails=0
check() {	# check NAME COMMAND...
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "PASS bench-report/$name"; else
		echo "FAIL bench-report/$name"; fails=$((fails + 1)); fi
}

job() {	# job JSON JOBFILE VAR=VALUE...
	local out=$1 f=$2
	shift 2
	env DEV="$dir/f.img" SIZE=8M RUNTIME=1 "$@" fio --output-format=json \
		--output="$res/$out" "$top/bench/guest/fio/$f" >/dev/null 2>&1
}

{
	echo "workload,variant,system,round,json,rh,rm,wh,wm,busy,hz"
	for s in linear-ssd dmb-wt bcache-wt; do
		for r in 1 2 3; do
			job "W1-qd1-$s-$r.json" randread.fio QD=1
			c="900,100,0,0"
			[ $s = linear-ssd ] && c="-,-,-,-"
			[ $s = bcache-wt ] && c="800,200,-,-"
			echo "W1,qd1,$s,$r,W1-qd1-$s-$r.json,$c,50,100"
		done
	done
	# W2: a curve with a known steady ratio (0.9) and knee (5 s).
	job "W2-zipf-dmb-wt-1.json" zipf.fio QD=1
	echo "W2,zipf,dmb-wt,1,W2-zipf-dmb-wt-1.json,630,370,-,-,50,100"
	# A run whose fio output is missing: reported and left out.
	echo "W1,qd1,dmb-wt,4,missing.json,1,1,0,0,1,100"
} >"$res/runs.csv"
rh=0 rm=0
for t in 1 2 3 4 5 6 7 8 9; do
	if [ $t -le 3 ]; then rm=$((rm + 100)); else rh=$((rh + 90)) rm=$((rm + 10)); fi
	echo "$t.0 $rh $rm - -"
done >"$res/w2-dmb-wt-1.series"
printf 'system,round,mib,seconds\nlinear-hdd,1,16,2.0\nlinear-hdd,2,16,4.0\ndmb-wb,1,16,2.3\ndmb-wb,2,16,3.3\n' >"$res/w8.csv"
printf 'system,used_kib,slab_kib,vmalloc_kib,cache_written,user_written\ndmb-wt,1500,1000,200,101000000,100663296\nbcache-wt,3000,1500,100,102000000,100663296\n' >"$res/footprint.csv"
echo "cache_mib=128 quick=1" >"$res/params.txt"

python3 "$top/bench/report.py" "$res" "$dir/out/t" test-kernel >"$dir/summary.txt" 2>&1
check runs [ -s "$dir/out/t.csv" ]
# 10 fio rows + 4 W8 rows (the missing run left out), plus the header.
check rows [ "$(wc -l <"$dir/out/t.csv")" = 15 ]
check w2-curve grep -q '^test-kernel,W2,zipf,dmb-wt,1,.*,0.63,630,370,-,-,0.9,5.0,' "$dir/out/t.csv"
check missing-run grep -q 'missing.json unreadable' "$dir/summary.txt"
check hit-ratio grep -q '^test-kernel,W1,qd1,dmb-wt,1,.*,0.9,900,100,0,0' "$dir/out/t.csv"
check no-counters grep -q '^test-kernel,W1,qd1,linear-ssd,1,.*,,-,-,-,-' "$dir/out/t.csv"
check cpu-per-io awk -F, '$4 == "dmb-wt" && $10 + 0 > 0 { ok = 1 } END { exit !ok }' "$dir/out/t.csv"
# W8: medians 2.8 s and 3.0 s: 0.93, within 1.2.
check w8-ratio grep -Eq 'W8 drain dmb-wb / origin sequential write +0\.93 \[<= 1\.20: met\]' "$dir/summary.txt"
check w1-peer grep -Eq 'W1 qd1 dmb-wt / bcache-wt +[0-9.]+ \[>= 1\.00: (met|NOT met)\]' "$dir/summary.txt"
check w1-absent-peer grep -Eq 'W1 qd1 dmb-wt / dmcache-wt +n/a' "$dir/summary.txt"
# All kernel memory counts (1500 against 3000), not slab and vmalloc (1200, 1600).
check footprint grep -Eq 'memory per GiB dmb / mainline +0\.50 \[<= 1\.00: met\]' "$dir/summary.txt"
check footprint-breakdown grep -q 'dmb-wt .* 12000 KiB per GiB of cache (slab and vmalloc 9600)' "$dir/summary.txt"
check metadata grep -q 'dmb-wt .* metadata 0.0033 bytes per user byte' "$dir/summary.txt"
# Results from before used_kib: slab and vmalloc (1200 against 1600).
printf 'system,slab_kib,vmalloc_kib,cache_written,user_written\ndmb-wt,1000,200,101000000,100663296\nbcache-wt,1500,100,102000000,100663296\n' >"$res/footprint.csv"
python3 "$top/bench/report.py" "$res" "$dir/out/old" test-kernel >"$dir/old.txt" 2>&1
check footprint-old grep -Eq 'memory per GiB dmb / mainline +0\.75 \[<= 1\.00: met\]' "$dir/old.txt"
# A memory figure below zero (the kernel freed more than the cache took
# meanwhile) is a broken measurement: never "met".
printf 'system,used_kib,slab_kib,vmalloc_kib,cache_written,user_written\ndmb-wt,-7040,1000,200,101000000,100663296\nbcache-wt,3000,1500,100,102000000,100663296\n' >"$res/footprint.csv"
python3 "$top/bench/report.py" "$res" "$dir/out/neg" test-kernel >"$dir/neg.txt" 2>&1
check footprint-negative grep -Eq 'memory per GiB dmb / mainline +invalid \(-56320 / 24000: .*\) \[NOT met\]' "$dir/neg.txt"
if command -v gnuplot >/dev/null; then
	check chart [ -s "$dir/out/t-W1.png" ]
fi
[ "$fails" = 0 ]
