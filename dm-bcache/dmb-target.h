/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bcache target's per-instance state, shared by the files that
 * implement the target: dmb-ctr.c (table line), dmb-main.c (I/O mapping,
 * suspend/resume, registration), dmb-status.c and dmb-message.c.
 *
 * Glossary:
 *   cache    the fast device (SSD) that holds cached data and metadata
 *   origin   the slow device whose data is cached
 *   data offset
 *            where the origin's data starts: 0 for a raw origin, the
 *            superblock's data_offset when the origin carries a mainline
 *            bcache backing superblock (see core/origin.h)
 *   bypass   an I/O sent to the origin without touching the cache
 */
#ifndef DM_BCACHE_TARGET_H
#define DM_BCACHE_TARGET_H

#include <linux/device-mapper.h>

#include "dmb-options.h"
#include "dmb-stats.h"
#include "core/origin.h"
#include "core/check.h"

#define DM_MSG_PREFIX "bcache"

/* Enough for every option once, each with a value, plus a mode keyword. */
#define DMB_MAX_OPT_ARGS (2 * DMB_NR_OPTS)

/* Metadata state, ordered by degradation (as dm-cache and dm-thin do). */
enum dmb_state {
	DMB_STATE_RW,
	DMB_STATE_RO,
	DMB_STATE_FAIL,
};

/* A device the constructor reads and writes metadata on, over dm-io. */
struct dmb_meta_dev {
	struct dm_io_client *client;
	struct block_device *bdev;
	struct bch_meta_io io;
};

struct dmb_cache {
	struct dm_target *ti;
	struct dm_dev *cache_dev;
	struct dm_dev *origin_dev;

	/* Option values and which of them the table line gave, in order. */
	u64 opt_val[DMB_NR_OPTS];
	u8 opt_order[DMB_NR_OPTS];
	unsigned int nr_opts_given;

	enum dmb_mode mode;		/* current; opt_val holds the table's */
	enum dmb_state state;
	bool needs_check;

	struct bch_origin_info origin_info;
	enum bch_origin_layout layout;
	sector_t data_offset;		/* origin sector of target sector 0 */
	unsigned int block_size;	/* sectors */

	/* The cache device: its superblock and what ctr found on it. */
	struct dmb_meta_dev cache_meta;
	struct dmb_meta_dev origin_meta;
	struct bch_sb cache_sb;
	bool formatted;			/* this ctr formatted the cache */
	u64 buckets_used;		/* metadata and live data, at ctr */

	struct dmb_stats stats;
};

/* dmb-ctr.c */
int dmb_ctr(struct dm_target *ti, unsigned int argc, char **argv);
void dmb_dtr(struct dm_target *ti);
bool dmb_opt_given(struct dmb_cache *dc, enum dmb_opt opt);

/* dmb-status.c */
void dmb_status(struct dm_target *ti, status_type_t type,
		unsigned int status_flags, char *result, unsigned int maxlen);

/* dmb-message.c */
int dmb_message(struct dm_target *ti, unsigned int argc, char **argv,
		char *result, unsigned int maxlen);

/* dmb-meta-io.c */
int dmb_meta_dev_init(struct dmb_meta_dev *m, struct block_device *bdev);
void dmb_meta_dev_exit(struct dmb_meta_dev *m);

/* dmb-cache-meta.c */
int dmb_cache_meta_open(struct dmb_cache *dc);

#endif
