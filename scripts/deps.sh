#!/usr/bin/env bash
# Install what the tests, the demo and the benchmarks need on top of the
# build's own dependencies (scripts/deps-build.sh, run first), resolving
# the exact kernel versions at install time.  Only make check, make demo,
# make bench and make lint run this; a plain make never does, so a server
# that only builds gets no kernel images and no qemu.
#
# Kernels: Debian 12's default 6.1 series (whatever linux-image-amd64 points
# at) and the newest 6.12 series in bookworm-security.  The chosen versions
# are written to build/kernels.mk so that make and the VM harness agree on
# them without hard-coding a patch level anywhere.
#
# Idempotent: a second run with everything present only rewrites kernels.mk.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/build/kernels.mk"
export DEBIAN_FRONTEND=noninteractive

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

pkgs_base=(
	cpio xz-utils zstd
	busybox-static qemu-system-x86 dmsetup lvm2 fio bcache-tools
	thin-provisioning-tools e2fsprogs xfsprogs util-linux sparse
	clang libclang-rt-14-dev llvm valgrind perl python3 python3-docutils groff-base
	systemd udev
	gnuplot-nox linux-source-6.1
)

bash "$top/scripts/deps-build.sh"

need_update=1
apt_update() {
	if [ "$need_update" = 1 ]; then
		$SUDO apt-get update -q >/dev/null
		need_update=0
	fi
}

# Packages whose status is not "install ok installed".
missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

install() {
	local todo
	todo=$(missing "$@")
	[ -n "$todo" ] || return 0
	apt_update
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $todo
}

# --- resolve kernel versions -------------------------------------------
resolve_61() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/^ *Depends: linux-image-6\.1\.[^ ]*-amd64$/ && !v { sub(/.*linux-image-/, ""); v = $0 } END { print v }'
}

resolve_612() {
	apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' 2>/dev/null |
		sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\) .*/\1/p' |
		sort -V | while read -r v; do
			apt-cache show "linux-image-$v-unsigned" >/dev/null 2>&1 && echo "$v"
		done | tail -n 1
}

k61=$(resolve_61)
if [ -z "$k61" ]; then
	apt_update
	k61=$(resolve_61)
fi
k612=$(resolve_612)
if [ -z "$k612" ]; then
	apt_update
	k612=$(resolve_612)
fi
[ -n "$k61" ] || { echo "deps: cannot resolve the Debian 6.1 kernel" >&2; exit 1; }
[ -n "$k612" ] || { echo "deps: cannot resolve a Debian 6.12 kernel" >&2; exit 1; }

install "${pkgs_base[@]}" \
	"linux-image-$k61" "linux-headers-$k61" \
	"linux-image-$k612-unsigned" "linux-headers-$k612"

# checkpatch.pl and its data files come from the kernel source package.
ksrc="$top/build/linux-scripts"
if [ ! -x "$ksrc/scripts/checkpatch.pl" ]; then
	rm -rf "$ksrc" && mkdir -p "$ksrc"
	tar xf /usr/src/linux-source-6.1.tar.xz -C "$ksrc" --strip-components=1 \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
fi

mkdir -p "$top/build"
cat >"$out.tmp" <<EOM
# Written by scripts/deps.sh; the kernels installed on this machine.
KVER_61 := $k61
KVER_612 := $k612
EOM
mv "$out.tmp" "$out"
echo "deps: kernels $k61 and $k612 ready"
