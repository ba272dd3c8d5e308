// SPDX-License-Identifier: GPL-2.0
/* Sorted extent runs with newest-wins insertion; see extents.h. */
#include "btree/extents.h"
#include "util/array.h"

void bch_extents_free(struct bch_extents *e)
{
	bch_free(e->k);
	bch_extents_init(e);
}

void bch_key_cut_front(struct bch_key *k, u64 new_start)
{
	u64 cut = new_start - bch_key_start(k);
	unsigned int i;

	for (i = 0; i < bch_key_ptrs(k); i++) {
		u64 p = k->ptr[i];

		k->ptr[i] = bch_make_ptr(bch_ptr_dev(p),
					 (bch_ptr_offset(p) + cut) &
					 ((1ULL << 43) - 1), bch_ptr_gen(p));
	}
	k->high -= cut << 20;			/* KEY_SIZE starts at bit 20 */
}

void bch_key_cut_back(struct bch_key *k, u64 new_end)
{
	u64 cut = k->low - new_end;

	k->high -= cut << 20;
	k->low = new_end;
}

/* Compare the end of extent @k with (inode, sector). */
static int end_cmp(const struct bch_key *k, u64 inode, u64 sector)
{
	return bch_key_cmp_pos(k, inode, sector);
}

u32 bch_extents_seek(const struct bch_extents *e, u64 inode, u64 sector)
{
	u32 lo = 0, hi = e->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (end_cmp(&e->k[mid], inode, sector) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Room for @extra more keys. */
static int reserve(struct bch_extents *e, u32 extra)
{
	return bch_array_grow((void **)&e->k, &e->cap, e->nr, e->nr + extra,
			      sizeof(*e->k), 16);
}

static void open_gap(struct bch_extents *e, u32 at, u32 n)
{
	memmove(&e->k[at + n], &e->k[at], (size_t)(e->nr - at) * sizeof(*e->k));
	e->nr += n;
}

static void close_gap(struct bch_extents *e, u32 at, u32 n)
{
	memmove(&e->k[at], &e->k[at + n],
		(size_t)(e->nr - at - n) * sizeof(*e->k));
	e->nr -= n;
}

int bch_extents_insert(struct bch_extents *e, const struct bch_key *k)
{
	u64 inode = bch_key_inode(k), start = bch_key_start(k), end = k->low;
	u32 i, j;

	/* At most one split adds a key, plus the new key itself. */
	if (reserve(e, 2))
		return -ENOMEM;
	i = bch_extents_seek(e, inode, start);

	/* An older extent straddling the whole new one splits in two. */
	if (i < e->nr && bch_key_inode(&e->k[i]) == inode &&
	    bch_key_start(&e->k[i]) < start && e->k[i].low > end) {
		open_gap(e, i, 1);
		e->k[i] = e->k[i + 1];
		bch_key_cut_back(&e->k[i], start);
		bch_key_cut_front(&e->k[i + 1], end);
		open_gap(e, i + 1, 1);
		e->k[i + 1] = *k;
		return 0;
	}
	/* One overlapping our start keeps its front. */
	if (i < e->nr && bch_key_inode(&e->k[i]) == inode &&
	    bch_key_start(&e->k[i]) < start) {
		bch_key_cut_back(&e->k[i], start);
		i++;
	}
	/* Those inside go; one overlapping our end keeps its back. */
	for (j = i; j < e->nr && bch_key_inode(&e->k[j]) == inode &&
	     bch_key_start(&e->k[j]) < end; j++) {
		if (e->k[j].low > end) {
			bch_key_cut_front(&e->k[j], end);
			break;
		}
	}
	if (j > i)
		close_gap(e, i, j - i);
	open_gap(e, i, 1);
	e->k[i] = *k;
	return 0;
}

/* Does extent @a end at or before extent @b starts? */
static bool ends_before(const struct bch_key *a, const struct bch_key *b)
{
	return bch_key_cmp_pos(a, bch_key_inode(b), bch_key_start(b)) <= 0;
}

/* Does extent @a start before extent @b does? */
static bool starts_before(const struct bch_key *a, const struct bch_key *b)
{
	u64 ia = bch_key_inode(a), ib = bch_key_inode(b);

	return ia < ib || (ia == ib && bch_key_start(a) < bch_key_start(b));
}

/* Output never needs more: each @new key splits at most one @old key. */
int bch_extents_overlay(struct bch_extents *out, const struct bch_extents *old,
			const struct bch_extents *new)
{
	u32 i, j = 0;

	if (reserve(out, old->nr + 2 * new->nr))
		return -ENOMEM;
	for (i = 0; i < old->nr; i++) {
		struct bch_key cur = old->k[i];
		bool left = true;	/* some of @cur is not covered yet */

		/* Newer keys wholly before it. */
		while (j < new->nr && ends_before(&new->k[j], &cur))
			out->k[out->nr++] = new->k[j++];
		/* Newer keys overlapping it: its pieces between them stay. */
		while (j < new->nr && !ends_before(&cur, &new->k[j])) {
			const struct bch_key *n = &new->k[j];

			if (starts_before(&cur, n)) {
				out->k[out->nr] = cur;
				bch_key_cut_back(&out->k[out->nr++],
						 bch_key_start(n));
			}
			if (cur.low <= n->low) {
				/* @n may cover the next old key too. */
				left = false;
				break;
			}
			bch_key_cut_front(&cur, n->low);
			out->k[out->nr++] = new->k[j++];
		}
		if (left)
			out->k[out->nr++] = cur;
	}
	while (j < new->nr)
		out->k[out->nr++] = new->k[j++];
	return 0;
}
