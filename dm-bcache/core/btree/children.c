// SPDX-License-Identifier: GPL-2.0
/* Choosing an interior node's children; see children.h. */
#include "btree/children.h"

static int cmp_ikey(const void *a, const void *b)
{
	const struct bch_ikey *x = a, *y = b;
	int r = bch_key_cmp(&x->k, &y->k);

	if (r)
		return r;
	return x->order < y->order ? -1 : x->order > y->order;
}

void bch_ikeys_sort(struct bch_ikey *v, u32 n)
{
	bch_sort(v, n, sizeof(*v), cmp_ikey);
}

u32 bch_ikeys_pick(const struct bch_ikey *v, u32 n, u32 i,
		   const struct bch_key_geom *kg,
		   bool (*live)(void *ctx, const struct bch_key *k), void *ctx,
		   struct bch_ipick *p)
{
	const struct bch_key *pos = &v[i].k;
	u32 j;

	memset(p, 0, sizeof(*p));
	p->freeing = !bch_key_inode(pos) && !pos->low;
	for (j = i; j < n && !bch_key_cmp(&v[j].k, pos); j++) {
		const struct bch_key *k = &v[j].k;

		if (bch_btree_ptr_invalid(k, kg))
			continue;
		if (!live(ctx, k))
			p->stale = k;
		else if (!p->live)
			p->live = k;
		else
			p->second = k;
	}
	return j;
}
