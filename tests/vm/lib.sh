# Helpers sourced by every VM test (tests/vm/tests/*.sh).
#
# Devices: $CACHE_DEV plays the SSD, $ORIGIN_DEV the origin, $DATA_DEV is
# 64 MiB of random bytes made by the host, $EXPORT_DEV is where a test
# leaves an image for the host's tests (build/vm/KVER/export.img).  Each test starts with no dm
# devices and must leave none behind.
set -eu -o pipefail

CACHE_DEV=/dev/vda
ORIGIN_DEV=/dev/vdb
DATA_DEV=/dev/vdc
EXPORT_DEV=/dev/vdd	# 256 MiB the host reads after the run
CACHE_MM=$(stat -L -c '%t:%T' $CACHE_DEV | { IFS=: read -r a b; echo "$((16#$a)):$((16#$b))"; })
ORIGIN_MM=$(stat -L -c '%t:%T' $ORIGIN_DEV | { IFS=: read -r a b; echo "$((16#$a)):$((16#$b))"; })

# Options that make every I/O eligible for caching: no sequential cutoff
# and no congestion bypass (TCG latencies would trip the thresholds).
NOBYPASS="sequential_cutoff 0 congested_read_threshold_us 0 congested_write_threshold_us 0"

fail() {
	echo "FAILED: $*" >&2
	exit 1
}

# Seconds since the test began (bash counts from its start), so a slow
# step shows in the log.
log() { echo "-- [${SECONDS}s] $*"; }

load_module() {
	lsmod | grep -q '^dm_bcache' || modprobe dm-bcache
}

sectors() { blockdev --getsz "$1"; }

# Zero the first MiB of a device: no stale superblock from earlier tests.
wipe_head() { dd if=/dev/zero of="$1" bs=1M count=1 conv=fsync status=none; }

# Copy @mib MiB (at most 64) of the random data to @dev at MiB @seek_mib.
write_data() {
	dd if=$DATA_DEV of="$1" bs=1M seek="$2" count="$3" oflag=direct \
		conv=fsync status=none
}

# write_dirty DEV SEEK COUNT: write_data to the write-back table DEV
# (/dev/mapper/NAME) until its status shows COUNT MiB dirty, or fail: a
# fresh set has no bucket ready until its first refill, and writes bypass
# (bypass_nospace) until then.
write_dirty() {
	local name=${1##*/} i
	for i in 1 2 3 4 5; do
		write_data "$1" "$2" "$3"
		[ "$(status_field "$name" 4)" -ge $(($3 * 2048)) ] && return 0
		sleep 1
	done
	fail "dirty $(status_field "$name" 4) after writing $3 MiB to $name"
}

# Compare @count sectors: @dev_a from sector @a with @dev_b from sector @b.
# Page caches are dropped first, so the bytes come from the devices.
same_data() {
	local dev_a=$1 a=$2 dev_b=$3 b=$4 count=$5
	sync
	echo 3 >/proc/sys/vm/drop_caches
	cmp -i $((a * 512)):$((b * 512)) -n $((count * 512)) "$dev_a" "$dev_b"
}

# same_data, reading @dev_a with O_DIRECT in 1 MiB requests (all MiB
# aligned): no readahead, so the target sees exactly the range.
same_direct() {
	local dev_a=$1 a=$2 dev_b=$3 b=$4 count=$5
	dd if="$dev_a" bs=1M iflag=direct,skip_bytes,count_bytes \
		skip=$((a * 512)) count=$((count * 512)) status=none |
		cmp -i 0:$((b * 512)) -n $((count * 512)) - "$dev_b"
}

# sha256 of @count sectors of @dev from sector @skip (small ranges only).
sum_sectors() {
	dd if="$1" bs=512 skip="$2" count="$3" iflag=direct status=none |
		sha256sum | cut -d' ' -f1
}

# Status field N (1-based, after "<start> <len> bcache").
status_field() {
	dmsetup status "$1" | awk -v n="$2" '{ print $(n + 3) }'
}

# Named counter NAME of dm device dmb, from the status's trailing
# "<#> name value ..." group.
counter() { dmsetup status dmb | tr ' ' '\n' | grep -A1 -x "$1" | tail -n 1; }

# Every fill dmb queued so far is indexed or dropped (a read miss queues
# its fill before it completes): wait for that, not for a time.
fills_done() { [ "$(counter fills_pending)" = 0 ]; }
wait_fills() { wait_for "dmb's fills to be indexed" fills_done; }

# Make dm device @name (@sectors long) fail every I/O from now on.
fail_device() {
	dmsetup suspend "$1"
	dmsetup reload "$1" --table "0 $2 error"
	dmsetup resume "$1"
}

expect_eq() {	# expect_eq WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# The kernel log from a mark on.  klog_mark logs a line no other call
# logs; klog_since prints what the kernel logged after the last mark, so
# a check reads its own case's lines and never a neighbour's.  The log
# is never cleared: the guest runner judges every test by all of it.
# (Call klog_mark directly, not in a subshell: it sets KLOG_MARK.)
KLOG_MARK= KLOG_N=0
KLOG_ID=$(cat /proc/sys/kernel/random/uuid)	# unique in the boot, unlike a pid
klog_mark() {
	KLOG_N=$((KLOG_N + 1))
	KLOG_MARK="dmb-test: mark $KLOG_ID.$KLOG_N"
	echo "$KLOG_MARK" >/dev/kmsg
	plant_warning
}
klog_since() {
	[ -n "$KLOG_MARK" ] || fail "klog_since without a klog_mark"
	dmesg | awk -v m="$KLOG_MARK" '
		f { print }
		length($0) >= length(m) && substr($0, length($0) - length(m) + 1) == m { f = 1 }'
}

# The runner's check of itself (dmb.plant=1, tests/run-all.sh): at the
# first mark of the test, where a test used to clear the log, log a real
# kernel warning (the test-only dmb_testwarn target, tests/vm/testmods)
# and end the test as a pass; the runner must fail it all the same.
plant_warning() {
	[ -e /tmp/dmb-plant ] || return 0
	rm -f /tmp/dmb-plant
	klog_warn_now
	echo "planted a kernel warning; ending the test as a pass"
	exit 0
}

# A real kernel warning, now (the constructor of dmb_testwarn).
klog_warn_now() {
	modprobe dmb-testwarn
	dmsetup create dmb-planted --table "0 8 dmb_testwarn ctr"
	dmsetup remove dmb-planted
}

# klog_has REGEX: the kernel logged a line matching REGEX since the last
# mark.  grep reads all of it (no -q): under pipefail an early exit would
# kill klog_since with SIGPIPE and turn a match into a failure.
klog_has() { klog_since | grep -E -- "$1" >/dev/null; }

# klog_flood MIB: log MIB MiB of harmless lines (/dev/kmsg takes at most
# 992 bytes a record).
klog_flood() {
	local line i
	line="dmb-test: flood $(printf '%0900d' 0)"
	exec 3>/dev/kmsg
	for ((i = 0; i < $1 * 1048576 / 917; i++)); do
		printf '%s\n' "$line" >&3
	done
	exec 3>&-
}

# The last line since the last mark naming bcache, for checking ctr error
# strings.
last_dm_error() { klog_since | grep -E 'bcache' | tail -n 1; }

# Create a target on cache @dev with origin_layout raw (so the origin's own
# superblock does not matter) and expect the constructor to refuse it with
# @want, writing nothing to the first 4 MiB of the cache.
refused_cache() {	# refused_cache DEV WANT
	local len=$((64 * 2048))
	# cmp, not sha256sum: hashing is slow under TCG, copying is not.
	dd if="$1" of=/tmp/cache-head bs=1M count=4 iflag=direct status=none
	klog_mark
	if dmsetup create dmbdmg --table "0 $len bcache $1 $ORIGIN_DEV 2 origin_layout raw" 2>/dev/null; then
		dmsetup remove dmbdmg
		fail "$cls: damaged cache accepted"
	fi
	last_dm_error | grep -qF "bcache: $2 (" ||
		fail "$cls: want '$2', got '$(last_dm_error)'"
	dd if="$1" bs=1M count=4 iflag=direct status=none |
		cmp - /tmp/cache-head >/dev/null ||
		fail "$cls: the refused constructor wrote to the cache"
}

# For every class in /tests/damage-classes.txt: run RESTORE to put a
# sound cache on DEV ($CACHE_DEV if not given), apply the damage with
# bcache_damage, expect bcache_check to name the class, and the
# constructor to refuse the cache (a damaged newest journal entry, class
# journal-tail, is accepted with a warning: it is what a torn write
# leaves).  "truncate" is a dm-linear half of the cache.
damage_all() {	# damage_all RESTORE [DEV]
	local restore=$1 dev=${2:-$CACHE_DEV} n=0 cls classes err out rc
	while IFS='|' read -r cls classes err; do
		case "$cls" in '#'*|'') continue ;; esac
		$restore
		if [ "$cls" = truncate ]; then
			dmsetup create half --table "0 $(($(sectors "$dev") / 2)) linear $dev 0"
			refused_cache /dev/mapper/half "$err"
			dmsetup remove half
			n=$((n + 1))
			continue
		fi
		bcache_damage "$cls" "$dev" >/dev/null || fail "$cls: bcache_damage failed"
		# Exit 1 is damage found; 0 is nothing, or only a torn journal
		# tail, which checker and target both tolerate; 2 a tool error.
		out=$(bcache_check "$dev") && rc=0 || rc=$?
		if [ "$rc" = 0 ] && echo "$out" | grep -q '^tolerated: journal-tail:' &&
			echo ",$classes," | grep -q ',journal-tail,'; then
			:
		elif [ "$rc" = 0 ]; then
			fail "$cls: bcache_check found nothing: $out"
		else
			[ "$rc" = 1 ] || fail "$cls: bcache_check exit $rc, want 1: $out"
			echo "$out" | grep -Eq "^damage: (${classes//,/|}):" ||
				fail "$cls: bcache_check said: $out"
		fi
		if [ "$rc" = 0 ]; then
			klog_mark
			dmsetup create dmbdmg --table "0 $((64 * 2048)) bcache $dev $ORIGIN_DEV 2 origin_layout raw" ||
				fail "$cls: a torn journal tail was refused: $(last_dm_error)"
			dmsetup remove dmbdmg
			klog_has 'journal-tail: .*ignored' || fail "$cls: no warning logged"
		else
			refused_cache "$dev" "$err"
		fi
		n=$((n + 1))
	done </tests/damage-classes.txt
	log "$n damage classes checked"
	[ "$n" = "$(grep -cEv '^(#|$)' /tests/damage-classes.txt)" ] ||
		fail "only $n damage classes ran"
}

wait_for() {	# wait_for DESCRIPTION TEST-COMMAND...: up to 20 s
	local what=$1 i
	shift
	for i in $(seq 100); do "$@" && return 0; sleep 0.2; done
	fail "timed out waiting for $what"
}

# Register $CACHE_DEV and $ORIGIN_DEV with the mainline driver; wait for
# bcache0 attached to its set; fail on any complaint in the kernel log
# since (klog_since after it shows the driver's lines; "invalidating
# existing data" is the driver creating a new set).
mainline_register() {
	klog_mark
	echo $CACHE_DEV >/sys/fs/bcache/register
	echo $ORIGIN_DEV >/sys/fs/bcache/register
	wait_for "bcache0" test -b /dev/bcache0
	wait_for "bcache0 to attach" test -e /sys/block/bcache0/bcache/cache
	# (UUIDs masked first: "bad8" in one is no complaint.)
	if klog_since | sed -E 's/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/<uuid>/g' |
		grep -E 'bcache: .*(error|fail|bad|invalid[^a])'; then
		fail "mainline bcache complained"
	fi
}

# Stop the mainline driver's bcache0 and cache set @cset, and wait for both.
mainline_stop() {	# mainline_stop CSET
	echo 1 >/sys/block/bcache0/bcache/stop
	wait_for "bcache0 to stop" test ! -b /dev/bcache0
	echo 1 >/sys/fs/bcache/$1/stop
	wait_for "the set to stop" test ! -e /sys/fs/bcache/$1
}
