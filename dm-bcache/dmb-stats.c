// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU I/O counters: allocation, summing and clearing.
 */
#include <linux/percpu.h>
#include <linux/string.h>

#include "dmb-stats.h"

int dmb_stats_init(struct dmb_stats *stats)
{
	stats->pcpu = alloc_percpu(struct dmb_counters);
	return stats->pcpu ? 0 : -ENOMEM;
}

void dmb_stats_exit(struct dmb_stats *stats)
{
	free_percpu(stats->pcpu);
	stats->pcpu = NULL;
}

void dmb_stats_sum(struct dmb_stats *stats, struct dmb_counters *sum)
{
	int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct dmb_counters *c = per_cpu_ptr(stats->pcpu, cpu);

		for (i = 0; i < DMB_NR_COUNTERS; i++)
			sum->c[i] += READ_ONCE(c->c[i]);
	}
}

void dmb_stats_clear(struct dmb_stats *stats)
{
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct dmb_counters *c = per_cpu_ptr(stats->pcpu, cpu);

		for (i = 0; i < DMB_NR_COUNTERS; i++)
			WRITE_ONCE(c->c[i], 0);
	}
}
