# The tools never write a device in use and do not read one silently: a
# cache and origin held by a live table, a mounted file system, an image
# file behind a loop device held by a table.  Each refusal names the
# holder, and the bytes the tool would have written are unchanged.
# Readers read a device in use with --force (after a warning).
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((256 * 2048))
bcache_format -q -b 64k -C $CACHE_DEV || fail "bcache_format"
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
dmb_name=$(dmsetup info -c --noheadings -o blkdevname dmb | tr -d " ")

head_sum() { dd if="$1" bs=1M count=1 iflag=direct status=none | sha256sum; }

# refused WANT_RC WANT_REGEX TOOL ARGS...
refused() {
	local want_rc=$1 want=$2 out rc
	shift 2
	out=$("$@" 2>&1) && rc=0 || rc=$?
	[ "$rc" = "$want_rc" ] || fail "$*: exit $rc, want $want_rc: $out"
	echo "$out" | grep -E -- "$want" >/dev/null || fail "$*: said '$out', want /$want/"
}

log "a cache and origin held by a live table"
held="is held by dm device dmb \\($dmb_name\\)"
csum=$(head_sum $CACHE_DEV)
osum=$(head_sum $ORIGIN_DEV)
refused 1 "$CACHE_DEV: $held; refusing to write a device in use" bcache_format --force --wipe-bcache -C $CACHE_DEV
refused 1 "$ORIGIN_DEV: $held; refusing to write" bcache_format --force -B $ORIGIN_DEV
refused 2 "$CACHE_DEV: $held; a live cache changes under the reader" bcache_check $CACHE_DEV
refused 2 "$held" bcache_dump $CACHE_DEV
refused 2 "$held" bcache_dump --json $CACHE_DEV
refused 2 "$ORIGIN_DEV: $held" bcache_probe $ORIGIN_DEV
refused 1 "$CACHE_DEV: $held" bcache_export $CACHE_DEV $ORIGIN_DEV /tmp/out.img
[ ! -s /tmp/out.img ] || fail "bcache_export wrote an output"
expect_eq "cache head after the refusals" "$(head_sum $CACHE_DEV)" "$csum"
expect_eq "origin head after the refusals" "$(head_sum $ORIGIN_DEV)" "$osum"
# Suspended, the metadata is on disk: --force reads it, and it is clean.
dmsetup suspend dmb
out=$(bcache_check --force $CACHE_DEV 2>&1) || fail "bcache_check --force: $out"
echo "$out" | grep -E "warning: $CACHE_DEV: $held; reading it anyway" >/dev/null ||
	fail "bcache_check --force gave no warning: $out"
bcache_dump --force --json $CACHE_DEV >/dev/null 2>&1 || fail "bcache_dump --force"
bcache_probe --force $ORIGIN_DEV | grep '^layout: raw' >/dev/null || fail "bcache_probe --force"
dmsetup resume dmb

log "a mounted file system"
modprobe ext4
mkfs.ext4 -q -F /dev/mapper/dmb
mkdir -p /mnt/t
# Read-only without journal replay: the mount itself writes nothing.
dsum=$(head_sum /dev/mapper/dmb)
mount -o ro,noload /dev/mapper/dmb /mnt/t
refused 1 "/dev/mapper/dmb: is mounted on /mnt/t; refusing to write" bcache_format --force -B /dev/mapper/dmb
refused 1 "mounted on /mnt/t" bcache_format --force -b 64k -C /dev/mapper/dmb
refused 2 "/dev/mapper/dmb: is mounted on /mnt/t" bcache_check /dev/mapper/dmb
umount /mnt/t
expect_eq "file system head after the refusals" "$(head_sum /dev/mapper/dmb)" "$dsum"
log "an unmounted file system: refused without --force, named"
refused 1 "holds an ext4 file system; use --force" bcache_format -B /dev/mapper/dmb
expect_eq "file system head after the refusal" "$(head_sum /dev/mapper/dmb)" "$dsum"
dmsetup remove dmb

log "an image behind a loop device"
dd if=/dev/zero of=/tmp/img bs=1M count=64 status=none
modprobe loop
loop=$(losetup -f)
losetup "$loop" /tmp/img || fail "losetup $loop"
[ -b "$loop" ] || fail "no loop device node $loop"
refused 1 "/tmp/img: is read by loop device $loop; detach it" bcache_format -b 64k -C /tmp/img
isum=$(sha256sum </tmp/img)
dmsetup create over --table "0 $((64 * 2048)) linear $loop 0"
refused 2 "/tmp/img: is read by loop device $loop, held by dm device over" bcache_check /tmp/img
refused 1 "read by loop device $loop" bcache_format --force -b 64k -C /tmp/img
dmsetup remove over
losetup -d "$loop"
expect_eq "image after the refusals" "$(sha256sum </tmp/img)" "$isum"
bcache_format -q -b 64k -C /tmp/img || fail "bcache_format of the detached image"
bcache_check -q /tmp/img || fail "bcache_check of the detached image"
rm -f /tmp/img /tmp/out.img
