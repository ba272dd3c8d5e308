#!/usr/bin/env bash
# Build the test VM's initramfs for one kernel: busybox, bash, kmod and the
# storage tools the tests drive (dmsetup, lvm, fio, make-bcache, e2fsprogs),
# the kernel modules they load, dm-bcache.ko, our userspace tools, and the
# test scripts.  Output: an uncompressed cpio (the kernel takes it as is).
#
#   mkinitramfs.sh KVER MODULE.ko OUT.cpio [TESTMODS]
#
# TESTMODS is a folder holding the test-only modules built from
# tests/vm/testmods: the warning target the kernel-log checks load, and
# the error injector.
set -euo pipefail

kver=$1 module=$2 out=$3 testmods=${4:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(mktemp -d "${TMPDIR:-/tmp}/dmb-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# Debian uses merged /usr: keep /bin, /sbin, /lib, /lib64 as symlinks.
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{dev,proc,sys,tmp,run,etc,mnt,root}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$stage/$d"; done

copy_file() {	# copy a host file to the same path in the stage
	local f
	f=$(readlink -f "$1")
	mkdir -p "$stage$(dirname "$1")"
	cp -f "$f" "$stage$1"
}

copy_binary() {
	local bin=$1 lib
	copy_file "$bin"
	for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' || true); do
		[ -e "$stage$lib" ] || copy_file "$lib"
	done
}

bins=(
	/usr/bin/bash /usr/bin/kmod /usr/sbin/dmsetup /usr/sbin/lvm /usr/bin/fio
	/usr/sbin/make-bcache /usr/sbin/bcache-super-show /usr/sbin/mke2fs
	/usr/sbin/e2fsck /usr/sbin/blkdiscard /usr/sbin/blockdev /usr/bin/cmp
	/usr/bin/timeout /usr/bin/sha256sum /usr/bin/dd /usr/bin/stat
	/usr/bin/udevadm /usr/bin/ln /usr/bin/find /usr/bin/ls /usr/bin/pgrep
	/usr/bin/split
)
# lvm2's writecache tests (make check-lvm2 sets VM_LVM2_EXTRAS=1) need
# these and the modules below; other boots go without them.
lvm2_extras=${VM_LVM2_EXTRAS:-0}
if [ "$lvm2_extras" = 1 ]; then
	bins+=(/usr/sbin/mkfs.xfs /usr/sbin/blkid /usr/sbin/losetup)
fi
for b in "${bins[@]}"; do copy_binary "$b"; done
copy_file /lib64/ld-linux-x86-64.so.2
for t in modprobe insmod rmmod lsmod depmod modinfo; do
	ln -sf ../bin/kmod "$stage/usr/sbin/$t"
done
for t in pvcreate vgcreate lvcreate lvconvert lvremove vgremove pvremove \
	lvs vgs pvs vgchange lvchange; do
	ln -sf lvm "$stage/usr/sbin/$t"
done
ln -sf mke2fs "$stage/usr/sbin/mkfs.ext4"
ln -sf e2fsck "$stage/usr/sbin/fsck.ext4"

# busybox for everything else, without shadowing the real tools above.
cp /usr/bin/busybox "$stage/usr/bin/busybox"
for a in $(/usr/bin/busybox --list); do
	[ -e "$stage/usr/bin/$a" ] || [ -e "$stage/usr/sbin/$a" ] ||
		ln -s busybox "$stage/usr/bin/$a"
done

# Kernel modules and their dependencies, then depmod on the stage.
mods=(virtio_pci virtio_blk dm-mod dm-delay dm-flakey dm-log-writes dm-snapshot dm-cache
	dm-cache-smq dm-writecache brd loop null_blk bcache ext4 crc32c_generic)
# xfs, scsi_debug (with sd_mod for its disks), dm-raid and dm-mirror.
if [ "$lvm2_extras" = 1 ]; then
	mods+=(xfs scsi_debug sd_mod dm-raid raid1 dm-mirror)
fi
mdir=/lib/modules/$kver
mkdir -p "$stage$mdir/extra"
for m in "${mods[@]}"; do
	modprobe -S "$kver" --show-depends "$m" |
		awk '$1 == "insmod" { print $2 }' | while read -r ko; do
			[ -e "$stage$ko" ] || copy_file "$ko"
		done
done
cp "$mdir"/modules.order "$mdir"/modules.builtin* "$stage$mdir/"
cp "$module" "$stage$mdir/extra/dm-bcache.ko"
[ -z "$testmods" ] || cp "$testmods"/*.ko "$stage$mdir/extra/"
depmod -b "$stage" "$kver"

# lvm2 with the bcache segment type (make lvm2), beside the stock tools
# the other tests use: /opt/lvm2-dmbcache/sbin and its lib, which the lvm
# tests put first in PATH and LD_LIBRARY_PATH.
lvm2_debs=$top/build/lvm2
if [ -e "$lvm2_debs/version" ]; then
	ext=$stage/tmp/lvm2-debs
	opt=$stage/opt/lvm2-dmbcache
	mkdir -p "$ext" "$opt/sbin" "$opt/lib"
	for p in lvm2 dmsetup libdevmapper1.02.1 libdevmapper-event1.02.1; do
		dpkg-deb -x "$(ls "$lvm2_debs/${p}_"*.deb)" "$ext"
	done
	cp -a "$ext"/sbin/lvm "$ext"/sbin/dmsetup "$opt/sbin/"
	cp -a "$ext"/lib/x86_64-linux-gnu/libdevmapper*.so* "$opt/lib/"
	for t in lvm dmsetup; do
		for lib in $(LD_LIBRARY_PATH=$opt/lib ldd "$opt/sbin/$t" | grep -o '/[^ ]*' || true); do
			case $lib in "$opt"/*) continue ;; esac
			[ -e "$stage$lib" ] || copy_file "$lib"
		done
	done
	for t in pvcreate vgcreate lvcreate lvconvert lvremove vgremove pvremove \
		lvs vgs pvs vgchange lvchange lvextend lvreduce lvresize lvdisplay; do
		ln -sf lvm "$opt/sbin/$t"
	done
	cp "$lvm2_debs/version" "$opt/version"
	rm -rf "$ext"
fi

# lvm2's own test harness, "installed" the way lvm2's make install lays it
# out (a folder whose path names lvm2-testsuite; lib/ holds the harness
# scripts without .sh, lib/not, and a wrapper per lvm command that runs
# the lvm found in PATH past the folder), with lvm2's shell tests, of
# which the tests/vm/tests/lvm-testsuite*.sh name the ones they run.
lvm2_ts=$lvm2_debs/testsuite
if [ -d "$lvm2_ts" ]; then
	ts=$stage/opt/lvm2-testsuite
	mkdir -p "$ts/lib" "$ts/shell"
	for f in aux check get inittest utils lvm-wrapper flavour-ndev-vanilla; do
		install -m 755 "$lvm2_ts/lib/$f.sh" "$ts/lib/$f"
	done
	cp "$lvm2_ts/lib/not" "$ts/lib/"
	for f in should invalid fail; do ln -s not "$ts/lib/$f"; done
	for c in lvm $(sed -n 's/^xx(\([a-z]*\),.*/\1/p' "$lvm2_ts/commands.h"); do
		ln -sf lvm-wrapper "$ts/lib/$c"
	done
	cat >"$ts/lib/paths" <<'EOP'
DM_UDEV_SYNCHRONISATION=0
LVM_TEST_THIN_CHECK_CMD=${LVM_TEST_THIN_CHECK_CMD-}
LVM_TEST_THIN_DUMP_CMD=${LVM_TEST_THIN_DUMP_CMD-}
LVM_TEST_THIN_REPAIR_CMD=${LVM_TEST_THIN_REPAIR_CMD-}
LVM_TEST_THIN_RESTORE_CMD=${LVM_TEST_THIN_RESTORE_CMD-}
LVM_TEST_CACHE_CHECK_CMD=${LVM_TEST_CACHE_CHECK_CMD-}
LVM_TEST_CACHE_DUMP_CMD=${LVM_TEST_CACHE_DUMP_CMD-}
LVM_TEST_CACHE_REPAIR_CMD=${LVM_TEST_CACHE_REPAIR_CMD-}
LVM_TEST_CACHE_RESTORE_CMD=${LVM_TEST_CACHE_RESTORE_CMD-}
export DM_UDEV_SYNCHRONISATION LVM_TEST_THIN_CHECK_CMD LVM_TEST_THIN_DUMP_CMD \
	LVM_TEST_THIN_REPAIR_CMD LVM_TEST_THIN_RESTORE_CMD LVM_TEST_CACHE_CHECK_CMD \
	LVM_TEST_CACHE_DUMP_CMD LVM_TEST_CACHE_REPAIR_CMD LVM_TEST_CACHE_RESTORE_CMD
installed_testsuite=1
export PATH=/opt/lvm2-testsuite/lib:/opt/lvm2-dmbcache/sbin:$PATH
export LD_LIBRARY_PATH=/opt/lvm2-dmbcache/lib
EOP
	cp "$lvm2_ts"/shell/*.sh "$ts/shell/"
fi

# Our tools and the tests.
mkdir -p "$stage/usr/local/bin" "$stage/tests"
for t in "$top"/build/user/bcache_*; do
	copy_binary "$t"
	mv "$stage$t" "$stage/usr/local/bin/"
done
# Installed where a package puts them: the udev rules (which udevadm test
# evaluates; no udevd runs) and bcache_tab at the path the rules name.
mkdir -p "$stage/usr/lib/udev/rules.d"
cp "$top/userspace/boot/69-dm-bcache.rules" "$stage/usr/lib/udev/rules.d/"
ln -sf ../local/bin/bcache_tab "$stage/usr/sbin/bcache_tab"
# Where lvm2's global/bcache_check_executable looks by default.
ln -sf ../local/bin/bcache_check "$stage/usr/sbin/bcache_check"
cp -r "$top/tests/vm/." "$stage/tests/"
cp "$top/tests/vm/init" "$stage/init"
# The benchmark's guest side (bench/run.sh boots it with dmb.run=).
cp -r "$top/bench/guest" "$stage/bench"
chmod +x "$stage/init"
cat >"$stage/etc/lvm-test.conf" <<'EOC'
activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }
global { use_lvmpolld = 0 event_activation = 0 }
devices { obtain_device_list_from_udev = 0 }
EOC
echo "root:x:0:0:root:/root:/bin/bash" >"$stage/etc/passwd"

(cd "$stage" && find . | cpio -o -H newc --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
