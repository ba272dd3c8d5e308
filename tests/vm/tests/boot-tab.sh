# Boot-time activation (userspace/boot): bcache_tab, as dm-bcache.service
# runs it, brings up the entries of /etc/bcachetab whose devices are
# present -- a cache set and a make-bcache -B origin named by their UUIDs,
# and a raw pair named by path -- once each, with their options; "start
# --device", as the udev rule runs it, starts only the entries the device
# completes; "stop" flushes an entry marked flush_on_stop (the origin then
# holds everything written) and removes both.  udevadm test, with the
# rules installed, marks the origin and the cache as members (not ready
# for systemd, lowest link priority) and leaves other devices alone.
# Bad files and absent devices are refused with the line named.
. /tests/lib.sh
load_module
dm_kname() { dmsetup info -c --noheadings -o blkdevname "$1" | tr -d ' '; }
# Two pairs on slices of the disks.  The first is formatted through its
# slices, whose superblocks the whole disks show too (at the same offset):
# UUID= must pick the slice, the top of the stack.
dmsetup create c1 --table "0 $((128 * 2048)) linear $CACHE_DEV 0"
dmsetup create o1 --table "0 $((128 * 2048)) linear $ORIGIN_DEV 0"
dmsetup create c2 --table "0 $((64 * 2048)) linear $CACHE_DEV $((128 * 2048))"
dmsetup create o2 --table "0 $((64 * 2048)) linear $ORIGIN_DEV $((128 * 2048))"
C1=/dev/mapper/c1 O1=/dev/mapper/o1
wipe_head $C1
wipe_head $O1
wipe_head /dev/mapper/c2
bcache_format -q --wipe-bcache -b 128k -C $C1 -B $O1 || fail "bcache_format"
echo 3 >/proc/sys/vm/drop_caches
cset=$(bcache-super-show $C1 | awk '/^cset.uuid/ { print $2 }')
buuid=$(bcache-super-show $O1 | awk '/^dev.uuid/ { print $2 }')

cat >/etc/bcachetab <<EOT
# name  cache  origin  options
main  UUID=$cset  UUID=$buuid  writeback,flush_on_stop,writeback_delay=3600,sequential_cutoff=0,congested_read_threshold_us=0,congested_write_threshold_us=0
raw   /dev/mapper/c2   /dev/mapper/o2   writethrough   # a comment
spare /dev/mapper/none /dev/mapper/o2   noauto
EOT

log "list: devices resolved, nothing active"
bcache_tab list >/tmp/list.out || fail "bcache_tab list: $(cat /tmp/list.out)"
grep -x "main /dev/$(dm_kname c1) /dev/$(dm_kname o1) inactive" /tmp/list.out >/dev/null || fail "list: $(cat /tmp/list.out)"
grep -x "spare (absent) /dev/mapper/o2 inactive noauto" /tmp/list.out >/dev/null || fail "list: $(cat /tmp/list.out)"

log "start --device: only the entries the device completes"
bcache_tab -q start --device $O1 || fail "start --device $O1"
dmsetup info main >/dev/null 2>&1 || fail "main not started by its origin"
dmsetup info raw >/dev/null 2>&1 && fail "raw started by another entry's device"

log "start: every auto entry, once"
bcache_tab start >/tmp/start.out || fail "bcache_tab start: $(cat /tmp/start.out)"
bcache_tab start >/tmp/start.out || fail "a second start: $(cat /tmp/start.out)"
dmsetup info spare >/dev/null 2>&1 && fail "a noauto entry was started"
expect_eq "main mode" "$(status_field main 12)" writeback
expect_eq "raw mode" "$(status_field raw 12)" writethrough
expect_eq "main length" "$(dmsetup table main | awk '{ print $2 }')" \
	$((($(sectors $O1) - 16) / 8 * 8))
dmsetup table main | grep -E 'writeback_delay 3600.*sequential_cutoff 0|sequential_cutoff 0.*writeback_delay 3600' >/dev/null ||
	fail "main's options: $(dmsetup table main)"
dmsetup table raw | grep -E "^0 $((64 * 2048)) bcache " >/dev/null || fail "raw: $(dmsetup table raw)"

log "udevadm test: members marked, others not"
props() { SYSTEMD_LOG_LEVEL=debug udevadm test --action=add "/sys/class/block/$1" 2>&1; }
out=$(props "$(dm_kname o1)")
echo "$out" | grep -x 'DM_BCACHE_NAME=main' >/dev/null || fail "origin not a member: $(echo "$out" | tail -n 20)"
echo "$out" | grep -x 'DM_BCACHE_ROLE=origin' >/dev/null || fail "origin role: $(echo "$out" | tail -n 20)"
echo "$out" | grep -x 'SYSTEMD_READY=0' >/dev/null || fail "origin left ready for systemd"
echo "$out" | grep -x 'UDISKS_IGNORE=1' >/dev/null || fail "origin left to udisks"
# udevadm logs neither ENV nor OPTIONS assignments; the RUN at the end
# of the member branch shows it was taken whole, and the rules file
# parses without a complaint (a bad OPTIONS value would be one).
echo "$out" | grep "69-dm-bcache.rules:[0-9]* RUN '/usr/sbin/bcache_tab --quiet start --device" >/dev/null ||
	fail "origin: the member branch was not taken: $(echo "$out" | grep 69-dm-bcache)"
echo "$out" | grep -i '69-dm-bcache.rules.*\(invalid\|error\|unknown\|ignor\)' &&
	fail "udev complains about the rules"
out=$(props "$(dm_kname c1)")
echo "$out" | grep -x 'DM_BCACHE_ROLE=cache' >/dev/null || fail "cache role: $(echo "$out" | tail -n 20)"
out=$(props "$(basename $DATA_DEV)")
echo "$out" | grep 'DM_BCACHE\|69-dm-bcache.rules:[0-9]* RUN' >/dev/null &&
	fail "a non-member marked: $(echo "$out" | grep 'DM_BCACHE\|RUN')"

log "stop: flush_on_stop writes everything back, then both are removed"
write_dirty /dev/mapper/main 0 16
bcache_tab stop >/tmp/stop.out || fail "bcache_tab stop: $(cat /tmp/stop.out)"
grep 'dmsetup message main 0 flush' /tmp/stop.out >/dev/null || fail "no flush: $(cat /tmp/stop.out)"
dmsetup info main >/dev/null 2>&1 && fail "main still active"
dmsetup info raw >/dev/null 2>&1 && fail "raw still active"
same_data $O1 16 $DATA_DEV 0 $((16 * 2048)) || fail "the origin lacks the data after stop"

log "refusals"
out=$(bcache_tab start spare 2>&1) && fail "an entry with an absent cache started"
echo "$out" | grep 'spare: cache /dev/mapper/none not present' >/dev/null || fail "start spare said: $out"
out=$(bcache_tab start nosuch 2>&1) && fail "an unknown name passed"
echo "$out" | grep 'no entry nosuch' >/dev/null || fail "start nosuch said: $out"
printf 'bad UUID=x\n' >/tmp/tab.bad
out=$(bcache_tab -c /tmp/tab.bad list 2>&1) && fail "a short line passed"
echo "$out" | grep 'line 1: want NAME CACHE ORIGIN' >/dev/null || fail "short line: $out"
printf 'x /dev/a /dev/b writeback,oops\n' >/tmp/tab.bad
bcache_tab -c /tmp/tab.bad list >/dev/null 2>&1 && fail "a bad option passed"
printf 'x /dev/a /dev/b\nx /dev/c /dev/d\n' >/tmp/tab.bad
bcache_tab -c /tmp/tab.bad list >/dev/null 2>&1 && fail "a repeated name passed"
rm -f /etc/bcachetab /tmp/tab.bad
dmsetup remove c1 o1 c2 o2
