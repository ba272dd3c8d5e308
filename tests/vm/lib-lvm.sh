# Shared by the tests of lvm2 with the bcache segment type (lvm-*.sh):
# the patched lvm2 first in PATH, and a VG "vg" whose LV "main" (64 MiB
# on $ORIGIN_DEV) takes the cache volume "fast" (128 MiB on $CACHE_DEV).
# Sourced after /tests/lib.sh.
[ -e /opt/lvm2-dmbcache/version ] || fail "the initramfs has no patched lvm2 (make lvm2 builds it)"
export PATH=/opt/lvm2-dmbcache/sbin:$PATH LD_LIBRARY_PATH=/opt/lvm2-dmbcache/lib
log "lvm2 $(cat /opt/lvm2-dmbcache/version)"
lvm segtypes | grep -qw bcache || fail "lvm has no bcache segment type: $(lvm segtypes | tr '\n' ' ')"

# The VG with main and an inactive fast, on wiped disks.
make_vg() {
	wipe_head $CACHE_DEV
	wipe_head $ORIGIN_DEV
	pvcreate -q $ORIGIN_DEV $CACHE_DEV
	vgcreate -q vg $ORIGIN_DEV $CACHE_DEV
	lvcreate -q -y -n main -L 64M vg $ORIGIN_DEV
	lvcreate -q -y -n fast -L 128M -an -Zn vg $CACHE_DEV
}

# put MIB COUNT: DATA_DEV's MiB MIB.. to the same place in the LV.
put() {
	dd if=$DATA_DEV of=/dev/mapper/vg-main bs=1M skip="$1" seek="$1" count="$2" \
		oflag=direct conv=fsync status=none
}

dirty() { status_field vg-main 4; }

# put_dirty MIB COUNT: put, again until the LV shows that much dirty (a
# fresh cache has no bucket ready until its first refill, and bypasses).
put_dirty() {
	local i
	for i in 1 2 3 4 5; do
		put "$1" "$2"
		[ "$(dirty)" -ge $(($2 * 2048)) ] && return 0
		sleep 1
	done
	dmsetup status vg-main
	fail "dirty $(dirty) after writing $2 MiB in write-back mode"
}

# same_lv MIB WHY: the LV's first MIB MiB are DATA_DEV's.
same_lv() { same_direct /dev/mapper/vg-main 0 $DATA_DEV 0 $(($1 * 2048)) || fail "$2"; }

# attach: fast to main in write-back, nothing bypassed, no copying for
# an hour.
attach() {
	lvconvert -y --type bcache --cachevol fast --cachemode writeback \
		--cachesettings 'sequential_cutoff=0 writeback_delay=3600' \
		--cachesettings 'congested_read_threshold_us=0 congested_write_threshold_us=0' vg/main
}

# segtypes: "name:segtype" of every LV, hidden ones included.
segtypes() { lvs --noheadings -a -o lv_name,segtype vg | awk '{ printf "%s:%s ", $1, $2 }'; }
