#!/usr/bin/env bash
# Install what building needs, and nothing else: the compiler, libblkid
# (the tools probe devices with it) and, given a kernel version, that
# kernel's headers for the module.  No kernel images, no qemu, nothing a
# test or the demo alone needs: those are scripts/deps.sh's.
#
#   deps-build.sh [KVER]
#
# Idempotent: with everything present it installs nothing.
set -euo pipefail
kver=${1:-}
export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

pkgs=(build-essential kmod bc bison flex libelf-dev libblkid-dev)

todo=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || todo+=("$p")
done
if [ -n "$kver" ] && [ ! -d "/lib/modules/$kver/build" ]; then
	todo+=("linux-headers-$kver")
fi
[ "${#todo[@]}" -gt 0 ] || exit 0
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends "${todo[@]}"
