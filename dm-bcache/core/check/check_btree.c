// SPDX-License-Identifier: GPL-2.0
/*
 * The checker's btree pass: a depth-first walk from the root the newest
 * journal entry names.  For each node: its size, its bsets (bset.h), and
 * each key: valid for its level, ordered within its bset, not overlapping
 * its neighbour (leaves), inside the range the parent gives the node.
 * Interior nodes: pointer gens are applied first (the recovery rule, so a
 * "freeing key" retires the node it replaced), then the live child at each
 * position is walked; the live children must reach the node's own key, or
 * part of the key space is unreachable.  Leaves: every pointer of an
 * extent not wholly masked by newer bsets claims its bucket for the final
 * accounting in check.c (a masked extent is dead even if its bucket has
 * been reused, as the driver's merged view has it; core/btree/extents.c does
 * the merging).
 */
#include "check/check_priv.h"
#include "btree/extents.h"
#include "util/array.h"
#include "btree/children.h"

#define BCH_MAX_DEPTH	8	/* far beyond any real tree */

struct walk {
	struct bch_chk *c;
	const struct bch_key *nk;	/* the node's key in its parent */
	u64 node_bucket;
	u32 level;
	u64 lo_inode, lo_offset;	/* keys lie at or after this */
	struct bch_ikey *kids;	/* children of an interior node, extents of a leaf */
	u32 nr_kids, cap_kids;
	u64 keys;
};

/*
 * Claim @ptr's bucket for the final accounting.  True when a btree node
 * at that pointer was claimed before: the walk reaches it again (two
 * parents, or two positions, point at it), which the accounting reports
 * as a bucket holding two live nodes.
 */
static bool claim(struct bch_chk *c, u64 ptr, u8 kind, bool dirty)
{
	u64 b = bch_ptr_bucket(&c->g, ptr);
	struct bch_bucket_use *u;
	u8 gen = bch_ptr_gen(ptr);
	bool again = false;

	if (bch_ptr_dev(ptr) != c->g.nr_this_dev || b >= c->g.kg.nbuckets)
		return false;
	u = &c->use[b];
	if (kind == BCH_USE_BTREE) {
		if (!(u->flags & BCH_USE_BTREE) ||
		    bch_gen_stale(gen, u->btree_gen)) {
			u->btree_gen = gen;
			u->btree_count = 1;
		} else if (gen == u->btree_gen) {
			again = true;
			if (u->btree_count < 255)
				u->btree_count++;
		}
	} else if (!(u->flags & BCH_USE_DATA) ||
		   bch_gen_stale(gen, u->data_gen)) {
		u->data_gen = gen;
	}
	if (dirty && (!(u->flags & BCH_USE_DIRTY) ||
		      bch_gen_stale(u->dirty_gen, gen)))
		u->dirty_gen = gen;
	u->flags |= kind | (dirty ? BCH_USE_DIRTY : 0);
	return again;
}

static bool live_ptr(struct bch_chk *c, const struct bch_key *k)
{
	return bch_key_live(&c->g, c->gens_known ? c->gens : NULL, k);
}

static void node_where(struct walk *w, char *buf, size_t len)
{
	snprintf(buf, len, "btree node bucket %llu (level %u, key %llu:%llu)",
		 w->node_bucket, w->level, bch_key_inode(w->nk), w->nk->low);
}

static void check_key(struct walk *w, const struct bch_key *k,
		      const struct bch_key *prev, u32 bset, u32 word)
{
	struct bch_chk *c = w->c;
	const char *err;
	char where[96], kt[128];
	bool leaf = !w->level;
	bool zero_pos = !bch_key_inode(k) && !k->low;

	node_where(w, where, sizeof(where));
	bch_key_to_text(kt, sizeof(kt), k, leaf);
	if (leaf && !bch_key_size(k))
		return;		/* deleted key: the driver drops it */

	err = leaf ? bch_extent_invalid(k, &c->g.kg) :
		     bch_btree_ptr_invalid(k, &c->g.kg);
	if (err)
		bch_chk_damage(c, BCH_DMG_KEY_INVALID,
			       "%s, bset %u word %u: %s %s: %s", where, bset,
			       word, leaf ? "extent" : "btree pointer", kt, err);
	if (prev && bch_key_cmp(k, prev) < 0)
		bch_chk_damage(c, BCH_DMG_KEY_ORDER,
			       "%s, bset %u word %u: key %s sorts before the previous key ending at %llu:%llu",
			       where, bset, word, kt, bch_key_inode(prev),
			       prev->low);
	if (leaf && prev && bch_key_inode(prev) == bch_key_inode(k) &&
	    prev->low > bch_key_start(k) && bch_key_cmp(k, prev) >= 0)
		bch_chk_damage(c, BCH_DMG_KEY_OVERLAP,
			       "%s, bset %u word %u: extent %s starts before the previous extent ends at %llu",
			       where, bset, word, kt, prev->low);

	if (bch_key_cmp(k, w->nk) > 0)
		bch_chk_damage(c, BCH_DMG_KEY_BOUNDS,
			       "%s, bset %u word %u: key %s lies past the node's key %llu:%llu",
			       where, bset, word, kt, bch_key_inode(w->nk),
			       w->nk->low);
	else if (!zero_pos &&
		 bch_key_cmp_pos(k, w->lo_inode, w->lo_offset) < 0)
		bch_chk_damage(c, BCH_DMG_KEY_BOUNDS,
			       "%s, bset %u word %u: key %s lies before the node's start %llu:%llu",
			       where, bset, word, kt, w->lo_inode,
			       w->lo_offset);
	else if (leaf && bch_key_size(k) <= k->low &&
		 bch_key_inode(k) == w->lo_inode &&
		 bch_key_start(k) < w->lo_offset)
		bch_chk_damage(c, BCH_DMG_KEY_BOUNDS,
			       "%s, bset %u word %u: extent %s starts before the node's start %llu:%llu",
			       where, bset, word, kt, w->lo_inode,
			       w->lo_offset);
}

static int add_kid(struct walk *w, const struct bch_key *k)
{
	if (bch_array_grow((void **)&w->kids, &w->cap_kids, w->nr_kids,
			   w->nr_kids + 1, sizeof(*w->kids), 64))
		return -ENOMEM;
	w->kids[w->nr_kids].k = *k;
	w->kids[w->nr_kids].order = w->nr_kids;
	w->nr_kids++;
	return 0;
}

/*
 * Claim the buckets of a leaf's live extents: the merged view of its
 * bsets, oldest first, so newer extents cut away what they overlap.
 */
static int claim_leaf(struct walk *w)
{
	struct bch_chk *c = w->c;
	struct bch_extents live;
	u32 i, p;
	int r = 0;

	bch_extents_init(&live);
	for (i = 0; i < w->nr_kids && !r; i++) {
		const struct bch_key *k = &w->kids[i].k;

		if (bch_key_size(k) && !bch_extent_invalid(k, &c->g.kg))
			r = bch_extents_insert(&live, k);
	}
	for (i = 0; i < live.nr && !r; i++) {
		const struct bch_key *k = &live.k[i];

		for (p = 0; p < bch_key_ptrs(k); p++) {
			bch_chk_adopt_gen(c, k->ptr[p]);
			claim(c, k->ptr[p], BCH_USE_DATA, bch_key_dirty(k));
		}
	}
	bch_extents_free(&live);
	return r;
}

static int visit_bset(void *ctx, const struct bch_bset_disk *b, u32 block,
		      u32 index)
{
	struct walk *w = ctx;
	struct bch_chk *c = w->c;
	u32 u64s = le32_to_cpu(b->keys), at = 0;
	struct bch_key k, prev;
	bool have_prev = false;
	char where[96];

	if (c->ops && c->ops->bset)
		c->ops->bset(c->ops->ctx, index, block, le64_to_cpu(b->seq),
			     le32_to_cpu(b->version), u64s);
	while (at < u64s) {
		u32 n = bch_key_decode(b->d + at, u64s - at, &k);

		if (!n) {
			node_where(w, where, sizeof(where));
			bch_chk_damage(c, BCH_DMG_NODE,
				       "%s, bset %u (block %u): key at word %u runs past the bset's %u words",
				       where, index, block, at, u64s);
			break;
		}
		check_key(w, &k, have_prev ? &prev : NULL, index, at);
		at += n;
		w->keys++;
		if (c->ops && c->ops->key)
			c->ops->key(c->ops->ctx, &k, w->level,
				    bch_key_ptrs(&k) && live_ptr(c, &k));
		if (add_kid(w, &k))
			return -ENOMEM;
		/* Zero-size leaf keys are deleted; order is judged without them. */
		if (w->level || bch_key_size(&k)) {
			prev = k;
			have_prev = true;
		}
	}
	return 0;
}

static int walk_node(struct bch_chk *c, const struct bch_key *nk, u32 level,
		     u64 lo_inode, u64 lo_offset);

static bool is_live(void *ctx, const struct bch_key *k)
{
	return live_ptr(ctx, k);
}

/* Walk the live child at each position; they must reach the node's key. */
static int walk_children(struct walk *w)
{
	struct bch_chk *c = w->c;
	u64 lo_inode = w->lo_inode, lo_offset = w->lo_offset;
	const struct bch_key *stale_end = NULL;
	bool reached = false;
	char where[96], kt[128];
	u32 i, j;
	int r;

	for (i = 0; i < w->nr_kids; i++)
		bch_chk_adopt_gen(c, w->kids[i].k.ptr[0]);
	bch_ikeys_sort(w->kids, w->nr_kids);

	node_where(w, where, sizeof(where));
	for (i = 0; i < w->nr_kids; i = j) {
		struct bch_ipick p;

		j = bch_ikeys_pick(w->kids, w->nr_kids, i, &c->g.kg, is_live,
				   c, &p);
		if (p.stale)
			stale_end = p.stale;
		if (p.second) {
			bch_key_to_text(kt, sizeof(kt), p.second, false);
			bch_chk_damage(c, BCH_DMG_NODE,
				       "%s: two live child pointers at %llu:%llu (second: %s)",
				       where, bch_key_inode(p.second),
				       p.second->low, kt);
		}
		if (!p.live || p.freeing)
			continue;
		/*
		 * A node reached again is walked once: walking it at every
		 * reference could cost (children per node)^depth reads on
		 * hostile metadata, in the target's constructor too.
		 */
		if (!claim(c, p.live->ptr[0], BCH_USE_BTREE, false)) {
			r = walk_node(c, p.live, w->level - 1, lo_inode,
				      lo_offset);
			if (r)
				return r;
		}
		lo_inode = bch_key_inode(p.live);
		lo_offset = p.live->low;
		reached = !bch_key_cmp(p.live, w->nk);
	}
	if (reached)
		return 0;
	if (!w->nr_kids) {
		bch_chk_damage(c, BCH_DMG_NODE,
			       "%s: interior node without child pointers", where);
		return 0;
	}
	if (stale_end && !bch_key_cmp(stale_end, w->nk)) {
		u64 b = bch_ptr_bucket(&c->g, stale_end->ptr[0]);

		bch_chk_damage(c, BCH_DMG_PTR_STALE,
			       "%s: the last child pointer (bucket %llu) is stale: pointer gen %u, bucket gen %u; keys after %llu:%llu are unreachable",
			       where, b, bch_ptr_gen(stale_end->ptr[0]),
			       c->gens[b], lo_inode, lo_offset);
	} else {
		bch_chk_damage(c, BCH_DMG_KEY_BOUNDS,
			       "%s: live children end at %llu:%llu, expected the node's key",
			       where, lo_inode, lo_offset);
	}
	return 0;
}

static int walk_node(struct bch_chk *c, const struct bch_key *nk, u32 level,
		     u64 lo_inode, u64 lo_offset)
{
	struct walk w = {
		.c = c, .nk = nk, .level = level,
		.lo_inode = lo_inode, .lo_offset = lo_offset,
		.node_bucket = bch_ptr_bucket(&c->g, nk->ptr[0]),
	};
	struct bch_node_info info;
	const char *err;
	char where[96];
	void *node;
	int r = 0;

	c->res->btree_nodes++;
	node_where(&w, where, sizeof(where));
	if (bch_key_size(nk) != c->g.btree_sectors) {
		bch_chk_damage(c, BCH_DMG_NODE,
			       "%s: node size %u sectors, expected %u",
			       where, bch_key_size(nk), c->g.btree_sectors);
		return 0;
	}
	node = bch_chk_read(c, bch_ptr_offset(nk->ptr[0]),
			    (size_t)c->g.btree_sectors * 512);
	if (!node)
		return -EIO;
	if (c->ops && c->ops->node)
		c->ops->node(c->ops->ctx, nk, level);
	err = bch_node_parse(node, c->g.btree_sectors, nk->ptr[0], &c->g,
			     &info, visit_bset, &w);
	if (c->ops && c->ops->node_end)
		c->ops->node_end(c->ops->ctx, &info);
	if (err && !strcmp(err, "stopped")) {
		r = -ENOMEM;
		goto out;
	}
	if (err)
		bch_chk_damage(c, BCH_DMG_NODE,
			       "%s: %s at block %u (%u valid bsets, seq %016llx)",
			       where, err, info.bad_block, info.nr_bsets,
			       info.seq);
	c->res->btree_keys += w.keys;
	r = level ? walk_children(&w) : claim_leaf(&w);
out:
	bch_free(w.kids);
	bch_free(node);
	return r;
}

int bch_chk_btree(struct bch_chk *c)
{
	struct bch_key root;
	u32 level = le16_to_cpu(c->newest.btree_level);
	const char *err;
	char kt[128];
	u64 b;

	bch_key_decode(c->newest.btree_root, BCH_BKEY_PAD_U64S, &root);
	bch_key_to_text(kt, sizeof(kt), &root, false);
	err = bch_btree_ptr_invalid(&root, &c->g.kg);
	if (!err && bch_ptr_dev(root.ptr[0]) != c->g.nr_this_dev)
		err = "bad, pointer to another device";
	if (err) {
		bch_chk_damage(c, BCH_DMG_ROOT,
			       "btree root in journal seq %llu (%s): %s",
			       c->res->newest_seq, kt, err);
		return 0;
	}
	if (level >= BCH_MAX_DEPTH) {
		bch_chk_damage(c, BCH_DMG_ROOT,
			       "btree root in journal seq %llu: level %u, expected below %u",
			       c->res->newest_seq, level, BCH_MAX_DEPTH);
		return 0;
	}
	if (bch_key_cmp(&root, &bch_max_key)) {
		bch_chk_damage(c, BCH_DMG_ROOT,
			       "btree root in journal seq %llu: position %llu:%llu, expected the maximum key",
			       c->res->newest_seq, bch_key_inode(&root),
			       root.low);
		return 0;
	}
	c->res->root_level = level;
	b = bch_ptr_bucket(&c->g, root.ptr[0]);
	bch_chk_adopt_gen(c, root.ptr[0]);
	if (bch_chk_ptr_stale(c, root.ptr[0])) {
		bch_chk_damage(c, BCH_DMG_PTR_STALE,
			       "btree root in journal seq %llu: pointer gen %u is stale, bucket %llu is at gen %u",
			       c->res->newest_seq, bch_ptr_gen(root.ptr[0]), b,
			       c->gens[b]);
		return 0;
	}
	claim(c, root.ptr[0], BCH_USE_BTREE, false);
	return walk_node(c, &root, level, 0, 0);
}
