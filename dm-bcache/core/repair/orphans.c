// SPDX-License-Identifier: GPL-2.0
#include "repair/orphans.h"
#include "btree/extents.h"
#include "format/bset.h"
#include "util/array.h"

struct orphan_key {
	struct bch_key k;
	u32 node;		/* which orphan gave it */
	bool drop;		/* another orphan maps its sectors otherwise */
};

/* One orphan being read: its keys as lookups would see them. */
struct orphan_read {
	struct bch_salvage *sv;
	struct bch_extents view;
	bool pointers_only;	/* every key could address a node */
	int err;
};

/*
 * An interior node's keys address whole nodes: btree-node sized, at a
 * bucket's start.  A leaf whose every extent looks so is taken for
 * interior and gives nothing, which only leaves its range listed.
 */
static bool node_shaped(const struct bch_geom *g, const struct bch_key *k)
{
	return bch_key_ptrs(k) && bch_key_size(k) == g->btree_sectors &&
	       bch_ptr_offset(k->ptr[0]) ==
	       bch_bucket_sector(g, bch_ptr_bucket(g, k->ptr[0]));
}

static int take_bset(void *ctx, const struct bch_bset_disk *b, u32 block,
		     u32 index)
{
	struct orphan_read *or = ctx;
	u32 u64s = le32_to_cpu(b->keys), at = 0, n;
	struct bch_key k;

	(void)block;
	(void)index;
	while (at < u64s && !or->err) {
		n = bch_key_decode(b->d + at, u64s - at, &k);
		if (!n)
			break;
		at += n;
		if (!bch_key_size(&k))
			continue;
		if (!node_shaped(&or->sv->g, &k))
			or->pointers_only = false;
		if (!bch_salvage_bad_extent(or->sv, &k))
			or->err = bch_extents_insert(&or->view, &k);
	}
	return or->err;
}

/* Whether @k lies wholly inside one range listed as lost. */
static bool in_lost(const struct bch_salvage *sv, const struct bch_key *k)
{
	u32 i;

	for (i = 0; i < sv->nr_lost; i++) {
		const struct bch_lost *l = &sv->lost[i];

		if (l->inode == bch_key_inode(k) &&
		    l->start <= bch_key_start(k) && k->low <= l->end)
			return true;
	}
	return false;
}

static int cmp_start(const void *a, const void *b)
{
	const struct bch_key *x = &((const struct orphan_key *)a)->k;
	const struct bch_key *y = &((const struct orphan_key *)b)->k;
	u64 xi = bch_key_inode(x), yi = bch_key_inode(y);
	u64 xs = bch_key_start(x), ys = bch_key_start(y);

	if (xi != yi)
		return xi < yi ? -1 : 1;
	if (xs != ys)
		return xs < ys ? -1 : 1;
	return 0;
}

/* Both map every sector they share to the same cache sector. */
static bool agree(const struct bch_key *a, const struct bch_key *b)
{
	return bch_ptr_dev(a->ptr[0]) == bch_ptr_dev(b->ptr[0]) &&
	       bch_ptr_gen(a->ptr[0]) == bch_ptr_gen(b->ptr[0]) &&
	       bch_ptr_offset(a->ptr[0]) - bch_key_start(a) ==
	       bch_ptr_offset(b->ptr[0]) - bch_key_start(b);
}

/* Mark every candidate another orphan contradicts. */
static void mark_conflicts(struct orphan_key *c, u32 n)
{
	u32 i, j;

	bch_sort(c, n, sizeof(*c), cmp_start);
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			if (bch_key_inode(&c[j].k) != bch_key_inode(&c[i].k) ||
			    bch_key_start(&c[j].k) >= c[i].k.low)
				break;
			if (c[j].node != c[i].node && !agree(&c[i].k, &c[j].k)) {
				c[i].drop = true;
				c[j].drop = true;
			}
		}
	}
}

/* The dirty extents of one orphan's view that may be kept. */
static int add_candidates(struct bch_salvage *sv, const struct bch_extents *v,
			  u32 node, struct orphan_key **c, u32 *nr, u32 *cap)
{
	u32 i;

	for (i = 0; i < v->nr; i++) {
		const struct bch_key *k = &v->k[i];

		/*
		 * With the journal lost every slot in use is listed whole;
		 * what lies outside them is of a slot the table found may
		 * lack, which the salvage then lists by slot.
		 */
		if (!bch_key_dirty(k) || !bch_key_ptrs(k) ||
		    !bch_key_live(&sv->g, sv->gens, k) ||
		    (!sv->journal_lost && !in_lost(sv, k)))
			continue;
		if (bch_array_grow((void **)c, cap, *nr, *nr + 1, sizeof(**c),
				   64))
			return -ENOMEM;
		(*c)[(*nr)++] = (struct orphan_key){ .k = *k, .node = node };
	}
	return 0;
}

/* Put the kept candidates in front of sv->keys. */
static int prepend(struct bch_salvage *sv, const struct orphan_key *c, u32 n)
{
	u32 i, kept = 0;

	for (i = 0; i < n; i++)
		kept += !c[i].drop;
	if (!kept)
		return 0;
	if (bch_array_grow((void **)&sv->keys, &sv->cap_keys, sv->nr_keys,
			   sv->nr_keys + kept, sizeof(*sv->keys), 256))
		return -ENOMEM;
	memmove(sv->keys + kept, sv->keys, sv->nr_keys * sizeof(*sv->keys));
	sv->nr_keys += kept;
	for (i = 0, kept = 0; i < n; i++)
		if (!c[i].drop)
			sv->keys[kept++] = c[i].k;
	sv->orphan_keys = kept;
	return 0;
}

int bch_orphans_keep(struct bch_salvage *sv, const struct bch_meta_io *io,
		     const u8 *visited)
{
	const struct bch_geom *g = &sv->g;
	size_t node_bytes = (size_t)g->btree_sectors * 512;
	size_t head_bytes = (size_t)g->block_sectors * 512;
	struct orphan_key *cand = NULL;
	u32 nr = 0, cap = 0, i;
	u64 b;
	void *buf;
	int r = 0;

	buf = bch_zalloc(node_bytes);
	if (!buf)
		return -ENOMEM;
	for (b = sv->sb.first_bucket; b < g->kg.nbuckets && !r; b++) {
		const struct bch_bset_disk *head = buf;
		struct orphan_read or = { .sv = sv, .pointers_only = true };
		struct bch_node_info info;
		u64 at = bch_bucket_sector(g, b);

		if (visited[b] || io->read(io->ctx, at, buf, head_bytes) ||
		    le64_to_cpu(head->magic) != g->bset_magic ||
		    io->read(io->ctx, at, buf, node_bytes))
			continue;
		bch_extents_init(&or.view);
		/* The checksum covers the pointer: only the bucket's gen fits. */
		if (bch_node_parse(buf, g->btree_sectors,
				   bch_make_ptr(g->nr_this_dev, at, sv->gens[b]),
				   g, &info, take_bset, &or)) {
			sv->orphan_nodes_bad += !or.err;
		} else {
			sv->orphan_nodes++;
			if (!or.pointers_only)
				r = add_candidates(sv, &or.view,
						   (u32)sv->orphan_nodes, &cand,
						   &nr, &cap);
		}
		if (or.err)
			r = or.err;
		bch_extents_free(&or.view);
	}
	bch_free(buf);
	if (!r) {
		mark_conflicts(cand, nr);
		for (i = 0; i < nr; i++)
			sv->orphan_conflicts += cand[i].drop;
		r = prepend(sv, cand, nr);
	}
	bch_free(cand);
	return r;
}
