// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the in-memory btree (core/btree/btree.c) against the
 * per-sector model, with node limits small enough that a million random
 * inserts split leaves and interior nodes thousands of times and grow the
 * tree several levels: a point lookup after every insert, and every 65536
 * inserts the structural invariants (uniform depth, sorted children, the
 * last child at its parent's key, every extent inside its leaf's range)
 * and a walk of every sector by lookup and next-boundary.
 *
 * Coalescing (core/btree/btree_merge.c) gets the same treatment: rounds of
 * random inserts with leaves sealed at random (so merges see keysets whose
 * newer sets mask older ones), wide invalidations that empty most of the
 * key space, and coalescing; before and after it the tree must answer as
 * the model does, and after it the structure must hold with no two
 * neighbours left that could merge, no root with an only child, and every
 * removed node listed once.  Now and then everything is invalidated and
 * the holes dropped (as gc and whole writes drop them): the tree must
 * shrink to a single leaf.
 */
#include <stdlib.h>

#include "unit.h"
#include "btree/btree.h"
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

/*
 * @ops random inserts through @ins into a fresh tree @t: a point lookup
 * after each, the structure and a whole walk every @every (a power of
 * two) and at the end, all against the model.
 */
static void random_inserts(struct bch_btree *t, u64 *buckets, u32 ops,
			   int (*ins)(void *obj, const struct bch_key *k),
			   u32 every)
{
	u32 op, bad = 0;

	model_reset();
	CHECK(!bch_btree_init(t, 16, 4, 8, fake_alloc, buckets));
	for (op = 0; op < ops; op++) {
		if (model_insert_random(t, ins, SPAN)) {
			CHECK(!"an insert failed");
			break;
		}
		bad += model_probe_wrong(t, lookup, SPAN);
		if (!(op & (every - 1)) &&
		    (!node_ok(t->root, 0, 0, t->root->level) ||
		     !model_walk_agrees(t, lookup, SPAN))) {
			CHECK(!"btree differs from the model");
			break;
		}
	}
	CHECK(bad == 0);
	CHECK(node_ok(t->root, 0, 0, t->root->level) &&
	      model_walk_agrees(t, lookup, SPAN));
}

UNIT_TEST(btree_random_against_model)
{
	struct bch_btree t;
	u64 buckets = 100;

	random_inserts(&t, &buckets, 1000000, insert, 65536);
	CHECK(!bch_key_cmp(&t.root->key, &bch_max_key));
	CHECK(bch_btree_depth(&t) >= 3);
	CHECK(t.nr_splits > 1000);
	fprintf(stderr, "  depth %u, %llu nodes, %llu splits\n",
		bch_btree_depth(&t), t.nr_nodes, t.nr_splits);
	bch_btree_free(&t);
}

/*
 * The index worker's rule for an insert that finds no memory: it tries
 * the same key again later, so a failed insert must leave a tree that
 * answers for every other key as before (a key inserted again replaces
 * itself).  Each insert here has one of its first few allocations fail;
 * after a failure the key goes in again without failures, and the tree
 * must still agree with the model everywhere.
 */
static u32 failed_inserts, failed_splits;

static int insert_failing(void *obj, const struct bch_key *k)
{
	static u32 nth;
	struct bch_btree *t = obj;
	u64 splits = t->nr_splits;
	int r;

	bch_fail_alloc_countdown = 1 + nth++ % 6;
	r = bch_btree_insert(t, k);
	bch_fail_alloc_countdown = 0;
	if (r != -ENOMEM)
		return r;
	failed_inserts++;
	r = bch_btree_insert(t, k);
	/* It split on the second try: the failure was on the way to one. */
	failed_splits += !r && t->nr_splits > splits;
	return r;
}

UNIT_TEST(btree_insert_again_after_alloc_failure)
{
	struct bch_btree t;
	u64 buckets = 100;

	failed_inserts = failed_splits = 0;
	random_inserts(&t, &buckets, 200000, insert_failing, 16384);
	fprintf(stderr, "  %u inserts failed and went in again, %u of them in a split; depth %u\n",
		failed_inserts, failed_splits, bch_btree_depth(&t));
	CHECK(failed_inserts > 1000 && failed_splits > 100);
	bch_btree_free(&t);
}

#define MAX_LEAF	16
#define MAX_KIDS	6

/* Seal about a third of the leaves, as appending them to disk would. */
static void seal_some(struct bch_bnode *n)
{
	u32 i;

	for (i = 0; i < n->nr_child; i++)
		seal_some(n->child[i]);
	if (!n->level && !(model_random() % 3))
		CHECK(!bch_keyset_seal(&n->ks));
}

/* Invalidate [start, end) of @inode: holes, cut to legal key sizes. */
static void invalidate(struct bch_btree *t, u64 inode, u64 start, u64 end)
{
	struct bch_key k;
	u64 s;

	while (start < end) {
		u64 len = min_t(u64, end - start, 4096);

		bch_key_init(&k, inode, start + len, len, false);
		CHECK(!bch_btree_insert(t, &k));
		for (s = start; s < start + len; s++)
			model[inode][s] = MODEL_HOLE;
		start += len;
	}
}

static bool has_ptrs(void *ctx, const struct bch_key *k)
{
	(void)ctx;
	return bch_key_ptrs(k);
}

/* Drop every hole from every leaf under @n. */
static void drop_holes(struct bch_bnode *n)
{
	u32 i;

	for (i = 0; i < n->nr_child; i++)
		drop_holes(n->child[i]);
	if (!n->level)
		CHECK(bch_keyset_filter(&n->ks, has_ptrs, NULL) >= 0);
}

/* ... and the model forgets them too. */
static void model_drop_holes(void)
{
	u64 inode, s;

	for (inode = 0; inode < MODEL_INODES; inode++)
		for (s = 0; s < SPAN; s++)
			if (model[inode][s] == MODEL_HOLE)
				model[inode][s] = 0;
}

/*
 * No writer here: clear the rewrite marks, so coalescing's own show, and
 * note each node's load (plus one) by its bucket in @load.
 */
static void clear_rewrite(struct bch_bnode *n, u32 *load)
{
	u32 i;

	n->rewrite = false;
	load[bch_ptr_offset(n->key.ptr[0]) / 8] = bch_bnode_load(n) + 1;
	for (i = 0; i < n->nr_child; i++)
		clear_rewrite(n->child[i], load);
}

/* A node that gained keys or children, or lost children, is rewritten. */
static int changed_marked(const struct bch_bnode *n, const u32 *load)
{
	u32 i;

	if (load[bch_ptr_offset(n->key.ptr[0]) / 8] != bch_bnode_load(n) + 1 &&
	    !n->rewrite)
		return 0;
	for (i = 0; i < n->nr_child; i++)
		if (!changed_marked(n->child[i], load))
			return 0;
	return 1;
}

/*
 * Within limits, no two neighbours that could merge, every node counted,
 * and each node's bucket marked in @live (none twice).  A merged leaf
 * (marked for rewrite) holds one set, within two thirds of the limit;
 * the others are as inserts left them (a seal that merges sets can leave
 * one a little over the limit until its next insert splits it).
 */
static int merged_ok(const struct bch_btree *t, const struct bch_bnode *n,
		     u8 *live, u64 nr_buckets, u64 *nodes)
{
	u64 b = bch_ptr_offset(n->key.ptr[0]) / 8;
	u32 i;

	(*nodes)++;
	if (b >= nr_buckets || live[b]++)
		return 0;
	if (!n->level)
		return !n->rewrite || (n->ks.nr_sets == 1 &&
				       n->ks.set[0].e.nr <=
				       t->max_leaf_keys * 2 / 3);
	if (!n->nr_child || n->nr_child > t->max_children)
		return 0;
	for (i = 0; i < n->nr_child; i++) {
		if (i && bch_btree_can_merge(t, n->child[i - 1], n->child[i]))
			return 0;
		if (!merged_ok(t, n->child[i], live, nr_buckets, nodes))
			return 0;
	}
	return 1;
}

/*
 * Coalesce and check everything (@nr_buckets: how many fake_alloc gave
 * out), including the nodes this call lists as removed.
 */
static void coalesce_checked(struct bch_btree *t, u64 nr_buckets)
{
	u64 nodes_before = t->nr_nodes, nodes = 0, i;
	u32 depth = bch_btree_depth(t), from = t->nr_removed;
	u8 *live = calloc(nr_buckets, 1);
	u32 *load = calloc(nr_buckets, sizeof(*load));

	clear_rewrite(t->root, load);
	CHECK(!bch_btree_coalesce(t));
	CHECK(changed_marked(t->root, load));
	CHECK(node_ok(t->root, 0, 0, t->root->level));
	CHECK(!bch_key_cmp(&t->root->key, &bch_max_key));
	CHECK(merged_ok(t, t->root, live, nr_buckets, &nodes));
	CHECK(nodes == t->nr_nodes);
	CHECK(!t->root->level || t->root->nr_child > 1);
	CHECK(bch_btree_depth(t) <= depth);
	/* Each node that went is listed once, and none still in the tree. */
	CHECK(t->nr_removed - from == nodes_before - t->nr_nodes);
	for (i = from; i < t->nr_removed; i++) {
		u64 b = bch_ptr_offset(t->removed[i]) / 8;

		CHECK(b < nr_buckets && !live[b]);
		if (b < nr_buckets)
			live[b] = 1;
	}
	CHECK(model_walk_agrees(t, lookup, SPAN));
	free(load);
	free(live);
}

UNIT_TEST(btree_coalesce_against_model)
{
	struct bch_btree t;
	u64 buckets = 100, inode, before;
	u32 round, op, bad = 0, emptied = 0;

	model_reset();
	CHECK(!bch_btree_init(&t, MAX_LEAF, MAX_KIDS, 8, fake_alloc, &buckets));
	for (round = 0; round < 24; round++) {
		bool all = round % 6 == 5;

		for (op = 0; op < 20000; op++) {
			CHECK(!model_insert_random(&t, insert, SPAN));
			bad += model_probe_wrong(&t, lookup, SPAN);
			if (!(op % 2000))
				seal_some(t.root);
		}
		CHECK(node_ok(t.root, 0, 0, t.root->level));
		for (inode = 0; inode < MODEL_INODES; inode++) {
			u64 a = all ? 0 : model_random() % (SPAN / 4);
			u64 b = all ? SPAN : SPAN - model_random() % (SPAN / 4);

			invalidate(&t, inode, a, b);
		}
		seal_some(t.root);
		CHECK(model_walk_agrees(&t, lookup, SPAN));
		before = t.nr_nodes;
		coalesce_checked(&t, buckets);
		CHECK(t.nr_nodes < before);
		if (!all)
			continue;
		/* Nothing but holes, then not even those: one leaf is left. */
		drop_holes(t.root);
		model_drop_holes();
		CHECK(model_walk_agrees(&t, lookup, SPAN));
		coalesce_checked(&t, buckets);
		CHECK(bch_btree_depth(&t) == 1 && t.nr_nodes == 1);
		emptied++;
	}
	CHECK(bad == 0);
	CHECK(emptied == 4);
	CHECK(t.nr_merges > 1000 && t.nr_collapses >= 4);
	fprintf(stderr, "  %llu merges, %llu collapses, %llu splits\n",
		t.nr_merges, t.nr_collapses, t.nr_splits);
	bch_btree_free(&t);
}
