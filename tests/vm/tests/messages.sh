# Messages: valid ones take effect; malformed or unknown ones are refused
# with an error to dmsetup and a log line, and change nothing.
. /tests/lib.sh
load_module
wipe_head $ORIGIN_DEV
len=$((128 * 2048))
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 0"

# clear_stats zeroes the counters.
reads() { echo $(($(status_field dmb 5) + $(status_field dmb 6) + $(status_field dmb 9))); }
dd if=/dev/mapper/dmb of=/dev/null bs=4k count=8 iflag=direct status=none
[ "$(reads)" -ge 8 ] || fail "reads not counted"
dmsetup message dmb 0 clear_stats
expect_eq "reads after clear_stats" "$(reads)" 0

# cache_mode switches and shows in the status.
dmsetup message dmb 0 cache_mode passthrough
expect_eq "mode" "$(status_field dmb 12)" passthrough
dmsetup message dmb 0 cache_mode writeback
expect_eq "mode" "$(status_field dmb 12)" writeback
dmsetup message dmb 0 cache_mode writethrough
expect_eq "mode" "$(status_field dmb 12)" writethrough
# Write-back tunables take their values; flush with nothing dirty returns.
dmsetup message dmb 0 writeback_percent 20
dmsetup message dmb 0 writeback_delay 0
dmsetup message dmb 0 writeback_rate_minimum 4096
dmsetup message dmb 0 flush || fail "flush of a clean cache failed"

# Each refused message: its words, then the reason logged.
refused=0
while IFS='|' read -r msg why; do
	[ -n "$msg" ] || continue
	klog_mark
	# shellcheck disable=SC2086
	if dmsetup message dmb 0 $msg 2>/dev/null; then
		fail "message '$msg' was accepted"
	fi
	# Only this message's lines: one refusal, the wanted one.
	last=$(klog_since | grep 'message .* refused' || true)
	[ "$(grep -c . <<<"$last")" = 1 ] || fail "message '$msg': want one refusal logged, got '$last'"
	echo "$last" | grep -qF "$why" || fail "message '$msg': log '$last' lacks '$why'"
	refused=$((refused + 1))
done <<'EOM'
bogus|message bogus refused: unknown message
cache_mode|message cache_mode refused: takes one argument
cache_mode a b|message cache_mode refused: takes one argument
cache_mode fast|message cache_mode refused: unknown cache mode
clear_stats now|message clear_stats refused: takes no arguments
flush now|message flush refused: takes no arguments
detach now|message detach refused: takes no argument but force
gc now|message gc refused: takes no arguments
cleaner|message cleaner refused: takes one value
cleaner maybe|message cleaner refused: Invalid cleaner value
flush_on_suspend 1|message flush_on_suspend refused: Invalid flush_on_suspend value
invalidate 0-100|message invalidate refused: not supported yet
sequential_cutoff|message sequential_cutoff refused: takes one value
sequential_cutoff 1 2|message sequential_cutoff refused: takes one value
sequential_cutoff x|message sequential_cutoff refused: Invalid sequential_cutoff value
congested_read_threshold_us 10000001|message congested_read_threshold_us refused: Invalid congested_read_threshold_us value
writeback_percent 41|message writeback_percent refused: Invalid writeback_percent value
writeback_rate_minimum 0|message writeback_rate_minimum refused: Invalid writeback_rate_minimum value
block_size 8|message block_size refused: option cannot be changed at runtime
bucket_size 1024|message bucket_size refused: option cannot be changed at runtime
origin_layout raw|message origin_layout refused: option cannot be changed at runtime
replacement lru|message replacement refused: option cannot be changed at runtime
discard maybe|message discard refused: Invalid discard value
EOM
log "$refused malformed or unsupported messages refused"
expect_eq "message cases run" "$refused" 23
expect_eq "mode unchanged" "$(status_field dmb 12)" writethrough
expect_eq "table unchanged" "$(dmsetup table dmb)" "0 $len bcache $CACHE_MM $ORIGIN_MM 0"
dmsetup remove dmb
exit 0
