/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The btree index in memory: leaves hold extents in a keyset (keyset.h),
 * interior nodes hold their children sorted by key.  A node's key is the
 * largest position it covers; the rightmost node at every level has the
 * maximum key; a child covers positions after its left sibling's key up
 * to its own (ondisk-format 5.6).  An insert cuts an extent at node
 * boundaries, inserts the pieces into their leaves, and splits nodes that
 * outgrow their limits, growing the tree at the root.  Coalescing
 * (btree_merge.c) does the reverse: neighbours that fit in one node merge
 * and a root with one child gives way to it, so the tree shrinks again.
 *
 * This layer owns structure only.  Where nodes live on the cache (their
 * bucket and generation, in each node's key pointer) comes from the
 * caller's alloc_node(); reading and writing node images is node_io.c's.
 */
#ifndef DM_BCACHE_CORE_BTREE_H
#define DM_BCACHE_CORE_BTREE_H

#include "btree/keyset.h"

struct bch_bnode {
	struct bch_key key;		/* position (in the parent) and pointer */
	u32 level;			/* 0: leaf */
	struct bch_keyset ks;		/* leaves */
	struct bch_bnode **child;	/* interior nodes, sorted by key */
	u32 nr_child;
	u32 cap_child;
	/* Its image on the cache (btree_write.c); written == 0: none yet. */
	u64 seq;			/* of its bsets */
	u32 written;			/* blocks holding them */
	bool rewrite;			/* changed beyond appending to it */
	/*
	 * A leaf's keys once its sets merge, as gc counted them (with the
	 * index shared) for coalescing to use; valid until the leaf's keys
	 * change, so the merge decisions need no count under the exclusive
	 * lock.
	 */
	u32 gc_count;
	bool gc_counted;
};

struct bch_btree {
	struct bch_bnode *root;
	u32 max_leaf_keys;		/* split a leaf above this */
	u32 max_children;		/* split an interior node above this */
	u32 node_sectors;		/* size field of every node's key */
	/* Give a new node a pointer: set ptr[0] of @key.  0 or -errno. */
	int (*alloc_node)(void *ctx, struct bch_key *key);
	void *ctx;
	u64 nr_nodes;
	u64 nr_splits;
	u64 nr_merges;			/* neighbours merged into one */
	u64 nr_collapses;		/* levels removed at the root */
	/*
	 * Pointers (ptr[0]) of written nodes that coalescing removed.  Their
	 * buckets still hold the tree the last journal entry names, so they
	 * are freed only after the next entry names the new root:
	 * bch_btree_write() hands them to its writer's released list.
	 */
	u64 *removed;
	u32 nr_removed, cap_removed;
};

/*
 * An empty tree: one empty leaf root at the maximum key.  Node keys get
 * @node_sectors as their size (the node size on the cache).
 */
int bch_btree_init(struct bch_btree *t, u32 max_leaf_keys, u32 max_children,
		   u32 node_sectors,
		   int (*alloc_node)(void *ctx, struct bch_key *key),
		   void *ctx);
void bch_btree_free(struct bch_btree *t);

/* Insert extent @k (size > 0), the newest.  0 or -errno. */
int bch_btree_insert(struct bch_btree *t, const struct bch_key *k);

/*
 * The newest key holding sector @sector of @inode, or NULL for a gap; and
 * in *@next the first sector where the answer may change.
 */
const struct bch_key *bch_btree_lookup(const struct bch_btree *t, u64 inode,
				       u64 sector, u64 *next);

/*
 * The first leaf whose key lies after position (@inode, @offset): walking
 * from (0, 0) and then from each leaf's key visits every leaf in order,
 * even when leaves split or merge in between.  The last leaf's key is
 * the maximum key.
 */
struct bch_bnode *bch_btree_leaf_after(const struct bch_btree *t, u64 inode,
				       u64 offset);

/* Tree height: 1 for a lone leaf. */
u32 bch_btree_depth(const struct bch_btree *t);

/*
 * What a node holds against its limit: a leaf's keys once its sets are
 * merged, an interior node's children.
 */
static inline u32 bch_bnode_load(const struct bch_bnode *n)
{
	if (n->level)
		return n->nr_child;
	return n->gc_counted ? n->gc_count : bch_keyset_count(&n->ks);
}

/*
 * Two neighbours merge when their loads together stay within two thirds
 * of a node, so the merged node has room to grow before it splits again.
 */
static inline bool bch_btree_can_merge(const struct bch_btree *t,
				       const struct bch_bnode *left,
				       const struct bch_bnode *right)
{
	u32 limit = left->level ? t->max_children : t->max_leaf_keys;

	return bch_bnode_load(left) + bch_bnode_load(right) <= limit * 2 / 3;
}

/*
 * Coalesce the tree: merge every pair of neighbouring nodes that
 * bch_btree_can_merge() allows (the right one takes the left one's
 * contents and keeps its key, so the parent only loses a child), until
 * no neighbours can merge; then while the root is an interior node with
 * one child, make that child the root.  Merged nodes and the parents that
 * lost a child are marked for a whole rewrite; removed nodes that had
 * been written are listed in @t->removed.  0, or -ENOMEM with the merges
 * made so far kept (each leaves a valid tree).
 */
int bch_btree_coalesce(struct bch_btree *t);

#endif
