// SPDX-License-Identifier: GPL-2.0
/* A leaf's keys in memory as a log of sorted sets; see keyset.h. */
#include "btree/keyset.h"
#include "util/array.h"

void bch_keyset_init(struct bch_keyset *ks)
{
	memset(ks, 0, sizeof(*ks));
	ks->nr_sets = 1;
}

static void free_pivots(struct bch_sset *s)
{
	bch_free(s->piv);
	bch_free(s->piv_from);
	s->piv = NULL;
	s->piv_from = NULL;
	s->nr_piv = 0;
}

static void sset_free(struct bch_sset *s)
{
	bch_extents_free(&s->e);
	free_pivots(s);
}

void bch_keyset_free(struct bch_keyset *ks)
{
	u32 i;

	for (i = 0; i < ks->nr_sets; i++)
		sset_free(&ks->set[i]);
	bch_keyset_init(ks);
}

int bch_keyset_insert(struct bch_keyset *ks, const struct bch_key *k)
{
	return bch_extents_insert(&ks->set[ks->nr_sets - 1].e, k);
}

/* Positions packed into one u64 for the pivots; false when they do not fit. */
#define PACK_OFFSET_BITS	44

static bool pack(u64 inode, u64 offset, u64 *packed)
{
	if (inode >= 1ULL << (64 - PACK_OFFSET_BITS) ||
	    offset >= 1ULL << PACK_OFFSET_BITS)
		return false;
	*packed = inode << PACK_OFFSET_BITS | offset;
	return true;
}

/*
 * Lay pivots [j, ...) into the Eytzinger array from @slot in order:
 * pivot j is the end of key (j + 1) * EVERY - 1.  Returns the next pivot.
 */
static u32 lay_pivots(struct bch_sset *s, u32 j, u32 slot)
{
	const struct bch_key *k;

	if (slot > s->nr_piv)
		return j;
	j = lay_pivots(s, j, 2 * slot);
	k = &s->e.k[(j + 1) * BCH_KEYSET_PIVOT_EVERY - 1];
	pack(bch_key_inode(k), k->low, &s->piv[slot]);
	s->piv_from[slot] = j * BCH_KEYSET_PIVOT_EVERY;
	return lay_pivots(s, j + 1, 2 * slot + 1);
}

static int build_pivots(struct bch_sset *s)
{
	u32 n = s->e.nr / BCH_KEYSET_PIVOT_EVERY, i;
	u64 packed;

	free_pivots(s);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		const struct bch_key *k =
			&s->e.k[(i + 1) * BCH_KEYSET_PIVOT_EVERY - 1];

		if (!pack(bch_key_inode(k), k->low, &packed))
			return 0;	/* binary search, unpacked */
	}
	s->piv = bch_zalloc((size_t)(n + 1) * sizeof(*s->piv));
	s->piv_from = bch_zalloc((size_t)(n + 1) * sizeof(*s->piv_from));
	if (!s->piv || !s->piv_from) {
		free_pivots(s);
		return -ENOMEM;
	}
	s->nr_piv = n;
	lay_pivots(s, 0, 1);
	return 0;
}

/* What lookups see in sets @from.. of @ks, into @out (see bch_keyset_merged()). */
static int merge_sets(const struct bch_keyset *ks, u32 from,
		      struct bch_extents *out, struct bch_extents *tmp)
{
	const struct bch_extents *older = &ks->set[from].e;
	struct bch_extents *to;
	u32 i;

	/* Oldest first, each newer set laid over what the older ones hold. */
	for (i = from + 1; i < ks->nr_sets; i++) {
		/* Alternating, so that the last overlay lands in @out. */
		to = (ks->nr_sets - 1 - i) & 1 ? tmp : out;
		to->nr = 0;
		if (bch_extents_overlay(to, older, &ks->set[i].e))
			return -ENOMEM;
		older = to;
	}
	return 0;
}

int bch_keyset_merged(const struct bch_keyset *ks, struct bch_extents *out,
		      struct bch_extents *tmp)
{
	return merge_sets(ks, 0, out, tmp);
}

/*
 * Sets @from.. (two or more) become one open set in their place, what
 * lookups see unchanged: a newer set masks the older ones either way.
 */
static int merge_newest(struct bch_keyset *ks, u32 from)
{
	struct bch_extents all, tmp;
	u32 i;
	int r;

	bch_extents_init(&all);
	bch_extents_init(&tmp);
	r = merge_sets(ks, from, &all, &tmp);
	bch_extents_free(&tmp);
	if (r) {
		bch_extents_free(&all);
		return r;
	}
	for (i = from; i < ks->nr_sets; i++)
		sset_free(&ks->set[i]);
	ks->set[from].e = all;
	ks->nr_sets = from + 1;
	return 0;
}

int bch_keyset_compact(struct bch_keyset *ks)
{
	return ks->nr_sets == 1 ? 0 : merge_newest(ks, 0);
}

/*
 * Where a full log merges from: back from the newest set to the first
 * one at least BCH_KEYSET_MERGE_RATIO times the size of all newer ones
 * together, which stays as it is (all of them when none is; two at
 * least).  A seal then costs in proportion to what came since, not to
 * the leaf, as bcache's lazy sort does.  Merging every full log whole,
 * a 5,400-key leaf was copied every third commit for the few keys each
 * commit brought it: inserts cost 77k instructions at 10^6 keys.  Three
 * sealed sets span a leaf's sizes in steps of about the cube root of its
 * keys, hence 16: the build of bench/core/btree.c ran 6.3x faster at
 * 10^6 keys than with whole merges, and 6.6x faster at 10^7 than with a
 * ratio of 4.
 */
static u32 merge_from(const struct bch_keyset *ks)
{
	u32 from = ks->nr_sets - 1;
	u64 newer = ks->set[from].e.nr;

	while (from > 0 &&
	       ks->set[from - 1].e.nr < BCH_KEYSET_MERGE_RATIO * newer) {
		from--;
		newer += ks->set[from].e.nr;
	}
	return min(from, ks->nr_sets - 2);
}

int bch_keyset_seal(struct bch_keyset *ks)
{
	int r;

	if (!bch_keyset_open_keys(ks))
		return 0;
	if (ks->nr_sets == BCH_KEYSET_MAX_SETS) {
		r = merge_newest(ks, merge_from(ks));
		if (r)
			return r;
	}
	r = build_pivots(&ks->set[ks->nr_sets - 1]);
	if (r)
		return r;
	ks->nr_sets++;
	return 0;
}

/* First key of @s ending after (inode, sector), using the pivots. */
static u32 sset_seek(const struct bch_sset *s, u64 inode, u64 sector)
{
	u32 slot = 1, from, to;
	u64 pos;

	if (!s->nr_piv || !pack(inode, sector, &pos))
		return bch_extents_seek(&s->e, inode, sector);
	/* Down the Eytzinger array to the first pivot ending after pos. */
	while (slot <= s->nr_piv)
		slot = 2 * slot + (s->piv[slot] <= pos);
	slot >>= __builtin_ffs(~slot);
	from = slot ? s->piv_from[slot] :
		      s->nr_piv * BCH_KEYSET_PIVOT_EVERY;
	to = min_t(u32, from + BCH_KEYSET_PIVOT_EVERY, s->e.nr);
	while (from < to && bch_key_cmp_pos(&s->e.k[from], inode, sector) <= 0)
		from++;
	return from;
}

const struct bch_key *bch_keyset_lookup(const struct bch_keyset *ks,
					u64 inode, u64 sector, u64 *next)
{
	u64 limit = ~0ULL;
	u32 i;

	for (i = ks->nr_sets; i-- > 0;) {
		const struct bch_sset *s = &ks->set[i];
		u32 at = sset_seek(s, inode, sector);
		const struct bch_key *k;

		if (at == s->e.nr)
			continue;
		k = &s->e.k[at];
		if (bch_key_inode(k) != inode)
			continue;
		if (bch_key_start(k) <= sector) {
			*next = min(limit, k->low);
			return k;
		}
		/* Newer sets start mattering again at their next key. */
		limit = min(limit, bch_key_start(k));
	}
	*next = limit;
	return NULL;
}

/*
 * Keep (*@inode, *@sector) if a key of that inode ends after it, else
 * move to the start of the next inode holding keys (lookups find where
 * in it).  false when no key lies after the position.
 */
static bool first_key_from(const struct bch_keyset *ks, u64 *inode,
			   u64 *sector)
{
	const struct bch_key *best = NULL;
	u32 i, at;

	for (i = 0; i < ks->nr_sets; i++) {
		const struct bch_extents *e = &ks->set[i].e;

		at = bch_extents_seek(e, *inode, *sector);
		if (at < e->nr && (!best || bch_key_cmp(&e->k[at], best) < 0))
			best = &e->k[at];
	}
	if (!best)
		return false;
	if (bch_key_inode(best) != *inode) {
		*inode = bch_key_inode(best);
		*sector = 0;
	}
	return true;
}

u32 bch_keyset_count(const struct bch_keyset *ks)
{
	u64 inode = 0, sector = 0, next;
	u32 n = 0;

	if (ks->nr_sets == 1)
		return ks->set[0].e.nr;
	/*
	 * A lookup's answer holds until the key ends or a newer one starts,
	 * so each answer is one piece: a key masked in its middle by a newer
	 * one is answered twice, as merging leaves it in two.
	 */
	while (first_key_from(ks, &inode, &sector)) {
		if (bch_keyset_lookup(ks, inode, sector, &next))
			n++;
		if (next != ~0ULL) {
			sector = next;
		} else {	/* nothing more in this inode */
			inode++;
			sector = 0;
		}
	}
	return n;
}

int bch_keyset_split(struct bch_keyset *ks, struct bch_keyset *right,
		     struct bch_key *left_end)
{
	struct bch_extents *e = &ks->set[0].e, *r;
	u32 at;
	int err;

	bch_keyset_init(right);
	err = bch_keyset_compact(ks);
	if (err)
		return err;
	if (e->nr < 2)
		return -EINVAL;
	at = max_t(u32, 1, e->nr * 3 / 5);
	r = &right->set[0].e;
	err = bch_array_grow((void **)&r->k, &r->cap, 0, e->nr - at,
			     sizeof(*r->k), 16);
	if (err)
		return err;
	memcpy(r->k, &e->k[at], (size_t)(e->nr - at) * sizeof(*e->k));
	r->nr = e->nr - at;
	e->nr = at;
	*left_end = e->k[at - 1];
	return 0;
}

void bch_keyset_unsplit(struct bch_keyset *ks, struct bch_keyset *right)
{
	struct bch_extents *e = &ks->set[0].e, *r = &right->set[0].e;

	memcpy(&e->k[e->nr], r->k, (size_t)r->nr * sizeof(*r->k));
	e->nr += r->nr;
	bch_keyset_free(right);
}

int bch_keyset_filter(struct bch_keyset *ks,
		      bool (*keep)(void *ctx, const struct bch_key *k),
		      void *ctx)
{
	struct bch_extents *e;
	u32 i, n = 0;
	int r = bch_keyset_compact(ks);

	if (r)
		return r;
	e = &ks->set[0].e;
	for (i = 0; i < e->nr; i++)
		if (keep(ctx, &e->k[i]))
			e->k[n++] = e->k[i];
	r = e->nr - n;
	e->nr = n;
	return r;
}
