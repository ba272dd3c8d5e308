#!/usr/bin/bash
# Runs inside the benchmark VM (bench/run.sh boots it): every workload of
# the matrix on every system it applies to, ROUNDS times, the systems
# interleaved (A B C A B C ...) so that drift hits them equally, each set
# up fresh for each run.  Results go to /tmp/res, written at the end as a
# tar stream onto $OUT_DEV for the host (bench/report.py reads them):
#
#   runs.csv        workload,variant,system,round,json,rh,rm,wh,wm,busy,hz
#                   (counter deltas over the measured run; busy = CPU
#                   jiffies not idle, all CPUs, over the run)
#   *.json          fio's output of each run
#   w2-*.series     W2: "seconds rh rm wh wm" each second
#   w4-*_iops.1.log W4: fio's IOPS each second
#   w8.csv          system,round,mib,seconds,dirty_at_start (origin: the
#                   HDD written sequentially through dm-linear, the
#                   yardstick; dirty_at_start in the system's own unit)
#   footprint.csv   system,used_kib,slab_kib,vmalloc_kib,cache_written,
#                   user_written (used: all kernel memory, see used_kib())
export PATH=/usr/local/bin:/usr/sbin:/usr/bin
export DM_DISABLE_UDEV=1
set -u

quick=0
for arg in $(cat /proc/cmdline); do
	case $arg in dmb.quick=*) quick=${arg#dmb.quick=} ;; esac
done

SSD=/dev/ram0
HDD_DISK=/dev/vda
OUT_DEV=/dev/vdb
HDD=/dev/mapper/hdd
CACHE_MIB=256
HDD_DELAY_MS=2
RES=/tmp/res
FIO=/bench/fio
if [ "$quick" = 1 ]; then
	ROUNDS=3 RUNTIME=2 W1_MIB=32 W2_TIME=10 W4_TIME=8 W8_MIB=16
else
	ROUNDS=5 RUNTIME=5 W1_MIB=64 W2_TIME=30 W4_TIME=30 W8_MIB=64
fi
. /bench/systems.sh

mkdir -p $RES
modprobe brd rd_nr=1 rd_size=$((CACHE_MIB * 1024)) max_part=0
for m in dm-delay dm-cache dm-cache-smq dm-writecache bcache dm-bcache; do
	modprobe $m
done
dmsetup create hdd --table "0 $(blockdev --getsz $HDD_DISK) delay $HDD_DISK 0 $HDD_DELAY_MS $HDD_DISK 0 $HDD_DELAY_MS"
echo "workload,variant,system,round,json,rh,rm,wh,wm,busy,hz" >$RES/runs.csv
echo "system,round,mib,seconds,dirty_at_start" >$RES/w8.csv
echo "cache_mib=$CACHE_MIB hdd_delay_ms=$HDD_DELAY_MS rounds=$ROUNDS runtime_s=$RUNTIME quick=$quick" >$RES/params.txt
hz=100		# USER_HZ: /proc/stat's unit on x86

uptime_s() { cut -d' ' -f1 /proc/uptime; }

busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# delta A B: field-wise B - A of two "rh rm wh wm" lines ("-" stays).
delta() {
	local i out=() a=($1) b=($2)
	[ ${#a[@]} -eq 4 ] && [ ${#b[@]} -eq 4 ] || { echo "- - - -"; return; }
	for i in 0 1 2 3; do
		if [ "${a[$i]}" = - ]; then out+=(-); else out+=($((b[i] - a[i]))); fi
	done
	echo "${out[*]}"
}

# measure WORKLOAD VARIANT SYSTEM ROUND JOB [VAR=VALUE...]: one fio run on
# $DEV with counters and CPU around it.
measure() {
	local w=$1 v=$2 s=$3 r=$4 job=$5 c0 c1 b0 b1 json
	shift 5
	json=$w-$v-$s-$r.json
	c0=$(sys_counts "$s")
	b0=$(busy_jiffies)
	# shellcheck disable=SC2086
	env DEV="$DEV" "$@" fio --eta=never --output-format=json --output=$RES/$json \
		${FIO_EXTRA:-} $FIO/$job ||
		echo "bench: fio failed: $w $v $s $r" >&2
	b1=$(busy_jiffies)
	c1=$(sys_counts "$s")
	echo "$w,$v,$s,$r,$json,$(delta "$c0" "$c1" | tr ' ' ','),$((b1 - b0)),$hz" >>$RES/runs.csv
}

# Read a region until the system serves it from the cache: passes that
# read each 4k block of it once, in random order (a bcache caches the
# misses; dm-cache's smq promotes blocks hit again), until a pass reads at
# least 95% hits, 6 passes at most.
warm_reads() {	# warm_reads SYSTEM MIB
	local s=$1 mib=$2 i c0 c1
	for i in 1 2 3 4 5 6; do
		c0=$(sys_counts "$s")
		fio --eta=never --name=warm --filename="$DEV" --ioengine=libaio --direct=1 \
			--rw=randread --bs=4k --size=${mib}M --iodepth=16 \
			--output=/dev/null
		c1=$(sys_counts "$s")
		set -- $(delta "$c0" "$c1")
		[ "$1" = - ] && return 0
		[ $(($1 + $2)) -gt 0 ] && [ $(($1 * 100 / ($1 + $2))) -ge 95 ] && return 0
	done
}

round_robin() {	# round_robin WORKLOAD FUNCTION SYSTEM...
	local w=$1 fn=$2 r s
	shift 2
	for r in $(seq "$ROUNDS"); do
		for s in "$@"; do
			echo "bench: $w round $r $s"
			sys_up "$s" || {
				echo "bench: $s did not come up" >&2
				sys_down "$s" 2>/dev/null
				continue
			}
			"$fn" "$s" "$r"
			sys_down "$s"
		done
	done
}

w1() {
	warm_reads "$1" $W1_MIB
	measure W1 qd1 "$1" "$2" randread.fio SIZE=${W1_MIB}M QD=1 RUNTIME=$RUNTIME
	measure W1 qd32 "$1" "$2" randread.fio SIZE=${W1_MIB}M QD=32 RUNTIME=$RUNTIME
}

# W2: from cold, sampling the counters each second.
w2() {
	local s=$1 r=$2 t t0
	(
		t0=$(uptime_s)
		for t in $(seq "$W2_TIME"); do
			sleep 1
			echo "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { print b - a }') $(sys_counts "$s")"
		done
	) >$RES/w2-$s-$r.series &
	measure W2 zipf "$s" "$r" zipf.fio SIZE=$((CACHE_MIB * 4))M QD=8 RUNTIME=$W2_TIME
	wait
}

w3() {
	measure W3 qd1 "$1" "$2" randwrite.fio SIZE=64M QD=1 RUNTIME=$RUNTIME
	measure W3 qd32 "$1" "$2" randwrite.fio SIZE=64M QD=32 RUNTIME=$RUNTIME
}

w4() {
	FIO_EXTRA="--write_iops_log=$RES/w4-$1-$2 --write_lat_log=$RES/w4-$1-$2 --log_avg_msec=1000" \
		measure W4 sustained "$1" "$2" randwrite.fio \
		SIZE=$((CACHE_MIB * 4))M QD=16 RUNTIME=$W4_TIME
}

w5() {
	measure W5 read "$1" "$2" seq.fio SIZE=256M QD=4 RW=read RUNTIME=$RUNTIME
	measure W5 write "$1" "$2" seq.fio SIZE=256M QD=4 RW=write RUNTIME=$RUNTIME
}

w6() {
	measure W6 mixed "$1" "$2" mixed.fio SIZE=$((CACHE_MIB * 4))M QD=16 RUNTIME=$RUNTIME
}

w7() {
	measure W7 fdatasync "$1" "$2" fsync.fio SIZE=64M RUNTIME=$RUNTIME
}

# W8: W8_MIB of 4k random writes made dirty, then the time to clean them.
w8() {
	local s=$1 r=$2 t0 t1 dirty=-
	if [ "$s" = linear-hdd ]; then
		t0=$(uptime_s)
		dd if=/dev/zero of="$DEV" bs=1M count=$W8_MIB oflag=direct status=none
		t1=$(uptime_s)
	else
		# bcache sleeps writeback_delay (30 s) after each pass.
		case $s in bcache-*) echo 0 >/sys/block/bcache0/bcache/writeback_delay ;; esac
		env DEV="$DEV" SIZE=${W8_MIB}M fio --eta=never --name=dirty --filename="$DEV" \
			--ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
			--size=${W8_MIB}M --iodepth=32 --randrepeat=0 --output=/dev/null
		dirty=$(sys_dirty "$s")
		t0=$(uptime_s)
		sys_drain "$s"
		t1=$(uptime_s)
	fi
	echo "$s,$r,$W8_MIB,$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'),$dirty" >>$RES/w8.csv
}

READ_CACHES="dmb-wt bcache-wt dmcache-wt"
WB_CACHES="dmb-wb bcache-wb dmcache-wb writecache"
# shellcheck disable=SC2086
{
round_robin W1 w1 raw-ssd linear-ssd $READ_CACHES
round_robin W2 w2 $READ_CACHES
round_robin W3 w3 linear-ssd $WB_CACHES
round_robin W4 w4 linear-hdd $WB_CACHES
round_robin W5 w5 raw-hdd linear-hdd dmb-wt dmb-wb bcache-wt bcache-wb dmcache-wt writecache
round_robin W6 w6 linear-hdd $WB_CACHES
round_robin W7 w7 linear-ssd linear-hdd dmb-wt $WB_CACHES
round_robin W8 w8 linear-hdd $WB_CACHES
}

# Kernel memory in use, KiB: all but free memory and the page cache.
# Slab and vmalloc alone miss memory taken straight from the page
# allocator (bcache's btree node buffers), so both systems are measured
# this way; the two are kept for the breakdown.
used_kib() {
	awk '/^(MemTotal|MemFree|Buffers|Cached):/ { v[$1] = $2 }
	     END { print v["MemTotal:"] - v["MemFree:"] - v["Buffers:"] - v["Cached:"] }' /proc/meminfo
}

meminfo_kib() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }

# Footprint: the kernel memory the system holds once 3/4 of its cache
# holds data (written through, 4k random writes, each block once), and
# the bytes it wrote to the cache device for it (the SSD seen through
# dm-linear here, so that its writes are counted).  The RAM disk is
# written whole first, so that its own pages are all there before.
# The memory is what tearing the system down gives back: measured with
# the system up and filled, then again once it is down, with nothing
# else running in between.  A before/after-setup difference instead
# spans the fill, whose own allocations (fio, page cache, reclaimable
# slab the drop does not fully return) came and went: it once read
# -55 MiB per GiB.
footprint() {
	local s=$1 u1 m1 v1 u2 m2 v2 w0 w1 user=$((CACHE_MIB * 3 / 4)) ssd=$SSD stat
	dd if=/dev/zero of="$SSD" bs=1M oflag=direct status=none
	dmsetup create ssdlin --table "0 $(blockdev --getsz $SSD) linear $SSD 0"
	SSD=/dev/mapper/ssdlin
	stat=/sys/block/dm-$(dmsetup info -c --noheadings -o minor ssdlin)/stat
	w0=$(awk '{ print $7 }' "$stat")
	sys_up "$s"
	fio --eta=never --name=fill --filename="$DEV" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --size=${user}M --iodepth=16 --output=/dev/null
	sync
	echo 3 >/proc/sys/vm/drop_caches
	u1=$(used_kib) m1=$(meminfo_kib Slab) v1=$(meminfo_kib VmallocUsed)
	sys_down "$s"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	u2=$(used_kib) m2=$(meminfo_kib Slab) v2=$(meminfo_kib VmallocUsed)
	w1=$(awk '{ print $7 }' "$stat")
	dmsetup remove --retry ssdlin
	SSD=$ssd
	# less the MiB sys_up zeroed
	echo "$s,$((u1 - u2)),$((m1 - m2)),$((v1 - v2)),$(( (w1 - w0) * 512 - 1048576 )),$((user * 1048576))" >>$RES/footprint.csv
}
echo "system,used_kib,slab_kib,vmalloc_kib,cache_written,user_written" >$RES/footprint.csv
footprint dmb-wt
footprint bcache-wt

dmsetup remove hdd
cp /proc/version $RES/kernel.txt
tar -cf $OUT_DEV -C $RES .
sync
echo "bench: done"
