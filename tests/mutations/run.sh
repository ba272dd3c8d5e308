#!/usr/bin/env bash
# Mutation runs: each tests/mutations/*.patch breaks one thing on purpose
# (the read path, write-back, invalidation, the checker) in a scratch copy
# of the tree, and the test named by its "Guard:" line must then fail.  A
# mutant that the guard lets through means the suite cannot see that
# kind of bug.
#
#   run.sh KVER
#
# Guards: "vm TEST" (the module built from the copy, one VM boot of TEST
# on KVER; only TEST failing its own checks, "exit code", counts as caught:
# a crashed or killed guest, a timeout or a kernel warning does not) or "tools REGEX" (the ASan tools built from the copy, the tool
# tests; a FAIL line matching tools/REGEX must appear).  Prints one
# "PASS|FAIL mutation/<name> ..." line a patch.
set -uo pipefail
kver=$1
top=$(cd "$(dirname "$0")/../.." && pwd)

for p in "$top"/tests/mutations/*.patch; do
	name=$(basename "$p" .patch)
	guard=$(sed -n 's/^Guard: //p' "$p")
	copy=$top/build/mutants/$name
	rm -rf "$copy" && mkdir -p "$copy/build"
	cp -a "$top"/Makefile "$top"/dm-bcache "$top"/userspace "$top"/tests \
		"$top"/bench "$copy"/
	cp "$top/build/kernels.mk" "$copy/build/"
	# The unmutated userspace build, times kept: only what the patch
	# touches is built again.
	[ ! -d "$top/build/user" ] || cp -a "$top/build/user" "$copy/build/"
	[ ! -d "$top/build/user-asan" ] || cp -a "$top/build/user-asan" "$copy/build/"
	if ! patch -s -p1 -d "$copy" <"$p" >"$copy/patch.log" 2>&1; then
		echo "FAIL mutation/$name does not apply: $(head -n 2 "$copy/patch.log" | tr '\n' ' ')"
		continue
	fi
	case "$guard" in
	"vm "*)
		t=${guard#vm }
		bash "$copy/tests/vm/run.sh" "$kver" mutant "$t" >"$copy/run.log" 2>&1
		line=$(grep "^[A-Z]* vm/$kver/$t " "$copy/build/results/vm-mutant-$kver.txt" 2>/dev/null)
		case "$line" in
		"FAIL "*"build failed"*) echo "FAIL mutation/$name the mutant did not build (see $copy/run.log)" ;;
		# Caught means the test's own checks failed, not the boot.
		"FAIL vm/$kver/$t exit code"*) echo "PASS mutation/$name caught by $t: ${line#FAIL vm/$kver/$t }" ;;
		"FAIL "*) echo "FAIL mutation/$name not caught by a check of $t: ${line#FAIL vm/$kver/$t }" ;;
		"PASS "*) echo "FAIL mutation/$name survived $t" ;;
		*) echo "FAIL mutation/$name no result from $t (see $copy/run.log)" ;;
		esac
		;;
	"tools "*)
		re=${guard#tools }
		if ! make -s -C "$copy/userspace" asan-tools >"$copy/build.log" 2>&1; then
			echo "FAIL mutation/$name the mutant did not build (see $copy/build.log)"
			continue
		fi
		bash "$copy/tests/tools/tools.sh" >"$copy/tools.txt" 2>&1
		if line=$(grep -m 1 -E "^FAIL tools/$re" "$copy/tools.txt"); then
			echo "PASS mutation/$name caught: ${line#FAIL }"
		else
			echo "FAIL mutation/$name survived the tool tests"
		fi
		;;
	*) echo "FAIL mutation/$name has no guard" ;;
	esac
done
