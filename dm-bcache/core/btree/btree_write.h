/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Persisting the in-memory btree (btree.h) on the cache, as the driver
 * does: a leaf whose image is current on disk gets the keys inserted since
 * as one more bset appended to it (node_io.c); a node that is new, that
 * split, whose bsets no longer fit, or an interior node whose children
 * moved, is written whole to a new bucket, and its parent is rewritten to
 * point there, up to the root.  Nothing written is ever overwritten in
 * place, so the tree the last journal entry names stays intact until the
 * next entry names the new root; the buckets the old images used are
 * handed back only then (bch_btree_writer.released), and so are those of
 * nodes coalescing removed (bch_btree.removed, taken over by each write).
 *
 * A full write drops stale keys and invalidations (keys without pointers)
 * from a leaf, which is also how gc shrinks the index.
 */
#ifndef DM_BCACHE_CORE_BTREE_WRITE_H
#define DM_BCACHE_CORE_BTREE_WRITE_H

#include "btree/btree.h"
#include "alloc/alloc.h"

struct bch_btree_writer {
	/*
	 * Changes lookups could see (a leaf's sets, a node's pointer) are
	 * made between excl(excl_ctx, true) and excl(excl_ctx, false); node
	 * images are written outside, so readers of the in-memory tree need
	 * not wait for the I/O.  NULL: the caller excludes readers already.
	 */
	void (*excl)(void *ctx, bool on);
	void *excl_ctx;
	const struct bch_meta_io *io;
	const struct bch_geom *g;
	struct bch_alloc *a;		/* buckets for new images */
	u64 *released;			/* of replaced or removed nodes */
	u32 nr_released, cap_released;
	u64 nodes_written;		/* whole images */
	u64 bsets_appended;
};

/*
 * Write every changed node of @t, first moving the buckets of the nodes
 * it removed onto @w->released.  On -ENOSPC (no READY bucket) what was
 * written stays written, and a call after the allocator is refilled goes
 * on from there.  0 or -errno.
 */
int bch_btree_write(struct bch_btree *t, struct bch_btree_writer *w);

/* Does the tree hold anything not yet on disk? */
bool bch_btree_dirty(const struct bch_btree *t);

#endif
