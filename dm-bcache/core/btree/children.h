/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which child an interior node points at, position by position.  A node
 * can hold several pointers at one position (the child it replaced and
 * the replacement, until the node is rewritten); at most one is live
 * (valid, on this device, not stale) and that one is the child.  Keys at
 * the zero position are "freeing keys" that retire replaced nodes and
 * lead nowhere (ondisk-format 5.5, 5.6).  The checker and the loader both
 * choose children with this.
 */
#ifndef DM_BCACHE_CORE_CHILDREN_H
#define DM_BCACHE_CORE_CHILDREN_H

#include "format/bkey.h"

struct bch_ikey {
	struct bch_key k;
	u32 order;		/* position in the node: ties keep it */
};

struct bch_ipick {
	const struct bch_key *live;	/* the child, or NULL */
	const struct bch_key *second;	/* another live key here: damage */
	const struct bch_key *stale;	/* a key here that is not live */
	bool freeing;			/* the zero position */
};

/* Sort by position, keeping node order among equal positions. */
void bch_ikeys_sort(struct bch_ikey *v, u32 n);

/*
 * Judge the keys at v[i]'s position (v sorted); @live says whether a
 * valid key's pointer is current.  Returns the index after them.
 */
u32 bch_ikeys_pick(const struct bch_ikey *v, u32 n, u32 i,
		   const struct bch_key_geom *kg,
		   bool (*live)(void *ctx, const struct bch_key *k), void *ctx,
		   struct bch_ipick *p);

#endif
