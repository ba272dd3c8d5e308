#!/usr/bin/env bash
# The demo: install what is missing, build, boot Debian's 6.1 kernel in
# qemu, create a bcache device over a raw origin and one over a
# make-bcache backing device, show their table and status, write data
# through them and prove the origin holds it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
command -v make >/dev/null || {
	$SUDO apt-get update -q && $SUDO apt-get install -y -q make
}
bash scripts/deps.sh
# shellcheck disable=SC1091
. <(sed 's/ := /=/' build/kernels.mk)
kver=${KVER:-$KVER_61}
VM_TIMEOUT=600 bash tests/vm/run.sh "$kver" demo demo >/dev/null || true
log=build/vm/$kver/demo.log
sed -n '/^@@BEGIN demo/,/^@@RESULT demo/p' "$log" | grep -v '^@@BEGIN' | tr -d '\r'
grep -q '^@@RESULT demo PASS' "$log"
