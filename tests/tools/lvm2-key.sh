#!/usr/bin/env bash
# The lvm2 packages' cache key (scripts/lvm2.sh --key): two clones at
# different paths with the same series share it, so CI reuses a build
# wherever its clone lies; a changed patch, or a changed series version,
# changes it, so a stale build is never reused.  Exit status 0 if so.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

clone() {	# clone DIR: the script and the series, as a clone holds them
	mkdir -p "$1/scripts" "$1/lvm2-plugin"
	cp "$top/scripts/lvm2.sh" "$1/scripts/"
	cp -r "$top/lvm2-plugin/patches" "$1/lvm2-plugin/"
}
key() { bash "$1/scripts/lvm2.sh" --key; }

clone "$tmp/a"
clone "$tmp/b/elsewhere"
[ "$(key "$tmp/a")" = "$(key "$tmp/b/elsewhere")" ] ||
	{ echo "the key depends on where the clone is"; exit 1; }
first=$(sed -n 1p "$tmp/a/lvm2-plugin/patches/series")
[ -n "$first" ] || { echo "the series is empty"; exit 1; }
before=$(key "$tmp/a")
echo " " >>"$tmp/a/lvm2-plugin/patches/$first"
[ "$(key "$tmp/a")" != "$before" ] || { echo "a changed patch kept the key"; exit 1; }
before=$(key "$tmp/b/elsewhere")
echo 99 >"$tmp/b/elsewhere/lvm2-plugin/patches/series-version"
[ "$(key "$tmp/b/elsewhere")" != "$before" ] || { echo "a new series version kept the key"; exit 1; }
echo "lvm2 cache key: $(key "$tmp/a") (independent of the clone's path)"
