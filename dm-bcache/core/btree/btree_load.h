/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading the btree from the cache into memory (btree.h): from the root a
 * journal entry names, each node is read and parsed (bset.c); a leaf's
 * bsets become its keyset's sets, oldest first, so newer keys mask older
 * ones exactly as in the driver's merged view; an interior node's live
 * child at each position (children.c) is loaded below it.  Pointer gens
 * are applied to @gens as they are met (the recovery rule), so a freeing
 * key retires the node it replaced.  The caller checks the cache first;
 * a node that fails to parse stops the load with -EIO.
 */
#ifndef DM_BCACHE_CORE_BTREE_LOAD_H
#define DM_BCACHE_CORE_BTREE_LOAD_H

#include "btree/btree.h"
#include "format/geometry.h"

/*
 * Replace @t's (empty) root with the tree under @root at @level.  @gens
 * holds nbuckets generations, from the prio chain.  0 or -errno; on an
 * error @t has no root and may only be freed.
 */
int bch_btree_load(struct bch_btree *t, const struct bch_meta_io *io,
		   const struct bch_geom *g, const struct bch_key *root,
		   u32 level, u8 *gens);

#endif
