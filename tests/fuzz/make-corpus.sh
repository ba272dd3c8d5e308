#!/usr/bin/env bash
# Regenerate tests/fuzz/corpus: one sound seed per structure the fuzz
# target patches (see fuzz_check.c), cut from an image that bcache_format
# makes with the target's geometry and set UUID.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/tests/fuzz/corpus
img=$(mktemp)
trap 'rm -f "$img"' EXIT
truncate -s 4M "$img"
"$top/build/user/bcache_format" --cset-uuid 11111111-2222-3333-4444-555555555555 \
	-b 4k -w 512 -C "$img" >/dev/null
mkdir -p "$out"
seed() {	# seed NAME HEADER-HEX SECTOR BYTES
	{ printf "$2"; dd if="$img" bs=512 skip="$3" count=$(($4 / 512)) status=none; } >"$out/$1"
}
# 1024 buckets of 8 sectors: journal from bucket 3 (8 buckets), prio 11,
# UUID table 12, root 13.
seed superblock '\x00\x01' 8 4096
seed jset '\x01\x01' 24 512
seed root-bset '\x02\x01' 104 512
seed prio '\x03\x01' 88 4096
seed uuids '\x04\x00' 96 4096
# An appended bset: magic for that set UUID, version 1, one 8-sector
# extent ending at 16 with a pointer into bucket 500.
python3 - "$out/appended-bset" <<'PY'
import struct, sys
key = struct.pack('<QQQ', (1 << 63) | (1 << 60) | (8 << 20), 16, (500 * 8) << 8)
hdr = struct.pack('<QQQII', 0, 0xA3207E5AA88F16E4, 0, 1, len(key) // 8)
open(sys.argv[1], 'wb').write(b'\x05\x01' + hdr + key)
PY
