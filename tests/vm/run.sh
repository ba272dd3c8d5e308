#!/usr/bin/env bash
# Host side of the VM test harness: build the module and initramfs for one
# kernel, boot it in qemu (TCG), run the named tests in that one boot, and
# report each result.
#
#   run.sh KVER SUITE TEST...
#
# Results go to build/results/vm-SUITE-KVER.txt as "PASS|FAIL vm/KVER/TEST"
# lines, the serial log to build/vm/KVER/SUITE.log.  A guest that hangs is
# killed after VM_TIMEOUT seconds (default: 300 + 240 per test) and every
# test without a result fails with "guest killed".  VM_APPEND adds kernel
# parameters, e.g. VM_APPEND="slub_debug=FZPU" to catch slab corruption.
# VM_REUSE=1 boots the initramfs the last run for KVER built, if there is
# one (tests/run-all.sh: one build per kernel for all its boots).
set -uo pipefail

kver=$1 suite=$2
shift 2
tests=("$@")
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$top/build/vm/$kver
results=$top/build/results/vm-$suite-$kver.txt
log=$work/$suite.log
test_timeout=${TEST_TIMEOUT:-600}
vm_timeout=${VM_TIMEOUT:-$((300 + 240 * ${#tests[@]}))}
mkdir -p "$work" "$top/build/results"

# shellcheck source=tests/vm/vm.sh
. "$top/tests/vm/vm.sh"
if [ "${VM_REUSE:-0}" = 1 ] && [ -e "$work/initrd.cpio" ]; then
	echo "vm: reusing $work/initrd.cpio"
elif ! vm_build "$kver" "$work/initrd.cpio" "$work/build.log"; then
	cat "$work/build.log"
	for t in "${tests[@]}"; do echo "FAIL vm/$kver/$t build failed"; done >"$results"
	exit 1
fi

# The disks every test may use: vda plays the SSD, vdb the origin, vdc
# holds 64 MiB of random data made here (random numbers and hashing are
# slow under TCG; copying and comparing are not), vdd is where a test
# leaves an image for the host (kept as export-SUITE.img).
# KEEP_DISKS=1 boots the cache, origin and data disks of the previous run
# again (after a test that ended its boot like a power cut).  ROOT_IMG=
# adds that image as vde (the systemd boot's root file system).
if [ "${KEEP_DISKS:-0}" = 1 ] && [ -e "$work/disk2.img" ]; then
	rm -f "$work/disk3.img"
else
	rm -f "$work"/disk*.img
	truncate -s 256M "$work/disk0.img"
	truncate -s 512M "$work/disk1.img"
	head -c 64M /dev/urandom >"$work/disk2.img"
fi
truncate -s 256M "$work/disk3.img"

list=$(IFS=,; echo "${tests[*]}")
echo "vm: booting $kver for suite $suite: ${tests[*]}"
start=$(date +%s)
# The guest kernel itself sometimes oopses under TCG while it boots, long
# before init (an int3 from live code patching on the second vCPU, seen on
# 6.12).  Nothing of ours has run then and no disk has been touched, so
# such a boot is tried again, at most twice, and says so; a crash after
# init's @@INIT is a result like any other.
for try in 1 2 3; do
	vm_boot "$kver" "$work/initrd.cpio" "$vm_timeout" \
		"ima_policy=critical_data dmb.tests=$list dmb.timeout=$test_timeout dmb.keepdisks=${KEEP_DISKS:-0} ${VM_APPEND:-}" \
		"$log" "$work/disk0.img,discard=unmap" "$work/disk1.img,discard=unmap" \
		"$work/disk2.img,readonly=on" "$work/disk3.img" ${ROOT_IMG:+"$ROOT_IMG"}
	qrc=$?
	grep -aq '^@@INIT' "$log" || [ "$try" = 3 ] ||
		! grep -aqE 'Oops|BUG:|Kernel panic' "$log" || {
		echo "vm: the $kver kernel stopped in its own boot, before init (try $try):"
		grep -a -m 1 -A 3 -E 'Oops|BUG:|Kernel panic' "$log" | tr -d '\r'
		cp "$log" "$log.boot$try"
		continue
	}
	break
done
mv "$work/disk3.img" "$work/export-$suite.img"
echo "vm: $kver finished in $(($(date +%s) - start))s (qemu exit $qrc)"

killed=
stopped_in=$(grep -a '^@@BEGIN' "$log" | tail -n 1 | tr -d '\r' | cut -d' ' -f2)
if grep -q '^@@DONE' "$log"; then
	:
elif [ "$qrc" = 137 ]; then
	killed="guest killed at the ${vm_timeout}s limit (see $log)"
else
	killed="guest stopped (crashed or rebooted) before the end (see $log)"
fi
# A crash's first lines, kept where the host's summary prints them (the
# serial log itself does not outlive a CI run).
crash=$top/build/results/crash-$suite-$kver.log
rm -f "$crash"
if [ -n "$killed" ]; then
	{
		echo "== $kver $suite: the guest stopped during $stopped_in"
		grep -a -m 1 -A 40 -E 'Oops|BUG:|kernel BUG|panic|double fault|general protection' "$log" |
			tr -d '\r' | grep -v -E '\] *\? |\] (Code|RSP|RAX|RDX|RBP|R10|R13|FS|CS|CR2|DR0|DR3):' ||
			{ echo "(no oops or panic in the log; its last lines:)"; tail -n 20 "$log" | tr -d '\r'; }
	} >"$crash"
	# Prefixed: tests/run-all.sh passes on only the lines that start
	# with "vm:".
	sed 's/^/vm: | /' "$crash"
fi
: >"$results"
# A test named more than once reports its first failure, if any.
for t in $(printf '%s\n' "${tests[@]}" | awk '!seen[$0]++'); do
	all=$(grep -a "^@@RESULT $t " "$log" | tr -d '\r')
	line=$(grep -m 1 "^@@RESULT $t FAIL" <<<"$all" || tail -n 1 <<<"$all")
	if [ -z "$line" ] || { [ -n "$killed" ] && [ "$t" = "$stopped_in" ]; }; then
		echo "FAIL vm/$kver/$t ${killed:-no result}" >>"$results"
		continue
	fi
	set -- $line
	shift 2
	status=$1
	shift
	echo "$status vm/$kver/$t $*" >>"$results"
done
[ -z "$killed" ] || echo "vm: $killed"
grep '^FAIL' "$results" | while read -r _ name why; do
	echo "vm: FAIL $name: $why"
	# Prefixed: tests/run-all.sh passes on only the lines that start
	# with "vm:", and a CI log must show why a test failed.
	sed -n "/^@@BEGIN ${name##*/}\$/,/^@@RESULT ${name##*/} /p" "$log" | tail -n 60 |
		tr -d '\r' | sed 's/^/vm: | /'
done
cat "$results"
! grep -q '^FAIL' "$results"
