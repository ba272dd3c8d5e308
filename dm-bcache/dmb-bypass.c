// SPDX-License-Identifier: GPL-2.0
/*
 * The bypass policy: which misses are not filled and which writes are not
 * cached, as bcache decides it.
 *
 *   sequential   an I/O that continues a stream (one that began where
 *                an earlier I/O ended) once the stream has reached
 *                sequential_cutoff sectors: large sequential transfers
 *                gain nothing from an SSD and would evict what does.
 *   congested    the cache device's recent latency (a moving average of
 *                its reads, respectively writes) is above
 *                congested_{read,write}_threshold_us: the origin is then
 *                the faster way.
 *
 * 0 disables each.  A bypassed read still gets what the cache holds; only
 * its miss is not filled.  A bypassed write goes around the cache.
 * Streams are a small table shared by the target, replaced oldest first;
 * the latencies belong to the cache device's index.
 */
#include <linux/jiffies.h>

#include "dmb-target.h"

/* A stream idle this long starts over. */
#define DMB_STREAM_IDLE		(5 * HZ)

/* Add [sector, sector + sectors) to its stream; the stream's length. */
static u64 stream_run(struct dmb_cache *dc, sector_t sector, u32 sectors)
{
	struct dmb_stream *s, *oldest = &dc->streams[0];
	unsigned long now = jiffies;
	u64 run;
	u32 i;

	spin_lock(&dc->stream_lock);
	for (i = 0; i < DMB_STREAMS; i++) {
		s = &dc->streams[i];
		if (s->end == sector && time_before(now, s->last + DMB_STREAM_IDLE))
			break;
		if (time_before(s->last, oldest->last))
			oldest = s;
	}
	if (i == DMB_STREAMS) {
		s = oldest;
		s->run = 0;
	}
	s->end = sector + sectors;
	s->last = now;
	s->run += sectors;
	run = s->run;
	spin_unlock(&dc->stream_lock);
	return run;
}

enum dmb_counter dmb_bypass_why(struct dmb_cache *dc, sector_t sector,
				u32 sectors, bool write)
{
	u64 cutoff = READ_ONCE(dc->opt_val[DMB_OPT_SEQ_CUTOFF]);
	u64 limit = READ_ONCE(dc->opt_val[write ? DMB_OPT_CONG_WRITE :
						   DMB_OPT_CONG_READ]);

	if (cutoff && stream_run(dc, sector, sectors) >= cutoff)
		return DMB_WHY_SEQUENTIAL;
	if (limit && atomic_read(&dc->ix->latency_us[write]) > limit)
		return DMB_WHY_CONGESTED;
	return DMB_NR_COUNTERS;
}

void dmb_bypass_count(struct dmb_cache *dc, bool write, enum dmb_counter why)
{
	dmb_stats_inc(&dc->stats, write ? DMB_BYPASS_WRITE : DMB_BYPASS_READ);
	dmb_stats_inc(&dc->stats, why);
}

/* A cache I/O took @ns: fold it into the moving average (1/8 weight). */
void dmb_note_latency(struct dmb_index *ix, bool write, u64 ns)
{
	atomic_t *avg = &ix->latency_us[write];
	int us = min_t(u64, ns / NSEC_PER_USEC, INT_MAX / 2);
	int old = atomic_read(avg);

	/* Racy on purpose: a lost update only delays the average. */
	atomic_set(avg, old - old / 8 + us / 8);
}
