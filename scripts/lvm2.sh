#!/usr/bin/env bash
# make lvm2: Debian's own lvm2 source package, with the series in
# lvm2-plugin/patches/ applied, built by Debian's own packaging into
# binary packages (lvm2, dmsetup, libdevmapper1.02.1 and the rest of the
# set, which must replace the stock ones together), copied to build/lvm2/,
# with lvm2's test harness and shell tests in build/lvm2/testsuite/.
#
# The build takes minutes, so its output is kept outside the clone, in
# $DMB_CACHE/lvm2/KEY (default /var/cache/dm-bcache), KEY a hash of
# everything that goes into it: the Debian version, this script and the
# series.  A clone (or CI run) whose inputs match reuses it; a fresh
# machine builds it.  A finished build is marked by the file "done", so
# an interrupted one is built again, never half reused.
#
# The packages carry the version DEBIAN_VERSION+dmbcacheN (N from
# lvm2-plugin/patches/series-version), higher than the stock ones, so that
# installing them upgrades the whole set.
#
# Needs root (apt) and Debian 12.  Adds a deb-src entry for bookworm if
# none is there.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
series_dir=$top/lvm2-plugin/patches
out=$top/build/lvm2
cache=${DMB_CACHE:-/var/cache/dm-bcache}/lvm2
DEBIAN_VERSION=2.03.16-2
export DEBIAN_FRONTEND=noninteractive

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

series_files() {	# the patches, in the order the series lists them
	[ -f "$series_dir/series" ] || return 0
	grep -v -e '^#' -e '^[[:space:]]*$' "$series_dir/series" |
		sed "s|^|$series_dir/|"
}

local_rev=$(cat "$series_dir/series-version" 2>/dev/null || echo 0)
version=$DEBIAN_VERSION+dmbcache$local_rev
# Names, not paths: clones at different places share the build.
key=$( {
	echo "$version"
	cat "$0"
	series_files | while read -r p; do
		basename "$p"
		cat "$p"
	done
} | sha256sum | cut -c1-16)
dir=$cache/$key
if [ "${1:-}" = --key ]; then	# what the cache is keyed by, and nothing else
	echo "$key"
	exit 0
fi

publish() {
	rm -rf "$out"
	mkdir -p "$out"
	cp "$dir"/debs/*.deb "$out"/
	cp -r "$dir/testsuite" "$out/"
	echo "$version" >"$out/version"
	echo "lvm2: $version packages in build/lvm2 (cache $dir)"
}

if [ -e "$dir/done" ]; then
	publish
	exit 0
fi

# A deb-src entry for the suites the deb entries name.
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	$SUDO tee /etc/apt/sources.list.d/dm-bcache-src.sources >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	$SUDO apt-get update -q >/dev/null
fi
if ! apt-cache showsrc lvm2 2>/dev/null | grep -qx "Version: $DEBIAN_VERSION"; then
	$SUDO apt-get update -q >/dev/null
fi
$SUDO apt-get install -y -q --no-install-recommends dpkg-dev build-essential \
	fakeroot >/dev/null
$SUDO apt-get build-dep -y -q "lvm2=$DEBIAN_VERSION" >/dev/null

rm -rf "$dir"
mkdir -p "$dir/debs"
work=$dir/work
mkdir -p "$work"
(cd "$work" && apt-get source -q "lvm2=$DEBIAN_VERSION" >/dev/null 2>&1)
src=$work/lvm2-${DEBIAN_VERSION%-*}
[ -d "$src" ] || { echo "lvm2: apt-get source gave no $src" >&2; exit 1; }

series_files | while read -r p; do
	echo "lvm2: applying $(basename "$p")"
	patch -d "$src" -p1 --forward --no-backup-if-mismatch -s <"$p"
done

# Our version above Debian's, in Debian's changelog format.
{
	echo "lvm2 ($version) bookworm; urgency=medium"
	echo
	echo "  * dm-bcache: the bcache segment type (lvm2-plugin/patches)."
	echo
	echo " -- dm-bcache <dm-bcache@localhost>  $(date -R -u -d @0)"
	echo
	cat "$src/debian/changelog"
} >"$src/debian/changelog.new"
mv "$src/debian/changelog.new" "$src/debian/changelog"

echo "lvm2: building $version with Debian's packaging"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck nodoc parallel=$(nproc)" \
	dpkg-buildpackage -B -uc -us >"$dir/build.log" 2>&1) || {
	tail -n 40 "$dir/build.log" >&2
	exit 1
}
mv "$work"/*.deb "$dir/debs/"
# lvm2's test harness and shell tests, the series' own among them, for the
# VM (tests/vm/mkinitramfs.sh): Debian's build does not build test/, and
# its only compiled piece the tests need is lib/not.
ts=$dir/testsuite
mkdir -p "$ts/lib"
cp "$src"/test/lib/*.sh "$ts/lib/"
cp -r "$src/test/shell" "$ts/"
cp "$src/tools/commands.h" "$ts/"
gcc -O2 -o "$ts/lib/not" "$src/test/lib/not.c"
rm -rf "$work"
touch "$dir/done"
publish
