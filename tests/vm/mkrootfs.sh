#!/usr/bin/env bash
# Build the root file system the systemd boot test (tests/vm/systemd/)
# boots: an ext4 image holding systemd, udev, dmsetup, util-linux and
# e2fsprogs as this host's Debian packages installed them, our tools, the
# udev rules and dm-bcache.service installed and enabled as a package
# would, and the unit that runs the check.  No kernel modules: the
# initramfs loads them before it hands over (tests/vm/init, dmb.root=).
#
#   mkrootfs.sh OUT.img
#
# Kernel-independent; the image is rebuilt only when its inputs change
# (the package versions, our tools, the boot files, this script).
set -euo pipefail
out=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
pkgs=(libc6 bash coreutils util-linux mount dmsetup libdevmapper1.02.1
	systemd systemd-sysv libsystemd-shared libsystemd0 udev libudev1 kmod
	e2fsprogs grep sed mawk findutils)
inputs=(/usr/lib/udev/rules.d/55-dm.rules "$top"/build/user/bcache_*
	"$top"/userspace/boot/* "$top"/tests/vm/systemd/* "$top"/tests/vm/kernel-bad.sh "$0")
key=$({ dpkg-query -W "${pkgs[@]}"; cat "${inputs[@]}"; } | sha256sum | cut -c1-16)
if [ -e "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
	echo "rootfs: reusing $out"
	exit 0
fi
stage=$(mktemp -d "${TMPDIR:-/tmp}/dmb-rootfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{dev,proc,sys,tmp,run,etc,mnt,root,var/log}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$stage/$d"; done
# A package's files at their paths (the merged-/usr symlinks above carry
# /lib and /bin paths to /usr), then every library an ELF file among them
# links.
copy_path() {
	local p=$1 t
	t=$(readlink -f "$(dirname "$p")")/$(basename "$p")
	[ -e "$stage$t" ] || [ -L "$stage$t" ] && return 0
	mkdir -p "$stage$(dirname "$t")"
	cp -a "$t" "$stage$t"
	if [ -L "$t" ]; then copy_path "$(readlink -f "$t")"; fi
}
for p in "${pkgs[@]}"; do
	dpkg -L "$p" | while read -r f; do
		[ -f "$f" ] || [ -L "$f" ] || continue
		case $f in /usr/share/doc/* | /usr/share/man/* | /usr/share/locale/* | /usr/share/zsh/* | /usr/share/bash-completion/*) continue ;; esac
		copy_path "$f"
	done
done
for t in "$top"/build/user/bcache_*; do
	install -D -m 755 "$t" "$stage/usr/sbin/$(basename "$t")"
done
find "$stage/usr" -type f -perm -u+x -o -type f -name '*.so*' | while read -r f; do
	ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
done | sort -u | while read -r lib; do copy_path "$lib"; done
# Installed as a package installs them, enabled as an admin would.
install -m 644 "$top/userspace/boot/69-dm-bcache.rules" "$stage/usr/lib/udev/rules.d/"
install -m 644 "$top/userspace/boot/dm-bcache.service" "$stage/usr/lib/systemd/system/"
install -m 644 "$top/tests/vm/systemd/dmb-boot-check.service" "$stage/usr/lib/systemd/system/"
install -m 755 "$top/tests/vm/systemd/boot-check.sh" "$stage/usr/sbin/dmb-boot-check"
install -m 644 "$top/tests/vm/kernel-bad.sh" "$stage/usr/share/dmb-kernel-bad.sh"
mkdir -p "$stage/etc/systemd/system/sysinit.target.wants" "$stage/etc/systemd/system/multi-user.target.wants"
ln -s /usr/lib/systemd/system/dm-bcache.service "$stage/etc/systemd/system/sysinit.target.wants/"
ln -s /usr/lib/systemd/system/dmb-boot-check.service "$stage/etc/systemd/system/multi-user.target.wants/"
ln -sf /usr/lib/systemd/system/multi-user.target "$stage/etc/systemd/system/default.target"
# What a Debian system has in /etc and systemd needs to start.
cp /etc/passwd /etc/group "$stage/etc/"
: >"$stage/etc/machine-id"
echo dmb-test >"$stage/etc/hostname"
echo "/dev/vde / ext4 defaults 0 1" >"$stage/etc/fstab"
rm -f "$out.key"
mkdir -p "$(dirname "$out")"
mke2fs -q -F -t ext4 -L dmb-root -d "$stage" "$out.tmp" 768M
mv "$out.tmp" "$out"
echo "$key" >"$out.key"
echo "rootfs: built $out ($(du -sh "$stage" | cut -f1) of files)"
