# Helpers sourced by every VM test (tests/vm/tests/*.sh).
#
# Devices: $CACHE_DEV plays the SSD, $ORIGIN_DEV the origin, $DATA_DEV is
# 64 MiB of random bytes made by the host.  Each test starts with no dm
# devices and must leave none behind.
set -eu -o pipefail

CACHE_DEV=/dev/vda
ORIGIN_DEV=/dev/vdb
DATA_DEV=/dev/vdc
CACHE_MM=$(stat -L -c '%t:%T' $CACHE_DEV | { IFS=: read -r a b; echo "$((16#$a)):$((16#$b))"; })
ORIGIN_MM=$(stat -L -c '%t:%T' $ORIGIN_DEV | { IFS=: read -r a b; echo "$((16#$a)):$((16#$b))"; })

fail() {
	echo "FAILED: $*" >&2
	exit 1
}

log() { echo "-- $*"; }

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

# Compare @count sectors: @dev_a from sector @a with @dev_b from sector @b.
# Page caches are dropped first, so the bytes come from the devices.
same_data() {
	local dev_a=$1 a=$2 dev_b=$3 b=$4 count=$5
	sync
	echo 3 >/proc/sys/vm/drop_caches
	cmp -i $((a * 512)):$((b * 512)) -n $((count * 512)) "$dev_a" "$dev_b"
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

expect_eq() {	# expect_eq WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# The last dmesg line naming bcache, for checking ctr error strings.
last_dm_error() { dmesg | grep -E 'bcache' | tail -n 1; }
