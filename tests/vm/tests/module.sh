# The module loads, registers target "bcache" at 1.0.0 or later, and unloads.
. /tests/lib.sh

modprobe dm-bcache
line=$(dmsetup targets | grep '^bcache ') || fail "target bcache not registered"
log "$line"
ver=$(echo "$line" | awk '{ print $2 }' | tr -d v)
IFS=. read -r maj min pat <<<"$ver"
[ "$maj" -ge 1 ] || fail "version $ver below 1.0.0"
modprobe -r dm-bcache
dmsetup targets | grep -q '^bcache ' && fail "target still registered after unload"
modprobe dm-bcache
dmsetup targets | grep -q '^bcache ' || fail "reload of the module failed"
exit 0
