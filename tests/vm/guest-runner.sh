#!/usr/bin/bash
# Runs inside the test VM.  The host names the tests on the kernel command
# line (dmb.tests=a,b,c) with a per-test time limit (dmb.timeout=SECONDS).
# For each test it prints the test's output, then one line the host parses:
#
#   @@RESULT <name> PASS|FAIL [reason]
#
# A test fails if its script exits non-zero, runs out of time, leaves a dm
# device behind, or if the kernel logged a WARN, BUG, oops, hung task or
# similar (tests/vm/kernel-bad.sh) from the moment it began until the next
# test begins: its own run, the teardown after it, and anything logged
# between two tests.
#
# The kernel log is read from /dev/kmsg by a reader started at boot, never
# by counting lines of dmesg: clearing the log (dmesg -c) or filling the
# ring buffer cannot hide a line from it.  Each test is bracketed by
# marker records the runner writes to /dev/kmsg, and the records between
# them must carry consecutive sequence numbers, so a reader that fell
# behind and lost records fails the test instead of passing it blind.
#
# Before each test the first MiB of the cache and the origin disks is
# zeroed, so no test can lean on what an earlier one left there (unless
# dmb.keepdisks=1: the second boot of a power cut reads the first's).
#
# A test that creates /tmp/dmb-crash ends the boot right after its result,
# the way a power cut would: no device is removed, nothing is synced, and
# the VM stops at once (sysrq b).  The host can boot the same disks again
# (KEEP_DISKS=1 tests/vm/run.sh ...) to see what survived.
#
# dmb.plant=1 (tests/run-all.sh's check of this checker) makes the first
# klog_mark of each test (tests/vm/lib.sh) log a real kernel warning and
# end the test as a pass: the runner must still fail it.
#
# dmb.repeat=1 says the suite already ran on another kernel in this make
# check: tests then skip the parts that check only the userspace tools on
# what the kernel wrote, and say so (DMB_REPEAT=1 in their environment).
export PATH=/usr/local/bin:/usr/sbin:/usr/bin
export DM_DISABLE_UDEV=1
export LVM_SYSTEM_DIR=/etc/lvm
mkdir -p /etc/lvm && cp /etc/lvm-test.conf /etc/lvm/lvm.conf

tests= timeout=600 keepdisks=0 plant=0
export DMB_REPEAT=0
for arg in $(cat /proc/cmdline); do
	case $arg in
	dmb.tests=*) tests=${arg#dmb.tests=} ;;
	dmb.timeout=*) timeout=${arg#dmb.timeout=} ;;
	dmb.keepdisks=1) keepdisks=1 ;;
	dmb.plant=1) plant=1 ;;
	dmb.repeat=1) DMB_REPEAT=1 ;;
	esac
done

. /tests/kernel-bad.sh

# The reader: every record from the oldest still in the buffer on, one per
# line ("prio,seq,usec,flags;text", continuation lines indented).  dd
# writes each record as it is read and, with noerror, reads on past an
# overrun (EPIPE), which the sequence check below then reports.
KMSG=/tmp/kmsg.log
dd if=/dev/kmsg of=$KMSG bs=64k conv=noerror status=none 2>/tmp/kmsg.err &
kmsg_pid=$!

# kmsg_marker TEXT: log TEXT and wait until the reader has it (10 s).
kmsg_marker() {
	local i
	echo "$1" >/dev/kmsg
	for i in $(seq 100); do
		grep -q -F -e ";$1" $KMSG && return 0
		sleep 0.1
	done
	return 1
}

# kmsg_between FROM TO: the records from marker FROM to marker TO,
# both included, as the reader wrote them.
kmsg_between() {
	awk -v a="$1" -v b="$2" '
		{ t = $0; sub(/^[^;]*;/, "", t) }
		t == a { f = 1 }
		f { print }
		f && t == b { exit }' $KMSG
}

# kmsg_gaps RECORDS: "lost N records" if the sequence numbers skip.
kmsg_gaps() {
	awk -F'[,;]' '
		/^ / { next }
		prev != "" && $2 != prev + 1 { lost += $2 - prev - 1 }
		{ prev = $2 }
		END { if (lost) print "lost " lost " kernel log records" }' <<<"$1"
}

# kmsg_text RECORDS: the records' text alone.
kmsg_text() { sed 's/^[^;]*;//' <<<"$1"; }

# show_bad TEXT: the lines around the first complaint, for the log.
show_bad() {
	grep -E -B 5 -A 40 -m 1 "$KERNEL_BAD" <<<"$1" | head -n 80 | sed 's/^/  dmesg: /'
}

# judge_late NAME FROM TO: what was logged between the end of test NAME
# and marker TO is charged to it (a FAIL line only if something is wrong).
judge_late() {
	local records late bad gaps
	records=$(kmsg_between "$2" "$3")
	late=$(kmsg_text "$records")
	gaps=$(kmsg_gaps "$records")
	if [ -n "$gaps" ]; then
		echo "@@RESULT $1 FAIL kernel log reader $gaps after it ended"
	elif bad=$(grep -E "$KERNEL_BAD" <<<"$late"); then
		show_bad "$late"
		echo "@@RESULT $1 FAIL kernel warning after it ended: $(head -n 1 <<<"$bad")"
	fi
}

# judge N NAME FROM TO RC: the result line for test NAME (the N-th run)
# from its exit code and the log between the markers.
judge() {
	local name=$1 from=$2 to=$3 rc=$4 records text bad gaps
	records=$(kmsg_between "$from" "$to")
	text=$(kmsg_text "$records")
	gaps=$(kmsg_gaps "$records")
	if ! grep -q -F -x -e "$to" <<<"$text"; then
		echo "@@RESULT $name FAIL kernel log reader lost the marker '$to'"
	elif [ -n "$gaps" ]; then
		echo "@@RESULT $name FAIL kernel log reader $gaps"
	elif bad=$(grep -E "$KERNEL_BAD" <<<"$text"); then
		show_bad "$text"
		[ "$rc" = 0 ] || rc=" (and exit code $rc)"
		echo "@@RESULT $name FAIL kernel warning${rc#0}: $(head -n 1 <<<"$bad")"
	elif [ "$rc" = 137 ]; then
		echo "@@RESULT $name FAIL timed out after ${timeout}s"
	elif [ "$rc" != 0 ]; then
		tail -n 20 <<<"$text" | sed 's/^/  dmesg: /'
		echo "@@RESULT $name FAIL exit code $rc"
	elif [ -n "$leftover" ]; then
		echo "@@RESULT $name FAIL left dm devices behind: $leftover"
	else
		echo "@@RESULT $name PASS"
	fi
}

echo "@@KERNEL $(uname -r)"
kmsg_marker "dmb-runner: boot" || echo "@@WARNING the kernel log reader does not work"
n=0 prev= prev_end=
for t in ${tests//,/ }; do
	n=$((n + 1))
	begin="dmb-runner: begin $n $t"
	kmsg_marker "$begin"
	# What was logged after the previous test was judged is charged to it.
	[ -z "$prev" ] || judge_late "$prev" "$prev_end" "$begin"
	echo "@@BEGIN $t"
	if [ "$keepdisks" = 0 ]; then
		dd if=/dev/zero of=/dev/vda bs=1M count=1 oflag=direct status=none
		dd if=/dev/zero of=/dev/vdb bs=1M count=1 oflag=direct status=none
	fi
	rm -f /tmp/dmb-plant
	[ "$plant" = 0 ] || : >/tmp/dmb-plant
	t0=$(date +%s)
	# timeout leads its own process group: what the test left running
	# in the background is killed with it.
	timeout -s KILL "$timeout" bash /tests/tests/"$t".sh </dev/null 2>&1 &
	tpid=$!
	wait $tpid
	rc=$?
	# Gone for good before the teardown: a killed writer may still hold
	# a device open.
	kill -KILL -- -$tpid 2>/dev/null
	for _ in $(seq 100); do kill -0 -- -$tpid 2>/dev/null || break; sleep 0.1; done
	echo "@@TIME $t $(($(date +%s) - t0))s"
	leftover=
	if [ ! -e /tmp/dmb-crash ]; then
		leftover=$(dmsetup ls 2>/dev/null | awk '$1 != "No" { printf "%s ", $1 }')
		# Leave no device behind for the next test; the teardown
		# is still this test's.
		dmsetup remove_all >/dev/null 2>&1
		survivors=$(dmsetup ls 2>/dev/null | awk '$1 != "No" { printf "%s ", $1 }')
		[ -z "$survivors" ] || leftover="$leftover(and could not remove: $survivors)"
	fi
	end="dmb-runner: end $n $t"
	kmsg_marker "$end"
	judge "$t" "$begin" "$end" "$rc"
	prev=$t prev_end=$end
	if [ -e /tmp/dmb-crash ]; then
		echo "@@DONE"
		echo 1 >/proc/sys/kernel/sysrq
		echo b >/proc/sysrq-trigger
	fi
done
# The last test's late lines: a second for work it queued to finish.
if [ -n "$prev" ]; then
	sleep 1
	kmsg_marker "dmb-runner: finished"
	judge_late "$prev" "$prev_end" "dmb-runner: finished"
fi
kill $kmsg_pid 2>/dev/null
