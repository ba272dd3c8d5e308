#!/usr/bin/env bash
# make check: every test the project has, ending with "N passed, N failed".
#
#   1. userspace unit tests of core/ under ASan/UBSan
#   2. tool tests (ASan/UBSan) on images made by make-bcache and by us,
#      with every damage class; a bounded libFuzzer run on the checker
#   3. module build with W=1 -Werror, checkpatch and sparse, per kernel
#   4. the VM suite on Debian's 6.1 and 6.12 kernels (one boot each), and
#      a power cut (two boots on the same disks)
#   5. the tool tests on the caches the mainline driver wrote in step 4
#
# Each step writes "PASS|FAIL <name> [why]" lines to build/results/; the
# tally at the end reads them all.  Exit status is non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
res=$top/build/results
rm -rf "$res" && mkdir -p "$res"

bash scripts/deps.sh >"$top/build/deps.log" 2>&1 || {
	cat "$top/build/deps.log"
	echo "FAIL setup/deps" >"$res/deps.txt"
}
# shellcheck disable=SC1091
. <(sed 's/ := /=/' build/kernels.mk)
kernels=("$KVER_61" "$KVER_612")

VM_TESTS=(module create-status data-raw data-backing table messages
	bad-tables reload-fio cache-format mainline-cross mainline-reads-ours
	cache-wt cache-wb wb-fio cache-fio cache-stall
	cache-bypass cache-errors cache-wb-errors cache-wb-fail cache-wb-full wb-sustained cache-dead-backing
	mainline-compat mainline-takeover demo)

step() {	# step NAME COMMAND...: one PASS/FAIL line from an exit code
	local name=$1 log
	shift
	log=$top/build/results/$(echo "$name" | tr '/' '_').log
	echo "== $name"
	if "$@" >"$log" 2>&1; then
		echo "PASS $name" >>"$res/steps.txt"
	else
		tail -n 30 "$log"
		echo "FAIL $name (log: $log)" >>"$res/steps.txt"
	fi
}

echo "== unit tests (ASan/UBSan)"
make -s -C userspace unit 2>&1 | tee "$res/unit.log" | grep -E '^(FAIL|  )' || true
grep -E '^(PASS|FAIL) ' "$res/unit.log" >"$res/unit.txt"
grep -q '^[0-9]* passed, 0 failed$' "$res/unit.log" ||
	echo "FAIL unit/runner did not finish cleanly" >>"$res/unit.txt"

step userspace/build make -s -C userspace
step userspace/asan-tools make -s -C userspace asan-tools
echo "== tool tests"
bash tests/tools/probe.sh >"$res/tools.txt" 2>&1
bash tests/tools/tools.sh >>"$res/tools.txt" 2>&1
bash tests/tools/bench-report.sh >>"$res/tools.txt" 2>&1
grep -E '^FAIL' "$res/tools.txt" || true
step fuzz/check make -s -C userspace fuzz-run FUZZ_SECONDS="${FUZZ_SECONDS:-60}"

for k in "${kernels[@]}"; do
	step "build/$k" make -s module KVER="$k"
	step "lint/$k" bash scripts/lint.sh "$k"
done

for k in "${kernels[@]}"; do
	echo "== VM suite on $k"
	bash tests/vm/run.sh "$k" main "${VM_TESTS[@]}" | grep -E '^(vm:|FAIL)' || true
	# A power cut: the first boot ends with the target loaded, the second
	# boots the same disks.
	echo "== power cut on $k"
	bash tests/vm/run.sh "$k" cut1 persist-write | grep -E '^(vm:|FAIL)' || true
	KEEP_DISKS=1 bash tests/vm/run.sh "$k" cut2 persist-read | grep -E '^(vm:|FAIL)' || true
	# dm-log-writes replay: its own boot, since it uses the export disk
	# (vdd) for the log, which the main suite leaves mainline-cross's
	# image on for the host's tests below.
	echo "== dm-log-writes replay on $k"
	bash tests/vm/run.sh "$k" logw logwrites-replay | grep -E '^(vm:|FAIL)' || true
	# The same in write-back, cut under a writer that logs its flushes.
	echo "== write-back power cut on $k"
	bash tests/vm/run.sh "$k" wbcut1 persist-wb-write | grep -E '^(vm:|FAIL)' || true
	KEEP_DISKS=1 bash tests/vm/run.sh "$k" wbcut2 persist-wb-read | grep -E '^(vm:|FAIL)' || true
done

echo "== mainline-written caches (exported by mainline-cross)"
for k in "${kernels[@]}"; do
	img=build/vm/$k/export-main.img
	if grep -q "^PASS vm/$k/mainline-cross" "$res/vm-main-$k.txt" 2>/dev/null; then
		bash tests/tools/tools.sh --images "$img" >"$res/images-$k.txt" 2>&1
	else
		echo "FAIL images/$k mainline-cross did not pass; no image to test" >"$res/images-$k.txt"
	fi
	grep -E '^FAIL' "$res/images-$k.txt" || true
done

# What crashed guests printed (tests/vm/run.sh), so a CI log shows it.
for c in "$top"/build/results/crash-*.log; do
	[ -e "$c" ] && head -n 45 "$c"
done
echo "== results"
all=$(cat "$res"/*.txt)
grep '^FAIL' <<<"$all" || true
passed=$(grep -c '^PASS ' <<<"$all")
failed=$(grep -c '^FAIL ' <<<"$all")
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
