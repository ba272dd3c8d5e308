# STATUSTYPE_TABLE round-trips the table line exactly, for several option
# sets; a reload from `dmsetup table` output gives the same table again; a
# mode changed by message shows in the table so a reload keeps it.
. /tests/lib.sh
load_module
wipe_head $ORIGIN_DEV
len=$((128 * 2048))
prefix="0 $len bcache $CACHE_MM $ORIGIN_MM"

roundtrip() {	# each option set formats the cache afresh
	local args=$1 got
	wipe_head $CACHE_DEV
	dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV $args"
	got=$(dmsetup table dmb)
	expect_eq "table for '$args'" "$got" "$prefix $args"
	# Feed the output back: it must load and print identically.
	dmsetup reload dmb --table "$got"
	dmsetup resume dmb
	expect_eq "table after reload of '$args'" "$(dmsetup table dmb)" "$got"
	dmsetup remove dmb
}

roundtrip "0"
roundtrip "1 writethrough"
roundtrip "1 passthrough"
roundtrip "2 origin_layout raw"
roundtrip "2 origin_layout auto"
roundtrip "2 block_size 1"
roundtrip "7 sequential_cutoff 0 congested_read_threshold_us 0 congested_write_threshold_us 100 writearound"
roundtrip "3 passthrough origin_layout raw"
roundtrip "3 origin_layout raw passthrough"
roundtrip "4 block_size 8 origin_layout auto"
roundtrip "5 origin_layout raw writethrough block_size 4"
roundtrip "5 block_size 2 passthrough origin_layout auto"
roundtrip "2 bucket_size 256"
roundtrip "7 writeback writeback_percent 0 writeback_delay 5 writeback_rate_minimum 1024"
roundtrip "5 cleaner on writeback flush_on_suspend on"
roundtrip "4 bucket_size 64 block_size 8"

# Mode change by message: the table shows the mode now in force.
wipe_head $CACHE_DEV
dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 2 origin_layout raw"
dmsetup message dmb 0 cache_mode passthrough
expect_eq "appended mode" "$(dmsetup table dmb)" "$prefix 3 origin_layout raw passthrough"
dmsetup message dmb 0 cache_mode writethrough
expect_eq "default mode" "$(dmsetup table dmb)" "$prefix 2 origin_layout raw"
dmsetup remove dmb

dmsetup create dmb --table "0 $len bcache $CACHE_DEV $ORIGIN_DEV 1 writethrough"
dmsetup message dmb 0 cache_mode passthrough
expect_eq "replaced mode" "$(dmsetup table dmb)" "$prefix 1 passthrough"
expect_eq "status mode" "$(status_field dmb 12)" passthrough
dmsetup remove dmb
exit 0
