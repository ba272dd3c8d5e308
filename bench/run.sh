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
	make -s -C "$top" module KVER="$kver"
	make -s -C "$top" userspace
	bash "$top/tests/vm/mkinitramfs.sh" "$kver" \
		"$top/build/kmod/$kver/dm-bcache.ko" "$work/initrd.cpio"
	# vda: the "HDD" (behind dm-delay in the guest); vdb: the results.
	truncate -s 2G "$work/hdd.img"
	truncate -s 256M "$work/out.img"
	echo "bench: booting $kver (quick=$quick)"
	start=$(date +%s)
	timeout -s KILL 7200 qemu-system-x86_64 -accel tcg -cpu max \
		-m 2G -smp 2 -kernel "/boot/vmlinuz-$kver" -initrd "$work/initrd.cpio" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=1 dmb.run=/bench/bench.sh dmb.quick=$quick" \
		-display none -vga none -no-reboot -monitor none -serial stdio \
		-drive file="$work/hdd.img",if=virtio,format=raw,cache=none,aio=threads \
		-drive file="$work/out.img",if=virtio,format=raw,cache=none,aio=threads \
		</dev/null >"$work/serial.log" 2>&1 || true
	echo "bench: $kver finished in $(($(date +%s) - start))s"
	if ! grep -q '^bench: done' "$work/serial.log"; then
		tail -n 60 "$work/serial.log"
		echo "bench: the VM did not finish; see $work/serial.log" >&2
		exit 1
	fi
	grep -aE 'WARNING:|BUG|Oops|Call Trace' "$work/serial.log" &&
		echo "bench: the kernel complained (the figures are kept)" >&2
	tar -xf "$work/out.img" -C "$work/res"
	python3 "$top/bench/report.py" "$work/res" "$top/bench/results/$day-$kver" "$kver"
done
