// SPDX-License-Identifier: GPL-2.0
/*
 * The bcache target's status: INFO counters, TABLE round trip, IMA.
 */
#include <linux/device-mapper.h>

#include "dmb-target.h"

static const char *const state_names[] = {
	[DMB_STATE_RW] = "rw",
	[DMB_STATE_RO] = "ro",
	[DMB_STATE_FAIL] = "fail",
};

/*
 * STATUSTYPE_INFO, one line, fields in this fixed order (docs/dm-bcache.rst
 * has the same table).  Fields a later version fills are 0 until then.
 *
 *  1 <block size>                 sectors
 *  2 <bucket size>                sectors
 *  3 <used buckets>/<total buckets>  used: holding metadata or live data
 *  4 <dirty sectors>              as of the last gc, plus dirty writes
 *                                 since, less what was written back
 *  5 <read hits>  6 <read misses>  7 <write hits>  8 <write misses>
 *  9 <bypassed reads> 10 <bypassed writes>       (I/O counts)
 * 11 <writeback rate>             sectors per second
 * 12 <cache mode>                 writethrough|writeback|writearound|passthrough
 * 13 <metadata state>             rw|ro|fail
 * 14 <needs_check>                needs_check|-
 * 15 <origin layout>              raw|backing
 * 16 <data offset>                sectors
 * 17 <#features> <feature>*
 *    <#core args> <core arg>*     "<name> <value>" pairs currently in force
 *    <#counters> <counter>*       "<name> <value>" pairs: bypass reasons
 *                                 (why_names), then gc_runs, reclaims,
 *                                 commits, cache_errors, deferred
 *                                 (writes parked behind a write-back
 *                                 copy) of the index, gc_active (1 while a
 *                                 gc pass is under way), written_back
 *                                 (sectors), writeback_errors (copies
 *                                 that failed), writeback_full (1 while
 *                                 copying flat out), fills_pending
 *                                 (read misses whose fill is not yet
 *                                 indexed or dropped), lock_waits (bios
 *                                 map waited for the index lock for)
 */
static const char *const why_names[] = {
	[DMB_WHY_SEQUENTIAL] = "bypass_sequential",
	[DMB_WHY_CONGESTED] = "bypass_congested",
	[DMB_WHY_MODE] = "bypass_mode",
	[DMB_WHY_BUSY] = "bypass_busy",
	[DMB_WHY_NOSPACE] = "bypass_nospace",
	[DMB_WHY_FAILED] = "bypass_failed",
};

static void emit_info(struct dmb_cache *dc, char *result, unsigned int maxlen)
{
	struct dmb_index *ix = dc->ix;
	struct dmb_counters c;
	unsigned int sz = 0, i;

	dmb_stats_sum(&dc->stats, &c);
	DMEMIT("%u %u %llu/%llu %llu ", dc->block_size,
	       dc->cache_sb.bucket_size, bch_alloc_used(&dc->ix->set.a),
	       dc->cache_sb.nbuckets, bch_set_dirty_sectors(&ix->set));
	DMEMIT("%llu %llu %llu %llu ",
	       c.c[DMB_READ_HIT], c.c[DMB_READ_MISS],
	       c.c[DMB_WRITE_HIT], c.c[DMB_WRITE_MISS]);
	DMEMIT("%llu %llu %llu ",
	       c.c[DMB_BYPASS_READ], c.c[DMB_BYPASS_WRITE],
	       READ_ONCE(ix->wb.rate));
	DMEMIT("%s %s %s %s %llu ",
	       dmb_mode_names[READ_ONCE(dc->mode)], state_names[READ_ONCE(dc->ix->state)],
	       dc->ix->needs_check ? "needs_check" : "-",
	       bch_origin_layout_name(dc->layout),
	       (unsigned long long)dc->data_offset);
	DMEMIT("0 2 origin_layout %s",
	       bch_origin_request_names[dc->opt_val[DMB_OPT_ORIGIN_LAYOUT]]);
	DMEMIT(" %u", (DMB_NR_COUNTERS - DMB_WHY_SEQUENTIAL + 11) * 2);
	for (i = DMB_WHY_SEQUENTIAL; i < DMB_NR_COUNTERS; i++)
		DMEMIT(" %s %llu", why_names[i], c.c[i]);
	DMEMIT(" gc_runs %llu reclaims %llu commits %llu cache_errors %llu",
	       READ_ONCE(ix->set.gcs), READ_ONCE(ix->set.refills),
	       READ_ONCE(ix->set.commits),
	       (u64)atomic64_read(&ix->cache_errors));
	DMEMIT(" deferred %llu gc_active %u",
	       (u64)atomic64_read(&ix->nr_deferred),
	       READ_ONCE(ix->set.gc_running) ? 1 : 0);
	DMEMIT(" written_back %llu writeback_errors %llu writeback_full %u",
	       (u64)atomic64_read(&ix->wb.written),
	       (u64)atomic64_read(&ix->wb.errors), dmb_wb_full(ix) ? 1 : 0);
	DMEMIT(" fills_pending %d lock_waits %llu",
	       atomic_read(&ix->fills_pending),
	       (u64)atomic64_read(&ix->lock_waits));
}

/*
 * STATUSTYPE_TABLE: the table line as loaded, options in the order given,
 * except that the mode keyword shows the mode now in force (appended if
 * the table had none and a message changed it), so a reload keeps it.
 */
static void emit_table(struct dmb_cache *dc, char *result, unsigned int maxlen)
{
	enum dmb_mode mode = READ_ONCE(dc->mode);
	bool add_mode = !dmb_opt_given(dc, DMB_OPT_MODE) &&
		mode != dmb_opts[DMB_OPT_MODE].def;
	unsigned int sz = 0, nr_args = 0, i;
	char buf[24];

	for (i = 0; i < dc->nr_opts_given; i++)
		nr_args += dc->opt_order[i] == DMB_OPT_MODE ? 1 : 2;
	DMEMIT("%s %s %u", dc->cache_dev->name, dc->origin_dev->name,
	       nr_args + add_mode);

	for (i = 0; i < dc->nr_opts_given; i++) {
		enum dmb_opt opt = dc->opt_order[i];

		if (opt == DMB_OPT_MODE) {
			DMEMIT(" %s", dmb_mode_names[mode]);
			continue;
		}
		dmb_opt_format_value(opt, dc->opt_val[opt], buf, sizeof(buf));
		DMEMIT(" %s %s", dmb_opts[opt].name, buf);
	}
	if (add_mode)
		DMEMIT(" %s", dmb_mode_names[mode]);
}

static void emit_ima(struct dmb_cache *dc, char *result, unsigned int maxlen)
{
	unsigned int sz = 0;

	DMEMIT_TARGET_NAME_VERSION(dc->ti->type);
	DMEMIT(",cache_dev=%s,origin_dev=%s,cache_mode=%s,state=%s",
	       dc->cache_dev->name, dc->origin_dev->name,
	       dmb_mode_names[READ_ONCE(dc->mode)], state_names[READ_ONCE(dc->ix->state)]);
	DMEMIT(",origin_layout=%s,data_offset=%llu,block_size=%u;",
	       bch_origin_layout_name(dc->layout),
	       (unsigned long long)dc->data_offset, dc->block_size);
}

void dmb_status(struct dm_target *ti, status_type_t type,
		unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct dmb_cache *dc = ti->private;

	switch (type) {
	case STATUSTYPE_INFO:
		emit_info(dc, result, maxlen);
		break;
	case STATUSTYPE_TABLE:
		emit_table(dc, result, maxlen);
		break;
	case STATUSTYPE_IMA:
		emit_ima(dc, result, maxlen);
		break;
	}
}
