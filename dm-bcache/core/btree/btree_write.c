// SPDX-License-Identifier: GPL-2.0
/* Persisting the in-memory btree; see btree_write.h. */
#include "btree/btree_write.h"
#include "util/array.h"
#include "btree/node_io.h"

static void excl(struct bch_btree_writer *w, bool on)
{
	if (w->excl)
		w->excl(w->excl_ctx, on);
}

static bool node_dirty(const struct bch_bnode *n)
{
	return !n->written || n->rewrite ||
	       (!n->level && bch_keyset_open_keys(&n->ks));
}

static bool live_extent(void *ctx, const struct bch_key *k)
{
	const struct bch_btree_writer *w = ctx;

	return bch_key_live(w->g, w->a->gens, k);
}

/* A new bucket for @n's image; the old one is released after commit. */
static int place(struct bch_btree_writer *w, struct bch_bnode *n)
{
	u64 bucket;
	int r = bch_alloc_meta(w->a, &bucket);

	if (r)
		return r;
	if (bch_key_ptrs(&n->key)) {
		r = bch_array_grow((void **)&w->released, &w->cap_released,
				   w->nr_released, w->nr_released + 1,
				   sizeof(*w->released), 16);
		if (r) {
			bch_alloc_release(w->a, bucket);
			return r;
		}
		w->released[w->nr_released++] =
			bch_ptr_bucket(w->g, n->key.ptr[0]);
	}
	n->key.high &= ~(7ULL << 60);	/* no pointers */
	bch_key_add_ptr(&n->key, bch_make_ptr(w->g->nr_this_dev,
					      bch_bucket_sector(w->g, bucket),
					      w->a->gens[bucket]));
	return 0;
}

static int write_whole(struct bch_btree_writer *w, struct bch_bnode *n)
{
	struct bch_node_out out;
	struct bch_key *keys = NULL;
	u32 nr = 0, i;
	int r;

	if (n->level) {
		keys = bch_zalloc((size_t)max(n->nr_child, 1U) * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		for (i = 0; i < n->nr_child; i++)
			keys[i] = n->child[i]->key;
		nr = n->nr_child;
	}
	excl(w, true);
	r = n->level ? 0 : bch_keyset_filter(&n->ks, live_extent, w);
	n->gc_counted = false;
	if (r >= 0)
		r = place(w, n);
	excl(w, false);
	if (!n->level) {		/* filtered: all in one set */
		keys = n->ks.set[0].e.k;
		nr = n->ks.set[0].e.nr;
	}
	/* The image is written with readers let in: only we change @n. */
	if (!r) {
		out.key = n->key;
		r = bch_node_write_new(w->io, w->g, &out, keys, nr);
	}
	if (n->level)
		bch_free(keys);
	if (r)
		return r;
	excl(w, true);
	n->seq = out.seq;
	n->written = out.written;
	n->rewrite = false;
	w->nodes_written++;
	r = n->level ? 0 : bch_keyset_seal(&n->ks);
	excl(w, false);
	return r;
}

static int append(struct bch_btree_writer *w, struct bch_bnode *n)
{
	struct bch_sset *s = &n->ks.set[n->ks.nr_sets - 1];
	struct bch_node_out out = {
		.key = n->key, .seq = n->seq, .written = n->written
	};
	int r = bch_node_append(w->io, w->g, &out, s->e.k, s->e.nr);

	if (r == -ENOSPC)
		return write_whole(w, n);
	if (r)
		return r;
	excl(w, true);
	n->written = out.written;
	w->bsets_appended++;
	r = bch_keyset_seal(&n->ks);
	excl(w, false);
	return r;
}

static int write_node(struct bch_btree_writer *w, struct bch_bnode *n)
{
	u32 i;
	int r;

	for (i = 0; i < n->nr_child; i++) {
		struct bch_bnode *c = n->child[i];
		u64 before = c->key.ptr[0];

		if (!node_dirty(c) && !c->level)
			continue;
		r = write_node(w, c);
		if (r)
			return r;
		if (c->key.ptr[0] != before || !bch_key_ptrs(&c->key))
			n->rewrite = true;
	}
	if (!node_dirty(n))
		return 0;
	if (!n->written || n->rewrite || n->level)
		return write_whole(w, n);
	return append(w, n);
}

/* Nodes coalescing removed: their buckets go back after the commit too. */
static int take_removed(struct bch_btree *t, struct bch_btree_writer *w)
{
	u32 i;

	if (bch_array_grow((void **)&w->released, &w->cap_released,
			   w->nr_released, w->nr_released + t->nr_removed,
			   sizeof(*w->released), 16))
		return -ENOMEM;
	for (i = 0; i < t->nr_removed; i++)
		w->released[w->nr_released++] =
			bch_ptr_bucket(w->g, t->removed[i]);
	t->nr_removed = 0;
	return 0;
}

int bch_btree_write(struct bch_btree *t, struct bch_btree_writer *w)
{
	int r = take_removed(t, w);

	return r ? r : write_node(w, t->root);
}

static bool subtree_dirty(const struct bch_bnode *n)
{
	u32 i;

	if (node_dirty(n))
		return true;
	for (i = 0; i < n->nr_child; i++)
		if (subtree_dirty(n->child[i]))
			return true;
	return false;
}

bool bch_btree_dirty(const struct bch_btree *t)
{
	return t->nr_removed || subtree_dirty(t->root);
}
