#!/usr/bin/env bash
# bcache_probe on image files made by make-bcache: the same decisions as
# the target (core/format/origin.h), the documented exit codes, and usage errors.
# Under ASan/UBSan, like the other tool tests: a sanitizer report fails
# the case.  Prints "PASS|FAIL tools/probe/<case>" lines.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
probe=$top/build/user-asan/bcache_probe
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {	# check NAME WANT_RC WANT_REGEX ARGS...
	local name=$1 want_rc=$2 want=$3 out rc
	shift 3
	out=$("$probe" "$@" 2>&1)
	rc=$?
	if echo "$out" | grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer'; then
		echo "FAIL tools/probe/$name sanitizer: $(echo "$out" | grep -m1 'runtime error\|Sanitizer')"
	elif [ "$rc" = "$want_rc" ] && echo "$out" | grep -Eq -- "$want"; then
		echo "PASS tools/probe/$name"
	else
		echo "FAIL tools/probe/$name rc=$rc out=$(echo "$out" | tr '\n' ' ')"
	fi
}

img=$tmp/img
truncate -s 64M "$img"
check zeroes-raw 0 '^layout: raw' "$img"
check zeroes-backing-refused 1 'no bcache backing superblock' --layout backing "$img"
make-bcache -B "$img" >/dev/null
check backing-default 0 'data_offset: 16$' "$img"
check backing-raw-override 0 'data_offset: 0$' --layout raw "$img"
fresh() { rm -f "$img" && truncate -s 64M "$img"; }
fresh
make-bcache -B -o 4096 "$img" >/dev/null
check backing-offset-4096 0 'data_offset: 4096$' "$img"
printf 'X' | dd of="$img" bs=1 seek=$((4096 + 72)) conv=notrunc status=none
check damaged-refused 1 'superblock: invalid \(Bad checksum\)' "$img"
fresh
make-bcache -C -b 64k "$img" >/dev/null
check cache-sb-refused 1 'holds a bcache cache superblock' "$img"
check usage-none 2 'usage' 
check usage-bad-layout 2 "--layout: 'sideways' is not one of auto, raw, backing" --layout sideways "$img"
check missing-file 2 'No such file' "$tmp/nope"
check help 0 'usage' --help
