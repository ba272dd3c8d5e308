// SPDX-License-Identifier: GPL-2.0
/* Loading the btree into memory; see btree_load.h. */
#include "btree/btree_load.h"
#include "util/array.h"
#include "format/bset.h"
#include "btree/children.h"

struct loader {
	const struct bch_meta_io *io;
	const struct bch_geom *g;
	u8 *gens;
	struct bch_btree *t;
	void *buf;			/* one node image */
};

struct node_keys {
	struct bch_bnode *n;
	struct bch_ikey *v;		/* interior nodes */
	u32 nr, cap;
	int err;
};

static bool is_live(void *ctx, const struct bch_key *k)
{
	struct loader *l = ctx;

	return bch_key_live(l->g, l->gens, k);
}

/* Each bset: a leaf's becomes a sealed set; an interior node's is kept. */
static int take_bset(void *ctx, const struct bch_bset_disk *b, u32 block,
		     u32 index)
{
	struct node_keys *nk = ctx;
	u32 u64s = le32_to_cpu(b->keys), at = 0;

	(void)block;
	(void)index;
	while (at < u64s && !nk->err) {
		struct bch_key k;
		u32 n = bch_key_decode(b->d + at, u64s - at, &k);

		if (!n)
			return -EIO;
		at += n;
		if (!nk->n->level) {
			if (bch_key_size(&k) && bch_key_size(&k) <= k.low)
				nk->err = bch_keyset_insert(&nk->n->ks, &k);
			continue;
		}
		nk->err = bch_array_grow((void **)&nk->v, &nk->cap, nk->nr,
					 nk->nr + 1, sizeof(*nk->v), 64);
		if (!nk->err) {
			nk->v[nk->nr].k = k;
			nk->v[nk->nr].order = nk->nr;
			nk->nr++;
		}
	}
	if (!nk->err && !nk->n->level)
		nk->err = bch_keyset_seal(&nk->n->ks);
	return nk->err;
}

static int load_node(struct loader *l, struct bch_bnode *n);

static int load_children(struct loader *l, struct node_keys *nk)
{
	struct bch_bnode *n = nk->n;
	u32 i, j;
	int r = 0;

	for (i = 0; i < nk->nr; i++)
		bch_gen_adopt(l->g, l->gens, nk->v[i].k.ptr[0]);
	bch_ikeys_sort(nk->v, nk->nr);
	for (i = 0; i < nk->nr && !r; i = j) {
		struct bch_ipick p;
		struct bch_bnode *c;

		j = bch_ikeys_pick(nk->v, nk->nr, i, &l->g->kg, is_live, l, &p);
		if (!p.live || p.freeing)
			continue;
		c = bch_zalloc(sizeof(*c));
		r = c ? bch_array_grow((void **)&n->child, &n->cap_child,
				       n->nr_child, n->nr_child + 1,
				       sizeof(*n->child), 8) : -ENOMEM;
		if (r) {
			bch_free(c);
			break;
		}
		c->key = *p.live;
		c->level = n->level - 1;
		bch_keyset_init(&c->ks);
		n->child[n->nr_child++] = c;
		l->t->nr_nodes++;
		r = load_node(l, c);
	}
	return r;
}

static int load_node(struct loader *l, struct bch_bnode *n)
{
	struct node_keys nk = { .n = n };
	struct bch_node_info info;
	size_t bytes = (size_t)l->g->btree_sectors * 512;
	int r;

	if (bch_key_size(&n->key) != l->g->btree_sectors)
		return -EIO;
	r = l->io->read(l->io->ctx, bch_ptr_offset(n->key.ptr[0]), l->buf,
			bytes);
	if (r)
		return r;
	if (bch_node_parse(l->buf, l->g->btree_sectors, n->key.ptr[0], l->g,
			   &info, take_bset, &nk))
		r = nk.err ? nk.err : -EIO;
	n->seq = info.seq;
	n->written = info.written;
	if (!r && n->level)
		r = load_children(l, &nk);
	/*
	 * An interior node needs a child for every position: one without
	 * any (no keys, or none live) is damage the checker reports, and
	 * a lookup in it would find no child to descend to.
	 */
	if (!r && n->level && !n->nr_child)
		r = -EIO;
	bch_free(nk.v);
	return r;
}

int bch_btree_load(struct bch_btree *t, const struct bch_meta_io *io,
		   const struct bch_geom *g, const struct bch_key *root,
		   u32 level, u8 *gens)
{
	struct loader l = { .io = io, .g = g, .gens = gens, .t = t };
	struct bch_bnode *n;
	int r;

	bch_btree_free(t);		/* the empty root init made */
	t->nr_nodes = 0;
	if (bch_btree_ptr_invalid(root, &g->kg))
		return -EINVAL;
	bch_gen_adopt(g, gens, root->ptr[0]);
	if (!is_live(&l, root))
		return -ESTALE;
	l.buf = bch_zalloc((size_t)g->btree_sectors * 512);
	n = bch_zalloc(sizeof(*n));
	if (!l.buf || !n) {
		bch_free(l.buf);
		bch_free(n);
		return -ENOMEM;
	}
	n->key = *root;
	n->level = level;
	bch_keyset_init(&n->ks);
	t->root = n;
	t->nr_nodes++;
	r = load_node(&l, n);
	bch_free(l.buf);
	if (r)
		bch_btree_free(t);	/* leaves t without a root */
	return r;
}
