// SPDX-License-Identifier: GPL-2.0
/* Writing a salvaged cache set afresh; see rebuild.h. */
#include "repair/rebuild.h"
#include "btree/extents.h"
#include "mkfs/format.h"
#include "set/set.h"
#include "util/array.h"

struct base_plan {
	const struct bch_salvage *sv;
	u64 *chain;			/* nr_prio_buckets */
	u64 uuid_bucket, root_bucket;
	u8 *base;			/* per bucket: one of the above */
};

/*
 * Buckets the new base may take: past the superblock, not in the
 * journal, and addressed by no salvaged key (live or stale: raising a
 * stale pointer's bucket gen must not bring it near the wrap).
 */
static u8 *used_buckets(const struct bch_salvage *sv)
{
	const struct bch_geom *g = &sv->g;
	u8 *used = bch_zalloc(g->kg.nbuckets);
	u64 b;
	u32 i, p;

	if (!used)
		return NULL;
	for (b = 0; b < g->kg.first_bucket && b < g->kg.nbuckets; b++)
		used[b] = 1;
	for (i = 0; i < sv->sb.keys; i++)
		if (sv->sb.d[i] < g->kg.nbuckets)
			used[sv->sb.d[i]] = 1;
	for (i = 0; i < sv->nr_keys; i++)
		for (p = 0; p < bch_key_ptrs(&sv->keys[i]); p++) {
			b = bch_ptr_bucket(g, sv->keys[i].ptr[p]);
			if (b < g->kg.nbuckets)
				used[b] = 1;
		}
	return used;
}

static int plan_base(struct base_plan *bp)
{
	const struct bch_geom *g = &bp->sv->g;
	u32 need = g->nr_prio_buckets + 2, got = 0;
	u64 b, *pick;
	u8 *used;

	bp->chain = bch_zalloc(need * sizeof(u64));
	bp->base = bch_zalloc(g->kg.nbuckets);
	used = used_buckets(bp->sv);
	if (!bp->chain || !bp->base || !used) {
		bch_free(used);
		return -ENOMEM;
	}
	pick = bp->chain;
	for (b = 0; b < g->kg.nbuckets && got < need; b++)
		if (!used[b]) {
			pick[got++] = b;
			bp->base[b] = 1;
		}
	bch_free(used);
	if (got < need)
		return -ENOSPC;
	bp->uuid_bucket = pick[need - 2];
	bp->root_bucket = pick[need - 1];
	return 0;
}

/* The salvaged gens; the base's buckets one newer, at the btree prio. */
static void base_entry(void *ctx, u64 bucket, struct bch_prio_entry *e)
{
	const struct base_plan *bp = ctx;
	const struct bch_salvage *sv = bp->sv;

	e->gen = sv->gens[bucket];
	e->prio = sv->prios[bucket] == BCH_BTREE_PRIO ? 0 : sv->prios[bucket];
	if (bp->base[bucket]) {
		e->gen++;
		e->prio = BCH_BTREE_PRIO;
	}
}

static int write_base(struct bch_salvage *sv, const struct bch_meta_io *out)
{
	struct base_plan bp = { .sv = sv };
	struct bch_set_base base;
	int r = plan_base(&bp);

	if (!r) {
		base = (struct bch_set_base){
			.prio_chain = bp.chain, .prio_seq = sv->prio_seq + 1,
			.entry = base_entry, .entry_ctx = &bp,
			.uuid_bucket = bp.uuid_bucket,
			.root_bucket = bp.root_bucket,
			.uuid_gen = (u8)(sv->gens[bp.uuid_bucket] + 1),
			.root_gen = (u8)(sv->gens[bp.root_bucket] + 1),
			.uuids = sv->uuids, .seq = sv->newest_seq + 1,
			.jset_version = sv->jset_version,
		};
		r = bch_format_set_base(out, &sv->sb, &base);
	}
	bch_free(bp.chain);
	bch_free(bp.base);
	return r;
}

/* Keys that take unreadable data out of the index, inserted after the walk. */
struct takeout {
	struct bch_key *k;
	u32 nr, cap;
};

static int take_out(struct takeout *t, const struct bch_key *k,
		    const struct bch_range *bad)
{
	struct bch_key hole;

	if (bch_array_grow((void **)&t->k, &t->cap, t->nr, t->nr + 1,
			   sizeof(*t->k), 16))
		return -ENOMEM;
	bch_key_init(&hole, bch_key_inode(k), bad->end,
		     (u32)(bad->end - bad->start), false);
	t->k[t->nr++] = hole;
	return 0;
}

/* Hand one live extent to the data hook; note what it could not read. */
static int visit_extent(struct bch_set *s, struct bch_salvage *sv,
			const struct bch_rebuild_ops *ops,
			const struct bch_key *k, struct takeout *t,
			struct bch_rebuild_result *res)
{
	struct bch_range bad[BCH_REBUILD_MAX_BAD];
	int n, i, r = 0;

	if (!bch_key_ptrs(k) || !bch_key_live(&s->g, s->a.gens, k))
		return 0;
	res->keys++;
	res->sectors += bch_key_size(k);
	if (bch_key_dirty(k))
		res->dirty_sectors += bch_key_size(k);
	n = ops->data(ops->ctx, k, bad);
	if (n < 0)
		return n;
	for (i = 0; i < n && i < BCH_REBUILD_MAX_BAD && !r; i++) {
		if (bad[i].start < bch_key_start(k) || bad[i].end > k->low ||
		    bad[i].start >= bad[i].end)
			continue;
		res->unreadable += bad[i].end - bad[i].start;
		r = take_out(t, k, &bad[i]);
		if (!r && bch_key_dirty(k))
			r = bch_salvage_lose(sv, bch_key_inode(k),
					     bad[i].start, bad[i].end,
					     "dirty data unreadable");
	}
	return r;
}

/* Every live extent the new index maps, leaf by leaf, in key order. */
static int visit_data(struct bch_set *s, struct bch_salvage *sv,
		      const struct bch_rebuild_ops *ops,
		      struct bch_rebuild_result *res)
{
	struct bch_extents view, tmp;
	struct takeout t = { 0 };
	u64 inode = 0, offset = 0;
	u32 i;
	int r = 0;

	bch_extents_init(&view);
	bch_extents_init(&tmp);
	for (;;) {
		struct bch_bnode *leaf = bch_btree_leaf_after(&s->t, inode,
							      offset);
		const struct bch_extents *v;

		if (!leaf)
			break;
		v = &leaf->ks.set[0].e;
		if (leaf->ks.nr_sets > 1) {
			r = bch_keyset_merged(&leaf->ks, &view, &tmp);
			v = &view;
		}
		for (i = 0; i < v->nr && !r; i++)
			r = visit_extent(s, sv, ops, &v->k[i], &t, res);
		if (r || !bch_key_cmp(&leaf->key, &bch_max_key))
			break;
		inode = bch_key_inode(&leaf->key);
		offset = leaf->key.low;
	}
	bch_extents_free(&view);
	bch_extents_free(&tmp);
	for (i = 0; i < t.nr && !r; i++)
		r = bch_set_insert(s, &t.k[i]);
	bch_free(t.k);
	return r;
}

int bch_rebuild_write(struct bch_salvage *sv, const struct bch_meta_io *out,
		      const struct bch_rebuild_ops *ops,
		      struct bch_rebuild_result *res)
{
	struct bch_set s;
	u32 i;
	int r;

	memset(res, 0, sizeof(*res));
	r = write_base(sv, out);
	if (r)
		return r;
	r = bch_set_open(&s, out, &sv->sb);
	if (r)
		return r;
	for (i = 0; i < sv->nr_keys && !r; i++)
		r = bch_set_insert(&s, &sv->keys[i]);
	if (!r) {
		bch_set_mark_index(&s);
		r = visit_data(&s, sv, ops, res);
	}
	/* Its refill writes the prio chain the new nodes' gens are in. */
	if (!r)
		r = bch_set_commit(&s);
	res->nodes = s.t.nr_nodes;
	bch_set_close(&s);
	return r;
}
