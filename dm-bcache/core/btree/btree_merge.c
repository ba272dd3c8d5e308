// SPDX-License-Identifier: GPL-2.0
/*
 * Coalescing the in-memory btree (btree.h), the inverse of splitting.
 *
 * Two neighbouring children of one parent merge into the right one, which
 * keeps its key: the left one covers the positions up to its key and the
 * right one those after it, so the left one's keys (or children) go in
 * front of the right one's and everything stays in order.  Leaves merge
 * their sets first: a newer set masks what it covers in older ones, and
 * only the merged view can simply be concatenated.
 *
 * Nothing on the cache changes here.  The merged node no longer matches
 * its image, so it is marked for a whole rewrite into a new bucket (the
 * writer releases its old bucket after the commit), and so is the parent
 * that lost a child.  The left node's bucket still holds part of the tree
 * the last journal entry names, so it is only listed in t->removed; the
 * writer frees it after the same commit.  A crash before then finds the
 * old tree intact.
 *
 * A parent's children are merged left to right, stepping back after each
 * merge to retry the merged node with its left neighbour, so no two
 * neighbours that could merge are left.  Children coalesce before their
 * parent, so emptied leaves shrink their parents first, which may then
 * merge too; when two interior nodes merge, the children that met at the
 * seam are tried again.  Last, a root left with one child gives way to
 * it, repeatedly, so an emptied tree ends as a single leaf.
 */
#include "btree/btree.h"
#include "util/array.h"

/* Room to list one more removed node, made before anything changes. */
static int reserve_removed(struct bch_btree *t)
{
	return bch_array_grow((void **)&t->removed, &t->cap_removed,
			      t->nr_removed, t->nr_removed + 1,
			      sizeof(*t->removed), 16);
}

/* @n has left the tree (its contents moved on): list its bucket, free it. */
static void drop_node(struct bch_btree *t, struct bch_bnode *n)
{
	if (bch_key_ptrs(&n->key))
		t->removed[t->nr_removed++] = n->key.ptr[0];
	bch_keyset_free(&n->ks);
	bch_free(n->child);
	bch_free(n);
	t->nr_nodes--;
}

/*
 * Merge a leaf's sets into one.  Its sealed sets are on disk already: a
 * node whose sealed sets merged into the open one is rewritten whole, or
 * the next append would write them all again.
 */
static int compact_leaf(struct bch_bnode *n)
{
	if (n->ks.nr_sets > 1)
		n->rewrite = true;
	return bch_keyset_compact(&n->ks);
}

/* Put leaf @l's keys in front of leaf @r's. */
static int merge_leaves(struct bch_bnode *l, struct bch_bnode *r)
{
	struct bch_extents *le, *re;
	int err = compact_leaf(l);

	if (!err)
		err = compact_leaf(r);
	if (err)
		return err;
	le = &l->ks.set[0].e;
	re = &r->ks.set[0].e;
	if (!le->nr)
		return 0;
	err = bch_array_grow((void **)&re->k, &re->cap, re->nr,
			     re->nr + le->nr, sizeof(*re->k), 16);
	if (err)
		return err;
	memmove(&re->k[le->nr], re->k, (size_t)re->nr * sizeof(*re->k));
	memcpy(re->k, le->k, (size_t)le->nr * sizeof(*re->k));
	re->nr += le->nr;
	r->gc_counted = false;	/* one set now: counted at once */
	return 0;
}

/* Put interior node @l's children in front of @r's. */
static int merge_interior(struct bch_bnode *l, struct bch_bnode *r)
{
	if (bch_array_grow((void **)&r->child, &r->cap_child, r->nr_child,
			   r->nr_child + l->nr_child, sizeof(*r->child), 8))
		return -ENOMEM;
	memmove(&r->child[l->nr_child], r->child,
		r->nr_child * sizeof(*r->child));
	memcpy(r->child, l->child, l->nr_child * sizeof(*r->child));
	r->nr_child += l->nr_child;
	l->nr_child = 0;
	return 0;
}

static int coalesce_children(struct bch_btree *t, struct bch_bnode *n);

/* Merge child @at of @n into child @at + 1, which keeps its key. */
static int merge_pair(struct bch_btree *t, struct bch_bnode *n, u32 at)
{
	struct bch_bnode *l = n->child[at], *r = n->child[at + 1];
	int err = reserve_removed(t);

	if (!err)
		err = l->level ? merge_interior(l, r) : merge_leaves(l, r);
	if (err)
		return err;
	memmove(&n->child[at], &n->child[at + 1],
		(n->nr_child - at - 1) * sizeof(*n->child));
	n->nr_child--;
	drop_node(t, l);
	r->rewrite = true;
	n->rewrite = true;
	t->nr_merges++;
	/* The last child of @l and the first of @r are neighbours now. */
	return r->level ? coalesce_children(t, r) : 0;
}

static int coalesce_children(struct bch_btree *t, struct bch_bnode *n)
{
	u32 i = 0;
	int err;

	while (i + 1 < n->nr_child) {
		if (!bch_btree_can_merge(t, n->child[i], n->child[i + 1])) {
			i++;
			continue;
		}
		err = merge_pair(t, n, i);
		if (err)
			return err;
		/* The merged node is new to its left neighbour too. */
		if (i)
			i--;
	}
	return 0;
}

/* Children first, so a parent sees how far they shrank. */
static int coalesce_subtree(struct bch_btree *t, struct bch_bnode *n)
{
	u32 i;
	int err;

	if (!n->level)
		return 0;
	for (i = 0; i < n->nr_child; i++) {
		err = coalesce_subtree(t, n->child[i]);
		if (err)
			return err;
	}
	return coalesce_children(t, n);
}

/* An only child reaches the root's key, the maximum: it can be the root. */
static int collapse_root(struct bch_btree *t)
{
	while (t->root->level && t->root->nr_child == 1) {
		struct bch_bnode *old = t->root;
		int err = reserve_removed(t);

		if (err)
			return err;
		t->root = old->child[0];
		old->nr_child = 0;
		drop_node(t, old);
		t->nr_collapses++;
	}
	return 0;
}

int bch_btree_coalesce(struct bch_btree *t)
{
	int err = coalesce_subtree(t, t->root);

	return err ? err : collapse_root(t);
}
