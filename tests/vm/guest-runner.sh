#!/usr/bin/bash
# Runs inside the test VM.  The host names the tests on the kernel command
# line (dmb.tests=a,b,c) with a per-test time limit (dmb.timeout=SECONDS).
# For each test it prints the test's output, then one line the host parses:
#
#   @@RESULT <name> PASS|FAIL [reason]
#
# A test fails if its script exits non-zero, runs out of time, or if the
# kernel logged a WARN, BUG, oops, hung task or similar while it ran.
#
# A test that creates /tmp/dmb-crash ends the boot right after its result,
# the way a power cut would: no device is removed, nothing is synced, and
# the VM stops at once (sysrq b).  The host can boot the same disks again
# (KEEP_DISKS=1 tests/vm/run.sh ...) to see what survived.
export PATH=/usr/local/bin:/usr/sbin:/usr/bin
export DM_DISABLE_UDEV=1
export LVM_SYSTEM_DIR=/etc/lvm
mkdir -p /etc/lvm && cp /etc/lvm-test.conf /etc/lvm/lvm.conf

tests= timeout=600
for arg in $(cat /proc/cmdline); do
	case $arg in
	dmb.tests=*) tests=${arg#dmb.tests=} ;;
	dmb.timeout=*) timeout=${arg#dmb.timeout=} ;;
	esac
done

. /tests/kernel-bad.sh

dmesg_lines() { dmesg | wc -l; }

echo "@@KERNEL $(uname -r)"
for t in ${tests//,/ }; do
	echo "@@BEGIN $t"
	before=$(dmesg_lines)
	t0=$(date +%s)
	timeout -s KILL "$timeout" bash /tests/tests/"$t".sh </dev/null 2>&1
	rc=$?
	new=$(dmesg | tail -n +"$((before + 1))")
	echo "@@TIME $t $(($(date +%s) - t0))s"
	if bad=$(echo "$new" | grep -E "$KERNEL_BAD"); then
		echo "$new" | sed 's/^/  dmesg: /'
		echo "@@RESULT $t FAIL kernel warning: $(echo "$bad" | head -n 1)"
	elif [ "$rc" = 137 ]; then
		echo "@@RESULT $t FAIL timed out after ${timeout}s"
	elif [ "$rc" != 0 ]; then
		echo "$new" | tail -n 20 | sed 's/^/  dmesg: /'
		echo "@@RESULT $t FAIL exit code $rc"
	else
		echo "@@RESULT $t PASS"
	fi
	if [ -e /tmp/dmb-crash ]; then
		echo "@@DONE"
		echo 1 >/proc/sys/kernel/sysrq
		echo b >/proc/sysrq-trigger
	fi
	# Leave no device behind for the next test.
	dmsetup remove_all >/dev/null 2>&1
done
