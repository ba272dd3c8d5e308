#!/usr/bin/env bash
# Regenerate lvm2-plugin/patches/ from a git work tree of Debian's lvm2
# source (apt-get source lvm2=2.03.16-2, committed as is, then edited):
# one patch per layer, each with the header kept in lvm2-plugin/headers/.
#
#   export-series.sh LVM2_GIT_TREE
set -euo pipefail
tree=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$here/patches
# name: the paths it covers
layers=(
	"0001-device_mapper-bcache-target.patch:device_mapper"
	"0002-lib-bcache-segment-type.patch:lib"
	"0003-lvconvert-bcache.patch:tools"
	"0004-test-bcache.patch:test"
)
: >"$out/series"
for l in "${layers[@]}"; do
	name=${l%%:*} paths=${l#*:}
	{
		cat "$here/headers/$name"
		echo "---"
		# shellcheck disable=SC2086
		git -C "$tree" diff -- $paths
	} >"$out/$name"
	echo "$name" >>"$out/series"
done
