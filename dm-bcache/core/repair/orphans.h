/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Orphaned btree nodes: nodes that still verify in buckets the salvage's
 * walk did not reach, because a node above them (or the root) is
 * damaged.  Some are the lost part of the tree, others older copies of
 * nodes the driver rewrote and freed but never reused; a node does not
 * say which (mainline writes random node seqs), nor what range its
 * parent gave it.
 *
 * So they only add to ranges already listed as lost, and only dirty
 * data: the one copy of writes the origin never got, as the salvage
 * keeps from a damaged leaf's valid bsets.  A dirty extent is kept when
 * it lies inside a listed range (with the journal lost, anywhere: see
 * salvage_headless()), is live by the prio chain's gens, and
 * no other orphan maps any of its sectors differently (then which one is
 * newer is unknown, and both are left out).  The ranges stay listed.
 *
 * Used by bcache_repair only, through bch_salvage_read().  Not
 * thread-safe: the caller owns the salvage.
 */
#ifndef DM_BCACHE_CORE_ORPHANS_H
#define DM_BCACHE_CORE_ORPHANS_H

#include "repair/salvage.h"

/*
 * Scan every bucket not marked in @visited (one byte per bucket, the
 * nodes the walk read) for btree nodes, and put the dirty extents they
 * give, by the rule above, in front of sv->keys (the keys applied first,
 * so the tree's and the journal's win).  Counts in sv->orphan_*.  0 or
 * -ENOMEM; read errors skip the bucket.
 */
int bch_orphans_keep(struct bch_salvage *sv, const struct bch_meta_io *io,
		     const u8 *visited);

#endif
