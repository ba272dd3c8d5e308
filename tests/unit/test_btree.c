// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the in-memory btree (core/btree.c) against the
 * per-sector model, with node limits small enough that a million random
 * inserts split leaves and interior nodes thousands of times and grow the
 * tree several levels: a point lookup after every insert, and every 65536
 * inserts the structural invariants (uniform depth, sorted children, the
 * last child at its parent's key, every extent inside its leaf's range)
 * and a walk of every sector by lookup and next-boundary.
 */
#include <stdlib.h>

#include "unit.h"
#include "btree.h"
#include "extent_model.h"

#define SPAN 65536

static int fake_alloc(void *ctx, struct bch_key *key)
{
	u64 *next_bucket = ctx;

	bch_key_add_ptr(key, bch_make_ptr(0, (*next_bucket)++ * 8, 1));
	return 0;
}

static int insert(void *obj, const struct bch_key *k)
{
	return bch_btree_insert(obj, k);
}

static const struct bch_key *lookup(const void *obj, u64 inode, u64 sector,
				    u64 *next)
{
	return bch_btree_lookup(obj, inode, sector, next);
}

/* Extents of @n lie in (lo, n->key]; children are ordered; depth uniform. */
static int node_ok(const struct bch_bnode *n, u64 lo_inode, u64 lo_off,
		   u32 level)
{
	u32 i, j;

	if (n->level != level)
		return 0;
	if (!level) {
		for (i = 0; i < n->ks.nr_sets; i++) {
			for (j = 0; j < n->ks.set[i].e.nr; j++) {
				const struct bch_key *k = &n->ks.set[i].e.k[j];

				if (bch_key_cmp(k, &n->key) > 0)
					return 0;
				if (bch_key_cmp_pos(k, lo_inode, lo_off) <= 0 ||
				    (bch_key_inode(k) == lo_inode &&
				     bch_key_start(k) < lo_off))
					return 0;
			}
		}
		return 1;
	}
	if (!n->nr_child || bch_key_cmp(&n->child[n->nr_child - 1]->key,
					&n->key))
		return 0;
	for (i = 0; i < n->nr_child; i++) {
		if (i && bch_key_cmp(&n->child[i - 1]->key,
				     &n->child[i]->key) >= 0)
			return 0;
		if (!node_ok(n->child[i], lo_inode, lo_off, level - 1))
			return 0;
		lo_inode = bch_key_inode(&n->child[i]->key);
		lo_off = n->child[i]->key.low;
	}
	return 1;
}

UNIT_TEST(btree_random_against_model)
{
	struct bch_btree t;
	u64 buckets = 100;
	u32 op, bad = 0;

	model_reset();
	CHECK(!bch_btree_init(&t, 16, 4, 8, fake_alloc, &buckets));
	for (op = 0; op < 1000000; op++) {
		if (model_insert_random(&t, insert, SPAN)) {
			CHECK(0);
			break;
		}
		bad += model_probe_wrong(&t, lookup, SPAN);
		if (!(op & 65535) && (!node_ok(t.root, 0, 0, t.root->level) ||
				      !model_walk_agrees(&t, lookup, SPAN))) {
			CHECK(!"btree differs from the model");
			break;
		}
	}
	CHECK(bad == 0);
	CHECK(node_ok(t.root, 0, 0, t.root->level) &&
	      model_walk_agrees(&t, lookup, SPAN));
	CHECK(!bch_key_cmp(&t.root->key, &bch_max_key));
	CHECK(bch_btree_depth(&t) >= 3);
	CHECK(t.nr_splits > 1000);
	fprintf(stderr, "  depth %u, %llu nodes, %llu splits\n",
		bch_btree_depth(&t), t.nr_nodes, t.nr_splits);
	bch_btree_free(&t);
}
