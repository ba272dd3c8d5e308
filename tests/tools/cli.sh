#!/usr/bin/env bash
# The command-line contract of every tool (docs/man, userspace/lib/cli.h):
# each tool against each kind of input gives its documented exit code and
# a message naming the problem, and a checksum of every input taken before
# and after proves that nothing was written where the tool refused (or
# where it only reads).  Then the options every tool shares (--help,
# --version from core/util/version.h, --quiet printing nothing), export's
# output rules, format's signature rules and JSON for hostile labels.
# Devices held by a live table are the VM test tools-in-use's.
#
# Tools run under ASan/UBSan; a sanitizer report fails the case.  Prints
# "PASS|FAIL tools/cli/<case>" lines.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/user-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS tools/cli/$1"; }
failc() { echo "FAIL tools/cli/$1 ${*:2}"; }

# sums FILE...: one checksum line per existing regular file.  A CRC
# (cksum, hardware-assisted) is enough to see what a tool wrote by mistake
# and 30 times faster than sha256sum on the 64 MiB inputs.
sums() {
	local f
	for f in "$@"; do
		[ -f "$f" ] && cksum "$f"
	done
	return 0
}

# run NAME WANT_RC WANT_REGEX WRITES -- TOOL ARGS...: exit code, a message
# matching WANT_REGEX (stdout and stderr), no sanitizer report, and unless
# WRITES is "writes", every file named in ARGS unchanged.
run() {
	local name=$1 want_rc=$2 want=$3 writes=$4 tool=$6 out rc before after
	local files=() a
	shift 6
	for a in "$@"; do [ -f "$a" ] && files+=("$a"); done
	before=$(sums "${files[@]}")
	out=$("$bin/$tool" "$@" 2>&1)
	rc=$?
	after=$(sums "${files[@]}")
	if echo "$out" | grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer'; then
		failc "$name" "sanitizer: $(echo "$out" | grep -m1 'runtime error\|Sanitizer')"
	elif [ "$rc" != "$want_rc" ] || ! echo "$out" | grep -Eq -- "$want"; then
		failc "$name" "rc=$rc want $want_rc /$want/: $(echo "$out" | head -n 3 | tr '\n' ' ')"
	elif [ "$writes" != writes ] && [ "$before" != "$after" ]; then
		failc "$name" "an input changed: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
	else
		pass "$name"
	fi
}

# --- inputs -----------------------------------------------------------------------
mkdir "$tmp/dir"
: >"$tmp/empty.img"
head -c 1024 /dev/zero >"$tmp/small.img"
truncate -s 64M "$tmp/zero.img"
head -c 8M /dev/urandom >"$tmp/random.img"
truncate -s 64M "$tmp/ext4.img"
mkfs.ext4 -q -F -L data "$tmp/ext4.img"
# A clean cache and backing pair whose cache indexes 4 MiB of the backing
# device's data (bcache_seed), for the tools that need one beside the input.
truncate -s 256M "$tmp/cache.img"
truncate -s 64M "$tmp/backing.img"
head -c 4M /dev/urandom >"$tmp/seed.data"
"$bin/bcache_format" -q -b 128k -w 512 -C "$tmp/cache.img" -B "$tmp/backing.img" &&
	"$bin/bcache_seed" "$tmp/cache.img" "$tmp/backing.img" "$tmp/seed.data" 4 >/dev/null ||
	failc setup "formatting and seeding the reference pair failed"
inputs=(none help version badopt missing dir empty small zero random ext4)

# The invocation of TOOL on input @1 (a path), as an argument list.
args_for() {
	case $tool in
	bcache_format) echo "-C|$1" ;;
	bcache_export) echo "$1|$tmp/backing.img|$tmp/out.img" ;;
	bcache_writeback) echo "$1|$tmp/backing.img" ;;
	bcache_repair) echo "-i|$1|-o|$tmp/out.img" ;;
	*) echo "$1" ;;
	esac
}

# want TOOL INPUT: "rc|regex|writes" the contract promises.
want() {
	local t=$1 i=$2
	case $i in
	none) echo "2|missing|" ; return ;;
	help) echo "0|^usage: $t|" ; return ;;
	version) echo "0|^$t \(dm-bcache\) $version\$|" ; return ;;
	badopt) echo "2|unrecognized option '--bogus'|" ; return ;;
	missing) echo "2|nothing\.img: No such file or directory|" ; return ;;
	dir) echo "2|is a directory, not a block device or image file|" ; return ;;
	esac
	case $t:$i in
	bcache_check:empty) echo "1|damage: superblock: device of 0 sectors is too small|" ;;
	bcache_check:small) echo "1|damage: superblock: device of 2 sectors is too small|" ;;
	bcache_check:zero) echo "0|blank \(sectors 0-15 are zero\)|" ;;
	bcache_check:random|bcache_check:ext4) echo "1|damage: superblock: .*Not a bcache superblock|" ;;
	bcache_dump:empty|bcache_dump:small) echo "0|damage: superblock: device of [02] sectors is too small|" ;;
	bcache_dump:zero) echo "0|^blank \(sectors 0-15 are zero\)|" ;;
	bcache_dump:random|bcache_dump:ext4) echo "0|damage: superblock: .*Not a bcache superblock|" ;;
	bcache_probe:empty) echo "1|refused: no data area: the device holds 0 sectors|" ;;
	bcache_probe:small) echo "0|data_sectors: 2$|" ;;
	bcache_probe:zero) echo "0|data_sectors: 131072|" ;;
	bcache_probe:random) echo "0|data_sectors: 16384|" ;;
	bcache_probe:ext4) echo '0|note: the origin holds an ext4 file system \(label "data"\) with UUID [0-9a-f-]{36}; the cached device shows the same, so mount it by its dm name|' ;;
	bcache_format:empty) echo "1|empty.img: device too small: a cache set needs at least 513 buckets|" ;;
	bcache_format:small) echo "1|small.img: device too small: a cache set needs at least 513 buckets|" ;;
	bcache_format:zero) echo "1|zero.img: 67108864 bytes hold 128 buckets of 512 KiB; use --bucket 64k or smaller|" ;;
	bcache_format:random) echo "1|random.img: 8388608 bytes hold 16 buckets of 512 KiB; use --bucket 8k or smaller|" ;;
	bcache_format:ext4) echo "1|ext4.img: holds an ext4 file system \(label \"data\"\); use --force|" ;;
	bcache_export:empty|bcache_export:small|bcache_export:random|bcache_export:ext4)
		echo "1|the cache does not check clean; run bcache_check|" ;;
	bcache_export:zero) echo "1|CACHE is blank: there is nothing to export|" ;;
	bcache_writeback:empty|bcache_writeback:small|bcache_writeback:random|bcache_writeback:ext4)
		echo "1|the cache does not check clean \(bcache_check lists the damage\)|" ;;
	bcache_writeback:zero) echo "1|CACHE is blank: it holds nothing|" ;;
	bcache_repair:empty|bcache_repair:small|bcache_repair:random|bcache_repair:ext4)
		echo "3|the superblock is damaged; rebuilding it is not supported: nothing usable|" ;;
	bcache_repair:zero) echo "3|blank: there is nothing to repair|" ;;
	esac
}

version=$(awk '/define DMB_VERSION_(MAJOR|MINOR|PATCH)/ { v = v (v == "" ? "" : ".") $3 } END { print v }' \
	"$top/dm-bcache/core/util/version.h")
for tool in bcache_check bcache_dump bcache_probe bcache_format bcache_export bcache_writeback \
	bcache_repair; do
	for i in "${inputs[@]}"; do
		IFS='|' read -r rc re writes <<<"$(want "$tool" "$i")"
		case $i in
		none) set -- ;;
		help) set -- --help ;;
		version) set -- --version ;;
		badopt) set -- --bogus "$tmp/zero.img" ;;
		missing) IFS='|' read -ra a <<<"$(args_for "$tmp/nothing.img")"; set -- "${a[@]}" ;;
		dir) IFS='|' read -ra a <<<"$(args_for "$tmp/dir")"; set -- "${a[@]}" ;;
		*) IFS='|' read -ra a <<<"$(args_for "$tmp/$i.img")"; set -- "${a[@]}" ;;
		esac
		rm -f "$tmp/out.img"
		run "$tool/$i" "$rc" "$re" "$writes" -- "$tool" "$@"
	done
done

# Short options are the long ones.
for tool in bcache_check bcache_dump bcache_probe bcache_format bcache_export bcache_writeback \
	bcache_repair; do
	run "$tool/-h" 0 "^usage: $tool" "" -- "$tool" -h
	run "$tool/-V" 0 "^$tool \(dm-bcache\) $version\$" "" -- "$tool" -V
done

# --quiet prints nothing, whether the tool succeeds or refuses.
quiet() {	# quiet NAME WANT_RC TOOL ARGS...
	local name=$1 want_rc=$2 out rc
	shift 2
	out=$("$bin/$1" "${@:2}" 2>&1)
	rc=$?
	if [ "$rc" = "$want_rc" ] && [ -z "$out" ]; then
		pass "$name"
	else
		failc "$name" "rc=$rc want $want_rc, printed: $(echo "$out" | head -n 2 | tr '\n' ' ')"
	fi
}
quiet quiet/check-clean 0 bcache_check -q "$tmp/cache.img"
quiet quiet/check-damage 1 bcache_check -q "$tmp/random.img"
quiet quiet/check-missing 2 bcache_check -q "$tmp/nothing.img"
quiet quiet/dump 0 bcache_dump -q "$tmp/cache.img"
quiet quiet/dump-json 0 bcache_dump -q --json "$tmp/cache.img"
quiet quiet/probe 0 bcache_probe -q "$tmp/backing.img"
quiet quiet/probe-note 0 bcache_probe -q "$tmp/ext4.img"
quiet quiet/probe-refused 1 bcache_probe -q --layout backing "$tmp/zero.img"
quiet quiet/format-refused 1 bcache_format -q -C "$tmp/ext4.img"
cp "$tmp/zero.img" "$tmp/fmt.img"
quiet quiet/format 0 bcache_format -q -b 64k -C "$tmp/fmt.img"
quiet quiet/export 0 bcache_export -q "$tmp/cache.img" "$tmp/backing.img" "$tmp/out.img"
quiet quiet/writeback 0 bcache_writeback -q "$tmp/cache.img" "$tmp/backing.img"
quiet quiet/repair 0 bcache_repair -q -i "$tmp/cache.img" -o "$tmp/out.img"
quiet quiet/repair-refused 3 bcache_repair -q -i "$tmp/random.img" -o "$tmp/out.img"

# --- numbers: unit and range in the refusal -----------------------------------------
run num/export-sectors-text 2 "--sectors: 'abc' is not a number of sectors from 1 to" "" -- \
	bcache_export --sectors abc "$tmp/cache.img" "$tmp/backing.img" "$tmp/out.img"
run num/export-sectors-zero 2 "--sectors: '0' is not a number of sectors" "" -- \
	bcache_export --sectors 0 "$tmp/cache.img" "$tmp/backing.img" "$tmp/out.img"
run num/export-sectors-big 2 "--sectors 999999999: BACKING's data area holds only 131056" "" -- \
	bcache_export --sectors 999999999 "$tmp/cache.img" "$tmp/backing.img" "$tmp/out.img"
run num/writeback-retries 2 "--retries: '101' is not a number of tries from 0 to 100" "" -- \
	bcache_writeback --retries 101 "$tmp/cache.img" "$tmp/backing.img"
run num/writeback-stop-after 2 "--stop-after: '0' is not a number of sectors from 1 to" "" -- \
	bcache_writeback --stop-after 0 "$tmp/cache.img" "$tmp/backing.img"
run num/writeback-layout 2 "--origin-layout: 'lvm' is not one of auto, raw, backing" "" -- \
	bcache_writeback --origin-layout lvm "$tmp/cache.img" "$tmp/backing.img"
run num/format-bucket-small 2 "--bucket: '2k' is not a size in bytes that is a power of two from 4k to 16M" "" -- \
	bcache_format -b 2k -C "$tmp/zero.img"
run num/format-bucket-big 2 "--bucket: '32M' is not a size .* from 4k to 16M" "" -- \
	bcache_format -b 32M -C "$tmp/zero.img"
run num/format-bucket-suffix 2 "--bucket: '64q' is not a size" "" -- bcache_format -b 64q -C "$tmp/zero.img"
run num/format-block-big 2 "--block: '8k' is not a size .* from 512 to 4k" "" -- bcache_format -w 8k -C "$tmp/zero.img"
run num/format-offset-small 2 "--data-offset: '8' is not a number of sectors from 16 to" "" -- \
	bcache_format -o 8 -B "$tmp/zero.img"
run num/format-offset-sign 2 "--data-offset: '-16' is not a number of sectors" "" -- \
	bcache_format -o -16 -B "$tmp/zero.img"
run num/format-offset-overflow 2 "--data-offset: '99999999999999999999' is not a number" "" -- \
	bcache_format -o 99999999999999999999 -B "$tmp/zero.img"

# --- format: signatures, one device named twice, nothing written on refusal ---------
run format/ext4-force 0 "wiped an ext4 file system" writes -- bcache_format -f -b 64k -C "$tmp/ext4.img"
if blkid -p -o value -s TYPE "$tmp/ext4.img" | grep -qx bcache; then
	pass format/ext4-force-blkid
else
	failc format/ext4-force-blkid "blkid: $(blkid -p "$tmp/ext4.img")"
fi
run format/bcache-needs-wipe 1 "holds a bcache superblock; use --wipe-bcache" "" -- bcache_format -b 64k -C "$tmp/ext4.img"
# Nothing is written unless every device named may be: the cache here
# could be (--wipe-bcache), the backing device could not.
truncate -s 64M "$tmp/e2.img"
mkfs.ext4 -q -F "$tmp/e2.img"
run format/all-or-nothing 1 "e2.img: holds an ext4 file system" "" -- \
	bcache_format --wipe-bcache -b 64k -C "$tmp/ext4.img" -B "$tmp/e2.img"
run format/named-twice 2 "named twice" "" -- bcache_format -C "$tmp/zero.img" -B "$tmp/zero.img"
ln -s "$tmp/zero.img" "$tmp/zero-link.img"
run format/same-device 2 "are the same device" "" -- bcache_format -C "$tmp/zero.img" -B "$tmp/zero-link.img"
# A partition table and swap are signatures too (an MBR with one Linux
# partition, written here as fdisk would).
truncate -s 64M "$tmp/pt.img"
python3 - "$tmp/pt.img" <<'EOP'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 129024)
    f.seek(446); f.write(entry)
    f.seek(510); f.write(b"\x55\xaa")
EOP
run format/partition-table 1 "holds a dos partition table; use --force" "" -- bcache_format -b 64k -C "$tmp/pt.img"
truncate -s 64M "$tmp/swap.img"
mkswap -q "$tmp/swap.img" >/dev/null 2>&1
run format/swap 1 "holds a swap signature; use --force" "" -- bcache_format -B "$tmp/swap.img"
cp "$tmp/cache.img" "$tmp/old.img"
run format/backing-over-cache 1 "holds a bcache superblock" "" -- bcache_format -B "$tmp/old.img"

# --- export: the output is never an input; an existing file is truncated -------------
run export/out-is-cache 1 "is CACHE itself" "" -- bcache_export "$tmp/cache.img" "$tmp/backing.img" "$tmp/cache.img"
run export/out-is-backing 1 "is BACKING itself" "" -- bcache_export "$tmp/cache.img" "$tmp/backing.img" "$tmp/backing.img"
ln -s "$tmp/backing.img" "$tmp/backing-link.img"
run export/out-is-backing-link 1 "is BACKING itself" "" -- \
	bcache_export "$tmp/cache.img" "$tmp/backing.img" "$tmp/backing-link.img"
run export/cache-is-backing 2 "CACHE and BACKING are the same device" "" -- \
	bcache_export "$tmp/cache.img" "$tmp/cache.img" "$tmp/out.img"
truncate -s 200M "$tmp/out.img"
run export/truncates 0 "16384 sectors of slot" writes -- \
	bcache_export --sectors 16384 "$tmp/cache.img" "$tmp/backing.img" "$tmp/out.img"
size=$(stat -c %s "$tmp/out.img")
if [ "$size" = $((16384 * 512)) ]; then pass export/truncated-size; else failc export/truncated-size "output is $size bytes"; fi
# The seeded 4 MiB come from the cache, the rest from the backing device.
if cmp -s -n $((4 << 20)) "$tmp/out.img" "$tmp/seed.data" &&
	cmp -s -i $((4 << 20)):$((16 * 512 + (4 << 20))) -n $((4 << 20)) "$tmp/out.img" "$tmp/backing.img"; then
	pass export/data
else
	failc export/data "the export is not the seeded data followed by the backing device's"
fi
# A refusal after OUTPUT is named leaves an existing OUTPUT alone: a
# fresh pair whose backing device has no slot in the cache.
truncate -s 64M "$tmp/c3.img" "$tmp/b3.img"
"$bin/bcache_format" -q -b 64k -C "$tmp/c3.img" -B "$tmp/b3.img"
head -c 1M /dev/urandom >"$tmp/keep.img"
run export/refused-keeps-output 1 "BACKING has no slot in the cache's UUID table" "" -- \
	bcache_export "$tmp/c3.img" "$tmp/b3.img" "$tmp/keep.img"
run export/operands 2 "missing operands: CACHE BACKING OUTPUT" "" -- bcache_export "$tmp/cache.img" "$tmp/backing.img"

# --- writeback: a seeded clean pair, operands as options, the wrong origin --------------
run writeback/clean 0 ": 0 dirty sectors in 0 pieces \(slot 0, backing origin\)" "" -- \
	bcache_writeback "$tmp/cache.img" "$tmp/backing.img"
run writeback/options 0 ": 0 dirty sectors" "" -- \
	bcache_writeback --cache-device "$tmp/cache.img" --origin-device "$tmp/backing.img"
run writeback/operands 2 "missing operands: CACHE ORIGIN" "" -- bcache_writeback "$tmp/cache.img"
run writeback/same 2 "CACHE and ORIGIN are the same device" "" -- \
	bcache_writeback "$tmp/cache.img" "$tmp/cache.img"
run writeback/other-set 1 "does not record this cache set" "" -- \
	bcache_writeback "$tmp/cache.img" "$tmp/b3.img"
run writeback/raw-no-slot 0 "the cache holds nothing for it" "" -- \
	bcache_writeback --origin-layout raw "$tmp/cache.img" "$tmp/zero.img"

# --- JSON for any label bytes -------------------------------------------------------
cp "$tmp/zero.img" "$tmp/label.img"
label=$'q"b\\s\x01\xff\xe9t'
"$bin/bcache_format" -q -b 64k -l "$label" -C "$tmp/label.img"
"$bin/bcache_dump" --json "$tmp/label.img" >"$tmp/label.json" 2>"$tmp/label.err"
if python3 - "$tmp/label.json" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1], encoding="ascii"))
got = d["superblock"]["label"].encode("latin-1")
want = b'q"b\\s\x01\xff\xe9t'
sys.exit(0 if got == want else 1)
EOP
then
	pass json/label-bytes
else
	failc json/label-bytes "$(head -c 300 "$tmp/label.json")"
fi
run json/label-text 0 'label "q\\x22b\\x5cs\\x01\\xff\\xe9t"' "" -- bcache_dump "$tmp/label.img"

# --- bcache_tab: its file's errors named with the line; the unit verifies -------
run tab/none 2 'missing command' "" -- bcache_tab
run tab/help 0 '^usage: bcache_tab' "" -- bcache_tab --help
run tab/version 0 "^bcache_tab \(dm-bcache\) $version\$" "" -- bcache_tab -V
run tab/badopt 2 "unrecognized option '--bogus'" "" -- bcache_tab --bogus list
run tab/bad-command 2 "unknown command 'go'" "" -- bcache_tab -c "$tmp/zero.img" go
run tab/missing 2 "nothing.tab: No such file or directory" "" -- bcache_tab -c "$tmp/nothing.tab" list
run tab/dir 2 "dir: is a directory, not a file" "" -- bcache_tab -c "$tmp/dir" list
printf '# nothing\n\n' >"$tmp/empty.tab"
run tab/empty 0 '^$' "" -- bcache_tab -c "$tmp/empty.tab" start
printf 'a /dev/x\n' >"$tmp/short.tab"
run tab/short-line 2 "short.tab: line 1: want NAME CACHE ORIGIN" "" -- bcache_tab -c "$tmp/short.tab" list
printf '# c\nb /dev/x /dev/y writeback,bogus\n' >"$tmp/opt.tab"
run tab/bad-option 2 "line 2: option 'bogus' is not a mode" "" -- bcache_tab -c "$tmp/opt.tab" list
printf 'd /dev/x /dev/y\nd /dev/z /dev/w\n' >"$tmp/dup.tab"
run tab/duplicate 2 "line 2: name d also on line 1" "" -- bcache_tab -c "$tmp/dup.tab" list
printf 'e %s %s writeback,sequential_cutoff=0\n' "$tmp/cache.img" "$tmp/backing.img" >"$tmp/files.tab"
run tab/absent 1 "e: cache .*cache.img not present" "" -- bcache_tab -c "$tmp/files.tab" start
run tab/unknown-name 1 "no entry f" "" -- bcache_tab -c "$tmp/files.tab" start f
run tab/udev-usage 2 "udev: name exactly one device" "" -- bcache_tab -c "$tmp/files.tab" udev
# The unit as installed, with the tool's path pointed at this build.
sed "s|/usr/sbin/bcache_tab|$bin/bcache_tab|" "$top/userspace/boot/dm-bcache.service" >"$tmp/dm-bcache.service"
out=$(systemd-analyze verify --man=no "$tmp/dm-bcache.service" 2>&1) && rc=0 || rc=$?
if [ "$rc" = 0 ] && [ -z "$out" ]; then pass boot/unit-verify; else failc boot/unit-verify "rc=$rc: $out"; fi
