/* SPDX-License-Identifier: GPL-2.0 */
/*
 * I/O counters shown in the status line.  Per-CPU so that counting costs
 * the map path no shared cache line; summed only when status is read.
 * clear_stats zeroes them without stopping I/O, so an increment racing a
 * clear may survive it: the counters are statistics, not accounting.
 */
#ifndef DM_BCACHE_STATS_H
#define DM_BCACHE_STATS_H

#include <linux/percpu.h>

enum dmb_counter {
	DMB_READ_HIT,
	DMB_READ_MISS,
	DMB_WRITE_HIT,
	DMB_WRITE_MISS,
	DMB_BYPASS_READ,
	DMB_BYPASS_WRITE,
	/* why reads and writes were bypassed (dmb-bypass.c) */
	DMB_WHY_SEQUENTIAL,
	DMB_WHY_CONGESTED,
	DMB_WHY_MODE,		/* writearound, passthrough, read-only */
	DMB_WHY_BUSY,		/* none since map waits for the lock; kept */
	DMB_WHY_NOSPACE,	/* no cache space ready */
	DMB_WHY_FAILED,		/* the cache's metadata failed */
	DMB_NR_COUNTERS
};

struct dmb_counters {
	u64 c[DMB_NR_COUNTERS];
};

struct dmb_stats {
	struct dmb_counters __percpu *pcpu;
};

int dmb_stats_init(struct dmb_stats *stats);
void dmb_stats_exit(struct dmb_stats *stats);
void dmb_stats_sum(struct dmb_stats *stats, struct dmb_counters *sum);
void dmb_stats_clear(struct dmb_stats *stats);

static inline void dmb_stats_inc(struct dmb_stats *stats, enum dmb_counter c)
{
	this_cpu_inc(stats->pcpu->c[c]);
}

#endif
