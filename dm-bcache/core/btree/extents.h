/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sorted run of extents with bcache's overwrite semantics: inserting an
 * extent trims, splits or drops every older extent it overlaps, so the run
 * stays sorted by (inode, offset) with no two extents overlapping.  A
 * trimmed extent's pointers move with its start (ondisk-format 5.5).
 *
 * This is the one implementation of "newer keys mask older ones": the
 * checker uses it to merge a leaf's bsets, and the btree's leaves build on
 * it.  Keys without pointers (holes, invalidations) are extents like any
 * other: they mask what they cover.  Zero-size keys are never stored.
 */
#ifndef DM_BCACHE_CORE_EXTENTS_H
#define DM_BCACHE_CORE_EXTENTS_H

#include "format/bkey.h"

struct bch_extents {
	struct bch_key *k;
	u32 nr;
	u32 cap;
};

static inline void bch_extents_init(struct bch_extents *e)
{
	e->k = NULL;
	e->nr = 0;
	e->cap = 0;
}

void bch_extents_free(struct bch_extents *e);

/*
 * Insert @k (size > 0, size <= offset), newest: what it overlaps is cut
 * away.  Returns 0, or -ENOMEM with @e unchanged.
 */
int bch_extents_insert(struct bch_extents *e, const struct bch_key *k);

/*
 * @out (empty) becomes @old with @new laid over it: what @new covers is
 * @new's, the rest @old's, as if every key of @new were inserted into
 * @old, but in one pass over both.  0 or -ENOMEM.
 */
int bch_extents_overlay(struct bch_extents *out, const struct bch_extents *old,
			const struct bch_extents *new);

/*
 * Index of the first extent ending after sector @sector of @inode (the one
 * holding it, or the next one), or e->nr if none.
 */
u32 bch_extents_seek(const struct bch_extents *e, u64 inode, u64 sector);

/* Drop the first @n sectors of @k / keep only up to @end: pointers follow. */
void bch_key_cut_front(struct bch_key *k, u64 new_start);
void bch_key_cut_back(struct bch_key *k, u64 new_end);

#endif
