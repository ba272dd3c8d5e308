// SPDX-License-Identifier: GPL-2.0
/* Geometry derived from the cache superblock; see geometry.h. */
#include "format/geometry.h"

void bch_geom_init(struct bch_geom *g, const struct bch_sb *sb)
{
	u32 pages = min(sb->bucket_size / BCH_PAGE_SECTORS,
			(u32)BCH_MAX_ORDER_PAGES);
	u32 btree_pages = pages;
	u64 magic = 0;
	unsigned int i;

	memset(g, 0, sizeof(*g));
	g->kg.nbuckets = sb->nbuckets;
	g->kg.bucket_size = sb->bucket_size;
	g->kg.first_bucket = sb->first_bucket;
	g->block_sectors = sb->block_size;
	g->nr_this_dev = sb->nr_this_dev;

	g->meta_bucket_bytes = pages * BCH_PAGE_BYTES;
	if (btree_pages > BCH_BTREE_MAX_PAGES)
		btree_pages = max(pages / 4, (u32)BCH_BTREE_MAX_PAGES);
	g->btree_sectors = btree_pages * BCH_PAGE_SECTORS;
	g->prios_per_bucket = (g->meta_bucket_bytes - 40) / 3;
	g->nr_prio_buckets = DIV_ROUND_UP(sb->nbuckets, g->prios_per_bucket);
	g->nr_uuids = g->meta_bucket_bytes / 128;

	/* The first eight bytes of the set UUID, read little-endian. */
	for (i = 0; i < 8; i++)
		magic |= (u64)sb->set_uuid[i] << (8 * i);
	g->set_magic = magic;
	g->jset_magic = magic ^ BCH_JSET_MAGIC;
	g->pset_magic = magic ^ BCH_PSET_MAGIC;
	g->bset_magic = magic ^ BCH_BSET_MAGIC;
}

void bch_gen_adopt(const struct bch_geom *g, u8 *gens, u64 ptr)
{
	u64 b = bch_ptr_bucket(g, ptr);

	if (bch_ptr_dev(ptr) == g->nr_this_dev && b < g->kg.nbuckets &&
	    bch_gen_lag(gens[b], bch_ptr_gen(ptr)) > 128)
		gens[b] = bch_ptr_gen(ptr);
}

bool bch_key_live(const struct bch_geom *g, const u8 *gens,
		  const struct bch_key *k)
{
	u64 b;

	if (!bch_key_ptrs(k) || bch_ptr_dev(k->ptr[0]) != g->nr_this_dev)
		return false;
	b = bch_ptr_bucket(g, k->ptr[0]);
	return b < g->kg.nbuckets &&
	       (!gens || !bch_gen_stale(gens[b], bch_ptr_gen(k->ptr[0])));
}

const char *bch_set_nbuckets_err(u64 nbuckets)
{
	if (nbuckets < BCH_SET_MIN_NBUCKETS)
		return "fewer than 513 buckets (the mainline driver's minimum)";
	return NULL;
}
