# The fewest buckets a cache may have is one rule (core/format/geometry.h), the
# mainline driver's: it refuses a cache of 512 buckets or fewer
# (roundup_pow_of_two(nbuckets) >> 10 == 0).  make-bcache caches of 600
# 4 KiB and of 512 8 KiB buckets are fed to the mainline driver, to the target
# and to bcache_check, and all three agree: 600 works (the target caches
# and verifies data on it), 512 is refused.  bcache_format agrees too.
# A blank (all-zero) device: bcache_check calls it blank (exit 0) and the
# target formats it, after which both find a clean cache.
. /tests/lib.sh
load_module
modprobe bcache
wipe_head $CACHE_DEV
wipe_head $ORIGIN_DEV
len=$((64 * 2048))
dmsetup create c600 --table "0 $((600 * 8)) linear $CACHE_DEV 0"
# 512 buckets of 8 KiB: large enough for the constructor's size gate
# (2052 KiB), so the superblock's bucket count is what is refused.
dmsetup create c512 --table "0 $((512 * 16)) linear $CACHE_DEV 8192"

cset_of() { bcache-super-show "$1" | awk '/^cset.uuid/ { print $2 }'; }

log "600 buckets: the mainline driver registers it"
make-bcache -C -b 4k /dev/mapper/c600 >/dev/null
echo 3 >/proc/sys/vm/drop_caches
cset=$(cset_of /dev/mapper/c600)
echo /dev/mapper/c600 >/sys/fs/bcache/register || fail "the driver refused 600 buckets"
wait_for "set $cset" test -e /sys/fs/bcache/$cset
echo 1 >/sys/fs/bcache/$cset/stop
wait_for "the set to stop" test ! -e /sys/fs/bcache/$cset

log "600 buckets: bcache_check and the target accept it"
wipe_head /dev/mapper/c600
make-bcache -C -b 4k /dev/mapper/c600 >/dev/null
echo 3 >/proc/sys/vm/drop_caches
bcache_check /dev/mapper/c600 >/tmp/check.out || { cat /tmp/check.out; fail "bcache_check refused 600 buckets"; }
dmsetup create dmb --table "0 $len bcache /dev/mapper/c600 $ORIGIN_DEV 7 writethrough $NOBYPASS"
write_data /dev/mapper/dmb 0 1
dd if=/dev/mapper/dmb of=/dev/null bs=1M count=1 iflag=direct status=none
same_direct /dev/mapper/dmb 0 $DATA_DEV 0 2048 || fail "data on a 600-bucket cache"
[ "$(status_field dmb 5)" -gt 0 ] || fail "no read hits on a 600-bucket cache"
dmsetup remove dmb
bcache_check -q /dev/mapper/c600 || fail "bcache_check after use"

log "512 buckets: the mainline driver refuses it"
make-bcache -C -b 8k /dev/mapper/c512 >/dev/null
echo 3 >/proc/sys/vm/drop_caches
cset=$(cset_of /dev/mapper/c512)
echo /dev/mapper/c512 >/sys/fs/bcache/register 2>/dev/null || true
sleep 2
[ ! -e /sys/fs/bcache/$cset ] || fail "the mainline driver registered 512 buckets"

log "512 buckets: bcache_check and the target refuse it"
out=$(bcache_check /dev/mapper/c512) && rc=0 || rc=$?
expect_eq "bcache_check exit on 512 buckets" "$rc" 1
echo "$out" | grep 'damage: superblock: superblock (sector 8): nbuckets 512: fewer than 513 buckets' >/dev/null ||
	fail "bcache_check said: $out"
klog_mark
dmsetup create dmb --table "0 $len bcache /dev/mapper/c512 $ORIGIN_DEV 0" 2>/dev/null &&
	fail "the target accepted 512 buckets"
last_dm_error | grep 'Cache superblock has fewer than 513 buckets' >/dev/null ||
	fail "the target said: $(last_dm_error)"

log "bcache_format: 513 buckets is the least it makes"
out=$(bcache_format --wipe-bcache -b 8k -C /dev/mapper/c512 2>&1) && fail "bcache_format made 512 buckets"
echo "$out" | grep 'needs at least 513 buckets' >/dev/null || fail "bcache_format said: $out"
bcache_format -q --wipe-bcache -b 4k -C /dev/mapper/c600 || fail "bcache_format of 600 buckets"
bcache_check -q /dev/mapper/c600 || fail "bcache_check of our 600 buckets"

log "a blank device: blank to the checker, formatted by the target"
dd if=/dev/zero of=/dev/mapper/c600 bs=1M count=4 oflag=direct status=none 2>/dev/null || true
out=$(bcache_check /dev/mapper/c600) || fail "bcache_check on a blank device: $out"
echo "$out" | grep 'blank (sectors 0-15 are zero)' >/dev/null || fail "bcache_check said: $out"
dmsetup create dmb --table "0 $len bcache /dev/mapper/c600 $ORIGIN_DEV 0"
dmsetup remove dmb
out=$(bcache_check /dev/mapper/c600) || fail "bcache_check after the target formatted: $out"
echo "$out" | grep ' 0 damage findings' >/dev/null || fail "bcache_check said: $out"
dmsetup remove c600
dmsetup remove c512
