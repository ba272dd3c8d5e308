/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A btree leaf's keys in memory: a short log of sorted sets, oldest first,
 * as the bsets of the node on disk are.  Every set but the last is sealed
 * (written to disk, immutable) and has a pivot index for search; the last
 * takes inserts.  A newer set masks what it covers in older ones, so a
 * lookup asks the sets newest first.  When the log reaches
 * BCH_KEYSET_MAX_SETS the newest sets are merged into one in memory (the
 * node on disk keeps its bsets; core/btree/extents.c does the merging, so the
 * semantics are the checker's and the driver's).
 *
 * The pivot index of a sealed set holds the end position of every
 * BCH_KEYSET_PIVOT_EVERY'th key, packed into one u64 (inode above bit 44),
 * in Eytzinger order (the layout of bcache's auxiliary search trees: a
 * node's children at 2i and 2i + 1, so the first levels share cache
 * lines and the descent has no unpredictable branch); a search descends
 * it and then scans at most that many keys.  bench/core/run.sh measures
 * it against a plain binary search over the keys.  A set whose
 * positions do not pack is searched by binary search.
 */
#ifndef DM_BCACHE_CORE_KEYSET_H
#define DM_BCACHE_CORE_KEYSET_H

#include "btree/extents.h"

#define BCH_KEYSET_MAX_SETS	4
#define BCH_KEYSET_PIVOT_EVERY	4
#define BCH_KEYSET_MERGE_RATIO	16	/* see merge_from() in keyset.c */

struct bch_sset {
	struct bch_extents e;
	u64 *piv;		/* [1..nr_piv], Eytzinger order */
	u32 *piv_from;		/* the first key a pivot's run holds */
	u32 nr_piv;
};

struct bch_keyset {
	struct bch_sset set[BCH_KEYSET_MAX_SETS];
	u32 nr_sets;		/* >= 1; set[nr_sets - 1] takes inserts */
};

void bch_keyset_init(struct bch_keyset *ks);
void bch_keyset_free(struct bch_keyset *ks);

/* Insert @k into the open set.  0 or -ENOMEM (nothing changed). */
int bch_keyset_insert(struct bch_keyset *ks, const struct bch_key *k);

/*
 * Seal the open set (its keys are now on disk) and open an empty one,
 * merging the newest sets into one first when the log is full (only the
 * small ones: see merge_from() in keyset.c).
 */
int bch_keyset_seal(struct bch_keyset *ks);

/* Merge all sets into one open set, as a node rewrite does. */
int bch_keyset_compact(struct bch_keyset *ks);

/*
 * What lookups in @ks (of at least two sets) see, as one sorted set, left
 * in @out: the keys bch_keyset_compact() would keep, in one linear pass
 * per set, @ks unchanged.  @out and @tmp are the caller's buffers, emptied
 * here and grown as needed, so a caller that keeps them between calls
 * seldom allocates.  0 or -ENOMEM (@out then holds nothing of use).
 */
int bch_keyset_merged(const struct bch_keyset *ks, struct bch_extents *out,
		      struct bch_extents *tmp);

/*
 * Merge all sets into one open set keeping only the keys @keep accepts
 * (gc dropping stale pointers and invalidations: once merged, nothing
 * older remains for them to mask).  Returns the number dropped, or
 * -ENOMEM with nothing dropped.
 */
int bch_keyset_filter(struct bch_keyset *ks,
		      bool (*keep)(void *ctx, const struct bch_key *k),
		      void *ctx);

/*
 * Keys @ks would hold after bch_keyset_compact(), counted without merging
 * anything: the pieces of keys a walk by lookup sees (a key partly masked
 * by newer sets counts once per visible piece), so deciding whether two
 * leaves fit in one changes neither when they do not.
 */
u32 bch_keyset_count(const struct bch_keyset *ks);

/*
 * Split a leaf that grew too big: merge @ks, then move its keys from about
 * 3/5 on into @right (initialised here).  *@left_end gets the left half's
 * last key, whose position becomes the left node's key in the parent; the
 * right node keeps the old node's key.  -EINVAL for fewer than two keys.
 */
int bch_keyset_split(struct bch_keyset *ks, struct bch_keyset *right,
		     struct bch_key *left_end);

/*
 * Undo bch_keyset_split(): @right's keys go back after @ks's, and @right
 * is freed.  Cannot fail: @ks still has the room they took.
 */
void bch_keyset_unsplit(struct bch_keyset *ks, struct bch_keyset *right);

/*
 * What holds sector @sector of @inode: returns the newest key covering
 * it, or NULL for a gap.  *@next is set to the first sector after
 * @sector where the answer may change (the end of the key, or the start
 * of anything newer), so a caller walks a range extent by extent.
 */
const struct bch_key *bch_keyset_lookup(const struct bch_keyset *ks,
					u64 inode, u64 sector, u64 *next);

/* Keys in the open set (inserts since the last seal). */
static inline u32 bch_keyset_open_keys(const struct bch_keyset *ks)
{
	return ks->set[ks->nr_sets - 1].e.nr;
}

#endif
