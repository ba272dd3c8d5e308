// SPDX-License-Identifier: GPL-2.0
/*
 * The in-memory btree; see btree.h.
 *
 * Insertion walks down with the extent's start, cutting the extent where
 * it crosses a child's key (the piece up to the key belongs to that child,
 * the rest to the next), so every piece lands in exactly one leaf.  A leaf
 * over its limit splits (3/5 left, as the driver splits); the left half
 * becomes a new node at its last key's position and the right half keeps
 * the old node's key, so the parent only gains a child.  An interior node
 * over its limit splits the same way, and a root split adds a level.
 */
#include "btree/btree.h"
#include "util/array.h"

/* Keys in a leaf's sets, before merging: an upper bound on its size. */
static u32 leaf_keys(const struct bch_bnode *n)
{
	u32 i, sum = 0;

	for (i = 0; i < n->ks.nr_sets; i++)
		sum += n->ks.set[i].e.nr;
	return sum;
}

static bool over_limit(const struct bch_btree *t, const struct bch_bnode *n)
{
	return n->level ? n->nr_child > t->max_children :
			  leaf_keys(n) > t->max_leaf_keys;
}

static struct bch_bnode *node_new(struct bch_btree *t, u32 level,
				  const struct bch_key *pos)
{
	struct bch_bnode *n = bch_zalloc(sizeof(*n));

	if (!n)
		return NULL;
	bch_key_init(&n->key, bch_key_inode(pos), pos->low, t->node_sectors,
		     false);
	if (t->alloc_node(t->ctx, &n->key)) {
		bch_free(n);
		return NULL;
	}
	n->level = level;
	bch_keyset_init(&n->ks);
	t->nr_nodes++;
	return n;
}

static void node_free(struct bch_bnode *n)
{
	u32 i;

	for (i = 0; i < n->nr_child; i++)
		node_free(n->child[i]);
	bch_free(n->child);
	bch_keyset_free(&n->ks);
	bch_free(n);
}

int bch_btree_init(struct bch_btree *t, u32 max_leaf_keys, u32 max_children,
		   u32 node_sectors,
		   int (*alloc_node)(void *ctx, struct bch_key *key),
		   void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->node_sectors = node_sectors;
	t->max_leaf_keys = max(max_leaf_keys, 4U);
	t->max_children = max(max_children, 4U);
	t->alloc_node = alloc_node;
	t->ctx = ctx;
	t->root = node_new(t, 0, &bch_max_key);
	return t->root ? 0 : -ENOMEM;
}

void bch_btree_free(struct bch_btree *t)
{
	if (t->root)
		node_free(t->root);
	t->root = NULL;
	bch_free(t->removed);
	t->removed = NULL;
	t->nr_removed = 0;
	t->cap_removed = 0;
}

/* Index of the child covering position (inode, offset). */
static u32 child_for(const struct bch_bnode *n, u64 inode, u64 offset)
{
	u32 lo = 0, hi = n->nr_child;

	while (lo < hi) {	/* first child whose key lies after it */
		u32 mid = lo + (hi - lo) / 2;

		if (bch_key_cmp_pos(&n->child[mid]->key, inode, offset) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return min(lo, n->nr_child - 1);	/* the last reaches MAX_KEY */
}

static int add_child(struct bch_bnode *n, u32 at, struct bch_bnode *c)
{
	if (bch_array_grow((void **)&n->child, &n->cap_child, n->nr_child,
			   n->nr_child + 1, sizeof(*n->child), 8))
		return -ENOMEM;
	memmove(&n->child[at + 1], &n->child[at],
		(n->nr_child - at) * sizeof(*n->child));
	n->child[at] = c;
	n->nr_child++;
	n->rewrite = true;
	return 0;
}

/*
 * Split @n, child @at of @parent, if over its limit: a new left node takes
 * the first part, @n keeps the rest and its key.  Everything the split
 * allocates is allocated before anything moves, so a failure (-ENOMEM)
 * leaves every key where it was: the index worker inserts the same key
 * again later rather than failing the cache.
 */
static int split_child(struct bch_btree *t, struct bch_bnode *parent, u32 at)
{
	struct bch_bnode *n = parent->child[at], *left;
	struct bch_key end;
	int r;

	if (!over_limit(t, n))
		return 0;
	/* Room for the new child first: add_child() below cannot fail. */
	r = bch_array_grow((void **)&parent->child, &parent->cap_child,
			   parent->nr_child, parent->nr_child + 1,
			   sizeof(*parent->child), 8);
	if (r)
		return r;
	if (n->level) {
		struct bch_bnode **kids;
		u32 keep = n->nr_child * 3 / 5;

		kids = bch_zalloc(keep * sizeof(*kids));
		if (!kids)
			return -ENOMEM;
		end = n->child[keep - 1]->key;
		left = node_new(t, n->level, &end);
		if (!left) {
			bch_free(kids);
			return -ENOMEM;
		}
		memcpy(kids, n->child, keep * sizeof(*kids));
		left->child = kids;
		left->cap_child = keep;
		left->nr_child = keep;
		memmove(n->child, &n->child[keep],
			(n->nr_child - keep) * sizeof(*n->child));
		n->nr_child -= keep;
	} else {
		struct bch_keyset right;

		r = bch_keyset_compact(&n->ks);
		if (r || n->ks.set[0].e.nr <= t->max_leaf_keys)
			return r;
		r = bch_keyset_split(&n->ks, &right, &end);
		if (r)
			return r;
		left = node_new(t, 0, &end);
		if (!left) {
			bch_keyset_unsplit(&n->ks, &right);
			return -ENOMEM;
		}
		/* The left node takes the first part; @n keeps the rest. */
		left->ks = n->ks;
		n->ks = right;
		n->gc_counted = false;
	}
	t->nr_splits++;
	n->rewrite = true;	/* it lost keys: appending cannot say so */
	return add_child(parent, at, left);
}

/* Insert the part of @k inside @n's range; the caller cut it to fit. */
static int insert_in(struct bch_btree *t, struct bch_bnode *n,
		     const struct bch_key *k)
{
	struct bch_key piece = *k;
	u64 inode = bch_key_inode(k);
	int r;

	if (!n->level) {
		n->gc_counted = false;
		return bch_keyset_insert(&n->ks, k);
	}

	while (bch_key_size(&piece)) {
		u32 at = child_for(n, inode, bch_key_start(&piece));
		struct bch_bnode *c = n->child[at];
		struct bch_key rest = piece;
		bool cut = bch_key_inode(&c->key) == inode &&
			   c->key.low < piece.low;

		if (cut) {
			bch_key_cut_back(&piece, c->key.low);
			bch_key_cut_front(&rest, c->key.low);
		}
		r = insert_in(t, c, &piece);
		if (!r)
			r = split_child(t, n, at);
		if (r || !cut)
			return r;
		piece = rest;
	}
	return 0;
}

int bch_btree_insert(struct bch_btree *t, const struct bch_key *k)
{
	struct bch_bnode *root;
	int r;

	if (!bch_key_size(k) || bch_key_size(k) > k->low)
		return -EINVAL;
	r = insert_in(t, t->root, k);
	if (r)
		return r;
	if (!over_limit(t, t->root))
		return 0;
	/* A root over its limit: a new root above it, then split. */
	root = node_new(t, t->root->level + 1, &bch_max_key);
	if (!root)
		return -ENOMEM;
	r = add_child(root, 0, t->root);
	if (r) {
		node_free(root);
		return r;
	}
	t->root = root;
	return split_child(t, root, 0);
}

struct bch_bnode *bch_btree_leaf_after(const struct bch_btree *t, u64 inode,
				       u64 offset)
{
	struct bch_bnode *n = t->root;

	while (n->level)
		n = n->child[child_for(n, inode, offset)];
	return n;
}

const struct bch_key *bch_btree_lookup(const struct bch_btree *t, u64 inode,
				       u64 sector, u64 *next)
{
	const struct bch_bnode *n = t->root;
	u64 limit = ~0ULL;

	while (n->level) {
		const struct bch_bnode *c = n->child[child_for(n, inode,
							       sector)];

		if (bch_key_inode(&c->key) == inode)
			limit = min(limit, c->key.low);
		n = c;
	}
	{
		const struct bch_key *k = bch_keyset_lookup(&n->ks, inode,
							    sector, next);

		*next = min(*next, limit);
		return k;
	}
}

u32 bch_btree_depth(const struct bch_btree *t)
{
	const struct bch_bnode *n = t->root;
	u32 d = 1;

	while (n->level) {
		n = n->child[0];
		d++;
	}
	return d;
}
