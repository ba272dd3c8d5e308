# Malformed table lines: each is refused with its own precise error string
# (checked in the kernel log), no device is left behind, nothing is written
# to either device, and the kernel logs no warning (the runner checks).
. /tests/lib.sh
load_module
modprobe null_blk nr_devices=1 bs=4096 gb=1
wipe_head $ORIGIN_DEV
C=$CACHE_DEV O=$ORIGIN_DEV
len=$((64 * 2048))

# Small devices carved from the test disks.
dmsetup create tiny --table "0 4096 linear $C 300000"	# 2 MiB cache
dmsetup create small --table "0 2048 linear $O 600000"	# 1 MiB origin
dmsetup create csb --table "0 262144 linear $O 700000"	# holds a cache sb
dmsetup create bsb --table "0 262144 linear $O 450000"	# damaged backing sb
dmsetup create b4k --table "0 262144 linear $O 180000"	# 4 KiB-block backing sb
dmsetup create bsbok --table "0 40960 linear $O 1000000"	# valid backing sb
dmsetup create c4k --table "0 40960 linear $O 50000"	# 4 KiB-block cache sb
make-bcache -C -b 64k /dev/mapper/csb >/dev/null
make-bcache -B /dev/mapper/bsb >/dev/null
printf 'X' | dd of=/dev/mapper/bsb bs=1 seek=$((4096 + 72)) conv=notrunc,fsync status=none
make-bcache -B -w 4k /dev/mapper/b4k >/dev/null
make-bcache -B /dev/mapper/bsbok >/dev/null
make-bcache -C -w 4k -b 8k /dev/mapper/c4k >/dev/null
# $C formatted by the target (1-sector blocks, 512-sector buckets), for
# the cases that compare a table with the cache superblock.
dmsetup create dmb --table "0 $len bcache $C $O 0"
dmsetup remove dmb

sum_c=$(sum_sectors $C 0 2048)
sum_o=$(sum_sectors $O 0 2048)

n=0
bad() {	# bad "expected error" table-args...
	local want=$1 table
	shift
	table="0 $len bcache $*"
	klog_mark
	if dmsetup create dmbbad --table "$table" 2>/dev/null; then
		dmsetup remove dmbbad
		fail "accepted: '$table'"
	fi
	# Only this case's lines: exactly one refusal, the wanted one.
	got=$(klog_since | grep -E 'device-mapper: table: .*bcache: ' || true)
	case "$got" in
	*$'\n'*) fail "'$table': more than one refusal logged: $got" ;;
	*"bcache: $want ("*) ;;
	*) fail "'$table': want '$want', kernel said '$got'" ;;
	esac
	n=$((n + 1))
}

# --- argument counts -----------------------------------------------------
bad "Not enough arguments"
bad "Not enough arguments" $C
bad "Not enough arguments" $C $O
for cnt in x -1 +1 0x1 1.5 1e2 31 100 4294967297 99999999999999999999 ' 1a'; do
	bad "Invalid number of optional arguments" $C $O "$cnt"
done
bad "Fewer optional arguments than their count" $C $O 1
bad "Fewer optional arguments than their count" $C $O 2 writethrough
bad "Fewer optional arguments than their count" $C $O 3 origin_layout raw
bad "Fewer optional arguments than their count" $C $O 26 origin_layout raw
bad "Unexpected arguments after the optional arguments" $C $O 0 writethrough
bad "Unexpected arguments after the optional arguments" $C $O 1 writethrough passthrough
bad "Unexpected arguments after the optional arguments" $C $O 2 origin_layout raw extra

# --- unknown options and missing values -----------------------------------
for o in foo WRITETHROUGH Writeback write_through cache_mode metadata2 \
	--writeback no_discard_passdown policy smq migration_threshold \
	pause_writeback high_watermark; do
	bad "Unrecognised cache option" $C $O 1 "$o"
	bad "Unrecognised cache option" $C $O 2 "$o" 1
done
for o in origin_layout block_size bucket_size replacement discard \
	sequential_cutoff congested_read_threshold_us \
	congested_write_threshold_us readahead writeback_percent \
	writeback_delay writeback_rate_minimum cleaner flush_on_suspend; do
	bad "Missing value for cache option" $C $O 1 $o
done

# --- bad values: syntax, overflow, range, powers of two ------------------
for o in block_size bucket_size sequential_cutoff congested_read_threshold_us \
	congested_write_threshold_us readahead writeback_percent \
	writeback_delay writeback_rate_minimum; do
	for v in x -1 +1 1.5 0x10 1k 18446744073709551616 99999999999999999999999; do
		bad "Invalid $o value" $C $O 2 $o "$v"
	done
done
for v in 0 3 6 16 64 4096; do bad "Invalid block_size value" $C $O 2 block_size $v; done
for v in 0 1 4 7 1000 65536 131072; do bad "Invalid bucket_size value" $C $O 2 bucket_size $v; done
bad "Invalid sequential_cutoff value" $C $O 2 sequential_cutoff 2147483649
bad "Invalid congested_read_threshold_us value" $C $O 2 congested_read_threshold_us 10000001
bad "Invalid congested_write_threshold_us value" $C $O 2 congested_write_threshold_us 10000001
bad "Invalid readahead value" $C $O 2 readahead 65537
for v in 41 50 100; do bad "Invalid writeback_percent value" $C $O 2 writeback_percent $v; done
bad "Invalid writeback_delay value" $C $O 2 writeback_delay 86401
bad "Invalid writeback_rate_minimum value" $C $O 2 writeback_rate_minimum 0
bad "Invalid writeback_rate_minimum value" $C $O 2 writeback_rate_minimum 1073741825
for v in RAW Auto yes 1 none; do bad "Invalid origin_layout value" $C $O 2 origin_layout $v; done
for v in LRU lfu 0 clock; do bad "Invalid replacement value" $C $O 2 replacement $v; done
for v in 1 true ON yes; do bad "Invalid discard value" $C $O 2 discard $v; done
for v in 1 true ON; do bad "Invalid cleaner value" $C $O 2 cleaner $v; done
for v in 1 true ON; do bad "Invalid flush_on_suspend value" $C $O 2 flush_on_suspend $v; done

# --- duplicates and conflicts ---------------------------------------------
bad "Conflicting cache modes" $C $O 2 writethrough passthrough
bad "Conflicting cache modes" $C $O 2 passthrough passthrough
bad "Conflicting cache modes" $C $O 2 writethrough writethrough
bad "Conflicting cache modes" $C $O 2 passthrough writeback
bad "Conflicting cache modes" $C $O 4 writethrough origin_layout raw passthrough
bad "Option origin_layout given more than once" $C $O 4 origin_layout raw origin_layout raw
bad "Option origin_layout given more than once" $C $O 4 origin_layout raw origin_layout auto
bad "Option block_size given more than once" $C $O 4 block_size 1 block_size 2

# --- known but not supported yet ------------------------------------------
bad "Option replacement is not supported yet" $C $O 2 replacement fifo
bad "Option discard is not supported yet" $C $O 2 discard on

# --- the cache's superblock ---------------------------------------------------
bad "bucket_size differs from the cache superblock's" $C $O 2 bucket_size 1024
bad "block_size smaller than the cache's block size" /dev/mapper/c4k $O 2 block_size 1
len=$((16 * 2048))	# bsbok is a 20 MiB origin
bad "Origin superblock block size smaller than the cache's" /dev/mapper/c4k /dev/mapper/bsbok 0
len=$((64 * 2048))
bad "Cache device has a bcache backing superblock" /dev/mapper/bsbok $O 0
bad "Bad checksum" /dev/mapper/bsb $O 0
# null_blk reads zeros (so it would be formatted) and discards writes.
bad "Cache device too small for 513 buckets of bucket_size" /dev/nullb0 $O 2 bucket_size 32768

# --- devices ----------------------------------------------------------------
echo data >/tmp/regular-file
bad "Error opening cache device" /dev/nonexistent $O 0
bad "Error opening cache device" /tmp/regular-file $O 0
bad "Error opening cache device" 999:999 $O 0
bad "Error opening origin device" $C /dev/nonexistent 0
bad "Error opening origin device" $C /tmp/regular-file 0
bad "Error opening origin device" $C 999:999 0
bad "Cache and origin must be different devices" $C $C 0
bad "Cache and origin must be different devices" $O $O 0
bad "Cache and origin must be different devices" $CACHE_MM $C 0
bad "Cache device too small (minimum 2052 KiB)" /dev/mapper/tiny $O 0
bad "Origin device too small for target length" $C /dev/mapper/small 0
bad "Origin device too small for target length" $C /dev/mapper/small 2 origin_layout raw
len=$((1024 * 2048))
bad "Origin device too small for target length" $C $O 0
len=$((64 * 2048))
bad "Origin holds a bcache cache superblock (origin_layout raw overrides)" $C /dev/mapper/csb 0
bad "Origin holds a bcache cache superblock (origin_layout raw overrides)" $C /dev/mapper/csb 2 origin_layout backing
bad "Origin has an invalid bcache superblock (origin_layout raw overrides)" $C /dev/mapper/bsb 0
bad "Origin has an invalid bcache superblock (origin_layout raw overrides)" $C /dev/mapper/bsb 2 origin_layout backing
bad "Origin has no bcache backing superblock" $C $O 2 origin_layout backing
bad "block_size smaller than a device's logical block size" $C /dev/nullb0 2 block_size 1
bad "block_size smaller than a device's logical block size" /dev/nullb0 $O 2 block_size 4
bad "block_size differs from the origin superblock's" $C /dev/mapper/b4k 2 block_size 1
len=1001
bad "Target length is not a multiple of block_size" $C $O 2 block_size 8
bad "Target length is not a multiple of block_size" $C /dev/nullb0 0
len=$((64 * 2048))

log "$n malformed table lines refused"
expect_eq "table cases run" "$n" 214
dmsetup info dmbbad >/dev/null 2>&1 && fail "a refused device was left behind"
expect_eq "cache device unchanged" "$(sum_sectors $C 0 2048)" "$sum_c"
expect_eq "origin device unchanged" "$(sum_sectors $O 0 2048)" "$sum_o"

# The overrides named in the errors do work.
dmsetup create dmb --table "0 $len bcache $C /dev/mapper/csb 2 origin_layout raw"
dmsetup remove dmb
dmsetup create dmb --table "0 $len bcache $C /dev/mapper/b4k 0"
expect_eq "4k backing block size" "$(status_field dmb 1)" 8
dmsetup remove dmb
dmsetup remove_all
modprobe -r null_blk
exit 0
