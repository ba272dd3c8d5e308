# The constructor and the cache device: an all-zero cache is formatted
# (and bcache_check and bcache-super-show accept the result); a
# make-bcache superblock gets its set created; a bcache_format cache is
# opened as is; every class of damage from tests/vm/damage-classes.txt is
# refused with its error, writes nothing, and warns nothing.
. /tests/lib.sh
load_module
wipe_head $ORIGIN_DEV
len=$((64 * 2048))
table="0 $len bcache $CACHE_DEV $ORIGIN_DEV"

log "all-zero cache: formatted by the first create"
wipe_head $CACHE_DEV
dmsetup create dmb --table "$table 0"
expect_eq "bucket size" "$(status_field dmb 2)" 512
used=$(status_field dmb 3)
[ "${used#*/}" = 1024 ] && [ "${used%/*}" -ge 12 ] && [ "${used%/*}" -lt 64 ] ||
	fail "buckets: $used, want 12..63 of 1024 (metadata only)"
dmsetup remove dmb
bcache_check $CACHE_DEV >/tmp/check.out || { cat /tmp/check.out; fail "bcache_check on a formatted cache"; }
grep -q 'btree: root level 0, 1 nodes' /tmp/check.out || fail "unexpected check summary: $(cat /tmp/check.out)"
bcache-super-show $CACHE_DEV >/tmp/show.out || fail "bcache-super-show refused our superblock"
grep -Eq '^sb.version[[:space:]]+3 \[cache device\]' /tmp/show.out || fail "version: $(cat /tmp/show.out)"
grep -Eq '^dev.sectors_per_bucket[[:space:]]+512$' /tmp/show.out || fail "bucket: $(cat /tmp/show.out)"
before=$(sum_sectors $CACHE_DEV 0 16)
dmsetup create dmb --table "$table 0"
used=$(status_field dmb 3)
[ "${used%/*}" -lt 64 ] || fail "buckets on reopen: $used"
dmsetup remove dmb
expect_eq "reopen keeps the superblock" "$(sum_sectors $CACHE_DEV 0 16)" "$before"
bcache_check -q $CACHE_DEV || fail "bcache_check after reopening"

log "make-bcache cache: the set is created on first use"
wipe_head $CACHE_DEV
make-bcache -C -b 128k $CACHE_DEV >/dev/null
dmsetup create dmb --table "$table 0"
expect_eq "make-bcache bucket size" "$(status_field dmb 2)" 256
expect_eq "make-bcache buckets" "$(status_field dmb 3)" 20/2048
dmsetup remove dmb
bcache_check -q $CACHE_DEV || fail "bcache_check after creating the set"
bcache-super-show $CACHE_DEV | grep -Eq '^sb.version[[:space:]]+3 ' || fail "version not raised to 3"

log "bcache_format cache, geometry from the table must match"
bcache_format --wipe-bcache -b 64k -C $CACHE_DEV >/dev/null
dmsetup create dmb --table "$table 2 bucket_size 128"
expect_eq "bcache_format bucket size" "$(status_field dmb 2)" 128
dmsetup remove dmb
klog_mark
if dmsetup create dmb --table "$table 2 bucket_size 256" 2>/dev/null; then
	fail "bucket_size mismatch accepted"
fi
last_dm_error | grep -q "bucket_size differs from the cache superblock's" ||
	fail "wrong error: $(last_dm_error)"

# Damage: a fresh format for each class.
fresh_format() { bcache_format --wipe-bcache -b 64k -C $CACHE_DEV >/dev/null; }
damage_all fresh_format
wipe_head $CACHE_DEV
exit 0
