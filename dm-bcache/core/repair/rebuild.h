/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rebuild: a cache set written from what salvage.h saved.  The metadata
 * is written afresh (mkfs/format.h's base: a prio chain recording the
 * salvaged bucket generations, the UUID table as read, an empty root,
 * a journal holding one entry newer than any the old journal held), in
 * buckets no salvaged key points into; then the set is opened as the
 * target opens one, the salvaged keys go into its index in the order
 * the driver would have applied them, and the first commit writes the
 * tree.  The caller's data hook sees every piece of live data the new
 * index maps, to copy it (a repaired copy on another device) or just to
 * read it (in place); what it cannot read is taken out of the index
 * (invalidated, so a read goes to the origin) and, when dirty, listed as
 * lost.  Nothing of the set is written to buckets holding live data.
 *
 * Used by bcache_repair only.  Single-threaded.
 */
#ifndef DM_BCACHE_CORE_REBUILD_H
#define DM_BCACHE_CORE_REBUILD_H

#include "repair/salvage.h"

/* Sectors [start, end) of an origin (key sectors). */
struct bch_range {
	u64 start, end;
};

#define BCH_REBUILD_MAX_BAD	64	/* bad runs one data call returns */

struct bch_rebuild_ops {
	void *ctx;
	/*
	 * Live extent @k (one pointer, current): copy or read its data.
	 * Put the origin sectors that could not be read in @bad (at most
	 * BCH_REBUILD_MAX_BAD runs, in order; merge when there are more)
	 * and return their count, or a negative errno to stop the rebuild
	 * (the device being written failed).
	 */
	int (*data)(void *ctx, const struct bch_key *k, struct bch_range *bad);
};

struct bch_rebuild_result {
	u64 keys;			/* live extents the new index maps */
	u64 sectors;			/* their data */
	u64 dirty_sectors;
	u64 unreadable;			/* sectors taken out as unreadable */
	u64 nodes;			/* in the new tree */
};

/*
 * Write the set salvaged in @sv to @out, a device of the same geometry
 * whose superblock is, or will be, @sv->sb.  Unreadable dirty data is
 * added to @sv's lost list.  0 or -errno (-ENOSPC: no room for the new
 * metadata besides the live data).  The superblock is not written.
 */
int bch_rebuild_write(struct bch_salvage *sv, const struct bch_meta_io *out,
		      const struct bch_rebuild_ops *ops,
		      struct bch_rebuild_result *res);

#endif
