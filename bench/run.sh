#!/usr/bin/env bash
# make bench: the benchmark matrix (bench/guest/bench.sh) in one VM boot
# per kernel, then bench/report.py over what it measured.
#
#   bench/run.sh [KVER...]      default: both kernels of build/kernels.mk
#
# BENCH_QUICK=1 runs the short variant: 3 rounds of 2 s runs, on the
# default (6.1) kernel unless kernels are named; under 15 minutes.  Results: bench/results/<date>-<kver>.csv,
# bench/results/<date>-<kver>-*.png, a summary table on stdout and in
# bench/results/<date>-<kver>-summary.txt; the raw fio output is kept in
# build/bench/<kver>/.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
quick=${BENCH_QUICK:-0}
bash "$top/scripts/deps.sh" >/dev/null
# shellcheck source=tests/vm/vm.sh
. "$top/tests/vm/vm.sh"
# shellcheck source=tests/vm/kernel-bad.sh
. "$top/tests/vm/kernel-bad.sh"
# shellcheck disable=SC1091
. <(sed 's/ := /=/' "$top/build/kernels.mk")
kernels=("$@")
# The quick variant boots the default kernel only (under 15 minutes).
if [ ${#kernels[@]} = 0 ]; then
	kernels=("$KVER_61" "$KVER_612")
	[ "$quick" = 1 ] && kernels=("$KVER_61")
fi
day=$(date +%Y-%m-%d)
[ "$quick" = 1 ] && day=$day-quick

for kver in "${kernels[@]}"; do
	work=$top/build/bench/$kver
	rm -rf "$work" && mkdir -p "$work/res"
	vm_build "$kver" "$work/initrd.cpio" "$work/build.log" ||
		{ cat "$work/build.log"; exit 1; }
	# vda: the "HDD" (behind dm-delay in the guest); vdb: the results.
	truncate -s 2G "$work/hdd.img"
	truncate -s 256M "$work/out.img"
	echo "bench: booting $kver (quick=$quick)"
	start=$(date +%s)
	vm_boot "$kver" "$work/initrd.cpio" 7200 \
		"dmb.run=/bench/bench.sh dmb.quick=$quick" "$work/serial.log" \
		"$work/hdd.img" "$work/out.img" || true
	echo "bench: $kver finished in $(($(date +%s) - start))s"
	if ! grep -q '^bench: done' "$work/serial.log"; then
		tail -n 60 "$work/serial.log"
		echo "bench: the VM did not finish; see $work/serial.log" >&2
		exit 1
	fi
	grep -aE "$KERNEL_BAD" "$work/serial.log" &&
		echo "bench: the kernel complained (the figures are kept)" >&2
	tar -xf "$work/out.img" -C "$work/res"
	python3 "$top/bench/report.py" "$work/res" "$top/bench/results/$day-$kver" "$kver"
done
