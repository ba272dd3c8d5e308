# The systems the benchmark compares, each set up fresh on the same two
# devices: $SSD (a brd RAM disk) and $HDD (a virtio disk behind dm-delay).
#
#   sys_up NAME       set NAME up; prints nothing, sets $DEV (what fio uses)
#   sys_down NAME     tear it down, leaving both devices as they were
#   sys_counts NAME   "read_hits read_misses write_hits write_misses" from
#                     the system's own counters ("-" where it has none)
#   sys_drain NAME    write every dirty block back to the HDD and return
#                     when none is left (write-back systems)
#
# Tunables, the same for every cache that has them (stated in
# docs/performance.md): sequential cutoff 4 MiB (both bcaches' default),
# congestion bypass off (TCG latencies would trip any threshold), 256 KiB
# buckets for both bcaches, 64 KiB blocks for dm-cache (lvm2's default),
# 4 KiB blocks for dm-writecache.

DMB_OPTS="sequential_cutoff 8192 congested_read_threshold_us 0 congested_write_threshold_us 0"
DMC_META_SECTORS=16384		# dm-cache metadata: the first 8 MiB of $SSD
DMC_BLOCK=128			# sectors: 64 KiB

zero_head() { dd if=/dev/zero of="$1" bs=1M count="${2:-1}" oflag=direct status=none; }

# Wait up to 30 s for a command to succeed (DRAIN_WAIT seconds when set).
until_ok() {
	local i
	for i in $(seq $((${DRAIN_WAIT:-30} * 5))); do "$@" && return 0; sleep 0.2; done
	echo "bench: timed out: $*" >&2
	return 1
}

hdd_sectors() { blockdev --getsz "$HDD"; }

bcache_cset() { bcache-super-show "$SSD" | awk '/^cset.uuid/ { print $2 }'; }

mainline_up() {	# mainline_up MODE
	zero_head "$SSD"
	zero_head "$HDD"
	make-bcache --bucket 256k -C "$SSD" -B "$HDD" >/dev/null || return 1
	echo "$SSD" >/sys/fs/bcache/register
	echo "$HDD" >/sys/fs/bcache/register
	until_ok test -e /sys/block/bcache0/bcache/cache || return 1
	local cset sys=/sys/block/bcache0/bcache
	cset=$(bcache_cset)
	echo "$1" >$sys/cache_mode
	echo $((4 << 20)) >$sys/sequential_cutoff	# bytes, no suffix
	echo 0 >/sys/fs/bcache/"$cset"/congested_read_threshold_us
	echo 0 >/sys/fs/bcache/"$cset"/congested_write_threshold_us
	DEV=/dev/bcache0
}

mainline_down() {
	local cset
	cset=$(bcache_cset)
	echo 1 >/sys/block/bcache0/bcache/stop
	until_ok test ! -b /dev/bcache0
	echo 1 >/sys/fs/bcache/"$cset"/stop
	until_ok test ! -e /sys/fs/bcache/"$cset"
}

dmc_table() {	# dmc_table MODE POLICY
	local ssd_len
	ssd_len=$(blockdev --getsz "$SSD")
	dmsetup create dmc_meta --table "0 $DMC_META_SECTORS linear $SSD 0" || return 1
	dmsetup create dmc_data --table "0 $((ssd_len - DMC_META_SECTORS)) linear $SSD $DMC_META_SECTORS"
	echo "0 $(hdd_sectors) cache /dev/mapper/dmc_meta /dev/mapper/dmc_data $HDD $DMC_BLOCK 1 $1 $2 2 migration_threshold 1000000"
}

sys_up() {
	case $1 in
	raw-ssd) DEV=$SSD ;;
	raw-hdd) DEV=$HDD ;;
	linear-ssd)
		dmsetup create lin --table "0 $(blockdev --getsz "$SSD") linear $SSD 0" || return 1
		DEV=/dev/mapper/lin ;;
	linear-hdd)
		dmsetup create lin --table "0 $(hdd_sectors) linear $HDD 0" || return 1
		DEV=/dev/mapper/lin ;;
	dmb-wt|dmb-wb)
		zero_head "$SSD"
		zero_head "$HDD"
		local mode=writethrough
		[ "$1" = dmb-wb ] && mode=writeback
		dmsetup create dmb --table "0 $(hdd_sectors) bcache $SSD $HDD 9 $mode $DMB_OPTS origin_layout raw" || return 1
		DEV=/dev/mapper/dmb ;;
	bcache-wt) mainline_up writethrough || return 1 ;;
	bcache-wb) mainline_up writeback || return 1 ;;
	dmcache-wt|dmcache-wb)
		zero_head "$SSD" 8
		local mode=writethrough
		[ "$1" = dmcache-wb ] && mode=writeback
		dmsetup create dmc --table "$(dmc_table $mode smq)" || return 1
		DEV=/dev/mapper/dmc ;;
	writecache)
		zero_head "$SSD"
		dmsetup create wc --table "0 $(hdd_sectors) writecache s $HDD $SSD 4096 0" || return 1
		DEV=/dev/mapper/wc ;;
	*) echo "bench: unknown system $1" >&2; return 1 ;;
	esac
}

sys_down() {
	case $1 in
	raw-*) ;;
	linear-*) dmsetup remove lin ;;
	dmb-*) dmsetup remove dmb ;;
	bcache-*) mainline_down ;;
	dmcache-*) dmsetup remove --retry dmc dmc_meta dmc_data ;;
	writecache) dmsetup remove wc ;;
	esac
}

sys_counts() {	# "read_hits read_misses write_hits write_misses"
	local s
	case $1 in
	dmb-*)
		# fields 5-10: read hits, misses, write hits, misses, bypassed
		# reads, bypassed writes (a bypass is a miss here)
		dmsetup status dmb | awk '{ print $8, $9 + $12, $10, $11 + $13 }' ;;
	bcache-*)
		# The driver's stats_total lag (folded in every 13.6 s) and count
		# reads only; the block layer does not lag: 4k blocks read from
		# bcache0 less those read from the HDD are hits.
		local b h
		b=$(awk '{ print int($3 / 8) }' /sys/block/bcache0/stat)
		h=$(awk '{ print int($3 / 8) }' /sys/block/dm-"$(dmsetup info -c --noheadings -o minor hdd)"/stat)
		echo "$((b - h)) $h - -" ;;
	dmcache-*)
		# <meta bs> <used/total> <cache bs> <used/total> <rh> <rm> <wh> <wm>
		dmsetup status dmc | awk '{ print $8, $9, $10, $11 }' ;;
	writecache)
		# <err> <blocks> <free> <wb> <reads> <read hits> <writes>
		# <write hits uncommitted> <write hits committed> ...
		dmsetup status wc | awk '{ wh = $11 + $12; print $9, $8 - $9, wh, $10 - wh }' ;;
	*) echo "- - - -" ;;
	esac
}

# Dirty blocks left, in the system's own unit (0 = clean).
sys_dirty() {
	case $1 in
	dmb-*) dmsetup status dmb | awk '{ print $7 }' ;;
	bcache-*)
		awk '{ print ($1 + 0 == 0) ? 0 : 1 }' /sys/block/bcache0/bcache/dirty_data ;;
	dmcache-*) dmsetup status dmc | awk '{ print $14 }' ;;
	writecache) dmsetup status wc | awk '{ print $5 - $6 }' ;;
	*) echo 0 ;;
	esac
}

is_clean() { [ "$(sys_dirty "$1")" = 0 ]; }

sys_drain() {
	case $1 in
	dmb-*) dmsetup message dmb 0 flush ;;
	bcache-*)
		echo 0 >/sys/block/bcache0/bcache/writeback_percent
		DRAIN_WAIT=900 until_ok is_clean "$1" ;;
	dmcache-*)
		# The cleaner policy writes every dirty block back.
		local t
		t=$(dmsetup table dmc | sed 's/ smq / cleaner /')
		dmsetup suspend dmc
		dmsetup reload dmc --table "$t"
		dmsetup resume dmc
		DRAIN_WAIT=900 until_ok is_clean "$1" ;;
	writecache)
		dmsetup message wc 0 cleaner
		DRAIN_WAIT=900 until_ok is_clean "$1" ;;
	esac
}
