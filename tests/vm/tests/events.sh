# dm events: `dmsetup wait` wakes for every change the status line reports
# by itself -- the dirty count reaching zero after the flush message, the
# mode a message switches, the metadata state turning fail (needs_check)
# -- and ordinary I/O raises none.
. /tests/lib.sh
load_module
wipe_head $CACHE_DEV
csz=$(sectors $CACHE_DEV)
len=$((448 * 2048))
dd if=/dev/zero of=$ORIGIN_DEV bs=1M count=32 oflag=direct status=none
dmsetup create cdev --table "0 $csz linear $CACHE_DEV 0"
dmsetup create dmb --table "0 $len bcache /dev/mapper/cdev $ORIGIN_DEV 9 writeback $NOBYPASS writeback_delay 3600"

events() { dmsetup info -c --noheadings -o events dmb | tr -d ' '; }

# waiter: `dmsetup wait dmb N` for the current N in the background.
waiter() {
	ev=$(events)
	dmsetup wait dmb "$ev" >/dev/null 2>&1 &
	wpid=$!
}

# woken WHAT: the waiter returned (within 20 s) and the count moved.
woken() {
	local i
	for i in $(seq 100); do kill -0 $wpid 2>/dev/null || break; sleep 0.2; done
	if kill -0 $wpid 2>/dev/null; then
		kill $wpid; wait $wpid || true
		fail "no dm event for $1 (events still $(events))"
	fi
	wait $wpid || fail "dmsetup wait failed for $1"
	[ "$(events)" -gt "$ev" ] || fail "$1: event count $(events), was $ev"
}

log "I/O raises no event"
waiter
write_data /dev/mapper/dmb 8 16
dd if=/dev/mapper/dmb of=/dev/null bs=1M count=16 skip=8 iflag=direct status=none
sleep 2
kill -0 $wpid 2>/dev/null || fail "an event for plain I/O (events $(events), was $ev)"
[ "$(status_field dmb 4)" -ge $((16 * 2048)) ] || fail "dirty $(status_field dmb 4) after writing"

log "dirty -> clean after the flush message"
dmsetup message dmb 0 flush
woken "the dirty count reaching zero"
expect_eq "dirty after flush" "$(status_field dmb 4)" 0

log "a mode switch"
waiter
dmsetup message dmb 0 cache_mode writethrough
woken "cache_mode writethrough"
expect_eq "mode" "$(status_field dmb 12)" writethrough

log "the cache fails: state fail, needs_check"
waiter
dmsetup suspend cdev
dmsetup reload cdev --table "0 $csz flakey $CACHE_DEV 0 0 3600 1 error_writes"
dmsetup resume cdev
dd if=$DATA_DEV of=/dev/mapper/dmb bs=1M skip=40 seek=100 count=1 oflag=direct conv=fsync status=none 2>/dev/null || true
wait_for "state fail" test "$(status_field dmb 13)" = fail
woken "the state turning fail"
expect_eq "needs_check" "$(status_field dmb 14)" needs_check
dmsetup remove dmb
dmsetup remove cdev
