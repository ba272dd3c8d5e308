#!/usr/bin/env bash
# The core's layering (scripts/check-layers.py, and its self-test), then
# checkpatch and sparse over the kernel sources (dm-bcache/, core/ included;
# checkpatch also over the test-only target in tests/vm/testmods), and
# whether every mutation patch still applies (tests/mutations: a change to
# the code a mutant patches must update the mutant with it).
# Exits non-zero on any finding; prints what it found.
#
#   lint.sh [--sparse-only] [KVER]
#
# --sparse-only: sparse alone, for a second kernel (nothing else depends
# on the kernel).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sparse_only=0
if [ "${1:-}" = --sparse-only ]; then
	sparse_only=1
	shift
fi
# Default: the 6.1 test kernel (scripts/deps.sh resolved it).
if [ -z "${1:-}" ]; then
	# shellcheck disable=SC1091
	. <(sed 's/ := /=/' build/kernels.mk)
fi
kver=${1:-$KVER_61}

fail=0
if [ "$sparse_only" = 0 ]; then
	echo "lint: layers (scripts/check-layers.py)"
	python3 scripts/check-layers.py || fail=1
	python3 scripts/check-layers.py --self-test | grep -v '^PASS' && fail=1
	if grep -n -e '^[^#]*-Werror' dm-bcache/Kbuild; then
		echo "lint: dm-bcache/Kbuild sets -Werror; the project's Makefile adds it"
		fail=1
	fi
	for p in tests/mutations/*.patch; do
		if ! out=$(patch --dry-run -s -p1 <"$p" 2>&1); then
			echo "lint: $p no longer applies: $out"
			fail=1
		fi
	done
	files=$(find dm-bcache tests/vm/testmods -name '*.[ch]' | sort)
	echo "lint: checkpatch on $(echo "$files" | wc -l) files"
	for f in $files; do
		extra=
		case "$f" in
		# Userspace-only: libc types and names are its whole purpose.
		*/platform_user.h)
			extra="--ignore NEW_TYPEDEFS,PREFER_KERNEL_TYPES,CAMELCASE,PREFER_DEFINED_ATTRIBUTE_MACRO,MACRO_ARG_REUSE" ;;
		# The option table's helper macros take literals, which are safe to
		# repeat.
		*/dmb-options.c) extra="--ignore MACRO_ARG_REUSE" ;;
		esac
		# shellcheck disable=SC2086
		if ! out=$(perl build/linux-scripts/scripts/checkpatch.pl --no-tree \
			--strict --terse --show-types --file $extra "$f" 2>&1); then
			echo "$out"
			fail=1
		fi
	done
fi

echo "lint: sparse against $kver"
kdir="$top/build/lint/$kver"
rm -rf "$kdir" && mkdir -p "$kdir" && cp -a dm-bcache/. "$kdir/"
log="$top/build/lint/sparse-$kver.log"
make -j"$(nproc)" -C "/lib/modules/$kver/build" M="$kdir" C=2 W=1 \
	CF="-D__CHECK_ENDIAN__ -Wsparse-error" modules >"$log" 2>&1 || fail=1
if grep -E 'warning:|error:' "$log"; then
	fail=1
fi
[ "$fail" = 0 ] && echo "lint: clean" || echo "lint: FAILED"
exit "$fail"
