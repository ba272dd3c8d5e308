#!/usr/bin/env bash
# The README's test command: make sure make itself is there (a fresh
# Debian 12 may lack it), then run make check, which installs the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
command -v make >/dev/null || {
	$SUDO apt-get update -q && $SUDO apt-get install -y -q make
}
exec make check
