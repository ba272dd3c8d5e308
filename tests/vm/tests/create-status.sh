# Create and remove repeatedly; the INFO status has the documented layout
# and values; iterate_devices and io_hints show in the queue limits.
. /tests/lib.sh
load_module
wipe_head $ORIGIN_DEV
wipe_head $CACHE_DEV	# all zero: the first create formats it
len=$((256 * 2048))

for i in 1 2 3; do
	dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
	[ -b /dev/mapper/dmb ] || fail "no /dev/mapper/dmb"
	expect_eq "size" "$(sectors /dev/mapper/dmb)" "$len"
	dmsetup remove dmb
done

dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
st=$(dmsetup status dmb)
log "status: $st"
set -- $st
# 23 fixed words, then the named counters: their word count, then pairs.
expect_eq "field count" "$#" $((24 + ${24}))
expect_eq "counter names" "$(echo "$st" | cut -d' ' -f25- | tr ' ' '\n' | sed -n 'p;n' | tr '\n' ' ')" \
	"bypass_sequential bypass_congested bypass_mode bypass_busy bypass_nospace bypass_failed gc_runs reclaims commits cache_errors deferred gc_active written_back writeback_errors writeback_full fills_pending lock_waits "
expect_eq "no gc pass under way when idle" "$(counter gc_active)" 0
expect_eq "target" "$3" bcache
expect_eq "block size" "$4" 1
# 256 MiB: 512 KiB buckets halved to 256 KiB (512 sectors) for 1024 buckets.
# Used: bucket 0 (superblock), 8 journal, 1 prio, 1 UUID table, 1 root.
expect_eq "bucket size" "$5" 512
expect_eq "buckets" "$6" 12/1024
expect_eq "dirty" "$7" 0
expect_eq "cache mode" "${15}" writethrough
expect_eq "state" "${16}" rw
expect_eq "needs_check" "${17}" -
expect_eq "origin layout" "${18}" raw
expect_eq "data offset" "${19}" 0
expect_eq "features" "${20}" 0
expect_eq "core args" "${21} ${22} ${23}" "2 origin_layout auto"

# Counters count I/O: in writethrough one 4 KiB direct read of uncached
# data misses and one write is written through; in passthrough both
# bypass the cache.
dmsetup message dmb 0 clear_stats
dd if=/dev/mapper/dmb of=/dev/null bs=4k count=1 skip=100 iflag=direct status=none
dd if=/dev/zero of=/dev/mapper/dmb bs=4k count=1 oflag=direct status=none
expect_eq "read misses" "$(status_field dmb 6)" 1
expect_eq "write misses (written through)" "$(status_field dmb 8)" 1
expect_eq "read hits" "$(status_field dmb 5)" 0
dmsetup message dmb 0 cache_mode passthrough
dmsetup message dmb 0 clear_stats
dd if=/dev/mapper/dmb of=/dev/null bs=4k count=1 iflag=direct status=none
dd if=/dev/zero of=/dev/mapper/dmb bs=4k count=1 oflag=direct status=none
expect_eq "bypassed reads" "$(status_field dmb 9)" 1
expect_eq "bypassed writes" "$(status_field dmb 10)" 1
expect_eq "read hits in passthrough" "$(status_field dmb 5)" 0
dmsetup message dmb 0 cache_mode writethrough

dmsetup remove dmb

# STATUSTYPE_IMA: dm measures each table load (the VM boots with
# ima_policy=critical_data); the measured buffer holds our IMA string.
# IMA records a buffer only once per boot, and an earlier test may have
# loaded this very table under the same name, so the device gets a name
# no other load used and the check reads that name's entry.
ima_name=ima-$(tr -dc 0-9a-f </proc/sys/kernel/random/uuid | cut -c1-12)
dmsetup create "$ima_name" --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
m=/sys/kernel/security/ima/ascii_runtime_measurements
ima=$(grep dm_table_load $m | awk '{ print $NF }' | while read -r hex; do
	echo "$hex" | xxd -r -p | tr -d '\0'; echo; done | grep -F ";name=$ima_name,")
log "ima: $ima"
expect_eq "IMA entries for $ima_name" "$(echo "$ima" | grep -c .)" 1
echo "$ima" | grep -q "target_name=bcache,target_version=1\.4\.0,cache_dev=$CACHE_MM,origin_dev=$ORIGIN_MM,cache_mode=writethrough,state=rw,origin_layout=raw,data_offset=0,block_size=1;" ||
	fail "IMA measurement lacks the bcache status"
dmsetup remove "$ima_name"

# block_size 8 shows up as a 4 KiB logical block size.
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 2 block_size 8"
expect_eq "logical block size" "$(blockdev --getss /dev/mapper/dmb)" 4096
expect_eq "status block size" "$(status_field dmb 1)" 8
dd if=/dev/zero of=/dev/mapper/dmb bs=512 count=1 oflag=direct status=none 2>/dev/null &&
	fail "a 512-byte direct write was accepted on a 4 KiB device"
dmsetup remove dmb

# A second target in the same table at a non-zero start maps correctly.
half=$((len / 2))
dmsetup create dmb --table "0 $half bcache $CACHE_DEV $ORIGIN_DEV 0
$half $half linear $ORIGIN_DEV $half"
expect_eq "two-target size" "$(sectors /dev/mapper/dmb)" "$len"
dmsetup remove dmb
exit 0
